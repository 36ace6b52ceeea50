//! The gRPC surface, driven by grpcurl (server reflection v1alpha), checked
//! against what kubectl sees through the REST facade on the same port.

use crate::common::{item_names, json_stream, rv, GrpcError, Streaming, TestServer};
use serde_json::{json, Value};

const CONFIGMAPS: &str = r#"{"group":"","version":"v1","resource":"configmaps"}"#;

fn configmaps() -> Value {
    serde_json::from_str(CONFIGMAPS).unwrap()
}

fn server_with_namespace(ns: &str) -> TestServer {
    let s = TestServer::start();
    s.apply(
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}).to_string(),
    );
    s
}

fn configmap(name: &str, data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data})
}

fn kubectl_cm(s: &TestServer, ns: &str, name: &str) -> Value {
    s.kubectl_json(&["get", "configmap", name, "-n", ns, "--show-managed-fields"])
}

/// The typed metadata and the body carry the same identity.
#[track_caller]
fn assert_envelope(obj: &Value) {
    let meta = &obj["metadata"];
    let body_meta = &obj["body"]["metadata"];
    for (typed, json) in [
        ("name", "name"),
        ("namespace", "namespace"),
        ("uid", "uid"),
        ("resourceVersion", "resourceVersion"),
        ("creationTimestamp", "creationTimestamp"),
    ] {
        assert_eq!(
            meta[typed], body_meta[json],
            "metadata.{typed} vs body: {obj:#}"
        );
    }
    assert_eq!(obj["apiVersion"], obj["body"]["apiVersion"], "{obj:#}");
    assert_eq!(obj["kind"], obj["body"]["kind"], "{obj:#}");
}

#[track_caller]
fn assert_code(err: &GrpcError, code: &str, message: &str) {
    assert_eq!(err.code, code, "unexpected gRPC status: {err:#?}");
    assert!(
        err.message.contains(message),
        "message {:?} lacks {message:?}: {err:#?}",
        err.message
    );
}

/// Nothing was stored: the namespace lists no ConfigMaps.
#[track_caller]
fn assert_no_configmaps(s: &TestServer, ns: &str) {
    let list = s.grpc_ok(
        "capstan.v1.Resources/List",
        &json!({"resource": configmaps(), "namespace": ns}),
    );
    assert!(
        list["items"].as_array().is_none_or(|i| i.is_empty()),
        "{list:#}"
    );
}

/// A gRPC watch of `ns`'s ConfigMaps from the revision a list gives now
/// (30 s at most): the changes made after this call, none before.
fn watch_configmaps_from_now(s: &TestServer, ns: &str) -> Streaming {
    let start = s.grpc_ok(
        "capstan.v1.Resources/List",
        &json!({"resource": configmaps(), "namespace": ns}),
    );
    let start_rv = start["resourceVersion"]
        .as_str()
        .expect("the list's resourceVersion");
    s.grpc_stream(
        "capstan.v1.Resources/Watch",
        &json!({"resource": configmaps(), "namespace": ns, "resourceVersion": start_rv}),
        30,
    )
}

/// Waits until the watch printed `n` events; returns them.
fn events(watch: &mut Streaming, n: usize) -> Vec<Value> {
    watch.wait_for(&format!("{n} watch events"), |out| {
        let evs = json_stream(out);
        (evs.len() >= n).then_some(evs)
    })
}

fn summary(evs: &[Value]) -> Vec<(String, String, u64)> {
    evs.iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap_or_default().to_string(),
                e["object"]["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                rv(&e["object"]["metadata"]["resourceVersion"]),
            )
        })
        .collect()
}

