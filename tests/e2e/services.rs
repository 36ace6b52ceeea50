//! Service address allocation: ClusterIPs and NodePorts never handed out
//! twice, even by two replicas at once, and released on delete.

use crate::common;
use std::collections::HashSet;
use std::thread;

use crate::common::TestServer;

fn service(name: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Service\nmetadata: {{name: {name}, namespace: default}}\n\
         spec: {{type: NodePort, selector: {{app: {name}}}, ports: [{{port: 80}}]}}\n"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_creates_on_two_replicas_never_share_an_address() {
    let (_etcd, a, b) = common::two_replicas_on_etcd().await;
    let replicas = [a, b];
    thread::scope(|scope| {
        for (r, server) in replicas.iter().enumerate() {
            scope.spawn(move || {
                for i in 0..10 {
                    server.apply(&service(&format!("svc-{r}-{i}")));
                }
            });
        }
    });
    let listed = replicas[0].kubectl_json(&["get", "services", "-n", "default", "-o", "json"]);
    let items: Vec<&serde_json::Value> = listed["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter(|s| {
            s["metadata"]["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("svc-"))
        })
        .collect();
    assert_eq!(items.len(), 20);
    let ips: HashSet<&str> = items
        .iter()
        .filter_map(|s| s["spec"]["clusterIP"].as_str())
        .collect();
    let ports: HashSet<i64> = items
        .iter()
        .filter_map(|s| s["spec"]["ports"][0]["nodePort"].as_i64())
        .collect();
    assert_eq!(ips.len(), 20, "every ClusterIP distinct: {ips:?}");
    assert_eq!(ports.len(), 20, "every NodePort distinct: {ports:?}");
    assert!(ips
        .iter()
        .all(|ip| ip.starts_with("10.0.0.") && *ip != "10.0.0.1"));
    assert!(ports.iter().all(|p| (30000..=32767).contains(p)));

    // Each address is claimed by exactly one IPAddress, naming its Service;
    // the kubernetes Service's too, though both replicas created it.
    let addresses = replicas[1].kubectl_json(&["get", "ipaddresses", "-o", "json"]);
    let claimed: Vec<(String, String)> = addresses["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|a| {
            (
                a["metadata"]["name"].as_str().unwrap_or("").to_string(),
                a["spec"]["parentRef"]["name"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
            )
        })
        .collect();
    assert_eq!(claimed.len(), 21, "{claimed:?}");
    for service in &items {
        let ip = service["spec"]["clusterIP"].as_str().unwrap_or("");
        let name = service["metadata"]["name"].as_str().unwrap_or("");
        assert!(
            claimed.contains(&(ip.to_string(), name.to_string())),
            "{ip} {name}: {claimed:?}"
        );
    }
    assert!(claimed.contains(&("10.0.0.1".to_string(), "kubernetes".to_string())));
    // One default ServiceCIDR and one APF configuration between them.
    let cidrs = replicas[0].kubectl_ok(&["get", "servicecidrs", "-o", "name"]);
    assert_eq!(cidrs.trim(), "servicecidr.networking.k8s.io/kubernetes");
    let schemas = replicas[1].kubectl_ok(&["get", "flowschemas", "-o", "name"]);
    assert_eq!(schemas.lines().count(), 13, "{schemas}");
}

