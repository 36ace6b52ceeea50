//! Tests of the gnostic encoding. The bytes are read back with a decoder
//! written here from the wire format (prost's key and varint readers only)
//! and the field numbers of `openapiv2/OpenAPIv2.proto`, so a wrong number
//! or wire type in the encoder shows up as a mismatch, not as agreement
//! between two copies of one table.

use std::time::Instant;

use prost::encoding::{decode_key, decode_varint, WireType};
use serde_json::{json, Map, Value};

use super::super::{OpenApiDocuments, OpenApiResource};
use super::*;

#[derive(Debug, Clone, Copy)]
enum Field<'a> {
    Varint(u64),
    Fixed64(u64),
    Bytes(&'a [u8]),
}

/// A decoded message: its fields in wire order.
struct Msg<'a>(Vec<(u32, Field<'a>)>);

impl<'a> Msg<'a> {
    fn decode(mut buf: &'a [u8]) -> Self {
        let mut fields = Vec::new();
        while !buf.is_empty() {
            let (tag, wire_type) = decode_key(&mut buf).expect("key");
            let field = match wire_type {
                WireType::Varint => Field::Varint(decode_varint(&mut buf).expect("varint")),
                WireType::SixtyFourBit => {
                    let (bytes, rest) = buf.split_at(8);
                    buf = rest;
                    Field::Fixed64(u64::from_le_bytes(bytes.try_into().expect("8 bytes")))
                }
                WireType::LengthDelimited => {
                    let len = decode_varint(&mut buf).expect("length") as usize;
                    assert!(len <= buf.len(), "length {len} past the end");
                    let (bytes, rest) = buf.split_at(len);
                    buf = rest;
                    Field::Bytes(bytes)
                }
                other => panic!("unexpected wire type {other:?}"),
            };
            fields.push((tag, field));
        }
        Msg(fields)
    }

    fn all(&self, tag: u32) -> impl Iterator<Item = Field<'a>> + '_ {
        self.0
            .iter()
            .filter(move |(t, _)| *t == tag)
            .map(|(_, f)| *f)
    }

    /// The last occurrence, as protobuf merges singular fields.
    fn one(&self, tag: u32) -> Option<Field<'a>> {
        self.all(tag).last()
    }

    fn has(&self, tag: u32) -> bool {
        self.one(tag).is_some()
    }

    fn string(&self, tag: u32) -> Option<&'a str> {
        self.one(tag).map(as_str)
    }

    fn strings(&self, tag: u32) -> Vec<&'a str> {
        self.all(tag).map(as_str).collect()
    }

    fn msg(&self, tag: u32) -> Option<Msg<'a>> {
        self.one(tag).map(as_msg)
    }

    fn msgs(&self, tag: u32) -> Vec<Msg<'a>> {
        self.all(tag).map(as_msg).collect()
    }

    fn bool(&self, tag: u32) -> bool {
        match self.one(tag) {
            None => false,
            Some(Field::Varint(v)) => v != 0,
            Some(other) => panic!("field {tag} is not a varint: {other:?}"),
        }
    }

    fn tags(&self) -> Vec<u32> {
        self.0.iter().map(|(t, _)| *t).collect()
    }
}

fn as_str(field: Field<'_>) -> &str {
    match field {
        Field::Bytes(b) => std::str::from_utf8(b).expect("UTF-8 string"),
        other => panic!("not a string: {other:?}"),
    }
}