#[test]
fn list_and_describe_services() {
    let s = TestServer::start();
    let out = s.grpcurl_ok(&[], &["list"]);
    let services: Vec<&str> = out.lines().collect();
    for expected in [
        "capstan.v1.Resources",
        "capstan.v1.Discovery",
        "grpc.health.v1.Health",
    ] {
        assert!(
            services.contains(&expected),
            "{expected} missing from:\n{out}"
        );
    }

    let out = s.grpcurl_ok(&[], &["describe", "capstan.v1.Resources"]);
    assert!(
        out.starts_with("capstan.v1.Resources is a service:"),
        "{out}"
    );
    for rpc in [
        "rpc Get ( .capstan.v1.GetRequest ) returns ( .capstan.v1.Object );",
        "rpc List ( .capstan.v1.ListRequest ) returns ( .capstan.v1.ListResponse );",
        "rpc Create ( .capstan.v1.CreateRequest ) returns ( .capstan.v1.Object );",
        "rpc Update ( .capstan.v1.UpdateRequest ) returns ( .capstan.v1.Object );",
        "rpc Patch ( .capstan.v1.PatchRequest ) returns ( .capstan.v1.Object );",
        "rpc Delete ( .capstan.v1.DeleteRequest ) returns ( .capstan.v1.Object );",
        "rpc Watch ( .capstan.v1.WatchRequest ) returns ( stream .capstan.v1.WatchEvent );",
    ] {
        assert!(out.contains(rpc), "{rpc} missing from:\n{out}");
    }
    // Objects are readable JSON in grpcurl: the body is a Struct.
    let out = s.grpcurl_ok(&[], &["describe", "capstan.v1.Object"]);
    assert!(out.contains(".google.protobuf.Struct body = 4;"), "{out}");
    let out = s.grpcurl_ok(&[], &["list", "capstan.v1.Discovery"]);
    assert!(
        out.contains("capstan.v1.Discovery.ServerResources"),
        "{out}"
    );
}

#[test]
fn health_check_is_serving() {
    let s = TestServer::start();
    assert_eq!(
        s.grpc_ok("grpc.health.v1.Health/Check", &json!({})),
        json!({"status": "SERVING"})
    );
    for service in ["capstan.v1.Resources", "capstan.v1.Discovery"] {
        assert_eq!(
            s.grpc_ok("grpc.health.v1.Health/Check", &json!({"service": service})),
            json!({"status": "SERVING"}),
            "{service}"
        );
    }
}

