use serde_json::json;

use super::*;

fn now() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2024-06-01T12:00:00Z")
        .map(|t| t.with_timezone(&Utc))
        .expect("valid test timestamp")
}

/// An RFC 3339 timestamp `secs` seconds before `now()`.
fn ago(secs: i64) -> String {
    (now() - TimeDelta::seconds(secs)).to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// The kind served as `group`'s `resource`, at its preferred version.
fn kind_of(group: &str, resource: &str) -> std::sync::Arc<dyn crate::kinds::Kind> {
    crate::kinds::builtin_resources()
        .into_iter()
        .find(|r| r.group == group && r.resource == resource)
        .map(|r| r.kind_impl)
        .unwrap_or_else(|| std::sync::Arc::new(NoPrinter))
}

/// A kind that prints nothing of its own, as every custom resource
/// without printer columns.
struct NoPrinter;
impl crate::kinds::Kind for NoPrinter {}

fn cells(group: &str, resource: &str, obj: Value) -> Vec<Value> {
    cells_at(&kind_of(group, resource).table_cells(&obj), now())
}

fn table_columns(group: &str, resource: &str) -> Vec<TableColumn> {
    kind_of(group, resource).table_columns()
}

/// The cell under the column called `column`.
fn cell(group: &str, resource: &str, obj: Value, column: &str) -> Value {
    let idx = table_columns(group, resource)
        .iter()
        .position(|c| c.name == column)
        .expect("column exists");
    cells(group, resource, obj).swap_remove(idx)
}

fn dur(secs: i64) -> String {
    human_duration(TimeDelta::seconds(secs))
}

#[test]
fn human_duration_boundaries() {
    assert_eq!(dur(-5), "<invalid>");
    assert_eq!(dur(-2), "<invalid>");
    assert_eq!(human_duration(TimeDelta::milliseconds(-1500)), "0s");
    assert_eq!(dur(-1), "0s");
    assert_eq!(dur(0), "0s");
    assert_eq!(dur(5), "5s");
    assert_eq!(dur(119), "119s");
    assert_eq!(dur(120), "2m");
    assert_eq!(dur(200), "3m20s");
    assert_eq!(dur(599), "9m59s");
    assert_eq!(dur(600), "10m");
    assert_eq!(dur(179 * 60 + 59), "179m");
    assert_eq!(dur(3 * 3600), "3h");
    assert_eq!(dur(3 * 3600 + 5 * 60), "3h5m");
    assert_eq!(dur(8 * 3600 - 1), "7h59m");
    assert_eq!(dur(8 * 3600), "8h");
    assert_eq!(dur(47 * 3600 + 3599), "47h");
    assert_eq!(dur(48 * 3600), "2d");
    assert_eq!(dur(51 * 3600), "2d3h");
    assert_eq!(dur(8 * 86400 - 1), "7d23h");
    assert_eq!(dur(8 * 86400), "8d");
    assert_eq!(dur(45 * 86400), "45d");
    assert_eq!(dur(2 * 365 * 86400 - 1), "729d");
    assert_eq!(dur(2 * 365 * 86400), "2y");
    assert_eq!(dur((3 * 365 + 2) * 86400), "3y2d");
    assert_eq!(dur(8 * 365 * 86400), "8y");
    assert_eq!(dur((9 * 365 + 100) * 86400), "9y");
}

#[test]
fn pod_running_ready() {
    let pod = json!({
        "metadata": {"name": "web", "creationTimestamp": ago(200)},
        "spec": {"nodeName": "n1", "containers": [{"name": "a"}, {"name": "b"}]},
        "status": {
            "phase": "Running",
            "podIP": "10.0.0.5",
            "conditions": [{"type": "Ready", "status": "True"}],
            "containerStatuses": [
                {"name": "a", "ready": true, "restartCount": 0, "state": {"running": {}}},
                {"name": "b", "ready": true, "restartCount": 0, "state": {"running": {}}}
            ]
        }
    });
    assert_eq!(
        cells("", "pods", pod),
        vec![
            json!("web"),
            json!("2/2"),
            json!("Running"),
            json!("0"),
            json!("3m20s"),
            json!("10.0.0.5"),
            json!("n1"),
            json!("<none>"),
            json!("<none>"),
        ]
    );
}

#[test]
fn pod_pending_and_container_creating() {
    let bare = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a"}]}});
    assert_eq!(cell("", "pods", bare.clone(), "Status"), json!("Pending"));
    assert_eq!(cell("", "pods", bare.clone(), "Ready"), json!("0/1"));
    assert_eq!(cell("", "pods", bare, "Age"), json!("<unknown>"));

    let creating = json!({
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "a"}]},
        "status": {"phase": "Pending", "containerStatuses": [
            {"name": "a", "ready": false, "restartCount": 0,
             "state": {"waiting": {"reason": "ContainerCreating"}}}
        ]}
    });
    assert_eq!(
        cell("", "pods", creating, "Status"),
        json!("ContainerCreating")
    );
}

