//! Pod specs and pod templates (core/v1 PodSpec, PodTemplateSpec), shared by
//! Pods and every workload kind that embeds a template.

mod containers;

use std::collections::HashSet;

use serde_json::Value;

use super::meta::{self, NEGATIVE_MSG};
use super::quantity::{self, QUANTITY_FORMAT_MSG};
use super::{bool_of, child, field, index, int_of, key, list_of, map_of, opt, str_of};
use crate::error::FieldError;
use crate::kinds::NameRule;

// The spec's checks and the containers' see each other's helpers.
use containers::*;

const MAX_INT32: i64 = 2_147_483_647;

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

/// `%#v` of a pod template's labels, for selector mismatches.
pub fn template_labels_rendered(template: &Value) -> String {
    meta::go_string_map(opt(field(template, "metadata"), "labels"))
}
