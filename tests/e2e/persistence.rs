//! The embedded store across restarts (SIGTERM, then a new process on the
//! same data directory), and paginated lists.

use crate::common;
use crate::common::{item_names, json_stream, rv, TestServer};
use serde_json::{json, Value};

fn namespace(name: &str) -> String {
    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}).to_string()
}

fn configmap(ns: &str, name: &str, data: Value) -> String {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns, "labels": {"set": ns}}, "data": data})
        .to_string()
}

/// The store's current revision, as a list reports it.
fn store_rv(s: &TestServer) -> u64 {
    rv(&s.get_json("/api/v1/namespaces")["metadata"]["resourceVersion"])
}

#[test]
fn objects_and_resource_versions_survive_a_restart() {
    let mut s = TestServer::start();
    s.apply(&namespace("keep"));
    s.apply(&configmap("keep", "settings", json!({"color": "blue"})));
    s.apply(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: keep\nspec:\n  replicas: 2\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: web\n        image: nginx:1.25\n",
    );
    s.kubectl_ok(&[
        "patch",
        "deploy",
        "web",
        "-n",
        "keep",
        "--type=merge",
        "-p",
        r#"{"spec":{"replicas":3}}"#,
    ]);
    s.apply(&configmap("keep", "doomed", json!({})));
    s.kubectl_ok(&["delete", "cm", "doomed", "-n", "keep"]);

    let paths = [
        "/api/v1/namespaces/keep",
        "/api/v1/namespaces/keep/configmaps/settings",
        "/apis/apps/v1/namespaces/keep/deployments/web",
        "/api/v1/namespaces/default",
    ];
    let before: Vec<Value> = paths.iter().map(|p| s.get_json(p)).collect();
    let rv_before = store_rv(&s);
    let old_port = s.port();

    s.restart();

    // Same objects, byte for byte: uid, resourceVersion, generation, data.
    for (path, old) in paths.iter().zip(&before) {
        assert_eq!(&s.get_json(path), old, "{path} changed across the restart");
    }
    let err = s.kubectl_err(&["get", "cm", "doomed", "-n", "keep"]);
    assert!(err.contains("configmaps \"doomed\" not found"), "{err}");
    // Start-up may write (the kubernetes Endpoints get the new port), but the
    // revision never goes back.
    assert!(store_rv(&s) >= rv_before, "the store revision survives");
    // kubectl works with the rewritten kubeconfig (the port may have changed).
    let _ = old_port;
    let deploy = s.kubectl_json(&["get", "deploy", "web", "-n", "keep"]);
    assert_eq!(deploy["spec"]["replicas"], 3);
    assert_eq!(deploy["metadata"]["generation"], 2);
    let out = s.kubectl_ok(&["get", "namespaces", "-o", "name"]);
    for ns in [
        "default",
        "kube-system",
        "kube-public",
        "kube-node-lease",
        "keep",
    ] {
        assert!(out.contains(&format!("namespace/{ns}\n")), "{out}");
    }
    assert_eq!(
        out.lines().filter(|l| *l == "namespace/default").count(),
        1,
        "bootstrap must not duplicate system namespaces: {out}"
    );

    // Writes after the restart get larger resourceVersions.
    s.kubectl_ok(&[
        "patch",
        "cm",
        "settings",
        "-n",
        "keep",
        "--type=merge",
        "-p",
        r#"{"data":{"color":"green"}}"#,
    ]);
    let settings = s.kubectl_json(&["get", "cm", "settings", "-n", "keep"]);
    assert!(
        rv(&settings["metadata"]["resourceVersion"]) > rv_before,
        "{settings:#}"
    );
    assert_eq!(settings["metadata"]["uid"], before[1]["metadata"]["uid"]);
    s.apply(&configmap("keep", "fresh", json!({})));
    let fresh = s.kubectl_json(&["get", "cm", "fresh", "-n", "keep"]);
    assert!(
        rv(&fresh["metadata"]["resourceVersion"]) > rv(&settings["metadata"]["resourceVersion"])
    );

    // And a second restart keeps all of it.
    let fresh_rv = fresh["metadata"]["resourceVersion"].clone();
    s.restart();
    let fresh = s.kubectl_json(&["get", "cm", "fresh", "-n", "keep"]);
    assert_eq!(fresh["metadata"]["resourceVersion"], fresh_rv);
    assert_eq!(
        s.kubectl_json(&["get", "cm", "settings", "-n", "keep"])["data"]["color"],
        "green"
    );
}

