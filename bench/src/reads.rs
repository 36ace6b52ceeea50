//! The read benchmark: gets and lists of objects filled in first.

use std::sync::Arc;
use std::time::{Duration, Instant};

use capstan_client::{Client, GroupVersionResource, ListParams};
use rand::Rng;
use serde_json::Value;

use crate::error::BenchError;
use crate::load::{self, percentile};
use crate::rest::{expect_status, RestConn};
use crate::server::ServerProc;
use crate::{ensure_namespace, say};

pub(super) struct ReadRow {
    pub(super) operation: String,
    pub(super) path: &'static str,
    pub(super) requests: usize,
    pub(super) p50: Duration,
    pub(super) p99: Duration,
    pub(super) max: Duration,
    pub(super) bytes: usize,
    /// The server's CPU time per measured request (from /proc, in 10 ms
    /// ticks, over all of them).
    pub(super) server_cpu: Option<Duration>,
}

pub(super) fn read_row(
    operation: String,
    path: &'static str,
    mut us: Vec<u32>,
    bytes: usize,
) -> ReadRow {
    us.sort_unstable();
    ReadRow {
        operation,
        path,
        requests: us.len(),
        p50: percentile(&us, 0.5),
        p99: percentile(&us, 0.99),
        max: percentile(&us, 1.0),
        bytes,
        server_cpu: None,
    }
}

/// Server CPU per request between `from` (the CPU time when the measured
/// requests began) and now.
fn cpu_per_request(
    server: &ServerProc,
    from: Option<Duration>,
    requests: usize,
) -> Result<Option<Duration>, BenchError> {
    let Some(from) = from else { return Ok(None) };
    let used = server.cpu_time()?.saturating_sub(from);
    Ok(Some(
        used / u32::try_from(requests.max(1)).unwrap_or(u32::MAX),
    ))
}

pub(super) fn elapsed_us(t0: Instant) -> u32 {
    u32::try_from(t0.elapsed().as_micros()).unwrap_or(u32::MAX)
}

/// Adds `cm-<from>` .. `cm-<to - 1>` to the list namespace, 8 connections at once.
pub(super) async fn fill(
    server: &ServerProc,
    tls: &Arc<rustls::ClientConfig>,
    from: usize,
    to: usize,
) -> Result<(), BenchError> {
    const FILLERS: usize = 8;
    let mut conn = RestConn::connect(server.port, tls.clone()).await?;
    ensure_namespace(&mut conn, LIST_NS).await?;
    let mut tasks = Vec::new();
    for w in 0..FILLERS {
        let mut conn = RestConn::connect(server.port, tls.clone()).await?;
        let names: Vec<usize> = (from..to).filter(|i| i % FILLERS == w).collect();
        tasks.push(tokio::spawn(async move {
            for i in names {
                let body = serde_json::to_vec(&load::configmap(&format!("cm-{i:05}")))?;
                expect_status(
                    conn.post(&format!("/api/v1/namespaces/{LIST_NS}/configmaps"), body)
                        .await?,
                    201,
                )?;
            }
            Ok::<_, BenchError>(())
        }));
    }
    for task in tasks {
        task.await
            .map_err(|e| BenchError::Http(format!("filler panicked: {e}")))??;
    }
    say(format!("stored {to} ConfigMaps in {LIST_NS}"));
    Ok(())
}

pub(super) const LIST_NS: &str = "bench-list";

/// Checks a list of the namespace's `count` filled ConfigMaps: in JSON,
/// their number (the namespace also holds what controllers publish in
/// every namespace, kube-root-ca.crt); in protobuf, the envelope and a
/// plausible size.
fn check_list(body: &[u8], protobuf: bool, count: usize) -> Result<(), BenchError> {
    if protobuf {
        if !body.starts_with(b"k8s\0") || body.len() < count * 100 {
            return Err(BenchError::Http(format!(
                "the protobuf list is not one: {} bytes",
                body.len()
            )));
        }
        return Ok(());
    }
    let items = serde_json::from_slice::<Value>(body)?["items"]
        .as_array()
        .map_or(0, |items| {
            items.iter().filter(|item| is_filled(item)).count()
        });
    if items != count {
        return Err(BenchError::Http(format!(
            "list returned {items} items, expected {count}"
        )));
    }
    Ok(())
}

