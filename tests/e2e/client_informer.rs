//! The Rust client and its informer against the real `capstan` binary:
//! CRUD through gRPC, then an informer that must see every change once and
//! in order — live, across a server restart (the watch resumes from its
//! resourceVersion), and across a restart after compaction (the watch is
//! refused as expired, so the informer relists and reports the difference).

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use capstan_client::{
    Backoff, Client, GroupVersionResource, Informer, InformerEvent, PatchType, WatchParams,
};
use futures::StreamExt;
use serde_json::{json, Value};
use tokio::sync::mpsc;

const LABEL: &str = "suite=client-informer";
const NS: &str = "default";

struct Server {
    child: Child,
    port: u16,
}

impl Server {
    /// Starts `capstan serve` on `port` (0: any) and waits for its port file.
    fn start(dir: &Path, port: u16, extra: &[&str]) -> Self {
        let port_file = dir.join("port");
        let _ = std::fs::remove_file(&port_file);
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("server.log"))
            .expect("open server log");
        let child = Command::new(env!("CARGO_BIN_EXE_capstan"))
            .arg("serve")
            .arg("--data-dir")
            .arg(dir)
            .args(["--secure-port", &port.to_string()])
            .arg("--port-file")
            .arg(&port_file)
            .args(extra)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("spawn capstan");
        // Owned by a Server from here on, so a failed start still reaps it.
        let mut server = Self { child, port: 0 };
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(port) = std::fs::read_to_string(&port_file)
                .ok()
                .and_then(|s| s.trim().parse().ok())
            {
                server.port = port;
                return server;
            }
            assert!(
                Instant::now() < deadline,
                "capstan did not start; see {}",
                dir.join("server.log").display()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGKILL: no graceful end for open watches, as in a crash.
    fn kill(mut self) -> u16 {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.port
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn configmaps() -> GroupVersionResource {
    GroupVersionResource::core("v1", "configmaps")
}

fn cm(name: &str, value: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"suite": "client-informer"}},
        "data": {"value": value},
    })
}

fn describe(ev: &InformerEvent) -> String {
    match ev {
        InformerEvent::Synced { relist, .. } => {
            if *relist {
                "RELISTED".into()
            } else {
                "SYNCED".into()
            }
        }
        other => {
            let obj = other.object().expect("an object event");
            let verb = match other {
                InformerEvent::Added(_) => "ADDED",
                InformerEvent::Modified(_) => "MODIFIED",
                _ => "DELETED",
            };
            format!(
                "{verb} {}={}",
                obj["metadata"]["name"].as_str().unwrap_or("?"),
                obj["data"]["value"].as_str().unwrap_or("?")
            )
        }
    }
}

async fn expect_events(rx: &mut mpsc::UnboundedReceiver<InformerEvent>, expected: &[&str]) {
    let mut seen = Vec::new();
    for want in expected {
        let ev = tokio::time::timeout(Duration::from_secs(60), rx.recv())
            .await
            .unwrap_or_else(|_| panic!("timed out waiting for {want}; saw {seen:?}"))
            .expect("informer task ended");
        seen.push(describe(&ev));
        assert_eq!(
            seen.last().map(String::as_str),
            Some(*want),
            "events so far: {seen:?}"
        );
    }
}

fn store_summary(store: &capstan_client::Store) -> Vec<String> {
    store
        .list()
        .iter()
        .map(|o| {
            format!(
                "{}={}",
                o["metadata"]["name"].as_str().unwrap_or("?"),
                o["data"]["value"].as_str().unwrap_or("?")
            )
        })
        .collect()
}

async fn connect(dir: &Path) -> Client {
    Client::from_kubeconfig(dir.join("admin.kubeconfig"))
        .await
        .expect("connect with admin.kubeconfig")
}

async fn set_value(client: &Client, name: &str, value: &str) {
    client
        .patch(
            &configmaps(),
            Some(NS),
            name,
            PatchType::Merge,
            &json!({"data": {"value": value}}),
        )
        .await
        .expect("patch");
}

