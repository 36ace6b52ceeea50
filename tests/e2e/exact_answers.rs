//! Answers as kube-apiserver gives them, byte for byte: bodies decoded
//! against their kind's Go types (a mistyped value is refused with Go's
//! decoder error and nothing is stored), objects and Status written in Go
//! struct order with a trailing newline, and the small behaviours real
//! clients' suites rely on. Driven with curl and kubectl against the real
//! binary.

use crate::common;
use crate::common::{item_names, TestServer};
use serde_json::{json, Value};

const NS: &str = "exact";
const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/exact/deployments";
const CMS: &str = "/api/v1/namespaces/exact/configmaps";

fn server() -> TestServer {
    let s = TestServer::start();
    s.create_namespace(NS);
    s
}

fn deployment(name: &str) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}
            }
        }
    })
}

#[test]
fn mistyped_values_are_refused_with_gos_decode_error_and_nothing_is_stored() {
    let s = server();
    let prefix = r#"Deployment in version "v1" cannot be handled as a Deployment: "#;
    let mut cases: Vec<(Value, String)> = Vec::new();
    let mut replicas_word = deployment("w1");
    replicas_word["spec"]["replicas"] = json!("three");
    cases.push((
        replicas_word,
        "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32".into(),
    ));
    let mut replicas_huge = deployment("w2");
    replicas_huge["spec"]["replicas"] = json!(3_000_000_000_i64);
    cases.push((
        replicas_huge,
        "json: cannot unmarshal number 3000000000 into Go struct field DeploymentSpec.spec.replicas of type int32".into(),
    ));
    let mut args_object = deployment("w3");
    args_object["spec"]["template"]["spec"]["containers"][0]["args"] = json!({"a": 1});
    cases.push((
        args_object,
        "json: cannot unmarshal object into Go struct field Container.spec.template.spec.containers.args of type []string".into(),
    ));
    let mut port_word = deployment("w4");
    port_word["spec"]["template"]["spec"]["containers"][0]["ports"] =
        json!([{"containerPort": "eighty"}]);
    cases.push((
        port_word,
        "json: cannot unmarshal string into Go struct field ContainerPort.spec.template.spec.containers.ports.containerPort of type int32".into(),
    ));
    for (body, message) in cases {
        let resp = s.send("POST", DEPLOYMENTS, "application/json", &body.to_string());
        let status = resp.assert_status(400, "BadRequest");
        assert_eq!(status["message"], format!("{prefix}{message}"));
    }
    // The exponent form the issue names: a number no int32 holds.
    let raw = deployment("w5")
        .to_string()
        .replace("\"replicas\":1", "\"replicas\":1e20");
    let status = s
        .send("POST", DEPLOYMENTS, "application/json", &raw)
        .assert_status(400, "BadRequest");
    let message = status["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with(&format!("{prefix}json: cannot unmarshal number 1e")),
        "{message}"
    );
    assert!(message.ends_with("into Go struct field DeploymentSpec.spec.replicas of type int32"));

    let cm_prefix = r#"ConfigMap in version "v1" cannot be handled as a ConfigMap: "#;
    for (data, message) in [
        (json!({"a": 5}), "json: cannot unmarshal number into Go struct field ConfigMap.data of type string"),
        (json!([1, 2]), "json: cannot unmarshal array into Go struct field ConfigMap.data of type map[string]string"),
    ] {
        let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": data});
        let status = s.send("POST", CMS, "application/json", &body.to_string()).assert_status(400, "BadRequest");
        assert_eq!(status["message"], format!("{cm_prefix}{message}"));
    }
    // YAML bodies take the same decoder.
    let yaml =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\nbinaryData:\n  b: not base64!\n";
    let status = s
        .send("POST", CMS, "application/yaml", yaml)
        .assert_status(400, "BadRequest");
    assert_eq!(
        status["message"],
        format!("{cm_prefix}illegal base64 data at input byte 3")
    );

    // What Go's base64 accepts is taken and stored as Go writes it back:
    // line breaks dropped, trailing bits cleared.
    let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "wrapped"},
        "data": {"a": "YWJj\nZA==", "b": "YWJjZB=="}});
    let answer = s.send(
        "POST",
        "/api/v1/namespaces/exact/secrets",
        "application/json",
        &secret.to_string(),
    );
    assert_eq!(answer.status, 201, "{answer:?}");
    let created = answer.json();
    assert_eq!(created["data"], json!({"a": "YWJjZA==", "b": "YWJjZA=="}));

    assert!(item_names(&s.get_json(DEPLOYMENTS)).is_empty());
    assert!(item_names(&s.get_json(CMS)).is_empty());
    // kubectl sees the same answer, and the server still serves.
    let mut bad = deployment("k1");
    bad["spec"]["replicas"] = json!("three");
    let out = s.kubectl_stdin(&["create", "-n", NS, "-f", "-"], &bad.to_string());
    assert!(!out.status.success());
    let err = common::text(&out.stderr);
    assert!(
        err.contains("cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"),
        "{err}"
    );
    s.kubectl_ok(&[
        "create",
        "configmap",
        "after",
        "-n",
        NS,
        "--from-literal=a=b",
    ]);
}

