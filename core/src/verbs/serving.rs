//! The watch caches of the served resources, following the registry as it changes.

use super::api_core::*;

impl ApiCore {
    /// The resource type's watch cache, once it has loaded.
    pub(crate) async fn watch_cache(
        &self,
        def: &ResourceDef,
    ) -> ApiResult<Arc<crate::watch::cache::WatchCache>> {
        let cache = self.cache_of(def);
        if !cache.wait_ready(CACHE_READY_TIMEOUT).await {
            return Err(ApiError::new(
                crate::error::StatusReason::ServiceUnavailable,
                format!("the watch cache for {} is not ready yet", def.resource),
            ));
        }
        Ok(cache)
    }

    /// Starts every resource type's watch cache (at start-up, so first
    /// requests do not wait for the initial lists).
    pub fn start_watch_caches(&self) {
        for def in self.registry.snapshot().resources() {
            self.start_watch_cache(def);
        }
    }

    pub(super) fn start_watch_cache(&self, def: &ResourceDef) {
        if def.is_stored() {
            self.cache_of(def);
        }
    }

    /// The resource type's watch cache, started if needed with the field
    /// indexes its kind asks for; it may still be loading.
    pub(crate) fn cache_of(&self, def: &ResourceDef) -> Arc<crate::watch::cache::WatchCache> {
        self.caches
            .for_prefix_indexed(&def.key_prefix(&self.prefix, None), || {
                def.kind_impl
                    .cache_indexes()
                    .iter()
                    .map(|field| crate::watch::field_index::FieldIndexSpec {
                        field: (*field).to_owned(),
                        absent: def.kind_impl.absent_field_value(field),
                    })
                    .collect()
            })
    }

    /// Serves `resources` from now on (replacing any of the same
    /// group/version/resource) and starts their watch caches. Discovery,
    /// OpenAPI and the controllers follow the registry on their own.
    pub fn add_resources(&self, resources: Vec<ResourceDef>) {
        let change = self.registry.add(resources);
        self.follow(&change);
    }

    /// Stops serving the named group/version/resources: requests for them
    /// are 404s from now on, and their watch caches stop with every
    /// watcher closed. Stored objects stay (as upstream keeps a removed
    /// CRD's objects until they are deleted).
    pub fn remove_resources(&self, resources: &[(String, String, String)]) {
        let change = self.registry.remove(resources);
        self.follow(&change);
    }

    pub(super) fn follow(&self, change: &crate::registry::RegistryChange) {
        let served = self.registry.snapshot();
        let still_stored = |prefix: &str| {
            served
                .resources()
                .iter()
                .any(|r| r.is_stored() && r.key_prefix(&self.prefix, None) == prefix)
        };
        for def in change.removed.iter().filter(|d| d.is_stored()) {
            let prefix = def.key_prefix(&self.prefix, None);
            if !still_stored(&prefix)
                || change
                    .added
                    .iter()
                    .any(|a| a.key_prefix(&self.prefix, None) == prefix)
            {
                self.caches.stop(&prefix);
            }
        }
        for def in &change.added {
            self.start_watch_cache(def);
        }
    }
}
