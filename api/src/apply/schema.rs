//! How each field of a built-in kind merges for server-side apply, resolved
//! from the k8s-openapi schemas plus the facts those schemas lack.
//!
//! k8s-openapi's schemas carry no `x-kubernetes-list-type`,
//! `x-kubernetes-list-map-keys` or `x-kubernetes-map-type`. Upstream's
//! structured-merge-diff schema (kube-openapi `schemaconv`) takes a list's
//! relationship from `x-kubernetes-list-type` when present and otherwise from
//! the strategic-merge-patch tags (merge + key → associative by that key,
//! merge without key → set), defaulting to atomic. So the merge keys come
//! from [`crate::patch::patch_meta`], and the tables below hold the
//! `+listType`, `+listMapKey`, `+structType=atomic` and `+mapType=atomic`
//! markers that differ from or add to them.

use serde_json::{Map, Value};

use crate::patch::patch_meta::field_patch_meta;

const REF_PREFIX: &str = "#/$defs/";
/// Upstream types quantities as any scalar, whatever their schema says.
const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";

/// How a list's items are identified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListKind {
    /// Replaced as a whole.
    Atomic,
    /// Scalar items identified by their value.
    Set,
    /// Object items identified by these key fields.
    Map(Vec<&'static str>),
}

/// What a scalar holds, as structured-merge-diff types it: numbers,
/// booleans, plain strings, or anything scalar (int-or-string, quantities,
/// times and other formatted strings).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarKind {
    Numeric,
    Boolean,
    String,
    Untyped,
}

/// The merge semantics of one value's position in an object.
#[derive(Debug, Clone)]
pub enum Node {
    /// Declared fields; `definition` names it for the tables.
    Struct {
        definition: Option<&'static str>,
        properties: &'static Map<String, Value>,
        /// Fields Go serializes even when zero (no `omitempty`).
        required: &'static [Value],
        atomic: bool,
        /// Whether fields beyond the declared ones are accepted (untyped).
        open: bool,
    },
    /// String-keyed map; `element` is `None` when values are untyped.
    Map {
        element: Option<&'static Value>,
        atomic: bool,
    },
    List {
        items: Option<&'static Value>,
        kind: ListKind,
    },
    Scalar(ScalarKind),
    /// Untyped: shaped by the value itself (objects are granular maps, lists
    /// atomic), as upstream's `__untyped_deduced_` type.
    Deduced,
}

/// The schemas of one kind. A kind without a built-in schema (a custom
/// resource) has typed metadata and untyped everything else.
#[derive(Clone, Copy)]
pub struct Schema {
    definitions: Option<&'static crate::openapi::definitions::Builtin>,
    root: Option<&'static Value>,
    root_name: Option<&'static str>,
}

/// A custom kind's schema as server-side apply reads it: the list types,
/// map keys and map types its definition declares, and whether its status
/// has a subresource of its own.
#[derive(Debug, Clone, Copy)]
pub struct CustomSchema {
    root: &'static Value,
    pub status_subresource: bool,
}

impl CustomSchema {
    /// The nodes of this module point into schemas that live as long as the
    /// process (the built-in ones are); a definition's schema is therefore
    /// interned, once per distinct schema, with `metadata` as ObjectMeta.
    pub fn new(open_api_v3: &Value, status_subresource: bool) -> CustomSchema {
        use std::collections::HashMap;
        use std::sync::{Mutex, OnceLock};
        static INTERNED: OnceLock<Mutex<HashMap<String, &'static Value>>> = OnceLock::new();
        let mut root = open_api_v3.clone();
        if let Some(properties) = root
            .as_object_mut()
            .map(|r| {
                r.entry("properties")
                    .or_insert_with(|| Value::Object(Map::new()))
            })
            .and_then(Value::as_object_mut)
        {
            let typed = |t: &str| serde_json::json!({"type": t});
            properties.insert("apiVersion".into(), typed("string"));
            properties.insert("kind".into(), typed("string"));
            properties.insert(
                "metadata".into(),
                serde_json::json!({"$ref": format!("{REF_PREFIX}io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")}),
            );
        }
        let key = root.to_string();
        let interned = INTERNED.get_or_init(Default::default);
        let mut interned = interned.lock().unwrap_or_else(|e| e.into_inner());
        let root: &'static Value = interned
            .entry(key)
            .or_insert_with(|| Box::leak(Box::new(root)));
        CustomSchema {
            root,
            status_subresource,
        }
    }
}

