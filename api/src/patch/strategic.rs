//! Server-side application of a Kubernetes strategic merge patch
//! (`application/strategic-merge-patch+json`).
//!
//! The semantics follow upstream's `k8s.io/apimachinery/pkg/util/strategicpatch`
//! (`StrategicMergeMapPatch`, as kube-apiserver calls it):
//!
//! * maps merge recursively and `null` deletes a key;
//! * lists whose field has patch strategy `merge` merge element by element:
//!   lists of objects by their merge key, lists of scalars as an ordered set;
//!   every other list is replaced as a whole;
//! * directives: `$patch: replace | delete` on a map, `{"$patch": "delete", <key>: v}`
//!   and `{"$patch": "replace"}` inside a merge list, `$retainKeys`,
//!   `$deleteFromPrimitiveList/<field>` and `$setElementOrder/<field>`.
//!
//! Order of a merged list, as upstream computes it: patch items keep the
//! patch's order, server-only items keep the server's order, and the two are
//! interleaved by their positions on the server. A patch item the server does
//! not have yet wins every comparison, so it lands before the remaining
//! server-only items: kubectl users see a new container or finalizer first,
//! not last. With `$setElementOrder/<field>` the listed items take the
//! directive's order and unlisted server items are interleaved the same way.
//!
//! Which fields merge how is not in the JSON: it comes from the type. We walk
//! the schemas that `k8s-openapi` generates with `schemars` (at build time,
//! parsed once) to know the definition of every nested value, and look the patch
//! strategy up in [`super::patch_meta`].
//!
//! Deliberate differences from upstream, all on malformed or unusual patches:
//! directives inside values that are new to the object are processed (upstream
//! copies them verbatim and relies on the typed decoder to drop them), a
//! `$deleteFromPrimitiveList` for a list the object does not have is a no-op
//! (upstream stores the deletion list as the field's value), a
//! `$setElementOrder` for a list that is empty on both sides is accepted
//! (upstream fails to infer the element type), and errors that upstream
//! reports as HTTP 500 are classified as bad requests, see
//! [`StrategicMergeError::status_code`].

use std::collections::HashSet;
use std::sync::OnceLock;

use serde_json::{Map, Value};

use super::patch_meta::{field_patch_meta, FieldPatchMeta};

const DIRECTIVE_MARKER: &str = "$patch";
const DELETE_DIRECTIVE: &str = "delete";
const REPLACE_DIRECTIVE: &str = "replace";
const MERGE_DIRECTIVE: &str = "merge";
const MERGE_STRATEGY: &str = "merge";
const REPLACE_STRATEGY: &str = "replace";
const RETAIN_KEYS_STRATEGY: &str = "retainKeys";
const RETAIN_KEYS_DIRECTIVE: &str = "$retainKeys";
const DELETE_FROM_PRIMITIVE_LIST_PREFIX: &str = "$deleteFromPrimitiveList";
const SET_ELEMENT_ORDER_PREFIX: &str = "$setElementOrder";

/// Why a strategic merge patch could not be applied.
///
/// The messages follow upstream's (`k8s.io/apimachinery/pkg/util/mergepatch`)
/// so that clients see familiar text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StrategicMergeError {
    /// The kind has no built-in schema (custom resources, unknown kinds).
    #[error("strategic merge patch is not supported for {0}")]
    UnsupportedKind(String),
    /// The original object or the patch is not a JSON object.
    #[error("invalid JSON document")]
    BadJsonDoc,
    /// A `$deleteFromPrimitiveList` key or value is malformed.
    #[error("invalid patch format of primitive list")]
    BadPatchFormatForPrimitiveList,
    /// A `$retainKeys` value is not a list, or the patch sets a key it does not retain.
    #[error("invalid patch format of retainKeys")]
    BadPatchFormatForRetainKeys,
    /// A `$setElementOrder` key or value is malformed.
    #[error("invalid patch format of setElementOrder list")]
    BadPatchFormatForSetElementOrderList,
    /// A list holds lists, which no built-in type has.
    #[error("lists of lists are not supported")]
    NoListOfLists,
    /// A `$patch` directive with a value other than `replace` or `delete`.
    #[error("unknown patch type: {directive} in map: {map}")]
    BadPatchType { directive: String, map: String },
    /// An element of a list merged by key lacks the key.
    #[error("map: {map} does not contain declared merge key: {key}")]
    NoMergeKey { map: String, key: String },
    /// `{"$patch": "merge"}` inside a list.
    #[error("merging lists cannot yet be specified in the patch")]
    MergeDirectiveInList,
    /// A merge list of objects whose field declares no merge key.
    #[error("cannot merge lists without merge key for field {field}")]
    ListWithoutMergeKey { field: String },
    /// Elements of one list (original and patch together) have different JSON types.
    #[error("list element types are not identical: {0}")]
    MixedListElementTypes(String),
    /// A value has the wrong JSON type for where it appears in the patch.
    #[error("expected a {expected}, but received a {actual}")]
    BadArgType {
        expected: &'static str,
        actual: String,
    },
    /// The patch list is not ordered like its `$setElementOrder` list, or has items missing from it.
    #[error("the order in patch list:\n{patch}\n doesn't match $setElementOrder list:\n{order}")]
    SetElementOrderMismatch { patch: String, order: String },
}

