//! ServiceCIDRs, as kube-apiserver and kube-controller-manager keep them.
//! The server's own part (upstream's kubernetes-service-cidr-controller)
//! creates the `kubernetes` ServiceCIDR for `--service-cluster-ip-range`
//! and marks it Ready. The controller-manager's part
//! (`service-cidr-controller`) puts its finalizer on every ServiceCIDR,
//! marks it Ready, and lets a deleted one go only once no allocated
//! address depends on it alone, ten seconds after its deletion began.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use futures::StreamExt;
use serde_json::{json, Value};

use crate::auth::UserInfo;
use crate::error::StatusReason;
use crate::kinds::networking::ip_address::{ALLOCATOR, MANAGED_BY_LABEL};
use crate::kinds::networking::service_cidr::FINALIZER;
use crate::object;
use crate::registry::ResourceDef;
use crate::validate::meta::{cidr_contains, parse_cidr};
use crate::verbs::{ApiCore, LazyObject, ListOptions, View, WriteOptions};

pub const CONTROLLER: &str = "service-cidr-controller";
const DEFAULT_CONTROLLER: &str = "kubernetes-service-cidr-controller";
pub const DEFAULT_NAME: &str = "kubernetes";
/// Upstream's default-ServiceCIDR reconcile interval.
const INTERVAL: Duration = Duration::from_secs(10);
/// How long a deleted ServiceCIDR stays so every allocator sees it go.
const DELETION_GRACE: chrono::TimeDelta = chrono::TimeDelta::seconds(10);
const TERMINATING_MESSAGE: &str = "There are still IPAddresses referencing the ServiceCIDR, please remove them or create a new ServiceCIDR";

struct Resources {
    cidrs: Arc<ResourceDef>,
    addresses: Arc<ResourceDef>,
}

/// Runs the server's part, and the controller-manager's when `finalizing`.
pub async fn run(core: Arc<ApiCore>, finalizing: bool) {
    let (Ok(cidrs), Ok(addresses)) = (
        core.resolve("networking.k8s.io", "v1", "servicecidrs"),
        core.resolve("networking.k8s.io", "v1", "ipaddresses"),
    ) else {
        return;
    };
    let resources = Resources { cidrs, addresses };
    let system = UserInfo::system();
    loop {
        let rv = super::resynced(DEFAULT_CONTROLLER, || sync(&core, &resources, finalizing)).await;
        let opts = super::watch_from(rv);
        let watched = futures::future::try_join(
            core.watch(&system, &resources.cidrs, None, None, &opts),
            core.watch(&system, &resources.addresses, None, None, &opts),
        )
        .await;
        let mut events = match watched {
            Ok((cidrs, addresses)) => futures::stream::select(cidrs, addresses),
            Err(e) => {
                super::watch_failed(DEFAULT_CONTROLLER, &e).await;
                continue;
            }
        };
        loop {
            let next = tokio::time::timeout(INTERVAL, events.next()).await;
            if let Ok(Some(event)) = &next {
                if event.object.get("kind").and_then(Value::as_str) == Some("Status") {
                    break;
                }
            }
            if matches!(next, Ok(None)) {
                break;
            }
            if let Err(e) = sync(&core, &resources, finalizing).await {
                tracing::warn!(controller = DEFAULT_CONTROLLER, error = %e, "error trying to sync ServiceCIDRs");
            }
        }
    }
}

async fn sync(core: &ApiCore, resources: &Resources, finalizing: bool) -> crate::ApiResult<String> {
    ensure_default(core, resources).await?;
    let system = UserInfo::system();
    let listed = core
        .list(&system, &resources.cidrs, None, &ListOptions::default())
        .await?;
    if finalizing {
        let now = Utc::now();
        let cidrs: Vec<Arc<Value>> = listed
            .items
            .into_iter()
            .map(LazyObject::into_tree)
            .collect();
        for cidr in &cidrs {
            super::tolerate_races(finalize(core, resources, cidr, &cidrs, now).await)?;
        }
    }
    Ok(listed.resource_version)
}

