//! A minimal HTTP/2-over-TLS client: one connection, requests one at a time,
//! admin client certificate. Deliberately bare (no pool, no retries) so the
//! numbers show the server, not client machinery.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http2::SendRequest;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tokio::net::TcpStream;

use crate::error::BenchError;

pub struct TlsFiles {
    ca: PathBuf,
    cert: PathBuf,
    key: PathBuf,
}

impl TlsFiles {
    /// A CA to verify the server with, and a client certificate and key
    /// (capstan-aggregator-bench's; capstan-bench has no use for it).
    #[allow(dead_code)]
    pub fn new(ca: PathBuf, cert: PathBuf, key: PathBuf) -> Self {
        Self { ca, cert, key }
    }

    /// The PKI capstan writes under `<data-dir>/pki`.
    pub fn from_data_dir(dir: &Path) -> Self {
        let pki = dir.join("pki");
        Self {
            ca: pki.join("ca.crt"),
            cert: pki.join("admin.crt"),
            key: pki.join("admin.key"),
        }
    }

    pub fn config(&self) -> Result<Arc<rustls::ClientConfig>, BenchError> {
        let pem_err = |path: &Path, e: rustls::pki_types::pem::Error| {
            BenchError::Tls(format!("{}: {e}", path.display()))
        };
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_file_iter(&self.ca).map_err(|e| pem_err(&self.ca, e))? {
            roots
                .add(cert.map_err(|e| pem_err(&self.ca, e))?)
                .map_err(|e| BenchError::Tls(e.to_string()))?;
        }
        let chain = CertificateDer::pem_file_iter(&self.cert)
            .map_err(|e| pem_err(&self.cert, e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| pem_err(&self.cert, e))?;
        let key = PrivateKeyDer::from_pem_file(&self.key).map_err(|e| pem_err(&self.key, e))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| BenchError::Tls(e.to_string()))?
            .with_root_certificates(roots)
            .with_client_auth_cert(chain, key)
            .map_err(|e| BenchError::Tls(e.to_string()))?;
        config.alpn_protocols = vec![b"h2".to_vec()];
        Ok(Arc::new(config))
    }
}

/// The body of `response` when its status is `want`; otherwise its status
/// and body as the error.
pub fn expect_status(response: (u16, Bytes), want: u16) -> Result<Bytes, BenchError> {
    match response {
        (status, body) if status == want => Ok(body),
        (status, body) => Err(BenchError::Status(
            status,
            String::from_utf8_lossy(&body).into(),
        )),
    }
}

/// One HTTP/2 connection to the server.
pub struct RestConn {
    sender: SendRequest<Full<Bytes>>,
    base: String,
}

impl RestConn {
    pub async fn connect(port: u16, tls: Arc<rustls::ClientConfig>) -> Result<Self, BenchError> {
        let tcp = TcpStream::connect(("127.0.0.1", port)).await?;
        tcp.set_nodelay(true)?;
        let name = ServerName::IpAddress(std::net::Ipv4Addr::LOCALHOST.into());
        let stream = tokio_rustls::TlsConnector::from(tls)
            .connect(name, tcp)
            .await?;
        let (sender, conn) =
            hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream))
                .await?;
        tokio::spawn(async move {
            // Ends when the sender is dropped or the server goes away; either
            // way the next request reports it.
            let _ = conn.await;
        });
        Ok(Self {
            sender,
            base: format!("https://127.0.0.1:{port}"),
        })
    }

    async fn send(
        &mut self,
        method: http::Method,
        path: &str,
        body: Option<(&str, Vec<u8>)>,
    ) -> Result<(u16, Bytes), BenchError> {
        self.send_accepting(method, path, body, "application/json")
            .await
    }

    async fn send_accepting(
        &mut self,
        method: http::Method,
        path: &str,
        body: Option<(&str, Vec<u8>)>,
        accept: &str,
    ) -> Result<(u16, Bytes), BenchError> {
        let mut req = http::Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base))
            .header(http::header::ACCEPT, accept);
        let body = match body {
            Some((content_type, body)) => {
                req = req.header(http::header::CONTENT_TYPE, content_type);
                Some(body)
            }
            None => None,
        };
        let req = req
            .body(Full::new(Bytes::from(body.unwrap_or_default())))
            .map_err(|e| BenchError::Http(e.to_string()))?;
        self.sender.ready().await?;
        let resp = self.sender.send_request(req).await?;
        let status = resp.status().as_u16();
        let body = resp.into_body().collect().await?.to_bytes();
        Ok((status, body))
    }

    pub async fn get(&mut self, path: &str) -> Result<(u16, Bytes), BenchError> {
        self.get_as(path, "application/json").await
    }

    /// A GET asking for `accept` (aggregated discovery, a Table).
    pub async fn get_as(&mut self, path: &str, accept: &str) -> Result<(u16, Bytes), BenchError> {
        self.send_accepting(http::Method::GET, path, None, accept)
            .await
    }

    pub async fn post(&mut self, path: &str, body: Vec<u8>) -> Result<(u16, Bytes), BenchError> {
        self.send(http::Method::POST, path, Some(("application/json", body)))
            .await
    }

    /// A JSON merge patch.
    pub async fn merge_patch(
        &mut self,
        path: &str,
        body: Vec<u8>,
    ) -> Result<(u16, Bytes), BenchError> {
        self.send(
            http::Method::PATCH,
            path,
            Some(("application/merge-patch+json", body)),
        )
        .await
    }

    pub async fn put(&mut self, path: &str, body: Vec<u8>) -> Result<(u16, Bytes), BenchError> {
        self.send(http::Method::PUT, path, Some(("application/json", body)))
            .await
    }

    /// A server-side apply (JSON is YAML).
    pub async fn apply(&mut self, path: &str, body: Vec<u8>) -> Result<(u16, Bytes), BenchError> {
        self.send(
            http::Method::PATCH,
            path,
            Some(("application/apply-patch+yaml", body)),
        )
        .await
    }

    pub async fn delete(&mut self, path: &str) -> Result<(u16, Bytes), BenchError> {
        self.send(http::Method::DELETE, path, None).await
    }

    /// A watch (`path` with `watch=1`) on its own HTTP/2 stream of this
    /// connection: the events, one JSON line each, as they arrive.
    pub async fn watch(
        &mut self,
        path: &str,
    ) -> Result<futures::stream::BoxStream<'static, serde_json::Value>, BenchError> {
        let req = http::Request::builder()
            .uri(format!("{}{path}", self.base))
            .header(http::header::ACCEPT, "application/json")
            .body(Full::new(Bytes::new()))
            .map_err(|e| BenchError::Http(e.to_string()))?;
        self.sender.ready().await?;
        let resp = self.sender.send_request(req).await?;
        if resp.status() != http::StatusCode::OK {
            return Err(BenchError::Status(resp.status().as_u16(), path.to_string()));
        }
        let body = resp.into_body().into_data_stream();
        let lines = futures::stream::unfold(
            (body, Vec::<u8>::new()),
            |(mut body, mut pending)| async move {
                loop {
                    if let Some(end) = pending.iter().position(|b| *b == b'\n') {
                        let line: Vec<u8> = pending.drain(..=end).collect();
                        let event = serde_json::from_slice(&line).unwrap_or_default();
                        return Some((event, (body, pending)));
                    }
                    match futures::StreamExt::next(&mut body).await {
                        Some(Ok(chunk)) => pending.extend_from_slice(&chunk),
                        _ => return None,
                    }
                }
            },
        );
        Ok(futures::StreamExt::boxed(lines))
    }
}
