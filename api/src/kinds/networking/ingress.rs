//! Ingress (networking.k8s.io/v1): HTTP routes into the cluster.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::error::FieldError;
use crate::kinds::Kind;
use crate::kinds::NameRule;
use crate::printers::values::{age, items, load_balancer_ingress, name, ptr_str, text};
use crate::printers::{age_col, col, name_col, Cell, TableColumn};
use crate::registry::ResourceDef;
use crate::validate::meta;
use crate::validate::{child, field, index, int_of, list_of, opt, str_of};

pub struct Ingress;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "networking.k8s.io",
        "v1",
        "ingresses",
        "Ingress",
        true,
        Arc::new(Ingress),
    )
    .short_names(&["ing"])
    .subresources(&["status"])]
}

impl Kind for Ingress {
    fn tracks_generation(&self) -> bool {
        true
    }

    fn empty_status(&self) -> Value {
        json!({"loadBalancer": {}})
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
        col(
            "Class",
            "string",
            "The name of the IngressClass resource that should be used for additional configuration",
        ),
        col(
            "Hosts",
            "string",
            "Hosts that incoming requests are matched against before the ingress rule",
        ),
        col(
            "Address",
            "string",
            "Address is a list containing ingress points for the load-balancer",
        ),
        col("Ports", "string", "Ports of TLS configurations that open"),
        age_col(),
    ]
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        cells(object)
    }
}

fn validate(object: &Value) -> Vec<FieldError> {
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

fn cells(ing: &Value) -> Vec<Cell> {
    let class = ptr_str(ing, "/spec/ingressClassName", "<none>");
    const MAX: usize = 3;
    let rules = items(ing, "/spec/rules");
    let mut hosts: Vec<&str> = Vec::new();
    let mut more = false;
    for rule in rules {
        if hosts.len() == MAX {
            more = true;
        }
        let host = text(rule, "/host");
        if !more && !host.is_empty() {
            hosts.push(host);
        }
    }
    let hosts = if hosts.is_empty() {
        "*".to_string()
    } else if more {
        format!("{} + {} more...", hosts.join(","), rules.len() - MAX)
    } else {
        hosts.join(",")
    };
    let ports = if items(ing, "/spec/tls").is_empty() {
        "80"
    } else {
        "80, 443"
    };
    vec![
        name(ing).into(),
        class.into(),
        hosts.into(),
        load_balancer_ingress(ing, "/status/loadBalancer/ingress")
            .join(",")
            .into(),
        ports.into(),
        age(ing),
    ]
}
