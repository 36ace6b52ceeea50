//! ClusterRole (rbac.authorization.k8s.io/v1): permissions across the cluster.

use std::sync::Arc;

use serde_json::Value;

use crate::error::FieldError;
use crate::kinds::{Grant, Kind, NameRule};
use crate::registry::ResourceDef;
use crate::validate::rbac as rules;

pub struct ClusterRole;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "rbac.authorization.k8s.io",
        "v1",
        "clusterroles",
        "ClusterRole",
        false,
        Arc::new(ClusterRole),
    )]
}

impl Kind for ClusterRole {
    fn grants(&self) -> Option<Grant> {
        Some(Grant::Rules)
    }

    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        rules::cluster_role(object)
    }

    fn validate_update(&self, object: &Value, _old: &Value) -> Vec<FieldError> {
        rules::cluster_role(object)
    }
}
