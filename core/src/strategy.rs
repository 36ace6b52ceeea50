//! Per-kind behaviour. The pipeline calls a kind's [`Strategy`] at fixed
//! points (prepare, validate) and otherwise treats every kind the same.

use base64::Engine as _;
use serde_json::{json, Map, Value};

use crate::error::FieldError;
use crate::validation;

/// Which name format a kind accepts, as upstream's ValidateNameFunc choices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameRule {
    /// RFC 1123 subdomain (most kinds).
    Subdomain,
    /// RFC 1123 label (namespaces).
    Label,
    /// RFC 1035 label (services: must start with a letter).
    Dns1035Label,
    /// Any string usable as a URL path segment (RBAC kinds).
    PathSegment,
}

pub trait Strategy: Send + Sync {
    fn name_rule(&self) -> NameRule {
        NameRule::Subdomain
    }

    /// Whether `metadata.generation` counts spec changes.
    fn tracks_generation(&self) -> bool {
        false
    }

    /// Clears or fills server-owned fields of a new object.
    fn prepare_for_create(&self, _object: &mut Value) {}

    /// Fills fields a new object takes from the user creating it.
    fn prepare_for_create_by(&self, _object: &mut Value, _user: &crate::auth::UserInfo) {}

    /// Whether a create may set status although the kind has a status
    /// subresource (nodes: the kubelet registers with its status).
    fn keeps_status_on_create(&self) -> bool {
        false
    }

    /// Carries server-owned fields over from the stored object.
    fn prepare_for_update(&self, _object: &mut Value, _old: &Value) {}

    /// Kind-specific validation of the whole object (metadata is validated by the pipeline).
    fn validate(&self, _object: &Value) -> Vec<FieldError> {
        Vec::new()
    }

    /// Whether kind-specific finalizers (beyond `metadata.finalizers`) are
    /// done, so a delete may remove the object.
    fn finalizers_done(&self, _object: &Value) -> bool {
        true
    }

    /// Marks an object whose delete has to wait for finalizers.
    fn prepare_for_delete(&self, _object: &mut Value) {}

    /// Whether objects of this kind hold ClusterIPs and NodePorts.
    fn allocates_service_addresses(&self) -> bool {
        false
    }
}

/// Services: upstream's defaults (type, session affinity, traffic policy,
/// port protocol and targetPort) and address allocation.
pub struct ServiceStrategy;

impl ServiceStrategy {
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
}

impl Strategy for ServiceStrategy {
    fn name_rule(&self) -> NameRule {
        NameRule::Dns1035Label
    }

    fn prepare_for_create(&self, object: &mut Value) {
        Self::default_fields(object);
    }

    fn prepare_for_update(&self, object: &mut Value, _old: &Value) {
        Self::default_fields(object);
    }

    fn validate(&self, object: &Value) -> Vec<FieldError> {
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
                for problem in validation::name_problems(NameRule::Label, name, false) {
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

    fn allocates_service_addresses(&self) -> bool {
        true
    }
}

/// The status a new object of a kind with a status subresource starts
/// with: upstream clears it to the Go zero value, whose JSON keeps the
/// fields that have no `omitempty`.
pub fn empty_status(group: &str, kind: &str) -> Value {
    match (group, kind) {
        ("", "Service") | ("networking.k8s.io", "Ingress") => json!({"loadBalancer": {}}),
        ("", "ReplicationController") | ("apps", "ReplicaSet") => json!({"replicas": 0}),
        ("apps", "StatefulSet") => json!({"replicas": 0, "availableReplicas": 0}),
        ("apps", "DaemonSet") => json!({
            "currentNumberScheduled": 0,
            "numberMisscheduled": 0,
            "desiredNumberScheduled": 0,
            "numberReady": 0,
        }),
        ("policy", "PodDisruptionBudget") => json!({
            "disruptionsAllowed": 0,
            "currentHealthy": 0,
            "desiredHealthy": 0,
            "expectedPods": 0,
        }),
        ("autoscaling", "HorizontalPodAutoscaler") => json!({"desiredReplicas": 0}),
        ("storage.k8s.io", "VolumeAttachment") => json!({"attached": false}),
        _ => json!({}),
    }
}

/// CertificateSigningRequests record who asked (upstream's
/// PrepareForCreate) and can never be created approved.
pub struct CertificateSigningRequestStrategy;

impl Strategy for CertificateSigningRequestStrategy {
    fn prepare_for_create_by(&self, object: &mut Value, user: &crate::auth::UserInfo) {
        let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) else {
            return;
        };
        for field in ["username", "uid", "groups", "extra"] {
            spec.remove(field);
        }
        spec.insert("username".into(), json!(user.name));
        if !user.groups.is_empty() {
            spec.insert("groups".into(), json!(user.groups));
        }
    }
}

/// Nodes register with their status, and carry both spellings of their pod
/// CIDRs (upstream's v1 conversion fills one from the other).
pub struct NodeStrategy;

impl NodeStrategy {
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

impl Strategy for NodeStrategy {
    fn keeps_status_on_create(&self) -> bool {
        true
    }

