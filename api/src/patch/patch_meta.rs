//! Strategic-merge-patch metadata of the Kubernetes built-in types.
//!
//! Upstream declares how a field merges with the Go struct tags
//! `patchStrategy` and `patchMergeKey` (mirrored in the OpenAPI document as
//! `x-kubernetes-patch-strategy` / `x-kubernetes-patch-merge-key`). The
//! `k8s-openapi` schemas do not carry those extensions, so the facts are kept
//! here, keyed by OpenAPI definition name and JSON field name.
//!
//! A field that is absent from this table has no patch strategy: maps merge
//! key by key and lists are replaced as a whole. Several lists are
//! `+listType=map` for server-side apply without being merge lists for a
//! strategic merge patch (for example `ResourceRequirements.claims` or
//! `ResourceStatus.resources`); those are deliberately not listed.

/// How a field of a built-in type merges in a strategic merge patch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldPatchMeta {
    /// The Go tag's patchStrategy: "merge", "replace", "retainKeys" or "merge,retainKeys".
    pub strategy: &'static str,
    /// patchMergeKey, for lists of objects merged by key.
    pub merge_key: Option<&'static str>,
}

const fn merge_by(key: &'static str) -> FieldPatchMeta {
    FieldPatchMeta {
        strategy: "merge",
        merge_key: Some(key),
    }
}

const fn merge_retain_keys_by(key: &'static str) -> FieldPatchMeta {
    FieldPatchMeta {
        strategy: "merge,retainKeys",
        merge_key: Some(key),
    }
}

/// A list of scalars merged as an ordered set (e.g. `metadata.finalizers`).
const MERGE_SET: FieldPatchMeta = FieldPatchMeta {
    strategy: "merge",
    merge_key: None,
};

const RETAIN_KEYS: FieldPatchMeta = FieldPatchMeta {
    strategy: "retainKeys",
    merge_key: None,
};

const CORE: &str = "io.k8s.api.core.v1.";
const APPS: &str = "io.k8s.api.apps.v1.";
const META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.";

/// `definition` is the OpenAPI definition name, e.g. "io.k8s.api.core.v1.PodSpec",
/// `field` the JSON field name, e.g. "containers".
pub fn field_patch_meta(definition: &str, field: &str) -> Option<FieldPatchMeta> {
    if let Some(kind) = definition.strip_prefix(CORE) {
        return core_v1(kind, field);
    }
    if let Some(kind) = definition.strip_prefix(APPS) {
        return apps_v1(kind, field);
    }
    if let Some(kind) = definition.strip_prefix(META) {
        return match (kind, field) {
            ("ObjectMeta", "finalizers") => Some(MERGE_SET),
            ("ObjectMeta", "ownerReferences") => Some(merge_by("uid")),
            _ => None,
        };
    }
    other_groups(definition, field)
}

fn core_v1(kind: &str, field: &str) -> Option<FieldPatchMeta> {
    let meta = match (kind, field) {
        ("PodSpec", "volumes") => merge_retain_keys_by("name"),
        ("PodSpec", "initContainers" | "containers" | "ephemeralContainers") => merge_by("name"),
        ("PodSpec", "imagePullSecrets") => merge_by("name"),
        ("PodSpec", "hostAliases") => merge_by("ip"),
        ("PodSpec", "topologySpreadConstraints") => merge_by("topologyKey"),
        ("PodSpec", "schedulingGates") => merge_by("name"),
        ("PodSpec", "resourceClaims") => merge_retain_keys_by("name"),

        // EphemeralContainer inlines EphemeralContainerCommon, a field-for-field copy of Container.
        ("Container" | "EphemeralContainer", "ports") => merge_by("containerPort"),
        ("Container" | "EphemeralContainer", "env") => merge_by("name"),
        ("Container" | "EphemeralContainer", "volumeMounts") => merge_by("mountPath"),
        ("Container" | "EphemeralContainer", "volumeDevices") => merge_by("devicePath"),

        ("ContainerStatus", "volumeMounts") => merge_by("mountPath"),
        ("ContainerStatus", "allocatedResourcesStatus") => merge_by("name"),

        ("PodStatus", "conditions") => merge_by("type"),
        ("PodStatus", "podIPs" | "hostIPs") => merge_by("ip"),
        ("PodStatus", "resourceClaimStatuses") => merge_retain_keys_by("name"),

        ("ServiceSpec", "ports") => merge_by("port"),
        ("ServiceStatus", "conditions") => merge_by("type"),
        ("ServiceAccount", "secrets") => merge_by("name"),

        ("NodeSpec", "podCIDRs") => MERGE_SET,
        // Upstream warns that `type` is not unique enough for addresses, but
        // the tag is still merge-by-type and clients depend on it.
        ("NodeStatus", "conditions" | "addresses") => merge_by("type"),

        (
            "NamespaceStatus"
            | "PersistentVolumeClaimStatus"
            | "ReplicationControllerStatus"
            | "ComponentStatus",
            "conditions",
        ) => merge_by("type"),
        _ => return None,
    };
    Some(meta)
}

