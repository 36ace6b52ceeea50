//! The built-in admission plugins through kubectl and REST: ServiceAccount
//! (the default account, the kube-api-access volume, the kube-root-ca.crt
//! ConfigMap it mounts, pull secrets, a missing account), Priority (the
//! system classes, a global default, refusals), DefaultTolerationSeconds,
//! DefaultStorageClass and DefaultIngressClass, and the flags that choose
//! the plugins.

use crate::common;
use std::process::Command;
use std::time::Duration;

use crate::common::TestServer;
use serde_json::{json, Value};

fn pod(name: &str, spec: Value) -> Value {
    let mut spec = spec;
    if spec.get("containers").is_none() {
        spec["containers"] = json!([{"name": "c", "image": "nginx"}]);
    }
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec})
}

const PODS: &str = "/api/v1/namespaces/default/pods";

#[test]
fn pods_get_their_account_token_priority_and_tolerations() {
    let server = TestServer::start_with(&["--controllers=*"]);
    server.kubectl_line("run web --image=nginx");
    let web = server.kubectl_json(&["get", "pod", "web"]);
    let spec = &web["spec"];
    assert_eq!(spec["serviceAccountName"], "default");
    assert_eq!(spec["serviceAccount"], "default");
    let volume = &spec["volumes"][0];
    let name = volume["name"].as_str().unwrap_or_default();
    assert!(
        name.starts_with("kube-api-access-") && name.len() == 21,
        "{volume}"
    );
    assert_eq!(
        volume["projected"],
        json!({"sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}
        ], "defaultMode": 420})
    );
    assert_eq!(
        spec["containers"][0]["volumeMounts"],
        json!([{"name": name, "readOnly": true, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}])
    );
    assert_eq!(spec["priority"], 0);
    assert_eq!(spec["preemptionPolicy"], "PreemptLowerPriority");
    assert_eq!(
        spec["tolerations"],
        json!([
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
        ])
    );

    // The CA the volume projects is the one that verifies this server.
    let ca = std::fs::read_to_string(server.ca_cert()).expect("the CA file");
    let published = server.kubectl_json(&["get", "configmap", "kube-root-ca.crt"]);
    assert_eq!(published["data"]["ca.crt"].as_str(), Some(ca.as_str()));
    assert!(
        published["metadata"]["annotations"]["kubernetes.io/description"]
            .as_str()
            .is_some_and(|d| d
                .starts_with("Contains a CA bundle that can be used to verify the kube-apiserver"))
    );
    // A new namespace gets one; an edited or deleted one is put back.
    server.kubectl_line("create namespace fresh");
    let fresh = common::wait_until(Duration::from_secs(5), "the CA in a new namespace", || {
        let answer = server.get("/api/v1/namespaces/fresh/configmaps/kube-root-ca.crt");
        (answer.status == 200).then(|| answer.json())
    });
    assert_eq!(fresh["data"]["ca.crt"].as_str(), Some(ca.as_str()));
    server.kubectl_line(
        "patch configmap kube-root-ca.crt -n fresh -p {\"data\":{\"ca.crt\":\"forged\"}}",
    );
    server.kubectl_line("delete configmap kube-root-ca.crt -n default");
    for namespace in ["fresh", "default"] {
        common::wait_until(Duration::from_secs(5), "the CA put back", || {
            let answer = server.get(&format!(
                "/api/v1/namespaces/{namespace}/configmaps/kube-root-ca.crt"
            ));
            (answer.status == 200 && answer.json()["data"]["ca.crt"].as_str() == Some(ca.as_str()))
                .then_some(())
        });
    }

    // Pods in the new namespace find its default account even if created
    // right away.
    let fast = server.post_json("/api/v1/namespaces/fresh/pods", &pod("fast", json!({})));
    assert_eq!(fast.status, 201, "{fast:?}");

    // A named account must exist; upstream's 403.
    let missing = server.post_json(PODS, &pod("lost", json!({"serviceAccountName": "ghost"})));
    let status = missing.assert_status(403, "Forbidden");
    assert_eq!(
        status["message"],
        "pods \"lost\" is forbidden: error looking up service account default/ghost: serviceaccount \"ghost\" not found"
    );

    // Automount off (on the account) means no volume; the account's pull
    // secrets are inherited by a pod that has none.
    server.apply(
        r#"{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "builder"},
            "automountServiceAccountToken": false, "imagePullSecrets": [{"name": "registry"}]}"#,
    );
    let built = server.post_json(
        PODS,
        &pod("built", json!({"serviceAccountName": "builder"})),
    );
    assert_eq!(built.status, 201, "{built:?}");
    let built = built.json();
    assert!(built["spec"].get("volumes").is_none(), "{built}");
    assert_eq!(
        built["spec"]["imagePullSecrets"],
        json!([{"name": "registry"}])
    );
    // The pod's own setting wins over the account's.
    let mounted = server.post_json(
        PODS,
        &pod(
            "mounted",
            json!({"serviceAccountName": "builder", "automountServiceAccountToken": true}),
        ),
    );
    assert!(mounted.json()["spec"]["volumes"][0]["name"]
        .as_str()
        .is_some_and(|n| n.starts_with("kube-api-access-")));

    // A mirror pod may not name an account.
    let mirror = server.post_json(
        PODS,
        &json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "static", "annotations": {"kubernetes.io/config.mirror": "x"}},
                "spec": {"serviceAccountName": "default", "containers": [{"name": "c", "image": "nginx"}]}}),
    );
    let status = mirror.assert_status(403, "Forbidden");
    assert_eq!(
        status["message"],
        "pods \"static\" is forbidden: a mirror pod may not reference service accounts"
    );
}

