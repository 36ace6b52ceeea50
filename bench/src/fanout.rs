//! Watch fan-out: many watchers (gRPC or REST) on one namespace, a few
//! spaced writes, and for each write the time until the last watcher has
//! its event.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use capstan_client::{Client, GroupVersionResource, ListParams, WatchParams};
use futures::StreamExt;
use serde_json::Value;

use crate::error::BenchError;
use crate::rest::RestConn;
use crate::server::{self, ServerProc};
use crate::{ensure_namespace, load};

/// How the watchers watch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Transport {
    /// capstan.v1.Resources/Watch through capstan-client.
    Grpc,
    /// `GET ...?watch=1`, JSON lines over HTTP/2 (what client-go does).
    Rest,
}

impl Transport {
    pub fn label(self) -> &'static str {
        match self {
            Self::Grpc => "gRPC",
            Self::Rest => "REST",
        }
    }

    fn namespace(self) -> &'static str {
        match self {
            Self::Grpc => "bench-watch",
            Self::Rest => "bench-watch-rest",
        }
    }
}
/// How long a watcher waits for all its events before giving up.
const DEADLINE: Duration = Duration::from_secs(120);

pub struct FanoutResult {
    pub transport: Transport,
    pub watchers: usize,
    pub conns: usize,
    pub writes: usize,
    pub interval: Duration,
    /// Opening every watch (sequential calls), and the first (unmeasured)
    /// write reaching all of them.
    pub setup: Duration,
    /// Per measured write, just before the request → last watcher has it; sorted µs.
    pub latencies_us: Vec<u32>,
    /// Write → first watcher has it; sorted µs.
    pub first_us: Vec<u32>,
    /// Watcher × write deliveries that never arrived.
    pub missed: usize,
    pub rss_before: u64,
    pub rss_open: u64,
    pub server_cpu: Duration,
    pub client_cpu: Duration,
}

fn index_of(obj: &Value) -> Option<usize> {
    obj["metadata"]["name"]
        .as_str()?
        .strip_prefix("fan-")?
        .parse()
        .ok()
}

fn write_name(i: usize) -> String {
    format!("fan-{i}")
}

async fn write(conn: &mut RestConn, ns: &str, i: usize) -> Result<(), BenchError> {
    let body = serde_json::to_vec(&load::configmap(&write_name(i)))?;
    let created = conn
        .post(&format!("/api/v1/namespaces/{ns}/configmaps"), body)
        .await?;
    crate::rest::expect_status(created, 201)?;
    Ok(())
}

#[allow(clippy::too_many_arguments)]
pub async fn measure(
    server: &ServerProc,
    tls: &Arc<rustls::ClientConfig>,
    kubeconfig: &std::path::Path,
    transport: Transport,
    watchers: usize,
    conns: usize,
    writes: usize,
    interval: Duration,
) -> Result<FanoutResult, BenchError> {
    let ns = transport.namespace();
    let mut conn = RestConn::connect(server.port, tls.clone()).await?;
    ensure_namespace(&mut conn, ns).await?;
    let rss_before = server.rss_bytes()?;
    let conns = conns.max(1);
    let mut clients = Vec::new();
    let mut rest_conns = Vec::new();
    for _ in 0..conns {
        match transport {
            Transport::Grpc => clients.push(Client::from_kubeconfig(kubeconfig).await?),
            Transport::Rest => rest_conns.push(RestConn::connect(server.port, tls.clone()).await?),
        }
    }
    let gvr = GroupVersionResource::core("v1", "configmaps");
    let rv = Client::from_kubeconfig(kubeconfig)
        .await?
        .list(&gvr, Some(ns), &ListParams::default())
        .await?
        .resource_version;
    let params = WatchParams {
        resource_version: rv.clone(),
        ..Default::default()
    };
    let rest_path = format!("/api/v1/namespaces/{ns}/configmaps?watch=1&resourceVersion={rv}");

    // Write 0 is the unmeasured write that proves every watch is registered.
    let total = writes + 1;
    let received: Arc<Vec<AtomicUsize>> =
        Arc::new((0..total).map(|_| AtomicUsize::new(0)).collect());
    let t_setup = Instant::now();
    let deadline = tokio::time::Instant::now() + DEADLINE;
    let mut tasks = Vec::with_capacity(watchers);
    for w in 0..watchers {
        // The watched objects, whichever way they come.
        let mut stream = match transport {
            Transport::Grpc => clients[w % conns]
                .watch(&gvr, Some(ns), &params)
                .await?
                .map(|event| event.map(|e| e.object).unwrap_or_default())
                .boxed(),
            Transport::Rest => rest_conns[w % conns]
                .watch(&rest_path)
                .await?
                .map(|mut event| event["object"].take())
                .boxed(),
        };
        let received = received.clone();
        tasks.push(tokio::spawn(async move {
            let mut seen: Vec<Option<Instant>> = vec![None; total];
            let mut got = 0;
            while got < total {
                let Ok(Some(object)) = tokio::time::timeout_at(deadline, stream.next()).await
                else {
                    break;
                };
                let now = Instant::now();
                if let Some(slot) = index_of(&object).and_then(|i| seen.get_mut(i)) {
                    if slot.is_none() {
                        *slot = Some(now);
                        got += 1;
                        if let Some(i) = index_of(&object) {
                            received[i].fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            }
            seen
        }));
    }
    write(&mut conn, ns, 0).await?;
    while received[0].load(Ordering::Relaxed) < watchers {
        if t_setup.elapsed() > DEADLINE {
            return Err(BenchError::Http(format!(
                "only {} of {watchers} watchers saw the first write",
                received[0].load(Ordering::Relaxed)
            )));
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let setup = t_setup.elapsed();
    let rss_open = server.rss_bytes()?;

    let server_cpu0 = server.cpu_time()?;
    let own_cpu0 = server::own_cpu_time()?;
    let start = tokio::time::Instant::now();
    let mut sent = vec![Instant::now(); total];
    for (i, at) in sent.iter_mut().enumerate().skip(1) {
        tokio::time::sleep_until(start + interval * (i as u32 - 1)).await;
        *at = Instant::now();
        write(&mut conn, ns, i).await?;
    }
    let mut last: Vec<Option<Instant>> = vec![None; total];
    let mut first: Vec<Option<Instant>> = vec![None; total];
    let mut missed = 0;
    for task in tasks {
        let seen = task
            .await
            .map_err(|e| BenchError::Http(format!("watcher panicked: {e}")))?;
        for i in 1..total {
            match seen[i] {
                Some(t) => {
                    last[i] = Some(last[i].map_or(t, |l| l.max(t)));
                    first[i] = Some(first[i].map_or(t, |f| f.min(t)));
                }
                None => missed += 1,
            }
        }
    }
    let server_cpu = server.cpu_time()?.saturating_sub(server_cpu0);
    let client_cpu = server::own_cpu_time()?.saturating_sub(own_cpu0);
    let since = |times: &[Option<Instant>]| {
        let mut us: Vec<u32> = (1..total)
            .filter_map(|i| times[i].map(|t| t.saturating_duration_since(sent[i])))
            .map(|d| u32::try_from(d.as_micros()).unwrap_or(u32::MAX))
            .collect();
        us.sort_unstable();
        us
    };
    Ok(FanoutResult {
        transport,
        watchers,
        conns,
        writes,
        interval,
        setup,
        latencies_us: since(&last),
        first_us: since(&first),
        missed,
        rss_before,
        rss_open,
        server_cpu,
        client_cpu,
    })
}
