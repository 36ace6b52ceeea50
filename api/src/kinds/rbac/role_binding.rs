//! RoleBinding (rbac.authorization.k8s.io/v1): grants a Role or ClusterRole in one namespace.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::binding;
use crate::error::FieldError;
use crate::kinds::{Grant, Kind, NameRule};
use crate::printers::{age_col, col, name_col, wide, Cell, TableColumn};
use crate::registry::ResourceDef;

pub struct RoleBinding;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "rbac.authorization.k8s.io",
        "v1",
        "rolebindings",
        "RoleBinding",
        true,
        Arc::new(RoleBinding),
    )]
}

impl Kind for RoleBinding {
    fn grants(&self) -> Option<Grant> {
        Some(Grant::RoleReference)
    }

    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        binding::set_defaults(object);
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        validate(object)
    }

    fn validate_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = validate(object);
        errs.extend(binding::role_ref_update(object, old));
        errs
    }

    fn table_columns(&self) -> Vec<TableColumn> {
        vec![
            name_col(),
            col("Role", "string", D_RB_ROLE_REF),
            age_col(),
            wide("Users", "string", "Users in the roleBinding"),
            wide("Groups", "string", "Groups in the roleBinding"),
            wide(
                "ServiceAccounts",
                "string",
                "ServiceAccounts in the roleBinding",
            ),
        ]
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        binding::cells(object)
    }
}

fn validate(object: &Value) -> Vec<FieldError> {
    let mut errs = binding::role_ref(object, &["Role", "ClusterRole"]);
    errs.extend(binding::subjects(object, true));
    errs
}

const D_RB_ROLE_REF: &str = "RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error. This field is immutable.";
