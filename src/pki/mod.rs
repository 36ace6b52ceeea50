//! First-start PKI: the cluster CA, the serving certificate, the admin client
//! certificate and `admin.kubeconfig`, plus the rustls server configuration
//! and the mapping from a verified client certificate to a user.
//!
//! The layout mirrors kubeadm's `/etc/kubernetes/pki` so operators find the
//! files where they expect them:
//!
//! ```text
//! <data-dir>/pki/ca.crt, ca.key                cluster CA ("capstan-ca", 10 years)
//! <data-dir>/pki/apiserver.crt, apiserver.key  serving certificate (1 year)
//! <data-dir>/pki/admin.crt, admin.key          CN=admin, O=system:masters (1 year)
//! <data-dir>/pki/sa.key                        signs service account tokens (ECDSA P-256)
//! <data-dir>/pki/apiserver-kubelet-client.crt, .key  CN=kube-apiserver-kubelet-client,
//!                                              O=kubeadm:cluster-admins (1 year): what
//!                                              Capstan presents to kubelets
//! <data-dir>/pki/front-proxy-ca.crt, .key      front-proxy CA ("front-proxy-ca", 10 years)
//! <data-dir>/pki/front-proxy-client.crt, .key  CN=front-proxy-client (1 year): what
//!                                              Capstan proxies to extension API servers with
//! <data-dir>/admin.kubeconfig                  embeds the three certificates above
//! ```
//!
//! Existing files always win over generation, so an operator can drop in
//! certificates from their own CA. Only what is missing or unusable is issued:
//! a serving certificate that lacks a requested SAN, or a leaf that expires
//! within [`RENEW_BEFORE`], is reissued from the CA on disk.

use std::collections::BTreeSet;
use std::fmt;
use std::fs;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, DnValue,
    ExtendedKeyUsagePurpose, IsCa, Issuer, KeyIdMethod, KeyPair, KeyUsagePurpose, SanType,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::server::WebPkiClientVerifier;
use rustls::RootCertStore;
use x509_parser::certificate::X509Certificate;
use x509_parser::der_parser::asn1_rs::Tag;
use x509_parser::extensions::{GeneralName, ParsedExtension};
use x509_parser::time::ASN1Time;
use x509_parser::x509::X509Name;

mod files;
use files::{
    create_private_dir, exists, read_string, warn_if_readable_by_others, write_file_atomic,
};

/// Common name of the generated cluster CA.
pub const CA_COMMON_NAME: &str = "capstan-ca";
/// Common name of the generated serving certificate (kubeadm's choice).
pub const SERVING_COMMON_NAME: &str = "kube-apiserver";
/// User and group of the generated admin client certificate.
pub const ADMIN_USER: &str = "admin";
pub const ADMIN_GROUP: &str = "system:masters";
/// The subject of the client certificate Capstan presents to kubelets
/// (kubeadm's).
pub const KUBELET_CLIENT_COMMON_NAME: &str = "kube-apiserver-kubelet-client";
pub const KUBELET_CLIENT_GROUP: &str = "kubeadm:cluster-admins";
/// Common names of the front-proxy CA and of the client certificate
/// Capstan proxies to extension API servers with (kubeadm's names); the
/// latter is the one name request-header authentication allows by default.
pub const FRONT_PROXY_CA_COMMON_NAME: &str = "front-proxy-ca";
pub const FRONT_PROXY_CLIENT_COMMON_NAME: &str = "front-proxy-client";
/// Name of the cluster, user and context in `admin.kubeconfig`.
pub const KUBECONFIG_CLUSTER: &str = "capstan";

const DAY: Duration = Duration::from_secs(24 * 60 * 60);
const CA_VALIDITY: Duration = Duration::from_secs(10 * 365 * 24 * 60 * 60);
const LEAF_VALIDITY: Duration = Duration::from_secs(365 * 24 * 60 * 60);
/// Leaves are backdated so a client whose clock runs a little behind ours
/// does not reject a certificate issued a moment ago as "not yet valid".
const BACKDATE: Duration = Duration::from_secs(60 * 60);
/// A leaf this close to expiry is reissued at start-up (k3s does the same,
/// with the same window): without it, a long-running single-binary install
/// would fail on the day the first certificate expires.
pub const RENEW_BEFORE: Duration = Duration::from_secs(90 * 24 * 60 * 60);

/// DNS names every serving certificate carries; they are how in-cluster
/// clients address the API server (kubeadm's list).
const DEFAULT_DNS_SANS: &[&str] = &[
    "localhost",
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
];

/// What the PKI needs to know about how the server will be reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PkiOptions {
    /// The address the secure port binds; a specific address becomes a SAN
    /// and the kubeconfig's server.
    pub bind_address: IpAddr,
    pub secure_port: u16,
    /// Additional SANs (`--tls-san`): IP literals become IP SANs, anything
    /// else a DNS SAN.
    pub extra_sans: Vec<String>,
}

