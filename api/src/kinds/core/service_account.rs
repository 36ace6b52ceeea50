//! ServiceAccount (core/v1): an identity for processes in pods.

use std::sync::Arc;

use serde_json::Value;

use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::Printer;
use crate::registry::ResourceDef;
use crate::validate::corev1 as rules;

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
        rules::service_account(object)
    }

    fn validate_update(&self, object: &Value, _old: &Value) -> Vec<FieldError> {
        rules::service_account(object)
    }

    fn printer(&self) -> Printer {
        Printer::ServiceAccount
    }
}