/// Whether `item` is one of the ConfigMaps `fill` made.
fn is_filled(item: &Value) -> bool {
    item.pointer("/metadata/name")
        .and_then(Value::as_str)
        .is_some_and(|name| name.starts_with("cm-"))
}

/// Connections of the concurrent get phases.
const GET_CONNECTIONS: usize = 32;

/// One connection of a concurrent get phase.
enum GetConn {
    Rest(RestConn),
    Grpc(Box<Client>),
}

impl GetConn {
    async fn get(&mut self, name: &str) -> Result<(), BenchError> {
        match self {
            GetConn::Rest(conn) => {
                let path = format!("/api/v1/namespaces/{LIST_NS}/configmaps/{name}");
                expect_status(conn.get(&path).await?, 200).map(drop)
            }
            GetConn::Grpc(client) => {
                let gvr = GroupVersionResource::core("v1", "configmaps");
                client.get(&gvr, Some(LIST_NS), name).await.map(drop)?;
                Ok(())
            }
        }
    }
}

/// Each of `conns` gets every name of `names` (in its own order), after
/// 20 unmeasured gets each.
async fn concurrent_gets(
    server: &ServerProc,
    conns: Vec<GetConn>,
    path: &'static str,
    names: &[String],
) -> Result<ReadRow, BenchError> {
    const WARM: usize = 20;
    let connections = conns.len();
    let warmed = Arc::new(tokio::sync::Barrier::new(connections + 1));
    let go = Arc::new(tokio::sync::Barrier::new(connections + 1));
    let mut tasks = Vec::with_capacity(connections);
    for (c, mut conn) in conns.into_iter().enumerate() {
        let mut names = names.to_vec();
        let turn = c * 31 % names.len().max(1);
        names.rotate_left(turn);
        let (warmed, go) = (warmed.clone(), go.clone());
        tasks.push(tokio::spawn(async move {
            for name in names.iter().take(WARM) {
                conn.get(name).await?;
            }
            warmed.wait().await;
            go.wait().await;
            let mut us = Vec::with_capacity(names.len());
            for name in &names {
                let t0 = Instant::now();
                conn.get(name).await?;
                us.push(elapsed_us(t0));
            }
            Ok::<_, BenchError>(us)
        }));
    }
    warmed.wait().await;
    let cpu0 = server.cpu_time()?;
    go.wait().await;
    let mut us = Vec::new();
    for task in tasks {
        us.extend(
            task.await
                .map_err(|e| BenchError::Http(format!("getter panicked: {e}")))??,
        );
    }
    let server_cpu = cpu_per_request(server, Some(cpu0), us.len())?;
    Ok(ReadRow {
        server_cpu,
        ..read_row(
            format!("get by name, {connections} connections at once"),
            path,
            us,
            0,
        )
    })
}

/// The two ways a list can be served from the watch cache.
pub(super) const LIST_KINDS: [(&str, &str); 2] = [("consistent", ""), ("resourceVersion=0", "0")];