    fn prepare_for_create(&self, object: &mut Value) {
        Self::sync_pod_cidrs(object);
    }

    fn prepare_for_update(&self, object: &mut Value, _old: &Value) {
        Self::sync_pod_cidrs(object);
    }
}

/// Behaviour shared by kinds that need nothing beyond their name rule.
pub struct GenericStrategy {
    pub name_rule: NameRule,
    pub tracks_generation: bool,
}

impl Strategy for GenericStrategy {
    fn name_rule(&self) -> NameRule {
        self.name_rule
    }

    fn tracks_generation(&self) -> bool {
        self.tracks_generation
    }
}

/// Pods start Pending with their QoS class, as upstream's pod strategy sets
/// the status of a new pod (the kubelet writes it from then on).
pub struct PodStrategy;

impl Strategy for PodStrategy {
    fn prepare_for_create(&self, object: &mut Value) {
        let qos_class = qos_class(object.get("spec").unwrap_or(&Value::Null));
        let mut status = json!({"phase": "Pending", "qosClass": qos_class});
        let gated = object
            .pointer("/spec/schedulingGates")
            .and_then(Value::as_array)
            .is_some_and(|gates| !gates.is_empty());
        if gated {
            status["conditions"] = json!([{
                "type": "PodScheduled",
                "status": "False",
                "reason": "SchedulingGated",
                "message": "Scheduling is blocked due to non-empty scheduling gates",
                "lastProbeTime": null,
                "lastTransitionTime": null,
            }]);
        }
        if let Some(obj) = object.as_object_mut() {
            obj.insert("status".into(), status);
        }
    }
}

/// What `pods/<name>/resize` writes (upstream's dropNonResizeUpdates):
/// `old` with the resources and resizePolicy of each container, and of
/// each restartable init container (sidecar), taken from the container of
/// the same name in `new`; nothing else.
pub(crate) fn pod_resized(old: &Value, new: &Value) -> Value {
    let mut updated = old.clone();
    for list in ["containers", "initContainers"] {
        let wanted = new
            .pointer(&format!("/spec/{list}"))
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let Some(containers) = updated
            .pointer_mut(&format!("/spec/{list}"))
            .and_then(Value::as_array_mut)
        else {
            continue;
        };
        let resizable = |c: &Value| list == "containers" || c["restartPolicy"] == "Always";
        for ctr in containers.iter_mut().filter(|c| resizable(c)) {
            let Some(source) = wanted.iter().find(|c| c.get("name") == ctr.get("name")) else {
                continue;
            };
            let Some(fields) = ctr.as_object_mut() else {
                continue;
            };
            for field in ["resources", "resizePolicy"] {
                match source.get(field) {
                    Some(value) => fields.insert(field.to_string(), value.clone()),
                    None => fields.shift_remove(field),
                };
            }
        }
    }
    updated
}

/// Upstream's GetPodQOS over cpu and memory of the (init) containers:
/// BestEffort without any request or limit, Guaranteed when every container
/// limits both and requests what it limits, Burstable otherwise. Requests
/// and limits are compared per container as written (defaulting has copied
/// limits into missing requests); upstream compares the sums, which only
/// differs for equal amounts spelled differently.
pub(crate) fn qos_class(spec: &Value) -> &'static str {
    const COMPUTE: [&str; 2] = ["cpu", "memory"];
    let containers = ["containers", "initContainers"]
        .into_iter()
        .filter_map(|field| spec.get(field).and_then(Value::as_array))
        .flatten();
    // Malformed quantities do not count as zero; validation rejects them.
    let is_zero = |q: &Value| crate::validate::quantity::from_json(q).is_ok_and(|q| q.is_zero());
    let mut any = false;
    let mut guaranteed = true;
    for container in containers {
        let resources = |kind: &str| {
            container
                .pointer(&format!("/resources/{kind}"))
                .and_then(Value::as_object)
        };
        let (requests, limits) = (resources("requests"), resources("limits"));
        for name in COMPUTE {
            let request = requests.and_then(|r| r.get(name)).filter(|q| !is_zero(q));
            let limit = limits.and_then(|l| l.get(name)).filter(|q| !is_zero(q));
            any |= request.is_some() || limit.is_some();
            if limit.is_none() || request.is_some_and(|r| Some(r) != limit) {
                guaranteed = false;
            }
        }
    }
    match (any, guaranteed) {
        (false, _) => "BestEffort",
        (true, true) => "Guaranteed",
        (true, false) => "Burstable",
    }
}

/// Jobs: upstream's job strategy generates the selector and template labels
/// (`batch.kubernetes.io/controller-uid`, `job-name`) from the new Job's uid
/// unless the client asked for a manual selector.
pub struct JobStrategy;

impl Strategy for JobStrategy {
    fn tracks_generation(&self) -> bool {
        true
    }

