//! An object's JSON → the protobuf bytes Go's generated marshallers would
//! write for it, for `Accept: application/vnd.kubernetes.protobuf`.
//!
//! What gets written:
//! - Fields go out in field-number order, each singular field once,
//!   repeated fields unpacked (the protos are proto2 and never ask for
//!   packing), maps as entry messages (key = 1, value = 2, both always
//!   written) sorted by key, as gogo's generated code sorts them.
//! - A field present in the JSON with a non-null value is written, zero or
//!   not: `replicas: 0` and `emptyDir: {}` mean something to a Go client,
//!   whose pointer fields must come out non-nil.
//! - A field absent (or null) in the JSON is left out, which is what Go
//!   does for its pointer fields. For non-pointer fields Go writes the zero
//!   value instead; leaving it out decodes to the very same zero value, so
//!   Go clients cannot tell the difference. Where the Go types are known
//!   here (the meta/v1 types every response carries: ObjectMeta, ListMeta,
//!   Status, …, and the special types below) the zeros are written as Go
//!   writes them, so those messages match upstream byte for byte. The
//!   proto files k8s-pb is generated from do not say which Go fields are
//!   pointers, so other kinds cannot do better without a hand-kept list.
//! - JSON keys the schema does not know are skipped: upstream's typed
//!   objects drop unknown fields when they are decoded, so its responses
//!   never carry them either, and protobuf has no place to put them.
//!
//! The special types follow their hand-written Go marshallers: `Time` is
//! whole seconds (nanos written as 0), `MicroTime` keeps its nanoseconds,
//! a zero time is an empty message, `Quantity` is its string (never
//! empty), `IntOrString` always writes all three fields, and embedded
//! objects (RawExtension, FieldsV1, apiextensions JSON) carry their JSON
//! bytes.

use std::collections::HashSet;
use std::sync::OnceLock;

use base64::Engine as _;
use serde_json::{Map, Value};

use super::decode::MAX_DEPTH;
use super::names::{self, Shape};
use super::schema::{self, Field, Kind, Label, Message};
use super::wire::{self, WireType};
use super::{ProtobufError, META_V1_PACKAGE, PREFIX};

/// runtime.Unknown and runtime.TypeMeta field numbers, as the decoder's.
use super::{
    TYPE_META_API_VERSION, TYPE_META_KIND, UNKNOWN_CONTENT_ENCODING, UNKNOWN_CONTENT_TYPE,
    UNKNOWN_RAW, UNKNOWN_TYPE_META,
};

/// Encodes an object into the full envelope (`k8s\0` + runtime.Unknown)
/// that upstream sends for `application/vnd.kubernetes.protobuf`. The
/// object's own `apiVersion` and `kind` choose the message and fill the
/// envelope's type; kinds without a protobuf schema (custom resources)
/// give [`ProtobufError::UnknownKind`], for which upstream answers 406.
pub fn encode_object(object: &Value) -> Result<Vec<u8>, ProtobufError> {
    let fields = object.as_object().ok_or(ProtobufError::NotAnObject)?;
    let text = |key: &str| fields.get(key).and_then(Value::as_str).unwrap_or("");
    let (api_version, kind) = (text("apiVersion"), text("kind"));
    if api_version.is_empty() || kind.is_empty() {
        return Err(ProtobufError::MissingTypeMeta);
    }
    let index =
        super::message_for(api_version, kind).ok_or_else(|| ProtobufError::UnknownKind {
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
        })?;
    let raw = encode_root(index, object)?;
    Ok(envelope(api_version, kind, &raw))
}

