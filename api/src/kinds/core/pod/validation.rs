//! Pod's own validation (upstream's ValidatePod, ValidatePodCreate,
//! ValidatePodUpdate, ValidatePodEphemeralContainersUpdate and
//! ValidatePodResize); the pod spec's rules, which templates share, are in
//! `validate::pod`.

use std::collections::HashSet;

use serde_json::Value;

use super::qos::qos_class;
use crate::error::FieldError;
use crate::validate::meta::{self, go_opt_int};
use crate::validate::pod::{pod_spec, tolerations};
use crate::validate::{child, field, index, int_of, list_of, map_of, opt, str_of};

/// What every write of a pod is checked for: its spec as a pod's (not a
/// template's), and the pod-only rules.
pub(super) fn validate(object: &Value) -> Vec<FieldError> {
    let spec = field(object, "spec");
    let mut errs = pod_spec(spec, "spec", true);
    errs.extend(pod_only(spec));
    errs
}

/// The fields a pod update may change, as upstream lists them.
const UPDATABLE_POD_SPEC_FIELDS: &str = "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

/// ValidatePodUpdate's checks beyond validating the new pod: container count,
/// images, activeDeadlineSeconds, tolerations, and the spec allow-list.
pub(super) fn update(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let new_spec = field(new, "spec");
    let old_spec = field(old, "spec");
    for list in ["containers", "initContainers"] {
        let new_list = list_of(new_spec, list);
        let list_path = child("spec", list);
        if new_list.len() != list_of(old_spec, list).len() {
            errs.push(FieldError::forbidden(
                list_path,
                "pod updates may not add or remove containers",
            ));
            return errs;
        }
        for (i, ctr) in new_list.iter().enumerate() {
            let image = str_of(ctr, "image");
            let image_path = child(&index(&list_path, i), "image");
            if image.is_empty() {
                errs.push(FieldError::required(&image_path, ""));
            }
            if image.trim() != image {
                errs.push(FieldError::invalid(
                    image_path,
                    image,
                    "must not have leading or trailing whitespace",
                ));
            }
        }
    }
    let deadline_path = "spec.activeDeadlineSeconds";
    let new_deadline = int_of(new_spec, "activeDeadlineSeconds");
    let old_deadline = int_of(old_spec, "activeDeadlineSeconds");
    match (new_deadline, old_deadline) {
        (Some(n), _) if !(0..=i64::from(i32::MAX)).contains(&n) => {
            errs.push(FieldError::invalid_rendered(
                deadline_path,
                &n.to_string(),
                "must be between 0 and 2147483647, inclusive",
            ));
            return errs;
        }
        (Some(n), Some(o)) if o < n => {
            errs.push(FieldError::invalid_rendered(
                deadline_path,
                &n.to_string(),
                "must be less than or equal to previous value",
            ));
            return errs;
        }
        (None, Some(_)) => errs.push(FieldError::invalid_rendered(
            deadline_path,
            &go_opt_int(None),
            "must not update from a positive integer to nil value",
        )),
        _ => {}
    }
    errs.extend(only_added_tolerations(
        list_of(new_spec, "tolerations"),
        list_of(old_spec, "tolerations"),
    ));
    errs.extend(only_deleted_scheduling_gates(
        list_of(new_spec, "schedulingGates"),
        list_of(old_spec, "schedulingGates"),
    ));
    if meta::semantically_equal(new_spec, old_spec) {
        return errs;
    }
    let munged = munge_updatable(new_spec, old_spec);
    errs.extend(forbidden_change(
        "spec",
        &format!("pod updates may not change fields other than {UPDATABLE_POD_SPEC_FIELDS}"),
        old_spec,
        &munged,
    ));
    errs
}

