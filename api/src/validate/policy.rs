//! policy/v1: PodDisruptionBudget.

use serde_json::Value;

use super::meta;
use super::{field, nonnegative_counts, opt};
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

/// ValidatePodDisruptionBudgetStatusUpdate (policy/v1): the conditions,
/// then nonnegative counts.
pub fn pod_disruption_budget_status(object: &Value, _old: &Value) -> Vec<FieldError> {
    let status = field(object, "status");
    let conditions = status
        .get("conditions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut errs = meta::conditions(conditions, "status.conditions");
    nonnegative_counts(
        status,
        "status",
        &[
            "disruptionsAllowed",
            "currentHealthy",
            "desiredHealthy",
            "expectedPods",
        ],
        &mut errs,
    );
    errs
}
