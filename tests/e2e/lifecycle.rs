//! Everyday kubectl flows that lean on object-lifecycle conventions:
//! `describe` (events found by field selector), `wait --for=delete`,
//! `diff` (server-side dry run), and selecting pods by label and status.

use crate::common;
use std::time::Duration;

use crate::common::{wait_until, Streaming, TestServer};

fn set_phase(server: &TestServer, pod: &str, phase: &str) {
    server.kubectl_ok(&[
        "patch",
        "pod",
        pod,
        "--subresource=status",
        "--type=merge",
        "-p",
        &format!(r#"{{"status":{{"phase":"{phase}"}}}}"#),
    ]);
}

#[test]
fn describe_pod_shows_status_and_its_events() {
    let server = TestServer::start();
    server.kubectl_ok(&["run", "web", "--image=nginx", "--labels=app=web"]);
    let uid = server.kubectl_ok(&["get", "pod", "web", "-o", "jsonpath={.metadata.uid}"]);
    // A new pod is Pending with its QoS class, as upstream's pod strategy sets it.
    let status = server.kubectl_json(&["get", "pod", "web"])["status"].clone();
    assert_eq!(status["phase"], "Pending", "{status}");
    assert_eq!(status["qosClass"], "BestEffort", "{status}");
    server.apply(&format!(
        r#"
apiVersion: v1
kind: Event
metadata: {{name: web.scheduled, namespace: default}}
involvedObject: {{apiVersion: v1, kind: Pod, name: web, namespace: default, uid: "{uid}"}}
reason: Scheduled
message: Successfully assigned default/web to node-1
source: {{component: default-scheduler}}
type: Normal
firstTimestamp: "2026-11-22T05:00:00Z"
lastTimestamp: "2026-11-22T05:00:00Z"
count: 1
"#
    ));
    // An event about another object must not show up.
    server.apply(
        r#"
apiVersion: v1
kind: Event
metadata: {name: other.pulled, namespace: default}
involvedObject: {apiVersion: v1, kind: Pod, name: other, namespace: default}
reason: Pulled
message: not about web
type: Normal
"#,
    );
    let described = server.kubectl_ok(&["describe", "pod", "web"]);
    assert!(
        described
            .lines()
            .any(|l| l.starts_with("Status:") && l.trim_end().ends_with("Pending")),
        "{described}"
    );
    assert!(described.contains("BestEffort"), "{described}");
    assert!(
        described.contains("Successfully assigned default/web to node-1"),
        "{described}"
    );
    assert!(!described.contains("not about web"), "{described}");
}

#[test]
fn pods_select_by_label_and_status_phase() {
    let server = TestServer::start();
    for (name, app) in [("web-1", "web"), ("web-2", "web"), ("db-1", "db")] {
        server.kubectl_ok(&["run", name, "--image=nginx", &format!("--labels=app={app}")]);
    }
    set_phase(&server, "web-1", "Running");
    set_phase(&server, "db-1", "Running");
    let running = server.kubectl_ok(&[
        "get",
        "pods",
        "-l",
        "app=web",
        "--field-selector",
        "status.phase=Running",
        "-o",
        "name",
    ]);
    assert_eq!(running.trim(), "pod/web-1");
    let not_running = server.kubectl_ok(&[
        "get",
        "pods",
        "--field-selector",
        "status.phase!=Running",
        "-o",
        "name",
    ]);
    assert_eq!(not_running.trim(), "pod/web-2");
    let err = server.kubectl_err(&["get", "pods", "--field-selector", "spec.image=nginx"]);
    assert!(
        err.contains("field label not supported: spec.image"),
        "upstream's 400 for an unknown field: {err}"
    );
}

#[test]
fn wait_for_delete_returns_when_the_object_is_gone() {
    let server = TestServer::start();
    server.kubectl_ok(&["create", "configmap", "held"]);
    server.kubectl_ok(&[
        "patch",
        "configmap",
        "held",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":["example.com/hold"]}}"#,
    ]);
    server.kubectl_ok(&["delete", "configmap", "held", "--wait=false"]);
    let mut wait = server.kubectl_command();
    wait.args(["wait", "--for=delete", "configmap/held", "--timeout=30s"]);
    let mut waiter = Streaming::spawn(wait);
    // Still held by the finalizer: the wait must not be over yet.
    std::thread::sleep(Duration::from_millis(500));
    assert!(server
        .kubectl(&["get", "configmap", "held"])
        .status
        .success());
    server.kubectl_ok(&[
        "patch",
        "configmap",
        "held",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":null}}"#,
    ]);
    waiter.wait_for("kubectl wait to see the delete", |out| {
        out.contains("condition met").then_some(())
    });
    wait_until(Duration::from_secs(5), "the configmap to be gone", || {
        (!server
            .kubectl(&["get", "configmap", "held"])
            .status
            .success())
        .then_some(())
    });
}

#[test]
fn diff_shows_a_pending_change_without_making_it() {
    let server = TestServer::start();
    let manifest = |value: &str| {
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cfg}}\ndata: {{level: \"{value}\"}}\n")
    };
    server.apply(&manifest("info"));
    let rv = server.kubectl_ok(&[
        "get",
        "cm",
        "cfg",
        "-o",
        "jsonpath={.metadata.resourceVersion}",
    ]);
    let path = server.scratch("cfg.yaml");
    std::fs::write(&path, manifest("debug")).expect("write manifest");
    let out = server.kubectl(&["diff", "-f", path.to_str().expect("utf-8 path")]);
    let diff = common::text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "kubectl diff exits 1 on differences: {diff}"
    );
    assert!(
        diff.contains("-  level: info") && diff.contains("+  level: debug"),
        "{diff}"
    );
    assert!(
        !diff.contains("resourceVersion"),
        "a dry run keeps the resourceVersion: {diff}"
    );
    // Nothing was written.
    let after = server.kubectl_ok(&[
        "get",
        "cm",
        "cfg",
        "-o",
        "jsonpath={.metadata.resourceVersion}",
    ]);
    assert_eq!(after, rv);
    std::fs::write(&path, manifest("info")).expect("write manifest");
    let same = server.kubectl(&["diff", "-f", path.to_str().expect("utf-8 path")]);
    assert_eq!(
        same.status.code(),
        Some(0),
        "{}",
        common::text(&same.stdout)
    );
}

