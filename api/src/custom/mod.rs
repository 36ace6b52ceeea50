//! Custom resources: the [`Kind`] a CustomResourceDefinition version
//! describes, built when the definition is served. Its objects are pruned,
//! defaulted and validated against the version's structural schema, print
//! the definition's columns, and scale through its scale paths.

pub mod budget;
pub mod cel_values;
pub mod conversion;
pub mod cost;
pub mod field_path;
pub mod formats;
pub mod rules;
pub mod schema;
pub mod walk;

use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde_json::{json, Map, Value};

use crate::conversion::ConversionError;
use crate::error::FieldError;
use crate::kinds::{Kind, ScaleParts};
use crate::openapi::TypeMismatch;
use crate::printers::{Cell, TableColumn};
use crate::registry::{Origin, ResourceDef};
use schema::Schema;

pub use schema::SchemaError;

use crate::openapi::definitions::OBJECT_META;

/// Upstream's description of the Name column (ObjectMeta.name's doc).
const NAME_DESCRIPTION: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";

/// Upstream's description of the Age column a definition without printer
/// columns gets (ObjectMeta.creationTimestamp's doc).
const CREATED_DESCRIPTION: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists.";

/// One `additionalPrinterColumns` entry, its JSONPath parsed once.
struct PrinterColumn {
    column: TableColumn,
    path: Option<serde_json_path::JsonPath>,
}

/// The scale subresource's three JSON paths, as object keys.
#[derive(Debug, Clone, Default)]
struct ScalePaths {
    spec_replicas: Vec<String>,
    status_replicas: Vec<String>,
    label_selector: Option<Vec<String>>,
    /// The paths as the definition wrote them (`.spec.replicas`): upstream
    /// names the field so in errors.
    spec_replicas_path: String,
    status_replicas_path: String,
    label_selector_path: String,
}

/// What one served version of a CustomResourceDefinition does.
pub struct CustomResource {
    schema: Schema,
    /// The version's `openAPIV3Schema` as written, for the OpenAPI documents.
    published_schema: Option<Arc<Value>>,
    apply_schema: Option<crate::apply::CustomSchema>,
    /// Its `x-kubernetes-validations`, compiled.
    rules: Option<rules::Rules>,
    /// The definition is being deleted: no creates.
    terminating: bool,
    /// Whether the schema declares any default (then reads default too).
    has_defaults: bool,
    status_subresource: bool,
    scale: Option<ScalePaths>,
    columns: Vec<PrinterColumn>,
    conversion: conversion::Strategy,
}

/// Why a definition cannot be served (its validation makes this rare: a
/// stored definition from elsewhere, or a schema this server cannot take).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DefinitionError {
    #[error("the definition has no {0}")]
    Missing(&'static str),
    #[error("version {version}: {error}")]
    Schema { version: String, error: SchemaError },
    #[error("version {version}: printer column {column}: {message}")]
    Column {
        version: String,
        column: String,
        message: String,
    },
}

fn path_keys(json_path: &str) -> Vec<String> {
    json_path
        .trim_start_matches('.')
        .split('.')
        .filter(|k| !k.is_empty())
        .map(str::to_string)
        .collect()
}

/// The OpenAPI definition name upstream gives a custom kind: the group
/// reversed, then version and kind (`com.example.v1.Widget`).
pub fn definition_name(group: &str, version: &str, kind: &str) -> String {
    let reversed: Vec<&str> = group.split('.').rev().collect();
    format!("{}.{version}.{kind}", reversed.join("."))
}