#[test]
fn patches_whose_result_is_mistyped_are_invalid_and_change_nothing() {
    let s = server();
    let created = s.post_json(DEPLOYMENTS, &deployment("web"));
    assert_eq!(created.status, 201, "{created:#?}");
    let before = s.get_json(&format!("{DEPLOYMENTS}/web"));

    let merge = r#"{"spec":{"replicas":"three"}}"#;
    let resp = s.send(
        "PATCH",
        &format!("{DEPLOYMENTS}/web"),
        "application/merge-patch+json",
        merge,
    );
    let status = resp.assert_status(422, "Invalid");
    let message = status["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with(r#" "" is invalid: patch: Invalid value: "{"#),
        "{message}"
    );
    assert!(
        message.ends_with(r#": json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"#),
        "{message}"
    );
    assert_eq!(status["details"]["causes"][0]["field"], "patch");
    assert_eq!(
        status["details"]["causes"][0]["reason"],
        "FieldValueInvalid"
    );

    let resp = s.send(
        "PATCH",
        &format!("{DEPLOYMENTS}/web"),
        "application/strategic-merge-patch+json",
        merge,
    );
    let status = resp.assert_status(422, "Invalid");
    assert_eq!(
        status["message"],
        r#" "" is invalid: patch: Invalid value: "map[spec:map[replicas:three]]": cannot convert string to int32"#
    );

    let json_patch = r#"[{"op":"add","path":"/spec/paused","value":"yes"}]"#;
    let resp = s.send(
        "PATCH",
        &format!("{DEPLOYMENTS}/web"),
        "application/json-patch+json",
        json_patch,
    );
    let status = resp.assert_status(422, "Invalid");
    assert!(status["message"]
        .as_str()
        .unwrap_or_default()
        .ends_with("json: cannot unmarshal string into Go struct field DeploymentSpec.spec.paused of type bool"));

    assert_eq!(s.get_json(&format!("{DEPLOYMENTS}/web")), before);
}

#[test]
fn an_update_names_its_object_before_anything_is_looked_up() {
    let s = server();
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "xyz"}});
    let resp = s.send(
        "PUT",
        &format!("{CMS}/abc"),
        "application/json",
        &body.to_string(),
    );
    let status = resp.assert_status(400, "BadRequest");
    assert_eq!(
        status["message"],
        "the name of the object (xyz) does not match the name on the URL (abc)"
    );
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "abc", "namespace": "other"}});
    let resp = s.send(
        "PUT",
        &format!("{CMS}/abc"),
        "application/json",
        &body.to_string(),
    );
    let status = resp.assert_status(400, "BadRequest");
    assert_eq!(
        status["message"],
        "the namespace of the object (other) does not match the namespace on the URL (exact)"
    );
}

