//! A written object decoded against its kind's schema in one walk, as
//! kube-apiserver decodes a body into Go structs: every value's JSON type
//! checked against its field's Go type (a mismatch is the error Go's
//! decoder gives), unknown fields found and dropped, `null`s taken as Go
//! takes them, and quantities put in canonical form. Once the write is
//! finished (defaulted, metadata set), [`put_in_go_order`] puts its keys in
//! Go's field order, so what is stored is what upstream would write.
//!
//! The schema is an OpenAPI definition reached by name; a CRD's structural
//! schema arrives the same way once it is registered.

use serde_json::{Map, Value};

use super::definitions::{self, Builtin, RAW_REF_PREFIX};
use super::go_values::{base64_error_offset, canonical_base64, parse_go_time, TimeLayout};
use crate::protobuf::{field_order, FieldOrder};
use crate::validate::quantity::{Quantity, QuantityError, QUANTITY_FORMAT_MSG};

/// Upstream's decoder stops collecting strict errors at 100; a client that
/// sends more typos than that learns nothing from a longer list.
const MAX_REPORTED: usize = 100;

/// Guards the recursion against hand-built values nested deeper than any
/// parsed request can be (serde_json's parser stops at 128 levels).
const MAX_DEPTH: usize = 512;

/// A value Go could not decode into its field, in the words of the decoder
/// that upstream runs on that path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeMismatch {
    /// Go's encoding/json (sigs.k8s.io/json): creates, updates, JSON and
    /// merge patches.
    pub json: String,
    /// apimachinery's unstructured converter: strategic merge patches.
    pub unstructured: String,
}

/// Decodes `object` (Kubernetes JSON of kind `definition`) in place: checks
/// every value's type, drops unknown fields and returns their paths the way
/// upstream's strict decoding reports them (`spec.replica`,
/// `spec.template.spec.containers[0].imagee`; at most 100), and
/// canonicalizes quantities. Key order is [`put_in_go_order`]'s, once the
/// write is finished.
///
/// A definition without a built-in schema (a custom resource) is left as
/// it is: its schema lives elsewhere.
pub fn decode_typed(definition: &str, object: &mut Value) -> Result<Vec<String>, TypeMismatch> {
    match walked(definition, object) {
        Some(Walker {
            error: Some(error), ..
        }) => Err(error.mismatch),
        Some(walker) => Ok(walker.found),
        None => Ok(Vec::new()),
    }
}

/// Unknown fields in `object`, as [`decode_typed`] reports them, whatever
/// the types.
pub fn unknown_fields(definition: &str, object: &Value) -> Vec<String> {
    strip_unknown_fields(definition, &mut object.clone())
}

/// Removes unknown fields from `object` and reports their paths, whatever
/// the types (the walk goes on past a type error, as Go's decoder does).
pub fn strip_unknown_fields(definition: &str, object: &mut Value) -> Vec<String> {
    walked(definition, object).map_or_else(Vec::new, |walker| walker.found)
}

/// The walk of `object` against `definition`'s schema, if it has one.
fn walked(definition: &str, object: &mut Value) -> Option<Walker> {
    let definitions = definitions::builtin();
    let schema = definitions.get(definition)?;
    let mut walker = Walker::new(definitions);
    walker.walk(schema, object, 0);
    Some(walker)
}

/// Puts `object`'s keys where Go's encoder writes them: each struct's
/// fields in declaration order, map keys sorted. Run on the finished
/// object (after defaulting, server-set metadata and allocations), so what
/// is stored and answered is upstream's bytes and a read copies them as
/// they are.
pub fn put_in_go_order(definition: &str, object: &mut Value) {
    let definitions = definitions::builtin();
    if let Some(schema) = definitions.get(definition) {
        Walker::new(definitions).order(schema, object, 0);
    }
}

/// A time Go parsed, as metav1.Time and MicroTime encode it again: in UTC,
/// with whole seconds (fractions dropped) or six fraction digits.
fn canonical_time(text: &str, layout: TimeLayout) -> Option<String> {
    let parsed = chrono::DateTime::parse_from_rfc3339(text).ok()?;
    let utc = parsed.with_timezone(&chrono::Utc);
    Some(match layout {
        TimeLayout::Rfc3339 => utc.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        TimeLayout::Rfc3339Micro => utc.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string(),
    })
}

/// The Go type a schema decodes into, as far as the walk needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    /// Decoded verbatim or by a custom unmarshaller that takes any JSON
    /// (RawExtension, FieldsV1, apiextensions JSON, unions).
    Any,
    Struct,
    Map,
    Slice,
    String,
    /// `[]byte`: a base64 string.
    Bytes,
    Bool,
    Int32,
    Int64,
    Float,
    Time,
    MicroTime,
    Quantity,
    IntOrString,
}

