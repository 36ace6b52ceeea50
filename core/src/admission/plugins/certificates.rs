//! The certificate plugins on CertificateSigningRequests: approving one
//! (CertificateApproval) needs `approve` on its signer, signing one
//! (CertificateSigning: a status write that changes the certificate or the
//! conditions) needs `sign` on it, and the kube-apiserver client signer
//! never signs for system:masters (CertificateSubjectRestriction).

use base64::Engine as _;
use serde_json::Value;

use super::super::attributes::{Attributes, Operation};
use crate::auth::{AccessRequest, ResourceAttributes, MASTERS_GROUP};
use crate::error::ApiResult;
use crate::verbs::ApiCore;

const API_SERVER_CLIENT_SIGNER: &str = "kubernetes.io/kube-apiserver-client";

fn is_csr(attributes: &Attributes<'_>, subresource: &str) -> bool {
    let def = attributes.def;
    def.group == "certificates.k8s.io"
        && def.resource == "certificatesigningrequests"
        && attributes.subresource == subresource
}

fn signer_of(csr: &Value) -> &str {
    csr.pointer("/spec/signerName")
        .and_then(Value::as_str)
        .unwrap_or("")
}

impl ApiCore {
    /// Upstream's IsAuthorizedForSignerName: `verb` on the signer, or on
    /// every signer of its domain (`example.com/*`).
    async fn may_use_signer(&self, attributes: &Attributes<'_>, verb: &str, signer: &str) -> bool {
        let domain_wide = format!("{}/*", signer.split('/').next().unwrap_or(""));
        for name in [signer, domain_wide.as_str()] {
            let request = ResourceAttributes {
                verb,
                group: "certificates.k8s.io",
                resource: "signers",
                subresource: None,
                namespace: None,
                name: Some(name),
            };
            if self
                .decide_current(attributes.user, &AccessRequest::Resource(&request))
                .await
                .allowed
            {
                return true;
            }
        }
        false
    }

    /// CertificateApproval.
    pub(super) async fn validate_certificate_approval(
        &self,
        attributes: &Attributes<'_>,
        csr: Option<&Value>,
    ) -> ApiResult<()> {
        let Some(old) = attributes.old else {
            return Ok(());
        };
        if !is_csr(attributes, "approval") || attributes.operation != Operation::Update {
            return Ok(());
        }
        let signer = signer_of(old);
        if self.may_use_signer(attributes, "approve", signer).await {
            return Ok(());
        }
        Err(super::refusal::forbidden(
            attributes,
            csr,
            &format!("user not permitted to approve requests with signerName {signer:?}"),
        ))
    }

    /// CertificateSigning.
    pub(super) async fn validate_certificate_signing(
        &self,
        attributes: &Attributes<'_>,
        csr: Option<&Value>,
    ) -> ApiResult<()> {
        let (Some(csr), Some(old)) = (csr, attributes.old) else {
            return Ok(());
        };
        if !is_csr(attributes, "status") || attributes.operation != Operation::Update {
            return Ok(());
        }
        let unchanged = |pointer: &str| csr.pointer(pointer) == old.pointer(pointer);
        if unchanged("/status/certificate") && unchanged("/status/conditions") {
            return Ok(());
        }
        let signer = signer_of(old);
        if self.may_use_signer(attributes, "sign", signer).await {
            return Ok(());
        }
        Err(super::refusal::forbidden(
            attributes,
            Some(csr),
            &format!("user not permitted to sign requests with signerName {signer:?}"),
        ))
    }
}

/// CertificateSubjectRestriction.
pub(super) fn validate_subject(attributes: &Attributes<'_>, csr: Option<&Value>) -> ApiResult<()> {
    let Some(csr) = csr else { return Ok(()) };
    if !is_csr(attributes, "")
        || attributes.operation != Operation::Create
        || signer_of(csr) != API_SERVER_CLIENT_SIGNER
    {
        return Ok(());
    }
    let refuse = |why: &str| Err(super::refusal::forbidden(attributes, Some(csr), why));
    match organizations(csr) {
        Err(why) => refuse(&format!("failed to parse CSR: {why}")),
        Ok(organizations) if organizations.iter().any(|o| o == MASTERS_GROUP) => refuse(&format!(
            "use of {API_SERVER_CLIENT_SIGNER} signer with {MASTERS_GROUP} group is not allowed"
        )),
        Ok(_) => Ok(()),
    }
}

/// The subject's organizations of the PEM request in `spec.request`.
fn organizations(csr: &Value) -> Result<Vec<String>, String> {
    with_subject(csr, |subject| {
        subject
            .iter_organization()
            .filter_map(|o| o.as_str().ok().map(str::to_string))
            .collect()
    })
}

/// The subject's common name of the PEM request in `spec.request`.
pub(super) fn subject_common_name(csr: &Value) -> Result<String, String> {
    with_subject(csr, |subject| {
        subject
            .iter_common_name()
            .filter_map(|o| o.as_str().ok().map(str::to_string))
            .next()
            .unwrap_or_default()
    })
}

/// `read` of the subject of the PEM request in `spec.request`.
fn with_subject<T>(
    csr: &Value,
    read: impl FnOnce(&x509_parser::x509::X509Name<'_>) -> T,
) -> Result<T, String> {
    use x509_parser::prelude::FromDer as _;
    let encoded = csr
        .pointer("/spec/request")
        .and_then(Value::as_str)
        .unwrap_or("");
    let pem = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map_err(|e| e.to_string())?;
    let (_, block) = x509_parser::pem::parse_x509_pem(&pem)
        .map_err(|_| "PEM block type must be CERTIFICATE REQUEST".to_string())?;
    if block.label != "CERTIFICATE REQUEST" {
        return Err("PEM block type must be CERTIFICATE REQUEST".into());
    }
    let (_, request) =
        x509_parser::certification_request::X509CertificationRequest::from_der(&block.contents)
            .map_err(|e| e.to_string())?;
    Ok(read(&request.certification_request_info.subject))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::attributes_for;

    fn csr_for(organization: &str, signer: &str) -> Value {
        let key = rcgen::KeyPair::generate().expect("a key");
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "someone");
        params
            .distinguished_name
            .push(rcgen::DnType::OrganizationName, organization);
        let request = params.serialize_request(&key).expect("a request");
        let pem = request.pem().expect("PEM");
        serde_json::json!({"metadata": {"name": "csr"}, "spec": {
            "signerName": signer,
            "request": base64::engine::general_purpose::STANDARD.encode(pem),
        }})
    }

    fn subject_check(csr: &Value) -> Result<(), String> {
        attributes_for(
            "certificates.k8s.io",
            "certificatesigningrequests",
            Operation::Create,
            |a| validate_subject(a, Some(csr)),
        )
        .map_err(|e| e.to_string())
    }

    #[test]
    fn masters_cannot_get_api_server_client_certificates() {
        assert_eq!(
            subject_check(&csr_for(MASTERS_GROUP, API_SERVER_CLIENT_SIGNER)),
            Err(r#"certificatesigningrequests.certificates.k8s.io "x" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed"#.into())
        );
        assert_eq!(
            subject_check(&csr_for("devs", API_SERVER_CLIENT_SIGNER)),
            Ok(())
        );
        assert_eq!(
            subject_check(&csr_for(MASTERS_GROUP, "example.com/signer")),
            Ok(())
        );
    }
}