/// The new spec with every field a pod update may change taken from the old
/// spec, so whatever still differs is a forbidden change.
fn munge_updatable(new_spec: &Value, old_spec: &Value) -> Value {
    let mut munged = new_spec.clone();
    let Some(obj) = munged.as_object_mut() else {
        return munged;
    };
    for list in ["containers", "initContainers"] {
        if let Some(items) = obj.get_mut(list).and_then(Value::as_array_mut) {
            for (i, ctr) in items.iter_mut().enumerate() {
                let old_image = old_spec
                    .get(list)
                    .and_then(|l| l.get(i))
                    .and_then(|c| c.get("image"))
                    .cloned();
                if let (Some(ctr), Some(image)) = (ctr.as_object_mut(), old_image) {
                    ctr.insert("image".into(), image);
                }
            }
        }
    }
    for name in ["activeDeadlineSeconds", "schedulingGates", "tolerations"] {
        match old_spec.get(name) {
            Some(v) => obj.insert(name.into(), v.clone()),
            None => obj.remove(name),
        };
    }
    let old_grace = int_of(old_spec, "terminationGracePeriodSeconds");
    let new_grace = int_of(new_spec, "terminationGracePeriodSeconds");
    if old_grace.is_some_and(|g| g < 0) && new_grace == Some(1) {
        if let Some(v) = old_spec.get("terminationGracePeriodSeconds") {
            obj.insert("terminationGracePeriodSeconds".into(), v.clone());
        }
    }
    munged
}

/// validateOnlyAddedTolerations: existing tolerations may only change their
/// tolerationSeconds.
fn only_added_tolerations(new: &[Value], old: &[Value]) -> Vec<FieldError> {
    let without_seconds = |t: &Value| {
        let mut t = t.clone();
        if let Some(obj) = t.as_object_mut() {
            obj.remove("tolerationSeconds");
        }
        t
    };
    for existing in old {
        let wanted = without_seconds(existing);
        if !new.iter().any(|t| without_seconds(t) == wanted) {
            return vec![FieldError::forbidden(
                "spec.tolerations",
                "existing toleration can not be modified except its tolerationSeconds",
            )];
        }
    }
    tolerations(new, "spec.tolerations")
}

fn only_deleted_scheduling_gates(new: &[Value], old: &[Value]) -> Vec<FieldError> {
    let old_names: HashSet<&str> = old.iter().map(|g| str_of(g, "name")).collect();
    new.iter()
        .enumerate()
        .filter(|(_, g)| !old_names.contains(str_of(g, "name")))
        .map(|(i, g)| {
            FieldError::forbidden(
                child(&index("spec.schedulingGates", i), "name"),
                &format!(
                    "only deletion is allowed, but found new scheduling gate '{}'",
                    str_of(g, "name")
                ),
            )
        })
        .collect()
}

/// ValidatePodCreate's extra rules: no ephemeral containers, no node for a
/// gated pod.
pub(super) fn create_only(object: &Value) -> Vec<FieldError> {
    let spec = field(object, "spec");
    let mut errs = Vec::new();
    if !list_of(spec, "ephemeralContainers").is_empty() {
        errs.push(FieldError::forbidden(
            "spec.ephemeralContainers",
            "cannot be set on create",
        ));
    }
    if !str_of(spec, "nodeName").is_empty() && !list_of(spec, "schedulingGates").is_empty() {
        errs.push(FieldError::forbidden(
            "spec.nodeName",
            "cannot be set until all schedulingGates have been cleared",
        ));
    }
    errs
}

/// Pod-only checks (not for templates): images without surrounding space.
fn pod_only(spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for list in ["containers", "initContainers"] {
        for (i, ctr) in list_of(spec, list).iter().enumerate() {
            let image = str_of(ctr, "image");
            if image.trim() != image {
                errs.push(FieldError::invalid(
                    child(&index(&child("spec", list), i), "image"),
                    image,
                    "must not have leading or trailing whitespace",
                ));
            }
        }
    }
    errs
}

