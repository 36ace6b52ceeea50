use super::*;
use std::os::unix::fs::PermissionsExt;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_rustls::{TlsAcceptor, TlsConnector};

fn opts(port: u16) -> PkiOptions {
    PkiOptions {
        secure_port: port,
        ..PkiOptions::default()
    }
}

fn leaf_sans(pem: &str) -> BTreeSet<San> {
    let der = CertificateDer::from_pem_slice(pem.as_bytes()).unwrap();
    let (_, cert) = x509_parser::parse_x509_certificate(der.as_ref()).unwrap();
    cert_sans(&cert).unwrap()
}

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn generates_then_reuses() {
    let dir = tempfile::tempdir().unwrap();
    let first = ensure_pki(dir.path(), &opts(6443)).unwrap();
    let paths = first.paths().clone();
    for path in [
        &paths.ca_cert,
        &paths.ca_key,
        &paths.serving_cert,
        &paths.serving_key,
        &paths.admin_cert,
        &paths.admin_key,
        &paths.kubeconfig,
    ] {
        assert!(path.is_file(), "{} missing", path.display());
    }
    let files = |p: &PkiPaths| {
        [
            &p.ca_cert,
            &p.ca_key,
            &p.serving_cert,
            &p.serving_key,
            &p.admin_cert,
            &p.admin_key,
        ]
        .map(|path| fs::read(path).unwrap())
    };
    let before = files(&paths);

    let second = ensure_pki(dir.path(), &opts(7443)).unwrap();
    assert_eq!(before, files(second.paths()));
    assert_eq!(first.ca_cert_pem, second.ca_cert_pem);
    assert_eq!(first.admin_key_pem, second.admin_key_pem);
    let kubeconfig = fs::read_to_string(&paths.kubeconfig).unwrap();
    assert!(
        kubeconfig.contains("https://127.0.0.1:7443"),
        "{kubeconfig}"
    );
    assert!(!paths.dir.join("ca.key.tmp").exists());
}

#[test]
fn key_files_and_kubeconfig_are_private() {
    let dir = tempfile::tempdir().unwrap();
    let pki = ensure_pki(dir.path(), &opts(6443)).unwrap();
    let paths = pki.paths();
    for key in [
        &paths.ca_key,
        &paths.serving_key,
        &paths.admin_key,
        &paths.kubeconfig,
    ] {
        assert_eq!(mode(key), 0o600, "{}", key.display());
    }
    assert_eq!(mode(&paths.dir), 0o700);
    assert_eq!(mode(&paths.ca_cert) & 0o600, 0o600);
}

#[test]
fn kubeconfig_has_server_ca_and_admin_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let pki = ensure_pki(dir.path(), &opts(6443)).unwrap();
    let text = fs::read_to_string(&pki.paths().kubeconfig).unwrap();
    let doc: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
    let decode = |v: &serde_yaml::Value| {
        String::from_utf8(
            base64::engine::general_purpose::STANDARD
                .decode(v.as_str().unwrap())
                .unwrap(),
        )
        .unwrap()
    };

    assert_eq!(doc["kind"].as_str(), Some("Config"));
    assert_eq!(doc["current-context"].as_str(), Some("capstan"));
    let cluster = &doc["clusters"][0];
    assert_eq!(cluster["name"].as_str(), Some("capstan"));
    assert_eq!(
        cluster["cluster"]["server"].as_str(),
        Some("https://127.0.0.1:6443")
    );
    assert_eq!(
        decode(&cluster["cluster"]["certificate-authority-data"]),
        fs::read_to_string(&pki.paths().ca_cert).unwrap()
    );
    let user = &doc["users"][0];
    assert_eq!(user["name"].as_str(), Some("admin"));
    assert_eq!(
        decode(&user["user"]["client-certificate-data"]),
        fs::read_to_string(&pki.paths().admin_cert).unwrap()
    );
    assert_eq!(
        decode(&user["user"]["client-key-data"]),
        fs::read_to_string(&pki.paths().admin_key).unwrap()
    );
    let context = &doc["contexts"][0];
    assert_eq!(context["name"].as_str(), Some("capstan"));
    assert_eq!(context["context"]["cluster"].as_str(), Some("capstan"));
    assert_eq!(context["context"]["user"].as_str(), Some("admin"));
}

