//! HorizontalPodAutoscaler between autoscaling/v1 and autoscaling/v2 (stored).
//!
//! The HPA rules are pkg/apis/autoscaling/v1/conversion.go's, applied directly
//! between the two external versions: v1 keeps what it has no field for in
//! annotations, so v2 → v1 → v2 loses nothing.
//!
//! - `autoscaling.alpha.kubernetes.io/metrics`: the spec metrics other than CPU
//!   utilization, in autoscaling/v1's own (v2beta1-shaped) MetricSpec JSON;
//! - `autoscaling.alpha.kubernetes.io/current-metrics`: all status metrics, as
//!   v1 MetricStatus JSON;
//! - `autoscaling.alpha.kubernetes.io/conditions`: the status conditions;
//! - `autoscaling.alpha.kubernetes.io/behavior`: spec.behavior, marshalled by
//!   upstream from its internal type, which has no json tags — so the keys are
//!   Go field names (`ScaleUp`, `StabilizationWindowSeconds`, …) and unset
//!   pointers are `null`. Reading it back matches keys case-insensitively, as
//!   Go's encoding/json does.
//!
//! Going to v1 replaces any such annotations a client sent; coming from v1 they
//! are read and removed.

use serde_json::{json, Map, Value};

use crate::conversion::{type_meta, unsupported, ConversionError};

type Object = Map<String, Value>;

const METRICS_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/metrics";
const CURRENT_METRICS_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/current-metrics";
const CONDITIONS_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/conditions";
const BEHAVIOR_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/behavior";
const ROUND_TRIP_ANNOTATIONS: [&str; 4] = [
    METRICS_ANNOTATION,
    BEHAVIOR_ANNOTATION,
    CURRENT_METRICS_ANNOTATION,
    CONDITIONS_ANNOTATION,
];

const HPA_V1: &str = "autoscaling/v1";
const HPA_V2: &str = "autoscaling/v2";

/// HorizontalPodAutoscaler between autoscaling/v1 and autoscaling/v2.
pub(super) fn convert(object: Value, target_api_version: &str) -> Result<Value, ConversionError> {
    let (api_version, kind) = type_meta(&object)?;
    match (api_version.as_str(), target_api_version) {
        (from, to) if from == to => Ok(object),
        (HPA_V2, HPA_V1) => Ok(hpa_v2_to_v1(object)),
        (HPA_V1, HPA_V2) => hpa_v1_to_v2(object),
        _ => Err(unsupported(kind, api_version, target_api_version)),
    }
}

fn field<'a>(map: &'a Object, key: &str) -> Option<&'a Value> {
    map.get(key).filter(|v| !v.is_null())
}