impl StrategicMergeError {
    /// The HTTP status to answer with.
    ///
    /// Upstream answers 415 for kinds without a schema, 422 for lists of
    /// lists and 400 for malformed directives; it returns the remaining
    /// errors unwrapped, which become a 500 with reason `Unknown`. Those are
    /// all faults of the patch, so they are reported as 400 here.
    pub fn status_code(&self) -> u16 {
        match self {
            Self::UnsupportedKind(_) => 415,
            Self::NoListOfLists => 422,
            _ => 400,
        }
    }
}

type Result<T> = std::result::Result<T, StrategicMergeError>;

/// Applies `patch` to `original`, an object whose kind's OpenAPI definition
/// name is `root_definition` (e.g. "io.k8s.api.apps.v1.Deployment").
///
/// A `null` original is treated as an empty object, as upstream does for a
/// missing document.
pub fn apply_strategic_merge_patch(
    original: &Value,
    patch: &Value,
    root_definition: &str,
) -> std::result::Result<Value, StrategicMergeError> {
    let schemas = schemas();
    let root = schemas
        .root(root_definition)
        .ok_or_else(|| StrategicMergeError::UnsupportedKind(root_definition.to_owned()))?;
    let original = match original {
        Value::Object(map) => map.clone(),
        Value::Null => Map::new(),
        _ => return Err(StrategicMergeError::BadJsonDoc),
    };
    let Value::Object(patch) = patch else {
        return Err(StrategicMergeError::BadJsonDoc);
    };
    let merger = Merger { schemas };
    merger
        .merge_map(Some(root), original, patch.clone())
        .map(Value::Object)
}

/// The built-in kinds' schemas and which of them a patch may be applied to.
struct Schemas {
    definitions: &'static crate::openapi::definitions::Builtin,
    roots: HashSet<String>,
}

fn schemas() -> &'static Schemas {
    static SCHEMAS: OnceLock<Schemas> = OnceLock::new();
    SCHEMAS.get_or_init(|| Schemas {
        definitions: crate::openapi::definitions::builtin(),
        roots: crate::openapi::definitions::strategic_merge_roots()
            .into_iter()
            .collect(),
    })
}

/// A position in the schema: the schema of a value and, when that schema is a
/// named definition, its name (the key for patch metadata of its fields).
#[derive(Clone, Copy)]
struct Node<'s> {
    definition: Option<&'s str>,
    schema: &'s Value,
}

impl Schemas {
    fn root(&self, definition: &str) -> Option<Node<'_>> {
        if !self.roots.contains(definition) {
            return None;
        }
        let (name, schema) = self.definitions.get_key_value(definition)?;
        Some(Node {
            definition: Some(name),
            schema,
        })
    }

    fn resolve<'s>(&'s self, mut schema: &'s Value) -> Node<'s> {
        let mut definition = None;
        // Bounded, because a `$ref` cycle would otherwise spin forever.
        for _ in 0..8 {
            let Some(reference) = schema.get("$ref").and_then(Value::as_str) else {
                break;
            };
            let name = reference.rsplit('/').next().unwrap_or(reference);
            let Some((key, target)) = self.definitions.get_key_value(name) else {
                break;
            };
            definition = Some(key);
            schema = target;
        }
        Node { definition, schema }
    }

    /// The schema of `field` inside an object, either a declared property or
    /// the value schema of a map.
    fn field<'s>(&'s self, node: Option<Node<'s>>, field: &str) -> Option<Node<'s>> {
        let schema = node?.schema;
        if let Some(property) = schema.get("properties").and_then(|p| p.get(field)) {
            return Some(self.resolve(property));
        }
        schema
            .get("additionalProperties")
            .filter(|value| value.is_object())
            .map(|value| self.resolve(value))
    }

    fn items<'s>(&'s self, node: Option<Node<'s>>) -> Option<Node<'s>> {
        node?.schema.get("items").map(|items| self.resolve(items))
    }
}

