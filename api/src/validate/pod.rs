//! Pod specs and pod templates (core/v1 PodSpec, PodTemplateSpec), shared by
//! Pods and every workload kind that embeds a template.

use std::collections::HashSet;

use serde_json::Value;

use super::meta::{self, go_opt_int, NEGATIVE_MSG};
use super::quantity::{self, QUANTITY_FORMAT_MSG};
use super::{bool_of, child, field, index, int_of, key, list_of, map_of, opt, str_of};
use crate::error::FieldError;
use crate::kinds::NameRule;

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

/// The fields an ephemeral container may set (upstream's
/// allowedEphemeralContainerFields); the rest are forbidden there.
const EPHEMERAL_CONTAINER_FIELDS: [&str; 17] = [
    "name",
    "image",
    "command",
    "args",
    "workingDir",
    "envFrom",
    "env",
    "volumeMounts",
    "volumeDevices",
    "terminationMessagePath",
    "terminationMessagePolicy",
    "imagePullPolicy",
    "securityContext",
    "stdin",
    "stdinOnce",
    "tty",
    "targetContainerName",
];
const NOT_FOR_EPHEMERAL: &str = "cannot be set for an Ephemeral Container";

/// validateEphemeralContainers: each a valid container with a name unique
/// across the pod, a target that exists, none of the fields that would
/// make the workload rely on it, and no subPaths.
fn ephemeral_containers(spec: &Value, volumes: &HashSet<String>, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut names: HashSet<&str> = ["containers", "initContainers"]
        .iter()
        .flat_map(|list| list_of(spec, list))
        .map(|c| str_of(c, "name"))
        .collect();
    for (i, ctr) in list_of(spec, "ephemeralContainers").iter().enumerate() {
        let ctr_path = index(path, i);
        errs.extend(container_common(ctr, volumes, &ctr_path));
        let name = str_of(ctr, "name");
        if !names.insert(name) {
            errs.push(FieldError::duplicate(child(&ctr_path, "name"), name));
        }
        let target = str_of(ctr, "targetContainerName");
        if !target.is_empty() && !names.contains(target) {
            errs.push(FieldError::not_found(
                child(&ctr_path, "targetContainerName"),
                target,
            ));
        }
        for (key, value) in ctr.as_object().into_iter().flatten() {
            let set = !(value.is_null()
                || value.as_array().is_some_and(Vec::is_empty)
                || value.as_object().is_some_and(|m| m.is_empty())
                || value.as_str() == Some(""));
            if set && !EPHEMERAL_CONTAINER_FIELDS.contains(&key.as_str()) {
                errs.push(FieldError::forbidden(
                    child(&ctr_path, key),
                    NOT_FOR_EPHEMERAL,
                ));
            }
        }
        for (m, mount) in list_of(ctr, "volumeMounts").iter().enumerate() {
            for sub in ["subPath", "subPathExpr"] {
                if !str_of(mount, sub).is_empty() {
                    errs.push(FieldError::forbidden(
                        child(&index(&child(&ctr_path, "volumeMounts"), m), sub),
                        NOT_FOR_EPHEMERAL,
                    ));
                }
            }
        }
    }
    errs
}