/// Waits until the server refuses a watch from `rv` as expired (compacted).
async fn wait_compacted_past(client: &Client, rv: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let params = WatchParams {
            resource_version: rv.to_string(),
            timeout_seconds: 1,
            ..Default::default()
        };
        let expired = match client.watch(&configmaps(), Some(NS), &params).await {
            Err(e) => e.is_expired(),
            Ok(mut stream) => match stream.next().await {
                Some(Ok(ev)) => ev.error().is_some_and(|e| e.is_expired()),
                Some(Err(e)) => e.is_expired(),
                None => false,
            },
        };
        if expired {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "revision {rv} was never compacted"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A field the server drops under its default `fieldValidation` (Warn)
/// reaches the caller as a warning, not silently.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_warnings_reach_the_warning_handler() {
    let dir = tempfile::tempdir().expect("tempdir");
    let _server = Server::start(dir.path(), 0, &[]);
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let sink = seen.clone();
    let client = connect(dir.path())
        .await
        .with_warning_handler(std::sync::Arc::new(move |text: &str| {
            if let Ok(mut seen) = sink.lock() {
                seen.push(text.to_string());
            }
        }));
    let mut obj = cm("warned", "one");
    obj["colour"] = json!("blue");
    let created = client
        .create(&configmaps(), Some(NS), &obj)
        .await
        .expect("create");
    assert!(created.get("colour").is_none(), "{created}");
    let seen = seen.lock().map(|s| s.clone()).unwrap_or_default();
    assert_eq!(seen, [r#"unknown field "colour""#]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crud_round_trips_through_grpc() {
    let dir = tempfile::tempdir().expect("tempdir");
    let _server = Server::start(dir.path(), 0, &[]);
    let client = connect(dir.path()).await;
    let gvr = configmaps();

    let mut obj = cm("crud", "one");
    obj["data"]["count"] = json!("3");
    obj["metadata"]["annotations"] = json!({"n": "1"});
    let created = client.create(&gvr, Some(NS), &obj).await.expect("create");
    assert_eq!(created["data"]["value"], "one");
    assert!(created["metadata"]["uid"]
        .as_str()
        .is_some_and(|u| !u.is_empty()));

    let err = client.create(&gvr, Some(NS), &obj).await.unwrap_err();
    assert!(err.is_already_exists(), "{err}");
    assert_eq!(err.api().and_then(|e| e.http_code()), Some(409));

    let got = client.get(&gvr, Some(NS), "crud").await.expect("get");
    assert_eq!(
        got["metadata"]["resourceVersion"],
        created["metadata"]["resourceVersion"]
    );

    let mut changed = got.clone();
    changed["data"]["value"] = json!("two");
    let updated = client
        .update(&gvr, Some(NS), &changed)
        .await
        .expect("update");
    assert_eq!(updated["data"]["value"], "two");
    // The first read's resourceVersion is stale now: compare-and-swap fails.
    let err = client.update(&gvr, Some(NS), &changed).await.unwrap_err();
    assert!(err.is_conflict(), "{err}");

    let patched = client
        .patch(
            &gvr,
            Some(NS),
            "crud",
            PatchType::Json,
            &json!([{"op": "replace", "path": "/data/value", "value": "three"}]),
        )
        .await
        .expect("json patch");
    assert_eq!(patched["data"]["value"], "three");

    let page = client
        .list(
            &gvr,
            Some(NS),
            &capstan_client::ListParams {
                label_selector: LABEL.into(),
                ..Default::default()
            },
        )
        .await
        .expect("list");
    assert_eq!(page.items.len(), 1);
    assert!(!page.resource_version.is_empty());

    client.delete(&gvr, Some(NS), "crud").await.expect("delete");
    let err = client.get(&gvr, Some(NS), "crud").await.unwrap_err();
    assert!(err.is_not_found(), "{err}");
    assert_eq!(err.api().and_then(|e| e.reason()), Some("NotFound"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn informer_sees_every_change_in_order_across_restarts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), 0, &[]);
    let client = connect(dir.path()).await;
    let gvr = configmaps();

    // A fixed, long backoff makes the relist phase deterministic: the server
    // is restarted, written to and compacted well before the informer's
    // next attempt.
    let backoff = Backoff {
        initial: Duration::from_secs(6),
        max: Duration::from_secs(6),
        factor: 1.0,
        jitter: 0.0,
    };
    let informer = Informer::new(connect(dir.path()).await, gvr.clone(), Some(NS), LABEL)
        .with_backoff(backoff)
        .with_page_size(2);
    // Objects that exist before the informer starts arrive through the list
    // (paged: page size 2), the rest through the watch.
    for name in ["pre1", "pre2", "pre3"] {
        client
            .create(&gvr, Some(NS), &cm(name, "0"))
            .await
            .expect("create");
    }
    // An unlabelled object is outside the selector and never shows up.
    let mut other = cm("unlabelled", "0");
    other["metadata"]["labels"] = json!({});
    client.create(&gvr, Some(NS), &other).await.expect("create");
    let store = informer.store();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let task = tokio::spawn(async move {
        let mut informer = informer;
        loop {
            match informer.next_event().await {
                Ok(ev) => {
                    if tx.send(ev).is_err() {
                        return;
                    }
                }
                // Expected while the server is down; the informer retries.
                Err(e) => eprintln!("informer error (retrying): {e}"),
            }
        }
    });

    expect_events(
        &mut rx,
        &["ADDED pre1=0", "ADDED pre2=0", "ADDED pre3=0", "SYNCED"],
    )
    .await;

    // Live watch.
    client
        .create(&gvr, Some(NS), &cm("a", "1"))
        .await
        .expect("create a");
    client
        .create(&gvr, Some(NS), &cm("b", "1"))
        .await
        .expect("create b");
    set_value(&client, "a", "2").await;
    client.delete(&gvr, Some(NS), "b").await.expect("delete b");
    client
        .delete(&gvr, Some(NS), "pre2")
        .await
        .expect("delete pre2");
    expect_events(
        &mut rx,
        &[
            "ADDED a=1",
            "ADDED b=1",
            "MODIFIED a=2",
            "DELETED b=1",
            "DELETED pre2=0",
        ],
    )
    .await;
    assert_eq!(store_summary(&store), ["a=2", "pre1=0", "pre3=0"]);

    // Crash and restart on the same port: the broken watch resumes from the
    // last resourceVersion, so the changes arrive as they happened.
    let port = server.kill();
    let server = Server::start(dir.path(), port, &[]);
    let client = connect(dir.path()).await;
    client
        .create(&gvr, Some(NS), &cm("c", "1"))
        .await
        .expect("create c");
    set_value(&client, "c", "2").await;
    set_value(&client, "pre1", "1").await;
    client.delete(&gvr, Some(NS), "a").await.expect("delete a");
    expect_events(
        &mut rx,
        &[
            "ADDED c=1",
            "MODIFIED c=2",
            "MODIFIED pre1=1",
            "DELETED a=2",
        ],
    )
    .await;
    assert_eq!(store_summary(&store), ["c=2", "pre1=1", "pre3=0"]);

    // Crash again and change things while the informer is away: the server
    // comes back once to take the writes, and once more with compaction on,
    // so that the informer's resourceVersion is older than both the new
    // watch cache and the compacted storage history. Its watch is refused
    // as expired; it must relist and report what changed. The informer's
    // 6 s backoff keeps it away until all this is done.
    let resume_rv = store.resource_version();
    let port = server.kill();
    let away = Server::start(dir.path(), port, &[]);
    let client = connect(dir.path()).await;
    client
        .create(&gvr, Some(NS), &cm("d", "1"))
        .await
        .expect("create d");
    set_value(&client, "d", "2").await;
    set_value(&client, "pre3", "1").await;
    client.delete(&gvr, Some(NS), "c").await.expect("delete c");
    drop(client);
    let port = away.kill();
    let _server = Server::start(dir.path(), port, &["--etcd-compaction-interval", "200ms"]);
    let client = connect(dir.path()).await;
    wait_compacted_past(&client, &resume_rv).await;
    expect_events(
        &mut rx,
        &["DELETED c=2", "ADDED d=2", "MODIFIED pre3=1", "RELISTED"],
    )
    .await;
    assert_eq!(store_summary(&store), ["d=2", "pre1=1", "pre3=1"]);

    // And the watch after the relist is live again.
    set_value(&client, "d", "3").await;
    expect_events(&mut rx, &["MODIFIED d=3"]).await;
    assert!(store.has_synced());
    task.abort();
}