/// The bytes of a created ConfigMap, a Status of each common reason, a list
/// and a watch event, against bodies built from upstream's Go field order.
#[test]
fn bodies_are_written_in_go_struct_order_with_a_newline() {
    let s = server();
    // Keys in an order no Go type has.
    let body = r#"{"data":{"z":"1","a":"2"},"metadata":{"labels":{"b":"x","a":"y"},"name":"ordered"},"apiVersion":"v1","kind":"ConfigMap"}"#;
    let resp = s.send("POST", CMS, "application/json", body);
    assert_eq!(resp.status, 201, "{resp:#?}");
    let created = resp.json();
    let meta = &created["metadata"];
    let expected_object = format!(
        r#"{{"kind":"ConfigMap","apiVersion":"v1","metadata":{{"name":"ordered","namespace":"exact","uid":"{uid}","resourceVersion":"{rv}","creationTimestamp":"{ts}","labels":{{"a":"y","b":"x"}},"managedFields":{managed}}},"data":{{"a":"2","z":"1"}}}}"#,
        uid = meta["uid"].as_str().unwrap_or_default(),
        rv = meta["resourceVersion"].as_str().unwrap_or_default(),
        ts = meta["creationTimestamp"].as_str().unwrap_or_default(),
        managed = serde_json::to_string(&meta["managedFields"]).unwrap_or_default(),
    );
    assert_eq!(resp.body, format!("{expected_object}\n"));
    let got = s.get(&format!("{CMS}/ordered"));
    assert_eq!(got.body, format!("{expected_object}\n"));
    // The watch cache's copy (or storage's while the cache has not seen
    // it yet): the same bytes.
    let cached = s.get(&format!("{CMS}/ordered?resourceVersion=0"));
    assert_eq!(cached.body, format!("{expected_object}\n"));

    let missing = s.get(&format!("{CMS}/nope"));
    assert_eq!(
        missing.body,
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"configmaps \\\"nope\\\" not found\",\"reason\":\"NotFound\",\"details\":{\"name\":\"nope\",\"kind\":\"configmaps\"},\"code\":404}\n"
    );
    let again = s.send("POST", CMS, "application/json", body);
    assert_eq!(
        again.body,
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"configmaps \\\"ordered\\\" already exists\",\"reason\":\"AlreadyExists\",\"details\":{\"name\":\"ordered\",\"kind\":\"configmaps\"},\"code\":409}\n"
    );
    let invalid = s.send(
        "POST",
        CMS,
        "application/json",
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"Bad_Name"}}"#,
    );
    assert_eq!(
        invalid.body,
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"ConfigMap \\\"Bad_Name\\\" is invalid: metadata.name: Invalid value: \\\"Bad_Name\\\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')\",\"reason\":\"Invalid\",\"details\":{\"name\":\"Bad_Name\",\"kind\":\"ConfigMap\",\"causes\":[{\"reason\":\"FieldValueInvalid\",\"message\":\"Invalid value: \\\"Bad_Name\\\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')\",\"field\":\"metadata.name\"}]},\"code\":422}\n"
    );

    let list = s.get(CMS);
    let list_rv = list.json()["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert_eq!(
        list.body,
        format!(
            r#"{{"kind":"ConfigMapList","apiVersion":"v1","metadata":{{"resourceVersion":"{list_rv}"}},"items":[{expected_object}]}}"#
        ) + "\n"
    );

    let watch = s.curl(
        "GET",
        &format!("{CMS}?watch=true&resourceVersion=0&timeoutSeconds=1"),
        &[],
        None,
    );
    let first = watch.body.lines().next().unwrap_or_default();
    assert_eq!(
        first,
        format!(r#"{{"type":"ADDED","object":{expected_object}}}"#)
    );
}

/// A Deployment, after defaulting, is stored and answered in Go's order
/// at every level, whatever order kubectl sent.
#[test]
fn defaulted_objects_keep_go_struct_order() {
    let s = server();
    let manifest = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: exact\nspec:\n  template:\n    spec:\n      containers:\n      - image: nginx\n        name: c\n        resources:\n          limits:\n            cpu: 0.5\n    metadata:\n      labels:\n        app: web\n  selector:\n    matchLabels:\n      app: web\n";
    s.apply(manifest);
    let resp = s.get(&format!("{DEPLOYMENTS}/web"));
    let object = resp.json();
    let keys = |v: &Value| -> Vec<String> {
        v.as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    };
    assert_eq!(
        keys(&object),
        ["kind", "apiVersion", "metadata", "spec", "status"]
    );
    assert_eq!(
        keys(&object["spec"]),
        [
            "replicas",
            "selector",
            "template",
            "strategy",
            "revisionHistoryLimit",
            "progressDeadlineSeconds"
        ]
    );
    let container = &object["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(
        keys(container),
        [
            "name",
            "image",
            "resources",
            "terminationMessagePath",
            "terminationMessagePolicy",
            "imagePullPolicy"
        ]
    );
    // A quantity is kept in its canonical form, as upstream re-encodes it.
    assert_eq!(container["resources"]["limits"]["cpu"], "500m");
    let meta_keys = keys(&object["metadata"]);
    let position = |k: &str| meta_keys.iter().position(|m| m == k);
    assert!(
        position("uid") < position("resourceVersion"),
        "{meta_keys:?}"
    );
    assert!(
        position("resourceVersion") < position("generation"),
        "{meta_keys:?}"
    );
    assert!(
        position("generation") < position("creationTimestamp"),
        "{meta_keys:?}"
    );
    assert!(resp.body.ends_with("}\n"));
}