#[test]
fn configmap_crud_through_grpc_matches_kubectl() {
    let s = server_with_namespace("demo");

    // Create
    let created = s.grpc_ok(
        "capstan.v1.Resources/Create",
        &json!({"resource": configmaps(), "namespace": "demo", "object": configmap("grpc-cm", json!({"a": "1"}))}),
    );
    assert_envelope(&created);
    assert_eq!(created["metadata"]["name"], "grpc-cm");
    assert_eq!(created["metadata"]["namespace"], "demo");
    let seen = kubectl_cm(&s, "demo", "grpc-cm");
    assert_eq!(created["body"], seen, "gRPC and kubectl disagree");
    assert_eq!(seen["metadata"]["uid"], created["metadata"]["uid"]);
    assert_eq!(
        seen["metadata"]["resourceVersion"],
        created["metadata"]["resourceVersion"]
    );

    // Get
    let got = s.grpc_ok(
        "capstan.v1.Resources/Get",
        &json!({"resource": configmaps(), "namespace": "demo", "name": "grpc-cm"}),
    );
    assert_eq!(got, created);

    // List
    s.apply(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "other", "namespace": "demo"}}).to_string());
    let list = s.grpc_ok(
        "capstan.v1.Resources/List",
        &json!({"resource": configmaps(), "namespace": "demo"}),
    );
    assert_eq!(list["kind"], "ConfigMapList");
    assert_eq!(list["apiVersion"], "v1");
    assert_eq!(item_names(&list), ["grpc-cm", "other"]);
    let other_rv = rv(&kubectl_cm(&s, "demo", "other")["metadata"]["resourceVersion"]);
    assert!(rv(&list["resourceVersion"]) >= other_rv, "{list:#}");
    let rest_list = s.get_json("/api/v1/namespaces/demo/configmaps");
    assert_eq!(
        list["resourceVersion"],
        rest_list["metadata"]["resourceVersion"]
    );

    // Update (compare-and-swap on the resourceVersion in the body)
    let mut body = got["body"].clone();
    body["data"] = json!({"a": "1", "b": "2"});
    let updated = s.grpc_ok(
        "capstan.v1.Resources/Update",
        &json!({"resource": configmaps(), "namespace": "demo", "name": "grpc-cm", "object": body}),
    );
    assert_envelope(&updated);
    assert!(
        rv(&updated["metadata"]["resourceVersion"]) > rv(&created["metadata"]["resourceVersion"])
    );
    assert_eq!(updated["metadata"]["uid"], created["metadata"]["uid"]);
    let seen = kubectl_cm(&s, "demo", "grpc-cm");
    assert_eq!(seen, updated["body"]);
    assert_eq!(seen["data"], json!({"a": "1", "b": "2"}));

    // Patch (merge)
    let patched = s.grpc_ok(
        "capstan.v1.Resources/Patch",
        &json!({"resource": configmaps(), "namespace": "demo", "name": "grpc-cm", "type": "MERGE_PATCH",
                "patch": {"data": {"b": null, "c": "3"}, "metadata": {"labels": {"via": "grpc"}}}}),
    );
    assert_envelope(&patched);
    assert_eq!(patched["metadata"]["labels"], json!({"via": "grpc"}));
    let seen = kubectl_cm(&s, "demo", "grpc-cm");
    assert_eq!(seen, patched["body"]);
    assert_eq!(seen["data"], json!({"a": "1", "c": "3"}));
    assert!(
        rv(&patched["metadata"]["resourceVersion"]) > rv(&updated["metadata"]["resourceVersion"])
    );
    assert_eq!(
        s.kubectl_ok(&["get", "cm", "-n", "demo", "-l", "via=grpc", "-o", "name"]),
        "configmap/grpc-cm\n"
    );

    // Delete
    let deleted = s.grpc_ok(
        "capstan.v1.Resources/Delete",
        &json!({"resource": configmaps(), "namespace": "demo", "name": "grpc-cm"}),
    );
    assert_eq!(deleted["metadata"]["uid"], created["metadata"]["uid"]);
    let err = s.kubectl_err(&["get", "cm", "grpc-cm", "-n", "demo"]);
    assert!(err.contains("configmaps \"grpc-cm\" not found"), "{err}");
    assert_eq!(
        s.kubectl_ok(&["get", "cm", "-n", "demo", "-o", "name"]),
        "configmap/other\n"
    );
}

