//! A stored object's served JSON without building its tree: the stored
//! bytes with the revision spliced in as `metadata.resourceVersion`.
//! Decoding a stored object into a tree and writing it out again costs
//! several times reading it; the watch cache's start-up and every change it
//! takes from the store did exactly that for every object. Only JSON that
//! serde_json writes as it is (what Capstan stores) is spliced, so the
//! answer is byte for byte what decoding and encoding would give; anything
//! else is left to the caller to decode.

use serde::de::IgnoredAny;

use crate::protobuf::object_meta_order;

/// `raw` with `revision` as its `metadata.resourceVersion`, exactly as
/// `object::decode_at` and `serde_json::to_vec` would give it; None when
/// `raw` is not an object with a metadata object in serde_json's own
/// writing (spacing, escapes other than its own, floats, very long
/// integers), or not JSON at all.
pub fn served_json_at(raw: &[u8], revision: i64) -> Option<Vec<u8>> {
    let metadata = Layout::scan(raw)?;
    // The scan reads the layout; serde_json's own reader says it is JSON.
    serde_json::from_slice::<IgnoredAny>(raw).ok()?;
    let version = format!("\"{revision}\"");
    // Sized exactly: the cache keeps the buffer as it is, without a copy
    // to shrink it.
    let mut out;
    match metadata
        .keys
        .iter()
        .find(|key| key.name == b"resourceVersion")
    {
        Some(existing) => {
            let replaced = existing.value_end.saturating_sub(existing.value_start);
            out = Vec::with_capacity((raw.len() + version.len()).saturating_sub(replaced));
            out.extend_from_slice(&raw[..existing.value_start]);
            out.extend_from_slice(version.as_bytes());
            out.extend_from_slice(&raw[existing.value_end..]);
        }
        None => {
            let order = object_meta_order()?;
            let rank = order.rank("resourceVersion");
            // Where `object::set_meta` puts it: before the first field Go
            // declares after it.
            let before = metadata.keys.iter().find(|key| {
                std::str::from_utf8(key.name).map_or(u16::MAX, |name| order.rank(name)) > rank
            });
            let (at, entry) = match before {
                Some(key) => (key.start, format!("\"resourceVersion\":{version},")),
                None if metadata.keys.is_empty() => {
                    (metadata.end, format!("\"resourceVersion\":{version}"))
                }
                None => (metadata.end, format!(",\"resourceVersion\":{version}")),
            };
            out = Vec::with_capacity(raw.len() + entry.len());
            out.extend_from_slice(&raw[..at]);
            out.extend_from_slice(entry.as_bytes());
            out.extend_from_slice(&raw[at..]);
        }
    }
    Some(out)
}

/// One key of the metadata object: where its entry starts (the key's
/// opening quote) and where its value lies.
struct MetadataKey<'a> {
    name: &'a [u8],
    start: usize,
    value_start: usize,
    value_end: usize,
}

/// The metadata object's keys and the position of its closing brace.
struct Layout<'a> {
    keys: Vec<MetadataKey<'a>>,
    end: usize,
}

impl<'a> Layout<'a> {
    /// Reads where the top-level `metadata` object's keys are, refusing
    /// (None) whatever serde_json would not have written byte for byte.
    /// It does not check the grammar: `served_json_at` has serde_json do
    /// that.
    fn scan(raw: &'a [u8]) -> Option<Self> {
        if raw.first() != Some(&b'{') {
            return None;
        }
        let mut depth = 0usize;
        let mut top_key: &[u8] = b"";
        let mut in_metadata = false;
        let mut seen_metadata = false;
        let mut layout: Option<Layout<'a>> = None;
        let mut keys: Vec<MetadataKey<'a>> = Vec::new();
        let mut i = 0;
        while i < raw.len() {
            match raw[i] {
                b'"' => {
                    let start = i;
                    i = string_end(raw, i)?;
                    if raw.get(i) == Some(&b':') {
                        let name = &raw[start + 1..i - 1];
                        if depth == 1 {
                            if name == b"metadata" && top_key_seen_metadata(&mut seen_metadata) {
                                // metadata twice: a tree keeps only the last.
                                return None;
                            }
                            top_key = name;
                        } else if depth == 2 && in_metadata {
                            if keys.iter().any(|key| key.name == name) {
                                return None;
                            }
                            if let Some(last) = keys.last_mut() {
                                last.value_end = start - 1;
                            }
                            keys.push(MetadataKey {
                                name,
                                start,
                                value_start: i + 1,
                                value_end: 0,
                            });
                        }
                        i += 1;
                    }
                }
                open @ (b'{' | b'[') => {
                    depth += 1;
                    if open == b'{' && depth == 2 && top_key == b"metadata" && raw[i - 1] == b':' {
                        in_metadata = true;
                    }
                    i += 1;
                }
                b'}' | b']' => {
                    if depth == 2 && in_metadata {
                        if let Some(last) = keys.last_mut() {
                            last.value_end = i;
                        }
                        in_metadata = false;
                        layout = Some(Layout {
                            keys: std::mem::take(&mut keys),
                            end: i,
                        });
                    }
                    depth = depth.checked_sub(1)?;
                    i += 1;
                }
                b',' | b':' => i += 1,
                b't' | b'n' => i += 4,
                b'f' => i += 5,
                b'-' | b'0'..=b'9' => i = integer_end(raw, i)?,
                // Spacing, fractions, exponents: written otherwise by serde_json.
                _ => return None,
            }
        }
        layout
    }
}

/// Notes a top-level `metadata` key; true if there was one already.
fn top_key_seen_metadata(seen: &mut bool) -> bool {
    std::mem::replace(seen, true)
}

