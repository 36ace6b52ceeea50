//! The connections to extension API servers: TLS verified with the
//! APIService's caBundle for the name `<service>.<namespace>.svc` (or not
//! at all with insecureSkipTLSVerify), Capstan's front-proxy client
//! certificate, HTTP/2 when the backend offers it, pooled per backend as
//! Go's transport pools them. Each forwarded request carries its caller
//! in `X-Remote-*` headers, and none of the credentials it came with.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::header::{HeaderName, HeaderValue};
use hyper_util::client::legacy::connect::HttpConnector;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};

use super::api_service::RemoteApiService;
use super::backend::Location;
use crate::auth::UserInfo;
use crate::http_client::{error_chain, ProxyBody};
use crate::verbs::ApiCore;

type Client =
    hyper_util::client::legacy::Client<hyper_rustls::HttpsConnector<HttpConnector>, ProxyBody>;

/// Capstan's front-proxy client certificate chain and key, PEM
/// (`--proxy-client-cert-file`, `--proxy-client-key-file`).
#[derive(Clone)]
pub struct ProxyIdentity {
    pub cert_pem: String,
    pub key_pem: String,
}

impl std::fmt::Debug for ProxyIdentity {
    // The key stays out of logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProxyIdentity").finish_non_exhaustive()
    }
}

/// Why a request could not be forwarded.
#[derive(Debug, thiserror::Error)]
pub enum ForwardError {
    /// The backend could not be located or no client built for it.
    #[error("{0}")]
    Unroutable(String),
    /// The backend did not answer.
    #[error("{0}")]
    Backend(String),
}

/// Backends share a client when they agree on what verifies them, and on
/// whether it may speak HTTP/2 (a request that upgrades needs HTTP/1.1).
type ClientKey = (String, Vec<u8>, bool, bool);

/// Pooled clients, one per backend identity.
#[derive(Default)]
pub(crate) struct ProxyClients {
    clients: Mutex<HashMap<ClientKey, Client>>,
}

/// How long an idle connection to a backend is kept.
const IDLE_TIMEOUT: Duration = Duration::from_secs(90);

fn new_client(
    service: &RemoteApiService,
    identity: Option<&ProxyIdentity>,
    http1_only: bool,
) -> Result<Client, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?;
    let builder = if service.insecure_skip_tls_verify {
        builder
            .dangerous()
            .with_custom_certificate_verifier(crate::http_client::any_certificate(provider))
    } else {
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(&service.ca_bundle) {
            let cert = cert.map_err(|e| format!("invalid caBundle: {e}"))?;
            roots
                .add(cert)
                .map_err(|e| format!("invalid caBundle: {e}"))?;
        }
        builder.with_root_certificates(roots)
    };
    let config = match identity {
        Some(identity) => {
            let chain = CertificateDer::pem_slice_iter(identity.cert_pem.as_bytes())
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("the proxy client certificate: {e}"))?;
            let key = PrivateKeyDer::from_pem_slice(identity.key_pem.as_bytes())
                .map_err(|e| format!("the proxy client key: {e}"))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| format!("the proxy client certificate: {e}"))?
        }
        None => builder.with_no_client_auth(),
    };
    let server_name = ServerName::try_from(service.server_name()).map_err(|e| format!("{e}"))?;
    let builder = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(config)
        .https_only()
        .with_server_name_resolver(hyper_rustls::FixedServerNameResolver::new(server_name))
        .enable_http1();
    let connector = if http1_only {
        builder.build()
    } else {
        builder.enable_http2().build()
    };
    Ok(
        hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
            .pool_idle_timeout(IDLE_TIMEOUT)
            .build(connector),
    )
}

/// `X-Remote-Extra-` keys are header names: what a header name cannot
/// carry (and `%` itself) is percent-encoded, as upstream's
/// headerKeyEscape does.
fn escaped_extra_key(key: &str) -> String {
    let mut escaped = String::with_capacity(key.len());
    for byte in key.bytes() {
        let token = byte.is_ascii_alphanumeric() || b"!#$&'*+-.^_`|~".contains(&byte);
        if token {
            escaped.push(byte as char);
        } else {
            escaped.push_str(&format!("%{byte:02X}"));
        }
    }
    escaped
}

