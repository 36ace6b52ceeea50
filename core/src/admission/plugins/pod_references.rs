//! What a pod spec references, where upstream's VisitPodSecretNames and
//! VisitPodConfigmapNames look: the objects a mirror pod (ServiceAccount)
//! or a node's pod (NodeRestriction) may not name. A leaf both share.

use serde_json::Value;

use crate::object::items_at;

const CONTAINER_LISTS: [&str; 3] = ["/initContainers", "/containers", "/ephemeralContainers"];

fn named(value: Option<&Value>) -> bool {
    value.and_then(Value::as_str).is_some_and(|n| !n.is_empty())
}

fn containers(spec: &Value) -> impl Iterator<Item = &Value> {
    CONTAINER_LISTS
        .into_iter()
        .flat_map(move |list| items_at(spec, list))
}

fn projected_sources(volume: &Value) -> &[Value] {
    items_at(volume, "/projected/sources")
}

/// Whether any container's env or envFrom names one at `env_pointer` /
/// `env_from_pointer`.
fn containers_reference(spec: &Value, env_pointer: &str, env_from_pointer: &str) -> bool {
    containers(spec).any(|container| {
        items_at(container, "/env")
            .iter()
            .any(|e| named(e.pointer(env_pointer)))
            || items_at(container, "/envFrom")
                .iter()
                .any(|e| named(e.pointer(env_from_pointer)))
    })
}

/// Pull secrets, env and envFrom of every container, and volumes
/// (secret, projected, and the volume plugins' secret references).
pub(super) fn references_secrets(spec: &Value) -> bool {
    if items_at(spec, "/imagePullSecrets")
        .iter()
        .any(|s| named(s.get("name")))
    {
        return true;
    }
    if containers_reference(spec, "/valueFrom/secretKeyRef/name", "/secretRef/name") {
        return true;
    }
    items_at(spec, "/volumes").iter().any(|volume| {
        named(volume.pointer("/secret/secretName"))
            || projected_sources(volume)
                .iter()
                .any(|s| named(s.pointer("/secret/name")))
            || [
                "/azureFile/secretName",
                "/cephfs/secretRef/name",
                "/cinder/secretRef/name",
                "/flexVolume/secretRef/name",
                "/iscsi/secretRef/name",
                "/rbd/secretRef/name",
                "/scaleIO/secretRef/name",
                "/storageos/secretRef/name",
                "/csi/nodePublishSecretRef/name",
            ]
            .iter()
            .any(|pointer| named(volume.pointer(pointer)))
    })
}

/// env and envFrom of every container, configMap volumes and projected
/// sources.
pub(super) fn references_config_maps(spec: &Value) -> bool {
    containers_reference(
        spec,
        "/valueFrom/configMapKeyRef/name",
        "/configMapRef/name",
    ) || items_at(spec, "/volumes").iter().any(|volume| {
        named(volume.pointer("/configMap/name"))
            || projected_sources(volume)
                .iter()
                .any(|s| named(s.pointer("/configMap/name")))
    })
}

/// Projected clusterTrustBundle sources.
pub(super) fn references_cluster_trust_bundles(spec: &Value) -> bool {
    items_at(spec, "/volumes").iter().any(|volume| {
        projected_sources(volume)
            .iter()
            .any(|s| s.get("clusterTrustBundle").is_some_and(|b| !b.is_null()))
    })
}

/// persistentVolumeClaim volumes (ephemeral volumes are not counted).
pub(super) fn references_claims(spec: &Value) -> bool {
    items_at(spec, "/volumes").iter().any(|volume| {
        volume
            .get("persistentVolumeClaim")
            .is_some_and(|c| !c.is_null())
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn references_are_found_where_upstream_looks() {
        let env_secret = json!({"containers": [{"env": [{"name": "A", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]}]});
        assert!(references_secrets(&env_secret));
        assert!(!references_config_maps(&env_secret));
        let pull = json!({"imagePullSecrets": [{"name": "reg"}]});
        assert!(references_secrets(&pull));
        let init_config =
            json!({"initContainers": [{"envFrom": [{"configMapRef": {"name": "c"}}]}]});
        assert!(references_config_maps(&init_config));
        let projected = json!({"volumes": [{"name": "v", "projected": {"sources": [
            {"configMap": {"name": "c"}}, {"clusterTrustBundle": {"name": "b", "path": "p"}}]}}]});
        assert!(references_config_maps(&projected));
        assert!(references_cluster_trust_bundles(&projected));
        assert!(!references_secrets(&projected));
        let claim =
            json!({"volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]});
        assert!(references_claims(&claim));
        let csi = json!({"volumes": [{"name": "x", "csi": {"driver": "d", "nodePublishSecretRef": {"name": "s"}}}]});
        assert!(references_secrets(&csi));
        assert!(!references_claims(
            &json!({"volumes": [{"name": "e", "ephemeral": {}}]})
        ));
    }
}
