//! Message bytes → the JSON that Go's encoding/json would write for the
//! decoded object.
//!
//! Go's protobuf marshaller writes non-pointer zero values, so an object a
//! client built with only a few fields arrives with empty strings for all
//! the others. Those are dropped here, as JSON's `omitempty` drops them.
//! Numbers and booleans are kept: a zero there (`replicas: 0`) may be the
//! point. Empty objects are kept too: `emptyDir: {}` means something, and
//! kubectl's own JSON carries `resources: {}`.

use base64::Engine as _;
use serde_json::{Map, Number, Value};

use super::names::{self, FieldName, Shape};
use super::schema::{self, Kind, Label, Message};
use super::wire::{Reader, WireType};
use super::ProtobufError;

/// Deep enough for any real object (CRD schemas nest a few dozen levels),
/// shallow enough that hostile input cannot exhaust the stack.
pub(super) const MAX_DEPTH: usize = 100;

/// `time.Time{}` in Unix seconds: Go writes null for it.
const GO_ZERO_TIME_UNIX: i64 = -62_135_596_800;

/// One decoded field value before it becomes JSON; bytes stay raw so the
/// embedded-JSON types can parse them.
enum Val {
    Str(String),
    Bytes(Vec<u8>),
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    /// `None`: the message's JSON form is null (a zero Time, say).
    Msg(Option<Value>),
}

enum Slot {
    Unset,
    One(Val),
    Many(Vec<Val>),
    Map(Map<String, Value>),
}

/// Decodes message `index` from `bytes`. `Ok(None)` is a value Go would
/// write as null.
pub(super) fn message(
    index: u32,
    bytes: &[u8],
    depth: usize,
) -> Result<Option<Value>, ProtobufError> {
    if depth > MAX_DEPTH {
        return Err(ProtobufError::TooDeep(MAX_DEPTH));
    }
    let (Some(message), Some(layout)) = (schema::message(index), names::layout(index)) else {
        return Err(ProtobufError::UnknownMessage(format!("#{index}")));
    };
    let slots = read_fields(message, bytes, depth)?;
    let fields = Fields { message, slots };
    match layout.shape {
        Shape::Object => fields.into_object(&layout.fields).map(Some),
        Shape::Time => fields.time(false),
        Shape::MicroTime => fields.time(true),
        Shape::Duration => {
            let nanos = fields.int("duration").unwrap_or(0);
            Ok(Some(Value::String(go_duration(nanos))))
        }
        Shape::IntOrString => fields.int_or_string().map(Some),
        Shape::Quantity => {
            // A zero Quantity prints as "0" in Go.
            let text = fields.string("string").filter(|s| !s.is_empty());
            Ok(Some(Value::String(text.unwrap_or("0").to_owned())))
        }
        Shape::RawJson => match fields.bytes("raw") {
            Some(raw) if !raw.is_empty() => embedded_json(message, raw, depth).map(Some),
            _ => Ok(None),
        },
        Shape::StringList => Ok(fields.list("items")),
        Shape::PropsOrArray => Ok(fields
            .list("jsonschemas")
            .or_else(|| fields.nested("schema"))),
        Shape::PropsOrBool => {
            Ok(Some(fields.nested("schema").unwrap_or(Value::Bool(
                fields.bool("allows").unwrap_or(false),
            ))))
        }
        Shape::PropsOrStringArray => {
            Ok(fields.list("property").or_else(|| fields.nested("schema")))
        }
    }
}

fn malformed(message: &Message, reason: impl Into<String>) -> ProtobufError {
    ProtobufError::Malformed {
        message: message.name.to_owned(),
        reason: reason.into(),
    }
}