impl Default for PkiOptions {
    fn default() -> Self {
        Self {
            bind_address: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            secure_port: 6443,
            extra_sans: Vec::new(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PkiError {
    #[error("{action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{}: {reason}", path.display())]
    Parse { path: PathBuf, reason: String },
    #[error("generating the {what}: {source}")]
    Generate {
        what: &'static str,
        #[source]
        source: rcgen::Error,
    },
    #[error(
        "{} must be (re)issued but the CA private key {} does not exist",
        leaf.display(),
        ca_key.display()
    )]
    MissingCaKey { leaf: PathBuf, ca_key: PathBuf },
    #[error(
        "{} exists without {}; refusing to replace a key whose certificate is missing",
        key.display(),
        cert.display()
    )]
    OrphanCaKey { key: PathBuf, cert: PathBuf },
    #[error("invalid subject alternative name {0:?}")]
    InvalidSan(String),
    #[error("serializing the kubeconfig: {0}")]
    Kubeconfig(#[from] serde_yaml::Error),
    #[error("building the TLS configuration: {0}")]
    Tls(#[from] rustls::Error),
    #[error("building the client certificate verifier: {0}")]
    ClientVerifier(#[from] rustls::server::VerifierBuilderError),
}

/// Where the PKI files live under a data directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PkiPaths {
    pub dir: PathBuf,
    pub ca_cert: PathBuf,
    pub ca_key: PathBuf,
    pub serving_cert: PathBuf,
    pub serving_key: PathBuf,
    pub admin_cert: PathBuf,
    pub admin_key: PathBuf,
    /// The service account token signing key (kubeadm's sa.key).
    pub service_account_key: PathBuf,
    pub kubelet_client_cert: PathBuf,
    pub kubelet_client_key: PathBuf,
    pub front_proxy_ca_cert: PathBuf,
    pub front_proxy_ca_key: PathBuf,
    pub front_proxy_client_cert: PathBuf,
    pub front_proxy_client_key: PathBuf,
    pub kubeconfig: PathBuf,
}

impl PkiPaths {
    pub fn new(data_dir: &Path) -> Self {
        let dir = data_dir.join("pki");
        Self {
            ca_cert: dir.join("ca.crt"),
            ca_key: dir.join("ca.key"),
            serving_cert: dir.join("apiserver.crt"),
            serving_key: dir.join("apiserver.key"),
            admin_cert: dir.join("admin.crt"),
            admin_key: dir.join("admin.key"),
            service_account_key: dir.join("sa.key"),
            kubelet_client_cert: dir.join("apiserver-kubelet-client.crt"),
            kubelet_client_key: dir.join("apiserver-kubelet-client.key"),
            front_proxy_ca_cert: dir.join("front-proxy-ca.crt"),
            front_proxy_ca_key: dir.join("front-proxy-ca.key"),
            front_proxy_client_cert: dir.join("front-proxy-client.crt"),
            front_proxy_client_key: dir.join("front-proxy-client.key"),
            kubeconfig: data_dir.join("admin.kubeconfig"),
            dir,
        }
    }
}

/// One certificate authority's files, and what to call it when it is new.
struct CaFiles<'a> {
    what: &'static str,
    common_name: &'static str,
    cert: &'a Path,
    key: &'a Path,
}

impl PkiPaths {
    fn cluster_ca(&self) -> CaFiles<'_> {
        CaFiles {
            what: "cluster CA",
            common_name: CA_COMMON_NAME,
            cert: &self.ca_cert,
            key: &self.ca_key,
        }
    }

    fn front_proxy_ca(&self) -> CaFiles<'_> {
        CaFiles {
            what: "front-proxy CA",
            common_name: FRONT_PROXY_CA_COMMON_NAME,
            cert: &self.front_proxy_ca_cert,
            key: &self.front_proxy_ca_key,
        }
    }
}

/// The PKI material in effect for this run, as PEM.
#[derive(Clone)]
pub struct Pki {
    paths: PkiPaths,
    server_url: String,
    ca_cert_pem: String,
    serving_cert_pem: String,
    serving_key_pem: String,
    admin_cert_pem: String,
    admin_key_pem: String,
    front_proxy_ca_pem: String,
}

impl fmt::Debug for Pki {
    // Private keys stay out of logs and panic messages.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pki")
            .field("paths", &self.paths)
            .field("server_url", &self.server_url)
            .finish_non_exhaustive()
    }
}

impl Pki {
    pub fn paths(&self) -> &PkiPaths {
        &self.paths
    }

    /// The URL written into `admin.kubeconfig`.
    /// The cluster CA certificate, PEM: what verifies this server.
    pub fn ca_cert_pem(&self) -> &str {
        &self.ca_cert_pem
    }

    pub fn server_url(&self) -> &str {
        &self.server_url
    }

