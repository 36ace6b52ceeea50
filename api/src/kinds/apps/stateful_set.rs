//! StatefulSet (apps/v1): pods with stable identities and storage.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::Printer;
use crate::registry::ResourceDef;
use crate::validate::apps as rules;

pub struct StatefulSet;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "apps",
        "v1",
        "statefulsets",
        "StatefulSet",
        true,
        Arc::new(StatefulSet),
    )
    .short_names(&["sts"])
    .categories(&["all"])
    .subresources(&["scale", "status"])]
}

impl Kind for StatefulSet {
    fn tracks_generation(&self) -> bool {
        true
    }

    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        crate::defaults::apps::stateful_set(object);
    }

    fn empty_status(&self) -> Value {
        json!({"replicas": 0, "availableReplicas": 0})
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        rules::stateful_set(object)
    }

    fn validate_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = rules::stateful_set(object);
        errs.extend(rules::stateful_set_update(object, old));
        errs
    }

    fn validate_status_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        rules::stateful_set_status(object, old)
    }

    fn printer(&self) -> Printer {
        Printer::StatefulSet
    }
}
