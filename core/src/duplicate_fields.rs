//! Duplicate keys in a JSON request body.
//!
//! serde_json keeps the last of two equal keys without a word, as Go's
//! encoding/json does; kube-apiserver's strict decoder reports them for
//! fieldValidation=Strict (an error) and Warn (a warning). This walks the
//! body once more with a visitor that remembers each object's keys.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// The dotted paths (`spec.replicas`, `spec.containers[0].name`) of keys that
/// occur twice in their object, in document order. Malformed JSON yields
/// nothing here: the regular decode reports it.
pub fn duplicate_fields(body: &[u8]) -> Vec<String> {
    let mut found = Vec::new();
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    let root = PathNode::Root;
    let walk = Walk {
        at: &root,
        found: &mut found,
    };
    if walk.deserialize(&mut deserializer).is_err() {
        return Vec::new();
    }
    found
}

/// Where the walk is, as a chain back to the root: a path is only rendered
/// as text when a duplicate is found, so a clean body costs no path strings.
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

struct Walk<'a, 'f> {
    at: &'a PathNode<'a>,
    found: &'f mut Vec<String>,
}

impl<'de> DeserializeSeed<'de> for Walk<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

/// An object key, borrowed from the body unless it had escapes.
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_borrowed_str<E>(self, key: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(key))
    }

    fn visit_str<E>(self, key: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(key.to_string()))
    }

    fn visit_string<E>(self, key: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(key))
    }
}

impl<'de> Visitor<'de> for Walk<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen: HashSet<Cow<'de, str>> = HashSet::new();
        while let Some(key) = map.next_key_seed(Key)? {
            let duplicate = seen.contains(&key);
            let at = PathNode::Key(self.at, &key);
            if duplicate {
                self.found.push(at.render());
            }
            map.next_value_seed(Walk {
                at: &at,
                found: self.found,
            })?;
            if !duplicate {
                seen.insert(key);
            }
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0;
        loop {
            let at = PathNode::Index(self.at, index);
            let walk = Walk {
                at: &at,
                found: self.found,
            };
            if seq.next_element_seed(walk)?.is_none() {
                return Ok(());
            }
            index += 1;
        }
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_duplicates_with_their_paths() {
        let body = br#"{"kind":"Deployment","spec":{"replicas":1,"replicas":2,
            "template":{"spec":{"containers":[{"name":"a","name":"b"}]}}},"kind":"Deployment"}"#;
        assert_eq!(
            duplicate_fields(body),
            [
                "spec.replicas",
                "spec.template.spec.containers[0].name",
                "kind"
            ]
        );
        assert!(duplicate_fields(br#"{"a":{"b":1},"c":{"b":2}}"#).is_empty());
        assert!(duplicate_fields(b"{not json").is_empty());
        // Escaped and plain spellings of one key are the same key.
        assert_eq!(duplicate_fields(br#"{"a\u0062":1,"ab":2}"#), ["ab"]);
        assert_eq!(
            duplicate_fields(br#"{"items":[{"x":1},{"x":1,"x":2}]}"#),
            ["items[1].x"]
        );
    }
}