fn field_meta(node: Option<Node<'_>>, field: &str) -> Option<FieldPatchMeta> {
    node?
        .definition
        .and_then(|def| field_patch_meta(def, field))
}

/// The strategy other than `retainKeys` (which only matters to the client
/// that builds `$retainKeys`), and the merge key.
fn list_strategy(meta: Option<FieldPatchMeta>) -> (&'static str, Option<&'static str>) {
    match meta {
        Some(meta) => (
            meta.strategy
                .split(',')
                .find(|strategy| *strategy != RETAIN_KEYS_STRATEGY)
                .unwrap_or(""),
            meta.merge_key,
        ),
        None => ("", None),
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum ElementKind {
    Null,
    Bool,
    Number,
    String,
    Object,
}

/// The common JSON type of the elements of `lists`, or `None` when they are all empty.
fn element_kind(lists: &[&[Value]]) -> Result<Option<ElementKind>> {
    let mut kind = None;
    for value in lists.iter().flat_map(|list| list.iter()) {
        let this = match value {
            Value::Array(_) => return Err(StrategicMergeError::NoListOfLists),
            Value::Null => ElementKind::Null,
            Value::Bool(_) => ElementKind::Bool,
            Value::Number(_) => ElementKind::Number,
            Value::String(_) => ElementKind::String,
            Value::Object(_) => ElementKind::Object,
        };
        match kind {
            None => kind = Some(this),
            Some(previous) if previous != this => {
                let all: Vec<&[Value]> = lists.to_vec();
                return Err(StrategicMergeError::MixedListElementTypes(
                    serde_json::to_string(&all).unwrap_or_default(),
                ));
            }
            Some(_) => {}
        }
    }
    Ok(kind)
}

fn describe(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

fn describe_map(map: &Map<String, Value>) -> String {
    serde_json::to_string(map).unwrap_or_default()
}

fn bad_arg_type(expected: &'static str, actual: &Value) -> StrategicMergeError {
    StrategicMergeError::BadArgType {
        expected,
        actual: describe(actual),
    }
}

fn no_merge_key(map: &Map<String, Value>, key: &str) -> StrategicMergeError {
    StrategicMergeError::NoMergeKey {
        map: describe_map(map),
        key: key.to_owned(),
    }
}

/// The value of `key` in a list element that must be an object carrying it.
fn merge_key_value<'v>(item: &'v Value, key: &str) -> Result<&'v Value> {
    let Value::Object(map) = item else {
        return Err(bad_arg_type("map", item));
    };
    map.get(key).ok_or_else(|| no_merge_key(map, key))
}

/// What identifies a list element for ordering: its merge key's value for
/// lists merged by key, the element itself otherwise. An element missing the
/// key yields `None`, which (as upstream's `nil`) equals another missing key.
fn identity<'v>(item: &'v Value, merge_key: Option<&str>) -> Option<&'v Value> {
    match merge_key {
        Some(key) => item.as_object().and_then(|map| map.get(key)),
        None => Some(item),
    }
}

fn position(list: &[Value], item: &Value, merge_key: Option<&str>) -> Option<usize> {
    let wanted = identity(item, merge_key);
    list.iter()
        .position(|candidate| identity(candidate, merge_key) == wanted)
}

fn is_delete_directive(item: &Value) -> bool {
    item.get(DIRECTIVE_MARKER).and_then(Value::as_str) == Some(DELETE_DIRECTIVE)
}

fn has_directive_marker(item: &Value) -> bool {
    item.as_object()
        .is_some_and(|map| map.contains_key(DIRECTIVE_MARKER))
}

