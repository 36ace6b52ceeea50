//! The resource registry: which group/version/resources exist, their names,
//! scope, verbs, and the [`Kind`] that gives each its behaviour.
//!
//! A [`Registry`] is one snapshot, never changed once built; the server
//! holds the current one and swaps it whole when resources are added or
//! removed (capstan-core's `RegistryHandle`).

use std::collections::BTreeSet;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use base64::Engine as _;
use sha2::{Digest, Sha256};

use crate::kinds::{Handling, Kind};

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

/// Where a served resource comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Compiled in.
    BuiltIn,
    /// A CustomResourceDefinition's: JSON only, unstructured.
    Custom,
}

/// Who answers for a group/version: upstream's delegation chain
/// (kube-aggregator → kube-apiserver → apiextensions-apiserver → 404) as
/// one lookup of the registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServedBy {
    /// Capstan's own kinds.
    BuiltIn,
    /// A CustomResourceDefinition's resources.
    Custom,
    /// A remote APIService's backend: requests are forwarded to it, even
    /// for a group/version Capstan also serves, as kube-aggregator's
    /// handler comes first.
    Proxied,
}

/// One served resource at one version. Strings are owned: definitions are
/// built at run time too (a CustomResourceDefinition's versions).
pub struct ResourceDef {
    pub group: String,
    pub version: String,
    /// Plural, lowercase: the URL segment.
    pub resource: String,
    pub kind: String,
    pub singular: String,
    pub short_names: Vec<String>,
    pub categories: Vec<String>,
    pub namespaced: bool,
    pub verbs: Vec<String>,
    /// Key segment under the storage prefix; upstream keeps a few historical
    /// names (nodes under "minions", services under "services/specs").
    pub storage_segment: String,
    /// The group/version/kind objects are stored as; differs from the served
    /// one for kinds served at several versions and for events.k8s.io events.
    pub storage_group: String,
    pub storage_version: String,
    pub storage_kind: String,
    /// OpenAPI definition name of the kind, e.g. "io.k8s.api.apps.v1.Deployment".
    pub definition: String,
    /// Field selectors beyond metadata.name and metadata.namespace.
    pub selectable_fields: Vec<String>,
    /// Whether an immediate delete answers with the deleted object (upstream's
    /// ReturnDeletedObject) rather than a Success Status.
    pub returns_deleted_object: bool,
    /// Served subresources ("status", "scale", "binding", ...).
    pub subresources: Vec<String>,
    /// What objects of this resource do: defaults, validation, printing, ...
    pub kind_impl: Arc<dyn Kind>,
    pub origin: Origin,
}