#[test]
fn server_url_prefers_loopback_for_wildcards() {
    let v4 = |s: &str| s.parse::<IpAddr>().unwrap();
    assert_eq!(server_url(v4("0.0.0.0"), 6443), "https://127.0.0.1:6443");
    assert_eq!(server_url(v4("::"), 6443), "https://[::1]:6443");
    assert_eq!(server_url(v4("10.1.2.3"), 443), "https://10.1.2.3:443");
    assert_eq!(server_url(v4("fd00::5"), 6443), "https://[fd00::5]:6443");
    assert_eq!(server_url(v4("127.0.0.1"), 1), "https://127.0.0.1:1");
}

#[test]
fn serving_cert_has_default_bind_and_extra_sans() {
    let dir = tempfile::tempdir().unwrap();
    let options = PkiOptions {
        bind_address: "10.1.2.3".parse().unwrap(),
        secure_port: 6443,
        extra_sans: vec!["API.Example.com".into(), "[fd00::1]".into(), " ".into()],
    };
    let pki = ensure_pki(dir.path(), &options).unwrap();
    let sans = leaf_sans(&pki.serving_cert_pem);
    for name in DEFAULT_DNS_SANS {
        assert!(sans.contains(&San::Dns((*name).into())), "{name}");
    }
    for ip in ["127.0.0.1", "::1", "10.1.2.3", "fd00::1"] {
        assert!(sans.contains(&San::Ip(ip.parse().unwrap())), "{ip}");
    }
    assert!(sans.contains(&San::Dns("api.example.com".into())));
    if let Some(host) = machine_hostname().map(|h| h.to_ascii_lowercase()) {
        if is_dns_name(&host) {
            assert!(sans.contains(&San::Dns(host)));
        }
    }
    assert!(!sans.contains(&San::Ip("0.0.0.0".parse().unwrap())));
    assert_eq!(pki.server_url(), "https://10.1.2.3:6443");
}

#[test]
fn wildcard_bind_is_not_a_san() {
    let sans = required_sans(&opts(6443), None).unwrap();
    assert!(!sans.contains(&San::Ip("0.0.0.0".parse().unwrap())));
    let v6 = PkiOptions {
        bind_address: "::".parse().unwrap(),
        ..opts(6443)
    };
    let sans = required_sans(&v6, Some("Node_1")).unwrap();
    assert!(!sans.contains(&San::Ip("::".parse().unwrap())));
    assert!(!sans
        .iter()
        .any(|s| matches!(s, San::Dns(n) if n == "node_1")));
}

#[test]
fn invalid_extra_san_is_rejected() {
    let bad = PkiOptions {
        extra_sans: vec!["not a name".into()],
        ..opts(6443)
    };
    assert!(matches!(
        required_sans(&bad, None),
        Err(PkiError::InvalidSan(s)) if s == "not a name"
    ));
    let wildcard = PkiOptions {
        extra_sans: vec!["*.apps.example.com".into()],
        ..opts(6443)
    };
    assert!(required_sans(&wildcard, None)
        .unwrap()
        .contains(&San::Dns("*.apps.example.com".into())));
}

