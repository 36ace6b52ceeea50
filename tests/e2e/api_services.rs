//! APIServices (apiregistration.k8s.io/v1) through kubectl: a Local one
//! for every built-in group/version with upstream's priorities, Available
//! from the start; one for each served version of a
//! CustomResourceDefinition, removed with it; remote ones validated and
//! defaulted as upstream, printed as `kubectl get apiservices` prints them.

use crate::common;
use std::time::Duration;

use crate::common::TestServer;
use serde_json::{json, Value};

const CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.devices.example.com}
spec:
  group: devices.example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
  - name: v1alpha1
    served: false
    storage: false
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
"#;

fn api_service(server: &TestServer, name: &str) -> Option<Value> {
    let found = server.get(&format!(
        "/apis/apiregistration.k8s.io/v1/apiservices/{name}"
    ));
    (found.status == 200).then(|| found.json())
}

#[test]
fn local_api_services_follow_the_served_group_versions() {
    let server = TestServer::start();
    let core = common::wait_until(Duration::from_secs(10), "the Local APIServices", || {
        api_service(&server, "v1.")
    });
    assert_eq!(
        core["spec"],
        json!({"group": "", "version": "v1", "groupPriorityMinimum": 18000, "versionPriority": 1})
    );
    assert_eq!(
        core["metadata"]["labels"]["kube-aggregator.kubernetes.io/automanaged"],
        "onstart"
    );
    let condition = &core["status"]["conditions"][0];
    assert_eq!(condition["type"], "Available");
    assert_eq!(condition["status"], "True");
    assert_eq!(condition["reason"], "Local");
    assert_eq!(
        condition["message"],
        "Local APIServices are always available"
    );
    let apps = common::wait_until(Duration::from_secs(10), "v1.apps", || {
        api_service(&server, "v1.apps")
    });
    assert_eq!(apps["spec"]["groupPriorityMinimum"], 17800);
    assert_eq!(apps["spec"]["versionPriority"], 15);

    let table = server.kubectl_ok(&["get", "apiservices"]);
    let mut lines = table.lines();
    let header: Vec<&str> = lines
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(header, ["NAME", "SERVICE", "AVAILABLE", "AGE"]);
    assert!(
        table.lines().any(|l| {
            let cells: Vec<&str> = l.split_whitespace().collect();
            cells.len() == 4 && cells[..3] == ["v1.apps", "Local", "True"]
        }),
        "{table}"
    );

    // A definition's served versions get theirs; they go with it.
    server.apply(CRD);
    let gadgets = common::wait_until(
        Duration::from_secs(10),
        "the definition's APIService",
        || api_service(&server, "v1.devices.example.com"),
    );
    assert_eq!(
        gadgets["spec"],
        json!({"group": "devices.example.com", "version": "v1",
               "groupPriorityMinimum": 1000, "versionPriority": 100})
    );
    assert_eq!(
        gadgets["metadata"]["labels"]["kube-aggregator.kubernetes.io/automanaged"],
        "true"
    );
    assert!(api_service(&server, "v1alpha1.devices.example.com").is_none());
    server.kubectl_line("delete crd gadgets.devices.example.com");
    common::wait_until(Duration::from_secs(40), "the APIService removed", || {
        api_service(&server, "v1.devices.example.com")
            .is_none()
            .then_some(())
    });
    // A managed APIService edited by hand gets its spec back.
    server.kubectl(&[
        "patch",
        "apiservice",
        "v1.apps",
        "--type=merge",
        "-p",
        r#"{"spec": {"versionPriority": 7}}"#,
    ]);
    common::wait_until(Duration::from_secs(40), "the spec restored", || {
        (api_service(&server, "v1.apps")?["spec"]["versionPriority"] == 15).then_some(())
    });
}

#[test]
fn remote_api_services_are_validated_and_defaulted_as_upstream() {
    let server = TestServer::start();
    let remote = r#"{"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
        "metadata": {"name": "v1beta1.metrics.k8s.io"},
        "spec": {"group": "metrics.k8s.io", "version": "v1beta1", "groupPriorityMinimum": 100,
                 "versionPriority": 100, "insecureSkipTLSVerify": true,
                 "service": {"namespace": "kube-system", "name": "metrics-server"}}}"#;
    server.apply(remote);
    let stored = server.kubectl_json(&["get", "apiservice", "v1beta1.metrics.k8s.io"]);
    assert_eq!(stored["spec"]["service"]["port"], 443);
    let table = server.kubectl_ok(&["get", "apiservice", "v1beta1.metrics.k8s.io"]);
    assert!(table.contains("kube-system/metrics-server"), "{table}");

    let out = server.kubectl_stdin(
        &["create", "-f", "-"],
        r#"{"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
            "metadata": {"name": "v1.wrong.example.com"},
            "spec": {"group": "flunders.example.com", "version": "v1", "groupPriorityMinimum": 0,
                     "versionPriority": 100}}"#,
    );
    assert!(!out.status.success());
    let stderr = common::text(&out.stderr);
    assert!(
        stderr.contains(r#"The APIService "v1.wrong.example.com" is invalid: "#)
            && stderr.contains(r#"metadata.name: Invalid value: "v1.wrong.example.com": must be `spec.version+"."+spec.group`: "v1.flunders.example.com""#)
            && stderr.contains("spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000"),
        "{stderr}"
    );
}
