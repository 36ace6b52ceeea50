//! Namespace lifecycle, as upstream's namespace controller: a deleted
//! namespace is Terminating (creates in it are refused by the core), its
//! contents are deleted, and once nothing is left its "kubernetes" finalizer
//! is removed, which completes the delete.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use serde_json::Value;

use crate::auth::UserInfo;
use crate::object;
use crate::verbs::ApiCore;
use crate::watch::WatchOptions;

/// How often namespaces still waiting on content are looked at again.
const RESYNC: Duration = Duration::from_secs(2);

pub async fn run(core: Arc<ApiCore>) {
    let system = UserInfo::system();
    loop {
        if let Err(e) = reconcile_all(&core).await {
            tracing::warn!(error = %e, "namespace controller resync failed");
        }
        let Ok(namespaces) = core.resolve("", "v1", "namespaces") else {
            return;
        };
        let rv = match core.current_revision().await {
            Ok(rv) => rv.to_string(),
            Err(_) => {
                tokio::time::sleep(RESYNC).await;
                continue;
            }
        };
        let opts = WatchOptions {
            resource_version: rv,
            timeout: Some(Duration::from_secs(300)),
            ..Default::default()
        };
        let mut events = match core.watch(&system, &namespaces, None, None, &opts).await {
            Ok(events) => events,
            Err(e) => {
                tracing::warn!(error = %e, "namespace controller watch failed");
                tokio::time::sleep(RESYNC).await;
                continue;
            }
        };
        // Between events, a periodic resync finishes namespaces whose
        // contents were still going away (objects with finalizers).
        loop {
            tokio::select! {
                ev = events.next() => match ev {
                    Some(ev) if terminating(&ev.object) => {
                        if let Err(e) = finalize(&core, object::name(&ev.object)).await {
                            tracing::warn!(error = %e, "namespace cleanup failed");
                        }
                    }
                    Some(_) => {}
                    None => break,
                },
                _ = tokio::time::sleep(RESYNC) => {
                    if let Err(e) = reconcile_all(&core).await {
                        tracing::warn!(error = %e, "namespace controller resync failed");
                    }
                }
            }
        }
    }
}

fn terminating(ns: &Value) -> bool {
    object::meta(ns).is_some_and(|m| m.contains_key("deletionTimestamp"))
}

async fn reconcile_all(core: &ApiCore) -> crate::ApiResult<()> {
    let list = super::all_namespaces(core).await?;
    for ns in list.items.iter().filter(|ns| terminating(ns)) {
        finalize(core, object::name(ns)).await?;
    }
    Ok(())
}

/// Deletes everything in `namespace`; when nothing is left, releases the
/// namespace's finalizer so its delete completes.
async fn finalize(core: &ApiCore, namespace: &str) -> crate::ApiResult<()> {
    let mut remaining = false;
    // Kinds served at several versions are stored once: delete through one.
    let served = core.registry.snapshot();
    for def in served
        .resources()
        .iter()
        .filter(|r| r.namespaced && r.is_stored() && !r.converts_for_storage())
    {
        remaining |= super::delete_all(core, def, Some(namespace)).await?;
    }
    if !remaining && core.release_namespace_finalizer(namespace).await? {
        tracing::info!(namespace, "namespace deleted");
    }
    Ok(())
}
