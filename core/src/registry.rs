//! The resource registry: which group/version/resources exist, their names,
//! scope, verbs and the strategy that gives each kind its behaviour.
//!
//! Adding a kind is adding a [`ResourceDef`] (and, where the kind needs it, a
//! strategy); the pipeline does not change.

use std::collections::BTreeMap;
use std::sync::Arc;

use base64::Engine as _;
use sha2::{Digest, Sha256};

use crate::strategy::{self, Strategy};

/// The verbs of a resource that supports every generic operation.
pub const ALL_VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// Namespaces cannot be deleted as a collection (upstream serves no such verb).
const NAMESPACE_VERBS: &[&str] = &[
    "create", "delete", "get", "list", "patch", "update", "watch",
];

/// One served resource at one version.
pub struct ResourceDef {
    pub group: &'static str,
    pub version: &'static str,
    /// Plural, lowercase: the URL segment.
    pub resource: &'static str,
    pub kind: &'static str,
    pub singular: &'static str,
    pub short_names: &'static [&'static str],
    pub categories: &'static [&'static str],
    pub namespaced: bool,
    pub verbs: &'static [&'static str],
    /// Key segment under the storage prefix; upstream keeps a few historical
    /// names (nodes under "minions", services under "services/specs").
    pub storage_segment: &'static str,
    /// OpenAPI definition name of the kind, e.g. "io.k8s.api.apps.v1.Deployment".
    pub definition: &'static str,
    /// Field selectors beyond metadata.name and metadata.namespace.
    pub selectable_fields: &'static [&'static str],
    /// Whether an immediate delete answers with the deleted object (upstream's
    /// ReturnDeletedObject) rather than a Success Status.
    pub returns_deleted_object: bool,
    /// Served subresources: "status" (status written only through it) and
    /// "scale" (autoscaling/v1 Scale over spec.replicas).
    pub subresources: &'static [&'static str],
    pub strategy: Arc<dyn Strategy>,
}

impl ResourceDef {
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_string()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    pub fn list_kind(&self) -> String {
        format!("{}List", self.kind)
    }

    pub fn supports(&self, verb: &str) -> bool {
        self.verbs.contains(&verb)
    }

    pub fn has_subresource(&self, name: &str) -> bool {
        self.subresources.contains(&name)
    }

    /// Upstream's discovery storageVersionHash: base64 of the first 8 bytes of
    /// sha256("group/version/kind") of the storage version.
    pub fn storage_version_hash(&self) -> String {
        let digest = Sha256::digest(format!("{}/{}/{}", self.group, self.version, self.kind));
        base64::engine::general_purpose::STANDARD.encode(&digest[..8])
    }

    /// The storage key prefix of the collection, ending in '/': all namespaces
    /// when `namespace` is None.
    pub fn key_prefix(&self, storage_prefix: &str, namespace: Option<&str>) -> String {
        match (self.namespaced, namespace) {
            (true, Some(ns)) => format!("{storage_prefix}/{}/{ns}/", self.storage_segment),
            _ => format!("{storage_prefix}/{}/", self.storage_segment),
        }
    }

    pub fn key(&self, storage_prefix: &str, namespace: Option<&str>, name: &str) -> String {
        format!("{}{name}", self.key_prefix(storage_prefix, namespace))
    }
}

impl std::fmt::Debug for ResourceDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.api_version(), self.resource)
    }
}

/// All served resources, indexed for the lookups the pipeline makes.
pub struct Registry {
    resources: Vec<Arc<ResourceDef>>,
    by_gvr: BTreeMap<(String, String, String), Arc<ResourceDef>>,
}

/// A served group with its versions, preferred first.
#[derive(Debug, Clone)]
pub struct GroupInfo {
    pub name: String,
    pub versions: Vec<String>,
}

impl Registry {
    pub fn new(resources: Vec<ResourceDef>) -> Self {
        let resources: Vec<Arc<ResourceDef>> = resources.into_iter().map(Arc::new).collect();
        let by_gvr = resources
            .iter()
            .map(|r| {
                (
                    (
                        r.group.to_string(),
                        r.version.to_string(),
                        r.resource.to_string(),
                    ),
                    r.clone(),
                )
            })
            .collect();
        Self { resources, by_gvr }
    }

    /// The registry of everything Capstan serves.
    pub fn builtin() -> Self {
        Self::new(builtin_resources())
    }

    pub fn lookup(&self, group: &str, version: &str, resource: &str) -> Option<Arc<ResourceDef>> {
        self.by_gvr
            .get(&(group.to_string(), version.to_string(), resource.to_string()))
            .cloned()
    }

