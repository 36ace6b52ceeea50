//! The `kube-system/extension-apiserver-authentication` ConfigMap, as
//! kube-apiserver's cluster-authentication-trust controller keeps it: the
//! client CA that signs users' certificates and the request-header
//! configuration, so an extension API server (metrics-server, a custom API
//! server) knows whom to believe when Capstan proxies to it. Every replica
//! merges its own configuration into what is there (CA bundles and header
//! lists are unions) with a compare-and-swap, so replicas started with
//! different CAs all end up trusted instead of overwriting each other.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Map, Value};

use crate::auth::UserInfo;
use crate::authentication::request_header::RequestHeaderNames;
use crate::error::StatusReason;
use crate::verbs::{ApiCore, View, WriteOptions};

const CONTROLLER: &str = "cluster-authentication-trust";
pub const CONFIG_MAP: &str = "extension-apiserver-authentication";
const NAMESPACE: &str = "kube-system";
/// How often the ConfigMap is checked (someone may have edited or deleted it).
const RESYNC: Duration = Duration::from_secs(60);

/// This replica's authentication configuration.
#[derive(Debug, Clone)]
pub struct AuthenticationTrust {
    /// PEM bundle of the CA that signs users' client certificates.
    pub client_ca: String,
    /// PEM bundle of the CA that signs front proxies' certificates.
    pub request_header_ca: String,
    pub allowed_names: Vec<String>,
    pub names: RequestHeaderNames,
}

impl AuthenticationTrust {
    /// The ConfigMap's data for this configuration alone.
    fn data(&self) -> Map<String, Value> {
        let list = |items: &[String]| {
            Value::String(serde_json::to_string(items).unwrap_or_else(|_| "[]".to_string()))
        };
        let mut data = Map::new();
        data.insert("client-ca-file".into(), json!(self.client_ca));
        data.insert(
            "requestheader-allowed-names".into(),
            list(&self.allowed_names),
        );
        data.insert(
            "requestheader-client-ca-file".into(),
            json!(self.request_header_ca),
        );
        data.insert(
            "requestheader-extra-headers-prefix".into(),
            list(&self.names.extra_headers_prefixes),
        );
        data.insert(
            "requestheader-group-headers".into(),
            list(&self.names.group_headers),
        );
        data.insert(
            "requestheader-username-headers".into(),
            list(&self.names.username_headers),
        );
        data
    }
}

pub async fn run(core: Arc<ApiCore>, trust: AuthenticationTrust) {
    loop {
        if let Err(e) = sync(&core, &trust).await {
            tracing::warn!(controller = CONTROLLER, error = %e, "publishing the authentication trust failed");
        }
        tokio::time::sleep(RESYNC).await;
    }
}

async fn sync(core: &ApiCore, trust: &AuthenticationTrust) -> crate::ApiResult<()> {
    let system = UserInfo::system();
    let def = core.resolve("", "v1", "configmaps")?;
    let opts = WriteOptions {
        field_manager: "kube-apiserver".to_string(),
        ..Default::default()
    };
    let ours = trust.data();
    let current = match core
        .get(&system, &def, Some(NAMESPACE), CONFIG_MAP, "")
        .await
    {
        Ok(current) => current,
        Err(e) if e.reason == StatusReason::NotFound => {
            let config_map = json!({
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": CONFIG_MAP, "namespace": NAMESPACE},
                "data": ours,
            });
            return super::tolerate_races(
                core.create(&system, &def, Some(NAMESPACE), config_map, &opts)
                    .await
                    .map(drop),
            );
        }
        Err(e) => return Err(e),
    };
    let existing = current
        .get("data")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let merged = merged(&existing, &ours);
    if merged == existing {
        return Ok(());
    }
    let mut updated = current;
    updated["data"] = Value::Object(merged);
    super::tolerate_races(
        core.update(
            &system,
            &def,
            Some(NAMESPACE),
            CONFIG_MAP,
            updated,
            &opts,
            View::Main,
        )
        .await
        .map(drop),
    )
}

/// What is there, with this replica's CAs and names added: PEM bundles
/// gain the certificates they lack, JSON lists the entries they lack.
fn merged(existing: &Map<String, Value>, ours: &Map<String, Value>) -> Map<String, Value> {
    let mut merged = existing.clone();
    for (key, value) in ours {
        let ours = value.as_str().unwrap_or("");
        let theirs = existing.get(key).and_then(Value::as_str).unwrap_or("");
        let combined = if key.ends_with("-file") {
            combined_bundle(theirs, ours)
        } else {
            combined_list(theirs, ours)
        };
        merged.insert(key.clone(), Value::String(combined));
    }
    merged
}

/// The PEM blocks of `theirs`, then those of `ours` not among them.
fn combined_bundle(theirs: &str, ours: &str) -> String {
    let mut blocks: Vec<&str> = pem_blocks(theirs).collect();
    for block in pem_blocks(ours) {
        if !blocks.contains(&block) {
            blocks.push(block);
        }
    }
    blocks
        .iter()
        .map(|block| format!("{block}\n"))
        .collect::<String>()
}

fn pem_blocks(bundle: &str) -> impl Iterator<Item = &str> {
    const END: &str = "-----END CERTIFICATE-----";
    bundle.split_inclusive(END).filter_map(|chunk| {
        let start = chunk.find("-----BEGIN CERTIFICATE-----")?;
        chunk[start..].ends_with(END).then(|| &chunk[start..])
    })
}

/// `theirs` as a JSON list of strings, with `ours`' entries it lacks.
fn combined_list(theirs: &str, ours: &str) -> String {
    let parse = |text: &str| serde_json::from_str::<Vec<String>>(text).unwrap_or_default();
    let mut items = parse(theirs);
    for item in parse(ours) {
        if !items.contains(&item) {
            items.push(item);
        }
    }
    serde_json::to_string(&items).unwrap_or_else(|_| "[]".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----";
    const B: &str = "-----BEGIN CERTIFICATE-----\nBBBB\n-----END CERTIFICATE-----";

    #[test]
    fn bundles_and_lists_are_unions() {
        assert_eq!(
            combined_bundle(&format!("{A}\n"), &format!("{B}\n{A}\n")),
            format!("{A}\n{B}\n")
        );
        assert_eq!(
            combined_list(r#"["X-Remote-User"]"#, r#"["X-Remote-User","X-User"]"#),
            r#"["X-Remote-User","X-User"]"#
        );
        assert_eq!(combined_list("", r#"["a"]"#), r#"["a"]"#);
    }

    #[test]
    fn data_lists_are_json() {
        let trust = AuthenticationTrust {
            client_ca: format!("{A}\n"),
            request_header_ca: format!("{B}\n"),
            allowed_names: vec!["front-proxy-client".into()],
            names: RequestHeaderNames::kubeadm(),
        };
        let data = trust.data();
        assert_eq!(
            data["requestheader-username-headers"],
            r#"["X-Remote-User"]"#
        );
        assert_eq!(
            data["requestheader-allowed-names"],
            r#"["front-proxy-client"]"#
        );
        assert_eq!(merged(&data, &data), data);
    }
}