#[test]
fn addresses_are_kept_on_update_and_released_on_delete() {
    let server = TestServer::start();
    let svc = r#"
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {type: NodePort, clusterIP: 10.0.0.50, ports: [{port: 80, nodePort: 30080}]}
"#;
    server.apply(svc);
    let first = server.kubectl_json(&["get", "service", "web", "-o", "json"]);
    assert_eq!(first["spec"]["clusterIP"], "10.0.0.50");
    assert_eq!(first["spec"]["ports"][0]["protocol"], "TCP");
    assert_eq!(first["spec"]["ports"][0]["targetPort"], 80);
    assert_eq!(first["spec"]["sessionAffinity"], "None");

    // The same address cannot be taken twice.
    let out = server.kubectl_stdin(
        &["apply", "-f", "-"],
        &svc.replace("name: web", "name: other"),
    );
    assert!(!out.status.success());
    let taken = common::text(&out.stderr);
    assert!(
        taken.contains("provided IP is already allocated"),
        "{taken}"
    );

    // An update that omits the allocated values keeps them.
    server.kubectl_ok(&["label", "service", "web", "tier=front"]);
    let labeled = server.kubectl_json(&["get", "service", "web", "-o", "json"]);
    assert_eq!(labeled["spec"]["clusterIP"], "10.0.0.50");
    assert_eq!(labeled["spec"]["ports"][0]["nodePort"], 30080);

    // After a delete both can be allocated again.
    server.kubectl_ok(&["delete", "service", "web"]);
    server.apply(svc);
    let again = server.kubectl_json(&["get", "service", "web", "-o", "json"]);
    assert_eq!(again["spec"]["clusterIP"], "10.0.0.50");
    assert_eq!(again["spec"]["ports"][0]["nodePort"], 30080);
}

#[test]
fn the_kubernetes_service_points_at_the_server() {
    let server = TestServer::start();
    let service = server.kubectl_json(&["get", "service", "kubernetes", "-n", "default"]);
    assert_eq!(service["spec"]["clusterIP"], "10.0.0.1");
    assert_eq!(service["spec"]["ports"][0]["port"], 443);
    let port = serde_json::json!(server.port());
    assert_eq!(service["spec"]["ports"][0]["targetPort"], port);

    let endpoints = server.kubectl_json(&["get", "endpoints", "kubernetes", "-n", "default"]);
    assert_eq!(endpoints["subsets"][0]["addresses"][0]["ip"], "127.0.0.1");
    assert_eq!(endpoints["subsets"][0]["ports"][0]["port"], port);

    let slice = server.kubectl_json(&["get", "endpointslice", "kubernetes", "-n", "default"]);
    assert_eq!(slice["addressType"], "IPv4");
    assert_eq!(
        slice["metadata"]["labels"]["kubernetes.io/service-name"],
        "kubernetes"
    );
    assert_eq!(slice["endpoints"][0]["addresses"][0], "127.0.0.1");
    assert_eq!(slice["endpoints"][0]["conditions"]["ready"], true);
    assert_eq!(slice["ports"][0]["port"], port);
    assert_eq!(slice["ports"][0]["name"], "https");
}

/// A Service whose addresses the ranges do not hold (the ranges restored
/// from an older backup, or written by a replica that died mid-create) is
/// found by the repair pass at start, so its addresses are not handed out
/// a second time.
#[test]
fn addresses_missing_from_the_ranges_are_repaired_at_start() {
    let mut server = TestServer::start();
    server.apply(
        "apiVersion: v1\nkind: Service\nmetadata: {name: kept, namespace: default}\n\
         spec: {type: NodePort, clusterIP: 10.0.0.50, ports: [{port: 80, nodePort: 30050}]}\n",
    );
    server.stop();
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        use capstan_core::storage::Storage;
        let store =
            capstan_core::storage::embedded::EmbeddedStore::open(&server.dir().join("store"))
                .expect("the stopped server's store");
        for range in ["serviceips", "servicenodeports"] {
            store
                .delete(&format!("/registry/ranges/{range}"), None)
                .await
                .expect("forget the range");
        }
    });
    server.start_again();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !server
        .server_log()
        .contains("in use by Services but not allocated; repaired")
    {
        assert!(
            std::time::Instant::now() < deadline,
            "{}",
            server.server_log()
        );
        thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(
        server
            .server_log()
            .contains("values=\"10.0.0.1,10.0.0.50,30050\""),
        "{}",
        server.server_log()
    );

    let same_ip = server.kubectl_err(&[
        "create",
        "service",
        "clusterip",
        "copy",
        "--tcp=80",
        "--clusterip=10.0.0.50",
    ]);
    assert!(
        same_ip.contains("provided IP is already allocated"),
        "{same_ip}"
    );
    let same_port = server.kubectl_err(&[
        "create",
        "service",
        "nodeport",
        "copy",
        "--tcp=80",
        "--node-port=30050",
    ]);
    assert!(
        same_port.contains("provided port is already allocated"),
        "{same_port}"
    );
}
