//! `capstan-crd-bench`: what CustomResourceDefinitions cost one capstan
//! binary on this machine, in one run on the embedded store:
//!
//! - custom resource creates against ConfigMap creates, interleaved: the
//!   server's CPU per create, the custom resource having a schema of 30
//!   fields and 5 CEL rules;
//! - 200 definitions created at once: the time until every one is
//!   Established, and the RSS they add, before and after a client read
//!   the OpenAPI v3 index and every definition's group-version document;
//! - after the 200th: the server CPU and latency of a discovery and an
//!   OpenAPI request.
//!
//! Results are Markdown on stdout, progress on stderr.

// The benchmark's shared parts; each binary uses some of them.
#[allow(dead_code)]
#[path = "../creates.rs"]
mod creates;
#[allow(dead_code)]
#[path = "../error.rs"]
mod error;
#[allow(dead_code)]
#[path = "../rest.rs"]
mod rest;
#[allow(dead_code)]
#[path = "../server.rs"]
mod server;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Parser;
use creates::{micros, Bench};
use error::BenchError;
use rest::{expect_status, RestConn, TlsFiles};
use serde_json::{json, Value};
use server::ServerProc;

#[derive(Parser, Debug)]
#[command(
    name = "capstan-crd-bench",
    about = "What CustomResourceDefinitions cost a capstan binary"
)]
struct Args {
    /// The capstan binary to measure (build it with `cargo build --release`).
    #[arg(default_value = "target/release/capstan")]
    binary: PathBuf,
    /// Definitions created for the establishment and memory measure.
    #[arg(long, default_value_t = 200)]
    definitions: usize,
    /// Creates per measured phase (each kind, each round).
    #[arg(long, default_value_t = 2000)]
    creates: usize,
    /// Concurrent clients of the create phases.
    #[arg(long, default_value_t = 8)]
    clients: usize,
    /// Rounds of (ConfigMap phase, custom resource phase).
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Requests per discovery and OpenAPI measure.
    #[arg(long, default_value_t = 50)]
    reads: usize,
}

const NAMESPACE: &str = "default";

/// The benchmark's custom kind: 30 fields (10 strings, 10 integers, 5
/// booleans, a nested object of 5) and 5 CEL rules.
fn things_definition() -> Value {
    let mut properties = serde_json::Map::new();
    for i in 0..10 {
        properties.insert(format!("s{i}"), json!({"type": "string", "maxLength": 64}));
        properties.insert(format!("n{i}"), json!({"type": "integer", "minimum": 0}));
    }
    for i in 0..5 {
        properties.insert(format!("b{i}"), json!({"type": "boolean"}));
    }
    properties.insert(
        "nested".into(),
        json!({"type": "object", "properties": {
            "a": {"type": "string"}, "b": {"type": "integer"}, "c": {"type": "boolean"},
            "d": {"type": "string", "enum": ["x", "y"]}, "e": {"type": "integer"}}}),
    );
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.bench.example.com"},
        "spec": {
            "group": "bench.example.com", "scope": "Namespaced",
            "names": {"plural": "things", "kind": "Thing"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": properties,
                        "x-kubernetes-validations": [
                            {"rule": "self.n0 <= self.n1", "message": "n0 must not exceed n1"},
                            {"rule": "size(self.s0) < 64"},
                            {"rule": "!has(self.nested) || self.nested.b >= 0"},
                            {"rule": "self.s1.startsWith('v')"},
                            {"rule": "self.n2 + self.n3 < 1000000"}
                        ]},
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}]
        }
    })
}

fn thing(name: &str) -> Value {
    let mut spec = serde_json::Map::new();
    for i in 0..10 {
        spec.insert(format!("s{i}"), json!(format!("value-{i}")));
        spec.insert(format!("n{i}"), json!(i));
    }
    for i in 0..5 {
        spec.insert(format!("b{i}"), json!(i % 2 == 0));
    }
    spec.insert(
        "nested".into(),
        json!({"a": "text", "b": 7, "c": true, "d": "x", "e": 3}),
    );
    json!({"apiVersion": "bench.example.com/v1", "kind": "Thing",
           "metadata": {"name": name, "labels": {"app": "bench"}}, "spec": spec})
}

fn config_map(name: &str) -> Value {
    let data: serde_json::Map<String, Value> = (0..30)
        .map(|i| (format!("key{i}"), json!(format!("value-{i}"))))
        .collect();
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": name, "labels": {"app": "bench"}}, "data": data})
}

fn gadget_definition(i: usize) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("gadgets{i}.group{i}.bench.example.com")},
        "spec": {
            "group": format!("group{i}.bench.example.com"), "scope": "Namespaced",
            "names": {"plural": format!("gadgets{i}"), "kind": format!("Gadget{i}")},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "size": {"type": "integer"}, "color": {"type": "string"},
                        "tags": {"type": "array", "items": {"type": "string"}}}}}}}}]
        }
    })
}