    /// The generated front-proxy CA, PEM: what request-header
    /// authentication trusts unless `--requestheader-client-ca-file` says
    /// otherwise.
    pub fn front_proxy_ca_pem(&self) -> &str {
        &self.front_proxy_ca_pem
    }

    /// Every certificate in `ca.crt` as a trust store, for in-process
    /// clients that talk to this server.
    #[cfg(test)]
    pub fn ca_root_store(&self) -> Result<RootCertStore, PkiError> {
        let certs = parse_cert_chain(&self.paths.ca_cert, self.ca_cert_pem.as_bytes())?;
        let mut roots = RootCertStore::empty();
        for cert in certs {
            roots.add(cert)?;
        }
        Ok(roots)
    }
}

/// The user a verified client certificate authenticates as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientIdentity {
    pub user: String,
    pub groups: Vec<String>,
}

/// Loads the PKI under `<data_dir>/pki`, issuing whatever is missing or
/// unusable, and (re)writes `<data_dir>/admin.kubeconfig`.
pub fn ensure_pki(data_dir: &Path, opts: &PkiOptions) -> Result<Pki, PkiError> {
    let paths = PkiPaths::new(data_dir);
    create_private_dir(&paths.dir)?;

    let sans = required_sans(opts, machine_hostname().as_deref())?;
    let now = ASN1Time::now();

    let cluster_ca = paths.cluster_ca();
    let (ca, fresh_ca) = load_or_create_ca(&cluster_ca, now)?;
    let mut issuer: Option<LoadedIssuer> = None;

    let serving = LeafSpec {
        what: "serving certificate",
        cert: &paths.serving_cert,
        key: &paths.serving_key,
        common_name: SERVING_COMMON_NAME,
        organization: None,
        sans: &sans,
    };
    ensure_leaf(&serving, &cluster_ca, &ca, fresh_ca, &mut issuer, now)?;

    let admin = LeafSpec {
        what: "admin client certificate",
        cert: &paths.admin_cert,
        key: &paths.admin_key,
        common_name: ADMIN_USER,
        organization: Some(ADMIN_GROUP),
        sans: &[],
    };
    ensure_leaf(&admin, &cluster_ca, &ca, fresh_ca, &mut issuer, now)?;

    let kubelet_client = LeafSpec {
        what: "kubelet client certificate",
        cert: &paths.kubelet_client_cert,
        key: &paths.kubelet_client_key,
        common_name: KUBELET_CLIENT_COMMON_NAME,
        organization: Some(KUBELET_CLIENT_GROUP),
        sans: &[],
    };
    ensure_leaf(
        &kubelet_client,
        &cluster_ca,
        &ca,
        fresh_ca,
        &mut issuer,
        now,
    )?;

    // A CA of its own, as kubeadm's: a certificate that may assert any
    // user in headers must not be one the cluster CA hands out.
    let front_proxy_files = paths.front_proxy_ca();
    let (front_proxy_ca, fresh_front_proxy_ca) = load_or_create_ca(&front_proxy_files, now)?;
    let front_proxy_client = LeafSpec {
        what: "front-proxy client certificate",
        cert: &paths.front_proxy_client_cert,
        key: &paths.front_proxy_client_key,
        common_name: FRONT_PROXY_CLIENT_COMMON_NAME,
        organization: None,
        sans: &[],
    };
    ensure_leaf(
        &front_proxy_client,
        &front_proxy_files,
        &front_proxy_ca,
        fresh_front_proxy_ca,
        &mut None,
        now,
    )?;

    if !exists(&paths.service_account_key)? {
        let key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).map_err(|source| {
            PkiError::Generate {
                what: "service account signing key",
                source,
            }
        })?;
        write_file_atomic(
            &paths.service_account_key,
            key.serialize_pem().as_bytes(),
            0o600,
        )?;
    }

    let pki = Pki {
        server_url: server_url(opts.bind_address, opts.secure_port),
        ca_cert_pem: ca.pem,
        serving_cert_pem: read_string(&paths.serving_cert)?,
        serving_key_pem: read_string(&paths.serving_key)?,
        admin_cert_pem: read_string(&paths.admin_cert)?,
        admin_key_pem: read_string(&paths.admin_key)?,
        front_proxy_ca_pem: front_proxy_ca.pem,
        paths,
    };
    for key in [
        &pki.paths.ca_key,
        &pki.paths.serving_key,
        &pki.paths.admin_key,
        &pki.paths.service_account_key,
        &pki.paths.kubelet_client_key,
        &pki.paths.front_proxy_ca_key,
        &pki.paths.front_proxy_client_key,
    ] {
        warn_if_readable_by_others(key);
    }

    write_file_atomic(
        &pki.paths.kubeconfig,
        render_kubeconfig(&pki)?.as_bytes(),
        0o600,
    )?;
    tracing::info!(
        kubeconfig = %pki.paths.kubeconfig.display(),
        server = %pki.server_url,
        "wrote admin kubeconfig"
    );
    Ok(pki)
}