fn as_msg(field: Field<'_>) -> Msg<'_> {
    match field {
        Field::Bytes(b) => Msg::decode(b),
        other => panic!("not a message: {other:?}"),
    }
}

/// `Any.yaml` (field 2) parsed; the encoder writes JSON, which is YAML.
fn any_value(any: &Msg<'_>) -> Value {
    serde_json::from_str(any.string(2).expect("Any.yaml")).expect("Any.yaml is JSON")
}

/// `repeated NamedAny` as a JSON object.
fn named_anys(msgs: Vec<Msg<'_>>, out: &mut Map<String, Value>) {
    for named in msgs {
        let name = named.string(1).expect("NamedAny.name");
        let value = any_value(&named.msg(2).expect("NamedAny.value"));
        out.insert(name.to_owned(), value);
    }
}

fn strings_json(values: Vec<&str>) -> Value {
    Value::Array(
        values
            .into_iter()
            .map(|s| Value::String(s.into()))
            .collect(),
    )
}

/// A decoded `Schema` back in Swagger JSON, for the keys the served
/// documents use (anything else would make the comparison fail).
fn schema_json(schema: &Msg<'_>) -> Value {
    let mut out = Map::new();
    for (tag, key) in [(1, "$ref"), (2, "format"), (4, "description")] {
        if let Some(s) = schema.string(tag) {
            out.insert(key.into(), s.into());
        }
    }
    let required = schema.strings(19);
    if !required.is_empty() {
        out.insert("required".into(), strings_json(required));
    }
    if let Some(additional) = schema.msg(21) {
        let value = match additional.msg(1) {
            Some(inner) => schema_json(&inner),
            None => Value::Bool(additional.bool(2)),
        };
        out.insert("additionalProperties".into(), value);
    }
    if let Some(types) = schema.msg(22) {
        let mut values = types.strings(1);
        let value = if values.len() == 1 {
            Value::String(values.remove(0).into())
        } else {
            strings_json(values)
        };
        out.insert("type".into(), value);
    }
    if let Some(items) = schema.msg(23) {
        let mut schemas: Vec<Value> = items.msgs(1).iter().map(schema_json).collect();
        let value = if schemas.len() == 1 {
            schemas.remove(0)
        } else {
            Value::Array(schemas)
        };
        out.insert("items".into(), value);
    }
    if let Some(properties) = schema.msg(25) {
        let mut fields = Map::new();
        for named in properties.msgs(1) {
            let name = named.string(1).expect("NamedSchema.name");
            fields.insert(
                name.into(),
                schema_json(&named.msg(2).expect("NamedSchema.value")),
            );
        }
        out.insert("properties".into(), Value::Object(fields));
    }
    named_anys(schema.msgs(31), &mut out);
    Value::Object(out)
}

/// A decoded `ParametersItem` back in Swagger JSON.
fn parameter_json(item: &Msg<'_>) -> Value {
    let parameter = item.msg(1).expect("ParametersItem.parameter");
    let mut out = Map::new();
    if let Some(body) = parameter.msg(1) {
        out.insert("in".into(), body.string(3).expect("in").into());
        out.insert("name".into(), body.string(2).expect("name").into());
        out.insert("required".into(), body.bool(4).into());
        let schema = body.msg(5).expect("BodyParameter.schema");
        out.insert("schema".into(), schema_json(&schema));
        return Value::Object(out);
    }
    let non_body = parameter.msg(2).expect("Parameter.non_body_parameter");
    // QueryParameterSubSchema (3): type = 6, unique_items = 20;
    // PathParameterSubSchema (4): type = 5, unique_items = 19.
    let (sub, type_tag, unique_tag) = match (non_body.msg(3), non_body.msg(4)) {
        (Some(query), None) => (query, 6, 20),
        (None, Some(path)) => (path, 5, 19),
        _ => panic!(
            "expected a query or path parameter, got {:?}",
            non_body.tags()
        ),
    };
    out.insert("name".into(), sub.string(4).expect("name").into());
    out.insert("in".into(), sub.string(2).expect("in").into());
    out.insert(
        "description".into(),
        sub.string(3).expect("description").into(),
    );
    if sub.bool(1) {
        out.insert("required".into(), true.into());
    }
    out.insert("type".into(), sub.string(type_tag).expect("type").into());
    if sub.bool(unique_tag) {
        out.insert("uniqueItems".into(), true.into());
    }
    Value::Object(out)
}

/// A decoded `Operation` back in Swagger JSON.
fn operation_json(op: &Msg<'_>) -> Value {
    let mut out = Map::new();
    out.insert("tags".into(), strings_json(op.strings(1)));
    out.insert(
        "description".into(),
        op.string(3).expect("description").into(),
    );
    out.insert(
        "operationId".into(),
        op.string(5).expect("operationId").into(),
    );
    out.insert("consumes".into(), strings_json(op.strings(7)));
    out.insert("produces".into(), strings_json(op.strings(6)));
    out.insert("schemes".into(), strings_json(op.strings(10)));
    let params: Vec<Value> = op.msgs(8).iter().map(parameter_json).collect();
    if !params.is_empty() {
        out.insert("parameters".into(), Value::Array(params));
    }
    let mut responses = Map::new();
    for named in op.msg(9).expect("Operation.responses").msgs(1) {
        let code = named.string(1).expect("NamedResponseValue.name");
        let response = named
            .msg(2)
            .expect("ResponseValue")
            .msg(1)
            .expect("ResponseValue.response");
        let mut entry = Map::new();
        entry.insert(
            "description".into(),
            response.string(1).expect("description").into(),
        );
        if let Some(item) = response.msg(2) {
            let schema = item.msg(1).expect("SchemaItem.schema");
            entry.insert("schema".into(), schema_json(&schema));
        }
        responses.insert(code.into(), Value::Object(entry));
    }
    out.insert("responses".into(), Value::Object(responses));
    named_anys(op.msgs(13), &mut out);
    Value::Object(out)
}

fn path_item_json(item: &Msg<'_>) -> Value {
    let mut out = Map::new();
    for (tag, method) in [
        (2, "get"),
        (3, "put"),
        (4, "post"),
        (5, "delete"),
        (8, "patch"),
    ] {
        if let Some(op) = item.msg(tag) {
            out.insert(method.into(), operation_json(&op));
        }
    }
    let params: Vec<Value> = item.msgs(9).iter().map(parameter_json).collect();
    out.insert("parameters".into(), Value::Array(params));
    Value::Object(out)
}

fn resource(group: &str, version: &str, kind: &str, plural: &str, def: &str) -> OpenApiResource {
    OpenApiResource {
        group: group.into(),
        version: version.into(),
        kind: kind.into(),
        resource: plural.into(),
        namespaced: true,
        verbs: [
            "create", "delete", "get", "list", "patch", "update", "watch",
        ]
        .map(String::from)
        .to_vec(),
        definition: def.into(),
        schema: None,
    }
}

fn documents() -> OpenApiDocuments {
    let resources = [
        resource(
            "",
            "v1",
            "ConfigMap",
            "configmaps",
            "io.k8s.api.core.v1.ConfigMap",
        ),
        resource("", "v1", "Pod", "pods", "io.k8s.api.core.v1.Pod"),
        resource(
            "apps",
            "v1",
            "Deployment",
            "deployments",
            "io.k8s.api.apps.v1.Deployment",
        ),
        resource(
            "example.com",
            "v1",
            "Widget",
            "widgets",
            "com.example.v1.Widget",
        ),
    ];
    OpenApiDocuments::build(&resources).expect("build")
}

fn definitions<'a>(document: &Msg<'a>) -> Vec<(&'a str, Msg<'a>)> {
    document
        .msg(9)
        .expect("Document.definitions")
        .msgs(1)
        .into_iter()
        .map(|named| {
            let name = named.string(1).expect("NamedSchema.name");
            (name, named.msg(2).expect("NamedSchema.value"))
        })
        .collect()
}

