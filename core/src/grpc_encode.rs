//! capstan.v1 messages written straight from the JSON objects the core
//! holds. The generated path first builds a `google.protobuf.Struct` tree
//! (a `BTreeMap` and a `String` per key, a `prost_types::Value` per value)
//! only to walk it once while encoding; for lists that doubled the time of
//! a REST list of the same objects (docs/benchmarks.md). The bytes decode to
//! the same messages (see the tests); only map entries keep the object's
//! key order instead of being sorted, which protobuf leaves open.

use bytes::{BufMut, Bytes, BytesMut};
use prost::encoding::{encode_key, encode_varint, encoded_len_varint, key_len, WireType};
use prost::Message;
use serde_json::{Map, Value};

use crate::grpc::object_meta;
use crate::service::ObjectList;

/// A `capstan.v1.Object`: the typed envelope and the whole object as body.
pub fn object(obj: &Value) -> Bytes {
    let mut buf = BytesMut::with_capacity(object_len(obj));
    write_object(obj, &mut buf);
    buf.freeze()
}

/// A `capstan.v1.ListResponse` of `list`'s items.
pub fn list_response(api_version: &str, kind: &str, list: &ObjectList) -> Bytes {
    let mut buf = BytesMut::new();
    write_string(1, api_version, &mut buf);
    write_string(2, kind, &mut buf);
    write_string(3, &list.resource_version, &mut buf);
    write_string(
        4,
        list.continue_token.as_deref().unwrap_or_default(),
        &mut buf,
    );
    if let Some(remaining) = list.remaining_item_count {
        prost::encoding::int64::encode(5, &remaining, &mut buf);
    }
    for item in &list.items {
        let len = object_len(item);
        buf.reserve(len + 6);
        encode_key(6, WireType::LengthDelimited, &mut buf);
        encode_varint(len as u64, &mut buf);
        write_object(item, &mut buf);
    }
    buf.freeze()
}

fn object_len(obj: &Value) -> usize {
    let meta = object_meta(obj);
    let meta_len = meta.encoded_len();
    string_len(1, str_field(obj, "apiVersion"))
        + string_len(2, str_field(obj, "kind"))
        + 1
        + encoded_len_varint(meta_len as u64)
        + meta_len
        + obj.as_object().map_or(0, |map| {
            let len = struct_len(map);
            1 + encoded_len_varint(len as u64) + len
        })
}

fn write_object(obj: &Value, buf: &mut BytesMut) {
    // Object { string api_version = 1; string kind = 2; ObjectMeta metadata = 3;
    //          google.protobuf.Struct body = 4; }
    write_string(1, str_field(obj, "apiVersion"), buf);
    write_string(2, str_field(obj, "kind"), buf);
    let meta = object_meta(obj);
    encode_key(3, WireType::LengthDelimited, buf);
    encode_varint(meta.encoded_len() as u64, buf);
    meta.encode_raw(buf);
    if let Some(map) = obj.as_object() {
        encode_key(4, WireType::LengthDelimited, buf);
        encode_varint(struct_len(map) as u64, buf);
        write_struct(map, buf);
    }
}

fn str_field<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.get(field).and_then(Value::as_str).unwrap_or_default()
}

/// A proto3 string field: left out when empty.
fn string_len(tag: u32, s: &str) -> usize {
    if s.is_empty() {
        0
    } else {
        key_len(tag) + encoded_len_varint(s.len() as u64) + s.len()
    }
}

fn write_string(tag: u32, s: &str, buf: &mut impl BufMut) {
    if !s.is_empty() {
        encode_key(tag, WireType::LengthDelimited, buf);
        encode_varint(s.len() as u64, buf);
        buf.put_slice(s.as_bytes());
    }
}

fn delimited_len(len: usize) -> usize {
    1 + encoded_len_varint(len as u64) + len
}

/// `google.protobuf.Struct { map<string, Value> fields = 1; }`: one entry
/// message `{ string key = 1; Value value = 2; }` per field.
fn struct_len(map: &Map<String, Value>) -> usize {
    map.iter()
        .map(|(key, value)| delimited_len(entry_len(key, value)))
        .sum()
}

fn entry_len(key: &str, value: &Value) -> usize {
    string_len(1, key) + delimited_len(value_len(value))
}