/// Service account token keys as PEM: the signing key (PKCS#8 ECDSA P-256)
/// and its public key; Err names the file.
pub fn service_account_signing_key(path: &Path) -> Result<(String, String), PkiError> {
    let pem = read_string(path)?;
    let key = KeyPair::from_pem(&pem).map_err(|e| parse_error(path, e))?;
    if key.algorithm() != &rcgen::PKCS_ECDSA_P256_SHA256 {
        return Err(parse_error(
            path,
            "service account signing keys must be ECDSA P-256 (PKCS#8)",
        ));
    }
    let public = key.public_key_pem();
    Ok((pem, public))
}

/// Public keys (PEM, SPKI) whose tokens are accepted as well.
pub fn service_account_public_key(path: &Path) -> Result<String, PkiError> {
    read_string(path)
}

/// How client certificates are trusted: the cluster CA's (kube-apiserver's
/// `--client-ca-file`) authenticate their own subject; the request-header
/// CA's, with an allowed common name, are front proxies that name the user
/// in headers (`--requestheader-client-ca-file`, `--requestheader-allowed-names`).
pub struct ClientTrust {
    cluster: Arc<dyn rustls::server::danger::ClientCertVerifier>,
    cluster_roots: Vec<CertificateDer<'static>>,
    request_header: Arc<dyn rustls::server::danger::ClientCertVerifier>,
    request_header_roots: Vec<CertificateDer<'static>>,
    request_header_ca_pem: String,
    allowed_names: Vec<String>,
}

/// What a verified client certificate makes of its connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerIdentity {
    /// The certificate's user, when the cluster CA issued it.
    pub user: Option<ClientIdentity>,
    /// Whether it is an allowed front proxy's.
    pub front_proxy: bool,
}

impl ClientTrust {
    /// Trust from the PKI's cluster CA and `request_header_ca` (the
    /// generated front-proxy CA when None).
    pub fn new(
        pki: &Pki,
        request_header_ca: Option<&Path>,
        allowed_names: &[String],
    ) -> Result<Self, PkiError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let cluster_roots = parse_cert_chain(&pki.paths.ca_cert, pki.ca_cert_pem.as_bytes())?;
        let (request_header_path, request_header_ca_pem) = match request_header_ca {
            Some(path) => (path.to_path_buf(), read_string(path)?),
            None => (
                pki.paths.front_proxy_ca_cert.clone(),
                pki.front_proxy_ca_pem().to_string(),
            ),
        };
        let request_header_roots =
            parse_cert_chain(&request_header_path, request_header_ca_pem.as_bytes())?;
        let verifier = |roots: &[CertificateDer<'static>]| -> Result<_, PkiError> {
            let mut store = RootCertStore::empty();
            for root in roots {
                store.add(root.clone())?;
            }
            Ok(
                WebPkiClientVerifier::builder_with_provider(Arc::new(store), provider.clone())
                    .build()?,
            )
        };
        Ok(Self {
            cluster: verifier(&cluster_roots)?,
            request_header: verifier(&request_header_roots)?,
            cluster_roots,
            request_header_roots,
            request_header_ca_pem,
            allowed_names: allowed_names
                .iter()
                .filter(|name| !name.is_empty())
                .cloned()
                .collect(),
        })
    }

    /// The request-header CA bundle, PEM, as the
    /// extension-apiserver-authentication ConfigMap publishes it.
    pub fn request_header_ca_pem(&self) -> &str {
        &self.request_header_ca_pem
    }

    /// The allowed front-proxy names (empty: any).
    pub fn allowed_names(&self) -> &[String] {
        &self.allowed_names
    }

    /// Sorts a chain the TLS handshake accepted (against either CA) into
    /// the identity it carries, as upstream's x509 and request-header
    /// authenticators would each verify it on their own.
    pub fn classify(&self, chain: &[CertificateDer<'_>]) -> PeerIdentity {
        let Some((leaf, intermediates)) = chain.split_first() else {
            return PeerIdentity {
                user: None,
                front_proxy: false,
            };
        };
        let now = UnixTime::now();
        let user = self
            .cluster
            .verify_client_cert(leaf, intermediates, now)
            .ok()
            .and_then(|_| identity_from_peer_certificates(chain));
        let front_proxy = self
            .request_header
            .verify_client_cert(leaf, intermediates, now)
            .is_ok()
            && (self.allowed_names.is_empty()
                || common_name_of(leaf).is_some_and(|cn| self.allowed_names.contains(&cn)));
        PeerIdentity { user, front_proxy }
    }
}

