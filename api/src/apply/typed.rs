//! Schema-aware walks over JSON objects, after structured-merge-diff's typed
//! values: the field set an object sets, the comparison of two objects, the
//! merge of an applied configuration into a live object, and item removal.

use serde_json::{Map, Value};

use super::fieldpath::{path_to_string, FieldSet, Path, PathElement};
use super::schema::{key_default, ListKind, Node, ScalarKind, Schema};
use crate::openapi::go_values::go_format;

/// Guards the recursion against values nested deeper than any request holds.
const MAX_DEPTH: usize = 256;

/// A value that does not fit its schema, in upstream's `path: message` form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeError(pub String);

/// What changed between two objects, by path.
#[derive(Debug, Default)]
pub struct Comparison {
    pub added: FieldSet,
    pub modified: FieldSet,
    pub removed: FieldSet,
}

impl Comparison {
    /// Forgets the ignored (reset) fields and everything below them.
    pub fn exclude(&mut self, ignored: &FieldSet) {
        self.added.remove(ignored, true);
        self.modified.remove(ignored, true);
        self.removed.remove(ignored, true);
    }

    pub fn changed(&self) -> FieldSet {
        self.modified.union(&self.added)
    }
}

/// The shape a value takes at a node: deduced nodes take it from the value.
enum Shape<'n> {
    Leaf,
    Fields { node: &'n Node },
    Items { node: &'n Node },
}

fn shape<'n>(node: &'n Node, value: Option<&Value>) -> Shape<'n> {
    match node {
        Node::Scalar(_) => Shape::Leaf,
        Node::Struct { atomic: true, .. } | Node::Map { atomic: true, .. } => Shape::Leaf,
        Node::List {
            kind: ListKind::Atomic,
            ..
        } => Shape::Leaf,
        Node::Struct { .. } | Node::Map { .. } => Shape::Fields { node },
        Node::List { .. } => Shape::Items { node },
        Node::Deduced => match value {
            Some(Value::Object(_)) => Shape::Fields { node },
            _ => Shape::Leaf,
        },
    }
}

fn is_declared(node: &Node, key: &str) -> bool {
    matches!(node, Node::Struct { properties, .. } if properties.contains_key(key))
}

/// The path element of list item `index`, by the list's kind.
pub fn item_element(
    schema: &Schema,
    list: &Node,
    index: usize,
    item: &Value,
) -> Result<PathElement, String> {
    match list {
        Node::List {
            kind: ListKind::Set,
            ..
        } => Ok(PathElement::Value(item.clone())),
        Node::List {
            kind: ListKind::Map(keys),
            ..
        } => {
            let Value::Object(fields) = item else {
                return Err(format!(
                    "element {index}: expected map, got {}",
                    value_kind(item)
                ));
            };
            let mut key = Vec::with_capacity(keys.len());
            for name in keys {
                let value = match fields.get(*name) {
                    Some(value) => value.clone(),
                    None => key_default(schema.item_definition(list), name).ok_or_else(|| {
                        format!("element {index}: associative list with keys has an element that omits key field {name:?} (and doesn't have default value)")
                    })?,
                };
                key.push((name.to_string(), value));
            }
            key.sort_by(|a, b| a.0.cmp(&b.0));
            Ok(PathElement::Key(key))
        }
        _ => Ok(PathElement::Index(index)),
    }
}

fn value_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "map",
    }
}

/// The items of a list value with their path elements; later duplicates of
/// an element are dropped, as upstream does when comparing and merging.
fn indexed_items<'v>(
    schema: &Schema,
    node: &Node,
    value: Option<&'v Value>,
    path: &Path,
) -> Result<Vec<(PathElement, &'v Value)>, TypeError> {
    let Some(Value::Array(items)) = value else {
        return Ok(Vec::new());
    };
    let mut out: Vec<(PathElement, &Value)> = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let element = item_element(schema, node, index, item)
            .map_err(|message| TypeError(format!("{}: {message}", path_to_string(path))))?;
        if !out.iter().any(|(seen, _)| *seen == element) {
            out.push((element, item));
        }
    }
    Ok(out)
}

/// The fields an applied configuration sets (upstream's `ToFieldSet`):
/// leaves, items of associative lists and sets, entries of maps; struct
/// fields only through what they contain.
pub fn to_field_set(schema: &Schema, value: &Value) -> Result<FieldSet, TypeError> {
    let mut set = FieldSet::new();
    collect_fields(schema, &schema.root(), value, &mut Vec::new(), &mut set, 0)?;
    Ok(set)
}

