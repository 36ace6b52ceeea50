//! ReplicaSet (apps/v1): keeps a number of pod replicas running.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::Printer;
use crate::registry::ResourceDef;
use crate::validate::apps as rules;

pub struct ReplicaSet;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "apps",
        "v1",
        "replicasets",
        "ReplicaSet",
        true,
        Arc::new(ReplicaSet),
    )
    .short_names(&["rs"])
    .categories(&["all"])
    .subresources(&["scale", "status"])
    .selectable_fields(&["status.replicas"])]
}

impl Kind for ReplicaSet {
    fn tracks_generation(&self) -> bool {
        true
    }

    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        crate::defaults::apps::replica_set(object);
    }

    fn empty_status(&self) -> Value {
        json!({"replicas": 0})
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        rules::replica_set(object)
    }

    fn validate_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = rules::replica_set(object);
        errs.extend(rules::selector_update(object, old));
        errs
    }

    fn validate_status_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        rules::replica_set_status(object, old)
    }

    fn absent_field_value(&self, field: &str) -> &'static str {
        match field {
            "status.replicas" => "0",
            _ => "",
        }
    }

    fn printer(&self) -> Printer {
        Printer::ReplicaSet
    }
}