/// A list in the full envelope from its head (`apiVersion`, `kind`,
/// `metadata`; no `items`) and its items' own envelopes (`encode_object`'s
/// output, which the watch cache keeps per object): the bytes
/// `encode_object` writes for the whole list, without encoding any item
/// again. Items must all be of one type, the list's.
pub fn encode_list<'a>(
    head: &Value,
    items: impl IntoIterator<Item = &'a [u8]>,
) -> Result<Vec<u8>, ProtobufError> {
    let fields = head.as_object().ok_or(ProtobufError::NotAnObject)?;
    let text = |key: &str| fields.get(key).and_then(Value::as_str).unwrap_or("");
    let (api_version, kind) = (text("apiVersion"), text("kind"));
    let index =
        super::message_for(api_version, kind).ok_or_else(|| ProtobufError::UnknownKind {
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
        })?;
    let (items_tag, item_message) = list_items_field(index).ok_or_else(|| {
        ProtobufError::UnknownMessage(format!("{api_version} {kind} (not a list)"))
    })?;
    // Fields are written in tag order and `items` is the last: the head's
    // fields, then each item.
    let mut raw = encode_root(index, head)?;
    let mut item_type: Option<(String, String)> = None;
    for item in items {
        let envelope = item
            .strip_prefix(&PREFIX)
            .ok_or(ProtobufError::MissingPrefix)
            .and_then(|rest| {
                super::read_envelope(rest).map_err(ProtobufError::MalformedEnvelope)
            })?;
        match &item_type {
            Some((api_version, kind))
                if *api_version == envelope.api_version && *kind == envelope.kind => {}
            Some(_) => return Err(ProtobufError::MissingTypeMeta),
            None => {
                if super::message_for(&envelope.api_version, &envelope.kind) != Some(item_message) {
                    return Err(ProtobufError::UnknownKind {
                        api_version: envelope.api_version,
                        kind: envelope.kind,
                    });
                }
                item_type = Some((envelope.api_version.clone(), envelope.kind.clone()));
            }
        }
        wire::put_key(&mut raw, items_tag, WireType::Len);
        wire::put_bytes(&mut raw, envelope.raw);
    }
    Ok(envelope(api_version, kind, &raw))
}

/// The tag and item message of a list message's `items`, when it is the
/// message's repeated message field with the highest tag.
fn list_items_field(index: u32) -> Option<(u32, u32)> {
    let (message, layout) = (schema::message(index)?, names::layout(index)?);
    let at = layout
        .fields
        .iter()
        .position(|name| &*name.json == "items")?;
    let field = message.fields.get(at)?;
    let highest = message.fields.iter().map(|f| f.tag).max()?;
    match (field.label, field.kind) {
        (Label::Repeated, Kind::Message(item)) if field.tag == highest => Some((field.tag, item)),
        _ => None,
    }
}

/// Encodes message `full_name` (e.g. `"k8s.io.api.core.v1.Pod"`) from its
/// JSON, without an envelope: the inverse of
/// [`decode_message`](super::decode_message).
pub fn encode_message(full_name: &str, value: &Value) -> Result<Vec<u8>, ProtobufError> {
    let index = schema::find(full_name)
        .ok_or_else(|| ProtobufError::UnknownMessage(full_name.to_owned()))?;
    encode_root(index, value)
}

/// One frame of a `application/vnd.kubernetes.protobuf;stream=watch`
/// response, as upstream writes it: a 4-byte big-endian length, then a
/// meta/v1 WatchEvent encoded without an envelope (the stream serializer is
/// the raw one), whose `object.raw` holds the object's full envelope (the
/// embedded encoder is the enveloping one).
pub fn encode_watch_event(event_type: &str, object: &Value) -> Result<Vec<u8>, ProtobufError> {
    watch_frame(event_type, &encode_object(object)?)
}

/// The watch frame of an object already encoded with `encode_object`
/// (shared by every watcher of a change).
pub fn watch_frame(event_type: &str, embedded: &[u8]) -> Result<Vec<u8>, ProtobufError> {
    // WatchEvent{type = 1, object = 2}, RawExtension{raw = 1}; both Go
    // fields are values, so both are always written.
    let mut raw_extension = Vec::with_capacity(embedded.len() + 6);
    wire::put_key(&mut raw_extension, 1, WireType::Len);
    wire::put_bytes(&mut raw_extension, embedded);
    let mut event = Vec::with_capacity(raw_extension.len() + event_type.len() + 8);
    wire::put_key(&mut event, 1, WireType::Len);
    wire::put_bytes(&mut event, event_type.as_bytes());
    wire::put_key(&mut event, 2, WireType::Len);
    wire::put_bytes(&mut event, &raw_extension);
    let length = u32::try_from(event.len()).map_err(|_| ProtobufError::InvalidValue {
        message: "k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent".to_owned(),
        reason: "the event is larger than a 4-byte frame length can describe".to_owned(),
    })?;
    let mut frame = Vec::with_capacity(event.len() + 4);
    frame.extend_from_slice(&length.to_be_bytes());
    frame.extend_from_slice(&event);
    Ok(frame)
}