#[test]
fn pod_completed_crashloop_and_restarts() {
    let completed = json!({
        "metadata": {"name": "job-x"},
        "spec": {"containers": [{"name": "a"}]},
        "status": {"phase": "Succeeded", "containerStatuses": [
            {"name": "a", "restartCount": 0,
             "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}
        ]}
    });
    assert_eq!(cell("", "pods", completed, "Status"), json!("Completed"));

    let crashing = json!({
        "metadata": {"name": "bad"},
        "spec": {"containers": [{"name": "a"}]},
        "status": {"phase": "Running", "containerStatuses": [
            {"name": "a", "ready": false, "restartCount": 4,
             "state": {"waiting": {"reason": "CrashLoopBackOff"}},
             "lastState": {"terminated": {"exitCode": 1, "finishedAt": ago(300)}}}
        ]}
    });
    let row = cells("", "pods", crashing);
    assert_eq!(row[1], json!("0/1"));
    assert_eq!(row[2], json!("CrashLoopBackOff"));
    assert_eq!(row[3], json!("4 (5m ago)"));

    let no_reason = json!({
        "metadata": {"name": "sig"},
        "spec": {"containers": [{"name": "a"}]},
        "status": {"phase": "Failed", "containerStatuses": [
            {"name": "a", "state": {"terminated": {"exitCode": 137, "signal": 9}}}
        ]}
    });
    assert_eq!(cell("", "pods", no_reason, "Status"), json!("Signal:9"));
}

#[test]
fn pod_terminating_and_node_lost() {
    let mut pod = json!({
        "metadata": {"name": "p", "deletionTimestamp": ago(1)},
        "spec": {"containers": [{"name": "a"}]},
        "status": {"phase": "Running", "containerStatuses": [
            {"name": "a", "ready": true, "state": {"running": {}}}
        ]}
    });
    assert_eq!(
        cell("", "pods", pod.clone(), "Status"),
        json!("Terminating")
    );
    pod["status"]["reason"] = json!("NodeLost");
    assert_eq!(cell("", "pods", pod.clone(), "Status"), json!("Unknown"));
    pod["status"]["reason"] = Value::Null;
    pod["status"]["phase"] = json!("Succeeded");
    pod["status"]["containerStatuses"] = json!([
        {"name": "a", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}
    ]);
    assert_eq!(cell("", "pods", pod, "Status"), json!("Completed"));
}

#[test]
fn pod_init_containers_and_sidecars() {
    let init = json!({
        "metadata": {"name": "p"},
        "spec": {"initContainers": [{"name": "i1"}, {"name": "i2"}],
                 "containers": [{"name": "a"}]},
        "status": {"phase": "Pending", "initContainerStatuses": [
            {"name": "i1", "state": {"terminated": {"exitCode": 0}}},
            {"name": "i2", "state": {"running": {}}}
        ]}
    });
    assert_eq!(cell("", "pods", init, "Status"), json!("Init:1/2"));

    let init_failed = json!({
        "metadata": {"name": "p"},
        "spec": {"initContainers": [{"name": "i1"}], "containers": [{"name": "a"}]},
        "status": {"phase": "Pending", "initContainerStatuses": [
            {"name": "i1", "restartCount": 2,
             "state": {"waiting": {"reason": "CrashLoopBackOff"}}}
        ]}
    });
    let row = cells("", "pods", init_failed);
    assert_eq!(row[2], json!("Init:CrashLoopBackOff"));
    assert_eq!(row[3], json!("2"));

    let sidecar = json!({
        "metadata": {"name": "p"},
        "spec": {"initContainers": [{"name": "proxy", "restartPolicy": "Always"}],
                 "containers": [{"name": "a"}]},
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Initialized", "status": "True"},
                           {"type": "Ready", "status": "True"}],
            "initContainerStatuses": [
                {"name": "proxy", "started": true, "ready": true, "restartCount": 1,
                 "state": {"running": {}}}
            ],
            "containerStatuses": [
                {"name": "a", "ready": true, "restartCount": 0, "state": {"running": {}}}
            ]
        }
    });
    let row = cells("", "pods", sidecar);
    assert_eq!(row[1], json!("2/2"));
    assert_eq!(row[2], json!("Running"));
    assert_eq!(row[3], json!("1"));
}

