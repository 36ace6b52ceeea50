//! `capstan-bench`: measures one capstan binary on this machine in one run —
//! start-up, idle and loaded memory, create throughput and latency through
//! REST and gRPC against the raw embedded store as a ceiling, and get/list
//! latency — and prints the results as Markdown tables on stdout. Progress
//! goes to stderr; nothing is written outside a temporary directory.

mod load;
mod rest;
mod server;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use capstan_client::{Client, GroupVersionResource, ListParams};
use capstan_core::storage::embedded::EmbeddedStore;
use clap::Parser;
use rand::Rng;
use serde_json::{json, Value};

use load::{percentile, run_creates, PhaseResult, Worker};
use rest::{RestConn, TlsFiles};
use server::ServerProc;

#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("io: {0}")]
    Io(#[from] std::io::Error),
    #[error("tls: {0}")]
    Tls(String),
    #[error("http: {0}")]
    Http(String),
    #[error("http/2: {0}")]
    Hyper(#[from] hyper::Error),
    #[error("HTTP {0}: {1}")]
    Status(u16, String),
    #[error("grpc client: {0}")]
    Client(#[from] capstan_client::Error),
    #[error("storage: {0}")]
    Storage(#[from] capstan_core::storage::StorageError),
    #[error("json: {0}")]
    Json(#[from] serde_json::Error),
    #[error("start-up: {0}")]
    Startup(String),
    #[error("/proc: {0}")]
    Proc(String),
}

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
    /// Start-up runs for each of the fresh and existing data-dir cases.
    #[arg(long, default_value_t = 10)]
    startup_runs: usize,
    /// ConfigMaps in the namespace used for get and list.
    #[arg(long, default_value_t = 1000)]
    list_objects: usize,
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
        default_value = "store,rest,grpc"
    )]
    paths: Vec<PathKind>,
    /// Keep the measured server's data directory (and its server.log) for
    /// inspection instead of deleting it.
    #[arg(long)]
    keep: bool,
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

async fn ensure_namespace(conn: &mut RestConn, name: &str) -> Result<(), BenchError> {
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

struct ReadRow {
    operation: String,
    path: &'static str,
    requests: usize,
    p50: Duration,
    p99: Duration,
    max: Duration,
    bytes: usize,
}

fn read_row(operation: String, path: &'static str, mut us: Vec<u32>, bytes: usize) -> ReadRow {
    us.sort_unstable();
    ReadRow {
        operation,
        path,
        requests: us.len(),
        p50: percentile(&us, 0.5),
        p99: percentile(&us, 0.99),
        max: percentile(&us, 1.0),
        bytes,
    }
}

fn elapsed_us(t0: Instant) -> u32 {
    u32::try_from(t0.elapsed().as_micros()).unwrap_or(u32::MAX)
}

/// Fills the list namespace, then times gets by name and whole-namespace lists.
async fn measure_reads(
    args: &Args,
    server: &ServerProc,
    tls: &Arc<rustls::ClientConfig>,
    kubeconfig: &std::path::Path,
) -> Result<Vec<ReadRow>, BenchError> {
    const NS: &str = "bench-list";
    const GETS: usize = 1000;
    const LISTS: usize = 20;
    let mut conn = RestConn::connect(server.port, tls.clone()).await?;
    ensure_namespace(&mut conn, NS).await?;
    let fillers = 8;
    let mut tasks = Vec::new();
    for w in 0..fillers {
        let mut conn = RestConn::connect(server.port, tls.clone()).await?;
        let names: Vec<usize> = (0..args.list_objects)
            .filter(|i| i % fillers == w)
            .collect();
        tasks.push(tokio::spawn(async move {
            for i in names {
                let body = serde_json::to_vec(&load::configmap(&format!("cm-{i:05}")))?;
                let (status, body) = conn
                    .post(&format!("/api/v1/namespaces/{NS}/configmaps"), body)
                    .await?;
                if status != 201 {
                    return Err(BenchError::Status(
                        status,
                        String::from_utf8_lossy(&body).into(),
                    ));
                }
            }
            Ok::<_, BenchError>(())
        }));
    }
    for task in tasks {
        task.await
            .map_err(|e| BenchError::Http(format!("filler panicked: {e}")))??;
    }
    say(format!("stored {} ConfigMaps in {NS}", args.list_objects));

    let mut rng = rand::rng();
    let mut names: Vec<String> = (0..GETS + 100)
        .map(|_| format!("cm-{:05}", rng.random_range(0..args.list_objects)))
        .collect();
    let mut rows = Vec::new();

    // REST get by name; the first 100 warm the connection and caches.
    let mut us = Vec::with_capacity(GETS);
    let mut bytes = 0;
    for (i, name) in names.iter().enumerate() {
        let t0 = Instant::now();
        let (status, body) = conn
            .get(&format!("/api/v1/namespaces/{NS}/configmaps/{name}"))
            .await?;
        if status != 200 {
            return Err(BenchError::Status(
                status,
                String::from_utf8_lossy(&body).into(),
            ));
        }
        if i >= 100 {
            us.push(elapsed_us(t0));
            bytes = body.len();
        }
    }
    rows.push(read_row("get by name".into(), "REST", us, bytes));

    let list_path = format!("/api/v1/namespaces/{NS}/configmaps");
    let mut us = Vec::with_capacity(LISTS);
    for i in 0..LISTS + 2 {
        let t0 = Instant::now();
        let (status, body) = conn.get(&list_path).await?;
        if status != 200 {
            return Err(BenchError::Status(
                status,
                String::from_utf8_lossy(&body).into(),
            ));
        }
        let items = serde_json::from_slice::<Value>(&body)?["items"]
            .as_array()
            .map_or(0, Vec::len);
        if items != args.list_objects {
            return Err(BenchError::Http(format!(
                "list returned {items} items, expected {}",
                args.list_objects
            )));
        }
        if i >= 2 {
            us.push(elapsed_us(t0));
            bytes = body.len();
        }
    }
    rows.push(read_row(
        format!("list {} in one namespace", args.list_objects),
        "REST",
        us,
        bytes,
    ));

    // The same reads over gRPC, for comparison.
    let client = Client::from_kubeconfig(kubeconfig).await?;
    let gvr = GroupVersionResource::core("v1", "configmaps");
    names.rotate_left(37);
    let mut us = Vec::with_capacity(GETS);
    for (i, name) in names.iter().enumerate() {
        let t0 = Instant::now();
        client.get(&gvr, Some(NS), name).await?;
        if i >= 100 {
            us.push(elapsed_us(t0));
        }
    }
    rows.push(read_row("get by name".into(), "gRPC", us, 0));
    let mut us = Vec::with_capacity(LISTS);
    for i in 0..LISTS + 2 {
        let t0 = Instant::now();
        let list = client.list(&gvr, Some(NS), &ListParams::default()).await?;
        if list.items.len() != args.list_objects {
            return Err(BenchError::Http(format!(
                "gRPC list returned {} items",
                list.items.len()
            )));
        }
        if i >= 2 {
            us.push(elapsed_us(t0));
        }
    }
    rows.push(read_row(
        format!("list {} in one namespace", args.list_objects),
        "gRPC",
        us,
        0,
    ));
    Ok(rows)
}

struct CreateRow {
    path: &'static str,
    clients: usize,
    result: PhaseResult,
    /// Creates made during the warm-up (stored too, not measured).
    warm_ops: u64,
    /// CPU of the process doing the work: the server, or (baseline) the bench itself.
    server_cpu: Duration,
    /// CPU of the load generator (zero for the baseline, which is in-process).
    client_cpu: Duration,
    /// Share of the machine's CPU time that was busy (any process).
    machine_busy: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum PathKind {
    #[value(name = "store")]
    Baseline,
    Rest,
    Grpc,
}

impl PathKind {
    fn label(self) -> &'static str {
        match self {
            Self::Baseline => "EmbeddedStore::create (in-process)",
            Self::Rest => "REST (HTTP/2, TLS)",
            Self::Grpc => "gRPC (capstan-client)",
        }
    }

    fn slug(self) -> &'static str {
        match self {
            Self::Baseline => "store",
            Self::Rest => "rest",
            Self::Grpc => "grpc",
        }
    }
}

struct Ctx<'a> {
    args: &'a Args,
    server: &'a ServerProc,
    tls: Arc<rustls::ClientConfig>,
    kubeconfig: PathBuf,
    store: Arc<EmbeddedStore>,
    template: Arc<Value>,
}

async fn workers(ctx: &Ctx<'_>, kind: PathKind, n: usize) -> Result<Vec<Worker>, BenchError> {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(match kind {
            PathKind::Rest => {
                Worker::Rest(RestConn::connect(ctx.server.port, ctx.tls.clone()).await?)
            }
            PathKind::Grpc => {
                Worker::Grpc(Box::new(Client::from_kubeconfig(&ctx.kubeconfig).await?))
            }
            PathKind::Baseline => Worker::Store {
                store: ctx.store.clone(),
                template: ctx.template.clone(),
            },
        });
    }
    Ok(out)
}

