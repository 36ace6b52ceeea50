//! The built-in groups beyond core and apps: discovery rows as kube-apiserver
//! 1.32 serves them, one kind served at two versions over one storage
//! (events), and subresources particular to a group (CSR approval).

use crate::common::TestServer;

/// `kubectl api-resources` against kube-apiserver 1.33 (with its default
/// feature gates).
const UPSTREAM_ROWS: &[&str] = &[
    "bindings v1 true Binding",
    "componentstatuses cs v1 false ComponentStatus",
    "configmaps cm v1 true ConfigMap",
    "endpoints ep v1 true Endpoints",
    "events ev v1 true Event",
    "limitranges limits v1 true LimitRange",
    "namespaces ns v1 false Namespace",
    "nodes no v1 false Node",
    "persistentvolumeclaims pvc v1 true PersistentVolumeClaim",
    "persistentvolumes pv v1 false PersistentVolume",
    "pods po v1 true Pod",
    "podtemplates v1 true PodTemplate",
    "replicationcontrollers rc v1 true ReplicationController",
    "resourcequotas quota v1 true ResourceQuota",
    "secrets v1 true Secret",
    "serviceaccounts sa v1 true ServiceAccount",
    "services svc v1 true Service",
    "mutatingwebhookconfigurations admissionregistration.k8s.io/v1 false MutatingWebhookConfiguration",
    "validatingadmissionpolicies admissionregistration.k8s.io/v1 false ValidatingAdmissionPolicy",
    "validatingadmissionpolicybindings admissionregistration.k8s.io/v1 false ValidatingAdmissionPolicyBinding",
    "validatingwebhookconfigurations admissionregistration.k8s.io/v1 false ValidatingWebhookConfiguration",
    "customresourcedefinitions crd,crds apiextensions.k8s.io/v1 false CustomResourceDefinition",
    "apiservices apiregistration.k8s.io/v1 false APIService",
    "controllerrevisions apps/v1 true ControllerRevision",
    "daemonsets ds apps/v1 true DaemonSet",
    "deployments deploy apps/v1 true Deployment",
    "replicasets rs apps/v1 true ReplicaSet",
    "statefulsets sts apps/v1 true StatefulSet",
    "selfsubjectreviews authentication.k8s.io/v1 false SelfSubjectReview",
    "tokenreviews authentication.k8s.io/v1 false TokenReview",
    "localsubjectaccessreviews authorization.k8s.io/v1 true LocalSubjectAccessReview",
    "selfsubjectaccessreviews authorization.k8s.io/v1 false SelfSubjectAccessReview",
    "selfsubjectrulesreviews authorization.k8s.io/v1 false SelfSubjectRulesReview",
    "subjectaccessreviews authorization.k8s.io/v1 false SubjectAccessReview",
    "horizontalpodautoscalers hpa autoscaling/v2 true HorizontalPodAutoscaler",
    "cronjobs cj batch/v1 true CronJob",
    "jobs batch/v1 true Job",
    "certificatesigningrequests csr certificates.k8s.io/v1 false CertificateSigningRequest",
    "leases coordination.k8s.io/v1 true Lease",
    "endpointslices discovery.k8s.io/v1 true EndpointSlice",
    "events ev events.k8s.io/v1 true Event",
    "flowschemas flowcontrol.apiserver.k8s.io/v1 false FlowSchema",
    "prioritylevelconfigurations flowcontrol.apiserver.k8s.io/v1 false PriorityLevelConfiguration",
    "ingressclasses networking.k8s.io/v1 false IngressClass",
    "ingresses ing networking.k8s.io/v1 true Ingress",
    "ipaddresses ip networking.k8s.io/v1 false IPAddress",
    "networkpolicies netpol networking.k8s.io/v1 true NetworkPolicy",
    "servicecidrs networking.k8s.io/v1 false ServiceCIDR",
    "runtimeclasses node.k8s.io/v1 false RuntimeClass",
    "poddisruptionbudgets pdb policy/v1 true PodDisruptionBudget",
    "clusterrolebindings rbac.authorization.k8s.io/v1 false ClusterRoleBinding",
    "clusterroles rbac.authorization.k8s.io/v1 false ClusterRole",
    "rolebindings rbac.authorization.k8s.io/v1 true RoleBinding",
    "roles rbac.authorization.k8s.io/v1 true Role",
    "priorityclasses pc scheduling.k8s.io/v1 false PriorityClass",
    "csidrivers storage.k8s.io/v1 false CSIDriver",
    "csinodes storage.k8s.io/v1 false CSINode",
    "csistoragecapacities storage.k8s.io/v1 true CSIStorageCapacity",
    "storageclasses sc storage.k8s.io/v1 false StorageClass",
    "volumeattachments storage.k8s.io/v1 false VolumeAttachment",
];

