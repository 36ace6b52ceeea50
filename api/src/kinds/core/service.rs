//! Service (core/v1): a stable address for a set of pods.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::error::FieldError;
use crate::kinds::{Kind, NameRule};
use crate::printers::Printer;
use crate::registry::ResourceDef;
use crate::validate::object_meta;
use crate::validate::quantity::Quantity;

pub struct Service;

pub fn resources() -> Vec<ResourceDef> {
    vec![
        ResourceDef::new("", "v1", "services", "Service", true, Arc::new(Service))
            .short_names(&["svc"])
            .categories(&["all"])
            .subresources(&["proxy", "status"])
            .returns_deleted_object()
            .storage_segment("services/specs"),
    ]
}

impl Kind for Service {
    fn quota_usage(&self, object: &Value) -> Vec<(String, Quantity)> {
        let spec = object.get("spec").unwrap_or(&Value::Null);
        let ports = spec
            .get("ports")
            .and_then(Value::as_array)
            .map_or(0, Vec::len) as i64;
        let mut usage = vec![("services".to_string(), Quantity::count(1))];
        match spec.get("type").and_then(Value::as_str) {
            Some("NodePort") => {
                usage.push(("services.nodeports".into(), Quantity::count(ports)));
            }
            Some("LoadBalancer") => {
                usage.push(("services.loadbalancers".into(), Quantity::count(1)));
                let allocates = spec
                    .get("allocateLoadBalancerNodePorts")
                    .and_then(Value::as_bool)
                    != Some(false);
                usage.push((
                    "services.nodeports".into(),
                    Quantity::count(if allocates { ports } else { 0 }),
                ));
            }
            _ => {}
        }
        usage
    }

    fn quota_charges_updates(&self) -> bool {
        true
    }

    fn prepare_for_create(&self, object: &mut Value) {
        Self::default_fields(object);
    }

    fn prepare_for_update(&self, object: &mut Value, _old: &Value) {
        Self::default_fields(object);
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        Self::validate(object)
    }

    fn validate_update(&self, object: &Value, _old: &Value) -> Vec<FieldError> {
        Self::validate(object)
    }

    fn allocates_service_addresses(&self) -> bool {
        true
    }

    fn name_rule(&self) -> NameRule {
        NameRule::Dns1035Label
    }

    fn empty_status(&self) -> Value {
        json!({"loadBalancer": {}})
    }

    fn printer(&self) -> Printer {
        Printer::Service
    }
}

/// Upstream's defaults (type, session affinity, traffic policy, port
/// protocol and targetPort) and the checks its strategy makes.
impl Service {
    fn default_fields(object: &mut Value) {
        let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) else {
            return;
        };
        let service_type = spec
            .entry("type")
            .or_insert_with(|| json!("ClusterIP"))
            .as_str()
            .unwrap_or("ClusterIP")
            .to_string();
        if service_type == "ExternalName" {
            return;
        }
        spec.entry("sessionAffinity")
            .or_insert_with(|| json!("None"));
        spec.entry("internalTrafficPolicy")
            .or_insert_with(|| json!("Cluster"));
        if matches!(service_type.as_str(), "NodePort" | "LoadBalancer") {
            spec.entry("externalTrafficPolicy")
                .or_insert_with(|| json!("Cluster"));
        }
        if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
            for port in ports.iter_mut().filter_map(Value::as_object_mut) {
                port.entry("protocol").or_insert_with(|| json!("TCP"));
                if let Some(number) = port.get("port").cloned() {
                    port.entry("targetPort").or_insert(number);
                }
            }
        }
    }

    fn validate(object: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let service_type = object
            .pointer("/spec/type")
            .and_then(Value::as_str)
            .unwrap_or("ClusterIP");
        if !matches!(
            service_type,
            "ClusterIP" | "NodePort" | "LoadBalancer" | "ExternalName"
        ) {
            errs.push(FieldError::not_supported(
                "spec.type",
                service_type,
                &["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"],
            ));
        }
        let ports = object.pointer("/spec/ports").and_then(Value::as_array);
        let headless = object.pointer("/spec/clusterIP").and_then(Value::as_str) == Some("None");
        if service_type != "ExternalName" && !headless && ports.is_none_or(|p| p.is_empty()) {
            errs.push(FieldError::required("spec.ports", ""));
        }
        if service_type == "ExternalName"
            && object
                .pointer("/spec/externalName")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .is_empty()
        {
            errs.push(FieldError::required("spec.externalName", ""));
        }
        // Upstream's validateServicePort: several ports need unique DNS-label names.
        let require_name = ports.is_some_and(|p| p.len() > 1);
        let mut names = std::collections::HashSet::new();
        for (i, port) in ports.into_iter().flatten().enumerate() {
            let name = port.get("name").and_then(Value::as_str).unwrap_or_default();
            let name_field = format!("spec.ports[{i}].name");
            if name.is_empty() {
                if require_name {
                    errs.push(FieldError::required(name_field, ""));
                }
            } else {
                for problem in object_meta::name_problems(NameRule::Label, name, false) {
                    errs.push(FieldError::invalid(name_field.clone(), name, &problem));
                }
                if !names.insert(name) {
                    errs.push(FieldError::duplicate(name_field, name));
                }
            }
            let number = port.get("port").and_then(Value::as_i64).unwrap_or(0);
            if !(1..=65535).contains(&number) {
                // Go prints the int32 unquoted.
                errs.push(FieldError::invalid_rendered(
                    format!("spec.ports[{i}].port"),
                    &number.to_string(),
                    "must be between 1 and 65535, inclusive",
                ));
            }
        }
        errs
    }
}
