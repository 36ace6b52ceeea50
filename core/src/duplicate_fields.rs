//! Duplicate keys in a JSON request body.
//!
//! serde_json keeps the last of two equal keys without a word, as Go's
//! encoding/json does; kube-apiserver's strict decoder reports them for
//! fieldValidation=Strict (an error) and Warn (a warning). This walks the
//! body once more with a visitor that remembers each object's keys.

use std::collections::HashSet;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// The dotted paths (`spec.replicas`, `spec.containers[0].name`) of keys that
/// occur twice in their object, in document order. Malformed JSON yields
/// nothing here: the regular decode reports it.
pub fn duplicate_fields(body: &[u8]) -> Vec<String> {
    let mut found = Vec::new();
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    let walk = Walk {
        path: String::new(),
        found: &mut found,
    };
    if walk.deserialize(&mut deserializer).is_err() {
        return Vec::new();
    }
    found
}

struct Walk<'a> {
    path: String,
    found: &'a mut Vec<String>,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = child(&self.path, &key);
            if !seen.insert(key) {
                self.found.push(path.clone());
            }
            map.next_value_seed(Walk {
                path,
                found: self.found,
            })?;
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0;
        while seq
            .next_element_seed(Walk {
                path: format!("{}[{index}]", self.path),
                found: self.found,
            })?
            .is_some()
        {
            index += 1;
        }
        Ok(())
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
    }
}
