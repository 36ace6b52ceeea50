//! policy/v1: PodDisruptionBudget.

use serde_json::Value;

use super::meta;
use super::{field, opt};
use crate::error::FieldError;

pub fn pod_disruption_budget(object: &Value) -> Vec<FieldError> {
    let spec = field(object, "spec");
    let mut errs = Vec::new();
    let min = opt(spec, "minAvailable");
    let max = opt(spec, "maxUnavailable");
    if min.is_some() && max.is_some() {
        errs.push(FieldError::invalid_rendered(
            "spec",
            &format!("policy.PodDisruptionBudgetSpec{spec}"),
            "minAvailable and maxUnavailable cannot be both set",
        ));
    }
    for (name, value) in [("minAvailable", min), ("maxUnavailable", max)] {
        if let Some(value) = value {
            let path = format!("spec.{name}");
            errs.extend(meta::positive_int_or_percent(value, &path));
            errs.extend(meta::not_more_than_100_percent(value, &path));
        }
    }
    errs.extend(meta::label_selector(opt(spec, "selector"), "spec.selector"));
    if let Some(policy) = opt(spec, "unhealthyPodEvictionPolicy").and_then(Value::as_str) {
        if !matches!(policy, "AlwaysAllow" | "IfHealthyBudget") {
            errs.push(FieldError::not_supported(
                "spec.unhealthyPodEvictionPolicy",
                policy,
                &["AlwaysAllow", "IfHealthyBudget"],
            ));
        }
    }
    errs
}