    fn prepare_for_create(&self, object: &mut Value) {
        let uid = object
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        crate::defaults::generate_job_selector(object, &uid);
    }
}

/// Namespaces start Active with the "kubernetes" finalizer, as upstream's
/// namespace strategy sets them.
pub struct NamespaceStrategy;

impl Strategy for NamespaceStrategy {
    fn name_rule(&self) -> NameRule {
        NameRule::Label
    }

    fn prepare_for_create(&self, object: &mut Value) {
        let Some(obj) = object.as_object_mut() else {
            return;
        };
        // Upstream keeps the finalizers a client asked for and makes sure
        // "kubernetes" is among them.
        let spec = obj.entry("spec").or_insert_with(|| json!({}));
        if !spec.is_object() {
            *spec = json!({});
        }
        if let Some(spec) = spec.as_object_mut() {
            let finalizers = spec.entry("finalizers").or_insert_with(|| json!([]));
            if !finalizers.is_array() {
                *finalizers = json!([]);
            }
            if let Some(list) = finalizers.as_array_mut() {
                if !list.iter().any(|f| f == "kubernetes") {
                    list.push(json!("kubernetes"));
                }
            }
        }
        obj.insert("status".into(), json!({"phase": "Active"}));
        label_with_own_name(object);
    }

    fn finalizers_done(&self, object: &Value) -> bool {
        object
            .pointer("/spec/finalizers")
            .and_then(Value::as_array)
            .is_none_or(|f| f.is_empty())
    }

    fn prepare_for_delete(&self, object: &mut Value) {
        if let Some(obj) = object.as_object_mut() {
            obj.insert("status".into(), json!({"phase": "Terminating"}));
        }
    }

