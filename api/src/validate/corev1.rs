//! The core ("") group: Pod, PodTemplate, ReplicationController, ConfigMap,
//! Secret, Namespace, ServiceAccount, Node, PersistentVolume(Claim).
//! (Service is validated by its strategy; Secret data keys and base64 too.)

use base64::Engine as _;
use serde_json::Value;

use super::meta::{self, go_quote, go_string_map};
use super::pod;
use super::quantity::{self, QUANTITY_FORMAT_MSG};
use super::{child, field, index, int_of, key, list_of, map_of, opt, str_of};
use crate::error::FieldError;
use crate::kinds::NameRule;

/// Upstream's MaxSecretSize, shared by Secrets and ConfigMaps.
const MAX_SECRET_SIZE: usize = 1024 * 1024;
const IMMUTABLE_WHEN_SET: &str = "field is immutable when `immutable` is set";

pub fn pod(object: &Value) -> Vec<FieldError> {
    let spec = field(object, "spec");
    let mut errs = pod::pod_spec(spec, "spec", true);
    errs.extend(pod::pod_only(spec));
    errs
}

pub fn pod_create_only(object: &Value) -> Vec<FieldError> {
    pod::pod_create_only(field(object, "spec"))
}

pub fn pod_update(object: &Value, old: &Value) -> Vec<FieldError> {
    pod::pod_update(object, old)
}

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

pub fn config_map(object: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut total = 0;
    let binary = map_of(object, "binaryData");
    for (k, v) in map_of(object, "data").into_iter().flatten() {
        let path = key("data", k);
        errs.extend(crate::validate::object_meta::config_map_key(&path, k));
        if binary.is_some_and(|b| b.contains_key(k)) {
            errs.push(FieldError::invalid(
                &path,
                k,
                "duplicate of key present in binaryData",
            ));
        }
        total += v.as_str().map_or(0, str::len);
    }
    for (k, v) in binary.into_iter().flatten() {
        errs.extend(crate::validate::object_meta::config_map_key(
            &key("binaryData", k),
            k,
        ));
        total += decoded_len(v);
    }
    if total > MAX_SECRET_SIZE {
        errs.push(FieldError::too_long_bytes("", MAX_SECRET_SIZE));
    }
    errs
}

pub fn config_map_update(object: &Value, old: &Value) -> Vec<FieldError> {
    immutable_data(object, old, &["data", "binaryData"])
}

/// Secret- and ConfigMap-style `immutable: true`: the flag and the data stay.
fn immutable_data(object: &Value, old: &Value, data_fields: &[&str]) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if !super::bool_of(old, "immutable") {
        return errs;
    }
    if !super::bool_of(object, "immutable") {
        errs.push(FieldError::forbidden("immutable", IMMUTABLE_WHEN_SET));
    }
    for name in data_fields {
        if map_or_empty(object, name) != map_or_empty(old, name) {
            errs.push(FieldError::forbidden(*name, IMMUTABLE_WHEN_SET));
        }
    }
    errs
}

/// A map field where null and absent are the same nil map.
fn map_or_empty(object: &Value, name: &str) -> Option<serde_json::Map<String, Value>> {
    map_of(object, name).filter(|m| !m.is_empty()).cloned()
}

fn decoded_len(value: &Value) -> usize {
    value
        .as_str()
        .and_then(|s| base64::engine::general_purpose::STANDARD.decode(s).ok())
        .map_or(0, |bytes| bytes.len())
}

fn secret_data<'a>(object: &'a Value, name: &str) -> Option<&'a Value> {
    map_of(object, "data").and_then(|d| d.get(name))
}

/// Secret rules beyond the data keys and base64 (those are the strategy's):
/// total size and the keys each well-known type requires.
pub fn secret(object: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let total: usize = map_of(object, "data")
        .into_iter()
        .flatten()
        .map(|(_, v)| decoded_len(v))
        .sum();
    if total > MAX_SECRET_SIZE {
        errs.push(FieldError::too_long_bytes("data", MAX_SECRET_SIZE));
    }
    let require = |name: &str, errs: &mut Vec<FieldError>| {
        if secret_data(object, name).is_none() {
            errs.push(FieldError::required(key("data", name), ""));
        }
    };
    match str_of(object, "type") {
        "kubernetes.io/service-account-token" => {
            let annotation = opt(field(object, "metadata"), "annotations")
                .and_then(|a| a.get("kubernetes.io/service-account.name"))
                .and_then(Value::as_str)
                .unwrap_or("");
            if annotation.is_empty() {
                errs.push(FieldError::required(
                    "metadata.annotations[kubernetes.io/service-account.name]",
                    "",
                ));
            }
        }
        "kubernetes.io/dockercfg" => errs.extend(docker_config(object, ".dockercfg")),
        "kubernetes.io/dockerconfigjson" => errs.extend(docker_config(object, ".dockerconfigjson")),
        "kubernetes.io/basic-auth"
            if secret_data(object, "username").is_none()
                && secret_data(object, "password").is_none() =>
        {
            require("username", &mut errs);
            require("password", &mut errs);
        }
        "kubernetes.io/ssh-auth"
            if secret_data(object, "ssh-privatekey").is_none_or(|v| decoded_len(v) == 0) =>
        {
            errs.push(FieldError::required("data[ssh-privatekey]", ""));
        }
        "kubernetes.io/tls" => {
            require("tls.crt", &mut errs);
            require("tls.key", &mut errs);
        }
        _ => {}
    }
    errs
}

