//! PodDisruptionBudget (policy/v1): how many pods of a set may be down at once.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::values::{age, get, int, name, scalar_text};
use crate::printers::{age_col, col, name_col, Cell, TableColumn};
use crate::registry::ResourceDef;
use crate::validate::meta;
use crate::validate::{field, nonnegative_counts, opt};

pub struct PodDisruptionBudget;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "policy",
        "v1",
        "poddisruptionbudgets",
        "PodDisruptionBudget",
        true,
        Arc::new(PodDisruptionBudget),
    )
    .short_names(&["pdb"])
    .subresources(&["status"])]
}

impl Kind for PodDisruptionBudget {
    fn tracks_generation(&self) -> bool {
        true
    }

    fn empty_status(&self) -> Value {
        json!({
            "disruptionsAllowed": 0,
            "currentHealthy": 0,
            "desiredHealthy": 0,
            "expectedPods": 0,
        })
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        validate(object)
    }

    fn validate_update(&self, object: &Value, _old: &Value) -> Vec<FieldError> {
        validate(object)
    }

    fn validate_status_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        validate_status(object, old)
    }

    fn table_columns(&self) -> Vec<TableColumn> {
        vec![
            name_col(),
            col(
                "Min Available",
                "string",
                "The minimum number of pods that must be available.",
            ),
            col(
                "Max Unavailable",
                "string",
                "The maximum number of pods that may be unavailable.",
            ),
            col(
                "Allowed Disruptions",
                "integer",
                "Calculated number of pods that may be disrupted at this time.",
            ),
            age_col(),
        ]
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        cells(object)
    }
}

fn validate(object: &Value) -> Vec<FieldError> {
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
fn validate_status(object: &Value, _old: &Value) -> Vec<FieldError> {
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

fn cells(pdb: &Value) -> Vec<Cell> {
    let int_or_string = |ptr: &str| {
        get(pdb, ptr)
            .map(scalar_text)
            .unwrap_or_else(|| "N/A".to_string())
    };
    vec![
        name(pdb).into(),
        int_or_string("/spec/minAvailable").into(),
        int_or_string("/spec/maxUnavailable").into(),
        int(pdb, "/status/disruptionsAllowed").into(),
        age(pdb),
    ]
}