fn read_fields(
    message: &'static Message,
    bytes: &[u8],
    depth: usize,
) -> Result<Vec<Slot>, ProtobufError> {
    let mut slots: Vec<Slot> = message.fields.iter().map(|_| Slot::Unset).collect();
    let mut reader = Reader::new(bytes);
    while !reader.is_empty() {
        let (tag, wire_type) = reader.key().map_err(|e| malformed(message, e))?;
        let known = message
            .field_index(tag)
            .and_then(|index| Some((message.fields.get(index)?, slots.get_mut(index)?)));
        let Some((field, slot)) = known else {
            reader
                .skip(wire_type, tag)
                .map_err(|e| malformed(message, e))?;
            continue;
        };
        match field.label {
            // Proto semantics: the last occurrence of a singular field wins.
            Label::Single => {
                *slot = Slot::One(read_value(
                    message,
                    field.kind,
                    wire_type,
                    &mut reader,
                    depth,
                )?);
            }
            Label::Repeated => {
                if !matches!(slot, Slot::Many(_)) {
                    *slot = Slot::Many(Vec::new());
                }
                let Slot::Many(list) = slot else { continue };
                let packed_type = scalar_wire_type(field.kind);
                if wire_type == WireType::Len && packed_type != WireType::Len {
                    // Packed encoding; proto2 parsers accept it either way.
                    let chunk = reader.bytes().map_err(|e| malformed(message, e))?;
                    let mut packed = Reader::new(chunk);
                    while !packed.is_empty() {
                        list.push(read_value(
                            message,
                            field.kind,
                            packed_type,
                            &mut packed,
                            depth,
                        )?);
                    }
                } else {
                    list.push(read_value(
                        message,
                        field.kind,
                        wire_type,
                        &mut reader,
                        depth,
                    )?);
                }
            }
            Label::Map(key_kind) => {
                if wire_type != WireType::Len {
                    return Err(malformed(
                        message,
                        format!("map field {tag} is not length-delimited"),
                    ));
                }
                let entry = reader.bytes().map_err(|e| malformed(message, e))?;
                let (key, value) = map_entry(message, key_kind, field.kind, entry, depth)?;
                if !matches!(slot, Slot::Map(_)) {
                    *slot = Slot::Map(Map::new());
                }
                if let Slot::Map(map) = slot {
                    map.insert(key, value);
                }
            }
        }
    }
    Ok(slots)
}

fn scalar_wire_type(kind: Kind) -> WireType {
    match kind {
        Kind::Double | Kind::Fixed64 | Kind::Sfixed64 => WireType::Fixed64,
        Kind::Float | Kind::Fixed32 | Kind::Sfixed32 => WireType::Fixed32,
        Kind::String | Kind::Bytes | Kind::Message(_) => WireType::Len,
        Kind::Int32
        | Kind::Int64
        | Kind::Uint32
        | Kind::Uint64
        | Kind::Sint32
        | Kind::Sint64
        | Kind::Bool
        | Kind::Enum => WireType::Varint,
    }
}

