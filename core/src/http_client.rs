//! What Capstan's outbound HTTP clients share (the aggregator's proxy,
//! the connect subresources): the streamed body type, the verifier for
//! backends that are not verified, and Go-like error texts.

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;
use rustls::pki_types::{CertificateDer, ServerName};

/// A forwarded request's or response's body, streamed.
pub type ProxyBody = UnsyncBoxBody<Bytes, Box<dyn std::error::Error + Send + Sync>>;

/// What verifies a backend that asked not to be verified: any certificate,
/// but still a correct handshake signature.
#[derive(Debug)]
struct AnyCertificate(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// A verifier that accepts any server certificate (still checking the
/// handshake's signature): for backends that asked not to be verified.
pub fn any_certificate(
    provider: Arc<rustls::crypto::CryptoProvider>,
) -> Arc<dyn rustls::client::danger::ServerCertVerifier> {
    Arc::new(AnyCertificate(provider))
}

/// An error with its causes, as Go's wrapped errors print.
pub fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// Whether a request asks to switch protocols (`Connection: upgrade`).
pub fn is_upgrade(headers: &http::HeaderMap) -> bool {
    headers
        .get_all(http::header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| {
            v.split(',')
                .any(|t| t.trim().eq_ignore_ascii_case("upgrade"))
        })
}

/// Hop-by-hop request headers (RFC 9110 §7.6.1), which describe the
/// connection they came on; Connection and Upgrade stay on a request that
/// upgrades, since they ask the next hop for it.
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// Removes the hop-by-hop headers of a request a proxy passes on.
pub fn strip_hop_by_hop(headers: &mut http::HeaderMap, upgrade: bool) {
    for name in HOP_BY_HOP {
        if !(upgrade && matches!(*name, "connection" | "upgrade")) {
            headers.remove(*name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hop_by_hop_headers_go_but_an_upgrade_keeps_what_asks_for_it() {
        let mut headers = http::HeaderMap::new();
        for name in ["connection", "upgrade", "keep-alive", "te", "accept"] {
            headers.insert(name, http::HeaderValue::from_static("x"));
        }
        let mut upgrading = headers.clone();
        strip_hop_by_hop(&mut headers, false);
        assert_eq!(
            headers.keys().map(|k| k.as_str()).collect::<Vec<_>>(),
            ["accept"]
        );
        strip_hop_by_hop(&mut upgrading, true);
        let mut kept: Vec<&str> = upgrading.keys().map(|k| k.as_str()).collect();
        kept.sort();
        assert_eq!(kept, ["accept", "connection", "upgrade"]);
    }
}
