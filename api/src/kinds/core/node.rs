//! Node (core/v1): a machine pods run on.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::defaults::{ensure_child, is_nil, Object};
use crate::error::FieldError;
use crate::kinds::{ConnectTo, Kind};
use crate::printers::values::{age, boolean, items, name, or_none, string_map, text};
use crate::printers::{age_col, col, name_col, wide, Cell, TableColumn};
use crate::registry::ResourceDef;
use crate::validate::meta::{self, go_quote};
use crate::validate::pod;
use crate::validate::{child, field, index, list_of, opt, str_of};
use serde_json::json;

pub struct Node;

pub fn resources() -> Vec<ResourceDef> {
    vec![
        ResourceDef::new("", "v1", "nodes", "Node", false, Arc::new(Node))
            .short_names(&["no"])
            .subresources(&["proxy", "status"])
            .selectable_fields(&["spec.unschedulable"])
            .storage_segment("minions"),
    ]
}

impl Kind for Node {
    fn connect_to(&self, subresource: &str) -> Option<ConnectTo> {
        (subresource == "proxy").then_some(ConnectTo::NodeProxy)
    }

    fn keeps_status_on_create(&self) -> bool {
        true
    }

    fn prepare_for_create(&self, object: &mut Value) {
        Self::sync_pod_cidrs(object);
    }

    fn prepare_for_update(&self, object: &mut Value, _old: &Value) {
        Self::sync_pod_cidrs(object);
    }

    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        set_defaults(object);
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        validate(object)
    }

    fn validate_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = validate(object);
        errs.extend(validate_update(object, old));
        errs
    }

    fn absent_field_value(&self, field: &str) -> &'static str {
        match field {
            "spec.unschedulable" => "false",
            _ => "",
        }
    }

    fn table_columns(&self) -> Vec<TableColumn> {
        vec![
            name_col(),
            col("Status", "string", "The status of the node"),
            col("Roles", "string", "The roles of the node"),
            age_col(),
            col("Version", "string", D_NODE_KUBELET),
            wide("Internal-IP", "string", D_NODE_ADDRESSES),
            wide("External-IP", "string", D_NODE_ADDRESSES),
            wide("OS-Image", "string", D_NODE_OS_IMAGE),
            wide("Kernel-Version", "string", D_NODE_KERNEL),
            wide("Container-Runtime", "string", D_NODE_RUNTIME),
        ]
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        cells(object)
    }
}

/// Nodes carry both spellings of their pod CIDRs (upstream's v1
/// conversion fills one from the other).
impl Node {
    fn sync_pod_cidrs(object: &mut Value) {
        let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) else {
            return;
        };
        let single = spec
            .get("podCIDR")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let many_empty = spec
            .get("podCIDRs")
            .and_then(Value::as_array)
            .is_none_or(|list| list.is_empty());
        if many_empty && !single.is_empty() {
            spec.insert("podCIDRs".into(), json!([single]));
        } else if single.is_empty() {
            let first = spec
                .get("podCIDRs")
                .and_then(Value::as_array)
                .and_then(|list| list.first())
                .cloned();
            if let Some(first) = first {
                spec.insert("podCIDR".into(), first);
            }
        }
    }
}

/// `SetDefaults_NodeStatus`: allocatable starts as capacity.
fn set_defaults(node: &mut Object) {
    let Some(status) = ensure_child(node, "status") else {
        return;
    };
    if is_nil(status, "allocatable") {
        if let Some(capacity) = status.get("capacity").filter(|c| c.is_object()).cloned() {
            status.insert("allocatable".into(), capacity);
        }
    }
}

fn validate(object: &Value) -> Vec<FieldError> {
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

fn validate_update(object: &Value, old: &Value) -> Vec<FieldError> {
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

const D_NODE_KUBELET: &str = "Kubelet Version reported by the node.";
const D_NODE_OS_IMAGE: &str =
    "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).";
const D_NODE_KERNEL: &str =
    "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).";
const D_NODE_RUNTIME: &str = "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).";
const D_NODE_ADDRESSES: &str = "List of addresses reachable to the node. Queried from cloud provider, if available. More info: https://kubernetes.io/docs/reference/node/node-status/#addresses Note: This field is declared as mergeable, but the merge key is not sufficiently unique, which can cause data corruption when it is merged. Callers should instead use a full-replacement patch. See https://pr.k8s.io/79391 for an example. Consumers should assume that addresses can change during the lifetime of a Node. However, there are some exceptions where this may not be possible, such as Pods that inherit a Node's address in its own status or consumers of the downward API (status.hostIP).";

pub(super) fn node_address(node: &Value, type_: &str) -> String {
    items(node, "/status/addresses")
        .iter()
        .find(|a| text(a, "/type") == type_)
        .map(|a| text(a, "/address").to_string())
        .unwrap_or_else(|| "<none>".to_string())
}

fn cells(node: &Value) -> Vec<Cell> {
    // Upstream keeps the last condition of each type; only Ready is shown.
    let mut status: Vec<String> = Vec::new();
    if let Some(c) = items(node, "/status/conditions")
        .iter()
        .rev()
        .find(|c| text(c, "/type") == "Ready")
    {
        status.push(if text(c, "/status") == "True" {
            "Ready".to_string()
        } else {
            "NotReady".to_string()
        });
    }
    if status.is_empty() {
        status.push("Unknown".to_string());
    }
    if boolean(node, "/spec/unschedulable") == Some(true) {
        status.push("SchedulingDisabled".to_string());
    }

    let mut roles = BTreeSet::new();
    for (k, v) in string_map(node, "/metadata/labels") {
        if let Some(role) = k.strip_prefix("node-role.kubernetes.io/") {
            if !role.is_empty() {
                roles.insert(role.to_string());
            }
        } else if k == "kubernetes.io/role" && !v.is_empty() {
            roles.insert(v);
        }
    }
    let roles: Vec<String> = roles.into_iter().collect();

    let info = |field: &str| -> Value {
        match text(node, &format!("/status/nodeInfo/{field}")) {
            "" => "<unknown>".into(),
            s => s.into(),
        }
    };
    vec![
        name(node).into(),
        status.join(",").into(),
        or_none(roles.join(",")).into(),
        age(node),
        text(node, "/status/nodeInfo/kubeletVersion").into(),
        node_address(node, "InternalIP").into(),
        node_address(node, "ExternalIP").into(),
        info("osImage").into(),
        info("kernelVersion").into(),
        info("containerRuntimeVersion").into(),
    ]
}
