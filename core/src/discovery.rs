//! Discovery documents, built once from the registry: the legacy documents
//! (/api, /apis, /api/v1, /apis/<g>, /apis/<g>/<v>) and aggregated discovery
//! v2 (`apidiscovery.k8s.io/v2` APIGroupDiscoveryList), which kubectl asks for first.

use serde_json::{json, Value};

use std::sync::Arc;

use arc_swap::ArcSwap;
use sha2::{Digest, Sha512};

use crate::registry::{Registry, RegistryHandle, ResourceDef};

pub const AGGREGATED_CONTENT_TYPE: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

fn group_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}

fn api_resource(r: &ResourceDef) -> Value {
    let mut v = json!({
        "name": r.resource,
        "singularName": r.singular,
        "namespaced": r.namespaced,
        "kind": r.kind,
        "verbs": r.advertised_verbs(),
    });
    if !r.short_names.is_empty() {
        v["shortNames"] = json!(r.short_names);
    }
    if !r.categories.is_empty() {
        v["categories"] = json!(r.categories);
    }
    v["storageVersionHash"] = json!(r.storage_version_hash());
    v
}

/// Verbs of a served subresource: a binding or token is only created, the others
/// are read and written.
fn subresource_verbs(sub: &str) -> &'static [&'static str] {
    match sub {
        "binding" | "token" | "eviction" => &["create"],
        "finalize" => &["update"],
        "attach" | "exec" | "portforward" => &["create", "get"],
        "log" => &["get"],
        "proxy" => &["create", "delete", "get", "patch", "update"],
        _ => &["get", "patch", "update"],
    }
}

/// (kind, group, version) a subresource answers with.
fn subresource_kind<'a>(r: &'a ResourceDef, sub: &str) -> (&'a str, &'a str, &'a str) {
    match sub {
        "scale" => ("Scale", "autoscaling", "v1"),
        "binding" => ("Binding", "", "v1"),
        "eviction" => ("Eviction", "policy", "v1"),
        "token" => ("TokenRequest", "authentication.k8s.io", "v1"),
        "attach" => ("PodAttachOptions", "", "v1"),
        "exec" => ("PodExecOptions", "", "v1"),
        "portforward" => ("PodPortForwardOptions", "", "v1"),
        "proxy" => match r.resource.as_str() {
            "services" => ("ServiceProxyOptions", "", "v1"),
            "nodes" => ("NodeProxyOptions", "", "v1"),
            _ => ("PodProxyOptions", "", "v1"),
        },
        _ => (&r.kind, &r.group, &r.version),
    }
}

fn api_subresources(r: &ResourceDef) -> Vec<Value> {
    r.subresources
        .iter()
        .map(|sub| {
            let (kind, group, version) = subresource_kind(r, sub);
            let mut v = serde_json::Map::new();
            v.insert("name".into(), json!(format!("{}/{sub}", r.resource)));
            v.insert("singularName".into(), json!(""));
            v.insert("namespaced".into(), json!(r.namespaced));
            // Named where they differ from the resource's own (Scale,
            // TokenRequest), as upstream's discovery does, in APIResource's
            // field order.
            if (group, version) != (r.group.as_str(), r.version.as_str()) && !group.is_empty() {
                v.insert("group".into(), json!(group));
                v.insert("version".into(), json!(version));
            }
            v.insert("kind".into(), json!(kind));
            v.insert("verbs".into(), json!(subresource_verbs(sub)));
            Value::Object(v)
        })
        .collect()
}

fn discovery_resource(r: &ResourceDef) -> Value {
    let mut v = json!({
        "resource": r.resource,
        "responseKind": {"group": r.group, "version": r.version, "kind": r.kind},
        "scope": if r.namespaced { "Namespaced" } else { "Cluster" },
        "singularResource": r.singular,
        "verbs": r.advertised_verbs(),
    });
    if !r.short_names.is_empty() {
        v["shortNames"] = json!(r.short_names);
    }
    if !r.categories.is_empty() {
        v["categories"] = json!(r.categories);
    }
    if !r.subresources.is_empty() {
        let subs: Vec<Value> = r
            .subresources
            .iter()
            .map(|sub| {
                let (kind, group, version) = subresource_kind(r, sub);
                json!({
                    "subresource": sub,
                    "responseKind": {"group": group, "version": version, "kind": kind},
                    "verbs": subresource_verbs(sub),
                })
            })
            .collect();
        v["subresources"] = json!(subs);
    }
    v
}

