//! The APIServices' Available condition, as kube-aggregator's local and
//! remote availability controllers set it. A Local APIService is always
//! available. A remote one is checked in upstream's order: its Service
//! exists (ServiceNotFound); a ClusterIP Service listens on the port
//! (ServicePortError) and has endpoints with addresses for that port
//! (EndpointsNotFound, MissingEndpoints); its backend answers a discovery
//! GET of the group/version with a 2xx (FailedDiscoveryCheck); then
//! Passed. Every APIService is checked every 30 seconds and whenever an
//! APIService, Service or Endpoints changes; failed discovery checks are
//! retried sooner, backing off to 30 seconds. Each replica checks for
//! itself and writes only a changed condition, by compare-and-swap.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use serde_json::{json, Value};

use crate::aggregator::RemoteApiService;
use crate::auth::UserInfo;
use crate::error::StatusReason;
use crate::object;
use crate::verbs::{ApiCore, ListOptions};

const CONTROLLER: &str = "apiservice-availability";
const RESYNC: Duration = Duration::from_secs(30);
/// The first retry of a failed discovery check; later ones double, up to
/// [`RESYNC`].
const FIRST_RETRY: Duration = Duration::from_millis(500);
/// Upstream's discovery check client timeout.
const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(5);

/// An Available condition's status, reason and message.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Availability {
    status: &'static str,
    reason: &'static str,
    message: String,
}

impl Availability {
    fn new(status: &'static str, reason: &'static str, message: String) -> Self {
        Self {
            status,
            reason,
            message,
        }
    }
}

pub async fn run(core: Arc<ApiCore>) {
    let system = UserInfo::system();
    let mut retry = FIRST_RETRY;
    loop {
        let rv = super::resynced(CONTROLLER, || async {
            Ok(core.current_revision().await?.to_string())
        })
        .await;
        let mut watches = Vec::new();
        for (group, resource) in [
            ("apiregistration.k8s.io", "apiservices"),
            ("", "services"),
            ("", "endpoints"),
        ] {
            let Ok(def) = core.resolve(group, "v1", resource) else {
                return;
            };
            match core
                .watch(&system, &def, None, None, &super::watch_from(rv.clone()))
                .await
            {
                Ok(events) => watches.push(events),
                Err(e) => super::watch_failed(CONTROLLER, &e).await,
            }
        }
        if watches.len() < 3 {
            continue;
        }
        let mut events = futures::stream::select_all(watches);
        loop {
            let failing = match check_all(&core).await {
                Ok(failing) => failing,
                Err(e) => {
                    tracing::warn!(controller = CONTROLLER, error = %e, "checking APIServices failed");
                    true
                }
            };
            let wait = if failing {
                let wait = retry;
                retry = (retry * 2).min(RESYNC);
                wait
            } else {
                retry = FIRST_RETRY;
                RESYNC
            };
            tokio::select! {
                event = events.next() => if event.is_none() { break },
                _ = tokio::time::sleep(wait) => {}
            }
        }
    }
}

/// Checks every APIService and writes the conditions that changed;
/// whether a discovery check failed.
async fn check_all(core: &ApiCore) -> crate::ApiResult<bool> {
    let def = core.resolve("apiregistration.k8s.io", "v1", "apiservices")?;
    let list = core
        .list(&UserInfo::system(), &def, None, &ListOptions::default())
        .await?;
    let mut failing = false;
    let mut remote_names = Vec::new();
    for api_service in &list.items {
        let remote = RemoteApiService::of(api_service);
        let availability = match &remote {
            None => Availability::new(
                "True",
                "Local",
                "Local APIServices are always available".to_string(),
            ),
            Some(remote) => check(core, remote).await,
        };
        failing |= availability.reason == "FailedDiscoveryCheck";
        if let Some(mut remote) = remote {
            // Discovery follows the availability just found, not the one
            // last written.
            remote.available = availability.status == "True";
            core.refresh_remote_discovery(&remote).await;
            remote_names.push(remote.name);
        }
        if let Some(updated) = with_condition(api_service, &availability) {
            super::write_status(core, &def, updated, "kube-apiserver").await?;
        }
    }
    core.retain_remote_discovery(&remote_names);
    Ok(failing)
}

/// The APIService with its Available condition set, if that changes it;
/// the transition time moves only when the status does.
fn with_condition(api_service: &Value, availability: &Availability) -> Option<Value> {
    let conditions = object::items_at(api_service, "/status/conditions");
    let current = conditions
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some("Available"));
    let text = |c: &Value, key: &str| c.get(key).and_then(Value::as_str).unwrap_or("").to_string();
    if let Some(current) = current {
        if text(current, "status") == availability.status
            && text(current, "reason") == availability.reason
            && text(current, "message") == availability.message
        {
            return None;
        }
    }
    let transition = match current {
        Some(current) if text(current, "status") == availability.status => {
            current.get("lastTransitionTime").cloned()
        }
        _ => None,
    }
    .unwrap_or_else(|| json!(object::now_timestamp()));
    let condition = json!({
        "type": "Available",
        "status": availability.status,
        "lastTransitionTime": transition,
        "reason": availability.reason,
        "message": availability.message,
    });
    let mut conditions: Vec<Value> = conditions.to_vec();
    match conditions
        .iter_mut()
        .find(|c| c.get("type").and_then(Value::as_str) == Some("Available"))
    {
        Some(slot) => *slot = condition,
        None => conditions.push(condition),
    }
    let mut updated = api_service.clone();
    updated["status"]["conditions"] = Value::Array(conditions);
    Some(updated)
}

