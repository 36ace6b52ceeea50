//! The APIServices the aggregation layer serves, from their watch cache,
//! and where their backends are.

use std::sync::Arc;

use serde_json::Value;

use super::api_service::RemoteApiService;
use super::backend::{self, Location};
use crate::error::{ApiError, ApiResult};
use crate::verbs::ApiCore;

const GROUP: &str = "apiregistration.k8s.io";

impl ApiCore {
    async fn api_service_objects(&self) -> ApiResult<Vec<Arc<Value>>> {
        let def = self.resolve(GROUP, "v1", "apiservices")?;
        let cache = self.watch_cache(&def).await?;
        let (items, _) = cache.list(&def.key_prefix(&self.prefix, None));
        Ok(items.into_iter().map(|(_, object)| object).collect())
    }

    /// The remote APIService for `group`/`version`, if one is registered.
    pub async fn remote_api_service(
        &self,
        group: &str,
        version: &str,
    ) -> ApiResult<Option<RemoteApiService>> {
        let def = self.resolve(GROUP, "v1", "apiservices")?;
        let cache = self.watch_cache(&def).await?;
        let key = def.key(&self.prefix, None, &format!("{version}.{group}"));
        Ok(cache
            .get(&key)
            .and_then(|object| RemoteApiService::of(&object)))
    }

    /// Every remote APIService, by name.
    pub async fn remote_api_services(&self) -> ApiResult<Vec<RemoteApiService>> {
        Ok(self
            .api_service_objects()
            .await?
            .iter()
            .filter_map(|object| RemoteApiService::of(object))
            .collect())
    }

    /// Where requests for `service` go now.
    pub async fn locate(&self, service: &RemoteApiService) -> Result<Location, ApiError> {
        backend::locate(self, service, self.aggregator_routing).await
    }
}
