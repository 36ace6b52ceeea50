//! End-to-end storage behaviour: two replicas on one etcd, crash safety of
//! the embedded store, expiry after compaction, and pagination through
//! 1,000 objects with kubectl.

use crate::common;
use std::fmt::Write as _;
use std::process::Command;
use std::time::Duration;

use crate::common::{curl_bin, text, wait_until, Streaming, TestServer};
use capstan_core::storage::etcd::testing::{EtcdCluster, EtcdServer, EtcdTlsFiles};
use capstan_core::storage::Storage;

/// A curl config that POSTs one ConfigMap per name over one connection and
/// prints each response's status code on its own line, in request order.
fn batch_create(server: &TestServer, namespace: &str, names: &[String]) -> Command {
    let mut config = String::new();
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            config.push_str("next\n");
        }
        let _ = writeln!(
            config,
            "url = \"{}/api/v1/namespaces/{namespace}/configmaps\"\n\
             cacert = \"{}\"\ncert = \"{}\"\nkey = \"{}\"\n\
             header = \"Content-Type: application/json\"\n\
             data = \"{{\\\"metadata\\\":{{\\\"name\\\":\\\"{name}\\\"}},\\\"data\\\":{{\\\"i\\\":\\\"{i}\\\"}}}}\"\n\
             output = \"/dev/null\"\nwrite-out = \"%{{http_code}}\\\\n\"\nsilent",
            server.base_url(),
            server.ca_cert().display(),
            server.admin_cert().display(),
            server.admin_key().display(),
        );
    }
    let path = server.scratch("batch.curl");
    std::fs::write(&path, config).expect("write curl config");
    // Line-buffered: into a pipe curl's status lines would otherwise come
    // out 4 KiB (~1,000 creates) at a time, and a test watching the burst
    // would see none of them for as long as that takes on a loaded machine.
    let mut cmd = Command::new("stdbuf");
    cmd.arg("-oL").arg(curl_bin()).arg("-K").arg(path);
    cmd
}

fn names(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i:05}")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_on_one_etcd_serve_one_api() {
    let (_etcd, a, b) = common::two_replicas_on_etcd().await;

    a.kubectl_ok(&["create", "namespace", "shared"]);
    let mut watch = b.kubectl_spawn(&[
        "get",
        "configmaps",
        "-n",
        "shared",
        "-w",
        "--output-watch-events",
        "--no-headers",
    ]);
    a.kubectl_ok(&[
        "create",
        "configmap",
        "web",
        "-n",
        "shared",
        "--from-literal=k=v1",
    ]);
    watch.wait_for("ADDED through the other replica", |out| {
        out.contains("ADDED").then_some(())
    });

    let via_a = a.kubectl_json(&["get", "configmap", "web", "-n", "shared", "-o", "json"]);
    let via_b = b.kubectl_json(&["get", "configmap", "web", "-n", "shared", "-o", "json"]);
    assert_eq!(
        via_a["metadata"]["resourceVersion"],
        via_b["metadata"]["resourceVersion"]
    );
    assert_eq!(via_a["metadata"]["uid"], via_b["metadata"]["uid"]);

    b.kubectl_ok(&[
        "patch",
        "configmap",
        "web",
        "-n",
        "shared",
        "--type=merge",
        "-p",
        r#"{"data":{"k":"v2"}}"#,
    ]);
    watch.wait_for("MODIFIED made through the other replica", |out| {
        out.contains("MODIFIED").then_some(())
    });
    assert_eq!(
        a.kubectl_ok(&[
            "get",
            "configmap",
            "web",
            "-n",
            "shared",
            "-o",
            "jsonpath={.data.k}"
        ]),
        "v2"
    );

    // A write based on what replica A saw before B's change is stale everywhere.
    let mut stale = via_a.clone();
    stale["data"]["k"] = "v3".into();
    let resp = b.curl(
        "PUT",
        "/api/v1/namespaces/shared/configmaps/web",
        &[("Content-Type", "application/json")],
        Some(stale.to_string().as_bytes()),
    );
    let status = resp.assert_status(409, "Conflict");
    assert!(status["message"]
        .as_str()
        .unwrap_or_default()
        .contains("the object has been modified"));

    // A delete through A reaches B's watchers with the object as it was,
    // at the delete's revision (B's cache supplies the deleted object).
    let patched_rv: i64 = b
        .kubectl_ok(&[
            "get",
            "configmap",
            "web",
            "-n",
            "shared",
            "-o",
            "jsonpath={.metadata.resourceVersion}",
        ])
        .parse()
        .unwrap();
    a.kubectl_ok(&["delete", "configmap", "web", "-n", "shared"]);
    watch.wait_for("DELETED made through the other replica", |out| {
        out.contains("DELETED").then_some(())
    });
    let resp = b.curl(
        "GET",
        &format!(
            "/api/v1/namespaces/shared/configmaps?watch=1&resourceVersion={patched_rv}&timeoutSeconds=1"
        ),
        &[],
        None,
    );
    let body = resp.body;
    let deleted: serde_json::Value = body
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find(|event| event["type"] == "DELETED")
        .unwrap_or_else(|| panic!("a DELETED event in {body}"));
    assert_eq!(deleted["object"]["data"]["k"], "v2", "{deleted}");
    let deleted_rv: i64 = deleted["object"]["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|rv| rv.parse().ok())
        .unwrap_or_default();
    assert!(deleted_rv > patched_rv, "{deleted}");
    drop(watch);
}