#[test]
fn priority_classes_resolve_and_refuse_as_upstream() {
    let server = TestServer::start();
    let classes = server.kubectl_ok(&["get", "priorityclasses", "-o", "name"]);
    assert_eq!(
        classes.lines().collect::<Vec<_>>(),
        [
            "priorityclass.scheduling.k8s.io/system-cluster-critical",
            "priorityclass.scheduling.k8s.io/system-node-critical"
        ]
    );
    let critical = server.post_json(
        PODS,
        &pod(
            "critical",
            json!({"priorityClassName": "system-node-critical"}),
        ),
    );
    assert_eq!(
        critical.json()["spec"]["priority"],
        2_000_001_000,
        "{critical:?}"
    );

    let unknown = server.post_json(PODS, &pod("unknown", json!({"priorityClassName": "nope"})));
    let status = unknown.assert_status(403, "Forbidden");
    assert_eq!(
        status["message"],
        "pods \"unknown\" is forbidden: no PriorityClass with name nope was found"
    );
    let claimed = server.post_json(PODS, &pod("claimed", json!({"priority": 7})));
    let status = claimed.assert_status(403, "Forbidden");
    assert_eq!(
        status["message"],
        "pods \"claimed\" is forbidden: the integer value of priority (7) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name"
    );

    // A global default applies to pods that name no class; a second
    // default is refused.
    server.apply(
        r#"{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": "normal"}, "value": 1000, "globalDefault": true,
            "preemptionPolicy": "Never"}"#,
    );
    let plain = common::wait_until(
        Duration::from_secs(5),
        "the default class in effect",
        || {
            let created = server.post_json(&format!("{PODS}?dryRun=All"), &pod("plain", json!({})));
            (created.json()["spec"]["priority"] == 1000).then(|| created.json())
        },
    );
    assert_eq!(plain["spec"]["priorityClassName"], "normal");
    assert_eq!(plain["spec"]["preemptionPolicy"], "Never");
    let second = server.post_json(
        "/apis/scheduling.k8s.io/v1/priorityclasses",
        &json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                "metadata": {"name": "also-default"}, "value": 5, "globalDefault": true}),
    );
    let status = second.assert_status(403, "Forbidden");
    assert_eq!(
        status["message"],
        "priorityclasses.scheduling.k8s.io \"also-default\" is forbidden: PriorityClass normal is already marked as default. Only one default can exist"
    );
}