fn owned(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

impl ResourceDef {
    /// A resource stored under its own name at its own group/version, with
    /// every generic verb and no short names, categories or subresources;
    /// the builder methods below say what differs.
    pub fn new(
        group: &str,
        version: &str,
        resource: &str,
        kind: &str,
        namespaced: bool,
        kind_impl: Arc<dyn Kind>,
    ) -> Self {
        let package = match group {
            "" => "core",
            g => g.split('.').next().unwrap_or(g),
        };
        Self {
            group: group.to_string(),
            version: version.to_string(),
            resource: resource.to_string(),
            kind: kind.to_string(),
            singular: kind.to_lowercase(),
            short_names: Vec::new(),
            categories: Vec::new(),
            namespaced,
            verbs: owned(ALL_VERBS),
            storage_segment: resource.to_string(),
            storage_group: group.to_string(),
            storage_version: version.to_string(),
            storage_kind: kind.to_string(),
            definition: format!("io.k8s.api.{package}.{version}.{kind}"),
            selectable_fields: Vec::new(),
            returns_deleted_object: false,
            subresources: Vec::new(),
            kind_impl,
            origin: Origin::BuiltIn,
        }
    }

    pub fn short_names(mut self, names: &[&str]) -> Self {
        self.short_names = owned(names);
        self
    }

    pub fn categories(mut self, categories: &[&str]) -> Self {
        self.categories = owned(categories);
        self
    }

    pub fn verbs(mut self, verbs: &[&str]) -> Self {
        self.verbs = owned(verbs);
        self
    }

    pub fn subresources(mut self, subresources: &[&str]) -> Self {
        self.subresources = owned(subresources);
        self
    }

    pub fn selectable_fields(mut self, fields: &[&str]) -> Self {
        self.selectable_fields = owned(fields);
        self
    }

    pub fn returns_deleted_object(mut self) -> Self {
        self.returns_deleted_object = true;
        self
    }

    /// Stored under `segment` of the storage prefix instead of the resource name.
    pub fn storage_segment(mut self, segment: &str) -> Self {
        self.storage_segment = segment.to_string();
        self
    }

    /// Stored as another group/version/kind (upstream's storage version).
    pub fn stored_as(mut self, group: &str, version: &str, kind: &str) -> Self {
        self.storage_group = group.to_string();
        self.storage_version = version.to_string();
        self.storage_kind = kind.to_string();
        self
    }

    /// The OpenAPI definition name, when not `io.k8s.api.<package>.<version>.<kind>`.
    pub fn definition(mut self, definition: &str) -> Self {
        self.definition = definition.to_string();
        self
    }

    /// What server-side apply needs to know of this resource's kind.
    pub fn apply_kind(&self) -> crate::apply::KindSchema<'_> {
        crate::apply::KindSchema {
            definition: &self.definition,
            custom: self.kind_impl.apply_schema(),
        }
    }

    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    pub fn list_kind(&self) -> String {
        format!("{}List", self.kind)
    }

    /// The verbs discovery lists: the served ones, unless the kind
    /// advertises fewer (a terminating definition's resources).
    pub fn advertised_verbs(&self) -> Vec<&str> {
        match self.kind_impl.advertised_verbs() {
            Some(verbs) => verbs.to_vec(),
            None => self.verbs.iter().map(String::as_str).collect(),
        }
    }

    pub fn supports(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == verb)
    }

    pub fn has_subresource(&self, name: &str) -> bool {
        self.subresources.iter().any(|s| s == name)
    }

    /// How the pipeline serves this resource: stored, or answered on the spot.
    pub fn handling(&self) -> Handling {
        self.kind_impl.handling()
    }

    /// core/v1 bindings: a create that places a pod, stored nowhere.
    pub fn is_binding(&self) -> bool {
        self.handling() == Handling::Binding
    }

    /// core/v1 componentstatuses: computed on each read, stored nowhere.
    pub fn is_component_status(&self) -> bool {
        self.handling() == Handling::ComponentStatus
    }

    /// The reviews (`kubectl auth can-i`, `kubectl auth whoami`,
    /// TokenReview): a create answered from the request, stored nowhere.
    pub fn is_review(&self) -> bool {
        matches!(self.handling(), Handling::Review(_))
    }

    /// Whether objects of this resource live in storage (and so have a
    /// watch cache, a namespace to be emptied, garbage to collect).
    pub fn is_stored(&self) -> bool {
        self.handling() == Handling::Stored
    }

    /// Whether objects are stored in another group/version than this one serves.
    pub fn converts_for_storage(&self) -> bool {
        (&self.group, &self.version) != (&self.storage_group, &self.storage_version)
    }

    /// Whether a stored object changes on its way out: converted to the
    /// served version, or defaulted on read (custom resources whose schema
    /// has defaults, so a default added later shows on older objects).
    pub fn transforms_on_read(&self) -> bool {
        self.converts_for_storage() || self.kind_impl.defaults_on_read()
    }

    /// The object as this resource serves it, from its stored form.
    pub fn serve(
        &self,
        stored: serde_json::Value,
    ) -> Result<serde_json::Value, crate::conversion::ConversionError> {
        ServedForm::of(self).serve(stored)
    }

    /// The apiVersion objects are stored at.
    pub fn storage_api_version(&self) -> String {
        if self.storage_group.is_empty() {
            self.storage_version.clone()
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
        self.key(storage_prefix, namespace, "")
    }

    /// Built in one allocation: every get and write makes one.
    pub fn key(&self, storage_prefix: &str, namespace: Option<&str>, name: &str) -> String {
        let namespace = namespace.filter(|_| self.namespaced);
        let parts = [
            storage_prefix,
            "/",
            &self.storage_segment,
            "/",
            namespace.unwrap_or(""),
            if namespace.is_some() { "/" } else { "" },
            name,
        ];
        parts.concat()
    }
}

