//! autoscaling/v2 (and v1, which shares these fields): HorizontalPodAutoscaler.

use serde_json::Value;

use super::meta;
use super::{child, field, index, int_of, list_of, opt, str_of};
use crate::error::FieldError;

/// Metric source types in upstream's listing order, with the field each
/// one populates.
const METRIC_TYPES: &[(&str, &str)] = &[
    ("Object", "object"),
    ("Pods", "pods"),
    ("Resource", "resource"),
    ("External", "external"),
    ("ContainerResource", "containerResource"),
];

pub fn horizontal_pod_autoscaler(object: &Value) -> Vec<FieldError> {
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
        let path = child("spec.scaleTargetRef", name);
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
    let type_path = child(path, "type");
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
                child(path, source),
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
                child(path, source),
                "must populate the given metric source only",
            ));
        }
    }
    if let Some(resource) = opt(metric, "resource") {
        if str_of(resource, "name").is_empty() {
            errs.push(FieldError::required(
                child(&child(path, "resource"), "name"),
                "must specify a resource name",
            ));
        }
    }
    errs
}

/// ValidateHorizontalPodAutoscalerStatusUpdate's status checks, with
/// upstream's field path for desiredReplicas as it is ("desiredReplicasa").
pub fn horizontal_pod_autoscaler_status(object: &Value, _old: &Value) -> Vec<FieldError> {
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