/// A docker config key must be present and hold a JSON object.
fn docker_config(object: &Value, name: &str) -> Vec<FieldError> {
    let path = key("data", name);
    let Some(raw) = secret_data(object, name) else {
        return vec![FieldError::required(path, "")];
    };
    let bytes = raw
        .as_str()
        .and_then(|s| base64::engine::general_purpose::STANDARD.decode(s).ok())
        .unwrap_or_default();
    let problem = match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(_)) | Ok(Value::Null) => None,
        Ok(other) => Some(format!(
            "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            go_json_kind(&other)
        )),
        Err(e) if e.is_eof() => Some("unexpected end of JSON input".to_string()),
        Err(_) => {
            let first = String::from_utf8_lossy(&bytes)
                .trim_start()
                .chars()
                .next()
                .unwrap_or(' ');
            Some(format!(
                "invalid character '{first}' looking for beginning of value"
            ))
        }
    };
    problem
        .map(|msg| FieldError::invalid(path, "<secret contents redacted>", &msg))
        .into_iter()
        .collect()
}

fn go_json_kind(value: &Value) -> &'static str {
    match value {
        Value::Array(_) => "array",
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
        _ => "object",
    }
}

pub fn secret_update(object: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let new_type = str_of(object, "type");
    let old_type = str_of(old, "type");
    if new_type != old_type {
        errs.push(FieldError::immutable("type", &go_quote(new_type)));
    }
    errs.extend(immutable_data(object, old, &["data"]));
    errs
}

/// Namespace spec.finalizers (reported on `spec.finalizers`, unindexed, as
/// upstream does).
pub fn namespace(object: &Value) -> Vec<FieldError> {
    list_of(field(object, "spec"), "finalizers")
        .iter()
        .flat_map(|f| meta::finalizer_name(f.as_str().unwrap_or(""), "spec.finalizers"))
        .collect()
}

/// ServiceAccounts carry nothing upstream validates beyond metadata.
pub fn service_account(_object: &Value) -> Vec<FieldError> {
    Vec::new()
}

pub fn node(object: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = field(object, "spec");
    // Upstream reports taints under metadata (it builds the path from the
    // metadata path); kept for byte-for-byte causes.
    errs.extend(node_taints(list_of(spec, "taints"), "metadata.taints"));
    let cidrs = list_of(spec, "podCIDRs");
    for (i, value) in cidrs.iter().enumerate() {
        errs.extend(meta::cidr(
            value.as_str().unwrap_or(""),
            &index("spec.podCIDRs", i),
        ));
    }
    if cidrs.len() > 1 {
        let parsed: Vec<_> = cidrs
            .iter()
            .filter_map(|c| meta::parse_cidr(c.as_str().unwrap_or("")))
            .collect();
        let dual_stack = parsed.len() == 2 && parsed[0].0.is_ipv4() != parsed[1].0.is_ipv4();
        if !dual_stack || cidrs.len() > 2 {
            errs.push(FieldError::invalid_rendered(
                "spec.podCIDRs",
                &meta::go_string_slice("[]string", opt(spec, "podCIDRs")),
                "may specify no more than one CIDR for each IP family",
            ));
        }
        let mut seen = std::collections::HashSet::new();
        for (i, value) in cidrs.iter().enumerate() {
            let value = value.as_str().unwrap_or("");
            if !seen.insert(value) {
                errs.push(FieldError::duplicate(index("spec.podCIDRs", i), value));
            }
        }
    }
    errs
}

