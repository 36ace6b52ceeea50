//! The pvc-protection and pv-protection controllers, as
//! kube-controller-manager runs them: a PersistentVolumeClaim or
//! PersistentVolume gets its protection finalizer (should admission not
//! have given it one), and a deleted one loses it once nothing uses it — a
//! claim when no scheduled pod mounts it, a volume when it is not Bound.
//! Every write is a compare-and-swap on what was read, so replicas agree.

use std::sync::Arc;

use futures::StreamExt;
use serde_json::{json, Value};

use crate::admission::plugins::{PVC_PROTECTION, PV_PROTECTION};
use crate::auth::UserInfo;
use crate::error::StatusReason;
use crate::object;
use crate::registry::ResourceDef;
use crate::verbs::{ApiCore, ListOptions, View, WriteOptions};
use crate::watch::EventType;

/// Attempts at a write that keeps conflicting with other writers.
const ATTEMPTS: usize = 5;

/// The pvc-protection controller.
pub async fn run_claims(core: Arc<ApiCore>) {
    const CONTROLLER: &str = "pvc-protection";
    let system = UserInfo::system();
    let (Ok(claims), Ok(pods)) = (
        core.resolve("", "v1", "persistentvolumeclaims"),
        core.resolve("", "v1", "pods"),
    ) else {
        return;
    };
    loop {
        let rv = super::resynced(CONTROLLER, || resync(&core, &claims)).await;
        let opts = super::watch_from(rv);
        let watches = futures::future::try_join(
            core.watch(&system, &claims, None, None, &opts),
            core.watch(&system, &pods, None, None, &opts),
        )
        .await;
        let (claim_events, pod_events) = match watches {
            Ok(watches) => watches,
            Err(e) => {
                super::watch_failed(CONTROLLER, &e).await;
                continue;
            }
        };
        let mut events = futures::stream::select(claim_events, pod_events);
        while let Some(event) = events.next().await {
            let changed = &event.object;
            let claims_to_check: Vec<String> = match (event.event_type, kind(changed)) {
                (EventType::Added | EventType::Modified, "PersistentVolumeClaim") => {
                    vec![object::name(changed).to_string()]
                }
                // A pod that went, finished or is not scheduled may have
                // been what held a deleted claim back.
                (EventType::Deleted | EventType::Modified, "Pod") => claims_named_by(changed),
                (EventType::Error, _) => break,
                _ => continue,
            };
            let namespace = object::namespace(changed);
            for name in claims_to_check {
                if let Err(e) = reconcile(&core, &claims, Some(namespace), &name).await {
                    tracing::warn!(controller = CONTROLLER, namespace, name, error = %e, "protecting the claim failed");
                }
            }
        }
    }
}

/// The pv-protection controller.
pub async fn run_volumes(core: Arc<ApiCore>) {
    const CONTROLLER: &str = "pv-protection";
    let system = UserInfo::system();
    let Ok(volumes) = core.resolve("", "v1", "persistentvolumes") else {
        return;
    };
    loop {
        let rv = super::resynced(CONTROLLER, || resync(&core, &volumes)).await;
        let events = match core
            .watch(&system, &volumes, None, None, &super::watch_from(rv))
            .await
        {
            Ok(events) => events,
            Err(e) => {
                super::watch_failed(CONTROLLER, &e).await;
                continue;
            }
        };
        let mut events = std::pin::pin!(events);
        while let Some(event) = events.next().await {
            match event.event_type {
                EventType::Added | EventType::Modified => {
                    let name = object::name(&event.object);
                    if let Err(e) = reconcile(&core, &volumes, None, name).await {
                        tracing::warn!(controller = CONTROLLER, name, error = %e, "protecting the volume failed");
                    }
                }
                EventType::Error => break,
                _ => {}
            }
        }
    }
}

fn kind(object: &Value) -> &str {
    object.get("kind").and_then(Value::as_str).unwrap_or("")
}

/// The claims a pod names: its persistentVolumeClaim volumes, and the
/// claims of its ephemeral volumes (`<pod>-<volume>`).
fn claims_named_by(pod: &Value) -> Vec<String> {
    let pod_name = object::name(pod);
    object::items_at(pod, "/spec/volumes")
        .iter()
        .filter_map(|volume| {
            if let Some(claim) = volume
                .pointer("/persistentVolumeClaim/claimName")
                .and_then(Value::as_str)
            {
                return Some(claim.to_string());
            }
            volume.get("ephemeral").filter(|e| !e.is_null())?;
            let volume_name = volume.get("name").and_then(Value::as_str)?;
            Some(format!("{pod_name}-{volume_name}"))
        })
        .collect()
}

/// Reconciles every object of `def`; the resourceVersion of the list.
async fn resync(core: &ApiCore, def: &ResourceDef) -> crate::ApiResult<String> {
    let list = core
        .list(&UserInfo::system(), def, None, &ListOptions::default())
        .await?;
    for item in &list.items {
        let namespace = def.namespaced.then(|| object::namespace(item));
        reconcile(core, def, namespace, object::name(item)).await?;
    }
    Ok(list.resource_version)
}

fn finalizer_of(def: &ResourceDef) -> &'static str {
    if def.resource == "persistentvolumes" {
        PV_PROTECTION
    } else {
        PVC_PROTECTION
    }
}

fn has_finalizer(object: &Value, finalizer: &str) -> bool {
    object::items_at(object, "/metadata/finalizers")
        .iter()
        .any(|f| f == finalizer)
}

