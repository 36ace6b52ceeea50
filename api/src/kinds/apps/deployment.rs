//! Deployment (apps/v1): declarative updates of ReplicaSets.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::Printer;
use crate::registry::ResourceDef;
use crate::validate::apps as rules;

pub struct Deployment;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "apps",
        "v1",
        "deployments",
        "Deployment",
        true,
        Arc::new(Deployment),
    )
    .short_names(&["deploy"])
    .categories(&["all"])
    .subresources(&["scale", "status"])]
}

impl Kind for Deployment {
    fn tracks_generation(&self) -> bool {
        true
    }

    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        crate::defaults::apps::deployment(object);
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        rules::deployment(object)
    }

    fn validate_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = rules::deployment(object);
        errs.extend(rules::selector_update(object, old));
        errs
    }

    fn validate_status_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        rules::deployment_status(object, old)
    }

    fn printer(&self) -> Printer {
        Printer::Deployment
    }
}
