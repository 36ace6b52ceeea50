//! The documents that describe the API: discovery (with ETags) and OpenAPI, both following the registry.

use super::*;

/// The OpenAPI documents of the resources served now, built on a blocking
/// thread (they take longer to generate than the rest of start-up
/// together) and again after the served resources change; requests for
/// them wait until they are ready.
pub struct LazyOpenApi {
    registry: Arc<RegistryHandle>,
    /// The registry generation being built or built, and its result.
    building: std::sync::Mutex<(u64, OpenApiBuild)>,
    /// Group-version documents kept across generations.
    cache: Arc<capstan_core::openapi::OpenApiCache>,
}

pub(super) type OpenApiDocuments = capstan_core::openapi::OpenApiDocuments;

pub(super) type OpenApiBuild =
    tokio::sync::watch::Receiver<Option<Result<Arc<OpenApiDocuments>, String>>>;

impl LazyOpenApi {
    /// Starts building the documents of the resources served now.
    pub fn spawn(registry: Arc<RegistryHandle>) -> Self {
        let served = registry.snapshot();
        let cache = Arc::new(capstan_core::openapi::OpenApiCache::default());
        let building = (served.generation(), Self::build(served, cache.clone()));
        Self {
            registry,
            building: std::sync::Mutex::new(building),
            cache,
        }
    }

    fn build(
        served: Arc<Registry>,
        cache: Arc<capstan_core::openapi::OpenApiCache>,
    ) -> OpenApiBuild {
        let (tx, rx) = tokio::sync::watch::channel(None);
        tokio::task::spawn_blocking(move || {
            let started = std::time::Instant::now();
            let built = OpenApiDocuments::for_registry_cached(&served, &cache)
                .map(Arc::new)
                .map_err(|e| {
                    tracing::error!(error = %e, "building the OpenAPI documents failed");
                    e.to_string()
                });
            tracing::debug!(
                ms = started.elapsed().as_millis() as u64,
                generation = served.generation(),
                "OpenAPI documents built"
            );
            let _ = tx.send(Some(built));
        });
        rx
    }

    /// The documents with their v2 form built, which is made on a blocking
    /// thread the first time a generation's is asked for.
    pub(crate) async fn get_with_v2(&self) -> Result<Arc<OpenApiDocuments>, ApiError> {
        let docs = self.get().await?;
        if !docs.v2_is_built() {
            let building = docs.clone();
            tokio::task::spawn_blocking(move || building.v2().map(|_| ()))
                .await
                .map_err(|_| ApiError::internal("the OpenAPI v2 builder stopped"))?
                .map_err(|e| ApiError::internal(format!("OpenAPI documents: {e}")))?;
        }
        Ok(docs)
    }

    pub(crate) async fn get(&self) -> Result<Arc<OpenApiDocuments>, ApiError> {
        let mut rx = {
            let served = self.registry.snapshot();
            let mut building = self.building.lock().unwrap_or_else(|p| p.into_inner());
            if building.0 != served.generation() {
                *building = (served.generation(), Self::build(served, self.cache.clone()));
            }
            building.1.clone()
        };
        let ready = rx
            .wait_for(Option::is_some)
            .await
            .map_err(|_| ApiError::internal("the OpenAPI builder stopped"))?;
        match ready.as_ref() {
            Some(Ok(docs)) => Ok(docs.clone()),
            Some(Err(e)) => Err(ApiError::internal(format!("OpenAPI documents: {e}"))),
            None => Err(ApiError::internal("the OpenAPI documents are not built")),
        }
    }
}

/// Discovery documents, for a caller the path is authorized for.
pub(super) fn discovery(
    state: &FacadeState,
    method: &Method,
    path: &str,
    headers: &HeaderMap,
    api_path: &ApiPath,
    mut remote: Vec<capstan_core::aggregator::RemoteApiService>,
) -> Result<Response, ApiError> {
    if *method != Method::GET {
        return Err(ApiError::new(
            StatusReason::MethodNotAllowed,
            format!(
                "the server does not allow this method on the requested resource ({method} {path})"
            ),
        ));
    }
    let aggregated_allowed = matches!(api_path, ApiPath::CoreVersions | ApiPath::Groups);
    let output = negotiation::negotiate_output(accept(headers).as_deref(), aggregated_allowed)?;
    let d = state.discovery.current();
    let aggregated = |document: &Value, etag: &str| {
        // Upstream's aggregated discovery: an ETag to revalidate with, and
        // 304 when the client's copy is current.
        let cached = headers
            .get(header::IF_NONE_MATCH)
            .is_some_and(|sent| sent.as_bytes() == etag.as_bytes());
        let mut resp = if cached {
            StatusCode::NOT_MODIFIED.into_response()
        } else {
            json_response(StatusCode::OK, document, AGGREGATED_CONTENT_TYPE)
        };
        let headers = resp.headers_mut();
        if let Ok(etag) = HeaderValue::from_str(etag) {
            headers.insert(header::ETAG, etag);
        }
        headers.insert(header::VARY, HeaderValue::from_static("Accept"));
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("public"));
        resp
    };
    let doc = match (api_path, output) {
        (ApiPath::CoreVersions, Output::AggregatedDiscovery) => {
            return Ok(aggregated(&d.aggregated_core, &d.aggregated_core_etag))
        }
        (ApiPath::Groups, Output::AggregatedDiscovery) => {
            let remote = state.core.remote_discovery();
            if remote.is_empty() {
                return Ok(aggregated(&d.aggregated_groups, &d.aggregated_groups_etag));
            }
            let merged = super::aggregation::merged_aggregated(&d, remote);
            let etag = capstan_core::discovery::etag(&merged);
            return Ok(aggregated(&merged, &etag));
        }
        (ApiPath::CoreVersions, _) => d.api_versions.clone(),
        (ApiPath::Groups, _) if remote.is_empty() => d.api_group_list.clone(),
        (ApiPath::Groups, _) => {
            super::aggregation::interleaved_group_list(d.api_group_list.clone(), remote, &d)
        }
        (ApiPath::Group(g), _) => match d.group(g) {
            Some(local) => local.clone(),
            None => {
                remote.retain(|service| service.group == *g);
                let mut group = super::aggregation::remote_groups(remote, &d)
                    .pop()
                    .ok_or_else(not_found)?;
                if let Some(fields) = group.as_object_mut() {
                    let mut document = serde_json::Map::new();
                    document.insert("kind".into(), json!("APIGroup"));
                    document.insert("apiVersion".into(), json!("v1"));
                    document.append(fields);
                    group = Value::Object(document);
                }
                group
            }
        },
        (ApiPath::ResourceList { group, version }, _) => d
            .resource_list(group, version)
            .cloned()
            .ok_or_else(not_found)?,
        (ApiPath::Resource(_), _) => return Err(not_found()),
    };
    let output = output.without_object_views();
    Ok(encode(StatusCode::OK, output, &doc, &[]))
}