#[test]
fn new_san_reissues_only_the_serving_cert() {
    let dir = tempfile::tempdir().unwrap();
    let first = ensure_pki(dir.path(), &opts(6443)).unwrap();
    let with_san = PkiOptions {
        extra_sans: vec!["capstan.example.com".into(), "192.0.2.7".into()],
        ..opts(6443)
    };
    let second = ensure_pki(dir.path(), &with_san).unwrap();
    assert_eq!(first.ca_cert_pem, second.ca_cert_pem);
    assert_eq!(
        fs::read(&first.paths().ca_key).unwrap(),
        fs::read(&second.paths().ca_key).unwrap()
    );
    assert_eq!(first.admin_cert_pem, second.admin_cert_pem);
    assert_eq!(first.admin_key_pem, second.admin_key_pem);
    assert_ne!(first.serving_cert_pem, second.serving_cert_pem);
    assert_ne!(first.serving_key_pem, second.serving_key_pem);
    let sans = leaf_sans(&second.serving_cert_pem);
    assert!(sans.contains(&San::Dns("capstan.example.com".into())));
    assert!(sans.contains(&San::Ip("192.0.2.7".parse().unwrap())));

    // The SANs are now covered: a third start changes nothing.
    let third = ensure_pki(dir.path(), &with_san).unwrap();
    assert_eq!(second.serving_cert_pem, third.serving_cert_pem);
}

#[test]
fn reissued_leaf_chains_to_the_existing_ca() {
    let dir = tempfile::tempdir().unwrap();
    let first = ensure_pki(dir.path(), &opts(6443)).unwrap();
    fs::remove_file(&first.paths().admin_cert).unwrap();
    let second = ensure_pki(dir.path(), &opts(6443)).unwrap();
    assert_ne!(first.admin_cert_pem, second.admin_cert_pem);
    assert_eq!(first.serving_cert_pem, second.serving_cert_pem);

    let ca = CertificateDer::from_pem_slice(second.ca_cert_pem.as_bytes()).unwrap();
    let (_, ca) = x509_parser::parse_x509_certificate(ca.as_ref()).unwrap();
    for pem in [second.admin_cert_pem, second.serving_cert_pem] {
        let der = CertificateDer::from_pem_slice(pem.as_bytes()).unwrap();
        let (_, leaf) = x509_parser::parse_x509_certificate(der.as_ref()).unwrap();
        assert_eq!(leaf.issuer().as_raw(), ca.subject().as_raw());
        let aki = leaf
            .iter_extensions()
            .find_map(|ext| match ext.parsed_extension() {
                ParsedExtension::AuthorityKeyIdentifier(aki) => {
                    aki.key_identifier.as_ref().map(|id| id.0.to_vec())
                }
                _ => None,
            });
        assert_eq!(aki, subject_key_identifier(&ca));
    }
}

#[test]
fn leaf_near_expiry_is_renewed() {
    let dir = tempfile::tempdir().unwrap();
    let first = ensure_pki(dir.path(), &opts(6443)).unwrap();
    let paths = first.paths().clone();
    let (ca, _) = load_or_create_ca(&paths.cluster_ca(), ASN1Time::now()).unwrap();
    let issuer = load_issuer(&paths.cluster_ca(), &ca, &paths.admin_cert).unwrap();
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::default();
    params.distinguished_name = DistinguishedName::new();
    params.distinguished_name.push(DnType::CommonName, "admin");
    params.not_before = ASN1Time::now().to_datetime() - DAY;
    params.not_after = ASN1Time::now().to_datetime() + DAY * 10;
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let short = params.signed_by(&key, &issuer.issuer).unwrap();
    fs::write(&paths.admin_cert, short.pem()).unwrap();
    fs::write(&paths.admin_key, key.serialize_pem()).unwrap();
    let spec = LeafSpec {
        what: "admin",
        cert: &paths.admin_cert,
        key: &paths.admin_key,
        common_name: ADMIN_USER,
        organization: Some(ADMIN_GROUP),
        sans: &[],
    };
    let reason = reissue_reason(&spec, &ca, ASN1Time::now()).unwrap();
    assert!(reason.unwrap().contains("expires within 90 days"));

    let second = ensure_pki(dir.path(), &opts(6443)).unwrap();
    assert_ne!(second.admin_cert_pem, short.pem());
    assert_eq!(first.serving_cert_pem, second.serving_cert_pem);
    let der = CertificateDer::from_pem_slice(second.admin_cert_pem.as_bytes()).unwrap();
    let (_, cert) = x509_parser::parse_x509_certificate(der.as_ref()).unwrap();
    let remaining = cert.validity().not_after.timestamp() - ASN1Time::now().timestamp();
    assert!(remaining > (LEAF_VALIDITY - DAY).as_secs() as i64);
}

