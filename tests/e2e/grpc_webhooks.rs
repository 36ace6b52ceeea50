//! Admission webhooks called over gRPC (`admission.capstan.dev/protocol:
//! grpc`) against a real gRPC server over TLS — a tonic server in this
//! test serving `capstan.webhook.v1.AdmissionWebhook`: mutation with
//! warnings, denial, timeouts under both failure policies, a server that
//! is down, dry runs, what the request carries, and the Review call through
//! grpcurl seeing the gRPC webhook's verdicts.

use crate::common;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::TestServer;
use base64::Engine as _;
use capstan_proto::json::JsonStruct;
use capstan_proto::webhook::v1 as pb;
use serde_json::{json, Value};

const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";

/// What the test's webhook was asked: the request and its grpc-timeout.
type Seen = Arc<Mutex<Vec<(pb::AdmissionRequest, Option<String>)>>>;

/// The webhook, by the name of the webhook called: `mutate…` labels the
/// object and warns, `deny…` refuses objects labelled deny=yes, `slow…`
/// answers after three seconds.
#[derive(Clone, Default)]
struct TestWebhook {
    seen: Seen,
}

#[tonic::async_trait]
impl pb::admission_webhook_server::AdmissionWebhook for TestWebhook {
    async fn admit(
        &self,
        request: tonic::Request<pb::AdmissionRequest>,
    ) -> Result<tonic::Response<pb::AdmissionResponse>, tonic::Status> {
        let timeout = request
            .metadata()
            .get("grpc-timeout")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let request = request.into_inner();
        self.seen.lock().unwrap().push((request.clone(), timeout));
        let object = request.object.as_ref().or(request.old_object.as_ref());
        let labels = object
            .and_then(|o| o.0.get("metadata"))
            .and_then(|m| m.get("labels"))
            .cloned()
            .unwrap_or_else(|| json!({}));
        let mut response = pb::AdmissionResponse {
            uid: request.uid.clone(),
            allowed: true,
            ..Default::default()
        };
        let name = request.webhook.as_str();
        if name.starts_with("mutate.") {
            let mut labels = labels;
            labels["mutated-over"] = json!("grpc");
            let patch = json!([{"op": "add", "path": "/metadata/labels", "value": labels}]);
            response.patch = Some(patch.to_string().into_bytes());
            response.patch_type = Some("JSONPatch".into());
            response.warnings = vec!["mutated over gRPC".into()];
        } else if name.starts_with("deny.") && labels["deny"] == "yes" {
            response.allowed = false;
            let status = json!({"code": 403, "reason": "Forbidden", "message": "labelled deny"});
            response.status = status.as_object().cloned().map(JsonStruct);
        } else if name.starts_with("slow.") {
            tokio::time::sleep(Duration::from_secs(3)).await;
        }
        Ok(tonic::Response::new(response))
    }
}

/// The test's gRPC webhook server, serving until dropped.
struct GrpcWebhook {
    _runtime: tokio::runtime::Runtime,
    port: u16,
    ca_bundle: String,
    seen: Seen,
}

fn start_grpc_webhook() -> GrpcWebhook {
    use tonic::transport::{Identity, Server, ServerTlsConfig};
    let (ca, cert, key) = common::loopback_certificates();
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let incoming = runtime
        .block_on(async {
            tonic::transport::server::TcpIncoming::bind("127.0.0.1:0".parse().expect("an address"))
        })
        .expect("a port");
    let port = incoming.local_addr().expect("the port").port();
    let webhook = TestWebhook::default();
    let seen = webhook.seen.clone();
    let server = Server::builder()
        .tls_config(ServerTlsConfig::new().identity(Identity::from_pem(cert, key)))
        .expect("TLS")
        .add_service(pb::admission_webhook_server::AdmissionWebhookServer::new(
            webhook,
        ))
        .serve_with_incoming(incoming);
    runtime.spawn(server);
    GrpcWebhook {
        _runtime: runtime,
        port,
        ca_bundle: base64::engine::general_purpose::STANDARD.encode(ca),
        seen,
    }
}