/// `k8s\0` + runtime.Unknown{typeMeta, raw, contentEncoding, contentType}:
/// upstream's NestedMarshalTo writes the last two even though empty.
fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let mut type_meta = Vec::with_capacity(api_version.len() + kind.len() + 4);
    wire::put_key(&mut type_meta, TYPE_META_API_VERSION, WireType::Len);
    wire::put_bytes(&mut type_meta, api_version.as_bytes());
    wire::put_key(&mut type_meta, TYPE_META_KIND, WireType::Len);
    wire::put_bytes(&mut type_meta, kind.as_bytes());
    let mut out = Vec::with_capacity(PREFIX.len() + type_meta.len() + raw.len() + 16);
    out.extend_from_slice(&PREFIX);
    wire::put_key(&mut out, UNKNOWN_TYPE_META, WireType::Len);
    wire::put_bytes(&mut out, &type_meta);
    wire::put_key(&mut out, UNKNOWN_RAW, WireType::Len);
    wire::put_bytes(&mut out, raw);
    wire::put_key(&mut out, UNKNOWN_CONTENT_ENCODING, WireType::Len);
    wire::put_bytes(&mut out, &[]);
    wire::put_key(&mut out, UNKNOWN_CONTENT_TYPE, WireType::Len);
    wire::put_bytes(&mut out, &[]);
    out
}

fn encode_root(index: u32, value: &Value) -> Result<Vec<u8>, ProtobufError> {
    let mut out = Vec::new();
    match message(index, Input::Json(value), 0, &mut out) {
        Ok(()) => Ok(out),
        Err(Failure::TooDeep) => Err(ProtobufError::TooDeep(MAX_DEPTH)),
        Err(Failure::Invalid { path, reason }) => Err(ProtobufError::InvalidValue {
            message: schema::message(index).map_or_else(String::new, |m| m.name.to_owned()),
            reason: if path.is_empty() {
                reason
            } else {
                format!("{}: {reason}", render_path(&path))
            },
        }),
    }
}

/// Why a value could not be encoded, with the JSON path to it (innermost
/// segment first, as it is collected while unwinding).
enum Failure {
    TooDeep,
    Invalid { path: Vec<String>, reason: String },
}

fn invalid(reason: impl Into<String>) -> Failure {
    Failure::Invalid {
        path: Vec::new(),
        reason: reason.into(),
    }
}

/// Adds a path segment to a failure from below; the segment is built only
/// on failure, as this wraps every field written.
fn within(segment: impl FnOnce() -> String) -> impl FnOnce(Failure) -> Failure {
    move |failure| match failure {
        Failure::Invalid { mut path, reason } => {
            path.push(segment());
            Failure::Invalid { path, reason }
        }
        too_deep => too_deep,
    }
}

fn render_path(path: &[String]) -> String {
    let mut out = String::new();
    for segment in path.iter().rev() {
        if !segment.starts_with('[') && !out.is_empty() {
            out.push('.');
        }
        out.push_str(segment);
    }
    out
}

