//! `capstan-bench`: measures one capstan binary on this machine in one run —
//! start-up, idle and loaded memory, create throughput and latency through
//! REST and gRPC against the raw embedded store as a ceiling, and get/list
//! latency — and prints the results as Markdown tables on stdout. Progress
//! goes to stderr; nothing is written outside a temporary directory.

mod error;
mod fanout;
mod load;
mod reads;
mod report;
mod rest;
mod server;
mod startup;

use {reads::*, report::*};

pub use error::BenchError;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use capstan_client::Client;
use capstan_core::storage::embedded::EmbeddedStore;
use capstan_core::storage::etcd::testing::{EtcdCluster, EtcdServer};
use capstan_core::storage::etcd::{EtcdConfig, EtcdStore};
use capstan_core::storage::Storage;
use clap::Parser;
use serde_json::{json, Value};

use load::{percentile, run_ops, Op, PhaseResult, Worker};
use rest::{RestConn, TlsFiles};
use server::ServerProc;

#[derive(Parser, Debug)]
#[command(
    name = "capstan-bench",
    about = "Benchmarks a capstan binary: start-up, memory, creates (REST, gRPC, raw store), get/list"
)]
struct Args {
    /// The capstan binary to measure (build it with `cargo build --release`).
    #[arg(default_value = "target/release/capstan")]
    binary: PathBuf,
    /// Seconds each measured create phase runs.
    #[arg(long, default_value_t = 5.0)]
    duration: f64,
    /// Seconds of unmeasured load before each create phase.
    #[arg(long, default_value_t = 1.0)]
    warmup: f64,
    /// Concurrent clients (one connection each) for the create phases.
    #[arg(long, value_delimiter = ',', default_value = "1,8,64")]
    clients: Vec<usize>,
    /// Times each client count's create phases run, interleaved (ceiling,
    /// REST, gRPC, ceiling, ...). Shares are the median of the rounds'
    /// shares, so the machine's speed drifting between phases weighs less.
    #[arg(long, default_value_t = 1)]
    rounds: usize,
    /// Start-up runs for each of the fresh and existing data-dir cases.
    #[arg(long, default_value_t = 10)]
    startup_runs: usize,
    /// Also measure restarts with this many small ConfigMaps stored
    /// (embedded store, filled through REST once), beside restarts with
    /// none of them; 0 skips it.
    #[arg(long, default_value_t = 0)]
    startup_objects: usize,
    /// Restarts with and without the `--startup-objects`.
    #[arg(long, default_value_t = 3)]
    startup_objects_runs: usize,
    /// Keep the store filled for `--startup-objects` in this directory and
    /// reuse it when it holds that many (filling 1,000,000 takes minutes).
    #[arg(long)]
    startup_objects_dir: Option<PathBuf>,
    /// Measure only the restarts with `--startup-objects` stored.
    #[arg(long)]
    startup_objects_only: bool,
    /// ConfigMaps in the namespace used for get and list: one read run at
    /// each count, filling up to it (embedded backend).
    #[arg(long, value_delimiter = ',', default_value = "1000,10000")]
    list_objects: Vec<usize>,
    /// Backends to measure; `etcd` starts a throwaway `etcd` from PATH.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "embedded,etcd"
    )]
    backends: Vec<Backend>,
    /// Backends whose reads and fan-out are measured too (both are served
    /// from the watch cache; on etcd a consistent list first asks etcd for
    /// its revision).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "embedded")]
    read_backends: Vec<Backend>,
    /// Members of the etcd the etcd backend runs on (a cluster on loopback
    /// when more than one; the server and the ceiling are given every
    /// member, and the etcd CPU columns add up all of them).
    #[arg(long, default_value_t = 1)]
    etcd_members: usize,
    /// Concurrent watchers for each fan-out run (0 skips them).
    #[arg(long, default_value_t = 1000)]
    watchers: usize,
    /// How the fan-out runs watch: one run per transport.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "grpc,rest")]
    watch_paths: Vec<fanout::Transport>,
    /// Connections the watchers share (HTTP/2 streams multiplexed on them).
    #[arg(long, default_value_t = 10)]
    watch_conns: usize,
    /// Measured writes in the fan-out run.
    #[arg(long, default_value_t = 50)]
    watch_writes: usize,
    /// Milliseconds between the starts of two fan-out writes.
    #[arg(long, default_value_t = 20)]
    watch_interval_ms: u64,
    /// Seconds the server idles before its empty-store RSS is read.
    #[arg(long, default_value_t = 3.0)]
    idle: f64,
    /// Skip the start-up runs (for quick profiling runs).
    #[arg(long)]
    skip_startup: bool,
    /// Which create paths to run (for profiling one at a time).
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "store,store-watched,relay,rest,grpc"
    )]
    paths: Vec<PathKind>,
    /// Concurrent clients for the write phases (REST, each client writing
    /// a ConfigMap of its own, one phase per write op and round after the
    /// creates); `0` for none.
    #[arg(
        long,
        alias = "patch-clients",
        value_delimiter = ',',
        default_value = "1,8"
    )]
    write_clients: Vec<usize>,
    /// The write phases' ops.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "merge-patch,put,apply,status"
    )]
    write_ops: Vec<load::WriteOp>,
    /// Skip the delete phases (REST; one per client count and round, after
    /// the writes, deleting what that REST create phase made).
    #[arg(long)]
    skip_deletes: bool,
    /// Keep the measured server's data directory (and its server.log) for
    /// inspection instead of deleting it.
    #[arg(long)]
    keep: bool,
    /// Give the measured server these CPUs (comma-separated numbers) and
    /// keep the bench and etcd on the others, with `taskset`: the server
    /// then no longer takes CPU from etcd and the load generator, as on a
    /// machine where it has cores of its own.
    #[arg(long, value_delimiter = ',')]
    server_cpus: Vec<usize>,
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1000.0)
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