/// The resources a CustomResourceDefinition serves: one per served
/// version, under the names it has been granted (`status.acceptedNames`),
/// stored at `<group>/<plural>` in its storage version.
pub fn resources_for(
    crd: &Value,
    transport: Option<Arc<dyn conversion::ConversionTransport>>,
) -> Result<Vec<ResourceDef>, DefinitionError> {
    let spec = crd.get("spec").ok_or(DefinitionError::Missing("spec"))?;
    let group = spec
        .get("group")
        .and_then(Value::as_str)
        .ok_or(DefinitionError::Missing("spec.group"))?;
    let names = crd
        .pointer("/status/acceptedNames")
        .filter(|n| {
            n.get("plural")
                .and_then(Value::as_str)
                .is_some_and(|p| !p.is_empty())
        })
        .ok_or(DefinitionError::Missing("accepted names"))?;
    let name = |key: &str| names.get(key).and_then(Value::as_str).unwrap_or_default();
    let plural = name("plural");
    let kind = name("kind");
    let singular = match name("singular") {
        "" => kind.to_lowercase(),
        s => s.to_string(),
    };
    let namespaced = spec.get("scope").and_then(Value::as_str) != Some("Cluster");
    let versions = spec
        .get("versions")
        .and_then(Value::as_array)
        .ok_or(DefinitionError::Missing("spec.versions"))?;
    let storage_version = versions
        .iter()
        .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .and_then(|v| v.get("name").and_then(Value::as_str))
        .ok_or(DefinitionError::Missing("storage version"))?;
    let conversion = conversion::Strategy::of(spec.get("conversion"), transport);
    let terminating = crate::kinds::apiextensions::is_true(crd, "Terminating");
    let short_names = crate::object::strings_at(names, "shortNames");
    let categories = crate::object::strings_at(names, "categories");
    let mut resources = Vec::new();
    for version in versions
        .iter()
        .filter(|v| v.get("served").and_then(Value::as_bool) == Some(true))
    {
        let version_name = version
            .get("name")
            .and_then(Value::as_str)
            .ok_or(DefinitionError::Missing("version name"))?;
        let raw_schema = version.pointer("/schema/openAPIV3Schema");
        let schema = match raw_schema {
            Some(props) => Schema::parse(props).map_err(|error| DefinitionError::Schema {
                version: version_name.to_string(),
                error,
            })?,
            None => Schema {
                preserve_unknown_fields: true,
                ..Schema::default()
            },
        };
        let subresources = version.get("subresources");
        let status_subresource = subresources.and_then(|s| s.get("status")).is_some();
        let scale = subresources.and_then(|s| s.get("scale")).map(|scale| {
            let raw = |key: &str| {
                scale
                    .get(key)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            let path = |key: &str| scale.get(key).and_then(Value::as_str).map(path_keys);
            ScalePaths {
                spec_replicas: path("specReplicasPath").unwrap_or_default(),
                status_replicas: path("statusReplicasPath").unwrap_or_default(),
                label_selector: path("labelSelectorPath"),
                spec_replicas_path: raw("specReplicasPath"),
                status_replicas_path: raw("statusReplicasPath"),
                label_selector_path: raw("labelSelectorPath"),
            }
        });
        let columns = printer_columns(version, version_name)?;
        let mut served_subresources = Vec::new();
        if status_subresource {
            served_subresources.push("status");
        }
        if scale.is_some() {
            served_subresources.push("scale");
        }
        let selectable: Vec<String> = version
            .get("selectableFields")
            .and_then(Value::as_array)
            .map(|fields| {
                fields
                    .iter()
                    .filter_map(|f| f.get("jsonPath").and_then(Value::as_str))
                    .map(|p| p.trim_start_matches('.').to_string())
                    .collect()
            })
            .unwrap_or_default();
        let kind_impl = CustomResource {
            published_schema: raw_schema.cloned().map(Arc::new),
            apply_schema: raw_schema
                .map(|raw| crate::apply::CustomSchema::new(raw, status_subresource)),
            rules: raw_schema.and_then(|raw| rules::Rules::compile(raw, &schema)),
            schema,
            terminating,
            has_defaults: raw_schema.is_some_and(declares_defaults),
            status_subresource,
            scale,
            columns,
            conversion: conversion.clone(),
        };
        let mut def = ResourceDef::new(
            group,
            version_name,
            plural,
            kind,
            namespaced,
            Arc::new(kind_impl),
        )
        .subresources(&served_subresources)
        .storage_segment(&format!("{group}/{plural}"))
        .stored_as(group, storage_version, kind)
        .definition(&definition_name(group, version_name, kind));
        def.singular = singular.clone();
        def.short_names = short_names.clone();
        def.categories = categories.clone();
        def.selectable_fields = selectable;
        def.origin = Origin::Custom;
        resources.push(def);
    }
    Ok(resources)
}

fn printer_columns(
    version: &Value,
    version_name: &str,
) -> Result<Vec<PrinterColumn>, DefinitionError> {
    let declared = version
        .get("additionalPrinterColumns")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if declared.is_empty() {
        return Ok(vec![PrinterColumn {
            column: TableColumn {
                name: "Age".into(),
                type_: "date".into(),
                format: "".into(),
                description: CREATED_DESCRIPTION.into(),
                priority: 0,
            },
            path: serde_json_path::JsonPath::parse("$.metadata.creationTimestamp").ok(),
        }]);
    }
    declared
        .iter()
        .map(|column| {
            let text = |key: &str| {
                column
                    .get(key)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            let name = text("name");
            let json_path = text("jsonPath");
            let path = serde_json_path::JsonPath::parse(&format!("${json_path}")).map_err(|e| {
                DefinitionError::Column {
                    version: version_name.to_string(),
                    column: name.clone(),
                    message: e.to_string(),
                }
            })?;
            Ok(PrinterColumn {
                column: TableColumn {
                    name: name.into(),
                    type_: text("type").into(),
                    format: text("format").into(),
                    description: text("description").into(),
                    priority: column.get("priority").and_then(Value::as_i64).unwrap_or(0) as i32,
                },
                path: Some(path),
            })
        })
        .collect()
}

fn declares_defaults(schema: &Value) -> bool {
    match schema {
        Value::Object(map) => map.contains_key("default") || map.values().any(declares_defaults),
        Value::Array(items) => items.iter().any(declares_defaults),
        _ => false,
    }
}

/// Sorts every object's keys: a custom resource is stored as Go encodes
/// an unstructured map.
fn sort_keys(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.sort_keys();
            map.values_mut().for_each(sort_keys);
        }
        Value::Array(items) => items.iter_mut().for_each(sort_keys),
        _ => {}
    }
}

