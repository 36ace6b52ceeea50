//! CustomResourceDefinitions end to end: a definition applied with kubectl
//! is named, established and served; its custom resources are pruned,
//! defaulted and validated against its schema, print its columns, scale
//! and report status through their subresources, are served at every
//! version, through gRPC too, and go away with the definition.

use crate::common;
use std::time::Duration;

use crate::common::{item_names, table_rows, wait_until, TestServer};
use serde_json::{json, Value};

/// The Widget definition: v1 and v2 alike (v1 stored), as most
/// definitions serve their versions.
fn widgets_crd() -> String {
    let version = |name: &str, storage: bool| {
        VERSION
            .replace("- name: v1", &format!("- name: {name}"))
            .replace("storage: true", &format!("storage: {storage}"))
    };
    format!(
        "{HEAD}  versions:\n{}{}",
        version("v1", true),
        version("v2", false)
    )
}

const HEAD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    plural: widgets
    singular: widget
    kind: Widget
    shortNames: [wdg]
    categories: [all]
"#;

const VERSION: &str = r#"  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            x-kubernetes-validations:
            - rule: "!has(self.replicas) || self.replicas <= 10"
              message: at most 10 replicas
              fieldPath: .replicas
            - rule: "self.size >= oldSelf.size"
              message: widgets do not shrink
            properties:
              size: {type: integer, minimum: 0, description: How big the widget is.}
              color: {type: string, enum: [red, blue], default: red}
              replicas: {type: integer}
              serial: {type: string, format: uuid}
              tags:
                type: array
                items: {type: string}
                x-kubernetes-list-type: set
          status:
            type: object
            properties:
              replicas: {type: integer}
              phase: {type: string}
              selector: {type: string}
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
        labelSelectorPath: .status.selector
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    - {name: Color, type: string, jsonPath: .spec.color}
    - {name: Phase, type: string, jsonPath: .status.phase, priority: 1}
    selectableFields:
    - jsonPath: .spec.color
"#;

const WIDGET: &str = r#"
apiVersion: example.com/v1
kind: Widget
metadata: {name: w1, namespace: default, labels: {app: w}}
spec: {size: 3, replicas: 1}
"#;

const WIDGETS: &str = "/apis/example.com/v1/namespaces/default/widgets";

/// What upstream adds when OpenAPI errors keep the CEL rules from running.
const NOT_CHECKED: &str = r#"<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"#;

fn with_widgets() -> TestServer {
    let server = TestServer::start();
    install_widgets(&server);
    server
}

/// Applies the Widget definition and waits until it is Established.
fn install_widgets(server: &TestServer) {
    server.apply(&widgets_crd());
    server.kubectl_ok(&[
        "wait",
        "--for=condition=Established",
        "crd/widgets.example.com",
        "--timeout=10s",
    ]);
}

fn condition<'a>(crd: &'a Value, type_: &str) -> &'a Value {
    crd["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == type_))
        .unwrap_or_else(|| panic!("no {type_} condition in {crd:#}"))
}

