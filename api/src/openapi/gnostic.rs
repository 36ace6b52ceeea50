//! The Swagger 2.0 document as the protobuf message client-go asks for.
//!
//! client-go's `OpenAPISchema()` requests `/openapi/v2` only as
//! `application/com.github.proto-openapi.spec.v2@v1.0+protobuf` and decodes
//! the body as gnostic's `openapi.v2.Document` (gnostic-models,
//! `openapiv2/OpenAPIv2.proto`). kubectl builds its client-side validation
//! models from it (kube-openapi `pkg/util/proto`) and its v2 query-param
//! verifier reads the PATCH operations, so the message has to say everything
//! the JSON says.
//!
//! kube-apiserver produces it by compiling its JSON with gnostic
//! (`ParseDocument`) and marshalling the result; this encoder does the same
//! walk over the JSON values the v2 document is serialized from. Each function
//! below is one gnostic message and the numbers are its field numbers. As in
//! gnostic:
//!
//! * keys starting with `x-` become `vendor_extension` entries whose `Any`
//!   carries the value as YAML text; JSON is YAML, and kubectl reads these
//!   with a YAML decoder (`VendorExtensionToMap`, `hasGVKExtension`);
//! * `default`, `example` and `enum` values are `Any`s the same way;
//! * a present message field is written even when empty, because kubectl
//!   tells an object with no fields (`properties: {}`) from a map by whether
//!   `properties` is set at all;
//! * singular scalars equal to their default (empty string, `false`, 0) are
//!   left out, as proto3 marshalling does.
//!
//! Keys gnostic does not know are left out rather than rejected: the document
//! is ours and already valid Swagger, and an unparseable document would cost
//! kubectl all of its schema checks.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::Info;

/// The `openapi.v2.Document` message of a v2 document with these parts.
/// The served document has no global `parameters`, `responses`, security or
/// tags, so only the fields it has are taken.
pub(super) fn document(
    swagger: &str,
    info: &Info,
    paths: &Map<String, Value>,
    definitions: &BTreeMap<&str, &Value>,
) -> Vec<u8> {
    let mut out = Vec::new();
    string(&mut out, 1, swagger);
    message(&mut out, 2, |b| {
        string(b, 1, info.title);
        string(b, 2, info.version);
    });
    message(&mut out, 8, |b| encode_paths(b, paths));
    // Definitions { repeated NamedSchema additional_properties = 1; }
    message(&mut out, 9, |b| {
        for (name, schema) in definitions {
            named(b, 1, name, |b| encode_schema(b, schema));
        }
    });
    out
}

// --- messages -------------------------------------------------------------

/// `Paths`: vendor_extension = 1, path = 2 (NamedPathItem).
fn encode_paths(b: &mut Vec<u8>, paths: &Map<String, Value>) {
    vendor_extensions(b, 1, paths);
    for (path, item) in paths.iter().filter(|(k, _)| !k.starts_with("x-")) {
        if let Value::Object(item) = item {
            named(b, 2, path, |b| encode_path_item(b, item));
        }
    }
}

/// `PathItem`.
fn encode_path_item(b: &mut Vec<u8>, item: &Map<String, Value>) {
    str_field(b, 1, item, "$ref");
    for (field, method) in [
        (2, "get"),
        (3, "put"),
        (4, "post"),
        (5, "delete"),
        (6, "options"),
        (7, "head"),
        (8, "patch"),
    ] {
        if let Some(Value::Object(op)) = item.get(method) {
            message(b, field, |b| encode_operation(b, op));
        }
    }
    parameters_items(b, 9, item);
    vendor_extensions(b, 10, item);
}

