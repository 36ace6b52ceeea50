//! OpenAPI documents for the served kinds, and unknown-field detection.
//!
//! kubectl reads these documents to decide how to talk to the server:
//!
//! * `GET /openapi/v3` lists one document per group-version with a content
//!   hash in its URL; `kubectl apply` looks in the group-version document for
//!   a PATCH operation of the object's GVK that takes `fieldValidation`, and
//!   if it finds one leaves unknown-field checks to the server (see
//!   [`unknown_fields`]).
//! * `kubectl explain` finds the kind through the operations'
//!   `x-kubernetes-group-version-kind` and walks `components.schemas`.
//! * client-side `kubectl apply` computes strategic merge patches from the
//!   `x-kubernetes-patch-strategy` / `x-kubernetes-patch-merge-key` extensions
//!   on fields, from v3 first and `/openapi/v2` (Swagger 2.0) after.
//! * client-go fetches `/openapi/v2` only as gnostic protobuf
//!   ([`OpenApiDocuments::v2_protobuf`]); kubectl validates what the
//!   query-param verifiers leave to it (a `kind: List`, for one) against
//!   the definitions in it.
//!
//! Schemas come from k8s-openapi's schemars output, which already uses
//! upstream's definition names (`io.k8s.api.apps.v1.Deployment`), made at
//! build time and embedded as JSON ([`definitions`]). Each
//! document is generated and serialized once ([`OpenApiDocuments`]: the
//! group-version documents per registry change, reused across changes that
//! leave their group-version alone; v2 on first request); serving a
//! document hands out the cached bytes.

mod convert;
mod decode;
pub(crate) mod definitions;
mod gnostic;
pub mod go_values;
pub(crate) mod memo;
mod merge;
mod paths;

#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, OnceLock};

use serde::Serialize;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256, Sha512};

use convert::{convert_definition, Flavor, Gvk};
use paths::{group_version_path, referenced_definitions, resource_paths, PathItem};

pub use decode::{
    decode_typed, put_in_go_order, strip_unknown_fields, unknown_fields, TypeMismatch,
};
pub use merge::{merge_v2, BackendDocument};

/// The version the documents' `info` block names: the Kubernetes API release
/// whose schemas (k8s-openapi feature `v1_33`) they publish.
pub const API_RELEASE: &str = "v1.33.0";

/// What the registry tells OpenAPI about one served resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenApiResource {
    pub group: String,
    pub version: String,
    pub kind: String,
    /// Plural, e.g. "deployments".
    pub resource: String,
    pub namespaced: bool,
    /// Any of get list watch create update patch delete deletecollection;
    /// others are ignored.
    pub verbs: Vec<String>,
    /// Upstream definition name, e.g. "io.k8s.api.apps.v1.Deployment". A name
    /// k8s-openapi does not know (a custom resource) is published as an
    /// object that preserves unknown fields.
    pub definition: String,
    /// The kind's own OpenAPI v3 schema when it is not a built-in
    /// definition (a custom resource's structural schema), shared with the
    /// kind that serves it.
    pub schema: Option<Arc<Value>>,
}

