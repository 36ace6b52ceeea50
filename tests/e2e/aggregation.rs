//! The aggregation layer against a real extension API server: a Python
//! standard-library HTTPS server that trusts only the front-proxy CA
//! Capstan publishes in `kube-system/extension-apiserver-authentication`,
//! reads the caller from the `X-Remote-*` headers, and serves
//! `metrics.k8s.io/v1beta1` (for `kubectl top`) and a `wardle.example.com`
//! group. Capstan checks its availability, merges its discovery, forwards
//! requests it has authorized, and answers 503 while it is down without
//! breaking discovery of everything else.

use std::process::Command;
use std::time::Duration;

use base64::Engine as _;
use serde_json::Value;

use crate::common::{self, Streaming, TestServer};

/// The extension API server: its handler, then the HTTPS server that
/// requires a client certificate from the CA file it is given, on the
/// port it is given (0 for any), printing the port it got.
const EXTENSION_SERVER: &str = r##"
import json, ssl, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

RESOURCES = {
    "metrics.k8s.io/v1beta1": [
        {"name": "nodes", "singularName": "", "namespaced": False, "kind": "NodeMetrics", "verbs": ["get", "list"]},
        {"name": "pods", "singularName": "", "namespaced": True, "kind": "PodMetrics", "verbs": ["get", "list"]},
    ],
    "wardle.example.com/v1alpha1": [
        {"name": "flunders", "singularName": "flunder", "namespaced": True, "kind": "Flunder", "verbs": ["get", "list"]},
    ],
}
USAGE = {"cpu": "250m", "memory": "256Mi"}
GVK = {"group": "wardle.example.com", "kind": "Flunder", "version": "v1alpha1"}
FLUNDER_REF = {"$ref": "#/components/schemas/com.example.wardle.v1alpha1.Flunder"}
OPENAPI_V2 = {"swagger": "2.0", "info": {"title": "wardle", "version": "v1alpha1"},
              "paths": {"/apis/wardle.example.com/v1alpha1/namespaces/{namespace}/flunders/{name}": {"get": {
                  "x-kubernetes-action": "get", "x-kubernetes-group-version-kind": GVK,
                  "responses": {"200": {"description": "OK",
                                        "schema": {"$ref": "#/definitions/com.example.wardle.v1alpha1.Flunder"}}}}},
                        "/version": {"get": {"responses": {"200": {"description": "OK"}}}}},
              "definitions": {"com.example.wardle.v1alpha1.Flunder": {
                  "type": "object", "description": "A Flunder is a test object of the wardle server."},
                  "io.k8s.apimachinery.pkg.apis.meta.v1.Status": {"type": "object", "description": "wardle's own"}}}