/// `Operation`. kubectl's v2 query-param verifier matches the PATCH
/// operation by its `x-kubernetes-group-version-kind` extension and then
/// looks for a query parameter named `fieldValidation` among its parameters.
fn encode_operation(b: &mut Vec<u8>, op: &Map<String, Value>) {
    strings_field(b, 1, op, "tags");
    str_field(b, 2, op, "summary");
    str_field(b, 3, op, "description");
    object_field(b, 4, op, "externalDocs", encode_external_docs);
    str_field(b, 5, op, "operationId");
    strings_field(b, 6, op, "produces");
    strings_field(b, 7, op, "consumes");
    parameters_items(b, 8, op);
    object_field(b, 9, op, "responses", encode_responses);
    strings_field(b, 10, op, "schemes");
    bool_field(b, 11, op, "deprecated");
    // security (12) is not published by Capstan.
    vendor_extensions(b, 13, op);
}

/// `repeated ParametersItem` from the `parameters` array of `obj`:
/// a `$ref` is a `JsonReference` (2), anything else a `Parameter` (1).
fn parameters_items(b: &mut Vec<u8>, field: u32, obj: &Map<String, Value>) {
    let Some(Value::Array(params)) = obj.get("parameters") else {
        return;
    };
    for param in params {
        let Value::Object(param) = param else {
            continue;
        };
        message(b, field, |b| {
            if param.contains_key("$ref") {
                // JsonReference { string _ref = 1; string description = 2; }
                message(b, 2, |b| {
                    str_field(b, 1, param, "$ref");
                    str_field(b, 2, param, "description");
                });
            } else {
                message(b, 1, |b| encode_parameter(b, param));
            }
        });
    }
}

/// `Parameter`: body_parameter = 1 or non_body_parameter = 2, by `in`.
fn encode_parameter(b: &mut Vec<u8>, param: &Map<String, Value>) {
    let location = param.get("in").and_then(Value::as_str).unwrap_or_default();
    if location == "body" {
        message(b, 1, |b| {
            str_field(b, 1, param, "description");
            str_field(b, 2, param, "name");
            str_field(b, 3, param, "in");
            bool_field(b, 4, param, "required");
            object_field(b, 5, param, "schema", encode_schema_map);
            vendor_extensions(b, 6, param);
        });
        return;
    }
    // NonBodyParameter's variants share the first four fields; formData and
    // query then have allow_empty_value (5), so their remaining fields sit
    // one number higher than header's and path's.
    let (variant, shift, extensions) = match location {
        "header" => (1, 4, 22),
        "formData" => (2, 5, 23),
        "query" => (3, 5, 23),
        "path" => (4, 4, 22),
        // Not valid Swagger; an empty NonBodyParameter keeps the list's
        // positions without inventing a location.
        _ => {
            message(b, 2, |_| {});
            return;
        }
    };
    message(b, 2, |b| {
        message(b, variant, |b| {
            bool_field(b, 1, param, "required");
            str_field(b, 2, param, "in");
            str_field(b, 3, param, "description");
            str_field(b, 4, param, "name");
            if shift == 5 {
                bool_field(b, 5, param, "allowEmptyValue");
            }
            primitive_fields(b, shift, param);
            vendor_extensions(b, extensions, param);
        });
    });
}

/// The fields non-body parameters, `PrimitivesItems` and `Header` share, in
/// `PrimitivesItems` numbering (type = 1 ... multiple_of = 17) plus `shift`.
fn primitive_fields(b: &mut Vec<u8>, shift: u32, obj: &Map<String, Value>) {
    str_field(b, 1 + shift, obj, "type");
    str_field(b, 2 + shift, obj, "format");
    object_field(b, 3 + shift, obj, "items", encode_primitives_items);
    str_field(b, 4 + shift, obj, "collectionFormat");
    any_field(b, 5 + shift, obj, "default");
    double_field(b, 6 + shift, obj, "maximum");
    bool_field(b, 7 + shift, obj, "exclusiveMaximum");
    double_field(b, 8 + shift, obj, "minimum");
    bool_field(b, 9 + shift, obj, "exclusiveMinimum");
    int_field(b, 10 + shift, obj, "maxLength");
    int_field(b, 11 + shift, obj, "minLength");
    str_field(b, 12 + shift, obj, "pattern");
    int_field(b, 13 + shift, obj, "maxItems");
    int_field(b, 14 + shift, obj, "minItems");
    bool_field(b, 15 + shift, obj, "uniqueItems");
    anys_field(b, 16 + shift, obj, "enum");
    double_field(b, 17 + shift, obj, "multipleOf");
}