#[test]
fn kubectl_writes_seen_through_grpc() {
    let s = server_with_namespace("demo");
    s.apply(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "k", "namespace": "demo", "labels": {"from": "kubectl"}}, "data": {"x": "1"}}).to_string());
    let get = || {
        s.grpc_ok(
            "capstan.v1.Resources/Get",
            &json!({"resource": configmaps(), "namespace": "demo", "name": "k"}),
        )
    };
    let seen = kubectl_cm(&s, "demo", "k");
    let got = get();
    assert_envelope(&got);
    assert_eq!(got["body"], seen);
    assert_eq!(got["metadata"]["uid"], seen["metadata"]["uid"]);
    assert_eq!(
        got["metadata"]["resourceVersion"],
        seen["metadata"]["resourceVersion"]
    );
    assert_eq!(got["metadata"]["labels"], json!({"from": "kubectl"}));
    assert!(
        got["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
            .is_string()
    );

    s.kubectl_ok(&[
        "patch",
        "cm",
        "k",
        "-n",
        "demo",
        "--type=merge",
        "-p",
        r#"{"data":{"x":"2"}}"#,
    ]);
    let seen = kubectl_cm(&s, "demo", "k");
    let got = get();
    assert_eq!(got["body"], seen);
    assert_eq!(got["body"]["data"]["x"], "2");

    // Numbers cross the Struct as integers, both ways.
    s.apply(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: demo\nspec:\n  replicas: 3\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: web\n        image: nginx\n        ports:\n        - containerPort: 8080\n",
    );
    let deploy = s.grpc_ok(
        "capstan.v1.Resources/Get",
        &json!({"resource": {"group": "apps", "version": "v1", "resource": "deployments"}, "namespace": "demo", "name": "web"}),
    );
    assert_eq!(
        deploy["metadata"]["generation"], "1",
        "int64 prints as a string in protobuf JSON: {deploy:#}"
    );
    assert_eq!(deploy["body"]["spec"]["replicas"], 3);
    let created = s.grpc_ok(
        "capstan.v1.Resources/Create",
        &json!({"resource": {"group": "apps", "version": "v1", "resource": "deployments"}, "namespace": "demo",
                "object": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api"},
                           "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "api"}},
                                    "template": {"metadata": {"labels": {"app": "api"}},
                                                 "spec": {"containers": [{"name": "api", "image": "api:1", "ports": [{"containerPort": 8080}]}]}}}}}),
    );
    assert_envelope(&created);
    let raw = s.get("/apis/apps/v1/namespaces/demo/deployments/api");
    assert_eq!(raw.status, 200);
    assert!(
        raw.body.contains("\"replicas\":4") && raw.body.contains("\"containerPort\":8080"),
        "{}",
        raw.body
    );
    let out = s.kubectl_ok(&["get", "deploy", "api", "-n", "demo"]);
    assert!(
        out.lines().nth(1).unwrap_or("").split_whitespace().nth(1) == Some("0/4"),
        "{out}"
    );
}

#[test]
fn watch_streams_kubectl_changes_in_order() {
    let s = server_with_namespace("demo");
    let mut watch = watch_configmaps_from_now(&s, "demo");

    s.apply(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "w", "namespace": "demo"}, "data": {"n": "1"}}).to_string());
    let rv1 = rv(&kubectl_cm(&s, "demo", "w")["metadata"]["resourceVersion"]);
    s.kubectl_ok(&[
        "patch",
        "cm",
        "w",
        "-n",
        "demo",
        "--type=merge",
        "-p",
        r#"{"data":{"n":"2"}}"#,
    ]);
    let rv2 = rv(&kubectl_cm(&s, "demo", "w")["metadata"]["resourceVersion"]);
    s.kubectl_ok(&["label", "cm", "w", "-n", "demo", "step=3"]);
    let rv3 = rv(&kubectl_cm(&s, "demo", "w")["metadata"]["resourceVersion"]);
    s.kubectl_ok(&["delete", "cm", "w", "-n", "demo"]);
    let rv4 = rv(&s.get_json("/api/v1/namespaces/demo/configmaps")["metadata"]["resourceVersion"]);
    assert!(
        rv1 < rv2 && rv2 < rv3 && rv3 < rv4,
        "{rv1} {rv2} {rv3} {rv4}"
    );

    let evs = events(&mut watch, 4);
    let out = watch.stop();
    let evs_all = json_stream(&out);
    assert_eq!(
        summary(&evs),
        [
            ("ADDED".to_string(), "w".to_string(), rv1),
            ("MODIFIED".to_string(), "w".to_string(), rv2),
            ("MODIFIED".to_string(), "w".to_string(), rv3),
            ("DELETED".to_string(), "w".to_string(), rv4),
        ],
        "{out}"
    );
    assert_eq!(evs_all.len(), 4, "no other events: {out}");
    for ev in &evs {
        assert_envelope(&ev["object"]);
    }
    assert_eq!(evs[0]["object"]["body"]["data"], json!({"n": "1"}));
    assert_eq!(evs[1]["object"]["body"]["data"], json!({"n": "2"}));
    assert_eq!(evs[2]["object"]["metadata"]["labels"], json!({"step": "3"}));
}