/// The position after the string opening at `start`, if serde_json would
/// have escaped it the same way: only `"`, `\` and control characters, the
/// usual ones by letter and the others as lowercase `\u00XX`.
fn string_end(raw: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    loop {
        let at = i + memchr::memchr2(b'"', b'\\', raw.get(i..)?)?;
        if raw[at] == b'"' {
            return Some(at + 1);
        }
        match *raw.get(at + 1)? {
            b'"' | b'\\' | b'n' | b'r' | b't' | b'b' | b'f' => i = at + 2,
            b'u' => {
                let hex = raw.get(at + 2..at + 6)?;
                let lower_hex = |b: &u8| b.is_ascii_digit() || (b'a'..=b'f').contains(b);
                let control = hex[0] == b'0'
                    && hex[1] == b'0'
                    && (hex[2] == b'0' || hex[2] == b'1')
                    && lower_hex(&hex[3]);
                // These have letters of their own.
                let lettered = matches!(&hex[2..], b"08" | b"09" | b"0a" | b"0c" | b"0d");
                if !control || lettered {
                    return None;
                }
                i = at + 6;
            }
            _ => return None,
        }
    }
}

/// The position after the integer starting at `start`, if serde_json writes
/// it back the same: no `-0`, and short enough to be read as an i64 or u64
/// rather than a float.
fn integer_end(raw: &[u8], start: usize) -> Option<usize> {
    let digits_from = start + usize::from(raw[start] == b'-');
    let digits = raw
        .get(digits_from..)?
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    if digits == 0 || digits > 18 || (digits_from > start && raw[digits_from] == b'0') {
        return None;
    }
    Some(digits_from + digits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::{json, Value};

    /// What decoding and encoding give.
    fn decoded(raw: &[u8], revision: i64) -> Option<Vec<u8>> {
        crate::object::decode_at(raw, revision).map(|tree| serde_json::to_vec(&tree).unwrap())
    }

    fn spliced_as_decoded(object: &Value) {
        let raw = serde_json::to_vec(object).unwrap();
        let spliced = served_json_at(&raw, 42).expect("spliced");
        assert_eq!(spliced.capacity(), spliced.len(), "sized exactly");
        assert_eq!(
            String::from_utf8(spliced).unwrap(),
            String::from_utf8(decoded(&raw, 42).unwrap()).unwrap()
        );
    }

    #[test]
    fn the_version_goes_where_decoding_puts_it() {
        for metadata in [
            json!({"name": "a", "namespace": "n", "uid": "u", "generation": 1, "creationTimestamp": "t", "managedFields": [{"manager": "m"}]}),
            json!({"name": "a", "creationTimestamp": null, "labels": {"resourceVersion": "x"}}),
            json!({"name": "a", "resourceVersion": "7", "uid": "u"}),
            json!({"name": "a"}),
            json!({"annotations": {"a": "b"}}),
            json!({}),
        ] {
            spliced_as_decoded(&json!({
                "kind": "ConfigMap", "apiVersion": "v1", "metadata": metadata,
                "data": {"k": "line\nnext \"quoted\" \\ \u{1} é", "metadata": "{\"name\":1}"},
                "n": [1, -2, 0, 123456789012345678_i64, true, false, null, {"metadata": {}}]
            }));
        }
    }

    #[test]
    fn what_serde_json_writes_otherwise_is_left_to_decoding() {
        for raw in [
            r#" {"metadata":{"name":"a"}}"#,
            r#"{"metadata": {"name":"a"}}"#,
            r#"{"metadata":{"name":"a"},"x":1.5}"#,
            r#"{"metadata":{"name":"a"},"x":1e3}"#,
            r#"{"metadata":{"name":"a"},"x":-0}"#,
            r#"{"metadata":{"name":"a"},"x":12345678901234567890}"#,
            r#"{"metadata":{"name":"\u0061"}}"#,
            r#"{"metadata":{"name":"a\/b"}}"#,
            r#"{"metadata":{"name":"\u000a"}}"#,
            r#"{"metadata":{"name":"a","name":"b"}}"#,
            r#"{"metadata":{"name":"a"},"metadata":{"name":"b"}}"#,
            r#"{"metadata":{"name":"a"},"metadata":null}"#,
            r#"{"metadata":null}"#,
            r#"{"kind":"x"}"#,
            r#"["metadata",{}]"#,
            r#"{"metadata":{"name":"a"}"#,
            r#"{"metadata":{"name":"a"}}x"#,
            r#"{"metadata":{"name":tru}}"#,
        ] {
            assert_eq!(served_json_at(raw.as_bytes(), 1), None, "{raw}");
        }
        // serde_json's own escapes of control characters are its writing.
        let raw = br#"{"metadata":{"name":"\u001f\b"}}"#;
        assert_eq!(served_json_at(raw, 3), decoded(raw, 3));
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            ".*".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec(("[a-zA-Z\"\\\\/]{0,8}", inner), 0..6)
                    .prop_map(|entries| Value::Object(entries.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// Spliced or not, the answer is decoding's.
        #[test]
        fn splicing_agrees_with_decoding(
            metadata in prop::collection::vec(("[a-zA-Z]{1,12}", json_value()), 0..6),
            rest in json_value(),
            revision in 1i64..i64::MAX,
        ) {
            let object = json!({
                "metadata": Value::Object(metadata.into_iter().collect()),
                "rest": rest,
            });
            let raw = serde_json::to_vec(&object).unwrap();
            if let Some(spliced) = served_json_at(&raw, revision) {
                prop_assert_eq!(spliced.capacity(), spliced.len());
                prop_assert_eq!(Some(spliced), decoded(&raw, revision));
            }
            // Any other spacing of the same object is decoded instead.
            let pretty = serde_json::to_vec_pretty(&object).unwrap();
            prop_assert_eq!(served_json_at(&pretty, revision), None);
        }
    }
}
