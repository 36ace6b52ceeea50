//! `pods/<name>/eviction` as upstream's EvictionREST: deletes within the
//! PodDisruptionBudget, upstream's 429 past it, the budget spent by
//! compare-and-swap (two replicas cannot both spend its last disruption),
//! and `kubectl drain`.

use crate::common;
use crate::common::TestServer;
use serde_json::json;

const NS: &str = "evict";
const PODS: &str = "/api/v1/namespaces/evict/pods";
const PDBS: &str = "/apis/policy/v1/namespaces/evict/poddisruptionbudgets";

/// A running, ready pod labelled app=web on `node`, as a kubelet would
/// report it.
fn running_pod(s: &TestServer, name: &str, node: &str) {
    let pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "web"}},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "nginx"}]}
    });
    let created = s.post_json(PODS, &pod);
    assert_eq!(created.status, 201, "{created:#?}");
    let status = json!({"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}});
    let resp = s.send(
        "PATCH",
        &format!("{PODS}/{name}/status"),
        "application/merge-patch+json",
        &status.to_string(),
    );
    assert_eq!(resp.status, 200, "{resp:#?}");
}

/// A budget for app=web with `allowed` disruptions, its status written as
/// the disruption controller would.
fn budget(s: &TestServer, allowed: i64, current: i64) {
    let pdb = json!({
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "web"},
        "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}}
    });
    let created = s.post_json(PDBS, &pdb);
    assert_eq!(created.status, 201, "{created:#?}");
    let status = json!({"status": {
        "observedGeneration": 1, "disruptionsAllowed": allowed,
        "currentHealthy": current, "desiredHealthy": 2, "expectedPods": current
    }});
    let resp = s.send(
        "PATCH",
        &format!("{PDBS}/web/status"),
        "application/merge-patch+json",
        &status.to_string(),
    );
    assert_eq!(resp.status, 200, "{resp:#?}");
}

fn evict(s: &TestServer, pod: &str) -> common::HttpResponse {
    let eviction = json!({
        "apiVersion": "policy/v1", "kind": "Eviction",
        "metadata": {"name": pod, "namespace": NS}
    });
    s.send(
        "POST",
        &format!("{PODS}/{pod}/eviction"),
        "application/json",
        &eviction.to_string(),
    )
}

#[test]
fn evictions_spend_the_budget_and_are_refused_past_it() {
    let s = TestServer::start();
    s.create_namespace(NS);
    for pod in ["web-1", "web-2", "web-3"] {
        running_pod(&s, pod, "n1");
    }
    budget(&s, 1, 3);

    let resp = evict(&s, "web-1");
    assert_eq!(resp.status, 201, "{resp:#?}");
    assert_eq!(
        resp.body,
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Success\",\"code\":201}\n"
    );
    assert_eq!(s.get(&format!("{PODS}/web-1")).status, 404);
    let pdb = s.get_json(&format!("{PDBS}/web"));
    assert_eq!(pdb["status"]["disruptionsAllowed"], 0);
    assert!(pdb["status"]["disruptedPods"]["web-1"].is_string(), "{pdb}");
    assert_eq!(pdb["status"]["conditions"][0]["type"], "DisruptionAllowed");
    assert_eq!(pdb["status"]["conditions"][0]["status"], "False");

    let resp = evict(&s, "web-2");
    let status = resp.assert_status(429, "TooManyRequests");
    assert_eq!(
        status["message"],
        "Cannot evict pod as it would violate the pod's disruption budget."
    );
    assert_eq!(
        status["details"]["causes"],
        json!([{"reason": "DisruptionBudget", "message": "The disruption budget web needs 2 healthy pods and has 3 currently"}])
    );
    assert_eq!(s.get(&format!("{PODS}/web-2")).status, 200);

    // Upstream's other answers: a name that does not match, a missing pod,
    // and dry run (checked, nothing spent or deleted).
    let wrong =
        json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "other"}});
    let resp = s.send(
        "POST",
        &format!("{PODS}/web-2/eviction"),
        "application/json",
        &wrong.to_string(),
    );
    let status = resp.assert_status(400, "BadRequest");
    assert_eq!(
        status["message"],
        "name in URL does not match name in Eviction object"
    );
    let resp = evict(&s, "nope");
    resp.assert_status(404, "NotFound");
    let resp = s.send(
        "PATCH",
        &format!("{PDBS}/web/status"),
        "application/merge-patch+json",
        &json!({"status": {"disruptionsAllowed": 1}}).to_string(),
    );
    assert_eq!(resp.status, 200, "{resp:#?}");
    let resp = s.curl(
        "POST",
        &format!("{PODS}/web-2/eviction?dryRun=All"),
        &[("Content-Type", "application/json")],
        Some(
            json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "web-2"}})
                .to_string()
                .as_bytes(),
        ),
    );
    assert_eq!(resp.status, 201, "{resp:#?}");
    assert_eq!(s.get(&format!("{PODS}/web-2")).status, 200);
    assert_eq!(
        s.get_json(&format!("{PDBS}/web"))["status"]["disruptionsAllowed"],
        1
    );

    // A pod that is not running yet is evicted whatever the budget says.
    let pending = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "pending", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
    assert_eq!(s.post_json(PODS, &pending).status, 201);
    assert_eq!(evict(&s, "pending").status, 201);
    assert_eq!(
        s.get_json(&format!("{PDBS}/web"))["status"]["disruptionsAllowed"],
        1
    );

    // Discovery names the subresource as upstream.
    let core = s.get_json("/api/v1");
    let eviction = core["resources"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["name"] == "pods/eviction"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(eviction["verbs"], json!(["create"]));
    assert_eq!(eviction["kind"], "Eviction");
    assert_eq!(eviction["group"], "policy");
    // In APIResource's field order.
    let keys: Vec<&String> = eviction
        .as_object()
        .map(|m| m.keys().collect())
        .unwrap_or_default();
    assert_eq!(
        keys,
        [
            "name",
            "singularName",
            "namespaced",
            "group",
            "version",
            "kind",
            "verbs"
        ]
    );
}