/// What the walk needs of one schema: resolved once per thread and schema,
/// since every write of a kind walks the same schemas, and resolving one
/// reads up to eight keys of its JSON.
#[derive(Clone, Copy)]
struct Shape {
    expect: Expect,
    properties: Option<&'static Map<String, Value>>,
    additional: Option<&'static Value>,
    items: Option<&'static Value>,
    /// The definition the schema resolved to (`io.k8s.api.apps.v1.DeploymentSpec`).
    definition: Option<&'static str>,
    order: Option<&'static FieldOrder>,
}

/// The first error, and whether it came from a custom unmarshaller: Go's
/// decoder returns those at once, while a type error is saved and the
/// first one reported at the end.
struct FirstError {
    mismatch: TypeMismatch,
    fatal: bool,
}

/// A struct field on the way down: its key's place in `Walker::path` and
/// the struct holding it, for Go's "Go struct field Struct.a.b" context.
struct GoField {
    start: usize,
    end: usize,
    parent: Option<&'static str>,
}

struct Walker {
    definitions: &'static Builtin,
    path: String,
    found: Vec<String>,
    go_fields: Vec<GoField>,
    error: Option<FirstError>,
}

impl Walker {
    fn new(definitions: &'static Builtin) -> Self {
        Walker {
            definitions,
            path: String::new(),
            found: Vec::new(),
            go_fields: Vec::new(),
            error: None,
        }
    }

