//! capstan.v1 messages written straight from the JSON objects the core
//! holds, shared (`Arc<Value>`) by the watch cache and every reader. The
//! generated messages own their body (`capstan_proto::json::JsonStruct`),
//! so encoding through them would first copy each object. The bytes decode
//! to the same messages (see the tests).

use bytes::{Bytes, BytesMut};
use capstan_proto::json::{self, delimited_len, string_len, write_string};
use prost::encoding::{encode_key, encode_varint, WireType};
use serde_json::{Map, Value};

use crate::object;
use crate::verbs::ObjectList;
use crate::watch::cached::LazyObject;

/// A `capstan.v1.Object`: the typed envelope and the whole object as body.
pub fn object(obj: &Value) -> Bytes {
    let envelope = Envelope::of(obj);
    let mut buf = BytesMut::with_capacity(envelope.len());
    envelope.write(&mut buf);
    buf.freeze()
}

/// The same for an object handed out by the core: one from the watch
/// cache is encoded once and the encoding kept with it, so the next reader
/// (a get, a list, a watch) copies it.
pub fn lazy_object(item: &LazyObject) -> Bytes {
    match item.encodings() {
        Some(encodings) => encodings
            .grpc_object
            .get_or_init(|| object(&item.tree_for_once()))
            .clone(),
        None => object(item),
    }
}

/// A `capstan.v1.ListResponse` of `list`'s items.
pub fn list_response(api_version: &str, kind: &str, list: &ObjectList) -> Bytes {
    let continue_token = list.continue_token.as_deref().unwrap_or_default();
    // Every item encoded first, so the answer is written into one buffer of
    // its final size; a cached object's encoding is made once and kept
    // with it, so the next list only copies it.
    let items: Vec<Bytes> = list.items.iter().map(lazy_object).collect();
    let len = string_len(1, api_version)
        + string_len(2, kind)
        + string_len(3, &list.resource_version)
        + string_len(4, continue_token)
        + list.remaining_item_count.map_or(0, |remaining| {
            prost::encoding::int64::encoded_len(5, &remaining)
        })
        + items
            .iter()
            .map(|item| delimited_len(item.len()))
            .sum::<usize>();
    let mut buf = BytesMut::with_capacity(len);
    write_string(1, api_version, &mut buf);
    write_string(2, kind, &mut buf);
    write_string(3, &list.resource_version, &mut buf);
    write_string(4, continue_token, &mut buf);
    if let Some(remaining) = list.remaining_item_count {
        prost::encoding::int64::encode(5, &remaining, &mut buf);
    }
    for item in &items {
        encode_key(6, WireType::LengthDelimited, &mut buf);
        encode_varint(item.len() as u64, &mut buf);
        buf.extend_from_slice(item);
    }
    buf.freeze()
}

/// `Object { string api_version = 1; string kind = 2; ObjectMeta metadata = 3;
/// google.protobuf.Struct body = 4; }`, measured once for its length and
/// its writing.
struct Envelope<'a> {
    obj: &'a Value,
    meta: TypedMeta<'a>,
    meta_len: usize,
    body: Option<json::MeasuredStruct<'a>>,
}

impl<'a> Envelope<'a> {
    fn of(obj: &'a Value) -> Self {
        let meta = TypedMeta(object::meta(obj));
        Self {
            obj,
            meta_len: meta.len(),
            meta,
            body: obj.as_object().map(json::MeasuredStruct::new),
        }
    }

    fn len(&self) -> usize {
        string_len(1, str_field(self.obj, "apiVersion"))
            + string_len(2, str_field(self.obj, "kind"))
            + delimited_len(self.meta_len)
            + self
                .body
                .as_ref()
                .map_or(0, |body| delimited_len(body.encoded_len()))
    }

    fn write(&self, buf: &mut BytesMut) {
        write_string(1, str_field(self.obj, "apiVersion"), buf);
        write_string(2, str_field(self.obj, "kind"), buf);
        encode_key(3, WireType::LengthDelimited, buf);
        encode_varint(self.meta_len as u64, buf);
        self.meta.write(buf);
        if let Some(body) = &self.body {
            encode_key(4, WireType::LengthDelimited, buf);
            encode_varint(body.encoded_len() as u64, buf);
            body.encode(buf);
        }
    }
}

