//! Role (rbac.authorization.k8s.io/v1): permissions in one namespace.

use std::sync::Arc;

use serde_json::Value;

use super::policy_rule::rules;
use crate::error::FieldError;
use crate::kinds::{Grant, Kind, NameRule};
use crate::registry::ResourceDef;

pub struct Role;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "rbac.authorization.k8s.io",
        "v1",
        "roles",
        "Role",
        true,
        Arc::new(Role),
    )]
}

impl Kind for Role {
    fn grants(&self) -> Option<Grant> {
        Some(Grant::Rules)
    }

    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        validate(object)
    }

    fn validate_update(&self, object: &Value, _old: &Value) -> Vec<FieldError> {
        validate(object)
    }
}

fn validate(object: &Value) -> Vec<FieldError> {
    rules(object, true)
}
