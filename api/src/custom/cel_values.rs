//! What `self` and `oldSelf` are in a custom resource's CEL rules: the
//! JSON of a node typed by its structural schema, as upstream's
//! UnstructuredToVal types it. Object fields are reached by their escaped
//! names and a null field is absent; map keys stay as written; `number`s
//! are doubles; `date`, `date-time`, `duration` and `byte` strings are
//! timestamps, durations and bytes. The resource root, and every embedded
//! resource, shows only `apiVersion`, `kind` and `metadata.name` /
//! `metadata.generateName` of its type and object meta.

use std::collections::HashMap;
use std::sync::Arc;

use base64::Engine as _;
use kube_cel::cel::objects::{Key, Map};
use kube_cel::cel::Value as Cel;
use serde_json::Value;

use super::schema::Schema;

/// CEL's reserved words: a field named so is `__<word>__` in a rule.
pub const RESERVED: [&str; 21] = [
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// A field name as a CEL rule names it, or None when no rule can: upstream's
/// escaping (`__` → `__underscores__`, `.` `-` `/` → `__dot__` `__dash__`
/// `__slash__`, a reserved word → `__word__`).
pub fn escape(name: &str) -> Option<String> {
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    if RESERVED.contains(&name) {
        return Some(format!("__{name}__"));
    }
    let mut escaped = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(c) = rest.chars().next() {
        if rest.starts_with("__") {
            escaped.push_str("__underscores__");
            rest = &rest[2..];
            continue;
        }
        match c {
            '.' => escaped.push_str("__dot__"),
            '-' => escaped.push_str("__dash__"),
            '/' => escaped.push_str("__slash__"),
            c if c.is_ascii_alphanumeric() || c == '_' => escaped.push(c),
            _ => return None,
        }
        rest = &rest[c.len_utf8()..];
    }
    Some(escaped)
}

fn text(s: &str) -> Cel {
    Cel::String(Arc::new(s.to_string()))
}

fn map(entries: HashMap<Key, Cel>) -> Cel {
    Cel::Map(Map {
        map: Arc::new(entries),
    })
}

/// `value` as the rules of a resource root (or embedded resource) see it.
pub fn resource_to_cel(value: &Value, schema: &Schema) -> Cel {
    match value.as_object() {
        Some(object) => object_to_cel(object, schema, true),
        None => to_cel(value, schema),
    }
}

/// `value` typed by `schema`.
pub fn to_cel(value: &Value, schema: &Schema) -> Cel {
    match value {
        Value::Null => Cel::Null,
        Value::Bool(b) => Cel::Bool(*b),
        Value::Number(n) if schema.type_ == "number" => Cel::Float(n.as_f64().unwrap_or_default()),
        Value::Number(n) => number(n),
        Value::String(s) => string_to_cel(s, schema),
        Value::Array(items) => Cel::List(Arc::new(match &schema.items {
            Some(item_schema) => items.iter().map(|i| to_cel(i, item_schema)).collect(),
            None => items.iter().map(untyped).collect(),
        })),
        Value::Object(object) => {
            if schema.embedded_resource {
                object_to_cel(object, schema, true)
            } else if !schema.properties.is_empty() {
                object_to_cel(object, schema, false)
            } else if let Some(values) = &schema.additional_properties {
                map(object
                    .iter()
                    .map(|(k, v)| (Key::String(Arc::new(k.clone())), to_cel(v, values)))
                    .collect())
            } else {
                untyped(value)
            }
        }
    }
}

/// An object with properties: only its declared fields, by escaped name,
/// and not those that are null (upstream treats them as absent).
fn object_to_cel(object: &serde_json::Map<String, Value>, schema: &Schema, resource: bool) -> Cel {
    let mut entries = HashMap::with_capacity(object.len());
    for (name, value) in object {
        if value.is_null() {
            continue;
        }
        let converted = match (resource, name.as_str()) {
            (true, "apiVersion" | "kind") => match value.as_str() {
                Some(s) => text(s),
                None => continue,
            },
            (true, "metadata") => object_meta(value),
            _ => match schema.properties.get(name) {
                Some(field) => to_cel(value, field),
                None => continue,
            },
        };
        if let Some(key) = escape(name) {
            entries.insert(Key::String(Arc::new(key)), converted);
        }
    }
    map(entries)
}

/// The part of a resource's metadata rules see.
fn object_meta(value: &Value) -> Cel {
    let mut entries = HashMap::new();
    for name in ["name", "generateName"] {
        if let Some(s) = value.get(name).and_then(Value::as_str) {
            entries.insert(Key::String(Arc::new(name.to_string())), text(s));
        }
    }
    map(entries)
}

fn number(n: &serde_json::Number) -> Cel {
    if let Some(i) = n.as_i64() {
        Cel::Int(i)
    } else if let Some(u) = n.as_u64() {
        Cel::UInt(u)
    } else {
        Cel::Float(n.as_f64().unwrap_or_default())
    }
}

fn string_to_cel(s: &str, schema: &Schema) -> Cel {
    if schema.int_or_string {
        return text(s);
    }
    let typed = match schema.format.as_str() {
        "date-time" => chrono::DateTime::parse_from_rfc3339(s)
            .ok()
            .map(Cel::Timestamp),
        "date" => chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
            .ok()
            .map(|d| Cel::Timestamp(d.and_time(chrono::NaiveTime::MIN).and_utc().fixed_offset())),
        "duration" => kube_cel::cel::functions::time::duration(Arc::new(s.to_string())).ok(),
        "byte" => base64::engine::general_purpose::STANDARD
            .decode(s)
            .ok()
            .map(|b| Cel::Bytes(Arc::new(b))),
        _ => None,
    };
    typed.unwrap_or_else(|| text(s))
}

/// Values no schema types (kept by `x-kubernetes-preserve-unknown-fields`):
/// rules can compare them, and their keys are as written.
fn untyped(value: &Value) -> Cel {
    match value {
        Value::Null => Cel::Null,
        Value::Bool(b) => Cel::Bool(*b),
        Value::Number(n) => number(n),
        Value::String(s) => text(s),
        Value::Array(items) => Cel::List(Arc::new(items.iter().map(untyped).collect())),
        Value::Object(object) => map(object
            .iter()
            .map(|(k, v)| (Key::String(Arc::new(k.clone())), untyped(v)))
            .collect()),
    }
}

#[cfg(test)]
mod tests {
    use kube_cel::cel::{Context, Program};
    use serde_json::json;

    use super::*;

    #[test]
    fn field_names_are_escaped_as_upstream() {
        assert_eq!(escape("replicas").as_deref(), Some("replicas"));
        assert_eq!(escape("my_field").as_deref(), Some("my_field"));
        assert_eq!(escape("a__b").as_deref(), Some("a__underscores__b"));
        assert_eq!(
            escape("x-y.z/w").as_deref(),
            Some("x__dash__y__dot__z__slash__w")
        );
        assert_eq!(escape("namespace").as_deref(), Some("__namespace__"));
        assert_eq!(escape("1st"), None);
        assert_eq!(escape("a b"), None);
        assert_eq!(escape(""), None);
    }

    /// Evaluates `rule` with `self` bound to `value` typed by `schema`.
    fn eval(rule: &str, schema: Value, value: Value) -> Cel {
        let schema = Schema::parse(&schema).expect("schema");
        let mut context = Context::default();
        context.add_variable_from_value("self", resource_to_cel(&value, &schema));
        Program::compile(rule)
            .expect("rule")
            .execute(&context)
            .expect("evaluates")
    }

    #[test]
    fn values_are_typed_by_their_schema() {
        let schema = json!({"type": "object", "properties": {
            "ratio": {"type": "number"},
            "since": {"type": "string", "format": "date-time"},
            "day": {"type": "string", "format": "date"},
            "every": {"type": "string", "format": "duration"},
            "blob": {"type": "string", "format": "byte"},
            "port": {"x-kubernetes-int-or-string": true},
            "x-name": {"type": "string"},
            "namespace": {"type": "string"},
            "maybe": {"type": "string", "nullable": true},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        }});
        let value = json!({
            "apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "w1", "labels": {"a": "b"}},
            "ratio": 2, "since": "2024-01-02T03:04:05Z", "day": "2024-01-02",
            "every": "1h30m", "blob": "aGk=", "port": "http", "x-name": "n",
            "namespace": "ns", "maybe": null, "labels": {"app.kubernetes.io/name": "w"},
        });
        for (rule, expected) in [
            ("self.ratio == 2.0", true),
            ("self.since < timestamp('2024-01-03T00:00:00Z')", true),
            ("self.day == timestamp('2024-01-02T00:00:00Z')", true),
            ("self.every == duration('90m')", true),
            ("self.blob == b'hi'", true),
            ("self.port == 'http'", true),
            ("self.x__dash__name == 'n'", true),
            ("self.__namespace__ == 'ns'", true),
            ("has(self.maybe)", false),
            ("self.labels['app.kubernetes.io/name'] == 'w'", true),
            ("self.metadata.name == 'w1' && self.kind == 'Widget'", true),
            ("has(self.metadata.labels)", false),
        ] {
            assert_eq!(
                eval(rule, schema.clone(), value.clone()),
                Cel::Bool(expected),
                "{rule}"
            );
        }
    }
}
