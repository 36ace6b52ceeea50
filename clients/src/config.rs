//! Connection settings: TLS material and the kubeconfig capstan writes.

use std::path::Path;

use base64::Engine;
use serde::Deserialize;

use crate::error::{Error, Result};

/// PEM material for mutual TLS with a capstan server.
#[derive(Clone)]
pub struct TlsConfig {
    /// The CA that signed the server's certificate.
    pub ca_pem: Vec<u8>,
    /// Client certificate (its subject is the user, its O= the groups).
    pub client_cert_pem: Vec<u8>,
    pub client_key_pem: Vec<u8>,
    /// The name to verify the server certificate against; an IP address
    /// works when the certificate carries it as a SAN (capstan's does).
    pub domain: String,
}

impl std::fmt::Debug for TlsConfig {
    // The key is a secret: keep it out of logs and panic messages.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsConfig")
            .field("domain", &self.domain)
            .field("ca_pem", &format_args!("{} bytes", self.ca_pem.len()))
            .field(
                "client_cert_pem",
                &format_args!("{} bytes", self.client_cert_pem.len()),
            )
            .field("client_key_pem", &"<redacted>")
            .finish()
    }
}

/// What [`Client::from_kubeconfig`](crate::Client::from_kubeconfig) needs from a kubeconfig.
#[derive(Debug, Clone)]
pub struct KubeconfigTarget {
    /// The cluster's `server` URL, e.g. `https://127.0.0.1:6443`.
    pub server: String,
    pub tls: TlsConfig,
}

#[derive(Deserialize)]
struct Kubeconfig {
    #[serde(default)]
    clusters: Vec<NamedCluster>,
    #[serde(default)]
    users: Vec<NamedUser>,
    #[serde(default)]
    contexts: Vec<NamedContext>,
    #[serde(rename = "current-context", default)]
    current_context: String,
}

#[derive(Deserialize)]
struct NamedCluster {
    name: String,
    cluster: Cluster,
}

#[derive(Deserialize)]
struct NamedUser {
    name: String,
    user: User,
}

#[derive(Deserialize)]
struct NamedContext {
    name: String,
    context: Context,
}

#[derive(Deserialize)]
struct Cluster {
    server: String,
    #[serde(rename = "certificate-authority-data", default)]
    ca_data: Option<String>,
    #[serde(rename = "certificate-authority", default)]
    ca_file: Option<String>,
    #[serde(rename = "tls-server-name", default)]
    tls_server_name: Option<String>,
}

#[derive(Deserialize)]
struct User {
    #[serde(rename = "client-certificate-data", default)]
    cert_data: Option<String>,
    #[serde(rename = "client-certificate", default)]
    cert_file: Option<String>,
    #[serde(rename = "client-key-data", default)]
    key_data: Option<String>,
    #[serde(rename = "client-key", default)]
    key_file: Option<String>,
}

#[derive(Deserialize)]
struct Context {
    cluster: String,
    user: String,
}

fn find<'a, T, V>(
    items: &'a [T],
    name: &str,
    what: &str,
    split: impl Fn(&'a T) -> (&'a str, &'a V),
) -> Result<&'a V> {
    items
        .iter()
        .map(split)
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v)
        .ok_or_else(|| Error::Kubeconfig(format!("no {what} named {name:?}")))
}

/// Inline `*-data` (base64) wins over a file path, as in kubectl.
fn material(
    data: Option<&str>,
    file: Option<&str>,
    field: &'static str,
    base: &Path,
) -> Result<Vec<u8>> {
    if let Some(data) = data.filter(|d| !d.is_empty()) {
        return base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .map_err(|source| Error::KubeconfigBase64 { field, source });
    }
    if let Some(file) = file.filter(|f| !f.is_empty()) {
        // Relative paths in a kubeconfig are relative to the file itself.
        let path = base.join(file);
        return std::fs::read(&path).map_err(|source| Error::KubeconfigRead { path, source });
    }
    Err(Error::Kubeconfig(format!("{field} is missing")))
}

