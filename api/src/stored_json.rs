//! A stored object's served JSON without building its tree: the stored
//! bytes with the revision spliced in as `metadata.resourceVersion`.
//! Decoding a stored object into a tree and writing it out again costs
//! several times reading it; the watch cache's start-up and every change it
//! takes from the store did exactly that for every object. Only JSON that
//! serde_json writes as it is (what Capstan stores) is spliced, so the
//! answer is byte for byte what decoding and encoding would give; anything
//! else is left to the caller to decode.

use crate::protobuf::object_meta_order;

/// `raw` with `revision` as its `metadata.resourceVersion`, exactly as
/// `object::decode_at` and `serde_json::to_vec` would give it; None when
/// `raw` is not an object with a metadata object in serde_json's own
/// writing (spacing, escapes other than its own, floats, very long
/// integers), or not JSON at all.
pub fn served_json_at(raw: &[u8], revision: i64) -> Option<Vec<u8>> {
    let metadata = Layout::scan(raw)?;
    let mut digits = itoa::Buffer::new();
    let digits = digits.format(revision).as_bytes();
    // raw[..at], the quoted revision between `lead` and `trail`, raw[resume..].
    let (at, resume, lead, trail): (usize, usize, &[u8], &[u8]) = match metadata
        .keys
        .iter()
        .find(|key| key.name == b"resourceVersion")
    {
        Some(existing) => (existing.value_start, existing.value_end, b"\"", b"\""),
        None => {
            let order = object_meta_order()?;
            let rank = order.rank("resourceVersion");
            // Where `object::set_meta` puts it: before the first field Go
            // declares after it.
            let before = metadata.keys.iter().find(|key| {
                std::str::from_utf8(key.name).map_or(u16::MAX, |name| order.rank(name)) > rank
            });
            match before {
                Some(key) => (key.start, key.start, b"\"resourceVersion\":\"", b"\","),
                None if metadata.keys.is_empty() => {
                    (metadata.end, metadata.end, b"\"resourceVersion\":\"", b"\"")
                }
                None => (
                    metadata.end,
                    metadata.end,
                    b",\"resourceVersion\":\"",
                    b"\"",
                ),
            }
        }
    };
    // Sized exactly: the cache keeps the buffer as it is, without a copy
    // to shrink it.
    let mut out = Vec::with_capacity(
        at + lead.len() + digits.len() + trail.len() + raw.len().saturating_sub(resume),
    );
    out.extend_from_slice(&raw[..at]);
    out.extend_from_slice(lead);
    out.extend_from_slice(digits);
    out.extend_from_slice(trail);
    out.extend_from_slice(&raw[resume..]);
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

/// What the scan may read next.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Expect {
    Value,
    /// Right after `[`.
    ValueOrClose,
    /// After a `,` in an object.
    Key,
    /// Right after `{`.
    KeyOrClose,
    Colon,
    CommaOrClose,
    /// The top-level object is closed: nothing may follow.
    End,
}

/// The deepest nesting serde_json decodes into a tree (its recursion
/// limit); deeper values are left to decoding, which refuses them as it
/// would from storage.
const MOST_DEPTH: u32 = 127;