OPENAPI = {"openapi": "3.0.0", "info": {"title": "wardle", "version": "v1alpha1"},
           "paths": {"/apis/wardle.example.com/v1alpha1/namespaces/{namespace}/flunders/{name}": {"get": {
               "x-kubernetes-action": "get", "x-kubernetes-group-version-kind": GVK,
               "responses": {"200": {"description": "OK",
                                     "content": {"application/json": {"schema": FLUNDER_REF}}}}}}},
           "components": {"schemas": {"com.example.wardle.v1alpha1.Flunder": {
               "type": "object", "description": "A Flunder is a test object of the wardle server.",
               "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
                              "metadata": {"type": "object"},
                              "spec": {"type": "object", "description": "What the flunder should be.",
                                       "properties": {"reference": {"type": "string",
                                                                    "description": "Another flunder."}}}},
               "x-kubernetes-group-version-kind": [GVK]}}}}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send_json(self, code, document):
        body = json.dumps(document).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        subject = dict(pair[0] for pair in self.connection.getpeercert()["subject"])
        if subject.get("commonName") != "front-proxy-client":
            return self.send_json(401, {"kind": "Status", "code": 401})
        user = self.headers.get("X-Remote-User")
        groups = self.headers.get_all("X-Remote-Group") or []
        extra = {k[len("X-Remote-Extra-"):].lower(): v for k, v in self.headers.items()
                 if k.lower().startswith("x-remote-extra-")}
        if self.headers.get("Upgrade", "").lower() == "echo":
            # An upgrading subresource: after the 101, every byte comes
            # back upper-cased.
            self.send_response(101)
            self.send_header("Connection", "Upgrade")
            self.send_header("Upgrade", "echo")
            self.end_headers()
            self.wfile.flush()
            self.close_connection = True
            while True:
                data = self.connection.recv(65536)
                if not data:
                    return
                self.connection.sendall(data.upper())
        path = self.path.split("?")[0].rstrip("/")
        parts = path.split("/")
        if path == "/apis":
            return self.send_json(200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
                {"name": gv.split("/")[0], "versions": [{"groupVersion": gv, "version": gv.split("/")[1]}],
                 "preferredVersion": {"groupVersion": gv, "version": gv.split("/")[1]}} for gv in RESOURCES]})
        if path == "/openapi/v3/apis/wardle.example.com/v1alpha1":
            return self.send_json(200, OPENAPI)
        if path == "/openapi/v2":
            return self.send_json(200, OPENAPI_V2)
        group_version = "/".join(parts[2:4])
        if len(parts) == 4 and group_version in RESOURCES:
            return self.send_json(200, {"kind": "APIResourceList", "apiVersion": "v1",
                                        "groupVersion": group_version, "resources": RESOURCES[group_version]})
        node = {"metadata": {"name": "worker-1"}, "timestamp": "2026-01-01T00:00:00Z", "window": "10s", "usage": USAGE}
        if path == "/apis/metrics.k8s.io/v1beta1/nodes":
            return self.send_json(200, {"kind": "NodeMetricsList", "apiVersion": "metrics.k8s.io/v1beta1",
                                        "metadata": {}, "items": [node]})
        if path == "/apis/metrics.k8s.io/v1beta1/nodes/worker-1":
            return self.send_json(200, dict(node, kind="NodeMetrics", apiVersion="metrics.k8s.io/v1beta1"))
        if len(parts) == 7 and parts[2] == "metrics.k8s.io" and parts[6] == "pods":
            return self.send_json(200, {"kind": "PodMetricsList", "apiVersion": "metrics.k8s.io/v1beta1",
                "metadata": {}, "items": [{"metadata": {"name": "web", "namespace": parts[5]},
                    "timestamp": "2026-01-01T00:00:00Z", "window": "10s",
                    "containers": [{"name": "web", "usage": USAGE}]}]})
        if len(parts) == 7 and parts[2] == "wardle.example.com" and parts[6] == "flunders":
            seen = {"user": user, "groups": groups, "extra": extra}
            return self.send_json(200, {"kind": "FlunderList", "apiVersion": "wardle.example.com/v1alpha1",
                "metadata": {}, "items": [{"apiVersion": "wardle.example.com/v1alpha1", "kind": "Flunder",
                    "metadata": {"name": "first", "namespace": parts[5],
                                 "annotations": {"seen": json.dumps(seen)}}}]})
        self.send_json(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 404,
                             "reason": "NotFound", "message": "not found"})


server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[4])), Handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(sys.argv[1], sys.argv[2])
context.verify_mode = ssl.CERT_REQUIRED
context.load_verify_locations(sys.argv[3])
server.socket = context.wrap_socket(server.socket, server_side=True)
print("port", server.server_address[1], flush=True)
server.serve_forever()
"##;

/// The extension server's script, certificate, key and the client CA it
/// trusts, as files.
struct ExtensionFiles {
    script: std::path::PathBuf,
    cert: std::path::PathBuf,
    key: std::path::PathBuf,
    client_ca: std::path::PathBuf,
}

/// Starts the extension server on `port` (0: any); the process and its port.
fn start_extension_server(files: &ExtensionFiles, port: u16) -> (Streaming, u16) {
    let mut python = Command::new("python3");
    python
        .arg(&files.script)
        .arg(&files.cert)
        .arg(&files.key)
        .arg(&files.client_ca)
        .arg(port.to_string());
    let mut process = Streaming::spawn(python);
    let port = process.wait_for("the extension server's port", |out| {
        out.lines()
            .find_map(|l| l.strip_prefix("port "))
            .and_then(|p| p.trim().parse().ok())
    });
    (process, port)
}

