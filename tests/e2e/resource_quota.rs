//! ResourceQuota: the controller fills in status.hard and status.used,
//! admission refuses what would go over with upstream's messages, demands
//! the resources a quota limits, charges by compare-and-swap (two replicas
//! on one etcd never spend the same unit), and deletes give quota back.

use crate::common;
use std::time::Duration;

use crate::common::TestServer;
use serde_json::{json, Value};

const NS: &str = "quota";

fn quota(server: &TestServer, name: &str, hard: Value) {
    server.apply(
        &json!({"apiVersion": "v1", "kind": "ResourceQuota",
                "metadata": {"name": name, "namespace": NS}, "spec": {"hard": hard}})
        .to_string(),
    );
}

fn used(server: &TestServer, name: &str) -> Value {
    server.get_json(&format!("/api/v1/namespaces/{NS}/resourcequotas/{name}"))["status"]["used"]
        .clone()
}

fn secret(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}, "stringData": {"k": "v"}})
}

const SECRETS: &str = "/api/v1/namespaces/quota/secrets";
const PODS: &str = "/api/v1/namespaces/quota/pods";

#[test]
fn quotas_count_refuse_and_give_back() {
    let server = TestServer::start();
    server.create_namespace(NS);
    quota(
        &server,
        "objects",
        json!({"secrets": "2", "count/deployments.apps": "1", "services.nodeports": "1"}),
    );
    let status = common::wait_until(Duration::from_secs(10), "the quota computed", || {
        let quota = server.get_json(&format!("/api/v1/namespaces/{NS}/resourcequotas/objects"));
        quota["status"]["used"]
            .is_object()
            .then(|| quota["status"].clone())
    });
    assert_eq!(
        status,
        json!({"hard": {"count/deployments.apps": "1", "secrets": "2", "services.nodeports": "1"},
               "used": {"count/deployments.apps": "0", "secrets": "0", "services.nodeports": "0"}})
    );

    for name in ["one", "two"] {
        let created = server.post_json(SECRETS, &secret(name));
        assert_eq!(created.status, 201, "{created:?}");
    }
    assert_eq!(used(&server, "objects")["secrets"], "2");
    let refused = server.post_json(SECRETS, &secret("three"));
    let status = refused.assert_status(403, "Forbidden");
    assert_eq!(
        status["message"],
        "secrets \"three\" is forbidden: exceeded quota: objects, requested: secrets=1, used: secrets=2, limited: secrets=2"
    );
    // kubectl sees the same.
    server.kubectl_line("create deployment a -n quota --image=nginx");
    let err = server.kubectl_err(&["create", "deployment", "b", "-n", NS, "--image=nginx"]);
    assert!(
        err.contains("deployments.apps \"b\" is forbidden: exceeded quota: objects, requested: count/deployments.apps=1, used: count/deployments.apps=1, limited: count/deployments.apps=1"),
        "{err}"
    );
    // An update is charged for what it adds: a ClusterIP service turned
    // into a NodePort one uses a node port.
    server.kubectl_line("create service clusterip web -n quota --tcp=80");
    server.kubectl_line("create service clusterip api -n quota --tcp=80");
    server.kubectl_line("patch service web -n quota -p {\"spec\":{\"type\":\"NodePort\"}}");
    let err = server.kubectl_err(&[
        "patch",
        "service",
        "api",
        "-n",
        NS,
        "-p",
        r#"{"spec":{"type":"NodePort"}}"#,
    ]);
    assert!(
        err.contains("exceeded quota: objects, requested: services.nodeports=1, used: services.nodeports=1, limited: services.nodeports=1"),
        "{err}"
    );

    // A dry run is checked but charges nothing.
    server.kubectl_line("delete secret one -n quota");
    common::wait_until(Duration::from_secs(10), "the secret given back", || {
        (used(&server, "objects")["secrets"] == "1").then_some(())
    });
    let dry = server.post_json(&format!("{SECRETS}?dryRun=All"), &secret("dry"));
    assert_eq!(dry.status, 201, "{dry:?}");
    assert_eq!(used(&server, "objects")["secrets"], "1");
}

#[test]
fn compute_quotas_demand_limits_and_sum_requests() {
    let server = TestServer::start();
    server.create_namespace(NS);
    quota(
        &server,
        "compute",
        json!({"pods": "2", "requests.cpu": "1", "limits.memory": "1Gi"}),
    );
    common::wait_until(Duration::from_secs(10), "the quota computed", || {
        used(&server, "compute").is_object().then_some(())
    });
    let pod = |name: &str, resources: Value| {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
               "spec": {"containers": [{"name": "c", "image": "nginx", "resources": resources}]}})
    };
    let bare = server.post_json(PODS, &pod("bare", json!({})));
    let status = bare.assert_status(403, "Forbidden");
    assert_eq!(
        status["message"],
        "pods \"bare\" is forbidden: failed quota: compute: must specify limits.memory for: c; requests.cpu for: c"
    );
    let sized = json!({"requests": {"cpu": "600m"}, "limits": {"memory": "512Mi"}});
    let first = server.post_json(PODS, &pod("first", sized.clone()));
    assert_eq!(first.status, 201, "{first:?}");
    assert_eq!(
        used(&server, "compute"),
        json!({"limits.memory": "512Mi", "pods": "1", "requests.cpu": "600m"})
    );
    let second = server.post_json(PODS, &pod("second", sized));
    let status = second.assert_status(403, "Forbidden");
    assert_eq!(
        status["message"],
        "pods \"second\" is forbidden: exceeded quota: compute, requested: requests.cpu=600m, used: requests.cpu=600m, limited: requests.cpu=1"
    );
}

/// Two replicas on one etcd create secrets at once against a quota of 3:
/// exactly three are stored, and the quota says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_never_spend_the_same_unit() {
    let (_etcd, a, b) = common::two_replicas_on_etcd().await;
    tokio::task::block_in_place(|| {
        a.create_namespace(NS);
        quota(&a, "three", json!({"secrets": "3"}));
        for replica in [&a, &b] {
            common::wait_until(
                Duration::from_secs(10),
                "both replicas see the quota",
                || {
                    (replica.get_json(&format!("/api/v1/namespaces/{NS}/resourcequotas/three"))
                        ["status"]["used"]["secrets"]
                        == "0")
                        .then_some(())
                },
            );
        }
        let statuses: Vec<u16> = std::thread::scope(|scope| {
            let creates: Vec<_> = (0..8)
                .map(|i| {
                    let replica = if i % 2 == 0 { &a } else { &b };
                    scope
                        .spawn(move || replica.post_json(SECRETS, &secret(&format!("s{i}"))).status)
                })
                .collect();
            creates
                .into_iter()
                .map(|c| c.join().expect("a create"))
                .collect()
        });
        let stored = statuses.iter().filter(|s| **s == 201).count();
        assert_eq!(stored, 3, "{statuses:?}");
        assert!(
            statuses.iter().all(|s| *s == 201 || *s == 403 || *s == 409),
            "{statuses:?}"
        );
        let listed = common::item_names(&a.get_json(SECRETS)).len();
        assert_eq!(listed, 3);
        assert_eq!(used(&a, "three")["secrets"], "3");
    });
}