impl ApiCore {
    fn proxy_client(&self, service: &RemoteApiService, upgrade: bool) -> Result<Client, String> {
        let key = (
            service.server_name(),
            service.ca_bundle.clone(),
            service.insecure_skip_tls_verify,
            upgrade,
        );
        let mut clients = self
            .proxy_clients
            .clients
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(client) = clients.get(&key) {
            return Ok(client.clone());
        }
        let client = new_client(service, self.proxy_identity.as_ref(), upgrade)?;
        clients.insert(key, client.clone());
        Ok(client)
    }

    /// Sends `request` to `service`'s backend as `user`: the same method,
    /// path, query, headers (less hop-by-hop ones and the caller's
    /// credentials) and body, with the caller named in `X-Remote-*`.
    pub async fn forward(
        &self,
        service: &RemoteApiService,
        user: &UserInfo,
        request: http::Request<ProxyBody>,
    ) -> Result<http::Response<hyper::body::Incoming>, ForwardError> {
        let location = self
            .locate(service)
            .await
            .map_err(|e| ForwardError::Unroutable(e.message))?;
        let (mut parts, body) = request.into_parts();
        // An upgrade (exec-like subresources of the extension server) goes
        // over HTTP/1.1 with its Connection and Upgrade headers, and the
        // caller splices the two connections once the backend switches.
        let upgrade = crate::http_client::is_upgrade(&parts.headers);
        let client = self
            .proxy_client(service, upgrade)
            .map_err(ForwardError::Unroutable)?;
        parts.uri =
            backend_uri(&location, parts.uri.path_and_query()).map_err(ForwardError::Unroutable)?;
        parts.version = http::Version::HTTP_11;
        crate::http_client::strip_hop_by_hop(&mut parts.headers, upgrade);
        self.strip_credentials(&mut parts.headers);
        parts.headers.remove(http::header::HOST);
        let header = |value: &str| {
            HeaderValue::from_str(value).map_err(|e| ForwardError::Unroutable(e.to_string()))
        };
        parts.headers.insert("x-remote-user", header(&user.name)?);
        if !user.uid.is_empty() {
            parts.headers.insert("x-remote-uid", header(&user.uid)?);
        }
        for group in &user.groups {
            parts.headers.append("x-remote-group", header(group)?);
        }
        for (key, values) in &user.extra {
            let name = HeaderName::from_bytes(
                format!("x-remote-extra-{}", escaped_extra_key(key)).as_bytes(),
            )
            .map_err(|e| ForwardError::Unroutable(e.to_string()))?;
            for value in values {
                parts.headers.append(name.clone(), header(value)?);
            }
        }
        client
            .request(http::Request::from_parts(parts, body))
            .await
            .map_err(|e| ForwardError::Backend(error_chain(&e)))
    }

    /// A GET of `path` on `service`'s backend as Capstan makes it for
    /// its own checks (as system:kube-aggregator in system:masters, with
    /// the front-proxy certificate), its body read whole.
    pub(crate) async fn backend_get(
        &self,
        service: &RemoteApiService,
        path: &str,
        accept: &str,
        if_none_match: Option<&str>,
        timeout: Duration,
    ) -> Result<BackendAnswer, ProbeError> {
        use http_body_util::BodyExt;
        let location = self
            .locate(service)
            .await
            .map_err(|e| ProbeError::Unroutable(e.message))?;
        let client = self
            .proxy_client(service, false)
            .map_err(ProbeError::Unroutable)?;
        let uri =
            backend_uri(&location, path.parse().ok().as_ref()).map_err(ProbeError::Unroutable)?;
        let url = uri.to_string();
        let mut request = http::Request::get(uri)
            .header("accept", accept)
            .header("x-remote-user", "system:kube-aggregator")
            .header("x-remote-group", "system:masters");
        if let Some(etag) = if_none_match {
            request = request.header("if-none-match", etag);
        }
        let request = request
            .body(empty_body())
            .map_err(|e| ProbeError::Unroutable(e.to_string()))?;
        let unreachable = |error: String| ProbeError::Unreachable {
            url: url.clone(),
            error: format!("Get {url:?}: {error}"),
        };
        let deadline_exceeded = || {
            unreachable(
                "context deadline exceeded (Client.Timeout exceeded while awaiting headers)".into(),
            )
        };
        let exchange = async {
            let response = client
                .request(request)
                .await
                .map_err(|e| unreachable(go_dial_error(&e, &location)))?;
            let header = |name: &str| {
                response
                    .headers()
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string)
            };
            let (status, content_type, etag) =
                (response.status(), header("content-type"), header("etag"));
            let body = response
                .into_body()
                .collect()
                .await
                .map_err(|e| unreachable(error_chain(&e)))?
                .to_bytes();
            Ok(BackendAnswer {
                url: url.clone(),
                status,
                content_type: content_type.unwrap_or_default(),
                etag,
                body,
            })
        };
        tokio::time::timeout(timeout, exchange)
            .await
            .unwrap_or_else(|_| Err(deadline_exceeded()))
    }
}

