//! The defaults of a pod template and its PodSpec, which Pods and every
//! kind that embeds a template share: pkg/apis/core/v1/defaults.go, the
//! `+default` tags of k8s.io/api/core/v1/types.go, and the call graph of
//! zz_generated.defaults.go beneath a PodSpec.

use serde_json::{json, Map, Value};

use super::volumes::{
    azure_disk_defaults, persistent_volume_claim_spec, rbd_defaults, scale_io_defaults,
};
use super::{
    child, default_pointer, default_zero, each_item, ensure_child, is_zero, str_field, Object,
};

/// A PodTemplateSpec: its metadata as upstream encodes it and its PodSpec's defaults.
pub(crate) fn pod_template_spec(template: &mut Object) {
    // ObjectMeta is a non-pointer struct in PodTemplateSpec and its zero
    // CreationTimestamp encodes as null, so every stored template shows
    // `metadata: {creationTimestamp: null}` in 1.32.
    if let Some(meta) = ensure_child(template, "metadata") {
        meta.entry("creationTimestamp").or_insert(Value::Null);
    }
    if let Some(spec) = ensure_child(template, "spec") {
        pod_spec(spec);
    }
}

/// The non-pointer `template` of a workload spec (Deployment, ReplicaSet,
/// StatefulSet, DaemonSet).
pub(crate) fn workload_template(spec: &mut Object) {
    if let Some(template) = ensure_child(spec, "template") {
        pod_template_spec(template);
    }
}

/// `SetDefaults_PodSpec` and everything zz_generated calls beneath a PodSpec.
pub(crate) fn pod_spec(spec: &mut Object) {
    default_zero(spec, "dnsPolicy", json!("ClusterFirst"));
    default_zero(spec, "restartPolicy", json!("Always"));
    default_pointer(spec, "securityContext", json!({}));
    default_pointer(spec, "terminationGracePeriodSeconds", json!(30));
    default_zero(spec, "schedulerName", json!("default-scheduler"));
    deprecated_service_account(spec);
    each_item(spec, "volumes", volume);
    for key in ["initContainers", "containers", "ephemeralContainers"] {
        each_item(spec, key, container);
    }
}

/// The v1 conversion of a PodSpec: `serviceAccountName` falls back to the
/// deprecated `serviceAccount`, which always repeats it when written out.
fn deprecated_service_account(spec: &mut Object) {
    let named = |key: &str| {
        spec.get(key)
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .map(str::to_string)
    };
    match named("serviceAccountName").or_else(|| named("serviceAccount")) {
        Some(name) => {
            spec.insert("serviceAccountName".into(), json!(name));
            spec.insert("serviceAccount".into(), json!(name));
        }
        None => {
            spec.remove("serviceAccount");
        }
    }
}

/// `SetDefaults_Volume` (no source → emptyDir) and each source's defaults.
fn volume(volume: &mut Object) {
    let has_source = volume
        .iter()
        .any(|(key, value)| key != "name" && !value.is_null());
    if !has_source {
        volume.insert("emptyDir".into(), json!({}));
    }
    if let Some(host_path) = child(volume, "hostPath") {
        default_pointer(host_path, "type", json!(""));
    }
    for key in ["secret", "configMap"] {
        if let Some(source) = child(volume, key) {
            default_pointer(source, "defaultMode", json!(420));
        }
    }
    if let Some(iscsi) = child(volume, "iscsi") {
        default_zero(iscsi, "iscsiInterface", json!("default"));
    }
    if let Some(rbd) = child(volume, "rbd") {
        rbd_defaults(rbd);
    }
    if let Some(downward_api) = child(volume, "downwardAPI") {
        default_pointer(downward_api, "defaultMode", json!(420));
        each_item(downward_api, "items", downward_api_file);
    }
    if let Some(azure_disk) = child(volume, "azureDisk") {
        azure_disk_defaults(azure_disk);
    }
    if let Some(projected) = child(volume, "projected") {
        default_pointer(projected, "defaultMode", json!(420));
        each_item(projected, "sources", |source| {
            if let Some(downward_api) = child(source, "downwardAPI") {
                each_item(downward_api, "items", downward_api_file);
            }
            if let Some(token) = child(source, "serviceAccountToken") {
                default_pointer(token, "expirationSeconds", json!(3600));
            }
        });
    }
    if let Some(scale_io) = child(volume, "scaleIO") {
        scale_io_defaults(scale_io);
    }
    if let Some(template) =
        child(volume, "ephemeral").and_then(|eph| child(eph, "volumeClaimTemplate"))
    {
        if let Some(spec) = ensure_child(template, "spec") {
            persistent_volume_claim_spec(spec);
        }
    }
}

fn downward_api_file(file: &mut Object) {
    if let Some(field_ref) = child(file, "fieldRef") {
        object_field_selector(field_ref);
    }
}