impl Bench {
    /// Median latency and server CPU per request of `reads` GETs.
    async fn reads(
        &self,
        path: &str,
        accept: &str,
        reads: usize,
    ) -> Result<(Duration, Duration), BenchError> {
        let mut conn = self.conn().await?;
        expect_status(conn.get_as(path, accept).await?, 200)?;
        let cpu = self.server.cpu_time()?;
        let mut latencies = Vec::new();
        for _ in 0..reads {
            let started = Instant::now();
            expect_status(conn.get_as(path, accept).await?, 200)?;
            latencies.push(started.elapsed());
        }
        let per_read = (self.server.cpu_time()? - cpu) / reads as u32;
        latencies.sort();
        Ok((latencies[latencies.len() / 2], per_read))
    }

    async fn established_count(&self, conn: &mut RestConn) -> Result<usize, BenchError> {
        let body = expect_status(
            conn.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
                .await?,
            200,
        )?;
        let list: Value = serde_json::from_slice(&body)?;
        Ok(list["items"]
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .filter(|crd| {
                        crd["status"]["conditions"].as_array().is_some_and(|c| {
                            c.iter()
                                .any(|c| c["type"] == "Established" && c["status"] == "True")
                        })
                    })
                    .count()
            })
            .unwrap_or(0))
    }
}