/// A client of an upgrading subresource of the extension server, through
/// Capstan over HTTP/1.1: the status line, then what came back for "ping".
const UPGRADING_CLIENT: &str = r#"
import socket, ssl, sys
context = ssl.create_default_context(cafile=sys.argv[1])
context.load_cert_chain(sys.argv[2], sys.argv[3])
context.set_alpn_protocols(["http/1.1"])
conn = context.wrap_socket(socket.create_connection(("127.0.0.1", int(sys.argv[4]))), server_hostname="127.0.0.1")
conn.sendall(b"GET /apis/wardle.example.com/v1alpha1/namespaces/default/flunders/first/echo HTTP/1.1\r\n"
             b"Host: capstan\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
head = b""
while b"\r\n\r\n" not in head:
    head += conn.recv(1)
print(head.split(b"\r\n")[0].decode())
conn.sendall(b"ping")
print(conn.recv(100).decode())
"#;

/// The extension server's files in `server`'s scratch directory, trusting
/// `client_ca` (PEM); and the caBundle that verifies it, base64.
fn extension_files(server: &TestServer, client_ca: &str) -> (ExtensionFiles, String) {
    let (ca, cert, key) = common::certificates_for(&["api.ext.svc"]);
    let files = ExtensionFiles {
        script: server.scratch("extension.py"),
        cert: server.scratch("extension.crt"),
        key: server.scratch("extension.key"),
        client_ca: server.scratch("front-proxy-ca.crt"),
    };
    common::write_file(&files.client_ca, client_ca);
    common::write_file(&files.cert, &cert);
    common::write_file(&files.key, &key);
    common::write_file(&files.script, EXTENSION_SERVER);
    (files, base64::engine::general_purpose::STANDARD.encode(ca))
}

/// The Service and the two APIServices of the extension server on `port`.
fn registration(port: u16, ca_bundle: &str) -> String {
    format!(
        r#"
apiVersion: v1
kind: Namespace
metadata: {{name: ext}}
---
apiVersion: v1
kind: Service
metadata: {{name: api, namespace: ext}}
spec: {{type: ExternalName, externalName: 127.0.0.1}}
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {{name: v1beta1.metrics.k8s.io}}
spec:
  group: metrics.k8s.io
  version: v1beta1
  service: {{namespace: ext, name: api, port: {port}}}
  caBundle: {ca_bundle}
  groupPriorityMinimum: 100
  versionPriority: 100
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {{name: v1alpha1.wardle.example.com}}
spec:
  group: wardle.example.com
  version: v1alpha1
  service: {{namespace: ext, name: api, port: {port}}}
  caBundle: {ca_bundle}
  groupPriorityMinimum: 1000
  versionPriority: 15
"#
    )
}

/// `/apis` as aggregated discovery (apidiscovery.k8s.io/v2).
fn aggregated_discovery(server: &TestServer) -> Value {
    server
        .curl(
            "GET",
            "/apis",
            &[(
                "Accept",
                "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
            )],
            None,
        )
        .json()
}

/// The `seen` annotation of the flunder the backend lists: the caller
/// it was told about.
fn seen_by_backend(server: &TestServer) -> Value {
    let flunders = server.kubectl_json(&["get", "flunders", "-n", "default", "-o", "json"]);
    serde_json::from_str(
        flunders["items"][0]["metadata"]["annotations"]["seen"]
            .as_str()
            .expect("what the backend saw"),
    )
    .expect("JSON")
}

fn availability(server: &TestServer, name: &str) -> Option<(String, String, String)> {
    let api_service = server.kubectl_json(&["get", "apiservice", name, "-o", "json"]);
    let conditions = api_service.pointer("/status/conditions")?.as_array()?;
    let available = conditions
        .iter()
        .find(|c| c["type"] == "Available")?
        .clone();
    let text = |key: &str| available[key].as_str().unwrap_or("").to_string();
    Some((text("status"), text("reason"), text("message")))
}

fn wait_for_reason(server: &TestServer, name: &str, reason: &str) -> (String, String, String) {
    common::wait_until(
        Duration::from_secs(30),
        &format!("{name} to be {reason}"),
        || availability(server, name).filter(|(_, r, _)| r == reason),
    )
}

#[test]
fn extension_api_server_behind_capstan() {
    let server = TestServer::start();

    // The extension server trusts what Capstan publishes for it.
    let trust = server.kubectl_json(&[
        "get",
        "configmap",
        "-n",
        "kube-system",
        "extension-apiserver-authentication",
        "-o",
        "json",
    ]);
    let front_proxy_ca = trust["data"]["requestheader-client-ca-file"]
        .as_str()
        .expect("the request-header CA");
    assert_eq!(
        trust["data"]["requestheader-allowed-names"],
        r#"["front-proxy-client"]"#
    );
    assert_eq!(
        trust["data"]["requestheader-username-headers"],
        r#"["X-Remote-User"]"#
    );
    assert!(trust["data"]["client-ca-file"]
        .as_str()
        .is_some_and(|ca| ca.contains("BEGIN CERTIFICATE")));
    let (files, ca_bundle) = extension_files(&server, front_proxy_ca);
    let (backend, port) = start_extension_server(&files, 0);
    server.apply(&registration(port, &ca_bundle));
    let (status, _, message) = wait_for_reason(&server, "v1beta1.metrics.k8s.io", "Passed");
    assert_eq!(
        (status.as_str(), message.as_str()),
        ("True", "all checks passed")
    );
    wait_for_reason(&server, "v1alpha1.wardle.example.com", "Passed");
    let listed = server.kubectl_ok(&["get", "apiservices", "v1beta1.metrics.k8s.io"]);
    assert!(
        common::table_rows(&listed)[1][..3] == ["v1beta1.metrics.k8s.io", "ext/api", "True"],
        "{listed}"
    );

    // Legacy and aggregated discovery list the remote groups among the
    // local ones in upstream's APIService order: priority, then
    // `<version>.<group>` (v1alpha1.wardle before a definition's
    // v1beta1.things, both at 1000; metrics at 100 last).
    server.apply(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: things.things.example.com}\nspec:\n  group: things.example.com\n  scope: Namespaced\n  names: {plural: things, kind: Thing}\n  versions:\n  - name: v1beta1\n    served: true\n    storage: true\n    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}\n",
    );
    server.kubectl_ok(&[
        "wait",
        "--for=condition=Established",
        "crd/things.things.example.com",
    ]);
    let last_groups = |names: Vec<&str>| -> Vec<String> {
        names[names.len() - 4..]
            .iter()
            .map(|n| n.to_string())
            .collect()
    };
    let expected = [
        "flowcontrol.apiserver.k8s.io",
        "wardle.example.com",
        "things.example.com",
        "metrics.k8s.io",
    ];
    let groups = server.get_json("/apis");
    let names: Vec<&str> = groups["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .filter_map(|g| g["name"].as_str())
        .collect();
    assert_eq!(names[0], "apiregistration.k8s.io");
    assert_eq!(last_groups(names), expected);
    let aggregated = aggregated_discovery(&server);
    let names: Vec<&str> = aggregated["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|g| g["metadata"]["name"].as_str())
        .collect();
    assert_eq!(names[0], "apiregistration.k8s.io");
    assert_eq!(last_groups(names), expected);
    let group = server.get_json("/apis/wardle.example.com");
    assert_eq!(group["kind"], "APIGroup");
    assert_eq!(
        group["preferredVersion"]["groupVersion"],
        "wardle.example.com/v1alpha1"
    );

    // kubectl finds the resources through aggregated discovery (the
    // backend has none of its own: its legacy lists are converted).
    let node = server.apply("apiVersion: v1\nkind: Node\nmetadata: {name: worker-1}\n");
    assert!(node.contains("worker-1"), "{node}");
    server.kubectl_ok(&[
        "patch",
        "node",
        "worker-1",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"capacity":{"cpu":"2","memory":"4Gi"},"allocatable":{"cpu":"2","memory":"4Gi"}}}"#,
    ]);
    let top = common::wait_until(Duration::from_secs(40), "kubectl top node", || {
        let out = server.kubectl(&["top", "node", "worker-1"]);
        out.status.success().then(|| common::text(&out.stdout))
    });
    let rows = common::table_rows(&top);
    assert_eq!(rows[1][..3], ["worker-1", "250m", "12%"], "{top}");
    let pods = server.kubectl_ok(&["top", "pod", "-n", "default"]);
    assert_eq!(
        common::table_rows(&pods)[1][..3],
        ["web", "250m", "256Mi"],
        "{pods}"
    );

    // The backend sees the caller Capstan authenticated, through the
    // front-proxy certificate; not the caller's own credentials.
    let seen = seen_by_backend(&server);
    assert_eq!(seen["user"], "admin");
    assert_eq!(
        seen["groups"],
        serde_json::json!(["system:masters", "system:authenticated"])
    );

    // The backend's OpenAPI is Capstan's for its group/version.
    let explained = server.kubectl_ok(&["explain", "flunders"]);
    assert!(
        explained.contains("A Flunder is a test object of the wardle server."),
        "{explained}"
    );
    // /openapi/v2 merges in each backend's paths under its group/version
    // (not its /version), its definitions, and renames a definition that
    // differs from Capstan's of the same name; the protobuf form too.
    let v2 = server.get_json("/openapi/v2");
    let paths = v2["paths"].as_object().expect("paths");
    assert!(paths
        .contains_key("/apis/wardle.example.com/v1alpha1/namespaces/{namespace}/flunders/{name}"));
    assert!(paths.contains_key("/api/v1/namespaces/{namespace}/pods"));
    assert!(!paths.keys().any(|p| p == "/version"));
    let definitions = v2["definitions"].as_object().expect("definitions");
    assert_eq!(
        definitions["com.example.wardle.v1alpha1.Flunder"]["description"],
        "A Flunder is a test object of the wardle server."
    );
    assert_eq!(
        definitions["io.k8s.apimachinery.pkg.apis.meta.v1.Status_v2"]["description"],
        "wardle's own"
    );
    assert_ne!(
        definitions["io.k8s.apimachinery.pkg.apis.meta.v1.Status"]["description"],
        "wardle's own"
    );
    let protobuf = server.curl(
        "GET",
        "/openapi/v2",
        &[(
            "Accept",
            "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
        )],
        None,
    );
    assert_eq!(protobuf.status, 200);
    let needle = b"com.example.wardle.v1alpha1.Flunder";
    assert!(protobuf.raw.windows(needle.len()).any(|w| w == needle));

    // An upgrading request streams through both ways once the backend
    // switches protocols.
    let echo = common::run_command(
        Command::new("python3")
            .args(["-c", UPGRADING_CLIENT])
            .arg(server.ca_cert())
            .arg(server.admin_cert())
            .arg(server.admin_key())
            .arg(server.port().to_string()),
        None,
        Duration::from_secs(20),
    );
    assert_eq!(
        common::text(&echo.stdout),
        "HTTP/1.1 101 Switching Protocols\nPING\n",
        "{}",
        common::text(&echo.stderr)
    );

    // Capstan authorizes before it forwards.
    let denied = server.kubectl_err(&["get", "flunders", "-n", "default", "--as", "bob"]);
    assert!(
        denied.contains(r#"flunders.wardle.example.com is forbidden: User "bob" cannot list resource "flunders" in API group "wardle.example.com" in the namespace "default""#),
        "{denied}"
    );

    // The backend goes down: its APIServices become unavailable, requests
    // for them get upstream's 503, and the rest of discovery still works.
    backend.stop();
    server.kubectl_ok(&[
        "annotate",
        "apiservice",
        "v1alpha1.wardle.example.com",
        "poke=1",
    ]);
    let (status, _, message) = wait_for_reason(
        &server,
        "v1alpha1.wardle.example.com",
        "FailedDiscoveryCheck",
    );
    assert_eq!(status, "False");
    assert!(
        message.starts_with(&format!(
            "failing or missing response from https://127.0.0.1:{port}/apis/wardle.example.com/v1alpha1: "
        )) && message.contains("connection refused"),
        "{message}"
    );
    let unavailable = server.get("/apis/wardle.example.com/v1alpha1/namespaces/default/flunders");
    assert_eq!(unavailable.status, 503);
    assert_eq!(unavailable.body, "service unavailable\n");
    let aggregated = aggregated_discovery(&server);
    let wardle = aggregated["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|item| item["metadata"]["name"] == "wardle.example.com")
        .expect("the unavailable group is still listed");
    assert_eq!(
        wardle["versions"],
        serde_json::json!([{"version": "v1alpha1", "freshness": "Stale"}])
    );
    let resources = server.kubectl_ok(&["api-resources"]);
    assert!(resources.contains("deployments"), "{resources}");
    assert!(!resources.contains("flunders"), "{resources}");

    // And comes back on the same port.
    let (_backend, _) = start_extension_server(&files, port);
    server.kubectl_ok(&[
        "annotate",
        "apiservice",
        "v1alpha1.wardle.example.com",
        "poke=2",
        "--overwrite",
    ]);
    wait_for_reason(&server, "v1alpha1.wardle.example.com", "Passed");
    let again = server.kubectl_json(&["get", "flunders", "-n", "default", "-o", "json"]);
    assert_eq!(again["items"][0]["metadata"]["name"], "first");
}

#[test]
fn front_proxy_names_the_user_in_headers() {
    let server = TestServer::start();
    let pki = server.dir().join("pki");
    let review = |cert: &str, key: &str| {
        let out = common::run_command(
            Command::new(common::curl_bin())
                .args(["-sS", "--cacert"])
                .arg(server.ca_cert())
                .arg("--cert")
                .arg(pki.join(cert))
                .arg("--key")
                .arg(pki.join(key))
                .args([
                    "-H",
                    "X-Remote-User: alice",
                    "-H",
                    "X-Remote-Group: devs",
                    "-H",
                    "X-Remote-Extra-Example.org%2fteam: blue",
                    "-H",
                    "Content-Type: application/json",
                    "-X",
                    "POST",
                    "-d",
                    r#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}"#,
                ])
                .arg(format!(
                    "{}/apis/authentication.k8s.io/v1/selfsubjectreviews",
                    server.base_url()
                )),
            None,
            Duration::from_secs(20),
        );
        let body: Value = serde_json::from_slice(&out.stdout).expect("a JSON answer");
        body["status"]["userInfo"].clone()
    };
    let alice = review("front-proxy-client.crt", "front-proxy-client.key");
    assert_eq!(alice["username"], "alice");
    assert_eq!(
        alice["groups"],
        serde_json::json!(["devs", "system:authenticated"])
    );
    assert_eq!(
        alice["extra"]["example.org/team"],
        serde_json::json!(["blue"])
    );
    // Only a front proxy's certificate may name a user; the admin's is its own.
    let admin = review("admin.crt", "admin.key");
    assert_eq!(admin["username"], "admin");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_apiservice_registered_through_one_replica_is_served_by_both() {
    let (_etcd, a, b) = common::two_replicas_on_etcd().await;
    // Each replica generated its own PKI; the published trust is the union.
    let bundle = common::wait_until(
        Duration::from_secs(20),
        "both replicas' front-proxy CAs published",
        || {
            let trust = a.kubectl_json(&[
                "get",
                "configmap",
                "-n",
                "kube-system",
                "extension-apiserver-authentication",
                "-o",
                "json",
            ]);
            let ca = trust["data"]["requestheader-client-ca-file"]
                .as_str()?
                .to_string();
            let clients = trust["data"]["client-ca-file"].as_str()?;
            (ca.matches("BEGIN CERTIFICATE").count() == 2
                && clients.matches("BEGIN CERTIFICATE").count() == 2)
                .then_some(ca)
        },
    );
    let (files, ca_bundle) = extension_files(&a, &bundle);
    let (_backend, port) = start_extension_server(&files, 0);
    a.apply(&registration(port, &ca_bundle));
    for replica in [&a, &b] {
        wait_for_reason(replica, "v1alpha1.wardle.example.com", "Passed");
        let seen = common::wait_until(
            Duration::from_secs(20),
            "flunders through a replica",
            || {
                let out = replica.kubectl(&["get", "flunders", "-n", "default", "-o", "json"]);
                out.status.success().then(|| seen_by_backend(replica))
            },
        );
        assert_eq!(seen["user"], "admin");
    }

    // kube-rs's aggregated discovery sees the extension server's resources.
    let client = crate::kube_rs::client(&b).await;
    let discovery = kube::Discovery::new(client)
        .run_aggregated()
        .await
        .expect("aggregated discovery");
    let wardle = discovery
        .get("wardle.example.com")
        .expect("the extension group");
    let (flunders, _) = wardle
        .recommended_resources()
        .into_iter()
        .find(|(resource, _)| resource.plural == "flunders")
        .expect("flunders");
    assert_eq!(flunders.kind, "Flunder");
}

#[test]
fn availability_reasons_follow_the_service_and_its_endpoints() {
    let server = TestServer::start();
    let api_service = |service: &str, port: u16| {
        format!(
            r#"
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {{name: v1.{service}.example.com}}
spec:
  group: {service}.example.com
  version: v1
  service: {{namespace: ext, name: {service}, port: {port}}}
  insecureSkipTLSVerify: true
  groupPriorityMinimum: 100
  versionPriority: 10
"#
        )
    };
    server.apply(&format!(
        r#"
apiVersion: v1
kind: Namespace
metadata: {{name: ext}}
---
apiVersion: v1
kind: Service
metadata: {{name: ported, namespace: ext}}
spec: {{ports: [{{name: https, port: 443}}]}}
---
apiVersion: v1
kind: Service
metadata: {{name: empty, namespace: ext}}
spec: {{ports: [{{name: https, port: 443}}]}}
---
apiVersion: v1
kind: Endpoints
metadata: {{name: empty, namespace: ext}}
subsets:
- addresses: [{{ip: 10.0.0.9}}]
  ports: [{{name: metrics, port: 9090}}]
---
{}
---
{}
---
{}
---
{}
"#,
        api_service("missing", 443),
        api_service("ported", 8443),
        api_service("empty", 443),
        api_service("unendpointed", 443),
    ));
    server.apply(
        "apiVersion: v1\nkind: Service\nmetadata: {name: unendpointed, namespace: ext}\nspec: {ports: [{name: https, port: 443}]}\n",
    );
    let expectations = [
        (
            "v1.missing.example.com",
            "ServiceNotFound",
            r#"service/missing in "ext" is not present"#,
        ),
        (
            "v1.ported.example.com",
            "ServicePortError",
            r#"service/ported in "ext" is not listening on port 8443"#,
        ),
        (
            "v1.empty.example.com",
            "MissingEndpoints",
            r#"endpoints for service/empty in "ext" have no addresses with port name "https""#,
        ),
        (
            "v1.unendpointed.example.com",
            "EndpointsNotFound",
            r#"cannot find endpoints for service/unendpointed in "ext""#,
        ),
    ];
    for (name, reason, message) in expectations {
        let (status, _, got) = wait_for_reason(&server, name, reason);
        assert_eq!((status.as_str(), got.as_str()), ("False", message));
    }
    let listed = server.kubectl_ok(&["get", "apiservices", "v1.missing.example.com"]);
    assert!(
        common::table_rows(&listed)[1][..4]
            == [
                "v1.missing.example.com",
                "ext/missing",
                "False",
                "(ServiceNotFound)"
            ],
        "{listed}"
    );
}
