//! Calls to the webhooks API objects name (a CustomResourceDefinition's
//! conversion webhook, admission webhooks): an HTTPS POST of a JSON
//! review to the `clientConfig`'s URL, or to a Service (its ExternalName,
//! else its ClusterIP, as `<name>.<namespace>.svc`), verified against the
//! `caBundle`, answered with a JSON review; over HTTP/2 when the webhook
//! offers it, else HTTP/1.1.

mod grpc;

use std::sync::{Arc, Weak};
use std::time::Duration;

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use serde_json::Value;

use crate::auth::UserInfo;
use crate::verbs::ApiCore;

/// Upstream's default webhook timeout.
const TIMEOUT: Duration = Duration::from_secs(30);

/// The webhook client of a server; holds the core only to resolve Services.
pub struct Webhooks {
    core: Weak<ApiCore>,
}

/// Where one call goes.
struct Target {
    /// The URL as upstream prints it in errors.
    url: String,
    /// What to connect to.
    host: String,
    port: u16,
    /// The name the certificate must carry.
    server_name: String,
    path_and_query: String,
    ca_bundle: Vec<u8>,
}

impl Target {
    fn key(&self) -> ConnectionKey {
        (
            self.host.clone(),
            self.port,
            self.server_name.clone(),
            self.ca_bundle.clone(),
        )
    }
}

impl Webhooks {
    pub fn new(core: &Arc<ApiCore>) -> Arc<Self> {
        Arc::new(Self {
            core: Arc::downgrade(core),
        })
    }

    /// POSTs `body` to the webhook `client_config` names and returns the
    /// JSON it answers; errors read as Go's HTTP client's.
    pub async fn post(&self, client_config: &Value, body: &Value) -> Result<Value, String> {
        let core = self.core.upgrade().ok_or("the server is stopping")?;
        // The conversion client's own timeout, not a request's deadline,
        // is what runs out, and Go's client says so.
        core.post_to_webhook(client_config, body, TIMEOUT)
            .await
            .map_err(|e| match e.strip_suffix(": context deadline exceeded") {
                Some(call) => format!(
                    "{call}: context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
                ),
                None => e,
            })
    }
}

impl ApiCore {
    /// POSTs `body` to the webhook `client_config` names, giving it
    /// `timeout` (sent as upstream's `timeout` query parameter, rounded up
    /// to whole seconds), and returns the JSON it answers; errors read as
    /// Go's HTTP client's.
    pub(crate) async fn post_to_webhook(
        &self,
        client_config: &Value,
        body: &Value,
        timeout: Duration,
    ) -> Result<Value, String> {
        let mut target = self.webhook_target(client_config).await?;
        let separator = if target.path_and_query.contains('?') {
            '&'
        } else {
            '?'
        };
        let seconds = timeout.as_secs() + u64::from(timeout.subsec_nanos() > 0);
        if seconds > 0 {
            let parameter = format!("{separator}timeout={seconds}s");
            target.path_and_query.push_str(&parameter);
            target.url.push_str(&parameter);
        }
        let url = target.url.clone();
        match tokio::time::timeout(timeout, call(&self.webhook_connections, target, body)).await {
            Ok(answer) => answer,
            Err(_) => Err(format!("Post {url:?}: context deadline exceeded")),
        }
    }

