use serde_json::json;

use super::*;

fn crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList", "shortNames": ["wdg"]},
            "versions": [
                {"name": "v1", "served": true, "storage": true,
                 "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                     "spec": {"type": "object", "properties": {
                         "size": {"type": "integer", "minimum": 0},
                         "replicas": {"type": "integer"},
                         "color": {"type": "string"}}},
                     "status": {"type": "object", "properties": {
                         "replicas": {"type": "integer"}, "selector": {"type": "string"}}}}}},
                 "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.selector"}},
                 "additionalPrinterColumns": [
                     {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
                     {"name": "Color", "type": "string", "jsonPath": ".spec.color", "priority": 1}],
                 "selectableFields": [{"jsonPath": ".spec.color"}]},
                {"name": "v2", "served": true, "storage": false,
                 "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}},
                {"name": "v0", "served": false, "storage": false}
            ],
            "conversion": {"strategy": "None"}
        },
        "status": {"acceptedNames": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList", "shortNames": ["wdg"]}}
    })
}

#[test]
fn a_definition_serves_each_served_version_under_its_accepted_names() {
    let resources = resources_for(&crd(), None).unwrap();
    let versions: Vec<&str> = resources.iter().map(|r| r.version.as_str()).collect();
    assert_eq!(versions, ["v1", "v2"]);
    let v1 = &resources[0];
    assert_eq!(
        v1.key("/registry", Some("ns"), "w"),
        "/registry/example.com/widgets/ns/w"
    );
    assert_eq!(v1.definition, "com.example.v1.Widget");
    assert_eq!(v1.short_names, ["wdg"]);
    assert_eq!(v1.subresources, ["status", "scale"]);
    assert_eq!(v1.selectable_fields, ["spec.color"]);
    assert_eq!(v1.origin, Origin::Custom);
    assert!(!v1.converts_for_storage());
    assert!(resources[1].converts_for_storage());
    assert!(resources[1].subresources.is_empty());
}

#[test]
fn definitions_without_accepted_names_are_not_served() {
    let mut crd = crd();
    crd["status"] = json!({});
    assert_eq!(
        resources_for(&crd, None).unwrap_err(),
        DefinitionError::Missing("accepted names")
    );
}

#[test]
fn objects_decode_validate_print_and_scale() {
    let resources = resources_for(&crd(), None).unwrap();
    let kind = &resources[0].kind_impl;
    let mut widget = json!({
        "kind": "Widget", "apiVersion": "example.com/v1",
        "metadata": {"name": "w1", "colour": "x", "creationTimestamp": "2024-01-01T00:00:00Z"},
        "spec": {"size": -1, "color": "blue", "replicas": 2, "extra": 1},
        "status": {"replicas": 1, "selector": "app=w"}
    });
    let unknown = kind.decode("", &mut widget).unwrap();
    assert_eq!(unknown, ["metadata.colour", "spec.extra"]);
    let errors: Vec<String> = kind
        .validate_create(&widget)
        .iter()
        .map(FieldError::render)
        .collect();
    assert_eq!(
        errors,
        ["spec.size: Invalid value: -1: spec.size in body should be greater than or equal to 0"]
    );
    // Ratcheting: an unchanged invalid value does not fail an update.
    let mut updated = widget.clone();
    updated["spec"]["color"] = json!("red");
    assert!(kind.validate_update(&updated, &widget).is_empty());
    assert!(kind.spec_changed(&updated, &widget));
    let mut status_only = widget.clone();
    status_only["status"]["replicas"] = json!(2);
    assert!(!kind.spec_changed(&status_only, &widget));

    let columns: Vec<String> = kind
        .table_columns()
        .iter()
        .map(|c| c.name.to_string())
        .collect();
    assert_eq!(columns, ["Name", "Size", "Color"]);
    assert_eq!(
        crate::printers::cells_at(&kind.table_cells(&widget), Utc::now()),
        [json!("w1"), json!(-1), json!("blue")]
    );

    let parts = kind.scale_of(&widget);
    assert_eq!(
        (parts.spec_replicas, parts.status_replicas),
        (Some(2), Some(1))
    );
    assert_eq!(parts.selector, "app=w");
    kind.set_scale_replicas(&mut widget, 5);
    assert_eq!(widget["spec"]["replicas"], 5);

    kind.put_in_order("", &mut widget);
    let keys: Vec<&String> = widget.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["apiVersion", "kind", "metadata", "spec", "status"]);

    let v2 = kind.convert(widget, "example.com/v2").unwrap();
    assert_eq!(v2["apiVersion"], "example.com/v2");
}

#[test]
fn a_definition_without_columns_prints_age() {
    let mut crd = crd();
    crd["spec"]["versions"][0]
        .as_object_mut()
        .unwrap()
        .remove("additionalPrinterColumns");
    let resources = resources_for(&crd, None).unwrap();
    let columns: Vec<(String, String)> = resources[0]
        .kind_impl
        .table_columns()
        .iter()
        .map(|c| (c.name.to_string(), c.type_.to_string()))
        .collect();
    assert_eq!(
        columns,
        [
            ("Name".into(), "string".into()),
            ("Age".into(), "date".into())
        ]
    );
}