fn node_taints(taints: &[Value], path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (i, taint) in taints.iter().enumerate() {
        let taint_path = index(path, i);
        let taint_key = str_of(taint, "key");
        let value = str_of(taint, "value");
        let effect = str_of(taint, "effect");
        errs.extend(meta::label_name(taint_key, &child(&taint_path, "key")));
        let problems = crate::validate::object_meta::label_value_problems(value);
        if !problems.is_empty() {
            errs.push(FieldError::invalid(
                child(&taint_path, "value"),
                value,
                &problems.join(";"),
            ));
        }
        errs.extend(pod::taint_effect(effect, &child(&taint_path, "effect")));
        if !seen.insert((taint_key, effect)) {
            let rendered = format!(
                "core.Taint{{Key:{}, Value:{}, Effect:{}, TimeAdded:{}}}",
                go_quote(taint_key),
                go_quote(value),
                go_quote(effect),
                if opt(taint, "timeAdded").is_some() {
                    "<time>"
                } else {
                    "(*v1.Time)(nil)"
                }
            );
            errs.push(FieldError::duplicate_rendered(
                taint_path,
                &rendered,
                "taints must be unique by key and effect pair",
            ));
        }
    }
    errs
}

pub fn node_update(object: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let new_spec = field(object, "spec");
    let old_spec = field(old, "spec");
    let old_cidrs = list_of(old_spec, "podCIDRs");
    let new_cidrs = list_of(new_spec, "podCIDRs");
    let cidr_msg = "node updates may not change podCIDR except from \"\" to valid";
    if !old_cidrs.is_empty() {
        if old_cidrs.len() != new_cidrs.len() {
            errs.push(FieldError::forbidden("spec.podCIDRs", cidr_msg));
        } else {
            for (o, n) in old_cidrs.iter().zip(new_cidrs) {
                if o != n {
                    errs.push(FieldError::forbidden("spec.podCIDRs", cidr_msg));
                }
            }
        }
    }
    let old_provider = str_of(old_spec, "providerID");
    if !old_provider.is_empty() && old_provider != str_of(new_spec, "providerID") {
        errs.push(FieldError::forbidden(
            "spec.providerID",
            "node updates may not change providerID except from \"\" to valid",
        ));
    }
    errs
}

const ACCESS_MODES: &[&str] = &[
    "ReadOnlyMany",
    "ReadWriteMany",
    "ReadWriteOnce",
    "ReadWriteOncePod",
];

fn access_modes(modes: &[Value], path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut once_pod = false;
    let mut other = false;
    for mode in modes {
        let mode = mode.as_str().unwrap_or("");
        if !ACCESS_MODES.contains(&mode) {
            errs.push(FieldError::not_supported(path, mode, ACCESS_MODES));
        }
        if mode == "ReadWriteOncePod" {
            once_pod = true;
        } else {
            other = true;
        }
    }
    if once_pod && other {
        errs.push(FieldError::forbidden(
            path,
            "may not use ReadWriteOncePod with other access modes",
        ));
    }
    errs
}

fn volume_mode(spec: &Value, path: &str) -> Option<FieldError> {
    let mode = opt(spec, "volumeMode")?.as_str().unwrap_or("");
    (!matches!(mode, "Block" | "Filesystem"))
        .then(|| FieldError::not_supported(path, mode, &["Block", "Filesystem"]))
}

/// The sources a PersistentVolume may name, in upstream's checking order.
const PV_SOURCES: &[&str] = &[
    "hostPath",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "glusterfs",
    "flocker",
    "nfs",
    "rbd",
    "quobyte",
    "cinder",
    "cephfs",
    "iscsi",
    "fc",
    "flexVolume",
    "azureFile",
    "vsphereVolume",
    "photonPersistentDisk",
    "portworxVolume",
    "azureDisk",
    "scaleIO",
    "local",
    "storageos",
    "csi",
];

/// `%#v` of a ResourceList, as far as it can be reproduced: nil, or the names.
fn go_resource_list(list: Option<&Value>) -> String {
    match list.and_then(Value::as_object) {
        None => "core.ResourceList(nil)".to_string(),
        Some(map) => {
            let mut names: Vec<&String> = map.keys().collect();
            names.sort();
            let body: Vec<String> = names
                .iter()
                .map(|n| format!("{}:resource.Quantity{{...}}", go_quote(n)))
                .collect();
            format!("core.ResourceList{{{}}}", body.join(", "))
        }
    }
}