fn writes(manager: &str) -> WriteOptions {
    WriteOptions {
        field_manager: manager.to_string(),
        ..Default::default()
    }
}

fn ready_condition(status: &str, reason: &str, message: &str) -> Value {
    json!({
        "type": "Ready",
        "status": status,
        "lastTransitionTime": object::now_timestamp(),
        "reason": reason,
        "message": message,
    })
}

fn ready_of(cidr: &Value) -> Option<&Value> {
    cidr.pointer("/status/conditions")
        .and_then(Value::as_array)?
        .iter()
        .find(|c| c["type"] == "Ready")
}

fn deleting(cidr: &Value) -> bool {
    !object::meta_str(cidr, "deletionTimestamp").is_empty()
}

/// Writes the Ready condition unless it already says the same.
async fn set_ready(
    core: &ApiCore,
    def: &ResourceDef,
    cidr: &Value,
    wanted: Value,
    manager: &str,
) -> crate::ApiResult<()> {
    let same = ready_of(cidr).is_some_and(|ready| {
        ["status", "reason", "message"]
            .iter()
            .all(|key| ready.get(*key).unwrap_or(&json!("")) == &wanted[*key])
    });
    if same {
        return Ok(());
    }
    let mut conditions: Vec<Value> = cidr
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    conditions.retain(|c| c["type"] != "Ready");
    conditions.push(wanted);
    let mut updated = cidr.clone();
    object::set_at(
        &mut updated,
        &["status", "conditions"],
        Value::Array(conditions),
    );
    super::write_status(core, def, updated, manager).await
}

/// The `kubernetes` ServiceCIDR: created from the flag when missing, and
/// marked Ready once (a flag that no longer matches is only reported).
async fn ensure_default(core: &ApiCore, resources: &Resources) -> crate::ApiResult<()> {
    let system = UserInfo::system();
    let range = core.service_addresses.cluster_ip_range();
    let current = match core
        .get(&system, &resources.cidrs, None, DEFAULT_NAME, "")
        .await
    {
        Ok(current) => current,
        Err(e) if e.reason == StatusReason::NotFound => {
            tracing::info!("Creating default ServiceCIDR with CIDRs: [{range}]");
            let cidr = json!({
                "apiVersion": "networking.k8s.io/v1",
                "kind": "ServiceCIDR",
                "metadata": {"name": DEFAULT_NAME},
                "spec": {"cidrs": [range]},
            });
            return super::tolerate_races(
                core.create(
                    &system,
                    &resources.cidrs,
                    None,
                    cidr,
                    &writes(DEFAULT_CONTROLLER),
                )
                .await
                .map(drop),
            );
        }
        Err(e) => return Err(e),
    };
    if current.pointer("/spec/cidrs") != Some(&json!([range])) {
        tracing::warn!(
            "The default ServiceCIDR {} does not match the flag configurations [{range}]",
            current
                .pointer("/spec/cidrs")
                .unwrap_or(&serde_json::Value::Null)
        );
        return Ok(());
    }
    let unset = ready_of(&current).is_none_or(|ready| ready["status"] == "Unknown");
    if deleting(&current) || !unset {
        return Ok(());
    }
    let ready = ready_condition("True", "", "Kubernetes default Service CIDR is ready");
    set_ready(core, &resources.cidrs, &current, ready, DEFAULT_CONTROLLER).await
}

/// Whether an address lies in a CIDR as the allocator counts it: not the
/// network address, nor an IPv4 broadcast.
fn holds(cidr: (IpAddr, u8), address: IpAddr) -> bool {
    if !cidr_contains(cidr, address) || address == cidr.0 {
        return false;
    }
    match (cidr.0, address) {
        (IpAddr::V4(network), IpAddr::V4(ip)) if cidr.1 < 32 => {
            let host_bits = 32 - u32::from(cidr.1);
            let broadcast = u32::from(network) | ((1u64 << host_bits) - 1) as u32;
            u32::from(ip) != broadcast
        }
        _ => true,
    }
}

