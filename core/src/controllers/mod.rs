//! Built-in controllers that run inside the server process. Each one works
//! only through the core's API and storage compare-and-swap, so several
//! replicas can run them at once without contradicting each other.

pub mod admission_policy_status;
pub mod api_service_availability;
pub mod api_services;
pub mod authentication_trust;
pub mod clusterrole_aggregation;
pub mod custom_resource_definitions;
pub mod garbage_collector;
pub mod namespace;
pub mod priority_and_fairness;
pub mod resource_quota;
pub mod root_ca_publisher;
pub mod service_addresses;
pub mod service_cidrs;
pub mod serviceaccounts;
pub mod storage_protection;

/// Names accepted by `--controllers`.
pub const ALL_CONTROLLERS: &[&str] = &[
    "apiservice-availability",
    "apiservice-registration",
    "cluster-authentication-trust",
    "clusterrole-aggregation",
    "customresourcedefinitions",
    "garbage-collector",
    "namespace",
    "priority-and-fairness-config",
    "pv-protection",
    "pvc-protection",
    "resourcequota",
    "root-ca-cert-publisher",
    "service-address-repair",
    "service-cidr-controller",
    "serviceaccount",
    "validatingadmissionpolicy-status",
];

/// How long a controller waits before trying a failed list or watch again.
const RETRY: std::time::Duration = std::time::Duration::from_secs(2);

/// Runs `resync` until it succeeds, waiting between attempts; the
/// resourceVersion it worked from, for a watch of what changes after it.
pub(crate) async fn resynced<F, Fut>(controller: &str, mut resync: F) -> String
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = crate::ApiResult<String>>,
{
    loop {
        match resync().await {
            Ok(rv) => return rv,
            Err(e) => {
                tracing::warn!(controller, error = %e, "controller resync failed");
                tokio::time::sleep(RETRY).await;
            }
        }
    }
}

/// A controller's watch from `resource_version`; it ends after a while, and
/// the controller lists again before it watches anew.
pub(crate) fn watch_from(resource_version: String) -> crate::watch::WatchOptions {
    crate::watch::WatchOptions {
        resource_version,
        timeout: Some(std::time::Duration::from_secs(300)),
        ..Default::default()
    }
}

/// Writes `updated` through /status as the system, a compare-and-swap on
/// the version it was read at. A conflict or a deletion meanwhile is left
/// to the event that follows it (another replica, or a charge, wrote).
pub(crate) async fn write_status(
    core: &crate::verbs::ApiCore,
    def: &crate::registry::ResourceDef,
    updated: serde_json::Value,
    field_manager: &str,
) -> crate::ApiResult<()> {
    let opts = crate::verbs::WriteOptions {
        field_manager: field_manager.to_string(),
        ..Default::default()
    };
    let namespace = crate::object::namespace(&updated).to_string();
    let name = crate::object::name(&updated).to_string();
    let written = core
        .update(
            &crate::auth::UserInfo::system(),
            def,
            (!namespace.is_empty()).then_some(namespace.as_str()),
            &name,
            updated,
            &opts,
            crate::verbs::View::Status,
        )
        .await;
    match written {
        Ok(_) => Ok(()),
        Err(e)
            if matches!(
                e.reason,
                crate::error::StatusReason::Conflict | crate::error::StatusReason::NotFound
            ) =>
        {
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// Every namespace, as the system sees it.
pub(crate) async fn all_namespaces(
    core: &crate::verbs::ApiCore,
) -> crate::ApiResult<crate::verbs::ObjectList> {
    let namespaces = core.resolve("", "v1", "namespaces")?;
    core.list(
        &crate::auth::UserInfo::system(),
        &namespaces,
        None,
        &crate::verbs::ListOptions::default(),
    )
    .await
}

/// Deletes every object of `def` (in `namespace`, or everywhere), as the
/// system; whether any is left (objects with finalizers of their own go
/// only once those are released).
pub(crate) async fn delete_all(
    core: &crate::verbs::ApiCore,
    def: &crate::registry::ResourceDef,
    namespace: Option<&str>,
) -> crate::ApiResult<bool> {
    let system = crate::auth::UserInfo::system();
    if def.supports("deletecollection") {
        core.delete_collection(
            &system,
            def,
            namespace,
            &crate::verbs::ListOptions::default(),
            &crate::verbs::DeleteOptions::default(),
        )
        .await?;
    }
    let one = crate::verbs::ListOptions {
        limit: 1,
        ..Default::default()
    };
    Ok(!core
        .list(&system, def, namespace, &one)
        .await?
        .items
        .is_empty())
}

/// A write another replica got to first (or a deletion meanwhile): the
/// next pass sees what it did.
pub(crate) fn tolerate_races(result: crate::ApiResult<()>) -> crate::ApiResult<()> {
    match result {
        Err(e)
            if matches!(
                e.reason,
                crate::error::StatusReason::AlreadyExists
                    | crate::error::StatusReason::Conflict
                    | crate::error::StatusReason::NotFound
            ) =>
        {
            Ok(())
        }
        other => other,
    }
}

/// Waits before a failed watch is tried again.
pub(crate) async fn watch_failed(controller: &str, error: &crate::error::ApiError) {
    tracing::warn!(controller, error = %error, "controller watch failed");
    tokio::time::sleep(RETRY).await;
}

/// Whether `name` is enabled by a kube-controller-manager style list
/// ("*" for all, "-name" to disable, "name" to enable).
pub fn enabled(list: &[String], name: &str) -> bool {
    let mut on = false;
    for item in list {
        match item.as_str() {
            "*" => on = true,
            other if other.strip_prefix('-') == Some(name) => return false,
            other if other == name => on = true,
            _ => {}
        }
    }
    on
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controller_lists() {
        let list = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(enabled(&list(&["*"]), "namespace"));
        assert!(!enabled(&list(&["*", "-namespace"]), "namespace"));
        assert!(enabled(&list(&["namespace"]), "namespace"));
        assert!(!enabled(&list(&[]), "namespace"));
    }
}