#[test]
fn api_resources_lists_upstreams_rows() {
    let server = TestServer::start();
    let out = server.kubectl_ok(&["api-resources", "--no-headers"]);
    let rows: Vec<String> = out
        .lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(rows, UPSTREAM_ROWS, "kubectl api-resources:\n{out}");

    // The group document names both autoscaling versions, v2 preferred, and
    // both share the storage version's hash.
    let raw = |path: &str| -> serde_json::Value {
        let out = server.kubectl_ok(&["get", "--raw", path]);
        serde_json::from_str(&out).expect("discovery JSON")
    };
    let group = raw("/apis/autoscaling");
    assert_eq!(group["preferredVersion"]["version"], "v2");
    assert_eq!(group["versions"][1]["version"], "v1");
    let hash = |gv: &str| {
        let list = raw(&format!("/apis/{gv}"));
        list["resources"][0]["storageVersionHash"].clone()
    };
    assert_eq!(hash("autoscaling/v1"), hash("autoscaling/v2"));
}

#[test]
fn events_are_one_resource_at_two_versions() {
    let server = TestServer::start();
    server.apply(
        r#"
apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: scaled, namespace: default}
eventTime: "2026-11-22T05:00:00.000000Z"
reportingController: example.com/scaler
reportingInstance: scaler-1
action: Scale
reason: Scaled
note: scaled up to 3
type: Normal
regarding: {apiVersion: apps/v1, kind: Deployment, name: web, namespace: default}
"#,
    );
    // Read back through core/v1, selected by a core field.
    let core = server.kubectl_json(&[
        "get",
        "events.v1.",
        "--field-selector",
        "involvedObject.kind=Deployment,involvedObject.name=web",
    ]);
    let items = core["items"].as_array().expect("items");
    assert_eq!(items.len(), 1, "{core}");
    assert_eq!(items[0]["apiVersion"], "v1");
    assert_eq!(items[0]["message"], "scaled up to 3");
    assert_eq!(items[0]["reportingComponent"], "example.com/scaler");
    assert_eq!(items[0]["involvedObject"]["name"], "web");

    // A core event reads at events.k8s.io/v1 with upstream's field names.
    server.apply(
        r#"
apiVersion: v1
kind: Event
metadata: {name: pulled, namespace: default}
involvedObject: {kind: Pod, name: web-1, namespace: default}
reason: Pulled
message: image pulled
source: {component: kubelet}
count: 2
type: Normal
"#,
    );
    let events = server.kubectl_json(&["get", "events.v1.events.k8s.io", "pulled"]);
    assert_eq!(events["apiVersion"], "events.k8s.io/v1");
    assert_eq!(events["note"], "image pulled");
    assert_eq!(events["regarding"]["name"], "web-1");
    assert_eq!(events["deprecatedCount"], 2);
    assert_eq!(events["deprecatedSource"]["component"], "kubelet");
    assert!(events.get("message").is_none());
}

#[test]
fn certificate_signing_requests_are_approved_through_their_subresource() {
    let server = TestServer::start();
    // A real request: CertificateSubjectRestriction reads its subject.
    let key = rcgen::KeyPair::generate().expect("a key");
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "alice");
    let pem = params
        .serialize_request(&key)
        .expect("a request")
        .pem()
        .expect("PEM");
    let request = base64_encode(&pem);
    server.apply(&format!(
        r#"
apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata: {{name: alice}}
spec:
  request: {request}
  signerName: kubernetes.io/kube-apiserver-client
  usages: [client auth]
"#
    ));
    server.kubectl_ok(&["certificate", "approve", "alice"]);
    let csr = server.kubectl_json(&["get", "csr", "alice"]);
    let conditions = csr["status"]["conditions"].as_array().expect("conditions");
    assert_eq!(conditions[0]["type"], "Approved", "{csr}");
    assert_eq!(conditions[0]["status"], "True");
    // The approval subresource changes conditions only.
    assert_eq!(
        csr["spec"]["signerName"],
        "kubernetes.io/kube-apiserver-client"
    );
}