fn write_struct(map: &Map<String, Value>, buf: &mut impl BufMut) {
    for (key, value) in map {
        encode_key(1, WireType::LengthDelimited, buf);
        encode_varint(entry_len(key, value) as u64, buf);
        write_string(1, key, buf);
        encode_key(2, WireType::LengthDelimited, buf);
        encode_varint(value_len(value) as u64, buf);
        write_value(value, buf);
    }
}

/// `google.protobuf.Value`: a oneof, so its field is written even when it
/// holds the zero value (null, false, 0, "").
fn value_len(value: &Value) -> usize {
    match value {
        Value::Null | Value::Bool(_) => 2,
        Value::Number(_) => 9,
        Value::String(s) => delimited_len(s.len()),
        Value::Object(map) => delimited_len(struct_len(map)),
        Value::Array(items) => delimited_len(list_len(items)),
    }
}

fn write_value(value: &Value, buf: &mut impl BufMut) {
    match value {
        Value::Null => {
            encode_key(1, WireType::Varint, buf);
            encode_varint(0, buf);
        }
        Value::Number(n) => {
            encode_key(2, WireType::SixtyFourBit, buf);
            buf.put_f64_le(n.as_f64().unwrap_or_default());
        }
        Value::String(s) => {
            encode_key(3, WireType::LengthDelimited, buf);
            encode_varint(s.len() as u64, buf);
            buf.put_slice(s.as_bytes());
        }
        Value::Bool(b) => {
            encode_key(4, WireType::Varint, buf);
            encode_varint(u64::from(*b), buf);
        }
        Value::Object(map) => {
            encode_key(5, WireType::LengthDelimited, buf);
            encode_varint(struct_len(map) as u64, buf);
            write_struct(map, buf);
        }
        Value::Array(items) => {
            encode_key(6, WireType::LengthDelimited, buf);
            encode_varint(list_len(items) as u64, buf);
            for item in items {
                encode_key(1, WireType::LengthDelimited, buf);
                encode_varint(value_len(item) as u64, buf);
                write_value(item, buf);
            }
        }
    }
}

/// `google.protobuf.ListValue { repeated Value values = 1; }`
fn list_len(items: &[Value]) -> usize {
    items
        .iter()
        .map(|item| delimited_len(value_len(item)))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grpc::to_pb_object;
    use capstan_proto::v1 as pb;
    use serde_json::json;
    use std::sync::Arc;

    fn objects() -> Vec<Value> {
        vec![
            json!({
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {
                    "name": "web", "namespace": "ns", "uid": "u-1", "resourceVersion": "42",
                    "generation": 3, "creationTimestamp": "2026-11-22T10:00:00Z",
                    "labels": {"app": "web", "": "empty key"},
                    "annotations": {"note": "ünïcødé ✓"},
                },
                "spec": {
                    "replicas": 0, "paused": false, "ratio": 0.25, "big": 1e300,
                    "negative": -7, "nothing": null, "empty": "", "emptyObject": {},
                    "emptyList": [],
                    "template": {"spec": {"containers": [
                        {"name": "c", "image": "nginx", "args": ["a", "", null, 1, true, {"x": [[]]}]}
                    ]}},
                },
            }),
            json!({"kind": "NoMetadata"}),
            json!({}),
        ]
    }

    #[test]
    fn objects_decode_to_the_generated_message() {
        for obj in objects() {
            let decoded = pb::Object::decode(object(&obj)).expect("decodes");
            assert_eq!(decoded, to_pb_object(&obj), "{obj}");
            assert_eq!(object(&obj).len(), object_len(&obj));
        }
    }

    #[test]
    fn lists_decode_to_the_generated_message() {
        for (continue_token, remaining) in [(None, None), (Some("c".to_string()), Some(0))] {
            let list = ObjectList {
                items: objects().into_iter().map(Arc::new).collect(),
                resource_version: "42".into(),
                continue_token: continue_token.clone(),
                remaining_item_count: remaining,
            };
            let decoded = pb::ListResponse::decode(list_response("v1", "ConfigMapList", &list))
                .expect("decodes");
            let expected = pb::ListResponse {
                api_version: "v1".into(),
                kind: "ConfigMapList".into(),
                resource_version: "42".into(),
                continue_token: continue_token.unwrap_or_default(),
                remaining_item_count: remaining,
                items: objects().iter().map(to_pb_object).collect(),
            };
            assert_eq!(decoded, expected);
        }
    }
}
