//! A watch cache's indexes by field value: the fields a kind names
//! (`Kind::cache_indexes`), each mapping a value to the keys of the objects
//! holding it, kept as changes arrive.

use std::collections::{BTreeSet, HashMap};

use serde_json::Value;

use crate::selectors::field_value;

/// One indexed field and how an object without it reads (its Go zero value,
/// as field selectors compare it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldIndexSpec {
    pub field: String,
    pub absent: &'static str,
}

#[derive(Default)]
pub(super) struct FieldIndexes {
    indexes: Vec<(FieldIndexSpec, HashMap<String, BTreeSet<String>>)>,
}

impl FieldIndexes {
    pub(super) fn new(specs: &[FieldIndexSpec]) -> Self {
        Self {
            indexes: specs
                .iter()
                .map(|spec| (spec.clone(), HashMap::new()))
                .collect(),
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.indexes.is_empty()
    }

    pub(super) fn insert(&mut self, key: &str, object: &Value) {
        for (spec, by_value) in &mut self.indexes {
            let value = field_value(object, &spec.field, spec.absent);
            by_value
                .entry(value.into_owned())
                .or_default()
                .insert(key.to_owned());
        }
    }

    /// Adds what `other`, indexing other keys by the same fields, holds.
    pub(super) fn merge(&mut self, other: FieldIndexes) {
        for ((_, by_value), (_, other)) in self.indexes.iter_mut().zip(other.indexes) {
            for (value, keys) in other {
                by_value.entry(value).or_default().extend(keys);
            }
        }
    }

    /// Forgets `object`, which `key` held until now.
    pub(super) fn remove(&mut self, key: &str, object: &Value) {
        for (spec, by_value) in &mut self.indexes {
            let value = field_value(object, &spec.field, spec.absent);
            if let Some(keys) = by_value.get_mut(value.as_ref()) {
                keys.remove(key);
                if keys.is_empty() {
                    by_value.remove(value.as_ref());
                }
            }
        }
    }

    /// The keys of the objects whose `field` reads `value`, in key order;
    /// None when the field is not indexed.
    pub(super) fn keys(&self, field: &str, value: &str) -> Option<Option<&BTreeSet<String>>> {
        self.indexes
            .iter()
            .find(|(spec, _)| spec.field == field)
            .map(|(_, by_value)| by_value.get(value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_follow_inserts_and_removals() {
        let mut indexes = FieldIndexes::new(&[FieldIndexSpec {
            field: "spec.nodeName".into(),
            absent: "",
        }]);
        let on = |node: &str| json!({"spec": {"nodeName": node}});
        indexes.insert("/pods/a", &on("n1"));
        indexes.insert("/pods/b", &on("n1"));
        indexes.insert("/pods/c", &json!({"spec": {}}));
        fn keys(indexes: &FieldIndexes, value: &str) -> Vec<String> {
            indexes
                .keys("spec.nodeName", value)
                .expect("indexed")
                .map(|keys| keys.iter().cloned().collect())
                .unwrap_or_default()
        }
        assert_eq!(keys(&indexes, "n1"), ["/pods/a", "/pods/b"]);
        assert_eq!(keys(&indexes, ""), ["/pods/c"]);
        indexes.remove("/pods/a", &on("n1"));
        indexes.insert("/pods/a", &on("n2"));
        assert_eq!(keys(&indexes, "n1"), ["/pods/b"]);
        assert_eq!(keys(&indexes, "n2"), ["/pods/a"]);
        let mut other = FieldIndexes::new(&[FieldIndexSpec {
            field: "spec.nodeName".into(),
            absent: "",
        }]);
        other.insert("/pods/d", &on("n2"));
        other.insert("/pods/e", &on("n3"));
        indexes.merge(other);
        assert_eq!(keys(&indexes, "n2"), ["/pods/a", "/pods/d"]);
        assert_eq!(keys(&indexes, "n3"), ["/pods/e"]);
        indexes.remove("/pods/b", &on("n1"));
        assert!(keys(&indexes, "n1").is_empty());
        assert!(indexes.keys("status.phase", "Running").is_none());
    }
}
