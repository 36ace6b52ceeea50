//! The resource registry: which group/version/resources exist, their names,
//! scope, verbs and the strategy that gives each kind its behaviour.
//!
//! Adding a kind is adding a [`ResourceDef`] (and, where the kind needs it, a
//! strategy); the pipeline does not change.

use std::collections::HashMap;
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
    /// The group/version/kind objects are stored as; differs from the served
    /// one for kinds served at several versions and for events.k8s.io events.
    pub storage_group: &'static str,
    pub storage_version: &'static str,
    pub storage_kind: &'static str,
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

    /// core/v1 bindings: a create that places a pod, stored nowhere.
    pub fn is_binding(&self) -> bool {
        (self.group, self.resource) == ("", "bindings")
    }

    /// core/v1 componentstatuses: computed on each read, stored nowhere.
    pub fn is_component_status(&self) -> bool {
        (self.group, self.resource) == ("", "componentstatuses")
    }

    /// The reviews (`kubectl auth can-i`, `kubectl auth whoami`,
    /// TokenReview): a create answered from the request, stored nowhere.
    pub fn is_review(&self) -> bool {
        crate::review::is_review(self.group, self.resource)
    }

    /// Whether objects of this resource live in storage (and so have a
    /// watch cache, a namespace to be emptied, garbage to collect).
    pub fn is_stored(&self) -> bool {
        !self.is_binding() && !self.is_component_status() && !self.is_review()
    }

    /// Whether objects are stored in another group/version than this one serves.
    pub fn converts_for_storage(&self) -> bool {
        (self.group, self.version) != (self.storage_group, self.storage_version)
    }

    /// The apiVersion objects are stored at.
    pub fn storage_api_version(&self) -> String {
        if self.storage_group.is_empty() {
            self.storage_version.to_string()
        } else {
            format!("{}/{}", self.storage_group, self.storage_version)
        }
    }

    /// Upstream's discovery storageVersionHash: base64 of the first 8 bytes of
    /// sha256("group/version/kind") of the storage version.
    pub fn storage_version_hash(&self) -> String {
        let digest = Sha256::digest(format!(
            "{}/{}/{}",
            self.storage_group, self.storage_version, self.storage_kind
        ));
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
    by_gvr: Index,
    /// Group, version and kind → resource, for references that name a kind
    /// (ownerReferences).
    by_gvk: Index,
}

/// A served group with its versions, preferred first.
#[derive(Debug, Clone)]
pub struct GroupInfo {
    pub name: String,
    pub versions: Vec<String>,
}

