//! Pod specs and pod templates (core/v1 PodSpec, PodTemplateSpec), shared by
//! Pods and every workload kind that embeds a template.

mod containers;

use std::collections::HashSet;

use serde_json::Value;

use super::meta::{self, go_opt_int, NEGATIVE_MSG};
use super::quantity::{self, QUANTITY_FORMAT_MSG};
use super::{bool_of, child, field, index, int_of, key, list_of, map_of, opt, str_of};
use crate::error::FieldError;
use crate::kinds::NameRule;

// The spec's checks and the containers' see each other's helpers.
use containers::*;
pub use containers::{ephemeral_containers_only_added, resize};

const MAX_INT32: i64 = 2_147_483_647;

/// The fields a pod update may change, as upstream lists them.
const UPDATABLE_POD_SPEC_FIELDS: &str = "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

/// The pod's restart policy, "Always" when unset (upstream's default).
pub fn restart_policy(spec: &Value) -> &str {
    match str_of(spec, "restartPolicy") {
        "" => "Always",
        other => other,
    }
}

/// ValidatePodTemplateSpec: nested labels and annotations (at `path.labels`,
/// as upstream reports them), the pod spec, and no ephemeral containers.
pub fn template_spec(template: &Value, path: &str) -> Vec<FieldError> {
    let metadata = field(template, "metadata");
    let mut errs = meta::labels(opt(metadata, "labels"), &child(path, "labels"));
    errs.extend(meta::annotations(
        opt(metadata, "annotations"),
        &child(path, "annotations"),
    ));
    let spec = field(template, "spec");
    errs.extend(pod_spec(spec, &child(path, "spec"), false));
    if !list_of(spec, "ephemeralContainers").is_empty() {
        errs.push(FieldError::forbidden(
            child(&child(path, "spec"), "ephemeralContainers"),
            "ephemeral containers not allowed in pod template",
        ));
    }
    errs
}

/// ValidatePodSpec. `is_pod` is upstream's ResourceIsPod option.
pub fn pod_spec(spec: &Value, path: &str, is_pod: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let (volume_names, volume_errs) = volumes(list_of(spec, "volumes"), &child(path, "volumes"));
    errs.extend(volume_errs);
    errs.extend(containers(spec, &volume_names, &child(path, "containers")));
    errs.extend(init_containers(
        spec,
        &volume_names,
        &child(path, "initContainers"),
    ));
    errs.extend(ephemeral_containers(
        spec,
        &volume_names,
        &child(path, "ephemeralContainers"),
    ));
    errs.extend(host_network_deps(spec, path, is_pod));

    let policy_path = child(path, "restartPolicy");
    match restart_policy(spec) {
        "Always" | "OnFailure" | "Never" => {}
        other => errs.push(FieldError::not_supported(
            policy_path,
            other,
            &["Always", "OnFailure", "Never"],
        )),
    }
    let dns_policy = str_of(spec, "dnsPolicy");
    match dns_policy {
        "" | "ClusterFirstWithHostNet" | "ClusterFirst" | "Default" | "None" => {}
        other => errs.push(FieldError::not_supported(
            child(path, "dnsPolicy"),
            other,
            &["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"],
        )),
    }
    errs.extend(meta::labels(
        opt(spec, "nodeSelector"),
        &child(path, "nodeSelector"),
    ));
    if let Some(context) = opt(spec, "securityContext") {
        errs.extend(pod_security_context(
            context,
            &child(path, "securityContext"),
        ));
    }
    // v1 keeps these on the spec; upstream checks them as part of the pod
    // security context and reports them there.
    if bool_of(spec, "hostPID")
        && opt(spec, "shareProcessNamespace").and_then(Value::as_bool) == Some(true)
    {
        errs.push(FieldError::invalid_rendered(
            child(&child(path, "securityContext"), "shareProcessNamespace"),
            "true",
            "ShareProcessNamespace and HostPID cannot both be enabled",
        ));
    }
    if dns_policy == "None" {
        match opt(spec, "dnsConfig") {
            None => errs.push(FieldError::required(
                child(path, "dnsConfig"),
                "must provide `dnsConfig` when `dnsPolicy` is None",
            )),
            Some(config) if list_of(config, "nameservers").is_empty() => {
                errs.push(FieldError::required(
                    child(&child(path, "dnsConfig"), "nameservers"),
                    "must provide at least one DNS nameserver when `dnsPolicy` is None",
                ))
            }
            Some(_) => {}
        }
    }
    for (i, gate) in list_of(spec, "readinessGates").iter().enumerate() {
        let condition = str_of(gate, "conditionType");
        let gate_path = child(&index(&child(path, "readinessGates"), i), "conditionType");
        errs.extend(meta::label_name(condition, &gate_path));
    }
    let mut gates = HashSet::new();
    for (i, gate) in list_of(spec, "schedulingGates").iter().enumerate() {
        let name = str_of(gate, "name");
        let gate_path = index(&child(path, "schedulingGates"), i);
        errs.extend(meta::label_name(name, &gate_path));
        if !gates.insert(name) {
            errs.push(FieldError::duplicate(gate_path, name));
        }
    }
    let service_account = str_of(spec, "serviceAccountName");
    if !service_account.is_empty() {
        errs.extend(meta::name(
            NameRule::Subdomain,
            service_account,
            &child(path, "serviceAccountName"),
        ));
    }
    let node_name = str_of(spec, "nodeName");
    if !node_name.is_empty() {
        errs.extend(meta::name(
            NameRule::Subdomain,
            node_name,
            &child(path, "nodeName"),
        ));
    }
    if let Some(deadline) = int_of(spec, "activeDeadlineSeconds") {
        if !(1..=MAX_INT32).contains(&deadline) {
            errs.push(FieldError::invalid_rendered(
                child(path, "activeDeadlineSeconds"),
                &deadline.to_string(),
                "must be between 1 and 2147483647, inclusive",
            ));
        }
    }
    for name in ["hostname", "subdomain"] {
        let value = str_of(spec, name);
        if !value.is_empty() {
            errs.extend(meta::name(NameRule::Label, value, &child(path, name)));
        }
    }
    errs.extend(tolerations(
        list_of(spec, "tolerations"),
        &child(path, "tolerations"),
    ));
    let priority_class = str_of(spec, "priorityClassName");
    if !priority_class.is_empty() {
        errs.extend(meta::name(
            NameRule::Subdomain,
            priority_class,
            &child(path, "priorityClassName"),
        ));
    }
    if let Some(policy) = opt(spec, "preemptionPolicy").and_then(Value::as_str) {
        errs.extend(preemption_policy(policy, &child(path, "preemptionPolicy")));
    }
    errs
}

