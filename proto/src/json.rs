//! `google.protobuf.Struct`, `Value` and `ListValue` held as serde_json.
//!
//! Objects travel as `Struct` so grpcurl and any protobuf JSON printer show
//! them readably. Server and client both work on JSON, though, and going
//! through prost-types' tree (a `BTreeMap` and a `String` per key, a boxed
//! `Value` per value) cost each side a conversion each way
//! (docs/benchmarks.md, "gRPC objects held as JSON"). The generated
//! messages therefore hold these types
//! (`extern_path` in build.rs): they read and write the same bytes as the
//! well-known types, straight from and into `serde_json` values.
//!
//! Protobuf has one number type, a double. Kubernetes objects are full of
//! integers (`replicas`, ports, `generation`), and a client that turned them
//! into `3.0` would fail validation on its next update, so integral values
//! within the exactly representable range come back as JSON integers.
//! Integers beyond ±2^53 lose precision, as in any JSON parser that reads
//! numbers as doubles; Kubernetes keeps such values in strings.

use prost::bytes::{Buf, BufMut};
use prost::encoding::{
    encode_key, encode_varint, encoded_len_varint, key_len, skip_field, DecodeContext, WireType,
};
use prost::DecodeError;
use serde_json::{Map, Number, Value};

/// Largest magnitude below which every integer is exact in an f64 (2^53).
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_992.0;

/// A `google.protobuf.Struct`: a JSON object.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JsonStruct(pub Map<String, Value>);

/// A `google.protobuf.Value`: any JSON value. A message that sets none of
/// its kinds reads as null.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JsonValue(pub Value);

/// A `google.protobuf.ListValue`: a JSON array.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JsonList(pub Vec<Value>);

impl From<JsonStruct> for Value {
    fn from(s: JsonStruct) -> Self {
        Value::Object(s.0)
    }
}

impl prost::Message for JsonStruct {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        MeasuredStruct::new(&self.0).encode(buf);
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        if tag != 1 {
            return skip_field(wire_type, tag, buf, ctx);
        }
        // `map<string, Value> fields = 1`: one entry message per field; a
        // repeated key keeps its last value, as protobuf maps do.
        let mut entry = StructEntry::default();
        prost::encoding::message::merge(wire_type, &mut entry, buf, ctx)?;
        self.0.insert(entry.key, entry.value.0);
        Ok(())
    }

    fn encoded_len(&self) -> usize {
        struct_len(&self.0)
    }

    fn clear(&mut self) {
        self.0.clear();
    }
}

/// `Struct.FieldsEntry { string key = 1; Value value = 2; }`, decoded only.
#[derive(Debug, Default)]
struct StructEntry {
    key: String,
    value: JsonValue,
}

impl prost::Message for StructEntry {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        write_string(1, &self.key, buf);
        encode_key(2, WireType::LengthDelimited, buf);
        encode_varint(value_len(&self.value.0) as u64, buf);
        encode_value(&self.value.0, buf);
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        match tag {
            1 => prost::encoding::string::merge(wire_type, &mut self.key, buf, ctx),
            2 => prost::encoding::message::merge(wire_type, &mut self.value, buf, ctx),
            _ => skip_field(wire_type, tag, buf, ctx),
        }
    }

    fn encoded_len(&self) -> usize {
        entry_len(&self.key, value_len(&self.value.0))
    }

    fn clear(&mut self) {
        self.key.clear();
        self.value.0 = Value::Null;
    }
}

impl prost::Message for JsonValue {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        encode_value(&self.0, buf);
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        // A oneof: the last kind on the wire wins.
        self.0 = match tag {
            1 => {
                let mut null = 0;
                prost::encoding::int32::merge(wire_type, &mut null, buf, ctx)?;
                Value::Null
            }
            2 => {
                let mut number = 0.0;
                prost::encoding::double::merge(wire_type, &mut number, buf, ctx)?;
                number_to_json(number)
            }
            3 => {
                let mut string = String::new();
                prost::encoding::string::merge(wire_type, &mut string, buf, ctx)?;
                Value::String(string)
            }
            4 => {
                let mut b = false;
                prost::encoding::bool::merge(wire_type, &mut b, buf, ctx)?;
                Value::Bool(b)
            }
            5 => {
                let mut object = JsonStruct::default();
                prost::encoding::message::merge(wire_type, &mut object, buf, ctx)?;
                Value::Object(object.0)
            }
            6 => {
                let mut list = JsonList::default();
                prost::encoding::message::merge(wire_type, &mut list, buf, ctx)?;
                Value::Array(list.0)
            }
            _ => return skip_field(wire_type, tag, buf, ctx),
        };
        Ok(())
    }

    fn encoded_len(&self) -> usize {
        value_len(&self.0)
    }

    fn clear(&mut self) {
        self.0 = Value::Null;
    }
}