    fn walk(&mut self, schema: &'static Value, value: &mut Value, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        let Some(shape) = self.shape(schema) else {
            return;
        };
        match (shape.expect, &mut *value) {
            (Expect::Any, _) | (_, Value::Null) => {}
            (Expect::Struct, Value::Object(fields)) => self.walk_struct(shape, fields, depth),
            (Expect::Map, Value::Object(entries)) => {
                if let Some(values) = shape.additional {
                    self.walk_map(values, entries, depth);
                }
            }
            (Expect::Slice, Value::Array(elements)) => {
                if let Some(items) = shape.items {
                    self.walk_slice(items, elements, depth);
                }
            }
            (Expect::String, Value::String(_)) | (Expect::Bool, Value::Bool(_)) => {}
            (Expect::Float, Value::Number(_)) => {}
            (Expect::Int32 | Expect::Int64, Value::Number(number)) => {
                let fits = match shape.expect {
                    Expect::Int32 => number.as_i64().is_some_and(|n| i32::try_from(n).is_ok()),
                    _ => number.is_i64(),
                };
                if !fits {
                    let described = format!("number {number}");
                    self.type_error(&described, value, shape, schema);
                }
            }
            (Expect::Bytes, Value::String(text)) => {
                if let Some(offset) = base64_error_offset(text) {
                    let message = format!("illegal base64 data at input byte {offset}");
                    self.save(message.clone(), message, false);
                } else if let Some(canonical) = canonical_base64(text) {
                    *text = canonical;
                }
            }
            (Expect::Time | Expect::MicroTime, Value::String(text)) => {
                let layout = match shape.expect {
                    Expect::Time => TimeLayout::Rfc3339,
                    _ => TimeLayout::Rfc3339Micro,
                };
                match parse_go_time(text, layout) {
                    Err(message) => self.save(message.clone(), message, true),
                    // Stored as Go encodes the parsed time: UTC, whole
                    // seconds (Time) or microseconds (MicroTime).
                    Ok(()) => {
                        if let Some(canonical) = canonical_time(text, layout) {
                            *text = canonical;
                        }
                    }
                }
            }
            (Expect::Time | Expect::MicroTime, other) => {
                // metav1.Time decodes the value into a string first, with a
                // decoder of its own (no field context).
                let message = format!(
                    "json: cannot unmarshal {} into Go value of type string",
                    describe(other)
                );
                self.save(message.clone(), message, true);
            }
            (Expect::Quantity, quantity) => self.check_quantity(quantity),
            (Expect::IntOrString, Value::String(_)) => {}
            (Expect::IntOrString, other) => {
                let described = match other {
                    Value::Number(number)
                        if number.as_i64().is_some_and(|n| i32::try_from(n).is_ok()) =>
                    {
                        return;
                    }
                    Value::Number(number) => format!("number {number}"),
                    other => describe(other).to_string(),
                };
                let message =
                    format!("json: cannot unmarshal {described} into Go value of type int32");
                self.save(message.clone(), message, true);
            }
            (_, other) => {
                let described = describe(other).to_string();
                self.type_error(&described, value, shape, schema);
            }
        }
    }

    fn order(&self, schema: &'static Value, value: &mut Value, depth: usize) {
        let Some(shape) = self.shape(schema).filter(|_| depth <= MAX_DEPTH) else {
            return;
        };
        match (shape.expect, value) {
            (Expect::Struct, Value::Object(fields)) => {
                if let Some(properties) = shape.properties {
                    for (key, field) in fields.iter_mut() {
                        if let Some(field_schema) = properties.get(key) {
                            self.order(field_schema, field, depth + 1);
                        }
                    }
                }
                if let Some(order) = shape.order {
                    put_in_order(fields, order);
                }
            }
            (Expect::Map, Value::Object(entries)) => {
                if let Some(values) = shape.additional {
                    for entry in entries.values_mut() {
                        self.order(values, entry, depth + 1);
                    }
                }
                // Go's encoder writes a map's keys sorted.
                if !entries.keys().is_sorted() {
                    entries.sort_keys();
                }
            }
            (Expect::Slice, Value::Array(elements)) => {
                if let Some(items) = shape.items {
                    for element in elements {
                        self.order(items, element, depth + 1);
                    }
                }
            }
            _ => {}
        }
    }

    fn walk_struct(&mut self, shape: Shape, fields: &mut Map<String, Value>, depth: usize) {
        let Some(properties) = shape.properties else {
            return;
        };
        let mut dropped = Vec::new();
        for (key, field) in fields.iter_mut() {
            let mark = self.path.len();
            if !self.path.is_empty() {
                self.path.push('.');
            }
            let start = self.path.len();
            self.path.push_str(key);
            match properties.get(key) {
                // Go leaves a field it is given null for at its zero value,
                // which it then omits or writes as zero: absent, to us.
                Some(_) if field.is_null() => dropped.push(key.clone()),
                Some(field_schema) => {
                    self.go_fields.push(GoField {
                        start,
                        end: self.path.len(),
                        parent: shape.definition,
                    });
                    self.walk(field_schema, field, depth + 1);
                    self.go_fields.pop();
                }
                None => {
                    dropped.push(key.clone());
                    if self.found.len() < MAX_REPORTED {
                        self.found.push(self.path.clone());
                    }
                }
            }
            self.path.truncate(mark);
        }
        for key in dropped {
            fields.shift_remove(&key);
        }
    }

    fn walk_map(&mut self, values: &'static Value, entries: &mut Map<String, Value>, depth: usize) {
        let zero = self
            .shape(values)
            .and_then(|shape| zero_value(shape.expect));
        for (key, entry) in entries.iter_mut() {
            let mark = self.path.len();
            if !self.path.is_empty() {
                self.path.push('.');
            }
            self.path.push_str(key);
            if entry.is_null() {
                if let Some(zero) = &zero {
                    *entry = zero.clone();
                }
            } else {
                self.walk(values, entry, depth + 1);
            }
            self.path.truncate(mark);
        }
    }

    fn walk_slice(&mut self, items: &'static Value, elements: &mut [Value], depth: usize) {
        let zero = self.shape(items).and_then(|shape| zero_value(shape.expect));
        for (index, element) in elements.iter_mut().enumerate() {
            let mark = self.path.len();
            self.path.push('[');
            self.path.push_str(&index.to_string());
            self.path.push(']');
            if element.is_null() {
                if let Some(zero) = &zero {
                    *element = zero.clone();
                }
            } else {
                self.walk(items, element, depth + 1);
            }
            self.path.truncate(mark);
        }
    }

    /// resource.Quantity's UnmarshalJSON: a string or a bare number, parsed
    /// and kept in its canonical form ("0.5" is stored as "500m").
    fn check_quantity(&mut self, value: &mut Value) {
        let parsed = match &*value {
            Value::String(text) => Quantity::parse(text),
            Value::Number(number) => Quantity::parse(&number.to_string()),
            _ => Err(QuantityError::Format),
        };
        match parsed {
            Ok(quantity) => *value = Value::String(quantity.canonical()),
            // Upstream keeps such a number capped rather than refusing it;
            // leave it as sent rather than invent a cap.
            Err(QuantityError::TooLarge) => {}
            Err(QuantityError::Format) => {
                let message = QUANTITY_FORMAT_MSG.to_string();
                self.save(message.clone(), message, true);
            }
        }
    }

    /// Go's UnmarshalTypeError for `value` (described as Go describes it)
    /// where `schema` wants another type.
    fn type_error(&mut self, described: &str, value: &Value, shape: Shape, schema: &'static Value) {
        if self.error.is_some() {
            return;
        }
        let go_type = self.go_type(schema, 0);
        let json = match self.go_fields.last() {
            Some(last) => {
                let parent = last.parent.map_or("", short_name);
                let field_path: Vec<&str> = self
                    .go_fields
                    .iter()
                    .map(|field| &self.path[field.start..field.end])
                    .collect();
                format!(
                    "json: cannot unmarshal {described} into Go struct field {parent}.{} of type {go_type}",
                    field_path.join(".")
                )
            }
            None => format!("json: cannot unmarshal {described} into Go value of type {go_type}"),
        };
        let unstructured = unstructured_mismatch(value, shape.expect, &go_type);
        self.save(json, unstructured, false);
    }

    fn save(&mut self, json: String, unstructured: String, fatal: bool) {
        let replace = match &self.error {
            None => true,
            Some(first) => fatal && !first.fatal,
        };
        if replace {
            self.error = Some(FirstError {
                mismatch: TypeMismatch { json, unstructured },
                fatal,
            });
        }
    }

    /// Go's name for the type `schema` decodes into (`int32`, `[]string`,
    /// `map[string]string`, `v1.DeploymentSpec`). A named string or map
    /// type (`v1.RestartPolicy`, `v1.ResourceList`) reads as what it is
    /// made of: the schema does not keep Go's type names.
    fn go_type(&self, schema: &'static Value, depth: usize) -> String {
        let Some(shape) = self.shape(schema).filter(|_| depth < 16) else {
            return "interface {}".to_string();
        };
        match shape.expect {
            Expect::Struct
            | Expect::Time
            | Expect::MicroTime
            | Expect::Quantity
            | Expect::IntOrString => shape
                .definition
                .map_or_else(|| "struct {}".to_string(), package_name),
            Expect::Map => format!(
                "map[string]{}",
                shape.additional.map_or_else(
                    || "interface {}".to_string(),
                    |v| self.go_type(v, depth + 1)
                )
            ),
            Expect::Slice => format!(
                "[]{}",
                shape.items.map_or_else(
                    || "interface {}".to_string(),
                    |v| self.go_type(v, depth + 1)
                )
            ),
            Expect::String => "string".to_string(),
            Expect::Bytes => "[]uint8".to_string(),
            Expect::Bool => "bool".to_string(),
            Expect::Int32 => "int32".to_string(),
            Expect::Int64 => "int64".to_string(),
            Expect::Float => "float64".to_string(),
            Expect::Any => "interface {}".to_string(),
        }
    }

    /// The shape of `schema`, kept per thread (see `openapi::memo`).
    fn shape(&self, schema: &'static Value) -> Option<Shape> {
        use super::memo::{address, get_or_derive, Memo};
        thread_local! {
            static SHAPES: Memo<usize, Option<Shape>> = Default::default();
        }
        get_or_derive(&SHAPES, address(schema), || {
            let map = self.resolve(schema)?;
            let definition = self.definitions.name_of(map);
            let properties = map.get("properties").and_then(Value::as_object);
            let additional = map.get("additionalProperties").filter(|a| a.is_object());
            let items = map.get("items").filter(|i| i.is_object());
            let expect = expectation(map, definition, properties.is_some(), additional.is_some());
            Some(Shape {
                expect,
                properties,
                additional,
                items,
                definition,
                order: definition
                    .filter(|_| expect == Expect::Struct)
                    .and_then(field_order),
            })
        })
    }

    /// Follows `$ref`s (and single-entry `allOf` wrappers) to the schema that
    /// describes the value.
    fn resolve(&self, mut schema: &'static Value) -> Option<&'static Map<String, Value>> {
        // Bounded so a definition that refers to itself cannot loop forever.
        for _ in 0..32 {
            let map = schema.as_object()?;
            if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
                schema = self
                    .definitions
                    .get(reference.strip_prefix(RAW_REF_PREFIX)?)?;
                continue;
            }
            match map.get("allOf").and_then(Value::as_array) {
                Some(all) if all.len() == 1 && map.get("properties").is_none() => {
                    schema = &all[0];
                }
                _ => return Some(map),
            }
        }
        None
    }
}

