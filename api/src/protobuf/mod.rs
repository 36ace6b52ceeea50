//! Kubernetes protobuf: request bodies → the object's JSON, and the
//! object's JSON → response bodies and watch frames ([`encode_object`],
//! [`encode_watch_event`]).
//!
//! kubectl's typed commands (`create namespace`, `create deployment`, …)
//! send `application/vnd.kubernetes.protobuf`: the bytes `k8s\0`, then a
//! `runtime.Unknown` message whose `raw` field holds the typed object. The
//! pipeline works on JSON, so the object is turned into the JSON Go would
//! have written for it.
//!
//! The wire schema (field numbers and types) is generated at build time
//! from the `k8s-pb` crate (core/build.rs → [`schema`]); JSON field names
//! are recovered from the OpenAPI definitions ([`names`]).

mod decode;
mod encode;
mod names;
mod schema;
mod wire;

#[cfg(test)]
mod encode_tests;
#[cfg(test)]
mod tests;

use serde_json::{Map, Value};

use wire::{Reader, WireType};

pub use encode::{
    encode_list, encode_message, encode_object, encode_watch_event, parse_go_duration, watch_frame,
};
pub(crate) use names::{field_order, object_meta_order, FieldOrder};

pub const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";
/// The Content-Type of a protobuf watch stream (frames from
/// [`encode_watch_event`]).
pub const WATCH_MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf;stream=watch";

/// The magic bytes before every Kubernetes protobuf envelope.
const PREFIX: [u8; 4] = *b"k8s\0";

/// runtime.Unknown's field numbers. The envelope is read before any typed
/// schema is chosen, so these few are spelled out here.
const UNKNOWN_TYPE_META: u32 = 1;
const UNKNOWN_RAW: u32 = 2;
const UNKNOWN_CONTENT_ENCODING: u32 = 3;
const UNKNOWN_CONTENT_TYPE: u32 = 4;
const TYPE_META_API_VERSION: u32 = 1;
const TYPE_META_KIND: u32 = 2;

const META_V1_PACKAGE: &str = "k8s.io.apimachinery.pkg.apis.meta.v1";

#[derive(Debug, thiserror::Error)]
pub enum ProtobufError {
    #[error("the body is not a Kubernetes protobuf envelope (it must start with \"k8s\\x00\")")]
    MissingPrefix,
    #[error("malformed protobuf envelope: {0}")]
    MalformedEnvelope(&'static str),
    #[error("the protobuf envelope does not name the object's apiVersion and kind")]
    MissingTypeMeta,
    #[error("unsupported content encoding {0:?} in the protobuf envelope")]
    UnsupportedContentEncoding(String),
    #[error("unsupported content type {0:?} in the protobuf envelope")]
    UnsupportedContentType(String),
    #[error("no protobuf schema for apiVersion {api_version:?}, kind {kind:?}")]
    UnknownKind { api_version: String, kind: String },
    #[error("unknown protobuf message {0:?}")]
    UnknownMessage(String),
    #[error("malformed protobuf in {message}: {reason}")]
    Malformed { message: String, reason: String },
    #[error("invalid value in {message}: {reason}")]
    InvalidValue { message: String, reason: String },
    #[error("protobuf messages are nested more than {0} levels deep")]
    TooDeep(usize),
    #[error("the embedded object is not a JSON object")]
    NotAnObject,
}

/// Decodes a Kubernetes protobuf envelope into the object's JSON, with
/// `apiVersion` and `kind` from the envelope as its first two keys.
pub fn decode_envelope(body: &[u8]) -> Result<Value, ProtobufError> {
    decode_envelope_at(body, 0)
}

/// Decodes raw message bytes of a known message (e.g.
/// `"k8s.io.api.core.v1.Namespace"`). Most messages give an object; the
/// special types give their JSON form (a Time gives a string, or null).
pub fn decode_message(full_name: &str, raw: &[u8]) -> Result<Value, ProtobufError> {
    let index = schema::find(full_name)
        .ok_or_else(|| ProtobufError::UnknownMessage(full_name.to_owned()))?;
    Ok(decode::message(index, raw, 0)?.unwrap_or(Value::Null))
}

/// Envelope fields, borrowed from the body.
#[derive(Default)]
struct Envelope<'a> {
    api_version: String,
    kind: String,
    raw: &'a [u8],
    content_encoding: String,
    content_type: String,
}

