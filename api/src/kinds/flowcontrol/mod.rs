//! The flowcontrol.apiserver.k8s.io API group: API Priority and Fairness'
//! configuration, served (and kept in place by the server) as upstream
//! serves it.

pub mod bootstrap;
mod flow_schema;
mod priority_level_configuration;

pub use flow_schema::FlowSchema;
pub use priority_level_configuration::PriorityLevelConfiguration;

use serde_json::Value;

use crate::error::FieldError;
use crate::registry::ResourceDef;

/// The name of the mandatory exempt flow schema and priority level.
const EXEMPT: &str = "exempt";

pub fn resources() -> Vec<ResourceDef> {
    [
        flow_schema::resources(),
        priority_level_configuration::resources(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

fn strings<'a>(value: &'a Value, key: &str) -> Vec<&'a str> {
    value
        .get(key)
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Both kinds' status rule: each condition names a type, once.
fn conditions(object: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen = Vec::new();
    let listed = object
        .pointer("/status/conditions")
        .and_then(Value::as_array);
    for (i, condition) in listed.into_iter().flatten().enumerate() {
        let path = format!("status.conditions[{i}].type");
        let condition_type = condition.get("type").and_then(Value::as_str).unwrap_or("");
        if condition_type.is_empty() {
            errs.push(FieldError::required(path, "must not be empty"));
        } else if seen.contains(&condition_type) {
            errs.push(FieldError::duplicate(path, condition_type));
        } else {
            seen.push(condition_type);
        }
    }
    errs
}