/// `PrimitivesItems`: the shared fields, then vendor_extension = 18.
fn encode_primitives_items(b: &mut Vec<u8>, items: &Map<String, Value>) {
    primitive_fields(b, 0, items);
    vendor_extensions(b, 18, items);
}

/// `Responses`: response_code = 1 (NamedResponseValue), vendor_extension = 2.
fn encode_responses(b: &mut Vec<u8>, responses: &Map<String, Value>) {
    for (code, response) in responses.iter().filter(|(k, _)| !k.starts_with("x-")) {
        let Value::Object(response) = response else {
            continue;
        };
        // ResponseValue { Response response = 1; JsonReference json_reference = 2; }
        named(b, 1, code, |b| {
            if response.contains_key("$ref") {
                message(b, 2, |b| {
                    str_field(b, 1, response, "$ref");
                    str_field(b, 2, response, "description");
                });
            } else {
                message(b, 1, |b| encode_response(b, response));
            }
        });
    }
    vendor_extensions(b, 2, responses);
}

/// `Response`.
fn encode_response(b: &mut Vec<u8>, response: &Map<String, Value>) {
    str_field(b, 1, response, "description");
    // SchemaItem { Schema schema = 1; FileSchema file_schema = 2; }
    object_field(b, 2, response, "schema", |b, schema| {
        message(b, 1, |b| encode_schema_map(b, schema));
    });
    // Headers { repeated NamedHeader additional_properties = 1; }
    object_field(b, 3, response, "headers", |b, headers| {
        for (name, header) in headers {
            if let Value::Object(header) = header {
                named(b, 1, name, |b| {
                    primitive_fields(b, 0, header);
                    str_field(b, 18, header, "description");
                    vendor_extensions(b, 19, header);
                });
            }
        }
    });
    // Examples { repeated NamedAny additional_properties = 1; }
    object_field(b, 4, response, "examples", |b, examples| {
        for (media_type, example) in examples {
            named(b, 1, media_type, |b| encode_any(b, example));
        }
    });
    vendor_extensions(b, 5, response);
}

fn encode_schema(b: &mut Vec<u8>, schema: &Value) {
    if let Value::Object(schema) = schema {
        encode_schema_map(b, schema);
    }
}