fn at<'a>(object: &'a Value, keys: &[String]) -> Option<&'a Value> {
    keys.iter().try_fold(object, |v, k| v.get(k))
}

/// Whether two objects differ outside their metadata (and status, when a
/// subresource owns it): what generation counts. Compared in place, since
/// every update asks.
fn differs_outside_meta(object: &Value, old: &Value, without_status: bool) -> bool {
    let counted = |key: &str| key != "metadata" && !(without_status && key == "status");
    let empty = Map::new();
    let (new, was) = (
        object.as_object().unwrap_or(&empty),
        old.as_object().unwrap_or(&empty),
    );
    new.iter().filter(|(k, _)| counted(k)).count() != was.iter().filter(|(k, _)| counted(k)).count()
        || new
            .iter()
            .filter(|(k, _)| counted(k))
            .any(|(k, v)| was.get(k) != Some(v))
}

impl CustomResource {
    /// The OpenAPI checks, the scale paths' and then the CEL rules'.
    fn schema_errors(&self, object: &Value, old: Option<&Value>) -> Vec<FieldError> {
        let mut errors = walk::validate(&self.schema, object);
        errors.extend(self.scale_errors(object));
        if let Some(rules) = &self.rules {
            let verdict = rules.check(&self.schema, object, old, &errors);
            errors.extend(verdict);
        }
        errors
    }