fn field<'a>(schema: &Msg<'a>, name: &str) -> Msg<'a> {
    schema
        .msg(25)
        .expect("Schema.properties")
        .msgs(1)
        .into_iter()
        .find(|named| named.string(1) == Some(name))
        .and_then(|named| named.msg(2))
        .unwrap_or_else(|| panic!("no property {name}"))
}

fn extension(schema_extensions: Vec<Msg<'_>>, name: &str) -> Option<Value> {
    schema_extensions
        .into_iter()
        .find(|named| named.string(1) == Some(name))
        .map(|named| any_value(&named.msg(2).expect("NamedAny.value")))
}

#[test]
fn document_header_and_kubectl_facts() {
    let docs = documents();
    let document = Msg::decode(docs.v2_protobuf().expect("v2 protobuf"));
    assert_eq!(document.string(1), Some("2.0"));
    let info = document.msg(2).expect("Document.info");
    assert_eq!(info.string(1), Some("Kubernetes"));
    assert_eq!(info.string(2), Some(super::super::API_RELEASE));

    let defs = definitions(&document);
    let deployment = &defs
        .iter()
        .find(|(name, _)| *name == "io.k8s.api.apps.v1.Deployment")
        .expect("Deployment definition")
        .1;
    assert_eq!(
        extension(deployment.msgs(31), "x-kubernetes-group-version-kind"),
        Some(json!([{"group": "apps", "kind": "Deployment", "version": "v1"}]))
    );
    assert_eq!(
        deployment.msg(22).expect("Schema.type").strings(1),
        ["object"]
    );
    let spec = field(deployment, "spec");
    assert_eq!(
        spec.string(1),
        Some("#/definitions/io.k8s.api.apps.v1.DeploymentSpec")
    );
    for name in ["apiVersion", "kind", "metadata", "status"] {
        field(deployment, name);
    }

    let pod_spec = &defs
        .iter()
        .find(|(name, _)| *name == "io.k8s.api.core.v1.PodSpec")
        .expect("PodSpec definition")
        .1;
    let containers = field(pod_spec, "containers");
    assert_eq!(
        extension(containers.msgs(31), "x-kubernetes-patch-merge-key"),
        Some(json!("name"))
    );
    assert_eq!(
        extension(containers.msgs(31), "x-kubernetes-patch-strategy"),
        Some(json!("merge"))
    );
    let items = containers.msg(23).expect("Schema.items").msgs(1);
    assert_eq!(items.len(), 1);
    assert_eq!(
        items[0].string(1),
        Some("#/definitions/io.k8s.api.core.v1.Container")
    );
    assert!(pod_spec.strings(19).contains(&"containers"));

    // ConfigMap.data is a map of strings: type object + additionalProperties.
    let config_map = &defs
        .iter()
        .find(|(name, _)| *name == "io.k8s.api.core.v1.ConfigMap")
        .expect("ConfigMap definition")
        .1;
    let data = field(config_map, "data");
    let value = data
        .msg(21)
        .and_then(|a| a.msg(1))
        .expect("additionalProperties schema");
    assert_eq!(value.msg(22).expect("type").strings(1), ["string"]);
}

