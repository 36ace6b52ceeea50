//! `capstan-aggregator-bench`: what the aggregation layer adds to a
//! request for an extension API server, in one run of one capstan binary
//! on the embedded store. An extension server runs in this process (Rust,
//! HTTP/2 over TLS, trusting only Capstan's front-proxy CA, as a real one
//! is configured); an APIService hands it `bench.example.com/v1`. In
//! rounds of interleaved phases:
//!
//! - GETs of a list straight from the extension server (with the
//!   front-proxy certificate, as Capstan connects): the baseline;
//! - the same GETs through Capstan (authenticated, authorized, forwarded);
//! - GETs of a ConfigMap Capstan serves itself, for scale;
//! - a watch that streams events, straight and through Capstan.
//!
//! For each: latency p50 and p99 and, through Capstan, the server's CPU
//! per request (or per event). Results are Markdown on stdout, progress on
//! stderr.

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
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use clap::Parser;
use error::BenchError;
use futures::StreamExt;
use http_body_util::{BodyExt, Full, StreamBody};
use rest::{expect_status, RestConn, TlsFiles};
use serde_json::{json, Value};
use server::ServerProc;

#[derive(Parser, Debug)]
#[command(
    name = "capstan-aggregator-bench",
    about = "What proxying to an extension API server costs"
)]
struct Args {
    /// The capstan binary to measure (build it with `cargo build --release`).
    #[arg(default_value = "target/release/capstan")]
    binary: std::path::PathBuf,
    /// GETs per phase and round.
    #[arg(long, default_value_t = 3000)]
    gets: usize,
    /// Concurrent clients.
    #[arg(long, default_value_t = 8)]
    clients: usize,
    /// Events per watch.
    #[arg(long, default_value_t = 20000)]
    events: usize,
    /// Rounds of the phases.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
}

const GROUP_VERSION: &str = "bench.example.com/v1";
const WIDGETS: &str = "/apis/bench.example.com/v1/namespaces/default/widgets";
const CONFIG_MAP: &str = "/api/v1/namespaces/default/configmaps/bench";

/// A list of ten widgets, about 1.5 KB, as the extension server answers.
fn widget_list() -> Bytes {
    let items: Vec<Value> = (0..10)
        .map(|i| {
            json!({"apiVersion": GROUP_VERSION, "kind": "Widget",
                   "metadata": {"name": format!("widget-{i}"), "namespace": "default",
                                "resourceVersion": "1", "labels": {"app": "bench"}},
                   "spec": {"size": i, "color": "blue"}})
        })
        .collect();
    let list = json!({"apiVersion": GROUP_VERSION, "kind": "WidgetList",
                      "metadata": {"resourceVersion": "1"}, "items": items});
    Bytes::from(serde_json::to_vec(&list).unwrap_or_default())
}

fn resource_list() -> Bytes {
    let list = json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": GROUP_VERSION,
                      "resources": [{"name": "widgets", "singularName": "widget", "namespaced": true,
                                     "kind": "Widget", "verbs": ["get", "list", "watch"]}]});
    Bytes::from(serde_json::to_vec(&list).unwrap_or_default())
}

/// One watch event line, about 250 bytes.
fn event_line(n: usize) -> Bytes {
    let event = json!({"type": "MODIFIED", "object": {"apiVersion": GROUP_VERSION, "kind": "Widget",
        "metadata": {"name": "widget-0", "namespace": "default", "resourceVersion": n.to_string()},
        "spec": {"size": n, "color": "blue"}}});
    let mut line = serde_json::to_vec(&event).unwrap_or_default();
    line.push(b'\n');
    Bytes::from(line)
}

/// The serving certificate of the extension server (for 127.0.0.1 and
/// `api.ext.svc`) and the CA that signed it, PEM.
fn backend_certificate() -> Result<(String, String, String), BenchError> {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair, SanType};
    let tls_error = |e: &dyn std::fmt::Display| BenchError::Tls(e.to_string());
    let ca_key = KeyPair::generate().map_err(|e| tls_error(&e))?;
    let mut ca = CertificateParams::new(Vec::<String>::new()).map_err(|e| tls_error(&e))?;
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_cert = ca.self_signed(&ca_key).map_err(|e| tls_error(&e))?;
    let issuer = Issuer::new(ca, ca_key);
    let key = KeyPair::generate().map_err(|e| tls_error(&e))?;
    let mut leaf =
        CertificateParams::new(vec!["api.ext.svc".to_string()]).map_err(|e| tls_error(&e))?;
    leaf.subject_alt_names
        .push(SanType::IpAddress([127, 0, 0, 1].into()));
    let cert = leaf.signed_by(&key, &issuer).map_err(|e| tls_error(&e))?;
    Ok((ca_cert.pem(), cert.pem(), key.serialize_pem()))
}

/// What the extension server counted.
#[derive(Default)]
struct BackendStats {
    requests: AtomicU64,
}

type ResponseBody = http_body_util::combinators::BoxBody<Bytes, std::convert::Infallible>;