/// `Schema`. kube-openapi reads `$ref`, `type`, `properties`, `items`,
/// `additionalProperties`, `required`, `description`, `format` and the
/// vendor extensions (group-version-kind, patch strategy and merge key).
fn encode_schema_map(b: &mut Vec<u8>, schema: &Map<String, Value>) {
    str_field(b, 1, schema, "$ref");
    str_field(b, 2, schema, "format");
    str_field(b, 3, schema, "title");
    str_field(b, 4, schema, "description");
    any_field(b, 5, schema, "default");
    double_field(b, 6, schema, "multipleOf");
    double_field(b, 7, schema, "maximum");
    bool_field(b, 8, schema, "exclusiveMaximum");
    double_field(b, 9, schema, "minimum");
    bool_field(b, 10, schema, "exclusiveMinimum");
    int_field(b, 11, schema, "maxLength");
    int_field(b, 12, schema, "minLength");
    str_field(b, 13, schema, "pattern");
    int_field(b, 14, schema, "maxItems");
    int_field(b, 15, schema, "minItems");
    bool_field(b, 16, schema, "uniqueItems");
    int_field(b, 17, schema, "maxProperties");
    int_field(b, 18, schema, "minProperties");
    strings_field(b, 19, schema, "required");
    anys_field(b, 20, schema, "enum");
    // AdditionalPropertiesItem { Schema schema = 1; bool boolean = 2; } — a
    // oneof, so `false` is written: it means something different from absent.
    match schema.get("additionalProperties") {
        Some(Value::Object(inner)) => {
            message(b, 21, |b| message(b, 1, |b| encode_schema_map(b, inner)))
        }
        Some(Value::Bool(allowed)) => message(b, 21, |b| {
            key(b, 2, WIRE_VARINT);
            varint(b, u64::from(*allowed));
        }),
        _ => {}
    }
    // TypeItem { repeated string value = 1; } — Swagger allows one name or
    // a list.
    match schema.get("type") {
        Some(Value::String(ty)) => message(b, 22, |b| repeated_string(b, 1, ty)),
        Some(Value::Array(types)) => message(b, 22, |b| {
            for ty in types.iter().filter_map(Value::as_str) {
                repeated_string(b, 1, ty);
            }
        }),
        _ => {}
    }
    // ItemsItem { repeated Schema schema = 1; } — one schema or a tuple.
    match schema.get("items") {
        Some(Value::Object(inner)) => {
            message(b, 23, |b| message(b, 1, |b| encode_schema_map(b, inner)))
        }
        Some(Value::Array(inner)) => message(b, 23, |b| {
            for item in inner {
                message(b, 1, |b| encode_schema(b, item));
            }
        }),
        _ => {}
    }
    if let Some(Value::Array(all_of)) = schema.get("allOf") {
        for item in all_of {
            message(b, 24, |b| encode_schema(b, item));
        }
    }
    // Properties { repeated NamedSchema additional_properties = 1; }
    object_field(b, 25, schema, "properties", |b, properties| {
        for (name, property) in properties {
            named(b, 1, name, |b| encode_schema(b, property));
        }
    });
    str_field(b, 26, schema, "discriminator");
    bool_field(b, 27, schema, "readOnly");
    object_field(b, 28, schema, "xml", |b, xml| {
        str_field(b, 1, xml, "name");
        str_field(b, 2, xml, "namespace");
        str_field(b, 3, xml, "prefix");
        bool_field(b, 4, xml, "attribute");
        bool_field(b, 5, xml, "wrapped");
        vendor_extensions(b, 6, xml);
    });
    object_field(b, 29, schema, "externalDocs", encode_external_docs);
    any_field(b, 30, schema, "example");
    vendor_extensions(b, 31, schema);
}

/// `ExternalDocs`: description = 1, url = 2, vendor_extension = 3.
fn encode_external_docs(b: &mut Vec<u8>, docs: &Map<String, Value>) {
    str_field(b, 1, docs, "description");
    str_field(b, 2, docs, "url");
    vendor_extensions(b, 3, docs);
}

/// `Any { google.protobuf.Any value = 1; string yaml = 2; }` with the value
/// as YAML text. Compact JSON is YAML flow syntax that Go's yaml decoders
/// read back to the same maps, lists and scalars.
fn encode_any(b: &mut Vec<u8>, value: &Value) {
    string(b, 2, &value.to_string());
}

/// `repeated NamedAny` for every `x-` key of `obj`.
fn vendor_extensions(b: &mut Vec<u8>, field: u32, obj: &Map<String, Value>) {
    for (name, value) in obj.iter().filter(|(k, _)| k.starts_with("x-")) {
        named(b, field, name, |b| encode_any(b, value));
    }
}

// --- fields from JSON -------------------------------------------------------

fn str_field(b: &mut Vec<u8>, field: u32, obj: &Map<String, Value>, name: &str) {
    if let Some(Value::String(value)) = obj.get(name) {
        string(b, field, value);
    }
}

fn strings_field(b: &mut Vec<u8>, field: u32, obj: &Map<String, Value>, name: &str) {
    if let Some(Value::Array(values)) = obj.get(name) {
        for value in values.iter().filter_map(Value::as_str) {
            repeated_string(b, field, value);
        }
    }
}

