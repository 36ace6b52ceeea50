//! The ClusterIP and NodePort ranges kept in line with the Services that
//! exist, as kube-apiserver's repair controllers do: at start and every
//! three minutes, values Services use are marked, and values none uses
//! (a create that allocated and then failed without giving them back, a
//! replica killed mid-create) are freed after three passes in a row found
//! them unused. Writes are compare-and-swap, so replicas may all run it.
//! The same pass keeps the IPAddress objects in line (upstream's
//! RepairIPAddress): a Service's address without one gets it, and one
//! the allocator made that no Service uses any more goes.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::addresses::{LeakCounts, Repaired};
use crate::auth::UserInfo;
use crate::kinds::networking::ip_address::{ALLOCATOR, MANAGED_BY_LABEL};
use crate::object;
use crate::verbs::{ApiCore, DeleteOptions, LazyObject, ListOptions, WriteOptions};

const CONTROLLER: &str = "service-address-repair";
/// Upstream's interval for both repair loops.
const INTERVAL: Duration = Duration::from_secs(180);
/// How old an IPAddress without its Service must be before it counts as
/// leaked: a Service create between allocating and storing has one.
const LEAK_GRACE: chrono::TimeDelta = chrono::TimeDelta::seconds(60);

pub async fn run(core: Arc<ApiCore>) {
    let mut leaks = LeakCounts::default();
    loop {
        match repair_once(&core, &mut leaks).await {
            Ok(repaired) => report(&repaired),
            Err(e) => tracing::warn!(controller = CONTROLLER, error = %e, "repair pass failed"),
        }
        if let Err(e) = repair_ip_addresses(&core, Utc::now()).await {
            tracing::warn!(controller = CONTROLLER, error = %e, "IPAddress repair pass failed");
        }
        tokio::time::sleep(INTERVAL).await;
    }
}

/// One pass: the ranges against a consistent list of every Service.
async fn repair_once(core: &ApiCore, leaks: &mut LeakCounts) -> crate::ApiResult<Repaired> {
    let services = core.resolve("", "v1", "services")?;
    let listed = async {
        let list = core
            .list(
                &UserInfo::system(),
                &services,
                None,
                &ListOptions::default(),
            )
            .await?;
        Ok(list.items.into_iter().map(LazyObject::into_tree).collect())
    };
    core.service_addresses.repair(listed, leaks).await
}

fn report(repaired: &Repaired) {
    if !repaired.marked.is_empty() {
        tracing::warn!(
            controller = CONTROLLER,
            values = repaired.marked.join(","),
            "in use by Services but not allocated; repaired"
        );
    }
    if !repaired.freed.is_empty() {
        tracing::warn!(
            controller = CONTROLLER,
            values = repaired.freed.join(","),
            "allocated but used by no Service; freed"
        );
    }
    if repaired.conflicted {
        tracing::debug!(
            controller = CONTROLLER,
            "a range changed during the pass; left for the next one"
        );
    }
}

/// The Service an IPAddress names, when it names one.
fn parent_service(ip_address: &Value) -> Option<(String, String)> {
    let parent = ip_address.pointer("/spec/parentRef")?;
    let text = |key: &str| parent.get(key).and_then(Value::as_str).unwrap_or("");
    (text("group").is_empty() && text("resource") == "services")
        .then(|| (text("namespace").to_string(), text("name").to_string()))
}

fn cluster_ips(svc: &Value) -> Vec<&str> {
    svc.pointer("/spec/clusterIPs")
        .and_then(Value::as_array)
        .map(|ips| ips.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// One pass over the Services and the allocator's IPAddresses.
async fn repair_ip_addresses(core: &ApiCore, now: DateTime<Utc>) -> crate::ApiResult<()> {
    let system = UserInfo::system();
    let all = ListOptions::default();
    let services_def = core.resolve("", "v1", "services")?;
    let addresses_def = core.resolve("networking.k8s.io", "v1", "ipaddresses")?;
    let services = core.list(&system, &services_def, None, &all).await?;
    let addresses = core.list(&system, &addresses_def, None, &all).await?;
    let by_name: BTreeMap<&str, &Value> = addresses
        .items
        .iter()
        .map(|a| (object::name(a), &**a))
        .collect();
    let services_by_key: BTreeMap<(&str, &str), &Value> = services
        .items
        .iter()
        .map(|s| ((object::namespace(s), object::name(s)), &**s))
        .collect();
    let writes = WriteOptions {
        field_manager: "kube-apiserver".to_string(),
        ..Default::default()
    };
    for svc in &services.items {
        let (namespace, name) = (object::namespace(svc), object::name(svc));
        for ip in cluster_ips(svc) {
            let Ok(address) = ip.parse::<Ipv4Addr>() else {
                continue;
            };
            if !core.service_addresses.in_range(address) {
                continue;
            }
            let wanted = crate::verbs::ip_address_for(address, namespace, name);
            match by_name.get(ip) {
                None => {
                    tracing::warn!(controller = CONTROLLER, "the ClusterIP [IPv4]: {ip} for Service {namespace}/{name} is not allocated; repairing");
                }
                Some(existing) => {
                    let owner = parent_service(existing);
                    let ours = owner
                        .as_ref()
                        .is_some_and(|(ns, n)| ns == namespace && n == name);
                    let owner_holds_it = owner.as_ref().is_some_and(|(ns, n)| {
                        services_by_key
                            .get(&(ns.as_str(), n.as_str()))
                            .is_some_and(|other| cluster_ips(other).contains(&ip))
                    });
                    if ours || owner_holds_it {
                        continue;
                    }
                    tracing::warn!(controller = CONTROLLER, "the ClusterIP [IPv4]: {ip} for Service {namespace}/{name} has a wrong reference; repairing");
                    super::tolerate_races(
                        core.delete(&system, &addresses_def, None, ip, &DeleteOptions::default())
                            .await
                            .map(drop),
                    )?;
                }
            }
            super::tolerate_races(
                core.create(&system, &addresses_def, None, wanted, &writes)
                    .await
                    .map(drop),
            )?;
        }
    }
    for address in &addresses.items {
        let managed = address
            .pointer("/metadata/labels")
            .and_then(|l| l.get(MANAGED_BY_LABEL))
            .and_then(Value::as_str)
            == Some(ALLOCATOR);
        if !managed {
            continue;
        }
        let ip = object::name(address);
        let leaked = match parent_service(address) {
            None => true,
            Some((namespace, name)) => {
                match services_by_key.get(&(namespace.as_str(), name.as_str())) {
                    Some(svc) => !cluster_ips(svc).contains(&ip),
                    None => {
                        let created = object::meta_str(address, "creationTimestamp")
                            .parse::<DateTime<Utc>>()
                            .unwrap_or(now);
                        now - created > LEAK_GRACE
                    }
                }
            }
        };
        if leaked {
            tracing::warn!(
                controller = CONTROLLER,
                "IPAddress {ip} appears to have leaked: cleaning up"
            );
            super::tolerate_races(
                core.delete(&system, &addresses_def, None, ip, &DeleteOptions::default())
                    .await
                    .map(drop),
            )?;
        }
    }
    Ok(())
}