fn say(text: impl AsRef<str>) {
    eprintln!("capstan-bench: {}", text.as_ref());
}

struct StartupStats {
    fresh: Vec<Duration>,
    existing: Vec<Duration>,
}

fn summary(samples: &[Duration]) -> String {
    let mut us: Vec<u32> = samples
        .iter()
        .map(|d| u32::try_from(d.as_micros()).unwrap_or(u32::MAX))
        .collect();
    us.sort_unstable();
    format!(
        "p50 {} ms, max {} ms ({} runs)",
        ms(percentile(&us, 0.5)),
        ms(percentile(&us, 1.0)),
        us.len()
    )
}

async fn measure_startup(args: &Args) -> Result<StartupStats, BenchError> {
    let mut fresh = Vec::new();
    for i in 0..args.startup_runs {
        let dir = tempfile::tempdir()?;
        let server = ServerProc::start(&args.binary, dir.path()).await?;
        say(format!(
            "start-up (fresh dir) run {}: {} ms",
            i + 1,
            ms(server.startup)
        ));
        fresh.push(server.startup);
        server.stop()?;
    }
    let dir = tempfile::tempdir()?;
    // The first start creates the PKI and the store; later ones reuse them.
    ServerProc::start(&args.binary, dir.path()).await?.stop()?;
    let mut existing = Vec::new();
    for i in 0..args.startup_runs {
        let server = ServerProc::start(&args.binary, dir.path()).await?;
        say(format!(
            "start-up (existing dir) run {}: {} ms",
            i + 1,
            ms(server.startup)
        ));
        existing.push(server.startup);
        server.stop()?;
    }
    Ok(StartupStats { fresh, existing })
}

pub(crate) async fn ensure_namespace(conn: &mut RestConn, name: &str) -> Result<(), BenchError> {
    let body = serde_json::to_vec(&json!({
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}
    }))?;
    match conn.post("/api/v1/namespaces", body).await? {
        (201 | 409, _) => Ok(()),
        (status, body) => Err(BenchError::Status(
            status,
            String::from_utf8_lossy(&body).into(),
        )),
    }
}

struct CreateRow {
    path: String,
    kind: PathKind,
    clients: usize,
    /// Which repetition of the interleaved phases (0-based).
    round: usize,
    result: PhaseResult,
    /// Creates made during the warm-up (stored too, not measured).
    warm_ops: u64,
    /// CPU of the capstan server, or for the embedded baseline the bench
    /// itself (it is the store); zero for the etcd baseline.
    server_cpu: Duration,
    /// CPU of the load generator (zero for the embedded baseline).
    client_cpu: Duration,
    /// CPU of etcd (etcd backend only).
    etcd_cpu: Option<Duration>,
    /// Share of the machine's CPU time that was busy (any process).
    machine_busy: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum PathKind {
    #[value(name = "store")]
    Baseline,
    /// The ceiling again, with one watch open on the keys written, as an
    /// API server's watch cache keeps one: what feeding a watch costs the
    /// store itself.
    #[value(name = "store-watched")]
    WatchedBaseline,
    /// The transport floor (etcd only): REST creates of the stored
    /// ConfigMap against `capstan-relay`, which terminates TLS and HTTP/2
    /// as capstan does, writes each body with `EtcdStore::create` and keeps
    /// one watch open, but does none of the API's work.
    Relay,
    Rest,
    Grpc,
}

impl PathKind {
    fn label(self, backend: Backend) -> &'static str {
        match (self, backend) {
            (Self::Baseline, Backend::Embedded) => "EmbeddedStore::create (in-process)",
            (Self::Baseline, Backend::Etcd) => "EtcdStore::create (etcd-client, from the bench)",
            (Self::WatchedBaseline, Backend::Embedded) => {
                "EmbeddedStore::create, one watch open (in-process)"
            }
            (Self::WatchedBaseline, Backend::Etcd) => {
                "EtcdStore::create, one watch open (etcd-client, from the bench)"
            }
            (Self::Relay, _) => "relay: HTTP/2, TLS to EtcdStore::create, no API work",
            (Self::Rest, _) => "REST (HTTP/2, TLS)",
            (Self::Grpc, _) => "gRPC (capstan-client)",
        }
    }

