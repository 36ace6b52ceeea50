//! End-to-end `/metrics`: upstream's request metrics, counted as requests
//! are served, readable by system:monitoring and refused to others.

mod common;

use common::TestServer;

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
        denied.contains(r#"forbidden: User \"alice\" cannot get path \"/metrics\""#)
            || denied.contains(r#"forbidden: User "alice" cannot get path "/metrics""#),
        "{denied}"
    );
    server
        .curl_anonymous("GET", "/metrics", &[], None)
        .assert_status(403, "Forbidden");
}
