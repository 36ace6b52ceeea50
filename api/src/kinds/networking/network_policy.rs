//! NetworkPolicy (networking.k8s.io/v1): which traffic pods accept and send.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::defaults::{default_pointer, each_item, ensure_child, is_zero, Object};
use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::values::{age, format_label_selector, get, name};
use crate::printers::{age_col, col, name_col, Cell, TableColumn};
use crate::registry::ResourceDef;
use crate::validate::meta;
use crate::validate::{child, field, index, int_of, list_of, opt, str_of};

pub struct NetworkPolicy;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "networking.k8s.io",
        "v1",
        "networkpolicies",
        "NetworkPolicy",
        true,
        Arc::new(NetworkPolicy),
    )
    .short_names(&["netpol"])]
}

impl Kind for NetworkPolicy {
    fn tracks_generation(&self) -> bool {
        true
    }

    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        set_defaults(object);
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        validate(object)
    }

    fn validate_update(&self, object: &Value, _old: &Value) -> Vec<FieldError> {
        validate(object)
    }

    fn table_columns(&self) -> Vec<TableColumn> {
        vec![
            name_col(),
            col("Pod-Selector", "string", D_NETPOL_POD_SELECTOR),
            age_col(),
        ]
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        vec![
            name(object).into(),
            format_label_selector(get(object, "/spec/podSelector")).into(),
            age(object),
        ]
    }
}

/// networking/v1 `SetDefaults_NetworkPolicy` and `SetDefaults_NetworkPolicyPort`.
fn set_defaults(policy: &mut Object) {
    let Some(spec) = ensure_child(policy, "spec") else {
        return;
    };
    if is_zero(spec, "policyTypes") {
        let has_egress = spec
            .get("egress")
            .and_then(Value::as_array)
            .is_some_and(|rules| !rules.is_empty());
        let types = if has_egress {
            json!(["Ingress", "Egress"])
        } else {
            json!(["Ingress"])
        };
        spec.insert("policyTypes".into(), types);
    }
    for direction in ["ingress", "egress"] {
        each_item(spec, direction, |rule| {
            each_item(rule, "ports", |port| {
                default_pointer(port, "protocol", json!("TCP"));
            });
        });
    }
}

fn validate(object: &Value) -> Vec<FieldError> {
    let spec = field(object, "spec");
    let mut errs = meta::label_selector(opt(spec, "podSelector"), "spec.podSelector");
    for (i, rule) in list_of(spec, "ingress").iter().enumerate() {
        let rule_path = index("spec.ingress", i);
        for (j, port) in list_of(rule, "ports").iter().enumerate() {
            errs.extend(policy_port(port, &index(&child(&rule_path, "ports"), j)));
        }
        for (j, peer) in list_of(rule, "from").iter().enumerate() {
            errs.extend(policy_peer(peer, &index(&child(&rule_path, "from"), j)));
        }
    }
    for (i, rule) in list_of(spec, "egress").iter().enumerate() {
        let rule_path = index("spec.egress", i);
        for (j, peer) in list_of(rule, "to").iter().enumerate() {
            errs.extend(policy_peer(peer, &index(&child(&rule_path, "to"), j)));
        }
        for (j, port) in list_of(rule, "ports").iter().enumerate() {
            errs.extend(policy_port(port, &index(&child(&rule_path, "ports"), j)));
        }
    }
    let types = list_of(spec, "policyTypes");
    if types.len() > 2 {
        errs.push(FieldError::invalid_rendered(
            "spec.policyTypes",
            &meta::go_string_slice("&[]networking.PolicyType", opt(spec, "policyTypes")),
            "may not specify more than two policyTypes",
        ));
        return errs;
    }
    for (i, t) in types.iter().enumerate() {
        let t = t.as_str().unwrap_or("");
        if t != "Ingress" && t != "Egress" {
            errs.push(FieldError::not_supported(
                index("spec.policyTypes", i),
                t,
                &["Ingress", "Egress"],
            ));
        }
    }
    errs
}

fn policy_port(port: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(protocol) = opt(port, "protocol").and_then(Value::as_str) {
        if !matches!(protocol, "TCP" | "UDP" | "SCTP" | "") {
            errs.push(FieldError::not_supported(
                child(path, "protocol"),
                protocol,
                &["TCP", "UDP", "SCTP"],
            ));
        }
    }
    let end_port = int_of(port, "endPort");
    let end_path = child(path, "endPort");
    match opt(port, "port") {
        Some(Value::String(name)) => {
            if let Some(end) = end_port {
                errs.push(FieldError::invalid_rendered(
                    &end_path,
                    &end.to_string(),
                    "may not be specified when `port` is non-numeric",
                ));
            }
            errs.extend(meta::port_name(name, &child(path, "port")));
        }
        Some(number) => {
            let number = number.as_i64().unwrap_or(0);
            errs.extend(meta::port_number(number, &child(path, "port")));
            if let Some(end) = end_port {
                if end < number {
                    errs.push(FieldError::invalid_rendered(
                        &end_path,
                        &number.to_string(),
                        "must be greater than or equal to `port`",
                    ));
                }
                errs.extend(meta::port_number(end, &end_path));
            }
        }
        None => {
            if let Some(end) = end_port {
                errs.push(FieldError::invalid_rendered(
                    &end_path,
                    &end.to_string(),
                    "may not be specified when `port` is not specified",
                ));
            }
        }
    }
    errs
}

fn policy_peer(peer: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut peers = 0;
    for name in ["podSelector", "namespaceSelector"] {
        if let Some(selector) = opt(peer, name) {
            peers += 1;
            errs.extend(meta::label_selector(Some(selector), &child(path, name)));
        }
    }
    let ip_block = opt(peer, "ipBlock");
    if let Some(block) = ip_block {
        peers += 1;
        errs.extend(ip_block_rules(block, &child(path, "ipBlock")));
    }
    if peers == 0 {
        errs.push(FieldError::required(path, "must specify a peer"));
    } else if peers > 1 && ip_block.is_some() {
        errs.push(FieldError::forbidden(
            path,
            "may not specify both ipBlock and another peer",
        ));
    }
    errs
}

fn ip_block_rules(block: &Value, path: &str) -> Vec<FieldError> {
    let cidr = str_of(block, "cidr");
    let cidr_path = child(path, "cidr");
    if cidr.is_empty() {
        return vec![FieldError::required(cidr_path, "")];
    }
    let mut errs: Vec<FieldError> = meta::cidr(cidr, &cidr_path).into_iter().collect();
    let Some(outer) = meta::parse_cidr(cidr) else {
        return errs;
    };
    for (i, except) in list_of(block, "except").iter().enumerate() {
        let except = except.as_str().unwrap_or("");
        let except_path = index(&child(path, "except"), i);
        errs.extend(meta::cidr(except, &except_path));
        let Some(inner) = meta::parse_cidr(except) else {
            continue;
        };
        if !meta::cidr_contains(outer, inner.0) || outer.1 >= inner.1 {
            errs.push(FieldError::invalid(
                except_path,
                except,
                "must be a strict subset of `cidr`",
            ));
        }
    }
    errs
}

const D_NETPOL_POD_SELECTOR: &str = "podSelector selects the pods to which this NetworkPolicy object applies. The array of ingress rules is applied to any pods selected by this field. Multiple network policies can select the same set of pods. In this case, the ingress rules for each are combined additively. This field is NOT optional and follows standard label selector semantics. An empty podSelector matches all pods in this namespace.";
