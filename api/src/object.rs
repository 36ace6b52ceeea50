//! Small accessors for the unstructured object model (`serde_json::Value`
//! with Kubernetes metadata).

use rand::Rng;
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{json, Map, Value};

pub fn meta(object: &Value) -> Option<&Map<String, Value>> {
    object.get("metadata").and_then(Value::as_object)
}

/// `metadata`, created if missing or not an object.
pub fn meta_mut(object: &mut Value) -> Option<&mut Map<String, Value>> {
    let obj = object.as_object_mut()?;
    let meta = obj
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    meta.as_object_mut()
}

pub fn meta_str<'a>(object: &'a Value, field: &str) -> &'a str {
    meta(object)
        .and_then(|m| m.get(field))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// Sets a metadata field; a new one goes where Go's ObjectMeta declares
/// it (resourceVersion after uid, creationTimestamp after generation), so
/// the object stays in upstream's key order.
pub fn set_meta(object: &mut Value, field: &str, value: Value) {
    let Some(m) = meta_mut(object) else {
        return;
    };
    if let Some(slot) = m.get_mut(field) {
        *slot = value;
        return;
    }
    let order = crate::protobuf::object_meta_order();
    let position = order.map_or(m.len(), |order| {
        let rank = order.rank(field);
        m.keys()
            .position(|key| order.rank(key) > rank)
            .unwrap_or(m.len())
    });
    m.shift_insert(position, field.to_string(), value);
}

/// Removes a metadata field, keeping the others' order.
pub fn remove_meta(object: &mut Value, field: &str) {
    if let Some(m) = meta_mut(object) {
        m.shift_remove(field);
    }
}

pub fn name(object: &Value) -> &str {
    meta_str(object, "name")
}

pub fn namespace(object: &Value) -> &str {
    meta_str(object, "namespace")
}

pub fn resource_version(object: &Value) -> &str {
    meta_str(object, "resourceVersion")
}

/// RFC 3339 with second precision, as metav1.Time serializes.
pub fn now_timestamp() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// A random (version 4) UUID for `metadata.uid`, from the thread's CSPRNG
/// (`rand::rng()`, seeded from the OS) rather than a `getrandom` system call
/// per object.
pub fn new_uid() -> String {
    uuid::Builder::from_random_bytes(rand::random())
        .into_uuid()
        .to_string()
}

/// Upstream's generateName suffix: five characters from an alphabet without
/// vowels or look-alikes.
pub fn random_suffix() -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut rng = rand::rng();
    (0..5)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect()
}

pub fn finalizers(object: &Value) -> Vec<String> {
    meta(object)
        .and_then(|m| m.get("finalizers"))
        .map(strings)
        .unwrap_or_default()
}

/// The strings of a JSON array (what is not a string is skipped; not an
/// array: none).
pub fn strings(list: &Value) -> Vec<String> {
    list.as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The strings of the array at `value[key]`.
/// The array at a JSON pointer (`/spec/rules`), empty when absent or not
/// an array.
pub fn items_at<'a>(value: &'a Value, pointer: &str) -> &'a [Value] {
    value
        .pointer(pointer)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

pub fn strings_at(value: &Value, key: &str) -> Vec<String> {
    value.get(key).map(strings).unwrap_or_default()
}

/// Decodes a stored value and stamps it with the revision it is current at.
/// Serialises an object as it is stored: without `metadata.resourceVersion`,
/// which the store's revision supplies on every read (upstream stores it
/// empty too). Writes it in place, so the object is not copied first.
pub struct StoredForm<'a>(pub &'a Value);

impl Serialize for StoredForm<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let Value::Object(fields) = self.0 else {
            return self.0.serialize(serializer);
        };
        let mut map = serializer.serialize_map(Some(fields.len()))?;
        for (key, value) in fields {
            match value {
                Value::Object(metadata) if key == "metadata" => {
                    map.serialize_entry(key, &WithoutResourceVersion(metadata))?
                }
                _ => map.serialize_entry(key, value)?,
            }
        }
        map.end()
    }
}