#[test]
fn pod_wide_columns() {
    let pod = json!({
        "metadata": {"name": "p"},
        "spec": {"containers": [], "readinessGates": [
            {"conditionType": "www.example.com/gate-1"},
            {"conditionType": "www.example.com/gate-2"}
        ]},
        "status": {
            "podIPs": [{"ip": "fd00::1"}, {"ip": "10.0.0.1"}],
            "nominatedNodeName": "n2",
            "conditions": [{"type": "www.example.com/gate-1", "status": "True"}]
        }
    });
    let row = cells("", "pods", pod);
    assert_eq!(row[5], json!("fd00::1"));
    assert_eq!(row[6], json!("<none>"));
    assert_eq!(row[7], json!("n2"));
    assert_eq!(row[8], json!("1/2"));
}

#[test]
fn service_ports_and_external_ip() {
    let svc = json!({
        "metadata": {"name": "web", "creationTimestamp": ago(45 * 86400)},
        "spec": {
            "type": "NodePort",
            "clusterIP": "10.96.0.10",
            "clusterIPs": ["10.96.0.10"],
            "selector": {"app": "web", "tier": "fe"},
            "ports": [
                {"port": 80, "nodePort": 30080, "protocol": "TCP"},
                {"port": 53, "protocol": "UDP"},
                {"port": 8080}
            ]
        }
    });
    assert_eq!(
        cells("", "services", svc),
        vec![
            json!("web"),
            json!("NodePort"),
            json!("10.96.0.10"),
            json!("<none>"),
            json!("80:30080/TCP,53/UDP,8080/TCP"),
            json!("45d"),
            json!("app=web,tier=fe"),
        ]
    );

    let bare = json!({"metadata": {"name": "x"}});
    let row = cells("", "services", bare);
    assert_eq!(row[1], json!("ClusterIP"));
    assert_eq!(row[2], json!("<none>"));
    assert_eq!(row[3], json!("<none>"));
    assert_eq!(row[4], json!("<none>"));
    assert_eq!(row[6], json!("<none>"));

    let external = json!({"metadata": {"name": "x"},
        "spec": {"type": "ClusterIP", "externalIPs": ["1.2.3.4", "5.6.7.8"]}});
    assert_eq!(
        cell("", "services", external, "External-IP"),
        json!("1.2.3.4,5.6.7.8")
    );

    let pending = json!({"metadata": {"name": "x"}, "spec": {"type": "LoadBalancer"}});
    assert_eq!(
        cell("", "services", pending, "External-IP"),
        json!("<pending>")
    );

    let lb = json!({"metadata": {"name": "x"},
    "spec": {"type": "LoadBalancer", "externalIPs": ["9.9.9.9"]},
    "status": {"loadBalancer": {"ingress": [
        {"ip": "203.0.113.7"}, {"hostname": "a-very-long-lb.example.com"}, {"ip": "203.0.113.7"}
    ]}}});
    assert_eq!(
        cell("", "services", lb, "External-IP"),
        json!("203.0.113.7,a-very-long-lb.example.com,9.9.9.9")
    );

    let ext_name = json!({"metadata": {"name": "x"},
        "spec": {"type": "ExternalName", "externalName": "db.example.com"}});
    assert_eq!(
        cell("", "services", ext_name, "External-IP"),
        json!("db.example.com")
    );
}