fn answer(
    request: &hyper::Request<hyper::body::Incoming>,
    events: usize,
) -> hyper::Response<ResponseBody> {
    let path = request.uri().path();
    let watch = request
        .uri()
        .query()
        .is_some_and(|q| q.split('&').any(|p| p == "watch=1" || p == "watch=true"));
    let json = |status: u16, body: Bytes| {
        hyper::Response::builder()
            .status(status)
            .header("Content-Type", "application/json")
            .body(Full::new(body).boxed())
            .unwrap_or_default()
    };
    if path == "/apis/bench.example.com/v1" {
        return json(200, resource_list());
    }
    if path == WIDGETS && watch {
        let lines =
            futures::stream::iter((0..events).map(|n| {
                Ok::<_, std::convert::Infallible>(hyper::body::Frame::data(event_line(n)))
            }));
        return hyper::Response::builder()
            .header("Content-Type", "application/json")
            .body(BodyExt::boxed(StreamBody::new(lines)))
            .unwrap_or_default();
    }
    if path == WIDGETS {
        return json(200, widget_list());
    }
    json(404, Bytes::from_static(br#"{"kind":"Status","code":404}"#))
}

/// The extension server on 127.0.0.1, requiring a client certificate of
/// `client_ca` (PEM); its port.
async fn start_backend(
    cert_pem: &str,
    key_pem: &str,
    client_ca: &Path,
    events: usize,
    stats: Arc<BackendStats>,
) -> Result<u16, BenchError> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let tls_error = |e: &dyn std::fmt::Display| BenchError::Tls(e.to_string());
    let chain = CertificateDer::pem_slice_iter(cert_pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| tls_error(&e))?;
    let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes()).map_err(|e| tls_error(&e))?;
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(client_ca).map_err(|e| tls_error(&e))? {
        roots
            .add(cert.map_err(|e| tls_error(&e))?)
            .map_err(|e| tls_error(&e))?;
    }
    let verifier = rustls::server::WebPkiClientVerifier::builder(Arc::new(roots))
        .build()
        .map_err(|e| tls_error(&e))?;
    let mut config = rustls::ServerConfig::builder()
        .with_client_cert_verifier(verifier)
        .with_single_cert(chain, key)
        .map_err(|e| tls_error(&e))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await?;
    let port = listener.local_addr()?.port();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let _ = stream.set_nodelay(true);
            let acceptor = acceptor.clone();
            let stats = stats.clone();
            tokio::spawn(async move {
                let Ok(stream) = acceptor.accept(stream).await else {
                    return;
                };
                let service = hyper::service::service_fn(
                    move |request: hyper::Request<hyper::body::Incoming>| {
                        stats.requests.fetch_add(1, Ordering::Relaxed);
                        let response = answer(&request, events);
                        async move { Ok::<_, std::convert::Infallible>(response) }
                    },
                );
                let _ = hyper_util::server::conn::auto::Builder::new(
                    hyper_util::rt::TokioExecutor::new(),
                )
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
            });
        }
    });
    Ok(port)
}

/// Latencies of one phase of GETs, and the server's CPU meanwhile.
struct Gets {
    p50: Duration,
    p99: Duration,
    cpu_per_get: Duration,
}

async fn gets(
    server: &ServerProc,
    port: u16,
    tls: &Arc<rustls::ClientConfig>,
    path: &str,
    count: usize,
    clients: usize,
) -> Result<Gets, BenchError> {
    let mut conns = Vec::new();
    for _ in 0..clients {
        conns.push(RestConn::connect(port, tls.clone()).await?);
    }
    let cpu = server.cpu_time()?;
    let mut tasks = Vec::new();
    for (client, mut conn) in conns.into_iter().enumerate() {
        let path = path.to_string();
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            for _ in (client..count).step_by(clients) {
                let sent = Instant::now();
                expect_status(conn.get(&path).await?, 200)?;
                latencies.push(sent.elapsed());
            }
            Ok::<_, BenchError>(latencies)
        }));
    }
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await.map_err(|e| BenchError::Http(e.to_string()))??);
    }
    let cpu = server.cpu_time()? - cpu;
    latencies.sort();
    let at = |q: f64| latencies[((latencies.len() as f64 * q) as usize).min(latencies.len() - 1)];
    Ok(Gets {
        p50: at(0.5),
        p99: at(0.99),
        cpu_per_get: cpu / count as u32,
    })
}

/// How long a watch took to deliver all its events, and the server's CPU
/// per event meanwhile.
async fn watch(
    server: &ServerProc,
    port: u16,
    tls: &Arc<rustls::ClientConfig>,
    events: usize,
) -> Result<(Duration, Duration), BenchError> {
    let mut conn = RestConn::connect(port, tls.clone()).await?;
    let cpu = server.cpu_time()?;
    let started = Instant::now();
    let mut stream = conn.watch(&format!("{WIDGETS}?watch=1")).await?;
    let mut seen = 0;
    while stream.next().await.is_some() {
        seen += 1;
    }
    let elapsed = started.elapsed();
    if seen != events {
        return Err(BenchError::Http(format!("{seen} of {events} events")));
    }
    let cpu = server.cpu_time()? - cpu;
    Ok((elapsed, cpu / events as u32))
}