/// What kubectl's v2 query-param verifier does: find a PATCH operation whose
/// group-version-kind extension names the kind, then a query parameter
/// named `fieldValidation` among that operation's parameters.
#[test]
fn v2_verifier_finds_field_validation_on_patch() {
    let docs = documents();
    let document = Msg::decode(docs.v2_protobuf().expect("v2 protobuf"));
    let paths = document.msg(8).expect("Document.paths");
    let supports = |gvk: Value| {
        paths.msgs(2).iter().find_map(|named| {
            let patch = named.msg(2)?.msg(8)?;
            if extension(patch.msgs(13), "x-kubernetes-group-version-kind") != Some(gvk.clone()) {
                return None;
            }
            Some(patch.msgs(8).iter().any(|item| {
                item.msg(1)
                    .and_then(|p| p.msg(2))
                    .and_then(|nb| nb.msg(3))
                    .and_then(|q| q.string(4).map(str::to_owned))
                    .as_deref()
                    == Some("fieldValidation")
            }))
        })
    };
    for (group, kind) in [
        ("apps", "Deployment"),
        ("", "ConfigMap"),
        ("example.com", "Widget"),
    ] {
        assert_eq!(
            supports(json!({"group": group, "kind": kind, "version": "v1"})),
            Some(true),
            "{group}/{kind}"
        );
    }
    assert_eq!(
        supports(json!({"group": "", "kind": "List", "version": "v1"})),
        None
    );
}

