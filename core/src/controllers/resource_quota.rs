//! Every ResourceQuota's status, as upstream's resourcequota controller
//! (kube-controller-manager) keeps it: `status.hard` from `spec.hard`, and
//! `status.used` counted from what the namespace holds, when a quota is
//! created or changed, when tracked objects go away (replenishment), and
//! on a slow full resync. Status writes are compare-and-swaps: a quota
//! admission charged meanwhile is read again on the next pass.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use serde_json::{json, Value};

use crate::admission::plugins::quota_matches;
use crate::auth::UserInfo;
use crate::object;
use crate::quota::{self, Usage};
use crate::registry::ResourceDef;
use crate::verbs::ApiCore;
use crate::watch::EventType;

const CONTROLLER: &str = "resourcequota";
/// Upstream's `--resource-quota-sync-period`.
const FULL_RESYNC: Duration = Duration::from_secs(300);
/// Resources whose deletion gives quota back at once.
const REPLENISHED: [&str; 5] = [
    "pods",
    "services",
    "persistentvolumeclaims",
    "configmaps",
    "secrets",
];

pub async fn run(core: Arc<ApiCore>) {
    let system = UserInfo::system();
    let Ok(quotas) = core.resolve("", "v1", "resourcequotas") else {
        return;
    };
    loop {
        let rv = super::resynced(CONTROLLER, || sync_all(&core, None)).await;
        let opts = super::watch_from(rv);
        let mut streams = Vec::new();
        // Each stream says what it watches, so an object is read only when
        // its change may matter (the caches need not parse every ConfigMap).
        match core.watch(&system, &quotas, None, None, &opts).await {
            Ok(stream) => streams.push(stream.map(|event| ("resourcequotas", event)).boxed()),
            Err(e) => {
                super::watch_failed(CONTROLLER, &e).await;
                continue;
            }
        }
        for resource in REPLENISHED {
            let Ok(def) = core.resolve("", "v1", resource) else {
                continue;
            };
            if let Ok(stream) = core.watch(&system, &def, None, None, &opts).await {
                streams.push(stream.map(move |event| (resource, event)).boxed());
            }
        }
        let mut events = futures::stream::select_all(streams);
        let resync = tokio::time::sleep(FULL_RESYNC);
        tokio::pin!(resync);
        loop {
            let event = tokio::select! {
                event = events.next() => event,
                () = &mut resync => None,
            };
            let Some((resource, event)) = event else {
                break;
            };
            let object = &event.object;
            let is_quota = resource == "resourcequotas";
            let replenishes = match event.event_type {
                EventType::Error => break,
                EventType::Added | EventType::Modified if is_quota => needs_sync(object),
                EventType::Deleted => !is_quota,
                // A pod that finished stops counting most of its usage.
                EventType::Modified => {
                    resource == "pods"
                        && matches!(
                            object.pointer("/status/phase").and_then(Value::as_str),
                            Some("Succeeded" | "Failed")
                        )
                }
                _ => false,
            };
            if replenishes {
                let namespace = object::namespace(object);
                if let Err(e) = sync_all(&core, Some(namespace)).await {
                    tracing::warn!(namespace, error = %e, "recomputing resource quotas failed");
                }
            }
        }
    }
}

/// Whether a quota's status does not yet reflect its spec.
fn needs_sync(quota: &Value) -> bool {
    quota.pointer("/spec/hard") != quota.pointer("/status/hard")
        || quota.pointer("/status/used").is_none()
}

/// Recomputes every quota (of one namespace); the resourceVersion of the
/// quota list it worked from.
async fn sync_all(core: &ApiCore, namespace: Option<&str>) -> crate::ApiResult<String> {
    let quotas = core.resolve("", "v1", "resourcequotas")?;
    let list = core
        .list(&UserInfo::system(), &quotas, namespace, &Default::default())
        .await?;
    for quota in &list.items {
        if let Err(e) = sync(core, &quotas, quota).await {
            tracing::warn!(quota = object::name(quota), error = %e, "recomputing a resource quota failed");
        }
    }
    Ok(list.resource_version)
}

/// Writes one quota's hard and used, if they changed.
async fn sync(core: &ApiCore, quotas: &ResourceDef, quota: &Value) -> crate::ApiResult<()> {
    let namespace = object::namespace(quota).to_string();
    let hard = quota::parse_map(quota.pointer("/spec/hard"));
    let used = usage_in(core, &namespace, quota, &hard).await?;
    let status = json!({"hard": quota::to_json(&hard), "used": quota::to_json(&used)});
    if quota.get("status") == Some(&status) {
        return Ok(());
    }
    let mut updated = quota.clone();
    updated["status"] = status;
    super::write_status(core, quotas, updated, "kube-controller-manager").await
}

/// What the namespace's objects use of the quota's hard resources (each
/// starting at zero), counting only objects in the quota's scopes.
async fn usage_in(
    core: &ApiCore,
    namespace: &str,
    quota: &Value,
    hard: &Usage,
) -> crate::ApiResult<Usage> {
    let mut used: Usage = hard
        .keys()
        .map(|k| (k.clone(), crate::validate::quantity::Quantity::count(0)))
        .collect();
    let mut counted = quota.clone();
    counted["status"] = json!({"hard": quota::to_json(hard)});
    for def in tracked_resources(core, hard) {
        let list = core
            .list(
                &UserInfo::system(),
                &def,
                Some(namespace),
                &Default::default(),
            )
            .await?;
        for item in &list.items {
            let usage = quota::usage(&def, item);
            if !quota_matches(&counted, &def, item, &usage) {
                continue;
            }
            for (name, amount) in usage {
                if hard.contains_key(&name) {
                    quota::add(&mut used, &name, amount);
                }
            }
        }
    }
    Ok(used)
}

/// The resources a quota's hard names are counted from.
fn tracked_resources(core: &ApiCore, hard: &Usage) -> Vec<Arc<ResourceDef>> {
    let mut wanted: BTreeSet<(String, String)> = BTreeSet::new();
    for name in hard.keys() {
        let core_resource = |r: &str| ("".to_string(), r.to_string());
        let entry = if let Some(counted) = name.strip_prefix("count/") {
            let (resource, group) = counted.split_once('.').unwrap_or((counted, ""));
            (group.to_string(), resource.to_string())
        } else if name.starts_with("services") {
            core_resource("services")
        } else if name == "persistentvolumeclaims"
            || name == "requests.storage"
            || name.contains(".storageclass.storage.k8s.io/")
        {
            core_resource("persistentvolumeclaims")
        } else if [
            "configmaps",
            "secrets",
            "replicationcontrollers",
            "resourcequotas",
        ]
        .contains(&name.as_str())
        {
            core_resource(name)
        } else {
            core_resource("pods")
        };
        wanted.insert(entry);
    }
    let registry = core.registry.snapshot();
    wanted
        .into_iter()
        .filter_map(|(group, resource)| {
            let served: Vec<&Arc<ResourceDef>> = registry
                .resources()
                .iter()
                .filter(|d| d.group == group && d.resource == resource && d.namespaced)
                .collect();
            served
                .iter()
                .find(|d| d.version == d.storage_version)
                .or_else(|| served.first())
                .map(|d| Arc::clone(d))
        })
        .collect()
}