fn micros(d: Duration) -> String {
    format!("{:.0} µs", d.as_secs_f64() * 1e6)
}

async fn wait_available(admin: &mut RestConn) -> Result<(), BenchError> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (status, body) = admin
            .get("/apis/apiregistration.k8s.io/v1/apiservices/v1.bench.example.com")
            .await?;
        let available = status == 200
            && serde_json::from_slice::<Value>(&body)
                .ok()
                .and_then(|s| s.pointer("/status/conditions/0/status").cloned())
                == Some(json!("True"));
        if available {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(BenchError::Http(
                "the APIService never became Available".into(),
            ));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn run(args: Args) -> Result<(), BenchError> {
    let dir = tempfile::Builder::new()
        .prefix("capstan-aggregator-bench-")
        .tempdir()?;
    let server = ServerProc::start(&args.binary, dir.path()).await?;
    let admin_tls = TlsFiles::from_data_dir(dir.path()).config()?;
    let pki = dir.path().join("pki");

    let (backend_ca, backend_cert, backend_key) = backend_certificate()?;
    let backend_ca_path = dir.path().join("backend-ca.crt");
    std::fs::write(&backend_ca_path, &backend_ca)?;
    let stats = Arc::new(BackendStats::default());
    let backend_port = start_backend(
        &backend_cert,
        &backend_key,
        &pki.join("front-proxy-ca.crt"),
        args.events,
        stats.clone(),
    )
    .await?;
    // Straight to the backend as Capstan connects: its front-proxy
    // certificate, the backend's CA.
    let direct_tls = TlsFiles::new(
        backend_ca_path,
        pki.join("front-proxy-client.crt"),
        pki.join("front-proxy-client.key"),
    )
    .config()?;

    use base64::Engine as _;
    let ca_bundle = base64::engine::general_purpose::STANDARD.encode(&backend_ca);
    let mut admin = RestConn::connect(server.port, admin_tls.clone()).await?;
    for (path, object) in [
        (
            "/api/v1/namespaces",
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ext"}}),
        ),
        (
            "/api/v1/namespaces/ext/services",
            json!({"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "api"}, "spec": {"type": "ExternalName", "externalName": "127.0.0.1"}}),
        ),
        (
            "/apis/apiregistration.k8s.io/v1/apiservices",
            json!({"apiVersion": "apiregistration.k8s.io/v1",
            "kind": "APIService", "metadata": {"name": "v1.bench.example.com"},
            "spec": {"group": "bench.example.com", "version": "v1", "caBundle": ca_bundle,
                     "service": {"namespace": "ext", "name": "api", "port": backend_port},
                     "groupPriorityMinimum": 1000, "versionPriority": 15}}),
        ),
        (
            "/api/v1/namespaces/default/configmaps",
            json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "bench"}, "data": {"a": "b"}}),
        ),
    ] {
        expect_status(admin.post(path, serde_json::to_vec(&object)?).await?, 201)?;
    }
    wait_available(&mut admin).await?;
    eprintln!("extension server available on port {backend_port}");

    let mut rows = Vec::new();
    for round in 1..=args.rounds {
        let direct = gets(
            &server,
            backend_port,
            &direct_tls,
            WIDGETS,
            args.gets,
            args.clients,
        )
        .await?;
        let proxied = gets(
            &server,
            server.port,
            &admin_tls,
            WIDGETS,
            args.gets,
            args.clients,
        )
        .await?;
        let local = gets(
            &server,
            server.port,
            &admin_tls,
            CONFIG_MAP,
            args.gets,
            args.clients,
        )
        .await?;
        let (direct_watch, _) = watch(&server, backend_port, &direct_tls, args.events).await?;
        let (proxied_watch, cpu_per_event) =
            watch(&server, server.port, &admin_tls, args.events).await?;
        eprintln!("round {round} done");
        rows.push(format!(
            "| {round} | {} / {} | {} / {} | {} | {} / {} | {} | {} | {} | {} |",
            micros(direct.p50),
            micros(direct.p99),
            micros(proxied.p50),
            micros(proxied.p99),
            micros(proxied.cpu_per_get),
            micros(local.p50),
            micros(local.p99),
            micros(local.cpu_per_get),
            micros(direct_watch / args.events as u32),
            micros(proxied_watch / args.events as u32),
            micros(cpu_per_event),
        ));
    }
    println!(
        "{} GETs per phase by {} clients (HTTP/2, one connection each), watches of {} events; the extension server answered {} requests.\n",
        args.gets,
        args.clients,
        args.events,
        stats.requests.load(Ordering::Relaxed)
    );
    println!("| round | direct GET p50 / p99 | proxied GET p50 / p99 | capstan CPU per proxied GET | local ConfigMap GET p50 / p99 | capstan CPU per local GET | direct watch, per event | proxied watch, per event | capstan CPU per proxied event |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for row in rows {
        println!("{row}");
    }
    server.stop()?;
    Ok(())
}

fn main() -> Result<(), BenchError> {
    let args = Args::parse();
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(run(args))
}
