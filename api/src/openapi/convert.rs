//! Turns the generated (draft 2020-12) definitions into Swagger 2.0 or
//! OpenAPI 3.0 schemas, adding the Kubernetes extensions clients read.

use serde_json::{Map, Value};

use super::definitions::RAW_REF_PREFIX;
use crate::patch::patch_meta::field_patch_meta;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flavor {
    /// Swagger 2.0, `#/definitions/...`.
    V2,
    /// OpenAPI 3.0, `#/components/schemas/...`.
    V3,
}

impl Flavor {
    pub(crate) fn ref_prefix(self) -> &'static str {
        match self {
            Flavor::V2 => "#/definitions/",
            Flavor::V3 => "#/components/schemas/",
        }
    }

    pub(crate) fn reference(self, definition: &str) -> Value {
        let mut map = Map::new();
        map.insert(
            "$ref".into(),
            Value::String(format!("{}{definition}", self.ref_prefix())),
        );
        Value::Object(map)
    }
}

/// Group, version and kind as the `x-kubernetes-group-version-kind`
/// extension spells them. Keys are in Go's (sorted) order so the
/// documents look like upstream's.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Gvk {
    pub group: String,
    pub version: String,
    pub kind: String,
}

impl Gvk {
    pub(crate) fn to_json(&self) -> Value {
        let mut map = Map::new();
        map.insert("group".into(), Value::String(self.group.clone()));
        map.insert("kind".into(), Value::String(self.kind.clone()));
        map.insert("version".into(), Value::String(self.version.clone()));
        Value::Object(map)
    }
}

/// One definition in `flavor`, with strategic-merge extensions on its fields
/// and, for kinds, the list of GVKs it is served as (kubectl finds a kind's
/// schema by that list, not by name).
pub(crate) fn convert_definition(name: &str, raw: &Value, flavor: Flavor, gvks: &[Gvk]) -> Value {
    // Extensions go onto the raw field first so that, in v3, a field that is
    // only a `$ref` gets wrapped in `allOf` rather than carrying `$ref`
    // siblings that OpenAPI 3.0 says to ignore.
    let mut raw = raw.clone();
    if let Some(Value::Object(properties)) = raw.get_mut("properties") {
        for (field, schema) in properties.iter_mut() {
            let (Some(meta), Value::Object(schema)) = (field_patch_meta(name, field), schema)
            else {
                continue;
            };
            schema.insert(
                "x-kubernetes-patch-strategy".into(),
                Value::String(meta.strategy.to_owned()),
            );
            if let Some(key) = meta.merge_key {
                schema.insert(
                    "x-kubernetes-patch-merge-key".into(),
                    Value::String(key.to_owned()),
                );
            }
        }
    }
    let mut converted = convert_schema(&raw, flavor);
    if let (Value::Object(map), false) = (&mut converted, gvks.is_empty()) {
        map.insert(
            "x-kubernetes-group-version-kind".into(),
            Value::Array(gvks.iter().map(Gvk::to_json).collect()),
        );
    }
    converted
}

fn convert_schema(schema: &Value, flavor: Flavor) -> Value {
    let Value::Object(map) = schema else {
        return schema.clone();
    };
    // The `$ref` is kept aside so that it can either lead the converted
    // schema or, in v3 with siblings, move into an `allOf`.
    let mut reference = None;
    let mut out = Map::with_capacity(map.len());
    for (key, value) in map {
        let converted = match key.as_str() {
            "$ref" => {
                reference = Some(
                    match value.as_str().and_then(|r| r.strip_prefix(RAW_REF_PREFIX)) {
                        Some(name) => Value::String(format!("{}{name}", flavor.ref_prefix())),
                        None => value.clone(),
                    },
                );
                continue;
            }
            "properties" => match value {
                Value::Object(properties) => Value::Object(
                    properties
                        .iter()
                        .map(|(name, field)| (name.clone(), convert_schema(field, flavor)))
                        .collect(),
                ),
                other => other.clone(),
            },
            "items" | "additionalProperties" | "not" => match value {
                Value::Array(items) => {
                    Value::Array(items.iter().map(|s| convert_schema(s, flavor)).collect())
                }
                other => convert_schema(other, flavor),
            },
            // Swagger 2.0 has no union keywords; upstream publishes these
            // unions (JSONSchemaPropsOrArray and friends) with a description
            // only, so they are dropped rather than rewritten.
            "oneOf" | "anyOf" if flavor == Flavor::V2 => continue,
            "allOf" | "oneOf" | "anyOf" => match value {
                Value::Array(items) => {
                    Value::Array(items.iter().map(|s| convert_schema(s, flavor)).collect())
                }
                other => other.clone(),
            },
            _ => value.clone(),
        };
        out.insert(key.clone(), converted);
    }
    let Some(reference) = reference else {
        return Value::Object(out);
    };
    let mut only_ref = Map::new();
    only_ref.insert("$ref".into(), reference);
    if out.is_empty() {
        return Value::Object(only_ref);
    }
    let mut result = Map::with_capacity(out.len() + 1);
    match flavor {
        Flavor::V2 => result.extend(only_ref),
        Flavor::V3 => {
            result.insert("allOf".into(), Value::Array(vec![Value::Object(only_ref)]));
        }
    }
    result.extend(out);
    Value::Object(result)
}