fn read_value(
    message: &Message,
    kind: Kind,
    wire_type: WireType,
    reader: &mut Reader<'_>,
    depth: usize,
) -> Result<Val, ProtobufError> {
    let expected = scalar_wire_type(kind);
    if wire_type != expected {
        return Err(malformed(
            message,
            format!("wire type {wire_type:?} where {expected:?} was expected"),
        ));
    }
    let err = |e: &'static str| malformed(message, e);
    // Integer narrowing below is deliberate: it is how protobuf defines
    // reading an int32 from a 64-bit varint.
    Ok(match kind {
        Kind::Int32 | Kind::Enum => Val::Int(i64::from(reader.varint().map_err(err)? as i32)),
        Kind::Int64 => Val::Int(reader.varint().map_err(err)? as i64),
        Kind::Uint32 => Val::Uint(u64::from(reader.varint().map_err(err)? as u32)),
        Kind::Uint64 => Val::Uint(reader.varint().map_err(err)?),
        Kind::Sint32 => {
            let raw = reader.varint().map_err(err)? as u32;
            Val::Int(i64::from((raw >> 1) as i32 ^ -((raw & 1) as i32)))
        }
        Kind::Sint64 => {
            let raw = reader.varint().map_err(err)?;
            Val::Int((raw >> 1) as i64 ^ -((raw & 1) as i64))
        }
        Kind::Bool => Val::Bool(reader.varint().map_err(err)? != 0),
        Kind::Fixed32 => Val::Uint(u64::from(reader.fixed32().map_err(err)?)),
        Kind::Sfixed32 => Val::Int(i64::from(reader.fixed32().map_err(err)? as i32)),
        Kind::Float => Val::Float(f64::from(f32::from_bits(reader.fixed32().map_err(err)?))),
        Kind::Fixed64 => Val::Uint(reader.fixed64().map_err(err)?),
        Kind::Sfixed64 => Val::Int(reader.fixed64().map_err(err)? as i64),
        Kind::Double => Val::Float(f64::from_bits(reader.fixed64().map_err(err)?)),
        // Go's encoding/json replaces invalid UTF-8 the same way.
        Kind::String => {
            Val::Str(String::from_utf8_lossy(reader.bytes().map_err(err)?).into_owned())
        }
        Kind::Bytes => Val::Bytes(reader.bytes().map_err(err)?.to_vec()),
        Kind::Message(index) => Val::Msg(self::message(
            index,
            reader.bytes().map_err(err)?,
            depth + 1,
        )?),
    })
}

fn default_value(kind: Kind, depth: usize) -> Result<Val, ProtobufError> {
    Ok(match kind {
        Kind::String => Val::Str(String::new()),
        Kind::Bytes => Val::Bytes(Vec::new()),
        Kind::Bool => Val::Bool(false),
        Kind::Double | Kind::Float => Val::Float(0.0),
        Kind::Uint32 | Kind::Uint64 | Kind::Fixed32 | Kind::Fixed64 => Val::Uint(0),
        Kind::Int32
        | Kind::Int64
        | Kind::Sint32
        | Kind::Sint64
        | Kind::Sfixed32
        | Kind::Sfixed64
        | Kind::Enum => Val::Int(0),
        Kind::Message(index) => Val::Msg(message(index, &[], depth + 1)?),
    })
}

/// A map entry is a message with the key as field 1 and the value as
/// field 2; either may be missing and then takes its zero value.
fn map_entry(
    message: &Message,
    key_kind: Kind,
    value_kind: Kind,
    bytes: &[u8],
    depth: usize,
) -> Result<(String, Value), ProtobufError> {
    let mut key = None;
    let mut value = None;
    let mut reader = Reader::new(bytes);
    while !reader.is_empty() {
        let (tag, wire_type) = reader.key().map_err(|e| malformed(message, e))?;
        match tag {
            1 => {
                key = Some(read_value(
                    message,
                    key_kind,
                    wire_type,
                    &mut reader,
                    depth,
                )?)
            }
            2 => {
                value = Some(read_value(
                    message,
                    value_kind,
                    wire_type,
                    &mut reader,
                    depth,
                )?)
            }
            _ => reader
                .skip(wire_type, tag)
                .map_err(|e| malformed(message, e))?,
        }
    }
    let key = match key.map_or_else(|| default_value(key_kind, depth), Ok)? {
        Val::Str(text) => text,
        Val::Int(n) => n.to_string(),
        Val::Uint(n) => n.to_string(),
        Val::Bool(b) => b.to_string(),
        _ => return Err(malformed(message, "unsupported map key type")),
    };
    let value = value.map_or_else(|| default_value(value_kind, depth), Ok)?;
    Ok((key, to_json(message, value)?))
}