#[test]
fn deployment_ready_ratio() {
    let d = json!({
        "metadata": {"name": "api", "creationTimestamp": ago(90)},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "api"},
                         "matchExpressions": [{"key": "env", "operator": "In", "values": ["prod", "canary"]}]},
            "template": {"spec": {"containers": [
                {"name": "api", "image": "api:1"}, {"name": "log", "image": "fluent:2"}
            ]}}
        },
        "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}
    });
    assert_eq!(
        cells("apps", "deployments", d),
        vec![
            json!("api"),
            json!("2/3"),
            json!(3),
            json!(2),
            json!("90s"),
            json!("api,log"),
            json!("api:1,fluent:2"),
            json!("app=api,env in (canary,prod)"),
        ]
    );
    let bare = json!({"metadata": {"name": "d"}});
    let row = cells("apps", "deployments", bare);
    assert_eq!(row[1], json!("0/1"));
    assert_eq!(row[7], json!(""));
    let invalid = json!({"metadata": {"name": "d"},
        "spec": {"selector": {"matchExpressions": [{"key": "k", "operator": "Bogus"}]}}});
    assert_eq!(
        cell("apps", "deployments", invalid, "Selector"),
        json!("<invalid>")
    );
}

#[test]
fn configmap_and_secret() {
    let cm = json!({"metadata": {"name": "cfg"},
        "data": {"a": "1", "b": "2"}, "binaryData": {"c": "AA=="}});
    assert_eq!(cell("", "configmaps", cm, "Data"), json!(3));
    assert_eq!(
        cell("", "configmaps", json!({"metadata": {"name": "e"}}), "Data"),
        json!(0)
    );

    let secret = json!({"metadata": {"name": "tls", "creationTimestamp": ago(5)},
        "type": "kubernetes.io/tls", "data": {"tls.crt": "", "tls.key": ""}});
    assert_eq!(
        cells("", "secrets", secret),
        vec![
            json!("tls"),
            json!("kubernetes.io/tls"),
            json!(2),
            json!("5s")
        ]
    );
    let bare = json!({"metadata": {"name": "s"}});
    assert_eq!(cell("", "secrets", bare, "Type"), json!("Opaque"));
}

#[test]
fn namespace_status() {
    let ns = json!({"metadata": {"name": "dev"}, "status": {"phase": "Terminating"}});
    assert_eq!(
        cells("", "namespaces", ns),
        vec![json!("dev"), json!("Terminating"), json!("<unknown>")]
    );
    let active = json!({"metadata": {"name": "default"}, "status": {"phase": "Active"}});
    assert_eq!(cell("", "namespaces", active, "Status"), json!("Active"));
}

#[test]
fn default_columns_for_unknown_resource() {
    let cols = table_columns("example.com", "widgets");
    let names: Vec<&str> = cols.iter().map(|c| c.name.as_ref()).collect();
    assert_eq!(names, vec!["Name", "Created At"]);
    assert_eq!(cols[0].format, "name");
    assert_eq!(cols[1].type_, "date");
    let obj = json!({"metadata": {"name": "w", "creationTimestamp": "2024-01-02T03:04:05Z"}});
    assert_eq!(
        cells("example.com", "widgets", obj),
        vec![json!("w"), json!("2024-01-02T03:04:05Z")]
    );
    assert_eq!(
        cells("example.com", "widgets", json!({})),
        vec![json!(""), json!("0001-01-01T00:00:00Z")]
    );
    // Resources upstream also leaves to the default convertor.
    for (g, r) in [
        ("", "limitranges"),
        ("rbac.authorization.k8s.io", "roles"),
        ("rbac.authorization.k8s.io", "clusterroles"),
    ] {
        assert_eq!(table_columns(g, r).len(), 2, "{g}/{r}");
    }
}

#[test]
fn column_serialization() {
    let col = &table_columns("", "pods")[5];
    let v = serde_json::to_value(col).expect("serializes");
    assert_eq!(v["name"], json!("IP"));
    assert_eq!(v["type"], json!("string"));
    assert_eq!(v["format"], json!(""));
    assert_eq!(v["priority"], json!(1));
    assert!(v["description"].as_str().is_some_and(|d| !d.is_empty()));
}