/// `$setElementOrder/containers` → `containers`.
fn directive_target<'k>(key: &'k str, prefix: &str) -> Result<&'k str> {
    match key.split_once('/') {
        Some((head, field)) if head == prefix => Ok(field),
        _ if prefix == SET_ELEMENT_ORDER_PREFIX => {
            Err(StrategicMergeError::BadPatchFormatForSetElementOrderList)
        }
        _ => Err(StrategicMergeError::BadPatchFormatForPrimitiveList),
    }
}

fn remove_key(map: &mut Map<String, Value>, key: &str) {
    // `retain` keeps the remaining keys in order whether or not serde_json
    // preserves insertion order, unlike `remove`.
    map.retain(|existing, _| existing != key);
}

/// Splits `items` into those present in `present_in` and the others, keeping their order.
fn partition(
    items: Vec<Value>,
    present_in: &[Value],
    merge_key: Option<&str>,
) -> Result<(Vec<Value>, Vec<Value>)> {
    if merge_key.is_some() {
        if let Some(candidate) = present_in.iter().find(|candidate| !candidate.is_object()) {
            return Err(bad_arg_type("map", candidate));
        }
    }
    let mut present = Vec::with_capacity(items.len());
    let mut absent = Vec::new();
    for item in items {
        if let Some(key) = merge_key {
            merge_key_value(&item, key)?;
        }
        if position(present_in, &item, merge_key).is_some() {
            present.push(item);
        } else {
            absent.push(item);
        }
    }
    Ok((present, absent))
}

/// Sorts `items` (stably) by their position in `order`; items absent from it go last.
fn sort_by_order(
    mut items: Vec<Value>,
    order: &[Value],
    merge_key: Option<&str>,
) -> Result<Vec<Value>> {
    if let Some(key) = merge_key {
        for item in items.iter().chain(order) {
            merge_key_value(item, key)?;
        }
    }
    items.sort_by_key(|item| position(order, item, merge_key).unwrap_or(usize::MAX));
    Ok(items)
}

/// Upstream's `normalizeElementOrder`: patch items in patch order, server-only
/// items in server order, then the two interleaved so that a server-only item
/// stays before a patch item it preceded on the server.
fn normalize_element_order(
    patch_items: Vec<Value>,
    server_only: Vec<Value>,
    patch_order: &[Value],
    server_order: &[Value],
    merge_key: Option<&str>,
) -> Result<Vec<Value>> {
    let patch_items = sort_by_order(patch_items, patch_order, merge_key)?;
    let server_only = sort_by_order(server_only, server_order, merge_key)?;
    let mut merged = Vec::with_capacity(patch_items.len() + server_only.len());
    let mut left = server_only.into_iter().peekable();
    let mut right = patch_items.into_iter().peekable();
    loop {
        let take_left = match (left.peek(), right.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(l), Some(r)) => {
                // When either side is unknown to the server the patch item wins,
                // which is what puts new items in front of server-only ones.
                match (
                    position(server_order, l, merge_key),
                    position(server_order, r, merge_key),
                ) {
                    (Some(li), Some(ri)) => li < ri,
                    _ => false,
                }
            }
        };
        let next = if take_left { left.next() } else { right.next() };
        merged.extend(next);
    }
    Ok(merged)
}

fn dedup_scalars(items: impl Iterator<Item = Value>) -> Vec<Value> {
    let mut unique: Vec<Value> = Vec::new();
    for item in items {
        if !unique.contains(&item) {
            unique.push(item);
        }
    }
    unique
}