/// Three etcd members, capstan given all three: each member in turn is
/// killed, and brought back before the next. Through the two that remain
/// the API keeps accepting writes, its watch cache keeps following them (a
/// list at resourceVersion=0 has every object) and a watch opened before
/// the first failure sees every object created, without being closed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_survives_each_etcd_member_failing_in_turn() {
    let mut etcd = EtcdCluster::start(3)
        .await
        .expect("a real etcd cluster (Debian's etcd-server)");
    let endpoints = etcd.endpoints.join(",");
    let server = TestServer::start_with(&["--etcd-servers", endpoints.as_str()]);
    server.kubectl_ok(&["create", "namespace", "ha"]);
    let mut watch = server.kubectl_spawn(&[
        "get",
        "configmaps",
        "-n",
        "ha",
        "-w",
        "--output-watch-events",
        "--no-headers",
    ]);
    server.kubectl_ok(&["create", "configmap", "before", "-n", "ha"]);
    watch.wait_for("the first ADDED", |out| {
        out.contains("before").then_some(())
    });

    let mut created = vec!["before".to_string()];
    for member in 0..3 {
        etcd.kill(member);
        // A request in flight on the killed member may fail; a retried
        // create that had reached etcd is AlreadyExists.
        let first = format!("member{member}-down-0");
        wait_until(Duration::from_secs(30), "a create after the kill", || {
            let out = server.kubectl(&["create", "configmap", &first, "-n", "ha"]);
            (out.status.success() || text(&out.stderr).contains("AlreadyExists")).then_some(())
        });
        created.push(first);
        for i in 1..5 {
            let name = format!("member{member}-down-{i}");
            server.kubectl_ok(&["create", "configmap", &name, "-n", "ha"]);
            created.push(name);
        }
        // The watch cache follows through the surviving members.
        wait_until(
            Duration::from_secs(30),
            "the watch cache to list every object",
            || {
                let resp = server.curl(
                    "GET",
                    "/api/v1/namespaces/ha/configmaps?resourceVersion=0",
                    &[],
                    None,
                );
                created
                    .iter()
                    .all(|name| resp.body.contains(&format!("\"name\":\"{name}\"")))
                    .then_some(())
            },
        );
        etcd.restart(member).await.expect("the member restarts");
    }
    watch.wait_for("ADDED for every object, on the watch opened first", |out| {
        let added: Vec<&str> = out
            .lines()
            .filter_map(|line| {
                let mut fields = line.split_whitespace();
                (fields.next() == Some("ADDED"))
                    .then(|| fields.next())
                    .flatten()
            })
            .collect();
        created
            .iter()
            .all(|name| added.contains(&name.as_str()))
            .then_some(())
    });
    let listed = server.kubectl_ok(&["get", "configmaps", "-n", "ha", "-o", "name"]);
    for name in &created {
        assert!(
            listed.contains(&format!("configmap/{name}")),
            "{name} in {listed}"
        );
    }
    drop(watch);
}

