//! The ClusterIP and NodePort ranges kept in line with the Services that
//! exist, as kube-apiserver's repair controllers do: at start and every
//! three minutes, values Services use are marked, and values none uses
//! (a create that allocated and then failed without giving them back, a
//! replica killed mid-create) are freed after three passes in a row found
//! them unused. Writes are compare-and-swap, so replicas may all run it.

use std::sync::Arc;
use std::time::Duration;

use crate::addresses::{LeakCounts, Repaired};
use crate::auth::UserInfo;
use crate::verbs::{ApiCore, ListOptions};

const CONTROLLER: &str = "service-address-repair";
/// Upstream's interval for both repair loops.
const INTERVAL: Duration = Duration::from_secs(180);

pub async fn run(core: Arc<ApiCore>) {
    let mut leaks = LeakCounts::default();
    loop {
        match repair_once(&core, &mut leaks).await {
            Ok(repaired) => report(&repaired),
            Err(e) => tracing::warn!(controller = CONTROLLER, error = %e, "repair pass failed"),
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
        Ok(list.items)
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
