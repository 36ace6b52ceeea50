//! The schema definitions of every built-in kind, generated at build time
//! from k8s-openapi's schemars output and shared by the documents,
//! `unknown_fields`, strategic merge patches and the protobuf codec.

use std::cell::OnceCell;
use std::collections::{BTreeMap, HashMap};
use std::sync::{OnceLock, RwLock};

use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

/// Prefix of the `$ref`s schemars writes with draft 2020-12 settings. The
/// generated definitions keep it; the documents rewrite it per flavour.
pub(crate) const RAW_REF_PREFIX: &str = "#/$defs/";

pub(crate) const STATUS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";
pub(crate) const DELETE_OPTIONS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions";
pub(crate) const PATCH: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch";
pub(crate) const WATCH_EVENT: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent";
pub(crate) const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";
pub(crate) const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// Definitions every group-version document carries because operations
/// refer to them whatever the kind.
pub(crate) const OPERATION_DEFINITIONS: [&str; 4] = [STATUS, DELETE_OPTIONS, PATCH, WATCH_EVENT];

/// Definitions parsed into trees: the discovery documents' types, and
/// every built-in definition parsed for one pass over all of them
/// ([`Builtin::parse_all`]).
pub(crate) type Definitions = BTreeMap<String, Value>;

/// All definitions reachable from the built-in kinds, keyed by upstream's
/// definition name (`io.k8s.api.core.v1.Pod`), in draft 2020-12 form.
///
/// Each is kept as its slice of the embedded JSON and parsed the first
/// time a write's decoding, managedFields or a patch asks for it, then
/// kept for the life of the process: parsed all at once they were about
/// 3 MB of an idle server's heap, while a server's writes touch the
/// schemas of the kinds it is sent. Passes over every definition (the
/// OpenAPI documents, the protobuf field orders) parse them for the pass
/// and drop them.
pub(crate) struct Builtin {
    /// Sorted by name.
    entries: Vec<Entry>,
    /// The name of each kept definition, by its map's address, for
    /// [`Builtin::name_of`].
    names: RwLock<HashMap<usize, &'static str>>,
}

struct Entry {
    name: &'static str,
    raw: &'static RawValue,
    parsed: OnceLock<Value>,
}

/// Definitions parsed for one pass over many of them, dropped with it.
pub(crate) struct Transient(Vec<OnceCell<Value>>);

/// Indexed on first use from the JSON the build script generated with
/// schemars (`build/openapi_definitions.rs`).
pub(crate) fn builtin() -> &'static Builtin {
    static DEFINITIONS: OnceLock<Builtin> = OnceLock::new();
    DEFINITIONS.get_or_init(|| {
        Builtin::index(include_str!(concat!(
            env!("OUT_DIR"),
            "/builtin_definitions.json"
        )))
    })
}

impl Builtin {
    /// The build script wrote the text with serde_json, so it parses; an
    /// empty index would only ever mean a broken build, which the tests
    /// catch.
    fn index(json: &'static str) -> Self {
        let raw: BTreeMap<&'static str, &'static RawValue> =
            serde_json::from_str(json).unwrap_or_default();
        Builtin {
            entries: raw
                .into_iter()
                .map(|(name, raw)| Entry {
                    name,
                    raw,
                    parsed: OnceLock::new(),
                })
                .collect(),
            names: RwLock::default(),
        }
    }

    fn position(&self, name: &str) -> Option<usize> {
        self.entries
            .binary_search_by(|entry| entry.name.cmp(name))
            .ok()
    }

