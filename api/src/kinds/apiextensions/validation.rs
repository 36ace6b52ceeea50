//! Upstream's validation of a CustomResourceDefinition
//! (apiextensions-apiserver's ValidateCustomResourceDefinition), with its
//! messages and field paths.
//!
//! Upstream validates the internal version, into which v1 converts by
//! hoisting a schema, subresources or printer columns that every version
//! shares to `spec.validation`, `spec.subresources` and
//! `spec.additionalPrinterColumns`; its field paths say so, and these do too.

use serde_json::Value;

use super::custom_resource_definition::is_true;
use crate::custom::schema::Schema;
use crate::custom::walk;
use crate::error::FieldError;
use crate::kinds::NameRule;
use crate::openapi::go_values::field_value;
use crate::validate::object_meta::name_problems;

const SCHEMA_TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];
const COLUMN_TYPES: [&str; 5] = ["boolean", "date", "integer", "number", "string"];
const COLUMN_FORMATS: [&str; 8] = [
    "byte",
    "date",
    "date-time",
    "double",
    "float",
    "int32",
    "int64",
    "password",
];
const MAX_SELECTABLE_FIELDS: usize = 8;
/// The reasons a rule may give its failures, sorted as upstream lists them.
const RULE_REASONS: [&str; 4] = [
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueInvalid",
    "FieldValueRequired",
];