#[test]
fn kubectl_drain_evicts_a_nodes_pods() {
    let s = TestServer::start();
    s.create_namespace(NS);
    s.kubectl_with_manifest(
        &["create"],
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: n2\n",
    );
    running_pod(&s, "on-n2", "n2");
    running_pod(&s, "elsewhere", "n3");
    let out = s.kubectl_ok(&["drain", "n2", "--force", "--timeout=30s"]);
    assert!(out.contains("pod/on-n2 evicted"), "{out}");
    assert_eq!(s.get(&format!("{PODS}/on-n2")).status, 404);
    assert_eq!(s.get(&format!("{PODS}/elsewhere")).status, 200);
    let node = s.get_json("/api/v1/nodes/n2");
    assert_eq!(node["spec"]["unschedulable"], true);
}

/// Two replicas on one etcd evict two pods at once against a budget with
/// one disruption left: exactly one eviction succeeds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_cannot_both_spend_the_last_disruption() {
    let (_etcd, a, b) = common::two_replicas_on_etcd().await;
    tokio::task::block_in_place(|| {
        a.create_namespace(NS);
        for pod in ["p1", "p2"] {
            running_pod(&a, pod, "n1");
        }
        budget(&a, 1, 2);
        // Both replicas see the pods and the budget before they race.
        common::wait_until(
            std::time::Duration::from_secs(10),
            "replica b to see the budget",
            || {
                (b.get(&format!("{PDBS}/web")).json()["status"]["disruptionsAllowed"] == 1)
                    .then_some(())
            },
        );
        let (first, second) = std::thread::scope(|scope| {
            let one = scope.spawn(|| evict(&a, "p1").status);
            let two = scope.spawn(|| evict(&b, "p2").status);
            (one.join().expect("a"), two.join().expect("b"))
        });
        let mut statuses = [first, second];
        statuses.sort();
        assert_eq!(statuses, [201, 429]);
        let pdb = a.get_json(&format!("{PDBS}/web"));
        assert_eq!(pdb["status"]["disruptionsAllowed"], 0);
        let left: Vec<u16> = ["p1", "p2"]
            .iter()
            .map(|pod| a.get(&format!("{PODS}/{pod}")).status)
            .collect();
        assert_eq!(left.iter().filter(|s| **s == 404).count(), 1, "{left:?}");
    });
}