#[test]
fn leaf_from_another_ca_is_reissued() {
    let ours = tempfile::tempdir().unwrap();
    let theirs = tempfile::tempdir().unwrap();
    let pki = ensure_pki(ours.path(), &opts(6443)).unwrap();
    let other = ensure_pki(theirs.path(), &opts(6443)).unwrap();
    fs::copy(&other.paths().serving_cert, &pki.paths().serving_cert).unwrap();
    fs::copy(&other.paths().serving_key, &pki.paths().serving_key).unwrap();
    let again = ensure_pki(ours.path(), &opts(6443)).unwrap();
    assert_ne!(again.serving_cert_pem, other.serving_cert_pem);
    assert_ne!(again.serving_cert_pem, pki.serving_cert_pem);
    assert_eq!(again.admin_cert_pem, pki.admin_cert_pem);
}

#[test]
fn missing_ca_key_is_an_error_only_when_something_must_be_issued() {
    let dir = tempfile::tempdir().unwrap();
    let first = ensure_pki(dir.path(), &opts(6443)).unwrap();
    fs::remove_file(&first.paths().ca_key).unwrap();
    // Everything still valid: an external-CA setup keeps working.
    ensure_pki(dir.path(), &opts(6443)).unwrap();

    let with_san = PkiOptions {
        extra_sans: vec!["new.example.com".into()],
        ..opts(6443)
    };
    assert!(matches!(
        ensure_pki(dir.path(), &with_san),
        Err(PkiError::MissingCaKey { .. })
    ));
}

#[test]
fn orphan_ca_key_is_not_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let first = ensure_pki(dir.path(), &opts(6443)).unwrap();
    fs::remove_file(&first.paths().ca_cert).unwrap();
    assert!(matches!(
        ensure_pki(dir.path(), &opts(6443)),
        Err(PkiError::OrphanCaKey { .. })
    ));
}

#[test]
fn identity_of_generated_certs() {
    let dir = tempfile::tempdir().unwrap();
    let pki = ensure_pki(dir.path(), &opts(6443)).unwrap();
    let admin = CertificateDer::from_pem_slice(pki.admin_cert_pem.as_bytes()).unwrap();
    assert_eq!(
        identity_from_peer_certificates(&[admin]),
        Some(ClientIdentity {
            user: "admin".into(),
            groups: vec!["system:masters".into()],
        })
    );
    let serving = CertificateDer::from_pem_slice(pki.serving_cert_pem.as_bytes()).unwrap();
    assert_eq!(
        identity_from_peer_certificates(&[serving]),
        Some(ClientIdentity {
            user: SERVING_COMMON_NAME.into(),
            groups: vec![],
        })
    );
    assert_eq!(identity_from_peer_certificates(&[]), None);
    assert_eq!(
        identity_from_peer_certificates(&[CertificateDer::from(vec![0u8; 8])]),
        None
    );
}