pub fn persistent_volume(object: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = field(object, "spec");
    let modes = list_of(spec, "accessModes");
    if modes.is_empty() {
        errs.push(FieldError::required("spec.accessModes", ""));
    }
    errs.extend(access_modes(modes, "spec.accessModes"));
    let capacity = map_of(spec, "capacity");
    if capacity.is_none_or(|c| c.is_empty()) {
        errs.push(FieldError::required("spec.capacity", ""));
    }
    if capacity.is_none_or(|c| !c.contains_key("storage") || c.len() > 1) {
        errs.push(FieldError::not_supported_rendered(
            "spec.capacity",
            &go_resource_list(opt(spec, "capacity")),
            &["storage"],
        ));
    }
    for (name, raw) in capacity.into_iter().flatten() {
        let path = key("spec.capacity", name);
        match quantity::from_json(raw) {
            Err(_) => errs.push(FieldError::invalid(
                path,
                raw.as_str().unwrap_or(""),
                QUANTITY_FORMAT_MSG,
            )),
            Ok(q) => {
                if q.is_negative() {
                    errs.push(FieldError::invalid_rendered(
                        &path,
                        &q.value().to_string(),
                        "must be a valid resource quantity",
                    ));
                }
                if q.is_negative() || q.is_zero() {
                    errs.push(FieldError::invalid(
                        path,
                        &q.canonical(),
                        "must be greater than zero",
                    ));
                }
            }
        }
    }
    let class = str_of(spec, "storageClassName");
    if !class.is_empty() {
        errs.extend(meta::name(
            NameRule::Subdomain,
            class,
            "spec.storageClassName",
        ));
    }
    errs.extend(volume_mode(spec, "spec.volumeMode"));
    match str_of(spec, "persistentVolumeReclaimPolicy") {
        "" | "Delete" | "Recycle" | "Retain" => {}
        other => errs.push(FieldError::not_supported(
            "spec.persistentVolumeReclaimPolicy",
            other,
            &["Delete", "Recycle", "Retain"],
        )),
    }
    let mut count = 0;
    for source in PV_SOURCES {
        let Some(body) = opt(spec, source) else {
            continue;
        };
        let path = child("spec", source);
        if count > 0 {
            errs.push(FieldError::forbidden(
                path,
                "may not specify more than 1 volume type",
            ));
            continue;
        }
        count += 1;
        let required: &[&str] = match *source {
            "hostPath" | "local" => &["path"],
            "nfs" => &["server", "path"],
            "csi" => &["driver", "volumeHandle"],
            _ => &[],
        };
        for name in required {
            if str_of(body, name).is_empty() {
                errs.push(FieldError::required(child(&path, name), ""));
            }
        }
        // Upstream's validatePathNoBacksteps for host paths.
        let host_path = str_of(body, "path");
        if *source == "hostPath" && host_path.split('/').any(|part| part == "..") {
            errs.push(FieldError::invalid(
                child(&path, "path"),
                host_path,
                "must not contain '..'",
            ));
        }
    }
    if count == 0 {
        errs.push(FieldError::required("spec", "must specify a volume type"));
    }
    errs
}

pub fn persistent_volume_update(object: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let pick = |spec: &Value| {
        let mut sources = serde_json::Map::new();
        for source in PV_SOURCES {
            if let Some(v) = opt(spec, source) {
                sources.insert((*source).to_string(), v.clone());
            }
        }
        Value::Object(sources)
    };
    let new_sources = pick(field(object, "spec"));
    let old_sources = pick(field(old, "spec"));
    if !meta::semantically_equal(&new_sources, &old_sources) {
        errs.push(FieldError::forbidden(
            "spec.persistentvolumesource",
            &format!(
                "spec.persistentvolumesource is immutable after creation\n{}",
                meta::diff(&old_sources, &new_sources)
            ),
        ));
    }
    let new_mode = opt(field(object, "spec"), "volumeMode").and_then(Value::as_str);
    let old_mode = opt(field(old, "spec"), "volumeMode").and_then(Value::as_str);
    if new_mode != old_mode {
        errs.push(FieldError::immutable(
            "volumeMode",
            &meta::go_opt_str(new_mode),
        ));
    }
    errs
}