#[test]
fn watch_after_restart_replays_from_an_older_resource_version() {
    let mut s = TestServer::start();
    s.apply(&namespace("w"));
    s.apply(&configmap("w", "gone", json!({})));
    let from = store_rv(&s);

    s.apply(&configmap("w", "a", json!({"n": "1"})));
    let a1 = rv(&s.kubectl_json(&["get", "cm", "a", "-n", "w"])["metadata"]["resourceVersion"]);
    s.kubectl_ok(&[
        "patch",
        "cm",
        "a",
        "-n",
        "w",
        "--type=merge",
        "-p",
        r#"{"data":{"n":"2"}}"#,
    ]);
    let a2 = rv(&s.kubectl_json(&["get", "cm", "a", "-n", "w"])["metadata"]["resourceVersion"]);
    s.kubectl_ok(&["delete", "cm", "gone", "-n", "w"]);
    let deleted = store_rv(&s);

    s.restart();

    let path = format!("/api/v1/namespaces/w/configmaps?watch=1&resourceVersion={from}");
    let mut watch = s.curl_stream(&path, 30);
    let evs = watch.wait_for("3 replayed events", |out| {
        let evs = json_stream(out);
        (evs.len() >= 3).then_some(evs)
    });
    let got: Vec<(String, String, u64)> = evs
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap().to_string(),
                e["object"]["metadata"]["name"]
                    .as_str()
                    .unwrap()
                    .to_string(),
                rv(&e["object"]["metadata"]["resourceVersion"]),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("ADDED".to_string(), "a".to_string(), a1),
            ("MODIFIED".to_string(), "a".to_string(), a2),
            ("DELETED".to_string(), "gone".to_string(), deleted),
        ]
    );
    assert_eq!(evs[1]["object"]["data"], json!({"n": "2"}));

    // The same stream carries new events after the replay.
    s.apply(&configmap("w", "after", json!({})));
    let after =
        rv(&s.kubectl_json(&["get", "cm", "after", "-n", "w"])["metadata"]["resourceVersion"]);
    let evs = watch.wait_for("the event after the replay", |out| {
        let evs = json_stream(out);
        (evs.len() >= 4).then_some(evs)
    });
    assert_eq!(evs[3]["type"], "ADDED");
    assert_eq!(evs[3]["object"]["metadata"]["name"], "after");
    assert_eq!(rv(&evs[3]["object"]["metadata"]["resourceVersion"]), after);
    let out = watch.stop();
    assert_eq!(json_stream(&out).len(), 4, "{out}");

    // gRPC resumes from the same old revision after the restart too.
    let mut grpc = s.grpc_stream(
        "capstan.v1.Resources/Watch",
        &json!({"resource": {"version": "v1", "resource": "configmaps"}, "namespace": "w", "resourceVersion": from.to_string()}),
        30,
    );
    let evs = grpc.wait_for("4 gRPC events", |out| {
        let evs = json_stream(out);
        (evs.len() >= 4).then_some(evs)
    });
    let types: Vec<&str> = evs.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["ADDED", "MODIFIED", "DELETED", "ADDED"]);
    assert_eq!(
        evs[2]["object"]["metadata"]["resourceVersion"],
        deleted.to_string()
    );
}

const PAGE_NS: &str = "pages";
const ITEMS: usize = 30;

fn fill_pages(s: &TestServer) {
    s.apply(&namespace(PAGE_NS));
    // One multi-document stream (JSON documents are YAML documents).
    let docs: Vec<String> = (0..ITEMS)
        .map(|i| {
            configmap(
                PAGE_NS,
                &format!("item-{i:02}"),
                json!({"i": i.to_string()}),
            )
        })
        .collect();
    let out = s.kubectl_with_manifest(&["create"], &docs.join("\n---\n"));
    assert_eq!(out.lines().count(), ITEMS, "{out}");
}

fn expected_names() -> Vec<String> {
    (0..ITEMS).map(|i| format!("item-{i:02}")).collect()
}

