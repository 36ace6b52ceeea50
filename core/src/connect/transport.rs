//! The clients connect subresources forward with, as kube-apiserver's:
//! kubelets over HTTPS with Capstan's kubelet client certificate, verified
//! with `--kubelet-certificate-authority` (not verified without one, as
//! upstream); services and pods over HTTP or HTTPS without a client
//! certificate and without verification (they are addressed by IP).
//! HTTP/1.1, so a request that upgrades (WebSocket, SPDY) can be spliced.

use std::sync::{Arc, OnceLock};

use hyper_util::client::legacy::connect::HttpConnector;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use super::locations::Connection;
use crate::error::{ApiError, StatusReason};
use crate::http_client::ProxyBody;
use crate::verbs::ApiCore;

/// A connect request's body, streamed.
pub type ConnectBody = ProxyBody;

type Client =
    hyper_util::client::legacy::Client<hyper_rustls::HttpsConnector<HttpConnector>, ProxyBody>;

/// How Capstan reaches kubelets (the `--kubelet-*` flags).
#[derive(Clone, Default)]
pub struct KubeletConfig {
    /// Client certificate chain and key, PEM.
    pub client_identity: Option<(String, String)>,
    /// CA bundle for kubelets' serving certificates, PEM.
    pub certificate_authority: Option<String>,
    /// Node address types, most preferred first.
    pub preferred_address_types: Vec<String>,
}

impl std::fmt::Debug for KubeletConfig {
    // The key stays out of logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KubeletConfig")
            .field("preferred_address_types", &self.preferred_address_types)
            .finish_non_exhaustive()
    }
}

/// The two clients, built on first use.
#[derive(Default)]
pub(crate) struct ConnectClients {
    kubelet: OnceLock<Result<Client, String>>,
    plain: OnceLock<Result<Client, String>>,
}

fn build(
    identity: Option<&(String, String)>,
    certificate_authority: Option<&str>,
) -> Result<Client, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?;
    let builder = match certificate_authority {
        Some(bundle) => {
            let mut roots = rustls::RootCertStore::empty();
            for cert in CertificateDer::pem_slice_iter(bundle.as_bytes()) {
                roots
                    .add(cert.map_err(|e| e.to_string())?)
                    .map_err(|e| e.to_string())?;
            }
            builder.with_root_certificates(roots)
        }
        None => builder
            .dangerous()
            .with_custom_certificate_verifier(crate::http_client::any_certificate(provider)),
    };
    let config = match identity {
        Some((cert, key)) => {
            let chain = CertificateDer::pem_slice_iter(cert.as_bytes())
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| e.to_string())?;
            let key = PrivateKeyDer::from_pem_slice(key.as_bytes()).map_err(|e| e.to_string())?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| e.to_string())?
        }
        None => builder.with_no_client_auth(),
    };
    let connector = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(config)
        .https_or_http()
        .enable_http1()
        .build();
    Ok(
        hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
            .build(connector),
    )
}

impl ApiCore {
    fn connect_client(&self, kubelet: bool) -> Result<Client, String> {
        let slot = if kubelet {
            &self.connect_clients.kubelet
        } else {
            &self.connect_clients.plain
        };
        slot.get_or_init(|| {
            if kubelet {
                build(
                    self.kubelet.client_identity.as_ref(),
                    self.kubelet.certificate_authority.as_deref(),
                )
            } else {
                build(None, None)
            }
        })
        .clone()
    }

    /// Forwards `request` where `connection` says: its method, headers
    /// (less hop-by-hop ones and the caller's credentials) and body; the
    /// request's query when the location has none. A response that
    /// switches protocols comes back as it is, for the caller to splice.
    pub async fn connect(
        &self,
        connection: &Connection,
        request: http::Request<ProxyBody>,
    ) -> Result<http::Response<hyper::body::Incoming>, ApiError> {
        let Connection::Forward {
            uri,
            kubelet,
            upgrade_required,
        } = connection
        else {
            return Err(ApiError::internal("nothing to connect to"));
        };
        let (mut parts, body) = request.into_parts();
        let upgrade = crate::http_client::is_upgrade(&parts.headers);
        if *upgrade_required && !upgrade {
            return Err(ApiError::bad_request("Upgrade request required"));
        }
        let mut target = uri.clone();
        if target.query().is_none() && !upgrade {
            if let Some(query) = parts.uri.query() {
                let path = target.path().to_string();
                let mut uri_parts = target.into_parts();
                uri_parts.path_and_query = format!("{path}?{query}").parse().ok();
                target = http::Uri::from_parts(uri_parts)
                    .map_err(|e| ApiError::bad_request(e.to_string()))?;
            }
        }
        parts.uri = target;
        parts.version = http::Version::HTTP_11;
        crate::http_client::strip_hop_by_hop(&mut parts.headers, upgrade);
        self.strip_credentials(&mut parts.headers);
        let client = self.connect_client(*kubelet).map_err(ApiError::internal)?;
        client
            .request(http::Request::from_parts(parts, body))
            .await
            .map_err(|e| {
                let text = crate::http_client::error_chain(&e);
                if *kubelet {
                    // A plain error, which upstream answers as a 500
                    // with its text and no reason.
                    ApiError::new(StatusReason::Unknown, text)
                } else {
                    ApiError::new(
                        StatusReason::ServiceUnavailable,
                        format!("error trying to reach service: {text}"),
                    )
                }
            })
    }
}