#[derive(Debug, thiserror::Error)]
pub enum OpenApiError {
    #[error("resource {resource:?} of {group_version:?}: {reason}")]
    InvalidResource {
        group_version: String,
        resource: String,
        reason: &'static str,
    },
    #[error("resource {resource:?} of {group_version:?} is listed twice")]
    DuplicateResource {
        group_version: String,
        resource: String,
    },
    #[error("definition {0:?} is referenced but has no schema")]
    MissingDefinition(String),
    #[error("serializing an OpenAPI document: {0}")]
    Serialize(#[from] serde_json::Error),
    #[error("building the OpenAPI v2 document: {0}")]
    V2(String),
    #[error("keeping an OpenAPI document deflated: {0}")]
    Deflate(std::io::Error),
}

/// The serialized documents of one set of served resources. The v3 index
/// and the group-version documents are built with it (each taken from an
/// [`OpenApiCache`] when its resources did not change), the documents kept
/// deflated and inflated when asked for unless recently served or made
/// (by a build after the first); the whole v2 document, which only
/// kubectl's client-side validation and old clients read, is built on its
/// first request.
#[derive(Debug)]
pub struct OpenApiDocuments {
    v2: OnceLock<Result<V2Documents, String>>,
    /// What v2 is built from, sorted; dropped once it is built.
    v2_sources: Mutex<Vec<OpenApiResource>>,
    v3_index: Arc<[u8]>,
    v3: BTreeMap<String, GroupVersionDocument>,
    cache: Arc<OpenApiCache>,
}

#[derive(Debug)]
struct V2Documents {
    json: Arc<[u8]>,
    protobuf: Arc<[u8]>,
}

/// A group-version document as kept: what it is made of (see `made_of`),
/// its hash and its bytes deflated. Whole, at ~50 KB per custom resource
/// group, they were most of what a CustomResourceDefinition cost once
/// anyone had read the index; made again on request instead, each request's
/// plan left megabytes of short-lived values to the allocator (RSS grew
/// more than the documents had taken).
#[derive(Debug, Clone)]
struct GroupVersionDocument {
    made_of: [u8; 32],
    hash: String,
    deflated: Arc<[u8]>,
    /// Its JSON's length, to inflate it into one buffer of that size.
    len: usize,
}

fn deflate(json: &[u8]) -> Result<Arc<[u8]>, OpenApiError> {
    use std::io::Write as _;
    let mut encoder = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(json).map_err(OpenApiError::Deflate)?;
    Ok(encoder.finish().map_err(OpenApiError::Deflate)?.into())
}

fn inflate(document: &GroupVersionDocument) -> Result<Arc<[u8]>, OpenApiError> {
    use std::io::Read as _;
    let mut json = Vec::with_capacity(document.len);
    flate2::read::DeflateDecoder::new(&*document.deflated)
        .read_to_end(&mut json)
        .map_err(OpenApiError::Deflate)?;
    Ok(json.into())
}

/// Group-version documents kept from one build to the next, so a change of
/// one group-version (a CustomResourceDefinition added) rebuilds that
/// group-version's document alone, not every other one (kubernetes#105932
/// describes kube-apiserver's cost of rebuilding them all).
#[derive(Debug, Default)]
pub struct OpenApiCache {
    group_versions: Mutex<HashMap<String, GroupVersionDocument>>,
    recent: Mutex<RecentDocuments>,
}

/// Bytes of inflated group-version documents kept after they are made or
/// served: the few a client reads in a row (kubectl: the index, then the
/// group-versions of what it applies or explains) are served without
/// being inflated again.
const RECENT_DOCUMENT_BYTES: usize = 4 << 20;

/// Group-version documents recently made or served, least recent first,
/// up to `RECENT_DOCUMENT_BYTES` (the newest is kept whatever its size).
#[derive(Debug, Default)]
struct RecentDocuments {
    documents: VecDeque<(String, [u8; 32], Arc<[u8]>)>,
    bytes: usize,
}

impl RecentDocuments {
    fn get(&mut self, group_version: &str, made_of: &[u8; 32]) -> Option<Arc<[u8]>> {
        let at = self
            .documents
            .iter()
            .position(|(gv, made, _)| gv == group_version && made == made_of)?;
        let entry = self.documents.remove(at)?;
        let json = entry.2.clone();
        self.documents.push_back(entry);
        Some(json)
    }

