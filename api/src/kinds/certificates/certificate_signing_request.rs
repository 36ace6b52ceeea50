//! CertificateSigningRequest (certificates.k8s.io/v1): a request for a signed certificate.

use std::sync::Arc;

use crate::kinds::Kind;
use crate::printers::Printer;
use crate::registry::ResourceDef;
use serde_json::{json, Value};

pub struct CertificateSigningRequest;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "certificates.k8s.io",
        "v1",
        "certificatesigningrequests",
        "CertificateSigningRequest",
        false,
        Arc::new(CertificateSigningRequest),
    )
    .short_names(&["csr"])
    .subresources(&["approval", "status"])
    .selectable_fields(&["spec.signerName"])]
}

impl Kind for CertificateSigningRequest {
    fn prepare_for_create_by(&self, object: &mut Value, user: &crate::auth::UserInfo) {
        let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) else {
            return;
        };
        for field in ["username", "uid", "groups", "extra"] {
            spec.remove(field);
        }
        spec.insert("username".into(), json!(user.name));
        if !user.groups.is_empty() {
            spec.insert("groups".into(), json!(user.groups));
        }
    }

    fn printer(&self) -> Printer {
        Printer::CertificateSigningRequest
    }
}
