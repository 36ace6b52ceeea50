//! Requests for a group/version an APIService hands to an extension API
//! server, as kube-aggregator's proxy handler answers them: authorized
//! here as the request they are, then forwarded (the core's
//! `ApiCore::forward`) and streamed back; plain-text errors, as upstream
//! writes them, when the backend is not available or cannot be reached.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use capstan_core::aggregator::{ProxyBody, RemoteApiService};
use capstan_core::auth::UserInfo;
use capstan_core::error::ApiError;
use capstan_core::registry::ServedBy;
use serde_json::{json, Value};
use std::sync::Arc;

use crate::request_info::{ApiPath, ResourcePath};
use crate::{query_flag, verb_of_method, FacadeState};
use capstan_core::auth::{AccessRequest, ResourceAttributes};

/// Response headers that describe the hop to the backend, not the answer.
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// An error as Go's http.Error writes it.
fn plain_error(status: StatusCode, text: &str) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        format!("{text}\n"),
    )
        .into_response()
}

/// The group/version a path addresses, when an API group's (not /api).
fn group_version(api_path: &ApiPath) -> Option<(&str, &str)> {
    let (group, version) = match api_path {
        ApiPath::ResourceList { group, version } => (group, version),
        ApiPath::Resource(r) => (&r.group, &r.version),
        _ => return None,
    };
    (!group.is_empty()).then_some((group.as_str(), version.as_str()))
}

/// The verb upstream's RequestInfo gives a resource request.
fn resource_verb(method: &Method, target: &ResourcePath, query: &str) -> &'static str {
    let watch = query_flag(query, "watch");
    match *method {
        Method::GET | Method::HEAD if watch => "watch",
        Method::GET | Method::HEAD if target.name.is_none() => "list",
        Method::GET | Method::HEAD => "get",
        Method::POST => "create",
        Method::PUT => "update",
        Method::PATCH => "patch",
        Method::DELETE if target.name.is_none() => "deletecollection",
        Method::DELETE => "delete",
        _ => "",
    }
}

/// The remote APIService that serves the path, if one does.
pub(super) async fn remote_for(
    state: &FacadeState,
    api_path: &ApiPath,
) -> Result<Option<RemoteApiService>, ApiError> {
    let Some((group, version)) = group_version(api_path) else {
        return Ok(None);
    };
    match state.core.registry.snapshot().served_by(group, version) {
        Some(ServedBy::BuiltIn | ServedBy::Custom) => Ok(None),
        // Unknown here may be an APIService this replica's registry has
        // not heard of yet: its watch cache decides.
        Some(ServedBy::Proxied) | None => state.core.remote_api_service(group, version).await,
    }
}

/// Authorizes `req` as the request it is and forwards it to `remote`.
pub(super) async fn proxy(
    state: &FacadeState,
    user: &UserInfo,
    remote: &RemoteApiService,
    api_path: &ApiPath,
    req: Request,
) -> Result<Response, ApiError> {
    let path = req.uri().path().to_string();
    match api_path {
        ApiPath::Resource(target) => {
            let query = req.uri().query().unwrap_or("");
            let attributes = ResourceAttributes {
                verb: resource_verb(req.method(), target, query),
                group: &target.group,
                resource: &target.resource,
                subresource: target.subresource.as_deref(),
                namespace: target.namespace.as_deref(),
                name: target.name.as_deref(),
            };
            state
                .core
                .authorize_request(user, &AccessRequest::Resource(&attributes))
                .await?;
        }
        _ => {
            state
                .core
                .authorize_path(user, &verb_of_method(req.method()), &path)
                .await?
        }
    }
    if !remote.available {
        return Ok(plain_error(
            StatusCode::SERVICE_UNAVAILABLE,
            "service unavailable",
        ));
    }
    let mut req = req;
    let client_upgrade = hyper::upgrade::on(&mut req);
    let (parts, body) = req.into_parts();
    use http_body_util::BodyExt;
    let body: ProxyBody = body
        .map_err(|e| Box::new(e) as Box<dyn std::error::Error + Send + Sync>)
        .boxed_unsync();
    let answer = state
        .core
        .forward(remote, user, http::Request::from_parts(parts, body))
        .await;
    let mut response = match answer {
        Ok(response) => response,
        Err(e) => {
            tracing::debug!(api_service = %remote.name, error = %e, "proxying failed");
            return Ok(plain_error(StatusCode::SERVICE_UNAVAILABLE, &e.to_string()));
        }
    };
    if response.status() == StatusCode::SWITCHING_PROTOCOLS {
        return Ok(crate::connect::spliced(client_upgrade, &mut response));
    }
    if response.status().is_redirection() && response.headers().contains_key(header::LOCATION) {
        return Ok(plain_error(
            StatusCode::BAD_GATEWAY,
            "the backend attempted to redirect this request, which is not permitted",
        ));
    }
    let (mut parts, body) = response.into_parts();
    for name in HOP_BY_HOP {
        parts.headers.remove(*name);
    }
    Ok(Response::from_parts(parts, Body::new(body)))
}