    /// Requests that capstan serves (in a namespace it must know).
    fn through_capstan(self) -> bool {
        matches!(self, Self::Rest | Self::Grpc)
    }

    /// Writes to the bench's own keys, not through the server.
    fn is_ceiling(self) -> bool {
        matches!(self, Self::Baseline | Self::WatchedBaseline)
    }

    fn slug(self) -> &'static str {
        match self {
            Self::Baseline => "store",
            Self::WatchedBaseline => "store-watched",
            Self::Relay => "relay",
            Self::Rest => "rest",
            Self::Grpc => "grpc",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Backend {
    Embedded,
    Etcd,
}

impl Backend {
    fn label(self) -> &'static str {
        match self {
            Self::Embedded => "embedded store",
            Self::Etcd => "etcd",
        }
    }
}

struct Ctx<'a> {
    args: &'a Args,
    backend: Backend,
    server: &'a ServerProc,
    /// `capstan-relay` on the same etcd (the `relay` path, etcd only).
    relay: Option<&'a ServerProc>,
    tls: Arc<rustls::ClientConfig>,
    kubeconfig: PathBuf,
    store: Arc<dyn Storage>,
    /// The key root of baseline writes (see `Worker::Store`).
    root: &'static str,
    template: Arc<Value>,
    /// etcd's processes (every member).
    etcd_pids: Vec<u32>,
}

impl Ctx<'_> {
    /// The process serving `kind`'s requests.
    fn measured(&self, kind: PathKind) -> Result<&ServerProc, BenchError> {
        match kind {
            PathKind::Relay => self.relay.ok_or_else(|| {
                BenchError::Startup("the relay path runs on the etcd backend only".into())
            }),
            _ => Ok(self.server),
        }
    }
}

async fn workers(ctx: &Ctx<'_>, kind: PathKind, n: usize) -> Result<Vec<Worker>, BenchError> {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(match kind {
            PathKind::Rest => {
                Worker::Rest(RestConn::connect(ctx.server.port, ctx.tls.clone()).await?)
            }
            PathKind::Relay => Worker::Relay {
                conn: RestConn::connect(ctx.measured(kind)?.port, ctx.tls.clone()).await?,
                template: ctx.template.clone(),
            },
            PathKind::Grpc => {
                Worker::Grpc(Box::new(Client::from_kubeconfig(&ctx.kubeconfig).await?))
            }
            PathKind::Baseline | PathKind::WatchedBaseline => Worker::Store {
                store: ctx.store.clone(),
                root: ctx.root,
                template: ctx.template.clone(),
            },
        });
    }
    Ok(out)
}

async fn create_phase(
    ctx: &Ctx<'_>,
    kind: PathKind,
    n: usize,
    round: usize,
) -> Result<CreateRow, BenchError> {
    measured_phase(ctx, kind, n, round, Op::Create).await
}

/// Writes over REST, each client to a ConfigMap of its own.
async fn write_phase(
    ctx: &Ctx<'_>,
    op: load::WriteOp,
    n: usize,
    round: usize,
) -> Result<CreateRow, BenchError> {
    measured_phase(ctx, PathKind::Rest, n, round, Op::Write(op)).await
}

/// Deletes over REST of what the REST create phase of `n` clients made in
/// `round`.
async fn delete_phase(ctx: &Ctx<'_>, n: usize, round: usize) -> Result<CreateRow, BenchError> {
    measured_phase(ctx, PathKind::Rest, n, round, Op::Delete).await
}