/// Checks that the patch list's items appear in the `$setElementOrder` list
/// and in the same relative order (upstream's `validatePatchWithSetOrderList`).
fn validate_patch_with_set_order_list(
    patch_list: &[Value],
    order: &[Value],
    merge_key: Option<&str>,
) -> Result<()> {
    if patch_list.is_empty() || order.is_empty() {
        return Ok(());
    }
    let mut candidates = Vec::with_capacity(patch_list.len());
    for item in patch_list {
        if merge_key.is_some() {
            if !item.is_object() {
                return Err(bad_arg_type("map", item));
            }
            if is_delete_directive(item) {
                continue;
            }
        }
        candidates.push(item);
    }
    let (mut patch_index, mut order_index) = (0, 0);
    while patch_index < candidates.len() && order_index < order.len() {
        let item = candidates[patch_index];
        if has_directive_marker(item) {
            patch_index += 1;
            continue;
        }
        let equal = match merge_key {
            Some(key) => merge_key_value(item, key)? == merge_key_value(&order[order_index], key)?,
            None => item == &order[order_index],
        };
        if equal {
            patch_index += 1;
        }
        order_index += 1;
    }
    if patch_index < candidates.len() && order_index >= order.len() {
        return Err(StrategicMergeError::SetElementOrderMismatch {
            patch: serde_json::to_string(patch_list).unwrap_or_default(),
            order: serde_json::to_string(order).unwrap_or_default(),
        });
    }
    Ok(())
}

struct Merger<'s> {
    schemas: &'s Schemas,
}

impl<'s> Merger<'s> {
    fn merge_map(
        &self,
        node: Option<Node<'s>>,
        mut original: Map<String, Value>,
        mut patch: Map<String, Value>,
    ) -> Result<Map<String, Value>> {
        if let Some(directive) = patch.get(DIRECTIVE_MARKER) {
            return match directive.as_str() {
                Some(REPLACE_DIRECTIVE) => {
                    remove_key(&mut patch, DIRECTIVE_MARKER);
                    self.merge_map(node, Map::new(), patch)
                }
                Some(DELETE_DIRECTIVE) => Ok(Map::new()),
                _ => Err(StrategicMergeError::BadPatchType {
                    directive: directive
                        .as_str()
                        .map_or_else(|| describe(directive), str::to_owned),
                    map: describe_map(&patch),
                }),
            };
        }

        if let Some(retain) = patch.remove(RETAIN_KEYS_DIRECTIVE) {
            apply_retain_keys(&mut original, &patch, retain)?;
        }

        let order_keys: Vec<String> = patch
            .keys()
            .filter(|key| key.starts_with(SET_ELEMENT_ORDER_PREFIX))
            .cloned()
            .collect();
        for key in order_keys {
            let field = directive_target(&key, SET_ELEMENT_ORDER_PREFIX)?.to_owned();
            if let Some(order) = patch.remove(&key) {
                self.apply_set_element_order(node, &mut original, &mut patch, &field, order)?;
            }
        }

        for (key, value) in patch {
            if key.starts_with(DELETE_FROM_PRIMITIVE_LIST_PREFIX) {
                let field = directive_target(&key, DELETE_FROM_PRIMITIVE_LIST_PREFIX)?;
                delete_from_primitive_list(&mut original, field, value)?;
                continue;
            }
            if value.is_null() {
                remove_key(&mut original, &key);
                continue;
            }
            let child = self.schemas.field(node, &key);
            let meta = field_meta(node, &key);
            match original.get_mut(&key) {
                Some(slot) => {
                    let current = std::mem::take(slot);
                    *slot = self.merge_value(child, meta, &key, current, value)?;
                }
                None => {
                    let value = self.new_value(child, meta, &key, value)?;
                    original.insert(key, value);
                }
            }
        }
        Ok(original)
    }

    fn merge_value(
        &self,
        node: Option<Node<'s>>,
        meta: Option<FieldPatchMeta>,
        field: &str,
        current: Value,
        patch: Value,
    ) -> Result<Value> {
        let (strategy, merge_key) = list_strategy(meta);
        match (current, patch) {
            (Value::Object(current), Value::Object(patch)) if strategy != REPLACE_STRATEGY => {
                self.merge_map(node, current, patch).map(Value::Object)
            }
            (Value::Array(current), Value::Array(patch)) if strategy == MERGE_STRATEGY => {
                let items = self.schemas.items(node);
                self.merge_list(items, merge_key, field, current, patch)
                    .map(Value::Array)
            }
            (_, patch) => self.new_value(node, meta, field, patch),
        }
    }

    /// A patch value that replaces whatever the object had. Nested maps and
    /// merge lists are merged into nothing, which drops their `null`s and
    /// carries out their directives.
    fn new_value(
        &self,
        node: Option<Node<'s>>,
        meta: Option<FieldPatchMeta>,
        field: &str,
        patch: Value,
    ) -> Result<Value> {
        match patch {
            Value::Object(patch) => self.merge_map(node, Map::new(), patch).map(Value::Object),
            Value::Array(patch) if list_strategy(meta).0 == MERGE_STRATEGY => {
                let items = self.schemas.items(node);
                let merge_key = list_strategy(meta).1;
                self.merge_list(items, merge_key, field, Vec::new(), patch)
                    .map(Value::Array)
            }
            other => Ok(other),
        }
    }

