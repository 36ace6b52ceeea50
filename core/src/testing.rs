//! Test support: `ApiCore`s over stores whose watches are reshaped
//! (capstan_storage::shaped), for testing what consumes watches against
//! failures a real store shows only under load or when an etcd member dies.

use std::sync::Arc;
use std::time::Duration;

use capstan_storage::shaped::{lagging, ShapedWatches};
use capstan_storage::Storage;

/// An `ApiCore` over a fresh embedded store whose watches under `prefix`
/// lag `lag` behind, bootstrapped and with its watch caches started. The
/// directory must outlive the core.
pub async fn core_lagging_behind(
    prefix: &'static str,
    lag: Duration,
) -> (tempfile::TempDir, crate::verbs::ApiCore) {
    core_shaped(|store| ShapedWatches::new(store, lagging(prefix, lag))).await
}

/// The same, with the store, to count what was read from it.
pub async fn core_and_store_lagging_behind(
    prefix: &'static str,
    lag: Duration,
) -> (tempfile::TempDir, crate::verbs::ApiCore, Arc<ShapedWatches>) {
    core_and_store(|store| ShapedWatches::new(store, lagging(prefix, lag))).await
}

/// An `ApiCore` over a fresh embedded store whose watches are left as they
/// are, bootstrapped and with its watch caches started.
pub async fn core_unshaped() -> (tempfile::TempDir, crate::verbs::ApiCore) {
    core_shaped(|store| ShapedWatches::new(store, Box::new(|_, _, events| events))).await
}

/// The same as `core_lagging_behind`, over a store whose watches report no
/// progress, as capstan's watches on etcd before 3.4.31 / 3.5.13: a quiet
/// cache then never learns that it is current.
pub async fn core_lagging_without_progress(
    prefix: &'static str,
    lag: Duration,
) -> (tempfile::TempDir, crate::verbs::ApiCore) {
    core_shaped(|store| ShapedWatches::new(store, lagging(prefix, lag)).without_progress()).await
}

async fn core_shaped(
    shaped: impl FnOnce(Arc<dyn Storage>) -> ShapedWatches,
) -> (tempfile::TempDir, crate::verbs::ApiCore) {
    let (dir, core, _) = core_and_store(shaped).await;
    (dir, core)
}

async fn core_and_store(
    shaped: impl FnOnce(Arc<dyn Storage>) -> ShapedWatches,
) -> (tempfile::TempDir, crate::verbs::ApiCore, Arc<ShapedWatches>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = capstan_storage::embedded::EmbeddedStore::open(dir.path()).expect("store");
    let storage = Arc::new(shaped(Arc::new(store)));
    let core = crate::verbs::ApiCore::new(
        Arc::new(crate::registry::RegistryHandle::new(
            crate::registry::Registry::builtin(),
        )),
        storage.clone(),
        "/registry",
    );
    core.bootstrap().await.expect("bootstrap");
    core.start_watch_caches();
    (dir, core, storage)
}

/// Creates `object`, of the core (v1) `resource`, in namespace default as
/// the system user; the object as created.
pub async fn create_in_default(
    core: &crate::verbs::ApiCore,
    resource: &str,
    object: serde_json::Value,
) -> serde_json::Value {
    let def = core.resolve("", "v1", resource).expect("a core resource");
    core.create(
        &crate::auth::UserInfo::system(),
        &def,
        Some("default"),
        object,
        &crate::verbs::WriteOptions::default(),
    )
    .await
    .map(|created| std::sync::Arc::unwrap_or_clone(created.object))
    .expect("created")
}

/// Runs `check` with the admission attributes of a request by the system
/// user on the built-in `group`/`resource` (v1) in `default`.
pub fn attributes_for<T>(
    group: &str,
    resource: &str,
    operation: crate::admission::attributes::Operation,
    check: impl FnOnce(&crate::admission::attributes::Attributes<'_>) -> T,
) -> T {
    attributes_with(group, resource, operation, "", None, check)
}

/// [`attributes_for`] on a subresource, with the stored object.
pub fn attributes_with<T>(
    group: &str,
    resource: &str,
    operation: crate::admission::attributes::Operation,
    subresource: &str,
    old: Option<&serde_json::Value>,
    check: impl FnOnce(&crate::admission::attributes::Attributes<'_>) -> T,
) -> T {
    let user = crate::auth::UserInfo::system();
    let def = capstan_api::registry::Registry::builtin()
        .lookup(group, "v1", resource)
        .unwrap_or_else(|| panic!("{group}/v1 {resource} is built in"));
    let attributes = crate::admission::attributes::Attributes {
        operation,
        user: &user,
        def: &def,
        namespace: def.namespaced.then_some("default"),
        name: "x",
        subresource,
        old,
        dry_run: false,
        field_manager: "",
    };
    check(&attributes)
}