#[test]
fn deleting_a_service_answers_with_the_service() {
    let s = server();
    let service = json!({
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
        "spec": {"ports": [{"port": 80}], "selector": {"app": "web"}}
    });
    let created = s.post_json("/api/v1/namespaces/exact/services", &service);
    assert_eq!(created.status, 201, "{created:#?}");
    let resp = s.curl("DELETE", "/api/v1/namespaces/exact/services/web", &[], None);
    assert_eq!(resp.status, 200, "{resp:#?}");
    let deleted = resp.json();
    assert_eq!(deleted["kind"], "Service");
    assert_eq!(deleted["metadata"]["name"], "web");
    // A ConfigMap still answers with a Success Status, without a group.
    s.kubectl_ok(&["create", "configmap", "gone", "-n", NS]);
    let resp = s.curl("DELETE", &format!("{CMS}/gone"), &[], None);
    let status = resp.json();
    assert_eq!(status["status"], "Success");
    assert!(status["details"].get("group").is_none(), "{status}");
}

#[test]
fn a_node_without_unschedulable_is_selected_as_false() {
    let s = server();
    s.kubectl_with_manifest(
        &["create"],
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n",
    );
    s.kubectl_with_manifest(
        &["create"],
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: n2\nspec:\n  unschedulable: true\n",
    );
    let schedulable = s.kubectl_ok(&[
        "get",
        "nodes",
        "--field-selector",
        "spec.unschedulable==false",
        "-o",
        "name",
    ]);
    assert_eq!(schedulable.trim(), "node/n1");
    let cordoned = s.kubectl_ok(&[
        "get",
        "nodes",
        "--field-selector",
        "spec.unschedulable=true",
        "-o",
        "name",
    ]);
    assert_eq!(cordoned.trim(), "node/n2");
}

