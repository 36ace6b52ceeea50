//! PodDisruptionBudget (policy/v1): how many pods of a set may be down at once.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::Printer;
use crate::registry::ResourceDef;
use crate::validate::policy as rules;

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
        rules::pod_disruption_budget(object)
    }

    fn validate_update(&self, object: &Value, _old: &Value) -> Vec<FieldError> {
        rules::pod_disruption_budget(object)
    }

    fn validate_status_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        rules::pod_disruption_budget_status(object, old)
    }

    fn printer(&self) -> Printer {
        Printer::PodDisruptionBudget
    }
}