impl std::fmt::Debug for ResourceDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.api_version(), self.resource)
    }
}

/// What turns a stored object into a resource's served one, owned, for a
/// stream that outlives the request (a watch).
#[derive(Clone)]
pub struct ServedForm {
    kind: Arc<dyn Kind>,
    converts: bool,
    api_version: String,
    version: String,
}

impl ServedForm {
    pub fn of(def: &ResourceDef) -> Self {
        Self {
            kind: def.kind_impl.clone(),
            converts: def.converts_for_storage(),
            api_version: def.api_version(),
            version: def.version.clone(),
        }
    }

    /// Converted to the served version, then defaulted if the kind
    /// defaults on read.
    pub fn serve(
        &self,
        stored: serde_json::Value,
    ) -> Result<serde_json::Value, crate::conversion::ConversionError> {
        let mut object = if self.converts {
            self.kind.convert(stored, &self.api_version)?
        } else {
            stored
        };
        if self.kind.defaults_on_read() {
            if let Some(map) = object.as_object_mut() {
                self.kind.apply_defaults(&self.version, map);
            }
        }
        Ok(object)
    }
}

/// Group, version and resource (or kind) of an index entry.
#[derive(PartialEq, Eq)]
struct Triple(String, String, String);

/// A lookup's borrowed key: hashes and compares as a [`Triple`], so a
/// lookup allocates nothing.
struct TripleRef<'a>(&'a str, &'a str, &'a str);

impl Hash for Triple {
    fn hash<H: Hasher>(&self, state: &mut H) {
        TripleRef(&self.0, &self.1, &self.2).hash(state)
    }
}

impl Hash for TripleRef<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.hash(state);
        self.1.hash(state);
        self.2.hash(state);
    }
}

impl hashbrown::Equivalent<Triple> for TripleRef<'_> {
    fn equivalent(&self, key: &Triple) -> bool {
        (self.0, self.1, self.2) == (key.0.as_str(), key.1.as_str(), key.2.as_str())
    }
}

/// Hashed, not ordered: every request looks a resource up at least once,
/// and a B-tree's string comparisons cost more than one hash. A fixed hash
/// state is safe: the keys are the registry's own, never a client's.
type Index = hashbrown::HashMap<Triple, Arc<ResourceDef>, foldhash::fast::FixedState>;

/// One snapshot of the served resources, indexed for the lookups the
/// pipeline makes. Never changed once built: a change builds a new one.
pub struct Registry {
    resources: Vec<Arc<ResourceDef>>,
    by_gvr: Index,
    /// Group, version and kind → resource, for references that name a kind
    /// (ownerReferences).
    by_gvk: Index,
    /// Who serves each group/version (the third part of the key is empty).
    group_versions: hashbrown::HashMap<Triple, ServedBy, foldhash::fast::FixedState>,
    /// The group/versions remote APIServices claim.
    proxied: Arc<BTreeSet<(String, String)>>,
    /// Counts changes of the served resources since start; caches built
    /// from a snapshot's resources (discovery, OpenAPI) key on it.
    generation: u64,
}

/// A served group with its versions, preferred first.
#[derive(Debug, Clone)]
pub struct GroupInfo {
    pub name: String,
    pub versions: Vec<String>,
}

impl Registry {
    pub fn new(resources: Vec<ResourceDef>) -> Self {
        Self::indexed(
            resources.into_iter().map(Arc::new).collect(),
            Arc::default(),
            0,
        )
    }

