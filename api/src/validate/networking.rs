//! networking.k8s.io/v1: Ingress and NetworkPolicy.

use serde_json::Value;

use super::meta;
use super::{child, field, index, int_of, list_of, opt, str_of};
use crate::error::FieldError;
use crate::kinds::NameRule;

pub fn ingress(object: &Value) -> Vec<FieldError> {
    let spec = field(object, "spec");
    let mut errs = Vec::new();
    let rules = list_of(spec, "rules");
    let default_backend = opt(spec, "defaultBackend");
    if rules.is_empty() && default_backend.is_none() {
        let rendered = if opt(spec, "rules").is_some() {
            "[]networking.IngressRule{}"
        } else {
            "[]networking.IngressRule(nil)"
        };
        errs.push(FieldError::invalid_rendered(
            "spec",
            rendered,
            "either `defaultBackend` or `rules` must be specified",
        ));
    }
    if let Some(backend) = default_backend {
        errs.extend(ingress_backend(backend, "spec.defaultBackend"));
    }
    for (i, rule) in rules.iter().enumerate() {
        let rule_path = index("spec.rules", i);
        let host = str_of(rule, "host");
        if !host.is_empty() {
            let host_path = child(&rule_path, "host");
            if host.parse::<std::net::IpAddr>().is_ok() {
                errs.push(FieldError::invalid(
                    &host_path,
                    host,
                    "must be a DNS name, not an IP address",
                ));
            }
            errs.extend(host_name(host, &host_path));
        }
        if let Some(http) = opt(rule, "http") {
            let http_path = child(&rule_path, "http");
            let paths = list_of(http, "paths");
            if paths.is_empty() {
                errs.push(FieldError::required(child(&http_path, "paths"), ""));
            }
            for (j, p) in paths.iter().enumerate() {
                errs.extend(http_path_rule(p, &index(&child(&http_path, "paths"), j)));
            }
        }
    }
    for (i, tls) in list_of(spec, "tls").iter().enumerate() {
        for (j, host) in list_of(tls, "hosts").iter().enumerate() {
            let host = host.as_str().unwrap_or("");
            errs.extend(host_name(
                host,
                &index(&child(&index("spec.tls", i), "hosts"), j),
            ));
        }
    }
    if let Some(class) = opt(spec, "ingressClassName").and_then(Value::as_str) {
        errs.extend(meta::name(
            NameRule::Subdomain,
            class,
            "spec.ingressClassName",
        ));
    }
    errs
}

/// A DNS subdomain, or a wildcard one (`*.example.com`).
fn host_name(host: &str, path: &str) -> Vec<FieldError> {
    if let Some(rest) = host.strip_prefix("*.") {
        if !rest.contains('*')
            && crate::validate::object_meta::name_problems(NameRule::Subdomain, rest, false)
                .is_empty()
        {
            return Vec::new();
        }
        return vec![FieldError::invalid(
            path,
            host,
            "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        )];
    }
    if host.contains('*') {
        return vec![FieldError::invalid(
            path,
            host,
            "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        )];
    }
    meta::name(NameRule::Subdomain, host, path)
}

const INVALID_PATH_SEQUENCES: &[&str] = &["//", "/./", "/../", "%2f", "%2F"];
const INVALID_PATH_SUFFIXES: &[&str] = &["/..", "/."];

fn http_path_rule(rule: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(path_type) = opt(rule, "pathType").and_then(Value::as_str) else {
        return vec![FieldError::required(
            child(path, "pathType"),
            "pathType must be specified",
        )];
    };
    let value = str_of(rule, "path");
    let value_path = child(path, "path");
    match path_type {
        "Exact" | "Prefix" => {
            if !value.starts_with('/') {
                errs.push(FieldError::invalid(
                    &value_path,
                    value,
                    "must be an absolute path",
                ));
            }
            if !value.is_empty() {
                for seq in INVALID_PATH_SEQUENCES {
                    if value.contains(seq) {
                        errs.push(FieldError::invalid(
                            &value_path,
                            value,
                            &format!("must not contain '{seq}'"),
                        ));
                    }
                }
                for suffix in INVALID_PATH_SUFFIXES {
                    if value.ends_with(suffix) {
                        errs.push(FieldError::invalid(
                            &value_path,
                            value,
                            &format!("cannot end with '{suffix}'"),
                        ));
                    }
                }
            }
        }
        "ImplementationSpecific" => {
            if !value.is_empty() && !value.starts_with('/') {
                errs.push(FieldError::invalid(
                    &value_path,
                    value,
                    "must be an absolute path",
                ));
            }
        }
        other => errs.push(FieldError::not_supported(
            child(path, "pathType"),
            other,
            &["Exact", "ImplementationSpecific", "Prefix"],
        )),
    }
    errs.extend(ingress_backend(
        field(rule, "backend"),
        &child(path, "backend"),
    ));
    errs
}

fn ingress_backend(backend: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let resource = opt(backend, "resource");
    let service = opt(backend, "service");
    match (resource, service) {
        (Some(_), Some(_)) => {
            errs.push(FieldError::invalid(
                path,
                "",
                "cannot set both resource and service backends",
            ));
        }
        (Some(resource), None) => {
            let resource_path = child(path, "resource");
            for name in ["kind", "name"] {
                if str_of(resource, name).is_empty() {
                    errs.push(FieldError::required(child(&resource_path, name), ""));
                }
            }
        }
        (None, Some(service)) => {
            let name = str_of(service, "name");
            let name_path = child(&child(path, "service"), "name");
            if name.is_empty() {
                errs.push(FieldError::required(name_path, ""));
            } else {
                errs.extend(meta::name(NameRule::Dns1035Label, name, &name_path));
            }
            let port = field(service, "port");
            let port_name = str_of(port, "name");
            let port_number = int_of(port, "number").unwrap_or(0);
            let port_path = child(&child(path, "service"), "port");
            match (port_name.is_empty(), port_number == 0) {
                (false, false) => errs.push(FieldError::invalid(
                    path,
                    "",
                    "cannot set both port name & port number",
                )),
                (false, true) => {
                    errs.extend(meta::port_name(port_name, &child(&port_path, "name")))
                }
                (true, false) => {
                    errs.extend(meta::port_number(port_number, &child(&port_path, "number")))
                }
                (true, true) => errs.push(FieldError::required(
                    path,
                    "port name or number is required",
                )),
            }
        }
        (None, None) => errs.push(FieldError::invalid(
            path,
            "",
            "resource or service backend is required",
        )),
    }
    errs
}

pub fn network_policy(object: &Value) -> Vec<FieldError> {
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