    fn entry(&self, name: &str) -> Option<&Entry> {
        self.entries.get(self.position(name)?)
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    pub(crate) fn contains_key(&self, name: &str) -> bool {
        self.entry(name).is_some()
    }

    #[cfg(test)]
    pub(crate) fn keys(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.entries.iter().map(|entry| entry.name)
    }

    /// The definition named `name`, parsed once and kept.
    pub(crate) fn get(&'static self, name: &str) -> Option<&'static Value> {
        self.get_key_value(name).map(|(_, schema)| schema)
    }

    /// The definition and its name as a `'static` str.
    pub(crate) fn get_key_value(
        &'static self,
        name: &str,
    ) -> Option<(&'static str, &'static Value)> {
        let entry = self.entry(name)?;
        if let Some(parsed) = entry.parsed.get() {
            return Some((entry.name, parsed));
        }
        let parsed = entry.parsed.get_or_init(|| parse(entry.raw));
        if let Some(map) = parsed.as_object() {
            self.names
                .write()
                .unwrap_or_else(|p| p.into_inner())
                .insert(super::memo::address(map), entry.name);
        }
        Some((entry.name, parsed))
    }

    /// The name of the kept definition whose schema is `map`, found by
    /// address.
    pub(crate) fn name_of(&self, map: &'static Map<String, Value>) -> Option<&'static str> {
        self.names
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&super::memo::address(map))
            .copied()
    }

    /// Room for a pass to parse definitions it does not keep.
    pub(crate) fn transient(&self) -> Transient {
        Transient(self.entries.iter().map(|_| OnceCell::new()).collect())
    }

    /// The definition named `name`: the kept one if it is kept, otherwise
    /// parsed into `transient` for as long as it lives.
    pub(crate) fn get_within<'a>(
        &'static self,
        name: &str,
        transient: &'a Transient,
    ) -> Option<&'a Value> {
        let index = self.position(name)?;
        let entry = self.entries.get(index)?;
        match entry.parsed.get() {
            Some(parsed) => Some(parsed),
            None => Some(transient.0.get(index)?.get_or_init(|| parse(entry.raw))),
        }
    }

    /// Every definition, parsed for the caller and not kept.
    pub(crate) fn parse_all(&self) -> Definitions {
        self.entries
            .iter()
            .map(|entry| (entry.name.to_owned(), parse(entry.raw)))
            .collect()
    }
}

/// A slice of the build script's JSON; see [`Builtin::index`].
fn parse(raw: &RawValue) -> Value {
    serde_json::from_str(raw.get()).unwrap_or(Value::Null)
}

/// The discovery documents' types (`APIGroupList`, `APIResourceList`,
/// `APIVersions`), which no built-in kind refers to.
pub(crate) fn discovery() -> Definitions {
    embedded(include_str!(concat!(
        env!("OUT_DIR"),
        "/discovery_definitions.json"
    )))
}

/// The definition names of the kinds a strategic merge patch applies to.
pub(crate) fn strategic_merge_roots() -> Vec<String> {
    serde_json::from_str(include_str!(concat!(
        env!("OUT_DIR"),
        "/strategic_merge_roots.json"
    )))
    .unwrap_or_default()
}

/// The build script wrote the text with serde_json, so it parses; an empty
/// map would only ever mean a broken build, which the tests catch.
fn embedded(json: &str) -> Definitions {
    serde_json::from_str(json).unwrap_or_default()
}

/// The name upstream gives a kind's list type: same package, `<Kind>List`.
pub(crate) fn list_definition_name(definition: &str, kind: &str) -> String {
    match definition.rsplit_once('.') {
        Some((package, _)) => format!("{package}.{kind}List"),
        None => format!("{kind}List"),
    }
}

/// The schema of `<Kind>List`: k8s-openapi models lists as a generic
/// `List<T>` without a schema of its own, so it is written here the way
/// upstream publishes it.
pub(crate) fn list_schema(kind: &str, item_definition: &str) -> Value {
    json!({
        "description": format!("{kind}List is a list of {kind} objects."),
        "type": "object",
        "properties": {
            "apiVersion": {
                "description": API_VERSION_DESCRIPTION,
                "type": "string",
            },
            "items": {
                "description": format!("List of {kind} objects."),
                "type": "array",
                "items": { "$ref": format!("{RAW_REF_PREFIX}{item_definition}") },
            },
            "kind": {
                "description": KIND_DESCRIPTION,
                "type": "string",
            },
            "metadata": {
                "$ref": format!("{RAW_REF_PREFIX}{LIST_META}"),
                "description": "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds",
            },
        },
        "required": ["items"],
    })
}

/// Stand-in for a kind k8s-openapi does not know (a custom resource): the
/// type fields and metadata are known, everything else is preserved, so
/// clients neither reject nor prune its fields.
pub(crate) fn opaque_kind_schema(kind: &str) -> Value {
    let mut properties = Map::new();
    insert_type_meta(&mut properties, "Standard object's metadata.");
    json!({
        "description": format!("{kind} is served without a published schema."),
        "type": "object",
        "properties": properties,
        "x-kubernetes-preserve-unknown-fields": true,
    })
}