impl prost::Message for JsonList {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        encode_list(&self.0, buf);
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        if tag != 1 {
            return skip_field(wire_type, tag, buf, ctx);
        }
        let mut item = JsonValue::default();
        prost::encoding::message::merge(wire_type, &mut item, buf, ctx)?;
        self.0.push(item.0);
        Ok(())
    }

    fn encoded_len(&self) -> usize {
        list_len(&self.0)
    }

    fn clear(&mut self) {
        self.0.clear();
    }
}

/// A double as JSON: integral values within ±2^53 as integers.
fn number_to_json(n: f64) -> Value {
    if n.is_finite() && n.fract() == 0.0 && n.abs() <= MAX_SAFE_INTEGER {
        // Exact: the magnitude check above keeps the cast lossless.
        return Value::Number(Number::from(n as i64));
    }
    // NaN and infinities have no JSON form; null is what protobuf's own JSON
    // mapping would refuse to print, so it is the least surprising stand-in.
    Number::from_f64(n)
        .map(Value::Number)
        .unwrap_or(Value::Null)
}

// Writing a length-delimited message needs its length first. Measuring
// each nested message where it is written would measure the deepest values
// once for every level above them (a managedFields entry is seven levels
// deep), so the writers below measure the whole value once, keeping the
// body length of every nested Struct and ListValue in the order they are
// written, and then write from those lengths.

/// Where measuring keeps the body lengths of nested Structs and ListValues:
/// a `Vec` for writing, nothing when only the total is wanted.
trait Lengths {
    /// A slot for a length not known yet.
    fn reserve(&mut self) -> usize;
    fn fill(&mut self, slot: usize, len: usize);
}

impl Lengths for () {
    fn reserve(&mut self) -> usize {
        0
    }
    fn fill(&mut self, _: usize, _: usize) {}
}

impl Lengths for Vec<usize> {
    fn reserve(&mut self) -> usize {
        self.push(0);
        self.len() - 1
    }
    fn fill(&mut self, slot: usize, len: usize) {
        self[slot] = len;
    }
}

/// The length of `map` encoded as the body of a `Struct`.
fn struct_len(map: &Map<String, Value>) -> usize {
    measure_fields(map, &mut ())
}

/// The length of `value` encoded as the body of a `Value`: a oneof, so its
/// field is written even when it holds the zero value (null, false, 0, "").
fn value_len(value: &Value) -> usize {
    measure_value(value, &mut ())
}

fn list_len(items: &[Value]) -> usize {
    measure_items(items, &mut ())
}

/// A Struct measured once, for a caller that needs its length before
/// writing it.
pub struct MeasuredStruct<'a> {
    map: &'a Map<String, Value>,
    lengths: Vec<usize>,
    len: usize,
}

impl<'a> MeasuredStruct<'a> {
    pub fn new(map: &'a Map<String, Value>) -> Self {
        let mut lengths = Vec::new();
        let len = measure_fields(map, &mut lengths);
        Self { map, lengths, len }
    }

    /// The length of the Struct's body.
    pub fn encoded_len(&self) -> usize {
        self.len
    }

    /// Writes the Struct's body (no tag or length of its own).
    pub fn encode(&self, buf: &mut impl BufMut) {
        Writer::new(&self.lengths).fields(self.map, buf);
    }
}

/// Writes `value` as the body of a `Value`.
fn encode_value(value: &Value, buf: &mut impl BufMut) {
    let mut lengths = Vec::new();
    measure_value(value, &mut lengths);
    Writer::new(&lengths).value(value, buf);
}

/// `ListValue { repeated Value values = 1; }`, its body.
fn encode_list(items: &[Value], buf: &mut impl BufMut) {
    let mut lengths = Vec::new();
    measure_items(items, &mut lengths);
    Writer::new(&lengths).items(items, buf);
}

/// A Struct body: one entry message `{ string key = 1; Value value = 2; }`
/// per field.
fn measure_fields(map: &Map<String, Value>, lengths: &mut impl Lengths) -> usize {
    map.iter()
        .map(|(key, value)| delimited_len(entry_len(key, measure_value(value, lengths))))
        .sum()
}

/// An entry message's length, from its key and its Value's body length.
fn entry_len(key: &str, value_len: usize) -> usize {
    string_len(1, key) + delimited_len(value_len)
}

/// A scalar Value's body length; `None` for a Struct or ListValue, whose
/// body is measured.
fn scalar_len(value: &Value) -> Option<usize> {
    match value {
        Value::Null | Value::Bool(_) => Some(2),
        Value::Number(_) => Some(9),
        Value::String(s) => Some(delimited_len(s.len())),
        Value::Object(_) | Value::Array(_) => None,
    }
}

