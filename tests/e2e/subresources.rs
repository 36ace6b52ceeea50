//! The status, scale and binding subresources, through kubectl, REST and gRPC.

use crate::common::TestServer;
use serde_json::{json, Value};

const DEPLOYMENT: &str = r#"
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx:1.27}]}
"#;

#[test]
fn kubectl_scale_writes_spec_replicas_through_the_scale_subresource() {
    let server = TestServer::start();
    server.apply(DEPLOYMENT);
    server.kubectl_ok(&["scale", "deployment", "web", "--replicas=5"]);
    let d = server.kubectl_json(&["get", "deployment", "web", "-o", "json"]);
    assert_eq!(d["spec"]["replicas"], 5);
    assert_eq!(d["metadata"]["generation"], 2);
    let scale = server.get_json("/apis/apps/v1/namespaces/default/deployments/web/scale");
    assert_eq!(scale["kind"], "Scale");
    assert_eq!(scale["apiVersion"], "autoscaling/v1");
    assert_eq!(scale["spec"]["replicas"], 5);
    assert_eq!(scale["status"]["selector"], "app=web");
    assert_eq!(
        scale["metadata"]["resourceVersion"],
        d["metadata"]["resourceVersion"]
    );
    // A negative replica count is invalid and changes nothing.
    let resp = server.curl(
        "PATCH",
        "/apis/apps/v1/namespaces/default/deployments/web/scale",
        &[("Content-Type", "application/merge-patch+json")],
        Some(br#"{"spec":{"replicas":-1}}"#),
    );
    let status = resp.assert_status(422, "Invalid");
    assert_eq!(status["details"]["causes"][0]["field"], "spec.replicas");
    assert_eq!(
        server.kubectl_ok(&[
            "get",
            "deployment",
            "web",
            "-o",
            "jsonpath={.spec.replicas}"
        ]),
        "5"
    );
}

/// kubectl's arguments for a merge patch of `kind`/`name` through /status.
fn status_patch<'a>(kind: &'a str, name: &'a str, patch: &'a str) -> [&'a str; 7] {
    [
        "patch",
        kind,
        name,
        "--subresource=status",
        "--type=merge",
        "-p",
        patch,
    ]
}

#[test]
fn status_changes_only_through_the_status_subresource() {
    let server = TestServer::start();
    server.apply(DEPLOYMENT);
    // Through /status: status changes, spec does not.
    server.kubectl_ok(&status_patch(
        "deployment",
        "web",
        r#"{"status":{"replicas":2,"readyReplicas":2},"spec":{"replicas":9}}"#,
    ));
    let d = server.kubectl_json(&["get", "deployment", "web", "-o", "json"]);
    assert_eq!(d["status"]["readyReplicas"], 2);
    assert_eq!(d["spec"]["replicas"], 2);
    // An impossible status is rejected with upstream's causes, and nothing
    // changes.
    let err = server.kubectl_err(&status_patch(
        "deployment",
        "web",
        r#"{"status":{"availableReplicas":3,"observedGeneration":-1}}"#,
    ));
    assert!(
        err.contains(r#"The Deployment "web" is invalid: "#)
            && err.contains("status.observedGeneration: Invalid value: -1: must be greater than or equal to 0")
            && err.contains("status.availableReplicas: Invalid value: 3: cannot be greater than status.replicas")
            && err.contains("status.availableReplicas: Invalid value: 3: cannot be greater than readyReplicas"),
        "{err}"
    );
    // A namespace that is not being deleted cannot claim to be terminating.
    let err = server.kubectl_err(&status_patch(
        "namespace",
        "default",
        r#"{"status":{"phase":"Terminating"}}"#,
    ));
    assert!(
        err.contains(r#"The Namespace "default" is invalid: status.Phase: Invalid value: "Terminating": may only be 'Active' if `deletionTimestamp` is empty"#),
        "{err}"
    );
    assert_eq!(
        server.kubectl_ok(&[
            "get",
            "namespace",
            "default",
            "-o",
            "jsonpath={.status.phase}"
        ]),
        "Active"
    );
    let unchanged = server.kubectl_json(&["get", "deployment", "web", "-o", "json"]);
    assert_eq!(unchanged["status"], d["status"]);
    assert_eq!(
        unchanged["metadata"]["resourceVersion"],
        d["metadata"]["resourceVersion"]
    );
    // Through the main resource: status does not change.
    server.kubectl_ok(&[
        "patch",
        "deployment",
        "web",
        "--type=merge",
        "-p",
        r#"{"status":{"readyReplicas":0}}"#,
    ]);
    let d = server.kubectl_json(&["get", "deployment", "web", "-o", "json"]);
    assert_eq!(d["status"]["readyReplicas"], 2);
    // A create cannot set status either.
    let listed = server.kubectl_ok(&["get", "deployment", "web", "--no-headers"]);
    assert!(listed.contains("2/2"), "{listed}");
    // Kinds without the subresource answer 404 for it.
    let resp = server.get("/api/v1/namespaces/default/configmaps/x/status");
    assert_eq!(resp.status, 404);
}

/// A kubelet's watch of its node's pods (`fieldSelector=spec.nodeName=n1`,
/// an indexed field, so the cache sends it only those pods' changes): a pod
/// bound to the node arrives as ADDED, its deletion as DELETED, and a pod
/// of another node never shows.
#[test]
fn a_watch_of_one_nodes_pods_sees_them_bound_and_deleted() {
    let server = TestServer::start();
    let pod = |name: &str, node: Option<&str>| {
        let mut spec = json!({"containers": [{"name": "c", "image": "nginx"}]});
        if let Some(node) = node {
            spec["nodeName"] = json!(node);
        }
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec})
    };
    let pods = "/api/v1/namespaces/default/pods";
    let rv = server.get_json(pods)["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let mut watch = server.curl_stream(
        &format!("{pods}?watch=1&fieldSelector=spec.nodeName%3Dn1&resourceVersion={rv}&timeoutSeconds=20"),
        25,
    );
    for (name, node) in [("pending", None), ("elsewhere", Some("n2"))] {
        let created = server.post_json(pods, &pod(name, node));
        assert_eq!(created.status, 201, "{created:#?}");
    }
    let bound = server.post_json(
        &format!("{pods}/pending/binding"),
        &json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "pending"},
            "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"}}),
    );
    assert_eq!(bound.status, 201, "{bound:#?}");
    server.kubectl_ok(&["delete", "pod", "pending", "--grace-period=0", "--force"]);
    server.kubectl_ok(&["delete", "pod", "elsewhere", "--grace-period=0", "--force"]);
    let events = watch.wait_for("the bound pod's DELETED", |out| {
        let events: Vec<(String, String)> = out
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .map(|event| {
                let name = event["object"]["metadata"]["name"]
                    .as_str()
                    .unwrap_or("")
                    .to_string();
                (event["type"].as_str().unwrap_or("").to_string(), name)
            })
            .collect();
        events
            .iter()
            .any(|(kind, _)| kind == "DELETED")
            .then_some(events)
    });
    let seen: Vec<(&str, &str)> = events
        .iter()
        .map(|(k, n)| (k.as_str(), n.as_str()))
        .collect();
    assert_eq!(seen[0], ("ADDED", "pending"), "{seen:?}");
    assert_eq!(seen.last(), Some(&("DELETED", "pending")), "{seen:?}");
    assert!(seen.iter().all(|(_, name)| *name == "pending"), "{seen:?}");
}