/// Everything in the JSON document is in the protobuf one: decoding the
/// definitions and paths back to Swagger JSON gives the JSON document's.
#[test]
fn protobuf_round_trips_to_the_json_document() {
    let docs = documents();
    let json: Value = serde_json::from_slice(docs.v2().expect("v2")).expect("v2 JSON");
    let document = Msg::decode(docs.v2_protobuf().expect("v2 protobuf"));

    let decoded: Map<String, Value> = definitions(&document)
        .iter()
        .map(|(name, schema)| ((*name).to_owned(), schema_json(schema)))
        .collect();
    let expected = json["definitions"].as_object().expect("definitions");
    assert_eq!(decoded.len(), expected.len());
    for (name, schema) in expected {
        assert_eq!(decoded.get(name), Some(schema), "definition {name}");
    }

    let decoded: Map<String, Value> = document
        .msg(8)
        .expect("Document.paths")
        .msgs(2)
        .iter()
        .map(|named| {
            let name = named.string(1).expect("NamedPathItem.name");
            (
                name.to_owned(),
                path_item_json(&named.msg(2).expect("PathItem")),
            )
        })
        .collect();
    let expected = json["paths"].as_object().expect("paths");
    assert_eq!(decoded.len(), expected.len());
    for (path, item) in expected {
        assert_eq!(decoded.get(path), Some(item), "path {path}");
    }
}

/// kube-openapi's `NewOpenAPIData` rejects the whole document (and kubectl
/// then validates nothing) if any definition breaks its rules; check them on
/// the decoded message.
#[test]
fn definitions_parse_under_kube_openapi_rules() {
    fn check(schema: &Msg<'_>, path: &str, names: &[&str]) {
        let types = schema.msg(22).map(|t| t.strings(1)).unwrap_or_default();
        if let Some(reference) = schema.string(1) {
            assert!(types.is_empty(), "{path}: reference with a type");
            assert!(
                schema.msg(25).is_none_or(|p| p.msgs(1).is_empty()),
                "{path}: reference with properties"
            );
            let target = reference
                .strip_prefix("#/definitions/")
                .unwrap_or_else(|| panic!("{path}: reference {reference}"));
            assert!(names.contains(&target), "{path}: dangling {reference}");
            return;
        }
        assert!(types.len() <= 1, "{path}: several types {types:?}");
        let properties = schema.msg(25);
        match types.first().copied() {
            Some("array") => {
                let items = schema.msg(23).expect("array items").msgs(1);
                assert_eq!(items.len(), 1, "{path}: array needs one item schema");
                check(&items[0], &format!("{path}[]"), names);
            }
            Some("object") | None => {
                if let Some(properties) = properties {
                    for named in properties.msgs(1) {
                        let name = named.string(1).expect("name");
                        let value = named.msg(2).expect("value");
                        check(&value, &format!("{path}.{name}"), names);
                    }
                } else if let Some(inner) = schema.msg(21).and_then(|a| a.msg(1)) {
                    check(&inner, &format!("{path}{{}}"), names);
                }
            }
            Some(primitive) => assert!(
                ["string", "number", "integer", "boolean"].contains(&primitive),
                "{path}: unknown primitive {primitive}"
            ),
        }
    }
    let docs = documents();
    let document = Msg::decode(docs.v2_protobuf().expect("v2 protobuf"));
    let defs = definitions(&document);
    let names: Vec<&str> = defs.iter().map(|(name, _)| *name).collect();
    for (name, schema) in &defs {
        check(schema, name, &names);
    }
}

