//! Where an APIService's Service is reached, as kube-aggregator's service
//! resolvers find it: an ExternalName Service at its external name and the
//! APIService's port; any other at its ClusterIP and the matching service
//! port, or (with `--enable-aggregator-routing`) at one of its endpoints'
//! addresses and the port the service port names.

use std::sync::Arc;

use serde_json::Value;

use super::api_service::RemoteApiService;
use crate::auth::UserInfo;
use crate::error::{ApiError, StatusReason};
use crate::verbs::ApiCore;

/// A backend's network address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub host: String,
    pub port: u16,
}

fn unavailable(message: String) -> ApiError {
    ApiError::new(StatusReason::ServiceUnavailable, message)
}

/// The Service's port entry whose `port` is `port`.
pub(crate) fn service_port(service: &Value, port: u16) -> Option<&Value> {
    crate::object::items_at(service, "/spec/ports")
        .iter()
        .find(|p| p.get("port").and_then(Value::as_u64) == Some(u64::from(port)))
}

pub(crate) fn is_external_name(service: &Value) -> bool {
    service.pointer("/spec/type").and_then(Value::as_str) == Some("ExternalName")
}

/// The addresses and port of `endpoints` that serve the service port
/// named `port_name`.
pub(crate) fn endpoint_addresses(endpoints: &Value, port_name: &str) -> Vec<(String, u16)> {
    let mut found = Vec::new();
    for subset in crate::object::items_at(endpoints, "/subsets") {
        let port = crate::object::items_at(subset, "/ports")
            .iter()
            .find(|p| p.get("name").and_then(Value::as_str).unwrap_or("") == port_name)
            .and_then(|p| p.get("port").and_then(Value::as_u64))
            .and_then(|p| u16::try_from(p).ok());
        let Some(port) = port else { continue };
        for address in crate::object::items_at(subset, "/addresses") {
            if let Some(ip) = address.get("ip").and_then(Value::as_str) {
                found.push((ip.to_string(), port));
            }
        }
    }
    found
}

/// A core/v1 object from its watch cache, which every request can read
/// without a storage round trip; read from storage when the cache does
/// not hold it (yet).
async fn cached(
    core: &ApiCore,
    resource: &str,
    namespace: &str,
    name: &str,
) -> Result<Arc<Value>, ApiError> {
    let def = core.resolve("", "v1", resource)?;
    let cache = core.watch_cache(&def).await?;
    if let Some(object) = cache.get(&def.key(&core.prefix, Some(namespace), name)) {
        return Ok(object);
    }
    core.get(&UserInfo::system(), &def, Some(namespace), name, "")
        .await
        .map(Arc::new)
}

pub(super) async fn locate(
    core: &ApiCore,
    api_service: &RemoteApiService,
    routing: bool,
) -> Result<Location, ApiError> {
    let (namespace, name) = (&api_service.service_namespace, &api_service.service_name);
    let service = cached(core, "services", namespace, name)
        .await
        .map_err(|_| unavailable(format!("service \"{name}\" not found")))?;
    if is_external_name(&service) {
        let host = service
            .pointer("/spec/externalName")
            .and_then(Value::as_str)
            .unwrap_or("");
        return Ok(Location {
            host: host.to_string(),
            port: api_service.port,
        });
    }
    let port = service_port(&service, api_service.port).ok_or_else(|| {
        unavailable(format!(
            "no service port {} found for service \"{name}\"",
            api_service.port
        ))
    })?;
    if routing {
        let port_name = port.get("name").and_then(Value::as_str).unwrap_or("");
        let endpoints = cached(core, "endpoints", namespace, name)
            .await
            .map_err(|_| unavailable(format!("service \"{name}\" not found")))?;
        let addresses = endpoint_addresses(&endpoints, port_name);
        if addresses.is_empty() {
            return Err(unavailable(format!(
                "no endpoints available for service \"{name}\""
            )));
        }
        let (host, port) = addresses[rand::random_range(0..addresses.len())].clone();
        return Ok(Location { host, port });
    }
    let cluster_ip = service
        .pointer("/spec/clusterIP")
        .and_then(Value::as_str)
        .unwrap_or("");
    if cluster_ip.is_empty() || cluster_ip == "None" {
        return Err(unavailable(format!(
            "invalid service \"{name}\": no cluster IP"
        )));
    }
    Ok(Location {
        host: cluster_ip.to_string(),
        port: api_service.port,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn endpoints_by_port_name() {
        let endpoints = json!({"subsets": [
            {"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}],
             "ports": [{"name": "https", "port": 8443}]},
            {"addresses": [{"ip": "10.0.0.3"}], "ports": [{"name": "metrics", "port": 9090}]},
        ]});
        assert_eq!(
            endpoint_addresses(&endpoints, "https"),
            [
                ("10.0.0.1".to_string(), 8443),
                ("10.0.0.2".to_string(), 8443)
            ]
        );
        assert!(endpoint_addresses(&endpoints, "grpc").is_empty());
    }
}