/// `PUT namespaces/<name>/finalize` replaces spec.finalizers: emptying it
/// completes the delete of a namespace stuck in Terminating.
#[test]
fn finalize_releases_a_namespace_stuck_terminating() {
    let s = server();
    s.create_namespace("stuck");
    s.kubectl_with_manifest(
        &["create"],
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: held\n  namespace: stuck\n  finalizers: [example.com/hold]\n",
    );
    s.kubectl_ok(&["delete", "namespace", "stuck", "--wait=false"]);
    let terminating = s.get_json("/api/v1/namespaces/stuck");
    assert_eq!(terminating["status"]["phase"], "Terminating");
    assert_eq!(terminating["spec"]["finalizers"], json!(["kubernetes"]));

    // Only spec.finalizers is taken from the body.
    let mut body = terminating.clone();
    body["spec"]["finalizers"] = json!([]);
    body["metadata"]["labels"]["added"] = json!("no");
    let resp = s.send(
        "PUT",
        "/api/v1/namespaces/stuck/finalize",
        "application/json",
        &body.to_string(),
    );
    assert_eq!(resp.status, 200, "{resp:#?}");
    let finalized = resp.json();
    assert_eq!(finalized["kind"], "Namespace");
    assert!(
        finalized["metadata"]["labels"].get("added").is_none(),
        "{finalized}"
    );
    common::wait_until(
        std::time::Duration::from_secs(10),
        "the namespace to go",
        || (s.get("/api/v1/namespaces/stuck").status == 404).then_some(()),
    );

    let core = s.get_json("/api/v1");
    let finalize = core["resources"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["name"] == "namespaces/finalize"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(finalize["verbs"], json!(["update"]), "{finalize}");
}

/// `pods/<name>/ephemeralcontainers`, the write `kubectl debug` makes:
/// ephemeral containers are added through it, validated as upstream, and
/// never removed or changed.
#[test]
fn kubectl_debug_adds_an_ephemeral_container() {
    let s = server();
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
    assert_eq!(
        s.post_json("/api/v1/namespaces/exact/pods", &pod).status,
        201
    );
    s.kubectl_ok(&[
        "debug",
        "web",
        "-n",
        NS,
        "--image=busybox",
        "--target=c",
        "--container=dbg",
    ]);
    let debugged = s.get_json("/api/v1/namespaces/exact/pods/web");
    let ephemeral = &debugged["spec"]["ephemeralContainers"];
    assert_eq!(ephemeral[0]["name"], "dbg", "{debugged}");
    assert_eq!(ephemeral[0]["image"], "busybox");
    assert_eq!(ephemeral[0]["targetContainerName"], "c");

    let path = "/api/v1/namespaces/exact/pods/web/ephemeralcontainers";
    let with_ports = json!({"spec": {"ephemeralContainers": [
        ephemeral[0].clone(),
        {"name": "dbg2", "image": "busybox", "ports": [{"containerPort": 80}], "targetContainerName": "nope"}
    ]}});
    let resp = s.send(
        "PATCH",
        path,
        "application/strategic-merge-patch+json",
        &with_ports.to_string(),
    );
    let status = resp.assert_status(422, "Invalid");
    let causes: Vec<(&str, &str)> = status["details"]["causes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            (
                c["field"].as_str().unwrap_or_default(),
                c["message"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert!(
        causes.contains(&(
            "spec.ephemeralContainers[1].targetContainerName",
            "Not found: \"nope\""
        )),
        "{causes:?}"
    );
    assert!(
        causes.contains(&(
            "spec.ephemeralContainers[1].ports",
            "Forbidden: cannot be set for an Ephemeral Container"
        )),
        "{causes:?}"
    );

    let mut removed = s.get_json(path);
    removed["spec"]["ephemeralContainers"] = json!([]);
    let resp = s.send("PUT", path, "application/json", &removed.to_string());
    let status = resp.assert_status(422, "Invalid");
    assert_eq!(
        status["details"]["causes"][0]["message"],
        "Forbidden: existing ephemeral containers \"dbg\" may not be removed\n"
    );
    // Other fields written through the subresource are not taken.
    let mut relabelled = s.get_json(path);
    relabelled["metadata"]["labels"] = json!({"changed": "no"});
    relabelled["spec"]["ephemeralContainers"]
        .as_array_mut()
        .expect("a list")
        .push(json!({"name": "dbg3", "image": "busybox"}));
    let resp = s.send("PUT", path, "application/json", &relabelled.to_string());
    assert_eq!(resp.status, 200, "{resp:#?}");
    let after = resp.json();
    assert_eq!(after["spec"]["ephemeralContainers"][1]["name"], "dbg3");
    assert!(after["metadata"].get("labels").is_none(), "{after}");
}

/// `pods/<name>/resize` (1.33): only containers' cpu and memory change,
/// never removed, and the QoS class stays.
#[test]
fn pods_are_resized_in_place_within_upstreams_rules() {
    let s = server();
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "sized"},
        "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {
            "requests": {"cpu": "100m", "memory": "64Mi"},
            "limits": {"cpu": "200m", "memory": "128Mi"}}}]}});
    assert_eq!(
        s.post_json("/api/v1/namespaces/exact/pods", &pod).status,
        201
    );
    let path = "/api/v1/namespaces/exact/pods/sized/resize";
    let patch = json!({"spec": {"containers": [{"name": "c", "image": "httpd",
        "resources": {"requests": {"cpu": "150m"}}}]}});
    let resp = s.send(
        "PATCH",
        path,
        "application/strategic-merge-patch+json",
        &patch.to_string(),
    );
    assert_eq!(resp.status, 200, "{resp:#?}");
    let resized = resp.json();
    let ctr = &resized["spec"]["containers"][0];
    assert_eq!(ctr["resources"]["requests"]["cpu"], "150m");
    assert_eq!(
        ctr["image"], "nginx",
        "a resize changes nothing but resources"
    );

    let removal = json!([{"op": "remove", "path": "/spec/containers/0/resources/limits/memory"}]);
    let status = s
        .send(
            "PATCH",
            path,
            "application/json-patch+json",
            &removal.to_string(),
        )
        .assert_status(422, "Invalid");
    assert_eq!(
        status["details"]["causes"][0]["field"],
        "spec.containers[0].resources.limits[memory]"
    );
    assert_eq!(
        status["details"]["causes"][0]["message"],
        "Forbidden: resource removal is not supported"
    );

    let guaranteed = json!({"spec": {"containers": [{"name": "c", "resources": {
        "requests": {"cpu": "200m", "memory": "128Mi"}}}]}});
    let status = s
        .send(
            "PATCH",
            path,
            "application/strategic-merge-patch+json",
            &guaranteed.to_string(),
        )
        .assert_status(422, "Invalid");
    assert!(
        status["details"]["causes"][0]["message"]
            .as_str()
            .is_some_and(|m| m.ends_with("Pod QOS Class may not change as a result of resizing")),
        "{status}"
    );

    let storage = json!({"spec": {"containers": [{"name": "c", "resources": {
        "requests": {"ephemeral-storage": "1Gi"}}}]}});
    let status = s
        .send(
            "PATCH",
            path,
            "application/strategic-merge-patch+json",
            &storage.to_string(),
        )
        .assert_status(422, "Invalid");
    assert!(
        status["details"]["causes"][0]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("Forbidden: only cpu and memory resources are mutable")),
        "{status}"
    );
    assert_eq!(
        s.get_json("/api/v1/namespaces/exact/pods/sized")["spec"]["containers"][0]["resources"]
            ["requests"],
        json!({"cpu": "150m", "memory": "64Mi"})
    );
}