/// Host part of an `https://host:port[/path]` URL, without IPv6 brackets.
fn host_of(server: &str) -> Result<String> {
    let rest = server
        .strip_prefix("https://")
        .ok_or_else(|| Error::Kubeconfig(format!("server {server:?} is not an https URL")))?;
    let authority = rest.split('/').next().unwrap_or_default();
    let host = if let Some(v6) = authority.strip_prefix('[') {
        v6.split(']').next().unwrap_or_default()
    } else {
        authority.rsplit_once(':').map_or(authority, |(h, _)| h)
    };
    if host.is_empty() {
        return Err(Error::Kubeconfig(format!("server {server:?} has no host")));
    }
    Ok(host.to_string())
}

/// Reads the current context of a kubeconfig file.
pub fn load_kubeconfig(path: &Path) -> Result<KubeconfigTarget> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::KubeconfigRead {
        path: path.to_path_buf(),
        source,
    })?;
    let base = path.parent().unwrap_or_else(|| Path::new("."));
    parse_kubeconfig(&text, base)
}

/// Parses kubeconfig text; relative file references resolve against `base`.
pub fn parse_kubeconfig(text: &str, base: &Path) -> Result<KubeconfigTarget> {
    let config: Kubeconfig = serde_yaml::from_str(text)?;
    let context_name = if config.current_context.is_empty() {
        config
            .contexts
            .first()
            .map(|c| c.name.clone())
            .ok_or_else(|| Error::Kubeconfig("no contexts".into()))?
    } else {
        config.current_context.clone()
    };
    let context = find(&config.contexts, &context_name, "context", |c| {
        (c.name.as_str(), &c.context)
    })?;
    let cluster = find(&config.clusters, &context.cluster, "cluster", |c| {
        (c.name.as_str(), &c.cluster)
    })?;
    let user = find(&config.users, &context.user, "user", |u| {
        (u.name.as_str(), &u.user)
    })?;
    let ca_pem = material(
        cluster.ca_data.as_deref(),
        cluster.ca_file.as_deref(),
        "certificate-authority-data",
        base,
    )?;
    let client_cert_pem = material(
        user.cert_data.as_deref(),
        user.cert_file.as_deref(),
        "client-certificate-data",
        base,
    )?;
    let client_key_pem = material(
        user.key_data.as_deref(),
        user.key_file.as_deref(),
        "client-key-data",
        base,
    )?;
    let domain = match &cluster.tls_server_name {
        Some(name) if !name.is_empty() => name.clone(),
        _ => host_of(&cluster.server)?,
    };
    Ok(KubeconfigTarget {
        server: cluster.server.clone(),
        tls: TlsConfig {
            ca_pem,
            client_cert_pem,
            client_key_pem,
            domain,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIG: &str = r#"
apiVersion: v1
kind: Config
clusters:
- name: capstan
  cluster:
    certificate-authority-data: Q0E=
    server: https://127.0.0.1:7443
users:
- name: admin
  user:
    client-certificate-data: Q0VSVA==
    client-key-data: S0VZ
contexts:
- name: capstan
  context:
    cluster: capstan
    user: admin
current-context: capstan
preferences: {}
"#;

    #[test]
    fn reads_capstan_kubeconfig() {
        let t = parse_kubeconfig(CONFIG, Path::new(".")).unwrap();
        assert_eq!(t.server, "https://127.0.0.1:7443");
        assert_eq!(t.tls.ca_pem, b"CA");
        assert_eq!(t.tls.client_cert_pem, b"CERT");
        assert_eq!(t.tls.client_key_pem, b"KEY");
        assert_eq!(t.tls.domain, "127.0.0.1");
    }

    #[test]
    fn missing_context_is_an_error() {
        let text = CONFIG.replace("current-context: capstan", "current-context: other");
        let err = parse_kubeconfig(&text, Path::new(".")).unwrap_err();
        assert!(
            err.to_string().contains("no context named \"other\""),
            "{err}"
        );
    }

    #[test]
    fn hosts_are_taken_from_urls() {
        assert_eq!(host_of("https://10.0.0.1:6443").unwrap(), "10.0.0.1");
        assert_eq!(host_of("https://[::1]:6443/").unwrap(), "::1");
        assert_eq!(host_of("https://api.example").unwrap(), "api.example");
        assert!(host_of("http://x:1").is_err());
    }

    #[test]
    fn debug_hides_the_key() {
        let t = parse_kubeconfig(CONFIG, Path::new(".")).unwrap();
        let text = format!("{:?}", t.tls);
        assert!(!text.contains("KEY") && text.contains("redacted"), "{text}");
    }
}
