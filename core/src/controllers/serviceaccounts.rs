//! The `default` ServiceAccount of every namespace, as upstream's
//! serviceaccount controller (kube-controller-manager) keeps it: created
//! with each active namespace, and again when someone deletes it.

use std::sync::Arc;

use futures::StreamExt;
use serde_json::{json, Value};

use crate::auth::UserInfo;
use crate::error::StatusReason;
use crate::object;
use crate::verbs::{ApiCore, WriteOptions};
use crate::watch::{EventType, WatchOptions};

const CONTROLLER: &str = "serviceaccount";
const DEFAULT_ACCOUNT: &str = "default";

pub async fn run(core: Arc<ApiCore>) {
    let system = UserInfo::system();
    let (Ok(namespaces), Ok(accounts)) = (
        core.resolve("", "v1", "namespaces"),
        core.resolve("", "v1", "serviceaccounts"),
    ) else {
        return;
    };
    loop {
        let rv = super::resynced(CONTROLLER, || ensure_all(&core)).await;
        let opts = super::watch_from(rv);
        let default_accounts = WatchOptions {
            field_selector: format!("metadata.name={DEFAULT_ACCOUNT}"),
            ..opts.clone()
        };
        let watches = futures::future::try_join(
            core.watch(&system, &namespaces, None, None, &opts),
            core.watch(&system, &accounts, None, None, &default_accounts),
        )
        .await;
        let (namespace_events, account_events) = match watches {
            Ok(watches) => watches,
            Err(e) => {
                super::watch_failed(CONTROLLER, &e).await;
                continue;
            }
        };
        let mut events = futures::stream::select(namespace_events, account_events);
        while let Some(event) = events.next().await {
            let (namespace, deleted) = match (event.event_type, kind(&event.object)) {
                (EventType::Added | EventType::Modified, "Namespace") => {
                    (object::name(&event.object), false)
                }
                (EventType::Deleted, "ServiceAccount") => (object::namespace(&event.object), true),
                (EventType::Error, _) => break,
                _ => continue,
            };
            if let Err(e) = ensure(&core, namespace, !deleted).await {
                tracing::warn!(namespace, error = %e, "creating the default service account failed");
            }
        }
    }
}

fn kind(object: &Value) -> &str {
    object.get("kind").and_then(Value::as_str).unwrap_or("")
}

/// Ensures every namespace has its account; the resourceVersion of the
/// namespace list it worked from.
async fn ensure_all(core: &ApiCore) -> crate::ApiResult<String> {
    let list = super::all_namespaces(core).await?;
    for namespace in &list.items {
        ensure(core, object::name(namespace), true).await?;
    }
    Ok(list.resource_version)
}

/// Creates the namespace's `default` account unless it exists (by the
/// watch cache's copy when `trust_cache`; storage decides in any case);
/// nothing in a namespace that is going away (the core refuses creates).
async fn ensure(core: &ApiCore, namespace: &str, trust_cache: bool) -> crate::ApiResult<()> {
    let accounts = core.resolve("", "v1", "serviceaccounts")?;
    if trust_cache
        && core
            .cached_copy(&accounts, Some(namespace), DEFAULT_ACCOUNT)
            .is_some()
    {
        return Ok(());
    }
    let account = json!({
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": DEFAULT_ACCOUNT},
    });
    let opts = WriteOptions {
        field_manager: "kube-controller-manager".to_string(),
        ..Default::default()
    };
    match core
        .create(
            &UserInfo::system(),
            &accounts,
            Some(namespace),
            account,
            &opts,
        )
        .await
    {
        Ok(_) => Ok(()),
        Err(e) if e.reason == StatusReason::AlreadyExists => Ok(()),
        // A namespace being deleted, or gone meanwhile.
        Err(e) if matches!(e.reason, StatusReason::Forbidden | StatusReason::NotFound) => Ok(()),
        Err(e) => Err(e),
    }
}