fn describe(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// What a message is encoded from.
#[derive(Clone, Copy)]
enum Input<'a> {
    /// Go's zero value of the type: a value field the JSON left out.
    Zero,
    Json(&'a Value),
    /// An embedded Go struct whose fields sit in the parent's JSON object.
    Inline(&'a Map<String, Value>),
}

fn message(index: u32, input: Input<'_>, depth: usize, out: &mut Vec<u8>) -> Result<(), Failure> {
    if depth > MAX_DEPTH {
        return Err(Failure::TooDeep);
    }
    let (Some(message), Some(layout)) = (schema::message(index), names::layout(index)) else {
        return Err(invalid(format!("unknown protobuf message #{index}")));
    };
    let json = match input {
        Input::Json(Value::Null) | Input::Zero => None,
        Input::Json(value) => Some(value),
        Input::Inline(fields) => {
            return match layout.shape {
                Shape::Object => object(index, message, &layout.fields, fields, depth, out),
                _ => Ok(()),
            };
        }
    };
    match layout.shape {
        Shape::Object => match json {
            None => object(index, message, &layout.fields, &Map::new(), depth, out),
            Some(Value::Object(fields)) => {
                object(index, message, &layout.fields, fields, depth, out)
            }
            Some(other) => Err(invalid(format!(
                "expected an object, got {}",
                describe(other)
            ))),
        },
        Shape::Time => time(message, json, false, out),
        Shape::MicroTime => time(message, json, true, out),
        Shape::Duration => {
            let nanos = match json {
                None => 0,
                Some(Value::String(text)) => parse_go_duration(text)
                    .ok_or_else(|| invalid(format!("{text:?} is not a duration")))?,
                Some(other) => {
                    return Err(invalid(format!(
                        "expected a duration string, got {}",
                        describe(other)
                    )))
                }
            };
            wire::put_key(out, tag_of(message, "duration")?, WireType::Varint);
            wire::put_varint(out, nanos as u64);
            Ok(())
        }
        Shape::IntOrString => {
            let (kind, int_val, str_val) = match json {
                None => (0, 0, ""),
                Some(Value::String(text)) => (1, 0, text.as_str()),
                Some(number @ Value::Number(_)) => (0, int32(number)?, ""),
                Some(other) => {
                    return Err(invalid(format!(
                        "expected an integer or a string, got {}",
                        describe(other)
                    )))
                }
            };
            wire::put_key(out, tag_of(message, "type")?, WireType::Varint);
            wire::put_varint(out, kind);
            wire::put_key(out, tag_of(message, "intval")?, WireType::Varint);
            wire::put_varint(out, i64::from(int_val) as u64);
            wire::put_key(out, tag_of(message, "strval")?, WireType::Len);
            wire::put_bytes(out, str_val.as_bytes());
            Ok(())
        }
        Shape::Quantity => {
            let text = match json {
                // Go prints a zero Quantity as "0", and its parser rejects "".
                None => "0".to_owned(),
                Some(Value::String(text)) if text.is_empty() => "0".to_owned(),
                Some(Value::String(text)) => text.clone(),
                // Go's Quantity accepts JSON numbers too.
                Some(Value::Number(number)) => number.to_string(),
                Some(other) => {
                    return Err(invalid(format!(
                        "expected a quantity string, got {}",
                        describe(other)
                    )))
                }
            };
            wire::put_key(out, tag_of(message, "string")?, WireType::Len);
            wire::put_bytes(out, text.as_bytes());
            Ok(())
        }
        Shape::RawJson => {
            if let Some(value) = json {
                let raw = serde_json::to_vec(value)
                    .map_err(|error| invalid(format!("cannot serialize embedded JSON: {error}")))?;
                wire::put_key(out, tag_of(message, "raw")?, WireType::Len);
                wire::put_bytes(out, &raw);
            }
            Ok(())
        }
        Shape::StringList => match json {
            None => Ok(()),
            Some(Value::Array(items)) => strings(tag_of(message, "items")?, items, out),
            Some(other) => Err(invalid(format!(
                "expected an array of strings, got {}",
                describe(other)
            ))),
        },
        Shape::PropsOrArray => match json {
            None => Ok(()),
            Some(schema @ Value::Object(_)) => nested(message, "schema", schema, depth, out),
            Some(Value::Array(items)) => {
                let field = field_named(message, "jsonschemas")?;
                let Kind::Message(props) = field.kind else {
                    return Err(invalid("JSONSchemas is not a message field"));
                };
                for (position, item) in items.iter().enumerate() {
                    put_message(field.tag, props, Input::Json(item), depth, out)
                        .map_err(within(|| format!("[{position}]")))?;
                }
                Ok(())
            }
            Some(other) => Err(invalid(format!(
                "expected an object or an array, got {}",
                describe(other)
            ))),
        },
        Shape::PropsOrBool => {
            // Go: an object means "allowed, with this schema".
            let (allows, schema) = match json {
                None => (false, None),
                Some(Value::Bool(allows)) => (*allows, None),
                Some(schema @ Value::Object(_)) => (true, Some(schema)),
                Some(other) => {
                    return Err(invalid(format!(
                        "expected a boolean or an object, got {}",
                        describe(other)
                    )))
                }
            };
            wire::put_key(out, tag_of(message, "allows")?, WireType::Varint);
            wire::put_varint(out, u64::from(allows));
            match schema {
                Some(schema) => nested(message, "schema", schema, depth, out),
                None => Ok(()),
            }
        }
        Shape::PropsOrStringArray => match json {
            None => Ok(()),
            Some(schema @ Value::Object(_)) => nested(message, "schema", schema, depth, out),
            Some(Value::Array(items)) => strings(tag_of(message, "property")?, items, out),
            Some(other) => Err(invalid(format!(
                "expected an object or an array, got {}",
                describe(other)
            ))),
        },
    }
}

/// A message shaped like a Go struct: its fields in field-number order.
fn object(
    index: u32,
    message: &Message,
    names: &[names::FieldName],
    fields: &Map<String, Value>,
    depth: usize,
    out: &mut Vec<u8>,
) -> Result<(), Failure> {
    for (field, name) in message.fields.iter().zip(names) {
        if name.inline {
            let Kind::Message(nested) = field.kind else {
                continue;
            };
            // Go embeds these by value, so it would write even an empty
            // one; an empty one decodes the same either way.
            let mut buf = Vec::new();
            self::message(nested, Input::Inline(fields), depth + 1, &mut buf)?;
            if !buf.is_empty() {
                wire::put_key(out, field.tag, WireType::Len);
                wire::put_bytes(out, &buf);
            }
            continue;
        }
        match fields.get(&*name.json).filter(|value| !value.is_null()) {
            Some(value) => {
                put_field(field, value, depth, out).map_err(within(|| name.json.to_string()))?
            }
            None if field.label == Label::Single && always_written(index, field) => {
                put_value(field.tag, field.kind, Input::Zero, depth, out)
                    .map_err(within(|| name.json.to_string()))?
            }
            None => {}
        }
    }
    Ok(())
}

fn put_field(field: &Field, value: &Value, depth: usize, out: &mut Vec<u8>) -> Result<(), Failure> {
    match field.label {
        Label::Single => put_value(field.tag, field.kind, Input::Json(value), depth, out),
        Label::Repeated => {
            let items = value
                .as_array()
                .ok_or_else(|| invalid(format!("expected an array, got {}", describe(value))))?;
            for (position, item) in items.iter().enumerate() {
                put_value(field.tag, field.kind, Input::Json(item), depth, out)
                    .map_err(within(|| format!("[{position}]")))?;
            }
            Ok(())
        }
        Label::Map(key_kind) => {
            let entries = value
                .as_object()
                .ok_or_else(|| invalid(format!("expected an object, got {}", describe(value))))?;
            // gogo's generated code sorts map keys; Go sorts strings by bytes,
            // as Rust's `str` ordering does.
            let mut keys: Vec<&String> = entries.keys().collect();
            keys.sort_unstable();
            let mut entry = Vec::new();
            for key in keys {
                entry.clear();
                let at = || within(|| format!("[{key}]"));
                put_map_key(key_kind, key, &mut entry).map_err(at())?;
                let value = entries.get(key).map_or(Input::Zero, Input::Json);
                put_value(2, field.kind, value, depth, &mut entry).map_err(at())?;
                wire::put_key(out, field.tag, WireType::Len);
                wire::put_bytes(out, &entry);
            }
            Ok(())
        }
    }
}

/// A map key, field 1 of the entry. JSON object keys are strings; a map
/// with numeric or boolean keys (none in Kubernetes today) spells them as
/// Go's encoding/json does.
fn put_map_key(kind: Kind, key: &str, out: &mut Vec<u8>) -> Result<(), Failure> {
    if kind == Kind::String {
        wire::put_key(out, 1, WireType::Len);
        wire::put_bytes(out, key.as_bytes());
        return Ok(());
    }
    let parsed = key
        .parse::<i64>()
        .map(Value::from)
        .or_else(|_| key.parse::<u64>().map(Value::from))
        .or_else(|_| key.parse::<bool>().map(Value::from))
        .map_err(|_| invalid(format!("map key {key:?} is not a {kind:?}")))?;
    put_value(1, kind, Input::Json(&parsed), 0, out)
}

/// Writes one value with its key. `Input::Json(null)` inside a list or a
/// map is Go's zero value of the element type, as Go's JSON decoder makes it.
fn put_value(
    tag: u32,
    kind: Kind,
    input: Input<'_>,
    depth: usize,
    out: &mut Vec<u8>,
) -> Result<(), Failure> {
    let json = match input {
        Input::Json(Value::Null) | Input::Zero | Input::Inline(_) => None,
        Input::Json(value) => Some(value),
    };
    // Integer casts below are the protobuf encoding itself: negative int32s
    // are sign-extended to ten bytes, fixed widths are two's complement.
    match kind {
        Kind::Message(index) => put_message(tag, index, input, depth, out),
        Kind::String => {
            let text = match json {
                None => "",
                Some(Value::String(text)) => text,
                Some(other) => {
                    return Err(invalid(format!(
                        "expected a string, got {}",
                        describe(other)
                    )))
                }
            };
            wire::put_key(out, tag, WireType::Len);
            wire::put_bytes(out, text.as_bytes());
            Ok(())
        }
        Kind::Bytes => {
            let bytes = match json {
                None => Vec::new(),
                Some(Value::String(text)) => base64_decode(text)?,
                Some(other) => {
                    return Err(invalid(format!(
                        "expected a base64 string, got {}",
                        describe(other)
                    )))
                }
            };
            wire::put_key(out, tag, WireType::Len);
            wire::put_bytes(out, &bytes);
            Ok(())
        }
        Kind::Bool => {
            let flag = match json {
                None => false,
                Some(Value::Bool(flag)) => *flag,
                Some(other) => {
                    return Err(invalid(format!(
                        "expected a boolean, got {}",
                        describe(other)
                    )))
                }
            };
            wire::put_key(out, tag, WireType::Varint);
            wire::put_varint(out, u64::from(flag));
            Ok(())
        }
        Kind::Int32 | Kind::Enum => {
            let n = json.map_or(Ok(0), int32)?;
            wire::put_key(out, tag, WireType::Varint);
            wire::put_varint(out, i64::from(n) as u64);
            Ok(())
        }
        Kind::Int64 => {
            let n = json.map_or(Ok(0), int64)?;
            wire::put_key(out, tag, WireType::Varint);
            wire::put_varint(out, n as u64);
            Ok(())
        }
        Kind::Uint32 | Kind::Uint64 => {
            let n = json.map_or(Ok(0), |value| unsigned(value, kind == Kind::Uint32))?;
            wire::put_key(out, tag, WireType::Varint);
            wire::put_varint(out, n);
            Ok(())
        }
        Kind::Sint32 => {
            let n = json.map_or(Ok(0), int32)?;
            wire::put_key(out, tag, WireType::Varint);
            wire::put_varint(out, u64::from(((n << 1) ^ (n >> 31)) as u32));
            Ok(())
        }
        Kind::Sint64 => {
            let n = json.map_or(Ok(0), int64)?;
            wire::put_key(out, tag, WireType::Varint);
            wire::put_varint(out, ((n << 1) ^ (n >> 63)) as u64);
            Ok(())
        }
        Kind::Fixed32 | Kind::Sfixed32 => {
            let n = match json {
                None => 0,
                Some(value) if kind == Kind::Fixed32 => unsigned(value, true)? as u32,
                Some(value) => int32(value)? as u32,
            };
            wire::put_key(out, tag, WireType::Fixed32);
            out.extend_from_slice(&n.to_le_bytes());
            Ok(())
        }
        Kind::Fixed64 | Kind::Sfixed64 => {
            let n = match json {
                None => 0,
                Some(value) if kind == Kind::Fixed64 => unsigned(value, false)?,
                Some(value) => int64(value)? as u64,
            };
            wire::put_key(out, tag, WireType::Fixed64);
            out.extend_from_slice(&n.to_le_bytes());
            Ok(())
        }
        Kind::Float => {
            let n = json.map_or(Ok(0.0), float)?;
            wire::put_key(out, tag, WireType::Fixed32);
            out.extend_from_slice(&(n as f32).to_le_bytes());
            Ok(())
        }
        Kind::Double => {
            let n = json.map_or(Ok(0.0), float)?;
            wire::put_key(out, tag, WireType::Fixed64);
            out.extend_from_slice(&n.to_le_bytes());
            Ok(())
        }
    }
}

/// A message field: always written once asked for, even when empty, since
/// presence is what a Go pointer field records (`emptyDir: {}`).
fn put_message(
    tag: u32,
    index: u32,
    input: Input<'_>,
    depth: usize,
    out: &mut Vec<u8>,
) -> Result<(), Failure> {
    let mut buf = Vec::new();
    message(index, input, depth + 1, &mut buf)?;
    wire::put_key(out, tag, WireType::Len);
    wire::put_bytes(out, &buf);
    Ok(())
}

fn nested(
    message: &Message,
    name: &str,
    value: &Value,
    depth: usize,
    out: &mut Vec<u8>,
) -> Result<(), Failure> {
    let field = field_named(message, name)?;
    let Kind::Message(index) = field.kind else {
        return Err(invalid(format!("{name} is not a message field")));
    };
    put_message(field.tag, index, Input::Json(value), depth, out)
}

fn strings(tag: u32, items: &[Value], out: &mut Vec<u8>) -> Result<(), Failure> {
    for (position, item) in items.iter().enumerate() {
        put_value(tag, Kind::String, Input::Json(item), 0, out)
            .map_err(within(|| format!("[{position}]")))?;
    }
    Ok(())
}

/// The field whose name normalizes to `name`; matching that way, as the
/// decoder does, survives changes in prost's snake-casing.
fn field_named<'m>(message: &'m Message, name: &str) -> Result<&'m Field, Failure> {
    // `names::normalize` without its allocation: this runs for every Time.
    let normalized = |field: &&Field| {
        field
            .name
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .map(|c| c.to_ascii_lowercase())
            .eq(name.chars())
    };
    message
        .fields
        .iter()
        .find(normalized)
        .ok_or_else(|| invalid(format!("{} has no field {name:?}", message.name)))
}