/// Group, version and resource (or kind): the definitions' own strings, so
/// building the indexes copies nothing and a lookup allocates nothing.
type Triple = (&'static str, &'static str, &'static str);

/// Hashed, not ordered: every request looks a resource up at least once,
/// and a B-tree's string comparisons cost more than one hash. A fixed hash
/// state is safe: the keys are the registry's own, never a client's.
type Index = HashMap<Triple, Arc<ResourceDef>, foldhash::fast::FixedState>;

fn find<'a>(
    index: &HashMap<(&'a str, &'a str, &'a str), Arc<ResourceDef>, foldhash::fast::FixedState>,
    key: (&'a str, &'a str, &'a str),
) -> Option<Arc<ResourceDef>> {
    index.get(&key).cloned()
}

impl Registry {
    pub fn new(resources: Vec<ResourceDef>) -> Self {
        let resources: Vec<Arc<ResourceDef>> = resources.into_iter().map(Arc::new).collect();
        let by_gvr = resources
            .iter()
            .map(|r| ((r.group, r.version, r.resource), r.clone()))
            .collect();
        let by_gvk = resources
            .iter()
            .filter(|r| r.is_stored())
            .map(|r| ((r.group, r.version, r.kind), r.clone()))
            .collect();
        Self {
            resources,
            by_gvr,
            by_gvk,
        }
    }

    /// The registry of everything Capstan serves.
    pub fn builtin() -> Self {
        Self::new(builtin_resources())
    }

    pub fn lookup(&self, group: &str, version: &str, resource: &str) -> Option<Arc<ResourceDef>> {
        find(&self.by_gvr, (group, version, resource))
    }

    /// The stored resource of a kind at a group/version, e.g. an owner
    /// reference's `apps/v1` `Deployment`.
    pub fn lookup_kind(&self, group: &str, version: &str, kind: &str) -> Option<Arc<ResourceDef>> {
        find(&self.by_gvk, (group, version, kind))
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

/// One row of the built-in table: what discovery says about a resource.
struct Def {
    group: &'static str,
    version: &'static str,
    resource: &'static str,
    kind: &'static str,
    short_names: &'static [&'static str],
    categories: &'static [&'static str],
    namespaced: bool,
}

/// Where a resource lives in storage when that is not its own group/version:
/// a kind served at several versions is stored at one (upstream's storage
/// version), and events.k8s.io/v1 events are core/v1 events.
struct StorageOf {
    group: &'static str,
    version: &'static str,
    kind: &'static str,
    segment: &'static str,
}

fn def(d: Def, verbs: &'static [&'static str], strategy: Arc<dyn Strategy>) -> ResourceDef {
    let storage_segment = match (d.group, d.resource) {
        ("", "nodes") => "minions",
        ("", "services") => "services/specs",
        ("", "endpoints") => "services/endpoints",
        ("", "replicationcontrollers") => "controllers",
        (_, r) => r,
    };
    def_stored(
        d,
        verbs,
        strategy,
        StorageOf {
            group: "",
            version: "",
            kind: "",
            segment: storage_segment,
        },
    )
}

fn def_stored(
    d: Def,
    verbs: &'static [&'static str],
    strategy: Arc<dyn Strategy>,
    storage: StorageOf,
) -> ResourceDef {
    let singular: &'static str = Box::leak(d.kind.to_lowercase().into_boxed_str());
    let package = match d.group {
        "" => "core".to_string(),
        g => g.split('.').next().unwrap_or(g).to_string(),
    };
    let definition: &'static str =
        Box::leak(format!("io.k8s.api.{package}.{}.{}", d.version, d.kind).into_boxed_str());
    let (storage_group, storage_version, storage_kind) = if storage.version.is_empty() {
        (d.group, d.version, d.kind)
    } else {
        (storage.group, storage.version, storage.kind)
    };
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
        storage_segment: storage.segment,
        storage_group,
        storage_version,
        storage_kind,
        definition,
        selectable_fields: selectable_fields(d.group, d.resource),
        subresources: subresources(d.group, d.resource),
        returns_deleted_object: returns_deleted_object(d.group, d.resource),
        strategy,
    }
}

/// The kinds whose upstream store sets `ReturnDeletedObject`: a delete
/// answers with the object, not a Success Status.
fn returns_deleted_object(group: &str, resource: &str) -> bool {
    matches!(
        (group, resource),
        ("", "pods")
            | ("", "services")
            | ("", "serviceaccounts")
            | ("storage.k8s.io", "storageclasses")
    )
}