fn base64_encode(text: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(text)
}

#[test]
fn horizontal_pod_autoscalers_read_back_at_both_versions() {
    let server = TestServer::start();
    // Created at autoscaling/v2, read at v1.
    server.apply(
        r#"
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 10
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}
  - type: Resource
    resource: {name: memory, target: {type: AverageValue, averageValue: 500Mi}}
"#,
    );
    let v1 = server.kubectl_json(&["get", "horizontalpodautoscalers.v1.autoscaling", "web"]);
    assert_eq!(v1["apiVersion"], "autoscaling/v1");
    assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 70);
    assert_eq!(v1["spec"]["minReplicas"], 2);
    assert!(v1["spec"].get("metrics").is_none(), "{v1}");
    // What v1 has no field for travels in upstream's annotation.
    let kept = v1["metadata"]["annotations"]["autoscaling.alpha.kubernetes.io/metrics"]
        .as_str()
        .unwrap_or_default();
    assert!(kept.contains("memory"), "{v1}");
    // And reads back intact at v2.
    let v2 = server.kubectl_json(&["get", "horizontalpodautoscalers.v2.autoscaling", "web"]);
    let metrics = v2["spec"]["metrics"].as_array().expect("metrics");
    assert_eq!(metrics.len(), 2, "{v2}");
    assert!(v2["metadata"]["annotations"]
        .get("autoscaling.alpha.kubernetes.io/metrics")
        .is_none());

    // Created at autoscaling/v1, read at v2.
    server.apply(
        r#"
apiVersion: autoscaling/v1
kind: HorizontalPodAutoscaler
metadata: {name: api}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: api}
  maxReplicas: 4
  targetCPUUtilizationPercentage: 50
"#,
    );
    let v2 = server.kubectl_json(&["get", "horizontalpodautoscalers.v2.autoscaling", "api"]);
    assert_eq!(v2["apiVersion"], "autoscaling/v2");
    assert_eq!(v2["spec"]["minReplicas"], 1, "upstream's default: {v2}");
    assert_eq!(
        v2["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"],
        50
    );
    assert_eq!(v2["spec"]["metrics"][0]["resource"]["name"], "cpu");
    // Invalid at either version is refused with v2's rules.
    let err = server.kubectl_err(&[
        "patch",
        "horizontalpodautoscalers.v1.autoscaling",
        "api",
        "--type=merge",
        "-p",
        r#"{"spec":{"maxReplicas":0}}"#,
    ]);
    assert!(err.contains("spec.maxReplicas"), "{err}");
}

