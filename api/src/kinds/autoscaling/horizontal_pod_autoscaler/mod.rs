//! HorizontalPodAutoscaler (autoscaling/v2, v1): scales a workload on its metrics; served at v2 (stored) and v1.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::conversion::ConversionError;
use crate::defaults::{child, default_pointer, default_zero, ensure_child, Object};
use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::values::{
    age, get, int, int_opt, items, name, quantity_ptr, scalar_text, text,
};
use crate::printers::{age_col, col, name_col, Cell, TableColumn};
use crate::registry::ResourceDef;
use crate::validate::meta;
use crate::validate::{child as child_path, field, index, int_of, list_of, opt, str_of};

mod conversion;

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
            "v1" => set_defaults_v1(object),
            _ => set_defaults_v2(object),
        }
    }

    fn convert(&self, object: Value, target_api_version: &str) -> Result<Value, ConversionError> {
        conversion::convert(object, target_api_version)
    }

    fn empty_status(&self) -> Value {
        json!({"desiredReplicas": 0})
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
            col("Reference", "string", D_HPA_REF),
            col("Targets", "string", D_HPA_METRICS),
            col("MinPods", "string", D_HPA_MIN),
            col("MaxPods", "string", D_HPA_MAX),
            col("Replicas", "string", D_HPA_CURRENT),
            age_col(),
        ]
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        cells(object)
    }
}

/// autoscaling/v1 `SetDefaults_HorizontalPodAutoscaler`: minReplicas 1. The
/// implicit 80 % CPU target is not a v1 default; conversion adds it.
fn set_defaults_v1(hpa: &mut Object) {
    if let Some(spec) = ensure_child(hpa, "spec") {
        default_pointer(spec, "minReplicas", json!(1));
    }
}

/// autoscaling/v2 `SetDefaults_HorizontalPodAutoscaler`: minReplicas 1, an
/// 80 % CPU utilization metric when none is given, and full scaling rules for
/// both directions once `behavior` is sent at all.
fn set_defaults_v2(hpa: &mut Object) {
    let Some(spec) = ensure_child(hpa, "spec") else {
        return;
    };
    default_pointer(spec, "minReplicas", json!(1));
    default_zero(spec, "metrics", default_hpa_metrics());
    if let Some(behavior) = child(spec, "behavior") {
        fill_scaling_rules(behavior, "scaleUp", default_scale_up_rules());
        fill_scaling_rules(behavior, "scaleDown", default_scale_down_rules());
    }
}

/// The metric list upstream's v2 defaulter and v1 conversion use when none is set.
fn default_hpa_metrics() -> Value {
    json!([{
        "type": "Resource",
        "resource": {
            "name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 80}
        }
    }])
}

/// `GenerateHPAScaleUpRules(nil)`.
fn default_scale_up_rules() -> Value {
    json!({
        "stabilizationWindowSeconds": 0,
        "selectPolicy": "Max",
        "policies": [
            {"type": "Pods", "value": 4, "periodSeconds": 15},
            {"type": "Percent", "value": 100, "periodSeconds": 15}
        ]
    })
}

/// `GenerateHPAScaleDownRules(nil)`: the stabilization window stays unset so the
/// controller's --horizontal-pod-autoscaler-downscale-stabilization applies.
fn default_scale_down_rules() -> Value {
    json!({
        "selectPolicy": "Max",
        "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]
    })
}

/// `copyHPAScalingRules`: the sent rule fields over the defaults.
fn fill_scaling_rules(behavior: &mut Object, key: &str, defaults: Value) {
    let mut rules = defaults;
    if let (Some(sent), Some(rules)) = (
        behavior.get(key).and_then(Value::as_object),
        rules.as_object_mut(),
    ) {
        for (field, value) in sent {
            // A nil policies slice keeps the defaults; an empty one replaces them.
            if !value.is_null() {
                rules.insert(field.clone(), value.clone());
            }
        }
    }
    behavior.insert(key.into(), rules);
}

/// Metric source types in upstream's listing order, with the field each
/// one populates.
const METRIC_TYPES: &[(&str, &str)] = &[
    ("Object", "object"),
    ("Pods", "pods"),
    ("Resource", "resource"),
    ("External", "external"),
    ("ContainerResource", "containerResource"),
];