impl<'a> Layout<'a> {
    /// Reads where the top-level `metadata` object's keys are, refusing
    /// (None) whatever is not JSON (the grammar as serde_json reads it:
    /// this is the only pass over the bytes) or not what serde_json would
    /// have written byte for byte.
    fn scan(raw: &'a [u8]) -> Option<Self> {
        if raw.first() != Some(&b'{') {
            return None;
        }
        let mut expect = Expect::Value;
        let mut depth = 0u32;
        // Bit n set: the container at depth n + 1 is an object.
        let mut objects = 0u128;
        let mut top_key: &[u8] = b"";
        let mut in_metadata = false;
        let mut seen_metadata = false;
        let mut layout: Option<Layout<'a>> = None;
        let mut keys: Vec<MetadataKey<'a>> = Vec::new();
        let after_value = |depth: u32| {
            if depth == 0 {
                Expect::End
            } else {
                Expect::CommaOrClose
            }
        };
        let mut i = 0;
        while i < raw.len() {
            let byte = raw[i];
            match byte {
                b'"' => {
                    let start = i;
                    i = string_end(raw, i)?;
                    match expect {
                        Expect::Key | Expect::KeyOrClose => {
                            let name = &raw[start + 1..i - 1];
                            if depth == 1 {
                                if name == b"metadata" && top_key_seen_metadata(&mut seen_metadata)
                                {
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
                            expect = Expect::Colon;
                        }
                        Expect::Value | Expect::ValueOrClose => expect = after_value(depth),
                        _ => return None,
                    }
                }
                b'{' | b'[' => {
                    if !matches!(expect, Expect::Value | Expect::ValueOrClose)
                        || depth == MOST_DEPTH
                    {
                        return None;
                    }
                    let object = byte == b'{';
                    if object {
                        objects |= 1 << depth;
                    } else {
                        objects &= !(1 << depth);
                    }
                    depth += 1;
                    // The top-level object's `metadata` key's own value.
                    if object && depth == 2 && top_key == b"metadata" {
                        in_metadata = true;
                    }
                    expect = if object {
                        Expect::KeyOrClose
                    } else {
                        Expect::ValueOrClose
                    };
                    i += 1;
                }
                b'}' | b']' => {
                    let object = byte == b'}';
                    let closes = match expect {
                        Expect::CommaOrClose => true,
                        Expect::KeyOrClose => object,
                        Expect::ValueOrClose => !object,
                        _ => false,
                    };
                    if !closes || depth == 0 || (objects >> (depth - 1) & 1 == 1) != object {
                        return None;
                    }
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
                    depth -= 1;
                    expect = after_value(depth);
                    i += 1;
                }
                b',' if expect == Expect::CommaOrClose => {
                    expect = if objects >> (depth - 1) & 1 == 1 {
                        Expect::Key
                    } else {
                        Expect::Value
                    };
                    i += 1;
                }
                b':' if expect == Expect::Colon => {
                    expect = Expect::Value;
                    i += 1;
                }
                b't' | b'n' | b'f' | b'-' | b'0'..=b'9'
                    if matches!(expect, Expect::Value | Expect::ValueOrClose) =>
                {
                    i = match byte {
                        b't' => literal_end(raw, i, b"true")?,
                        b'n' => literal_end(raw, i, b"null")?,
                        b'f' => literal_end(raw, i, b"false")?,
                        _ => integer_end(raw, i)?,
                    };
                    expect = after_value(depth);
                }
                // Misplaced punctuation, spacing, fractions, exponents.
                _ => return None,
            }
        }
        if expect != Expect::End {
            return None;
        }
        layout
    }
}

/// The position after `literal` if it starts at `start`.
fn literal_end(raw: &[u8], start: usize, literal: &[u8]) -> Option<usize> {
    let end = start + literal.len();
    (raw.get(start..end)? == literal).then_some(end)
}

/// Notes a top-level `metadata` key; true if there was one already.
fn top_key_seen_metadata(seen: &mut bool) -> bool {
    std::mem::replace(seen, true)
}

/// The position after the string opening at `start`, if serde_json would
/// have escaped it the same way: only `"`, `\` and control characters, the
/// usual ones by letter and the others as lowercase `\u00XX`; None for a
/// control character left as it is or bytes that are not UTF-8, which JSON
/// does not allow.
fn string_end(raw: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    let mut ascii = true;
    loop {
        // A plain loop: most strings are a few bytes long, shorter than a
        // vectorized search takes to start.
        let at = i + raw
            .get(i..)?
            .iter()
            .position(|&b| b == b'"' || b == b'\\' || !(0x20..0x80).contains(&b))?;
        match raw[at] {
            b'"' => {
                // Escapes are ASCII: the whole content is read at once.
                if !ascii {
                    std::str::from_utf8(&raw[start + 1..at]).ok()?;
                }
                return Some(at + 1);
            }
            b'\\' => {}
            0x80.. => {
                ascii = false;
                i = at + 1;
                continue;
            }
            _ => return None,
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
/// rather than a float; None for leading zeros, which JSON does not allow.
fn integer_end(raw: &[u8], start: usize) -> Option<usize> {
    let negative = raw[start] == b'-';
    let digits_from = start + usize::from(negative);
    let digits = raw
        .get(digits_from..)?
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    if digits == 0 || digits > 18 || (raw[digits_from] == b'0' && (negative || digits > 1)) {
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

    #[test]
    fn what_is_not_json_is_refused() {
        for raw in [
            r#"{"metadata":{"name":"a"},}"#,
            r#"{"metadata":{"name":"a",}}"#,
            r#"{"metadata":{"name":"a"}]"#,
            r#"{"metadata":{"name":["a"}}}"#,
            r#"{"metadata":{"name":"a"}}}"#,
            r#"{"metadata":{"name":"a"}}{}"#,
            r#"{"metadata":{"name":"a"}}1"#,
            r#"{"metadata":{"name""a"}}"#,
            r#"{"metadata":{"name":"a":"b"}}"#,
            r#"{"metadata":{"name":"a","b"}}"#,
            r#"{"metadata":{"name":01}}"#,
            r#"{"metadata":{"name":-}}"#,
            r#"{"metadata":{"name":[1,]}}"#,
            r#"{"metadata":{"name":[,1]}}"#,
            r#"{"metadata":{"name":[1 2]}}"#,
            r#"{"metadata":{"name":[12]3}}"#,
            r#"{"metadata":{"name":nul}}"#,
            r#"{"metadata":{"name":nulll}}"#,
            r#"{"metadata":{"name":fals}}"#,
            r#"{"metadata":{"name":"a"},"x":[truex]}"#,
            r#"{"x":tree,"metadata":{"name":"a"}}"#,
            r#"{"metadata":{1:"a"}}"#,
            r#"{"metadata":{"name":"a"},"x":{"y"}}"#,
            "{\"metadata\":{\"name\":\"a\u{1}b\"}}",
            "{\"metadata\":{\"name\":\"a\nb\"}}",
            r#"{"metadata":{"name":"a"#,
            r#"{"metadata":{"name":"a\"#,
            r#"{"metadata":{"name":"a"}"#,
        ] {
            assert_eq!(served_json_at(raw.as_bytes(), 1), None, "{raw}");
            assert_eq!(decoded(raw.as_bytes(), 1), None, "{raw} is not JSON");
        }
        for raw in [
            &b"{\"metadata\":{\"name\":\"\xc3\"}}"[..],
            b"{\"metadata\":{\"name\":\"a\"},\"x\":\"\xe2\x82\"}",
            b"{\"metadata\":{\"name\":\"\xed\xa0\x80\"}}",
        ] {
            assert_eq!(served_json_at(raw, 1), None, "{raw:?}");
            assert_eq!(decoded(raw, 1), None, "{raw:?} is not UTF-8");
        }
        let raw = "{\"metadata\":{\"name\":\"é€😀\"}}".as_bytes();
        assert_eq!(served_json_at(raw, 1), decoded(raw, 1));
        assert!(served_json_at(raw, 1).is_some());
    }

    #[test]
    fn nesting_is_spliced_as_deep_as_decoding_reads_it() {
        let nested = |depth: usize| {
            format!(
                r#"{{"metadata":{{"name":"a"}},"x":{}{}}}"#,
                "[".repeat(depth),
                "]".repeat(depth)
            )
        };
        let deepest = nested(MOST_DEPTH as usize - 1);
        assert!(served_json_at(deepest.as_bytes(), 2).is_some());
        assert_eq!(
            served_json_at(deepest.as_bytes(), 2),
            decoded(deepest.as_bytes(), 2)
        );
        let deeper = nested(MOST_DEPTH as usize);
        assert_eq!(served_json_at(deeper.as_bytes(), 2), None);
        assert_eq!(decoded(deeper.as_bytes(), 2), None);
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

        /// Bytes changed, added or taken away anywhere: spliced only when
        /// decoding reads the same object.
        #[test]
        fn damaged_json_is_spliced_only_as_decoding_reads_it(
            metadata in prop::collection::vec(("[a-z]{1,4}", json_value()), 0..4),
            rest in json_value(),
            edits in prop::collection::vec(
                (
                    any::<prop::sample::Index>(),
                    prop::sample::select(b"{}[],:\"\\ tfnrue0123-.eE\x01\x7f\xc3".to_vec()),
                    0..3u8,
                ),
                1..4,
            ),
        ) {
            let object = json!({
                "metadata": Value::Object(metadata.into_iter().collect()),
                "rest": rest,
            });
            let mut raw = serde_json::to_vec(&object).unwrap();
            for (at, byte, edit) in edits {
                let at = at.index(raw.len() + 1);
                match edit {
                    0 if at < raw.len() => raw[at] = byte,
                    1 => raw.insert(at, byte),
                    _ if at < raw.len() => {
                        raw.remove(at);
                    }
                    _ => {}
                }
            }
            if let Some(spliced) = served_json_at(&raw, 9) {
                prop_assert_eq!(Some(spliced), decoded(&raw, 9));
            }
        }
    }
}
