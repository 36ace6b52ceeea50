//! `capstan-admission-bench`: what admission costs a create, in one run of
//! one capstan binary on the embedded store. ConfigMap creates, in rounds
//! of interleaved phases:
//!
//! - no admission configuration (the built-in plugins only): the baseline;
//! - one validating webhook over HTTPS (a Rust server in this process,
//!   answering every review `allowed`);
//! - the same webhook called over gRPC (`admission.capstan.dev/protocol:
//!   grpc`, a tonic server in this process);
//! - five ValidatingAdmissionPolicies, each with one CEL validation and a
//!   binding.
//!
//! For each: the server's CPU per create and the median create latency;
//! for the webhook, the calls it answered and its own handling time.
//! Results are Markdown on stdout, progress on stderr.

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

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use clap::Parser;
use creates::{micros, Bench, Measure};
use error::BenchError;
use http_body_util::{BodyExt, Full};
use rest::{expect_status, TlsFiles};
use serde_json::{json, Value};
use server::ServerProc;

use capstan_proto::webhook::v1 as pb;

#[derive(Parser, Debug)]
#[command(
    name = "capstan-admission-bench",
    about = "What admission webhooks and policies cost a create"
)]
struct Args {
    /// The capstan binary to measure (build it with `cargo build --release`).
    #[arg(default_value = "target/release/capstan")]
    binary: std::path::PathBuf,
    /// Creates per phase and round.
    #[arg(long, default_value_t = 2000)]
    creates: usize,
    /// Concurrent clients.
    #[arg(long, default_value_t = 8)]
    clients: usize,
    /// Rounds of (baseline, webhook, policies).
    #[arg(long, default_value_t = 3)]
    rounds: usize,
}

const CONFIG_MAPS: &str = "/api/v1/namespaces/default/configmaps";
const WEBHOOKS: &str = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";
const POLICIES: &str = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies";
const BINDINGS: &str = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings";
const POLICY_COUNT: usize = 5;

fn config_map(name: &str) -> Value {
    let data: serde_json::Map<String, Value> = (0..10)
        .map(|i| (format!("key{i}"), json!(format!("value-{i}"))))
        .collect();
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": name, "labels": {"app": "bench"}}, "data": data})
}

/// What the in-process webhook counted.
#[derive(Default)]
struct WebhookStats {
    calls: AtomicU64,
    handling_nanos: AtomicU64,
}

/// A CA (PEM) and a certificate for 127.0.0.1 it signed, with its key.
struct LoopbackCertificate {
    ca_pem: String,
    cert: rcgen::Certificate,
    key: rcgen::KeyPair,
}

fn loopback_certificate() -> Result<LoopbackCertificate, BenchError> {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair, SanType};
    let tls_error = |e: &dyn std::fmt::Display| BenchError::Tls(e.to_string());
    let ca_key = KeyPair::generate().map_err(|e| tls_error(&e))?;
    let mut ca = CertificateParams::new(Vec::<String>::new()).map_err(|e| tls_error(&e))?;
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_cert = ca.self_signed(&ca_key).map_err(|e| tls_error(&e))?;
    let issuer = Issuer::new(ca, ca_key);
    let key = KeyPair::generate().map_err(|e| tls_error(&e))?;
    let mut leaf = CertificateParams::new(Vec::<String>::new()).map_err(|e| tls_error(&e))?;
    leaf.subject_alt_names = vec![SanType::IpAddress([127, 0, 0, 1].into())];
    let cert = leaf.signed_by(&key, &issuer).map_err(|e| tls_error(&e))?;
    Ok(LoopbackCertificate {
        ca_pem: ca_cert.pem(),
        cert,
        key,
    })
}

