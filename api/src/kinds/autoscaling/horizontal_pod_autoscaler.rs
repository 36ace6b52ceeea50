//! HorizontalPodAutoscaler (autoscaling/v2, v1): scales a workload on its metrics; served at v2 (stored) and v1.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::conversion::ConversionError;
use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::Printer;
use crate::registry::ResourceDef;
use crate::validate::autoscaling as rules;

pub struct HorizontalPodAutoscaler;

pub fn resources() -> Vec<ResourceDef> {
    let kind = Arc::new(HorizontalPodAutoscaler);
    // v2 preferred; both versions share the v2 storage.
    ["v2", "v1"]
        .into_iter()
        .map(|version| {
            ResourceDef::new(
                "autoscaling",
                version,
                "horizontalpodautoscalers",
                "HorizontalPodAutoscaler",
                true,
                kind.clone(),
            )
            .short_names(&["hpa"])
            .categories(&["all"])
            .subresources(&["status"])
            .stored_as("autoscaling", "v2", "HorizontalPodAutoscaler")
        })
        .collect()
}

impl Kind for HorizontalPodAutoscaler {
    fn apply_defaults(&self, version: &str, object: &mut Map<String, Value>) {
        match version {
            "v1" => crate::defaults::other::hpa_v1(object),
            _ => crate::defaults::other::hpa_v2(object),
        }
    }

    fn convert(&self, object: Value, target_api_version: &str) -> Result<Value, ConversionError> {
        crate::conversion::horizontal_pod_autoscaler(object, target_api_version)
    }

    fn empty_status(&self) -> Value {
        json!({"desiredReplicas": 0})
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        rules::horizontal_pod_autoscaler(object)
    }

    fn validate_update(&self, object: &Value, _old: &Value) -> Vec<FieldError> {
        rules::horizontal_pod_autoscaler(object)
    }

    fn validate_status_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        rules::horizontal_pod_autoscaler_status(object, old)
    }

    fn printer(&self) -> Printer {
        Printer::HorizontalPodAutoscaler
    }
}
