//! Node (core/v1): a machine pods run on.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::Printer;
use crate::registry::ResourceDef;
use crate::validate::corev1 as rules;
use serde_json::json;

pub struct Node;

pub fn resources() -> Vec<ResourceDef> {
    vec![
        ResourceDef::new("", "v1", "nodes", "Node", false, Arc::new(Node))
            .short_names(&["no"])
            .subresources(&["proxy", "status"])
            .selectable_fields(&["spec.unschedulable"])
            .storage_segment("minions"),
    ]
}

impl Kind for Node {
    fn keeps_status_on_create(&self) -> bool {
        true
    }

    fn prepare_for_create(&self, object: &mut Value) {
        Self::sync_pod_cidrs(object);
    }

    fn prepare_for_update(&self, object: &mut Value, _old: &Value) {
        Self::sync_pod_cidrs(object);
    }

    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        crate::defaults::core_v1::node(object);
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        rules::node(object)
    }

    fn validate_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = rules::node(object);
        errs.extend(rules::node_update(object, old));
        errs
    }

    fn absent_field_value(&self, field: &str) -> &'static str {
        match field {
            "spec.unschedulable" => "false",
            _ => "",
        }
    }

    fn printer(&self) -> Printer {
        Printer::Node
    }
}

/// Nodes carry both spellings of their pod CIDRs (upstream's v1
/// conversion fills one from the other).
impl Node {
    fn sync_pod_cidrs(object: &mut Value) {
        let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) else {
            return;
        };
        let single = spec
            .get("podCIDR")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let many_empty = spec
            .get("podCIDRs")
            .and_then(Value::as_array)
            .is_none_or(|list| list.is_empty());
        if many_empty && !single.is_empty() {
            spec.insert("podCIDRs".into(), json!([single]));
        } else if single.is_empty() {
            let first = spec
                .get("podCIDRs")
                .and_then(Value::as_array)
                .and_then(|list| list.first())
                .cloned();
            if let Some(first) = first {
                spec.insert("podCIDR".into(), first);
            }
        }
    }
}
