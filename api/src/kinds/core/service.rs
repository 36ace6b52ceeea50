//! Service (core/v1): a stable address for a set of pods.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::error::FieldError;
use crate::kinds::{ConnectTo, Kind, NameRule};
use crate::printers::values::{
    age, format_labels, int, items, load_balancer_ingress, name, or_none, scalar_text, str_or, text,
};
use crate::printers::{age_col, col, name_col, wide, Cell, TableColumn};
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
    fn connect_to(&self, subresource: &str) -> Option<ConnectTo> {
        (subresource == "proxy").then_some(ConnectTo::ServiceProxy)
    }

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

    fn table_columns(&self) -> Vec<TableColumn> {
        vec![
            name_col(),
            col("Type", "string", D_SVC_TYPE),
            col("Cluster-IP", "string", D_SVC_CLUSTER_IP),
            col("External-IP", "string", D_SVC_EXTERNAL_IPS),
            col("Port(s)", "string", D_SVC_PORTS),
            age_col(),
            wide("Selector", "string", D_SVC_SELECTOR),
        ]
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        cells(object)
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

const D_SVC_TYPE: &str = "type determines how the Service is exposed. Defaults to ClusterIP. Valid options are ExternalName, ClusterIP, NodePort, and LoadBalancer. \"ClusterIP\" allocates a cluster-internal IP address for load-balancing to endpoints. Endpoints are determined by the selector or if that is not specified, by manual construction of an Endpoints object or EndpointSlice objects. If clusterIP is \"None\", no virtual IP is allocated and the endpoints are published as a set of endpoints rather than a virtual IP. \"NodePort\" builds on ClusterIP and allocates a port on every node which routes to the same endpoints as the clusterIP. \"LoadBalancer\" builds on NodePort and creates an external load-balancer (if supported in the current cloud) which routes to the same endpoints as the clusterIP. \"ExternalName\" aliases this service to the specified externalName. Several other fields do not apply to ExternalName services. More info: https://kubernetes.io/docs/concepts/services-networking/service/#publishing-services-service-types";
const D_SVC_CLUSTER_IP: &str = "clusterIP is the IP address of the service and is usually assigned randomly. If an address is specified manually, is in-range (as per system configuration), and is not in use, it will be allocated to the service; otherwise creation of the service will fail. This field may not be changed through updates unless the type field is also being changed to ExternalName (which requires this field to be blank) or the type field is being changed from ExternalName (in which case this field may optionally be specified, as describe above).  Valid values are \"None\", empty string (\"\"), or a valid IP address. Setting this to \"None\" makes a \"headless service\" (no virtual IP), which is useful when direct endpoint connections are preferred and proxying is not required.  Only applies to types ClusterIP, NodePort, and LoadBalancer. If this field is specified when creating a Service of type ExternalName, creation will fail. This field will be wiped when updating a Service to type ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies";
const D_SVC_EXTERNAL_IPS: &str = "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.  These IPs are not managed by Kubernetes.  The user is responsible for ensuring that traffic arrives at a node with this IP.  A common example is external load-balancers that are not part of the Kubernetes system.";
const D_SVC_PORTS: &str = "The list of ports that are exposed by this service. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies";
const D_SVC_SELECTOR: &str = "Route service traffic to pods with label keys and values matching this selector. If empty or not present, the service is assumed to have an external process managing its endpoints, which Kubernetes will not modify. Only applies to types ClusterIP, NodePort, and LoadBalancer. Ignored if type is ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/";

/// The EXTERNAL-IP cell, as upstream's getServiceExternalIP.
fn external_ip(svc: &Value) -> String {
    let external_ips: Vec<String> = items(svc, "/spec/externalIPs")
        .iter()
        .map(scalar_text)
        .collect();
    match str_or(svc, "/spec/type", "ClusterIP") {
        "ClusterIP" | "NodePort" => or_none(external_ips.join(",")),
        "LoadBalancer" => {
            let mut all = load_balancer_ingress(svc, "/status/loadBalancer/ingress");
            if all.is_empty() && external_ips.is_empty() {
                return "<pending>".to_string();
            }
            all.extend(external_ips);
            all.join(",")
        }
        "ExternalName" => text(svc, "/spec/externalName").to_string(),
        _ => "<unknown>".to_string(),
    }
}

fn cells(svc: &Value) -> Vec<Cell> {
    let cluster_ip = match items(svc, "/spec/clusterIPs").first() {
        Some(ip) => scalar_text(ip),
        None => text(svc, "/spec/clusterIP").to_string(),
    };
    let ports: Vec<String> = items(svc, "/spec/ports")
        .iter()
        .map(|p| {
            let port = int(p, "/port");
            let protocol = str_or(p, "/protocol", "TCP");
            match int(p, "/nodePort") {
                node_port if node_port > 0 => format!("{port}:{node_port}/{protocol}"),
                _ => format!("{port}/{protocol}"),
            }
        })
        .collect();
    vec![
        name(svc).into(),
        str_or(svc, "/spec/type", "ClusterIP").into(),
        or_none(cluster_ip).into(),
        external_ip(svc).into(),
        or_none(ports.join(",")).into(),
        age(svc),
        format_labels(svc, "/spec/selector").into(),
    ]
}