/// With a single etcd that restarts, requests fail while it is down and
/// work again once it is back, and a watch opened before stays open and
/// sees what was created afterwards: the watch caches wait for etcd and
/// resume from their revision instead of listing again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_stays_open_while_a_single_etcd_restarts() {
    let mut etcd = EtcdCluster::start(1)
        .await
        .expect("a real etcd (Debian's etcd-server)");
    let endpoints = etcd.endpoints.join(",");
    let server = TestServer::start_with(&["--etcd-servers", endpoints.as_str()]);
    let mut watch = server.kubectl_spawn(&[
        "get",
        "configmaps",
        "-w",
        "--output-watch-events",
        "--no-headers",
    ]);
    server.kubectl_ok(&["create", "configmap", "before"]);
    watch.wait_for("the first ADDED", |out| {
        out.contains("before").then_some(())
    });

    etcd.kill(0);
    let down = server.kubectl(&["get", "configmap", "before"]);
    assert!(
        !down.status.success(),
        "etcd is down: {}",
        text(&down.stdout)
    );
    // Long enough for every cache's first attempts to resume to fail.
    tokio::time::sleep(Duration::from_secs(2)).await;
    etcd.restart(0).await.expect("etcd restarts");
    wait_until(
        Duration::from_secs(30),
        "a create once etcd is back",
        || {
            let out = server.kubectl(&["create", "configmap", "after"]);
            (out.status.success() || text(&out.stderr).contains("AlreadyExists")).then_some(())
        },
    );
    watch.wait_for(
        "ADDED after the restart, on the watch opened before",
        |out| {
            out.lines()
                .any(|line| line.starts_with("ADDED") && line.contains("after"))
                .then_some(())
        },
    );
    assert!(
        server
            .server_log()
            .contains("watch cache resumed its storage watch"),
        "{}",
        server.server_log()
    );
    drop(watch);
}

/// A CA, etcd's serving pair for 127.0.0.1 and a client pair, as PEM files
/// in `dir`.
fn etcd_pki(dir: &std::path::Path) -> EtcdTlsFiles {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
    let ca_key = KeyPair::generate().expect("CA key");
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_cert = ca_params.self_signed(&ca_key).expect("CA");
    let issuer = Issuer::new(ca_params, ca_key);
    let leaf = |names: Vec<String>| {
        let key = KeyPair::generate().expect("leaf key");
        let cert = CertificateParams::new(names)
            .expect("leaf params")
            .signed_by(&key, &issuer)
            .expect("leaf");
        (cert.pem(), key.serialize_pem())
    };
    let (server_cert, server_key) = leaf(vec!["127.0.0.1".into(), "localhost".into()]);
    let (client_cert, client_key) = leaf(vec!["capstan".into()]);
    let write = |name: &str, pem: &str| {
        let path = dir.join(name);
        std::fs::write(&path, pem).expect("write PEM");
        path
    };
    EtcdTlsFiles {
        ca: write("ca.crt", &ca_cert.pem()),
        server_cert: write("etcd.crt", &server_cert),
        server_key: write("etcd.key", &server_key),
        client_cert: write("client.crt", &client_cert),
        client_key: write("client.key", &client_key),
    }
}

