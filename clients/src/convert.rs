//! JSON ↔ `google.protobuf.Struct`.
//!
//! Objects travel as `Struct` so grpcurl prints them as JSON, but protobuf
//! has only one number type (a double). Kubernetes objects are full of
//! integers (`replicas`, ports, `generation`), and a client that turned them
//! into `3.0` would fail validation on the next update, so integral values
//! within the exactly representable range come back as JSON integers.

use prost_types::value::Kind;
use prost_types::{ListValue, Struct, Value as PbValue};
use serde_json::{Map, Number, Value};

/// Largest magnitude below which every integer is exact in an f64 (2^53).
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_992.0;

/// Converts a JSON value to a protobuf `Value`.
///
/// Integers beyond ±2^53 lose precision, as they would in any JSON parser
/// that reads numbers as doubles; Kubernetes objects keep such values in strings.
pub fn json_to_value(value: &Value) -> PbValue {
    let kind = match value {
        Value::Null => Kind::NullValue(0),
        Value::Bool(b) => Kind::BoolValue(*b),
        Value::Number(n) => Kind::NumberValue(n.as_f64().unwrap_or_default()),
        Value::String(s) => Kind::StringValue(s.clone()),
        Value::Array(items) => Kind::ListValue(ListValue {
            values: items.iter().map(json_to_value).collect(),
        }),
        Value::Object(map) => Kind::StructValue(map_to_struct(map)),
    };
    PbValue { kind: Some(kind) }
}

/// Converts a JSON object to a `Struct`; `None` if `value` is not an object.
pub fn json_to_struct(value: &Value) -> Option<Struct> {
    value.as_object().map(map_to_struct)
}

fn map_to_struct(map: &Map<String, Value>) -> Struct {
    Struct {
        fields: map
            .iter()
            .map(|(k, v)| (k.clone(), json_to_value(v)))
            .collect(),
    }
}

/// Converts a protobuf `Value` back to JSON, integral numbers as integers.
pub fn value_to_json(value: &PbValue) -> Value {
    match &value.kind {
        None | Some(Kind::NullValue(_)) => Value::Null,
        Some(Kind::BoolValue(b)) => Value::Bool(*b),
        Some(Kind::NumberValue(n)) => number_to_json(*n),
        Some(Kind::StringValue(s)) => Value::String(s.clone()),
        Some(Kind::ListValue(list)) => {
            Value::Array(list.values.iter().map(value_to_json).collect())
        }
        Some(Kind::StructValue(s)) => struct_to_json(s),
    }
}

/// Converts a `Struct` to a JSON object.
pub fn struct_to_json(s: &Struct) -> Value {
    Value::Object(
        s.fields
            .iter()
            .map(|(k, v)| (k.clone(), value_to_json(v)))
            .collect(),
    )
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn round_trip(v: &Value) -> Value {
        struct_to_json(&json_to_struct(v).expect("an object"))
    }

    #[test]
    fn integers_stay_integers() {
        let obj = json!({"spec": {"replicas": 3, "port": 8080, "neg": -12, "zero": 0}});
        let back = round_trip(&obj);
        assert_eq!(back, obj);
        assert!(back["spec"]["replicas"].is_i64());
        assert_eq!(
            serde_json::to_string(&back["spec"]["replicas"]).unwrap(),
            "3"
        );
    }

    #[test]
    fn fractions_strings_bools_nulls_and_nesting_survive() {
        let obj = json!({
            "ratio": 0.25,
            "name": "web",
            "on": true,
            "nothing": null,
            "list": [1, "two", [3.5, {"four": 4}], null, false],
            "empty": {},
            "emptyList": []
        });
        assert_eq!(round_trip(&obj), obj);
    }

    #[test]
    fn large_integers_at_the_safe_limit_are_exact() {
        let limit = 9_007_199_254_740_992_i64;
        let obj = json!({"max": limit, "min": -limit});
        assert_eq!(round_trip(&obj), obj);
    }

    #[test]
    fn integral_doubles_beyond_the_safe_limit_stay_numbers() {
        let v = value_to_json(&PbValue {
            kind: Some(Kind::NumberValue(1e300)),
        });
        assert_eq!(v.as_f64(), Some(1e300));
    }

    #[test]
    fn non_finite_numbers_become_null() {
        for n in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let v = value_to_json(&PbValue {
                kind: Some(Kind::NumberValue(n)),
            });
            assert_eq!(v, Value::Null);
        }
    }

    #[test]
    fn a_missing_kind_reads_as_null() {
        assert_eq!(value_to_json(&PbValue { kind: None }), Value::Null);
    }

    #[test]
    fn only_objects_become_structs() {
        assert!(json_to_struct(&json!([1, 2])).is_none());
        assert!(json_to_struct(&json!("x")).is_none());
    }

    #[test]
    fn key_order_does_not_matter_for_equality() {
        // Struct fields are a map; the object compares equal whatever order.
        let a = json!({"b": 1, "a": 2});
        assert_eq!(round_trip(&a), json!({"a": 2, "b": 1}));
    }
}
