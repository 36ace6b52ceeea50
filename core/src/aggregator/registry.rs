//! The APIServices the aggregation layer serves, from their watch cache,
//! and where their backends are.

use std::sync::Arc;

use serde_json::Value;

use super::api_service::RemoteApiService;
use super::backend::{self, Location};
use crate::error::{ApiError, ApiResult};
use crate::verbs::ApiCore;
use crate::watch::cache::WatchCache;

const GROUP: &str = "apiregistration.k8s.io";

/// How long following the APIServices waits after failing to read them.
const FOLLOW_RETRY: std::time::Duration = std::time::Duration::from_secs(1);

impl ApiCore {
    /// The APIServices' watch cache and the key prefix they are under.
    async fn api_services_cache(&self) -> ApiResult<(Arc<WatchCache>, String)> {
        let def = self.resolve(GROUP, "v1", "apiservices")?;
        Ok((
            self.watch_cache(&def).await?,
            def.key_prefix(&self.prefix, None),
        ))
    }

    /// The APIServices with a `service` (remote ones; each CRD group's
    /// local APIService has none): only their trees are parsed and kept,
    /// not one per custom resource group.
    async fn remote_api_service_objects(&self) -> ApiResult<Vec<Arc<Value>>> {
        let (cache, prefix) = self.api_services_cache().await?;
        Ok(cache.list_mentioning(&prefix, "\"service\":{"))
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
            .remote_api_service_objects()
            .await?
            .iter()
            .filter_map(|object| RemoteApiService::of(object))
            .collect())
    }

    /// Keeps the registry's proxied group/versions those of the remote
    /// APIServices, on every replica, as kube-aggregator adds and removes
    /// a proxy handler for each APIService its informer hears of. Runs for
    /// as long as the server does.
    pub async fn follow_api_services(self: Arc<Self>) {
        loop {
            let (cache, prefix) = match self.api_services_cache().await {
                Ok(found) => found,
                Err(e) => {
                    tracing::warn!(error = %e, "reading APIServices failed");
                    tokio::time::sleep(FOLLOW_RETRY).await;
                    continue;
                }
            };
            let (_, _, mut watch) = cache.list_and_watch(&prefix);
            loop {
                let proxied = match self.remote_api_services().await {
                    Ok(remote) => remote
                        .into_iter()
                        .map(|service| (service.group, service.version))
                        .collect(),
                    Err(e) => {
                        tracing::warn!(error = %e, "reading APIServices failed");
                        tokio::time::sleep(FOLLOW_RETRY).await;
                        break;
                    }
                };
                if self.registry.set_proxied(proxied) {
                    tracing::debug!("proxied group/versions changed");
                }
                // Changes that arrive together are read in one list.
                if watch.live.recv().await.is_none() {
                    break;
                }
                while watch.live.try_recv().is_ok() {}
            }
        }
    }

    /// Where requests for `service` go now.
    pub async fn locate(&self, service: &RemoteApiService) -> Result<Location, ApiError> {
        backend::locate(self, service, self.aggregator_routing).await
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::auth::UserInfo;
    use crate::registry::ServedBy;
    use crate::verbs::WriteOptions;

    /// A remote APIService makes its group/version proxied in the
    /// registry, also one Capstan serves itself; a Local one does not; a
    /// deleted one gives the group/version back.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_registry_follows_the_remote_api_services() {
        let (_dir, core) = crate::testing::core_unshaped().await;
        let core = std::sync::Arc::new(core);
        tokio::spawn(core.clone().follow_api_services());
        let def = core
            .resolve("apiregistration.k8s.io", "v1", "apiservices")
            .expect("apiservices");
        let served_by =
            |group: &str, version: &str| core.registry.snapshot().served_by(group, version);
        assert_eq!(
            served_by("coordination.k8s.io", "v1"),
            Some(ServedBy::BuiltIn)
        );
        assert_eq!(served_by("wardle.example.com", "v1alpha1"), None);
        let api_service = |group: &str, version: &str, remote: bool| {
            let mut spec = json!({"group": group, "version": version,
                                  "groupPriorityMinimum": 100, "versionPriority": 10});
            if remote {
                spec["service"] = json!({"namespace": "ext", "name": "api", "port": 443});
                spec["insecureSkipTLSVerify"] = json!(true);
            }
            json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
                   "metadata": {"name": format!("{version}.{group}")}, "spec": spec})
        };
        let user = UserInfo::system();
        for (group, version, remote) in [
            ("wardle.example.com", "v1alpha1", true),
            ("coordination.k8s.io", "v1", true),
            ("local.example.com", "v1", false),
        ] {
            core.create(
                &user,
                &def,
                None,
                api_service(group, version, remote),
                &WriteOptions::default(),
            )
            .await
            .expect("created");
        }
        let until = |group: &'static str, version: &'static str, wanted: Option<ServedBy>| {
            let core = core.clone();
            async move {
                for _ in 0..200 {
                    if core.registry.snapshot().served_by(group, version) == wanted {
                        return;
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                }
                panic!("{version}.{group} is not served by {wanted:?}");
            }
        };
        until("wardle.example.com", "v1alpha1", Some(ServedBy::Proxied)).await;
        until("coordination.k8s.io", "v1", Some(ServedBy::Proxied)).await;
        assert_eq!(served_by("local.example.com", "v1"), None);
        let generation = core.registry.snapshot().generation();
        core.delete(
            &user,
            &def,
            None,
            "v1.coordination.k8s.io",
            &Default::default(),
        )
        .await
        .expect("deleted");
        until("coordination.k8s.io", "v1", Some(ServedBy::BuiltIn)).await;
        assert_eq!(
            served_by("wardle.example.com", "v1alpha1"),
            Some(ServedBy::Proxied)
        );
        assert_eq!(core.registry.snapshot().generation(), generation);
    }
}