#[test]
fn pods_are_bound_to_nodes_once() {
    let server = TestServer::start();
    server.kubectl_ok(&["run", "web", "--image=nginx"]);
    server.kubectl_ok(&["run", "api", "--image=nginx"]);
    // The bindings collection, as older schedulers post it.
    let bound = server.post_json(
        "/api/v1/namespaces/default/bindings",
        &serde_json::json!({
            "apiVersion": "v1", "kind": "Binding",
            "metadata": {"name": "web"},
            "target": {"apiVersion": "v1", "kind": "Node", "name": "node-1"},
        }),
    );
    assert_eq!(bound.status, 201, "{}", bound.body);
    assert_eq!(bound.json()["status"], "Success");
    let pod = server.kubectl_json(&["get", "pod", "web"]);
    assert_eq!(pod["spec"]["nodeName"], "node-1");
    let conditions = pod["status"]["conditions"].as_array().expect("conditions");
    assert!(
        conditions
            .iter()
            .any(|c| c["type"] == "PodScheduled" && c["status"] == "True"),
        "{pod}"
    );
    // A bound pod is not bound again.
    let again = server.post_json(
        "/api/v1/namespaces/default/pods/web/binding",
        &serde_json::json!({"apiVersion": "v1", "kind": "Binding",
            "metadata": {"name": "web"}, "target": {"kind": "Node", "name": "node-2"}}),
    );
    let status = again.assert_status(409, "Conflict");
    assert!(
        status["message"]
            .as_str()
            .unwrap_or_default()
            .contains(r#"pod web is already assigned to node "node-1""#),
        "{status}"
    );
    // The pods/<name>/binding subresource, as kube-scheduler posts it.
    let bound = server.post_json(
        "/api/v1/namespaces/default/pods/api/binding",
        &serde_json::json!({"apiVersion": "v1", "kind": "Binding",
            "metadata": {"name": "api"}, "target": {"kind": "Node", "name": "node-2"}}),
    );
    assert_eq!(bound.status, 201, "{}", bound.body);
    let node = server.kubectl_ok(&["get", "pod", "api", "-o", "jsonpath={.spec.nodeName}"]);
    assert_eq!(node, "node-2");
    // A binding without a target is invalid; nothing changes.
    let invalid = server.post_json(
        "/api/v1/namespaces/default/bindings",
        &serde_json::json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "api"}, "target": {}}),
    );
    let status = invalid.assert_status(422, "Invalid");
    assert_eq!(status["details"]["causes"][0]["field"], "target.name");
}

#[test]
fn component_statuses_report_what_the_server_depends_on() {
    let server = TestServer::start();
    let out = server.kubectl_ok(&["get", "componentstatuses"]);
    assert!(
        out.contains("controller-manager") && out.contains("Healthy"),
        "{out}"
    );
    assert!(out.contains("embedded-store"), "{out}");
    let store = server.kubectl_json(&["get", "cs", "embedded-store"]);
    assert_eq!(store["conditions"][0]["type"], "Healthy");
    assert_eq!(store["conditions"][0]["status"], "True");
    let err = server.kubectl_err(&["delete", "cs", "embedded-store"]);
    assert!(
        err.contains("MethodNotAllowed") || err.contains("not supported"),
        "{err}"
    );
}

#[test]
fn kubectl_auth_can_i_and_whoami_answer_for_the_caller() {
    let server = TestServer::start();
    assert_eq!(
        server
            .kubectl_ok(&["auth", "can-i", "create", "pods"])
            .trim(),
        "yes"
    );
    assert_eq!(
        server
            .kubectl_ok(&["auth", "can-i", "get", "/metrics"])
            .trim(),
        "yes"
    );
    // The rules: cluster-admin's wildcards, then what every user may do.
    let rules = server.kubectl_ok(&["auth", "can-i", "--list"]);
    assert!(
        rules.contains("*.*") && rules.contains("selfsubjectreviews.authentication.k8s.io"),
        "{rules}"
    );
    let me = server.kubectl_json(&["auth", "whoami", "-o", "json"]);
    assert_eq!(me["kind"], "SelfSubjectReview");
    assert_eq!(me["status"]["userInfo"]["username"], "admin");
    let groups = me["status"]["userInfo"]["groups"].to_string();
    assert!(groups.contains("system:masters"), "{groups}");

    // A review asks exactly one question, or gets upstream's 422.
    const SSAR: &str = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
    let json = [("Content-Type", "application/json")];
    let resp = server.curl(
        "POST",
        SSAR,
        &json,
        Some(br#"{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{}}"#),
    );
    let status = resp.assert_status(422, "Invalid");
    assert_eq!(
        status["message"],
        "SelfSubjectAccessReview.authorization.k8s.io \"\" is invalid: spec.resourceAttributes: Invalid value: \"null\": exactly one of nonResourceAttributes or resourceAttributes must be specified"
    );
    // Anonymous callers are not users who may ask (system:basic-user is
    // bound to authenticated users), and a review is never stored or listed.
    let ask = br#"{"spec":{"resourceAttributes":{"verb":"get","resource":"pods"}}}"#;
    server
        .curl_anonymous("POST", SSAR, &json, Some(ask))
        .assert_status(403, "Forbidden");
    let resp = server.curl("POST", SSAR, &json, Some(ask));
    assert_eq!(resp.status, 201, "{resp:#?}");
    assert_eq!(server.get(SSAR).status, 405);
}