#[test]
fn claims_and_ingresses_get_the_default_class() {
    let server = TestServer::start();
    for name in ["older", "newer"] {
        server.apply(&format!(
            r#"{{"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                "metadata": {{"name": "{name}", "annotations": {{"storageclass.kubernetes.io/is-default-class": "true"}}}},
                "provisioner": "example.com/disk"}}"#
        ));
        // Creation times have a resolution of one second.
        std::thread::sleep(Duration::from_millis(1100));
    }
    let claim = |name: &str, class: Option<&str>| {
        let mut claim = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}});
        if let Some(class) = class {
            claim["spec"]["storageClassName"] = json!(class);
        }
        server.post_json("/api/v1/namespaces/default/persistentvolumeclaims", &claim)
    };
    let defaulted = common::wait_until(Duration::from_secs(5), "the default class", || {
        let created = claim("data", None).json();
        (created["spec"]["storageClassName"] == "newer").then_some(created)
    });
    assert_eq!(defaulted["metadata"]["name"], "data");
    assert_eq!(
        claim("static", Some("")).json()["spec"]["storageClassName"],
        ""
    );

    server.apply(
        r#"{"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
            "metadata": {"name": "nginx", "annotations": {"ingressclass.kubernetes.io/is-default-class": "true"}},
            "spec": {"controller": "k8s.io/ingress-nginx"}}"#,
    );
    common::wait_until(Duration::from_secs(5), "the default ingress class", || {
        let created = server.post_json(
            "/apis/networking.k8s.io/v1/namespaces/default/ingresses?dryRun=All",
            &json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                    "metadata": {"name": "web"},
                    "spec": {"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}}}),
        );
        (created.json()["spec"]["ingressClassName"] == "nginx").then_some(())
    });
}

#[test]
fn limit_ranges_default_and_bound_pods_and_claims() {
    let server = TestServer::start();
    server.apply(
        r#"{"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "bounds"},
            "spec": {"limits": [
              {"type": "Container", "max": {"memory": "1Gi"}, "min": {"cpu": "50m"},
               "default": {"cpu": "500m", "memory": "512Mi"}, "defaultRequest": {"cpu": "100m"}},
              {"type": "PersistentVolumeClaim", "max": {"storage": "10Gi"}}
            ]}}"#,
    );
    // The range is read from its watch cache: wait until it counts.
    let defaulted = common::wait_until(Duration::from_secs(5), "the range in effect", || {
        let created = server.post_json(&format!("{PODS}?dryRun=All"), &pod("sized", json!({})));
        let created = created.json();
        created["metadata"]["annotations"]["kubernetes.io/limit-ranger"]
            .is_string()
            .then_some(created)
    });
    assert_eq!(
        defaulted["spec"]["containers"][0]["resources"],
        json!({"limits": {"cpu": "500m", "memory": "512Mi"}, "requests": {"cpu": "100m", "memory": "512Mi"}})
    );
    assert_eq!(
        defaulted["metadata"]["annotations"]["kubernetes.io/limit-ranger"],
        "LimitRanger plugin set: cpu, memory request for container c; cpu, memory limit for container c"
    );
    let big = server.post_json(
        PODS,
        &pod(
            "big",
            json!({"containers": [{"name": "c", "image": "nginx",
            "resources": {"limits": {"memory": "2Gi"}, "requests": {"cpu": "10m"}}}]}),
        ),
    );
    let status = big.assert_status(403, "Forbidden");
    assert_eq!(
        status["message"],
        "pods \"big\" is forbidden: [minimum cpu usage per Container is 50m, but request is 10m, maximum memory usage per Container is 1Gi, but limit is 2Gi]"
    );
    let claim = server.post_json(
        "/api/v1/namespaces/default/persistentvolumeclaims",
        &json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "huge"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "20Gi"}}}}),
    );
    let status = claim.assert_status(403, "Forbidden");
    assert_eq!(
        status["message"],
        "persistentvolumeclaims \"huge\" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi"
    );
}