fn to_json(message: &Message, value: Val) -> Result<Value, ProtobufError> {
    Ok(match value {
        Val::Str(text) => Value::String(text),
        Val::Bytes(bytes) => Value::String(base64::engine::general_purpose::STANDARD.encode(bytes)),
        Val::Bool(b) => Value::Bool(b),
        Val::Int(n) => Value::Number(n.into()),
        Val::Uint(n) => Value::Number(n.into()),
        Val::Float(f) => {
            Value::Number(
                Number::from_f64(f).ok_or_else(|| ProtobufError::InvalidValue {
                    message: message.name.to_owned(),
                    reason: format!("{f} has no JSON representation"),
                })?,
            )
        }
        Val::Msg(value) => value.unwrap_or(Value::Null),
    })
}

/// Embedded objects are usually JSON; a client that encoded the whole
/// request as protobuf may have nested another protobuf envelope.
fn embedded_json(message: &Message, raw: &[u8], depth: usize) -> Result<Value, ProtobufError> {
    if raw.starts_with(&super::PREFIX) {
        return super::decode_envelope_at(raw, depth + 1);
    }
    serde_json::from_slice(raw).map_err(|error| ProtobufError::InvalidValue {
        message: message.name.to_owned(),
        reason: format!("embedded object is not JSON: {error}"),
    })
}

struct Fields {
    message: &'static Message,
    slots: Vec<Slot>,
}

impl Fields {
    /// The slot of the field whose name normalizes to `name`; matching that
    /// way keeps working if prost's snake-casing of a name changes.
    fn slot(&self, name: &str) -> Option<&Slot> {
        let index = self
            .message
            .fields
            .iter()
            .position(|field| names::normalize(field.name) == name)?;
        self.slots.get(index)
    }

    fn single(&self, name: &str) -> Option<&Val> {
        match self.slot(name)? {
            Slot::One(value) => Some(value),
            _ => None,
        }
    }

    fn int(&self, name: &str) -> Option<i64> {
        match self.single(name)? {
            Val::Int(n) => Some(*n),
            Val::Uint(n) => i64::try_from(*n).ok(),
            _ => None,
        }
    }

    fn bool(&self, name: &str) -> Option<bool> {
        match self.single(name)? {
            Val::Bool(b) => Some(*b),
            _ => None,
        }
    }

    fn string(&self, name: &str) -> Option<&str> {
        match self.single(name)? {
            Val::Str(text) => Some(text),
            _ => None,
        }
    }

    fn bytes(&self, name: &str) -> Option<&[u8]> {
        match self.single(name)? {
            Val::Bytes(bytes) => Some(bytes),
            _ => None,
        }
    }

    fn nested(&self, name: &str) -> Option<Value> {
        match self.single(name)? {
            Val::Msg(value) => value.clone(),
            _ => None,
        }
    }

    /// A repeated field as an array; `None` when empty, as Go writes a nil
    /// slice as null.
    fn list(&self, name: &str) -> Option<Value> {
        let Slot::Many(items) = self.slot(name)? else {
            return None;
        };
        let values: Vec<Value> = items
            .iter()
            .map(|item| match item {
                Val::Str(text) => Value::String(text.clone()),
                Val::Msg(value) => value.clone().unwrap_or(Value::Null),
                _ => Value::Null,
            })
            .collect();
        (!values.is_empty()).then_some(Value::Array(values))
    }

    fn time(&self, micro: bool) -> Result<Option<Value>, ProtobufError> {
        if self.slots.iter().all(|slot| matches!(slot, Slot::Unset)) {
            // Go writes a zero Time as an empty message.
            return Ok(None);
        }
        let seconds = self.int("seconds").unwrap_or(0);
        let nanos = self.int("nanos").unwrap_or(0);
        if seconds == GO_ZERO_TIME_UNIX && nanos == 0 {
            return Ok(None);
        }
        let invalid = || ProtobufError::InvalidValue {
            message: self.message.name.to_owned(),
            reason: format!("{seconds}s {nanos}ns is not a representable time"),
        };
        // Go normalizes out-of-range nanoseconds into the seconds.
        let seconds = seconds
            .checked_add(nanos.div_euclid(1_000_000_000))
            .ok_or_else(invalid)?;
        let nanos = u32::try_from(nanos.rem_euclid(1_000_000_000)).map_err(|_| invalid())?;
        let time = chrono::DateTime::from_timestamp(seconds, nanos).ok_or_else(invalid)?;
        let format = if micro {
            "%Y-%m-%dT%H:%M:%S%.6fZ"
        } else {
            "%Y-%m-%dT%H:%M:%SZ"
        };
        Ok(Some(Value::String(time.format(format).to_string())))
    }

