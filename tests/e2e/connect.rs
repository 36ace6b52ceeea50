//! The connect subresources against real servers: `pods/log` through a
//! stand-in kubelet (a Python HTTPS server that serves the kubelet's
//! `/containerLogs` endpoint and, like a kubelet, trusts only client
//! certificates of the cluster CA), `services/proxy` to a pod's HTTP
//! server through its Endpoints (also through `kubectl proxy`), and
//! upstream's refusals for exec, attach and pods/proxy.

use std::process::Command;
use std::time::Duration;

use crate::common::{self, Streaming, TestServer};
use serde_json::Value;

/// The stand-in kubelet (see its docstring): logs, exec and port-forward
/// over SPDY, for the kubelet client certificate only.
const KUBELET: &str = include_str!("kubelet_stand_in.py");
const WEBSOCKET_EXEC: &str = include_str!("websocket_exec.py");

/// A pod's web server: plain HTTP, echoing what it was asked.
const WEB: &str = r#"
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path == "/moved":
            self.send_response(302)
            self.send_header("Location", "/elsewhere")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.path == "/page":
            body = ('<html><head><link href="/style.css"></head><body><a href="/next/">next</a> '
                    '<a href="relative">relative</a> <img src="http://example.com/i.png">'
                    '<p>uri=%s</p></body></html>' % self.headers.get("X-Forwarded-Uri")).encode()
            content_type = "text/html; charset=utf-8"
        else:
            body = ("hello from %s; authorization=%s" % (self.path, self.headers.get("Authorization"))).encode()
            content_type = "text/plain"
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print("port", server.server_address[1], flush=True)
server.serve_forever()
"#;

fn start_python(script: &std::path::Path, args: &[&std::path::Path]) -> (Streaming, u16) {
    let mut python = Command::new("python3");
    python.arg(script).args(args);
    let mut process = Streaming::spawn(python);
    let port = process.wait_for("the server's port", |out| {
        out.lines()
            .find_map(|l| l.strip_prefix("port "))
            .and_then(|p| p.trim().parse().ok())
    });
    (process, port)
}

/// This machine's first non-loopback IPv4 address (`hostname -I`).
fn host_address() -> String {
    let out = common::run_command(
        Command::new("hostname").arg("-I"),
        None,
        Duration::from_secs(5),
    );
    common::text(&out.stdout)
        .split_whitespace()
        .find(|a| {
            a.parse::<std::net::Ipv4Addr>()
                .is_ok_and(|ip| !ip.is_loopback())
        })
        .expect("a non-loopback IPv4 address on this machine")
        .to_string()
}

/// A stand-in kubelet for `kubelet-1` and the pods it runs: `app` (one
/// container, Running), `pair` (two), `waiting` (no node yet). Returns
/// the kubelet and the directory that stands for `app`'s filesystem.
fn kubelet_with_pods(server: &TestServer) -> (Streaming, std::path::PathBuf) {
    let (_, cert, key) = common::certificates_for(&["kubelet-1"]);
    let (script, cert_path, key_path, root) = (
        server.scratch("kubelet.py"),
        server.scratch("kubelet.crt"),
        server.scratch("kubelet.key"),
        server.scratch("container-root"),
    );
    common::write_file(&script, KUBELET);
    common::write_file(&cert_path, &cert);
    common::write_file(&key_path, &key);
    std::fs::create_dir_all(root.join("data")).expect("the container's filesystem");
    let (kubelet, port) = start_python(&script, &[&cert_path, &key_path, &server.ca_cert(), &root]);
    server.apply("apiVersion: v1\nkind: Node\nmetadata: {name: kubelet-1}\n");
    server.kubectl_ok(&[
        "patch",
        "node",
        "kubelet-1",
        "--subresource=status",
        "--type=merge",
        "-p",
        &format!(
            r#"{{"status":{{"addresses":[{{"type":"InternalIP","address":"127.0.0.1"}}],"daemonEndpoints":{{"kubeletEndpoint":{{"Port":{port}}}}}}}}}"#
        ),
    ]);
    server.apply(
        r#"
apiVersion: v1
kind: Pod
metadata: {name: app, namespace: default}
spec:
  nodeName: kubelet-1
  containers: [{name: main, image: app}]
---
apiVersion: v1
kind: Pod
metadata: {name: pair, namespace: default}
spec:
  nodeName: kubelet-1
  containers: [{name: main, image: app}, {name: sidecar, image: proxy}]
---
apiVersion: v1
kind: Pod
metadata: {name: waiting, namespace: default}
spec:
  containers: [{name: main, image: app}]
"#,
    );
    server.kubectl_ok(&[
        "patch",
        "pod",
        "app",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"phase":"Running"}}"#,
    ]);
    (kubelet, root)
}