#[test]
fn deleting_a_namespace_removes_everything_in_it() {
    let server = TestServer::start();
    server.kubectl_ok(&["create", "namespace", "demo"]);
    server.kubectl_ok(&["-n", "demo", "create", "deployment", "web", "--image=nginx"]);
    server.kubectl_ok(&[
        "-n",
        "demo",
        "create",
        "configmap",
        "settings",
        "--from-literal=a=1",
    ]);
    server.kubectl_ok(&[
        "-n",
        "demo",
        "create",
        "secret",
        "generic",
        "token",
        "--from-literal=t=x",
    ]);
    server.kubectl_ok(&[
        "-n",
        "demo",
        "create",
        "service",
        "clusterip",
        "web",
        "--tcp=80:80",
    ]);
    // kubectl waits until the namespace is gone.
    server.kubectl_ok(&["delete", "namespace", "demo"]);
    assert!(!server
        .kubectl(&["get", "namespace", "demo"])
        .status
        .success());
    for kind in ["deployments", "configmaps", "secrets", "services"] {
        let left = server.kubectl_ok(&["get", kind, "-n", "demo", "-o", "name"]);
        assert_eq!(left.trim(), "", "{kind} left in a deleted namespace");
    }

    // While something in it is held by a finalizer, the namespace stays
    // Terminating and refuses new content.
    server.kubectl_ok(&["create", "namespace", "held"]);
    server.kubectl_ok(&["-n", "held", "create", "configmap", "pinned"]);
    server.kubectl_ok(&[
        "-n",
        "held",
        "patch",
        "configmap",
        "pinned",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":["example.com/hold"]}}"#,
    ]);
    server.kubectl_ok(&["delete", "namespace", "held", "--wait=false"]);
    wait_until(
        Duration::from_secs(10),
        "the namespace to terminate",
        || {
            let phase =
                server.kubectl_ok(&["get", "namespace", "held", "-o", "jsonpath={.status.phase}"]);
            (phase == "Terminating").then_some(())
        },
    );
    let err = server.kubectl_err(&["-n", "held", "create", "configmap", "late"]);
    assert!(
        err.contains(
            "unable to create new content in namespace held because it is being terminated"
        ),
        "{err}"
    );
    server.kubectl_ok(&[
        "-n",
        "held",
        "patch",
        "configmap",
        "pinned",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":null}}"#,
    ]);
    wait_until(Duration::from_secs(15), "the namespace to be gone", || {
        (!server
            .kubectl(&["get", "namespace", "held"])
            .status
            .success())
        .then_some(())
    });
}
