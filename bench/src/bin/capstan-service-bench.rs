//! What a Service create costs beside a ConfigMap create on the same
//! server: a Service allocates a ClusterIP (range bitmap by compare-and-
//! swap, and since 1.33's model an IPAddress object created for it) and
//! is defaulted and validated more. Rounds interleave the two kinds, so
//! the ConfigMaps are the baseline of the same run; pointing it at two
//! builds gives an A/B of the Service path.
//!
//! Usage: capstan-service-bench [CAPSTAN_BINARY] [--creates N] [--clients C] [--rounds R] [--range CIDR]

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

use clap::Parser;
use creates::{micros, Bench, Measure};
use error::BenchError;
use rest::TlsFiles;
use serde_json::{json, Value};
use server::ServerProc;

#[derive(Parser)]
struct Args {
    /// The capstan binary to measure (build it with `cargo build --release`).
    #[arg(default_value = "target/release/capstan")]
    binary: std::path::PathBuf,
    /// Creates per kind and round.
    #[arg(long, default_value_t = 1000)]
    creates: usize,
    /// Concurrent clients.
    #[arg(long, default_value_t = 8)]
    clients: usize,
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// `--service-cluster-ip-range` of the server (kubeadm's default is
    /// 10.96.0.0/12; the range's bitmap is read and written per create).
    #[arg(long, default_value = "10.96.0.0/20")]
    range: String,
}

const CONFIG_MAPS: &str = "/api/v1/namespaces/default/configmaps";
const SERVICES: &str = "/api/v1/namespaces/default/services";

fn config_map(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": name, "labels": {"app": "bench"}},
           "data": {"port": "80", "target": "8080", "app": name}})
}

fn service(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Service",
           "metadata": {"name": name, "labels": {"app": "bench"}},
           "spec": {"selector": {"app": name}, "ports": [{"port": 80, "targetPort": 8080}]}})
}

async fn run(args: Args) -> Result<(), BenchError> {
    let dir = tempfile::Builder::new()
        .prefix("capstan-service-bench-")
        .tempdir()?;
    let server = ServerProc::start_with(
        &args.binary,
        dir.path(),
        &["--service-cluster-ip-range", &args.range],
    )
    .await?;
    let tls = TlsFiles::from_data_dir(dir.path()).config()?;
    let bench = Bench { server, tls };
    println!("| round | ConfigMap CPU/create (µs) | Service CPU/create (µs) | ratio | ConfigMap median (µs) | Service median (µs) |");
    println!("| --- | --- | --- | --- | --- | --- |");
    let mut ratios = Vec::new();
    for round in 0..args.rounds {
        let maps: Measure = bench
            .creates(
                CONFIG_MAPS,
                args.creates,
                args.clients,
                config_map,
                &format!("cm{round}"),
            )
            .await?;
        let services: Measure = bench
            .creates(
                SERVICES,
                args.creates,
                args.clients,
                service,
                &format!("svc{round}"),
            )
            .await?;
        let ratio =
            services.cpu_per_create.as_secs_f64() / maps.cpu_per_create.as_secs_f64().max(1e-9);
        ratios.push(ratio);
        println!(
            "| {round} | {} | {} | {ratio:.2} | {} | {} |",
            micros(maps.cpu_per_create),
            micros(services.cpu_per_create),
            micros(maps.median),
            micros(services.median)
        );
    }
    ratios.sort_by(f64::total_cmp);
    println!("\nMedian ratio: {:.2}", ratios[ratios.len() / 2]);
    Ok(())
}

fn main() -> Result<(), BenchError> {
    let args = Args::parse();
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(run(args))
}
