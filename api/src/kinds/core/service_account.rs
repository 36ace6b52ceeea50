//! ServiceAccount (core/v1): an identity for processes in pods.

use std::sync::Arc;

use serde_json::Value;

use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::values::{age, len_of, name};
use crate::printers::{age_col, col, name_col, Cell, TableColumn};
use crate::registry::ResourceDef;

pub struct ServiceAccount;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "",
        "v1",
        "serviceaccounts",
        "ServiceAccount",
        true,
        Arc::new(ServiceAccount),
    )
    .short_names(&["sa"])
    .subresources(&["token"])
    .returns_deleted_object()]
}

impl Kind for ServiceAccount {
    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        validate(object)
    }

    fn validate_update(&self, object: &Value, _old: &Value) -> Vec<FieldError> {
        validate(object)
    }

    fn table_columns(&self) -> Vec<TableColumn> {
        vec![
            name_col(),
            col("Secrets", "string", D_SA_SECRETS),
            age_col(),
        ]
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        vec![
            name(object).into(),
            len_of(object, "/secrets").into(),
            age(object),
        ]
    }
}

/// ServiceAccounts carry nothing upstream validates beyond metadata.
fn validate(_object: &Value) -> Vec<FieldError> {
    Vec::new()
}

const D_SA_SECRETS: &str = "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use. Pods are only limited to this list if this service account has a \"kubernetes.io/enforce-mountable-secrets\" annotation set to \"true\". The \"kubernetes.io/enforce-mountable-secrets\" annotation is deprecated since v1.32. Prefer separate namespaces to isolate access to mounted secrets. This field should not be used to find auto-generated service account token secrets for use outside of pods. Instead, tokens can be requested directly using the TokenRequest API, or service account token secrets can be manually created. More info: https://kubernetes.io/docs/concepts/configuration/secret";