fn tag_of(message: &Message, name: &str) -> Result<u32, Failure> {
    field_named(message, name).map(|field| field.tag)
}

/// `Time` and `MicroTime`: Timestamp{seconds = 1, nanos = 2}, both always
/// written, or nothing at all for Go's zero time. `Time` drops sub-second
/// precision on the wire (upstream's ProtoTime leaves Nanos unset, so JSON
/// and protobuf clients agree).
fn time(
    message: &Message,
    json: Option<&Value>,
    micro: bool,
    out: &mut Vec<u8>,
) -> Result<(), Failure> {
    let text = match json {
        None => return Ok(()),
        Some(Value::String(text)) => text,
        Some(other) => {
            return Err(invalid(format!(
                "expected an RFC 3339 time, got {}",
                describe(other)
            )))
        }
    };
    let time = chrono::DateTime::parse_from_rfc3339(text)
        .map_err(|error| invalid(format!("{text:?} is not an RFC 3339 time: {error}")))?;
    let seconds = time.timestamp();
    let nanos = if micro {
        time.timestamp_subsec_nanos()
    } else {
        0
    };
    if seconds == GO_ZERO_TIME_UNIX && time.timestamp_subsec_nanos() == 0 {
        return Ok(());
    }
    wire::put_key(out, tag_of(message, "seconds")?, WireType::Varint);
    wire::put_varint(out, seconds as u64);
    wire::put_key(out, tag_of(message, "nanos")?, WireType::Varint);
    wire::put_varint(out, u64::from(nanos));
    Ok(())
}