    fn prepare_for_update(&self, object: &mut Value, old: &Value) {
        // spec.finalizers and status belong to the finalize and status subresources.
        if let Some(obj) = object.as_object_mut() {
            for field in ["spec", "status"] {
                match old.get(field) {
                    Some(v) => obj.insert(field.into(), v.clone()),
                    None => obj.remove(field),
                };
            }
        }
        label_with_own_name(object);
    }
}

/// Every namespace carries its own name as the `kubernetes.io/metadata.name`
/// label, as upstream sets it on create and keeps it on update.
fn label_with_own_name(object: &mut Value) {
    let name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .map(str::to_string);
    if let (Some(name), Some(meta)) = (
        name,
        object.get_mut("metadata").and_then(Value::as_object_mut),
    ) {
        let labels = meta
            .entry("labels")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(labels) = labels.as_object_mut() {
            labels.insert("kubernetes.io/metadata.name".into(), Value::String(name));
        }
    }
}

/// Secrets: `stringData` is write-only and folds into base64 `data`; `type`
/// defaults to Opaque; `data` values must be base64 and keys valid.
pub struct SecretStrategy;

impl SecretStrategy {
    fn normalize(object: &mut Value) {
        let Some(obj) = object.as_object_mut() else {
            return;
        };
        if let Some(Value::Object(string_data)) = obj.remove("stringData") {
            let data = obj
                .entry("data")
                .or_insert_with(|| Value::Object(Map::new()));
            if !data.is_object() {
                *data = Value::Object(Map::new());
            }
            if let Some(data) = data.as_object_mut() {
                for (k, v) in string_data {
                    let text = v.as_str().unwrap_or_default().to_string();
                    data.insert(
                        k,
                        Value::String(base64::engine::general_purpose::STANDARD.encode(text)),
                    );
                }
            }
        }
        if obj
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .is_empty()
        {
            obj.insert("type".into(), Value::String("Opaque".into()));
        }
    }
}

impl Strategy for SecretStrategy {
    fn prepare_for_create(&self, object: &mut Value) {
        Self::normalize(object);
    }

    fn prepare_for_update(&self, object: &mut Value, _old: &Value) {
        Self::normalize(object);
    }

    fn validate(&self, object: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        if let Some(data) = object.get("data") {
            match data.as_object() {
                Some(map) => {
                    for (key, value) in map {
                        let field = format!("data[{key}]");
                        errs.extend(validation::config_map_key(&field, key));
                        let valid = value
                            .as_str()
                            .map(|s| base64::engine::general_purpose::STANDARD.decode(s).is_ok())
                            .unwrap_or(value.is_null());
                        if !valid {
                            errs.push(FieldError::invalid(
                                field,
                                "<secret contents redacted>",
                                "must be a base64-encoded string",
                            ));
                        }
                    }
                }
                None if data.is_null() => {}
                None => errs.push(FieldError::invalid("data", "", "must be a map")),
            }
        }
        errs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_string_data_folds_into_data() {
        let mut s = json!({"stringData": {"user": "admin"}});
        SecretStrategy.prepare_for_create(&mut s);
        assert_eq!(s["data"]["user"], "YWRtaW4=");
        assert_eq!(s["type"], "Opaque");
        assert!(s.get("stringData").is_none());
    }

    #[test]
    fn secret_data_must_be_base64() {
        let errs = SecretStrategy.validate(&json!({"data": {"k": "not base64!"}}));
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].field, "data[k]");
    }

    #[test]
    fn pods_start_pending_with_their_qos_class() {
        let mut pod = json!({"spec": {"containers": [{"name": "c", "image": "nginx"}]}});
        PodStrategy.prepare_for_create(&mut pod);
        assert_eq!(
            pod["status"],
            json!({"phase": "Pending", "qosClass": "BestEffort"})
        );
        let limited = |requests: Value| {
            json!({"containers": [{"name": "c", "resources": {
                "limits": {"cpu": "500m", "memory": "128Mi"},
                "requests": requests,
            }}]})
        };
        assert_eq!(
            qos_class(&limited(json!({"cpu": "500m", "memory": "128Mi"}))),
            "Guaranteed"
        );
        assert_eq!(
            qos_class(&limited(json!({"cpu": "100m", "memory": "128Mi"}))),
            "Burstable"
        );
        assert_eq!(
            qos_class(&json!({"containers": [{"resources": {"requests": {"cpu": "0"}}}]})),
            "BestEffort"
        );
    }

    #[test]
    fn namespace_starts_active_with_finalizer() {
        let mut ns = json!({"metadata": {"name": "demo"}});
        NamespaceStrategy.prepare_for_create(&mut ns);
        assert_eq!(ns["status"]["phase"], "Active");
        assert_eq!(ns["spec"]["finalizers"][0], "kubernetes");
        assert_eq!(
            ns["metadata"]["labels"]["kubernetes.io/metadata.name"],
            "demo"
        );
    }
}