async fn measured_phase(
    ctx: &Ctx<'_>,
    kind: PathKind,
    n: usize,
    round: usize,
    op: Op,
) -> Result<CreateRow, BenchError> {
    let (label, namespace) = match op {
        Op::Create => (
            kind.label(ctx.backend),
            format!("bench-{}-{n}", kind.slug()),
        ),
        Op::Write(write) => (write.label(), format!("bench-{}-{n}", write.slug())),
        Op::Delete => (
            "REST delete (HTTP/2, TLS)",
            format!("bench-{}-{n}", PathKind::Rest.slug()),
        ),
    };
    if kind.through_capstan() {
        let mut conn = RestConn::connect(ctx.server.port, ctx.tls.clone()).await?;
        ensure_namespace(&mut conn, &namespace).await?;
    }
    let mut ws = workers(ctx, kind, n).await?;
    let prefix = format!("p{round}");
    if let Op::Write(write) = op {
        for (id, worker) in ws.iter_mut().enumerate() {
            write
                .make(worker, &namespace, &format!("{prefix}-{id}"))
                .await?;
        }
    }
    // Drained and dropped, as cheaply as a consumer can: the row measures
    // what the watch costs the store.
    let watch = if kind == PathKind::WatchedBaseline {
        let prefix = format!("{}/configmaps/{namespace}/", ctx.root);
        let from = ctx.store.current_revision().await?;
        let mut events = ctx.store.watch_latest(&prefix, from).await?;
        Some(tokio::spawn(async move {
            use futures::StreamExt;
            while let Some(Ok(_)) = events.next().await {}
        }))
    } else {
        None
    };
    let warmup = Duration::from_secs_f64(ctx.args.warmup);
    let warm_prefix = match op {
        Op::Create | Op::Delete => format!("warm{round}"),
        Op::Write(_) => prefix.clone(),
    };
    let (ws, warm) = run_ops(ws, &namespace, &warm_prefix, warmup, op).await;
    if warm.ops == 0 {
        return Err(BenchError::Http(format!(
            "{label} warm-up made no progress: {}",
            warm.first_error.unwrap_or_default()
        )));
    }
    let etcd_cpu = || server::summed(&ctx.etcd_pids, server::cpu_time_of_pid);
    let measured = ctx.measured(kind)?;
    let server_cpu0 = measured.cpu_time()?;
    let own_cpu0 = server::own_cpu_time()?;
    let etcd_cpu0 = etcd_cpu()?;
    let (busy0, total0) = server::machine_cpu()?;
    let run_prefix = match op {
        Op::Create | Op::Delete => format!("run{round}"),
        Op::Write(_) => prefix,
    };
    let (ws, result) = run_ops(
        ws,
        &namespace,
        &run_prefix,
        Duration::from_secs_f64(ctx.args.duration),
        op,
    )
    .await;
    let server_cpu = measured.cpu_time()?.saturating_sub(server_cpu0);
    let own_cpu = server::own_cpu_time()?.saturating_sub(own_cpu0);
    let etcd_cpu = etcd_cpu()?
        .zip(etcd_cpu0)
        .map(|(after, before)| after.saturating_sub(before));
    let (busy1, total1) = server::machine_cpu()?;
    let machine_busy = (busy1 - busy0) as f64 / (total1 - total0).max(1) as f64;
    drop(ws);
    if let Some(watch) = watch {
        watch.abort();
    }
    let (server_cpu, client_cpu) = match (kind.is_ceiling(), ctx.backend) {
        (true, Backend::Embedded) => (own_cpu, Duration::ZERO),
        (true, Backend::Etcd) => (Duration::ZERO, own_cpu),
        _ => (server_cpu, own_cpu),
    };
    say(format!(
        "{} / {label} x{n} (round {}): {:.0}/s, p50 {} ms, p99 {} ms, {} errors{}",
        ctx.backend.label(),
        round + 1,
        result.throughput(),
        ms(result.percentile(0.5)),
        ms(result.percentile(0.99)),
        result.errors,
        result
            .first_error
            .as_deref()
            .map(|e| format!(" (first: {e})"))
            .unwrap_or_default()
    ));
    Ok(CreateRow {
        path: label.to_string(),
        kind,
        clients: n,
        round,
        result,
        warm_ops: warm.ops,
        server_cpu,
        client_cpu,
        etcd_cpu,
        machine_busy,
    })
}

/// How long after the reads their RSS is read again: two of the server's
/// rounds of handing freed pages back (every 5 s: each worker collects
/// its pages in one round, and the allocator purges them a second later,
/// by the next).
const SETTLE_AFTER_READS: Duration = Duration::from_secs(12);

/// The server's RSS with the objects stored: after filling, right after
/// the reads, and `SETTLE_AFTER_READS` later.
struct ReadRss {
    filled: u64,
    read: u64,
    settled: u64,
}