#[test]
fn flags_choose_the_plugins() {
    let server = TestServer::start_with(&[
        "--disable-admission-plugins=ServiceAccount,DefaultTolerationSeconds",
        "--enable-admission-plugins=AlwaysDeny",
    ]);
    let denied = server.post_json(PODS, &pod("p", json!({})));
    let status = denied.assert_status(403, "Forbidden");
    assert_eq!(
        status["message"],
        "pods \"p\" is forbidden: admission control is denying all modifications"
    );
    let dry = server.post_json(&format!("{PODS}?dryRun=All"), &pod("p", json!({})));
    dry.assert_status(403, "Forbidden");
    drop(server);

    let server = TestServer::start_with(&[
        "--disable-admission-plugins=ServiceAccount,DefaultTolerationSeconds",
    ]);
    let plain = server.post_json(PODS, &pod("p", json!({}))).json();
    assert!(plain["spec"].get("volumes").is_none(), "{plain}");
    assert!(plain["spec"].get("tolerations").is_none(), "{plain}");
    assert!(plain["spec"].get("serviceAccountName").is_none(), "{plain}");
    drop(server);

    let dir = tempfile::tempdir().expect("a temp dir");
    let out = Command::new(env!("CARGO_BIN_EXE_capstan"))
        .args([
            "serve",
            "--secure-port=0",
            "--enable-admission-plugins=Nope,Priority",
        ])
        .arg("--disable-admission-plugins=Priority")
        .arg("--data-dir")
        .arg(dir.path())
        .output()
        .expect("run capstan");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(r#"[enable-admission-plugins plugin "Nope" is unknown, [Priority] in enable-admission-plugins and disable-admission-plugins overlapped]"#),
        "{stderr}"
    );
}

const CLAIMS: &str = "/api/v1/namespaces/default/persistentvolumeclaims";

fn claim(name: &str, class: &str, storage: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
           "metadata": {"name": name},
           "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": class,
                    "resources": {"requests": {"storage": storage}}}})
}

