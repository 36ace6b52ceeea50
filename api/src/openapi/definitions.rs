//! The schema definitions of every built-in kind, generated at build time
//! from k8s-openapi's schemars output and shared by the documents,
//! `unknown_fields`, strategic merge patches and the protobuf codec.

use std::collections::BTreeMap;
use std::sync::OnceLock;

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

/// All definitions reachable from the built-in kinds, keyed by upstream's
/// definition name (`io.k8s.api.core.v1.Pod`), in draft 2020-12 form.
pub(crate) type Definitions = BTreeMap<String, Value>;

/// Parsed on first use from the JSON the build script generated with
/// schemars (`build/openapi_definitions.rs`).
pub(crate) fn builtin() -> &'static Definitions {
    static DEFINITIONS: OnceLock<Definitions> = OnceLock::new();
    DEFINITIONS.get_or_init(|| {
        embedded(include_str!(concat!(
            env!("OUT_DIR"),
            "/builtin_definitions.json"
        )))
    })
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
}