/// What Go decodes a resolved schema into.
fn expectation(
    map: &Map<String, Value>,
    definition: Option<&str>,
    has_properties: bool,
    has_additional: bool,
) -> Expect {
    match definition {
        Some("io.k8s.apimachinery.pkg.api.resource.Quantity") => return Expect::Quantity,
        Some("io.k8s.apimachinery.pkg.util.intstr.IntOrString") => return Expect::IntOrString,
        Some("io.k8s.apimachinery.pkg.apis.meta.v1.Time") => return Expect::Time,
        Some("io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime") => return Expect::MicroTime,
        _ => {}
    }
    if is_opaque(map) {
        return Expect::Any;
    }
    let declared = match map.get("type") {
        Some(Value::String(name)) => Some(name.as_str()),
        Some(Value::Array(names)) => names
            .iter()
            .filter_map(Value::as_str)
            .find(|n| *n != "null"),
        _ => None,
    };
    let format = map.get("format").and_then(Value::as_str);
    match declared {
        Some("object") | None if has_properties => Expect::Struct,
        Some("object") | None if has_additional => Expect::Map,
        Some("array") => Expect::Slice,
        Some("string") => match format {
            Some("byte") => Expect::Bytes,
            Some("date-time") => Expect::Time,
            _ => Expect::String,
        },
        Some("integer") => match format {
            Some("int32") => Expect::Int32,
            _ => Expect::Int64,
        },
        Some("number") => Expect::Float,
        Some("boolean") => Expect::Bool,
        // An object with neither properties nor additionalProperties is
        // free-form (FieldsV1, RawExtension): Go keeps it verbatim.
        _ => Expect::Any,
    }
}