/// TaintNodesByCondition, StorageObjectInUseProtection with the
/// pvc-protection and pv-protection controllers, and
/// PersistentVolumeClaimResize.
#[test]
fn nodes_are_tainted_and_storage_is_protected_while_used() {
    let server = TestServer::start_with(&["--controllers=*"]);
    server.apply(r#"{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}"#);
    let node = server.kubectl_json(&["get", "node", "n1"]);
    assert_eq!(
        node["spec"]["taints"],
        json!([{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}])
    );

    // A claim a scheduled pod mounts stays until the pod goes.
    let created = server.post_json(CLAIMS, &claim("data", "", "1Gi"));
    assert_eq!(created.status, 201, "{created:?}");
    assert_eq!(
        created.json()["metadata"]["finalizers"],
        json!(["kubernetes.io/pvc-protection"])
    );
    let mut user = pod("user", json!({"nodeName": "n1"}));
    user["spec"]["volumes"] =
        json!([{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]);
    assert_eq!(server.post_json(PODS, &user).status, 201);
    server.kubectl_line("delete pvc data --wait=false");
    std::thread::sleep(Duration::from_secs(2));
    let held = server.get_json(&format!("{CLAIMS}/data"));
    assert!(held["metadata"]["deletionTimestamp"].is_string(), "{held}");
    assert_eq!(
        held["metadata"]["finalizers"],
        json!(["kubernetes.io/pvc-protection"])
    );
    server.kubectl_line("delete pod user --grace-period=0 --force");
    common::wait_until(Duration::from_secs(10), "the claim released", || {
        (server.get(&format!("{CLAIMS}/data")).status == 404).then_some(())
    });

    // An unscheduled pod holds nothing; a volume goes once not bound.
    server.post_json(CLAIMS, &claim("free", "", "1Gi"));
    let mut pending = pod("pending", json!({}));
    pending["spec"]["volumes"] =
        json!([{"name": "d", "persistentVolumeClaim": {"claimName": "free"}}]);
    server.post_json(PODS, &pending);
    server.kubectl_line("delete pvc free --timeout=10s");
    server.apply(
        r#"{"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                     "hostPath": {"path": "/tmp/pv1"}}}"#,
    );
    let volume = server.kubectl_json(&["get", "pv", "pv1"]);
    assert_eq!(
        volume["metadata"]["finalizers"],
        json!(["kubernetes.io/pv-protection"])
    );
    server.kubectl_line("delete pv pv1 --timeout=10s");

    // Claims grow only when bound and their class allows expansion.
    for (class, expands) in [("fixed", false), ("elastic", true)] {
        server.apply(&format!(
            r#"{{"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                "metadata": {{"name": "{class}"}}, "provisioner": "example.com/disk",
                "allowVolumeExpansion": {expands}}}"#
        ));
        let name = format!("{class}-claim");
        server.post_json(CLAIMS, &claim(&name, class, "1Gi"));
    }
    let grow = |name: &str| {
        server.kubectl(&[
            "patch",
            "pvc",
            name,
            "--type=merge",
            "-p",
            r#"{"spec": {"resources": {"requests": {"storage": "2Gi"}}}}"#,
        ])
    };
    // An unbound claim's own validation refuses first, as upstream's does
    // (the plugin's "Only bound" check comes after it).
    let unbound = grow("elastic-claim");
    assert!(
        common::text(&unbound.stderr).contains("spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"),
        "{unbound:?}"
    );
    for name in ["fixed-claim", "elastic-claim"] {
        server.kubectl(&[
            "patch",
            "pvc",
            name,
            "--subresource=status",
            "--type=merge",
            "-p",
            r#"{"status": {"phase": "Bound"}}"#,
        ]);
    }
    let fixed = grow("fixed-claim");
    assert!(
        common::text(&fixed.stderr).contains(r#"persistentvolumeclaims "fixed-claim" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize"#),
        "{fixed:?}"
    );
    let elastic = common::wait_until(Duration::from_secs(5), "the class seen", || {
        let out = grow("elastic-claim");
        out.status.success().then_some(out)
    });
    assert!(elastic.status.success());
    let grown = server.get_json(&format!("{CLAIMS}/elastic-claim"));
    assert_eq!(grown["spec"]["resources"]["requests"]["storage"], "2Gi");
}

/// RuntimeClass, AlwaysPullImages (enabled by flag) and the certificate
/// plugins.
#[test]
fn runtime_classes_image_pulls_and_certificate_signers() {
    let server = TestServer::start_with(&["--enable-admission-plugins=AlwaysPullImages"]);
    server.apply(
        r#"{"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "sandboxed"},
            "handler": "kata",
            "overhead": {"podFixed": {"cpu": "250m", "memory": "64Mi"}},
            "scheduling": {"nodeSelector": {"sandbox": "yes"},
                           "tolerations": [{"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"}]}}"#,
    );
    let sandboxed = server.post_json(
        PODS,
        &pod(
            "sandboxed",
            json!({"runtimeClassName": "sandboxed", "nodeSelector": {"zone": "a"}}),
        ),
    );
    assert_eq!(sandboxed.status, 201, "{sandboxed:?}");
    let spec = sandboxed.json()["spec"].clone();
    assert_eq!(spec["overhead"], json!({"cpu": "250m", "memory": "64Mi"}));
    assert_eq!(spec["nodeSelector"], json!({"zone": "a", "sandbox": "yes"}));
    assert!(
        spec["tolerations"]
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t["key"] == "sandbox")),
        "{spec}"
    );
    assert_eq!(spec["containers"][0]["imagePullPolicy"], "Always");

    let missing = server.post_json(PODS, &pod("lost", json!({"runtimeClassName": "nope"})));
    let status = missing.assert_status(403, "Forbidden");
    assert_eq!(
        status["message"],
        r#"pods "lost" is forbidden: pod rejected: RuntimeClass "nope" not found"#
    );
    let conflicting = server.post_json(
        PODS,
        &pod(
            "torn",
            json!({"runtimeClassName": "sandboxed", "nodeSelector": {"sandbox": "no"}}),
        ),
    );
    let status = conflicting.assert_status(403, "Forbidden");
    assert_eq!(
        status["message"],
        r#"pods "torn" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = yes; pod.spec.nodeSelector[sandbox] = no"#
    );

    // CertificateSubjectRestriction: no system:masters client certificates.
    let request = |organization: &str| {
        use base64::Engine as _;
        let key = rcgen::KeyPair::generate().expect("a key");
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "someone");
        params
            .distinguished_name
            .push(rcgen::DnType::OrganizationName, organization);
        let pem = params
            .serialize_request(&key)
            .expect("a request")
            .pem()
            .expect("PEM");
        base64::engine::general_purpose::STANDARD.encode(pem)
    };
    let csr = |name: &str, signer: &str, organization: &str| {
        json!({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
               "metadata": {"name": name},
               "spec": {"request": request(organization), "signerName": signer,
                        "usages": ["client auth"]}})
    };
    const CSRS: &str = "/apis/certificates.k8s.io/v1/certificatesigningrequests";
    let masters = server.post_json(
        CSRS,
        &csr(
            "masters",
            "kubernetes.io/kube-apiserver-client",
            "system:masters",
        ),
    );
    let status = masters.assert_status(403, "Forbidden");
    assert_eq!(
        status["message"],
        r#"certificatesigningrequests.certificates.k8s.io "masters" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed"#
    );
    let created = server.post_json(CSRS, &csr("devs", "example.com/signer", "devs"));
    assert_eq!(created.status, 201, "{created:?}");

    // CertificateApproval: approving needs `approve` on the signer.
    server.apply(
        r#"{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "csr-approver"},
            "rules": [{"apiGroups": ["certificates.k8s.io"], "resources": ["certificatesigningrequests"], "verbs": ["get", "list"]},
                      {"apiGroups": ["certificates.k8s.io"], "resources": ["certificatesigningrequests/approval"], "verbs": ["update"]}]}"#,
    );
    server.kubectl_line(
        "create clusterrolebinding alice-approves --clusterrole=csr-approver --user=alice",
    );
    let refused = server.kubectl(&["certificate", "approve", "devs", "--as=alice"]);
    assert!(
        common::text(&refused.stderr).contains(r#"certificatesigningrequests.certificates.k8s.io "devs" is forbidden: user not permitted to approve requests with signerName "example.com/signer""#),
        "{refused:?}"
    );
    server.apply(
        r#"{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "example-signers"},
            "rules": [{"apiGroups": ["certificates.k8s.io"], "resources": ["signers"], "verbs": ["approve"],
                       "resourceNames": ["example.com/*"]}]}"#,
    );
    server.kubectl_line(
        "create clusterrolebinding alice-signers --clusterrole=example-signers --user=alice",
    );
    let approved = common::wait_until(Duration::from_secs(5), "alice may approve", || {
        let out = server.kubectl(&["certificate", "approve", "devs", "--as=alice"]);
        out.status.success().then_some(out)
    });
    assert!(approved.status.success());
}