#[test]
fn an_applied_definition_is_named_established_and_served() {
    let server = with_widgets();
    let crd = server.kubectl_json(&["get", "crd", "widgets.example.com", "-o", "json"]);
    assert_eq!(
        crd["status"]["acceptedNames"],
        json!({"plural": "widgets", "singular": "widget", "shortNames": ["wdg"], "kind": "Widget",
               "listKind": "WidgetList", "categories": ["all"]})
    );
    assert_eq!(crd["status"]["storedVersions"], json!(["v1"]));
    assert_eq!(crd["spec"]["conversion"], json!({"strategy": "None"}));
    let accepted = condition(&crd, "NamesAccepted");
    assert_eq!(
        (&accepted["status"], &accepted["reason"]),
        (&json!("True"), &json!("NoConflicts"))
    );
    assert_eq!(accepted["message"], "no conflicts found");
    let established = condition(&crd, "Established");
    assert_eq!(established["reason"], "InitialNamesAccepted");
    assert_eq!(
        established["message"],
        "the initial names have been accepted"
    );

    // Discovery lists both served versions, v1 with its subresources.
    let resources = server.get_json("/apis/example.com/v1");
    let names: Vec<&str> = resources["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["widgets", "widgets/status", "widgets/scale"]);
    assert_eq!(resources["resources"][0]["shortNames"], json!(["wdg"]));
    server.get_json("/apis/example.com/v2");

    // A custom resource: defaulted, its unknown field refused by kubectl's
    // strict field validation in upstream's words.
    let refused = server.kubectl_stdin(
        &["apply", "-f", "-"],
        &WIDGET.replace("replicas: 1}", "replicas: 1, colour: x}"),
    );
    assert!(!refused.status.success());
    assert!(
        common::text(&refused.stderr).contains(
            r#"Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "spec.colour""#
        ),
        "{}",
        common::text(&refused.stderr)
    );
    server.apply(WIDGET);
    let widget = server.kubectl_json(&["get", "wdg", "w1", "-o", "json"]);
    assert_eq!(
        widget["spec"],
        json!({"color": "red", "replicas": 1, "size": 3})
    );
    assert_eq!(widget["metadata"]["generation"], 1);
    assert!(widget.get("status").is_none(), "{widget:#}");

    // Printer columns, short names, categories and another version.
    let table = server.kubectl_ok(&["get", "widgets", "-o", "wide"]);
    let rows = table_rows(&table);
    assert_eq!(rows[0], ["NAME", "SIZE", "COLOR", "PHASE"]);
    // An absent value is a null cell, which kubectl leaves blank.
    assert_eq!(rows[1], ["w1", "3", "red"]);
    let resp = server.curl(
        "GET",
        WIDGETS,
        &[("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")],
        None,
    );
    assert_eq!(
        resp.json()["rows"][0]["cells"],
        json!(["w1", 3, "red", null])
    );
    let all = server.kubectl_ok(&["get", "all"]);
    assert!(all.contains("widget.example.com/w1"), "{all}");
    let v2 = server.kubectl_json(&["get", "widgets.v2.example.com", "w1", "-o", "json"]);
    assert_eq!(v2["apiVersion"], "example.com/v2");
    assert_eq!(v2["metadata"]["uid"], widget["metadata"]["uid"]);

    // selectableFields work as field selectors; others are refused.
    let blue = server.kubectl_ok(&[
        "get",
        "widgets",
        "--field-selector",
        "spec.color=blue",
        "-o",
        "name",
    ]);
    assert_eq!(blue.trim(), "");
    let red = server.kubectl_ok(&[
        "get",
        "widgets",
        "--field-selector",
        "spec.color=red",
        "-o",
        "name",
    ]);
    assert_eq!(red.trim(), "widget.example.com/w1");
    let resp = server.get(&format!("{WIDGETS}?fieldSelector=spec.size%3D3"));
    let status = resp.assert_status(400, "BadRequest");
    assert_eq!(
        status["message"], r#"field label not supported: spec.size"#,
        "{status:#}"
    );

    // The schema is published: kubectl explain reads it.
    let explained = server.kubectl_ok(&[
        "explain",
        "widget.spec.size",
        "--api-version=example.com/v1",
    ]);
    assert!(explained.contains("How big the widget is."), "{explained}");

    // Custom resources are served over gRPC too.
    let got = server.grpc_ok(
        "capstan.v1.Resources/Get",
        &json!({"resource": {"group": "example.com", "version": "v1", "resource": "widgets"},
                "namespace": "default", "name": "w1"}),
    );
    assert_eq!(got["body"]["spec"]["size"], 3);
    let listed = server.grpc_ok(
        "capstan.v1.Resources/List",
        &json!({"resource": {"group": "example.com", "version": "v1", "resource": "widgets"},
                "namespace": "default"}),
    );
    assert_eq!(listed["kind"], "WidgetList");
    assert_eq!(item_names(&listed), ["w1"]);
    // A gRPC watch sees a gRPC create, pruned and defaulted as over REST.
    let widgets = json!({"group": "example.com", "version": "v1", "resource": "widgets"});
    let mut watch = server.grpc_stream(
        "capstan.v1.Resources/Watch",
        &json!({"resource": widgets, "namespace": "default",
                "resourceVersion": listed["resourceVersion"]}),
        30,
    );
    let created = server.grpc_ok(
        "capstan.v1.Resources/Create",
        &json!({"resource": widgets, "namespace": "default",
                "object": {"apiVersion": "example.com/v1", "kind": "Widget",
                           "metadata": {"name": "w-grpc"}, "spec": {"size": 2}}}),
    );
    assert_eq!(created["body"]["spec"], json!({"color": "red", "size": 2}));
    let events = watch.wait_for("the gRPC create watched", |out| {
        let events = common::json_stream(out);
        (!events.is_empty()).then_some(events)
    });
    assert_eq!(events[0]["type"], "ADDED");
    assert_eq!(events[0]["object"]["metadata"]["name"], "w-grpc");
    drop(watch);
    let discovered = server.grpc_ok(
        "capstan.v1.Discovery/ServerResources",
        &json!({"group": "example.com", "version": "v1"}),
    );
    assert_eq!(discovered["resources"][0]["name"], "widgets");
    assert_eq!(discovered["resources"][0]["shortNames"], json!(["wdg"]));
}

#[test]
fn custom_resources_that_break_the_schema_get_upstreams_answer_and_are_not_stored() {
    let server = with_widgets();
    let post = |body: Value| server.post_json(WIDGETS, &body);
    let widget = |name: &str, spec: Value| json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name}, "spec": spec});

    let status = post(widget("typed", json!({"size": "three"}))).assert_status(422, "Invalid");
    assert_eq!(
        status["message"],
        format!(
            r#"Widget.example.com "typed" is invalid: [spec.size: Invalid value: "string": spec.size in body must be of type integer: "string", {NOT_CHECKED}]"#
        )
    );
    assert_eq!(status["details"]["group"], "example.com");
    assert_eq!(status["details"]["kind"], "Widget");
    assert_eq!(
        status["details"]["causes"][0],
        json!({"reason": "FieldValueTypeInvalid", "field": "spec.size",
                "message": r#"Invalid value: "string": spec.size in body must be of type integer: "string""#})
    );

    // Formats as kube-openapi checks them: a UUID without dashes is one.
    let status = post(widget("serial", json!({"size": 1, "serial": "not-a-uuid"})))
        .assert_status(422, "Invalid");
    assert_eq!(
        status["details"]["causes"][0],
        json!({"reason": "FieldValueTypeInvalid", "field": "spec.serial",
                "message": r#"Invalid value: "not-a-uuid": spec.serial in body must be of type uuid: "not-a-uuid""#})
    );
    // (A dry run: what this test stores is checked at its end.)
    let created = server.post_json(
        &format!("{WIDGETS}?dryRun=All"),
        &widget(
            "serial",
            json!({"size": 1, "serial": "123E4567E89B12D3A456426614174000"}),
        ),
    );
    assert_eq!(created.status, 201, "{created:#?}");

    let status = post(widget(
        "several",
        json!({"size": -1, "color": "green", "tags": ["a", "a"], "replicas": -2}),
    ))
    .assert_status(422, "Invalid");
    let causes: Vec<String> = status["details"]["causes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            format!(
                "{}: {}",
                c["field"].as_str().unwrap(),
                c["message"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        causes,
        [
            "spec.size: Invalid value: -1: spec.size in body should be greater than or equal to 0",
            r#"spec.color: Unsupported value: "green": supported values: "red", "blue""#,
            r#"spec.tags[1]: Duplicate value: "a""#,
            ".spec.replicas: Invalid value: -2: should be a non-negative integer",
            NOT_CHECKED,
        ]
    );

    // The CEL rules run once the OpenAPI checks pass.
    let status =
        post(widget("crowded", json!({"size": 1, "replicas": 11}))).assert_status(422, "Invalid");
    assert_eq!(
        status["message"],
        r#"Widget.example.com "crowded" is invalid: spec.replicas: Invalid value: "object": at most 10 replicas"#
    );

    let status = post(json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "missing"}, "spec": {}}))
        .assert_status(422, "Invalid");
    assert_eq!(
        status["message"],
        format!(
            r#"Widget.example.com "missing" is invalid: [spec.size: Required value, {NOT_CHECKED}]"#
        )
    );

    // Strict field validation on a direct request: 400, nothing stored.
    let resp = server.curl(
        "POST",
        &format!("{WIDGETS}?fieldValidation=Strict"),
        &[("Content-Type", "application/json")],
        Some(
            widget("strict", json!({"size": 1, "extra": true}))
                .to_string()
                .as_bytes(),
        ),
    );
    let status = resp.assert_status(400, "BadRequest");
    assert_eq!(
        status["message"],
        r#"Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "spec.extra""#
    );
    // Warn (the default without kubectl): pruned, stored, warned.
    let resp = post(widget("warned", json!({"size": 1, "extra": true})));
    assert_eq!(resp.status, 201, "{resp:?}");
    assert_eq!(
        resp.header("warning").as_deref(),
        Some(r#"299 - "unknown field \"spec.extra\"""#)
    );

    // A transition rule compares with the stored object.
    let resp = server.curl(
        "PATCH",
        &format!("{WIDGETS}/warned"),
        &[("Content-Type", "application/merge-patch+json")],
        Some(br#"{"spec":{"size":0}}"#),
    );
    let status = resp.assert_status(422, "Invalid");
    assert_eq!(
        status["message"],
        r#"Widget.example.com "warned" is invalid: spec: Invalid value: "object": widgets do not shrink"#
    );

    // Custom resources are JSON: no protobuf, no strategic merge patch.
    let resp = server.curl(
        "GET",
        WIDGETS,
        &[("Accept", "application/vnd.kubernetes.protobuf")],
        None,
    );
    let status = resp.assert_status(406, "NotAcceptable");
    assert_eq!(
        status["message"],
        "only the following media types are accepted: application/json, application/yaml"
    );
    let resp = server.curl(
        "PATCH",
        &format!("{WIDGETS}/warned"),
        &[("Content-Type", "application/strategic-merge-patch+json")],
        Some(br#"{"spec":{"size":2}}"#),
    );
    resp.assert_status(415, "UnsupportedMediaType");

    let list = server.get_json(WIDGETS);
    assert_eq!(item_names(&list), ["warned"]);
    assert_eq!(list["items"][0]["spec"], json!({"color": "red", "size": 1}));
}

#[test]
fn status_and_scale_go_through_their_subresources() {
    let server = with_widgets();
    server.apply(WIDGET);

    server.kubectl_ok(&["scale", "widget", "w1", "--replicas=3"]);
    let widget = server.kubectl_json(&["get", "widget", "w1", "-o", "json"]);
    assert_eq!(widget["spec"]["replicas"], 3);
    assert_eq!(widget["metadata"]["generation"], 2);

    server.kubectl_ok(&[
        "patch",
        "widget",
        "w1",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"phase":"Ready","replicas":3,"selector":"app=w"},"spec":{"size":9}}"#,
    ]);
    let widget = server.kubectl_json(&["get", "widget", "w1", "-o", "json"]);
    assert_eq!(
        widget["status"],
        json!({"phase": "Ready", "replicas": 3, "selector": "app=w"})
    );
    assert_eq!(
        widget["spec"]["size"], 3,
        "a status write changes only status"
    );
    assert_eq!(
        widget["metadata"]["generation"], 2,
        "status writes do not count"
    );

    let scale = server.get_json(&format!("{WIDGETS}/w1/scale"));
    assert_eq!(scale["kind"], "Scale");
    assert_eq!(scale["spec"]["replicas"], 3);
    assert_eq!(scale["status"], json!({"replicas": 3, "selector": "app=w"}));

    // Without spec replicas there is no Scale to show, as upstream says.
    server.kubectl_ok(&[
        "patch",
        "widget",
        "w1",
        "--type=json",
        "-p",
        r#"[{"op": "remove", "path": "/spec/replicas"}]"#,
    ]);
    let status = server
        .get(&format!("{WIDGETS}/w1/scale"))
        .assert_status(500, "InternalError");
    assert_eq!(
        status["message"],
        r#"Internal error occurred: the spec replicas field ".spec.replicas" does not exist"#
    );
    server.kubectl_ok(&["scale", "widget", "w1", "--replicas=3"]);

    // A main write leaves status alone.
    server.kubectl_ok(&[
        "patch",
        "widget",
        "w1",
        "--type=merge",
        "-p",
        r#"{"status":{"phase":"Lost"},"spec":{"size":4}}"#,
    ]);
    let widget = server.kubectl_json(&["get", "widget", "w1", "-o", "json"]);
    assert_eq!(widget["status"]["phase"], "Ready");
    assert_eq!(widget["spec"]["size"], 4);
    // Two spec writes above (replicas removed, scaled again), and this one.
    assert_eq!(widget["metadata"]["generation"], 5);

    // A status write is checked from the status down, as upstream words it.
    let resp = server.curl(
        "PATCH",
        &format!("{WIDGETS}/w1/status"),
        &[("Content-Type", "application/merge-patch+json")],
        Some(br#"{"status":{"replicas":"many"}}"#),
    );
    let status = resp.assert_status(422, "Invalid");
    assert_eq!(
        status["details"]["causes"][0]["message"],
        r#"Invalid value: "string": replicas in body must be of type integer: "string""#
    );
    assert_eq!(status["details"]["causes"][0]["field"], "status.replicas");
}

#[test]
fn deleting_a_definition_deletes_its_custom_resources() {
    let server = with_widgets();
    server.apply(WIDGET);
    server.apply(&WIDGET.replace("name: w1", "name: w2"));
    server.kubectl_ok(&["delete", "crd", "widgets.example.com", "--timeout=20s"]);
    let missing = server.get("/apis/example.com/v1");
    assert_eq!(missing.status, 404);
    // Created again, the definition serves no leftovers.
    install_widgets(&server);
    let list = wait_until(Duration::from_secs(10), "widgets served again", || {
        let resp = server.get(WIDGETS);
        (resp.status == 200).then(|| resp.json())
    });
    assert_eq!(item_names(&list), Vec::<String>::new());
}

#[test]
fn a_terminating_definition_takes_no_creates_until_its_resources_are_gone() {
    let server = with_widgets();
    server.apply(&WIDGET.replace(
        "labels: {app: w}",
        "labels: {app: w}, finalizers: [example.com/hold]",
    ));
    server.kubectl_ok(&["delete", "crd", "widgets.example.com", "--wait=false"]);
    let crd = server.kubectl_json(&["get", "crd", "widgets.example.com", "-o", "json"]);
    assert_eq!(
        crd["metadata"]["finalizers"],
        json!(["customresourcecleanup.apiextensions.k8s.io"])
    );
    let widget = json!({"apiVersion": "example.com/v1", "kind": "Widget",
                        "metadata": {"name": "late"}, "spec": {"size": 1}});
    let status = wait_until(Duration::from_secs(10), "creates refused", || {
        let resp = server.post_json(WIDGETS, &widget);
        (resp.status == 405).then(|| resp.json())
    });
    assert_eq!(status["reason"], "MethodNotAllowed");
    assert_eq!(
        status["message"],
        "create not allowed while custom resource definition is terminating"
    );
    let crd = server.kubectl_json(&["get", "crd", "widgets.example.com", "-o", "json"]);
    let terminating = condition(&crd, "Terminating");
    assert_eq!(
        (&terminating["status"], &terminating["reason"]),
        (&json!("True"), &json!("InstanceDeletionInProgress"))
    );
    // Discovery lists only the verbs upstream leaves a terminating
    // definition; the update below still goes through.
    let group = server.get_json("/apis/example.com/v1");
    let widgets = group["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "widgets")
        .unwrap();
    assert_eq!(
        widgets["verbs"],
        json!(["delete", "deletecollection", "get", "list", "watch"])
    );
    // The widget's own finalizer released, the definition goes.
    server.kubectl_ok(&[
        "patch",
        "widget",
        "w1",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":null}}"#,
    ]);
    wait_until(Duration::from_secs(10), "the definition gone", || {
        (server
            .get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com")
            .status
            == 404)
            .then_some(())
    });
}

#[test]
fn conflicting_names_are_not_accepted() {
    let server = with_widgets();
    server.apply(
        &widgets_crd()
            .replace("name: widgets.example.com", "name: gadgets.example.com")
            .replace("plural: widgets", "plural: gadgets")
            .replace("singular: widget", "singular: gadget"),
    );
    let crd = wait_until(Duration::from_secs(10), "names decided", || {
        let crd = server.kubectl_json(&["get", "crd", "gadgets.example.com", "-o", "json"]);
        crd["status"].get("conditions").is_some().then_some(crd)
    });
    let accepted = condition(&crd, "NamesAccepted");
    assert_eq!(accepted["status"], "False");
    assert_eq!(accepted["reason"], "ListKindConflict");
    assert_eq!(accepted["message"], r#""WidgetList" is already in use"#);
    let established = condition(&crd, "Established");
    assert_eq!(
        (&established["status"], &established["reason"]),
        (&json!("False"), &json!("NotAccepted"))
    );
    assert_eq!(server.get("/apis/example.com/v1/gadgets").status, 404);
}

#[test]
fn invalid_definitions_get_upstreams_answers() {
    let server = TestServer::start();
    let refused = |manifest: String| -> Value {
        let body: Value = serde_yaml::from_str(&manifest).unwrap();
        let resp = server.post_json(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            &body,
        );
        resp.assert_status(422, "Invalid")
    };
    let status =
        refused(widgets_crd().replace("name: widgets.example.com", "name: gizmos.example.com"));
    assert_eq!(
        status["message"],
        r#"CustomResourceDefinition.apiextensions.k8s.io "gizmos.example.com" is invalid: metadata.name: Invalid value: "gizmos.example.com": must be spec.names.plural+"."+spec.group"#
    );
    let status = refused(widgets_crd().replace("  scope: Namespaced\n", ""));
    assert_eq!(status["details"]["causes"][0]["field"], "spec.scope");
    assert_eq!(status["details"]["causes"][0]["message"], "Required value");
    let status = refused(widgets_crd().replace(
        "              replicas: {type: integer}\n",
        "              replicas: {description: untyped}\n",
    ));
    assert_eq!(
        status["details"]["causes"][0]["field"],
        "spec.validation.openAPIV3Schema.properties[spec].properties[replicas].type",
        "one schema shared by every version is reported where upstream hoists it"
    );
    assert_eq!(
        status["details"]["causes"][0]["message"],
        "Required value: must not be empty for specified object fields"
    );
    // A rule's message must be one line of text, and its fieldPath must
    // name a field under the rule.
    let status = refused(widgets_crd().replace(
        "              message: at most 10 replicas\n              fieldPath: .replicas\n",
        "              message: \"  \"\n              fieldPath: .replica\n",
    ));
    let rule = "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0]";
    assert_eq!(
        status["details"]["causes"],
        json!([
            {"reason": "FieldValueInvalid", "field": format!("{rule}.fieldPath"),
             "message": "Invalid value: \".replica\": fieldPath must be a valid path"},
            {"reason": "FieldValueInvalid", "field": format!("{rule}.message"),
             "message": "Invalid value: \"  \": message must be non-empty if specified"}
        ]),
        "{status:#}"
    );
    let status = refused(widgets_crd().replace("    storage: false\n", "    storage: true\n"));
    assert!(
        status["message"]
            .as_str()
            .unwrap()
            .ends_with("must have exactly one version marked as storage version"),
        "{status:#}"
    );
    assert_eq!(
        server
            .get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
            .json()["items"],
        json!([])
    );
}

#[test]
fn server_side_apply_merges_lists_by_the_schemas_list_types() {
    let server = with_widgets();
    let apply = |manager: &str, tags: &str| {
        let manifest = format!(
            "apiVersion: example.com/v1\nkind: Widget\nmetadata: {{name: shared, namespace: default}}\nspec: {{size: 2, tags: [{tags}]}}\n"
        );
        server.kubectl_with_manifest(
            &[
                "apply",
                "--server-side",
                &format!("--field-manager={manager}"),
            ],
            &manifest,
        );
    };
    apply("one", "a");
    // `tags` is a set: the second manager adds its item beside the first's
    // instead of conflicting over the whole list.
    apply("two", "b");
    let widget = server.get_json(&format!("{WIDGETS}/shared"));
    assert_eq!(widget["spec"]["tags"], json!(["a", "b"]), "{widget:#}");
    let two = widget["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["manager"] == "two")
        .unwrap();
    assert_eq!(
        two["fieldsV1"]["f:spec"],
        json!({"f:size": {}, "f:tags": {"v:\"b\"": {}}})
    );
}

#[test]
fn rules_over_upstreams_cost_limits_are_refused_when_written_and_before_they_run() {
    let server = TestServer::start();
    let unique = "                x-kubernetes-list-type: set\n                x-kubernetes-validations:\n                - {rule: \"self.all(x, self.exists_one(y, x == y))\", message: tags must be unique}\n";
    let with_rule = |bounds: &str| {
        widgets_crd().replace(
            "                items: {type: string}\n                x-kubernetes-list-type: set\n",
            &format!("{bounds}{unique}"),
        )
    };
    let unbounded = with_rule("                items: {type: string}\n");
    let body: Value = serde_yaml::from_str(&unbounded).unwrap();
    let status = server
        .post_json(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            &body,
        )
        .assert_status(422, "Invalid");
    let rule = "spec.validation.openAPIV3Schema.properties[spec].properties[tags].x-kubernetes-validations[0].rule";
    assert_eq!(
        status["details"]["causes"][0],
        json!({"reason": "FieldValueForbidden", "field": rule,
            "message": "Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"}),
        "{status:#}"
    );
    assert_eq!(
        status["details"]["causes"][2]["field"],
        "spec.validation.openAPIV3Schema"
    );

    // Bounded, the rule fits; an object holding enough to exceed one call's
    // limit is refused without the rule running, and nothing is stored.
    server.apply(&with_rule(
        "                maxItems: 1000\n                items: {type: string, maxLength: 10}\n",
    ));
    server.kubectl_ok(&[
        "wait",
        "--for=condition=Established",
        "crd/widgets.example.com",
        "--timeout=10s",
    ]);
    let tags = |n: usize| -> Vec<String> { (0..n).map(|i| format!("t{i}")).collect() };
    let widget = |name: &str, n: usize| {
        json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": name}, "spec": {"size": 1, "tags": tags(n)}})
    };
    let created = server.post_json(WIDGETS, &widget("few", 300));
    assert_eq!(created.status, 201, "{created:#?}");
    let status = server
        .post_json(WIDGETS, &widget("many", 500))
        .assert_status(422, "Invalid");
    assert_eq!(
        status["message"],
        r#"Widget.example.com "many" is invalid: spec.tags: Invalid value: "array": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: tags must be unique"#
    );
    assert_eq!(item_names(&server.get_json(WIDGETS)), ["few"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_definition_created_through_one_replica_is_served_by_the_other() {
    let (_etcd, a, b) = common::two_replicas_on_etcd().await;
    a.apply(&widgets_crd());
    wait_until(Duration::from_secs(5), "replica b to serve widgets", || {
        (b.get(WIDGETS).status == 200).then_some(())
    });
    b.apply(WIDGET);
    assert_eq!(item_names(&a.get_json(WIDGETS)), ["w1"]);
    let crd = a.kubectl_json(&["get", "crd", "widgets.example.com", "-o", "json"]);
    assert_eq!(condition(&crd, "Established")["status"], "True");
    b.kubectl_ok(&["delete", "crd", "widgets.example.com", "--timeout=20s"]);
    wait_until(
        Duration::from_secs(5),
        "replica a to stop serving widgets",
        || (a.get(WIDGETS).status == 404).then_some(()),
    );
}

#[test]
fn a_default_added_later_shows_on_older_objects() {
    let server = with_widgets();
    server.apply(WIDGET);
    let shape = r#"{"type": "string", "default": "round"}"#;
    let patch = format!(
        r#"[{{"op": "add", "path": "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/shape", "value": {shape}}},
            {{"op": "add", "path": "/spec/versions/1/schema/openAPIV3Schema/properties/spec/properties/shape", "value": {shape}}}]"#
    );
    server.kubectl_ok(&[
        "patch",
        "crd",
        "widgets.example.com",
        "--type=json",
        "-p",
        &patch,
    ]);
    // Read, listed and watched with the default; the stored object is as written.
    let widget = wait_until(Duration::from_secs(10), "the new default on reads", || {
        let widget = server.get_json(&format!("{WIDGETS}/w1"));
        (widget["spec"]["shape"] == "round").then_some(widget)
    });
    assert_eq!(widget["spec"]["color"], "red");
    let listed = server.get_json(WIDGETS);
    assert_eq!(listed["items"][0]["spec"]["shape"], "round");
    let watched = server.kubectl_ok(&[
        "get",
        "widgets",
        "--watch",
        "--request-timeout=2s",
        "-o",
        "jsonpath={.spec.shape}",
    ]);
    assert!(watched.starts_with("round"), "{watched}");
}
