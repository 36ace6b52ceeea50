//! Admission webhooks against a real HTTPS webhook server (Python's
//! standard library): mutation by JSONPatch with warnings, denials with the
//! webhook's code, failure policies when the webhook is slow or down,
//! selectors, the AdmissionReview Capstan sends, deletes, dry runs, and
//! configurations never sent to webhooks.

use crate::common;
use base64::Engine as _;
use std::time::{Duration, Instant};

use crate::common::{Streaming, TestServer};
use serde_json::{json, Value};

/// The webhook's handler (`common::start_python_webhook` serves it): by
/// path, /mutate labels the object, /deny refuses objects labelled
/// deny=yes, /slow answers after three seconds; every review's request is
/// printed as one JSON line.
const WEBHOOK: &str = r#"
import base64, json, ssl, time
from http.server import BaseHTTPRequestHandler

class Handler(BaseHTTPRequestHandler):
    # Keep-alive, as webhook servers usually are: connections are reused.
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        print("connection", flush=True)

    def do_POST(self):
        review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        request = review["request"]
        print("review", self.path, json.dumps(request), flush=True)
        response = {"uid": request["uid"], "allowed": True}
        obj = request.get("object") or request.get("oldObject") or {}
        labels = obj.get("metadata", {}).get("labels") or {}
        if self.path.startswith("/mutate"):
            patch = [{"op": "add", "path": "/metadata/labels", "value": dict(labels, mutated="true")}]
            response["patch"] = base64.b64encode(json.dumps(patch).encode()).decode()
            response["patchType"] = "JSONPatch"
            response["warnings"] = ["mutated by the test webhook"]
        elif self.path.startswith("/deny") and labels.get("deny") == "yes":
            response["allowed"] = False
            response["status"] = {"code": 403, "reason": "Forbidden", "message": "labelled deny"}
        elif self.path.startswith("/slow"):
            time.sleep(3)
        body = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                           "response": response}).encode()
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            pass

    def log_message(self, *args):
        pass

"#;

struct Webhook {
    process: Streaming,
    port: u16,
    ca_bundle: String,
}

fn start_webhook(server: &TestServer) -> Webhook {
    let started = common::start_python_webhook(server, WEBHOOK);
    Webhook {
        process: started.process,
        port: started.port,
        ca_bundle: base64::engine::general_purpose::STANDARD.encode(started.ca),
    }
}

impl Webhook {
    /// One webhook entry calling `path` for `operations` on configmaps.
    fn hook(&self, name: &str, path: &str, operations: &[&str], extra: Value) -> Value {
        let mut hook = json!({
            "name": name,
            "clientConfig": {"url": format!("https://127.0.0.1:{}{path}", self.port), "caBundle": self.ca_bundle},
            "rules": [{"operations": operations, "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}],
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
        });
        if let (Some(hook), Some(extra)) = (hook.as_object_mut(), extra.as_object()) {
            hook.extend(extra.clone());
        }
        hook
    }

    /// The request of the review sent to `path` about the object `name`.
    #[track_caller]
    fn review_of(&self, path: &str, name: &str) -> Value {
        self.reviews(path)
            .into_iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("no review of {name} at {path} in {}", self.process.stdout()))
    }

    /// The requests of the reviews sent to `path` so far (the webhook
    /// prints the path with its query, `?timeout=10s`).
    fn reviews(&self, path: &str) -> Vec<Value> {
        let prefix = format!("review {path}?");
        self.process
            .stdout()
            .lines()
            .filter_map(|l| l.strip_prefix(prefix.as_str()))
            .filter_map(|l| l.split_once(' '))
            .map(|(_, request)| serde_json::from_str(request).expect("a review request"))
            .collect()
    }
}

fn configuration(kind: &str, name: &str, hooks: Vec<Value>) -> String {
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
           "metadata": {"name": name}, "webhooks": hooks})
    .to_string()
}

fn config_map(name: &str, labels: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": name, "namespace": "default", "labels": labels},
           "data": {"k": "v"}})
}

const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";