impl ApiCore {
    /// A document the backend serves at `path` (its OpenAPI), read whole;
    /// its failure as the Status a client of Capstan gets.
    pub async fn backend_document(
        &self,
        service: &RemoteApiService,
        path: &str,
    ) -> Result<Bytes, crate::error::ApiError> {
        use crate::error::{ApiError, StatusReason};
        let answer = self
            .backend_get(service, path, "application/json", None, DOCUMENT_TIMEOUT)
            .await
            .map_err(|e| ApiError::new(StatusReason::ServiceUnavailable, e.to_string()))?;
        if !answer.status.is_success() {
            return Err(ApiError::new(
                StatusReason::for_code(answer.status.as_u16()),
                format!(
                    "the backend answered {} for {}",
                    answer.status.as_u16(),
                    answer.url
                ),
            ));
        }
        Ok(answer.body)
    }
}

/// How long a backend's document may take.
const DOCUMENT_TIMEOUT: Duration = Duration::from_secs(10);

/// A backend's answer to one of Capstan's own GETs.
pub(crate) struct BackendAnswer {
    pub url: String,
    pub status: http::StatusCode,
    pub content_type: String,
    pub etag: Option<String>,
    pub body: Bytes,
}

/// Why a GET of Capstan's own got no answer.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// No address or client for the backend.
    #[error("{0}")]
    Unroutable(String),
    /// The backend at `url` did not answer: `error` says why, as Go's client.
    #[error("{error}")]
    Unreachable { url: String, error: String },
}

/// A client error as Go's net/http words the common ones.
fn go_dial_error(error: &hyper_util::client::legacy::Error, location: &Location) -> String {
    let chain = error_chain(error);
    if error.is_connect() && chain.contains("Connection refused") {
        return format!(
            "dial tcp {}:{}: connect: connection refused",
            location.host, location.port
        );
    }
    chain
}

/// An empty request body.
pub(crate) fn empty_body() -> ProxyBody {
    use http_body_util::BodyExt;
    http_body_util::Empty::<Bytes>::new()
        .map_err(|never| match never {})
        .boxed_unsync()
}

fn backend_uri(
    location: &Location,
    path_and_query: Option<&http::uri::PathAndQuery>,
) -> Result<http::Uri, String> {
    let host = if location.host.contains(':') {
        format!("[{}]", location.host)
    } else {
        location.host.clone()
    };
    let path = path_and_query.map_or("/", |p| p.as_str());
    format!("https://{host}:{}{path}", location.port)
        .parse()
        .map_err(|e: http::uri::InvalidUri| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extra_keys_are_escaped_as_header_names() {
        assert_eq!(escaped_extra_key("scopes"), "scopes");
        assert_eq!(escaped_extra_key("example.org/team"), "example.org%2Fteam");
        assert_eq!(escaped_extra_key("100%"), "100%25");
    }

    #[test]
    fn backend_uris() {
        let v4 = Location {
            host: "10.0.0.1".into(),
            port: 443,
        };
        let path: http::uri::PathAndQuery = "/apis/x/v1?watch=1".parse().unwrap();
        assert_eq!(
            backend_uri(&v4, Some(&path)).unwrap().to_string(),
            "https://10.0.0.1:443/apis/x/v1?watch=1"
        );
        let v6 = Location {
            host: "::1".into(),
            port: 8443,
        };
        assert_eq!(
            backend_uri(&v6, None).unwrap().to_string(),
            "https://[::1]:8443/"
        );
    }
}