/// A remote APIService's availability, checked as upstream checks it.
async fn check(core: &ApiCore, api_service: &RemoteApiService) -> Availability {
    let system = UserInfo::system();
    let (namespace, name) = (&api_service.service_namespace, &api_service.service_name);
    let get = |resource: &'static str| {
        let system = &system;
        async move {
            let def = core.resolve("", "v1", resource)?;
            core.get(system, &def, Some(namespace), name, "").await
        }
    };
    let service = match get("services").await {
        Ok(service) => service,
        Err(e) if e.reason == StatusReason::NotFound => {
            return Availability::new(
                "False",
                "ServiceNotFound",
                format!("service/{name} in \"{namespace}\" is not present"),
            )
        }
        Err(e) => {
            return Availability::new(
                "Unknown",
                "ServiceAccessError",
                format!("service/{name} in \"{namespace}\" cannot be checked due to: {e}"),
            )
        }
    };
    let cluster_ip = service
        .pointer("/spec/type")
        .and_then(Value::as_str)
        .is_none_or(|t| t == "ClusterIP");
    if cluster_ip {
        let Some(port) = crate::aggregator::service_port(&service, api_service.port) else {
            return Availability::new(
                "False",
                "ServicePortError",
                format!(
                    "service/{name} in \"{namespace}\" is not listening on port {}",
                    api_service.port
                ),
            );
        };
        let port_name = port.get("name").and_then(Value::as_str).unwrap_or("");
        let endpoints = match get("endpoints").await {
            Ok(endpoints) => endpoints,
            Err(e) if e.reason == StatusReason::NotFound => {
                return Availability::new(
                    "False",
                    "EndpointsNotFound",
                    format!("cannot find endpoints for service/{name} in \"{namespace}\""),
                )
            }
            Err(e) => {
                return Availability::new(
                    "Unknown",
                    "EndpointsAccessError",
                    format!("service/{name} in \"{namespace}\" cannot be checked due to: {e}"),
                )
            }
        };
        if crate::aggregator::endpoint_addresses(&endpoints, port_name).is_empty() {
            return Availability::new(
                "False",
                "MissingEndpoints",
                format!(
                    "endpoints for service/{name} in \"{namespace}\" have no addresses with port name \"{port_name}\""
                ),
            );
        }
    }
    let path = if api_service.group.is_empty() {
        format!("/api/{}", api_service.version)
    } else {
        format!("/apis/{}/{}", api_service.group, api_service.version)
    };
    let answer = core
        .backend_get(
            api_service,
            &path,
            "application/json",
            None,
            DISCOVERY_TIMEOUT,
        )
        .await;
    match answer {
        Ok(answer) if answer.status.is_success() => {
            Availability::new("True", "Passed", "all checks passed".to_string())
        }
        Ok(crate::aggregator::BackendAnswer { url, status, .. }) => Availability::new(
            "False",
            "FailedDiscoveryCheck",
            format!(
                "failing or missing response from {url}: bad status from {url}: {}",
                status.as_u16()
            ),
        ),
        Err(crate::aggregator::ProbeError::Unreachable { url, error }) => Availability::new(
            "False",
            "FailedDiscoveryCheck",
            format!("failing or missing response from {url}: {error}"),
        ),
        Err(crate::aggregator::ProbeError::Unroutable(error)) => {
            Availability::new("False", "FailedDiscoveryCheck", error)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transition_time_moves_only_with_the_status() {
        let api_service = json!({"status": {"conditions": [{
            "type": "Available", "status": "False", "lastTransitionTime": "2026-01-01T00:00:00Z",
            "reason": "ServiceNotFound", "message": "service/x in \"y\" is not present"}]}});
        let same = Availability::new(
            "False",
            "ServiceNotFound",
            "service/x in \"y\" is not present".into(),
        );
        assert!(with_condition(&api_service, &same).is_none());
        let other_reason = Availability::new("False", "MissingEndpoints", "m".into());
        let updated = with_condition(&api_service, &other_reason).unwrap();
        assert_eq!(
            updated.pointer("/status/conditions/0/lastTransitionTime"),
            Some(&json!("2026-01-01T00:00:00Z"))
        );
        let passed = Availability::new("True", "Passed", "all checks passed".into());
        let updated = with_condition(&api_service, &passed).unwrap();
        assert_ne!(
            updated.pointer("/status/conditions/0/lastTransitionTime"),
            Some(&json!("2026-01-01T00:00:00Z"))
        );
        assert_eq!(
            updated.pointer("/status/conditions/0/reason"),
            Some(&json!("Passed"))
        );
    }
}
