//! scheduling.k8s.io/v1: PriorityClass.

use serde_json::Value;

use super::meta::go_opt_str;
use super::pod;
use super::{bool_of, field, int_of, opt, str_of};
use crate::error::FieldError;

const HIGHEST_USER_DEFINABLE_PRIORITY: i64 = 1_000_000_000;
/// The predefined system classes and their fixed values.
const SYSTEM_CLASSES: &[(&str, i64)] = &[
    ("system-node-critical", 2_000_001_000),
    ("system-cluster-critical", 2_000_000_000),
];

pub fn priority_class(object: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = str_of(field(object, "metadata"), "name");
    let value = int_of(object, "value").unwrap_or(0);
    if name.starts_with("system-") {
        let problem = match SYSTEM_CLASSES.iter().find(|(n, _)| *n == name) {
            None => Some(format!("{name} is not a known system priority class")),
            Some((_, expected)) if *expected != value => {
                Some(format!("value of {name} PriorityClass must be {expected}"))
            }
            Some(_) if bool_of(object, "globalDefault") => Some(format!(
                "globalDefault of {name} PriorityClass must be false"
            )),
            Some(_) => None,
        };
        if let Some(problem) = problem {
            errs.push(FieldError::forbidden(
                "metadata.name",
                &format!("priority class names with 'system-' prefix are reserved for system use only. error: {problem}"),
            ));
        }
    } else if value > HIGHEST_USER_DEFINABLE_PRIORITY {
        errs.push(FieldError::forbidden(
            "value",
            &format!(
                "maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}"
            ),
        ));
    }
    if let Some(policy) = opt(object, "preemptionPolicy").and_then(Value::as_str) {
        errs.extend(pod::preemption_policy(policy, "preemptionPolicy"));
    }
    errs
}

/// value and preemptionPolicy are fixed once created.
pub fn priority_class_update(object: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if int_of(object, "value").unwrap_or(0) != int_of(old, "value").unwrap_or(0) {
        errs.push(FieldError::forbidden(
            "value",
            "may not be changed in an update.",
        ));
    }
    let policy = |o: &'_ Value| -> String {
        match opt(o, "preemptionPolicy").and_then(Value::as_str) {
            None | Some("") => "PreemptLowerPriority".to_string(),
            Some(p) => p.to_string(),
        }
    };
    let new_policy = policy(object);
    if new_policy != policy(old) {
        errs.push(FieldError::immutable(
            "preemptionPolicy",
            &go_opt_str(Some(&new_policy)),
        ));
    }
    errs
}