/// ValidatePodResize's own rules against the stored pod: the QoS class
/// stays, no request or limit is removed, only cpu and memory change, and
/// the node must report container resources once a container runs.
pub fn resize(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let (new_spec, old_spec) = (field(new, "spec"), field(old, "spec"));
    let qos_class = crate::kinds::core::qos_class;
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
pub fn ephemeral_containers_only_added(new: &Value, old: &Value) -> Vec<FieldError> {
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

fn init_containers(spec: &Value, volumes: &HashSet<String>, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut names: HashSet<&str> = list_of(spec, "containers")
        .iter()
        .map(|c| str_of(c, "name"))
        .collect();
    for (i, ctr) in list_of(spec, "initContainers").iter().enumerate() {
        let ctr_path = index(path, i);
        errs.extend(container_common(ctr, volumes, &ctr_path));
        let restart_always = match opt(ctr, "restartPolicy").and_then(Value::as_str) {
            Some("Always") => true,
            Some(other) => {
                errs.push(FieldError::not_supported(
                    child(&ctr_path, "restartPolicy"),
                    other,
                    &["Always"],
                ));
                false
            }
            None => false,
        };
        let name = str_of(ctr, "name");
        if names.contains(name) {
            errs.push(FieldError::duplicate(child(&ctr_path, "name"), name));
        } else if !name.is_empty() {
            names.insert(name);
        }
        errs.extend(host_port_conflicts(std::slice::from_ref(ctr), path));
        if restart_always {
            errs.extend(probes(ctr, &ctr_path));
        } else {
            for field_name in [
                "lifecycle",
                "livenessProbe",
                "readinessProbe",
                "startupProbe",
            ] {
                if opt(ctr, field_name).is_some() {
                    errs.push(FieldError::forbidden(
                        child(&ctr_path, field_name),
                        "may not be set for init containers without restartPolicy=Always",
                    ));
                }
            }
        }
    }
    errs
}

/// validateContainerCommon.
fn container_common(ctr: &Value, volumes: &HashSet<String>, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name_path = child(path, "name");
    let name = str_of(ctr, "name");
    if name.is_empty() {
        errs.push(FieldError::required(name_path, ""));
    } else {
        errs.extend(meta::name(NameRule::Label, name, &name_path));
    }
    if str_of(ctr, "image").is_empty() {
        errs.push(FieldError::required(child(path, "image"), ""));
    }
    match str_of(ctr, "terminationMessagePolicy") {
        "" | "File" | "FallbackToLogsOnError" => {}
        other => errs.push(FieldError::not_supported(
            child(path, "terminationMessagePolicy"),
            other,
            &["File", "FallbackToLogsOnError"],
        )),
    }
    errs.extend(container_ports(
        list_of(ctr, "ports"),
        &child(path, "ports"),
    ));
    errs.extend(env(list_of(ctr, "env"), &child(path, "env")));
    errs.extend(env_from(list_of(ctr, "envFrom"), &child(path, "envFrom")));
    errs.extend(volume_mounts(
        list_of(ctr, "volumeMounts"),
        volumes,
        &child(path, "volumeMounts"),
    ));
    match str_of(ctr, "imagePullPolicy") {
        "" | "Always" | "IfNotPresent" | "Never" => {}
        other => errs.push(FieldError::not_supported(
            child(path, "imagePullPolicy"),
            other,
            &["Always", "IfNotPresent", "Never"],
        )),
    }
    errs.extend(resources(
        field(ctr, "resources"),
        &child(path, "resources"),
    ));
    if let Some(context) = opt(ctr, "securityContext") {
        errs.extend(security_context(context, &child(path, "securityContext")));
    }
    errs
}

fn container_ports(ports: &[Value], path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut names = HashSet::new();
    for (i, port) in ports.iter().enumerate() {
        let port_path = index(path, i);
        let name = str_of(port, "name");
        if !name.is_empty() {
            let problems = meta::port_name(name, &child(&port_path, "name"));
            if !problems.is_empty() {
                errs.extend(problems);
            } else if !names.insert(name) {
                errs.push(FieldError::duplicate(child(&port_path, "name"), name));
            }
        }
        let container_port = int_of(port, "containerPort").unwrap_or(0);
        if container_port == 0 {
            errs.push(FieldError::required(child(&port_path, "containerPort"), ""));
        } else {
            errs.extend(meta::port_number(
                container_port,
                &child(&port_path, "containerPort"),
            ));
        }
        // hostPort 0 is Go's zero value: unset.
        let host_port = int_of(port, "hostPort").unwrap_or(0);
        if host_port != 0 {
            errs.extend(meta::port_number(host_port, &child(&port_path, "hostPort")));
        }
        match str_of(port, "protocol") {
            "" | "TCP" | "UDP" | "SCTP" => {}
            other => errs.push(FieldError::not_supported(
                child(&port_path, "protocol"),
                other,
                &["SCTP", "TCP", "UDP"],
            )),
        }
    }
    errs
}

/// AccumulateUniqueHostPorts over one set of containers.
fn host_port_conflicts(containers: &[Value], path: &str) -> Vec<FieldError> {
    let mut seen = HashSet::new();
    let mut errs = Vec::new();
    for (ci, ctr) in containers.iter().enumerate() {
        for (pi, port) in list_of(ctr, "ports").iter().enumerate() {
            let host_port = int_of(port, "hostPort").unwrap_or(0);
            if host_port == 0 {
                continue;
            }
            let protocol = match str_of(port, "protocol") {
                "" => "TCP",
                p => p,
            };
            let id = format!("{protocol}/{}/{host_port}", str_of(port, "hostIP"));
            if !seen.insert(id.clone()) {
                let port_path = index(&child(&index(path, ci), "ports"), pi);
                errs.push(FieldError::duplicate(child(&port_path, "hostPort"), &id));
            }
        }
    }
    errs
}

/// validatePodHostNetworkDeps: with hostNetwork, hostPort must equal
/// containerPort (templates may leave it 0).
fn host_network_deps(spec: &Value, path: &str, is_pod: bool) -> Vec<FieldError> {
    if !bool_of(spec, "hostNetwork") {
        return Vec::new();
    }
    let mut errs = Vec::new();
    let containers_path = child(path, "containers");
    for (ci, ctr) in list_of(spec, "containers").iter().enumerate() {
        for (pi, port) in list_of(ctr, "ports").iter().enumerate() {
            let host = int_of(port, "hostPort").unwrap_or(0);
            let container = int_of(port, "containerPort").unwrap_or(0);
            if (is_pod || host != 0) && host != container {
                let port_path = index(&child(&index(&containers_path, ci), "ports"), pi);
                errs.push(FieldError::invalid_rendered(
                    child(&port_path, "hostPort"),
                    &host.to_string(),
                    "must match `containerPort` when `hostNetwork` is true",
                ));
            }
        }
    }
    errs
}

const RELAXED_ENV_NAME_MSG: &str =
    "a valid environment variable name must consist only of printable ASCII characters other than '='";

fn env_name_ok(name: &str) -> bool {
    !name
        .chars()
        .any(|c| !c.is_ascii() || c.is_ascii_control() || c == '=')
}

/// ValidateEnv, with 1.32's relaxed variable-name rule (on by default).
fn env(vars: &[Value], path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, var) in vars.iter().enumerate() {
        let var_path = index(path, i);
        let name_path = child(&var_path, "name");
        let name = str_of(var, "name");
        if name.is_empty() {
            errs.push(FieldError::required(name_path, ""));
        } else if !env_name_ok(name) {
            errs.push(FieldError::invalid(name_path, name, RELAXED_ENV_NAME_MSG));
        }
        if let Some(from) = opt(var, "valueFrom") {
            errs.extend(env_value_from(
                from,
                !str_of(var, "value").is_empty(),
                &child(&var_path, "valueFrom"),
            ));
        }
    }
    errs
}

/// validateEnvVarValueFrom: exactly one source, and no literal value too.
fn env_value_from(from: &Value, has_value: bool, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut sources = 0;
    for name in [
        "fieldRef",
        "resourceFieldRef",
        "configMapKeyRef",
        "secretKeyRef",
    ] {
        let Some(source) = opt(from, name) else {
            continue;
        };
        sources += 1;
        let source_path = child(path, name);
        match name {
            "fieldRef" => {
                if str_of(source, "fieldPath").is_empty() {
                    errs.push(FieldError::required(child(&source_path, "fieldPath"), ""));
                }
            }
            "resourceFieldRef" => {
                if str_of(source, "resource").is_empty() {
                    errs.push(FieldError::required(child(&source_path, "resource"), ""));
                }
            }
            _ => errs.extend(key_selector(source, &source_path)),
        }
    }
    if sources == 0 {
        errs.push(FieldError::invalid(
            path,
            "",
            "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`",
        ));
    } else if has_value {
        errs.push(FieldError::invalid(
            path,
            "",
            "may not be specified when `value` is not empty",
        ));
    } else if sources > 1 {
        errs.push(FieldError::invalid(
            path,
            "",
            "may not have more than one field specified at a time",
        ));
    }
    errs
}

/// validateConfigMapKeySelector / validateSecretKeySelector.
fn key_selector(selector: &Value, path: &str) -> Vec<FieldError> {
    let name = str_of(selector, "name");
    let mut errs: Vec<FieldError> =
        crate::validate::object_meta::name_problems(NameRule::Subdomain, name, false)
            .iter()
            .map(|msg| FieldError::invalid(child(path, "name"), name, msg))
            .collect();
    let key_name = str_of(selector, "key");
    if key_name.is_empty() {
        errs.push(FieldError::required(child(path, "key"), ""));
    } else {
        errs.extend(crate::validate::object_meta::config_map_key(
            &child(path, "key"),
            key_name,
        ));
    }
    errs
}

/// ValidateEnvFrom: one of configMapRef and secretRef per entry.
fn env_from(sources: &[Value], path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, source) in sources.iter().enumerate() {
        let source_path = index(path, i);
        let prefix = str_of(source, "prefix");
        if !prefix.is_empty() && !env_name_ok(prefix) {
            errs.push(FieldError::invalid(
                child(&source_path, "prefix"),
                prefix,
                RELAXED_ENV_NAME_MSG,
            ));
        }
        let mut count = 0;
        for name in ["configMapRef", "secretRef"] {
            let Some(reference) = opt(source, name) else {
                continue;
            };
            count += 1;
            let ref_name = str_of(reference, "name");
            let name_path = child(&child(&source_path, name), "name");
            if ref_name.is_empty() {
                errs.push(FieldError::required(name_path, ""));
            } else {
                for msg in
                    crate::validate::object_meta::name_problems(NameRule::Subdomain, ref_name, true)
                {
                    errs.push(FieldError::invalid(&name_path, ref_name, &msg));
                }
            }
        }
        // Upstream reports these on the list path.
        if count == 0 {
            errs.push(FieldError::invalid(
                path,
                "",
                "must specify one of: `configMapRef` or `secretRef`",
            ));
        } else if count > 1 {
            errs.push(FieldError::invalid(
                path,
                "",
                "may not have more than one field specified at a time",
            ));
        }
    }
    errs
}