/// A kind published with its own schema (a custom resource's structural
/// schema), with the type fields and metadata every object has, as
/// upstream's CRD OpenAPI builder adds them.
pub(crate) fn custom_kind_schema(schema: &Value) -> Value {
    let mut schema = schema.clone();
    let Some(map) = schema.as_object_mut() else {
        return schema;
    };
    let properties = map
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(properties) = properties.as_object_mut() {
        insert_type_meta(
            properties,
            "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
        );
    }
    schema
}

/// The apiVersion, kind and metadata properties every object has.
fn insert_type_meta(properties: &mut Map<String, Value>, metadata_description: &str) {
    properties.insert(
        "apiVersion".into(),
        json!({ "description": API_VERSION_DESCRIPTION, "type": "string" }),
    );
    properties.insert(
        "kind".into(),
        json!({ "description": KIND_DESCRIPTION, "type": "string" }),
    );
    properties.insert(
        "metadata".into(),
        json!({
            "$ref": format!("{RAW_REF_PREFIX}{OBJECT_META}"),
            "description": metadata_description,
        }),
    );
}

const API_VERSION_DESCRIPTION: &str = "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";
const KIND_DESCRIPTION: &str = "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";

/// Names of the definitions `schema` refers to directly.
pub(crate) fn direct_refs(schema: &Value, out: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                // JSONSchemaProps has a *property* named `$ref`; only a string
                // value is a reference.
                match (key.as_str(), value) {
                    ("$ref", Value::String(reference)) => {
                        if let Some(name) = reference.strip_prefix(RAW_REF_PREFIX) {
                            out.push(name.to_owned());
                        }
                    }
                    _ => direct_refs(value, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| direct_refs(item, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The build script's JSON parses (an empty map would be a broken
    /// build), and every kind a strategic merge patch applies to has its
    /// definition among the built-in ones.
    #[test]
    fn the_embedded_definitions_hold_every_root() {
        let builtin = builtin();
        for name in [
            "io.k8s.api.core.v1.Pod",
            "io.k8s.api.apps.v1.Deployment",
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition",
            "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService",
            STATUS,
            DELETE_OPTIONS,
            PATCH,
            WATCH_EVENT,
            LIST_META,
            OBJECT_META,
        ] {
            assert!(builtin.contains_key(name), "{name}");
        }
        let roots = strategic_merge_roots();
        assert_eq!(roots.len(), 57);
        for root in &roots {
            assert!(builtin.contains_key(root), "{root}");
        }
        let discovery = discovery();
        for name in ["APIGroupList", "APIResourceList", "APIVersions"] {
            let name = format!("io.k8s.apimachinery.pkg.apis.meta.v1.{name}");
            assert!(discovery.contains_key(&name), "{name}");
        }
    }

    /// A definition is parsed when asked for and kept from then on (and
    /// found by its map's address); one parsed for a pass is not kept.
    #[test]
    fn definitions_are_parsed_when_asked_for() {
        let json = r##"{"a.B":{"type":"object","properties":{"c":{"$ref":"#/$defs/a.C"}}},"a.C":{"type":"string"}}"##;
        let definitions: &'static Builtin = Box::leak(Box::new(Builtin::index(json)));
        assert_eq!(definitions.len(), 2);
        assert!(definitions.entries.iter().all(|e| e.parsed.get().is_none()));

        let transient = definitions.transient();
        let c = definitions.get_within("a.C", &transient).expect("a.C");
        assert_eq!(c, &json!({"type": "string"}));
        assert!(definitions.entries.iter().all(|e| e.parsed.get().is_none()));
        drop(transient);

        let (name, b) = definitions.get_key_value("a.B").expect("a.B");
        assert_eq!(name, "a.B");
        assert_eq!(b["properties"]["c"]["$ref"], "#/$defs/a.C");
        assert!(std::ptr::eq(definitions.get("a.B").expect("kept"), b));
        let map = b.as_object().expect("object");
        assert_eq!(definitions.name_of(map), Some("a.B"));
        assert!(definitions
            .entry("a.C")
            .expect("a.C")
            .parsed
            .get()
            .is_none());

        // A kept definition is what a pass reads, not a second parse.
        let transient = definitions.transient();
        assert!(std::ptr::eq(
            definitions.get_within("a.B", &transient).expect("a.B"),
            b
        ));
        assert!(definitions.get("a.D").is_none());
        assert_eq!(definitions.parse_all().len(), 2);
    }
}