/// ValidatePodResize's own rules against the stored pod: the QoS class
/// stays, no request or limit is removed, only cpu and memory change, and
/// the node must report container resources once a container runs.
pub(super) fn resize(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let (new_spec, old_spec) = (field(new, "spec"), field(old, "spec"));
    if qos_class(old_spec) != qos_class(new_spec) {
        let recorded = old
            .pointer("/status/qosClass")
            .and_then(Value::as_str)
            .unwrap_or_default();
        errs.push(FieldError::invalid(
            "spec",
            recorded,
            "Pod QOS Class may not change as a result of resizing",
        ));
    }
    let statuses = list_of(field(old, "status"), "containerStatuses");
    let running = statuses
        .iter()
        .find(|s| s.pointer("/state/running").is_some());
    if running.is_some_and(|s| s.get("resources").is_none()) {
        errs.push(FieldError::forbidden(
            "spec",
            "Pod running on node without support for resize",
        ));
    }
    for (i, (old_ctr, new_ctr)) in list_of(old_spec, "containers")
        .iter()
        .zip(list_of(new_spec, "containers"))
        .enumerate()
    {
        for kind in ["requests", "limits"] {
            let new_resources = field(field(new_ctr, "resources"), kind);
            let old_names = map_of(field(old_ctr, "resources"), kind)
                .into_iter()
                .flat_map(|m| m.keys());
            for name in old_names.filter(|name| opt(new_resources, name).is_none()) {
                errs.push(FieldError::forbidden(
                    format!("spec.containers[{i}].resources.{kind}[{name}]"),
                    "resource removal is not supported",
                ));
            }
        }
    }
    // Whatever differs once cpu and memory are taken from the old spec is
    // a change a resize may not make.
    let mut munged = new_spec.clone();
    for list in ["containers", "initContainers"] {
        let old_list = list_of(old_spec, list);
        let Some(new_list) = munged.get_mut(list).and_then(Value::as_array_mut) else {
            continue;
        };
        for (ctr, old_ctr) in new_list.iter_mut().zip(old_list) {
            for kind in ["requests", "limits"] {
                let Some(map) = ctr
                    .pointer_mut(&format!("/resources/{kind}"))
                    .and_then(Value::as_object_mut)
                else {
                    continue;
                };
                for name in ["cpu", "memory"] {
                    match old_ctr.pointer(&format!("/resources/{kind}/{name}")) {
                        Some(value) => map.insert(name.to_string(), value.clone()),
                        None => map.shift_remove(name),
                    };
                }
            }
        }
    }
    errs.extend(forbidden_change(
        "spec",
        "only cpu and memory resources are mutable",
        old_spec,
        &munged,
    ));
    errs
}

/// Forbidden on `path` when `new` differs from `old`, with upstream's
/// explanation followed by the difference.
fn forbidden_change(path: &str, what: &str, old: &Value, new: &Value) -> Option<FieldError> {
    (!meta::semantically_equal(new, old)).then(|| {
        FieldError::forbidden(
            path,
            &format!(
                "{what}\n{}",
                meta::diff(&meta::semantic(old), &meta::semantic(new))
            ),
        )
    })
}

/// ValidatePodEphemeralContainersUpdate's own rule: ephemeral containers
/// are only ever added, never removed or changed.
pub(super) fn ephemeral_containers_only_added(new: &Value, old: &Value) -> Vec<FieldError> {
    let path = "spec.ephemeralContainers";
    let new_list = list_of(field(new, "spec"), "ephemeralContainers");
    let mut errs = Vec::new();
    for old_ctr in list_of(field(old, "spec"), "ephemeralContainers") {
        let name = str_of(old_ctr, "name");
        match new_list.iter().find(|c| str_of(c, "name") == name) {
            None => errs.push(FieldError::forbidden(
                path,
                &format!("existing ephemeral containers {name:?} may not be removed\n"),
            )),
            Some(new_ctr) => errs.extend(forbidden_change(
                path,
                &format!("existing ephemeral containers {name:?} may not be changed"),
                old_ctr,
                new_ctr,
            )),
        }
    }
    errs
}