/// `time.Time{}` in Unix seconds, which Go's marshallers treat as unset.
const GO_ZERO_TIME_UNIX: i64 = -62_135_596_800;

fn int64(value: &Value) -> Result<i64, Failure> {
    if let Some(n) = value.as_i64() {
        return Ok(n);
    }
    // Integral floats (`3.0`) are what some clients write for integers.
    match value.as_f64() {
        Some(f) if f.fract() == 0.0 && f >= i64::MIN as f64 && f < i64::MAX as f64 => Ok(f as i64),
        _ => Err(invalid(format!(
            "expected an integer, got {}",
            match value {
                Value::Number(n) => n.to_string(),
                other => describe(other).to_owned(),
            }
        ))),
    }
}

fn int32(value: &Value) -> Result<i32, Failure> {
    let n = int64(value)?;
    i32::try_from(n).map_err(|_| invalid(format!("{n} does not fit in a 32-bit integer")))
}

fn unsigned(value: &Value, narrow: bool) -> Result<u64, Failure> {
    let n = match value.as_u64() {
        Some(n) => n,
        None => {
            u64::try_from(int64(value)?).map_err(|_| invalid("expected a non-negative integer"))?
        }
    };
    if narrow && u32::try_from(n).is_err() {
        return Err(invalid(format!("{n} does not fit in 32 bits")));
    }
    Ok(n)
}