    fn indexed(
        resources: Vec<Arc<ResourceDef>>,
        proxied: Arc<BTreeSet<(String, String)>>,
        generation: u64,
    ) -> Self {
        let key = |r: &ResourceDef, last: &str| {
            Triple(r.group.clone(), r.version.clone(), last.to_string())
        };
        let by_gvr = resources
            .iter()
            .map(|r| (key(r, &r.resource), r.clone()))
            .collect();
        let by_gvk = resources
            .iter()
            .filter(|r| r.is_stored())
            .map(|r| (key(r, &r.kind), r.clone()))
            .collect();
        let mut group_versions: hashbrown::HashMap<_, _, _> = resources
            .iter()
            .map(|r| {
                let served_by = match r.origin {
                    Origin::BuiltIn => ServedBy::BuiltIn,
                    Origin::Custom => ServedBy::Custom,
                };
                (key(r, ""), served_by)
            })
            .collect();
        for (group, version) in proxied.iter() {
            group_versions.insert(
                Triple(group.clone(), version.clone(), String::new()),
                ServedBy::Proxied,
            );
        }
        Self {
            resources,
            by_gvr,
            by_gvk,
            group_versions,
            proxied,
            generation,
        }
    }

    /// The registry of everything Capstan serves built in.
    pub fn builtin() -> Self {
        Self::new(crate::kinds::builtin_resources())
    }

    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Who answers for `group`/`version`; None: nobody (404).
    pub fn served_by(&self, group: &str, version: &str) -> Option<ServedBy> {
        self.group_versions
            .get(&TripleRef(group, version, ""))
            .copied()
    }

    /// The group/versions remote APIServices claim.
    pub fn proxied(&self) -> &BTreeSet<(String, String)> {
        &self.proxied
    }

    /// The same resources with `proxied` as the remote APIServices'
    /// group/versions. The generation stays: nothing built from the
    /// resources changes.
    pub fn with_proxied(&self, proxied: BTreeSet<(String, String)>) -> Self {
        Self::indexed(self.resources.clone(), Arc::new(proxied), self.generation)
    }

    pub fn lookup(&self, group: &str, version: &str, resource: &str) -> Option<Arc<ResourceDef>> {
        self.by_gvr
            .get(&TripleRef(group, version, resource))
            .cloned()
    }