    pub fn resources(&self) -> &[Arc<ResourceDef>] {
        &self.resources
    }

    pub fn resources_in(&self, group: &str, version: &str) -> Vec<Arc<ResourceDef>> {
        self.resources
            .iter()
            .filter(|r| r.group == group && r.version == version)
            .cloned()
            .collect()
    }

    pub fn has_group_version(&self, group: &str, version: &str) -> bool {
        self.resources
            .iter()
            .any(|r| r.group == group && r.version == version)
    }

    /// Served groups in registration order; the core group ("") first.
    pub fn groups(&self) -> Vec<GroupInfo> {
        let mut groups: Vec<GroupInfo> = Vec::new();
        for r in &self.resources {
            match groups.iter_mut().find(|g| g.name == r.group) {
                Some(g) => {
                    if !g.versions.iter().any(|v| v == r.version) {
                        g.versions.push(r.version.to_string());
                    }
                }
                None => groups.push(GroupInfo {
                    name: r.group.to_string(),
                    versions: vec![r.version.to_string()],
                }),
            }
        }
        groups
    }
}

struct Def {
    group: &'static str,
    version: &'static str,
    resource: &'static str,
    kind: &'static str,
    short_names: &'static [&'static str],
    categories: &'static [&'static str],
    namespaced: bool,
}

fn def(d: Def, verbs: &'static [&'static str], strategy: Arc<dyn Strategy>) -> ResourceDef {
    let singular: &'static str = Box::leak(d.kind.to_lowercase().into_boxed_str());
    let storage_segment = match (d.group, d.resource) {
        ("", "nodes") => "minions",
        ("", "services") => "services/specs",
        ("", "endpoints") => "services/endpoints",
        ("", "replicationcontrollers") => "controllers",
        (_, r) => r,
    };
    let package = match d.group {
        "" => "core".to_string(),
        g => g.split('.').next().unwrap_or(g).to_string(),
    };
    let definition: &'static str =
        Box::leak(format!("io.k8s.api.{package}.{}.{}", d.version, d.kind).into_boxed_str());
    ResourceDef {
        group: d.group,
        version: d.version,
        resource: d.resource,
        kind: d.kind,
        singular,
        short_names: d.short_names,
        categories: d.categories,
        namespaced: d.namespaced,
        verbs,
        storage_segment,
        definition,
        selectable_fields: selectable_fields(d.group, d.resource),
        subresources: subresources(d.group, d.resource),
        returns_deleted_object: (d.group, d.resource) == ("", "pods"),
        strategy,
    }
}

/// Upstream's status and scale subresources for these kinds.
fn subresources(group: &str, resource: &str) -> &'static [&'static str] {
    match (group, resource) {
        ("apps", "deployments" | "replicasets" | "statefulsets")
        | ("", "replicationcontrollers") => &["scale", "status"],
        ("apps", "daemonsets")
        | (
            "",
            "namespaces"
            | "nodes"
            | "persistentvolumeclaims"
            | "persistentvolumes"
            | "pods"
            | "resourcequotas"
            | "services",
        ) => &["status"],
        _ => &[],
    }
}

/// Upstream's extra selectable fields per kind (each kind's GetAttrs/FieldLabelConversion).
fn selectable_fields(group: &str, resource: &str) -> &'static [&'static str] {
    match (group, resource) {
        ("", "pods") => &[
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.nominatedNodeName",
        ],
        ("", "events") => &[
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        ],
        ("", "secrets") => &["type"],
        ("", "namespaces") => &["status.phase"],
        ("", "nodes") => &["spec.unschedulable"],
        ("", "replicationcontrollers") | ("apps", "replicasets") => &["status.replicas"],
        _ => &[],
    }
}

