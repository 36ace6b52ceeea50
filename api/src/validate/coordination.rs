//! coordination.k8s.io/v1: Lease.

use serde_json::Value;

use super::{field, int_of, opt, str_of};
use crate::error::FieldError;

pub fn lease(object: &Value) -> Vec<FieldError> {
    let spec = field(object, "spec");
    let mut errs = Vec::new();
    if let Some(duration) = int_of(spec, "leaseDurationSeconds").filter(|d| *d <= 0) {
        errs.push(FieldError::invalid_rendered(
            "spec.leaseDurationSeconds",
            &duration.to_string(),
            "must be greater than 0",
        ));
    }
    if let Some(transitions) = int_of(spec, "leaseTransitions").filter(|t| *t < 0) {
        errs.push(FieldError::invalid_rendered(
            "spec.leaseTransitions",
            &transitions.to_string(),
            "must be greater than or equal to 0",
        ));
    }
    let strategy = opt(spec, "strategy").and_then(Value::as_str);
    if let Some(strategy) = strategy {
        match strategy {
            "OldestEmulationVersion" => {}
            "" => errs.push(FieldError::required("spec.strategy", "")),
            other => errs.push(FieldError::not_supported(
                "spec.strategy",
                other,
                &["OldestEmulationVersion"],
            )),
        }
    }
    let preferred = str_of(spec, "preferredHolder");
    if !preferred.is_empty() && strategy.is_none_or(str::is_empty) {
        errs.push(FieldError::forbidden(
            "spec.preferredHolder",
            "may only be specified if `strategy` is defined",
        ));
    }
    errs
}