/// Everything measured against one backend.
struct BackendRun {
    backend: Backend,
    rss_idle: u64,
    /// (objects stored, rows, server RSS around the reads).
    reads: Vec<(usize, Vec<ReadRow>, ReadRss)>,
    fanout: Vec<fanout::FanoutResult>,
    creates: Vec<CreateRow>,
    /// Write and delete phases.
    writes: Vec<CreateRow>,
    /// Rounds of create phases per client count.
    rounds: usize,
    stored_bytes: usize,
    /// ConfigMaps the server stores at the end.
    stored_total: u64,
    rss_end: u64,
    etcd_rss_end: Option<u64>,
}

/// Starts `capstan-relay` (built beside this binary) on etcd `endpoints`,
/// serving with the certificates of the capstan server in `server_dir`, so
/// that one client configuration reaches both.
async fn start_relay(
    server_dir: &std::path::Path,
    endpoints: &str,
) -> Result<ServerProc, BenchError> {
    let relay_dir = server_dir.with_file_name("relay");
    std::fs::create_dir_all(relay_dir.join("pki"))?;
    for file in [
        "ca.crt",
        "admin.crt",
        "admin.key",
        "apiserver.crt",
        "apiserver.key",
    ] {
        std::fs::copy(
            server_dir.join("pki").join(file),
            relay_dir.join("pki").join(file),
        )?;
    }
    let binary = std::env::current_exe()?.with_file_name("capstan-relay");
    let relay = ServerProc::start_with(&binary, &relay_dir, &["--etcd-servers", endpoints]).await?;
    say(format!("relay: pid {} on port {}", relay.pid(), relay.port));
    Ok(relay)
}