/// An event larger than a watch's first encoding buffer (1 KiB), than
/// tonic's default one (8 KiB) and than the size at which tonic sends what
/// it encoded (32 KiB) arrives whole.
#[test]
fn watch_sends_events_larger_than_its_buffers() {
    let s = server_with_namespace("big");
    let mut watch = watch_configmaps_from_now(&s, "big");
    let big = "0123456789abcdef".repeat(3 * 1024);
    let small = "x";
    for (name, value) in [("large", big.as_str()), ("small", small)] {
        let created = s.post_json(
            "/api/v1/namespaces/big/configmaps",
            &json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name}, "data": {"v": value}}),
        );
        assert_eq!(created.status, 201, "{}", created.body);
    }
    let evs = events(&mut watch, 2);
    watch.stop();
    assert_eq!(evs[0]["object"]["metadata"]["name"], "large");
    assert_eq!(evs[0]["object"]["body"]["data"]["v"], big.as_str());
    assert_eq!(evs[1]["object"]["metadata"]["name"], "small");
    assert_eq!(evs[1]["object"]["body"]["data"]["v"], small);
}

#[test]
fn watch_resumes_from_a_resource_version() {
    let s = server_with_namespace("demo");
    let mut rvs = Vec::new();
    for n in 1..=4 {
        s.apply(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "r", "namespace": "demo"}, "data": {"n": n.to_string()}}).to_string());
        rvs.push(rv(
            &kubectl_cm(&s, "demo", "r")["metadata"]["resourceVersion"]
        ));
    }
    // Everything after the second write, nothing before it.
    let mut watch = s.grpc_stream(
        "capstan.v1.Resources/Watch",
        &json!({"resource": configmaps(), "namespace": "demo", "resourceVersion": rvs[1].to_string()}),
        30,
    );
    let evs = events(&mut watch, 2);
    assert_eq!(
        summary(&evs),
        [
            ("MODIFIED".to_string(), "r".to_string(), rvs[2]),
            ("MODIFIED".to_string(), "r".to_string(), rvs[3])
        ]
    );
    assert_eq!(evs[1]["object"]["body"]["data"], json!({"n": "4"}));
    // The stream stays open for new changes.
    s.kubectl_ok(&[
        "patch",
        "cm",
        "r",
        "-n",
        "demo",
        "--type=merge",
        "-p",
        r#"{"data":{"n":"5"}}"#,
    ]);
    let rv5 = rv(&kubectl_cm(&s, "demo", "r")["metadata"]["resourceVersion"]);
    let evs = events(&mut watch, 3);
    assert_eq!(
        summary(&evs[2..]),
        [("MODIFIED".to_string(), "r".to_string(), rv5)]
    );
    let out = watch.stop();
    assert_eq!(json_stream(&out).len(), 3, "{out}");

    // Without a resourceVersion the watch starts with the current state as ADDED.
    let mut watch = s.grpc_stream(
        "capstan.v1.Resources/Watch",
        &json!({"resource": configmaps(), "namespace": "demo"}),
        30,
    );
    let evs = events(&mut watch, 1);
    assert_eq!(
        summary(&evs[..1]),
        [("ADDED".to_string(), "r".to_string(), rv5)]
    );
}

#[test]
fn not_found_is_a_not_found_status() {
    let s = server_with_namespace("demo");
    let err = s.grpc_err(
        "capstan.v1.Resources/Get",
        &json!({"resource": configmaps(), "namespace": "demo", "name": "missing"}),
    );
    assert_code(&err, "NotFound", "configmaps \"missing\" not found");
    let err = s.grpc_err(
        "capstan.v1.Resources/Delete",
        &json!({"resource": configmaps(), "namespace": "demo", "name": "missing"}),
    );
    assert_code(&err, "NotFound", "configmaps \"missing\" not found");
}