#[test]
fn endpoints_nodes_events() {
    let ep = json!({"metadata": {"name": "web"}, "subsets": [
        {"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}, {"ip": "fd00::3"}],
         "ports": [{"port": 80}, {"port": 443}]}
    ]});
    assert_eq!(
        cell("", "endpoints", ep, "Endpoints"),
        json!("10.0.0.1:80,10.0.0.2:80,[fd00::3]:80 + 3 more...")
    );
    assert_eq!(
        cell(
            "",
            "endpoints",
            json!({"metadata": {"name": "e"}}),
            "Endpoints"
        ),
        json!("<none>")
    );

    let node = json!({
        "metadata": {"name": "n1", "labels": {
            "node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "infra"}},
        "spec": {"unschedulable": true},
        "status": {
            "conditions": [{"type": "Ready", "status": "False"}],
            "addresses": [{"type": "InternalIP", "address": "192.168.1.10"}],
            "nodeInfo": {"kubeletVersion": "v1.33.0", "osImage": "Debian"}
        }
    });
    assert_eq!(
        cells("", "nodes", node),
        vec![
            json!("n1"),
            json!("NotReady,SchedulingDisabled"),
            json!("control-plane,infra"),
            json!("<unknown>"),
            json!("v1.33.0"),
            json!("192.168.1.10"),
            json!("<none>"),
            json!("Debian"),
            json!("<unknown>"),
            json!("<unknown>"),
        ]
    );

    let ev = json!({
        "metadata": {"name": "web.17a"},
        "involvedObject": {"kind": "Pod", "name": "web", "fieldPath": "spec.containers{a}"},
        "reason": "Pulled", "type": "Normal", "message": " pulled image \n",
        "source": {"component": "kubelet", "host": "n1"},
        "firstTimestamp": ago(600), "lastTimestamp": ago(30), "count": 4
    });
    assert_eq!(
        cells("", "events", ev),
        vec![
            json!("30s"),
            json!("Normal"),
            json!("Pulled"),
            json!("pod/web"),
            json!("spec.containers{a}"),
            json!("kubelet, n1"),
            json!("pulled image"),
            json!("10m"),
            json!(4),
            json!("web.17a"),
        ]
    );
    let new_api = json!({
        "metadata": {"name": "e"}, "regarding": {"kind": "Node", "name": "n1"},
        "note": "hi", "eventTime": "2024-06-01T11:59:00.000000Z",
        "reportingController": "ctrl", "type": "Warning", "reason": "R"
    });
    let row = cells("events.k8s.io", "events", new_api);
    assert_eq!(row[0], json!("60s"));
    assert_eq!(row[3], json!("node/n1"));
    assert_eq!(row[5], json!("ctrl"));
    assert_eq!(row[6], json!("hi"));
    assert_eq!(row[8], json!(1));
}

#[test]
fn workloads_and_batch() {
    let job = json!({
        "metadata": {"name": "j"},
        "spec": {"completions": 3, "parallelism": 2},
        "status": {"succeeded": 3, "startTime": ago(100), "completionTime": ago(40),
                   "conditions": [{"type": "Complete", "status": "True"}]}
    });
    let row = cells("batch", "jobs", job);
    assert_eq!(row[1..4], [json!("Complete"), json!("3/3"), json!("60s")]);
    let running = json!({"metadata": {"name": "j"}, "spec": {"parallelism": 4},
        "status": {"startTime": ago(10)}});
    let row = cells("batch", "jobs", running);
    assert_eq!(
        row[1..4],
        [json!("Running"), json!("0/1 of 4"), json!("10s")]
    );

    let cj = json!({"metadata": {"name": "c"},
        "spec": {"schedule": "*/5 * * * *", "suspend": true},
        "status": {"active": [{"name": "c-1"}], "lastScheduleTime": ago(120)}});
    let row = cells("batch", "cronjobs", cj);
    assert_eq!(
        row[1..6],
        [
            json!("*/5 * * * *"),
            json!("<none>"),
            json!("True"),
            json!(1),
            json!("2m")
        ]
    );

    let sts = json!({"metadata": {"name": "db"}, "spec": {"replicas": 3},
        "status": {"readyReplicas": 1}});
    assert_eq!(cell("apps", "statefulsets", sts, "Ready"), json!("1/3"));

    let ds = json!({"metadata": {"name": "ds"}, "spec": {
        "selector": {"matchLabels": {"app": "ds"}},
        "template": {"spec": {"nodeSelector": {"kubernetes.io/os": "linux"}}}},
        "status": {"desiredNumberScheduled": 2, "numberReady": 1}});
    let row = cells("apps", "daemonsets", ds);
    assert_eq!(row[1], json!(2));
    assert_eq!(row[3], json!(1));
    assert_eq!(row[6], json!("kubernetes.io/os=linux"));
    assert_eq!(row[10], json!("app=ds"));

    let rs = json!({"metadata": {"name": "rs"}});
    let row = cells("apps", "replicasets", rs);
    assert_eq!(row[1], json!(1));
    assert_eq!(row[7], json!("<none>"));

    let cr = json!({"metadata": {"name": "web-6d4", "ownerReferences": [
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "controller": true}]},
        "revision": 2});
    assert_eq!(
        cells("apps", "controllerrevisions", cr)[1..3],
        [json!("statefulset.apps/web"), json!(2)]
    );
}

#[test]
fn storage_and_quota() {
    let pv = json!({"metadata": {"name": "pv1"}, "spec": {
        "capacity": {"storage": "10Gi"},
        "accessModes": ["ReadWriteMany", "ReadWriteOnce", "ReadWriteOnce"],
        "claimRef": {"namespace": "ns", "name": "data"},
        "storageClassName": "fast"},
        "status": {"phase": "Bound"}});
    let row = cells("", "persistentvolumes", pv);
    assert_eq!(
        row[1..9],
        [
            json!("10Gi"),
            json!("RWO,RWX"),
            json!("Retain"),
            json!("Bound"),
            json!("ns/data"),
            json!("fast"),
            json!("<unset>"),
            json!("")
        ]
    );

    let pvc = json!({"metadata": {"name": "data"}, "spec": {"storageClassName": "fast"}});
    let row = cells("", "persistentvolumeclaims", pvc);
    assert_eq!(
        row[1..7],
        [
            json!("Pending"),
            json!(""),
            json!(""),
            json!(""),
            json!("fast"),
            json!("<unset>")
        ]
    );

    let rq = json!({"metadata": {"name": "q"}, "status": {
        "hard": {"pods": "10", "limits.cpu": "4", "requests.cpu": "2"},
        "used": {"pods": "3", "requests.cpu": "500m"}}});
    let row = cells("", "resourcequotas", rq);
    assert_eq!(row[1], json!("pods: 3/10, requests.cpu: 500m/2"));
    assert_eq!(row[2], json!("limits.cpu: 0/4"));

    let sa = json!({"metadata": {"name": "default"}, "secrets": [{"name": "t"}]});
    assert_eq!(cell("", "serviceaccounts", sa, "Secrets"), json!(1));
}

#[test]
fn hpa_ingress_rbac() {
    let hpa = json!({"metadata": {"name": "h"}, "spec": {
        "scaleTargetRef": {"kind": "Deployment", "name": "api"},
        "minReplicas": 2, "maxReplicas": 10,
        "metrics": [{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 80}}}]},
        "status": {"currentReplicas": 3, "currentMetrics": [{"type": "Resource",
            "resource": {"name": "cpu", "current": {"averageUtilization": 45}}}]}});
    let row = cells("autoscaling", "horizontalpodautoscalers", hpa);
    assert_eq!(
        row[1..6],
        [
            json!("Deployment/api"),
            json!("cpu: 45%/80%"),
            json!("2"),
            json!(10),
            json!(3)
        ]
    );
    let v1 = json!({"metadata": {"name": "h"}, "spec": {
        "scaleTargetRef": {"kind": "Deployment", "name": "api"},
        "maxReplicas": 5, "targetCPUUtilizationPercentage": 50}});
    let row = cells("autoscaling", "horizontalpodautoscalers", v1);
    assert_eq!(row[2..4], [json!("cpu: <unknown>/50%"), json!("<unset>")]);

    let ing = json!({"metadata": {"name": "i"}, "spec": {
        "ingressClassName": "nginx",
        "rules": [{"host": "a.example.com"}, {"host": "b.example.com"}],
        "tls": [{"hosts": ["a.example.com"]}]},
        "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}});
    let row = cells("networking.k8s.io", "ingresses", ing);
    assert_eq!(
        row[1..5],
        [
            json!("nginx"),
            json!("a.example.com,b.example.com"),
            json!("1.2.3.4"),
            json!("80, 443")
        ]
    );

    let rb = json!({"metadata": {"name": "rb"},
        "roleRef": {"kind": "ClusterRole", "name": "view"},
        "subjects": [{"kind": "User", "name": "alice"}, {"kind": "Group", "name": "devs"},
                     {"kind": "ServiceAccount", "namespace": "ci", "name": "bot"},
                     {"kind": "User", "name": "bob"}]});
    let row = cells("rbac.authorization.k8s.io", "rolebindings", rb);
    assert_eq!(row[1], json!("ClusterRole/view"));
    assert_eq!(
        row[3..6],
        [json!("alice, bob"), json!("devs"), json!("ci/bot")]
    );
}

/// Every printer, fed an empty object, a bare one, and a kitchen-sink one,
/// yields exactly one cell per column and never panics.
#[test]
fn every_row_matches_its_columns() {
    let resources: &[(&str, &str)] = &[
        ("", "pods"),
        ("", "podtemplates"),
        ("", "replicationcontrollers"),
        ("", "services"),
        ("", "endpoints"),
        ("", "nodes"),
        ("", "events"),
        ("events.k8s.io", "events"),
        ("", "namespaces"),
        ("", "secrets"),
        ("", "serviceaccounts"),
        ("", "configmaps"),
        ("", "persistentvolumes"),
        ("", "persistentvolumeclaims"),
        ("", "limitranges"),
        ("", "resourcequotas"),
        ("", "componentstatuses"),
        ("apps", "deployments"),
        ("apps", "replicasets"),
        ("apps", "statefulsets"),
        ("apps", "daemonsets"),
        ("apps", "controllerrevisions"),
        ("batch", "jobs"),
        ("batch", "cronjobs"),
        ("autoscaling", "horizontalpodautoscalers"),
        ("networking.k8s.io", "ingresses"),
        ("networking.k8s.io", "ingressclasses"),
        ("networking.k8s.io", "networkpolicies"),
        ("rbac.authorization.k8s.io", "roles"),
        ("rbac.authorization.k8s.io", "clusterroles"),
        ("rbac.authorization.k8s.io", "rolebindings"),
        ("rbac.authorization.k8s.io", "clusterrolebindings"),
        ("policy", "poddisruptionbudgets"),
        ("storage.k8s.io", "storageclasses"),
        ("storage.k8s.io", "csidrivers"),
        ("storage.k8s.io", "csinodes"),
        ("storage.k8s.io", "volumeattachments"),
        ("coordination.k8s.io", "leases"),
        ("scheduling.k8s.io", "priorityclasses"),
        ("node.k8s.io", "runtimeclasses"),
        ("discovery.k8s.io", "endpointslices"),
        (
            "admissionregistration.k8s.io",
            "mutatingwebhookconfigurations",
        ),
        (
            "admissionregistration.k8s.io",
            "validatingwebhookconfigurations",
        ),
        ("certificates.k8s.io", "certificatesigningrequests"),
        ("example.com", "widgets"),
    ];
    // Wrong types everywhere must degrade, not panic.
    let garbage = json!({
        "metadata": {"name": 7, "creationTimestamp": "yesterday", "labels": [1],
                     "ownerReferences": {"x": 1}, "deletionTimestamp": "x"},
        "spec": {"containers": "nope", "ports": [null, 3], "replicas": "3",
                 "selector": {"matchExpressions": [null]}, "metrics": [{"type": "Pods"}],
                 "rules": [1, 2, 3, 4, 5]},
        "status": {"containerStatuses": [{"state": {"terminated": 1}}],
                   "conditions": "x", "hard": {"cpu": 1}},
        "subsets": [{"addresses": [1], "ports": [{}]}],
        "endpoints": [{"addresses": ["a", "b", "c", "d"]}],
        "ports": [{"name": "http"}, {}, {"port": 1}, {"port": 2}]
    });
    let objects = [
        json!({}),
        json!(null),
        json!({"metadata": {"name": "x", "creationTimestamp": ago(10)}}),
        garbage,
    ];
    for (g, r) in resources {
        let cols = table_columns(g, r);
        assert!(!cols.is_empty(), "{g}/{r}");
        assert_eq!(
            cols.iter()
                .filter(|c| c.format == "name" && c.name == "Name")
                .count(),
            1,
            "{g}/{r}"
        );
        for obj in &objects {
            let row = cells(g, r, obj.clone());
            assert_eq!(row.len(), cols.len(), "{g}/{r} with {obj}");
        }
    }
}