/// The rustls server configuration: the serving certificate, HTTP/2 and
/// HTTP/1.1 by ALPN, and client certificates that are optional but, when
/// presented, must chain to the cluster CA or the request-header CA
/// (`ClientTrust::classify` then tells which).
pub fn server_tls_config(pki: &Pki, trust: &ClientTrust) -> Result<rustls::ServerConfig, PkiError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let chain = parse_cert_chain(&pki.paths.serving_cert, pki.serving_cert_pem.as_bytes())?;
    let key = PrivateKeyDer::from_pem_slice(pki.serving_key_pem.as_bytes()).map_err(|e| {
        PkiError::Parse {
            path: pki.paths.serving_key.clone(),
            reason: e.to_string(),
        }
    })?;
    let mut roots = RootCertStore::empty();
    for root in trust
        .cluster_roots
        .iter()
        .chain(&trust.request_header_roots)
    {
        roots.add(root.clone())?;
    }
    let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .allow_unauthenticated()
        .build()?;
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_client_cert_verifier(verifier)
        .with_single_cert(chain, key)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

/// A leaf's subject common name (the last, as Go's pkix.Name keeps).
fn common_name_of(leaf: &CertificateDer<'_>) -> Option<String> {
    let (_, cert) = x509_parser::parse_x509_certificate(leaf.as_ref()).ok()?;
    let name = cert
        .subject()
        .iter_common_name()
        .filter_map(|attr| attr.as_str().ok())
        .last()?
        .to_owned();
    Some(name)
}

