//! A remote APIService as the aggregation layer reads it.

use base64::Engine as _;
use serde_json::Value;

/// An APIService served by an extension API server.
#[derive(Debug, Clone)]
pub struct RemoteApiService {
    pub name: String,
    pub group: String,
    pub version: String,
    pub service_namespace: String,
    pub service_name: String,
    pub port: u16,
    pub ca_bundle: Vec<u8>,
    pub insecure_skip_tls_verify: bool,
    pub group_priority_minimum: i64,
    pub version_priority: i64,
    /// Whether its Available condition is True.
    pub available: bool,
}

impl RemoteApiService {
    /// The remote APIService `object` describes; None for a Local one.
    pub fn of(object: &Value) -> Option<Self> {
        let service = object.pointer("/spec/service").filter(|s| !s.is_null())?;
        let text = |value: &Value, key: &str| {
            value
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let spec = object.get("spec")?;
        let number = |key: &str| spec.get(key).and_then(Value::as_i64).unwrap_or(0);
        let ca_bundle = spec
            .get("caBundle")
            .and_then(Value::as_str)
            .and_then(|encoded| {
                base64::engine::general_purpose::STANDARD
                    .decode(encoded)
                    .ok()
            })
            .unwrap_or_default();
        let available = crate::object::items_at(object, "/status/conditions")
            .iter()
            .any(|c| {
                c.get("type").and_then(Value::as_str) == Some("Available")
                    && c.get("status").and_then(Value::as_str) == Some("True")
            });
        Some(Self {
            name: crate::object::name(object).to_string(),
            group: text(spec, "group"),
            version: text(spec, "version"),
            service_namespace: text(service, "namespace"),
            service_name: text(service, "name"),
            port: service
                .get("port")
                .and_then(Value::as_u64)
                .and_then(|p| u16::try_from(p).ok())
                .unwrap_or(443),
            ca_bundle,
            insecure_skip_tls_verify: spec.get("insecureSkipTLSVerify") == Some(&Value::Bool(true)),
            group_priority_minimum: number("groupPriorityMinimum"),
            version_priority: number("versionPriority"),
            available,
        })
    }

    /// The name its backend's certificate must carry.
    pub fn server_name(&self) -> String {
        format!("{}.{}.svc", self.service_name, self.service_namespace)
    }
}
