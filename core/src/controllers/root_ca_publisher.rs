//! The `kube-root-ca.crt` ConfigMap of every namespace, as upstream's
//! root-ca-cert-publisher (kube-controller-manager) keeps it: the CA that
//! verifies this server, which the ServiceAccount admission plugin mounts
//! into pods. Created with each namespace, put back when edited or deleted.
//! Every write is a compare-and-swap, so replicas agree.

use std::sync::Arc;

use futures::StreamExt;
use serde_json::{json, Value};

use crate::auth::UserInfo;
use crate::error::StatusReason;
use crate::object;
use crate::verbs::{ApiCore, View, WriteOptions};
use crate::watch::{EventType, WatchOptions};

const CONTROLLER: &str = "root-ca-cert-publisher";
pub const CONFIG_MAP: &str = "kube-root-ca.crt";
const DATA_KEY: &str = "ca.crt";
const DESCRIPTION_KEY: &str = "kubernetes.io/description";
const DESCRIPTION: &str = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.";

pub async fn run(core: Arc<ApiCore>, ca_pem: String) {
    let system = UserInfo::system();
    let (Ok(namespaces), Ok(config_maps)) = (
        core.resolve("", "v1", "namespaces"),
        core.resolve("", "v1", "configmaps"),
    ) else {
        return;
    };
    loop {
        let rv = super::resynced(CONTROLLER, || publish_all(&core, &ca_pem)).await;
        let opts = super::watch_from(rv);
        let published = WatchOptions {
            field_selector: format!("metadata.name={CONFIG_MAP}"),
            ..opts.clone()
        };
        let watches = futures::future::try_join(
            core.watch(&system, &namespaces, None, None, &opts),
            core.watch(&system, &config_maps, None, None, &published),
        )
        .await;
        let (namespace_events, config_map_events) = match watches {
            Ok(watches) => watches,
            Err(e) => {
                super::watch_failed(CONTROLLER, &e).await;
                continue;
            }
        };
        let mut events = futures::stream::select(namespace_events, config_map_events);
        while let Some(event) = events.next().await {
            let namespace = match (event.event_type, kind(&event.object)) {
                (EventType::Added | EventType::Modified, "Namespace") => {
                    object::name(&event.object)
                }
                (EventType::Modified | EventType::Deleted, "ConfigMap") => {
                    object::namespace(&event.object)
                }
                (EventType::Error, _) => break,
                _ => continue,
            };
            if let Err(e) = publish(&core, namespace, &ca_pem).await {
                tracing::warn!(namespace, error = %e, "publishing the root CA failed");
            }
        }
    }
}

fn kind(object: &Value) -> &str {
    object.get("kind").and_then(Value::as_str).unwrap_or("")
}

/// Publishes into every namespace; the resourceVersion of the namespace
/// list it worked from.
async fn publish_all(core: &ApiCore, ca_pem: &str) -> crate::ApiResult<String> {
    let list = super::all_namespaces(core).await?;
    for namespace in &list.items {
        let active =
            namespace.pointer("/status/phase").and_then(Value::as_str) != Some("Terminating");
        if active {
            publish(core, object::name(namespace), ca_pem).await?;
        }
    }
    Ok(list.resource_version)
}

/// Creates the namespace's ConfigMap, or puts its data and description
/// back; nothing when it is as it should be, or the namespace is going away.
async fn publish(core: &ApiCore, namespace: &str, ca_pem: &str) -> crate::ApiResult<()> {
    let config_maps = core.resolve("", "v1", "configmaps")?;
    let system = UserInfo::system();
    let opts = WriteOptions {
        field_manager: "kube-controller-manager".to_string(),
        ..Default::default()
    };
    let current = match core
        .get(&system, &config_maps, Some(namespace), CONFIG_MAP, "")
        .await
    {
        Ok(current) => Some(current),
        Err(e) if e.reason == StatusReason::NotFound => None,
        Err(e) => return Err(e),
    };
    let wanted_data = json!({ DATA_KEY: ca_pem });
    let result = match current {
        None => {
            let config_map = json!({
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": CONFIG_MAP, "annotations": {DESCRIPTION_KEY: DESCRIPTION}},
                "data": wanted_data,
            });
            core.create(&system, &config_maps, Some(namespace), config_map, &opts)
                .await
                .map(|_| ())
        }
        Some(current) => {
            let described = current
                .pointer("/metadata/annotations")
                .and_then(|a| a.get(DESCRIPTION_KEY))
                .and_then(Value::as_str)
                .is_some_and(|d| !d.is_empty());
            if current.get("data") == Some(&wanted_data) && described {
                return Ok(());
            }
            // The stored resourceVersion makes this a compare-and-swap.
            let mut fixed = current.clone();
            fixed["data"] = wanted_data;
            if let Some(metadata) = fixed.get_mut("metadata").and_then(Value::as_object_mut) {
                let annotations = metadata.entry("annotations").or_insert_with(|| json!({}));
                if !annotations.is_object() {
                    *annotations = json!({});
                }
                annotations[DESCRIPTION_KEY] = json!(DESCRIPTION);
            }
            core.update(
                &system,
                &config_maps,
                Some(namespace),
                CONFIG_MAP,
                fixed,
                &opts,
                View::Main,
            )
            .await
            .map(|_| ())
        }
    };
    match result {
        Ok(()) => Ok(()),
        // Another replica got there first; its write is the same.
        Err(e)
            if matches!(
                e.reason,
                StatusReason::AlreadyExists | StatusReason::Conflict
            ) =>
        {
            Ok(())
        }
        // A namespace being deleted, or gone meanwhile.
        Err(e) if matches!(e.reason, StatusReason::Forbidden | StatusReason::NotFound) => Ok(()),
        Err(e) => Err(e),
    }
}
