//! RoleBinding (rbac.authorization.k8s.io/v1): grants a Role or ClusterRole in one namespace.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::error::FieldError;
use crate::kinds::{Grant, Kind, NameRule};
use crate::printers::Printer;
use crate::registry::ResourceDef;
use crate::validate::rbac as rules;

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
        crate::defaults::other::role_binding(object);
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        rules::role_binding(object)
    }

    fn validate_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = rules::role_binding(object);
        errs.extend(rules::role_ref_update(object, old));
        errs
    }

    fn printer(&self) -> Printer {
        Printer::RoleBinding { cluster: false }
    }
}
