//! ReplicationController (core/v1): keeps a number of pod replicas running (the ReplicaSet's predecessor).

use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::error::FieldError;
use crate::kinds::{Kind, ScaleParts};
use crate::printers::Printer;
use crate::registry::ResourceDef;
use crate::validate::corev1 as rules;
use crate::validate::quantity::Quantity;

pub struct ReplicationController;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "",
        "v1",
        "replicationcontrollers",
        "ReplicationController",
        true,
        Arc::new(ReplicationController),
    )
    .short_names(&["rc"])
    .categories(&["all"])
    .subresources(&["scale", "status"])
    .selectable_fields(&["status.replicas"])
    .storage_segment("controllers")]
}

impl Kind for ReplicationController {
    fn quota_usage(&self, _object: &Value) -> Vec<(String, Quantity)> {
        vec![("replicationcontrollers".into(), Quantity::count(1))]
    }

    fn tracks_generation(&self) -> bool {
        true
    }

    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        crate::defaults::core_v1::replication_controller(object);
    }

    fn empty_status(&self) -> Value {
        json!({"replicas": 0})
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        rules::replication_controller(object)
    }

    /// A replication controller's selector is a plain label map.
    fn scale_of(&self, object: &Value) -> ScaleParts {
        let mut pairs: Vec<String> = object
            .pointer("/spec/selector")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                    .collect()
            })
            .unwrap_or_default();
        pairs.sort();
        ScaleParts {
            spec_replicas: object.pointer("/spec/replicas").and_then(Value::as_i64),
            status_replicas: object.pointer("/status/replicas").and_then(Value::as_i64),
            selector: pairs.join(","),
        }
    }

    fn validate_update(&self, object: &Value, _old: &Value) -> Vec<FieldError> {
        rules::replication_controller(object)
    }

    fn validate_status_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        crate::validate::workloads::replica_set_status(object, old)
    }

    fn absent_field_value(&self, field: &str) -> &'static str {
        match field {
            "status.replicas" => "0",
            _ => "",
        }
    }

    fn printer(&self) -> Printer {
        Printer::ReplicationController
    }
}