    fn put(&mut self, group_version: &str, made_of: [u8; 32], json: Arc<[u8]>) {
        let bytes = &mut self.bytes;
        self.documents.retain(|(gv, _, old)| {
            let stays = gv != group_version;
            if !stays {
                *bytes -= old.len();
            }
            stays
        });
        self.bytes += json.len();
        self.documents
            .push_back((group_version.to_string(), made_of, json));
        while self.bytes > RECENT_DOCUMENT_BYTES && self.documents.len() > 1 {
            if let Some((_, _, old)) = self.documents.pop_front() {
                self.bytes -= old.len();
            }
        }
    }
}

/// A digest of what a group-version document is made of: its resources
/// (a custom resource's schema among them) and the kinds each of its
/// definitions is published for. Kept instead of a copy, which would hold
/// every definition's schema twice.
fn made_of(resources: &[&OpenApiResource], kinds: &[(String, Vec<Gvk>)]) -> [u8; 32] {
    let mut hasher = Sha256::new();
    let mut put = |part: &str| {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    };
    put(&resources.len().to_string());
    for resource in resources {
        put(&resource.group);
        put(&resource.version);
        put(&resource.kind);
        put(&resource.resource);
        put(if resource.namespaced {
            "namespaced"
        } else {
            "cluster"
        });
        put(&resource.verbs.len().to_string());
        resource.verbs.iter().for_each(|verb| put(verb));
        put(&resource.definition);
        put(&resource
            .schema
            .as_deref()
            .map(Value::to_string)
            .unwrap_or_default());
    }
    put(&kinds.len().to_string());
    for (name, gvks) in kinds {
        put(name);
        put(&gvks.len().to_string());
        for gvk in gvks {
            put(&gvk.group);
            put(&gvk.version);
            put(&gvk.kind);
        }
    }
    hasher.finalize().into()
}

impl OpenApiCache {
    /// How many group-version documents it knows the hash of.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.group_versions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .len()
    }

    /// The group-versions of the recently made or served documents, least
    /// recent first.
    #[cfg(test)]
    fn recent_group_versions(&self) -> Vec<String> {
        self.recent()
            .documents
            .iter()
            .map(|(gv, _, _)| gv.clone())
            .collect()
    }

    #[cfg(test)]
    fn forget_recent(&self) {
        *self.recent() = RecentDocuments::default();
    }

    fn recent(&self) -> std::sync::MutexGuard<'_, RecentDocuments> {
        self.recent.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The served resources laid out by group-version, with the definitions
/// k8s-openapi does not have and the kinds each definition is served as.
struct Plan<'a> {
    synthesized: BTreeMap<String, Value>,
    /// The built-in definitions this build reads, parsed for it alone.
    parsed: definitions::Transient,
    gvks: BTreeMap<String, Vec<Gvk>>,
    group_versions: BTreeMap<String, GroupVersionParts<'a>>,
}

impl<'a> Plan<'a> {
    fn of(resources: &'a [OpenApiResource]) -> Result<Self, OpenApiError> {
        let builtin = definitions::builtin();
        let mut resources: Vec<&OpenApiResource> = resources.iter().collect();
        resources.sort_by(|a, b| {
            (&a.group, &a.version, &a.resource).cmp(&(&b.group, &b.version, &b.resource))
        });

        // Schemas k8s-openapi does not have: list kinds and unknown kinds.
        let mut synthesized: BTreeMap<String, Value> = BTreeMap::new();
        let mut gvks: BTreeMap<String, Vec<Gvk>> = BTreeMap::new();
        let mut group_versions: BTreeMap<String, GroupVersionParts<'a>> = BTreeMap::new();
        let mut seen = HashSet::new();

        for resource in resources {
            let group_version = group_version_path(&resource.group, &resource.version);
            validate(resource, &group_version)?;
            if !seen.insert((group_version.clone(), resource.resource.clone())) {
                return Err(OpenApiError::DuplicateResource {
                    group_version,
                    resource: resource.resource.clone(),
                });
            }
            if !builtin.contains_key(&resource.definition) {
                synthesized
                    .entry(resource.definition.clone())
                    .or_insert_with(|| match resource.schema.as_deref() {
                        Some(schema) => definitions::custom_kind_schema(schema),
                        None => definitions::opaque_kind_schema(&resource.kind),
                    });
            }
            add_gvk(
                &mut gvks,
                &resource.definition,
                Gvk {
                    group: resource.group.clone(),
                    version: resource.version.clone(),
                    kind: resource.kind.clone(),
                },
            );

            let list_definition =
                definitions::list_definition_name(&resource.definition, &resource.kind);
            let parts = group_versions.entry(group_version).or_default();
            parts.resources.push(resource);
            parts.roots.insert(resource.definition.clone());
            if resource.verbs.iter().any(|v| v == "list") {
                if !builtin.contains_key(&list_definition) {
                    synthesized
                        .entry(list_definition.clone())
                        .or_insert_with(|| {
                            definitions::list_schema(&resource.kind, &resource.definition)
                        });
                }
                add_gvk(
                    &mut gvks,
                    &list_definition,
                    Gvk {
                        group: resource.group.clone(),
                        version: resource.version.clone(),
                        kind: format!("{}List", resource.kind),
                    },
                );
            }
            let items = resource_paths(resource, &list_definition);
            parts
                .roots
                .extend(referenced_definitions(&items).map(str::to_owned));
            parts.paths.extend(items);
        }
        for parts in group_versions.values_mut() {
            parts
                .roots
                .extend(definitions::OPERATION_DEFINITIONS.map(str::to_owned));
        }
        Ok(Plan {
            synthesized,
            parsed: builtin.transient(),
            gvks,
            group_versions,
        })
    }

