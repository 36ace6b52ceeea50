//! The transport floor of the create benchmark: a server that does only
//! what any API server in front of etcd must do for a create, and none of
//! the API's work. It terminates TLS and HTTP/2 with capstan's parts
//! (rustls with ring, hyper-util's auto builder; unlike capstan it asks no
//! client certificate, a cost of the handshake, once per connection, not
//! of requests), writes each POST's body to etcd
//! through `EtcdStore::create` (the ceiling's own client code), keeps one
//! watch open on the keys it writes (as a watch cache does), and answers
//! 201 with the body.
//!
//! capstan-bench starts it like capstan (`serve --data-dir D --secure-port
//! 0 --port-file F --etcd-servers URLS`) with a copy of capstan's PKI in D,
//! so REST creates against it and against capstan differ only in the API
//! work: decoding, defaulting, validation, managedFields, encoding, the
//! watch cache.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use capstan_core::storage::etcd::{EtcdConfig, EtcdStore};
use capstan_core::storage::Storage;
use futures::StreamExt;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::TcpListener;

/// Where the relay writes: apart from every key capstan serves.
const PREFIX: &str = "/registry/capstan-relay/";

#[derive(clap::Parser)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Serve on the TLS material in `<data-dir>/pki` (capstan's file names).
    Serve {
        #[arg(long)]
        data_dir: PathBuf,
        #[arg(long, default_value_t = 0)]
        secure_port: u16,
        #[arg(long)]
        port_file: PathBuf,
        #[arg(long, value_delimiter = ',', required = true)]
        etcd_servers: Vec<String>,
    },
}

type RelayError = Box<dyn std::error::Error + Send + Sync>;

fn tls_config(data_dir: &std::path::Path) -> Result<rustls::ServerConfig, RelayError> {
    let pki = data_dir.join("pki");
    let chain =
        CertificateDer::pem_file_iter(pki.join("apiserver.crt"))?.collect::<Result<Vec<_>, _>>()?;
    let key = PrivateKeyDer::from_pem_file(pki.join("apiserver.key"))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(chain, key)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

fn respond(status: StatusCode, body: Bytes) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

async fn handle(
    store: Arc<EtcdStore>,
    next_key: Arc<AtomicU64>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let (parts, body) = req.into_parts();
    if parts.method == Method::GET && parts.uri.path() == "/readyz" {
        return Ok(respond(StatusCode::OK, Bytes::from_static(b"ok")));
    }
    if parts.method != Method::POST {
        return Ok(respond(StatusCode::NOT_FOUND, Bytes::new()));
    }
    let body = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) => return Ok(respond(StatusCode::BAD_REQUEST, e.to_string().into())),
    };
    let key = format!(
        "{PREFIX}{}-{}",
        std::process::id(),
        next_key.fetch_add(1, Ordering::Relaxed)
    );
    Ok(match store.create(&key, body.to_vec()).await {
        Ok(_) => respond(StatusCode::CREATED, body),
        Err(e) => respond(StatusCode::INTERNAL_SERVER_ERROR, e.to_string().into()),
    })
}

async fn serve(
    data_dir: PathBuf,
    secure_port: u16,
    port_file: PathBuf,
    etcd_servers: Vec<String>,
) -> Result<(), RelayError> {
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls_config(&data_dir)?));
    let store = Arc::new(
        EtcdStore::connect(&EtcdConfig {
            endpoints: etcd_servers,
            ..EtcdConfig::default()
        })
        .await?,
    );
    // Drained without decoding: the cheapest consumer a watch can have.
    let from = store.current_revision().await?;
    let mut events = store.watch_latest(PREFIX, from).await?;
    tokio::spawn(async move { while let Some(Ok(_)) = events.next().await {} });
    let listener = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], secure_port))).await?;
    std::fs::write(&port_file, listener.local_addr()?.port().to_string())?;
    let next_key = Arc::new(AtomicU64::new(0));
    loop {
        let (tcp, _) = listener.accept().await?;
        let _ = tcp.set_nodelay(true);
        let acceptor = acceptor.clone();
        let store = store.clone();
        let next_key = next_key.clone();
        tokio::spawn(async move {
            let Ok(tls) = acceptor.accept(tcp).await else {
                return;
            };
            let service =
                hyper::service::service_fn(move |req| handle(store.clone(), next_key.clone(), req));
            let _ = auto::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(tls), service)
                .await;
        });
    }
}

fn main() -> std::process::ExitCode {
    let Command::Serve {
        data_dir,
        secure_port,
        port_file,
        etcd_servers,
    } = <Cli as clap::Parser>::parse().command;
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("capstan-relay: cannot start the runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(serve(data_dir, secure_port, port_file, etcd_servers)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("capstan-relay: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