/// An HTTPS webhook on 127.0.0.1 that allows every review; its port and
/// the CA (PEM) that signed its certificate.
async fn start_webhook(stats: Arc<WebhookStats>) -> Result<(u16, String), BenchError> {
    let tls_error = |e: &dyn std::fmt::Display| BenchError::Tls(e.to_string());
    let LoopbackCertificate { ca_pem, cert, key } = loopback_certificate()?;
    let certs = vec![cert.der().clone()];
    let private = rustls::pki_types::PrivateKeyDer::try_from(key.serialize_der())
        .map_err(|e| tls_error(&e))?;
    let config = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(certs, private)
        .map_err(|e| tls_error(&e))?;
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await?;
    let port = listener.local_addr()?.port();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            let stats = stats.clone();
            tokio::spawn(async move {
                let Ok(stream) = acceptor.accept(stream).await else {
                    return;
                };
                let service = hyper::service::service_fn(
                    move |request: hyper::Request<hyper::body::Incoming>| {
                        let stats = stats.clone();
                        async move {
                            let body = request.into_body().collect().await?.to_bytes();
                            let started = Instant::now();
                            let review: Value =
                                serde_json::from_slice(&body).unwrap_or(Value::Null);
                            let answer = json!({
                                "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                                "response": {"uid": review["request"]["uid"], "allowed": true}
                            });
                            let bytes = serde_json::to_vec(&answer).unwrap_or_default();
                            stats.calls.fetch_add(1, Ordering::Relaxed);
                            stats
                                .handling_nanos
                                .fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
                            Ok::<_, hyper::Error>(
                                hyper::Response::builder()
                                    .header("Content-Type", "application/json")
                                    .body(Full::new(Bytes::from(bytes)))
                                    .unwrap_or_default(),
                            )
                        }
                    },
                );
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Ok((port, ca_pem))
}

/// The same webhook served over gRPC (capstan.webhook.v1).
struct GrpcWebhook {
    stats: Arc<WebhookStats>,
}

#[tonic::async_trait]
impl pb::admission_webhook_server::AdmissionWebhook for GrpcWebhook {
    async fn admit(
        &self,
        request: tonic::Request<pb::AdmissionRequest>,
    ) -> Result<tonic::Response<pb::AdmissionResponse>, tonic::Status> {
        let started = Instant::now();
        let answer = pb::AdmissionResponse {
            uid: request.into_inner().uid,
            allowed: true,
            ..Default::default()
        };
        self.stats.calls.fetch_add(1, Ordering::Relaxed);
        self.stats
            .handling_nanos
            .fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
        Ok(tonic::Response::new(answer))
    }
}

/// A gRPC webhook on 127.0.0.1 that allows every request; its port and
/// the CA (PEM) that signed its certificate.
async fn start_grpc_webhook(stats: Arc<WebhookStats>) -> Result<(u16, String), BenchError> {
    use tonic::transport::{Identity, Server, ServerTlsConfig};
    let tls_error = |e: &dyn std::fmt::Display| BenchError::Tls(e.to_string());
    let LoopbackCertificate { ca_pem, cert, key } = loopback_certificate()?;
    let incoming =
        tonic::transport::server::TcpIncoming::bind(SocketAddr::from(([127, 0, 0, 1], 0)))?;
    let port = incoming.local_addr()?.port();
    let identity = Identity::from_pem(cert.pem(), key.serialize_pem());
    let server = Server::builder()
        .tls_config(ServerTlsConfig::new().identity(identity))
        .map_err(|e| tls_error(&e))?
        .add_service(pb::admission_webhook_server::AdmissionWebhookServer::new(
            GrpcWebhook { stats },
        ))
        .serve_with_incoming(incoming);
    tokio::spawn(server);
    Ok((port, ca_pem))
}

fn webhook_configuration(port: u16, ca_pem: &str, protocol: &str) -> Value {
    use base64::Engine as _;
    let ca_bundle = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
           "metadata": {"name": "bench", "annotations": {"admission.capstan.dev/protocol": protocol}},
           "webhooks": [{"name": "allow.bench.example.com",
               "clientConfig": {"url": format!("https://127.0.0.1:{port}/allow"), "caBundle": ca_bundle},
               "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}],
               "objectSelector": {"matchLabels": {"app": "bench"}},
               "sideEffects": "None", "admissionReviewVersions": ["v1"]}]})
}

fn policy(i: usize) -> Value {
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
           "metadata": {"name": format!("bench-{i}")},
           "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                       "operations": ["CREATE"], "resources": ["configmaps"]}]},
                    "validations": [{"expression": format!("!has(object.data) || size(object.data) < 100 + {i}"),
                                     "message": "too much data"}]}})
}

fn binding(i: usize) -> Value {
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
           "metadata": {"name": format!("bench-{i}")},
           "spec": {"policyName": format!("bench-{i}"), "validationActions": ["Deny"]}})
}