#[test]
fn webhooks_mutate_deny_and_see_what_upstream_sends() {
    let server = TestServer::start();
    let webhook = start_webhook(&server);
    server.apply(&configuration(
        "MutatingWebhookConfiguration",
        "label-them",
        vec![webhook.hook(
            "label.capstan.test",
            "/mutate",
            &["CREATE"],
            json!({"objectSelector": {"matchExpressions": [{"key": "skip", "operator": "DoesNotExist"}]}}),
        )],
    ));
    server.apply(&configuration(
        "ValidatingWebhookConfiguration",
        "deny-them",
        vec![webhook.hook(
            "deny.capstan.test",
            "/deny",
            &["CREATE", "UPDATE", "DELETE"],
            json!({}),
        )],
    ));
    // The configuration is read from its watch cache: wait until it counts.
    let mut probes = 0;
    common::wait_until(
        std::time::Duration::from_secs(5),
        "the webhooks in effect",
        || {
            probes += 1;
            let created = server.post_json(
                CONFIGMAPS,
                &config_map(&format!("probe{probes}"), json!({})),
            );
            (created.json()["metadata"]["labels"]["mutated"] == "true").then_some(())
        },
    );

    // Mutated: the label is added and the webhook's warning reaches kubectl.
    let out = server.kubectl(&["create", "configmap", "one", "--from-literal=a=b"]);
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Warning: mutated by the test webhook"),
        "{stderr}"
    );
    let one = server.get_json(&format!("{CONFIGMAPS}/one"));
    assert_eq!(one["metadata"]["labels"], json!({"mutated": "true"}));

    // The review as upstream builds it.
    let review = webhook.review_of("/mutate", "one");
    assert_eq!(review["operation"], "CREATE");
    assert_eq!(review["namespace"], "default");
    assert_eq!(
        review["kind"],
        json!({"group": "", "version": "v1", "kind": "ConfigMap"})
    );
    assert_eq!(
        review["resource"],
        json!({"group": "", "version": "v1", "resource": "configmaps"})
    );
    assert_eq!(review["requestKind"], review["kind"]);
    assert_eq!(review["userInfo"]["username"], "admin");
    assert_eq!(review["userInfo"]["groups"][0], "system:masters");
    assert_eq!(review["dryRun"], false);
    assert_eq!(review["options"]["kind"], "CreateOptions");
    assert_eq!(review["options"]["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(review["object"]["data"], json!({"a": "b"}));
    assert!(review.get("oldObject").is_none());
    assert_eq!(review["uid"].as_str().map(str::len), Some(36));

    // The object selector: a labelled object is not sent to the mutator.
    let skipped = server.post_json(CONFIGMAPS, &config_map("skipped", json!({"skip": "1"})));
    assert_eq!(skipped.status, 201, "{skipped:?}");
    assert_eq!(skipped.json()["metadata"]["labels"], json!({"skip": "1"}));

    // Denied, with the webhook's code, reason and message; nothing stored.
    let denied = server.post_json(CONFIGMAPS, &config_map("no", json!({"deny": "yes"})));
    let status = denied.assert_status(403, "Forbidden");
    assert_eq!(
        status["message"],
        r#"admission webhook "deny.capstan.test" denied the request: labelled deny"#
    );
    assert_eq!(server.get(&format!("{CONFIGMAPS}/no")).status, 404);
    let err = server.kubectl_err(&["label", "configmap", "one", "deny=yes"]);
    assert!(
        err.contains(r#"admission webhook "deny.capstan.test" denied the request: labelled deny"#),
        "{err}"
    );

    // A delete is reviewed with the stored object as oldObject.
    let kept = server.post_json(
        CONFIGMAPS,
        &config_map("kept", json!({"skip": "1", "deny": "yes"})),
    );
    assert_eq!(kept.status, 403, "{kept:?}");
    let deletable = server.post_json(CONFIGMAPS, &config_map("gone", json!({"skip": "1"})));
    assert_eq!(deletable.status, 201);
    server.kubectl_ok(&["delete", "configmap", "gone"]);
    let delete_review = webhook
        .reviews("/deny")
        .into_iter()
        .find(|r| r["operation"] == "DELETE")
        .expect("a review of the delete");
    assert_eq!(delete_review["name"], "gone");
    assert!(delete_review.get("object").is_none());
    assert_eq!(delete_review["oldObject"]["metadata"]["name"], "gone");
    assert_eq!(delete_review["options"]["kind"], "DeleteOptions");

    // A dry run runs the chain, says so, and stores nothing.
    let out = server.kubectl(&[
        "create",
        "configmap",
        "dry",
        "--from-literal=a=b",
        "--dry-run=server",
        "-o",
        "json",
    ]);
    assert!(out.status.success(), "{out:?}");
    let dry: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(dry["metadata"]["labels"]["mutated"], "true");
    assert_eq!(server.get(&format!("{CONFIGMAPS}/dry")).status, 404);
    let dry_review = webhook.review_of("/mutate", "dry");
    assert_eq!(dry_review["dryRun"], true);

    // Configurations themselves are never sent to webhooks, so a webhook
    // matching everything cannot lock out its own repair.
    server.apply(&configuration(
        "ValidatingWebhookConfiguration",
        "sees-all",
        vec![webhook.hook(
            "all.capstan.test",
            "/deny",
            &["*"],
            json!({"rules": [
                {"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]}
            ]}),
        )],
    ));
    // In effect once it reviews a Secret (no other webhook matches those);
    // its own delete is then never sent to it.
    let mut probes = 0;
    common::wait_until(
        std::time::Duration::from_secs(5),
        "the catch-all webhook in effect",
        || {
            probes += 1;
            let secret = json!({"apiVersion": "v1", "kind": "Secret",
                            "metadata": {"name": format!("probe-secret{probes}"), "namespace": "default"}});
            server.post_json("/api/v1/namespaces/default/secrets", &secret);
            webhook
                .reviews("/deny")
                .iter()
                .any(|r| r["kind"]["kind"] == "Secret")
                .then_some(())
        },
    );
    server.kubectl_ok(&["delete", "validatingwebhookconfiguration", "sees-all"]);
    assert!(webhook
        .reviews("/deny")
        .iter()
        .all(|r| r["kind"]["group"] != "admissionregistration.k8s.io"));

    // NamespaceLifecycle comes first in the chain: a create in a missing
    // namespace is refused before any webhook sees it.
    let mut orphan = config_map("orphan", json!({}));
    orphan["metadata"]["namespace"] = json!("nope");
    let missing = server.post_json("/api/v1/namespaces/nope/configmaps", &orphan);
    let status = missing.assert_status(404, "NotFound");
    assert_eq!(status["message"], r#"namespaces "nope" not found"#);
    assert!(webhook
        .reviews("/mutate")
        .iter()
        .all(|r| r["namespace"] != "nope"));

    // Connections are kept alive and reused, as Go's client does.
    let output = webhook.process.stdout();
    let connections = output.lines().filter(|l| *l == "connection").count();
    let calls = output.lines().filter(|l| l.starts_with("review ")).count();
    assert!(
        connections * 2 < calls,
        "{connections} connections for {calls} calls"
    );

    // Upstream's admission metrics.
    let metrics = server.kubectl_ok(&["get", "--raw", "/metrics"]);
    for line in [
        r#"apiserver_admission_webhook_rejection_count{error_type="no_error",name="deny.capstan.test",operation="CREATE",rejection_code="403",type="validating"}"#,
        r#"apiserver_admission_webhook_request_total{code="200",name="label.capstan.test",operation="CREATE",rejected="false",type="admit"}"#,
        r#"apiserver_admission_webhook_admission_duration_seconds_count{name="deny.capstan.test",operation="DELETE",rejected="false",type="validating"}"#,
        r#"apiserver_admission_step_admission_duration_seconds_count{operation="CREATE",rejected="true",type="validate"}"#,
        r#"apiserver_admission_controller_admission_duration_seconds_count{name="ValidatingAdmissionWebhook",operation="CREATE",rejected="true",type="validate"}"#,
        r#"apiserver_admission_controller_admission_duration_seconds_count{name="MutatingAdmissionWebhook",operation="CREATE",rejected="false",type="admit"}"#,
        r#"apiserver_admission_controller_admission_duration_seconds_count{name="NamespaceLifecycle",operation="CREATE",rejected="false",type="admit"}"#,
        r#"apiserver_admission_controller_admission_duration_seconds_count{name="ResourceQuota",operation="CREATE",rejected="false",type="validate"}"#,
    ] {
        assert!(metrics.contains(line), "no {line} in\n{metrics}");
    }
}

#[test]
fn failure_policies_decide_what_a_slow_or_absent_webhook_means() {
    let server = TestServer::start();
    let webhook = start_webhook(&server);
    let closed_port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let down = |name: &str, policy: &str| {
        let mut hook = webhook.hook(name, "/down", &["CREATE"], json!({"failurePolicy": policy}));
        hook["clientConfig"]["url"] = json!(format!("https://127.0.0.1:{closed_port}/down"));
        hook
    };
    server.apply(&configuration(
        "ValidatingWebhookConfiguration",
        "unreliable",
        vec![
            webhook.hook(
                "slow.capstan.test",
                "/slow",
                &["CREATE"],
                json!({"timeoutSeconds": 1, "objectSelector": {"matchLabels": {"hook": "slow"}}}),
            ),
            webhook.hook(
                "slow-ignored.capstan.test",
                "/slow",
                &["CREATE"],
                json!({"timeoutSeconds": 1, "failurePolicy": "Ignore",
                       "objectSelector": {"matchLabels": {"hook": "slow-ignored"}}}),
            ),
            {
                let mut hook = down("down.capstan.test", "Fail");
                hook["objectSelector"] = json!({"matchLabels": {"hook": "down"}});
                hook
            },
            {
                let mut hook = down("down-ignored.capstan.test", "Ignore");
                hook["objectSelector"] = json!({"matchLabels": {"hook": "down-ignored"}});
                hook
            },
            webhook.hook(
                "conditional.capstan.test",
                "/deny",
                &["CREATE"],
                json!({"objectSelector": {"matchLabels": {"hook": "conditional"}},
                       "matchConditions": [{"name": "not-exempt", "expression": "object.metadata.name != 'exempt'"}]}),
            ),
            webhook.hook(
                "broken-condition.capstan.test",
                "/deny",
                &["CREATE"],
                json!({"objectSelector": {"matchLabels": {"hook": "broken"}},
                       "matchConditions": [{"name": "broken", "expression": "object.spec.replicas == 1"}]}),
            ),
        ],
    ));
    let port = webhook.port;
    let status = common::wait_until(
        std::time::Duration::from_secs(5),
        "the webhooks in effect",
        || {
            let resp = server.post_json(CONFIGMAPS, &config_map("slow", json!({"hook": "slow"})));
            (resp.status == 500).then(|| resp.json())
        },
    );
    assert_eq!(status["reason"], "InternalError");
    assert_eq!(
        status["message"],
        format!(
            r#"Internal error occurred: failed calling webhook "slow.capstan.test": failed to call webhook: Post "https://127.0.0.1:{port}/slow?timeout=1s": context deadline exceeded"#
        )
    );
    let ignored = server.post_json(
        CONFIGMAPS,
        &config_map("slow-ignored", json!({"hook": "slow-ignored"})),
    );
    assert_eq!(ignored.status, 201, "{ignored:?}");

    let refused = server.post_json(CONFIGMAPS, &config_map("down", json!({"hook": "down"})));
    let status = refused.assert_status(500, "InternalError");
    let message = status["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!(
            r#"Internal error occurred: failed calling webhook "down.capstan.test": failed to call webhook: Post "https://127.0.0.1:{closed_port}/down?timeout=10s": dial tcp 127.0.0.1:{closed_port}: "#
        )),
        "{message}"
    );
    let ignored = server.post_json(
        CONFIGMAPS,
        &config_map("down-ignored", json!({"hook": "down-ignored"})),
    );
    assert_eq!(ignored.status, 201, "{ignored:?}");
    assert_eq!(server.get(&format!("{CONFIGMAPS}/down")).status, 404);

    // matchConditions: a false one skips the webhook; one that cannot be
    // evaluated fails the request under failurePolicy Fail.
    let conditional = json!({"hook": "conditional", "deny": "yes"});
    let exempt = server.post_json(CONFIGMAPS, &config_map("exempt", conditional.clone()));
    assert_eq!(exempt.status, 201, "{exempt:?}");
    let other = server.post_json(CONFIGMAPS, &config_map("other", conditional));
    other.assert_status(403, "Forbidden");
    let broken = server.post_json(CONFIGMAPS, &config_map("broken", json!({"hook": "broken"})));
    let status = broken.assert_status(403, "Forbidden");
    let message = status["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            r#"configmaps "broken" is forbidden: expression 'object.spec.replicas == 1' resulted in error: "#
        ),
        "{message}"
    );
}

/// Webhooks that fail open one after another never outlast the request:
/// each gets at most what is left of the request's deadline (its
/// `timeout` parameter here), so together they cannot fail a request
/// (kubernetes#128162); a webhook under failurePolicy Fail left no time
/// fails it at once.
#[test]
fn webhook_timeouts_never_outlast_the_requests_deadline() {
    let server = TestServer::start();
    let webhook = start_webhook(&server);
    let slow = |name: &str, selected: &str, policy: &str| {
        webhook.hook(
            name,
            "/slow",
            &["CREATE"],
            json!({"timeoutSeconds": 2, "failurePolicy": policy,
                   "objectSelector": {"matchExpressions": [{"key": "hook", "operator": "In", "values": selected.split(',').collect::<Vec<_>>()}]}}),
        )
    };
    server.apply(&configuration(
        "MutatingWebhookConfiguration",
        "slow-chain",
        vec![
            slow("first.capstan.test", "chain,chain-fail", "Ignore"),
            slow("second.capstan.test", "chain,chain-fail", "Ignore"),
            slow("third.capstan.test", "chain,chain-fail", "Ignore"),
        ],
    ));
    server.apply(&configuration(
        "ValidatingWebhookConfiguration",
        "slow-check",
        vec![slow("last.capstan.test", "chain-fail", "Fail")],
    ));
    // Until the configurations are in effect, writes pass quickly.
    common::wait_until(Duration::from_secs(15), "the webhooks in effect", || {
        (!webhook.reviews("/slow").is_empty())
            .then_some(())
            .or_else(|| {
                server.post_json(
                    &format!("{CONFIGMAPS}?dryRun=All&timeout=1s"),
                    &config_map("probe", json!({"hook": "chain"})),
                );
                None
            })
    });

    let started = Instant::now();
    let created = server.post_json(
        &format!("{CONFIGMAPS}?timeout=3s"),
        &config_map("chained", json!({"hook": "chain"})),
    );
    let took = started.elapsed();
    assert_eq!(created.status, 201, "{created:?}");
    // Three webhooks of 2 s each would take 6 s; the deadline allows 3.
    assert!(took < Duration::from_millis(4500), "took {took:?}");

    let refused = server.post_json(
        &format!("{CONFIGMAPS}?timeout=3s"),
        &config_map("chained-fail", json!({"hook": "chain-fail"})),
    );
    let status = refused.assert_status(500, "InternalError");
    let port = webhook.port;
    assert_eq!(
        status["message"],
        format!(
            r#"Internal error occurred: failed calling webhook "last.capstan.test": failed to call webhook: Post "https://127.0.0.1:{port}/slow": context deadline exceeded"#
        )
    );

    // An unreadable timeout is refused as upstream's WithRequestDeadline does.
    let bad = server.post_json(
        &format!("{CONFIGMAPS}?timeout=soon"),
        &config_map("bad", json!({})),
    );
    let status = bad.assert_status(400, "BadRequest");
    assert_eq!(
        status["message"],
        r#"invalid timeout specified in the request URL - time: invalid duration "soon""#
    );
}

#[test]
fn invalid_webhook_configurations_get_upstreams_answers() {
    let server = TestServer::start();
    let body: Value = serde_json::from_str(&configuration(
        "ValidatingWebhookConfiguration",
        "bad",
        vec![json!({
            "name": "bad",
            "clientConfig": {"url": "http://127.0.0.1/x"},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}],
            "admissionReviewVersions": ["v1"],
            "timeoutSeconds": 40
        })],
    ))
    .unwrap();
    let status = server
        .post_json(
            "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
            &body,
        )
        .assert_status(422, "Invalid");
    assert_eq!(
        status["message"],
        r#"ValidatingWebhookConfiguration.admissionregistration.k8s.io "bad" is invalid: [webhooks[0].name: Invalid value: "bad": should be a domain with at least three segments separated by dots, webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun, webhooks[0].timeoutSeconds: Invalid value: 40: the timeout value must be between 1 and 30 seconds, webhooks[0].clientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]]"#
    );
    // Defaults as upstream's, and `kubectl get` prints the webhook count.
    server.apply(&configuration(
        "MutatingWebhookConfiguration",
        "good",
        vec![json!({
            "name": "good.capstan.test",
            "clientConfig": {"service": {"name": "hooks", "namespace": "default"}},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}],
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"]
        })],
    ));
    let good = server.kubectl_json(&["get", "mutatingwebhookconfiguration", "good"]);
    let hook = &good["webhooks"][0];
    assert_eq!(hook["failurePolicy"], "Fail");
    assert_eq!(hook["matchPolicy"], "Equivalent");
    assert_eq!(hook["timeoutSeconds"], 10);
    assert_eq!(hook["reinvocationPolicy"], "Never");
    assert_eq!(hook["namespaceSelector"], json!({}));
    assert_eq!(hook["rules"][0]["scope"], "*");
    assert_eq!(hook["clientConfig"]["service"]["port"], 443);
    assert_eq!(good["metadata"]["generation"], 1);
    let table = server.kubectl_ok(&["get", "mutatingwebhookconfigurations"]);
    assert!(table.starts_with("NAME   WEBHOOKS   AGE"), "{table}");
}