    /// The schema of a definition: synthesized here, or k8s-openapi's.
    fn definition(&self, name: &str) -> Option<&Value> {
        self.synthesized
            .get(name)
            .or_else(|| definitions::builtin().get_within(name, &self.parsed))
    }

    /// The kinds each of `names` is published for.
    fn kinds_of(&self, names: &BTreeSet<String>) -> Vec<(String, Vec<Gvk>)> {
        names
            .iter()
            .filter_map(|name| {
                self.gvks
                    .get(name)
                    .map(|kinds| (name.clone(), kinds.clone()))
            })
            .collect()
    }
}

impl OpenApiDocuments {
    /// The documents of every resource `registry` serves.
    pub fn for_registry(registry: &crate::registry::Registry) -> Result<Self, OpenApiError> {
        Self::for_registry_cached(registry, &Arc::default())
    }

    /// The same, reusing the group-version documents `cache` holds from an
    /// earlier build whose resources did not change.
    pub fn for_registry_cached(
        registry: &crate::registry::Registry,
        cache: &Arc<OpenApiCache>,
    ) -> Result<Self, OpenApiError> {
        let resources: Vec<OpenApiResource> = registry
            .resources()
            .iter()
            .map(|r| OpenApiResource {
                group: r.group.clone(),
                version: r.version.clone(),
                kind: r.kind.clone(),
                resource: r.resource.clone(),
                namespaced: r.namespaced,
                verbs: r.verbs.clone(),
                definition: r.definition.clone(),
                schema: r.kind_impl.openapi_schema(),
            })
            .collect();
        Self::build_cached(&resources, cache)
    }

    pub fn build(resources: &[OpenApiResource]) -> Result<Self, OpenApiError> {
        Self::build_cached(resources, &Arc::default())
    }

    pub fn build_cached(
        resources: &[OpenApiResource],
        cache: &Arc<OpenApiCache>,
    ) -> Result<Self, OpenApiError> {
        let plan = Plan::of(resources)?;
        let lookup = |name: &str| plan.definition(name);
        let mut converted = ConvertedDefinitions::default();
        let mut v3 = BTreeMap::new();
        {
            let mut cached = cache
                .group_versions
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            // The first build (start-up) makes every document and none is
            // more likely to be asked for than another: keeping them all
            // inflated held ~2.8 MB of an idle server.
            let first_build = cached.is_empty();
            for (group_version, parts) in &plan.group_versions {
                let names = closure(&parts.roots, &lookup)?;
                let made_of = made_of(&parts.resources, &plan.kinds_of(&names));
                if let Some(kept) = cached
                    .get(group_version)
                    .filter(|kept| kept.made_of == made_of)
                {
                    v3.insert(group_version.clone(), kept.clone());
                    continue;
                }
                let json = group_version_json(&plan, parts, &names, &mut converted)?;
                let document = GroupVersionDocument {
                    made_of,
                    hash: sha512_upper_hex(&json),
                    deflated: deflate(&json)?,
                    len: json.len(),
                };
                // Made to be hashed; likely asked for next (a definition
                // just added, its custom resources about to be applied).
                if !first_build {
                    cache.recent().put(group_version, made_of, json.into());
                }
                cached.insert(group_version.clone(), document.clone());
                v3.insert(group_version.clone(), document);
            }
            cached.retain(|group_version, _| v3.contains_key(group_version));
        }

        let index = V3Index {
            paths: v3
                .iter()
                .map(|(path, doc)| {
                    (
                        path.as_str(),
                        IndexEntry {
                            server_relative_url: format!("/openapi/v3/{path}?hash={}", doc.hash),
                        },
                    )
                })
                .collect(),
        };
        let v3_index = serde_json::to_vec(&index)?;

        Ok(OpenApiDocuments {
            v2: OnceLock::new(),
            v2_sources: Mutex::new(resources.to_vec()),
            v3_index: v3_index.into(),
            v3,
            cache: cache.clone(),
        })
    }