/// Schemas whose values Go decodes with a custom unmarshaller or keeps
/// verbatim, so no field inside them can be unknown or mistyped.
fn is_opaque(schema: &Map<String, Value>) -> bool {
    let flag = |name: &str| schema.get(name).and_then(Value::as_bool).unwrap_or(false);
    flag("x-kubernetes-preserve-unknown-fields")
        || flag("x-kubernetes-int-or-string")
        || schema.contains_key("oneOf")
        || schema.contains_key("anyOf")
}

/// `io.k8s.api.apps.v1.DeploymentSpec` → `DeploymentSpec`.
fn short_name(definition: &str) -> &str {
    definition.rsplit('.').next().unwrap_or(definition)
}

/// `io.k8s.api.apps.v1.DeploymentSpec` → `v1.DeploymentSpec`, as Go's
/// reflect names a type.
fn package_name(definition: &str) -> String {
    let mut parts = definition.rsplit('.');
    match (parts.next(), parts.next()) {
        (Some(name), Some(package)) => format!("{package}.{name}"),
        _ => definition.to_string(),
    }
}

/// How Go's decoder names a JSON value in a type error.
fn describe(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The unstructured converter's words for `value` where `expect` belongs.
fn unstructured_mismatch(value: &Value, expect: Expect, go_type: &str) -> String {
    let (kind, type_name) = match value {
        Value::String(_) => ("string", "string"),
        Value::Bool(_) => ("bool", "bool"),
        Value::Number(n) if n.is_i64() => ("int64", "int64"),
        Value::Number(_) => ("float64", "float64"),
        Value::Array(_) => ("slice", "[]interface {}"),
        Value::Object(_) => ("map", "map[string]interface {}"),
        Value::Null => ("invalid", "<nil>"),
    };
    match expect {
        Expect::Struct => format!("cannot restore struct from: {kind}"),
        Expect::Slice => format!("cannot restore slice from {kind}"),
        Expect::Map => format!("cannot restore map from {kind}"),
        _ => format!("cannot convert {type_name} to {go_type}"),
    }
}

/// What Go leaves in a map entry or list element it is given null for: the
/// element type's zero value, as it then writes it.
fn zero_value(expect: Expect) -> Option<Value> {
    match expect {
        Expect::String => Some(Value::String(String::new())),
        Expect::Int32 | Expect::Int64 | Expect::IntOrString => Some(Value::from(0)),
        Expect::Float => Some(Value::from(0)),
        Expect::Bool => Some(Value::Bool(false)),
        Expect::Quantity => Some(Value::String("0".to_string())),
        Expect::Struct => Some(Value::Object(Map::new())),
        _ => None,
    }
}

/// Reorders `fields` to Go's declaration order, unless they already are.
fn put_in_order(fields: &mut Map<String, Value>, order: &FieldOrder) {
    let mut previous = 0;
    let sorted = fields.keys().all(|key| {
        let rank = order.rank(key);
        let in_order = rank >= previous;
        previous = rank;
        in_order
    });
    if sorted {
        return;
    }
    let mut entries: Vec<(String, Value)> = std::mem::take(fields).into_iter().collect();
    entries.sort_by_key(|(key, _)| order.rank(key));
    fields.extend(entries);
}

#[cfg(test)]
#[path = "decode_tests.rs"]
mod tests;
