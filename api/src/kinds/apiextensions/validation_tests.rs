use serde_json::json;

use super::*;

fn crd() -> Value {
    json!({
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {"size": {"type": "integer", "default": 1}}}}}}}],
            "conversion": {"strategy": "None"}
        },
        "status": {"storedVersions": ["v1"]}
    })
}

fn rendered(crd: &Value, old: Option<&Value>) -> Vec<String> {
    definition(crd, old)
        .iter()
        .map(FieldError::render)
        .collect()
}

#[test]
fn a_valid_definition_passes() {
    assert_eq!(rendered(&crd(), None), Vec::<String>::new());
}

#[test]
fn names_group_and_scope_are_checked_with_upstreams_messages() {
    let mut bad = crd();
    bad["metadata"]["name"] = json!("gadgets.example.com");
    bad["spec"]["group"] = json!("example");
    bad["spec"]["scope"] = json!("Global");
    bad["spec"]["names"]["kind"] = json!("Widget_");
    bad["spec"]["names"]["listKind"] = json!("");
    assert_eq!(
        rendered(&bad, None),
        [
            r#"metadata.name: Invalid value: "gadgets.example.com": must be spec.names.plural+"."+spec.group"#,
            r#"spec.group: Invalid value: "example": should be a domain with at least one dot"#,
            r#"spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced""#,
            r#"spec.names.kind: Invalid value: "Widget_": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"#,
            "spec.names.listKind: Required value",
        ]
    );
}

#[test]
fn schemas_must_be_structural_and_defaults_valid() {
    let mut bad = crd();
    bad["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = json!({
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {
                "size": {"type": "integer", "default": "big"},
                "items": {"type": "array"},
                "loose": {"description": "no type"}}}
        }
    });
    assert_eq!(
        rendered(&bad, None),
        [
            "spec.validation.openAPIV3Schema.properties[spec].properties[items].items: Required value: must be specified",
            "spec.validation.openAPIV3Schema.properties[spec].properties[loose].type: Required value: must not be empty for specified object fields",
        ]
    );
    bad["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        .as_object_mut()
        .unwrap()
        .retain(|k, _| k == "size");
    assert_eq!(
        rendered(&bad, None),
        [
            r#"spec.validation.openAPIV3Schema.properties[spec].properties[size].default: Invalid value: "string": spec.size in body must be of type integer: "string""#
        ]
    );
}

#[test]
fn versions_need_exactly_one_storage_and_a_schema() {
    let mut bad = crd();
    bad["spec"]["versions"] = json!([
        {"name": "v1", "served": true, "storage": false, "schema": {"openAPIV3Schema": {"type": "object"}}},
        {"name": "v2", "served": true, "storage": false}
    ]);
    let errors = rendered(&bad, None);
    assert!(errors[0].starts_with(
        "spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{"
    ));
    assert!(errors[0].ends_with(": must have exactly one version marked as storage version"));
    assert_eq!(
        errors[1],
        "spec.versions[1].schema.openAPIV3Schema: Required value: schemas are required"
    );
}

#[test]
fn updates_keep_group_and_plural() {
    let old = crd();
    let mut new = crd();
    new["spec"]["group"] = json!("example.org");
    new["metadata"]["name"] = json!("widgets.example.org");
    assert_eq!(
        rendered(&new, Some(&old)),
        [r#"spec.group: Invalid value: "example.org": field is immutable"#]
    );
}

#[test]
fn stored_versions_must_hold_the_storage_version() {
    let mut bad = crd();
    bad["status"]["storedVersions"] = json!(["v0"]);
    assert_eq!(
        rendered(&bad, None),
        [
            r#"status.storedVersions: Invalid value: []string{"v0"}: must have the storage version v1"#,
            r#"status.storedVersions[0]: Invalid value: "v0": missing from spec.versions; v0 was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in v0 and removes v0 from status.storedVersions"#,
        ]
    );
}

#[test]
fn validation_rules_are_declared_as_upstream_asks() {
    let mut bad = crd();
    bad["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
        ["x-kubernetes-validations"] = json!([
        {"rule": "  "},
        {"rule": "self.size > 0", "message": "  "},
        {"rule": "self.size > 0", "message": "two\nlines"},
        {"rule": "self.size >\n 0"},
        {"rule": "self.size > 0", "messageExpression": " ", "reason": "FieldValueGone"},
        {"rule": "self.size > 0", "fieldPath": " "},
        {"rule": "self.size > 0", "fieldPath": ".size\n"},
        {"rule": "self.size > 0", "fieldPath": ".colour"},
        {"rule": "self.size >\n 0", "message": "one line", "fieldPath": "['size']",
         "reason": "FieldValueForbidden"}
    ]);
    let at = "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations";
    let mut want = vec![
        format!("{at}[0].rule: Required value: rule is not specified"),
        format!(r#"{at}[1].message: Invalid value: "  ": message must be non-empty if specified"#),
        format!(r#"{at}[2].message: Invalid value: "two\nlines": message must not contain line breaks"#),
        format!("{at}[3].message: Required value: message must be specified if rule contains line breaks"),
        format!("{at}[4].messageExpression: Required value: messageExpression must be non-empty if specified"),
        format!(r#"{at}[4].reason: Unsupported value: "FieldValueGone": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired""#),
        format!(r#"{at}[5].fieldPath: Invalid value: " ": fieldPath must be non-empty if specified"#),
        format!(r#"{at}[5].fieldPath: Invalid value: " ": fieldPath must be a valid path"#),
        format!(r#"{at}[6].fieldPath: Invalid value: ".size\n": fieldPath must not contain line breaks"#),
        format!(r#"{at}[6].fieldPath: Invalid value: ".size\n": fieldPath must be a valid path"#),
        format!(r#"{at}[7].fieldPath: Invalid value: ".colour": fieldPath must be a valid path"#),
    ];
    want.sort();
    assert_eq!(rendered(&bad, None), want);
}