impl Schema {
    /// The schema of a built-in kind, or of a custom one.
    pub fn for_kind(definition: &str, custom: Option<CustomSchema>) -> Self {
        match custom {
            Some(custom) => Self {
                definitions: Some(crate::openapi::definitions::builtin()),
                root: Some(custom.root),
                root_name: None,
            },
            None => Self::for_definition(definition),
        }
    }

    pub fn for_definition(definition: &str) -> Self {
        let definitions = crate::openapi::definitions::builtin();
        match definitions.get_key_value(definition) {
            Some((name, root)) => Self {
                definitions: Some(definitions),
                root: Some(root),
                root_name: Some(name),
            },
            None => Self {
                definitions: Some(definitions),
                root: Some(unknown_kind_root()),
                root_name: None,
            },
        }
    }

    pub fn root(&self) -> Node {
        match self.root {
            Some(root) => self.resolve(root, self.root_name),
            None => Node::Deduced,
        }
    }

    /// The node of `key` inside a value at `parent`.
    pub fn field(&self, parent: &Node, key: &str) -> Node {
        match parent {
            Node::Struct {
                definition,
                properties,
                ..
            } => match properties.get(key) {
                Some(schema) => self.resolve_field(*definition, key, schema),
                None => Node::Deduced,
            },
            Node::Map {
                element: Some(element),
                ..
            } => self.resolve(element, None),
            _ => Node::Deduced,
        }
    }

    /// The node of an item of a list at `parent`.
    pub fn item(&self, parent: &Node) -> Node {
        match parent {
            Node::List {
                items: Some(items), ..
            } => self.resolve(items, None),
            _ => Node::Deduced,
        }
    }

