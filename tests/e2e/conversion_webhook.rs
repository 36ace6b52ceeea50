//! A CustomResourceDefinition served at two versions whose objects differ
//! in shape, converted by a real HTTPS conversion webhook (Python's
//! standard library) that Capstan calls with ConversionReview v1 and
//! verifies against the definition's caBundle.

use crate::common;
use crate::common::{item_names, TestServer};
use base64::Engine as _;
use serde_json::{json, Value};

/// v1 calls it spec.size, v2 spec.length.
const CONVERTER: &str = r#"
import json
from http.server import BaseHTTPRequestHandler

class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        request = review["request"]
        desired = request["desiredAPIVersion"]
        converted = []
        for obj in request["objects"]:
            spec = obj.setdefault("spec", {})
            if desired.endswith("/v2") and "size" in spec:
                spec["length"] = spec.pop("size")
            if desired.endswith("/v1") and "length" in spec:
                spec["size"] = spec.pop("length")
            obj["apiVersion"] = desired
            converted.append(obj)
        print("converted to", desired, flush=True)
        body = json.dumps({"apiVersion": review["apiVersion"], "kind": "ConversionReview",
                           "response": {"uid": request["uid"], "convertedObjects": converted,
                                        "result": {"status": "Success"}}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

"#;

fn crd(port: u16, ca: &str) -> Value {
    let version = |name: &str, field: &str, storage: bool| {
        json!({"name": name, "served": true, "storage": storage,
               "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                   "spec": {"type": "object", "properties": {field: {"type": "integer"}}}}}}})
    };
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [version("v1", "size", true), version("v2", "length", false)],
            "conversion": {"strategy": "Webhook", "webhook": {
                "conversionReviewVersions": ["v1"],
                "clientConfig": {
                    "url": format!("https://127.0.0.1:{port}/convert"),
                    "caBundle": base64::engine::general_purpose::STANDARD.encode(ca),
                }}}
        }
    })
}

#[test]
fn a_conversion_webhook_converts_between_served_versions() {
    let server = TestServer::start();
    let webhook = common::start_python_webhook(&server, CONVERTER);
    let (port, ca) = (webhook.port, webhook.ca.clone());

    server.apply(&crd(port, &ca).to_string());
    server.kubectl_ok(&[
        "wait",
        "--for=condition=Established",
        "crd/widgets.example.com",
        "--timeout=10s",
    ]);

    server.apply(r#"{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "old", "namespace": "default"}, "spec": {"size": 3}}"#);
    server.apply(r#"{"apiVersion": "example.com/v2", "kind": "Widget", "metadata": {"name": "new", "namespace": "default"}, "spec": {"length": 5}}"#);

    // Discovery prefers the highest version, kube-aware, as upstream.
    let group = server.get_json("/apis/example.com");
    assert_eq!(group["preferredVersion"]["version"], "v2");
    assert_eq!(group["versions"][1]["version"], "v1");

    let as_v2 = server.get_json("/apis/example.com/v2/namespaces/default/widgets/old");
    assert_eq!(as_v2["apiVersion"], "example.com/v2");
    assert_eq!(as_v2["spec"], json!({"length": 3}));
    let as_v1 = server.get_json("/apis/example.com/v1/namespaces/default/widgets/new");
    assert_eq!(
        as_v1["spec"],
        json!({"size": 5}),
        "stored at v1 through the webhook"
    );
    let listed = server.get_json("/apis/example.com/v2/namespaces/default/widgets");
    assert_eq!(item_names(&listed), ["new", "old"]);
    assert!(listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .all(|w| w["spec"].get("length").is_some()));
    let by_kubectl = server.kubectl_ok(&[
        "get",
        "widgets.v2.example.com",
        "new",
        "-o",
        "jsonpath={.spec.length}",
    ]);
    assert_eq!(by_kubectl, "5");
    assert!(webhook
        .process
        .stdout()
        .contains("converted to example.com/v1"));

    // With the webhook gone, reads at the other version fail as upstream's do.
    drop(webhook);
    let resp = server.get("/apis/example.com/v2/namespaces/default/widgets/old");
    assert_eq!(resp.status, 500, "{resp:?}");
    let status = resp.json();
    assert!(
        status.get("reason").is_none(),
        "upstream passes the failure on without a reason: {status:#}"
    );
    let message = status["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!(
            r#"conversion webhook for example.com/v1, Kind=Widget failed: Post "https://127.0.0.1:{port}/convert?timeout=30s": dial tcp 127.0.0.1:{port}: "#
        )),
        "{message}"
    );
    // The storage version needs no webhook.
    assert_eq!(
        server.get_json("/apis/example.com/v1/namespaces/default/widgets/old")["spec"],
        json!({"size": 3})
    );
}