fn collect_fields(
    schema: &Schema,
    node: &Node,
    value: &Value,
    path: &mut Path,
    set: &mut FieldSet,
    depth: usize,
) -> Result<(), TypeError> {
    if depth > MAX_DEPTH {
        return Err(TypeError(format!(
            "{}: nested too deeply",
            path_to_string(path)
        )));
    }
    match shape(node, Some(value)) {
        Shape::Leaf => set.insert(path),
        Shape::Fields { node } => {
            if let Value::Object(fields) = value {
                for (key, child) in fields {
                    path.push(PathElement::Field(key.clone()));
                    collect_fields(
                        schema,
                        &schema.field(node, key),
                        child,
                        path,
                        set,
                        depth + 1,
                    )?;
                    if !is_declared(node, key) {
                        set.insert(path);
                    }
                    path.pop();
                }
            }
        }
        Shape::Items { node } => {
            if let Value::Array(items) = value {
                let item_node = schema.item(node);
                let mut seen: Vec<PathElement> = Vec::new();
                for (index, item) in items.iter().enumerate() {
                    let element = item_element(schema, node, index, item).map_err(|message| {
                        TypeError(format!("{}: {message}", path_to_string(path)))
                    })?;
                    if seen.contains(&element) {
                        return Err(TypeError(format!(
                            "{}: duplicate entries for key {element}",
                            path_to_string(path)
                        )));
                    }
                    seen.push(element.clone());
                    path.push(element);
                    collect_fields(schema, &item_node, item, path, set, depth + 1)?;
                    set.insert(path);
                    path.pop();
                }
            }
        }
    }
    Ok(())
}

fn is_empty_container(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => true,
        Some(Value::Object(fields)) => fields.is_empty(),
        Some(Value::Array(items)) => items.is_empty(),
        Some(_) => false,
    }
}

/// Upstream's `Compare`: leaves that were added, modified or removed, plus
/// maps, structs, lists and items that appeared or disappeared as a whole.
pub fn compare(schema: &Schema, old: &Value, new: &Value) -> Result<Comparison, TypeError> {
    let mut comparison = Comparison::default();
    compare_at(
        schema,
        &schema.root(),
        Some(old),
        Some(new),
        &mut Vec::new(),
        &mut comparison,
        0,
    )?;
    Ok(comparison)
}

fn compare_at(
    schema: &Schema,
    node: &Node,
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    path: &mut Path,
    out: &mut Comparison,
    depth: usize,
) -> Result<(), TypeError> {
    if depth > MAX_DEPTH {
        return Err(TypeError(format!(
            "{}: nested too deeply",
            path_to_string(path)
        )));
    }
    let lhs_shape = shape(node, lhs.or(rhs));
    let rhs_shape = shape(node, rhs.or(lhs));
    let both_empty = is_empty_container(lhs) && is_empty_container(rhs);
    let leaf = both_empty
        || matches!(lhs_shape, Shape::Leaf)
        || matches!(rhs_shape, Shape::Leaf)
        || !same_container_kind(lhs, rhs);
    if leaf {
        match (lhs, rhs) {
            (None, _) => out.added.insert(path),
            (_, None) => out.removed.insert(path),
            (Some(a), Some(b)) if a != b => out.modified.insert(path),
            _ => {}
        }
        return Ok(());
    }
    match rhs_shape {
        Shape::Fields { node } => {
            let empty = Map::new();
            let left = lhs.and_then(Value::as_object).unwrap_or(&empty);
            let right = rhs.and_then(Value::as_object).unwrap_or(&empty);
            let keys = left
                .keys()
                .chain(right.keys().filter(|k| !left.contains_key(*k)));
            for key in keys {
                path.push(PathElement::Field(key.clone()));
                compare_at(
                    schema,
                    &schema.field(node, key),
                    left.get(key),
                    right.get(key),
                    path,
                    out,
                    depth + 1,
                )?;
                path.pop();
            }
        }
        Shape::Items { node } => {
            let item_node = schema.item(node);
            let left = indexed_items(schema, node, lhs, path)?;
            let right = indexed_items(schema, node, rhs, path)?;
            for (element, item) in &left {
                let other = right.iter().find(|(e, _)| e == element).map(|(_, v)| *v);
                path.push(element.clone());
                compare_at(schema, &item_node, Some(item), other, path, out, depth + 1)?;
                path.pop();
            }
            for (element, item) in &right {
                if left.iter().any(|(e, _)| e == element) {
                    continue;
                }
                path.push(element.clone());
                compare_at(schema, &item_node, None, Some(item), path, out, depth + 1)?;
                path.pop();
            }
        }
        Shape::Leaf => {}
    }
    match (lhs, rhs) {
        (None, _) => out.added.insert(path),
        (_, None) => out.removed.insert(path),
        _ => {}
    }
    Ok(())
}