fn cidrs_of(cidr: &Value) -> Vec<(IpAddr, u8)> {
    cidr.pointer("/spec/cidrs")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(Value::as_str)
                .filter_map(parse_cidr)
                .collect()
        })
        .unwrap_or_default()
}

/// The controller-manager's part for one ServiceCIDR.
async fn finalize(
    core: &ApiCore,
    resources: &Resources,
    cidr: &Value,
    all: &[Arc<Value>],
    now: DateTime<Utc>,
) -> crate::ApiResult<()> {
    let system = UserInfo::system();
    let name = object::name(cidr).to_string();
    let has_finalizer = object::finalizers(cidr).iter().any(|f| f == FINALIZER);
    if !deleting(cidr) {
        let cidr = if has_finalizer {
            cidr.clone()
        } else {
            set_finalizer(core, resources, &name, true).await?
        };
        let ready = ready_condition("True", "", "Kubernetes Service CIDR is ready");
        return set_ready(core, &resources.cidrs, &cidr, ready, CONTROLLER).await;
    }
    if !has_finalizer {
        return Ok(());
    }
    let own = cidrs_of(cidr);
    let others: Vec<(IpAddr, u8)> = all
        .iter()
        .filter(|other| object::name(other) != name && !deleting(other))
        .flat_map(|other| cidrs_of(other))
        .collect();
    // A range inside another one leaves its addresses covered.
    let covered = own.iter().all(|range| {
        others
            .iter()
            .any(|other| other.1 <= range.1 && cidr_contains(*other, range.0))
    });
    if !covered {
        let addresses = core
            .list(&system, &resources.addresses, None, &ListOptions::default())
            .await?;
        let blocked = addresses.items.iter().any(|address| {
            let managed = address
                .pointer("/metadata/labels")
                .and_then(|l| l.get(MANAGED_BY_LABEL))
                .and_then(Value::as_str)
                == Some(ALLOCATOR);
            let Ok(ip) = object::name(address).parse::<IpAddr>() else {
                return false;
            };
            managed
                && own.iter().any(|range| holds(*range, ip))
                && !others.iter().any(|range| holds(*range, ip))
        });
        if blocked {
            let terminating = ready_condition("False", "Terminating", TERMINATING_MESSAGE);
            return set_ready(core, &resources.cidrs, cidr, terminating, CONTROLLER).await;
        }
    }
    let since = object::meta_str(cidr, "deletionTimestamp")
        .parse::<DateTime<Utc>>()
        .unwrap_or(now);
    if now - since < DELETION_GRACE {
        // The periodic pass comes back for it.
        return Ok(());
    }
    set_finalizer(core, resources, &name, false).await.map(drop)
}

/// Puts the finalizer on the ServiceCIDR, or takes it off, by
/// compare-and-swap; what was written.
async fn set_finalizer(
    core: &ApiCore,
    resources: &Resources,
    name: &str,
    present: bool,
) -> crate::ApiResult<Value> {
    let written = core
        .update_internal(
            &UserInfo::system(),
            &resources.cidrs,
            None,
            name,
            &writes(CONTROLLER),
            View::Main,
            |current| {
                let mut finalizers: Vec<String> = object::finalizers(current)
                    .into_iter()
                    .filter(|f| f != FINALIZER)
                    .collect();
                if present {
                    finalizers.push(FINALIZER.to_string());
                }
                let mut updated = current.clone();
                object::set_meta(&mut updated, "finalizers", json!(finalizers));
                Ok(updated)
            },
        )
        .await?;
    Ok((*written.object).clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn network_and_broadcast_addresses_are_not_held() {
        let range = parse_cidr("10.0.0.0/24").unwrap();
        assert!(holds(range, "10.0.0.1".parse().unwrap()));
        assert!(!holds(range, "10.0.0.0".parse().unwrap()));
        assert!(!holds(range, "10.0.0.255".parse().unwrap()));
        assert!(!holds(range, "10.0.1.1".parse().unwrap()));
    }
}