/// `SetDefaults_ObjectFieldSelector`.
fn object_field_selector(selector: &mut Object) {
    default_zero(selector, "apiVersion", json!("v1"));
}

/// `SetDefaults_Container` and the defaults of what a container holds.
fn container(container: &mut Object) {
    if is_zero(container, "imagePullPolicy") {
        let policy = image_pull_policy(str_field(container, "image"));
        container.insert("imagePullPolicy".into(), json!(policy));
    }
    default_zero(
        container,
        "terminationMessagePath",
        json!("/dev/termination-log"),
    );
    default_zero(container, "terminationMessagePolicy", json!("File"));
    each_item(container, "ports", |port| {
        default_zero(port, "protocol", json!("TCP"));
    });
    each_item(container, "env", |env| {
        if let Some(field_ref) = child(env, "valueFrom").and_then(|from| child(from, "fieldRef")) {
            object_field_selector(field_ref);
        }
    });
    // ResourceRequirements is a non-pointer struct: upstream always encodes it.
    container
        .entry("resources")
        .or_insert_with(|| Value::Object(Map::new()));
    for key in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(probe) = child(container, key) {
            probe_defaults(probe);
        }
    }
    if let Some(lifecycle) = child(container, "lifecycle") {
        for key in ["postStart", "preStop"] {
            if let Some(http_get) = child(lifecycle, key).and_then(|h| child(h, "httpGet")) {
                http_get_action(http_get);
            }
        }
    }
}

/// `SetDefaults_Probe` plus its handler's defaults.
fn probe_defaults(probe: &mut Object) {
    default_zero(probe, "timeoutSeconds", json!(1));
    default_zero(probe, "periodSeconds", json!(10));
    default_zero(probe, "successThreshold", json!(1));
    default_zero(probe, "failureThreshold", json!(3));
    if let Some(http_get) = child(probe, "httpGet") {
        http_get_action(http_get);
    }
    if let Some(grpc) = child(probe, "grpc") {
        default_pointer(grpc, "service", json!(""));
    }
}

/// `SetDefaults_HTTPGetAction`.
fn http_get_action(action: &mut Object) {
    default_zero(action, "path", json!("/"));
    default_zero(action, "scheme", json!("HTTP"));
}

/// Always for the `latest` tag (explicit or implied by no tag and no digest),
/// IfNotPresent otherwise — including references upstream cannot parse, whose
/// tag it reads as empty.
fn image_pull_policy(image: &str) -> &'static str {
    if image_tag(image).as_deref() == Some("latest") {
        "Always"
    } else {
        "IfNotPresent"
    }
}

/// The tag `parsers.ParseImageName` finds in an image reference; `None` when
/// the reference does not parse.
fn image_tag(image: &str) -> Option<String> {
    if image.is_empty() || image.chars().any(char::is_whitespace) {
        return None;
    }
    let (name, digest) = match image.split_once('@') {
        Some((name, digest)) => (name, Some(digest)),
        None => (image, None),
    };
    let last_component_start = name.rfind('/').map_or(0, |i| i + 1);
    let (repository, tag) = match name[last_component_start..].rfind(':') {
        Some(colon) => {
            let split = last_component_start + colon;
            (&name[..split], Some(&name[split + 1..]))
        }
        None => (name, None),
    };
    if repository.is_empty() || tag == Some("") || digest == Some("") {
        return None;
    }
    // The domain may carry capitals; the repository path must be lowercase.
    let path = match repository.split_once('/') {
        Some((first, rest))
            if first.contains(['.', ':'])
                || first == "localhost"
                || first != first.to_lowercase() =>
        {
            rest
        }
        _ => repository,
    };
    if path != path.to_lowercase() {
        return None;
    }
    match (tag, digest) {
        (Some(tag), _) => Some(tag.to_string()),
        (None, Some(_)) => Some(String::new()),
        (None, None) => Some("latest".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_tags_as_upstream_parses_them() {
        assert_eq!(image_pull_policy("nginx"), "Always");
        assert_eq!(image_pull_policy("nginx:latest"), "Always");
        assert_eq!(image_pull_policy("nginx:1.27"), "IfNotPresent");
        assert_eq!(image_pull_policy("localhost:5000/app"), "Always");
        assert_eq!(image_pull_policy("localhost:5000/app:v1"), "IfNotPresent");
        assert_eq!(image_pull_policy("nginx@sha256:abc"), "IfNotPresent");
        assert_eq!(image_pull_policy("nginx:latest@sha256:abc"), "Always");
        assert_eq!(image_pull_policy("Registry.io/app"), "Always");
        assert_eq!(image_pull_policy("registry.io/App"), "IfNotPresent");
        assert_eq!(image_pull_policy(""), "IfNotPresent");
    }
}
