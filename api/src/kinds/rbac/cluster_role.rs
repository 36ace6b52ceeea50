//! ClusterRole (rbac.authorization.k8s.io/v1): permissions across the cluster.

use std::sync::Arc;

use serde_json::Value;

use super::policy_rule::rules;
use crate::error::FieldError;
use crate::kinds::{Grant, Kind, NameRule};
use crate::registry::ResourceDef;
use crate::validate::meta;
use crate::validate::{index, list_of, opt};

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
        validate(object)
    }

    fn validate_update(&self, object: &Value, _old: &Value) -> Vec<FieldError> {
        validate(object)
    }
}

fn validate(object: &Value) -> Vec<FieldError> {
    let mut errs = rules(object, false);
    if let Some(aggregation) = opt(object, "aggregationRule") {
        let selectors = list_of(aggregation, "clusterRoleSelectors");
        if selectors.is_empty() {
            errs.push(FieldError::required(
                "aggregationRule.clusterRoleSelectors",
                "at least one clusterRoleSelector required if aggregationRule is non-nil",
            ));
        }
        for (i, selector) in selectors.iter().enumerate() {
            errs.extend(meta::label_selector(
                Some(selector),
                &index("aggregationRule.clusterRoleSelectors", i),
            ));
        }
    }
    errs
}
