//! End-to-end `/metrics` (upstream's request metrics, counted as requests
//! are served, readable by system:monitoring and refused to others) and
//! the in-flight limits that protect the server (429, Retry-After).

use crate::common;
use crate::common::TestServer;

#[test]
fn metrics_count_requests_under_upstreams_names() {
    let server = TestServer::start();
    server.kubectl_ok(&["create", "configmap", "one"]);
    server.kubectl_ok(&["get", "configmap", "one"]);
    server.kubectl_ok(&["get", "configmaps"]);
    server.kubectl_ok(&[
        "create",
        "deployment",
        "web",
        "--image=nginx",
        "--dry-run=server",
    ]);
    let text = server.kubectl_ok(&["get", "--raw", "/metrics"]);
    let count = |series: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(series))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(0)
    };
    assert!(
        count(
            r#"apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="configmaps",scope="namespace",subresource="",verb="POST",version="v1"}"#
        ) >= 1,
        "{text}"
    );
    assert!(
        count(
            r#"apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="configmaps",scope="resource",subresource="",verb="GET",version="v1"}"#
        ) >= 1
    );
    assert!(
        count(
            r#"apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="configmaps",scope="namespace",subresource="",verb="LIST",version="v1"}"#
        ) >= 1
    );
    assert!(
        count(
            r#"apiserver_request_total{code="201",component="apiserver",dry_run="All",group="apps",resource="deployments",scope="namespace",subresource="",verb="POST",version="v1"}"#
        ) >= 1
    );
    assert!(text.contains("apiserver_request_duration_seconds_bucket{"));
    assert!(text.contains(r#"apiserver_storage_objects{resource="configmaps"}"#));
    assert!(text.contains("process_resident_memory_bytes "));

    // Upstream's system:monitoring role may read them; other users may not.
    let monitor = server.kubectl(&[
        "get",
        "--raw",
        "/metrics",
        "--as=prom",
        "--as-group=system:monitoring",
    ]);
    assert!(
        monitor.status.success(),
        "{}",
        common::text(&monitor.stderr)
    );
    let denied = server.kubectl_err(&["get", "--raw", "/metrics", "--as=alice"]);
    assert!(
        denied.contains(
            r#"Error from server (Forbidden): forbidden: User "alice" cannot get path "/metrics""#
        ),
        "{denied}"
    );
    server
        .curl_anonymous("GET", "/metrics", &[], None)
        .assert_status(403, "Forbidden");
}

/// The gRPC API is counted under the names gRPC servers export
/// (go-grpc-prometheus), with the status each call ended with.
#[test]
fn grpc_calls_are_counted_with_their_status() {
    let server = TestServer::start();
    let list = r#"{"resource":{"version":"v1","resource":"configmaps"},"namespace":"default"}"#;
    server.grpcurl_ok(&["-d", list], &["capstan.v1.Resources/List"]);
    let missing = r#"{"resource":{"version":"v1","resource":"configmaps"},"namespace":"default","name":"missing"}"#;
    let out = server.grpcurl(&["-d", missing], &["capstan.v1.Resources/Get"]);
    assert!(
        common::text(&out.stderr).contains("Code: NotFound"),
        "{}",
        common::text(&out.stderr)
    );
    let text = server.kubectl_ok(&["get", "--raw", "/metrics"]);
    for series in [
        r#"grpc_server_handled_total{grpc_code="OK",grpc_method="List",grpc_service="capstan.v1.Resources",grpc_type="unary"} 1"#,
        r#"grpc_server_handled_total{grpc_code="NotFound",grpc_method="Get",grpc_service="capstan.v1.Resources",grpc_type="unary"} 1"#,
        r#"grpc_server_started_total{grpc_method="Get",grpc_service="capstan.v1.Resources",grpc_type="unary"} 1"#,
        r#"grpc_server_handling_seconds_count{grpc_method="List",grpc_service="capstan.v1.Resources",grpc_type="unary"} 1"#,
    ] {
        assert!(text.lines().any(|l| l == series), "{series} in:\n{text}");
    }
    // REST requests (kubectl's discovery and this scrape) are not counted
    // as gRPC calls: every call counted names one of the gRPC services.
    let started: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("grpc_server_started_total{"))
        .collect();
    assert!(!started.is_empty(), "{text}");
    for line in started {
        assert!(
            line.contains(r#"grpc_service="capstan.v1."#)
                || line.contains(r#"grpc_service="grpc.reflection."#),
            "{line}"
        );
    }
}

#[test]
fn requests_past_the_in_flight_limit_are_told_to_retry() {
    let server = TestServer::start_with(&["--max-mutating-requests-inflight=1"]);
    // A mutating request that holds its place: a 200 KB body sent slowly.
    let body = serde_json::json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "big"},
        "data": {"a": "x".repeat(200_000)},
    });
    let file = server.scratch("big.json");
    std::fs::write(&file, body.to_string()).expect("write the body");
    let mut slow = server.curl_command(true);
    slow.args(["-X", "POST", "-H", "Content-Type: application/json"])
        .args(["-H", "Impersonate-User: alice", "--limit-rate", "20k"])
        .arg("--data-binary")
        .arg(format!("@{}", file.display()))
        .arg(format!(
            "{}/api/v1/namespaces/default/configmaps",
            server.base_url()
        ));
    let _slow = common::Streaming::spawn(slow);
    std::thread::sleep(std::time::Duration::from_millis(1500));

    let create = br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"small"}}"#;
    let json = ("Content-Type", "application/json");
    let path = "/api/v1/namespaces/default/configmaps";
    // A mutating request without a body: the refusal comes before any body
    // is read, and curl may fail a POST whose unread body the server then
    // resets (HTTP/2 RST_STREAM after the response) instead of printing it.
    let resp = server.curl(
        "DELETE",
        &format!("{path}/small"),
        &[("Impersonate-User", "bob")],
        None,
    );
    let status = resp.assert_status(429, "TooManyRequests");
    assert_eq!(
        status["message"],
        "Too many requests, please try again later."
    );
    assert_eq!(status["details"]["retryAfterSeconds"], 1);
    assert_eq!(resp.header("retry-after").as_deref(), Some("1"));
    // Reads have their own limit, and system:masters is never limited.
    let read = server.curl("GET", path, &[("Impersonate-User", "bob")], None);
    assert_eq!(read.status, 403, "{read:#?}");
    let admin = server.curl("POST", path, &[json], Some(create));
    assert_eq!(admin.status, 201, "{admin:#?}");
}