#[test]
fn pod_logs_come_from_the_pods_kubelet() {
    let server = TestServer::start();
    let (_kubelet, _) = kubelet_with_pods(&server);

    assert_eq!(
        server.kubectl_ok(&["logs", "app"]),
        "starting\nlistening on :8080\nready\n"
    );
    assert_eq!(server.kubectl_ok(&["logs", "app", "--tail=1"]), "ready\n");
    assert_eq!(
        server.kubectl_ok(&["logs", "app", "--tail=1", "--timestamps"]),
        "2026-01-01T00:00:00.000000000Z ready\n"
    );
    assert_eq!(
        server.kubectl_ok(&["logs", "app", "--limit-bytes=5"]),
        "start"
    );
    assert_eq!(server.kubectl_ok(&["logs", "app", "-p"]), "previous run\n");
    // Followed, the lines arrive as the kubelet writes them.
    let followed = server.kubectl_ok(&["logs", "-f", "app"]);
    assert!(
        followed.ends_with("ready\ntick 0\ntick 1\ntick 2\n"),
        "{followed}"
    );
    // A pod no node runs yet has no logs (204).
    assert_eq!(server.kubectl_ok(&["logs", "waiting"]), "");

    // Upstream's refusals, before the kubelet is asked.
    let path = "/api/v1/namespaces/default/pods/pair/log";
    let answer = server.get(path).assert_status(400, "BadRequest");
    assert_eq!(
        answer["message"],
        "a container name must be specified for pod pair, choose one of: [main sidecar]"
    );
    let answer = server
        .get(&format!("{path}?container=nope"))
        .assert_status(400, "BadRequest");
    assert_eq!(
        answer["message"],
        "container nope is not valid for pod pair"
    );
    let answer = server
        .get("/api/v1/namespaces/default/pods/app/log?tailLines=-1")
        .assert_status(422, "Invalid");
    assert_eq!(
        answer["message"],
        "PodLogOptions \"app\" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0"
    );
    // The kubelet's own refusal becomes the message.
    let answer = server
        .get(&format!("{path}?container=sidecar"))
        .assert_status(400, "BadRequest");
    assert_eq!(
        answer["message"],
        "container \"sidecar\" in pod \"pair\" is waiting to start: ContainerCreating"
    );

    // exec and attach stream only; without a node there is nowhere to go.
    let answer = server
        .send(
            "POST",
            "/api/v1/namespaces/default/pods/app/exec?command=ls&stdout=true",
            "application/json",
            "",
        )
        .assert_status(400, "BadRequest");
    assert_eq!(answer["message"], "Upgrade request required");
    let answer = server
        .send(
            "POST",
            "/api/v1/namespaces/default/pods/waiting/attach?stdout=true",
            "application/json",
            "",
        )
        .assert_status(400, "BadRequest");
    assert_eq!(
        answer["message"],
        "pod waiting does not have a host assigned"
    );
    // nodes/proxy goes to the kubelet only at an address the API server
    // may proxy to; a loopback one is refused, as upstream refuses it.
    let answer = server
        .get("/api/v1/nodes/kubelet-1/proxy/pods")
        .assert_status(400, "BadRequest");
    assert_eq!(answer["message"], "address not allowed");
    // The same kubelet at this machine's own (non-loopback) address is
    // proxied to, with the kubelet client certificate it requires.
    let kubelet_port = server.get_json("/api/v1/nodes/kubelet-1")["status"]["daemonEndpoints"]
        ["kubeletEndpoint"]["Port"]
        .as_i64()
        .expect("the kubelet's port");
    let host_ip = host_address();
    server.apply("apiVersion: v1\nkind: Node\nmetadata: {name: kubelet-2}\n");
    server.kubectl_ok(&[
        "patch",
        "node",
        "kubelet-2",
        "--subresource=status",
        "--type=merge",
        "-p",
        &format!(
            r#"{{"status":{{"addresses":[{{"type":"InternalIP","address":"{host_ip}"}}],"daemonEndpoints":{{"kubeletEndpoint":{{"Port":{kubelet_port}}}}}}}}}"#
        ),
    ]);
    assert_eq!(
        server.kubectl_ok(&["get", "--raw", "/api/v1/nodes/kubelet-2/proxy/healthz"]),
        "ok"
    );
    let answer = server
        .get("/api/v1/nodes/ftp:kubelet-1:21/proxy/")
        .assert_status(400, "BadRequest");
    assert_eq!(
        answer["message"],
        r#"invalid node request "ftp:kubelet-1:21""#
    );

    // Logs are read with get on pods/log: a user without it is refused.
    let denied = server.kubectl_err(&[
        "get",
        "--raw",
        "/api/v1/namespaces/default/pods/app/log",
        "--as",
        "bob",
    ]);
    assert!(
        denied.contains(r#"pods "app" is forbidden: User "bob" cannot get resource "pods/log" in API group "" in the namespace "default""#),
        "{denied}"
    );
}

#[test]
fn services_proxy_reaches_a_pod_behind_the_service() {
    let server = TestServer::start();
    let script = server.scratch("web.py");
    common::write_file(&script, WEB);
    let (_web, port) = start_python(&script, &[]);
    server.apply(&format!(
        r#"
apiVersion: v1
kind: Pod
metadata: {{name: web, namespace: default}}
spec:
  containers: [{{name: web, image: web, ports: [{{containerPort: {port}}}]}}]
---
apiVersion: v1
kind: Service
metadata: {{name: web, namespace: default}}
spec:
  ports: [{{name: http, port: 80, targetPort: {port}}}]
---
apiVersion: v1
kind: Endpoints
metadata: {{name: web, namespace: default}}
subsets:
- addresses: [{{ip: 127.0.0.1, targetRef: {{kind: Pod, name: web, namespace: default}}}}]
  ports: [{{name: http, port: {port}}}]
"#
    ));
    server.kubectl_ok(&[
        "patch",
        "pod",
        "web",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"podIP":"127.0.0.1","podIPs":[{"ip":"127.0.0.1"}]}}"#,
    ]);

    let answer = server.kubectl_ok(&[
        "get",
        "--raw",
        "/api/v1/namespaces/default/services/web:80/proxy/hello?x=1",
    ]);
    // The caller's credentials stay with Capstan.
    assert_eq!(answer, "hello from /hello?x=1; authorization=None");
    let named = server.kubectl_ok(&[
        "get",
        "--raw",
        "/api/v1/namespaces/default/services/web:http/proxy/",
    ]);
    assert_eq!(named, "hello from /; authorization=None");
    // Links in HTML and a redirect's Location go through the proxy, as
    // upstream rewrites them; the backend learns the path asked for.
    let page = server.kubectl_ok(&[
        "get",
        "--raw",
        "/api/v1/namespaces/default/services/web:80/proxy/page",
    ]);
    assert_eq!(
        page,
        r#"<html><head><link href="/api/v1/namespaces/default/services/web:80/proxy/style.css"></head><body><a href="/api/v1/namespaces/default/services/web:80/proxy/next/">next</a> <a href="relative">relative</a> <img src="http://example.com/i.png"><p>uri=/api/v1/namespaces/default/services/web:80/proxy/page</p></body></html>"#
    );
    let moved = server.get("/api/v1/namespaces/default/services/web:80/proxy/moved");
    assert_eq!(moved.status, 302);
    assert_eq!(
        moved.header("Location").as_deref(),
        Some("/api/v1/namespaces/default/services/web:80/proxy/elsewhere")
    );

    // kubectl proxy, then a plain HTTP client through it.
    let mut proxy = server.kubectl_spawn(&["proxy", "--port=0"]);
    let proxy_port: u16 = proxy.wait_for("kubectl proxy's port", |out| {
        out.split("127.0.0.1:")
            .nth(1)
            .and_then(|rest| rest.trim().parse().ok())
    });
    let through = common::run_command(
        Command::new(common::curl_bin()).args([
            "-sS",
            &format!(
                "http://127.0.0.1:{proxy_port}/api/v1/namespaces/default/services/web:80/proxy/via-kubectl"
            ),
        ]),
        None,
        Duration::from_secs(20),
    );
    assert_eq!(
        common::text(&through.stdout),
        "hello from /via-kubectl; authorization=None"
    );

    // Upstream's refusals.
    let answer = server
        .get("/api/v1/namespaces/default/services/web:81/proxy/")
        .assert_status(503, "ServiceUnavailable");
    assert_eq!(
        answer["message"],
        r#"no service port 81 found for service "web""#
    );
    let answer = server
        .get("/api/v1/namespaces/default/services/ftp:web:80/proxy/")
        .assert_status(400, "BadRequest");
    assert_eq!(answer["message"], r#"invalid service request "ftp:web:80""#);
    // A loopback pod IP is not one the API server proxies to.
    let answer = server
        .get("/api/v1/namespaces/default/pods/web/proxy/")
        .assert_status(400, "BadRequest");
    assert_eq!(answer["message"], "address not allowed");
}

