//! Pod (core/v1): containers scheduled together on one node.
//!
//! A pod's spec follows the PodSpec rules every pod template shares
//! (`validate::pod`, `defaults::pod_spec`); what only a Pod does is in this
//! folder: its own validation, defaults, QoS class, quota usage and printer.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::error::FieldError;
use crate::kinds::{ConnectTo, Kind};
use crate::printers::{Cell, TableColumn};
use crate::registry::ResourceDef;
use crate::validate::quantity::Quantity;

mod defaults;
mod printer;
mod qos;
mod quota;
mod validation;

use qos::qos_class;

pub struct Pod;

pub fn resources() -> Vec<ResourceDef> {
    vec![
        ResourceDef::new("", "v1", "pods", "Pod", true, Arc::new(Pod))
            .short_names(&["po"])
            .categories(&["all"])
            .subresources(&[
                "attach",
                "binding",
                "ephemeralcontainers",
                "eviction",
                "exec",
                "log",
                "portforward",
                "proxy",
                "resize",
                "status",
            ])
            .selectable_fields(&[
                "spec.nodeName",
                "spec.restartPolicy",
                "spec.schedulerName",
                "spec.serviceAccountName",
                "spec.hostNetwork",
                "status.phase",
                "status.podIP",
                "status.nominatedNodeName",
            ])
            .returns_deleted_object(),
    ]
}

impl Kind for Pod {
    fn connect_to(&self, subresource: &str) -> Option<ConnectTo> {
        match subresource {
            "proxy" => Some(ConnectTo::PodProxy),
            "log" => Some(ConnectTo::PodLog),
            "exec" | "attach" | "portforward" => Some(ConnectTo::PodStream),
            _ => None,
        }
    }

    fn cache_indexes(&self) -> &[&str] {
        &["spec.nodeName"]
    }

    fn quota_usage(&self, object: &Value) -> Vec<(String, Quantity)> {
        quota::usage(object)
    }

    fn quota_scope_matches(&self, requirement: &Value, object: &Value) -> Option<bool> {
        Some(quota::scope_matches(requirement, object))
    }

    fn quota_constraints(&self, limited: &[String], object: &Value) -> Option<String> {
        quota::constraints(limited, object)
    }

    fn prepare_for_create(&self, object: &mut Value) {
        let qos_class = qos_class(object.get("spec").unwrap_or(&Value::Null));
        let mut status = json!({"phase": "Pending", "qosClass": qos_class});
        let gated = object
            .pointer("/spec/schedulingGates")
            .and_then(Value::as_array)
            .is_some_and(|gates| !gates.is_empty());
        if gated {
            status["conditions"] = json!([{
                "type": "PodScheduled",
                "status": "False",
                "reason": "SchedulingGated",
                "message": "Scheduling is blocked due to non-empty scheduling gates",
                "lastProbeTime": null,
                "lastTransitionTime": null,
            }]);
        }
        if let Some(obj) = object.as_object_mut() {
            obj.insert("status".into(), status);
        }
    }

    fn subresource_update(&self, subresource: &str, object: &Value, old: &Value) -> Option<Value> {
        match subresource {
            // Only spec.ephemeralContainers changes through ephemeralcontainers.
            "ephemeralcontainers" => Some(crate::object::only_at(
                old,
                object,
                &["spec", "ephemeralContainers"],
            )),
            // Only resources and resizePolicy of the containers a resize
            // may touch, matched by name (upstream's dropNonResizeUpdates).
            "resize" => Some(pod_resized(old, object)),
            _ => None,
        }
    }

    fn validate_subresource_update(
        &self,
        subresource: &str,
        object: &Value,
        old: &Value,
    ) -> Option<Vec<FieldError>> {
        // The pod as on create, without the create-only rules, and what
        // the subresource may change checked against the stored pod.
        let mut errs = validation::validate(object);
        match subresource {
            "ephemeralcontainers" => {
                errs.extend(validation::ephemeral_containers_only_added(object, old))
            }
            "resize" => errs.extend(validation::resize(object, old)),
            _ => return None,
        }
        Some(errs)
    }

    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        defaults::set_defaults(object);
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        let mut errs = validation::validate(object);
        errs.extend(validation::create_only(object));
        errs
    }

    fn validate_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = validation::validate(object);
        errs.extend(validation::update(object, old));
        errs
    }

    fn absent_field_value(&self, field: &str) -> &'static str {
        match field {
            "spec.hostNetwork" => "false",
            _ => "",
        }
    }

    fn table_columns(&self) -> Vec<TableColumn> {
        printer::columns()
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        printer::cells(object)
    }
}

/// What `pods/<name>/resize` writes (upstream's dropNonResizeUpdates):
/// `old` with the resources and resizePolicy of each container, and of
/// each restartable init container (sidecar), taken from the container of
/// the same name in `new`; nothing else.
pub(crate) fn pod_resized(old: &Value, new: &Value) -> Value {
    let mut updated = old.clone();
    for list in ["containers", "initContainers"] {
        let wanted = new
            .pointer(&format!("/spec/{list}"))
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let Some(containers) = updated
            .pointer_mut(&format!("/spec/{list}"))
            .and_then(Value::as_array_mut)
        else {
            continue;
        };
        let resizable = |c: &Value| list == "containers" || c["restartPolicy"] == "Always";
        for ctr in containers.iter_mut().filter(|c| resizable(c)) {
            let Some(source) = wanted.iter().find(|c| c.get("name") == ctr.get("name")) else {
                continue;
            };
            let Some(fields) = ctr.as_object_mut() else {
                continue;
            };
            for field in ["resources", "resizePolicy"] {
                match source.get(field) {
                    Some(value) => fields.insert(field.to_string(), value.clone()),
                    None => fields.shift_remove(field),
                };
            }
        }
    }
    updated
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pods_start_pending_with_their_qos_class() {
        let mut pod = json!({"spec": {"containers": [{"name": "c", "image": "nginx"}]}});
        Pod.prepare_for_create(&mut pod);
        assert_eq!(
            pod["status"],
            json!({"phase": "Pending", "qosClass": "BestEffort"})
        );
        let limited = |requests: Value| {
            json!({"containers": [{"name": "c", "resources": {
                "limits": {"cpu": "500m", "memory": "128Mi"},
                "requests": requests,
            }}]})
        };
        assert_eq!(
            qos_class(&limited(json!({"cpu": "500m", "memory": "128Mi"}))),
            "Guaranteed"
        );
        assert_eq!(
            qos_class(&limited(json!({"cpu": "100m", "memory": "128Mi"}))),
            "Burstable"
        );
        assert_eq!(
            qos_class(&json!({"containers": [{"resources": {"requests": {"cpu": "0"}}}]})),
            "BestEffort"
        );
    }
}