async fn measure_backend(
    args: &Args,
    backend: Backend,
    data_dir: &std::path::Path,
    baseline_dir: &std::path::Path,
) -> Result<BackendRun, BenchError> {
    let etcd = match backend {
        Backend::Embedded => None,
        Backend::Etcd => Some(EtcdProcs::start(args.etcd_members).await?),
    };
    let endpoints = etcd
        .as_ref()
        .map(|etcd| etcd.endpoints().join(","))
        .unwrap_or_default();
    let extra: Vec<&str> = match &etcd {
        Some(_) => vec!["--etcd-servers", endpoints.as_str()],
        None => Vec::new(),
    };
    let etcd_pids: Vec<u32> = etcd
        .iter()
        .flat_map(|etcd| etcd.endpoints())
        .filter_map(|endpoint| server::find_pid(&format!("--listen-client-urls {endpoint}")))
        .collect();
    let server = ServerProc::start_with(&args.binary, data_dir, &extra).await?;
    say(format!(
        "{}: measuring server pid {} on port {} (data dir {}{})",
        backend.label(),
        server.pid(),
        server.port,
        data_dir.display(),
        if etcd_pids.is_empty() {
            String::new()
        } else {
            format!(", etcd pids {etcd_pids:?}")
        }
    ));
    tokio::time::sleep(Duration::from_secs_f64(args.idle)).await;
    let rss_idle = server.rss_bytes()?;
    let tls = TlsFiles::from_data_dir(data_dir).config()?;
    let kubeconfig = data_dir.join("admin.kubeconfig");
    let mut stored_total = 0u64;

    // Reads and fan-out are served by the watch cache on either backend;
    // by default they run on the embedded one only (--read-backends).
    let mut reads = Vec::new();
    let mut fanout = Vec::new();
    if args.read_backends.contains(&backend) {
        let mut counts = args.list_objects.clone();
        counts.sort_unstable();
        counts.dedup();
        let mut stored = 0;
        for &count in &counts {
            fill(&server, &tls, stored, count).await?;
            stored = count;
            // Let the cache take the last changes before reading memory.
            tokio::time::sleep(Duration::from_secs(1)).await;
            let filled = server.rss_bytes()?;
            let rows = measure_reads(&server, &tls, &kubeconfig, count).await?;
            let read = server.rss_bytes()?;
            // The server hands freed pages back every few seconds (its
            // allocator keeps them a second first): read again once it
            // has, for what the reads left behind rather than their garbage.
            tokio::time::sleep(SETTLE_AFTER_READS).await;
            let settled = server.rss_bytes()?;
            reads.push((
                count,
                rows,
                ReadRss {
                    filled,
                    read,
                    settled,
                },
            ));
        }
        stored_total += stored as u64;
        for &transport in args.watch_paths.iter().filter(|_| args.watchers > 0) {
            say(format!(
                "watch fan-out: {} {} watchers on {} connections",
                args.watchers,
                transport.label(),
                args.watch_conns
            ));
            let result = fanout::measure(
                &server,
                &tls,
                &kubeconfig,
                transport,
                args.watchers,
                args.watch_conns,
                args.watch_writes,
                Duration::from_millis(args.watch_interval_ms),
            )
            .await?;
            stored_total += result.writes as u64 + 1;
            fanout.push(result);
        }
    }

    // The baseline stores what the server stores: one of its ConfigMaps.
    let mut conn = RestConn::connect(server.port, tls.clone()).await?;
    ensure_namespace(&mut conn, "bench-template").await?;
    let body = serde_json::to_vec(&load::configmap("template"))?;
    conn.post("/api/v1/namespaces/bench-template/configmaps", body)
        .await?;
    stored_total += 1;
    let (_, body) = conn
        .get("/api/v1/namespaces/bench-template/configmaps/template")
        .await?;
    let mut template: Value = serde_json::from_slice(&body)?;
    if let Some(meta) = template["metadata"].as_object_mut() {
        meta.remove("resourceVersion");
    }
    let stored_bytes = serde_json::to_vec(&template)?.len();
    let (store, root): (Arc<dyn Storage>, &'static str) = match &etcd {
        None => (Arc::new(EmbeddedStore::open(baseline_dir)?), "/registry"),
        // Same key length as `/registry`, outside the server's prefix.
        Some(etcd) => (Arc::new(etcd.connect().await?), "/baseline"),
    };
    let relay = match &etcd {
        Some(_) if args.paths.contains(&PathKind::Relay) => {
            Some(start_relay(data_dir, &endpoints).await?)
        }
        _ => None,
    };
    let ctx = Ctx {
        args,
        backend,
        server: &server,
        relay: relay.as_ref(),
        tls,
        kubeconfig,
        store,
        root,
        template: Arc::new(template),
        etcd_pids: etcd_pids.clone(),
    };

    let mut creates = Vec::new();
    for &n in &args.clients {
        // Interleaved so that the store's growth during the run, and the
        // machine's drift, weigh on the ceiling, REST and gRPC alike.
        for round in 0..args.rounds.max(1) {
            for kind in [
                PathKind::Baseline,
                PathKind::WatchedBaseline,
                PathKind::Relay,
                PathKind::Rest,
                PathKind::Grpc,
            ] {
                if !args.paths.contains(&kind) || (kind == PathKind::Relay && relay.is_none()) {
                    continue;
                }
                creates.push(create_phase(&ctx, kind, n, round).await?);
            }
        }
    }
    // What capstan stored: the ceiling and the relay write keys of their own.
    stored_total += creates
        .iter()
        .filter(|r| r.kind.through_capstan())
        .map(|r| r.result.ops + r.warm_ops)
        .sum::<u64>();
    let mut writes = Vec::new();
    for &op in &args.write_ops {
        for &n in args.write_clients.iter().filter(|n| **n > 0) {
            for round in 0..args.rounds.max(1) {
                writes.push(write_phase(&ctx, op, n, round).await?);
                if op != load::WriteOp::Status {
                    // One ConfigMap per client (status writes make Deployments).
                    stored_total += n as u64;
                }
            }
        }
    }
    if !args.skip_deletes && args.paths.contains(&PathKind::Rest) {
        for &n in &args.clients {
            for round in 0..args.rounds.max(1) {
                let deleted = delete_phase(&ctx, n, round).await?;
                stored_total -= deleted.result.ops + deleted.warm_ops;
                writes.push(deleted);
            }
        }
    }
    let rss_end = server.rss_bytes()?;
    let etcd_rss_end = server::summed(&etcd_pids, server::rss_of_pid)?;
    server.stop()?;
    Ok(BackendRun {
        backend,
        rss_idle,
        reads,
        fanout,
        creates,
        writes,
        rounds: args.rounds.max(1),
        stored_bytes,
        stored_total,
        rss_end,
        etcd_rss_end,
    })
}

/// The etcd the etcd backend runs on: one member, or a cluster.
enum EtcdProcs {
    One(EtcdServer),
    Cluster(EtcdCluster),
}

impl EtcdProcs {
    async fn start(members: usize) -> Result<Self, BenchError> {
        Ok(if members > 1 {
            Self::Cluster(
                EtcdCluster::start(members)
                    .await
                    .map_err(BenchError::Startup)?,
            )
        } else {
            Self::One(EtcdServer::start().await.map_err(BenchError::Startup)?)
        })
    }

    fn endpoints(&self) -> Vec<String> {
        match self {
            Self::One(server) => vec![server.endpoint.clone()],
            Self::Cluster(cluster) => cluster.endpoints.clone(),
        }
    }

    /// A client of every member, as the server has.
    async fn connect(&self) -> Result<EtcdStore, BenchError> {
        let config = EtcdConfig {
            endpoints: self.endpoints(),
            ..Default::default()
        };
        Ok(EtcdStore::connect(&config).await?)
    }
}