pub fn persistent_volume_claim(object: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = field(object, "spec");
    let modes = list_of(spec, "accessModes");
    if modes.is_empty() {
        errs.push(FieldError::required(
            "spec.accessModes",
            "at least 1 access mode is required",
        ));
    }
    errs.extend(meta::label_selector(opt(spec, "selector"), "spec.selector"));
    errs.extend(access_modes(modes, "spec.accessModes"));
    // Upstream keys the storage request under `resources`, not `requests`.
    let storage_path = "spec.resources[storage]";
    match map_of(field(spec, "resources"), "requests").and_then(|r| r.get("storage")) {
        None => errs.push(FieldError::required(storage_path, "")),
        Some(raw) => match quantity::from_json(raw) {
            Err(_) => errs.push(FieldError::invalid(
                storage_path,
                raw.as_str().unwrap_or(""),
                QUANTITY_FORMAT_MSG,
            )),
            Ok(q) if q.is_negative() || q.is_zero() => errs.push(FieldError::invalid(
                storage_path,
                &q.canonical(),
                "must be greater than zero",
            )),
            Ok(_) => {}
        },
    }
    if let Some(class) = opt(spec, "storageClassName").and_then(Value::as_str) {
        if !class.is_empty() {
            errs.extend(meta::name(
                NameRule::Subdomain,
                class,
                "spec.storageClassName",
            ));
        }
    }
    errs.extend(volume_mode(spec, "spec.volumeMode"));
    errs
}

fn storage_request(object: &Value) -> Option<quantity::Quantity> {
    map_of(field(field(object, "spec"), "resources"), "requests")
        .and_then(|r| r.get("storage"))
        .and_then(|raw| quantity::from_json(raw).ok())
}

/// ValidatePersistentVolumeClaimUpdate: the spec is fixed except a first
/// volumeName and, for bound claims, the storage request (with 1.32's
/// RecoverVolumeExpansionFailure: not below status.capacity).
pub fn persistent_volume_claim_update(object: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut new_spec = field(object, "spec").clone();
    let mut old_spec = field(old, "spec").clone();
    if str_of(&old_spec, "volumeName").is_empty() {
        match new_spec.get("volumeName").cloned() {
            Some(v) => {
                if let Some(obj) = old_spec.as_object_mut() {
                    obj.insert("volumeName".into(), v);
                }
            }
            None => {
                if let Some(obj) = old_spec.as_object_mut() {
                    obj.remove("volumeName");
                }
            }
        }
    }
    let bound = str_of(field(object, "status"), "phase") == "Bound";
    if bound {
        let old_storage = old_spec.pointer("/resources/requests/storage").cloned();
        if let Some(requests) = new_spec
            .pointer_mut("/resources/requests")
            .and_then(Value::as_object_mut)
        {
            match old_storage {
                Some(v) => requests.insert("storage".into(), v),
                None => requests.remove("storage"),
            };
        }
    }
    for name in ["volumeAttributesClassName"] {
        if bound {
            match old_spec.get(name).cloned() {
                Some(v) => new_spec.as_object_mut().map(|o| o.insert(name.into(), v)),
                None => new_spec.as_object_mut().map(|o| o.remove(name)),
            };
        }
    }
    if !meta::semantically_equal(&new_spec, &old_spec) {
        errs.push(FieldError::forbidden(
            "spec",
            &format!(
                "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n{}",
                meta::diff(&old_spec, &new_spec)
            ),
        ));
    }
    if let (Some(new_size), Some(old_size)) = (storage_request(object), storage_request(old)) {
        if new_size < old_size {
            let status_size = map_of(field(old, "status"), "capacity")
                .and_then(|c| c.get("storage"))
                .and_then(|raw| quantity::from_json(raw).ok());
            let at_or_below_status = match status_size {
                Some(status) => new_size <= status,
                None => new_size.is_negative() || new_size.is_zero(),
            };
            if at_or_below_status {
                errs.push(FieldError::forbidden(
                    "spec.resources.requests.storage",
                    "field can not be less than status.capacity",
                ));
            }
        }
    }
    let new_mode = opt(field(object, "spec"), "volumeMode").and_then(Value::as_str);
    let old_mode = opt(field(old, "spec"), "volumeMode").and_then(Value::as_str);
    if new_mode != old_mode {
        errs.push(FieldError::immutable(
            "volumeMode",
            &meta::go_opt_str(new_mode),
        ));
    }
    errs
}

/// ValidateNamespaceStatusUpdate: the phase follows the deletion timestamp
/// (upstream's path, `status.Phase`, capitalised as it is).
pub fn namespace_status(object: &Value, _old: &Value) -> Vec<FieldError> {
    let phase = str_of(field(object, "status"), "phase");
    let deleting = opt(field(object, "metadata"), "deletionTimestamp").is_some();
    let (expected, message) = if deleting {
        (
            "Terminating",
            "may only be 'Terminating' if `deletionTimestamp` is not empty",
        )
    } else {
        (
            "Active",
            "may only be 'Active' if `deletionTimestamp` is empty",
        )
    };
    if phase == expected {
        Vec::new()
    } else {
        vec![FieldError::invalid("status.Phase", phase, message)]
    }
}