/// Adds the finalizer to a live object that lacks it, or removes it from a
/// deleted one nothing uses; retried on conflicts with other writers.
async fn reconcile(
    core: &ApiCore,
    def: &ResourceDef,
    namespace: Option<&str>,
    name: &str,
) -> crate::ApiResult<()> {
    let system = UserInfo::system();
    let finalizer = finalizer_of(def);
    for _ in 0..ATTEMPTS {
        let current = match core.get(&system, def, namespace, name, "").await {
            Ok(current) => current,
            Err(e) if e.reason == StatusReason::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        let deleting = current
            .pointer("/metadata/deletionTimestamp")
            .is_some_and(|t| !t.is_null());
        let protected = has_finalizer(&current, finalizer);
        let mut updated = current.clone();
        match (deleting, protected) {
            (false, false) => {
                let metadata = &mut updated["metadata"];
                let mut finalizers = object::items_at(metadata, "/finalizers").to_vec();
                finalizers.push(json!(finalizer));
                metadata["finalizers"] = Value::Array(finalizers);
            }
            (true, true) if !in_use(core, def, &current).await? => {
                let kept: Vec<Value> = object::items_at(&current, "/metadata/finalizers")
                    .iter()
                    .filter(|f| *f != finalizer)
                    .cloned()
                    .collect();
                updated["metadata"]["finalizers"] = Value::Array(kept);
            }
            _ => return Ok(()),
        }
        let opts = WriteOptions {
            field_manager: "kube-controller-manager".to_string(),
            ..Default::default()
        };
        // The stored resourceVersion makes this a compare-and-swap.
        match core
            .update(&system, def, namespace, name, updated, &opts, View::Main)
            .await
        {
            Ok(_) => return Ok(()),
            Err(e) if e.reason == StatusReason::Conflict => continue,
            Err(e) if e.reason == StatusReason::NotFound => return Ok(()),
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Whether a deleted claim is still mounted by a scheduled pod (read
/// afresh, not from a cache: a pod just created must count), or a deleted
/// volume is still bound.
async fn in_use(core: &ApiCore, def: &ResourceDef, object: &Value) -> crate::ApiResult<bool> {
    if def.resource == "persistentvolumes" {
        return Ok(object.pointer("/status/phase").and_then(Value::as_str) == Some("Bound"));
    }
    let pods = core.resolve("", "v1", "pods")?;
    let namespace = object::namespace(object);
    let claim = object::name(object);
    let list = core
        .list(
            &UserInfo::system(),
            &pods,
            Some(namespace),
            &ListOptions::default(),
        )
        .await?;
    Ok(list.items.iter().any(|pod| uses_claim(pod, claim, object)))
}

/// Upstream's podUsesPVC: a scheduled pod naming the claim, or one whose
/// ephemeral volume the claim is (and owned by the pod) while the pod is
/// not being shut down for good.
fn uses_claim(pod: &Value, claim: &str, claim_object: &Value) -> bool {
    let scheduled = pod
        .pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .is_some_and(|n| !n.is_empty());
    if !scheduled {
        return false;
    }
    let pod_name = object::name(pod);
    let pod_uid = pod.pointer("/metadata/uid").and_then(Value::as_str);
    let shut_down = pod
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|t| !t.is_null())
        && pod
            .pointer("/metadata/deletionGracePeriodSeconds")
            .and_then(Value::as_i64)
            == Some(0);
    object::items_at(pod, "/spec/volumes").iter().any(|volume| {
        if volume
            .pointer("/persistentVolumeClaim/claimName")
            .and_then(Value::as_str)
            == Some(claim)
        {
            return true;
        }
        let ephemeral = volume.get("ephemeral").is_some_and(|e| !e.is_null());
        let volume_name = volume.get("name").and_then(Value::as_str).unwrap_or("");
        let owned_by_pod = object::items_at(claim_object, "/metadata/ownerReferences")
            .iter()
            .any(|owner| {
                owner.get("controller") == Some(&Value::Bool(true))
                    && owner.get("uid").and_then(Value::as_str) == pod_uid
            });
        ephemeral && !shut_down && format!("{pod_name}-{volume_name}") == claim && owned_by_pod
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheduled_pods_hold_the_claims_they_mount() {
        let claim = json!({"metadata": {"name": "data", "namespace": "default"}});
        let pod = |node: &str| {
            json!({"metadata": {"name": "p", "uid": "u1"},
                   "spec": {"nodeName": node, "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "data"}}]}})
        };
        assert!(uses_claim(&pod("n1"), "data", &claim));
        assert!(!uses_claim(&pod(""), "data", &claim));
        assert!(!uses_claim(&pod("n1"), "other", &claim));
        assert_eq!(claims_named_by(&pod("n1")), vec!["data"]);
    }

    #[test]
    fn ephemeral_claims_count_while_their_pod_owns_them() {
        let owned = json!({"metadata": {"name": "p-scratch", "ownerReferences": [
            {"uid": "u1", "controller": true, "kind": "Pod", "name": "p", "apiVersion": "v1"}]}});
        let pod = json!({"metadata": {"name": "p", "uid": "u1"},
                         "spec": {"nodeName": "n1", "volumes": [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {}}}]}});
        assert!(uses_claim(&pod, "p-scratch", &owned));
        assert!(!uses_claim(
            &pod,
            "p-scratch",
            &json!({"metadata": {"name": "p-scratch"}})
        ));
        let mut shut_down = pod.clone();
        shut_down["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        shut_down["metadata"]["deletionGracePeriodSeconds"] = json!(0);
        assert!(!uses_claim(&shut_down, "p-scratch", &owned));
        assert_eq!(claims_named_by(&pod), vec!["p-scratch"]);
    }
}