/// Made with `openssl req -x509 -subj
/// "/O=system:nodes/O=team-a/CN=first/CN=system:node:n1"`: rcgen cannot
/// repeat an attribute type, openssl can.
const MULTI_VALUE_SUBJECT: &str = "-----BEGIN CERTIFICATE-----
MIIB+jCCAZ+gAwIBAgIUOVYvD6NY2vhgPh3uznlhlKfnEsowCgYIKoZIzj0EAwIw
UTEVMBMGA1UECgwMc3lzdGVtOm5vZGVzMQ8wDQYDVQQKDAZ0ZWFtLWExDjAMBgNV
BAMMBWZpcnN0MRcwFQYDVQQDDA5zeXN0ZW06bm9kZTpuMTAgFw0yNjExMjIwMjM2
MzZaGA8yMTI2MTAyOTAyMzYzNlowUTEVMBMGA1UECgwMc3lzdGVtOm5vZGVzMQ8w
DQYDVQQKDAZ0ZWFtLWExDjAMBgNVBAMMBWZpcnN0MRcwFQYDVQQDDA5zeXN0ZW06
bm9kZTpuMTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABHwipkbgNR4BQbBM4OhX
a/jQXPA2U1rmlAGZzoe8oH3u89SSNEYGPwMtPf97xjnuOwkZhN60qtG7X1axrXCu
YC+jUzBRMB0GA1UdDgQWBBQd/r4BbOl1xdj2gbiv1XWCh9KGMjAfBgNVHSMEGDAW
gBQd/r4BbOl1xdj2gbiv1XWCh9KGMjAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49
BAMCA0kAMEYCIQCOR4MmNIP7r0xyT8miHRVA1DbiQLcV8zlXPunSov38QwIhAJ+Q
PR2uJZdssHnjS7lCgz1EQOhVfiXiS3DHkXOYV9Ji
-----END CERTIFICATE-----
";

#[test]
fn identity_takes_the_last_cn_and_every_organization() {
    let cert = CertificateDer::from_pem_slice(MULTI_VALUE_SUBJECT.as_bytes()).unwrap();
    assert_eq!(
        identity_from_peer_certificates(&[cert]),
        Some(ClientIdentity {
            user: "system:node:n1".into(),
            groups: vec!["system:nodes".into(), "team-a".into()],
        })
    );
}

#[test]
fn identity_requires_a_common_name() {
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::default();
    params.distinguished_name = DistinguishedName::new();
    params
        .distinguished_name
        .push(DnType::OrganizationName, "a");
    let no_cn = params.self_signed(&key).unwrap();
    assert_eq!(
        identity_from_peer_certificates(&[no_cn.der().clone()]),
        None
    );
}

/// An operator-supplied CA as other tools make them: PrintableString
/// country, several attributes, a 20-byte (SHA-1 style) key identifier.
fn write_foreign_ca(data_dir: &Path) -> String {
    let paths = PkiPaths::new(data_dir);
    create_private_dir(&paths.dir).unwrap();
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::default();
    params.distinguished_name = DistinguishedName::new();
    params.distinguished_name.push(
        DnType::CountryName,
        DnValue::PrintableString("US".try_into().unwrap()),
    );
    params
        .distinguished_name
        .push(DnType::OrganizationName, "Example Org");
    params
        .distinguished_name
        .push(DnType::CommonName, "Example Root CA");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    params.key_identifier_method = KeyIdMethod::PreSpecified(vec![7; 20]);
    let cert = params.self_signed(&key).unwrap();
    fs::write(&paths.ca_cert, cert.pem()).unwrap();
    fs::write(&paths.ca_key, key.serialize_pem()).unwrap();
    cert.pem()
}

#[tokio::test]
async fn operator_supplied_ca_is_used_as_is() {
    let dir = tempfile::tempdir().unwrap();
    let ca_pem = write_foreign_ca(dir.path());
    let pki = ensure_pki(dir.path(), &opts(6443)).unwrap();
    assert_eq!(pki.ca_cert_pem, ca_pem);
    let client = client_config(
        &pki,
        Some((pki.admin_cert_pem.as_str(), pki.admin_key_pem.as_str())),
        &[b"h2"],
    );
    let outcome = handshake(&pki, client, "localhost").await.unwrap();
    assert_eq!(outcome.identity.unwrap().user, "admin");
}

