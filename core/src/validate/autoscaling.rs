//! autoscaling/v2 (and v1, which shares these fields): HorizontalPodAutoscaler.

use serde_json::Value;

use super::meta;
use super::{child, field, index, int_of, list_of, opt, str_of};
use crate::error::FieldError;

const METRIC_TYPES: &[&str] = &[
    "ContainerResource",
    "External",
    "Object",
    "Pods",
    "Resource",
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
            let path = index("spec.metrics", i);
            match str_of(metric, "type") {
                "" => errs.push(FieldError::required(
                    child(&path, "type"),
                    "must specify a metric source type",
                )),
                t if !METRIC_TYPES.contains(&t) => errs.push(FieldError::not_supported(
                    child(&path, "type"),
                    t,
                    METRIC_TYPES,
                )),
                "Resource" => {
                    if let Some(resource) = opt(metric, "resource") {
                        if str_of(resource, "name").is_empty() {
                            errs.push(FieldError::required(
                                child(&child(&path, "resource"), "name"),
                                "must specify a resource name",
                            ));
                        }
                    }
                }
                _ => {}
            }
        }
    }
    errs.extend(ref_errs);
    errs
}