fn bool_field(b: &mut Vec<u8>, field: u32, obj: &Map<String, Value>, name: &str) {
    if let Some(Value::Bool(true)) = obj.get(name) {
        key(b, field, WIRE_VARINT);
        varint(b, 1);
    }
}

/// A `double` field (wire type 1, little-endian IEEE 754).
fn double_field(b: &mut Vec<u8>, field: u32, obj: &Map<String, Value>, name: &str) {
    if let Some(value) = obj.get(name).and_then(Value::as_f64) {
        if value != 0.0 {
            key(b, field, WIRE_FIXED64);
            b.extend_from_slice(&value.to_le_bytes());
        }
    }
}

/// An `int64` field: a varint of the two's-complement value, so negative
/// numbers take ten bytes as in every protobuf implementation.
fn int_field(b: &mut Vec<u8>, field: u32, obj: &Map<String, Value>, name: &str) {
    if let Some(value) = obj.get(name).and_then(Value::as_i64) {
        if value != 0 {
            key(b, field, WIRE_VARINT);
            // Reinterpreting the bits is the int64 wire encoding.
            varint(b, value as u64);
        }
    }
}

fn any_field(b: &mut Vec<u8>, field: u32, obj: &Map<String, Value>, name: &str) {
    if let Some(value) = obj.get(name) {
        message(b, field, |b| encode_any(b, value));
    }
}

fn anys_field(b: &mut Vec<u8>, field: u32, obj: &Map<String, Value>, name: &str) {
    if let Some(Value::Array(values)) = obj.get(name) {
        for value in values {
            message(b, field, |b| encode_any(b, value));
        }
    }
}

/// A message field from a JSON object under `name`; other JSON types are
/// not that message and are left out.
fn object_field(
    b: &mut Vec<u8>,
    field: u32,
    obj: &Map<String, Value>,
    name: &str,
    encode: impl FnOnce(&mut Vec<u8>, &Map<String, Value>),
) {
    if let Some(Value::Object(inner)) = obj.get(name) {
        message(b, field, |b| encode(b, inner));
    }
}

// --- wire format ------------------------------------------------------------

const WIRE_VARINT: u32 = 0;
const WIRE_FIXED64: u32 = 1;
const WIRE_LEN: u32 = 2;

fn varint(b: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        // Truncation keeps the low seven bits, which is the point.
        b.push((value as u8 & 0x7f) | 0x80);
        value >>= 7;
    }
    b.push(value as u8);
}

fn key(b: &mut Vec<u8>, field: u32, wire_type: u32) {
    varint(b, u64::from((field << 3) | wire_type));
}

fn bytes(b: &mut Vec<u8>, field: u32, value: &[u8]) {
    key(b, field, WIRE_LEN);
    varint(b, value.len() as u64);
    b.extend_from_slice(value);
}

/// A singular proto3 string: empty is the default and is not written.
fn string(b: &mut Vec<u8>, field: u32, value: &str) {
    if !value.is_empty() {
        bytes(b, field, value.as_bytes());
    }
}

/// One element of a repeated string: always written, empty or not.
fn repeated_string(b: &mut Vec<u8>, field: u32, value: &str) {
    bytes(b, field, value.as_bytes());
}

/// A length-delimited sub-message. The body is built aside because its
/// length prefix comes first; the documents are a few hundred kilobytes and
/// a dozen levels deep, so the copying costs little and happens once.
fn message(b: &mut Vec<u8>, field: u32, encode: impl FnOnce(&mut Vec<u8>)) {
    let mut body = Vec::new();
    encode(&mut body);
    bytes(b, field, &body);
}

/// One of gnostic's `Named*` map entries: name = 1, value = 2.
fn named(b: &mut Vec<u8>, field: u32, name: &str, value: impl FnOnce(&mut Vec<u8>)) {
    message(b, field, |b| {
        string(b, 1, name);
        message(b, 2, value);
    });
}

#[cfg(test)]
#[path = "gnostic_tests.rs"]
mod tests;