/// Whether two present values can be walked together (both objects or both
/// lists; a null or missing side takes the other's form).
fn same_container_kind(lhs: Option<&Value>, rhs: Option<&Value>) -> bool {
    matches!(
        (lhs, rhs),
        (Some(Value::Object(_)), Some(Value::Object(_)))
            | (Some(Value::Array(_)), Some(Value::Array(_)))
            | (
                Some(Value::Object(_) | Value::Array(_)),
                None | Some(Value::Null)
            )
            | (
                None | Some(Value::Null),
                Some(Value::Object(_) | Value::Array(_))
            )
    )
}

/// Merges the applied configuration `rhs` into `lhs` (upstream's `Merge`):
/// leaves and atomic values from `rhs` win, maps merge key by key, and
/// associative lists merge item by item in upstream's order.
pub fn merge(schema: &Schema, lhs: &Value, rhs: &Value) -> Result<Value, TypeError> {
    Ok(merge_at(
        schema,
        &schema.root(),
        Some(lhs),
        Some(rhs),
        &mut Vec::new(),
        0,
    )?
    .unwrap_or_else(|| Value::Object(Map::new())))
}

fn merge_at(
    schema: &Schema,
    node: &Node,
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    path: &mut Path,
    depth: usize,
) -> Result<Option<Value>, TypeError> {
    if depth > MAX_DEPTH {
        return Err(TypeError(format!(
            "{}: nested too deeply",
            path_to_string(path)
        )));
    }
    let leaf = matches!(shape(node, rhs.or(lhs)), Shape::Leaf)
        || matches!(shape(node, lhs.or(rhs)), Shape::Leaf)
        || (is_empty_container(lhs) && is_empty_container(rhs))
        || !same_container_kind(lhs, rhs);
    if leaf {
        return Ok(rhs.or(lhs).cloned());
    }
    match shape(node, rhs.or(lhs)) {
        Shape::Fields { node } => {
            let empty = Map::new();
            let left = lhs.and_then(Value::as_object).unwrap_or(&empty);
            let right = rhs.and_then(Value::as_object).unwrap_or(&empty);
            let mut out = Map::new();
            let keys = left
                .keys()
                .chain(right.keys().filter(|k| !left.contains_key(*k)));
            for key in keys {
                let explicit_null = matches!(right.get(key), Some(Value::Null));
                path.push(PathElement::Field(key.clone()));
                let merged = merge_at(
                    schema,
                    &schema.field(node, key),
                    left.get(key),
                    right.get(key),
                    path,
                    depth + 1,
                )?;
                path.pop();
                match merged {
                    // An applied null clears the field, as decoding into
                    // upstream's typed object drops it.
                    Some(Value::Null) if explicit_null => {}
                    Some(value) => {
                        out.insert(key.clone(), value);
                    }
                    None => {}
                }
            }
            Ok(Some(Value::Object(out)))
        }
        Shape::Items { node } => {
            let item_node = schema.item(node);
            let left = indexed_items(schema, node, lhs, path)?;
            let right = indexed_items(schema, node, rhs, path)?;
            let mut out = Vec::with_capacity(left.len().max(right.len()));
            for (element, left_item, right_item) in merge_order(&left, &right) {
                path.push(element.clone());
                let merged = merge_at(schema, &item_node, left_item, right_item, path, depth + 1)?;
                path.pop();
                if let Some(value) = merged {
                    out.push(value);
                }
            }
            Ok(Some(Value::Array(out)))
        }
        Shape::Leaf => Ok(rhs.or(lhs).cloned()),
    }
}