/// NodeRestriction (enabled by flag): a kubelet's identity writes only its
/// own Node (without administrators' labels), mirror pods bound to it and
/// owned by its Node, its own pods' deletion, and its own lease; a
/// `system:node:` user outside `system:nodes` is not restricted.
#[test]
fn node_restriction_keeps_kubelets_to_their_own_node() {
    let server = TestServer::start_with(&["--enable-admission-plugins=NodeRestriction"]);
    // Capstan has no Node authorizer: RBAC lets kubelets write here, and
    // NodeRestriction is what narrows them.
    server.kubectl_line(
        "create clusterrolebinding kubelets --clusterrole=cluster-admin --group=system:nodes",
    );
    let as_node = |node: &str, args: &[&str], manifest: &str| {
        let user = format!("--as=system:node:{node}");
        let mut all: Vec<&str> = args.to_vec();
        all.extend([user.as_str(), "--as-group=system:nodes"]);
        if manifest.is_empty() {
            server.kubectl(&all)
        } else {
            all.extend(["-f", "-"]);
            server.kubectl_stdin(&all, manifest)
        }
    };
    let stderr = |out: &std::process::Output| common::text(&out.stderr);
    let node = |name: &str, labels: Value| {
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}})
            .to_string()
    };
    let own = common::wait_until(Duration::from_secs(5), "the binding in effect", || {
        let out = as_node(
            "n1",
            &["create"],
            &node("n1", json!({"kubernetes.io/hostname": "n1"})),
        );
        out.status.success().then_some(out)
    });
    assert!(own.status.success());
    let other = as_node("n1", &["create"], &node("n2", json!({})));
    assert!(
        stderr(&other)
            .contains(r#"nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2""#),
        "{other:?}"
    );
    let labelled = as_node(
        "n3",
        &["create"],
        &node(
            "n3",
            json!({"node-restriction.kubernetes.io/pool": "gpu", "node-role.kubernetes.io/worker": ""}),
        ),
    );
    assert!(
        stderr(&labelled).contains(r#"nodes "n3" is forbidden: node "n3" is not allowed to set the following labels: node-restriction.kubernetes.io/pool, node-role.kubernetes.io/worker"#),
        "{labelled:?}"
    );
    let relabel = as_node(
        "n1",
        &[
            "label",
            "node",
            "n1",
            "node-restriction.kubernetes.io/pool=gpu",
        ],
        "",
    );
    assert!(
        stderr(&relabel)
            .contains("is not allowed to modify labels: node-restriction.kubernetes.io/pool"),
        "{relabel:?}"
    );

    // Pods: only mirror pods, bound to the node and owned by its Node.
    let plain = as_node(
        "n1",
        &["create"],
        &pod("plain", json!({"nodeName": "n1"})).to_string(),
    );
    assert!(
        stderr(&plain).contains(r#"pods "plain" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "n1" can only create mirror pods"#),
        "{plain:?}"
    );
    let uid = server.kubectl_json(&["get", "node", "n1"])["metadata"]["uid"].clone();
    let mirror = |name: &str, node_name: &str, extra: Value| {
        let mut pod = pod(name, json!({"nodeName": node_name}));
        pod["metadata"]["annotations"] = json!({"kubernetes.io/config.mirror": "hash"});
        pod["metadata"]["ownerReferences"] = json!([{"apiVersion": "v1", "kind": "Node", "name": "n1", "uid": uid, "controller": true}]);
        if let (Some(spec), Some(extra)) = (pod["spec"].as_object_mut(), extra.as_object()) {
            spec.extend(extra.clone());
        }
        pod.to_string()
    };
    let static_pod = as_node("n1", &["create"], &mirror("static", "n1", json!({})));
    assert!(static_pod.status.success(), "{static_pod:?}");
    let elsewhere = as_node("n1", &["create"], &mirror("elsewhere", "n2", json!({})));
    assert!(
        stderr(&elsewhere)
            .contains(r#"node "n1" can only create pods with spec.nodeName set to itself"#),
        "{elsewhere:?}"
    );
    let with_config = as_node(
        "n1",
        &["create"],
        &mirror(
            "configured",
            "n1",
            json!({"volumes": [{"name": "c", "configMap": {"name": "settings"}}]}),
        ),
    );
    assert!(
        stderr(&with_config).contains(r#"node "n1" can not create pods that reference configmaps"#),
        "{with_config:?}"
    );

    // Deletes: only its own pods.
    server.post_json(PODS, &pod("theirs", json!({"nodeName": "n2"})));
    let theirs = as_node("n1", &["delete", "pod", "theirs"], "");
    assert!(
        stderr(&theirs).contains(r#"pods "theirs" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself"#),
        "{theirs:?}"
    );
    let mine = as_node("n1", &["delete", "pod", "static", "--wait=false"], "");
    assert!(mine.status.success(), "{mine:?}");

    // Leases: its own, in kube-node-lease.
    let lease = |name: &str, namespace: &str| {
        json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
               "metadata": {"name": name, "namespace": namespace}, "spec": {"holderIdentity": name}})
        .to_string()
    };
    assert!(as_node("n1", &["create"], &lease("n1", "kube-node-lease"))
        .status
        .success());
    let foreign = as_node("n1", &["create"], &lease("n2", "kube-node-lease"));
    assert!(
        stderr(&foreign)
            .contains("can only access node lease with the same name as the requesting node"),
        "{foreign:?}"
    );

    // Without the group, a node-like name is an ordinary user.
    server.kubectl_line(
        "create clusterrolebinding lookalike --clusterrole=cluster-admin --user=system:node:n9",
    );
    let lookalike = common::wait_until(Duration::from_secs(5), "the binding in effect", || {
        let out = server.kubectl_stdin(
            &["create", "--as=system:node:n9", "-f", "-"],
            &pod("ordinary", json!({})).to_string(),
        );
        out.status.success().then_some(out)
    });
    assert!(lookalike.status.success());
}
