//! The core ("") group: PodTemplate, ReplicationController.

use serde_json::Value;

use super::meta::{self, go_string_map};
use super::pod;
use super::{field, int_of, map_of, opt};
use crate::error::FieldError;

pub fn pod_template(object: &Value) -> Vec<FieldError> {
    pod::template_spec(field(object, "template"), "template")
}

pub fn replication_controller(object: &Value) -> Vec<FieldError> {
    let spec = field(object, "spec");
    let mut errs = Vec::new();
    errs.extend(meta::nonnegative(
        int_of(spec, "minReadySeconds").unwrap_or(0),
        "spec.minReadySeconds",
    ));
    let selector = map_of(spec, "selector").filter(|s| !s.is_empty());
    if selector.is_none() {
        errs.push(FieldError::required("spec.selector", ""));
    }
    errs.extend(meta::nonnegative(
        int_of(spec, "replicas").unwrap_or(1),
        "spec.replicas",
    ));
    let Some(template) = opt(spec, "template") else {
        errs.push(FieldError::required("spec.template", ""));
        return errs;
    };
    if let Some(selector) = selector {
        let labels = opt(field(template, "metadata"), "labels");
        if !meta::map_selector_matches(selector, labels) {
            errs.push(FieldError::invalid_rendered(
                "spec.template.metadata.labels",
                &go_string_map(labels),
                "`selector` does not match template `labels`",
            ));
        }
    }
    errs.extend(pod::template_spec(template, "spec.template"));
    let template_spec = field(template, "spec");
    let policy = pod::restart_policy(template_spec);
    if policy != "Always" {
        errs.push(FieldError::not_supported(
            "spec.template.spec.restartPolicy",
            policy,
            &["Always"],
        ));
    }
    if opt(template_spec, "activeDeadlineSeconds").is_some() {
        errs.push(FieldError::forbidden(
            "spec.template.spec.activeDeadlineSeconds",
            "activeDeadlineSeconds in ReplicationController is not Supported",
        ));
    }
    errs
}
