//! The walks of a custom resource against its structural schema, as
//! apiextensions-apiserver makes them: pruning of unknown fields on
//! decode, structural defaulting, and OpenAPI validation with
//! kube-openapi's messages mapped to field errors.

use serde_json::{Map, Value};

use super::schema::Schema;
use crate::error::FieldError;
use crate::kinds::NameRule;
use crate::openapi::go_values::{field_value, go_float};

/// The fields a resource root (and an embedded resource) keeps whatever
/// its schema says: they are the object's type and metadata.
const RESOURCE_ROOT_FIELDS: [&str; 3] = ["apiVersion", "kind", "metadata"];

/// Removes fields `schema` does not specify from `object` (a whole custom
/// resource), returning their paths (`spec.colour`,
/// `spec.items[0].extra`) for strict field validation. `metadata` is not
/// looked into here: it decodes as ObjectMeta.
pub fn prune(schema: &Schema, object: &mut Value) -> Vec<String> {
    let mut pruned = Vec::new();
    prune_node(schema, object, true, &mut String::new(), &mut pruned);
    pruned
}

fn prune_node(
    schema: &Schema,
    value: &mut Value,
    resource_root: bool,
    path: &mut String,
    pruned: &mut Vec<String>,
) {
    match value {
        Value::Object(map) => {
            let keep_unknown = schema.preserve_unknown_fields;
            let mut unknown = Vec::new();
            for (key, child) in map.iter_mut() {
                if resource_root && RESOURCE_ROOT_FIELDS.contains(&key.as_str()) {
                    continue;
                }
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
                match schema.property(key) {
                    Some(child_schema) => prune_node(
                        child_schema,
                        child,
                        child_schema.embedded_resource,
                        path,
                        pruned,
                    ),
                    None if keep_unknown => {}
                    None => {
                        unknown.push(key.clone());
                        pruned.push(path.clone());
                    }
                }
                path.truncate(len);
            }
            for key in unknown {
                map.remove(&key);
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.items.as_deref() {
                for (i, item) in items.iter_mut().enumerate() {
                    let len = path.len();
                    path.push_str(&format!("[{i}]"));
                    prune_node(
                        item_schema,
                        item,
                        item_schema.embedded_resource,
                        path,
                        pruned,
                    );
                    path.truncate(len);
                }
            }
        }
        _ => {}
    }
}

/// Applies the schema's defaults to `object` in place: an absent field
/// with a default gets it, as does a `null` one that is not nullable.
/// Defaults apply top-down, so a defaulted object gets its own fields'
/// defaults too.
pub fn apply_defaults(schema: &Schema, value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, property) in &schema.properties {
                let Some(default) = &property.default else {
                    continue;
                };
                match map.get(key) {
                    None => {
                        map.insert(key.clone(), default.clone());
                    }
                    Some(Value::Null) if !property.nullable => {
                        map.insert(key.clone(), default.clone());
                    }
                    Some(_) => {}
                }
            }
            for (key, child) in map.iter_mut() {
                if let Some(child_schema) = schema.property(key) {
                    apply_defaults(child_schema, child);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.items.as_deref() {
                for item in items {
                    apply_defaults(item_schema, item);
                }
            }
        }
        _ => {}
    }
}

/// Validates a custom resource against its schema: kube-openapi's checks
/// with apiextensions' mapping of them to field errors. `metadata` is the
/// pipeline's to validate.
pub fn validate(schema: &Schema, object: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Value::Object(map) = object {
        // As a resource, the root's apiVersion, kind and metadata are skipped.
        check_object(schema, map, "", &mut errors, true);
    }
    errors
}

/// The status of a custom resource written through `/status`, checked
/// alone against the schema's `status` property as upstream checks it:
/// fields are reported under `status`, messages name them from there.
pub fn validate_status(schema: &Schema, object: &Value) -> Vec<FieldError> {
    let (Some(status_schema), Some(status)) =
        (schema.properties.get("status"), object.get("status"))
    else {
        return Vec::new();
    };
    let mut errors = Vec::new();
    check(status_schema, status, "", &mut errors);
    for error in &mut errors {
        error.field = child_path("status", &error.field);
    }
    errors
}