    /// Upstream's ValidateScaleSpec and ValidateScaleStatus.
    fn scale_errors(&self, object: &Value) -> Vec<FieldError> {
        let Some(scale) = &self.scale else {
            return Vec::new();
        };
        let mut errors = Vec::new();
        for (keys, raw) in [
            (&scale.spec_replicas, &scale.spec_replicas_path),
            (&scale.status_replicas, &scale.status_replicas_path),
        ] {
            let field = raw.clone();
            match at(object, keys) {
                None | Some(Value::Null) => {}
                Some(Value::Number(n)) if n.as_i64().is_some() => {
                    let replicas = n.as_i64().unwrap_or_default();
                    if replicas < 0 {
                        errors.push(FieldError::invalid_rendered(
                            field,
                            &replicas.to_string(),
                            "should be a non-negative integer",
                        ));
                    } else if replicas > i64::from(i32::MAX) {
                        errors.push(FieldError::invalid_rendered(
                            field,
                            &replicas.to_string(),
                            &format!("should be less than or equal to {}", i32::MAX),
                        ));
                    }
                }
                Some(other) => {
                    errors.push(FieldError::invalid_rendered(
                        field,
                        "0",
                        &format!(
                            "{raw} accessor error: {} is of the type {}, expected int64",
                            crate::openapi::go_values::go_format(other),
                            go_type_name(other)
                        ),
                    ));
                }
            }
        }
        if let Some(keys) = &scale.label_selector {
            match at(object, keys) {
                None | Some(Value::Null) | Some(Value::String(_)) => {}
                Some(other) => errors.push(FieldError::invalid_rendered(
                    scale.label_selector_path.clone(),
                    "\"\"",
                    &format!(
                        "{} accessor error: {} is of the type {}, expected string",
                        scale.label_selector_path,
                        crate::openapi::go_values::go_format(other),
                        go_type_name(other)
                    ),
                )),
            }
        }
        errors
    }

    /// Validation ratcheting: on update, an error at a value the update
    /// left as it was does not fail the write (upstream's
    /// CRDValidationRatcheting, on by default).
    fn ratchet(errors: Vec<FieldError>, object: &Value, old: &Value) -> Vec<FieldError> {
        errors
            .into_iter()
            .filter(|e| {
                let pointer = field_pointer(&e.field, e.reason == "FieldValueRequired");
                object.pointer(&pointer) != old.pointer(&pointer)
            })
            .collect()
    }
}

/// The Go type unstructured JSON decodes a value into, as accessor errors name it.
fn go_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_i64() => "int64",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// A table cell of a printer column that is not a string: upstream's
/// cellForJSONValue (a value of another type is no value; dates print as ages).
fn typed_cell(type_: &str, value: &Value) -> Cell {
    match (type_, value) {
        ("integer", Value::Number(n)) => n
            .as_i64()
            .or_else(|| n.as_f64().map(|f| f as i64))
            .map_or(Value::Null, Value::from)
            .into(),
        ("number", Value::Number(n)) => n.as_f64().map_or(Value::Null, Value::from).into(),
        ("boolean", Value::Bool(b)) => Value::Bool(*b).into(),
        ("date", Value::String(s)) => match DateTime::parse_from_rfc3339(s) {
            Ok(time) => Cell::since(Some(time.with_timezone(&Utc))),
            Err(_) => "<invalid>".into(),
        },
        _ => Value::Null.into(),
    }
}

/// A field path (`spec.items[2].name`) as a JSON pointer; for a missing
/// required field, the object that lacks it.
fn field_pointer(field: &str, parent: bool) -> String {
    let mut pointer = String::new();
    let mut parts: Vec<String> = Vec::new();
    for segment in field.split('.') {
        let mut rest = segment;
        if let Some(open) = rest.find('[') {
            parts.push(rest[..open].to_string());
            rest = &rest[open..];
            while let Some(close) = rest.find(']') {
                parts.push(rest[1..close].to_string());
                rest = &rest[close + 1..];
            }
        } else {
            parts.push(rest.to_string());
        }
    }
    if parent {
        parts.pop();
    }
    for part in parts.iter().filter(|p| !p.is_empty()) {
        pointer.push('/');
        pointer.push_str(&part.replace('~', "~0").replace('/', "~1"));
    }
    pointer
}

impl Kind for CustomResource {
    fn tracks_generation(&self) -> bool {
        true
    }

    fn standard_finalizers_only(&self) -> bool {
        false
    }