/// The discovery documents of one registry snapshot; nothing is computed
/// per request.
pub struct DiscoveryDocuments {
    /// The registry generation they describe.
    pub generation: u64,
    pub api_versions: Value,
    pub api_group_list: Value,
    groups: Vec<(String, Value)>,
    resource_lists: Vec<(String, String, Value)>,
    pub aggregated_core: Value,
    pub aggregated_groups: Value,
    /// Upstream's ETag of each aggregated document (quoted, uppercase hex
    /// SHA-512), so clients revalidate their cache with If-None-Match.
    pub aggregated_core_etag: String,
    pub aggregated_groups_etag: String,
}

/// Upstream's ETag of an aggregated discovery document.
pub fn etag(document: &Value) -> String {
    let digest = Sha512::digest(document.to_string().as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02X}")).collect();
    format!("\"{hex}\"")
}

impl DiscoveryDocuments {
    pub fn new(registry: &Registry) -> Self {
        let groups_info = registry.groups();
        let mut groups = Vec::new();
        let mut named = Vec::new();
        let mut resource_lists = Vec::new();
        let mut aggregated_core = Vec::new();
        let mut aggregated_groups = Vec::new();
        for g in &groups_info {
            let versions: Vec<Value> = g
                .versions
                .iter()
                .map(|v| json!({"groupVersion": group_version(&g.name, v), "version": v}))
                .collect();
            let mut discovery_versions = Vec::new();
            for v in &g.versions {
                let resources = registry.resources_in(&g.name, v);
                resource_lists.push((
                    g.name.clone(),
                    v.clone(),
                    json!({
                        "kind": "APIResourceList",
                        "apiVersion": "v1",
                        "groupVersion": group_version(&g.name, v),
                        "resources": resources.iter().flat_map(|r| std::iter::once(api_resource(r)).chain(api_subresources(r))).collect::<Vec<_>>(),
                    }),
                ));
                discovery_versions.push(json!({
                    "version": v,
                    "resources": resources.iter().map(|r| discovery_resource(r)).collect::<Vec<_>>(),
                    "freshness": "Current",
                }));
            }
            // ObjectMeta's order: name before creationTimestamp.
            let metadata = if g.name.is_empty() {
                json!({"creationTimestamp": null})
            } else {
                json!({"name": g.name, "creationTimestamp": null})
            };
            let item = json!({"metadata": metadata, "versions": discovery_versions});
            if g.name.is_empty() {
                aggregated_core.push(item);
                continue;
            }
            aggregated_groups.push(item);
            let group = json!({
                "name": g.name,
                "versions": versions,
                "preferredVersion": versions[0],
            });
            let mut document = json!({"kind": "APIGroup", "apiVersion": "v1"});
            if let (Some(doc), Some(fields)) = (document.as_object_mut(), group.as_object()) {
                doc.extend(fields.clone());
            }
            groups.push((g.name.clone(), document));
            named.push(group);
        }
        let list = |items: Vec<Value>| json!({"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {}, "items": items});
        let (aggregated_core, aggregated_groups) = (list(aggregated_core), list(aggregated_groups));
        Self {
            generation: registry.generation(),
            aggregated_core_etag: etag(&aggregated_core),
            aggregated_groups_etag: etag(&aggregated_groups),
            api_versions: json!({
                "kind": "APIVersions",
                "versions": ["v1"],
                "serverAddressByClientCIDRs": [],
            }),
            api_group_list: json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": named}),
            groups,
            resource_lists,
            aggregated_core,
            aggregated_groups,
        }
    }

    /// `/apis/<group>`.
    pub fn group(&self, group: &str) -> Option<&Value> {
        self.groups.iter().find(|(g, _)| g == group).map(|(_, v)| v)
    }

    /// `/api/v1` or `/apis/<group>/<version>`.
    pub fn resource_list(&self, group: &str, version: &str) -> Option<&Value> {
        self.resource_lists
            .iter()
            .find(|(g, v, _)| g == group && v == version)
            .map(|(_, _, doc)| doc)
    }
}

/// Discovery that follows the registry: the documents of the current
/// snapshot, built again (once) after each change.
pub struct Discovery {
    registry: Arc<RegistryHandle>,
    built: ArcSwap<DiscoveryDocuments>,
}

impl Discovery {
    pub fn new(registry: Arc<RegistryHandle>) -> Self {
        let built = ArcSwap::from_pointee(DiscoveryDocuments::new(&registry.snapshot()));
        Self { registry, built }
    }

    /// The documents for the resources served now.
    pub fn current(&self) -> Arc<DiscoveryDocuments> {
        let built = self.built.load_full();
        let served = self.registry.snapshot();
        if built.generation == served.generation() {
            return built;
        }
        // Two requests racing here both build; either result is current.
        let fresh = Arc::new(DiscoveryDocuments::new(&served));
        self.built.store(fresh.clone());
        fresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kind that adds nothing, served as widgets.example.com/v1.
    struct Widget;
    impl crate::kinds::Kind for Widget {}

    fn widgets() -> ResourceDef {
        ResourceDef::new(
            "example.com",
            "v1",
            "widgets",
            "Widget",
            true,
            Arc::new(Widget),
        )
    }

    #[test]
    fn documents_follow_the_registry() {
        let registry = Arc::new(RegistryHandle::new(Registry::builtin()));
        let discovery = Discovery::new(registry.clone());
        let before = discovery.current();
        assert!(before.group("example.com").is_none());
        registry.add(vec![widgets()]);
        let after = discovery.current();
        assert_eq!(
            after.resource_list("example.com", "v1").unwrap()["resources"][0]["name"],
            "widgets"
        );
        assert_ne!(before.aggregated_groups_etag, after.aggregated_groups_etag);
        assert_eq!(before.aggregated_core_etag, after.aggregated_core_etag);
        assert!(
            Arc::ptr_eq(&after, &discovery.current()),
            "built once per change"
        );
        registry.remove(&[("example.com".into(), "v1".into(), "widgets".into())]);
        let removed = discovery.current();
        assert!(removed.group("example.com").is_none());
        assert_eq!(
            removed.aggregated_groups_etag,
            before.aggregated_groups_etag
        );
    }

    #[test]
    fn documents_cover_core_and_apps() {
        let d = DiscoveryDocuments::new(&Registry::builtin());
        let core = d.resource_list("", "v1").unwrap();
        let pods = core["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == "pods")
            .unwrap();
        assert_eq!(pods["shortNames"][0], "po");
        assert_eq!(pods["categories"][0], "all");
        assert_eq!(
            d.group("apps").unwrap()["preferredVersion"]["groupVersion"],
            "apps/v1"
        );
        // The aggregator's own group first, as in /apis.
        let items = &d.aggregated_groups["items"];
        assert_eq!(items[0]["metadata"]["name"], "apiregistration.k8s.io");
        assert_eq!(items[1]["metadata"]["name"], "apps");
        // Written as upstream's types order their fields.
        assert_eq!(
            serde_json::to_string(&items[1]["metadata"]).unwrap(),
            r#"{"name":"apps","creationTimestamp":null}"#
        );
        let scale = d.resource_list("apps", "v1").unwrap()["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == "deployments/scale")
            .unwrap();
        assert_eq!(
            serde_json::to_string(scale).unwrap(),
            r#"{"name":"deployments/scale","singularName":"","namespaced":true,"group":"autoscaling","version":"v1","kind":"Scale","verbs":["get","patch","update"]}"#
        );
        assert_eq!(
            d.aggregated_core["items"][0]["versions"][0]["version"],
            "v1"
        );
        assert!(d.api_group_list["groups"]
            .as_array()
            .unwrap()
            .iter()
            .all(|g| g["name"] != ""));
    }
}
