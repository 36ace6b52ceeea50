//! The registry as the server holds it: the current snapshot of the served
//! resources, swapped whole when resources are added or removed (custom
//! resources, API services), so a request reads one consistent set of
//! resources without locking or waiting on a change.

use std::sync::Arc;

use arc_swap::ArcSwap;

pub use capstan_api::registry::*;

/// A change to the set of served resources, as the parts that follow the
/// registry (watch caches, discovery, OpenAPI) hear of it.
#[derive(Debug, Clone)]
pub struct RegistryChange {
    pub added: Vec<Arc<ResourceDef>>,
    pub removed: Vec<Arc<ResourceDef>>,
}

/// The registry as the server holds it: a snapshot readers load without
/// locking, replaced whole when resources are added or removed.
pub struct RegistryHandle {
    current: ArcSwap<Registry>,
    /// Serialises changes (not reads): two changes racing would each build
    /// on the same snapshot and one would be lost.
    change: std::sync::Mutex<()>,
    changes: tokio::sync::broadcast::Sender<RegistryChange>,
}

impl RegistryHandle {
    pub fn new(registry: Registry) -> Self {
        Self {
            current: ArcSwap::from_pointee(registry),
            change: std::sync::Mutex::new(()),
            changes: tokio::sync::broadcast::channel(64).0,
        }
    }

    /// The current snapshot.
    pub fn snapshot(&self) -> Arc<Registry> {
        self.current.load_full()
    }

    pub fn lookup(&self, group: &str, version: &str, resource: &str) -> Option<Arc<ResourceDef>> {
        self.current.load().lookup(group, version, resource)
    }

    pub fn lookup_kind(&self, group: &str, version: &str, kind: &str) -> Option<Arc<ResourceDef>> {
        self.current.load().lookup_kind(group, version, kind)
    }

    /// Hears of every change made after this call.
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<RegistryChange> {
        self.changes.subscribe()
    }

    /// Serves `resources` from now on, replacing any of the same
    /// group/version/resource.
    pub fn add(&self, resources: Vec<ResourceDef>) -> RegistryChange {
        self.apply(resources, &[])
    }

    /// Stops serving the named group/version/resources.
    pub fn remove(&self, resources: &[(String, String, String)]) -> RegistryChange {
        self.apply(Vec::new(), resources)
    }

    /// Records the group/versions remote APIServices claim; whether that
    /// changed them. Not a change of the served resources: nobody hears of
    /// it, and the generation stays.
    pub fn set_proxied(&self, proxied: std::collections::BTreeSet<(String, String)>) -> bool {
        let _serialised = self
            .change
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let old = self.current.load_full();
        if *old.proxied() == proxied {
            return false;
        }
        self.current.store(Arc::new(old.with_proxied(proxied)));
        true
    }

    fn apply(
        &self,
        added: Vec<ResourceDef>,
        removed: &[(String, String, String)],
    ) -> RegistryChange {
        let _serialised = self
            .change
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let old = self.current.load_full();
        let new = old.changed(added, removed);
        let gone = old
            .resources()
            .iter()
            .filter(|r| {
                new.lookup(&r.group, &r.version, &r.resource)
                    .is_none_or(|n| !Arc::ptr_eq(&n, r))
            })
            .cloned()
            .collect();
        let came = new
            .resources()
            .iter()
            .filter(|r| {
                old.lookup(&r.group, &r.version, &r.resource)
                    .is_none_or(|o| !Arc::ptr_eq(&o, r))
            })
            .cloned()
            .collect();
        let change = RegistryChange {
            added: came,
            removed: gone,
        };
        self.current.store(Arc::new(new));
        // Nobody listening is fine: the snapshot is the truth.
        let _ = self.changes.send(change.clone());
        change
    }
}
