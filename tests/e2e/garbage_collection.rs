//! The garbage collector with the real kubectl: `--cascade=foreground`,
//! `--cascade=orphan` and the default background deletion of dependents
//! owned through `metadata.ownerReferences`.

use crate::common;
use std::time::Duration;

use crate::common::{wait_until, TestServer};

/// A Deployment and a ReplicaSet it owns (with blockOwnerDeletion, as the
/// deployment controller writes it); `finalizers` are added to the ReplicaSet.
fn deployment_with_replicaset(server: &TestServer, name: &str, finalizers: &str) -> String {
    server.kubectl_ok(&["create", "deployment", name, "--image=nginx"]);
    let uid = server.kubectl_ok(&["get", "deploy", name, "-o", "jsonpath={.metadata.uid}"]);
    server.apply(&format!(
        r#"
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: {name}-rs
  finalizers: [{finalizers}]
  ownerReferences:
  - {{apiVersion: apps/v1, kind: Deployment, name: {name}, uid: "{uid}", controller: true, blockOwnerDeletion: true}}
spec:
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec: {{containers: [{{name: c, image: nginx}}]}}
"#
    ));
    uid
}

fn exists(server: &TestServer, resource: &str) -> bool {
    server.kubectl(&["get", resource]).status.success()
}

#[test]
fn foreground_deletion_removes_dependents_first() {
    let server = TestServer::start();
    // The ReplicaSet is held by a finalizer of its own, so the order shows:
    // the Deployment must wait for it.
    deployment_with_replicaset(&server, "web", "example.com/hold");
    server.kubectl_ok(&[
        "delete",
        "deploy",
        "web",
        "--cascade=foreground",
        "--wait=false",
    ]);
    wait_until(
        Duration::from_secs(10),
        "the ReplicaSet to be deleting",
        || {
            let ts = server.kubectl_ok(&[
                "get",
                "rs",
                "web-rs",
                "-o",
                "jsonpath={.metadata.deletionTimestamp}",
            ]);
            (!ts.is_empty()).then_some(())
        },
    );
    let finalizers = server.kubectl_ok(&[
        "get",
        "deploy",
        "web",
        "-o",
        "jsonpath={.metadata.finalizers}",
    ]);
    assert!(
        finalizers.contains("foregroundDeletion"),
        "the owner waits for its dependents: {finalizers}"
    );
    // Let the ReplicaSet go; then the Deployment follows.
    server.kubectl_ok(&[
        "patch",
        "rs",
        "web-rs",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":null}}"#,
    ]);
    wait_until(Duration::from_secs(10), "both to be gone", || {
        (!exists(&server, "rs/web-rs") && !exists(&server, "deploy/web")).then_some(())
    });

    // kubectl's default --wait returns once the owner is gone.
    deployment_with_replicaset(&server, "api", "");
    server.kubectl_ok(&["delete", "deploy", "api", "--cascade=foreground"]);
    assert!(!exists(&server, "deploy/api"));
    assert!(!exists(&server, "rs/api-rs"));
}

#[test]
fn orphan_deletion_leaves_dependents_without_the_owner_reference() {
    let server = TestServer::start();
    deployment_with_replicaset(&server, "web", "");
    server.kubectl_ok(&["delete", "deploy", "web", "--cascade=orphan"]);
    assert!(!exists(&server, "deploy/web"));
    let refs = server.kubectl_ok(&[
        "get",
        "rs",
        "web-rs",
        "-o",
        "jsonpath={.metadata.ownerReferences}",
    ]);
    assert_eq!(refs, "", "the orphan lost its owner reference");
}

#[test]
fn background_deletion_collects_dependents_of_a_deleted_owner() {
    let server = TestServer::start();
    deployment_with_replicaset(&server, "web", "");
    server.kubectl_ok(&["delete", "deploy", "web"]);
    wait_until(
        Duration::from_secs(10),
        "the ReplicaSet to be collected",
        || (!exists(&server, "rs/web-rs")).then_some(()),
    );

    // A dependent with one live owner left keeps living and loses only the
    // reference to the owner that is gone.
    server.kubectl_ok(&["create", "configmap", "a"]);
    server.kubectl_ok(&["create", "configmap", "b"]);
    let uid = |name: &str| {
        server.kubectl_ok(&["get", "configmap", name, "-o", "jsonpath={.metadata.uid}"])
    };
    let (a, b) = (uid("a"), uid("b"));
    server.apply(&format!(
        r#"
apiVersion: v1
kind: Secret
metadata:
  name: shared
  ownerReferences:
  - {{apiVersion: v1, kind: ConfigMap, name: a, uid: "{a}"}}
  - {{apiVersion: v1, kind: ConfigMap, name: b, uid: "{b}"}}
"#
    ));
    server.kubectl_ok(&["delete", "configmap", "a"]);
    wait_until(
        Duration::from_secs(10),
        "the dangling reference to go",
        || {
            let refs = server.kubectl_ok(&[
                "get",
                "secret",
                "shared",
                "-o",
                "jsonpath={.metadata.ownerReferences[*].name}",
            ]);
            (refs == "b").then_some(())
        },
    );
    server.kubectl_ok(&["delete", "configmap", "b"]);
    wait_until(
        Duration::from_secs(10),
        "the secret to be collected",
        || (!exists(&server, "secret/shared")).then_some(()),
    );
}

/// Two replicas on one etcd both run the collector: each decision is
/// checked against storage and written with compare-and-swap, so together
/// they still delete every dependent exactly as one would.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_collect_together() {
    let (_etcd, a, b) = common::two_replicas_on_etcd().await;
    tokio::task::block_in_place(|| {
        a.kubectl_ok(&["create", "configmap", "owner"]);
        let uid = a.kubectl_ok(&[
            "get",
            "configmap",
            "owner",
            "-o",
            "jsonpath={.metadata.uid}",
        ]);
        for i in 0..20 {
            a.apply(&format!(
                "apiVersion: v1\nkind: Secret\nmetadata:\n  name: dep-{i}\n  ownerReferences:\n  - {{apiVersion: v1, kind: ConfigMap, name: owner, uid: \"{uid}\", blockOwnerDeletion: true}}\n"
            ));
        }
        // Deleted through the other replica, in the foreground.
        b.kubectl_ok(&["delete", "configmap", "owner", "--cascade=foreground"]);
        for server in [&a, &b] {
            let left = server.kubectl_ok(&["get", "secrets", "-o", "name"]);
            assert!(!left.contains("dep-"), "dependents left: {left}");
            assert!(!exists(server, "configmap/owner"));
        }
        assert!(
            !a.server_log().contains("garbage collector pass failed"),
            "{}",
            a.server_log()
        );
        assert!(
            !b.server_log().contains("garbage collector pass failed"),
            "{}",
            b.server_log()
        );
    });
}
