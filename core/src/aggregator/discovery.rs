//! What each remote APIService's backend serves, for aggregated discovery,
//! as kube-aggregator's discovery manager keeps it: the backend's own
//! aggregated `/apis` (revalidated with its ETag), or, from a backend
//! without one, its legacy `/apis/<group>/<version>` converted. A backend
//! that fails keeps its group/version listed, marked Stale and without
//! resources, so one broken extension server does not break discovery of
//! the rest. The cache is this replica's view of the backends, refreshed
//! by the availability controller.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{json, Value};

use super::api_service::RemoteApiService;
use crate::verbs::ApiCore;

/// The Accept header of the fetch: aggregated discovery, v2 then v2beta1.
const AGGREGATED_ACCEPT: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList";
/// Upstream's discovery fetch timeout.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);

/// One remote group/version as aggregated discovery lists it.
#[derive(Debug, Clone)]
pub struct RemoteVersion {
    pub group: String,
    pub version: String,
    pub group_priority_minimum: i64,
    pub version_priority: i64,
    /// Its resources (APIResourceDiscovery); None when the backend failed
    /// (Stale).
    pub resources: Option<Vec<Value>>,
}

#[derive(Default)]
pub(crate) struct RemoteDiscovery {
    /// By APIService name.
    versions: Mutex<HashMap<String, RemoteVersion>>,
    /// The last aggregated document and ETag of each backend, by the
    /// APIService that fetched it.
    documents: Mutex<HashMap<String, (String, Value)>>,
}

impl ApiCore {
    /// The remote group/versions aggregated discovery lists now.
    pub fn remote_discovery(&self) -> Vec<RemoteVersion> {
        let versions = self
            .remote_discovery
            .versions
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        versions.values().cloned().collect()
    }

    /// Keeps only these APIServices' entries (the others were deleted or
    /// became Local).
    pub(crate) fn retain_remote_discovery(&self, names: &[String]) {
        let keep = |name: &String| names.contains(name);
        self.remote_discovery
            .versions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|name, _| keep(name));
        self.remote_discovery
            .documents
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|name, _| keep(name));
    }

    /// Fetches what `service`'s backend serves for its group/version and
    /// records it (Stale, without resources, when that fails).
    pub(crate) async fn refresh_remote_discovery(&self, service: &RemoteApiService) {
        let resources = if service.available {
            match self.fetch_resources(service).await {
                Ok(resources) => Some(resources),
                Err(e) => {
                    tracing::debug!(api_service = %service.name, error = %e, "discovery fetch failed");
                    None
                }
            }
        } else {
            None
        };
        let entry = RemoteVersion {
            group: service.group.clone(),
            version: service.version.clone(),
            group_priority_minimum: service.group_priority_minimum,
            version_priority: service.version_priority,
            resources,
        };
        self.remote_discovery
            .versions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(service.name.clone(), entry);
    }

    async fn fetch_resources(&self, service: &RemoteApiService) -> Result<Vec<Value>, String> {
        let cached = self
            .remote_discovery
            .documents
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&service.name)
            .cloned();
        let etag = cached.as_ref().map(|(etag, _)| etag.as_str());
        let answer = self
            .backend_get(service, "/apis", AGGREGATED_ACCEPT, etag, FETCH_TIMEOUT)
            .await
            .map_err(|e| e.to_string())?;
        let document = match answer.status.as_u16() {
            304 => cached.map(|(_, document)| document),
            503 => {
                return Err(format!(
                    "service {} returned non-success response code: 503",
                    service.name
                ))
            }
            200 if answer.content_type.contains("as=APIGroupDiscoveryList") => {
                let document: Value = serde_json::from_slice(&answer.body)
                    .map_err(|e| format!("decoding aggregated discovery: {e}"))?;
                if let Some(etag) = answer.etag {
                    self.remote_discovery
                        .documents
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(service.name.clone(), (etag, document.clone()));
                }
                Some(document)
            }
            _ => None,
        };
        match document {
            Some(document) => Ok(versions_of(&document, &service.group, &service.version)),
            None => self.fetch_legacy(service).await,
        }
    }

    /// A backend without aggregated discovery: its APIResourceList.
    async fn fetch_legacy(&self, service: &RemoteApiService) -> Result<Vec<Value>, String> {
        let path = format!("/apis/{}/{}", service.group, service.version);
        let answer = self
            .backend_get(service, &path, "application/json", None, FETCH_TIMEOUT)
            .await
            .map_err(|e| e.to_string())?;
        if answer.status.as_u16() != 200 {
            return Err(format!(
                "failed to download legacy discovery for {}/{}: ResponseCode: {}",
                service.group,
                service.version,
                answer.status.as_u16()
            ));
        }
        let list: Value =
            serde_json::from_slice(&answer.body).map_err(|e| format!("decoding {path}: {e}"))?;
        Ok(converted(&list, &service.group, &service.version))
    }
}