fn apps_v1(kind: &str, field: &str) -> Option<FieldPatchMeta> {
    match (kind, field) {
        ("DeploymentSpec", "strategy") => Some(RETAIN_KEYS),
        (
            "DeploymentStatus" | "DaemonSetStatus" | "ReplicaSetStatus" | "StatefulSetStatus",
            "conditions",
        ) => Some(merge_by("type")),
        _ => None,
    }
}

fn other_groups(definition: &str, field: &str) -> Option<FieldPatchMeta> {
    let meta = match (definition, field) {
        ("io.k8s.api.batch.v1.JobStatus", "conditions")
        | ("io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerStatus", "conditions")
        | ("io.k8s.api.policy.v1.PodDisruptionBudgetStatus", "conditions")
        | ("io.k8s.api.networking.v1.ServiceCIDRStatus", "conditions")
        | ("io.k8s.api.flowcontrol.v1.FlowSchemaStatus", "conditions")
        | ("io.k8s.api.flowcontrol.v1.PriorityLevelConfigurationStatus", "conditions")
        | ("io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceStatus", "conditions") => {
            merge_by("type")
        }

        ("io.k8s.api.admissionregistration.v1.MutatingWebhookConfiguration", "webhooks")
        | ("io.k8s.api.admissionregistration.v1.ValidatingWebhookConfiguration", "webhooks")
        | ("io.k8s.api.admissionregistration.v1.MutatingWebhook", "matchConditions")
        | ("io.k8s.api.admissionregistration.v1.ValidatingWebhook", "matchConditions")
        | (
            "io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicySpec",
            "matchConditions" | "variables",
        ) => merge_by("name"),

        ("io.k8s.api.storage.v1.CSINodeSpec", "drivers") => merge_by("name"),
        _ => return None,
    };
    Some(meta)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pod_spec_lists() {
        let containers = field_patch_meta("io.k8s.api.core.v1.PodSpec", "containers");
        assert_eq!(containers, Some(merge_by("name")));
        let volumes = field_patch_meta("io.k8s.api.core.v1.PodSpec", "volumes");
        assert_eq!(
            volumes,
            Some(FieldPatchMeta {
                strategy: "merge,retainKeys",
                merge_key: Some("name")
            })
        );
        assert_eq!(
            field_patch_meta("io.k8s.api.core.v1.PodSpec", "hostAliases"),
            Some(merge_by("ip"))
        );
        assert_eq!(
            field_patch_meta("io.k8s.api.core.v1.PodSpec", "tolerations"),
            None
        );
    }

    #[test]
    fn container_lists() {
        for def in [
            "io.k8s.api.core.v1.Container",
            "io.k8s.api.core.v1.EphemeralContainer",
        ] {
            assert_eq!(field_patch_meta(def, "env"), Some(merge_by("name")));
            assert_eq!(
                field_patch_meta(def, "ports"),
                Some(merge_by("containerPort"))
            );
            assert_eq!(
                field_patch_meta(def, "volumeMounts"),
                Some(merge_by("mountPath"))
            );
            assert_eq!(
                field_patch_meta(def, "volumeDevices"),
                Some(merge_by("devicePath"))
            );
            assert_eq!(field_patch_meta(def, "args"), None);
            assert_eq!(field_patch_meta(def, "envFrom"), None);
        }
    }

    #[test]
    fn metadata_and_apps() {
        let meta = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
        assert_eq!(field_patch_meta(meta, "finalizers"), Some(MERGE_SET));
        assert_eq!(
            field_patch_meta(meta, "ownerReferences"),
            Some(merge_by("uid"))
        );
        assert_eq!(field_patch_meta(meta, "labels"), None);
        assert_eq!(
            field_patch_meta("io.k8s.api.apps.v1.DeploymentSpec", "strategy"),
            Some(RETAIN_KEYS)
        );
        assert_eq!(
            field_patch_meta("io.k8s.api.apps.v1.DaemonSetSpec", "updateStrategy"),
            None
        );
        assert_eq!(
            field_patch_meta("io.k8s.api.core.v1.ServiceSpec", "ports"),
            Some(merge_by("port"))
        );
        assert_eq!(
            field_patch_meta("io.k8s.api.batch.v1.JobStatus", "conditions"),
            Some(merge_by("type"))
        );
    }
}