async fn create_phase(ctx: &Ctx<'_>, kind: PathKind, n: usize) -> Result<CreateRow, BenchError> {
    let namespace = format!("bench-{}-{n}", kind.slug());
    if kind != PathKind::Baseline {
        let mut conn = RestConn::connect(ctx.server.port, ctx.tls.clone()).await?;
        ensure_namespace(&mut conn, &namespace).await?;
    }
    let ws = workers(ctx, kind, n).await?;
    let warmup = Duration::from_secs_f64(ctx.args.warmup);
    let (ws, warm) = run_creates(ws, &namespace, "warm", warmup).await;
    if warm.ops == 0 {
        return Err(BenchError::Http(format!(
            "{} warm-up made no progress: {}",
            kind.label(),
            warm.first_error.unwrap_or_default()
        )));
    }
    let server_cpu0 = ctx.server.cpu_time()?;
    let own_cpu0 = server::own_cpu_time()?;
    let (busy0, total0) = server::machine_cpu()?;
    let (ws, result) = run_creates(
        ws,
        &namespace,
        "run",
        Duration::from_secs_f64(ctx.args.duration),
    )
    .await;
    let server_cpu = ctx.server.cpu_time()?.saturating_sub(server_cpu0);
    let own_cpu = server::own_cpu_time()?.saturating_sub(own_cpu0);
    let (busy1, total1) = server::machine_cpu()?;
    let machine_busy = (busy1 - busy0) as f64 / (total1 - total0).max(1) as f64;
    drop(ws);
    let (server_cpu, client_cpu) = if kind == PathKind::Baseline {
        (own_cpu, Duration::ZERO)
    } else {
        (server_cpu, own_cpu)
    };
    say(format!(
        "{} x{n}: {:.0} creates/s, p50 {} ms, p99 {} ms, {} errors{}",
        kind.label(),
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
        path: kind.label(),
        clients: n,
        result,
        warm_ops: warm.ops,
        server_cpu,
        client_cpu,
        machine_busy,
    })
}