fn validate(object: &Value) -> Vec<FieldError> {
    let spec = field(object, "spec");
    let mut errs = Vec::new();
    let min = int_of(spec, "minReplicas");
    if let Some(min) = min.filter(|m| *m < 1) {
        errs.push(FieldError::invalid_rendered(
            "spec.minReplicas",
            &min.to_string(),
            "must be greater than or equal to 1",
        ));
    }
    let max = int_of(spec, "maxReplicas").unwrap_or(0);
    if max < 1 {
        errs.push(FieldError::invalid_rendered(
            "spec.maxReplicas",
            &max.to_string(),
            "must be greater than 0",
        ));
    }
    if min.is_some_and(|m| max < m) {
        errs.push(FieldError::invalid_rendered(
            "spec.maxReplicas",
            &max.to_string(),
            "must be greater than or equal to `minReplicas`",
        ));
    }
    let target = field(spec, "scaleTargetRef");
    let mut ref_errs = Vec::new();
    for name in ["kind", "name"] {
        let value = str_of(target, name);
        let path = child_path("spec.scaleTargetRef", name);
        if value.is_empty() {
            ref_errs.push(FieldError::required(path, ""));
        } else {
            ref_errs.extend(meta::path_segment_name(value, &path));
        }
    }
    if ref_errs.is_empty() {
        for (i, metric) in list_of(spec, "metrics").iter().enumerate() {
            errs.extend(metric_spec(metric, &index("spec.metrics", i)));
        }
    }
    errs.extend(ref_errs);
    errs
}

/// validateMetricSpec: a known type, and exactly its source populated.
fn metric_spec(metric: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let metric_type = str_of(metric, "type");
    let type_path = child_path(path, "type");
    if metric_type.is_empty() {
        errs.push(FieldError::required(
            &type_path,
            "must specify a metric source type",
        ));
    }
    let expected = METRIC_TYPES.iter().find(|(t, _)| *t == metric_type);
    if expected.is_none() {
        let names: Vec<&str> = METRIC_TYPES.iter().map(|(t, _)| *t).collect();
        errs.push(FieldError::not_supported(&type_path, metric_type, &names));
    }
    if let Some((_, source)) = expected {
        if opt(metric, source).is_none() {
            errs.push(FieldError::required(
                child_path(path, source),
                "must populate information for the given metric source",
            ));
        }
    }
    let present: Vec<&str> = METRIC_TYPES
        .iter()
        .map(|(_, f)| *f)
        .filter(|f| opt(metric, f).is_some())
        .collect();
    if present.len() != 1 {
        for source in present {
            if expected.is_some_and(|(_, f)| *f == source) {
                continue;
            }
            errs.push(FieldError::forbidden(
                child_path(path, source),
                "must populate the given metric source only",
            ));
        }
    }
    if let Some(resource) = opt(metric, "resource") {
        if str_of(resource, "name").is_empty() {
            errs.push(FieldError::required(
                child_path(&child_path(path, "resource"), "name"),
                "must specify a resource name",
            ));
        }
    }
    errs
}

/// ValidateHorizontalPodAutoscalerStatusUpdate's status checks, with
/// upstream's field path for desiredReplicas as it is ("desiredReplicasa").
fn validate_status(object: &Value, _old: &Value) -> Vec<FieldError> {
    let status = field(object, "status");
    let count = |name: &str| int_of(status, name).unwrap_or(0);
    meta::nonnegative(count("currentReplicas"), "status.currentReplicas")
        .into_iter()
        .chain(meta::nonnegative(
            count("desiredReplicas"),
            "status.desiredReplicasa",
        ))
        .collect()
}

const D_HPA_REF: &str = "scaleTargetRef points to the target resource to scale, and is used to the pods for which metrics should be collected, as well as to actually change the replica count.";
const D_HPA_METRICS: &str = "metrics contains the specifications for which to use to calculate the desired replica count (the maximum replica count across all metrics will be used).  The desired replica count is calculated multiplying the ratio between the target value and the current value by the current number of pods.  Ergo, metrics used must decrease as the pod count is increased, and vice-versa.  See the individual metric source types for more information about how each type of metric must respond. If not set, the default metric will be set to 80% average CPU utilization.";
const D_HPA_MIN: &str = "minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.  It defaults to 1 pod.  minReplicas is allowed to be 0 if the alpha feature gate HPAScaleToZero is enabled and at least one Object or External metric is configured.  Scaling is active as long as at least one metric value is available.";
const D_HPA_MAX: &str = "maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up. It cannot be less that minReplicas.";
const D_HPA_CURRENT: &str = "currentReplicas is current number of replicas of pods managed by this autoscaler, as last seen by the autoscaler.";