fn measure_items(items: &[Value], lengths: &mut impl Lengths) -> usize {
    items
        .iter()
        .map(|item| delimited_len(measure_value(item, lengths)))
        .sum()
}

/// A Value body; a Struct's or ListValue's own body length goes to `lengths`.
fn measure_value(value: &Value, lengths: &mut impl Lengths) -> usize {
    match value {
        Value::Object(map) => measure_nested(lengths, |lengths| measure_fields(map, lengths)),
        Value::Array(items) => measure_nested(lengths, |lengths| measure_items(items, lengths)),
        scalar => scalar_len(scalar).unwrap_or_default(),
    }
}

/// A Struct's or ListValue's Value body, keeping its own body length in
/// the slot it takes before what is nested in it.
fn measure_nested<L: Lengths>(lengths: &mut L, measure: impl FnOnce(&mut L) -> usize) -> usize {
    let slot = lengths.reserve();
    let len = measure(lengths);
    lengths.fill(slot, len);
    delimited_len(len)
}

/// Writes what was measured, taking the nested lengths in measuring order.
struct Writer<'a> {
    lengths: &'a [usize],
    next: usize,
}

impl<'a> Writer<'a> {
    fn new(lengths: &'a [usize]) -> Self {
        Self { lengths, next: 0 }
    }

    /// The length of `value`'s body, without taking its nested length.
    fn value_len(&self, value: &Value) -> usize {
        scalar_len(value).unwrap_or_else(|| {
            delimited_len(self.lengths.get(self.next).copied().unwrap_or_default())
        })
    }

    fn take(&mut self) -> usize {
        let len = self.lengths.get(self.next).copied().unwrap_or_default();
        self.next += 1;
        len
    }

    fn fields(&mut self, map: &Map<String, Value>, buf: &mut impl BufMut) {
        for (key, value) in map {
            let value_len = self.value_len(value);
            encode_key(1, WireType::LengthDelimited, buf);
            encode_varint(entry_len(key, value_len) as u64, buf);
            write_string(1, key, buf);
            encode_key(2, WireType::LengthDelimited, buf);
            encode_varint(value_len as u64, buf);
            self.value(value, buf);
        }
    }

    fn items(&mut self, items: &[Value], buf: &mut impl BufMut) {
        for item in items {
            encode_key(1, WireType::LengthDelimited, buf);
            encode_varint(self.value_len(item) as u64, buf);
            self.value(item, buf);
        }
    }

    fn value(&mut self, value: &Value, buf: &mut impl BufMut) {
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
                encode_varint(self.take() as u64, buf);
                self.fields(map, buf);
            }
            Value::Array(items) => {
                encode_key(6, WireType::LengthDelimited, buf);
                encode_varint(self.take() as u64, buf);
                self.items(items, buf);
            }
        }
    }
}

/// A field's key and length prefix around `len` bytes (field numbers below 16).
pub fn delimited_len(len: usize) -> usize {
    1 + encoded_len_varint(len as u64) + len
}

/// The length of a proto3 string field, which is left out when empty.
pub fn string_len(tag: u32, s: &str) -> usize {
    if s.is_empty() {
        0
    } else {
        key_len(tag) + encoded_len_varint(s.len() as u64) + s.len()
    }
}