fn decode_envelope_at(body: &[u8], depth: usize) -> Result<Value, ProtobufError> {
    if depth > decode::MAX_DEPTH {
        return Err(ProtobufError::TooDeep(decode::MAX_DEPTH));
    }
    let rest = body
        .strip_prefix(&PREFIX)
        .ok_or(ProtobufError::MissingPrefix)?;
    let envelope = read_envelope(rest).map_err(ProtobufError::MalformedEnvelope)?;
    if envelope.api_version.is_empty() || envelope.kind.is_empty() {
        return Err(ProtobufError::MissingTypeMeta);
    }
    if !envelope.content_encoding.is_empty() {
        return Err(ProtobufError::UnsupportedContentEncoding(
            envelope.content_encoding,
        ));
    }
    let object = match envelope.content_type.split(';').next().unwrap_or("").trim() {
        "" | MEDIA_TYPE => {
            let index = message_for(&envelope.api_version, &envelope.kind).ok_or_else(|| {
                ProtobufError::UnknownKind {
                    api_version: envelope.api_version.clone(),
                    kind: envelope.kind.clone(),
                }
            })?;
            decode::message(index, envelope.raw, depth)?
        }
        "application/json" => Some(serde_json::from_slice(envelope.raw).map_err(|error| {
            ProtobufError::InvalidValue {
                message: "runtime.Unknown".to_owned(),
                reason: format!("raw is not JSON: {error}"),
            }
        })?),
        _ => return Err(ProtobufError::UnsupportedContentType(envelope.content_type)),
    };
    let fields = match object {
        Some(Value::Object(fields)) => fields,
        None => Map::new(),
        Some(_) => return Err(ProtobufError::NotAnObject),
    };
    let mut out = Map::with_capacity(fields.len() + 2);
    out.insert("apiVersion".to_owned(), Value::String(envelope.api_version));
    out.insert("kind".to_owned(), Value::String(envelope.kind));
    for (key, value) in fields {
        if key != "apiVersion" && key != "kind" {
            out.insert(key, value);
        }
    }
    Ok(Value::Object(out))
}

fn read_envelope(bytes: &[u8]) -> wire::WireResult<Envelope<'_>> {
    let mut envelope = Envelope::default();
    let mut reader = Reader::new(bytes);
    while !reader.is_empty() {
        let (tag, wire_type) = reader.key()?;
        match (tag, wire_type) {
            (UNKNOWN_TYPE_META, WireType::Len) => {
                let mut type_meta = Reader::new(reader.bytes()?);
                while !type_meta.is_empty() {
                    match type_meta.key()? {
                        (TYPE_META_API_VERSION, WireType::Len) => {
                            envelope.api_version = text(type_meta.bytes()?)
                        }
                        (TYPE_META_KIND, WireType::Len) => envelope.kind = text(type_meta.bytes()?),
                        (other, wire_type) => type_meta.skip(wire_type, other)?,
                    }
                }
            }
            (UNKNOWN_RAW, WireType::Len) => envelope.raw = reader.bytes()?,
            (UNKNOWN_CONTENT_ENCODING, WireType::Len) => {
                envelope.content_encoding = text(reader.bytes()?)
            }
            (UNKNOWN_CONTENT_TYPE, WireType::Len) => envelope.content_type = text(reader.bytes()?),
            (UNKNOWN_TYPE_META..=UNKNOWN_CONTENT_TYPE, _) => {
                return Err("envelope field has the wrong wire type")
            }
            (other, wire_type) => reader.skip(wire_type, other)?,
        }
    }
    Ok(envelope)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The message for an apiVersion and kind. k8s-pb marks served kinds with
/// their apiVersion, which gives each group's proto package; other kinds of
/// a group (lists, options, subresource bodies) live in the same package.
fn message_for(api_version: &str, kind: &str) -> Option<u32> {
    if kind.is_empty() || !kind.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    if let Some(resource) = schema::RESOURCES
        .iter()
        .find(|resource| resource.api_version == api_version && resource.kind == kind)
    {
        return Some(resource.message);
    }
    candidate_packages(api_version)
        .iter()
        .find_map(|package| schema::find(&format!("{package}.{kind}")))
}

/// Proto packages that may hold kinds of `api_version`, best guess first.
/// meta/v1 comes last for the option kinds every group version registers
/// (DeleteOptions with `apiVersion: apps/v1`).
fn candidate_packages(api_version: &str) -> Vec<String> {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let package_of = |index: u32| schema::message(index).map(schema::Message::package);
    let mut packages: Vec<String> = Vec::new();
    let mut push = |package: String| {
        if !packages.contains(&package) {
            packages.push(package);
        }
    };
    for resource in schema::RESOURCES {
        if resource.api_version == api_version {
            if let Some(package) = package_of(resource.message) {
                push(package.to_owned());
            }
        }
    }
    // Another version of a known group: same module, other version.
    for resource in schema::RESOURCES {
        if group_of(resource.api_version) == group {
            if let Some((module, _)) = package_of(resource.message).and_then(|p| p.rsplit_once('.'))
            {
                push(format!("{module}.{version}"));
            }
        }
    }
    // k8s-pb's layout: api/<first label of the group>/<version>.
    match group {
        "" => push(format!("k8s.io.api.core.{version}")),
        "meta.k8s.io" => push(format!("k8s.io.apimachinery.pkg.apis.meta.{version}")),
        _ => {
            let label = group.split('.').next().unwrap_or(group);
            push(format!("k8s.io.api.{label}.{version}"));
        }
    }
    push(META_V1_PACKAGE.to_owned());
    packages
}

fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(group, _)| group)
}