fn object_at(value: &Value, key: &str) -> Object {
    value
        .get(key)
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

fn array_at(map: &Object, key: &str) -> Vec<Value> {
    map.get(key)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// Copies the listed fields that are set from `from` to `to`, in order.
fn copy_fields(from: &Object, to: &mut Object, keys: &[&str]) {
    for key in keys {
        if let Some(value) = field(from, key) {
            to.insert((*key).to_string(), value.clone());
        }
    }
}

/// A Go `resource.Quantity` that is not a pointer: encoded as "0" when unset.
fn quantity_or_zero(value: Option<&Value>) -> Value {
    value.cloned().unwrap_or_else(|| json!("0"))
}

fn is_cpu_resource(metric: &Value) -> bool {
    metric.get("type").and_then(Value::as_str) == Some("Resource")
        && metric.pointer("/resource/name").and_then(Value::as_str) == Some("cpu")
}

// ---------------------------------------------------------------- v2 → v1

fn hpa_v2_to_v1(object: Value) -> Value {
    let mut out = object.as_object().cloned().unwrap_or_default();
    out.insert("apiVersion".into(), json!(HPA_V1));
    let spec = object_at(&object, "spec");
    let status = object_at(&object, "status");

    let metrics = array_at(&spec, "metrics");
    let mut v1_spec = Object::new();
    copy_fields(
        &spec,
        &mut v1_spec,
        &["scaleTargetRef", "minReplicas", "maxReplicas"],
    );
    // The first CPU resource metric decides, even when it targets a value.
    if let Some(cpu) = metrics.iter().find(|m| is_cpu_resource(m)) {
        if let Some(utilization) = cpu.pointer("/resource/target/averageUtilization") {
            if !utilization.is_null() {
                v1_spec.insert("targetCPUUtilizationPercentage".into(), utilization.clone());
            }
        }
    }
    let other_metrics: Vec<Value> = metrics
        .iter()
        .filter(|m| {
            !(is_cpu_resource(m)
                && m.pointer("/resource/target/averageUtilization")
                    .is_some_and(|u| !u.is_null()))
        })
        .map(metric_spec_to_v1)
        .collect();
    out.insert("spec".into(), Value::Object(v1_spec));

    let current_metrics = array_at(&status, "currentMetrics");
    let conditions = array_at(&status, "conditions");
    let mut v1_status = Object::new();
    copy_fields(
        &status,
        &mut v1_status,
        &["observedGeneration", "lastScaleTime"],
    );
    v1_status.insert(
        "currentReplicas".into(),
        field(&status, "currentReplicas")
            .cloned()
            .unwrap_or(json!(0)),
    );
    v1_status.insert(
        "desiredReplicas".into(),
        field(&status, "desiredReplicas")
            .cloned()
            .unwrap_or(json!(0)),
    );
    // Unlike the spec, the last CPU utilization in the status wins.
    for metric in current_metrics.iter().filter(|m| is_cpu_resource(m)) {
        if let Some(utilization) = metric.pointer("/resource/current/averageUtilization") {
            if !utilization.is_null() {
                v1_status.insert(
                    "currentCPUUtilizationPercentage".into(),
                    utilization.clone(),
                );
            }
        }
    }
    out.insert("status".into(), Value::Object(v1_status));

    let mut annotations = out
        .get("metadata")
        .and_then(|meta| meta.get("annotations"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for key in ROUND_TRIP_ANNOTATIONS {
        annotations.shift_remove(key);
    }
    let encoded = |values: Vec<Value>| Value::String(Value::Array(values).to_string());
    if !other_metrics.is_empty() {
        annotations.insert(METRICS_ANNOTATION.into(), encoded(other_metrics));
    }
    if !current_metrics.is_empty() {
        let v1_metrics = current_metrics.iter().map(metric_status_to_v1).collect();
        annotations.insert(CURRENT_METRICS_ANNOTATION.into(), encoded(v1_metrics));
    }
    if !conditions.is_empty() {
        annotations.insert(CONDITIONS_ANNOTATION.into(), encoded(conditions));
    }
    if let Some(behavior) = spec.get("behavior").and_then(Value::as_object) {
        annotations.insert(
            BEHAVIOR_ANNOTATION.into(),
            Value::String(behavior_to_go_fields(behavior).to_string()),
        );
    }
    set_annotations(&mut out, annotations);
    Value::Object(out)
}

fn set_annotations(object: &mut Object, annotations: Object) {
    let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) else {
        if !annotations.is_empty() {
            object.insert("metadata".into(), json!({"annotations": annotations}));
        }
        return;
    };
    if annotations.is_empty() {
        meta.shift_remove("annotations");
    } else {
        meta.insert("annotations".into(), Value::Object(annotations));
    }
}

/// A v2 MetricIdentifier's name and selector under v1's names.
fn identifier_to_v1(metric: &Object, out: &mut Object, selector_key: &str) {
    out.insert(
        "metricName".into(),
        field(metric, "name").cloned().unwrap_or(json!("")),
    );
    if let Some(selector) = field(metric, "selector") {
        out.insert(selector_key.into(), selector.clone());
    }
}

fn described_object_to_v1(source: &Value) -> Value {
    let described = object_at(source, "describedObject");
    let mut target = Object::new();
    target.insert(
        "kind".into(),
        field(&described, "kind").cloned().unwrap_or(json!("")),
    );
    target.insert(
        "name".into(),
        field(&described, "name").cloned().unwrap_or(json!("")),
    );
    copy_fields(&described, &mut target, &["apiVersion"]);
    Value::Object(target)
}

/// autoscaling/v2 MetricSpec → autoscaling/v1 MetricSpec (annotation form).
fn metric_spec_to_v1(metric: &Value) -> Value {
    let metric_type = metric.get("type").cloned().unwrap_or(json!(""));
    let mut out = Object::new();
    out.insert("type".into(), metric_type);
    if let Some(source) = metric.get("object").filter(|v| v.is_object()) {
        let target = object_at(source, "target");
        let mut v1 = Object::new();
        v1.insert("target".into(), described_object_to_v1(source));
        identifier_to_v1(&object_at(source, "metric"), &mut v1, "selector");
        v1.insert(
            "targetValue".into(),
            quantity_or_zero(field(&target, "value")),
        );
        // Go struct field order: target, metricName, targetValue, selector, averageValue.
        if let Some(selector) = v1.shift_remove("selector") {
            v1.insert("selector".into(), selector);
        }
        copy_fields(&target, &mut v1, &["averageValue"]);
        out.insert("object".into(), Value::Object(v1));
    }
    if let Some(source) = metric.get("pods").filter(|v| v.is_object()) {
        let target = object_at(source, "target");
        let mut v1 = Object::new();
        identifier_to_v1(&object_at(source, "metric"), &mut v1, "selector");
        let selector = v1.shift_remove("selector");
        v1.insert(
            "targetAverageValue".into(),
            quantity_or_zero(field(&target, "averageValue")),
        );
        if let Some(selector) = selector {
            v1.insert("selector".into(), selector);
        }
        out.insert("pods".into(), Value::Object(v1));
    }
    for key in ["resource", "containerResource"] {
        if let Some(source) = metric.get(key).and_then(Value::as_object) {
            let target = object_at(&metric[key], "target");
            let mut v1 = Object::new();
            v1.insert(
                "name".into(),
                field(source, "name").cloned().unwrap_or(json!("")),
            );
            if let Some(utilization) = field(&target, "averageUtilization") {
                v1.insert("targetAverageUtilization".into(), utilization.clone());
            }
            if let Some(value) = field(&target, "averageValue") {
                v1.insert("targetAverageValue".into(), value.clone());
            }
            if key == "containerResource" {
                v1.insert(
                    "container".into(),
                    field(source, "container").cloned().unwrap_or(json!("")),
                );
            }
            out.insert(key.into(), Value::Object(v1));
        }
    }
    if let Some(source) = metric.get("external").filter(|v| v.is_object()) {
        let target = object_at(source, "target");
        let mut v1 = Object::new();
        identifier_to_v1(&object_at(source, "metric"), &mut v1, "metricSelector");
        if let Some(value) = field(&target, "value") {
            v1.insert("targetValue".into(), value.clone());
        }
        if let Some(value) = field(&target, "averageValue") {
            v1.insert("targetAverageValue".into(), value.clone());
        }
        out.insert("external".into(), Value::Object(v1));
    }
    Value::Object(out)
}

/// autoscaling/v2 MetricStatus → autoscaling/v1 MetricStatus (annotation form).
fn metric_status_to_v1(metric: &Value) -> Value {
    let mut out = Object::new();
    out.insert(
        "type".into(),
        metric.get("type").cloned().unwrap_or(json!("")),
    );
    if let Some(source) = metric.get("object").filter(|v| v.is_object()) {
        let current = object_at(source, "current");
        let mut v1 = Object::new();
        v1.insert("target".into(), described_object_to_v1(source));
        identifier_to_v1(&object_at(source, "metric"), &mut v1, "selector");
        let selector = v1.shift_remove("selector");
        v1.insert(
            "currentValue".into(),
            quantity_or_zero(field(&current, "value")),
        );
        if let Some(selector) = selector {
            v1.insert("selector".into(), selector);
        }
        copy_fields(&current, &mut v1, &["averageValue"]);
        out.insert("object".into(), Value::Object(v1));
    }
    if let Some(source) = metric.get("pods").filter(|v| v.is_object()) {
        let current = object_at(source, "current");
        let mut v1 = Object::new();
        identifier_to_v1(&object_at(source, "metric"), &mut v1, "selector");
        let selector = v1.shift_remove("selector");
        v1.insert(
            "currentAverageValue".into(),
            quantity_or_zero(field(&current, "averageValue")),
        );
        if let Some(selector) = selector {
            v1.insert("selector".into(), selector);
        }
        out.insert("pods".into(), Value::Object(v1));
    }
    for key in ["resource", "containerResource"] {
        if let Some(source) = metric.get(key).and_then(Value::as_object) {
            let current = object_at(&metric[key], "current");
            let mut v1 = Object::new();
            v1.insert(
                "name".into(),
                field(source, "name").cloned().unwrap_or(json!("")),
            );
            if let Some(utilization) = field(&current, "averageUtilization") {
                v1.insert("currentAverageUtilization".into(), utilization.clone());
            }
            v1.insert(
                "currentAverageValue".into(),
                quantity_or_zero(field(&current, "averageValue")),
            );
            if key == "containerResource" {
                v1.insert(
                    "container".into(),
                    field(source, "container").cloned().unwrap_or(json!("")),
                );
            }
            out.insert(key.into(), Value::Object(v1));
        }
    }
    if let Some(source) = metric.get("external").filter(|v| v.is_object()) {
        let current = object_at(source, "current");
        let mut v1 = Object::new();
        identifier_to_v1(&object_at(source, "metric"), &mut v1, "metricSelector");
        v1.insert(
            "currentValue".into(),
            quantity_or_zero(field(&current, "value")),
        );
        copy_fields(&current, &mut v1, &["averageValue"]);
        if let Some(average) = v1.shift_remove("averageValue") {
            v1.insert("currentAverageValue".into(), average);
        }
        out.insert("external".into(), Value::Object(v1));
    }
    Value::Object(out)
}

/// spec.behavior as Go's json.Marshal writes the internal type.
fn behavior_to_go_fields(behavior: &Object) -> Value {
    let rules = |key: &str| match behavior.get(key).and_then(Value::as_object) {
        None => Value::Null,
        Some(rules) => {
            let policies = match rules.get("policies").and_then(Value::as_array) {
                None => Value::Null,
                Some(policies) => Value::Array(
                    policies
                        .iter()
                        .map(|policy| {
                            json!({
                                "Type": policy.get("type").cloned().unwrap_or(json!("")),
                                "Value": policy.get("value").cloned().unwrap_or(json!(0)),
                                "PeriodSeconds": policy.get("periodSeconds").cloned().unwrap_or(json!(0)),
                            })
                        })
                        .collect(),
                ),
            };
            json!({
                "StabilizationWindowSeconds": rules.get("stabilizationWindowSeconds").cloned().unwrap_or(Value::Null),
                "SelectPolicy": rules.get("selectPolicy").cloned().unwrap_or(Value::Null),
                "Policies": policies,
            })
        }
    };
    json!({"ScaleUp": rules("scaleUp"), "ScaleDown": rules("scaleDown")})
}

// ---------------------------------------------------------------- v1 → v2

fn hpa_v1_to_v2(object: Value) -> Result<Value, ConversionError> {
    let mut out = object.as_object().cloned().unwrap_or_default();
    out.insert("apiVersion".into(), json!(HPA_V2));
    let spec = object_at(&object, "spec");
    let status = object_at(&object, "status");
    let mut annotations = object
        .get("metadata")
        .and_then(|meta| meta.get("annotations"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();

    let mut v2_spec = Object::new();
    copy_fields(
        &spec,
        &mut v2_spec,
        &["scaleTargetRef", "minReplicas", "maxReplicas"],
    );
    let cpu_metric = field(&spec, "targetCPUUtilizationPercentage").map(|utilization| {
        json!({"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": utilization}}})
    });
    // Annotated metrics first, the CPU target after them, as upstream orders them.
    let mut metrics: Vec<Value> = annotation_list(&annotations, METRICS_ANNOTATION)?
        .unwrap_or_default()
        .iter()
        .map(metric_spec_from_v1)
        .collect();
    metrics.extend(cpu_metric);
    // v1's implicit 80 % CPU target becomes explicit here, with all metrics known.
    let metrics = if metrics.is_empty() {
        default_metrics()
    } else {
        Value::Array(metrics)
    };
    v2_spec.insert("metrics".into(), metrics);
    if let Some(behavior) = annotations
        .get(BEHAVIOR_ANNOTATION)
        .and_then(Value::as_str)
        .and_then(behavior_from_go_fields)
    {
        v2_spec.insert("behavior".into(), behavior);
    }
    out.insert("spec".into(), Value::Object(v2_spec));

    let mut v2_status = Object::new();
    copy_fields(
        &status,
        &mut v2_status,
        &["observedGeneration", "lastScaleTime"],
    );
    // v2's currentReplicas is omitempty, v1's is not.
    if let Some(current) = field(&status, "currentReplicas").filter(|n| n.as_i64() != Some(0)) {
        v2_status.insert("currentReplicas".into(), current.clone());
    }
    v2_status.insert(
        "desiredReplicas".into(),
        field(&status, "desiredReplicas")
            .cloned()
            .unwrap_or(json!(0)),
    );
    let current_metrics = match annotation_list(&annotations, CURRENT_METRICS_ANNOTATION)? {
        // The annotation has more than the percentage: it wins.
        Some(list) => Some(list.iter().map(metric_status_from_v1).collect()),
        None => field(&status, "currentCPUUtilizationPercentage").map(|utilization| {
            vec![json!({"type": "Resource", "resource": {"name": "cpu",
                "current": {"averageUtilization": utilization}}})]
        }),
    };
    if let Some(current_metrics) = current_metrics {
        v2_status.insert("currentMetrics".into(), Value::Array(current_metrics));
    }
    if let Some(conditions) = annotation_list(&annotations, CONDITIONS_ANNOTATION)? {
        v2_status.insert("conditions".into(), Value::Array(conditions));
    }
    out.insert("status".into(), Value::Object(v2_status));

    for key in ROUND_TRIP_ANNOTATIONS {
        annotations.shift_remove(key);
    }
    set_annotations(&mut out, annotations);
    Ok(Value::Object(out))
}

fn default_metrics() -> Value {
    let mut hpa = json!({"spec": {}});
    if let Some(map) = hpa.as_object_mut() {
        super::set_defaults_v2(map);
    }
    hpa.pointer("/spec/metrics").cloned().unwrap_or(Value::Null)
}

/// A JSON list kept in an annotation; an error when it does not parse, as
/// upstream fails the conversion then.
fn annotation_list(
    annotations: &Object,
    annotation: &'static str,
) -> Result<Option<Vec<Value>>, ConversionError> {
    let Some(text) = annotations.get(annotation).and_then(Value::as_str) else {
        return Ok(None);
    };
    let parsed: Value =
        serde_json::from_str(text).map_err(|err| ConversionError::InvalidAnnotation {
            annotation,
            reason: err.to_string(),
        })?;
    match parsed {
        Value::Array(items) => Ok(Some(items)),
        Value::Null => Ok(Some(Vec::new())),
        _ => Err(ConversionError::InvalidAnnotation {
            annotation,
            reason: "not a JSON list".into(),
        }),
    }
}

/// The v2 MetricIdentifier from v1's name and selector fields.
fn identifier_from_v1(source: &Object, selector_key: &str) -> Value {
    let mut identifier = Object::new();
    identifier.insert(
        "name".into(),
        field(source, "metricName").cloned().unwrap_or(json!("")),
    );
    if let Some(selector) = field(source, selector_key) {
        identifier.insert("selector".into(), selector.clone());
    }
    Value::Object(identifier)
}

fn described_object_from_v1(source: &Object) -> Value {
    let target = source
        .get("target")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut described = Object::new();
    copy_fields(&target, &mut described, &["apiVersion", "kind", "name"]);
    Value::Object(described)
}

/// autoscaling/v1 MetricSpec (annotation form) → autoscaling/v2 MetricSpec.
fn metric_spec_from_v1(metric: &Value) -> Value {
    let mut out = Object::new();
    out.insert(
        "type".into(),
        metric.get("type").cloned().unwrap_or(json!("")),
    );
    if let Some(source) = metric.get("object").and_then(Value::as_object) {
        let mut target = Object::new();
        let target_type = if field(source, "averageValue").is_some() {
            "AverageValue"
        } else {
            "Value"
        };
        target.insert("type".into(), json!(target_type));
        target.insert(
            "value".into(),
            quantity_or_zero(field(source, "targetValue")),
        );
        copy_fields(source, &mut target, &["averageValue"]);
        out.insert(
            "object".into(),
            json!({
                "describedObject": described_object_from_v1(source),
                "target": target,
                "metric": identifier_from_v1(source, "selector"),
            }),
        );
    }
    if let Some(source) = metric.get("pods").and_then(Value::as_object) {
        out.insert(
            "pods".into(),
            json!({
                "metric": identifier_from_v1(source, "selector"),
                "target": {"type": "AverageValue",
                    "averageValue": quantity_or_zero(field(source, "targetAverageValue"))},
            }),
        );
    }
    for key in ["resource", "containerResource"] {
        if let Some(source) = metric.get(key).and_then(Value::as_object) {
            let mut target = Object::new();
            let utilization = field(source, "targetAverageUtilization");
            let target_type = if utilization.is_some() {
                "Utilization"
            } else {
                "AverageValue"
            };
            target.insert("type".into(), json!(target_type));
            if let Some(utilization) = utilization {
                target.insert("averageUtilization".into(), utilization.clone());
            }
            if let Some(value) = field(source, "targetAverageValue") {
                target.insert("averageValue".into(), value.clone());
            }
            let mut v2 = Object::new();
            v2.insert(
                "name".into(),
                field(source, "name").cloned().unwrap_or(json!("")),
            );
            if key == "containerResource" {
                v2.insert(
                    "container".into(),
                    field(source, "container").cloned().unwrap_or(json!("")),
                );
            }
            v2.insert("target".into(), Value::Object(target));
            out.insert(key.into(), Value::Object(v2));
        }
    }
    if let Some(source) = metric.get("external").and_then(Value::as_object) {
        let mut target = Object::new();
        let value = field(source, "targetValue");
        let target_type = if value.is_some() {
            "Value"
        } else {
            "AverageValue"
        };
        target.insert("type".into(), json!(target_type));
        if let Some(value) = value {
            target.insert("value".into(), value.clone());
        }
        if let Some(average) = field(source, "targetAverageValue") {
            target.insert("averageValue".into(), average.clone());
        }
        out.insert(
            "external".into(),
            json!({
                "metric": identifier_from_v1(source, "metricSelector"),
                "target": target,
            }),
        );
    }
    Value::Object(out)
}

/// autoscaling/v1 MetricStatus (annotation form) → autoscaling/v2 MetricStatus.
fn metric_status_from_v1(metric: &Value) -> Value {
    let mut out = Object::new();
    out.insert(
        "type".into(),
        metric.get("type").cloned().unwrap_or(json!("")),
    );
    if let Some(source) = metric.get("object").and_then(Value::as_object) {
        let mut current = Object::new();
        current.insert(
            "value".into(),
            quantity_or_zero(field(source, "currentValue")),
        );
        copy_fields(source, &mut current, &["averageValue"]);
        out.insert(
            "object".into(),
            json!({
                "metric": identifier_from_v1(source, "selector"),
                "current": current,
                "describedObject": described_object_from_v1(source),
            }),
        );
    }
    if let Some(source) = metric.get("pods").and_then(Value::as_object) {
        out.insert(
            "pods".into(),
            json!({
                "metric": identifier_from_v1(source, "selector"),
                "current": {"averageValue": quantity_or_zero(field(source, "currentAverageValue"))},
            }),
        );
    }
    for key in ["resource", "containerResource"] {
        if let Some(source) = metric.get(key).and_then(Value::as_object) {
            let mut current = Object::new();
            current.insert(
                "averageValue".into(),
                quantity_or_zero(field(source, "currentAverageValue")),
            );
            if let Some(utilization) = field(source, "currentAverageUtilization") {
                current.insert("averageUtilization".into(), utilization.clone());
            }
            let mut v2 = Object::new();
            v2.insert(
                "name".into(),
                field(source, "name").cloned().unwrap_or(json!("")),
            );
            if key == "containerResource" {
                v2.insert(
                    "container".into(),
                    field(source, "container").cloned().unwrap_or(json!("")),
                );
            }
            v2.insert("current".into(), Value::Object(current));
            out.insert(key.into(), Value::Object(v2));
        }
    }
    if let Some(source) = metric.get("external").and_then(Value::as_object) {
        let mut current = Object::new();
        current.insert(
            "value".into(),
            quantity_or_zero(field(source, "currentValue")),
        );
        if let Some(average) = field(source, "currentAverageValue") {
            current.insert("averageValue".into(), average.clone());
        }
        out.insert(
            "external".into(),
            json!({
                "metric": identifier_from_v1(source, "metricSelector"),
                "current": current,
            }),
        );
    }
    Value::Object(out)
}

/// Reads the behavior annotation like Go's encoding/json into the internal
/// type: keys case-insensitive, unknown keys ignored. `None` when it does not
/// parse or holds nothing, as upstream then leaves behavior unset.
fn behavior_from_go_fields(text: &str) -> Option<Value> {
    let parsed: Value = serde_json::from_str(text).ok()?;
    let parsed = parsed.as_object()?;
    let get = |map: &Object, name: &str| -> Option<Value> {
        map.iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.clone())
            .filter(|value| !value.is_null())
    };
    let rules = |name: &str| -> Option<Value> {
        let rules = get(parsed, name)?;
        let rules = rules.as_object()?;
        let mut out = Object::new();
        if let Some(window) = get(rules, "StabilizationWindowSeconds") {
            out.insert("stabilizationWindowSeconds".into(), window);
        }
        if let Some(select) = get(rules, "SelectPolicy") {
            out.insert("selectPolicy".into(), select);
        }
        if let Some(policies) = get(rules, "Policies").and_then(|p| p.as_array().cloned()) {
            let policies = policies
                .iter()
                .filter_map(Value::as_object)
                .map(|policy| {
                    json!({
                        "type": get(policy, "Type").unwrap_or(json!("")),
                        "value": get(policy, "Value").unwrap_or(json!(0)),
                        "periodSeconds": get(policy, "PeriodSeconds").unwrap_or(json!(0)),
                    })
                })
                .collect();
            out.insert("policies".into(), Value::Array(policies));
        }
        Some(Value::Object(out))
    };
    let mut behavior = Object::new();
    if let Some(up) = rules("ScaleUp") {
        behavior.insert("scaleUp".into(), up);
    }
    if let Some(down) = rules("ScaleDown") {
        behavior.insert("scaleDown".into(), down);
    }
    (!behavior.is_empty()).then_some(Value::Object(behavior))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::conversion::unconvertible;

    fn apply_defaults(_group: &str, version: &str, _kind: &str, object: &mut Value) {
        let map = object.as_object_mut().expect("an object");
        match version {
            "v1" => super::super::set_defaults_v1(map),
            _ => super::super::set_defaults_v2(map),
        }
    }

    fn annotation(object: &Value, key: &str) -> Value {
        let text = object["metadata"]["annotations"][key].as_str().unwrap();
        serde_json::from_str(text).unwrap()
    }

    /// A v2 HPA as stored after defaulting, with a status the controller wrote.
    fn full_v2() -> Value {
        json!({
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "namespace": "default", "annotations": {"team": "a"}},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "minReplicas": 2,
                "maxReplicas": 10,
                "metrics": [
                    {"type": "Pods", "pods": {
                        "metric": {"name": "rps", "selector": {"matchLabels": {"a": "b"}}},
                        "target": {"type": "AverageValue", "averageValue": "1k"}}},
                    {"type": "Object", "object": {
                        "describedObject": {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "name": "main"},
                        "metric": {"name": "hits"},
                        "target": {"type": "Value", "value": "10k"}}},
                    {"type": "External", "external": {
                        "metric": {"name": "queue", "selector": {"matchLabels": {"q": "x"}}},
                        "target": {"type": "AverageValue", "averageValue": "30"}}},
                    {"type": "ContainerResource", "containerResource": {
                        "name": "memory", "container": "app",
                        "target": {"type": "AverageValue", "averageValue": "500Mi"}}},
                    {"type": "Resource", "resource": {
                        "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}
                ],
                "behavior": {
                    "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
                        {"type": "Pods", "value": 4, "periodSeconds": 15},
                        {"type": "Percent", "value": 100, "periodSeconds": 15}]},
                    "scaleDown": {"selectPolicy": "Min", "policies": [
                        {"type": "Percent", "value": 10, "periodSeconds": 60}]}
                }
            },
            "status": {
                "observedGeneration": 3,
                "lastScaleTime": "2025-01-01T00:00:00Z",
                "currentReplicas": 3,
                "desiredReplicas": 4,
                "currentMetrics": [
                    {"type": "Resource", "resource": {"name": "cpu",
                        "current": {"averageUtilization": 72, "averageValue": "720m"}}},
                    {"type": "Pods", "pods": {"metric": {"name": "rps"},
                        "current": {"averageValue": "900"}}}
                ],
                "conditions": [{"type": "AbleToScale", "status": "True",
                    "lastTransitionTime": "2025-01-01T00:00:00Z", "reason": "ReadyForNewScale",
                    "message": "recommended size matches current size"}]
            }
        })
    }

    #[test]
    fn v2_to_v1_keeps_what_v1_lacks_in_annotations() {
        let v1 = convert(full_v2(), "autoscaling/v1").unwrap();
        assert_eq!(v1["apiVersion"], "autoscaling/v1");
        assert_eq!(
            v1["spec"],
            json!({
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "minReplicas": 2,
                "maxReplicas": 10,
                "targetCPUUtilizationPercentage": 60
            })
        );
        assert_eq!(
            v1["status"],
            json!({
                "observedGeneration": 3,
                "lastScaleTime": "2025-01-01T00:00:00Z",
                "currentReplicas": 3,
                "desiredReplicas": 4,
                "currentCPUUtilizationPercentage": 72
            })
        );
        assert_eq!(v1["metadata"]["annotations"]["team"], "a");
        assert_eq!(
            annotation(&v1, METRICS_ANNOTATION),
            json!([
                {"type": "Pods", "pods": {"metricName": "rps", "targetAverageValue": "1k",
                    "selector": {"matchLabels": {"a": "b"}}}},
                {"type": "Object", "object": {
                    "target": {"kind": "Ingress", "name": "main", "apiVersion": "networking.k8s.io/v1"},
                    "metricName": "hits", "targetValue": "10k"}},
                {"type": "External", "external": {"metricName": "queue",
                    "metricSelector": {"matchLabels": {"q": "x"}}, "targetAverageValue": "30"}},
                {"type": "ContainerResource", "containerResource": {"name": "memory",
                    "targetAverageValue": "500Mi", "container": "app"}}
            ])
        );
        assert_eq!(
            annotation(&v1, CURRENT_METRICS_ANNOTATION),
            json!([
                {"type": "Resource", "resource": {"name": "cpu",
                    "currentAverageUtilization": 72, "currentAverageValue": "720m"}},
                {"type": "Pods", "pods": {"metricName": "rps", "currentAverageValue": "900"}}
            ])
        );
        assert_eq!(
            annotation(&v1, CONDITIONS_ANNOTATION),
            full_v2()["status"]["conditions"]
        );
        // Go field names and null for the unset window, as upstream marshals it.
        assert_eq!(
            v1["metadata"]["annotations"][BEHAVIOR_ANNOTATION],
            "{\"ScaleUp\":{\"StabilizationWindowSeconds\":0,\"SelectPolicy\":\"Max\",\"Policies\":[\
             {\"Type\":\"Pods\",\"Value\":4,\"PeriodSeconds\":15},\
             {\"Type\":\"Percent\",\"Value\":100,\"PeriodSeconds\":15}]},\
             \"ScaleDown\":{\"StabilizationWindowSeconds\":null,\"SelectPolicy\":\"Min\",\"Policies\":[\
             {\"Type\":\"Percent\",\"Value\":10,\"PeriodSeconds\":60}]}}"
        );
    }

    #[test]
    fn v2_to_v1_to_v2_is_lossless() {
        let original = full_v2();
        let back = convert(
            convert(original.clone(), "autoscaling/v1").unwrap(),
            "autoscaling/v2",
        )
        .unwrap();
        // Upstream puts the CPU target after the annotated metrics; this one
        // was last already, so the round trip is exact.
        assert_eq!(back, original);
    }

    #[test]
    fn create_at_v2_read_at_v1_minimal() {
        let mut created = json!({
            "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "maxReplicas": 5}
        });
        apply_defaults("autoscaling", "v2", "HorizontalPodAutoscaler", &mut created);
        let v1 = convert(created, "autoscaling/v1").unwrap();
        assert_eq!(
            v1,
            json!({
                "apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
                "metadata": {"name": "web"},
                "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                    "minReplicas": 1, "maxReplicas": 5, "targetCPUUtilizationPercentage": 80},
                "status": {"currentReplicas": 0, "desiredReplicas": 0}
            })
        );
    }

    #[test]
    fn create_at_v1_read_at_v2() {
        let mut created = json!({
            "apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "maxReplicas": 5, "targetCPUUtilizationPercentage": 50}
        });
        apply_defaults("autoscaling", "v1", "HorizontalPodAutoscaler", &mut created);
        let v2 = convert(created.clone(), "autoscaling/v2").unwrap();
        assert_eq!(
            v2,
            json!({
                "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
                "metadata": {"name": "web"},
                "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                    "minReplicas": 1, "maxReplicas": 5,
                    "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": 50}}}]},
                "status": {"desiredReplicas": 0}
            })
        );
        let back = convert(v2, "autoscaling/v1").unwrap();
        let mut expected = created;
        expected["status"] = json!({"currentReplicas": 0, "desiredReplicas": 0});
        assert_eq!(back, expected);
    }

    #[test]
    fn v1_without_target_gets_the_implicit_cpu_metric() {
        let v2 = convert(
            json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
                "metadata": {}, "spec": {"maxReplicas": 3}}),
            "autoscaling/v2",
        )
        .unwrap();
        assert_eq!(
            v2["spec"]["metrics"],
            json!([{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 80}}}])
        );
    }

    #[test]
    fn v1_annotations_are_read_case_insensitively_and_dropped() {
        let v1 = json!({
            "apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "x", "annotations": {
                METRICS_ANNOTATION: "[{\"type\":\"Resource\",\"resource\":{\"name\":\"memory\",\"targetAverageValue\":\"1Gi\"}}]",
                BEHAVIOR_ANNOTATION: "{\"scaleDown\":{\"stabilizationWindowSeconds\":30}}"
            }},
            "spec": {"maxReplicas": 3, "targetCPUUtilizationPercentage": 70},
            "status": {"currentReplicas": 1, "desiredReplicas": 1, "currentCPUUtilizationPercentage": 12}
        });
        let v2 = convert(v1, "autoscaling/v2").unwrap();
        assert!(v2["metadata"].get("annotations").is_none());
        assert_eq!(
            v2["spec"]["metrics"],
            json!([
                {"type": "Resource", "resource": {"name": "memory",
                    "target": {"type": "AverageValue", "averageValue": "1Gi"}}},
                {"type": "Resource", "resource": {"name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 70}}}
            ])
        );
        assert_eq!(
            v2["spec"]["behavior"],
            json!({"scaleDown": {"stabilizationWindowSeconds": 30}})
        );
        assert_eq!(
            v2["status"]["currentMetrics"],
            json!([{"type": "Resource", "resource": {"name": "cpu",
                "current": {"averageUtilization": 12}}}])
        );
    }

    #[test]
    fn errors_and_identity() {
        let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment"});
        assert_eq!(
            unconvertible(deployment.clone(), "apps/v1").unwrap(),
            deployment
        );
        assert!(matches!(
            unconvertible(deployment, "apps/v1beta1"),
            Err(ConversionError::Unsupported { .. })
        ));
        assert_eq!(
            unconvertible(json!({"kind": "X"}), "v1"),
            Err(ConversionError::MissingTypeMeta)
        );
        let broken = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"annotations": {METRICS_ANNOTATION: "not json"}}, "spec": {}});
        assert!(matches!(
            convert(broken, "autoscaling/v2"),
            Err(ConversionError::InvalidAnnotation {
                annotation: METRICS_ANNOTATION,
                ..
            })
        ));
    }
}