    /// Whether the v2 document has been built (a caller on an async thread
    /// builds it on a blocking one first).
    pub fn v2_is_built(&self) -> bool {
        self.v2.get().is_some()
    }

    fn v2_documents(&self) -> Result<&V2Documents, OpenApiError> {
        self.v2
            .get_or_init(|| {
                let sources =
                    std::mem::take(&mut *self.v2_sources.lock().unwrap_or_else(|p| p.into_inner()));
                Self::build_v2(&sources).map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(|e| OpenApiError::V2(e.clone()))
    }

    fn build_v2(resources: &[OpenApiResource]) -> Result<V2Documents, OpenApiError> {
        let plan = Plan::of(resources)?;
        let lookup = |name: &str| plan.definition(name);
        let mut all_roots: BTreeSet<String> = definitions::OPERATION_DEFINITIONS
            .map(str::to_owned)
            .into_iter()
            .collect();
        for parts in plan.group_versions.values() {
            all_roots.extend(parts.roots.iter().cloned());
        }
        let names = closure(&all_roots, &lookup)?;
        let mut converted = ConvertedDefinitions::default();
        let v2_document = V2Document {
            swagger: "2.0",
            info: INFO,
            paths: render_paths(
                plan.group_versions.values().flat_map(|p| p.paths.iter()),
                Flavor::V2,
            ),
            definitions: converted.get(&names, Flavor::V2, &lookup, &plan.gvks)?,
        };
        let json = serde_json::to_vec(&v2_document)?;
        // Encoded from the same values as the JSON, so the two cannot drift.
        let protobuf = gnostic::document(
            v2_document.swagger,
            &v2_document.info,
            &v2_document.paths,
            &v2_document.definitions,
        );
        Ok(V2Documents {
            json: json.into(),
            protobuf: protobuf.into(),
        })
    }

    /// Swagger 2.0 JSON with every served path and the definitions they use.
    pub fn v2(&self) -> Result<&[u8], OpenApiError> {
        Ok(&self.v2_documents()?.json)
    }

    /// The same bytes as [`Self::v2`], shareable without copying.
    pub fn v2_shared(&self) -> Result<Arc<[u8]>, OpenApiError> {
        Ok(Arc::clone(&self.v2_documents()?.json))
    }

    /// The [`Self::v2`] document as gnostic's `openapi.v2.Document`
    /// protobuf message: what `/openapi/v2` serves for
    /// `Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf`
    /// (or `...spec.v2.v1.0+protobuf`), the only form client-go's
    /// `OpenAPISchema()` asks for.
    pub fn v2_protobuf(&self) -> Result<&[u8], OpenApiError> {
        Ok(&self.v2_documents()?.protobuf)
    }

    /// The same bytes as [`Self::v2_protobuf`], shareable without copying.
    pub fn v2_protobuf_shared(&self) -> Result<Arc<[u8]>, OpenApiError> {
        Ok(Arc::clone(&self.v2_documents()?.protobuf))
    }

    /// `{"paths": {"api/v1": {"serverRelativeURL": "/openapi/v3/api/v1?hash=..."}}}`.
    pub fn v3_index(&self) -> &[u8] {
        &self.v3_index
    }

    /// The same bytes as [`Self::v3_index`], shareable without copying.
    pub fn v3_index_shared(&self) -> Arc<[u8]> {
        Arc::clone(&self.v3_index)
    }

    /// The OpenAPI 3.0 document of one group-version; `path` is `api/v1` or
    /// `apis/apps/v1` (a leading `/` is tolerated). None for a
    /// group-version without one. Inflated (on the caller's thread) unless
    /// it was made or served recently.
    pub fn v3_group_version(&self, path: &str) -> Result<Option<Arc<[u8]>>, OpenApiError> {
        let path = path.trim_start_matches('/');
        let Some(document) = self.v3.get(path) else {
            return Ok(None);
        };
        if let Some(json) = self.cache.recent().get(path, &document.made_of) {
            return Ok(Some(json));
        }
        let json = inflate(document)?;
        self.cache
            .recent()
            .put(path, document.made_of, json.clone());
        Ok(Some(json))
    }

    /// A group-version document made or served recently (and current):
    /// one a request can have without inflating anything.
    pub fn recent_v3_group_version(&self, path: &str) -> Option<Arc<[u8]>> {
        let path = path.trim_start_matches('/');
        let document = self.v3.get(path)?;
        self.cache.recent().get(path, &document.made_of)
    }

    /// Upstream's hash of a group-version document: SHA-512 of its JSON bytes
    /// in upper-case hex. The index's URLs carry it and kube-apiserver
    /// redirects a request with a stale `hash` to the current one.
    pub fn v3_hash(&self, path: &str) -> Option<&str> {
        self.v3
            .get(path.trim_start_matches('/'))
            .map(|d| d.hash.as_str())
    }

    /// The group-version paths with a v3 document, sorted.
    pub fn v3_group_versions(&self) -> impl Iterator<Item = &str> {
        self.v3.keys().map(String::as_str)
    }
}

/// One group-version's document as JSON: its paths and the schemas of
/// `names` (its definitions' closure).
fn group_version_json(
    plan: &Plan<'_>,
    parts: &GroupVersionParts<'_>,
    names: &BTreeSet<String>,
    converted: &mut ConvertedDefinitions,
) -> Result<Vec<u8>, OpenApiError> {
    let schemas = converted.get(
        names,
        Flavor::V3,
        &|name: &str| plan.definition(name),
        &plan.gvks,
    )?;
    Ok(serde_json::to_vec(&V3Document {
        openapi: "3.0.0",
        info: INFO,
        paths: render_paths(parts.paths.iter(), Flavor::V3),
        components: Components { schemas },
    })?)
}

#[derive(Default)]
struct GroupVersionParts<'a> {
    resources: Vec<&'a OpenApiResource>,
    roots: BTreeSet<String>,
    paths: Vec<PathItem>,
}

fn validate(resource: &OpenApiResource, group_version: &str) -> Result<(), OpenApiError> {
    let invalid = |reason| OpenApiError::InvalidResource {
        group_version: group_version.to_owned(),
        resource: resource.resource.clone(),
        reason,
    };
    let segment_ok = |s: &str| !s.is_empty() && !s.contains(['/', '?', '#', '{', '}']);
    if !segment_ok(&resource.version) {
        return Err(invalid("version must be a non-empty path segment"));
    }
    if !resource.group.is_empty() && !segment_ok(&resource.group) {
        return Err(invalid("group must be a path segment"));
    }
    if !segment_ok(&resource.resource) {
        return Err(invalid("resource must be a non-empty path segment"));
    }
    if resource.kind.is_empty() {
        return Err(invalid("kind is empty"));
    }
    if resource.definition.is_empty() {
        return Err(invalid("definition is empty"));
    }
    Ok(())
}

fn add_gvk(gvks: &mut BTreeMap<String, Vec<Gvk>>, definition: &str, gvk: Gvk) {
    let list = gvks.entry(definition.to_owned()).or_default();
    if !list.contains(&gvk) {
        list.push(gvk);
        list.sort();
    }
}

/// `roots` and every definition they reach through `$ref`s.
fn closure<'a>(
    roots: &BTreeSet<String>,
    lookup: &impl Fn(&str) -> Option<&'a Value>,
) -> Result<BTreeSet<String>, OpenApiError> {
    let mut names = BTreeSet::new();
    let mut pending: Vec<String> = roots.iter().cloned().collect();
    let mut refs = Vec::new();
    while let Some(name) = pending.pop() {
        if names.contains(&name) {
            continue;
        }
        let schema = lookup(&name).ok_or_else(|| OpenApiError::MissingDefinition(name.clone()))?;
        refs.clear();
        definitions::direct_refs(schema, &mut refs);
        pending.extend(refs.drain(..).filter(|r| !names.contains(r)));
        names.insert(name);
    }
    Ok(names)
}