    /// The definition name an item schema refers to, for key defaults.
    pub fn item_definition(&self, parent: &Node) -> Option<&'static str> {
        match parent {
            Node::List {
                items: Some(items), ..
            } => self.follow(items).1,
            _ => None,
        }
    }

    fn resolve_field(
        &self,
        owner: Option<&'static str>,
        field: &str,
        schema: &'static Value,
    ) -> Node {
        // `schema` is the property's own schema, so it and the owner
        // identify the field.
        memoized(Memo::Field, schema, owner, || {
            self.resolve_field_uncached(owner, field, schema)
        })
    }

    fn resolve_field_uncached(
        &self,
        owner: Option<&'static str>,
        field: &str,
        schema: &'static Value,
    ) -> Node {
        let node = self.resolve_uncached(schema, None);
        let Some(owner) = owner else {
            return node;
        };
        match node {
            Node::List { items, .. } => Node::List {
                items,
                kind: list_kind(owner, field),
            },
            Node::Map { element, .. } => Node::Map {
                element,
                atomic: ATOMIC_MAPS.contains(&(owner, field)),
            },
            other => other,
        }
    }

    /// Follows `$ref`s and single-entry `allOf`s to the describing schema.
    fn follow(
        &self,
        mut schema: &'static Value,
    ) -> (Option<&'static Map<String, Value>>, Option<&'static str>) {
        let mut name = None;
        for _ in 0..32 {
            let Some(map) = schema.as_object() else {
                return (None, name);
            };
            if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
                let Some((found, next)) = reference
                    .strip_prefix(REF_PREFIX)
                    .and_then(|n| self.definitions?.get_key_value(n))
                else {
                    return (None, name);
                };
                name = Some(found);
                schema = next;
                continue;
            }
            match map.get("allOf").and_then(Value::as_array) {
                Some(all) if all.len() == 1 && !map.contains_key("properties") => schema = &all[0],
                _ => return (Some(map), name),
            }
        }
        (None, name)
    }

    fn resolve(&self, schema: &'static Value, name: Option<&'static str>) -> Node {
        memoized(Memo::Schema, schema, name, || {
            self.resolve_uncached(schema, name)
        })
    }

    fn resolve_uncached(&self, schema: &'static Value, name: Option<&'static str>) -> Node {
        let (Some(map), followed) = self.follow(schema) else {
            return Node::Deduced;
        };
        let definition = followed.or(name);
        let flag = |key: &str| map.get(key).and_then(Value::as_bool).unwrap_or(false);
        if flag("x-kubernetes-int-or-string") || definition == Some(QUANTITY) {
            return Node::Scalar(ScalarKind::Untyped);
        }
        if flag("x-kubernetes-preserve-unknown-fields")
            || map.contains_key("oneOf")
            || map.contains_key("anyOf")
        {
            return Node::Deduced;
        }
        let types: Vec<&str> = match map.get("type") {
            Some(Value::String(single)) => vec![single.as_str()],
            Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        // Built-in schemas carry no list or map types (the tables below
        // add them); a custom resource definition's schema declares its own.
        let atomic_map = map.get("x-kubernetes-map-type").and_then(Value::as_str) == Some("atomic");
        if types.contains(&"array") {
            let kind = match map.get("x-kubernetes-list-type").and_then(Value::as_str) {
                Some("set") => ListKind::Set,
                Some("map") => ListKind::Map(
                    map.get("x-kubernetes-list-map-keys")
                        .and_then(Value::as_array)
                        .map(|keys| keys.iter().filter_map(Value::as_str).collect())
                        .unwrap_or_default(),
                ),
                _ => ListKind::Atomic,
            };
            return Node::List {
                items: map.get("items").filter(|i| i.is_object()),
                kind,
            };
        }
        if types.contains(&"object") {
            if let Some(properties) = map.get("properties").and_then(Value::as_object) {
                return Node::Struct {
                    definition,
                    properties,
                    required: map
                        .get("required")
                        .and_then(Value::as_array)
                        .map(Vec::as_slice)
                        .unwrap_or(&[]),
                    atomic: atomic_map || definition.is_some_and(|d| ATOMIC_STRUCTS.contains(&d)),
                    open: map.contains_key("additionalProperties"),
                };
            }
            return match map.get("additionalProperties").filter(|a| a.is_object()) {
                Some(element) => Node::Map {
                    element: Some(element),
                    atomic: atomic_map,
                },
                None => Node::Deduced,
            };
        }
        if types.is_empty() {
            return Node::Deduced;
        }
        let format = map.get("format").and_then(Value::as_str).unwrap_or("");
        Node::Scalar(match types[0] {
            "integer" | "number" => ScalarKind::Numeric,
            "boolean" => ScalarKind::Boolean,
            "string" if matches!(format, "" | "byte") => ScalarKind::String,
            _ => ScalarKind::Untyped,
        })
    }
}

/// What a memoized node was resolved as.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Memo {
    Schema,
    Field,
}

/// The node `resolve` makes of `schema` (with `name`), kept per thread
/// (see `openapi::memo`).
fn memoized(
    memo: Memo,
    schema: &'static Value,
    name: Option<&'static str>,
    resolve: impl FnOnce() -> Node,
) -> Node {
    use crate::openapi::memo::{address, get_or_derive};
    type Key = (Memo, usize, Option<(usize, usize)>);
    thread_local! {
        static NODES: crate::openapi::memo::Memo<Key, Node> = Default::default();
    }
    let key = (memo, address(schema), name.map(|n| (address(n), n.len())));
    get_or_derive(&NODES, key, resolve)
}

/// The root of a kind without a built-in schema (a custom resource): its
/// metadata is still `ObjectMeta`, every other field is untyped.
fn unknown_kind_root() -> &'static Value {
    static ROOT: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    ROOT.get_or_init(|| {
        serde_json::json!({
            "type": "object",
            "properties": {
                "apiVersion": {"type": "string"},
                "kind": {"type": "string"},
                "metadata": {"$ref": format!("{REF_PREFIX}io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")},
            },
            "additionalProperties": {},
        })
    })
}