/// IsValidUserID / IsValidGroupID.
fn id_range(value: Option<i64>, path: &str) -> Option<FieldError> {
    let value = value?;
    (!(0..=MAX_INT32).contains(&value)).then(|| {
        FieldError::invalid_rendered(
            path,
            &value.to_string(),
            "must be between 0 and 2147483647, inclusive",
        )
    })
}

/// validatePodSpecSecurityContext's id ranges.
fn pod_security_context(context: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for name in ["fsGroup", "runAsUser", "runAsGroup"] {
        errs.extend(id_range(int_of(context, name), &child(path, name)));
    }
    for (i, gid) in list_of(context, "supplementalGroups").iter().enumerate() {
        errs.extend(id_range(
            gid.as_i64(),
            &index(&child(path, "supplementalGroups"), i),
        ));
    }
    errs
}

/// ValidateSecurityContext: id ranges and privilege-escalation conflicts.
fn security_context(context: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for name in ["runAsUser", "runAsGroup"] {
        errs.extend(id_range(int_of(context, name), &child(path, name)));
    }
    let no_escalation =
        opt(context, "allowPrivilegeEscalation").and_then(Value::as_bool) == Some(false);
    if no_escalation {
        // The bad value is the whole context; Go prints its pointers as
        // addresses, so only its shape is kept.
        let rendered = "&core.SecurityContext{...}";
        if opt(context, "privileged").and_then(Value::as_bool) == Some(true) {
            errs.push(FieldError::invalid_rendered(
                path,
                rendered,
                "cannot set `allowPrivilegeEscalation` to false and `privileged` to true",
            ));
        }
        let capabilities = field(context, "capabilities");
        for cap in list_of(capabilities, "add") {
            if cap.as_str() == Some("CAP_SYS_ADMIN") {
                errs.push(FieldError::invalid_rendered(
                    path,
                    rendered,
                    "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN",
                ));
            }
        }
    }
    errs
}

