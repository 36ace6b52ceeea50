//! Unknown-field detection against the built-in schemas, reporting paths the
//! way kube-apiserver's strict JSON decoding does.

use serde_json::{Map, Value};

use super::definitions::{self, Definitions, RAW_REF_PREFIX};

/// Upstream's decoder stops collecting strict errors at 100; a client that
/// sends more typos than that learns nothing from a longer list.
const MAX_REPORTED: usize = 100;

/// Guards the recursion against hand-built values nested deeper than any
/// parsed request can be (serde_json's parser stops at 128 levels).
const MAX_DEPTH: usize = 512;

/// Unknown fields in `object` (Kubernetes JSON of kind `definition`), as JSON
/// field paths the way upstream's strict decoding reports them: struct fields
/// and map keys joined with `.`, list elements as `[index]`
/// (`spec.replica`, `spec.template.spec.containers[0].imagee`).
///
/// A definition without a built-in schema (a custom resource) yields no
/// findings: its schema lives elsewhere.
pub fn unknown_fields(definition: &str, object: &Value) -> Vec<String> {
    strip_unknown_fields(definition, &mut object.clone())
}

/// Removes unknown fields from `object` and reports their paths (at most
/// 100 reported; all are removed), as decoding into upstream's typed structs
/// drops them: a built-in object never stores a field its schema lacks.
pub fn strip_unknown_fields(definition: &str, object: &mut Value) -> Vec<String> {
    let definitions = definitions::builtin();
    let Some(schema) = definitions.get(definition) else {
        return Vec::new();
    };
    let mut walker = Walker {
        definitions,
        path: String::new(),
        found: Vec::new(),
    };
    walker.walk(schema, object, 0);
    walker.found
}

struct Walker {
    definitions: &'static Definitions,
    path: String,
    found: Vec<String>,
}

/// What the walk needs of one schema: resolved once per thread and schema,
/// since every write of a kind walks the same schemas, and resolving one
/// reads up to eight keys of its JSON.
#[derive(Clone, Copy)]
struct Shape {
    properties: Option<&'static Map<String, Value>>,
    additional: Option<&'static Value>,
    items: Option<&'static Value>,
    /// Go keeps the value verbatim or decodes it itself (`is_opaque`).
    opaque: bool,
}