    /// Merges a list whose field has patch strategy `merge` (upstream's `mergeSlice`).
    fn merge_list(
        &self,
        item_node: Option<Node<'s>>,
        merge_key: Option<&str>,
        field: &str,
        original: Vec<Value>,
        patch: Vec<Value>,
    ) -> Result<Vec<Value>> {
        if original.is_empty() && patch.is_empty() {
            return Ok(original);
        }
        if element_kind(&[&original, &patch])? != Some(ElementKind::Object) {
            let merged = dedup_scalars(original.iter().chain(&patch).cloned());
            let (patch_items, server_only) = partition(merged, &patch, None)?;
            return normalize_element_order(patch_items, server_only, &patch, &original, None);
        }
        let Some(key) = merge_key else {
            return Err(StrategicMergeError::ListWithoutMergeKey {
                field: field.to_owned(),
            });
        };
        let (original, patch) = self.apply_list_directives(item_node, key, original, patch)?;
        let merged = self.merge_by_key(item_node, key, original.clone(), &patch)?;
        let (patch_items, server_only) = partition(merged, &patch, Some(key))?;
        normalize_element_order(patch_items, server_only, &patch, &original, Some(key))
    }

    /// Carries out `$patch` elements of a merge list: deletions are applied to
    /// `original`, and `replace` makes the other patch elements the whole list.
    /// Returns the new original and the patch without directive elements.
    fn apply_list_directives(
        &self,
        item_node: Option<Node<'s>>,
        key: &str,
        mut original: Vec<Value>,
        patch: Vec<Value>,
    ) -> Result<(Vec<Value>, Vec<Value>)> {
        let mut plain = Vec::with_capacity(patch.len());
        let mut replace = false;
        for item in patch {
            let Value::Object(map) = &item else {
                return Err(bad_arg_type("map", &item));
            };
            let Some(directive) = map.get(DIRECTIVE_MARKER) else {
                plain.push(item);
                continue;
            };
            match directive.as_str() {
                Some(DELETE_DIRECTIVE) => {
                    let doomed = map.get(key).ok_or_else(|| no_merge_key(map, key))?;
                    original.retain(|existing| identity(existing, Some(key)) != Some(doomed));
                }
                Some(REPLACE_DIRECTIVE) => replace = true,
                Some(MERGE_DIRECTIVE) => return Err(StrategicMergeError::MergeDirectiveInList),
                _ => {
                    return Err(StrategicMergeError::BadPatchType {
                        directive: directive
                            .as_str()
                            .map_or_else(|| describe(directive), str::to_owned),
                        map: describe_map(map),
                    })
                }
            }
        }
        if !replace {
            return Ok((original, plain));
        }
        let mut replacement = Vec::with_capacity(plain.len());
        for item in plain {
            replacement.push(self.new_value(item_node, None, "", item)?);
        }
        Ok((replacement, Vec::new()))
    }

    /// Merges each patch element into the original element with the same
    /// merge-key value, appending the ones the original does not have.
    fn merge_by_key(
        &self,
        item_node: Option<Node<'s>>,
        key: &str,
        mut merged: Vec<Value>,
        patch: &[Value],
    ) -> Result<Vec<Value>> {
        for item in patch {
            let wanted = merge_key_value(item, key)?;
            let Value::Object(item_patch) = item else {
                return Err(bad_arg_type("map", item));
            };
            let found = merged
                .iter()
                .position(|existing| identity(existing, Some(key)) == Some(wanted));
            match found {
                Some(index) => {
                    let existing = std::mem::take(&mut merged[index]);
                    let Value::Object(existing) = existing else {
                        return Err(bad_arg_type("map", &existing));
                    };
                    merged[index] =
                        Value::Object(self.merge_map(item_node, existing, item_patch.clone())?);
                }
                None => merged.push(Value::Object(self.merge_map(
                    item_node,
                    Map::new(),
                    item_patch.clone(),
                )?)),
            }
        }
        Ok(merged)
    }

