//! Pod's defaults: what upstream's defaulter does for a Pod object on top of
//! the PodSpec defaults every template shares.

use serde_json::{json, Value};

use crate::defaults::pod_spec::pod_spec;
use crate::defaults::{child, default_pointer, each_item, ensure_child, is_zero, Object};

/// `SetObjectDefaults_Pod`: the pod-only defaults, then the PodSpec's.
pub(super) fn set_defaults(pod: &mut Object) {
    let Some(spec) = ensure_child(pod, "spec") else {
        return;
    };
    pod_only(spec);
    pod_spec(spec);
}

/// `SetDefaults_Pod`: only for Pod objects, not for templates.
fn pod_only(spec: &mut Object) {
    for key in ["containers", "initContainers"] {
        each_item(spec, key, requests_from_limits);
    }
    default_pointer(spec, "enableServiceLinks", json!(true));
    if spec.get("hostNetwork").and_then(Value::as_bool) == Some(true) {
        for key in ["containers", "initContainers"] {
            each_item(spec, key, |container| {
                each_item(container, "ports", |port| {
                    if is_zero(port, "hostPort") {
                        if let Some(container_port) = port.get("containerPort").cloned() {
                            port.insert("hostPort".into(), container_port);
                        }
                    }
                });
            });
        }
    }
}

/// A container's requests default to its limits, resource by resource.
fn requests_from_limits(container: &mut Object) {
    let Some(resources) = child(container, "resources") else {
        return;
    };
    let Some(limits) = resources
        .get("limits")
        .and_then(Value::as_object)
        .filter(|l| !l.is_empty())
        .cloned()
    else {
        return;
    };
    if let Some(requests) = ensure_child(resources, "requests") {
        for (name, quantity) in limits {
            requests.entry(name).or_insert(quantity);
        }
    }
}
