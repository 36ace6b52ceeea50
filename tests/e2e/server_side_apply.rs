//! Server-side apply with the real kubectl: field managers, managedFields,
//! conflicts and --force-conflicts, and `kubectl diff --server-side`.

use crate::common;
use crate::common::TestServer;
use serde_json::Value;

fn deployment(replicas: u32, image: &str) -> String {
    format!(
        r#"apiVersion: apps/v1
kind: Deployment
metadata: {{name: web}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec: {{containers: [{{name: web, image: "{image}"}}]}}
"#
    )
}

fn managers(object: &Value) -> Vec<(String, String)> {
    object["metadata"]["managedFields"]
        .as_array()
        .map(|entries| {
            entries
                .iter()
                .map(|e| {
                    (
                        e["manager"].as_str().unwrap_or_default().to_string(),
                        e["operation"].as_str().unwrap_or_default().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn get_with_managed_fields(server: &TestServer) -> Value {
    server.kubectl_json(&["get", "deploy", "web", "--show-managed-fields"])
}

#[test]
fn two_managers_conflict_until_forced() {
    let server = TestServer::start();
    let out = server.kubectl_with_manifest(
        &["apply", "--server-side", "--field-manager=team-a"],
        &deployment(2, "nginx:1.25"),
    );
    assert!(out.contains("serverside-applied"), "{out}");
    // Applying the same configuration again changes nothing.
    let rv = get_with_managed_fields(&server)["metadata"]["resourceVersion"].clone();
    server.kubectl_with_manifest(
        &["apply", "--server-side", "--field-manager=team-a"],
        &deployment(2, "nginx:1.25"),
    );
    let object = get_with_managed_fields(&server);
    assert_eq!(object["metadata"]["resourceVersion"], rv);
    assert_eq!(
        managers(&object),
        [("team-a".to_string(), "Apply".to_string())]
    );
    let owned = &object["metadata"]["managedFields"][0]["fieldsV1"];
    assert!(owned["f:spec"]["f:replicas"].is_object(), "{owned}");
    assert!(
        owned["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"web\"}"]["f:image"]
            .is_object(),
        "{owned}"
    );

    // Another manager changing team-a's replicas is a conflict...
    let path = server.scratch("b.yaml");
    std::fs::write(&path, deployment(5, "nginx:1.25")).expect("write manifest");
    let file = path.to_str().expect("utf-8 path");
    let err = server.kubectl_err(&[
        "apply",
        "--server-side",
        "--field-manager=team-b",
        "-f",
        file,
    ]);
    assert!(
        err.contains(r#"Apply failed with 1 conflict: conflict with "team-a": .spec.replicas"#),
        "{err}"
    );
    assert_eq!(get_with_managed_fields(&server)["spec"]["replicas"], 2);

    // ...which --force-conflicts resolves by taking the field over.
    server.kubectl_ok(&[
        "apply",
        "--server-side",
        "--field-manager=team-b",
        "--force-conflicts",
        "-f",
        file,
    ]);
    let object = get_with_managed_fields(&server);
    assert_eq!(object["spec"]["replicas"], 5);
    let entries = object["metadata"]["managedFields"]
        .as_array()
        .expect("entries");
    let of = |manager: &str| {
        entries
            .iter()
            .find(|e| e["manager"] == manager)
            .unwrap_or_else(|| panic!("no entry for {manager}: {object}"))["fieldsV1"]
            .clone()
    };
    assert!(of("team-a")["f:spec"].get("f:replicas").is_none());
    assert!(of("team-b")["f:spec"]["f:replicas"].is_object());
    // Both share the image they agree on.
    for manager in ["team-a", "team-b"] {
        assert!(
            of(manager)["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"web\"}"]
                ["f:image"]
                .is_object()
        );
    }
}

#[test]
fn imperative_writes_are_recorded_as_updates() {
    let server = TestServer::start();
    server.kubectl_ok(&["create", "deployment", "web", "--image=nginx"]);
    server.kubectl_ok(&["scale", "deployment", "web", "--replicas=3"]);
    server.kubectl_ok(&["label", "deployment", "web", "tier=front"]);
    let object = get_with_managed_fields(&server);
    let found = managers(&object);
    for expected in [("kubectl-create", "Update"), ("kubectl-label", "Update")] {
        assert!(
            found.contains(&(expected.0.to_string(), expected.1.to_string())),
            "{expected:?} in {found:?}"
        );
    }
    // The scale went through the scale subresource and is recorded as such.
    let scale = object["metadata"]["managedFields"]
        .as_array()
        .and_then(|entries| entries.iter().find(|e| e["subresource"] == "scale"))
        .unwrap_or_else(|| panic!("no scale entry: {object}"));
    assert!(
        scale["fieldsV1"]["f:spec"]["f:replicas"].is_object(),
        "{scale}"
    );

    // An applier taking replicas from an updater conflicts with it by version.
    let out = server.kubectl_stdin(
        &["apply", "--server-side", "--field-manager=ops", "-f", "-"],
        &deployment(1, "nginx"),
    );
    let err = common::text(&out.stderr);
    assert!(!out.status.success(), "expected a conflict");
    assert!(err.contains("using apps/v1: .spec.replicas"), "{err}");
}

#[test]
fn apply_creates_and_requires_a_field_manager() {
    let server = TestServer::start();
    let body =
        br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg"},"data":{"a":"1"}}"#;
    let created = server.curl(
        "PATCH",
        "/api/v1/namespaces/default/configmaps/cfg?fieldManager=me",
        &[("Content-Type", "application/apply-patch+yaml")],
        Some(body),
    );
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(
        created.json()["metadata"]["managedFields"][0]["manager"],
        "me"
    );

    let missing = server.curl(
        "PATCH",
        "/api/v1/namespaces/default/configmaps/cfg",
        &[("Content-Type", "application/apply-patch+yaml")],
        Some(body),
    );
    let status = missing.assert_status(422, "Invalid");
    assert_eq!(status["details"]["causes"][0]["field"], "fieldManager");

    let forced_merge = server.curl(
        "PATCH",
        "/api/v1/namespaces/default/configmaps/cfg?force=true",
        &[("Content-Type", "application/merge-patch+json")],
        Some(br#"{"data":{"a":"2"}}"#),
    );
    forced_merge.assert_status(422, "Invalid");
    assert_eq!(
        server.kubectl_ok(&["get", "cm", "cfg", "-o", "jsonpath={.data.a}"]),
        "1"
    );
}

#[test]
fn diff_server_side_shows_the_pending_change() {
    let server = TestServer::start();
    server.kubectl_with_manifest(&["apply", "--server-side"], &deployment(2, "nginx:1.25"));
    let path = server.scratch("next.yaml");
    std::fs::write(&path, deployment(2, "nginx:1.26")).expect("write manifest");
    let out = server.kubectl(&[
        "diff",
        "--server-side",
        "-f",
        path.to_str().expect("utf-8 path"),
    ]);
    let diff = common::text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{diff}\n{}",
        common::text(&out.stderr)
    );
    let changed = |sign: char, image: &str| {
        diff.lines()
            .any(|l| l.starts_with(sign) && l.trim_end().ends_with(&format!("image: {image}")))
    };
    assert!(
        changed('-', "nginx:1.25") && changed('+', "nginx:1.26"),
        "{diff}"
    );
    let image = server.kubectl_ok(&[
        "get",
        "deploy",
        "web",
        "-o",
        "jsonpath={.spec.template.spec.containers[0].image}",
    ]);
    assert_eq!(image, "nginx:1.25", "a diff writes nothing");
}

#[test]
fn a_mistyped_apply_gets_upstreams_typed_patch_error_and_stores_nothing() {
    let server = TestServer::start();
    let path = "/apis/apps/v1/namespaces/default/deployments/web?fieldManager=me";
    let body = |replicas: &str, extra: &str| {
        format!(
            r#"{{"apiVersion":"apps/v1","kind":"Deployment","metadata":{{"name":"web","namespace":"default"}},"spec":{{"replicas":{replicas},"selector":{{"matchLabels":{{"app":"web"}}}},"template":{{"metadata":{{"labels":{{"app":"web"}}}},"spec":{{"containers":[{{"name":"c","image":"nginx"{extra}}}]}}}}}}}}"#
        )
    };
    let refused = server.curl(
        "PATCH",
        path,
        &[("Content-Type", "application/apply-patch+yaml")],
        Some(body(r#""three""#, "").as_bytes()),
    );
    // A plain error upstream: 500, no reason, no details.
    assert_eq!(refused.status, 500, "{}", refused.body);
    assert_eq!(
        refused.body,
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"failed to create typed patch object (default/web; apps/v1, Kind=Deployment): .spec.replicas: expected numeric (int or float), got string\",\"code\":500}\n"
    );
    let refused = server.curl(
        "PATCH",
        path,
        &[("Content-Type", "application/apply-patch+yaml")],
        Some(body("2", r#","ports":"80","color":"blue""#).as_bytes()),
    );
    assert_eq!(
        refused.json()["message"],
        "failed to create typed patch object (default/web; apps/v1, Kind=Deployment): errors:\n  .spec.template.spec.containers[name=\"c\"].ports: expected list, got &{80}\n  .spec.template.spec.containers[name=\"c\"].color: field not declared in schema"
    );
    assert_eq!(
        server
            .get("/apis/apps/v1/namespaces/default/deployments/web")
            .status,
        404
    );

    // kubectl shows it as kube-apiserver's answer.
    let manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  count: 5\n";
    let out = server.kubectl_stdin(&["apply", "--server-side", "-f", "-"], manifest);
    assert!(!out.status.success());
    let err = common::text(&out.stderr);
    assert!(
        err.contains("Error from server: failed to create typed patch object (default/cfg; /v1, Kind=ConfigMap): .data.count: expected string, got &value.valueUnstructured{Value:5}"),
        "{err}"
    );
    assert_eq!(
        server
            .get("/api/v1/namespaces/default/configmaps/cfg")
            .status,
        404
    );
}