    async fn webhook_target(&self, config: &Value) -> Result<Target, String> {
        let ca_bundle = match config.get("caBundle").and_then(Value::as_str) {
            Some(encoded) => base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .map_err(|e| format!("invalid caBundle: {e}"))?,
            None => Vec::new(),
        };
        if let Some(url) = config.get("url").and_then(Value::as_str) {
            let uri: http::Uri = url.parse().map_err(|e| format!("parse {url:?}: {e}"))?;
            if uri.scheme_str() != Some("https") {
                return Err(format!("Post {url:?}: unsupported protocol scheme"));
            }
            let host = uri
                .host()
                .unwrap_or_default()
                .trim_matches(['[', ']'])
                .to_string();
            return Ok(Target {
                url: url.to_string(),
                port: uri.port_u16().unwrap_or(443),
                server_name: host.clone(),
                host,
                path_and_query: uri
                    .path_and_query()
                    .map_or_else(|| "/".to_string(), |p| p.to_string()),
                ca_bundle,
            });
        }
        let Some(service) = config.get("service") else {
            return Err("the webhook names neither a url nor a service".into());
        };
        let text = |key: &str| service.get(key).and_then(Value::as_str).unwrap_or_default();
        let (namespace, name) = (text("namespace"), text("name"));
        let port = service.get("port").and_then(Value::as_u64).unwrap_or(443) as u16;
        let path = match text("path") {
            "" => "/".to_string(),
            p => p.to_string(),
        };
        let server_name = format!("{name}.{namespace}.svc");
        let url = format!("https://{server_name}:{port}{path}");
        let services = self
            .resolve("", "v1", "services")
            .map_err(|e| e.to_string())?;
        let found = self
            .get(&UserInfo::system(), &services, Some(namespace), name, "")
            .await
            .map_err(|_| format!("service \"{name}\" not found"))?;
        let host = match found.pointer("/spec/type").and_then(Value::as_str) {
            Some("ExternalName") => found
                .pointer("/spec/externalName")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            _ => found
                .pointer("/spec/clusterIP")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
        };
        Ok(Target {
            url,
            host,
            port,
            server_name,
            path_and_query: path,
            ca_bundle,
        })
    }
}

/// A connection to a webhook: HTTP/2 when the server offers it in ALPN
/// (one connection carries every call, as Go's transport shares it), else
/// HTTP/1.1 (one call at a time per connection).
enum Sender {
    Http1(hyper::client::conn::http1::SendRequest<Full<Bytes>>),
    Http2(hyper::client::conn::http2::SendRequest<Full<Bytes>>),
}

impl Sender {
    fn is_closed(&self) -> bool {
        match self {
            Sender::Http1(sender) => sender.is_closed(),
            Sender::Http2(sender) => sender.is_closed(),
        }
    }

    async fn send(
        &mut self,
        request: http::Request<Full<Bytes>>,
    ) -> hyper::Result<http::Response<hyper::body::Incoming>> {
        match self {
            Sender::Http1(sender) => sender.send_request(request).await,
            Sender::Http2(sender) => sender.send_request(request).await,
        }
    }

    /// Whether the connection can take another call once this one is
    /// answered.
    async fn ready(&mut self) -> bool {
        match self {
            Sender::Http1(sender) => sender.ready().await.is_ok(),
            Sender::Http2(sender) => sender.ready().await.is_ok(),
        }
    }
}

/// Where a connection goes and what verified it: calls that agree on all
/// of it may share the connection.
type ConnectionKey = (String, u16, String, Vec<u8>);

/// Connections to webhooks, reused by later calls as Go's transport keeps
/// them alive (a TLS handshake per call would cost more than most
/// webhooks' own work): idle HTTP/1.1 connections or the target's HTTP/2
/// connection, and one HTTP/2 channel per gRPC webhook target.
#[derive(Default)]
pub(crate) struct Connections {
    idle: std::sync::Mutex<std::collections::HashMap<ConnectionKey, Vec<Sender>>>,
    grpc: std::sync::Mutex<std::collections::HashMap<ConnectionKey, tonic::transport::Channel>>,
}

/// Idle connections kept per target.
const IDLE_PER_TARGET: usize = 8;

impl Connections {
    /// An idle connection to the target; an HTTP/2 one stays shared.
    fn take(&self, key: &ConnectionKey) -> Option<Sender> {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        let senders = idle.get_mut(key)?;
        senders.retain(|sender| !sender.is_closed());
        match senders.last() {
            Some(Sender::Http2(shared)) => Some(Sender::Http2(shared.clone())),
            Some(Sender::Http1(_)) => senders.pop(),
            None => None,
        }
    }

    fn put(&self, key: ConnectionKey, sender: Sender) {
        if sender.is_closed() {
            return;
        }
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        let senders = idle.entry(key).or_default();
        match sender {
            // One HTTP/2 connection per target is kept and shared.
            Sender::Http2(_) => {
                if !senders.iter().any(|s| matches!(s, Sender::Http2(_))) {
                    senders.push(sender);
                }
            }
            Sender::Http1(_) if senders.len() < IDLE_PER_TARGET => senders.push(sender),
            Sender::Http1(_) => {}
        }
    }
}

