//! capstan.v1 messages written straight from the JSON objects the core
//! holds, shared (`Arc<Value>`) by the watch cache and every reader. The
//! generated messages own their body (`capstan_proto::json::JsonStruct`),
//! so encoding through them would first copy each object. The bytes decode
//! to the same messages (see the tests).

use bytes::{Bytes, BytesMut};
use capstan_proto::json::{self, string_len, write_string};
use prost::encoding::{encode_key, encode_varint, encoded_len_varint, WireType};
use prost::Message;
use serde_json::Value;

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
            let len = json::struct_len(map);
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
        encode_varint(json::struct_len(map) as u64, buf);
        json::encode_struct(map, buf);
    }
}

fn str_field<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.get(field).and_then(Value::as_str).unwrap_or_default()
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