#[test]
fn chunked_lists_return_everything() {
    let s = TestServer::start();
    fill_pages(&s);

    // kubectl pages through with limit=5 and continue tokens.
    let out = s.kubectl(&[
        "get",
        "cm",
        "-n",
        PAGE_NS,
        "-l",
        "set=pages",
        "--chunk-size=5",
        "-o",
        "name",
        "-v=6",
    ]);
    assert!(
        out.status.success(),
        "{}",
        common::describe_output("kubectl get --chunk-size=5", &out)
    );
    let names: Vec<String> = common::text(&out.stdout)
        .lines()
        .map(|l| l.trim_start_matches("configmap/").to_string())
        .collect();
    assert_eq!(names, expected_names());
    let log = common::text(&out.stderr);
    let requests: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("/namespaces/pages/configmaps?") && l.contains("limit=5"))
        .collect();
    assert!(
        requests.len() >= ITEMS / 5,
        "expected at least 6 paged requests:\n{log}"
    );
    assert!(
        requests.iter().filter(|l| l.contains("continue=")).count() >= ITEMS / 5 - 1,
        "{log}"
    );

    // The table form pages the same way.
    let out = s.kubectl_ok(&["get", "cm", "-n", PAGE_NS, "--chunk-size=5"]);
    let rows = common::table_rows(&out);
    assert_eq!(
        rows.iter().filter(|r| r[0] == "NAME").count(),
        1,
        "one header: {out}"
    );
    assert_eq!(
        rows.iter().filter(|r| r[0].starts_with("item-")).count(),
        ITEMS,
        "{out}"
    );

    // Raw: limit=5 gives continue and remainingItemCount, all pages at one revision.
    let base = format!("/api/v1/namespaces/{PAGE_NS}/configmaps?limit=5");
    let first = s.get_json(&base);
    let list_rv = first["metadata"]["resourceVersion"].clone();
    let mut seen: Vec<String> = Vec::new();
    let mut page = first;
    let mut pages = 0;
    loop {
        pages += 1;
        let items = page["items"].as_array().unwrap();
        assert!(items.len() <= 5, "{page:#}");
        seen.extend(
            items
                .iter()
                .map(|i| i["metadata"]["name"].as_str().unwrap().to_string()),
        );
        assert_eq!(
            page["metadata"]["resourceVersion"], list_rv,
            "pages share the first page's revision"
        );
        let token = page["metadata"]["continue"]
            .as_str()
            .unwrap_or("")
            .to_string();
        if token.is_empty() {
            assert!(
                page["metadata"].get("remainingItemCount").is_none(),
                "{page:#}"
            );
            break;
        }
        assert_eq!(
            page["metadata"]["remainingItemCount"],
            json!(ITEMS - seen.len()),
            "page {pages}: {page:#}"
        );
        assert!(pages < 20, "pagination does not end");
        // A write between pages does not show up: the list is a snapshot.
        if pages == 2 {
            s.apply(&configmap(PAGE_NS, "item-99-late", json!({})));
        }
        page = s.get_json(&format!("{base}&continue={token}"));
    }
    assert_eq!(seen, expected_names());
    assert_eq!(pages, ITEMS / 5, "30 items in pages of 5");

    // Now the late one is there.
    let all = s.get_json(&format!("/api/v1/namespaces/{PAGE_NS}/configmaps"));
    assert_eq!(all["items"].as_array().unwrap().len(), ITEMS + 1);
    assert!(
        all["metadata"].get("continue").is_none_or(|c| c == ""),
        "{:#}",
        all["metadata"]
    );
}

#[test]
fn continue_token_survives_a_restart() {
    let mut s = TestServer::start();
    fill_pages(&s);
    let base = format!("/api/v1/namespaces/{PAGE_NS}/configmaps?limit=10");
    let first = s.get_json(&base);
    let token = first["metadata"]["continue"]
        .as_str()
        .expect("continue token")
        .to_string();
    assert_eq!(first["metadata"]["remainingItemCount"], 20);

    s.restart();

    let second = s.get_json(&format!("{base}&continue={token}"));
    assert_eq!(
        item_names(&second),
        expected_names()[10..20]
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
    );
    assert_eq!(
        second["metadata"]["resourceVersion"],
        first["metadata"]["resourceVersion"]
    );
    assert_eq!(second["metadata"]["remainingItemCount"], 10);
}

/// A signal while the server is still starting stops it cleanly once it
/// is up. Before, the signal's default action killed it there without
/// closing its store (exit by signal 2 or 15), and with 1,000,000 objects
/// stored a SIGINT was even lost, the server serving on.
#[test]
fn a_signal_during_start_up_stops_the_server_cleanly() {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    for signal in ["-INT", "-TERM"] {
        let dir = tempfile::tempdir().expect("a data dir");
        let log_path = dir.path().join("server.log");
        let log = std::fs::File::create(&log_path).expect("a log");
        let mut child = Command::new(env!("CARGO_BIN_EXE_capstan"))
            .arg("serve")
            .arg("--data-dir")
            .arg(dir.path().join("data"))
            .args(["--secure-port", "0"])
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(log))
            .spawn()
            .expect("spawn capstan");
        let log = || std::fs::read_to_string(&log_path).unwrap_or_default();
        // The PKI is written early in start-up, before the store opens.
        common::wait_until(Duration::from_secs(60), "start-up under way", || {
            log().contains("admin kubeconfig").then_some(())
        });
        let _ = Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status();
        let during_start_up = !log().contains("capstan is serving");
        let deadline = Instant::now() + Duration::from_secs(60);
        let status = loop {
            match child.try_wait().expect("the server's status") {
                Some(status) => break Some(status),
                None if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
                None => {
                    let _ = child.kill();
                    break None;
                }
            }
        };
        assert!(
            status.is_some_and(|s| s.success()),
            "{signal} (sent during start-up: {during_start_up}): {status:?}\n{}",
            log()
        );
        assert!(log().contains("shutting down"), "{}", log());
    }
}