async fn run(args: Args) -> Result<(), BenchError> {
    let dir = tempfile::Builder::new()
        .prefix("capstan-admission-bench-")
        .tempdir()?;
    let server = ServerProc::start(&args.binary, dir.path()).await?;
    let tls = TlsFiles::from_data_dir(dir.path()).config()?;
    let bench = Bench { server, tls };
    let https = Arc::new(WebhookStats::default());
    let grpc = Arc::new(WebhookStats::default());
    let webhooks = [
        {
            let (port, ca_pem) = start_webhook(https.clone()).await?;
            WebhookPhase {
                label: "HTTPS",
                row: "one HTTPS webhook",
                configuration: webhook_configuration(port, &ca_pem, "https"),
                stats: https,
            }
        },
        {
            let (port, ca_pem) = start_grpc_webhook(grpc.clone()).await?;
            WebhookPhase {
                label: "gRPC",
                row: "one gRPC webhook",
                configuration: webhook_configuration(port, &ca_pem, "grpc"),
                stats: grpc,
            }
        },
    ];
    // Warm-up: caches loaded, connections made.
    bench
        .creates(CONFIG_MAPS, 200, args.clients, config_map, "warm")
        .await?;

    let mut rows: Vec<(&str, Measure)> = Vec::new();
    for round in 0..args.rounds {
        eprintln!("round {}: baseline", round + 1);
        rows.push((
            "none",
            bench
                .creates(
                    CONFIG_MAPS,
                    args.creates,
                    args.clients,
                    config_map,
                    &format!("base{round}"),
                )
                .await?,
        ));

        for webhook in &webhooks {
            eprintln!("round {}: one {} webhook", round + 1, webhook.label);
            rows.push((webhook.row, webhook.measure(&bench, &args, round).await?));
        }

        eprintln!("round {}: {POLICY_COUNT} policies", round + 1);
        for i in 0..POLICY_COUNT {
            bench.create(POLICIES, &policy(i)).await?;
            bench.create(BINDINGS, &binding(i)).await?;
        }
        // A policy that refuses a probe shows the policies are in effect.
        bench.create(POLICIES, &json!({"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicy", "metadata": {"name": "bench-probe"},
            "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                       "operations": ["CREATE"], "resources": ["configmaps"]}]},
                     "validations": [{"expression": "!object.metadata.name.startsWith('refuse')"}]}})).await?;
        bench
            .create(BINDINGS, &binding_named("bench-probe"))
            .await?;
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let mut conn = bench.conn().await?;
            let (status, _) = conn
                .post(
                    CONFIG_MAPS,
                    serde_json::to_vec(&config_map(&format!("refuse{round}")))?,
                )
                .await?;
            if status == 422 {
                break;
            }
            if Instant::now() > deadline {
                return Err(BenchError::Startup("the policies never took effect".into()));
            }
            expect_status(
                conn.delete(&format!("{CONFIG_MAPS}/refuse{round}")).await?,
                200,
            )?;
        }
        bench.delete(&format!("{BINDINGS}/bench-probe")).await?;
        bench.delete(&format!("{POLICIES}/bench-probe")).await?;
        rows.push((
            "five policies",
            bench
                .creates(
                    CONFIG_MAPS,
                    args.creates,
                    args.clients,
                    config_map,
                    &format!("vap{round}"),
                )
                .await?,
        ));
        for i in 0..POLICY_COUNT {
            bench.delete(&format!("{BINDINGS}/bench-{i}")).await?;
            bench.delete(&format!("{POLICIES}/bench-{i}")).await?;
        }
    }

    println!("| admission | server CPU per create (µs) | median create latency (µs) |");
    println!("| --- | --- | --- |");
    for (label, measure) in &rows {
        println!(
            "| {label} | {} | {} |",
            micros(measure.cpu_per_create),
            micros(measure.median)
        );
    }
    println!();
    for webhook in &webhooks {
        let calls = webhook.stats.calls.load(Ordering::Relaxed);
        let nanos = webhook.stats.handling_nanos.load(Ordering::Relaxed);
        let handling = Duration::from_nanos(nanos / calls.max(1));
        println!(
            "The {} webhook answered {calls} calls, each handled in {} µs on average (its own decoding and encoding, not the round trip).",
            webhook.label,
            micros(handling)
        );
    }
    Ok(())
}

/// One webhook phase: its configuration, and what its server counted.
struct WebhookPhase {
    label: &'static str,
    row: &'static str,
    configuration: Value,
    stats: Arc<WebhookStats>,
}

impl WebhookPhase {
    /// Creates with the webhook configured, after it took effect; checks
    /// the webhook was called for every create, then removes it.
    async fn measure(
        &self,
        bench: &Bench,
        args: &Args,
        round: usize,
    ) -> Result<Measure, BenchError> {
        let stats = &self.stats;
        bench.create(WEBHOOKS, &self.configuration).await?;
        // Configurations take effect through the watch cache: wait until
        // the webhook is called.
        let before = stats.calls.load(Ordering::Relaxed);
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut probe = 0;
        while stats.calls.load(Ordering::Relaxed) == before {
            if Instant::now() > deadline {
                return Err(BenchError::Startup(format!(
                    "the {} webhook never took effect",
                    self.label
                )));
            }
            probe += 1;
            let name = format!("probe-{}-{round}-{probe}", self.label.to_lowercase());
            bench.create(CONFIG_MAPS, &config_map(&name)).await?;
        }
        let calls = stats.calls.load(Ordering::Relaxed);
        let prefix = format!("{}{round}", self.label.to_lowercase());
        let measured = bench
            .creates(CONFIG_MAPS, args.creates, args.clients, config_map, &prefix)
            .await?;
        let answered = stats.calls.load(Ordering::Relaxed) - calls;
        if answered < args.creates as u64 {
            return Err(BenchError::Startup(format!(
                "the {} webhook answered {answered} of {} creates",
                self.label, args.creates
            )));
        }
        bench.delete(&format!("{WEBHOOKS}/bench")).await?;
        Ok(measured)
    }
}

fn binding_named(policy: &str) -> Value {
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
           "metadata": {"name": policy},
           "spec": {"policyName": policy, "validationActions": ["Deny"]}})
}

fn main() -> Result<(), BenchError> {
    let args = Args::parse();
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(run(args))
}