async fn run(args: Args) -> Result<(), BenchError> {
    if !args.binary.is_file() {
        return Err(BenchError::Startup(format!(
            "{} not found; run `cargo build --release` first",
            args.binary.display()
        )));
    }
    let startup = if args.skip_startup {
        None
    } else {
        Some(measure_startup(&args).await?)
    };

    let stored_restarts = if args.startup_objects > 0 {
        startup::measure(
            &args.binary,
            args.startup_objects,
            args.startup_objects_runs,
            args.startup_objects_dir.as_deref(),
        )
        .await?
    } else {
        Vec::new()
    };
    if !stored_restarts.is_empty() {
        print_stored_restarts(&stored_restarts);
        if args.startup_objects_only {
            return Ok(());
        }
    }

    let work = tempfile::tempdir()?;
    let mut runs = Vec::new();
    let mut rss_bench = None;
    for &backend in &args.backends {
        let name = match backend {
            Backend::Embedded => "embedded",
            Backend::Etcd => "etcd",
        };
        let data_dir = work.path().join(format!("server-{name}"));
        let baseline_dir = work.path().join(format!("baseline-{name}"));
        runs.push(measure_backend(&args, backend, &data_dir, &baseline_dir).await?);
        if backend == Backend::Embedded {
            rss_bench = Some(server::own_rss_bytes()?);
        }
    }

    // ---- report ----
    println!("### Start-up and memory\n");
    println!("| measure | result |");
    println!("| --- | --- |");
    if let Some(s) = &startup {
        println!(
            "| start-up, fresh data dir (spawn → `/readyz` 200, includes PKI generation) | {} |",
            summary(&s.fresh)
        );
        println!(
            "| start-up, existing data dir (restart) | {} |",
            summary(&s.existing)
        );
    }
    for run in &runs {
        let backend = run.backend.label();
        println!(
            "| {backend}: RSS after {} s idle, empty store | {} |",
            args.idle,
            mib(run.rss_idle)
        );
        for (count, _, rss) in &run.reads {
            let per_object = |rss: u64| {
                rss.saturating_sub(run.rss_idle) as f64 / 1024.0 / (*count).max(1) as f64
            };
            println!(
                "| {backend}: RSS with {count} ConfigMaps stored, after filling / after getting and listing them too / {} s later | {} / {} / {} ({:.1} / {:.1} / {:.1} KiB per object above idle) |",
                SETTLE_AFTER_READS.as_secs(),
                mib(rss.filled),
                mib(rss.read),
                mib(rss.settled),
                per_object(rss.filled),
                per_object(rss.read),
                per_object(rss.settled)
            );
        }
        for f in &run.fanout {
            println!(
                "| {backend}: RSS before / with {} {} watchers open ({} connections) | {} / {} ({:.1} KiB per watcher) |",
                f.watchers,
                f.transport.label(),
                f.conns,
                mib(f.rss_before),
                mib(f.rss_open),
                f.rss_open.saturating_sub(f.rss_before) as f64 / 1024.0 / f.watchers.max(1) as f64
            );
        }
        println!(
            "| {backend}: RSS at the end ({} ConfigMaps stored, create runs done) | {} |",
            run.stored_total,
            mib(run.rss_end)
        );
        if let Some(rss) = run.etcd_rss_end {
            println!("| {backend}: etcd's RSS at the end | {} |", mib(rss));
        }
        if run.backend == Backend::Embedded {
            if let Some(rss) = rss_bench {
                let values: u64 = run
                    .creates
                    .iter()
                    .filter(|r| r.kind.is_ceiling())
                    .map(|r| r.result.ops + r.warm_ops)
                    .sum();
                println!(
                    "| RSS of the bench process after the embedded runs (holds the baseline store: {values} values, plus the load generator) | {} |",
                    mib(rss)
                );
            }
        }
    }

    for run in &runs {
        if run.reads.is_empty() {
            continue;
        }
        println!(
            "\n### Reads, {} backend (one namespace, one connection, sequential)\n",
            run.backend.label()
        );
        println!(
            "| objects | operation | path | requests | p50 ms | p99 ms | max ms | response bytes | server CPU per request, µs |"
        );
        println!("| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |");
        for (count, rows, _) in &run.reads {
            for r in rows {
                let bytes = if r.bytes == 0 {
                    "–".to_string()
                } else {
                    r.bytes.to_string()
                };
                let cpu = r
                    .server_cpu
                    .map_or("–".to_string(), |cpu| cpu.as_micros().to_string());
                println!(
                    "| {count} | {} | {} | {} | {} | {} | {} | {} | {cpu} |",
                    r.operation,
                    r.path,
                    r.requests,
                    ms(r.p50),
                    ms(r.p99),
                    ms(r.max),
                    bytes
                );
            }
        }
    }

    for run in runs.iter().filter(|run| !run.fanout.is_empty()) {
        let f0 = &run.fanout[0];
        println!(
            "\n### Watch fan-out, {} backend (watches on one namespace; {} writes, one every {} ms)\n",
            run.backend.label(),
            f0.writes,
            f0.interval.as_millis()
        );
        println!("| path | watchers | connections | write → last watcher p50 ms | p99 ms | max ms | write → first watcher p50 ms | missed deliveries | server CPU / write | bench CPU / write | set-up (open all, first event to all) |");
        println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
        for f in &run.fanout {
            println!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} ms |",
                f.transport.label(),
                f.watchers,
                f.conns,
                ms(percentile(&f.latencies_us, 0.5)),
                ms(percentile(&f.latencies_us, 0.99)),
                ms(percentile(&f.latencies_us, 1.0)),
                ms(percentile(&f.first_us, 0.5)),
                f.missed,
                per_op(f.server_cpu, f.writes as u64),
                per_op(f.client_cpu, f.writes as u64),
                ms(f.setup)
            );
        }
    }

    for run in &runs {
        print_creates(&args, run);
    }
    for run in runs.iter().filter(|run| !run.writes.is_empty()) {
        print_writes(&args, run);
    }

    println!("\n### API throughput as a share of each backend's ceiling\n");
    if args.rounds > 1 {
        println!(
            "Median of {} rounds' shares, each against its own round's ceiling (lowest–highest).\n",
            args.rounds
        );
    }
    // Against the ceiling, and (when measured) against the ceiling with a
    // watch open: the store's own cost of feeding the server's watch cache.
    // The relay (etcd) is the floor of any server in front of the store:
    // REST's share of it is what the API's own work leaves.
    let watched = args.paths.contains(&PathKind::WatchedBaseline);
    let relayed = args.paths.contains(&PathKind::Relay);
    let mut columns = Vec::new();
    for run in &runs {
        let relay_measured = relayed && run.backend == Backend::Etcd;
        for kind in [PathKind::Relay, PathKind::Rest, PathKind::Grpc] {
            if kind == PathKind::Relay && !relay_measured {
                continue;
            }
            let name = match kind {
                PathKind::Relay => "relay",
                PathKind::Grpc => "gRPC",
                _ => "REST",
            };
            columns.push((
                run,
                kind,
                PathKind::Baseline,
                format!("{} {name}", run.backend.label()),
            ));
            if watched {
                columns.push((
                    run,
                    kind,
                    PathKind::WatchedBaseline,
                    format!("{} {name} (of the watched ceiling)", run.backend.label()),
                ));
            }
            if kind == PathKind::Rest && relay_measured {
                columns.push((
                    run,
                    kind,
                    PathKind::Relay,
                    format!("{} {name} (of the relay)", run.backend.label()),
                ));
            }
        }
    }
    let mut head = String::from("| clients |");
    let mut rule = String::from("| ---: |");
    for (_, _, _, title) in &columns {
        head.push_str(&format!(" {title} |"));
        rule.push_str(" ---: |");
    }
    println!("{head}\n{rule}");
    for &n in &args.clients {
        let mut line = format!("| {n} |");
        for (run, kind, ceiling, _) in &columns {
            line.push_str(&format!(" {} |", share(run, *kind, *ceiling, n)));
        }
        println!("{line}");
    }
    if args.keep {
        say(format!("kept {}", work.keep().display()));
    }
    Ok(())
}

fn print_stored_restarts(results: &[startup::StoredRestarts]) {
    println!("### Restarts with objects stored (embedded store)\n");
    println!("| ConfigMaps stored | run | spawn → `/readyz` ms | spawn → served from the watch cache ms | RSS then | server CPU by then ms |");
    println!("| ---: | ---: | ---: | ---: | ---: | ---: |");
    for result in results {
        for (i, r) in result.restarts.iter().enumerate() {
            println!(
                "| {} | {} | {} | {} | {} | {} |",
                result.objects,
                i + 1,
                r.readyz.as_millis(),
                r.served.as_millis(),
                mib(r.rss),
                r.cpu.as_millis()
            );
        }
    }
    println!();
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    if !args.server_cpus.is_empty() {
        // Before the runtime's threads exist, so they (and etcd, started
        // later as a child) inherit the bench's CPUs.
        if let Err(e) = server::pin(&args.server_cpus) {
            eprintln!("capstan-bench: {e}");
            return std::process::ExitCode::FAILURE;
        }
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("capstan-bench: cannot start the runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("capstan-bench: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