async fn connect(target: &Target) -> Result<Sender, String> {
    let failed = |e: &dyn std::fmt::Display| format!("Post {:?}: {e}", target.url);
    let tcp = tokio::net::TcpStream::connect((target.host.as_str(), target.port))
        .await
        .map_err(|e| failed(&format!("dial tcp {}:{}: {e}", target.host, target.port)))?;
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&target.ca_bundle) {
        let cert = cert.map_err(|e| failed(&format!("invalid caBundle: {e}")))?;
        roots.add(cert).map_err(|e| failed(&e))?;
    }
    let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| failed(&e))?
    .with_root_certificates(roots)
    .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let name = ServerName::try_from(target.server_name.clone()).map_err(|e| failed(&e))?;
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .map_err(|e| failed(&format!("tls: failed to verify certificate: {e}")))?;
    let http2 = tls.get_ref().1.alpn_protocol() == Some(b"h2".as_slice());
    let io = hyper_util::rt::TokioIo::new(tls);
    if http2 {
        let (sender, connection) =
            hyper::client::conn::http2::handshake(hyper_util::rt::TokioExecutor::new(), io)
                .await
                .map_err(|e| failed(&e))?;
        tokio::spawn(async move {
            let _ = connection.await;
        });
        return Ok(Sender::Http2(sender));
    }
    let (sender, connection) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(|e| failed(&e))?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(Sender::Http1(sender))
}

async fn call(connections: &Connections, target: Target, body: &Value) -> Result<Value, String> {
    let url = target.url.clone();
    let failed = |e: &dyn std::fmt::Display| format!("Post {url:?}: {e}");
    let key = target.key();
    let payload = Bytes::from(serde_json::to_vec(body).map_err(|e| failed(&e))?);
    let authority = format!("{}:{}", target.server_name, target.port);
    let request = |sender: &Sender| {
        // HTTP/2 carries the authority in the request's URI, HTTP/1.1 in
        // its Host header.
        let builder = match sender {
            Sender::Http2(_) => {
                http::Request::post(format!("https://{authority}{}", target.path_and_query))
            }
            Sender::Http1(_) => http::Request::post(target.path_and_query.as_str())
                .header(http::header::HOST, authority.as_str()),
        };
        builder
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "application/json, */*")
            .body(Full::new(payload.clone()))
            .map_err(|e| failed(&e))
    };
    // An idle connection the webhook closed in the meantime fails before
    // any answer; the call is then made once more on a new connection.
    let pooled = match connections.take(&key) {
        Some(mut idle) => {
            let sent = request(&idle)?;
            idle.send(sent).await.ok().map(|r| (idle, r))
        }
        None => None,
    };
    let (mut sender, response) = match pooled {
        Some(answered) => answered,
        None => {
            let mut fresh = connect(&target).await?;
            let sent = request(&fresh)?;
            let response = fresh.send(sent).await.map_err(|e| failed(&e))?;
            (fresh, response)
        }
    };
    let status = response.status();
    let bytes = response
        .into_body()
        .collect()
        .await
        .map_err(|e| failed(&e))?
        .to_bytes();
    if sender.ready().await {
        connections.put(key, sender);
    }
    if !status.is_success() {
        return Err(format!(
            "the server responded with the status code {} but did not return more information",
            status.as_u16()
        ));
    }
    serde_json::from_slice(&bytes).map_err(|e| format!("unable to decode the response: {e}"))
}

/// Conversion webhooks are called from the synchronous conversion of an
/// object: the call runs to completion on this thread, which the runtime
/// replaces meanwhile (or on a thread of its own outside a multi-threaded
/// runtime).
impl crate::custom::conversion::ConversionTransport for Webhooks {
    fn send(&self, client_config: &Value, review: &Value) -> Result<Value, String> {
        let call = self.post(client_config, review);
        match tokio::runtime::Handle::try_current() {
            Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(|| handle.block_on(call))
            }
            _ => std::thread::scope(|scope| {
                scope
                    .spawn(|| {
                        tokio::runtime::Builder::new_current_thread()
                            .enable_all()
                            .build()
                            .map_err(|e| e.to_string())?
                            .block_on(call)
                    })
                    .join()
                    .unwrap_or_else(|_| Err("the webhook call panicked".into()))
            }),
        }
    }
}