#[test]
fn exec_cp_and_port_forward_stream_through_to_the_kubelet() {
    let server = TestServer::start();
    let (_kubelet, root) = kubelet_with_pods(&server);

    // kubectl asks for WebSocket v5, which Capstan translates to the
    // kubelet's SPDY.
    assert_eq!(
        server.kubectl_ok(&["exec", "app", "--", "echo", "hello", "there"]),
        "hello there\n"
    );
    // attach reaches the container's main process the same way.
    let attached = server.kubectl_stdin(
        &["attach", "-i", "app", "-c", "main"],
        "to the main process\n",
    );
    assert!(
        attached.status.success(),
        "{}",
        common::describe_output("attach", &attached)
    );
    assert_eq!(common::text(&attached.stdout), "to the main process\n");
    let listened = server.kubectl_ok(&["attach", "app", "-c", "main"]);
    assert!(listened.contains("main process of main"), "{listened}");
    // A WebSocket client asking for v5.channel.k8s.io is answered by
    // Capstan, which speaks SPDY to the kubelet in its stead.
    let script = server.scratch("websocket_exec.py");
    common::write_file(&script, WEBSOCKET_EXEC);
    let websocket = |path: &str, stdin: Option<&str>| -> Value {
        let mut python = Command::new("python3");
        python
            .arg(&script)
            .arg(server.port().to_string())
            .arg(server.ca_cert())
            .arg(server.admin_cert())
            .arg(server.admin_key())
            .arg(path)
            .args(stdin);
        let out = common::run_command(&mut python, None, Duration::from_secs(30));
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", common::describe_output("websocket exec", &out)))
    };
    let seen = websocket(
        "/api/v1/namespaces/default/pods/app/exec?command=cat&stdin=true&stdout=true&stderr=true",
        Some("over a websocket\n"),
    );
    assert_eq!(seen["status"], "HTTP/1.1 101 Switching Protocols", "{seen}");
    assert_eq!(seen["protocol"], "v5.channel.k8s.io");
    assert_eq!(seen["stdout"], "over a websocket\n");
    assert_eq!(seen["error"]["status"], "Success", "{seen}");
    assert_eq!(seen["closed"], true);
    let failed = websocket(
        "/api/v1/namespaces/default/pods/app/exec?command=sh&command=-c&command=exit%205&stdout=true",
        None,
    );
    assert_eq!(failed["error"]["reason"], "NonZeroExitCode", "{failed}");
    assert_eq!(failed["error"]["details"]["causes"][0]["message"], "5");
    // kubectl itself stays on the WebSocket: no fallback to SPDY.
    let verbose = server.kubectl(&["exec", "-v=4", "app", "--", "echo", "ws"]);
    assert_eq!(common::text(&verbose.stdout), "ws\n");
    let log = common::text(&verbose.stderr).to_lowercase();
    assert!(
        !log.contains("fallback") && !log.contains("falling back"),
        "{log}"
    );
    let piped = server.kubectl_stdin(&["exec", "-i", "app", "--", "cat"], "piped in\n");
    assert_eq!(common::text(&piped.stdout), "piped in\n");
    let failed = server.kubectl(&["exec", "app", "--", "sh", "-c", "exit 3"]);
    assert_eq!(
        failed.status.code(),
        Some(3),
        "{}",
        common::text(&failed.stderr)
    );
    assert!(
        common::text(&failed.stderr).contains("command terminated with exit code 3"),
        "{}",
        common::text(&failed.stderr)
    );

    // kubectl cp runs tar through exec, both ways.
    let local = server.scratch("notes.txt");
    common::write_file(&local, "copied in\n");
    server.kubectl_ok(&[
        "cp",
        local.to_str().expect("a path"),
        "default/app:/data/notes.txt",
    ]);
    assert_eq!(
        std::fs::read_to_string(root.join("data/notes.txt")).expect("the copy"),
        "copied in\n"
    );
    let back = server.scratch("back.txt");
    server.kubectl_ok(&[
        "cp",
        "default/app:/data/notes.txt",
        back.to_str().expect("a path"),
    ]);
    assert_eq!(
        std::fs::read_to_string(&back).expect("the copy back"),
        "copied in\n"
    );

    // port-forward: each connection spliced to the pod's port.
    let web = server.scratch("web.py");
    common::write_file(&web, WEB);
    let (_web, web_port) = start_python(&web, &[]);
    let mut forward =
        server.kubectl_spawn(&["port-forward", "-v=4", "pod/app", &format!(":{web_port}")]);
    let local_port: u16 = forward.wait_for("the forwarded port", |out| {
        out.split("Forwarding from 127.0.0.1:")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|port| port.parse().ok())
    });
    let through = common::run_command(
        Command::new(common::curl_bin())
            .args(["-sS", &format!("http://127.0.0.1:{local_port}/forwarded")]),
        None,
        Duration::from_secs(20),
    );
    assert_eq!(
        common::text(&through.stdout),
        "hello from /forwarded; authorization=None"
    );
    // kubectl tunnels SPDY through a WebSocket, which Capstan carries to
    // the kubelet's SPDY: no fallback to a direct SPDY upgrade.
    let log = forward.stderr().to_lowercase();
    assert!(!log.contains("fallback"), "{log}");
    assert!(
        log.contains("negotiated protocol: portforward.k8s.io"),
        "{log}"
    );
}