/// ValidatePreemptionPolicy.
pub fn preemption_policy(policy: &str, path: &str) -> Option<FieldError> {
    match policy {
        "PreemptLowerPriority" | "Never" => None,
        "" => Some(FieldError::required(path, "")),
        other => Some(FieldError::not_supported(
            path,
            other,
            &["PreemptLowerPriority", "Never"],
        )),
    }
}

/// The volume sources a pod volume may name, in upstream's checking order,
/// with the path segment upstream reports for a second source.
const VOLUME_SOURCES: &[(&str, &str)] = &[
    ("emptyDir", "emptyDir"),
    ("hostPath", "hostPath"),
    ("gitRepo", "gitRepo"),
    ("gcePersistentDisk", "gcePersistentDisk"),
    ("awsElasticBlockStore", "awsElasticBlockStore"),
    ("secret", "secret"),
    ("nfs", "nfs"),
    ("iscsi", "iscsi"),
    ("glusterfs", "glusterfs"),
    ("flocker", "flocker"),
    ("persistentVolumeClaim", "persistentVolumeClaim"),
    ("rbd", "rbd"),
    ("cinder", "cinder"),
    ("cephfs", "cephFS"),
    ("quobyte", "quobyte"),
    ("downwardAPI", "downwarAPI"),
    ("fc", "fc"),
    ("flexVolume", "flexVolume"),
    ("configMap", "configMap"),
    ("azureFile", "azureFile"),
    ("vsphereVolume", "vsphereVolume"),
    ("photonPersistentDisk", "photonPersistentDisk"),
    ("portworxVolume", "portworxVolume"),
    ("azureDisk", "azureDisk"),
    ("storageos", "storageos"),
    ("projected", "projected"),
    ("scaleIO", "scaleIO"),
    ("csi", "csi"),
    ("ephemeral", "ephemeral"),
    ("image", "image"),
];

/// ValidateVolumes: the names of the volumes that passed, and the errors.
fn volumes(vols: &[Value], path: &str) -> (HashSet<String>, Vec<FieldError>) {
    let mut names = HashSet::new();
    let mut errs = Vec::new();
    for (i, vol) in vols.iter().enumerate() {
        let vol_path = index(path, i);
        let name_path = child(&vol_path, "name");
        let name = str_of(vol, "name");
        let mut vol_errs = volume_source(vol, &vol_path);
        if name.is_empty() {
            vol_errs.push(FieldError::required(&name_path, ""));
        } else {
            vol_errs.extend(meta::name(NameRule::Label, name, &name_path));
        }
        if names.contains(name) {
            vol_errs.push(FieldError::duplicate(&name_path, name));
        }
        if vol_errs.is_empty() {
            names.insert(name.to_string());
        } else {
            errs.extend(vol_errs);
        }
    }
    (names, errs)
}