/// `--etcd-cafile`, `--etcd-certfile` and `--etcd-keyfile` against an etcd
/// that serves TLS and requires client certificates; without the client
/// certificate capstan refuses to start, saying why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn etcd_over_tls_with_a_client_certificate() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pki = etcd_pki(dir.path());
    let etcd = EtcdServer::start_tls(&pki)
        .await
        .expect("a real etcd serving TLS");
    assert!(etcd.endpoint.starts_with("https://"));
    let path = |p: &std::path::Path| p.display().to_string();
    let (ca, cert, key) = (path(&pki.ca), path(&pki.client_cert), path(&pki.client_key));
    let server = TestServer::start_with(&[
        "--etcd-servers",
        etcd.endpoint.as_str(),
        "--etcd-cafile",
        &ca,
        "--etcd-certfile",
        &cert,
        "--etcd-keyfile",
        &key,
    ]);
    server.kubectl_ok(&["create", "configmap", "over-tls", "--from-literal=k=v"]);
    assert_eq!(
        server.kubectl_ok(&["get", "configmap", "over-tls", "-o", "jsonpath={.data.k}"]),
        "v"
    );
    let stored = etcd
        .connect()
        .await
        .expect("a TLS client of the test etcd")
        .get("/registry/configmaps/default/over-tls")
        .await
        .expect("read the key");
    assert!(
        stored.is_some(),
        "the object is in etcd under upstream's key"
    );

    let data_dir = tempfile::tempdir().expect("temp dir");
    let refused = Command::new("timeout")
        .arg("60")
        .arg(env!("CARGO_BIN_EXE_capstan"))
        .arg("serve")
        .arg("--data-dir")
        .arg(data_dir.path())
        .args([
            "--secure-port",
            "0",
            "--etcd-servers",
            etcd.endpoint.as_str(),
        ])
        .args(["--etcd-cafile", &ca])
        .output()
        .expect("run capstan");
    let stderr = text(&refused.stderr);
    assert!(
        !refused.status.success() && refused.status.code() != Some(124),
        "capstan must exit, not serve or hang: {:?} {stderr}",
        refused.status
    );
    assert!(
        stderr.contains(&format!(
            "cannot reach etcd at {} over TLS without a client certificate",
            etcd.endpoint
        )),
        "the error says which etcd and how: {stderr}"
    );
}