    /// Upstream's `mergePatchIntoOriginal` for one `$setElementOrder/<field>`:
    /// merges the field's patch list (if any) into the original and orders the
    /// result by the directive. The field is removed from `patch`.
    fn apply_set_element_order(
        &self,
        node: Option<Node<'s>>,
        original: &mut Map<String, Value>,
        patch: &mut Map<String, Value>,
        field: &str,
        order: Value,
    ) -> Result<()> {
        let Value::Array(order) = order else {
            return Err(StrategicMergeError::BadPatchFormatForSetElementOrderList);
        };
        let server_list = match original.get(field) {
            None => None,
            Some(Value::Array(items)) => Some(items.clone()),
            Some(other) => return Err(bad_arg_type("list", other)),
        };
        let patch_list = match patch.get(field) {
            None => None,
            Some(Value::Array(items)) => Some(items.clone()),
            Some(other) => return Err(bad_arg_type("list", other)),
        };
        let meta = field_meta(node, field);
        let (strategy, merge_key) = list_strategy(meta);
        let child = self.schemas.field(node, field);
        validate_patch_with_set_order_list(
            patch_list.as_deref().unwrap_or_default(),
            &order,
            merge_key,
        )?;

        let server_order = server_list.clone().unwrap_or_default();
        let patch_values = patch_list.clone().unwrap_or_default();
        let merged = match (server_list, patch_list) {
            (None, None) => return Ok(()),
            (Some(server), None) => server,
            (None, Some(patch_list)) => {
                match self.new_value(child, meta, field, Value::Array(patch_list))? {
                    Value::Array(items) => items,
                    other => vec![other],
                }
            }
            (Some(server), Some(patch_list)) if strategy == MERGE_STRATEGY => {
                let items = self.schemas.items(child);
                self.merge_list(items, merge_key, field, server, patch_list)?
            }
            (Some(_), Some(patch_list)) => patch_list,
        };

        let ordered = match element_kind(&[&server_order, &patch_values])? {
            // Nothing to order, and upstream cannot tell the element type either.
            None => merged,
            Some(ElementKind::Object) if merge_key.is_none() => {
                return Err(StrategicMergeError::ListWithoutMergeKey {
                    field: field.to_owned(),
                })
            }
            Some(_) => {
                let (in_order, server_only) = partition(merged, &order, merge_key)?;
                normalize_element_order(in_order, server_only, &order, &server_order, merge_key)?
            }
        };
        original.insert(field.to_owned(), Value::Array(ordered));
        remove_key(patch, field);
        Ok(())
    }
}

/// Upstream's `applyRetainKeysDirective`: every key the patch sets must be
/// retained, and the original loses every key that is not.
fn apply_retain_keys(
    original: &mut Map<String, Value>,
    patch: &Map<String, Value>,
    retain: Value,
) -> Result<()> {
    let Value::Array(retain) = retain else {
        return Err(StrategicMergeError::BadPatchFormatForRetainKeys);
    };
    let retained = |key: &str| retain.iter().any(|kept| kept.as_str() == Some(key));
    for (key, value) in patch {
        let directive = key.starts_with(DELETE_FROM_PRIMITIVE_LIST_PREFIX)
            || key.starts_with(SET_ELEMENT_ORDER_PREFIX);
        if !value.is_null() && !directive && !retained(key) {
            return Err(StrategicMergeError::BadPatchFormatForRetainKeys);
        }
    }
    original.retain(|key, _| retained(key));
    Ok(())
}

/// `$deleteFromPrimitiveList/<field>: [values]` removes those values from the field's list.
fn delete_from_primitive_list(
    original: &mut Map<String, Value>,
    field: &str,
    doomed: Value,
) -> Result<()> {
    match doomed {
        // Upstream treats a null deletion list like a null field: the field goes.
        Value::Null => remove_key(original, field),
        Value::Array(doomed) => {
            if let Some(Value::Array(items)) = original.get_mut(field) {
                items.retain(|item| !doomed.contains(item));
            }
        }
        _ => return Err(StrategicMergeError::BadPatchFormatForPrimitiveList),
    }
    Ok(())
}

#[cfg(test)]
#[path = "strategic_tests.rs"]
mod tests;
