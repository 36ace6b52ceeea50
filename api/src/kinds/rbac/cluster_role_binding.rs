//! ClusterRoleBinding (rbac.authorization.k8s.io/v1): grants a ClusterRole cluster-wide.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::binding;
use crate::error::FieldError;
use crate::kinds::{Grant, Kind, NameRule};
use crate::printers::{age_col, col, name_col, wide, Cell, TableColumn};
use crate::registry::ResourceDef;

pub struct ClusterRoleBinding;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "rbac.authorization.k8s.io",
        "v1",
        "clusterrolebindings",
        "ClusterRoleBinding",
        false,
        Arc::new(ClusterRoleBinding),
    )]
}

impl Kind for ClusterRoleBinding {
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
            col("Role", "string", D_CRB_ROLE_REF),
            age_col(),
            wide("Users", "string", "Users in the clusterRoleBinding"),
            wide("Groups", "string", "Groups in the clusterRoleBinding"),
            wide(
                "ServiceAccounts",
                "string",
                "ServiceAccounts in the clusterRoleBinding",
            ),
        ]
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        binding::cells(object)
    }
}

fn validate(object: &Value) -> Vec<FieldError> {
    let mut errs = binding::role_ref(object, &["ClusterRole"]);
    errs.extend(binding::subjects(object, false));
    errs
}

const D_CRB_ROLE_REF: &str = "RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error. This field is immutable.";