#[test]
fn debug_output_omits_private_keys() {
    let dir = tempfile::tempdir().unwrap();
    let pki = ensure_pki(dir.path(), &opts(6443)).unwrap();
    assert!(!format!("{pki:?}").contains("PRIVATE KEY"));
}

fn client_config(
    pki: &Pki,
    client_cert: Option<(&str, &str)>,
    alpn: &[&[u8]],
) -> rustls::ClientConfig {
    let builder = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(pki.ca_root_store().unwrap());
    let mut config = match client_cert {
        Some((cert, key)) => builder
            .with_client_auth_cert(
                CertificateDer::pem_slice_iter(cert.as_bytes())
                    .collect::<Result<Vec<_>, _>>()
                    .unwrap(),
                PrivateKeyDer::from_pem_slice(key.as_bytes()).unwrap(),
            )
            .unwrap(),
        None => builder.with_no_client_auth(),
    };
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    config
}

struct Outcome {
    identity: Option<ClientIdentity>,
    server_alpn: Option<Vec<u8>>,
    client_alpn: Option<Vec<u8>>,
}

/// One handshake over a real loopback socket, with a byte exchanged so
/// that TLS 1.3's deferred client-certificate check has run on both ends.
async fn handshake(
    pki: &Pki,
    client: rustls::ClientConfig,
    server_name: &str,
) -> Result<Outcome, String> {
    let acceptor = TlsAcceptor::from(Arc::new(
        server_tls_config(pki, &ClientTrust::new(pki, None, &[]).unwrap()).unwrap(),
    ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        let (tcp, _) = listener.accept().await.map_err(|e| e.to_string())?;
        let mut tls = acceptor.accept(tcp).await.map_err(|e| e.to_string())?;
        let (_, conn) = tls.get_ref();
        let identity = conn
            .peer_certificates()
            .and_then(identity_from_peer_certificates);
        let alpn = conn.alpn_protocol().map(<[u8]>::to_vec);
        let mut byte = [0u8; 1];
        tls.read_exact(&mut byte).await.map_err(|e| e.to_string())?;
        tls.write_all(&byte).await.map_err(|e| e.to_string())?;
        tls.shutdown().await.map_err(|e| e.to_string())?;
        Ok::<_, String>((identity, alpn))
    });

    let connector = TlsConnector::from(Arc::new(client));
    let name = rustls::pki_types::ServerName::try_from(server_name.to_owned()).unwrap();
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let client_result = async {
        let mut tls = connector
            .connect(name, tcp)
            .await
            .map_err(|e| e.to_string())?;
        let client_alpn = tls.get_ref().1.alpn_protocol().map(<[u8]>::to_vec);
        tls.write_all(b"x").await.map_err(|e| e.to_string())?;
        let mut byte = [0u8; 1];
        tls.read_exact(&mut byte).await.map_err(|e| e.to_string())?;
        Ok::<_, String>(client_alpn)
    }
    .await;
    let server_result = server.await.unwrap();
    let (identity, server_alpn) = server_result?;
    let client_alpn = client_result?;
    Ok(Outcome {
        identity,
        server_alpn,
        client_alpn,
    })
}

#[tokio::test]
async fn handshake_with_admin_cert_yields_identity_and_h2() {
    let dir = tempfile::tempdir().unwrap();
    let pki = ensure_pki(dir.path(), &opts(6443)).unwrap();
    let client = client_config(
        &pki,
        Some((pki.admin_cert_pem.as_str(), pki.admin_key_pem.as_str())),
        &[b"h2", b"http/1.1"],
    );
    let outcome = handshake(&pki, client, "kubernetes.default.svc")
        .await
        .unwrap();
    assert_eq!(
        outcome.identity,
        Some(ClientIdentity {
            user: "admin".into(),
            groups: vec!["system:masters".into()],
        })
    );
    assert_eq!(outcome.server_alpn.as_deref(), Some(&b"h2"[..]));
    assert_eq!(outcome.client_alpn.as_deref(), Some(&b"h2"[..]));
}