#[test]
fn match_policy_equivalent_sends_the_version_the_rules_name() {
    let server = TestServer::start();
    let webhook = start_webhook(&server);
    let version = |name: &str, storage: bool| {
        json!({"name": name, "served": true, "storage": storage,
               "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}})
    };
    server.apply(
        &json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "gizmos.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": "gizmos", "kind": "Gizmo"},
                     "versions": [version("v1", true), version("v2", false)]}
        })
        .to_string(),
    );
    server.kubectl_ok(&[
        "wait",
        "--for=condition=Established",
        "crd/gizmos.example.com",
        "--timeout=10s",
    ]);
    let mut hook = webhook.hook("v2-only.capstan.test", "/deny", &["CREATE"], json!({}));
    hook["rules"] = json!([{"operations": ["CREATE"], "apiGroups": ["example.com"],
                            "apiVersions": ["v2"], "resources": ["gizmos"]}]);
    let mut exact = hook.clone();
    exact["name"] = json!("v2-exact.capstan.test");
    exact["matchPolicy"] = json!("Exact");
    server.apply(&configuration(
        "ValidatingWebhookConfiguration",
        "gizmos",
        vec![hook, exact],
    ));
    let gizmos = "/apis/example.com/v1/namespaces/default/gizmos";
    let gizmo = |name: &str, labels: Value| {
        json!({"apiVersion": "example.com/v1", "kind": "Gizmo",
               "metadata": {"name": name, "labels": labels}, "spec": {"size": 1}})
    };
    // Created at v1; the Equivalent webhook's rule names v2, so it is
    // called with the object converted to v2, the request's own version in
    // requestKind.
    let mut attempts = 0;
    let denied = common::wait_until(
        std::time::Duration::from_secs(5),
        "the webhook in effect",
        || {
            attempts += 1;
            let resp = server.post_json(
                gizmos,
                &gizmo(&format!("no{attempts}"), json!({"deny": "yes"})),
            );
            (resp.status == 403).then(|| resp.json())
        },
    );
    assert_eq!(
        denied["message"],
        r#"admission webhook "v2-only.capstan.test" denied the request: labelled deny"#
    );
    let review = webhook.review_of("/deny", &format!("no{attempts}"));
    assert_eq!(
        review["kind"],
        json!({"group": "example.com", "version": "v2", "kind": "Gizmo"})
    );
    assert_eq!(review["resource"]["version"], "v2");
    assert_eq!(review["requestKind"]["version"], "v1");
    assert_eq!(review["object"]["apiVersion"], "example.com/v2");
    // Only the Equivalent one was called: the Exact one names v2 only.
    let created = server.post_json(gizmos, &gizmo("yes", json!({})));
    assert_eq!(created.status, 201, "{created:?}");
    let of_yes = webhook
        .reviews("/deny")
        .into_iter()
        .filter(|r| r["name"] == "yes")
        .count();
    assert_eq!(of_yes, 1);
}