/// A Scale is decoded as autoscaling/v1 Scale before its replicas land in
/// the object: a mistyped count is refused, never read as 0.
#[test]
fn a_mistyped_scale_is_refused_and_scales_nothing() {
    let s = server();
    assert_eq!(s.post_json(DEPLOYMENTS, &deployment("web")).status, 201);
    let path = format!("{DEPLOYMENTS}/web/scale");
    let mut scale = s.get_json(&path);
    scale["spec"]["replicas"] = json!("three");
    let status = s
        .send("PUT", &path, "application/json", &scale.to_string())
        .assert_status(400, "BadRequest");
    assert_eq!(
        status["message"],
        r#"Scale in version "v1" cannot be handled as a Scale: json: cannot unmarshal string into Go struct field ScaleSpec.spec.replicas of type int32"#
    );
    let patch = r#"{"spec":{"replicas":"three"}}"#;
    let status = s
        .send("PATCH", &path, "application/merge-patch+json", patch)
        .assert_status(422, "Invalid");
    assert!(status["message"]
        .as_str()
        .is_some_and(|m| m.ends_with("json: cannot unmarshal string into Go struct field ScaleSpec.spec.replicas of type int32")), "{status}");
    assert_eq!(
        s.get_json(&format!("{DEPLOYMENTS}/web"))["spec"]["replicas"],
        1
    );
}