fn per_op(cpu: Duration, ops: u64) -> String {
    if ops == 0 || cpu.is_zero() {
        return "–".into();
    }
    format!("{:.0} µs", cpu.as_secs_f64() * 1e6 / ops as f64)
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

    let work = tempfile::tempdir()?;
    let data_dir = work.path().join("server");
    let server = ServerProc::start(&args.binary, &data_dir).await?;
    say(format!(
        "measuring server pid {} on port {} (data dir {})",
        server.pid(),
        server.port,
        data_dir.display()
    ));
    tokio::time::sleep(Duration::from_secs_f64(args.idle)).await;
    let rss_idle = server.rss_bytes()?;
    let tls = TlsFiles::from_data_dir(&data_dir).config()?;
    let kubeconfig = data_dir.join("admin.kubeconfig");

    let reads = measure_reads(&args, &server, &tls, &kubeconfig).await?;
    let rss_list = server.rss_bytes()?;

    // The baseline stores what the server stores: one of its ConfigMaps.
    let mut conn = RestConn::connect(server.port, tls.clone()).await?;
    let (_, body) = conn
        .get("/api/v1/namespaces/bench-list/configmaps/cm-00000")
        .await?;
    let mut template: Value = serde_json::from_slice(&body)?;
    if let Some(meta) = template["metadata"].as_object_mut() {
        meta.remove("resourceVersion");
    }
    let stored_bytes = serde_json::to_vec(&template)?.len();
    let store = Arc::new(EmbeddedStore::open(&work.path().join("baseline"))?);
    let ctx = Ctx {
        args: &args,
        server: &server,
        tls,
        kubeconfig,
        store,
        template: Arc::new(template),
    };

    let mut creates = Vec::new();
    for &n in &args.clients {
        // Interleaved so that the store's growth during the run weighs on
        // REST and gRPC alike.
        for kind in [PathKind::Baseline, PathKind::Rest, PathKind::Grpc] {
            if !args.paths.contains(&kind) {
                continue;
            }
            creates.push(create_phase(&ctx, kind, n).await?);
        }
    }
    let rss_end = server.rss_bytes()?;
    let rss_bench = server::own_rss_bytes()?;
    let baseline_total: u64 = creates
        .iter()
        .filter(|r| r.path == PathKind::Baseline.label())
        .map(|r| r.result.ops + r.warm_ops)
        .sum();
    let stored_total: u64 = args.list_objects as u64
        + creates
            .iter()
            .filter(|r| r.path != PathKind::Baseline.label())
            .map(|r| r.result.ops + r.warm_ops)
            .sum::<u64>();

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
    println!(
        "| RSS after {} s idle, empty store | {} |",
        args.idle,
        mib(rss_idle)
    );
    println!(
        "| RSS with {} ConfigMaps stored (after filling, getting and listing them) | {} |",
        args.list_objects,
        mib(rss_list)
    );
    println!(
        "| RSS at the end ({stored_total} ConfigMaps stored, create runs done) | {} |",
        mib(rss_end)
    );
    println!(
        "| RSS of the bench process at the end (holds the baseline store: {baseline_total} values, plus the load generator) | {} |",
        mib(rss_bench)
    );

    println!(
        "\n### Reads ({} ConfigMaps in one namespace, one connection, sequential)\n",
        args.list_objects
    );
    println!("| operation | path | requests | p50 ms | p99 ms | max ms | response bytes |");
    println!("| --- | --- | ---: | ---: | ---: | ---: | ---: |");
    for r in &reads {
        let bytes = if r.bytes == 0 {
            "–".to_string()
        } else {
            r.bytes.to_string()
        };
        println!(
            "| {} | {} | {} | {} | {} | {} | {} |",
            r.operation,
            r.path,
            r.requests,
            ms(r.p50),
            ms(r.p99),
            ms(r.max),
            bytes
        );
    }

    println!(
        "\n### Creates (ConfigMap, ~200 B of data, {stored_bytes} B stored; {} s measured after {} s warm-up; closed loop, one connection per client)\n",
        args.duration, args.warmup
    );
    println!("| path | clients | creates/s | % of store | p50 ms | p99 ms | errors | server CPU / create | client CPU / create | machine CPU busy |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for row in &creates {
        let baseline = creates
            .iter()
            .find(|b| b.clients == row.clients && b.path == PathKind::Baseline.label())
            .map(|b| b.result.throughput())
            .unwrap_or(0.0);
        let pct = if baseline > 0.0 {
            format!("{:.0} %", 100.0 * row.result.throughput() / baseline)
        } else {
            "–".into()
        };
        println!(
            "| {} | {} | {:.0} | {} | {} | {} | {} | {} | {} | {:.0} % |",
            row.path,
            row.clients,
            row.result.throughput(),
            pct,
            ms(row.result.percentile(0.5)),
            ms(row.result.percentile(0.99)),
            row.result.errors,
            per_op(row.server_cpu, row.result.ops),
            per_op(row.client_cpu, row.result.ops),
            100.0 * row.machine_busy,
        );
    }
    server.stop()?;
    if args.keep {
        say(format!("kept {}", work.keep().display()));
    }
    Ok(())
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
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