fn volume_mounts(mounts: &[Value], volumes: &HashSet<String>, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut mount_points = HashSet::new();
    for (i, mount) in mounts.iter().enumerate() {
        let mount_path = index(path, i);
        let name = str_of(mount, "name");
        if name.is_empty() {
            errs.push(FieldError::required(child(&mount_path, "name"), ""));
        }
        if !volumes.contains(name) {
            errs.push(FieldError::not_found(child(&mount_path, "name"), name));
        }
        let target = str_of(mount, "mountPath");
        if target.is_empty() {
            errs.push(FieldError::required(child(&mount_path, "mountPath"), ""));
        }
        if !mount_points.insert(target) {
            errs.push(FieldError::invalid(
                child(&mount_path, "mountPath"),
                target,
                "must be unique",
            ));
        }
        // Upstream reports subPath problems on the list path, not the item.
        let sub_path = str_of(mount, "subPath");
        if !sub_path.is_empty() {
            errs.extend(local_descending_path(sub_path, &child(path, "subPath")));
        }
    }
    errs
}

/// validateLocalDescendingPath.
fn local_descending_path(target: &str, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if target.starts_with('/') {
        errs.push(FieldError::invalid(path, target, "must be a relative path"));
    }
    if target.split('/').any(|part| part == "..") {
        errs.push(FieldError::invalid(path, target, "must not contain '..'"));
    }
    errs
}