struct WithoutResourceVersion<'a>(&'a Map<String, Value>);

impl Serialize for WithoutResourceVersion<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let kept = self.0.iter().filter(|(key, _)| *key != "resourceVersion");
        let mut map = serializer.serialize_map(Some(kept.clone().count()))?;
        for (key, value) in kept {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

pub fn decode_at(raw: &[u8], revision: i64) -> Option<Value> {
    let mut obj: Value = serde_json::from_slice(raw).ok()?;
    set_meta(
        &mut obj,
        "resourceVersion",
        Value::String(revision.to_string()),
    );
    Some(obj)
}

/// `old` with only the value at `path` taken from `new`: what a
/// subresource that owns one part of the object writes.
pub fn only_at(old: &Value, new: &Value, path: &[&str]) -> Value {
    let mut updated = old.clone();
    replace_at(&mut updated, new, path);
    updated
}

/// Sets the value at `path` (object keys), creating the objects on the
/// way; a non-object on the way is replaced, as unstructured.SetNestedField does.
pub fn set_at(target: &mut Value, path: &[&str], value: Value) {
    let Some((last, parents)) = path.split_last() else {
        *target = value;
        return;
    };
    let mut target = target;
    for key in parents {
        if !target.is_object() {
            *target = json!({});
        }
        let Some(map) = target.as_object_mut() else {
            return;
        };
        target = map.entry(*key).or_insert_with(|| json!({}));
    }
    if !target.is_object() {
        *target = json!({});
    }
    if let Some(map) = target.as_object_mut() {
        map.insert((*last).to_string(), value);
    }
}

/// `base` with the value at `path` (object keys) taken from `source`, or
/// removed where `source` has none.
pub fn replace_at(base: &mut Value, source: &Value, path: &[&str]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let wanted = parents
        .iter()
        .try_fold(source, |v, key| v.get(key))
        .and_then(|v| v.get(last))
        .cloned();
    let mut target = base;
    for key in parents {
        let Some(map) = target.as_object_mut() else {
            return;
        };
        target = map.entry(*key).or_insert_with(|| json!({}));
    }
    if let Some(map) = target.as_object_mut() {
        match wanted {
            Some(value) => {
                map.insert((*last).to_string(), value);
            }
            None => {
                map.remove(*last);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn replace_at_takes_one_field_from_the_source() {
        let mut base = json!({"spec": {"a": 1}, "status": {"phase": "old", "conditions": [1]}});
        replace_at(
            &mut base,
            &json!({"status": {"conditions": [2]}}),
            &["status", "conditions"],
        );
        assert_eq!(base["status"], json!({"phase": "old", "conditions": [2]}));
        replace_at(&mut base, &json!({}), &["status"]);
        assert_eq!(base, json!({"spec": {"a": 1}}));
        replace_at(&mut base, &json!({"status": {"x": true}}), &["status"]);
        assert_eq!(base["status"], json!({"x": true}));
    }

    #[test]
    fn uids_are_random_version_4_uuids() {
        let a = uuid::Uuid::parse_str(&new_uid()).expect("a UUID");
        let b = uuid::Uuid::parse_str(&new_uid()).expect("a UUID");
        assert_eq!(a.get_version(), Some(uuid::Version::Random));
        assert_eq!(a.get_variant(), uuid::Variant::RFC4122);
        assert_ne!(a, b);
        assert_eq!(new_uid().len(), 36);
    }

    #[test]
    fn timestamps_are_rfc3339_seconds_in_utc() {
        let now = now_timestamp();
        assert_eq!(now.len(), "2026-11-22T10:35:18Z".len(), "{now}");
        assert!(now.ends_with('Z') && now.as_bytes()[10] == b'T', "{now}");
        assert!(chrono::DateTime::parse_from_rfc3339(&now).is_ok(), "{now}");
    }
}