/// Definitions converted once per flavour: group-version documents share most
/// of theirs (ObjectMeta, PodSpec, ...).
#[derive(Default)]
struct ConvertedDefinitions {
    v2: BTreeMap<String, Value>,
    v3: BTreeMap<String, Value>,
}

impl ConvertedDefinitions {
    fn get<'s, 'a>(
        &'s mut self,
        names: &BTreeSet<String>,
        flavor: Flavor,
        lookup: &impl Fn(&str) -> Option<&'a Value>,
        gvks: &BTreeMap<String, Vec<Gvk>>,
    ) -> Result<BTreeMap<&'s str, &'s Value>, OpenApiError> {
        let cache = match flavor {
            Flavor::V2 => &mut self.v2,
            Flavor::V3 => &mut self.v3,
        };
        for name in names {
            if cache.contains_key(name) {
                continue;
            }
            let raw = lookup(name).ok_or_else(|| OpenApiError::MissingDefinition(name.clone()))?;
            let kinds = gvks.get(name).map_or(&[][..], Vec::as_slice);
            cache.insert(name.clone(), convert_definition(name, raw, flavor, kinds));
        }
        let cache = &*cache;
        Ok(names
            .iter()
            .filter_map(|name| cache.get_key_value(name))
            .map(|(name, schema)| (name.as_str(), schema))
            .collect())
    }
}

