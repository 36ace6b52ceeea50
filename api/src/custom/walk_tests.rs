use serde_json::json;

use super::*;

fn widget_schema() -> Schema {
    Schema::parse(&json!({
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "required": ["size"],
                "properties": {
                    "size": {"type": "integer", "minimum": 1, "maximum": 10},
                    "color": {"type": "string", "enum": ["red", "blue"], "default": "red"},
                    "name": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 5},
                    "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set", "maxItems": 3},
                    "ports": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["name"],
                        "items": {"type": "object", "properties": {"name": {"type": "string"}, "port": {"type": "integer", "default": 80}}}
                    },
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                    "port": {"x-kubernetes-int-or-string": true},
                    "when": {"type": "string", "format": "date-time"},
                    "note": {"type": "string", "nullable": true}
                }
            },
            "status": {"type": "object", "properties": {"phase": {"type": "string"}}}
        }
    }))
    .expect("a structural schema")
}

fn messages(errors: &[FieldError]) -> Vec<String> {
    errors.iter().map(FieldError::render).collect()
}

#[test]
fn unknown_fields_are_pruned_and_reported_with_their_paths() {
    let mut widget = json!({
        "apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w"},
        "spec": {"size": 1, "colour": "red", "ports": [{"name": "a", "extra": 1}],
                 "labels": {"a": "b"}, "free": {"anything": {"goes": 1}}},
        "extra": true
    });
    let pruned = prune(&widget_schema(), &mut widget);
    assert_eq!(pruned, ["spec.colour", "spec.ports[0].extra", "extra"]);
    assert_eq!(
        widget,
        json!({
            "apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "w"},
            "spec": {"size": 1, "ports": [{"name": "a"}], "labels": {"a": "b"},
                     "free": {"anything": {"goes": 1}}}
        })
    );
}

#[test]
fn defaults_fill_absent_fields_top_down() {
    let mut widget = json!({"spec": {"size": 1, "ports": [{"name": "a"}], "note": null}});
    apply_defaults(&widget_schema(), &mut widget);
    assert_eq!(widget["spec"]["color"], "red");
    assert_eq!(widget["spec"]["ports"][0]["port"], 80);
    assert_eq!(widget["spec"]["note"], json!(null), "nullable nulls stay");
}

#[test]
fn wrong_types_are_reported_as_kube_openapi_words_them() {
    let widget = json!({"spec": {"size": "three", "tags": "a", "port": true, "labels": {"a": 1}}});
    assert_eq!(
        messages(&validate(&widget_schema(), &widget)),
        [
            r#"spec.size: Invalid value: "string": spec.size in body must be of type integer: "string""#,
            r#"spec.tags: Invalid value: "string": spec.tags in body must be of type array: "string""#,
            r#"spec.port: Invalid value: "boolean": spec.port in body must be of type : "boolean""#,
            r#"spec.labels.a: Invalid value: "integer": spec.labels.a in body must be of type string: "integer""#,
        ]
    );
    assert_eq!(
        validate(&widget_schema(), &widget)[0].reason,
        "FieldValueTypeInvalid"
    );
}

#[test]
fn value_validations_use_upstreams_messages() {
    let widget = json!({"spec": {"size": 0, "color": "green", "name": "Abcdefg",
                                 "tags": ["a", "b", "a", "c"], "when": "soon",
                                 "ports": [{"name": "x"}, {"name": "x"}]}});
    assert_eq!(
        messages(&validate(&widget_schema(), &widget)),
        [
            r#"spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1"#,
            r#"spec.color: Unsupported value: "green": supported values: "red", "blue""#,
            r#"spec.name: Too long: may not be more than 5 bytes"#,
            r#"spec.name: Invalid value: "Abcdefg": spec.name in body should match '^[a-z]+$'"#,
            r#"spec.tags: Too many: 4: must have at most 3 items"#,
            r#"spec.tags[2]: Duplicate value: "a""#,
            r#"spec.when: Invalid value: "soon": spec.when in body must be of type date-time: "soon""#,
            r#"spec.ports[1]: Duplicate value: map[string]interface {}{"name":"x"}"#,
        ]
    );
}

#[test]
fn required_fields_and_nulls() {
    let widget = json!({"spec": {"note": null, "name": null}});
    assert_eq!(
        messages(&validate(&widget_schema(), &widget)),
        [
            "spec.size: Required value",
            r#"spec.name: Invalid value: "null": spec.name in body must be of type string: "null""#,
        ]
    );
}

#[test]
fn status_writes_are_checked_from_the_status_down() {
    let widget = json!({"spec": {"size": "wrong but not looked at"}, "status": {"phase": 3}});
    assert_eq!(
        messages(&validate_status(&widget_schema(), &widget)),
        [
            r#"status.phase: Invalid value: "integer": phase in body must be of type string: "integer""#
        ]
    );
}

#[test]
fn embedded_resources_name_their_kind_and_carry_valid_metadata() {
    let schema = Schema::parse(&json!({"type": "object", "properties": {"spec": {
        "type": "object", "properties": {"template": {
            "type": "object", "x-kubernetes-embedded-resource": true,
            "x-kubernetes-preserve-unknown-fields": true}}}}}))
    .unwrap();
    let template = |template: serde_json::Value| json!({"spec": {"template": template}});
    let unnamed =
        template(json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"labels": {"app": "x"}}}));
    assert!(validate(&schema, &unnamed).is_empty());
    let bad = template(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "a/b", "labels": {"bad key": "x"}}}));
    assert_eq!(
        messages(&validate(&schema, &bad)),
        [
            r#"spec.template.metadata.name: Invalid value: "a/b": may not contain '/'"#,
            r#"spec.template.metadata.labels: Invalid value: "bad key": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"#,
        ]
    );
}
