//! CertificateSigningRequest (certificates.k8s.io/v1): a request for a signed certificate.

use std::sync::Arc;

use chrono::TimeDelta;
use serde_json::{json, Value};

use crate::kinds::Kind;
use crate::printers::values::{age, condition, human_duration, int_opt, items, name, str_or, text};
use crate::printers::{age_col, col, name_col, Cell, TableColumn};
use crate::registry::ResourceDef;

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

    fn table_columns(&self) -> Vec<TableColumn> {
        vec![
            name_col(),
            age_col(),
            col("SignerName", "string", D_CSR_SIGNER),
            col("Requestor", "string", D_CSR_REQUEST),
            col("RequestedDuration", "string", D_CSR_EXPIRATION),
            col("Condition", "string", D_CSR_CONDITIONS),
        ]
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        cells(object)
    }
}

const D_CSR_SIGNER: &str = "signerName indicates the requested signer, and is a qualified name.\n\nList/watch requests for CertificateSigningRequests can filter on this field using a \"spec.signerName=NAME\" fieldSelector.\n\nWell-known Kubernetes signers are:\n1. \"kubernetes.io/kube-apiserver-client\": issues client certificates that can be used to authenticate to kube-apiserver.\nRequests for this signer are never auto-approved by kube-controller-manager, can be issued by the \"csrsigning\" controller in kube-controller-manager.\n2. \"kubernetes.io/kube-apiserver-client-kubelet\": issues client certificates that kubelets use to authenticate to kube-apiserver.\nRequests for this signer can be auto-approved by the \"csrapproving\" controller in kube-controller-manager, and can be issued by the \"csrsigning\" controller in kube-controller-manager.\n3. \"kubernetes.io/kubelet-serving\" issues serving certificates that kubelets use to serve TLS endpoints, which kube-apiserver can connect to securely.\nRequests for this signer are never auto-approved by kube-controller-manager, and can be issued by the \"csrsigning\" controller in kube-controller-manager.\n\nMore details are available at https://k8s.io/docs/reference/access-authn-authz/certificate-signing-requests/#kubernetes-signers\n\nCustom signerNames can also be specified. The signer defines:\n1. Trust distribution: how trust (CA bundles) are distributed.\n2. Permitted subjects: and behavior when a disallowed subject is requested.\n3. Required, permitted, or forbidden x509 extensions in the request (including whether subjectAltNames are allowed, which types, restrictions on allowed values) and behavior when a disallowed extension is requested.\n4. Required, permitted, or forbidden key usages / extended key usages.\n5. Expiration/certificate lifetime: whether it is fixed by the signer, configurable by the admin.\n6. Whether or not requests for CA certificates are allowed.";
const D_CSR_REQUEST: &str = "request contains an x509 certificate signing request encoded in a \"CERTIFICATE REQUEST\" PEM block. When serialized as JSON or YAML, the data is additionally base64-encoded.";
const D_CSR_EXPIRATION: &str = "expirationSeconds is the requested duration of validity of the issued certificate. The certificate signer may issue a certificate with a different validity duration so a client must check the delta between the notBefore and and notAfter fields in the issued certificate to determine the actual duration.\n\nThe v1.22+ in-tree implementations of the well-known Kubernetes signers will honor this field as long as the requested duration is not greater than the maximum duration they will honor per the --cluster-signing-duration CLI flag to the Kubernetes controller manager.\n\nCertificate signers may not honor this field for various reasons:\n\n1. Old signer that is unaware of the field (such as the in-tree\nimplementations prior to v1.22)\n2. Signer whose configured maximum is shorter than the requested duration\n3. Signer whose configured minimum is longer than the requested duration\n\nThe minimum valid value for expirationSeconds is 600, i.e. 10 minutes.";
const D_CSR_CONDITIONS: &str = "conditions applied to the request. Known conditions are \"Approved\", \"Denied\", and \"Failed\".";

fn cells(csr: &Value) -> Vec<Cell> {
    let conditions = items(csr, "/status/conditions");
    let has = |t: &str| condition(conditions, t).is_some();
    // Denied outranks Approved, as upstream's extractCSRStatus.
    let mut status = if has("Denied") {
        "Denied".to_string()
    } else if has("Approved") {
        "Approved".to_string()
    } else {
        "Pending".to_string()
    };
    if has("Failed") {
        status.push_str(",Failed");
    }
    if !text(csr, "/status/certificate").is_empty() {
        status.push_str(",Issued");
    }
    let requested = int_opt(csr, "/spec/expirationSeconds")
        .and_then(TimeDelta::try_seconds)
        .map(human_duration)
        .unwrap_or_else(|| "<none>".to_string());
    vec![
        name(csr).into(),
        age(csr),
        str_or(csr, "/spec/signerName", "<none>").into(),
        text(csr, "/spec/username").into(),
        requested.into(),
        status.into(),
    ]
}
