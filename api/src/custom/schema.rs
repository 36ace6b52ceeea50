//! A CustomResourceDefinition version's structural schema, parsed once when
//! the definition is served: what pruning, defaulting and validation walk.

use std::collections::BTreeMap;

use serde_json::Value;

/// One node of a structural schema (upstream's `structuralschema.Structural`
/// with its value validations).
#[derive(Debug, Default, Clone)]
pub struct Schema {
    /// "object", "array", "string", "integer", "number", "boolean"; empty
    /// only where `x-kubernetes-int-or-string` or
    /// `x-kubernetes-preserve-unknown-fields` stand in for it.
    pub type_: String,
    pub format: String,
    /// Boxed: a map node holds room for eleven values, and a node is
    /// hundreds of bytes, so unboxed a three-property object took ~6 KiB.
    pub properties: BTreeMap<String, Box<Schema>>,
    pub items: Option<Box<Schema>>,
    /// `additionalProperties` with a schema: a map's values.
    pub additional_properties: Option<Box<Schema>>,
    pub preserve_unknown_fields: bool,
    pub int_or_string: bool,
    pub embedded_resource: bool,
    pub nullable: bool,
    pub default: Option<Value>,
    pub list_type: Option<String>,
    pub list_map_keys: Vec<String>,
    pub validation: Validation,
}

/// The value validations of one node, as OpenAPI v3 states them.
#[derive(Debug, Default, Clone)]
pub struct Validation {
    pub required: Vec<String>,
    pub enum_: Vec<Value>,
    pub maximum: Option<f64>,
    pub exclusive_maximum: bool,
    pub minimum: Option<f64>,
    pub exclusive_minimum: bool,
    pub multiple_of: Option<f64>,
    pub max_length: Option<u64>,
    pub min_length: Option<u64>,
    pub pattern: Option<Pattern>,
    pub max_items: Option<u64>,
    pub min_items: Option<u64>,
    pub unique_items: bool,
    pub max_properties: Option<u64>,
    pub min_properties: Option<u64>,
    pub all_of: Vec<Schema>,
    pub any_of: Vec<Schema>,
    pub one_of: Vec<Schema>,
    pub not: Option<Box<Schema>>,
}

/// A `pattern`, compiled once; upstream's (Go, RE2) and Rust's regex
/// dialects agree on the ECMA subset schemas use.
#[derive(Debug, Clone)]
pub struct Pattern {
    pub source: String,
    pub regex: regex::Regex,
}

/// Why a schema could not be parsed (the CRD's validation reports the
/// same problems with upstream's messages before a schema is ever served).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct SchemaError {
    pub path: String,
    pub message: String,
}

impl Schema {
    /// Parses an `openAPIV3Schema` (JSONSchemaProps JSON).
    pub fn parse(props: &Value) -> Result<Schema, SchemaError> {
        parse_at(props, "openAPIV3Schema")
    }

    /// The schema of the value at `key` of an object this schema describes.
    pub fn property(&self, key: &str) -> Option<&Schema> {
        self.properties
            .get(key)
            .map(|p| &**p)
            .or(self.additional_properties.as_deref())
    }

    /// The node at a dotted path of property names (`.spec.replicas`), as
    /// printer columns and selectable fields name them.
    pub fn at_path(&self, path: &[&str]) -> Option<&Schema> {
        path.iter().try_fold(self, |node, key| node.property(key))
    }
}

fn parse_at(props: &Value, path: &str) -> Result<Schema, SchemaError> {
    let Some(map) = props.as_object() else {
        return Err(SchemaError {
            path: path.to_string(),
            message: "must be an object".into(),
        });
    };
    let string = |key: &str| {
        map.get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let flag = |key: &str| map.get(key).and_then(Value::as_bool).unwrap_or(false);
    let number = |key: &str| map.get(key).and_then(Value::as_f64);
    let count = |key: &str| map.get(key).and_then(Value::as_u64);
    let mut schema = Schema {
        type_: string("type"),
        format: string("format"),
        preserve_unknown_fields: flag("x-kubernetes-preserve-unknown-fields"),
        int_or_string: flag("x-kubernetes-int-or-string"),
        embedded_resource: flag("x-kubernetes-embedded-resource"),
        nullable: flag("nullable"),
        default: map.get("default").cloned(),
        list_type: map
            .get("x-kubernetes-list-type")
            .and_then(Value::as_str)
            .map(str::to_string),
        list_map_keys: crate::object::strings_at(props, "x-kubernetes-list-map-keys"),
        ..Schema::default()
    };
    if let Some(properties) = map.get("properties").and_then(Value::as_object) {
        for (name, child) in properties {
            let child = parse_at(child, &format!("{path}.properties[{name}]"))?;
            schema.properties.insert(name.clone(), Box::new(child));
        }
    }
    if let Some(items) = map.get("items") {
        schema.items = Some(Box::new(parse_at(items, &format!("{path}.items"))?));
    }
    if let Some(additional) = map.get("additionalProperties").filter(|a| a.is_object()) {
        schema.additional_properties = Some(Box::new(parse_at(
            additional,
            &format!("{path}.additionalProperties"),
        )?));
    }
    let branches = |key: &str| -> Result<Vec<Schema>, SchemaError> {
        map.get(key)
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .enumerate()
                    .map(|(i, s)| parse_at(s, &format!("{path}.{key}[{i}]")))
                    .collect()
            })
            .unwrap_or_else(|| Ok(Vec::new()))
    };
    let pattern = match map.get("pattern").and_then(Value::as_str) {
        Some(source) => Some(Pattern {
            source: source.to_string(),
            regex: regex::Regex::new(source).map_err(|e| SchemaError {
                path: format!("{path}.pattern"),
                message: format!("must be a valid regular expression, but isn't: {e}"),
            })?,
        }),
        None => None,
    };
    schema.validation = Validation {
        required: crate::object::strings_at(props, "required"),
        enum_: map
            .get("enum")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        maximum: number("maximum"),
        exclusive_maximum: flag("exclusiveMaximum"),
        minimum: number("minimum"),
        exclusive_minimum: flag("exclusiveMinimum"),
        multiple_of: number("multipleOf"),
        max_length: count("maxLength"),
        min_length: count("minLength"),
        pattern,
        max_items: count("maxItems"),
        min_items: count("minItems"),
        unique_items: flag("uniqueItems"),
        max_properties: count("maxProperties"),
        min_properties: count("minProperties"),
        all_of: branches("allOf")?,
        any_of: branches("anyOf")?,
        one_of: branches("oneOf")?,
        not: match map.get("not") {
            Some(not) => Some(Box::new(parse_at(not, &format!("{path}.not"))?)),
            None => None,
        },
    };
    Ok(schema)
}