/// The list relationship of `owner.field`: an explicit `+listType` marker
/// first, else the strategic-merge-patch tags, else atomic.
fn list_kind(owner: &str, field: &str) -> ListKind {
    if let Some((_, _, kind)) = LIST_TYPES
        .iter()
        .find(|(definition, name, _)| *definition == owner && *name == field)
    {
        return match kind {
            ListSpec::Atomic => ListKind::Atomic,
            ListSpec::Keys(keys) => ListKind::Map(keys.to_vec()),
        };
    }
    match field_patch_meta(owner, field) {
        Some(meta) if meta.strategy.starts_with("merge") => match meta.merge_key {
            Some(key) => ListKind::Map(vec![key]),
            None => ListKind::Set,
        },
        _ => ListKind::Atomic,
    }
}

enum ListSpec {
    Atomic,
    Keys(&'static [&'static str]),
}

const CORE: &str = "io.k8s.api.core.v1.";

/// `+listType` markers that differ from what the patch tags imply.
const LIST_TYPES: &[(&str, &str, ListSpec)] = &[
    (
        "io.k8s.api.core.v1.Container",
        "ports",
        ListSpec::Keys(&["containerPort", "protocol"]),
    ),
    (
        "io.k8s.api.core.v1.EphemeralContainer",
        "ports",
        ListSpec::Keys(&["containerPort", "protocol"]),
    ),
    (
        "io.k8s.api.core.v1.ServiceSpec",
        "ports",
        ListSpec::Keys(&["port", "protocol"]),
    ),
    (
        "io.k8s.api.core.v1.PodSpec",
        "topologySpreadConstraints",
        ListSpec::Keys(&["topologyKey", "whenUnsatisfiable"]),
    ),
    (
        "io.k8s.api.core.v1.ResourceRequirements",
        "claims",
        ListSpec::Keys(&["name"]),
    ),
    (
        "io.k8s.api.batch.v1.JobStatus",
        "conditions",
        ListSpec::Atomic,
    ),
];

/// Key fields that upstream's schema defaults when an item omits them, so
/// `ports: [{containerPort: 80}]` is keyed `{"containerPort":80,"protocol":"TCP"}`.
pub fn key_default(item_definition: Option<&str>, key: &str) -> Option<Value> {
    let definition = item_definition?.strip_prefix(CORE)?;
    match (definition, key) {
        ("ContainerPort" | "ServicePort" | "EndpointPort", "protocol") => {
            Some(Value::String("TCP".into()))
        }
        _ => None,
    }
}

/// `+structType=atomic` (`x-kubernetes-map-type: atomic` on a struct).
const ATOMIC_STRUCTS: &[&str] = &[
    "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector",
    "io.k8s.api.core.v1.LocalObjectReference",
    "io.k8s.api.core.v1.ObjectReference",
    "io.k8s.api.core.v1.TypedLocalObjectReference",
    "io.k8s.api.core.v1.SecretReference",
    "io.k8s.api.core.v1.ConfigMapKeySelector",
    "io.k8s.api.core.v1.SecretKeySelector",
    "io.k8s.api.core.v1.ObjectFieldSelector",
    "io.k8s.api.core.v1.ResourceFieldSelector",
    "io.k8s.api.core.v1.NodeSelector",
    "io.k8s.api.core.v1.NodeSelectorTerm",
    "io.k8s.api.core.v1.TopologySelectorTerm",
];

/// `+mapType=atomic` maps of string values.
const ATOMIC_MAPS: &[(&str, &str)] = &[
    ("io.k8s.api.core.v1.ServiceSpec", "selector"),
    ("io.k8s.api.core.v1.ReplicationControllerSpec", "selector"),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// The memo is invisible: every field of every built-in kind resolves,
    /// the first time and from the memo, as it does without it.
    #[test]
    fn memoized_fields_resolve_as_uncached_ones() {
        let mut fields = 0;
        for name in crate::openapi::definitions::builtin().keys() {
            let schema = Schema::for_definition(name);
            let root = schema.root();
            let Node::Struct {
                definition,
                properties,
                ..
            } = &root
            else {
                continue;
            };
            for (key, property) in properties.iter() {
                let uncached = format!(
                    "{:?}",
                    schema.resolve_field_uncached(*definition, key, property)
                );
                for _ in 0..2 {
                    assert_eq!(
                        format!("{:?}", schema.field(&root, key)),
                        uncached,
                        "{name}.{key}"
                    );
                }
                fields += 1;
            }
        }
        assert!(fields > 1000, "only {fields} fields walked");
    }
}