/// One value (a schema's default) checked against its node's schema;
/// `path` is where the value sits in an object, as messages name it.
pub fn validate_value(schema: &Schema, value: &Value, path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    check(schema, value, path, &mut errors);
    errors
}

/// The JSON type name kube-openapi infers for a value.
fn type_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn child_path(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// kube-openapi's `%s in body ...` messages name the field by its path.
fn in_body(path: &str) -> String {
    if path.is_empty() {
        "body".to_string()
    } else {
        format!("{path} in body")
    }
}

fn invalid(path: &str, value: &Value, detail: String) -> FieldError {
    FieldError::invalid_rendered(path, &field_value(value), &detail)
}

/// Whether `value` has the schema's type (an integral number passes as an
/// integer, an integer as a number).
fn type_matches(schema: &Schema, value: &Value) -> bool {
    if schema.int_or_string {
        return matches!(value, Value::String(_)) || type_of(value) == "integer";
    }
    match schema.type_.as_str() {
        "" => true,
        "integer" => match value {
            Value::Number(n) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        },
        "number" => value.is_number(),
        wanted => type_of(value) == wanted,
    }
}

fn check(schema: &Schema, value: &Value, path: &str, errors: &mut Vec<FieldError>) {
    if value.is_null() {
        if !schema.nullable && (!schema.type_.is_empty() || schema.int_or_string) {
            let wanted = if schema.int_or_string {
                "integer,string"
            } else {
                &schema.type_
            };
            errors.push(FieldError::type_invalid(
                path,
                "\"null\"",
                &format!("{} must be of type {wanted}: \"null\"", in_body(path)),
            ));
        }
        return;
    }
    if !type_matches(schema, value) {
        errors.push(FieldError::type_invalid(
            path,
            &field_value(&Value::String(type_of(value).into())),
            &format!(
                "{} must be of type {}: \"{}\"",
                in_body(path),
                schema.type_,
                type_of(value)
            ),
        ));
        return;
    }
    let rules = &schema.validation;
    match value {
        Value::String(s) => check_string(schema, s, value, path, errors),
        Value::Number(_) => check_number(schema, value, path, errors),
        Value::Array(items) => check_array(schema, items, value, path, errors),
        Value::Object(map) => check_object(schema, map, path, errors, schema.embedded_resource),
        Value::Bool(_) | Value::Null => {}
    }
    if !rules.enum_.is_empty() && !rules.enum_.contains(value) {
        let supported: Vec<String> = rules
            .enum_
            .iter()
            .map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect();
        let supported: Vec<&str> = supported.iter().map(String::as_str).collect();
        errors.push(FieldError::not_supported_rendered(
            path,
            &field_value(value),
            &supported,
        ));
    }
    check_combinators(schema, value, path, errors);
}

fn check_string(schema: &Schema, s: &str, value: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let rules = &schema.validation;
    let chars = s.chars().count() as u64;
    if let Some(max) = rules.max_length.filter(|max| chars > *max) {
        errors.push(FieldError::too_long_bytes(path, max as usize));
    }
    if let Some(min) = rules.min_length.filter(|min| chars < *min) {
        errors.push(invalid(
            path,
            value,
            format!("{} should be at least {min} chars long", in_body(path)),
        ));
    }
    if let Some(pattern) = rules.pattern.as_ref().filter(|p| !p.regex.is_match(s)) {
        errors.push(invalid(
            path,
            value,
            format!("{} should match '{}'", in_body(path), pattern.source),
        ));
    }
    if !schema.format.is_empty() && !super::formats::valid(&schema.format, s) {
        errors.push(FieldError::type_invalid(
            path,
            &field_value(value),
            &format!(
                "{} must be of type {}: {}",
                in_body(path),
                schema.format,
                field_value(value)
            ),
        ));
    }
}

fn check_number(schema: &Schema, value: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let rules = &schema.validation;
    let Some(n) = value.as_f64() else {
        return;
    };
    if let Some(max) = rules.maximum {
        if rules.exclusive_maximum && n >= max {
            errors.push(invalid(
                path,
                value,
                format!("{} should be less than {}", in_body(path), go_float(max)),
            ));
        } else if n > max {
            errors.push(invalid(
                path,
                value,
                format!(
                    "{} should be less than or equal to {}",
                    in_body(path),
                    go_float(max)
                ),
            ));
        }
    }
    if let Some(min) = rules.minimum {
        if rules.exclusive_minimum && n <= min {
            errors.push(invalid(
                path,
                value,
                format!("{} should be greater than {}", in_body(path), go_float(min)),
            ));
        } else if n < min {
            errors.push(invalid(
                path,
                value,
                format!(
                    "{} should be greater than or equal to {}",
                    in_body(path),
                    go_float(min)
                ),
            ));
        }
    }
    if let Some(factor) = rules.multiple_of.filter(|f| *f != 0.0) {
        let quotient = n / factor;
        if quotient.fract() != 0.0 {
            errors.push(invalid(
                path,
                value,
                format!(
                    "{} should be a multiple of {}",
                    in_body(path),
                    go_float(factor)
                ),
            ));
        }
    }
}

fn check_array(
    schema: &Schema,
    items: &[Value],
    value: &Value,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    let rules = &schema.validation;
    let bounds = (rules.min_items, rules.max_items);
    check_count(bounds, items.len(), value, path, "items", errors);
    if rules.unique_items && has_duplicates(items) {
        errors.push(invalid(
            path,
            value,
            format!("{} shouldn't contain duplicates", in_body(path)),
        ));
    }
    if let Some(item_schema) = schema.items.as_deref() {
        for (i, item) in items.iter().enumerate() {
            check(item_schema, item, &format!("{path}[{i}]"), errors);
        }
    }
    check_list_type(schema, items, path, errors);
}

/// minItems/maxItems and minProperties/maxProperties: too many is
/// TooMany, too few kube-openapi's "should have at least".
fn check_count(
    (min, max): (Option<u64>, Option<u64>),
    len: usize,
    value: &Value,
    path: &str,
    noun: &str,
    errors: &mut Vec<FieldError>,
) {
    if let Some(max) = max.filter(|max| len as u64 > *max) {
        errors.push(FieldError::too_many(path, len, max as usize));
    }
    if let Some(min) = min.filter(|min| (len as u64) < *min) {
        errors.push(invalid(
            path,
            value,
            format!("{} should have at least {min} {noun}", in_body(path)),
        ));
    }
}

fn has_duplicates(items: &[Value]) -> bool {
    items
        .iter()
        .enumerate()
        .any(|(i, item)| items[..i].contains(item))
}

/// `x-kubernetes-list-type`: a set's items and a map's keys are unique.
fn check_list_type(schema: &Schema, items: &[Value], path: &str, errors: &mut Vec<FieldError>) {
    match schema.list_type.as_deref() {
        Some("set") => {
            for (i, item) in items.iter().enumerate() {
                if items[..i].contains(item) {
                    errors.push(FieldError::duplicate_rendered(
                        format!("{path}[{i}]"),
                        &field_value(item),
                        "",
                    ));
                }
            }
        }
        Some("map") => {
            let key_of = |item: &Value| -> Vec<Value> {
                schema
                    .list_map_keys
                    .iter()
                    .map(|k| item.get(k).cloned().unwrap_or(Value::Null))
                    .collect()
            };
            for (i, item) in items.iter().enumerate() {
                let key = key_of(item);
                if items[..i].iter().any(|earlier| key_of(earlier) == key) {
                    let rendered: Map<String, Value> =
                        schema.list_map_keys.iter().cloned().zip(key).collect();
                    errors.push(FieldError::duplicate_rendered(
                        format!("{path}[{i}]"),
                        &go_map_of_keys(&rendered),
                        "",
                    ));
                }
            }
        }
        _ => {}
    }
}

/// How upstream prints a duplicate list-map key: `map[string]interface {}{"name":"a"}`.
fn go_map_of_keys(keys: &Map<String, Value>) -> String {
    crate::openapi::go_values::go_sharp_v(&Value::Object(keys.clone()))
}

fn check_object(
    schema: &Schema,
    map: &Map<String, Value>,
    path: &str,
    errors: &mut Vec<FieldError>,
    resource: bool,
) {
    let rules = &schema.validation;
    if rules.min_properties.is_some() || rules.max_properties.is_some() {
        let bounds = (rules.min_properties, rules.max_properties);
        let value = Value::Object(map.clone());
        check_count(bounds, map.len(), &value, path, "properties", errors);
    }
    for required in &rules.required {
        if !map.contains_key(required) {
            errors.push(FieldError::required(child_path(path, required), ""));
        }
    }
    if resource && !path.is_empty() {
        check_embedded(map, path, errors);
    }
    for (key, child) in map {
        if resource && RESOURCE_ROOT_FIELDS.contains(&key.as_str()) {
            continue;
        }
        if let Some(child_schema) = schema.property(key) {
            check(child_schema, child, &child_path(path, key), errors);
        }
    }
}

/// An `x-kubernetes-embedded-resource` object names its kind and version,
/// and its metadata is checked as any object's (names as path segments, a
/// missing name allowed), as upstream's objectmeta validation does.
fn check_embedded(map: &Map<String, Value>, path: &str, errors: &mut Vec<FieldError>) {
    if let Some(Value::Object(meta)) = map.get("metadata") {
        let mut meta = meta.clone();
        let unnamed = meta
            .get("name")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty);
        if unnamed {
            meta.insert("name".into(), Value::String("fakename".into()));
        }
        let namespaced = meta
            .get("namespace")
            .and_then(Value::as_str)
            .is_some_and(|n| !n.is_empty());
        let embedded = serde_json::json!({ "metadata": meta });
        errors.extend(
            crate::validate::object_meta::object_meta(&embedded, NameRule::PathSegment, namespaced)
                .into_iter()
                .map(|mut e| {
                    e.field = format!("{path}.{}", e.field);
                    e
                }),
        );
    }
    for field in ["apiVersion", "kind"] {
        match map.get(field) {
            None | Some(Value::Null) => errors.push(FieldError::required(
                child_path(path, field),
                "must not be empty",
            )),
            Some(Value::String(s)) if s.is_empty() => errors.push(FieldError::required(
                child_path(path, field),
                "must not be empty",
            )),
            Some(Value::String(_)) => {}
            Some(other) => errors.push(FieldError::type_invalid(
                child_path(path, field),
                &field_value(other),
                "must be a string",
            )),
        }
    }
}