    fn int_or_string(&self) -> Result<Value, ProtobufError> {
        match self.int("type").unwrap_or(0) {
            0 => Ok(Value::Number(self.int("intval").unwrap_or(0).into())),
            1 => Ok(Value::String(
                self.string("strval").unwrap_or("").to_owned(),
            )),
            other => Err(ProtobufError::InvalidValue {
                message: self.message.name.to_owned(),
                reason: format!("IntOrString type {other} is neither 0 (int) nor 1 (string)"),
            }),
        }
    }

    fn into_object(self, names: &[FieldName]) -> Result<Value, ProtobufError> {
        let message = self.message;
        let mut object = Map::new();
        for (slot, name) in self.slots.into_iter().zip(names) {
            let FieldName { json, inline, .. } = name;
            let value = match slot {
                Slot::Unset => continue,
                Slot::One(Val::Str(text)) if text.is_empty() => continue,
                Slot::One(Val::Bytes(bytes)) if bytes.is_empty() => continue,
                Slot::One(Val::Msg(None)) => continue,
                Slot::One(Val::Msg(Some(Value::Object(fields)))) if *inline => {
                    for (key, value) in fields {
                        object.entry(key).or_insert(value);
                    }
                    continue;
                }
                Slot::One(value) => to_json(message, value)?,
                Slot::Many(items) if items.is_empty() => continue,
                Slot::Many(items) => Value::Array(
                    items
                        .into_iter()
                        .map(|item| to_json(message, item))
                        .collect::<Result<_, _>>()?,
                ),
                Slot::Map(map) if map.is_empty() => continue,
                Slot::Map(map) => Value::Object(map),
            };
            object.insert(json.to_string(), value);
        }
        Ok(Value::Object(object))
    }
}

/// Go's `time.Duration.String()`: `1h2m3s`, `1.5s`, `500ms`, `0s`.
pub(super) fn go_duration(nanos: i64) -> String {
    let negative = nanos < 0;
    let mut rest = nanos.unsigned_abs();
    let mut out = String::new();
    if rest == 0 {
        return "0s".to_owned();
    }
    if rest < 1_000_000_000 {
        // Below a second the unit shrinks so the integer part is nonzero.
        let (unit, digits) = match rest {
            n if n < 1_000 => ("ns", 0),
            n if n < 1_000_000 => ("\u{b5}s", 3),
            _ => ("ms", 6),
        };
        out.push_str(&with_fraction(rest, digits));
        out.push_str(unit);
    } else {
        let seconds = with_fraction(rest % 60_000_000_000, 9);
        rest /= 60_000_000_000;
        if rest > 0 {
            let minutes = rest % 60;
            let hours = rest / 60;
            if hours > 0 {
                out.push_str(&format!("{hours}h"));
            }
            out.push_str(&format!("{minutes}m"));
        }
        out.push_str(&seconds);
        out.push('s');
    }
    if negative {
        out.insert(0, '-');
    }
    out
}

/// `value / 10^digits` with the fraction's trailing zeros (and a bare
/// point) left out.
fn with_fraction(value: u64, digits: u32) -> String {
    let scale = 10u64.pow(digits);
    let whole = value / scale;
    let fraction = value % scale;
    if fraction == 0 {
        return whole.to_string();
    }
    let fraction = format!("{fraction:0width$}", width = digits as usize);
    format!("{whole}.{}", fraction.trim_end_matches('0'))
}