fn volume_source(vol: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut count = 0;
    for (json_name, error_name) in VOLUME_SOURCES {
        let Some(source) = opt(vol, json_name) else {
            continue;
        };
        if count > 0 {
            errs.push(FieldError::forbidden(
                child(path, error_name),
                "may not specify more than 1 volume type",
            ));
            continue;
        }
        count += 1;
        let source_path = child(path, json_name);
        let require = |name: &str, errs: &mut Vec<FieldError>| {
            if str_of(source, name).is_empty() {
                errs.push(FieldError::required(child(&source_path, name), ""));
            }
        };
        match *json_name {
            "hostPath" => require("path", &mut errs),
            "secret" => require("secretName", &mut errs),
            "configMap" => require("name", &mut errs),
            "persistentVolumeClaim" => require("claimName", &mut errs),
            "csi" => require("driver", &mut errs),
            "nfs" => {
                require("server", &mut errs);
                require("path", &mut errs);
                let nfs_path = str_of(source, "path");
                if !nfs_path.starts_with('/') {
                    errs.push(FieldError::invalid(
                        child(&source_path, "path"),
                        nfs_path,
                        "must be an absolute path",
                    ));
                }
            }
            _ => {}
        }
    }
    if count == 0 {
        errs.push(FieldError::required(path, "must specify a volume type"));
    }
    errs
}

fn containers(spec: &Value, volumes: &HashSet<String>, path: &str) -> Vec<FieldError> {
    let list = list_of(spec, "containers");
    if list.is_empty() {
        return vec![FieldError::required(path, "")];
    }
    let mut errs = Vec::new();
    let mut names = HashSet::new();
    for (i, ctr) in list.iter().enumerate() {
        let ctr_path = index(path, i);
        errs.extend(container_common(ctr, volumes, &ctr_path));
        let name = str_of(ctr, "name");
        if !names.insert(name) {
            errs.push(FieldError::duplicate(child(&ctr_path, "name"), name));
        }
        errs.extend(probes(ctr, &ctr_path));
        if opt(ctr, "restartPolicy").is_some() {
            errs.push(FieldError::forbidden(
                child(&ctr_path, "restartPolicy"),
                "may not be set for non-init containers",
            ));
        }
    }
    errs.extend(host_port_conflicts(list, path));
    errs
}

/// ValidateTolerations.
pub fn tolerations(list: &[Value], path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, toleration) in list.iter().enumerate() {
        let t_path = index(path, i);
        let key_name = str_of(toleration, "key");
        let operator = str_of(toleration, "operator");
        let effect = str_of(toleration, "effect");
        let value = str_of(toleration, "value");
        if !key_name.is_empty() {
            errs.extend(meta::label_name(key_name, &child(&t_path, "key")));
        }
        if key_name.is_empty() && operator != "Exists" {
            errs.push(FieldError::invalid(
                child(&t_path, "operator"),
                operator,
                "operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
            ));
        }
        if opt(toleration, "tolerationSeconds").is_some() && effect != "NoExecute" {
            errs.push(FieldError::invalid(
                child(&t_path, "effect"),
                effect,
                "effect must be 'NoExecute' when `tolerationSeconds` is set",
            ));
        }
        match operator {
            "Equal" | "" => {
                let problems = crate::validate::object_meta::label_value_problems(value);
                if !problems.is_empty() {
                    errs.push(FieldError::invalid(
                        child(&t_path, "operator"),
                        value,
                        &problems.join(";"),
                    ));
                }
            }
            "Exists" => {
                if !value.is_empty() {
                    errs.push(FieldError::invalid(
                        child(&t_path, "operator"),
                        value,
                        "value must be empty when `operator` is 'Exists'",
                    ));
                }
            }
            other => errs.push(FieldError::not_supported(
                child(&t_path, "operator"),
                other,
                &["Equal", "Exists"],
            )),
        }
        if !effect.is_empty() {
            errs.extend(taint_effect(effect, &child(&t_path, "effect")));
        }
    }
    errs
}

/// validateTaintEffect for a non-empty effect.
pub fn taint_effect(effect: &str, path: &str) -> Option<FieldError> {
    match effect {
        "NoSchedule" | "PreferNoSchedule" | "NoExecute" => None,
        "" => Some(FieldError::required(path, "")),
        other => Some(FieldError::not_supported(
            path,
            other,
            &["NoSchedule", "PreferNoSchedule", "NoExecute"],
        )),
    }
}

/// ValidatePodUpdate's checks beyond validating the new pod: container count,
/// images, activeDeadlineSeconds, tolerations, and the spec allow-list.
pub fn pod_update(new: &Value, old: &Value) -> Vec<FieldError> {
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
        (Some(n), _) if !(0..=MAX_INT32).contains(&n) => {
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
pub fn pod_create_only(spec: &Value) -> Vec<FieldError> {
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
pub fn pod_only(spec: &Value) -> Vec<FieldError> {
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

/// `%#v` of a pod template's labels, for selector mismatches.
pub fn template_labels_rendered(template: &Value) -> String {
    meta::go_string_map(opt(field(template, "metadata"), "labels"))
}