/// Field numbers and wire types of the parts the served documents do not
/// use, read straight off the bytes.
#[test]
fn less_common_keywords_use_their_field_numbers() {
    let schema = json!({
        "type": ["string", "null"],
        "title": "t",
        "default": {"a": [1, "b"]},
        "maximum": 5.5,
        "minLength": 3,
        "maxItems": -1,
        "enum": ["a", "b"],
        "additionalProperties": false,
        "items": [{"type": "string"}, {"type": "integer"}],
        "allOf": [{"$ref": "#/definitions/X"}],
        "properties": {},
        "readOnly": true,
        "exclusiveMinimum": false,
        "x-kubernetes-int-or-string": true,
    });
    let mut bytes = Vec::new();
    encode_schema(&mut bytes, &schema);
    let msg = Msg::decode(&bytes);
    assert_eq!(msg.msg(22).expect("type").strings(1), ["string", "null"]);
    assert_eq!(msg.string(3), Some("t"));
    assert_eq!(
        any_value(&msg.msg(5).expect("default")),
        json!({"a": [1, "b"]})
    );
    match msg.one(7) {
        Some(Field::Fixed64(bits)) => assert_eq!(f64::from_bits(bits), 5.5),
        other => panic!("maximum: {other:?}"),
    }
    assert!(matches!(msg.one(12), Some(Field::Varint(3))));
    assert!(matches!(msg.one(14), Some(Field::Varint(v)) if v as i64 == -1));
    let enums: Vec<Value> = msg.msgs(20).iter().map(any_value).collect();
    assert_eq!(enums, [json!("a"), json!("b")]);
    let additional = msg.msg(21).expect("additionalProperties");
    assert!(additional.has(2) && !additional.bool(2), "explicit false");
    assert_eq!(msg.msg(23).expect("items").msgs(1).len(), 2);
    assert_eq!(msg.msgs(24)[0].string(1), Some("#/definitions/X"));
    assert!(msg.has(25), "empty properties stay present");
    assert!(msg.msg(25).expect("properties").0.is_empty());
    assert!(msg.bool(27));
    assert!(!msg.has(10), "false scalars are left out");
    assert_eq!(
        extension(msg.msgs(31), "x-kubernetes-int-or-string"),
        Some(json!(true))
    );

    let path_item = json!({
        "parameters": [
            {"name": "h", "in": "header", "type": "string"},
            {"name": "f", "in": "formData", "type": "file", "allowEmptyValue": true},
            {"$ref": "#/parameters/p"},
        ],
        "x-a": 1,
    });
    let mut bytes = Vec::new();
    encode_path_item(&mut bytes, path_item.as_object().expect("object"));
    let item = Msg::decode(&bytes);
    let params = item.msgs(9);
    let header = params[0]
        .msg(1)
        .and_then(|p| p.msg(2))
        .and_then(|n| n.msg(1));
    let header = header.expect("header parameter");
    assert_eq!(
        (header.string(4), header.string(5)),
        (Some("h"), Some("string"))
    );
    let form = params[1]
        .msg(1)
        .and_then(|p| p.msg(2))
        .and_then(|n| n.msg(2));
    let form = form.expect("formData parameter");
    assert_eq!((form.string(4), form.string(6)), (Some("f"), Some("file")));
    assert!(form.bool(5));
    let reference = params[2].msg(2).expect("JsonReference");
    assert_eq!(reference.string(1), Some("#/parameters/p"));
    assert_eq!(extension(item.msgs(10), "x-a"), Some(json!(1)));
}

#[test]
fn encoding_is_deterministic_and_timed() {
    let docs = documents();
    let again = documents();
    assert_eq!(
        docs.v2_protobuf().expect("v2 protobuf"),
        again.v2_protobuf().expect("v2 protobuf")
    );

    // Time the encoding alone on the served document's own values.
    let json: Value = serde_json::from_slice(docs.v2().expect("v2")).expect("v2 JSON");
    let paths = json["paths"].as_object().expect("paths");
    let definitions: std::collections::BTreeMap<&str, &Value> = json["definitions"]
        .as_object()
        .expect("definitions")
        .iter()
        .map(|(k, v)| (k.as_str(), v))
        .collect();
    let start = Instant::now();
    let bytes = document("2.0", &super::super::INFO, paths, &definitions);
    let encoded = start.elapsed();
    assert_eq!(bytes, docs.v2_protobuf().expect("v2 protobuf"));
    println!(
        "v2 JSON {} bytes, protobuf {} bytes, encoded in {encoded:?}",
        docs.v2().expect("v2").len(),
        bytes.len()
    );
}