/// Maps a verified certificate chain to a user the way kube-apiserver's
/// x509 authenticator does: the leaf's subject CN is the user name, its O
/// values are the groups. No CN means no identity.
pub fn identity_from_peer_certificates(certs: &[CertificateDer<'_>]) -> Option<ClientIdentity> {
    let leaf = certs.first()?;
    let user = common_name_of(leaf).filter(|name| !name.is_empty())?;
    let (_, cert) = x509_parser::parse_x509_certificate(leaf.as_ref()).ok()?;
    let groups = cert
        .subject()
        .iter_organization()
        .filter_map(|attr| attr.as_str().ok())
        .map(str::to_owned)
        .collect();
    Some(ClientIdentity { user, groups })
}

/// The server URL a local client should use: a wildcard bind is reached over
/// loopback, a specific address as itself.
pub fn server_url(bind_address: IpAddr, port: u16) -> String {
    let host = match bind_address {
        IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    format!("https://{}", SocketAddr::new(host, port))
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum San {
    Dns(String),
    Ip(IpAddr),
}

impl San {
    fn to_rcgen(&self) -> Result<SanType, PkiError> {
        match self {
            San::Ip(ip) => Ok(SanType::IpAddress(*ip)),
            San::Dns(name) => name
                .as_str()
                .try_into()
                .map(SanType::DnsName)
                .map_err(|_| PkiError::InvalidSan(name.clone())),
        }
    }
}

fn required_sans(opts: &PkiOptions, hostname: Option<&str>) -> Result<Vec<San>, PkiError> {
    let mut sans: BTreeSet<San> = DEFAULT_DNS_SANS
        .iter()
        .map(|name| San::Dns((*name).to_owned()))
        .collect();
    if let Some(host) = hostname.map(str::to_ascii_lowercase) {
        // A hostname that is not a DNS name (e.g. with an underscore) would
        // make the whole certificate unusable for strict clients.
        if is_dns_name(&host) {
            sans.insert(San::Dns(host));
        }
    }
    sans.insert(San::Ip(IpAddr::V4(Ipv4Addr::LOCALHOST)));
    sans.insert(San::Ip(IpAddr::V6(Ipv6Addr::LOCALHOST)));
    if !opts.bind_address.is_unspecified() {
        sans.insert(San::Ip(opts.bind_address));
    }
    for raw in &opts.extra_sans {
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            continue;
        }
        let unbracketed = trimmed
            .strip_prefix('[')
            .and_then(|s| s.strip_suffix(']'))
            .unwrap_or(trimmed);
        if let Ok(ip) = unbracketed.parse::<IpAddr>() {
            sans.insert(San::Ip(ip));
            continue;
        }
        let name = trimmed.to_ascii_lowercase();
        let wildcard_base = name.strip_prefix("*.").unwrap_or(&name);
        if !is_dns_name(wildcard_base) {
            return Err(PkiError::InvalidSan(raw.clone()));
        }
        sans.insert(San::Dns(name));
    }
    Ok(sans.into_iter().collect())
}

fn is_dns_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

fn machine_hostname() -> Option<String> {
    let from_file = |path: &str| {
        fs::read_to_string(path)
            .ok()
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
    };
    from_file("/proc/sys/kernel/hostname")
        .or_else(|| from_file("/etc/hostname"))
        .or_else(|| {
            std::env::var("HOSTNAME")
                .ok()
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
        })
}

struct LoadedCa {
    pem: String,
    der: CertificateDer<'static>,
    roots: Arc<RootCertStore>,
    // ASN1Time rather than time's OffsetDateTime: `time` is not a direct
    // dependency, only shared by rcgen and x509-parser.
    not_after: ASN1Time,
}

struct LoadedIssuer {
    issuer: Issuer<'static, KeyPair>,
    /// Without a subject key identifier on the CA, an authority key
    /// identifier on the leaf could only mislead path builders.
    has_ski: bool,
}

fn load_or_create_ca(files: &CaFiles<'_>, now: ASN1Time) -> Result<(LoadedCa, bool), PkiError> {
    let cert_exists = exists(files.cert)?;
    let key_exists = exists(files.key)?;
    if !cert_exists && key_exists {
        return Err(PkiError::OrphanCaKey {
            key: files.key.to_path_buf(),
            cert: files.cert.to_path_buf(),
        });
    }
    let fresh = !cert_exists;
    if fresh {
        let key = KeyPair::generate().map_err(|source| PkiError::Generate {
            what: files.what,
            source,
        })?;
        let mut params = CertificateParams::default();
        params.distinguished_name = DistinguishedName::new();
        params
            .distinguished_name
            .push(DnType::CommonName, files.common_name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        params.not_before = now.to_datetime() - BACKDATE;
        params.not_after = now.to_datetime() + CA_VALIDITY;
        let cert = params
            .self_signed(&key)
            .map_err(|source| PkiError::Generate {
                what: files.what,
                source,
            })?;
        // Key first: a crash in between leaves an orphan key, which the next
        // start reports instead of silently minting a second CA.
        write_file_atomic(files.key, key.serialize_pem().as_bytes(), 0o600)?;
        write_file_atomic(files.cert, cert.pem().as_bytes(), 0o644)?;
        tracing::info!(path = %files.cert.display(), "generated the {}", files.what);
    }

    let pem = read_string(files.cert)?;
    let certs = parse_cert_chain(files.cert, pem.as_bytes())?;
    let mut roots = RootCertStore::empty();
    for cert in &certs {
        roots
            .add(cert.clone())
            .map_err(|e| parse_error(files.cert, e))?;
    }
    // With a bundle, the first certificate is taken as the one ca.key signs
    // for.
    let der = certs[0].clone();
    let (_, parsed) = x509_parser::parse_x509_certificate(der.as_ref())
        .map_err(|e| parse_error(files.cert, e))?;
    let not_after = parsed.validity().not_after;
    let renew_after = now
        .timestamp()
        .saturating_add_unsigned(RENEW_BEFORE.as_secs());
    if not_after.timestamp() <= renew_after {
        tracing::warn!(
            path = %files.cert.display(),
            not_after = %not_after,
            "a CA expires soon; leaves cannot be renewed past it"
        );
    }
    Ok((
        LoadedCa {
            pem,
            der,
            roots: Arc::new(roots),
            not_after,
        },
        fresh,
    ))
}

fn load_issuer(files: &CaFiles<'_>, ca: &LoadedCa, leaf: &Path) -> Result<LoadedIssuer, PkiError> {
    if !exists(files.key)? {
        return Err(PkiError::MissingCaKey {
            leaf: leaf.to_path_buf(),
            ca_key: files.key.to_path_buf(),
        });
    }
    let key_pem = read_string(files.key)?;
    let key = KeyPair::from_pem(&key_pem).map_err(|e| parse_error(files.key, e))?;
    let (_, cert) = x509_parser::parse_x509_certificate(ca.der.as_ref())
        .map_err(|e| parse_error(files.cert, e))?;

    // The issuer name written into a leaf must be byte-identical to the CA's
    // subject (path building compares encoded names), so the CA's subject is
    // rebuilt attribute by attribute with the original string types.
    let mut params = CertificateParams::default();
    params.distinguished_name =
        distinguished_name_from(cert.subject()).map_err(|reason| PkiError::Parse {
            path: files.cert.to_path_buf(),
            reason,
        })?;
    let ski = subject_key_identifier(&cert);
    let has_ski = ski.is_some();
    params.key_identifier_method = match ski {
        Some(id) => KeyIdMethod::PreSpecified(id),
        None => KeyIdMethod::Sha256,
    };
    Ok(LoadedIssuer {
        issuer: Issuer::new(params, key),
        has_ski,
    })
}

fn subject_key_identifier(cert: &X509Certificate<'_>) -> Option<Vec<u8>> {
    cert.iter_extensions()
        .find_map(|ext| match ext.parsed_extension() {
            ParsedExtension::SubjectKeyIdentifier(id) => Some(id.0.to_vec()),
            _ => None,
        })
}

fn distinguished_name_from(name: &X509Name<'_>) -> Result<DistinguishedName, String> {
    let mut dn = DistinguishedName::new();
    for rdn in name.iter() {
        let mut attrs = rdn.iter();
        let (Some(attr), None) = (attrs.next(), attrs.next()) else {
            return Err("multi-valued RDNs in the CA subject are not supported".to_owned());
        };
        let oid: Vec<u64> = attr
            .attr_type()
            .iter()
            .ok_or_else(|| "CA subject has an attribute OID out of range".to_owned())?
            .collect();
        let data = attr.attr_value().data;
        let utf8 = || {
            std::str::from_utf8(data)
                .map(str::to_owned)
                .map_err(|_| "CA subject has a string that is not valid UTF-8".to_owned())
        };
        let bad = |e: rcgen::Error| format!("CA subject: {e}");
        let value = match attr.attr_value().header.tag() {
            Tag::Utf8String => DnValue::Utf8String(utf8()?),
            Tag::PrintableString => DnValue::PrintableString(utf8()?.try_into().map_err(bad)?),
            Tag::Ia5String => DnValue::Ia5String(utf8()?.try_into().map_err(bad)?),
            Tag::T61String => DnValue::TeletexString(utf8()?.try_into().map_err(bad)?),
            Tag::BmpString => DnValue::BmpString(
                rcgen::string::BmpString::from_utf16be(data.to_vec()).map_err(bad)?,
            ),
            Tag::UniversalString => DnValue::UniversalString(
                rcgen::string::UniversalString::from_utf32be(data.to_vec()).map_err(bad)?,
            ),
            other => return Err(format!("CA subject uses unsupported string type {other}")),
        };
        let ty = DnType::from_oid(&oid);
        // rcgen keeps one value per attribute type; collapsing a repeated
        // one would silently change the name.
        if dn.get(&ty).is_some() {
            return Err("repeated attribute types in the CA subject are not supported".to_owned());
        }
        dn.push(ty, value);
    }
    Ok(dn)
}

struct LeafSpec<'a> {
    what: &'static str,
    cert: &'a Path,
    key: &'a Path,
    common_name: &'static str,
    organization: Option<&'static str>,
    /// Empty for client certificates.
    sans: &'a [San],
}

impl LeafSpec<'_> {
    fn is_serving(&self) -> bool {
        !self.sans.is_empty()
    }
}

fn ensure_leaf(
    spec: &LeafSpec<'_>,
    ca_files: &CaFiles<'_>,
    ca: &LoadedCa,
    fresh_ca: bool,
    issuer: &mut Option<LoadedIssuer>,
    now: ASN1Time,
) -> Result<(), PkiError> {
    let reason = if fresh_ca {
        Some("the CA is new".to_owned())
    } else if !exists(spec.cert)? || !exists(spec.key)? {
        Some("the certificate or its key is missing".to_owned())
    } else {
        reissue_reason(spec, ca, now)?
    };
    let Some(reason) = reason else {
        return Ok(());
    };
    if exists(spec.cert)? {
        tracing::warn!(path = %spec.cert.display(), %reason, "replacing the {}", spec.what);
    } else {
        tracing::info!(path = %spec.cert.display(), "issuing the {}", spec.what);
    }

    let issuer = match issuer {
        Some(loaded) => loaded,
        None => issuer.insert(load_issuer(ca_files, ca, spec.cert)?),
    };
    let key = KeyPair::generate().map_err(|source| PkiError::Generate {
        what: spec.what,
        source,
    })?;
    let mut params = CertificateParams::default();
    params.distinguished_name = DistinguishedName::new();
    params.use_authority_key_identifier_extension = issuer.has_ski;
    params.not_before = now.to_datetime() - BACKDATE;
    // A leaf outliving its CA would only confuse whoever inspects it.
    params.not_after = (now.to_datetime() + LEAF_VALIDITY).min(ca.not_after.to_datetime());
    // Keys are ECDSA, which only signs; KeyEncipherment is an RSA notion.
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    if let Some(organization) = spec.organization {
        params
            .distinguished_name
            .push(DnType::OrganizationName, organization);
    }
    params
        .distinguished_name
        .push(DnType::CommonName, spec.common_name);
    if spec.is_serving() {
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.subject_alt_names = spec
            .sans
            .iter()
            .map(San::to_rcgen)
            .collect::<Result<_, _>>()?;
    } else {
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    }
    let cert = params
        .signed_by(&key, &issuer.issuer)
        .map_err(|source| PkiError::Generate {
            what: spec.what,
            source,
        })?;
    // Catches a CA subject that rcgen re-encodes differently, or an expired
    // CA: such a leaf would look fine on disk and fail every handshake.
    verify_leaf(spec, std::slice::from_ref(cert.der()), ca).map_err(|e| PkiError::Parse {
        path: ca_files.cert.to_path_buf(),
        reason: format!("a freshly issued {} does not verify: {e}", spec.what),
    })?;
    write_file_atomic(spec.key, key.serialize_pem().as_bytes(), 0o600)?;
    write_file_atomic(spec.cert, cert.pem().as_bytes(), 0o644)?;
    Ok(())
}

/// Verifies a leaf the way its peers will: chain to the CA, validity, and
/// the extended key usage for its role.
fn verify_leaf(
    spec: &LeafSpec<'_>,
    chain: &[CertificateDer<'_>],
    ca: &LoadedCa,
) -> Result<(), rustls::Error> {
    use rustls::client::danger::ServerCertVerifier;

    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let (leaf, intermediates) = chain
        .split_first()
        .ok_or(rustls::Error::NoCertificatesPresented)?;
    let now = UnixTime::now();
    if spec.is_serving() {
        // Any required name would do; the SAN check that follows covers the
        // rest, with a better message.
        let name =
            ServerName::try_from("localhost").map_err(|e| rustls::Error::General(e.to_string()))?;
        rustls::client::WebPkiServerVerifier::builder_with_provider(ca.roots.clone(), provider)
            .build()
            .map_err(|e| rustls::Error::General(e.to_string()))?
            .verify_server_cert(leaf, intermediates, &name, &[], now)
            .map(drop)
    } else {
        WebPkiClientVerifier::builder_with_provider(ca.roots.clone(), provider)
            .build()
            .map_err(|e| rustls::Error::General(e.to_string()))?
            .verify_client_cert(leaf, intermediates, now)
            .map(drop)
    }
}

/// Why an existing leaf cannot be kept, if it cannot.
fn reissue_reason(
    spec: &LeafSpec<'_>,
    ca: &LoadedCa,
    now: ASN1Time,
) -> Result<Option<String>, PkiError> {
    let pem = read_string(spec.cert)?;
    let chain = parse_cert_chain(spec.cert, pem.as_bytes())?;
    let (_, cert) = x509_parser::parse_x509_certificate(chain[0].as_ref())
        .map_err(|e| parse_error(spec.cert, e))?;

    // A signature check, not a name comparison: every capstan CA is called
    // "capstan-ca", so a leaf copied from another cluster has the right
    // issuer name and the wrong key.
    if let Err(e) = verify_leaf(spec, &chain, ca) {
        return Ok(Some(format!("it does not verify against the CA: {e}")));
    }
    let renew_after = now
        .timestamp()
        .saturating_add_unsigned(RENEW_BEFORE.as_secs());
    if cert.validity().not_after.timestamp() <= renew_after {
        return Ok(Some(format!(
            "it expires within {} days",
            RENEW_BEFORE.as_secs() / DAY.as_secs()
        )));
    }
    if spec.is_serving() {
        let present = cert_sans(&cert).map_err(|reason| PkiError::Parse {
            path: spec.cert.to_path_buf(),
            reason,
        })?;
        let missing: Vec<String> = spec
            .sans
            .iter()
            .filter(|san| !present.contains(san))
            .map(|san| match san {
                San::Dns(name) => name.clone(),
                San::Ip(ip) => ip.to_string(),
            })
            .collect();
        if !missing.is_empty() {
            return Ok(Some(format!("it lacks SANs {}", missing.join(", "))));
        }
    }
    Ok(None)
}

fn cert_sans(cert: &X509Certificate<'_>) -> Result<BTreeSet<San>, String> {
    let mut sans = BTreeSet::new();
    let Some(ext) = cert.subject_alternative_name().map_err(|e| e.to_string())? else {
        return Ok(sans);
    };
    for name in &ext.value.general_names {
        match name {
            GeneralName::DNSName(dns) => {
                sans.insert(San::Dns(dns.to_ascii_lowercase()));
            }
            GeneralName::IPAddress(bytes) => {
                if let Ok(octets) = <[u8; 4]>::try_from(*bytes) {
                    sans.insert(San::Ip(IpAddr::from(octets)));
                } else if let Ok(octets) = <[u8; 16]>::try_from(*bytes) {
                    sans.insert(San::Ip(IpAddr::from(octets)));
                }
            }
            _ => {}
        }
    }
    Ok(sans)
}

fn render_kubeconfig(pki: &Pki) -> Result<String, PkiError> {
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s.as_bytes());
    let config = serde_json::json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{
            "name": KUBECONFIG_CLUSTER,
            "cluster": {
                "certificate-authority-data": b64(&pki.ca_cert_pem),
                "server": pki.server_url,
            },
        }],
        "users": [{
            "name": ADMIN_USER,
            "user": {
                "client-certificate-data": b64(&pki.admin_cert_pem),
                "client-key-data": b64(&pki.admin_key_pem),
            },
        }],
        "contexts": [{
            "name": KUBECONFIG_CLUSTER,
            "context": {
                "cluster": KUBECONFIG_CLUSTER,
                "user": ADMIN_USER,
            },
        }],
        "current-context": KUBECONFIG_CLUSTER,
        "preferences": {},
    });
    Ok(serde_yaml::to_string(&config)?)
}

fn parse_cert_chain(path: &Path, pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, PkiError> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| parse_error(path, e))?;
    if certs.is_empty() {
        return Err(PkiError::Parse {
            path: path.to_path_buf(),
            reason: "no PEM certificate found".to_owned(),
        });
    }
    Ok(certs)
}

fn parse_error(path: &Path, err: impl fmt::Display) -> PkiError {
    PkiError::Parse {
        path: path.to_path_buf(),
        reason: err.to_string(),
    }
}

#[cfg(test)]
mod tests;