    /// The stored resource of a kind at a group/version, e.g. an owner
    /// reference's `apps/v1` `Deployment`.
    pub fn lookup_kind(&self, group: &str, version: &str, kind: &str) -> Option<Arc<ResourceDef>> {
        self.by_gvk.get(&TripleRef(group, version, kind)).cloned()
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
    /// A custom group's versions are in upstream's kube-aware order
    /// (v2, v1, v1beta1, v1alpha1, then others by name), its preferred
    /// version first.
    pub fn groups(&self) -> Vec<GroupInfo> {
        let is_custom = |name: &str| {
            self.resources
                .iter()
                .any(|r| r.group == name && r.origin == Origin::Custom)
        };
        let (mut custom, built_in): (Vec<GroupInfo>, Vec<GroupInfo>) = self
            .groups_as_registered()
            .into_iter()
            .partition(|g| is_custom(&g.name));
        for group in &mut custom {
            group.versions.sort_by(|a, b| kube_aware_order(a, b));
        }
        // Every custom group version has upstream's CRD priority (1000,
        // below every built-in group); ties go by APIService name,
        // `<version>.<group>`, so a group sorts by its first such name.
        let first_name = |g: &GroupInfo| {
            g.versions
                .iter()
                .map(|v| format!("{v}.{}", g.name))
                .min()
                .unwrap_or_default()
        };
        custom.sort_by_cached_key(first_name);
        built_in.into_iter().chain(custom).collect()
    }

    fn groups_as_registered(&self) -> Vec<GroupInfo> {
        let mut groups: Vec<GroupInfo> = Vec::new();
        for r in &self.resources {
            match groups.iter_mut().find(|g| g.name == r.group) {
                Some(g) => {
                    if !g.versions.iter().any(|v| *v == r.version) {
                        g.versions.push(r.version.clone());
                    }
                }
                None => groups.push(GroupInfo {
                    name: r.group.clone(),
                    versions: vec![r.version.clone()],
                }),
            }
        }
        groups
    }

    /// A new snapshot with `added` (replacing resources of the same
    /// group/version/resource) and without the resources `removed` names.
    pub fn changed(&self, added: Vec<ResourceDef>, removed: &[(String, String, String)]) -> Self {
        let added: Vec<Arc<ResourceDef>> = added.into_iter().map(Arc::new).collect();
        let replaced = |r: &ResourceDef| {
            added
                .iter()
                .any(|a| (&a.group, &a.version, &a.resource) == (&r.group, &r.version, &r.resource))
                || removed
                    .iter()
                    .any(|(g, v, res)| (g, v, res) == (&r.group, &r.version, &r.resource))
        };
        let resources = self
            .resources
            .iter()
            .filter(|r| !replaced(r))
            .cloned()
            .chain(added.iter().cloned())
            .collect();
        Self::indexed(resources, self.proxied.clone(), self.generation + 1)
    }
}

/// A Kubernetes-style version's parts: major, stability (GA 2, beta 1,
/// alpha 0) and minor.
fn kube_version(version: &str) -> Option<(u64, u8, u64)> {
    let rest = version.strip_prefix('v')?;
    let digits = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let major: u64 = rest[..digits].parse().ok()?;
    let tail = &rest[digits..];
    if tail.is_empty() {
        return Some((major, 2, 0));
    }
    let (stability, minor) = if let Some(minor) = tail.strip_prefix("beta") {
        (1, minor)
    } else if let Some(minor) = tail.strip_prefix("alpha") {
        (0, minor)
    } else {
        return None;
    };
    if minor.is_empty() || !minor.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    Some((major, stability, minor.parse().ok()?))
}

/// Upstream's CompareKubeAwareVersionStrings as a sort order, most
/// preferred first: GA before beta before alpha, higher versions first,
/// then versions that are not Kubernetes-style, by name.
pub fn kube_aware_order(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    match (kube_version(a), kube_version(b)) {
        (Some((a_major, a_stability, a_minor)), Some((b_major, b_stability, b_minor))) => {
            b_stability
                .cmp(&a_stability)
                .then(b_major.cmp(&a_major))
                .then(b_minor.cmp(&a_minor))
        }
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn custom_groups_follow_the_built_in_ones_by_apiservice_name() {
        let custom = |group: &str, version: &str| {
            let mut def = ResourceDef::new(
                group,
                version,
                "things",
                "Thing",
                true,
                crate::kinds::builtin("", "ConfigMap"),
            );
            def.origin = Origin::Custom;
            def
        };
        let registry = Registry::builtin().changed(
            vec![
                custom("zeta.example.com", "v1"),
                custom("alpha.example.com", "v1"),
                custom("beta.example.com", "v2"),
            ],
            &[],
        );
        let names: Vec<String> = registry
            .groups()
            .iter()
            .rev()
            .take(3)
            .map(|g| g.name.clone())
            .collect();
        assert_eq!(
            names,
            ["beta.example.com", "zeta.example.com", "alpha.example.com"]
        );
    }

    #[test]
    fn versions_sort_as_upstreams_kube_aware_order() {
        let mut versions = vec![
            "v1",
            "foo10",
            "v11alpha2",
            "v12alpha1",
            "v10beta3",
            "v3beta1",
            "v11beta2",
            "foo1",
            "v2",
        ];
        versions.sort_by(|a, b| kube_aware_order(a, b));
        assert_eq!(
            versions,
            [
                "v2",
                "v1",
                "v11beta2",
                "v10beta3",
                "v3beta1",
                "v12alpha1",
                "v11alpha2",
                "foo1",
                "foo10"
            ]
        );
    }

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
        assert_eq!(
            svc.key_prefix("/registry", Some("default")),
            "/registry/services/specs/default/"
        );
        assert_eq!(
            svc.key_prefix("/registry", None),
            "/registry/services/specs/"
        );
        assert_eq!(
            ns.key_prefix("/registry", Some("ignored")),
            "/registry/namespaces/"
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
            (hpa.version.as_str(), hpa.resource.as_str()),
            ("v1", "horizontalpodautoscalers")
        );
        assert!(r.lookup_kind("", "v1", "Binding").is_none());
        assert!(r.lookup_kind("apps", "v1", "Pod").is_none());
    }

    #[test]
    fn groups_list_core_first() {
        let groups = Registry::builtin().groups();
        assert_eq!(groups[0].name, "");
        // kube-aggregator lists its own group first, then the rest.
        assert_eq!(groups[1].name, "apiregistration.k8s.io");
        assert_eq!(groups[2].name, "apps");
    }
}