#[test]
fn duplicate_create_is_already_exists() {
    let s = server_with_namespace("demo");
    let req = json!({"resource": configmaps(), "namespace": "demo", "object": configmap("dup", json!({"v": "first"}))});
    let first = s.grpc_ok("capstan.v1.Resources/Create", &req);
    let mut again = req.clone();
    again["object"]["data"]["v"] = json!("second");
    let err = s.grpc_err("capstan.v1.Resources/Create", &again);
    assert_code(&err, "AlreadyExists", "configmaps \"dup\" already exists");
    // The first object is untouched.
    let seen = kubectl_cm(&s, "demo", "dup");
    assert_eq!(seen, first["body"]);
}

#[test]
fn bad_name_is_invalid_argument() {
    let s = server_with_namespace("demo");
    let err = s.grpc_err(
        "capstan.v1.Resources/Create",
        &json!({"resource": configmaps(), "namespace": "demo", "object": configmap("Bad_Name", json!({}))}),
    );
    assert_code(
        &err,
        "InvalidArgument",
        "ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\"",
    );
    assert_no_configmaps(&s, "demo");
}

/// An object nested past protobuf's recursion limit is refused as the
/// message it is, by the server's decoder, and nothing is stored.
#[test]
fn an_object_nested_too_deep_is_refused_whole() {
    let s = server_with_namespace("demo");
    let mut deep = json!("leaf");
    for _ in 0..120 {
        deep = json!({ "d": deep });
    }
    let mut object = configmap("deep", json!({}));
    object["nested"] = deep;
    let err = s.grpc_err(
        "capstan.v1.Resources/Create",
        &json!({"resource": configmaps(), "namespace": "demo", "object": object}),
    );
    // tonic answers an undecodable request as grpc-go does: Internal.
    assert_code(&err, "Internal", "recursion limit reached");
    assert_no_configmaps(&s, "demo");
    // The server still serves the next request.
    s.grpc_ok(
        "capstan.v1.Resources/Create",
        &json!({"resource": configmaps(), "namespace": "demo", "object": configmap("shallow", json!({"a": "1"}))}),
    );
}