#[test]
fn kill9_during_a_write_burst_keeps_every_acknowledged_object() {
    let mut server = TestServer::start();
    let all = names("burst-", 3000);
    let mut burst = Streaming::spawn(batch_create(&server, "default", &all));
    // Kill the server while the burst is in flight.
    burst.wait_for("some acknowledged creates", |out| {
        (out.lines().filter(|l| *l == "201").count() >= 200).then_some(())
    });
    server.kill9();
    let printed = burst.stop();
    let acknowledged: Vec<&String> = printed
        .lines()
        .zip(all.iter())
        .filter(|(code, _)| *code == "201")
        .map(|(_, name)| name)
        .collect();
    assert!(
        acknowledged.len() >= 200,
        "the burst was cut short: {printed}"
    );
    assert!(
        acknowledged.len() < all.len(),
        "the server died after the whole burst; kill it sooner"
    );

    server.start_again();
    let listed = server.get_json("/api/v1/namespaces/default/configmaps");
    let stored: std::collections::HashSet<&str> = listed["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|i| i["metadata"]["name"].as_str())
        .collect();
    let lost: Vec<&&String> = acknowledged
        .iter()
        .filter(|n| !stored.contains(n.as_str()))
        .collect();
    assert!(
        lost.is_empty(),
        "{} acknowledged creates were lost after kill -9: {:?}",
        lost.len(),
        &lost[..lost.len().min(10)]
    );
    // Revisions keep growing after the crash.
    let before: i64 = listed["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or("0")
        .parse()
        .unwrap_or(0);
    server.kubectl_ok(&["create", "configmap", "after-crash"]);
    let after = server.kubectl_json(&["get", "configmap", "after-crash", "-o", "json"]);
    let rv: i64 = after["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or("0")
        .parse()
        .unwrap_or(0);
    assert!(
        rv > before,
        "resourceVersion {rv} after restart is not above {before}"
    );
}

#[test]
fn compaction_expires_old_resource_versions_with_410() {
    let mut server = TestServer::start_with(&["--etcd-compaction-interval", "1s"]);
    server.kubectl_ok(&["create", "configmap", "a", "--from-literal=k=1"]);
    server.kubectl_ok(&["create", "configmap", "b", "--from-literal=k=1"]);
    let first = server.kubectl_json(&["get", "configmap", "a", "-o", "json"]);
    let old_rv = first["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .to_string();
    let page = server.get_json("/api/v1/namespaces/default/configmaps?limit=1");
    let token = page["metadata"]["continue"]
        .as_str()
        .expect("a continue token")
        .to_string();
    server.kubectl_ok(&[
        "patch",
        "configmap",
        "a",
        "--type=merge",
        "-p",
        r#"{"data":{"k":"2"}}"#,
    ]);
    // A restart starts the watch cache after the old revision, so only the
    // store's history can serve it; compaction then removes that history.
    server.restart();
    server.kubectl_ok(&[
        "patch",
        "configmap",
        "a",
        "--type=merge",
        "-p",
        r#"{"data":{"k":"3"}}"#,
    ]);
    let mut expired = None;
    for _ in 0..100 {
        let resp = server.get(&format!(
            "/api/v1/namespaces/default/configmaps?continue={token}"
        ));
        if resp.status == 410 {
            expired = Some(resp);
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let resp = expired.expect("the continue token expires once its revision is compacted");
    let status = resp.assert_status(410, "Expired");
    assert!(status["message"]
        .as_str()
        .unwrap_or_default()
        .starts_with("The provided continue parameter is too old"));

    let watch = server.get(&format!(
        "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion={old_rv}&timeoutSeconds=2"
    ));
    assert_eq!(watch.status, 200);
    let event: serde_json::Value =
        serde_json::from_str(watch.body.lines().next().unwrap_or("{}")).expect("one JSON event");
    assert_eq!(event["type"], "ERROR");
    assert_eq!(event["object"]["code"], 410);
    assert_eq!(event["object"]["reason"], "Expired");
    assert!(event["object"]["message"]
        .as_str()
        .unwrap_or_default()
        .starts_with("too old resource version"));
}

#[test]
fn kubectl_pages_through_a_thousand_objects() {
    let server = TestServer::start();
    server.kubectl_ok(&["create", "namespace", "many"]);
    let all = names("cm-", 1000);
    let out = common::run_command(
        &mut batch_create(&server, "many", &all),
        None,
        Duration::from_secs(120),
    );
    let created = text(&out.stdout).lines().filter(|l| *l == "201").count();
    assert_eq!(created, 1000, "{}", text(&out.stdout));

    let verbose = server.kubectl(&[
        "get",
        "configmaps",
        "-n",
        "many",
        "--chunk-size=100",
        "--no-headers",
        "-v=6",
    ]);
    assert!(verbose.status.success(), "{}", text(&verbose.stderr));
    let rows: Vec<String> = text(&verbose.stdout)
        .lines()
        .map(|l| l.split_whitespace().next().unwrap_or("").to_string())
        .collect();
    assert_eq!(rows.len(), 1000);
    let mut sorted = rows.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), 1000, "every object exactly once");
    let pages = text(&verbose.stderr).matches("limit=100").count();
    assert!(
        pages >= 10,
        "kubectl should have fetched 10 pages, saw {pages}"
    );
}

#[test]
fn streaming_list_ends_initial_events_with_a_bookmark() {
    let server = TestServer::start();
    server.kubectl_ok(&["create", "configmap", "one"]);
    server.kubectl_ok(&["create", "configmap", "two"]);
    let resp = server.get(
        "/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=1",
    );
    assert_eq!(resp.status, 200);
    let events: Vec<serde_json::Value> = resp
        .body
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON event per line"))
        .collect();
    let types: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    assert_eq!(types, ["ADDED", "ADDED", "BOOKMARK"], "{events:?}");
    let bookmark = &events[2]["object"];
    assert_eq!(
        bookmark["metadata"]["annotations"]["k8s.io/initial-events-end"],
        "true"
    );
    // The bookmark's revision covers both objects.
    let rv = |e: &serde_json::Value| {
        e["metadata"]["resourceVersion"]
            .as_str()
            .unwrap_or("0")
            .parse::<i64>()
            .unwrap_or(0)
    };
    assert!(rv(bookmark) >= rv(&events[0]["object"]).max(rv(&events[1]["object"])));
}