/// Resource names a container may request without a domain prefix.
fn standard_container_resource(name: &str) -> bool {
    matches!(name, "cpu" | "memory" | "ephemeral-storage") || name.starts_with("hugepages-")
}

/// Whether requests may be below limits (native, non-hugepage resources).
fn overcommit_allowed(name: &str) -> bool {
    let native = !name.contains('/') || name.contains("kubernetes.io/");
    native && !name.starts_with("hugepages-")
}

/// ValidateContainerResourceRequirements: names, quantities, requests ≤ limits.
pub fn resources(res: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let limits_path = child(path, "limits");
    let requests_path = child(path, "requests");
    let mut limits = std::collections::HashMap::new();
    for (name, raw) in map_of(res, "limits").into_iter().flatten() {
        let key_path = key(&limits_path, name);
        errs.extend(resource_name(name, &key_path));
        if let Some(q) = resource_quantity(raw, &key_path, &mut errs) {
            limits.insert(name.as_str(), q);
        }
    }
    for (name, raw) in map_of(res, "requests").into_iter().flatten() {
        let key_path = key(&requests_path, name);
        errs.extend(resource_name(name, &key_path));
        let Some(request) = resource_quantity(raw, &key_path, &mut errs) else {
            continue;
        };
        match limits.get(name.as_str()) {
            Some(limit) if request != *limit && !overcommit_allowed(name) => {
                errs.push(FieldError::invalid(
                    &requests_path,
                    &request.canonical(),
                    &format!("must be equal to {name} limit of {}", limit.canonical()),
                ))
            }
            Some(limit) if request > *limit => errs.push(FieldError::invalid(
                &requests_path,
                &request.canonical(),
                &format!(
                    "must be less than or equal to {name} limit of {}",
                    limit.canonical()
                ),
            )),
            Some(_) => {}
            None if !overcommit_allowed(name) => errs.push(FieldError::required(
                &limits_path,
                "Limit must be set for non overcommitable resources",
            )),
            None => {}
        }
    }
    errs
}

/// Unprefixed resource names upstream knows (IsStandardResourceName).
fn standard_resource(name: &str) -> bool {
    matches!(
        name,
        "cpu"
            | "memory"
            | "ephemeral-storage"
            | "requests.cpu"
            | "requests.memory"
            | "requests.ephemeral-storage"
            | "limits.cpu"
            | "limits.memory"
            | "limits.ephemeral-storage"
            | "pods"
            | "services"
            | "replicationcontrollers"
            | "resourcequotas"
            | "secrets"
            | "persistentvolumeclaims"
            | "configmaps"
            | "services.nodeports"
            | "services.loadbalancers"
            | "storage"
            | "requests.storage"
    ) || name.starts_with("hugepages-")
        || name.starts_with("requests.hugepages-")
}

/// validateContainerResourceName.
fn resource_name(name: &str, path: &str) -> Vec<FieldError> {
    let mut errs: Vec<FieldError> = meta::qualified_name_problems(name)
        .iter()
        .map(|msg| FieldError::invalid(path, name, msg))
        .collect();
    let unprefixed = !name.contains('/');
    if errs.is_empty() && unprefixed && !standard_resource(name) {
        errs.push(FieldError::invalid(
            path,
            name,
            "must be a standard resource type or fully qualified",
        ));
    }
    if unprefixed && !standard_container_resource(name) {
        errs.push(FieldError::invalid(
            path,
            name,
            "must be a standard resource for containers",
        ));
    }
    errs
}

