//! The certificates.k8s.io API group's kinds, in upstream's discovery order.

mod certificate_signing_request;

pub use certificate_signing_request::CertificateSigningRequest;

use crate::registry::ResourceDef;

pub fn resources() -> Vec<ResourceDef> {
    [certificate_signing_request::resources()]
        .into_iter()
        .flatten()
        .collect()
}