/// `capstan.v1.ObjectMeta`, written from the object's own metadata rather
/// than built as the generated message (a `String` per field, a `HashMap`
/// per label and annotation set) first.
struct TypedMeta<'a>(Option<&'a Map<String, Value>>);

/// ObjectMeta's fields, in field-number order (as generated code writes
/// them), with the metadata key each is read from.
const META_FIELDS: [(u32, MetaField); 10] = [
    (1, MetaField::String("name")),
    (2, MetaField::String("namespace")),
    (3, MetaField::String("uid")),
    (4, MetaField::String("resourceVersion")),
    (5, MetaField::Int64("generation")),
    (6, MetaField::String("creationTimestamp")),
    (7, MetaField::String("deletionTimestamp")),
    (8, MetaField::StringMap("labels")),
    (9, MetaField::StringMap("annotations")),
    (10, MetaField::String("generateName")),
];

#[derive(Clone, Copy)]
enum MetaField {
    String(&'static str),
    Int64(&'static str),
    /// A `map<string, string>`; values that are not strings read as empty,
    /// as the generated path reads them.
    StringMap(&'static str),
}

impl TypedMeta<'_> {
    fn get(&self, key: &str) -> Option<&Value> {
        self.0.and_then(|meta| meta.get(key))
    }

    fn str(&self, key: &str) -> &str {
        self.get(key).and_then(Value::as_str).unwrap_or_default()
    }

    fn int64(&self, key: &str) -> i64 {
        self.get(key).and_then(Value::as_i64).unwrap_or(0)
    }

    fn entries(&self, key: &str) -> impl Iterator<Item = (&str, &str)> {
        self.get(key)
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(key, value)| (key.as_str(), value.as_str().unwrap_or_default()))
    }

    fn len(&self) -> usize {
        META_FIELDS
            .into_iter()
            .map(|(tag, field)| match field {
                MetaField::String(key) => string_len(tag, self.str(key)),
                MetaField::Int64(key) => match self.int64(key) {
                    0 => 0,
                    n => prost::encoding::int64::encoded_len(tag, &n),
                },
                MetaField::StringMap(key) => self
                    .entries(key)
                    .map(|(k, v)| delimited_len(string_len(1, k) + string_len(2, v)))
                    .sum(),
            })
            .sum()
    }

    fn write(&self, buf: &mut BytesMut) {
        for (tag, field) in META_FIELDS {
            match field {
                MetaField::String(key) => write_string(tag, self.str(key), buf),
                MetaField::Int64(key) => match self.int64(key) {
                    0 => {}
                    n => prost::encoding::int64::encode(tag, &n, buf),
                },
                MetaField::StringMap(key) => {
                    for (k, v) in self.entries(key) {
                        encode_key(tag, WireType::LengthDelimited, buf);
                        encode_varint((string_len(1, k) + string_len(2, v)) as u64, buf);
                        write_string(1, k, buf);
                        write_string(2, v, buf);
                    }
                }
            }
        }
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
    use prost::Message;
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
                    "deletionTimestamp": "2026-11-22T11:00:00Z", "generateName": "web-",
                    "labels": {"app": "web", "": "empty key", "not-a-string": 1},
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
            assert_eq!(object(&obj).len(), Envelope::of(&obj).len());
        }
    }

    /// A get's object: from the cache, encoded once and the encoding kept
    /// for the next reader; from elsewhere, encoded from its tree. Both
    /// decode to the generated message.
    #[test]
    fn cached_objects_are_encoded_once() {
        for obj in objects() {
            let cached = Arc::new(crate::watch::cached::CachedObject::of(&Arc::new(
                obj.clone(),
            )));
            let first = lazy_object(&LazyObject::cached(cached.clone()));
            let again = lazy_object(&LazyObject::cached(cached));
            assert_eq!(first.as_ptr(), again.as_ptr(), "kept: {obj}");
            let decoded = pb::Object::decode(first).expect("decodes");
            assert_eq!(decoded, to_pb_object(&obj), "{obj}");
            let tree = lazy_object(&LazyObject::from(obj.clone()));
            assert_eq!(pb::Object::decode(tree).expect("decodes"), decoded);
        }
    }

    #[test]
    fn lists_decode_to_the_generated_message() {
        for (continue_token, remaining) in [(None, None), (Some("c".to_string()), Some(0))] {
            let list = ObjectList {
                items: objects()
                    .into_iter()
                    .map(crate::verbs::LazyObject::from)
                    .collect(),
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