/// Upstream's ordering of APIServices in discovery: by group priority
/// (highest first), then name; a group's versions by version priority.
fn by_priority(remote: &mut [RemoteApiService]) {
    remote.sort_by(|a, b| {
        b.group_priority_minimum
            .cmp(&a.group_priority_minimum)
            .then_with(|| a.name.cmp(&b.name))
    });
}

/// Where a group goes among all of `/apis`: upstream lists groups in the
/// order of their first APIService by (groupPriorityMinimum descending,
/// `<version>.<group>` name).
type GroupOrder = (std::cmp::Reverse<i64>, String);

fn group_order<'a>(group: &str, versions: impl Iterator<Item = (&'a str, i64)>) -> GroupOrder {
    versions
        .map(|(version, priority)| (std::cmp::Reverse(priority), format!("{version}.{group}")))
        .min()
        .unwrap_or_else(|| (std::cmp::Reverse(0), group.to_string()))
}

/// A local group's place, from the versions it lists (`groupVersion`
/// entries, or aggregated discovery's `version`s).
fn local_group_order(group: &Value) -> GroupOrder {
    let name = group
        .get("name")
        .or_else(|| group.pointer("/metadata/name"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let versions: Vec<&str> = group
        .get("versions")
        .and_then(Value::as_array)
        .map(|versions| {
            versions
                .iter()
                .filter_map(|v| v.get("version")?.as_str())
                .collect()
        })
        .unwrap_or_default();
    group_order(
        name,
        versions.into_iter().map(|version| {
            (
                version,
                capstan_core::controllers::api_services::local_priorities(name, version).0,
            )
        }),
    )
}

/// Puts `groups` (local ones and those added for remote APIServices) in
/// upstream's order; `order_of_remote` places the remote ones.
fn interleave(
    groups: &mut [Value],
    order_of_remote: &std::collections::BTreeMap<String, GroupOrder>,
) {
    groups.sort_by_cached_key(|group| {
        let name = group
            .get("name")
            .or_else(|| group.pointer("/metadata/name"))
            .and_then(Value::as_str)
            .unwrap_or("");
        order_of_remote
            .get(name)
            .cloned()
            .unwrap_or_else(|| local_group_order(group))
    });
}

fn remote_orders<'a>(
    services: impl Iterator<Item = (&'a str, &'a str, i64)>,
) -> std::collections::BTreeMap<String, GroupOrder> {
    let mut orders: std::collections::BTreeMap<String, GroupOrder> = Default::default();
    for (group, version, priority) in services {
        let order = group_order(group, std::iter::once((version, priority)));
        let entry = orders
            .entry(group.to_string())
            .or_insert_with(|| order.clone());
        if order < *entry {
            *entry = order;
        }
    }
    orders
}

/// The group list of `/apis` with the remote groups added, all in
/// upstream's priority order.
pub(super) fn interleaved_group_list(
    mut list: Value,
    remote: Vec<RemoteApiService>,
    local: &capstan_core::discovery::DiscoveryDocuments,
) -> Value {
    let orders = remote_orders(remote.iter().map(|s| {
        (
            s.group.as_str(),
            s.version.as_str(),
            s.group_priority_minimum,
        )
    }));
    if let Some(groups) = list.get_mut("groups").and_then(Value::as_array_mut) {
        groups.extend(remote_groups(remote, local));
        interleave(groups, &orders);
    }
    list
}

/// The remote groups as `APIGroup`s, in upstream's order, each with its
/// versions by priority and the first of them preferred.
pub(super) fn remote_groups(
    mut remote: Vec<RemoteApiService>,
    local: &capstan_core::discovery::DiscoveryDocuments,
) -> Vec<Value> {
    by_priority(&mut remote);
    let mut groups: Vec<(String, Vec<&RemoteApiService>)> = Vec::new();
    for service in &remote {
        if local.group(&service.group).is_some() {
            continue;
        }
        match groups.iter_mut().find(|(name, _)| *name == service.group) {
            Some((_, versions)) => versions.push(service),
            None => groups.push((service.group.clone(), vec![service])),
        }
    }
    groups
        .into_iter()
        .map(|(name, mut versions)| {
            versions.sort_by_key(|s| std::cmp::Reverse(s.version_priority));
            let versions: Vec<Value> = versions
                .iter()
                .map(|s| json!({"groupVersion": format!("{}/{}", s.group, s.version), "version": s.version}))
                .collect();
            json!({"name": name, "versions": versions, "preferredVersion": versions[0]})
        })
        .collect()
}

/// The aggregated `/apis` document with the remote group/versions added:
/// each backend's resources, or none and Stale when it failed; all groups
/// in upstream's priority order.
pub(super) fn merged_aggregated(
    local: &capstan_core::discovery::DiscoveryDocuments,
    mut remote: Vec<capstan_core::aggregator::RemoteVersion>,
) -> Value {
    remote.sort_by(|a, b| {
        b.group_priority_minimum
            .cmp(&a.group_priority_minimum)
            .then_with(|| a.group.cmp(&b.group))
            .then_with(|| b.version_priority.cmp(&a.version_priority))
    });
    let orders = remote_orders(remote.iter().map(|v| {
        (
            v.group.as_str(),
            v.version.as_str(),
            v.group_priority_minimum,
        )
    }));
    let mut merged = local.aggregated_groups.clone();
    let Some(items) = merged.get_mut("items").and_then(Value::as_array_mut) else {
        return merged;
    };
    for version in remote {
        if local.group(&version.group).is_some() {
            continue;
        }
        let entry = match &version.resources {
            Some(resources) => {
                json!({"version": version.version, "resources": resources, "freshness": "Current"})
            }
            None => json!({"version": version.version, "freshness": "Stale"}),
        };
        let existing = items.iter_mut().find(|item| {
            item.pointer("/metadata/name").and_then(Value::as_str) == Some(version.group.as_str())
        });
        match existing {
            Some(item) => {
                if let Some(versions) = item.get_mut("versions").and_then(Value::as_array_mut) {
                    versions.push(entry);
                }
            }
            None => items.push(json!({
                "metadata": {"name": version.group, "creationTimestamp": null},
                "versions": [entry],
            })),
        }
    }
    interleave(items, &orders);
    merged
}

/// A merged OpenAPI v3 index and what it was made from: the local
/// documents (by address: they are rebuilt whole when the registry
/// changes) and the available remote group/versions.
pub struct MergedIndex {
    local: std::sync::Weak<capstan_core::openapi::OpenApiDocuments>,
    remote: Vec<(String, String)>,
    index: Arc<[u8]>,
}

/// The merged index for these documents and APIServices, made again only
/// when either changed.
pub(super) fn cached_v3_index(
    cache: &std::sync::Mutex<Option<MergedIndex>>,
    docs: &Arc<capstan_core::openapi::OpenApiDocuments>,
    remote: &[RemoteApiService],
) -> Arc<[u8]> {
    // A Weak keeps the documents' allocation, so no later build can reuse
    // its address.
    let local = Arc::downgrade(docs);
    let served: Vec<(String, String)> = remote
        .iter()
        .filter(|s| s.available && !s.group.is_empty())
        .map(|s| (s.group.clone(), s.version.clone()))
        .collect();
    let mut cache = cache.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(merged) = cache
        .as_ref()
        .filter(|m| m.local.ptr_eq(&local) && m.remote == served)
    {
        return Arc::clone(&merged.index);
    }
    let index: Arc<[u8]> = v3_index_with(docs.v3_index(), remote).into();
    *cache = Some(MergedIndex {
        local,
        remote: served,
        index: Arc::clone(&index),
    });
    index
}

/// How long a merged v2 document is served before the backends' are
/// fetched again (kube-aggregator downloads them once a minute).
const MERGED_V2_LIFETIME: std::time::Duration = std::time::Duration::from_secs(60);

/// The v2 document merged with the available backends' and what it was
/// made from.
pub struct MergedV2 {
    local: std::sync::Weak<capstan_core::openapi::OpenApiDocuments>,
    remote: Vec<(String, String)>,
    made: std::time::Instant,
    json: Arc<[u8]>,
    protobuf: Arc<[u8]>,
}

/// `/openapi/v2` with each available backend's paths merged in (JSON and
/// protobuf), or None when no backend is available. A backend that does
/// not answer is left out until the next merge.
pub(super) async fn merged_v2(
    state: &FacadeState,
    docs: &Arc<capstan_core::openapi::OpenApiDocuments>,
    remote: &[RemoteApiService],
) -> Option<(Arc<[u8]>, Arc<[u8]>)> {
    let mut available: Vec<&RemoteApiService> = remote
        .iter()
        .filter(|s| s.available && !s.group.is_empty())
        .collect();
    if available.is_empty() {
        return None;
    }
    available.sort_by(|a, b| a.name.cmp(&b.name));
    let served: Vec<(String, String)> = available
        .iter()
        .map(|s| (s.group.clone(), s.version.clone()))
        .collect();
    let local = Arc::downgrade(docs);
    let mut cache = state.merged_v2.lock().await;
    if let Some(merged) = cache.as_ref().filter(|m| {
        m.local.ptr_eq(&local) && m.remote == served && m.made.elapsed() < MERGED_V2_LIFETIME
    }) {
        return Some((Arc::clone(&merged.json), Arc::clone(&merged.protobuf)));
    }
    let mut fetched = Vec::new();
    for service in &available {
        match state.core.backend_document(service, "/openapi/v2").await {
            Ok(document) => {
                fetched.push((service.group.clone(), service.version.clone(), document))
            }
            Err(e) => {
                tracing::debug!(apiservice = %service.name, error = %e, "fetching a backend's OpenAPI v2 failed")
            }
        }
    }
    let docs_for_merge = Arc::clone(docs);
    let merged = tokio::task::spawn_blocking(move || {
        let backends: Vec<capstan_core::openapi::BackendDocument<'_>> = fetched
            .iter()
            .map(
                |(group, version, document)| capstan_core::openapi::BackendDocument {
                    group,
                    version,
                    document,
                },
            )
            .collect();
        capstan_core::openapi::merge_v2(docs_for_merge.v2()?, &backends)
    })
    .await;
    let (json, protobuf) = match merged {
        Ok(Ok(merged)) => merged,
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "merging the backends' OpenAPI v2 failed");
            return None;
        }
        Err(e) => {
            tracing::warn!(error = %e, "merging the backends' OpenAPI v2 stopped");
            return None;
        }
    };
    let merged = MergedV2 {
        local,
        remote: served,
        made: std::time::Instant::now(),
        json: json.into(),
        protobuf: protobuf.into(),
    };
    let answer = (Arc::clone(&merged.json), Arc::clone(&merged.protobuf));
    *cache = Some(merged);
    Some(answer)
}