fn text<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn versions(crd: &Value) -> Vec<Value> {
    crd.pointer("/spec/versions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// Where a per-version part is reported: hoisted to `spec.<top>` when every
/// version has the same one, else under each version.
fn hoisted(versions: &[Value], key: &str) -> bool {
    let first = versions.first().and_then(|v| v.get(key));
    first.is_some() && versions.iter().all(|v| v.get(key) == first)
}

/// The definition's validation on create (`old` None) or update.
pub(super) fn definition(crd: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let group = text(crd, "/spec/group");
    let plural = text(crd, "/spec/names/plural");
    let name = crate::object::name(crd);
    if !name.is_empty() && name != format!("{plural}.{group}") {
        errs.push(FieldError::invalid(
            "metadata.name",
            name,
            "must be spec.names.plural+\".\"+spec.group",
        ));
    }
    if group.is_empty() {
        errs.push(FieldError::required("spec.group", ""));
    } else {
        let problems = name_problems(NameRule::Subdomain, group, false);
        if !problems.is_empty() {
            errs.push(FieldError::invalid(
                "spec.group",
                group,
                &problems.join(","),
            ));
        } else if group.split('.').count() < 2 {
            errs.push(FieldError::invalid(
                "spec.group",
                group,
                "should be a domain with at least one dot",
            ));
        }
    }
    match text(crd, "/spec/scope") {
        "" => errs.push(FieldError::required("spec.scope", "")),
        "Cluster" | "Namespaced" => {}
        other => errs.push(FieldError::not_supported(
            "spec.scope",
            other,
            &["Cluster", "Namespaced"],
        )),
    }
    errs.extend(version_list(crd, old));
    errs.extend(names(crd.pointer("/spec/names"), "spec.names", true));
    errs.extend(conversion(crd));
    if let Some(old) = old {
        errs.extend(immutables(crd, old));
    }
    errs.extend(stored_versions(crd));
    errs
}

fn version_list(crd: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let versions = versions(crd);
    let mut seen: Vec<&str> = Vec::new();
    let mut duplicate = false;
    for (i, version) in versions.iter().enumerate() {
        let name = text(version, "/name");
        let problems = name_problems(NameRule::Dns1035Label, name, false);
        if !problems.is_empty() {
            errs.push(FieldError::invalid(
                format!("spec.versions[{i}].name"),
                name,
                &problems.join(","),
            ));
        }
        duplicate |= seen.contains(&name);
        seen.push(name);
    }
    let storage = versions
        .iter()
        .filter(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .count();
    if storage != 1 {
        errs.push(FieldError::invalid_rendered(
            "spec.versions",
            &go_versions(&versions),
            "must have exactly one version marked as storage version",
        ));
    }
    if duplicate {
        errs.push(FieldError::invalid_rendered(
            "spec.versions",
            &go_versions(&versions),
            "must contain unique version names",
        ));
    }
    let status_enabled = versions
        .iter()
        .any(|v| v.pointer("/subresources/status").is_some());
    let schemas_hoisted = hoisted(&versions, "schema");
    for (i, version) in versions.iter().enumerate() {
        if schemas_hoisted && i > 0 {
            break;
        }
        let prefix = if schemas_hoisted {
            "spec.validation".to_string()
        } else {
            format!("spec.versions[{i}].schema")
        };
        match version.pointer("/schema/openAPIV3Schema") {
            None => errs.push(FieldError::required(
                format!("{prefix}.openAPIV3Schema"),
                "schemas are required",
            )),
            Some(props) => {
                // Upstream lets an unchanged schema keep rules it accepted
                // before, whatever each costs now.
                let unchanged = old.is_some_and(|old| {
                    self::versions(old).iter().any(|v| {
                        text(v, "/name") == text(version, "/name")
                            && v.pointer("/schema/openAPIV3Schema") == Some(props)
                    })
                });
                errs.extend(schema(
                    props,
                    &format!("{prefix}.openAPIV3Schema"),
                    status_enabled,
                    !unchanged,
                ))
            }
        }
    }
    let subresources_hoisted = hoisted(&versions, "subresources");
    for (i, version) in versions.iter().enumerate() {
        if subresources_hoisted && i > 0 {
            break;
        }
        let prefix = if subresources_hoisted {
            "spec.subresources".to_string()
        } else {
            format!("spec.versions[{i}].subresources")
        };
        if let Some(scale) = version.pointer("/subresources/scale") {
            errs.extend(scale_paths(scale, &format!("{prefix}.scale")));
        }
    }
    let columns_hoisted = hoisted(&versions, "additionalPrinterColumns");
    for (i, version) in versions.iter().enumerate() {
        if columns_hoisted && i > 0 {
            break;
        }
        let prefix = if columns_hoisted {
            "spec.additionalPrinterColumns".to_string()
        } else {
            format!("spec.versions[{i}].additionalPrinterColumns")
        };
        if let Some(columns) = version
            .get("additionalPrinterColumns")
            .and_then(Value::as_array)
        {
            errs.extend(printer_columns(columns, &prefix));
        }
    }
    let fields_hoisted = schemas_hoisted && hoisted(&versions, "selectableFields");
    for (i, version) in versions.iter().enumerate() {
        if fields_hoisted && i > 0 {
            break;
        }
        let prefix = if fields_hoisted {
            "spec.selectableFields".to_string()
        } else {
            format!("spec.versions[{i}].selectableFields")
        };
        if let Some(fields) = version.get("selectableFields").and_then(Value::as_array) {
            errs.extend(selectable_fields(version, fields, &prefix));
        }
    }
    errs
}

/// The internal versions slice as `%#v` prints it, abridged to the names:
/// upstream's full Go literal carries every nested pointer's address.
fn go_versions(versions: &[Value]) -> String {
    let items: Vec<String> = versions
        .iter()
        .map(|v| {
            format!(
                "apiextensions.CustomResourceDefinitionVersion{{Name:{}, Served:{}, Storage:{}}}",
                field_value(&Value::String(text(v, "/name").into())),
                v.get("served").and_then(Value::as_bool).unwrap_or(false),
                v.get("storage").and_then(Value::as_bool).unwrap_or(false),
            )
        })
        .collect();
    format!(
        "[]apiextensions.CustomResourceDefinitionVersion{{{}}}",
        items.join(", ")
    )
}

/// `spec.names` (and `status.acceptedNames`, where nothing is required).
fn names(names: Option<&Value>, path: &str, required: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let empty = Value::Null;
    let names = names.unwrap_or(&empty);
    let name = |key: &str| names.get(key).and_then(Value::as_str).unwrap_or_default();
    for key in ["plural", "singular"] {
        let value = name(key);
        let problems = name_problems(NameRule::Dns1035Label, value, false);
        if !value.is_empty() && !problems.is_empty() {
            errs.push(FieldError::invalid(
                format!("{path}.{key}"),
                value,
                &problems.join(","),
            ));
        }
        if required && value.is_empty() {
            errs.push(FieldError::required(format!("{path}.{key}"), ""));
        }
    }
    for (i, short) in crate::object::strings_at(names, "shortNames")
        .iter()
        .enumerate()
    {
        let problems = name_problems(NameRule::Dns1035Label, short, false);
        if !problems.is_empty() {
            errs.push(FieldError::invalid(
                format!("{path}.shortNames[{i}]"),
                short,
                &problems.join(","),
            ));
        }
    }
    for key in ["kind", "listKind"] {
        let value = name(key);
        let problems = name_problems(NameRule::Dns1035Label, &value.to_lowercase(), false);
        if !value.is_empty() && !problems.is_empty() {
            errs.push(FieldError::invalid(
                format!("{path}.{key}"),
                value,
                &format!(
                    "may have mixed case, but should otherwise match: {}",
                    problems.join(",")
                ),
            ));
        }
        if required && value.is_empty() {
            errs.push(FieldError::required(format!("{path}.{key}"), ""));
        }
    }
    if !name("kind").is_empty() && name("kind") == name("listKind") {
        errs.push(FieldError::invalid(
            format!("{path}.listKind"),
            name("listKind"),
            "kind and listKind may not be the same",
        ));
    }
    for (i, category) in crate::object::strings_at(names, "categories")
        .iter()
        .enumerate()
    {
        let problems = name_problems(NameRule::Dns1035Label, category, false);
        if !problems.is_empty() {
            errs.push(FieldError::invalid(
                format!("{path}.categories[{i}]"),
                category,
                &problems.join(","),
            ));
        }
    }
    errs
}

/// What a write through `/status` is checked for: the names it grants.
pub(super) fn accepted_names(crd: &Value) -> Vec<FieldError> {
    names(
        crd.pointer("/status/acceptedNames"),
        "status.acceptedNames",
        false,
    )
}

/// Structural-schema rules and the value checks of each node; errors
/// sorted by their text, as upstream sorts them.
fn schema(props: &Value, path: &str, status_enabled: bool, cost_per_rule: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let root_type = text(props, "/type");
    let int_or_string = props
        .get("x-kubernetes-int-or-string")
        .and_then(Value::as_bool)
        == Some(true);
    let preserve = props
        .get("x-kubernetes-preserve-unknown-fields")
        .and_then(Value::as_bool)
        == Some(true);
    if root_type.is_empty() && !int_or_string && !preserve {
        errs.push(FieldError::required(
            format!("{path}.type"),
            "must not be empty at the root",
        ));
    } else if !root_type.is_empty() && root_type != "object" {
        if status_enabled {
            errs.push(FieldError::invalid(
                format!("{path}.type"),
                root_type,
                "only \"object\" is allowed as the type at the root of the schema if the status subresource is enabled",
            ));
        }
        errs.push(FieldError::invalid(
            format!("{path}.type"),
            root_type,
            "must be object at the root",
        ));
    }
    if props.get("additionalProperties").is_some() {
        errs.push(FieldError::forbidden(
            format!("{path}.additionalProperties"),
            "must not be used at the root",
        ));
    }
    if props.get("nullable").and_then(Value::as_bool) == Some(true) {
        errs.push(FieldError::forbidden(
            format!("{path}.nullable"),
            "nullable cannot be true at the root",
        ));
    }
    if let Some(metadata) = props.pointer("/properties/metadata") {
        let meta_path = format!("{path}.properties[metadata]");
        let meta_type = text(metadata, "/type");
        if !meta_type.is_empty() && meta_type != "object" {
            errs.push(FieldError::invalid(
                format!("{meta_path}.type"),
                meta_type,
                "must be object",
            ));
        }
        let only_names = metadata
            .get("properties")
            .and_then(Value::as_object)
            .is_none_or(|p| p.keys().all(|k| k == "name" || k == "generateName"));
        let extra = metadata
            .as_object()
            .is_some_and(|m| m.keys().any(|k| k != "type" && k != "properties"));
        if !only_names || extra {
            errs.push(FieldError::forbidden(
                meta_path,
                "must not specify anything other than name and generateName, but metadata is implicitly specified",
            ));
        }
    }
    for key in ["apiVersion", "kind"] {
        let field_type = props
            .pointer(&format!("/properties/{key}/type"))
            .and_then(Value::as_str);
        if let Some(t) = field_type.filter(|t| *t != "string") {
            errs.push(FieldError::invalid(
                format!("{path}.properties[{key}].type"),
                t,
                "must be string",
            ));
        }
    }
    node(props, path, "", &mut errs);
    errs.sort_by_key(FieldError::render);
    if errs.is_empty() {
        match Schema::parse(props) {
            Err(e) => errs.push(FieldError::invalid(path.to_string(), "", &e.to_string())),
            Ok(parsed) => {
                errs.extend(defaults(props, &parsed, path, ""));
                let compile_errors = crate::custom::rules::compile_errors(props, path);
                if compile_errors.is_empty() {
                    errs.extend(crate::custom::budget::definition_errors(
                        props,
                        &parsed,
                        path,
                        cost_per_rule,
                    ));
                }
                errs.extend(compile_errors);
            }
        }
    }
    errs
}

/// One schema node's rules, then its children's. `data_path` is where the
/// node's values sit in an object (for default values' messages).
fn node(props: &Value, path: &str, data_path: &str, errs: &mut Vec<FieldError>) {
    let Some(map) = props.as_object() else {
        return;
    };
    let type_ = text(props, "/type");
    if !type_.is_empty() && !SCHEMA_TYPES.contains(&type_) {
        if type_ == "null" {
            errs.push(FieldError::forbidden(
                format!("{path}.type"),
                "type cannot be set to null, use nullable as an alternative",
            ));
        } else {
            errs.push(FieldError::not_supported(
                format!("{path}.type"),
                type_,
                &SCHEMA_TYPES,
            ));
        }
    }
    for (key, what) in [
        ("id", "id is not supported"),
        ("additionalItems", "additionalItems is not supported"),
        ("patternProperties", "patternProperties is not supported"),
        ("definitions", "definitions is not supported"),
        ("dependencies", "dependencies is not supported"),
        ("$ref", "$ref is not supported"),
    ] {
        if map.contains_key(key) {
            errs.push(FieldError::forbidden(format!("{path}.{key}"), what));
        }
    }
    if map.get("uniqueItems").and_then(Value::as_bool) == Some(true) {
        errs.push(FieldError::forbidden(
            format!("{path}.uniqueItems"),
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ));
    }
    if map
        .get("x-kubernetes-preserve-unknown-fields")
        .and_then(Value::as_bool)
        == Some(false)
    {
        errs.push(FieldError::invalid_rendered(
            format!("{path}.x-kubernetes-preserve-unknown-fields"),
            "false",
            "must be true or undefined",
        ));
    }
    if map.contains_key("properties")
        && map
            .get("additionalProperties")
            .is_some_and(|a| a != &Value::Bool(false))
    {
        errs.push(FieldError::forbidden(
            format!("{path}.additionalProperties"),
            "additionalProperties and properties are mutual exclusive",
        ));
    }
    if let Some(pattern) = map.get("pattern").and_then(Value::as_str) {
        if let Err(e) = regex::Regex::new(pattern) {
            errs.push(FieldError::invalid(
                format!("{path}.pattern"),
                pattern,
                &format!("must be a valid regular expression, but isn't: {e}"),
            ));
        }
    }
    if type_ == "array" {
        match map.get("items") {
            None => errs.push(FieldError::required(
                format!("{path}.items"),
                "must be specified",
            )),
            Some(Value::Array(_)) => errs.push(FieldError::forbidden(
                format!("{path}.items"),
                "items must be a schema object and not an array",
            )),
            Some(_) => {}
        }
    }
    list_type(props, path, errs);
    rule_declarations(props, path, errs);
    let untyped_ok = |child: &Value| {
        !text(child, "/type").is_empty()
            || child
                .get("x-kubernetes-int-or-string")
                .and_then(Value::as_bool)
                == Some(true)
            || child
                .get("x-kubernetes-preserve-unknown-fields")
                .and_then(Value::as_bool)
                == Some(true)
    };
    if let Some(properties) = map.get("properties").and_then(Value::as_object) {
        for (name, child) in properties {
            let child_path = format!("{path}.properties[{name}]");
            if !untyped_ok(child) {
                errs.push(FieldError::required(
                    format!("{child_path}.type"),
                    "must not be empty for specified object fields",
                ));
            }
            let data = if data_path.is_empty() {
                name.clone()
            } else {
                format!("{data_path}.{name}")
            };
            node(child, &child_path, &data, errs);
        }
    }
    if let Some(items) = map.get("items").filter(|i| i.is_object()) {
        if !untyped_ok(items) {
            errs.push(FieldError::required(
                format!("{path}.items.type"),
                "must not be empty for specified array items",
            ));
        }
        node(items, &format!("{path}.items"), data_path, errs);
    }
    if let Some(additional) = map.get("additionalProperties").filter(|a| a.is_object()) {
        node(
            additional,
            &format!("{path}.additionalProperties"),
            data_path,
            errs,
        );
    }
}

/// What upstream checks of each `x-kubernetes-validations` entry before
/// any is compiled: a rule, a message on one line and not blank, a reason
/// it knows, and a fieldPath that names a field under this node.
fn rule_declarations(props: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let Some(rules) = props
        .get("x-kubernetes-validations")
        .and_then(Value::as_array)
    else {
        return;
    };
    // Line breaks as CEL's grammar knows them.
    let has_line_breaks = |s: &str| s.contains(['\n', '\r']);
    let mut schema: Option<Option<Schema>> = None;
    for (i, rule) in rules.iter().enumerate() {
        let at = |key: &str| format!("{path}.x-kubernetes-validations[{i}].{key}");
        let expression = text(rule, "/rule").trim();
        let message = text(rule, "/message");
        if expression.is_empty() {
            errs.push(FieldError::required(at("rule"), "rule is not specified"));
        } else if !message.is_empty() && message.trim().is_empty() {
            errs.push(FieldError::invalid(
                at("message"),
                message,
                "message must be non-empty if specified",
            ));
        } else if has_line_breaks(message.trim()) {
            errs.push(FieldError::invalid(
                at("message"),
                message,
                "message must not contain line breaks",
            ));
        } else if has_line_breaks(expression) && message.trim().is_empty() {
            errs.push(FieldError::required(
                at("message"),
                "message must be specified if rule contains line breaks",
            ));
        }
        let message_expression = text(rule, "/messageExpression");
        if !message_expression.is_empty() && message_expression.trim().is_empty() {
            errs.push(FieldError::required(
                at("messageExpression"),
                "messageExpression must be non-empty if specified",
            ));
        }
        if let Some(reason) = rule.get("reason").and_then(Value::as_str) {
            if !RULE_REASONS.contains(&reason) {
                errs.push(FieldError::not_supported(
                    at("reason"),
                    reason,
                    &RULE_REASONS,
                ));
            }
        }
        let field_path = text(rule, "/fieldPath");
        if !field_path.is_empty() && field_path.trim().is_empty() {
            errs.push(FieldError::invalid(
                at("fieldPath"),
                field_path,
                "fieldPath must be non-empty if specified",
            ));
        }
        if has_line_breaks(field_path) {
            errs.push(FieldError::invalid(
                at("fieldPath"),
                field_path,
                "fieldPath must not contain line breaks",
            ));
        }
        if !field_path.is_empty() {
            // A node that is not a structural schema is reported for that
            // instead, as upstream does.
            let node = schema.get_or_insert_with(|| Schema::parse(props).ok());
            let names_no_field = node.as_ref().is_some_and(|node| {
                crate::custom::field_path::normalized(field_path, node).is_err()
            });
            if names_no_field {
                errs.push(FieldError::invalid(
                    at("fieldPath"),
                    field_path,
                    "fieldPath must be a valid path",
                ));
            }
        }
    }
}

fn list_type(props: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let Some(list_type) = props.get("x-kubernetes-list-type").and_then(Value::as_str) else {
        return;
    };
    if text(props, "/type") != "array" {
        errs.push(FieldError::invalid(
            format!("{path}.type"),
            text(props, "/type"),
            "must be array if x-kubernetes-list-type is specified",
        ));
        return;
    }
    match list_type {
        "atomic" | "set" => {}
        "map" => {
            let keys = crate::object::strings_at(props, "x-kubernetes-list-map-keys");
            if keys.is_empty() {
                errs.push(FieldError::required(
                    format!("{path}.x-kubernetes-list-map-keys"),
                    "must not be empty if x-kubernetes-list-type is map",
                ));
            }
            let item_props = props.get("items").and_then(|i| i.get("properties"));
            for key in &keys {
                if item_props.and_then(|p| p.get(key)).is_none() {
                    errs.push(FieldError::invalid_rendered(
                        format!("{path}.x-kubernetes-list-map-keys"),
                        &crate::validate::meta::go_string_slice(
                            "[]string",
                            props.get("x-kubernetes-list-map-keys"),
                        ),
                        "entries must all be names of item properties",
                    ));
                    break;
                }
            }
        }
        other => errs.push(FieldError::not_supported(
            format!("{path}.x-kubernetes-list-type"),
            other,
            &["atomic", "set", "map"],
        )),
    }
}

/// Defaults must be valid values of their own schema.
fn defaults(props: &Value, parsed: &Schema, path: &str, data_path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(default) = props.get("default") {
        for error in walk::validate_value(parsed, default, data_path) {
            errs.push(FieldError {
                field: format!("{path}.default"),
                ..error
            });
        }
    }
    if let Some(properties) = props.get("properties").and_then(Value::as_object) {
        for (name, child) in properties {
            if let Some(child_parsed) = parsed.properties.get(name) {
                let data = if data_path.is_empty() {
                    name.clone()
                } else {
                    format!("{data_path}.{name}")
                };
                errs.extend(defaults(
                    child,
                    child_parsed,
                    &format!("{path}.properties[{name}]"),
                    &data,
                ));
            }
        }
    }
    errs
}

fn simple_path(value: &str) -> bool {
    value.starts_with('.')
        && value[1..]
            .split('.')
            .all(|k| !k.is_empty() && !k.contains(['[', ']', '*']))
}

fn scale_paths(scale: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (key, under, message) in [
        (
            "specReplicasPath",
            vec![".spec."],
            "should be a json path under .spec",
        ),
        (
            "statusReplicasPath",
            vec![".status."],
            "should be a json path under .status",
        ),
    ] {
        let value = text(scale, &format!("/{key}"));
        let field = format!("{path}.{key}");
        if value.is_empty() {
            errs.push(FieldError::required(field, ""));
        } else if !simple_path(value) {
            errs.push(FieldError::invalid(
                field,
                value,
                "must be a simple json path starting with .",
            ));
        } else if !under.iter().any(|u| value.starts_with(u)) {
            errs.push(FieldError::invalid(field, value, message));
        }
    }
    let selector = text(scale, "/labelSelectorPath");
    let field = format!("{path}.labelSelectorPath");
    if !selector.is_empty() {
        if !simple_path(selector) {
            errs.push(FieldError::invalid(
                field,
                selector,
                "must be a simple json path starting with .",
            ));
        } else if !selector.starts_with(".spec.") && !selector.starts_with(".status.") {
            errs.push(FieldError::invalid(
                field,
                selector,
                "should be a json path under either .spec or .status",
            ));
        }
    }
    errs
}

fn printer_columns(columns: &[Value], path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, column) in columns.iter().enumerate() {
        let at = format!("{path}[{i}]");
        if text(column, "/name").is_empty() {
            errs.push(FieldError::required(format!("{at}.name"), ""));
        }
        match text(column, "/type") {
            "" => errs.push(FieldError::required(
                format!("{at}.type"),
                "must be one of boolean,date,integer,number,string",
            )),
            t if !COLUMN_TYPES.contains(&t) => errs.push(FieldError::invalid(
                format!("{at}.type"),
                t,
                "must be one of boolean,date,integer,number,string",
            )),
            _ => {}
        }
        let format = text(column, "/format");
        if !format.is_empty() && !COLUMN_FORMATS.contains(&format) {
            errs.push(FieldError::invalid(
                format!("{at}.format"),
                format,
                "must be one of byte,date,date-time,double,float,int32,int64,password",
            ));
        }
        match text(column, "/jsonPath") {
            "" => errs.push(FieldError::required(format!("{at}.JSONPath"), "")),
            p if !p.starts_with('.') => errs.push(FieldError::invalid(
                format!("{at}.JSONPath"),
                p,
                "must be a simple json path starting with .",
            )),
            _ => {}
        }
    }
    errs
}

fn selectable_fields(version: &Value, fields: &[Value], path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let parsed = version
        .pointer("/schema/openAPIV3Schema")
        .and_then(|p| Schema::parse(p).ok());
    let Some(parsed) = parsed else {
        errs.push(FieldError::invalid(
            path,
            "",
            "selectableFields may only be set when version.schema.openAPIV3Schema is not included",
        ));
        return errs;
    };
    let mut seen: Vec<&str> = Vec::new();
    for (i, field) in fields.iter().enumerate() {
        let at = format!("{path}[{i}].jsonPath");
        let json_path = text(field, "/jsonPath");
        if json_path.is_empty() {
            errs.push(FieldError::required(at, ""));
            continue;
        }
        if !simple_path(json_path) {
            errs.push(FieldError::invalid(
                at,
                json_path,
                "is an invalid path: must be a simple json path starting with .",
            ));
            continue;
        }
        let keys: Vec<&str> = json_path[1..].split('.').collect();
        if keys.first() == Some(&"metadata") {
            errs.push(FieldError::invalid(
                at,
                json_path,
                "must not point to fields in metadata",
            ));
            continue;
        }
        let scalar = parsed
            .at_path(&keys)
            .is_some_and(|node| matches!(node.type_.as_str(), "string" | "boolean" | "integer"));
        if !scalar {
            errs.push(FieldError::invalid(
                at,
                json_path,
                "must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.",
            ));
            continue;
        }
        if seen.contains(&json_path) {
            errs.push(FieldError::duplicate(at, json_path));
        }
        seen.push(json_path);
    }
    if seen.len() > MAX_SELECTABLE_FIELDS {
        errs.push(FieldError::too_many(
            path,
            seen.len(),
            MAX_SELECTABLE_FIELDS,
        ));
    }
    errs
}

fn conversion(crd: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(conversion) = crd.pointer("/spec/conversion") else {
        return errs;
    };
    let webhook = conversion.get("webhook");
    let client_config = webhook.and_then(|w| w.get("clientConfig"));
    let review_versions = webhook.and_then(|w| w.get("conversionReviewVersions"));
    match text(conversion, "/strategy") {
        "" => errs.push(FieldError::required("spec.conversion.strategy", "")),
        "None" => {
            if client_config.is_some() {
                errs.push(FieldError::forbidden(
                    "spec.conversion.webhookClientConfig",
                    "should not be set when strategy is not set to Webhook",
                ));
            }
            if review_versions.is_some() {
                errs.push(FieldError::forbidden(
                    "spec.conversion.conversionReviewVersions",
                    "should not be set when strategy is not set to Webhook",
                ));
            }
        }
        "Webhook" => {
            match client_config {
                None => errs.push(FieldError::required(
                    "spec.conversion.webhookClientConfig",
                    "required when strategy is set to Webhook",
                )),
                Some(config) => {
                    if config.get("url").is_some() == config.get("service").is_some() {
                        errs.push(FieldError::required(
                            "spec.conversion.webhookClientConfig",
                            "exactly one of url or service is required",
                        ));
                    }
                }
            }
            let versions = review_versions
                .map(crate::object::strings)
                .unwrap_or_default();
            if versions.is_empty() {
                errs.push(FieldError::required(
                    "spec.conversion.conversionReviewVersions",
                    "",
                ));
            } else if !versions.iter().any(|v| v == "v1" || v == "v1beta1") {
                errs.push(FieldError::invalid_rendered(
                    "spec.conversion.conversionReviewVersions",
                    &crate::validate::meta::go_string_slice("[]string", review_versions),
                    "must include at least one of v1, v1beta1",
                ));
            }
        }
        other => errs.push(FieldError::not_supported(
            "spec.conversion.strategy",
            other,
            &["None", "Webhook"],
        )),
    }
    errs
}

fn immutables(crd: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let established = is_true(old, "Established");
    for (pointer, field, always) in [
        ("/spec/group", "spec.group", true),
        ("/spec/names/plural", "spec.names.plural", true),
        ("/spec/scope", "spec.scope", false),
        ("/spec/names/kind", "spec.names.kind", false),
    ] {
        if (always || established) && text(crd, pointer) != text(old, pointer) {
            errs.push(FieldError::immutable(
                field,
                &field_value(&Value::String(text(crd, pointer).into())),
            ));
        }
    }
    errs
}

fn stored_versions(crd: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let stored_value = crd.pointer("/status/storedVersions");
    let stored = stored_value.map(crate::object::strings).unwrap_or_default();
    let rendered = if stored.is_empty() {
        "[]string(nil)".to_string()
    } else {
        crate::validate::meta::go_string_slice("[]string", stored_value)
    };
    if stored.is_empty() {
        errs.push(FieldError::invalid_rendered(
            "status.storedVersions",
            &rendered,
            "must have at least one stored version",
        ));
        return errs;
    }
    let versions = versions(crd);
    let storage = versions
        .iter()
        .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .map(|v| text(v, "/name"));
    if let Some(storage) = storage.filter(|s| !stored.iter().any(|v| v == s)) {
        errs.push(FieldError::invalid_rendered(
            "status.storedVersions",
            &rendered,
            &format!("must have the storage version {storage}"),
        ));
    }
    for (i, version) in stored.iter().enumerate() {
        if !versions.iter().any(|v| text(v, "/name") == version) {
            errs.push(FieldError::invalid(
                format!("status.storedVersions[{i}]"),
                version,
                &format!("missing from spec.versions; {version} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in {version} and removes {version} from status.storedVersions"),
            ));
        }
    }
    errs
}

#[cfg(test)]
#[path = "validation_tests.rs"]
mod tests;