/// A quantity that parses and is not negative; errors otherwise.
fn resource_quantity(
    raw: &Value,
    path: &str,
    errs: &mut Vec<FieldError>,
) -> Option<quantity::Quantity> {
    match quantity::from_json(raw) {
        Err(_) => {
            let text = raw.as_str().map_or_else(|| raw.to_string(), str::to_string);
            errs.push(FieldError::invalid(path, &text, QUANTITY_FORMAT_MSG));
            None
        }
        Ok(q) if q.is_negative() => {
            errs.push(FieldError::invalid(path, &q.canonical(), NEGATIVE_MSG));
            None
        }
        Ok(q) => Some(q),
    }
}

/// Lifecycle hooks and probes (regular and restartable init containers).
fn probes(ctr: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(lifecycle) = opt(ctr, "lifecycle") {
        for hook in ["postStart", "preStop"] {
            if let Some(action) = opt(lifecycle, hook) {
                errs.extend(handler(action, &child(&child(path, "lifecycle"), hook)));
            }
        }
    }
    for (name, needs_one_success) in [
        ("livenessProbe", true),
        ("readinessProbe", false),
        ("startupProbe", true),
    ] {
        let Some(probe) = opt(ctr, name) else {
            continue;
        };
        let probe_path = child(path, name);
        errs.extend(probe_fields(probe, &probe_path));
        if name == "readinessProbe" {
            if let Some(grace) = int_of(probe, "terminationGracePeriodSeconds") {
                errs.push(FieldError::invalid_rendered(
                    child(&probe_path, "terminationGracePeriodSeconds"),
                    &grace.to_string(),
                    "must not be set for readinessProbes",
                ));
            }
        }
        if needs_one_success {
            if let Some(threshold) =
                int_of(probe, "successThreshold").filter(|t| *t != 1 && *t != 0)
            {
                errs.push(FieldError::invalid_rendered(
                    child(&probe_path, "successThreshold"),
                    &threshold.to_string(),
                    "must be 1",
                ));
            }
        }
    }
    errs
}

fn probe_fields(probe: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = handler(probe, path);
    for name in [
        "initialDelaySeconds",
        "timeoutSeconds",
        "periodSeconds",
        "successThreshold",
        "failureThreshold",
    ] {
        if let Some(value) = int_of(probe, name) {
            errs.extend(meta::nonnegative(value, &child(path, name)));
        }
    }
    if let Some(grace) = int_of(probe, "terminationGracePeriodSeconds").filter(|g| *g <= 0) {
        errs.push(FieldError::invalid_rendered(
            child(path, "terminationGracePeriodSeconds"),
            &grace.to_string(),
            "must be greater than 0",
        ));
    }
    errs
}

/// validateHandler: exactly one probe/lifecycle action.
fn handler(action: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut count = 0;
    for name in ["exec", "httpGet", "tcpSocket", "grpc", "sleep"] {
        let Some(body) = opt(action, name) else {
            continue;
        };
        let body_path = child(path, name);
        if count > 0 {
            errs.push(FieldError::forbidden(
                body_path,
                "may not specify more than 1 handler type",
            ));
            continue;
        }
        count += 1;
        match name {
            "exec" if list_of(body, "command").is_empty() => {
                errs.push(FieldError::required(child(&body_path, "command"), ""));
            }
            "httpGet" | "tcpSocket" => {
                errs.extend(port_num_or_name(
                    field(body, "port"),
                    &child(&body_path, "port"),
                ));
                if name == "httpGet" {
                    match str_of(body, "scheme") {
                        "" | "HTTP" | "HTTPS" => {}
                        other => errs.push(FieldError::not_supported(
                            child(&body_path, "scheme"),
                            other,
                            &["HTTP", "HTTPS"],
                        )),
                    }
                }
            }
            _ => {}
        }
    }
    if count == 0 {
        errs.push(FieldError::required(path, "must specify a handler type"));
    }
    errs
}

/// ValidatePortNumOrName over an IntOrString.
fn port_num_or_name(port: &Value, path: &str) -> Vec<FieldError> {
    match port {
        Value::String(name) => meta::port_name(name, path),
        other => meta::port_number(other.as_i64().unwrap_or(0), path)
            .into_iter()
            .collect(),
    }
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
