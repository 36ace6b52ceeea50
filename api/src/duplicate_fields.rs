//! Duplicate keys in a JSON request body, noted while it is decoded.
//!
//! serde_json keeps the last of two equal keys without a word, as Go's
//! encoding/json does; kube-apiserver's strict decoder reports them for
//! fieldValidation=Strict (an error) and Warn (a warning). Decoding the body
//! into its `Value` here finds them in the same pass: the object being built
//! already knows its keys, so a second walk of the body (and a set of keys
//! per object) would only repeat the work.

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::map::Entry;
use serde_json::{Map, Number, Value};

/// The body decoded exactly as `serde_json::from_slice` decodes it (the last
/// of two equal keys wins, in the first one's place), with the dotted paths
/// (`spec.replicas`, `spec.containers[0].name`) of keys that occur twice in
/// their object, in document order.
pub fn decode_noting_duplicates(body: &[u8]) -> Result<(Value, Vec<String>), serde_json::Error> {
    let mut found = Vec::new();
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    let value = Decode {
        at: &PathNode::Root,
        found: &mut found,
    }
    .deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok((value, found))
}

/// Where the decoder is, as a chain back to the root: a path is only
/// rendered as text when a duplicate is found, so a clean body costs no path
/// strings.
enum PathNode<'a> {
    Root,
    Key(&'a PathNode<'a>, &'a str),
    Index(&'a PathNode<'a>, usize),
}

impl PathNode<'_> {
    fn render(&self) -> String {
        match self {
            PathNode::Root => String::new(),
            PathNode::Key(parent, key) => {
                let mut path = parent.render();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
                path
            }
            PathNode::Index(parent, index) => format!("{}[{index}]", parent.render()),
        }
    }
}

struct Decode<'a, 'f> {
    at: &'a PathNode<'a>,
    found: &'f mut Vec<String>,
}

impl<'de> DeserializeSeed<'de> for Decode<'_, '_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

/// Builds what serde_json's own `Value` visitor builds, value for value.
impl<'de> Visitor<'de> for Decode<'_, '_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            match object.entry(key) {
                Entry::Vacant(slot) => {
                    let value = map.next_value_seed(Decode {
                        at: &PathNode::Key(self.at, slot.key()),
                        found: self.found,
                    })?;
                    slot.insert(value);
                }
                Entry::Occupied(mut slot) => {
                    let at = PathNode::Key(self.at, slot.key());
                    self.found.push(at.render());
                    let value = map.next_value_seed(Decode {
                        at: &at,
                        found: self.found,
                    })?;
                    slot.insert(value);
                }
            }
        }
        Ok(Value::Object(object))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        loop {
            let item = seq.next_element_seed(Decode {
                at: &PathNode::Index(self.at, items.len()),
                found: self.found,
            })?;
            match item {
                Some(item) => items.push(item),
                None => return Ok(Value::Array(items)),
            }
        }
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }
    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }
    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }
    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        Ok(Number::from_f64(value).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_owned()))
    }
    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn duplicates(body: &[u8]) -> Vec<String> {
        match decode_noting_duplicates(body) {
            Ok((_, found)) => found,
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn finds_duplicates_with_their_paths() {
        let body = br#"{"kind":"Deployment","spec":{"replicas":1,"replicas":2,
            "template":{"spec":{"containers":[{"name":"a","name":"b"}]}}},"kind":"Deployment"}"#;
        assert_eq!(
            duplicates(body),
            [
                "spec.replicas",
                "spec.template.spec.containers[0].name",
                "kind"
            ]
        );
        assert!(duplicates(br#"{"a":{"b":1},"c":{"b":2}}"#).is_empty());
        // Escaped and plain spellings of one key are the same key.
        assert_eq!(duplicates(br#"{"a\u0062":1,"ab":2}"#), ["ab"]);
        assert_eq!(
            duplicates(br#"{"items":[{"x":1},{"x":1,"x":2}]}"#),
            ["items[1].x"]
        );
        // A duplicate inside a duplicate's value comes after it.
        assert_eq!(duplicates(br#"{"a":1,"a":{"b":1,"b":2}}"#), ["a", "a.b"]);
    }

    /// The decoded value is serde_json's, key order and last-wins included,
    /// and so are its errors.
    #[test]
    fn decodes_as_serde_json_does() {
        let bodies: [&[u8]; 9] = [
            br#"{"b":1,"a":[1,-2,3.5,-0.0,18446744073709551615,true,null,"s\n"],"b":{"z":{},"y":[]}}"#,
            br#"[{"k":"v","k":"w"},[],{}]"#,
            br#""just a string""#,
            b"12",
            b"1e400",
            b" null ",
            b"{not json",
            br#"{"a":1} trailing"#,
            br#"{"a":1,}"#,
        ];
        for body in bodies {
            let ours = decode_noting_duplicates(body).map(|(value, _)| value);
            let theirs = serde_json::from_slice::<Value>(body);
            match (ours, theirs) {
                (Ok(ours), Ok(theirs)) => {
                    assert_eq!(ours, theirs);
                    assert_eq!(ours.to_string(), theirs.to_string(), "key order");
                }
                (Err(ours), Err(theirs)) => assert_eq!(ours.to_string(), theirs.to_string()),
                (ours, theirs) => panic!("{ours:?} against {theirs:?}"),
            }
        }
        // Nesting past serde_json's limit fails here as it does there.
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert_eq!(
            decode_noting_duplicates(deep.as_bytes())
                .map(|_| ())
                .map_err(|e| e.to_string()),
            serde_json::from_slice::<Value>(deep.as_bytes())
                .map(|_| ())
                .map_err(|e| e.to_string()),
        );
    }
}