/// Times gets by name and whole-namespace lists with `count` objects stored.
pub(super) async fn measure_reads(
    server: &ServerProc,
    tls: &Arc<rustls::ClientConfig>,
    kubeconfig: &std::path::Path,
    count: usize,
) -> Result<Vec<ReadRow>, BenchError> {
    const GETS: usize = 1000;
    const LISTS: usize = 20;
    let mut conn = RestConn::connect(server.port, tls.clone()).await?;
    let mut rng = rand::rng();
    let mut names: Vec<String> = (0..GETS + 100)
        .map(|_| format!("cm-{:05}", rng.random_range(0..count)))
        .collect();
    let mut rows = Vec::new();

    // REST get by name; the first 100 warm the connection and caches.
    let mut us = Vec::with_capacity(GETS);
    let mut bytes = 0;
    let mut cpu0 = None;
    for (i, name) in names.iter().enumerate() {
        if i == 100 {
            cpu0 = Some(server.cpu_time()?);
        }
        let t0 = Instant::now();
        let body = expect_status(
            conn.get(&format!("/api/v1/namespaces/{LIST_NS}/configmaps/{name}"))
                .await?,
            200,
        )?;
        if i >= 100 {
            us.push(elapsed_us(t0));
            bytes = body.len();
        }
    }
    let server_cpu = cpu_per_request(server, cpu0, us.len())?;
    rows.push(ReadRow {
        server_cpu,
        ..read_row("get by name".into(), "REST", us, bytes)
    });

    // The same gets from many connections at once, as the GET
    // figure is taken: the server's CPU per get without one client's
    // round trips between them.
    let mut conns = Vec::with_capacity(GET_CONNECTIONS);
    for _ in 0..GET_CONNECTIONS {
        conns.push(GetConn::Rest(
            RestConn::connect(server.port, tls.clone()).await?,
        ));
    }
    rows.push(concurrent_gets(server, conns, "REST", &names).await?);

    // JSON, and protobuf as client-go's informers ask for built-in kinds.
    const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";
    for (accept, form) in [("application/json", ""), (PROTOBUF, ", protobuf")] {
        for (label, rv) in LIST_KINDS {
            let mut list_path = format!("/api/v1/namespaces/{LIST_NS}/configmaps");
            if !rv.is_empty() {
                list_path.push_str(&format!("?resourceVersion={rv}"));
            }
            let mut us = Vec::with_capacity(LISTS);
            let mut cpu0 = None;
            for i in 0..LISTS + 2 {
                if i == 2 {
                    cpu0 = Some(server.cpu_time()?);
                }
                // Timed until the whole body is in; the bench's own check
                // of it (tens of ms to parse 10,000 items) is not the
                // server's.
                let t0 = Instant::now();
                let body = expect_status(conn.get_as(&list_path, accept).await?, 200)?;
                let took = elapsed_us(t0);
                check_list(&body, accept == PROTOBUF, count)?;
                if i >= 2 {
                    us.push(took);
                    bytes = body.len();
                }
            }
            // The bench's checks ran between the requests, not in the server.
            let server_cpu = cpu_per_request(server, cpu0, us.len())?;
            rows.push(ReadRow {
                server_cpu,
                ..read_row(format!("list ({label}){form}"), "REST", us, bytes)
            });
        }
    }

    // The same reads over gRPC, for comparison.
    let client = Client::from_kubeconfig(kubeconfig).await?;
    let gvr = GroupVersionResource::core("v1", "configmaps");
    names.rotate_left(37);
    let mut us = Vec::with_capacity(GETS);
    let mut cpu0 = None;
    for (i, name) in names.iter().enumerate() {
        if i == 100 {
            cpu0 = Some(server.cpu_time()?);
        }
        let t0 = Instant::now();
        client.get(&gvr, Some(LIST_NS), name).await?;
        if i >= 100 {
            us.push(elapsed_us(t0));
        }
    }
    let server_cpu = cpu_per_request(server, cpu0, us.len())?;
    rows.push(ReadRow {
        server_cpu,
        ..read_row("get by name".into(), "gRPC", us, 0)
    });
    let mut conns = Vec::with_capacity(GET_CONNECTIONS);
    for _ in 0..GET_CONNECTIONS {
        conns.push(GetConn::Grpc(Box::new(
            Client::from_kubeconfig(kubeconfig).await?,
        )));
    }
    rows.push(concurrent_gets(server, conns, "gRPC", &names).await?);
    for (label, rv) in LIST_KINDS {
        let params = ListParams {
            resource_version: rv.into(),
            ..Default::default()
        };
        let mut us = Vec::with_capacity(LISTS);
        let mut cpu0 = None;
        for i in 0..LISTS + 2 {
            if i == 2 {
                cpu0 = Some(server.cpu_time()?);
            }
            let t0 = Instant::now();
            let list = client.list(&gvr, Some(LIST_NS), &params).await?;
            let filled = list.items.iter().filter(|item| is_filled(item)).count();
            if filled != count {
                return Err(BenchError::Http(format!(
                    "gRPC list returned {filled} filled items, expected {count}"
                )));
            }
            if i >= 2 {
                us.push(elapsed_us(t0));
            }
        }
        let server_cpu = cpu_per_request(server, cpu0, us.len())?;
        rows.push(ReadRow {
            server_cpu,
            ..read_row(format!("list ({label})"), "gRPC", us, 0)
        });
    }
    Ok(rows)
}