/// Keys of `value` (an object) in the order the server wrote them.
fn keys_of(value: &Value) -> Vec<String> {
    value
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

/// `written` lists keys in the order of `go_order` (a Go struct's fields),
/// whichever of them are present.
#[track_caller]
fn assert_go_order(what: &str, written: &Value, go_order: &[&str]) {
    let keys = keys_of(written);
    let positions: Vec<usize> = keys
        .iter()
        .map(|k| {
            go_order
                .iter()
                .position(|g| g == k)
                .unwrap_or_else(|| panic!("{what}: {k} is not a field of the Go type"))
        })
        .collect();
    assert!(
        positions.windows(2).all(|w| w[0] < w[1]),
        "{what}: {keys:?} is not in Go order {go_order:?}"
    );
}

/// One kind per API group, each sent with its keys reversed: the answer
/// (and what is stored) has them in its Go types' field order.
#[test]
fn one_kind_per_group_comes_back_in_go_struct_order() {
    let s = server();
    struct Case {
        path: &'static str,
        body: &'static str,
        top: &'static [&'static str],
        nested: &'static [(&'static str, &'static [&'static str])],
    }
    let cases = [
        Case {
            path: "/apis/batch/v1/namespaces/exact/cronjobs",
            body: r#"{"spec":{"jobTemplate":{"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"image":"busybox","name":"c"}]}}}},"schedule":"* * * * *"},"metadata":{"name":"cj"},"kind":"CronJob","apiVersion":"batch/v1"}"#,
            top: &["kind", "apiVersion", "metadata", "spec", "status"],
            nested: &[(
                "/spec",
                &[
                    "schedule",
                    "timeZone",
                    "startingDeadlineSeconds",
                    "concurrencyPolicy",
                    "suspend",
                    "jobTemplate",
                    "successfulJobsHistoryLimit",
                    "failedJobsHistoryLimit",
                ],
            )],
        },
        Case {
            path: "/apis/networking.k8s.io/v1/namespaces/exact/ingresses",
            body: r#"{"spec":{"rules":[{"http":{"paths":[{"backend":{"service":{"port":{"number":80},"name":"web"}},"pathType":"Prefix","path":"/"}]},"host":"a.example.com"}],"ingressClassName":"nginx"},"metadata":{"name":"in"},"kind":"Ingress","apiVersion":"networking.k8s.io/v1"}"#,
            top: &["kind", "apiVersion", "metadata", "spec", "status"],
            nested: &[
                (
                    "/spec",
                    &["ingressClassName", "defaultBackend", "tls", "rules"],
                ),
                ("/spec/rules/0", &["host", "http"]),
                (
                    "/spec/rules/0/http/paths/0",
                    &["path", "pathType", "backend"],
                ),
            ],
        },
        Case {
            path: "/apis/rbac.authorization.k8s.io/v1/namespaces/exact/rolebindings",
            body: r#"{"roleRef":{"name":"view","kind":"ClusterRole","apiGroup":"rbac.authorization.k8s.io"},"subjects":[{"namespace":"exact","name":"sa","kind":"ServiceAccount"}],"metadata":{"name":"rb"},"kind":"RoleBinding","apiVersion":"rbac.authorization.k8s.io/v1"}"#,
            top: &["kind", "apiVersion", "metadata", "subjects", "roleRef"],
            nested: &[
                ("/subjects/0", &["kind", "apiGroup", "name", "namespace"]),
                ("/roleRef", &["apiGroup", "kind", "name"]),
            ],
        },
        Case {
            path: "/apis/policy/v1/namespaces/exact/poddisruptionbudgets",
            body: r#"{"spec":{"unhealthyPodEvictionPolicy":"AlwaysAllow","selector":{"matchLabels":{"app":"web"}},"minAvailable":1},"metadata":{"name":"pdb"},"kind":"PodDisruptionBudget","apiVersion":"policy/v1"}"#,
            top: &["kind", "apiVersion", "metadata", "spec", "status"],
            nested: &[(
                "/spec",
                &[
                    "minAvailable",
                    "selector",
                    "maxUnavailable",
                    "unhealthyPodEvictionPolicy",
                ],
            )],
        },
        Case {
            path: "/apis/storage.k8s.io/v1/storageclasses",
            body: r#"{"volumeBindingMode":"WaitForFirstConsumer","allowVolumeExpansion":true,"reclaimPolicy":"Retain","parameters":{"b":"2","a":"1"},"provisioner":"example.com/p","metadata":{"name":"sc"},"kind":"StorageClass","apiVersion":"storage.k8s.io/v1"}"#,
            top: &[
                "kind",
                "apiVersion",
                "metadata",
                "provisioner",
                "parameters",
                "reclaimPolicy",
                "mountOptions",
                "allowVolumeExpansion",
                "volumeBindingMode",
                "allowedTopologies",
            ],
            nested: &[("/parameters", &["a", "b"])],
        },
        Case {
            path: "/apis/scheduling.k8s.io/v1/priorityclasses",
            body: r#"{"preemptionPolicy":"Never","description":"d","globalDefault":false,"value":1000,"metadata":{"name":"pc"},"kind":"PriorityClass","apiVersion":"scheduling.k8s.io/v1"}"#,
            top: &[
                "kind",
                "apiVersion",
                "metadata",
                "value",
                "globalDefault",
                "description",
                "preemptionPolicy",
            ],
            nested: &[],
        },
        Case {
            path: "/apis/coordination.k8s.io/v1/namespaces/exact/leases",
            body: r#"{"spec":{"leaseTransitions":1,"renewTime":"2026-01-01T00:00:00.000000Z","leaseDurationSeconds":15,"holderIdentity":"me"},"metadata":{"name":"ls"},"kind":"Lease","apiVersion":"coordination.k8s.io/v1"}"#,
            top: &["kind", "apiVersion", "metadata", "spec"],
            nested: &[(
                "/spec",
                &[
                    "holderIdentity",
                    "leaseDurationSeconds",
                    "acquireTime",
                    "renewTime",
                    "leaseTransitions",
                    "strategy",
                    "preferredHolder",
                ],
            )],
        },
        Case {
            path: "/apis/discovery.k8s.io/v1/namespaces/exact/endpointslices",
            body: r#"{"ports":[{"port":80,"protocol":"TCP","name":"http"}],"endpoints":[{"nodeName":"n1","conditions":{"ready":true},"addresses":["10.0.0.1"]}],"addressType":"IPv4","metadata":{"name":"es"},"kind":"EndpointSlice","apiVersion":"discovery.k8s.io/v1"}"#,
            top: &[
                "kind",
                "apiVersion",
                "metadata",
                "addressType",
                "endpoints",
                "ports",
            ],
            nested: &[
                (
                    "/endpoints/0",
                    &[
                        "addresses",
                        "conditions",
                        "hostname",
                        "targetRef",
                        "nodeName",
                        "zone",
                        "hints",
                    ],
                ),
                ("/ports/0", &["name", "protocol", "port", "appProtocol"]),
            ],
        },
        Case {
            path: "/apis/autoscaling/v2/namespaces/exact/horizontalpodautoscalers",
            body: r#"{"spec":{"maxReplicas":5,"minReplicas":1,"scaleTargetRef":{"name":"web","kind":"Deployment","apiVersion":"apps/v1"}},"metadata":{"name":"hpa"},"kind":"HorizontalPodAutoscaler","apiVersion":"autoscaling/v2"}"#,
            top: &["kind", "apiVersion", "metadata", "spec", "status"],
            nested: &[
                (
                    "/spec",
                    &[
                        "scaleTargetRef",
                        "minReplicas",
                        "maxReplicas",
                        "metrics",
                        "behavior",
                    ],
                ),
                ("/spec/scaleTargetRef", &["kind", "name", "apiVersion"]),
            ],
        },
        Case {
            path: "/apis/node.k8s.io/v1/runtimeclasses",
            body: r#"{"overhead":{"podFixed":{"memory":"64Mi","cpu":"250m"}},"handler":"runc","metadata":{"name":"rc"},"kind":"RuntimeClass","apiVersion":"node.k8s.io/v1"}"#,
            top: &[
                "kind",
                "apiVersion",
                "metadata",
                "handler",
                "overhead",
                "scheduling",
            ],
            nested: &[("/overhead/podFixed", &["cpu", "memory"])],
        },
    ];
    for case in cases {
        let resp = s.send("POST", case.path, "application/json", case.body);
        assert_eq!(resp.status, 201, "{}: {resp:#?}", case.path);
        assert!(resp.body.ends_with("}\n"), "{}", case.path);
        let name = resp.json()["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let stored = s.get(&format!("{}/{name}", case.path));
        for written in [resp.json(), stored.json()] {
            assert_go_order(case.path, &written, case.top);
            assert_go_order(
                &format!("{} metadata", case.path),
                &written["metadata"],
                &[
                    "name",
                    "generateName",
                    "namespace",
                    "selfLink",
                    "uid",
                    "resourceVersion",
                    "generation",
                    "creationTimestamp",
                    "deletionTimestamp",
                    "deletionGracePeriodSeconds",
                    "labels",
                    "annotations",
                    "ownerReferences",
                    "finalizers",
                    "managedFields",
                ],
            );
            for (pointer, order) in case.nested {
                let inner = written.pointer(pointer).unwrap_or(&Value::Null);
                assert_go_order(&format!("{}{pointer}", case.path), inner, order);
            }
        }
    }
}