async fn run(args: Args) -> Result<(), BenchError> {
    let dir = tempfile::Builder::new()
        .prefix("capstan-crd-bench-")
        .tempdir()?;
    let server = ServerProc::start(&args.binary, dir.path()).await?;
    let tls = TlsFiles::from_data_dir(dir.path()).config()?;
    let bench = Bench { server, tls };
    let mut conn = bench.conn().await?;

    eprintln!("creating the Thing definition");
    expect_status(
        conn.post(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            serde_json::to_vec(&things_definition())?,
        )
        .await?,
        201,
    )?;
    let things = format!("/apis/bench.example.com/v1/namespaces/{NAMESPACE}/things");
    let deadline = Instant::now() + Duration::from_secs(30);
    while conn.get(&things).await?.0 != 200 {
        if Instant::now() > deadline {
            return Err(BenchError::Startup(
                "the Thing definition was not served".into(),
            ));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let config_maps = format!("/api/v1/namespaces/{NAMESPACE}/configmaps");
    // Warm both paths (caches, first-use allocations).
    bench
        .creates(&config_maps, 200, args.clients, config_map, "warm")
        .await?;
    bench
        .creates(&things, 200, args.clients, thing, "warm")
        .await?;

    println!("### Creates: custom resource (30 fields, 5 CEL rules) against ConfigMap (30 keys)\n");
    println!(
        "{} creates per phase, {} clients, REST, embedded store.\n",
        args.creates, args.clients
    );
    println!("| round | ConfigMap CPU/create (µs) | Thing CPU/create (µs) | ratio | ConfigMap creates/s | Thing creates/s |");
    println!("| --- | --- | --- | --- | --- | --- |");
    let mut ratios = Vec::new();
    for round in 0..args.rounds {
        eprintln!("round {round}");
        let creates::Measure {
            cpu_per_create: cm_cpu,
            wall: cm_wall,
            ..
        } = bench
            .creates(
                &config_maps,
                args.creates,
                args.clients,
                config_map,
                &format!("cm{round}"),
            )
            .await?;
        let creates::Measure {
            cpu_per_create: cr_cpu,
            wall: cr_wall,
            ..
        } = bench
            .creates(
                &things,
                args.creates,
                args.clients,
                thing,
                &format!("thing{round}"),
            )
            .await?;
        let ratio = cr_cpu.as_secs_f64() / cm_cpu.as_secs_f64();
        ratios.push(ratio);
        println!(
            "| {round} | {} | {} | {ratio:.2} | {:.0} | {:.0} |",
            micros(cm_cpu),
            micros(cr_cpu),
            args.creates as f64 / cm_wall.as_secs_f64(),
            args.creates as f64 / cr_wall.as_secs_f64()
        );
    }
    ratios.sort_by(f64::total_cmp);
    println!("\nMedian ratio: {:.2}\n", ratios[ratios.len() / 2]);

    eprintln!("creating {} definitions", args.definitions);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let rss_before = bench.server.rss_bytes()?;
    let started = Instant::now();
    let created = bench
        .creates(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            args.definitions,
            args.clients,
            |name| gadget_definition(name.trim_start_matches("gadget-").parse().unwrap_or(0)),
            "gadget",
        )
        .await?;
    let created_in = started.elapsed();
    let deadline = Instant::now() + Duration::from_secs(120);
    while bench.established_count(&mut conn).await? < args.definitions + 1 {
        if Instant::now() > deadline {
            return Err(BenchError::Startup(
                "the definitions were not all established".into(),
            ));
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let established_in = started.elapsed();
    // Every group served: its discovery document answers.
    let last = args.definitions - 1;
    let last_group = format!("/apis/group{last}.bench.example.com/v1");
    while conn.get(&last_group).await?.0 != 200 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let served_in = started.elapsed();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let rss_after = bench.server.rss_bytes()?;

    println!("### {} CustomResourceDefinitions\n", args.definitions);
    println!("| measure | value |");
    println!("| --- | --- |");
    println!(
        "| server CPU per definition create (µs) | {} |",
        micros(created.cpu_per_create)
    );
    println!("| all created (s) | {:.2} |", created_in.as_secs_f64());
    println!(
        "| all Established (s) | {:.2} |",
        established_in.as_secs_f64()
    );
    println!("| last group served (s) | {:.2} |", served_in.as_secs_f64());
    println!(
        "| RSS added per definition (KB) | {:.1} |",
        (rss_after.saturating_sub(rss_before)) as f64 / 1024.0 / args.definitions as f64
    );
    println!(
        "| RSS after (MB) | {:.1} |",
        rss_after as f64 / 1024.0 / 1024.0
    );
    // A client that reads the OpenAPI v3 index and then every
    // group-version document in it once (kubectl explain and apply read
    // a few; validators and IDE plugins read them all).
    expect_status(conn.get_as("/openapi/v3", "application/json").await?, 200)?;
    for i in 0..args.definitions {
        let path = format!("/openapi/v3/apis/group{i}.bench.example.com/v1");
        expect_status(conn.get_as(&path, "application/json").await?, 200)?;
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    let rss_read = bench.server.rss_bytes()?;
    println!(
        "| RSS added per definition once every OpenAPI v3 document was read (KB) | {:.1} |\n",
        (rss_read.saturating_sub(rss_before)) as f64 / 1024.0 / args.definitions as f64
    );

    println!(
        "### Discovery and OpenAPI after the {}th definition\n",
        args.definitions
    );
    println!("| request | median latency (µs) | server CPU per request (µs) |");
    println!("| --- | --- | --- |");
    let aggregated = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
    for (label, path, accept) in [
        ("GET /apis (aggregated discovery)", "/apis", aggregated),
        ("GET /apis (legacy group list)", "/apis", "application/json"),
        (
            "GET /apis/group0.bench.example.com/v1",
            "/apis/group0.bench.example.com/v1",
            "application/json",
        ),
        ("GET /openapi/v3 (index)", "/openapi/v3", "application/json"),
        (
            "GET /openapi/v3/apis/group0.bench.example.com/v1",
            "/openapi/v3/apis/group0.bench.example.com/v1",
            "application/json",
        ),
        ("GET /openapi/v2", "/openapi/v2", "application/json"),
    ] {
        let (latency, cpu) = bench.reads(path, accept, args.reads).await?;
        println!("| {label} | {} | {} |", micros(latency), micros(cpu));
    }

    // What one more definition costs the OpenAPI documents: the first
    // request after it is served waits for their rebuild.
    println!(
        "\n### OpenAPI after one more definition (the first request after the {}th and later ones)\n",
        args.definitions + 1
    );
    println!("| definition | first GET /openapi/v3 (index): latency (ms) | its server CPU (ms) | first GET /openapi/v2: latency (ms) | its server CPU (ms) |");
    println!("| --- | --- | --- | --- | --- |");
    for extra in args.definitions..args.definitions + args.rounds {
        expect_status(
            conn.post(
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                serde_json::to_vec(&gadget_definition(extra))?,
            )
            .await?,
            201,
        )?;
        let group = format!("/apis/group{extra}.bench.example.com/v1");
        let deadline = Instant::now() + Duration::from_secs(60);
        while conn.get(&group).await?.0 != 200 {
            if Instant::now() > deadline {
                return Err(BenchError::Startup(format!("{group} was not served")));
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        // The definition's controllers settle before the measure.
        tokio::time::sleep(Duration::from_secs(3)).await;
        let mut first = Vec::new();
        for path in ["/openapi/v3", "/openapi/v2"] {
            let cpu = bench.server.cpu_time()?;
            let started = Instant::now();
            expect_status(conn.get_as(path, "application/json").await?, 200)?;
            first.push((started.elapsed(), bench.server.cpu_time()? - cpu));
        }
        let ms = |d: Duration| format!("{:.1}", d.as_secs_f64() * 1000.0);
        println!(
            "| {} | {} | {} | {} | {} |",
            extra + 1,
            ms(first[0].0),
            ms(first[0].1),
            ms(first[1].0),
            ms(first[1].1)
        );
    }
    bench.server.stop()?;
    Ok(())
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("capstan-crd-bench: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("capstan-crd-bench: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