impl GrpcWebhook {
    fn hook(&self, name: &str, extra: Value) -> Value {
        let mut hook = json!({
            "name": name,
            "clientConfig": {"url": format!("https://127.0.0.1:{}/", self.port), "caBundle": self.ca_bundle},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}],
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
        });
        if let (Some(hook), Some(extra)) = (hook.as_object_mut(), extra.as_object()) {
            hook.extend(extra.clone());
        }
        hook
    }

    /// The requests the webhook `name` got about the object `object`.
    fn requests(&self, webhook: &str, object: &str) -> Vec<(pb::AdmissionRequest, Option<String>)> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .filter(|(r, _)| {
                r.webhook == webhook
                    && r.object
                        .as_ref()
                        .and_then(|o| o.0.get("metadata")?.get("name"))
                        == Some(&json!(object))
            })
            .cloned()
            .collect()
    }
}

fn configuration(kind: &str, name: &str, hooks: Vec<Value>) -> String {
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
           "metadata": {"name": name, "annotations": {"admission.capstan.dev/protocol": "grpc"}},
           "webhooks": hooks})
    .to_string()
}

fn config_map(name: &str, labels: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": name, "namespace": "default", "labels": labels},
           "data": {"k": "v"}})
}

#[test]
fn grpc_webhooks_mutate_deny_and_fail_as_https_ones() {
    let server = TestServer::start();
    let webhook = start_grpc_webhook();
    let closed_port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    server.apply(&configuration(
        "MutatingWebhookConfiguration",
        "label-over-grpc",
        vec![webhook.hook(
            "mutate.grpc.capstan.test",
            json!({"objectSelector": {"matchExpressions": [{"key": "hook", "operator": "DoesNotExist"}]}}),
        )],
    ));
    let selected = |hook: &str| json!({"objectSelector": {"matchLabels": {"hook": hook}}});
    let mut down = webhook.hook("down.grpc.capstan.test", selected("down"));
    down["clientConfig"]["url"] = json!(format!("https://127.0.0.1:{closed_port}/"));
    server.apply(&configuration(
        "ValidatingWebhookConfiguration",
        "check-over-grpc",
        vec![
            webhook.hook("deny.grpc.capstan.test", json!({})),
            {
                let mut slow = webhook.hook("slow.grpc.capstan.test", selected("slow"));
                slow["timeoutSeconds"] = json!(1);
                slow
            },
            {
                let mut slow =
                    webhook.hook("slow.ignored.grpc.capstan.test", selected("slow-ignored"));
                slow["timeoutSeconds"] = json!(1);
                slow["failurePolicy"] = json!("Ignore");
                slow
            },
            down,
        ],
    ));
    let mut probes = 0;
    common::wait_until(Duration::from_secs(5), "the webhooks in effect", || {
        probes += 1;
        let created = server.post_json(
            CONFIGMAPS,
            &config_map(&format!("probe{probes}"), json!({})),
        );
        (created.json()["metadata"]["labels"]["mutated-over"] == "grpc").then_some(())
    });

    // Mutated over gRPC; the warning reaches kubectl.
    let out = server.kubectl(&["create", "configmap", "one", "--from-literal=a=b"]);
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("Warning: mutated over gRPC"), "{stderr}");
    let one = server.get_json(&format!("{CONFIGMAPS}/one"));
    assert_eq!(one["metadata"]["labels"], json!({"mutated-over": "grpc"}));

    // The request carries AdmissionReview's fields, and the timeout.
    let (request, timeout) = webhook
        .requests("mutate.grpc.capstan.test", "one")
        .pop()
        .expect("the mutating webhook's request");
    assert_eq!(request.uid.len(), 36, "{request:?}");
    assert_eq!(request.operation, "CREATE");
    assert_eq!(request.namespace, "default");
    assert_eq!(
        request.kind,
        Some(pb::GroupVersionKind {
            group: "".into(),
            version: "v1".into(),
            kind: "ConfigMap".into()
        })
    );
    assert_eq!(request.request_kind, request.kind);
    assert_eq!(
        request.resource.as_ref().map(|r| r.resource.as_str()),
        Some("configmaps")
    );
    let user = request.user_info.as_ref().expect("the user");
    assert_eq!(user.username, "admin");
    assert!(
        user.groups.iter().any(|g| g == "system:masters"),
        "{user:?}"
    );
    assert!(!request.dry_run);
    assert_eq!(
        request.options.as_ref().map(|o| o.0["kind"].clone()),
        Some(json!("CreateOptions"))
    );
    assert_eq!(
        request.object.as_ref().map(|o| o.0["data"].clone()),
        Some(json!({"a": "b"}))
    );
    // Default timeoutSeconds 10, as grpc-timeout (at most 10 s left).
    let timeout = timeout.expect("a grpc-timeout");
    assert!(
        timeout.ends_with('m') || timeout.ends_with('u') || timeout.ends_with('S'),
        "{timeout}"
    );
    // The validating webhook saw the object as mutated.
    let (validated, _) = webhook
        .requests("deny.grpc.capstan.test", "one")
        .pop()
        .expect("the validating webhook's request");
    assert_eq!(
        validated
            .object
            .as_ref()
            .map(|o| o.0["metadata"]["labels"].clone()),
        Some(json!({"mutated-over": "grpc"}))
    );

    // Denied with the webhook's code and message.
    let denied = server.post_json(CONFIGMAPS, &config_map("two", json!({"deny": "yes"})));
    let status = denied.assert_status(403, "Forbidden");
    assert_eq!(
        status["message"],
        r#"admission webhook "deny.grpc.capstan.test" denied the request: labelled deny"#
    );
    let out = server.kubectl_ok(&[
        "create",
        "configmap",
        "three",
        "--dry-run=server",
        "-o",
        "name",
    ]);
    assert_eq!(
        out.trim(),
        "configmap/three",
        "a dry run the webhooks allow"
    );
    let dry_runs = webhook.requests("deny.grpc.capstan.test", "three");
    assert!(
        !dry_runs.is_empty() && dry_runs.iter().all(|(r, _)| r.dry_run),
        "{dry_runs:?}"
    );
    assert_eq!(server.get(&format!("{CONFIGMAPS}/three")).status, 404);

    // Too slow: failurePolicy Fail refuses, Ignore lets the write through.
    let slow = server.post_json(CONFIGMAPS, &config_map("slow", json!({"hook": "slow"})));
    let status = slow.assert_status(500, "InternalError");
    assert_eq!(
        status["message"],
        r#"Internal error occurred: failed calling webhook "slow.grpc.capstan.test": failed to call webhook: rpc error: code = DeadlineExceeded desc = context deadline exceeded"#
    );
    let started = Instant::now();
    let ignored = server.post_json(
        CONFIGMAPS,
        &config_map("slow-ignored", json!({"hook": "slow-ignored"})),
    );
    assert_eq!(ignored.status, 201, "{ignored:?}");
    assert!(
        started.elapsed() < Duration::from_millis(2500),
        "{:?}",
        started.elapsed()
    );

    // Down: the transport's error, under failurePolicy Fail.
    let down = server.post_json(CONFIGMAPS, &config_map("down", json!({"hook": "down"})));
    let status = down.assert_status(500, "InternalError");
    let message = status["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with(
            r#"Internal error occurred: failed calling webhook "down.grpc.capstan.test": failed to call webhook: rpc error: code = Unavailable desc = "#
        ),
        "{message}"
    );
    assert_eq!(server.get(&format!("{CONFIGMAPS}/down")).status, 404);

    // The Review call sees the gRPC webhooks' verdicts.
    let configmaps = json!({"group": "", "version": "v1", "resource": "configmaps"});
    let answer = server.grpc_ok(
        "capstan.v1.Admission/Review",
        &json!({"resource": configmaps, "namespace": "default", "operation": "CREATE",
                "object": config_map("reviewed", json!({"deny": "yes"}))}),
    );
    assert_eq!(
        answer["deniedBy"], r#"admission webhook "deny.grpc.capstan.test""#,
        "{answer}"
    );
    let answer = server.grpc_ok(
        "capstan.v1.Admission/Review",
        &json!({"resource": configmaps, "namespace": "default", "operation": "CREATE",
                "object": config_map("reviewed", json!({}))}),
    );
    assert_eq!(answer["allowed"], true, "{answer}");
    assert_eq!(
        answer["object"]["body"]["metadata"]["labels"]["mutated-over"],
        "grpc"
    );
    assert_eq!(answer["warnings"], json!(["mutated over gRPC"]));
    assert_eq!(server.get(&format!("{CONFIGMAPS}/reviewed")).status, 404);
}

#[test]
fn the_protocol_annotation_names_grpc_or_https() {
    let server = TestServer::start();
    let manifest = json!({"apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "odd", "annotations": {"admission.capstan.dev/protocol": "http3"}},
        "webhooks": []});
    let out = server.kubectl_stdin(&["create", "-f", "-"], &manifest.to_string());
    assert!(!out.status.success(), "{out:?}");
    let err = common::text(&out.stderr);
    assert!(
        err.contains(r#"The ValidatingWebhookConfiguration "odd" is invalid: metadata.annotations[admission.capstan.dev/protocol]: Unsupported value: "http3": supported values: "grpc", "https""#),
        "{err}"
    );
}