/// One "current/target" entry per metric, as upstream's formatHPAMetrics.
/// Statuses are matched to specs by position, as upstream does.
fn format_hpa_metrics(specs: &[Value], statuses: &[Value]) -> String {
    if specs.is_empty() {
        return "<none>".to_string();
    }
    const MAX: usize = 2;
    let mut list: Vec<String> = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        let status = statuses.get(i);
        // Per-source status block, e.g. status.resource for a Resource metric.
        let current = |source: &str| status.and_then(|s| get(s, &format!("/{source}")));
        let entry = match text(spec, "/type") {
            t @ ("External" | "Object") => {
                let source = if t == "External" {
                    "external"
                } else {
                    "object"
                };
                let target = get(spec, &format!("/{source}/target")).unwrap_or(&Value::Null);
                if get(target, "/averageValue").is_some() {
                    let cur = current(source)
                        .and_then(|c| get(c, "/current/averageValue"))
                        .map(scalar_text)
                        .unwrap_or_else(|| "<unknown>".to_string());
                    format!("{cur}/{} (avg)", quantity_ptr(target, "/averageValue"))
                } else {
                    let cur = current(source)
                        .map(|c| quantity_ptr(c, "/current/value"))
                        .unwrap_or_else(|| "<unknown>".to_string());
                    format!("{cur}/{}", quantity_ptr(target, "/value"))
                }
            }
            "Pods" => {
                let cur = current("pods")
                    .map(|c| quantity_ptr(c, "/current/averageValue"))
                    .unwrap_or_else(|| "<unknown>".to_string());
                format!("{cur}/{}", quantity_ptr(spec, "/pods/target/averageValue"))
            }
            t @ ("Resource" | "ContainerResource") => {
                let source = if t == "Resource" {
                    "resource"
                } else {
                    "containerResource"
                };
                let block = get(spec, &format!("/{source}")).unwrap_or(&Value::Null);
                let resource = text(block, "/name");
                if get(block, "/target/averageValue").is_some() {
                    let cur = current(source)
                        .map(|c| quantity_ptr(c, "/current/averageValue"))
                        .unwrap_or_else(|| "<unknown>".to_string());
                    format!(
                        "{resource}: {cur}/{}",
                        quantity_ptr(block, "/target/averageValue")
                    )
                } else {
                    let cur = current(source)
                        .and_then(|c| int_opt(c, "/current/averageUtilization"))
                        .map(|u| format!("{u}%"))
                        .unwrap_or_else(|| "<unknown>".to_string());
                    let target = int_opt(block, "/target/averageUtilization")
                        .map(|u| format!("{u}%"))
                        .unwrap_or_else(|| "<auto>".to_string());
                    format!("{resource}: {cur}/{target}")
                }
            }
            _ => "<unknown type>".to_string(),
        };
        list.push(entry);
    }
    let count = list.len();
    if count > MAX {
        list.truncate(MAX);
        return format!("{} + {} more...", list.join(", "), count - MAX);
    }
    list.join(", ")
}

fn cells(hpa: &Value) -> Vec<Cell> {
    let reference = format!(
        "{}/{}",
        text(hpa, "/spec/scaleTargetRef/kind"),
        text(hpa, "/spec/scaleTargetRef/name")
    );
    // autoscaling/v1 objects carry a single CPU target; upstream converts it
    // to the equivalent Resource metric before printing.
    let (specs, statuses) = match int_opt(hpa, "/spec/targetCPUUtilizationPercentage") {
        Some(target) if get(hpa, "/spec/metrics").is_none() => {
            let spec = json!([{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": target}}}]);
            let status = match int_opt(hpa, "/status/currentCPUUtilizationPercentage") {
                Some(cur) => json!([{"type": "Resource", "resource": {"name": "cpu",
                    "current": {"averageUtilization": cur}}}]),
                None => json!([]),
            };
            (spec, status)
        }
        _ => (
            get(hpa, "/spec/metrics").cloned().unwrap_or(Value::Null),
            get(hpa, "/status/currentMetrics")
                .cloned()
                .unwrap_or(Value::Null),
        ),
    };
    let metrics = format_hpa_metrics(items(&specs, ""), items(&statuses, ""));
    let min_pods = int_opt(hpa, "/spec/minReplicas")
        .map(|m| m.to_string())
        .unwrap_or_else(|| "<unset>".to_string());
    vec![
        name(hpa).into(),
        reference.into(),
        metrics.into(),
        min_pods.into(),
        int(hpa, "/spec/maxReplicas").into(),
        int(hpa, "/status/currentReplicas").into(),
        age(hpa),
    ]
}