#[test]
fn discovery_lists_apps_v1_resources() {
    let s = TestServer::start();
    let resp = s.grpc_ok(
        "capstan.v1.Discovery/ServerResources",
        &json!({"group": "apps", "version": "v1"}),
    );
    assert_eq!(resp["groupVersion"], "apps/v1");
    let resources = resp["resources"].as_array().expect("resources");
    let deployments = resources
        .iter()
        .find(|r| r["name"] == "deployments")
        .unwrap_or_else(|| panic!("no deployments in {resp:#}"));
    assert_eq!(deployments["kind"], "Deployment");
    assert_eq!(deployments["singularName"], "deployment");
    assert_eq!(deployments["namespaced"], true);
    assert_eq!(deployments["group"], "apps");
    assert_eq!(deployments["version"], "v1");
    assert_eq!(deployments["shortNames"], json!(["deploy"]));
    assert!(
        deployments["categories"]
            .as_array()
            .unwrap()
            .contains(&json!("all")),
        "{deployments:#}"
    );
    let mut verbs: Vec<&str> = deployments["verbs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    verbs.sort();
    assert_eq!(
        verbs,
        [
            "create",
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "update",
            "watch"
        ]
    );

    // The same data as REST discovery.
    let rest = s.get_json("/apis/apps/v1");
    let mut rest_names: Vec<&str> = rest["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert!(rest_names.contains(&"deployments/scale"), "{rest_names:?}");
    let mut grpc_names: Vec<&str> = resources
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    rest_names.sort();
    grpc_names.sort();
    assert_eq!(grpc_names, rest_names);

    let groups = s.grpc_ok("capstan.v1.Discovery/ServerGroups", &json!({}));
    let apps = groups["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == "apps")
        .unwrap_or_else(|| panic!("no apps group in {groups:#}"));
    assert_eq!(apps["preferredVersion"]["groupVersion"], "apps/v1");

    let err = s.grpc_err(
        "capstan.v1.Discovery/ServerResources",
        &json!({"group": "nope.example.com", "version": "v1"}),
    );
    assert_code(&err, "NotFound", "");
}

/// Server-side apply through gRPC: the same field managers and conflicts as
/// REST, with the manager named in the options.
#[test]
fn server_side_apply_through_grpc() {
    let s = server_with_namespace("demo");
    let apply = |manager: &str, value: &str, force: bool| {
        json!({"resource": configmaps(), "namespace": "demo", "name": "applied", "type": "APPLY_PATCH",
               "patch": configmap("applied", json!({"level": value})),
               "options": {"fieldManager": manager}, "force": force})
    };
    let created = s.grpc_ok(
        "capstan.v1.Resources/Patch",
        &apply("team-a", "info", false),
    );
    assert_eq!(created["body"]["data"]["level"], "info");
    assert_eq!(
        created["body"]["metadata"]["managedFields"][0]["manager"],
        "team-a"
    );
    assert_eq!(
        created["body"]["metadata"]["managedFields"][0]["operation"],
        "Apply"
    );

    let err = s.grpc_err(
        "capstan.v1.Resources/Patch",
        &apply("team-b", "debug", false),
    );
    assert_code(
        &err,
        "Aborted",
        r#"Apply failed with 1 conflict: conflict with "team-a": .data.level"#,
    );
    let forced = s.grpc_ok(
        "capstan.v1.Resources/Patch",
        &apply("team-b", "debug", true),
    );
    assert_eq!(forced["body"]["data"]["level"], "debug");
    // Seen the same through kubectl.
    assert_eq!(kubectl_cm(&s, "demo", "applied")["data"]["level"], "debug");
}

/// A write's warnings reach gRPC clients as `warning` metadata, in the form
/// REST sends them as headers; the object is stored as over REST.
#[test]
fn write_warnings_are_response_metadata() {
    let s = server_with_namespace("warned");
    let create = |name: &str, validation: &str| {
        let mut object = configmap(name, json!({"a": "1"}));
        object["colour"] = json!("blue");
        json!({
            "resource": configmaps(),
            "namespace": "warned",
            "object": object,
            "options": {"fieldValidation": validation},
        })
    };
    let out = s.grpcurl_ok(
        &["-v", "-d", &create("colourful", "Warn").to_string()],
        &["capstan.v1.Resources/Create"],
    );
    let warnings: Vec<&str> = out
        .lines()
        .filter(|line| line.starts_with("warning:"))
        .collect();
    assert_eq!(
        warnings,
        [r#"warning: 299 - "unknown field \"colour\"""#],
        "{out}"
    );
    let stored = kubectl_cm(&s, "warned", "colourful");
    assert_eq!(stored["data"]["a"], "1");
    assert!(stored.get("colour").is_none(), "{stored}");

    // Strict refuses the same object, as REST does.
    let err = s.grpc_err("capstan.v1.Resources/Create", &create("strict", "Strict"));
    assert_code(&err, "InvalidArgument", r#"unknown field "colour""#);
}

/// A mistyped value is refused over gRPC with the message REST gives
/// (upstream's decode error), mapped to InvalidArgument, and nothing is
/// stored.
#[test]
fn a_mistyped_value_is_invalid_argument_with_upstreams_message() {
    let s = server_with_namespace("demo");
    let mut object = configmap("typed", json!({}));
    object["data"] = json!({"a": 5});
    let err = s.grpc_err(
        "capstan.v1.Resources/Create",
        &json!({"resource": configmaps(), "namespace": "demo", "object": object}),
    );
    assert_code(
        &err,
        "InvalidArgument",
        r#"ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string"#,
    );
    assert_no_configmaps(&s, "demo");
}