fn render_paths<'a>(
    items: impl Iterator<Item = &'a PathItem>,
    flavor: Flavor,
) -> Map<String, Value> {
    let mut sorted: Vec<&PathItem> = items.collect();
    sorted.sort_by(|a, b| a.path.cmp(&b.path));
    sorted
        .into_iter()
        .map(|item| (item.path.clone(), item.render(flavor)))
        .collect()
}

fn sha512_upper_hex(bytes: &[u8]) -> String {
    let digest = Sha512::digest(bytes);
    let mut hex = String::with_capacity(digest.len() * 2);
    for byte in digest {
        // Writing into a String cannot fail.
        let _ = write!(hex, "{byte:02X}");
    }
    hex
}

#[derive(Serialize, Clone, Copy)]
struct Info {
    title: &'static str,
    version: &'static str,
}

const INFO: Info = Info {
    title: "Kubernetes",
    version: API_RELEASE,
};

#[derive(Serialize)]
struct V2Document<'a> {
    swagger: &'static str,
    info: Info,
    paths: Map<String, Value>,
    definitions: BTreeMap<&'a str, &'a Value>,
}

#[derive(Serialize)]
struct V3Document<'a> {
    openapi: &'static str,
    info: Info,
    paths: Map<String, Value>,
    components: Components<'a>,
}

#[derive(Serialize)]
struct Components<'a> {
    schemas: BTreeMap<&'a str, &'a Value>,
}

#[derive(Serialize)]
struct V3Index<'a> {
    paths: BTreeMap<&'a str, IndexEntry>,
}

#[derive(Serialize)]
struct IndexEntry {
    #[serde(rename = "serverRelativeURL")]
    server_relative_url: String,
}