fn float(value: &Value) -> Result<f64, Failure> {
    value
        .as_f64()
        .ok_or_else(|| invalid(format!("expected a number, got {}", describe(value))))
}

/// Go's encoding/json reads `[]byte` as standard base64; padding is
/// accepted either way so a client's unpadded value still round-trips.
fn base64_decode(text: &str) -> Result<Vec<u8>, Failure> {
    use base64::engine::{general_purpose, DecodePaddingMode, GeneralPurpose};
    const LENIENT: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        general_purpose::GeneralPurposeConfig::new()
            .with_decode_padding_mode(DecodePaddingMode::Indifferent),
    );
    LENIENT
        .decode(text)
        .map_err(|error| invalid(format!("not valid base64: {error}")))
}

/// Go's `time.ParseDuration`: an optional sign, then one or more decimal
/// numbers, each with an optional fraction and a unit (`1h2m3.5s`,
/// `300ms`); a bare `0` is allowed.
pub fn parse_go_duration(text: &str) -> Option<i64> {
    let (negative, mut rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if rest == "0" {
        return Some(0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: u64 = 0;
    while !rest.is_empty() {
        let whole_len = rest.bytes().take_while(u8::is_ascii_digit).count();
        let whole_text = &rest[..whole_len];
        rest = &rest[whole_len..];
        let mut fraction_text = "";
        if let Some(after_point) = rest.strip_prefix('.') {
            let fraction_len = after_point.bytes().take_while(u8::is_ascii_digit).count();
            fraction_text = &after_point[..fraction_len];
            rest = &after_point[fraction_len..];
        }
        if whole_text.is_empty() && fraction_text.is_empty() {
            return None;
        }
        let unit_len = rest
            .find(|c: char| c == '.' || c.is_ascii_digit())
            .unwrap_or(rest.len());
        let unit: u64 = match &rest[..unit_len] {
            "ns" => 1,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return None,
        };
        rest = &rest[unit_len..];
        let whole: u64 = if whole_text.is_empty() {
            0
        } else {
            whole_text.parse().ok()?
        };
        let mut amount = whole.checked_mul(unit)?;
        // Fraction digits past nanosecond precision cannot matter.
        let mut scale = unit;
        for digit in fraction_text.bytes().take(19) {
            scale /= 10;
            amount = amount.checked_add(u64::from(digit - b'0') * scale)?;
        }
        total = total.checked_add(amount)?;
    }
    if negative {
        0i64.checked_sub_unsigned(total)
    } else {
        i64::try_from(total).ok()
    }
}

/// Fields Go declares by value (not as pointers) in the meta/v1 types that
/// every response carries, keyed by message and prost field name. Go
/// writes these even when zero; doing the same keeps those messages byte
/// for byte equal to upstream's. Taken from apimachinery's types.go.
const GO_VALUE_FIELDS: &[(&str, &[&str])] = &[
    (
        "ObjectMeta",
        &[
            "name",
            "generate_name",
            "namespace",
            "self_link",
            "uid",
            "resource_version",
            "generation",
            "creation_timestamp",
        ],
    ),
    ("ListMeta", &["self_link", "resource_version", "continue"]),
    ("Status", &["status", "message", "reason", "code"]),
    (
        "StatusDetails",
        &["name", "group", "kind", "retry_after_seconds", "uid"],
    ),
    ("StatusCause", &["reason", "message", "field"]),
    ("OwnerReference", &["kind", "name", "uid", "api_version"]),
    (
        "ManagedFieldsEntry",
        &[
            "manager",
            "operation",
            "api_version",
            "fields_type",
            "subresource",
        ],
    ),
    ("WatchEvent", &["type", "object"]),
    ("APIResourceList", &["group_version"]),
    (
        "APIResource",
        &[
            "name",
            "namespaced",
            "kind",
            "singular_name",
            "group",
            "version",
            "storage_version_hash",
        ],
    ),
    ("APIGroup", &["name", "preferred_version"]),
    ("GroupVersionForDiscovery", &["group_version", "version"]),
    (
        "ServerAddressByClientCIDR",
        &["client_cidr", "server_address"],
    ),
];

/// ObjectMeta and ListMeta are embedded by value wherever they appear
/// (`metadata` of every object and list, Status's ListMeta).
const GO_VALUE_MESSAGES: &[&str] = &["ObjectMeta", "ListMeta"];

/// (message index, field tag) pairs, and message indexes, from the tables
/// above.
type ValueFieldTable = (HashSet<(u32, u32)>, HashSet<u32>);

fn always_written(index: u32, field: &Field) -> bool {
    static TABLE: OnceLock<ValueFieldTable> = OnceLock::new();
    let (fields, messages) = TABLE.get_or_init(|| {
        let find = |name: &str| schema::find(&format!("{META_V1_PACKAGE}.{name}"));
        let mut fields = HashSet::new();
        for (message_name, field_names) in GO_VALUE_FIELDS {
            let Some(message_index) = find(message_name) else {
                continue;
            };
            let Some(message) = schema::message(message_index) else {
                continue;
            };
            for field in message.fields {
                let normalized = names::normalize(field.name);
                if field_names
                    .iter()
                    .any(|name| names::normalize(name) == normalized)
                {
                    fields.insert((message_index, field.tag));
                }
            }
        }
        let messages = GO_VALUE_MESSAGES
            .iter()
            .filter_map(|name| find(name))
            .collect();
        (fields, messages)
    });
    fields.contains(&(index, field.tag))
        || matches!(field.kind, Kind::Message(nested) if messages.contains(&nested))
}