fn builtin_resources() -> Vec<ResourceDef> {
    use strategy::{GenericStrategy as G, NameRule};
    let generic = |name_rule: NameRule, tracks_generation: bool| -> Arc<dyn Strategy> {
        Arc::new(G {
            name_rule,
            tracks_generation,
        })
    };
    let plain = generic(NameRule::Subdomain, false);
    let workload = generic(NameRule::Subdomain, true);
    let ns = |group, version, resource, kind, short_names, categories| Def {
        group,
        version,
        resource,
        kind,
        short_names,
        categories,
        namespaced: true,
    };
    let cluster = |group, version, resource, kind, short_names| Def {
        group,
        version,
        resource,
        kind,
        short_names,
        categories: &[],
        namespaced: false,
    };
    const ALL: &[&str] = &["all"];
    vec![
        // core/v1, in upstream's discovery order.
        def(
            ns("", "v1", "configmaps", "ConfigMap", &["cm"], &[]),
            ALL_VERBS,
            plain.clone(),
        ),
        def(
            ns("", "v1", "endpoints", "Endpoints", &["ep"], &[]),
            ALL_VERBS,
            plain.clone(),
        ),
        def(
            ns("", "v1", "events", "Event", &["ev"], &[]),
            ALL_VERBS,
            plain.clone(),
        ),
        def(
            ns("", "v1", "limitranges", "LimitRange", &["limits"], &[]),
            ALL_VERBS,
            plain.clone(),
        ),
        def(
            cluster("", "v1", "namespaces", "Namespace", &["ns"]),
            NAMESPACE_VERBS,
            Arc::new(strategy::NamespaceStrategy),
        ),
        def(
            cluster("", "v1", "nodes", "Node", &["no"]),
            ALL_VERBS,
            plain.clone(),
        ),
        def(
            ns(
                "",
                "v1",
                "persistentvolumeclaims",
                "PersistentVolumeClaim",
                &["pvc"],
                &[],
            ),
            ALL_VERBS,
            plain.clone(),
        ),
        def(
            cluster("", "v1", "persistentvolumes", "PersistentVolume", &["pv"]),
            ALL_VERBS,
            plain.clone(),
        ),
        def(
            ns("", "v1", "pods", "Pod", &["po"], ALL),
            ALL_VERBS,
            plain.clone(),
        ),
        def(
            ns("", "v1", "podtemplates", "PodTemplate", &[], &[]),
            ALL_VERBS,
            plain.clone(),
        ),
        def(
            ns(
                "",
                "v1",
                "replicationcontrollers",
                "ReplicationController",
                &["rc"],
                ALL,
            ),
            ALL_VERBS,
            workload.clone(),
        ),
        def(
            ns("", "v1", "resourcequotas", "ResourceQuota", &["quota"], &[]),
            ALL_VERBS,
            plain.clone(),
        ),
        def(
            ns("", "v1", "secrets", "Secret", &[], &[]),
            ALL_VERBS,
            Arc::new(strategy::SecretStrategy),
        ),
        def(
            ns("", "v1", "serviceaccounts", "ServiceAccount", &["sa"], &[]),
            ALL_VERBS,
            plain.clone(),
        ),
        def(
            ns("", "v1", "services", "Service", &["svc"], ALL),
            ALL_VERBS,
            Arc::new(strategy::ServiceStrategy),
        ),
        // apps/v1
        def(
            ns(
                "apps",
                "v1",
                "controllerrevisions",
                "ControllerRevision",
                &[],
                &[],
            ),
            ALL_VERBS,
            plain.clone(),
        ),
        def(
            ns("apps", "v1", "daemonsets", "DaemonSet", &["ds"], ALL),
            ALL_VERBS,
            workload.clone(),
        ),
        def(
            ns("apps", "v1", "deployments", "Deployment", &["deploy"], ALL),
            ALL_VERBS,
            workload.clone(),
        ),
        def(
            ns("apps", "v1", "replicasets", "ReplicaSet", &["rs"], ALL),
            ALL_VERBS,
            workload.clone(),
        ),
        def(
            ns("apps", "v1", "statefulsets", "StatefulSet", &["sts"], ALL),
            ALL_VERBS,
            workload,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_version_hash_matches_upstream() {
        // kube-apiserver 1.32 discovery for core/v1 configmaps and apps/v1 deployments.
        let r = Registry::builtin();
        assert_eq!(
            r.lookup("", "v1", "configmaps")
                .unwrap()
                .storage_version_hash(),
            "qFsyl6wFWjQ="
        );
        assert_eq!(
            r.lookup("apps", "v1", "deployments")
                .unwrap()
                .storage_version_hash(),
            "8aSe+NMegvE="
        );
    }

    #[test]
    fn keys_follow_upstream_layout() {
        let r = Registry::builtin();
        let svc = r.lookup("", "v1", "services").unwrap();
        assert_eq!(
            svc.key("/registry", Some("default"), "web"),
            "/registry/services/specs/default/web"
        );
        let ns = r.lookup("", "v1", "namespaces").unwrap();
        assert_eq!(
            ns.key("/registry", Some("ignored"), "demo"),
            "/registry/namespaces/demo"
        );
        let deploy = r.lookup("apps", "v1", "deployments").unwrap();
        assert_eq!(deploy.definition, "io.k8s.api.apps.v1.Deployment");
    }

    #[test]
    fn groups_list_core_first() {
        let groups = Registry::builtin().groups();
        assert_eq!(groups[0].name, "");
        assert_eq!(groups[1].name, "apps");
    }
}