/// A webhook server that offers HTTP/2 (ALPN `h2`) is called over it, every
/// call on one shared connection — as Go's transport does — while the
/// Python servers above, which offer only HTTP/1.1, get HTTP/1.1.
#[test]
fn webhooks_that_offer_http2_are_called_over_one_http2_connection() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};

    let server = TestServer::start();
    let (ca, cert, key) = common::loopback_certificates();
    let connections = Arc::new(AtomicUsize::new(0));
    let versions: Arc<Mutex<Vec<String>>> = Arc::default();
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("a port");
    let port = listener.local_addr().expect("the port").port();
    {
        use rustls::pki_types::pem::PemObject;
        let certs = rustls::pki_types::CertificateDer::pem_slice_iter(cert.as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .expect("the certificate");
        let key =
            rustls::pki_types::PrivateKeyDer::from_pem_slice(key.as_bytes()).expect("the key");
        let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .expect("TLS");
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let (connections, versions) = (connections.clone(), versions.clone());
        runtime.spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let Ok(stream) = acceptor.accept(stream).await else {
                    continue;
                };
                connections.fetch_add(1, Ordering::SeqCst);
                let versions = versions.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                        let versions = versions.clone();
                        async move {
                            use http_body_util::BodyExt as _;
                            versions.lock().unwrap().push(format!("{:?}", request.version()));
                            let body = request.into_body().collect().await?.to_bytes();
                            let review: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                            let answer = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                                "response": {"uid": review["request"]["uid"], "allowed": true}});
                            Ok::<_, hyper::Error>(hyper::Response::new(http_body_util::Full::new(
                                bytes::Bytes::from(answer.to_string()),
                            )))
                        }
                    });
                    let _ = hyper_util::server::conn::auto::Builder::new(
                        hyper_util::rt::TokioExecutor::new(),
                    )
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
                });
            }
        });
    }
    let ca_bundle = base64::engine::general_purpose::STANDARD.encode(ca);
    server.apply(&configuration(
        "ValidatingWebhookConfiguration",
        "over-http2",
        vec![json!({
            "name": "h2.capstan.test",
            "clientConfig": {"url": format!("https://127.0.0.1:{port}/check"), "caBundle": ca_bundle},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}],
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
        })],
    ));
    common::wait_until(Duration::from_secs(5), "the webhook in effect", || {
        server.post_json(
            &format!("{CONFIGMAPS}?dryRun=All"),
            &config_map("probe", json!({})),
        );
        (!versions.lock().unwrap().is_empty()).then_some(())
    });
    for i in 0..20 {
        let created = server.post_json(CONFIGMAPS, &config_map(&format!("cm{i}"), json!({})));
        assert_eq!(created.status, 201, "{created:?}");
    }
    let seen = versions.lock().unwrap().clone();
    assert!(seen.len() >= 21, "{seen:?}");
    assert!(seen.iter().all(|v| v == "HTTP/2.0"), "{seen:?}");
    assert_eq!(connections.load(Ordering::SeqCst), 1);
}