/// The resources an aggregated document lists for `group`/`version`.
fn versions_of(document: &Value, group: &str, version: &str) -> Vec<Value> {
    crate::object::items_at(document, "/items")
        .iter()
        .filter(|item| item.pointer("/metadata/name").and_then(Value::as_str) == Some(group))
        .flat_map(|item| crate::object::items_at(item, "/versions").to_vec())
        .find(|v| v.get("version").and_then(Value::as_str) == Some(version))
        .and_then(|v| v.get("resources").and_then(Value::as_array).cloned())
        .unwrap_or_default()
}

/// An APIResourceList as aggregated discovery's resources, as upstream's
/// ConvertGroupVersionIntoToDiscovery does: subresources (`a/b`) attach to
/// their resource.
fn converted(list: &Value, group: &str, version: &str) -> Vec<Value> {
    let resources = crate::object::items_at(list, "/resources");
    let mut converted: Vec<Value> = Vec::new();
    for resource in resources {
        let name = resource.get("name").and_then(Value::as_str).unwrap_or("");
        let kind = resource.get("kind").cloned().unwrap_or(json!(""));
        let verbs = resource.get("verbs").cloned().unwrap_or(json!([]));
        let response_kind = json!({
            "group": resource.get("group").and_then(Value::as_str).unwrap_or(group),
            "version": resource.get("version").and_then(Value::as_str).unwrap_or(version),
            "kind": kind,
        });
        if let Some((parent, subresource)) = name.split_once('/') {
            let entry =
                json!({"subresource": subresource, "responseKind": response_kind, "verbs": verbs});
            if let Some(parent) = converted
                .iter_mut()
                .find(|r| r.get("resource").and_then(Value::as_str) == Some(parent))
            {
                match parent.get_mut("subresources").and_then(Value::as_array_mut) {
                    Some(list) => list.push(entry),
                    None => parent["subresources"] = json!([entry]),
                }
            }
            continue;
        }
        let namespaced = resource.get("namespaced") == Some(&Value::Bool(true));
        let mut entry = json!({
            "resource": name,
            "responseKind": response_kind,
            "scope": if namespaced { "Namespaced" } else { "Cluster" },
            "singularResource": resource.get("singularName").cloned().unwrap_or(json!("")),
            "verbs": verbs,
        });
        for key in ["shortNames", "categories"] {
            if let Some(value) = resource.get(key) {
                entry[key] = value.clone();
            }
        }
        converted.push(entry);
    }
    converted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_lists_convert_with_their_subresources() {
        let list = json!({"kind": "APIResourceList", "groupVersion": "metrics.k8s.io/v1beta1", "resources": [
            {"name": "pods", "singularName": "", "namespaced": true, "kind": "PodMetrics", "verbs": ["get", "list"]},
            {"name": "pods/status", "singularName": "", "namespaced": true, "kind": "PodMetrics", "verbs": ["get"]},
            {"name": "nodes", "singularName": "", "namespaced": false, "kind": "NodeMetrics", "verbs": ["get", "list"], "shortNames": ["nm"]},
        ]});
        let converted = converted(&list, "metrics.k8s.io", "v1beta1");
        assert_eq!(converted.len(), 2);
        assert_eq!(converted[0]["scope"], "Namespaced");
        assert_eq!(converted[0]["subresources"][0]["subresource"], "status");
        assert_eq!(converted[1]["responseKind"]["kind"], "NodeMetrics");
        assert_eq!(converted[1]["shortNames"], json!(["nm"]));
    }

    #[test]
    fn aggregated_documents_give_their_version() {
        let document = json!({"items": [{"metadata": {"name": "wardle.example.com"}, "versions": [
            {"version": "v1beta1", "resources": [{"resource": "fischers"}]},
            {"version": "v1alpha1", "resources": [{"resource": "flunders"}]},
        ]}]});
        let resources = versions_of(&document, "wardle.example.com", "v1alpha1");
        assert_eq!(resources, vec![json!({"resource": "flunders"})]);
        assert!(versions_of(&document, "other", "v1").is_empty());
    }
}