/// Writes a proto3 string field, unless it is empty.
pub fn write_string(tag: u32, s: &str, buf: &mut impl BufMut) {
    if !s.is_empty() {
        encode_key(tag, WireType::LengthDelimited, buf);
        encode_varint(s.len() as u64, buf);
        buf.put_slice(s.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;
    use serde_json::json;

    fn round_trip(v: &Value) -> Value {
        let map = v.as_object().expect("an object").clone();
        let bytes = JsonStruct(map).encode_to_vec();
        Value::from(JsonStruct::decode(bytes.as_slice()).expect("decodes"))
    }

    /// The same value as prost-types' `Struct` builds it.
    fn well_known(v: &Value) -> prost_types::Value {
        use prost_types::value::Kind;
        let kind = match v {
            Value::Null => Kind::NullValue(0),
            Value::Bool(b) => Kind::BoolValue(*b),
            Value::Number(n) => Kind::NumberValue(n.as_f64().unwrap_or_default()),
            Value::String(s) => Kind::StringValue(s.clone()),
            Value::Array(items) => Kind::ListValue(prost_types::ListValue {
                values: items.iter().map(well_known).collect(),
            }),
            Value::Object(map) => Kind::StructValue(prost_types::Struct {
                fields: map
                    .iter()
                    .map(|(k, v)| (k.clone(), well_known(v)))
                    .collect(),
            }),
        };
        prost_types::Value { kind: Some(kind) }
    }

    fn sample() -> Value {
        json!({
            "apiVersion": "apps/v1",
            "metadata": {"name": "web", "labels": {"app": "web", "": "empty key"},
                         "annotations": {"note": "ünïcødé ✓"}},
            "spec": {
                "replicas": 0, "paused": false, "ratio": 0.25, "big": 1e300,
                "negative": -7, "nothing": null, "empty": "", "emptyObject": {},
                "emptyList": [],
                "template": {"spec": {"containers": [
                    {"name": "c", "image": "nginx", "args": ["a", "", null, 1, true, {"x": [[]]}]}
                ]}},
            },
        })
    }

    #[test]
    fn structs_read_and_write_the_well_known_encoding() {
        let obj = sample();
        let ours = JsonStruct(obj.as_object().expect("an object").clone());
        let Some(prost_types::value::Kind::StructValue(theirs)) = well_known(&obj).kind else {
            unreachable!("an object")
        };
        // prost-types writes fields in key order; ours keep the object's.
        // Both decode to the same struct either way.
        assert_eq!(
            prost_types::Struct::decode(ours.encode_to_vec().as_slice()).expect("decodes"),
            theirs
        );
        assert_eq!(
            JsonStruct::decode(theirs.encode_to_vec().as_slice()).expect("decodes"),
            ours
        );
        assert_eq!(ours.encode_to_vec().len(), ours.encoded_len());
    }

    #[test]
    fn values_and_lists_read_and_write_the_well_known_encoding() {
        for v in [
            json!(null),
            json!(false),
            json!(0),
            json!(""),
            json!([1, [2]]),
            sample(),
        ] {
            let ours = JsonValue(v.clone());
            assert_eq!(
                prost_types::Value::decode(ours.encode_to_vec().as_slice()).expect("decodes"),
                well_known(&v)
            );
            assert_eq!(
                JsonValue::decode(well_known(&v).encode_to_vec().as_slice()).expect("decodes"),
                ours
            );
        }
        let list = JsonList(vec![json!(1), json!("two"), json!({"three": [3]})]);
        let back = JsonList::decode(list.encode_to_vec().as_slice()).expect("decodes");
        assert_eq!(back, list);
    }

    #[test]
    fn integers_stay_integers() {
        let obj = json!({"spec": {"replicas": 3, "port": 8080, "neg": -12, "zero": 0}});
        let back = round_trip(&obj);
        assert_eq!(back, obj);
        assert!(back["spec"]["replicas"].is_i64());
        assert_eq!(back["spec"]["replicas"].to_string(), "3");
    }

    #[test]
    fn large_integers_at_the_safe_limit_are_exact() {
        let limit = 9_007_199_254_740_992_i64;
        let obj = json!({"max": limit, "min": -limit});
        assert_eq!(round_trip(&obj), obj);
    }

    #[test]
    fn integral_doubles_beyond_the_safe_limit_stay_numbers() {
        assert_eq!(number_to_json(1e300).as_f64(), Some(1e300));
    }

    #[test]
    fn non_finite_numbers_become_null() {
        for n in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(number_to_json(n), Value::Null);
        }
    }

    #[test]
    fn a_value_without_a_kind_reads_as_null() {
        let empty = prost_types::Value { kind: None }.encode_to_vec();
        assert_eq!(
            JsonValue::decode(empty.as_slice()).expect("decodes"),
            JsonValue(Value::Null)
        );
    }

    #[test]
    fn a_repeated_key_keeps_its_last_value() {
        let mut bytes = JsonStruct(Map::from_iter([("a".into(), json!(1))])).encode_to_vec();
        bytes.extend(JsonStruct(Map::from_iter([("a".into(), json!(2))])).encode_to_vec());
        let decoded = JsonStruct::decode(bytes.as_slice()).expect("decodes");
        assert_eq!(Value::from(decoded), json!({"a": 2}));
    }

    #[test]
    fn bad_input_is_an_error() {
        // A string that is not UTF-8, as the body of a Value.
        assert!(JsonValue::decode([0x1a, 0x01, 0xff].as_slice()).is_err());
        // A length that runs past the end.
        assert!(JsonStruct::decode([0x0a, 0x05, 0x0a].as_slice()).is_err());
        // Nesting deeper than prost's recursion limit: lists in lists.
        let mut deep = json!(1);
        for _ in 0..200 {
            deep = json!([deep]);
        }
        let bytes = JsonValue(deep).encode_to_vec();
        let err = JsonValue::decode(bytes.as_slice()).expect_err("too deep");
        assert!(err.to_string().contains("recursion limit"), "{err}");
    }
}