/// Upstream's status and scale subresources for these kinds.
fn subresources(group: &str, resource: &str) -> &'static [&'static str] {
    match (group, resource) {
        ("apps", "deployments" | "replicasets" | "statefulsets")
        | ("", "replicationcontrollers") => &["scale", "status"],
        ("apps", "daemonsets")
        | ("batch", "jobs" | "cronjobs")
        | ("autoscaling", "horizontalpodautoscalers")
        | ("policy", "poddisruptionbudgets")
        | ("networking.k8s.io", "ingresses")
        | ("storage.k8s.io", "volumeattachments")
        | (
            "",
            "nodes"
            | "persistentvolumeclaims"
            | "persistentvolumes"
            | "resourcequotas"
            | "services",
        ) => &["status"],
        ("", "pods") => &[
            "binding",
            "ephemeralcontainers",
            "eviction",
            "resize",
            "status",
        ],
        ("", "namespaces") => &["finalize", "status"],
        ("", "serviceaccounts") => &["token"],
        ("certificates.k8s.io", "certificatesigningrequests") => &["approval", "status"],
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
        // events.k8s.io events are stored as core events, and selectors
        // match the stored form.
        ("" | "events.k8s.io", "events") => &[
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
        ("batch", "jobs") => &["status.successful"],
        ("certificates.k8s.io", "certificatesigningrequests") => &["spec.signerName"],
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
    // RBAC names are path segments, not DNS names (upstream's ValidateRBACName).
    let path_segment = generic(NameRule::PathSegment, false);
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
    const NONE: &[&str] = &[];
    const HPA_STORAGE: StorageOf = StorageOf {
        group: "autoscaling",
        version: "v2",
        kind: "HorizontalPodAutoscaler",
        segment: "horizontalpodautoscalers",
    };
    let self_review = |group, resource, kind| {
        def(
            cluster(group, "v1", resource, kind, NONE),
            &["create"],
            plain.clone(),
        )
    };
    vec![
        // core/v1, in upstream's discovery order.
        def(
            ns("", "v1", "bindings", "Binding", NONE, NONE),
            &["create"],
            plain.clone(),
        ),
        def(
            cluster("", "v1", "componentstatuses", "ComponentStatus", &["cs"]),
            &["get", "list"],
            plain.clone(),
        ),
        def(
            ns("", "v1", "configmaps", "ConfigMap", &["cm"], NONE),
            ALL_VERBS,
            plain.clone(),
        ),
        def(
            ns("", "v1", "endpoints", "Endpoints", &["ep"], NONE),
            ALL_VERBS,
            plain.clone(),
        ),
        def(
            ns("", "v1", "events", "Event", &["ev"], NONE),
            ALL_VERBS,
            plain.clone(),
        ),
        def(
            ns("", "v1", "limitranges", "LimitRange", &["limits"], NONE),
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
            Arc::new(strategy::NodeStrategy),
        ),
        def(
            ns(
                "",
                "v1",
                "persistentvolumeclaims",
                "PersistentVolumeClaim",
                &["pvc"],
                NONE,
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
            Arc::new(strategy::PodStrategy),
        ),
        def(
            ns("", "v1", "podtemplates", "PodTemplate", NONE, NONE),
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
            ns(
                "",
                "v1",
                "resourcequotas",
                "ResourceQuota",
                &["quota"],
                NONE,
            ),
            ALL_VERBS,
            plain.clone(),
        ),
        def(
            ns("", "v1", "secrets", "Secret", NONE, NONE),
            ALL_VERBS,
            Arc::new(strategy::SecretStrategy),
        ),
        def(
            ns("", "v1", "serviceaccounts", "ServiceAccount", &["sa"], NONE),
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
                NONE,
                NONE,
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
            workload.clone(),
        ),
        // events.k8s.io/v1: a second view of core/v1 events.
        def_stored(
            ns("events.k8s.io", "v1", "events", "Event", &["ev"], NONE),
            ALL_VERBS,
            plain.clone(),
            StorageOf {
                group: "",
                version: "v1",
                kind: "Event",
                segment: "events",
            },
        ),
        // The reviews: answered on create, stored nowhere (review.rs).
        self_review(
            "authentication.k8s.io",
            "selfsubjectreviews",
            "SelfSubjectReview",
        ),
        self_review("authentication.k8s.io", "tokenreviews", "TokenReview"),
        def(
            ns(
                "authorization.k8s.io",
                "v1",
                "localsubjectaccessreviews",
                "LocalSubjectAccessReview",
                NONE,
                NONE,
            ),
            &["create"],
            plain.clone(),
        ),
        self_review(
            "authorization.k8s.io",
            "selfsubjectaccessreviews",
            "SelfSubjectAccessReview",
        ),
        self_review(
            "authorization.k8s.io",
            "selfsubjectrulesreviews",
            "SelfSubjectRulesReview",
        ),
        self_review(
            "authorization.k8s.io",
            "subjectaccessreviews",
            "SubjectAccessReview",
        ),
        // autoscaling: v2 preferred; both versions share the v2 storage.
        def_stored(
            ns(
                "autoscaling",
                "v2",
                "horizontalpodautoscalers",
                "HorizontalPodAutoscaler",
                &["hpa"],
                ALL,
            ),
            ALL_VERBS,
            plain.clone(),
            HPA_STORAGE,
        ),
        def_stored(
            ns(
                "autoscaling",
                "v1",
                "horizontalpodautoscalers",
                "HorizontalPodAutoscaler",
                &["hpa"],
                ALL,
            ),
            ALL_VERBS,
            plain.clone(),
            HPA_STORAGE,
        ),
        // batch/v1
        def(
            ns("batch", "v1", "cronjobs", "CronJob", &["cj"], ALL),
            ALL_VERBS,
            workload.clone(),
        ),
        def(
            ns("batch", "v1", "jobs", "Job", NONE, ALL),
            ALL_VERBS,
            Arc::new(strategy::JobStrategy),
        ),
        // certificates.k8s.io/v1
        def(
            cluster(
                "certificates.k8s.io",
                "v1",
                "certificatesigningrequests",
                "CertificateSigningRequest",
                &["csr"],
            ),
            ALL_VERBS,
            Arc::new(strategy::CertificateSigningRequestStrategy),
        ),
        // networking.k8s.io/v1
        def(
            cluster(
                "networking.k8s.io",
                "v1",
                "ingressclasses",
                "IngressClass",
                NONE,
            ),
            ALL_VERBS,
            plain.clone(),
        ),
        def(
            ns(
                "networking.k8s.io",
                "v1",
                "ingresses",
                "Ingress",
                &["ing"],
                NONE,
            ),
            ALL_VERBS,
            workload.clone(),
        ),
        def(
            ns(
                "networking.k8s.io",
                "v1",
                "networkpolicies",
                "NetworkPolicy",
                &["netpol"],
                NONE,
            ),
            ALL_VERBS,
            workload.clone(),
        ),
        // policy/v1
        def(
            ns(
                "policy",
                "v1",
                "poddisruptionbudgets",
                "PodDisruptionBudget",
                &["pdb"],
                NONE,
            ),
            ALL_VERBS,
            workload.clone(),
        ),
        // rbac.authorization.k8s.io/v1
        def(
            cluster(
                "rbac.authorization.k8s.io",
                "v1",
                "clusterrolebindings",
                "ClusterRoleBinding",
                NONE,
            ),
            ALL_VERBS,
            path_segment.clone(),
        ),
        def(
            cluster(
                "rbac.authorization.k8s.io",
                "v1",
                "clusterroles",
                "ClusterRole",
                NONE,
            ),
            ALL_VERBS,
            path_segment.clone(),
        ),
        def(
            ns(
                "rbac.authorization.k8s.io",
                "v1",
                "rolebindings",
                "RoleBinding",
                NONE,
                NONE,
            ),
            ALL_VERBS,
            path_segment.clone(),
        ),
        def(
            ns(
                "rbac.authorization.k8s.io",
                "v1",
                "roles",
                "Role",
                NONE,
                NONE,
            ),
            ALL_VERBS,
            path_segment,
        ),
        // storage.k8s.io/v1
        def(
            cluster("storage.k8s.io", "v1", "csidrivers", "CSIDriver", NONE),
            ALL_VERBS,
            plain.clone(),
        ),
        def(
            cluster("storage.k8s.io", "v1", "csinodes", "CSINode", NONE),
            ALL_VERBS,
            plain.clone(),
        ),
        def(
            ns(
                "storage.k8s.io",
                "v1",
                "csistoragecapacities",
                "CSIStorageCapacity",
                NONE,
                NONE,
            ),
            ALL_VERBS,
            plain.clone(),
        ),
        def(
            cluster(
                "storage.k8s.io",
                "v1",
                "storageclasses",
                "StorageClass",
                &["sc"],
            ),
            ALL_VERBS,
            plain.clone(),
        ),
        def(
            cluster(
                "storage.k8s.io",
                "v1",
                "volumeattachments",
                "VolumeAttachment",
                NONE,
            ),
            ALL_VERBS,
            plain.clone(),
        ),
        // scheduling.k8s.io/v1
        def(
            cluster(
                "scheduling.k8s.io",
                "v1",
                "priorityclasses",
                "PriorityClass",
                &["pc"],
            ),
            ALL_VERBS,
            plain.clone(),
        ),
        // coordination.k8s.io/v1
        def(
            ns("coordination.k8s.io", "v1", "leases", "Lease", NONE, NONE),
            ALL_VERBS,
            plain.clone(),
        ),
        // node.k8s.io/v1
        def(
            cluster("node.k8s.io", "v1", "runtimeclasses", "RuntimeClass", NONE),
            ALL_VERBS,
            plain.clone(),
        ),
        // discovery.k8s.io/v1
        def(
            ns(
                "discovery.k8s.io",
                "v1",
                "endpointslices",
                "EndpointSlice",
                NONE,
                NONE,
            ),
            ALL_VERBS,
            plain,
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
    fn kinds_resolve_to_their_stored_resource() {
        let r = Registry::builtin();
        let hpa = r
            .lookup_kind("autoscaling", "v1", "HorizontalPodAutoscaler")
            .unwrap();
        assert_eq!(
            (hpa.version, hpa.resource),
            ("v1", "horizontalpodautoscalers")
        );
        assert!(r.lookup_kind("", "v1", "Binding").is_none());
        assert!(r.lookup_kind("apps", "v1", "Pod").is_none());
    }

    #[test]
    fn groups_list_core_first() {
        let groups = Registry::builtin().groups();
        assert_eq!(groups[0].name, "");
        assert_eq!(groups[1].name, "apps");
    }
}