impl Walker {
    fn walk(&mut self, schema: &'static Value, value: &mut Value, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        let Some(shape) = self.shape(schema) else {
            return;
        };
        if shape.opaque {
            return;
        }
        match value {
            Value::Object(fields) => self.walk_object(shape, fields, depth),
            Value::Array(elements) => {
                let Some(items) = shape.items else {
                    return;
                };
                for (index, element) in elements.iter_mut().enumerate() {
                    let mark = self.path.len();
                    self.path.push('[');
                    self.path.push_str(&index.to_string());
                    self.path.push(']');
                    self.walk(items, element, depth + 1);
                    self.path.truncate(mark);
                }
            }
            _ => {}
        }
    }

    fn walk_object(&mut self, shape: Shape, fields: &mut Map<String, Value>, depth: usize) {
        let (properties, additional) = (shape.properties, shape.additional);
        // An object schema with neither is free-form (FieldsV1, RawExtension,
        // apiextensions JSON): Go decodes it without knowing its fields.
        if properties.is_none() && additional.is_none() {
            return;
        }
        let mut unknown = Vec::new();
        for (key, field) in fields.iter_mut() {
            let mark = self.path.len();
            if !self.path.is_empty() {
                self.path.push('.');
            }
            self.path.push_str(key);
            match (properties.and_then(|p| p.get(key)), additional) {
                (Some(field_schema), _) | (None, Some(field_schema)) => {
                    self.walk(field_schema, field, depth + 1);
                }
                (None, None) => {
                    unknown.push(key.clone());
                    if self.found.len() < MAX_REPORTED {
                        self.found.push(self.path.clone());
                    }
                }
            }
            self.path.truncate(mark);
        }
        for key in unknown {
            fields.shift_remove(&key);
        }
    }

    /// The shape of `schema`, kept per thread (see `openapi::memo`).
    fn shape(&self, schema: &'static Value) -> Option<Shape> {
        use super::memo::{address, get_or_derive, Memo};
        thread_local! {
            static SHAPES: Memo<usize, Option<Shape>> = Default::default();
        }
        get_or_derive(&SHAPES, address(schema), || {
            self.resolve(schema).map(|map| Shape {
                properties: map.get("properties").and_then(Value::as_object),
                additional: map.get("additionalProperties").filter(|a| a.is_object()),
                items: map.get("items").filter(|i| i.is_object()),
                opaque: is_opaque(map),
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

/// Schemas whose values Go decodes with a custom unmarshaller or keeps
/// verbatim, so no field inside them can be unknown.
fn is_opaque(schema: &Map<String, Value>) -> bool {
    let flag = |name: &str| schema.get(name).and_then(Value::as_bool).unwrap_or(false);
    flag("x-kubernetes-preserve-unknown-fields")
        || flag("x-kubernetes-int-or-string")
        || schema.contains_key("oneOf")
        || schema.contains_key("anyOf")
}

#[cfg(test)]
mod strip_tests {
    use super::*;
    use serde_json::json;

    /// The memo is invisible: every schema of every built-in definition and
    /// of its properties has, the first time and from the memo, the shape
    /// resolving it gives.
    #[test]
    fn memoized_shapes_are_the_resolved_ones() {
        let definitions = definitions::builtin();
        let walker = Walker {
            definitions,
            path: String::new(),
            found: Vec::new(),
        };
        let same = |a: Option<&'static Value>, b: Option<&'static Value>| match (a, b) {
            (Some(a), Some(b)) => std::ptr::eq(a, b),
            (None, None) => true,
            _ => false,
        };
        let mut schemas = 0;
        for root in definitions.values() {
            let properties = root.get("properties").and_then(Value::as_object);
            for schema in
                std::iter::once(root).chain(properties.into_iter().flat_map(|p| p.values()))
            {
                let resolved = walker.resolve(schema);
                for _ in 0..2 {
                    let shape = walker.shape(schema);
                    assert_eq!(shape.is_some(), resolved.is_some());
                    let (Some(shape), Some(map)) = (shape, resolved) else {
                        continue;
                    };
                    assert!(std::ptr::eq(
                        shape
                            .properties
                            .map_or(std::ptr::null(), std::ptr::from_ref),
                        map.get("properties")
                            .and_then(Value::as_object)
                            .map_or(std::ptr::null(), std::ptr::from_ref)
                    ));
                    assert!(same(
                        shape.additional,
                        map.get("additionalProperties").filter(|a| a.is_object())
                    ));
                    assert!(same(
                        shape.items,
                        map.get("items").filter(|i| i.is_object())
                    ));
                    assert_eq!(shape.opaque, is_opaque(map));
                }
                schemas += 1;
            }
        }
        assert!(schemas > 1000, "only {schemas} schemas checked");
    }

    #[test]
    fn strip_removes_what_it_reports_and_keeps_known_fields() {
        let mut deployment = json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"any-key": "kept"}},
            "spec": {
                "replica": 2,
                "replicas": 3,
                "template": {"spec": {"containers": [{"name": "c", "image": "i", "imagee": "typo"}]}}
            }
        });
        let found = strip_unknown_fields("io.k8s.api.apps.v1.Deployment", &mut deployment);
        assert_eq!(
            found,
            vec!["spec.replica", "spec.template.spec.containers[0].imagee"]
        );
        assert!(deployment["spec"].get("replica").is_none());
        assert!(deployment["spec"]["template"]["spec"]["containers"][0]
            .get("imagee")
            .is_none());
        assert_eq!(deployment["spec"]["replicas"], 3);
        assert_eq!(deployment["metadata"]["labels"]["any-key"], "kept");
    }
}