/// The OpenAPI v3 index with each remote group/version the backend
/// serves a document for, at the path Capstan answers it on.
pub(super) fn v3_index_with(local: &[u8], remote: &[RemoteApiService]) -> Vec<u8> {
    let mut index: Value = serde_json::from_slice(local).unwrap_or_else(|_| json!({"paths": {}}));
    if let Some(paths) = index.get_mut("paths").and_then(Value::as_object_mut) {
        for service in remote.iter().filter(|s| s.available && !s.group.is_empty()) {
            let key = format!("apis/{}/{}", service.group, service.version);
            if !paths.contains_key(&key) {
                let url = json!({"serverRelativeURL": format!("/openapi/v3/{key}")});
                paths.insert(key, url);
            }
        }
    }
    serde_json::to_vec(&index).unwrap_or_default()
}

/// `/openapi/v3/<gv>` of a remote group/version: the backend's own
/// document, fetched as Capstan fetches its discovery.
pub(super) async fn remote_openapi(state: &FacadeState, gv: &str) -> Result<Response, ApiError> {
    let remote = match gv.strip_prefix("apis/").and_then(|gv| gv.split_once('/')) {
        Some((group, version)) => state.core.remote_api_service(group, version).await?,
        None => None,
    };
    let Some(remote) = remote else {
        return Err(crate::not_found());
    };
    if !remote.available {
        return Ok(plain_error(
            StatusCode::SERVICE_UNAVAILABLE,
            "service unavailable",
        ));
    }
    let document = state
        .core
        .backend_document(&remote, &format!("/openapi/v3/{gv}"))
        .await?;
    Ok((
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        document,
    )
        .into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn service(group: &str, version: &str, priority: i64, available: bool) -> RemoteApiService {
        RemoteApiService {
            name: format!("{version}.{group}"),
            group: group.to_string(),
            version: version.to_string(),
            service_namespace: "ext".to_string(),
            service_name: "api".to_string(),
            port: 443,
            ca_bundle: Vec::new(),
            insecure_skip_tls_verify: true,
            group_priority_minimum: priority,
            version_priority: 15,
            available,
        }
    }

    #[test]
    fn the_merged_index_is_made_again_only_when_its_sources_change() {
        let docs = Arc::new(
            capstan_core::openapi::OpenApiDocuments::for_registry(
                &capstan_core::registry::Registry::builtin(),
            )
            .expect("documents"),
        );
        let cache = std::sync::Mutex::new(None);
        let remote = vec![service("wardle.example.com", "v1alpha1", 1000, true)];
        let first = cached_v3_index(&cache, &docs, &remote);
        let index: Value = serde_json::from_slice(&first).expect("JSON");
        assert_eq!(
            index["paths"]["apis/wardle.example.com/v1alpha1"]["serverRelativeURL"],
            "/openapi/v3/apis/wardle.example.com/v1alpha1"
        );
        assert!(Arc::ptr_eq(
            &first,
            &cached_v3_index(&cache, &docs, &remote)
        ));
        let unavailable = vec![service("wardle.example.com", "v1alpha1", 1000, false)];
        let without = cached_v3_index(&cache, &docs, &unavailable);
        assert!(!Arc::ptr_eq(&first, &without));
        let index: Value = serde_json::from_slice(&without).expect("JSON");
        assert!(index["paths"]
            .get("apis/wardle.example.com/v1alpha1")
            .is_none());
    }

    #[test]
    fn remote_groups_take_their_place_by_priority_then_name() {
        let orders = remote_orders(
            [
                ("wardle.example.com", "v1alpha1", 1000),
                ("metrics.k8s.io", "v1beta1", 100),
            ]
            .into_iter(),
        );
        let mut groups = vec![
            json!({"name": "apps", "versions": [{"groupVersion": "apps/v1", "version": "v1"}]}),
            json!({"name": "things.example.com", "versions": [{"version": "v1beta1"}]}),
            json!({"name": "metrics.k8s.io", "versions": []}),
            json!({"name": "wardle.example.com", "versions": []}),
        ];
        interleave(&mut groups, &orders);
        let names: Vec<&str> = groups.iter().filter_map(|g| g["name"].as_str()).collect();
        assert_eq!(
            names,
            [
                "apps",
                "wardle.example.com",
                "things.example.com",
                "metrics.k8s.io"
            ]
        );
    }
}