    fn defaults_on_read(&self) -> bool {
        self.has_defaults
    }

    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        let mut value = Value::Object(std::mem::take(object));
        walk::apply_defaults(&self.schema, &mut value);
        if let Value::Object(map) = value {
            *object = map;
        }
    }

    fn decode(&self, _definition: &str, object: &mut Value) -> Result<Vec<String>, TypeMismatch> {
        let mut unknown = Vec::new();
        if let Some(metadata) = object.get_mut("metadata") {
            unknown.extend(
                crate::openapi::decode_typed(OBJECT_META, metadata)?
                    .into_iter()
                    .map(|field| format!("metadata.{field}")),
            );
        }
        unknown.extend(walk::prune(&self.schema, object));
        Ok(unknown)
    }

    /// With a status subresource, a new object's status is the
    /// controllers' to write: a create drops it.
    fn prepare_for_create(&self, object: &mut Value) {
        if self.status_subresource {
            if let Some(map) = object.as_object_mut() {
                map.remove("status");
            }
        }
    }

    fn validate_subresource_update(
        &self,
        subresource: &str,
        object: &Value,
        old: &Value,
    ) -> Option<Vec<FieldError>> {
        (subresource == "status").then(|| {
            let mut errors = walk::validate_status(&self.schema, object);
            errors.extend(self.scale_errors(object));
            if let Some(rules) = &self.rules {
                let verdict = rules.check(&self.schema, object, Some(old), &errors);
                errors.extend(verdict);
            }
            Self::ratchet(errors, object, old)
        })
    }

    fn put_in_order(&self, _definition: &str, object: &mut Value) {
        sort_keys(object);
    }

    fn spec_changed(&self, object: &Value, old: &Value) -> bool {
        differs_outside_meta(object, old, self.status_subresource)
    }

    fn validates_served_form(&self) -> bool {
        true
    }

    fn advertised_verbs(&self) -> Option<&'static [&'static str]> {
        // Upstream's discovery controller lists only these while a
        // definition terminates, though updates (finalizers) still work.
        self.terminating
            .then_some(&["delete", "deletecollection", "get", "list", "watch"][..])
    }

    fn refuses(&self, verb: &str) -> Option<String> {
        (self.terminating && verb == "create")
            .then(|| format!("{verb} not allowed while custom resource definition is terminating"))
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        self.schema_errors(object, None)
    }

    fn validate_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        Self::ratchet(self.schema_errors(object, Some(old)), object, old)
    }

    fn scale_of(&self, object: &Value) -> ScaleParts {
        let Some(scale) = &self.scale else {
            return ScaleParts {
                spec_replicas: None,
                status_replicas: None,
                selector: String::new(),
            };
        };
        ScaleParts {
            spec_replicas: at(object, &scale.spec_replicas).and_then(Value::as_i64),
            status_replicas: at(object, &scale.status_replicas).and_then(Value::as_i64),
            selector: scale
                .label_selector
                .as_ref()
                .and_then(|keys| at(object, keys))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
        }
    }

    fn scale_replicas_path(&self) -> String {
        self.scale
            .as_ref()
            .map(|s| s.spec_replicas_path.clone())
            .unwrap_or_default()
    }

    fn set_scale_replicas(&self, object: &mut Value, replicas: i64) {
        if let Some(scale) = &self.scale {
            let keys: Vec<&str> = scale.spec_replicas.iter().map(String::as_str).collect();
            crate::object::set_at(object, &keys, json!(replicas));
        }
    }

    fn openapi_schema(&self) -> Option<Arc<Value>> {
        self.published_schema.clone()
    }

    fn apply_schema(&self) -> Option<crate::apply::CustomSchema> {
        self.apply_schema
    }

    fn table_columns(&self) -> Vec<TableColumn> {
        let mut columns = vec![TableColumn {
            name: "Name".into(),
            type_: "string".into(),
            format: "name".into(),
            description: NAME_DESCRIPTION.into(),
            priority: 0,
        }];
        columns.extend(self.columns.iter().map(|c| c.column.clone()));
        columns
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        let mut cells = vec![Cell::from(crate::object::name(object))];
        for column in &self.columns {
            let found = column
                .path
                .as_ref()
                .and_then(|p| p.query(object).first().cloned());
            cells.push(match found {
                None => Value::Null.into(),
                Some(value) if column.column.type_ == "string" => match value {
                    Value::String(s) => s.clone().into(),
                    other => crate::openapi::go_values::go_format(&other).into(),
                },
                Some(value) => typed_cell(&column.column.type_, &value),
            });
        }
        cells
    }

    fn convert(&self, object: Value, target_api_version: &str) -> Result<Value, ConversionError> {
        self.conversion.convert(object, target_api_version)
    }
}

#[cfg(test)]
mod tests;
