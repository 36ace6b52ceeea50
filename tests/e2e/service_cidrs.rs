//! networking.k8s.io/v1 ServiceCIDR and IPAddress as kube-apiserver 1.33
//! serves them: the `kubernetes` ServiceCIDR for the flag's range, one
//! IPAddress per allocated ClusterIP (whose create is the claim), the
//! finalizer that keeps a range while addresses depend on it, repair of a
//! missing IPAddress at start, and upstream's validation messages. Driven
//! with kubectl and curl against the real binary.

use std::time::Duration;

use crate::common::{self, TestServer};
use serde_json::{json, Value};

const CIDRS: &str = "/apis/networking.k8s.io/v1/servicecidrs";
const ADDRESSES: &str = "/apis/networking.k8s.io/v1/ipaddresses";

fn rows(out: &str) -> Vec<Vec<String>> {
    out.lines()
        .map(|line| line.split_whitespace().map(str::to_string).collect())
        .collect()
}

fn cluster_ip(s: &TestServer, name: &str) -> String {
    let svc = s.get_json(&format!("/api/v1/namespaces/default/services/{name}"));
    svc["spec"]["clusterIP"].as_str().unwrap().to_string()
}

#[test]
fn every_cluster_ip_is_an_ip_address_of_the_default_range() {
    let s = TestServer::start();
    let cidrs = common::wait_until(
        Duration::from_secs(10),
        "the default ServiceCIDR ready",
        || {
            let cidr = s.get(&format!("{CIDRS}/kubernetes"));
            (cidr.status == 200 && cidr.json()["status"]["conditions"][0]["status"] == "True")
                .then(|| cidr.json())
        },
    );
    assert_eq!(cidrs["spec"]["cidrs"], json!(["10.0.0.0/24"]));
    assert_eq!(
        cidrs["metadata"]["finalizers"],
        json!(["networking.k8s.io/service-cidr-finalizer"])
    );
    assert_eq!(cidrs["status"]["conditions"][0]["type"], "Ready");
    let table = rows(&s.kubectl_ok(&["get", "servicecidrs"]));
    assert_eq!(table[0], ["NAME", "CIDRS", "AGE"]);
    assert_eq!(table[1][..2], ["kubernetes", "10.0.0.0/24"]);

    // The kubernetes Service's address, then a new Service's.
    s.kubectl_ok(&["create", "service", "clusterip", "web", "--tcp=80"]);
    let web_ip = cluster_ip(&s, "web");
    let table = rows(&s.kubectl_ok(&["get", "ip"]));
    assert_eq!(table[0], ["NAME", "PARENTREF"]);
    assert!(
        table.contains(&vec![
            "10.0.0.1".to_string(),
            "services/default/kubernetes".to_string()
        ]),
        "{table:?}"
    );
    assert!(
        table.contains(&vec![web_ip.clone(), "services/default/web".to_string()]),
        "{table:?}"
    );
    let address = s.get_json(&format!("{ADDRESSES}/{web_ip}"));
    assert_eq!(
        address["metadata"]["labels"],
        json!({"ipaddress.kubernetes.io/ip-family": "IPv4", "ipaddress.kubernetes.io/managed-by": "ipallocator.k8s.io"})
    );
    assert_eq!(
        address["spec"],
        json!({"parentRef": {"resource": "services", "namespace": "default", "name": "web"}})
    );

    // An address someone's IPAddress names is taken.
    s.apply("apiVersion: networking.k8s.io/v1\nkind: IPAddress\nmetadata:\n  name: 10.0.0.50\nspec:\n  parentRef: {resource: gateways, group: gateway.networking.k8s.io, namespace: default, name: gw}\n");
    let err = s.kubectl_err(&[
        "create",
        "service",
        "clusterip",
        "want50",
        "--tcp=80",
        "--clusterip=10.0.0.50",
    ]);
    assert!(
        err.contains(r#"Service "want50" is invalid: spec.clusterIPs: Invalid value: []string{"10.0.0.50"}: failed to allocate IP 10.0.0.50: provided IP is already allocated"#),
        "{err}"
    );
    let table = rows(&s.kubectl_ok(&["get", "ip", "10.0.0.50"]));
    assert_eq!(
        table[1],
        ["10.0.0.50", "gateways.gateway.networking.k8s.io/default/gw"]
    );

    // Deleting the Service gives its address back.
    s.kubectl_ok(&["delete", "service", "web"]);
    assert_eq!(s.get(&format!("{ADDRESSES}/{web_ip}")).status, 404);
}

#[test]
fn a_range_stays_while_an_address_depends_on_it_alone() {
    let s = TestServer::start_with(&["--service-cluster-ip-range", "10.20.0.0/24"]);
    s.apply("apiVersion: networking.k8s.io/v1\nkind: ServiceCIDR\nmetadata:\n  name: spare\nspec:\n  cidrs: [10.30.0.0/24]\n");
    common::wait_until(Duration::from_secs(10), "the finalizer on spare", || {
        let cidr = s.get_json(&format!("{CIDRS}/spare"));
        (cidr["metadata"]["finalizers"] == json!(["networking.k8s.io/service-cidr-finalizer"])
            && cidr["status"]["conditions"][0]["message"] == "Kubernetes Service CIDR is ready")
            .then_some(())
    });
    // The default range holds the kubernetes Service's address.
    s.kubectl_ok(&["delete", "servicecidr", "kubernetes", "--wait=false"]);
    let condition = common::wait_until(Duration::from_secs(10), "kubernetes terminating", || {
        let cidr = s.get_json(&format!("{CIDRS}/kubernetes"));
        let condition = cidr["status"]["conditions"][0].clone();
        (condition["reason"] == "Terminating").then_some(condition)
    });
    assert_eq!(condition["status"], "False");
    assert_eq!(
        condition["message"],
        "There are still IPAddresses referencing the ServiceCIDR, please remove them or create a new ServiceCIDR"
    );
    // A range nothing depends on goes, once its grace period is over.
    let started = std::time::Instant::now();
    s.kubectl_ok(&["delete", "servicecidr", "spare", "--timeout=30s"]);
    assert!(
        started.elapsed() >= Duration::from_secs(9),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(s.get(&format!("{CIDRS}/spare")).status, 404);
}

#[test]
fn a_missing_ip_address_is_repaired_at_start() {
    let mut s = TestServer::start();
    s.kubectl_ok(&["create", "service", "clusterip", "web", "--tcp=80"]);
    let ip = cluster_ip(&s, "web");
    s.kubectl_ok(&["delete", "ipaddress", &ip]);
    s.restart();
    common::wait_until(Duration::from_secs(20), "the address repaired", || {
        let address = s.get(&format!("{ADDRESSES}/{ip}"));
        (address.status == 200).then(|| address.json())
    });
    let address = s.get_json(&format!("{ADDRESSES}/{ip}"));
    assert_eq!(address["spec"]["parentRef"]["name"], "web");
}

#[test]
fn addresses_and_ranges_get_upstreams_validation() {
    let s = TestServer::start();
    let address = |name: &str, parent: Value| json!({"apiVersion": "networking.k8s.io/v1", "kind": "IPAddress", "metadata": {"name": name}, "spec": {"parentRef": parent}});
    let status = s
        .post_json(
            ADDRESSES,
            &address("10.01.2.3", json!({"resource": "services", "name": "a"})),
        )
        .assert_status(422, "Invalid");
    assert_eq!(
        status["message"],
        r#"IPAddress.networking.k8s.io "10.01.2.3" is invalid: metadata.name: Invalid value: "10.01.2.3": must not have leading 0s"#
    );
    let status = s
        .post_json(
            ADDRESSES,
            &address("2001:DB8::1", json!({"resource": "", "name": "a/b"})),
        )
        .assert_status(422, "Invalid");
    assert_eq!(
        status["message"],
        r#"IPAddress.networking.k8s.io "2001:DB8::1" is invalid: [metadata.name: Invalid value: "2001:DB8::1": must be in canonical form ("2001:db8::1"), spec.parentRef.resource: Required value, spec.parentRef.name: Invalid value: "a/b": may not contain '/']"#
    );
    // generateName is the address itself.
    let generated = json!({"apiVersion": "networking.k8s.io/v1", "kind": "IPAddress", "metadata": {"generateName": "192.168.7.7"}, "spec": {"parentRef": {"resource": "services", "namespace": "default", "name": "x"}}});
    let created = s.post_json(ADDRESSES, &generated);
    assert_eq!(created.status, 201, "{created:?}");
    assert_eq!(created.json()["metadata"]["name"], "192.168.7.7");
    let err = s.kubectl_err(&[
        "patch",
        "ipaddress",
        "192.168.7.7",
        "--type=merge",
        "-p",
        r#"{"spec":{"parentRef":{"name":"y"}}}"#,
    ]);
    assert!(
        err.contains(r#"spec.parentRef: Invalid value: networking.ParentReference{Group:"", Resource:"services", Namespace:"default", Name:"y"}: field is immutable"#),
        "{err}"
    );

    let cidr = |name: &str, cidrs: Value| json!({"apiVersion": "networking.k8s.io/v1", "kind": "ServiceCIDR", "metadata": {"name": name}, "spec": {"cidrs": cidrs}});
    let status = s
        .post_json(
            CIDRS,
            &cidr("two-v4", json!(["10.40.0.0/24", "10.41.0.1/24"])),
        )
        .assert_status(422, "Invalid");
    assert_eq!(
        status["message"],
        r#"ServiceCIDR.networking.k8s.io "two-v4" is invalid: [spec.cidrs[1]: Invalid value: "10.41.0.1/24": must not have bits set beyond the prefix length, spec.cidrs: Invalid value: []string{"10.40.0.0/24", "10.41.0.1/24"}: may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64]"#
    );
    assert_eq!(
        s.post_json(CIDRS, &cidr("single", json!(["10.40.0.0/24"])))
            .status,
        201
    );
    // One range may become two; nothing else changes.
    s.kubectl_ok(&[
        "patch",
        "servicecidr",
        "single",
        "--type=merge",
        "-p",
        r#"{"spec":{"cidrs":["10.40.0.0/24","fd00:40::/64"]}}"#,
    ]);
    let err = s.kubectl_err(&[
        "patch",
        "servicecidr",
        "single",
        "--type=merge",
        "-p",
        r#"{"spec":{"cidrs":["10.42.0.0/24","fd00:40::/64"]}}"#,
    ]);
    assert!(
        err.contains(r#"spec.cidrs[0]: Invalid value: "10.42.0.0/24": field is immutable"#),
        "{err}"
    );
}