/// Upstream's item order for a merged associative list: the applied order
/// for shared and new items, with live-only items kept where they stood.
fn merge_order<'v>(
    left: &[(PathElement, &'v Value)],
    right: &[(PathElement, &'v Value)],
) -> Vec<(PathElement, Option<&'v Value>, Option<&'v Value>)> {
    let find = |items: &[(PathElement, &'v Value)], element: &PathElement| {
        items.iter().find(|(e, _)| e == element).map(|(_, v)| *v)
    };
    let mut shared = right
        .iter()
        .filter(|(e, _)| find(left, e).is_some())
        .map(|(e, _)| e.clone());
    let mut next_shared = shared.next();
    let mut out = Vec::with_capacity(left.len().max(right.len()));
    let (mut l, mut r) = (0, 0);
    while l < left.len() || r < right.len() {
        let (before_l, before_r) = (l, r);
        if l < left.len() && r < right.len() {
            let element = &left[l].0;
            if *element == right[r].0 {
                out.push((element.clone(), Some(left[l].1), Some(right[r].1)));
                l += 1;
                r += 1;
                next_shared = shared.next();
                continue;
            }
            if find(right, element).is_some()
                && next_shared.as_ref().is_some_and(|next| next != element)
            {
                l += 1;
                continue;
            }
        }
        if l < left.len() && find(right, &left[l].0).is_none() {
            out.push((left[l].0.clone(), Some(left[l].1), None));
            l += 1;
            continue;
        }
        if r < right.len() {
            let element = &right[r].0;
            out.push((element.clone(), find(left, element), Some(right[r].1)));
            r += 1;
            if next_shared.as_ref() == Some(element) {
                next_shared = shared.next();
            }
        }
        if (l, r) == (before_l, before_r) {
            // A live item already merged through its applied twin.
            l += 1;
        }
    }
    out
}

/// Removes the paths of `set` from `value` (upstream's `RemoveItems`): a
/// member goes with everything below it; a map or list left empty goes too.
pub fn remove_items(schema: &Schema, value: &Value, set: &FieldSet) -> Value {
    remove_at(schema, &schema.root(), value, set, 0).unwrap_or_else(|| Value::Object(Map::new()))
}

fn remove_at(
    schema: &Schema,
    node: &Node,
    value: &Value,
    set: &FieldSet,
    depth: usize,
) -> Option<Value> {
    if depth > MAX_DEPTH {
        return Some(value.clone());
    }
    match (shape(node, Some(value)), value) {
        (Shape::Fields { node }, Value::Object(fields)) => {
            let mut out = Map::new();
            for (key, child) in fields {
                let element = PathElement::Field(key.clone());
                if set.is_member(&element) {
                    continue;
                }
                let kept = match set.child(&element) {
                    Some(below) => {
                        remove_at(schema, &schema.field(node, key), child, below, depth + 1)
                    }
                    None => Some(child.clone()),
                };
                if let Some(kept) = kept {
                    out.insert(key.clone(), kept);
                }
            }
            (!out.is_empty()).then_some(Value::Object(out))
        }
        (Shape::Items { node }, Value::Array(items)) => {
            let item_node = schema.item(node);
            let mut out = Vec::with_capacity(items.len());
            for (index, item) in items.iter().enumerate() {
                let Ok(element) = item_element(schema, node, index, item) else {
                    out.push(item.clone());
                    continue;
                };
                if set.is_member(&element) {
                    continue;
                }
                let kept = match set.child(&element) {
                    Some(below) => remove_at(schema, &item_node, item, below, depth + 1),
                    None => Some(item.clone()),
                };
                if let Some(kept) = kept {
                    out.push(kept);
                }
            }
            (!out.is_empty()).then_some(Value::Array(out))
        }
        _ => Some(value.clone()),
    }
}

/// Adds every declared struct field that has paths below it as a member
/// (upstream's `EnsureNamedFieldsAreMembers`), so pruning can drop a struct
/// field as a whole; map entries and list items are left as they are.
pub fn ensure_named_fields(schema: &Schema, set: &FieldSet) -> FieldSet {
    ensure_at(schema, &schema.root(), set, 0)
}

fn ensure_at(schema: &Schema, node: &Node, set: &FieldSet, depth: usize) -> FieldSet {
    let mut out = FieldSet::new();
    for member in set.members() {
        out.add_member(member.clone());
    }
    for (element, below) in set.children() {
        let child_node = match (element, node) {
            (PathElement::Field(name), _) => schema.field(node, name),
            (_, Node::List { .. }) => schema.item(node),
            _ => Node::Deduced,
        };
        if let PathElement::Field(name) = element {
            if is_declared(node, name) {
                out.add_member(element.clone());
            }
        }
        let child = if depth > MAX_DEPTH {
            below.clone()
        } else {
            ensure_at(schema, &child_node, below, depth + 1)
        };
        out.set_child(element.clone(), child);
    }
    out
}

/// structured-merge-diff's validation of an applied configuration against
/// its schema (`ObjectToTyped` of the patch): every value of the type its
/// field declares, every field declared, list items identified and each
/// once. Problems are collected as upstream collects them (a map stops at
/// its first undeclared field, a list at its first unidentifiable item).
pub fn validate(schema: &Schema, value: &Value) -> Result<(), TypeError> {
    let mut problems = Vec::new();
    validate_node(
        schema,
        &schema.root(),
        value,
        &mut Vec::new(),
        &mut problems,
        0,
    );
    match problems.len() {
        0 => Ok(()),
        1 => Err(TypeError(problems.remove(0))),
        _ => Err(TypeError(format!("errors:\n  {}", problems.join("\n  ")))),
    }
}

fn validate_node(
    schema: &Schema,
    node: &Node,
    value: &Value,
    path: &mut Path,
    problems: &mut Vec<String>,
    depth: usize,
) {
    if value.is_null() || depth > MAX_DEPTH {
        return;
    }
    match node {
        Node::Deduced => {}
        Node::Scalar(kind) => {
            if let Some(message) = scalar_problem(*kind, value) {
                problems.push(at(path, &message));
            }
        }
        Node::Struct { .. } | Node::Map { .. } => {
            let Value::Object(fields) = value else {
                let message = format!("expected map, got &{{{}}}", go_format(value));
                return problems.push(at(path, &message));
            };
            for (key, child) in fields {
                path.push(PathElement::Field(key.clone()));
                if matches!(node, Node::Struct { open: false, .. }) && !is_declared(node, key) {
                    problems.push(at(path, "field not declared in schema"));
                    path.pop();
                    return;
                }
                validate_node(
                    schema,
                    &schema.field(node, key),
                    child,
                    path,
                    problems,
                    depth + 1,
                );
                path.pop();
            }
        }
        Node::List { .. } => {
            let Value::Array(items) = value else {
                let message = format!("expected list, got &{{{}}}", go_format(value));
                return problems.push(at(path, &message));
            };
            let item_node = schema.item(node);
            let mut seen: Vec<PathElement> = Vec::new();
            for (index, item) in items.iter().enumerate() {
                let element = match item_element(schema, node, index, item) {
                    Ok(element) => element,
                    Err(message) => return problems.push(at(path, &message)),
                };
                if seen.contains(&element) {
                    problems.push(at(path, &format!("duplicate entries for key {element}")));
                }
                seen.push(element.clone());
                path.push(element);
                validate_node(schema, &item_node, item, path, problems, depth + 1);
                path.pop();
            }
        }
    }
}

/// A problem at `path`, in upstream's `path: message` form.
fn at(path: &Path, message: &str) -> String {
    format!("{}: {message}", path_to_string(path))
}

/// structured-merge-diff's validateScalar, with Go's formatting of the
/// decoded value (`%T` of it; `%v` and `%#v` of its wrapper).
fn scalar_problem(kind: ScalarKind, value: &Value) -> Option<String> {
    let scalar = matches!(value, Value::Bool(_) | Value::Number(_) | Value::String(_));
    match kind {
        ScalarKind::Numeric if !value.is_number() => Some(format!(
            "expected numeric (int or float), got {}",
            go_type_name(value)
        )),
        ScalarKind::String if !value.is_string() => Some(format!(
            "expected string, got &value.valueUnstructured{{Value:{}}}",
            go_syntax(value)
        )),
        ScalarKind::Boolean if !value.is_boolean() => {
            Some(format!("expected boolean, got &{{{}}}", go_format(value)))
        }
        ScalarKind::Untyped if !scalar => Some(format!(
            "expected any scalar, got &{{{}}}",
            go_format(value)
        )),
        _ => None,
    }
}

/// Go's `%T` of what its JSON decoding made of `value`.
fn go_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_i64() || n.is_u64() => "int64",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// Go's `%#v` of what its JSON decoding made of `value` (map keys sorted,
/// as fmt prints them).
fn go_syntax(value: &Value) -> String {
    match value {
        Value::Null => "interface {}(nil)".to_string(),
        Value::String(text) => crate::validate::meta::go_quote(text),
        Value::Bool(_) | Value::Number(_) => go_format(value),
        Value::Array(items) => format!(
            "[]interface {{}}{{{}}}",
            items.iter().map(go_syntax).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(fields) => {
            let mut entries: Vec<(&String, &Value)> = fields.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let body: Vec<String> = entries
                .into_iter()
                .map(|(key, child)| {
                    format!(
                        "{}:{}",
                        crate::validate::meta::go_quote(key),
                        go_syntax(child)
                    )
                })
                .collect();
            format!("map[string]interface {{}}{{{}}}", body.join(", "))
        }
    }
}