#[tokio::test]
async fn handshake_without_client_cert_succeeds_anonymously() {
    let dir = tempfile::tempdir().unwrap();
    let pki = ensure_pki(dir.path(), &opts(6443)).unwrap();
    let client = client_config(&pki, None, &[b"http/1.1"]);
    let outcome = handshake(&pki, client, "127.0.0.1").await.unwrap();
    assert_eq!(outcome.identity, None);
    assert_eq!(outcome.server_alpn.as_deref(), Some(&b"http/1.1"[..]));
}

#[tokio::test]
async fn handshake_over_ipv6_loopback_name_and_no_alpn() {
    let dir = tempfile::tempdir().unwrap();
    let pki = ensure_pki(dir.path(), &opts(6443)).unwrap();
    // The name only has to be in the certificate; the socket is IPv4.
    let client = client_config(&pki, None, &[]);
    let outcome = handshake(&pki, client, "::1").await.unwrap();
    assert_eq!(outcome.server_alpn, None);
}

#[tokio::test]
async fn client_cert_from_another_ca_is_rejected() {
    let ours = tempfile::tempdir().unwrap();
    let theirs = tempfile::tempdir().unwrap();
    let pki = ensure_pki(ours.path(), &opts(6443)).unwrap();
    let other = ensure_pki(theirs.path(), &opts(6443)).unwrap();
    assert_ne!(pki.ca_cert_pem, other.ca_cert_pem);
    let client = client_config(
        &pki,
        Some((other.admin_cert_pem.as_str(), other.admin_key_pem.as_str())),
        &[b"h2"],
    );
    let err = handshake(&pki, client, "localhost")
        .await
        .err()
        .expect("a foreign client certificate must fail the handshake");
    assert!(!err.is_empty());
}

#[tokio::test]
async fn server_name_outside_the_sans_is_rejected_by_clients() {
    let dir = tempfile::tempdir().unwrap();
    let pki = ensure_pki(dir.path(), &opts(6443)).unwrap();
    let client = client_config(&pki, None, &[b"h2"]);
    let err = handshake(&pki, client, "not-in-the-cert.example")
        .await
        .err()
        .expect("hostname verification must fail");
    assert!(!err.is_empty());
}

#[test]
fn front_proxy_certificate_is_its_own_ca() {
    let dir = tempfile::tempdir().unwrap();
    let pki = ensure_pki(dir.path(), &opts(6443)).unwrap();
    let chain = |path: &Path| parse_cert_chain(path, &fs::read(path).unwrap()).unwrap();
    let front_proxy = chain(&pki.paths().front_proxy_client_cert);
    let admin = chain(&pki.paths().admin_cert);

    let trust =
        ClientTrust::new(&pki, None, &[FRONT_PROXY_CLIENT_COMMON_NAME.to_string()]).unwrap();
    assert_eq!(
        trust.classify(&front_proxy),
        PeerIdentity {
            user: None,
            front_proxy: true
        },
        "the cluster CA does not vouch for the front proxy's certificate"
    );
    let admin_peer = trust.classify(&admin);
    assert!(!admin_peer.front_proxy);
    assert_eq!(admin_peer.user.unwrap().user, ADMIN_USER);

    let others_only = ClientTrust::new(&pki, None, &["someone-else".to_string()]).unwrap();
    assert!(!others_only.classify(&front_proxy).front_proxy);
    let any_name = ClientTrust::new(&pki, None, &[String::new()]).unwrap();
    assert!(any_name.classify(&front_proxy).front_proxy);

    // Kept across starts, like the rest of the PKI.
    let again = ensure_pki(dir.path(), &opts(6443)).unwrap();
    assert_eq!(again.front_proxy_ca_pem(), pki.front_proxy_ca_pem());
    assert_ne!(pki.front_proxy_ca_pem(), pki.ca_cert_pem());
}