/// allOf, anyOf, oneOf and not: their value validations, as kube-openapi
/// words a failed combination.
fn check_combinators(schema: &Schema, value: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let rules = &schema.validation;
    let passes = |branch: &Schema| {
        let mut branch_errors = Vec::new();
        check_branch(branch, value, path, &mut branch_errors);
        branch_errors.is_empty()
    };
    for branch in &rules.all_of {
        check_branch(branch, value, path, errors);
    }
    if !rules.any_of.is_empty() && !rules.any_of.iter().any(passes) {
        errors.push(invalid(
            path,
            value,
            format!(
                "{} must validate at least one schema (anyOf)",
                in_body(path)
            ),
        ));
    }
    if !rules.one_of.is_empty() && rules.one_of.iter().filter(|b| passes(b)).count() != 1 {
        errors.push(invalid(
            path,
            value,
            format!(
                "{} must validate one and only one schema (oneOf)",
                in_body(path)
            ),
        ));
    }
    if let Some(not) = rules.not.as_deref() {
        if passes(not) {
            errors.push(invalid(
                path,
                value,
                format!("{} must not validate the schema (not)", in_body(path)),
            ));
        }
    }
}

/// A combinator branch: value validations only (structural schemas put
/// types and properties outside the branches), so a branch without a type
/// checks the value as it is.
fn check_branch(branch: &Schema, value: &Value, path: &str, errors: &mut Vec<FieldError>) {
    if !branch.type_.is_empty() && !type_matches(branch, value) {
        errors.push(FieldError::type_invalid(
            path,
            &field_value(&Value::String(type_of(value).into())),
            &format!(
                "{} must be of type {}: \"{}\"",
                in_body(path),
                branch.type_,
                type_of(value)
            ),
        ));
        return;
    }
    if value.is_null() {
        return;
    }
    check(branch, value, path, errors);
}

#[cfg(test)]
#[path = "walk_tests.rs"]
mod tests;
