//! The garbage collector, as upstream's: objects whose owners
//! (`metadata.ownerReferences`) are gone are deleted (Background), an owner
//! deleted with propagationPolicy Orphan first has the references to it
//! removed from its dependents, and one deleted with Foreground waits until
//! its dependents that block owner deletion are gone.
//!
//! The graph of owners and dependents is rebuilt from the watch caches on
//! every pass, so it is never a source of truth: each decision that removes
//! something is checked against storage first (an owner that looks absent is
//! read back; writes are compare-and-swap with the object's uid), which lets
//! several replicas run it at once.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use futures::stream::{self, BoxStream};
use futures::StreamExt;
use serde_json::{Map, Value};
use tokio_stream::wrappers::ReceiverStream;

use crate::object;
use crate::registry::ResourceDef;
use crate::storage::{EventKind, ListParams};
use crate::verbs::{ApiCore, DeleteOptions};
use crate::watch::cache::{CacheEvent, WatchCache};

/// Holds an owner deleted with propagationPolicy=Orphan until its dependents
/// no longer refer to it.
pub const ORPHAN_FINALIZER: &str = "orphan";
/// Holds an owner deleted with propagationPolicy=Foreground until its
/// blocking dependents are gone.
pub const FOREGROUND_FINALIZER: &str = "foregroundDeletion";

/// A pass runs at most this often while objects keep changing.
const MIN_PASS_INTERVAL: Duration = Duration::from_millis(100);
/// And at least this often, to retry what failed or raced.
const RESYNC: Duration = Duration::from_secs(5);

pub async fn run(core: Arc<ApiCore>) {
    loop {
        // The watch caches say when anything changed (they already watch
        // every stored type), and the passes read what changed from them.
        let changes = match watch_every_cache(&core).await {
            Ok(changes) => changes,
            Err(e) => {
                tracing::warn!(error = %e, "garbage collector cannot watch the caches");
                tokio::time::sleep(RESYNC).await;
                continue;
            }
        };
        // Events are noted as they come, also while a pass runs: a pass
        // over many objects must not leave the caches' queues to fill up
        // (a full queue closes the watcher, which costs a new full pass).
        let feed = Arc::new(ChangeFeed::default());
        let noting = tokio::spawn(note_changes(changes, feed.clone()));
        loop {
            let changed = feed.take();
            // Resync only while something has owners or is being deleted:
            // otherwise only a relevant change can give a pass work.
            let resync = match pass(&core, &changed).await {
                Ok(outcome) => {
                    if outcome.deferred {
                        // Pass again as soon as the interval allows.
                        feed.relevant.notify_one();
                    }
                    outcome.involved
                }
                Err(e) => {
                    tracing::warn!(error = %e, "garbage collector pass failed");
                    true
                }
            };
            tokio::time::sleep(MIN_PASS_INTERVAL).await;
            // Wait for a relevant change, or the resync.
            tokio::select! {
                _ = feed.relevant.notified() => {}
                _ = tokio::time::sleep(RESYNC), if resync => {}
            }
            if feed.lost.load(std::sync::atomic::Ordering::Acquire) {
                // A cache restarted or dropped the watcher: start over,
                // with a full pass.
                break;
            }
        }
        noting.abort();
    }
}

/// What the noting task hands the passes.
#[derive(Default)]
struct ChangeFeed {
    changed: std::sync::Mutex<Changed>,
    /// Woken (or left a permit) for every relevant change.
    relevant: tokio::sync::Notify,
    /// Some cache stopped reporting: changes may have been missed.
    lost: std::sync::atomic::AtomicBool,
}

impl ChangeFeed {
    /// What changed since the last take.
    fn take(&self) -> Changed {
        std::mem::take(&mut *self.changed.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

async fn note_changes(
    mut changes: BoxStream<'static, Option<Arc<CacheEvent>>>,
    feed: Arc<ChangeFeed>,
) {
    while let Some(Some(change)) = changes.next().await {
        let relevant = feed
            .changed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .note(&change);
        if relevant {
            feed.relevant.notify_one();
        }
    }
    feed.lost.store(true, std::sync::atomic::Ordering::Release);
    feed.relevant.notify_one();
}

/// One resource per storage location: kinds served at several versions are
/// read once, at their storage version.
fn collected_resources(core: &ApiCore) -> Vec<Arc<ResourceDef>> {
    core.registry
        .snapshot()
        .resources()
        .iter()
        .filter(|def| def.is_stored() && !def.converts_for_storage())
        .cloned()
        .collect()
}

/// Every stored type's changes from now on, merged; `None` once any one
/// cache stops reporting (its watchers were closed) or the served
/// resources change, so nothing is missed silently.
async fn watch_every_cache(
    core: &ApiCore,
) -> crate::ApiResult<BoxStream<'static, Option<Arc<CacheEvent>>>> {
    // A resource added or removed ends the feed too: the collector starts
    // again over the resources served then.
    let mut changes = core.registry.subscribe();
    let mut streams = vec![stream::once(async move {
        let _ = changes.recv().await;
        None
    })
    .boxed()];
    for def in collected_resources(core) {
        let prefix = def.key_prefix(&core.prefix, None);
        let cache = core.watch_cache(&def).await?;
        // From the cache's current revision; nothing is listed.
        let registration = cache
            .watch(&prefix, cache.revision())
            .ok_or_else(|| crate::ApiError::internal("watch cache window moved on"))?;
        let events = stream::iter(registration.backlog)
            .chain(ReceiverStream::new(registration.live))
            .map(Some)
            .chain(stream::once(async { None }));
        streams.push(events.boxed());
    }
    Ok(stream::select_all(streams).boxed())
}

/// What a pass has to catch up with: the latest revision of a change that
/// can affect ownership (a delete, an object with owners or being
/// deleted). Creates and updates of objects that neither own through
/// references nor are being deleted cannot make garbage, so a burst of them
/// costs no pass.
#[derive(Default)]
struct Changed {
    revision: i64,
}

impl Changed {
    /// Notes `change` if it matters; says whether it did.
    fn note(&mut self, change: &CacheEvent) -> bool {
        let relevant = match change.kind {
            EventKind::Delete => true,
            EventKind::Put => change.indexed,
            EventKind::Progress => false,
        };
        if relevant {
            self.revision = self.revision.max(change.revision);
        }
        relevant
    }
}

/// One object as the collector sees it.
struct Node {
    def: Arc<ResourceDef>,
    object: Arc<Value>,
}

impl Node {
    fn uid(&self) -> &str {
        object::meta_str(&self.object, "uid")
    }

    fn name(&self) -> &str {
        object::name(&self.object)
    }

    fn namespace(&self) -> Option<&str> {
        let ns = object::namespace(&self.object);
        (self.def.namespaced && !ns.is_empty()).then_some(ns)
    }

    /// The revision this version of the object was written at.
    fn revision(&self) -> i64 {
        object::resource_version(&self.object)
            .parse()
            .unwrap_or_default()
    }

    fn deleting(&self) -> bool {
        object::meta(&self.object).is_some_and(|m| m.contains_key("deletionTimestamp"))
    }

    fn has_finalizer(&self, finalizer: &str) -> bool {
        object::finalizers(&self.object)
            .iter()
            .any(|f| f == finalizer)
    }

    fn owner_references(&self) -> &[Value] {
        object::meta(&self.object)
            .and_then(|m| m.get("ownerReferences"))
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }
}

fn reference_uid(reference: &Value) -> &str {
    reference
        .get("uid")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn blocks_owner_deletion(reference: &Value) -> bool {
    reference
        .get("blockOwnerDeletion")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// How long a pass waits for the watch caches to reach its revision; a
/// pass they do not reach in time fails, and is retried.
const CACHE_CATCH_UP: Duration = Duration::from_secs(1);

/// Whether an object takes part in a pass: it owns through references or is
/// being deleted. Most objects do neither; they matter only as owners, and
/// are looked up as such (`owner_cached`). Every watch cache keeps an index
/// of the objects this holds for (`WatchCache::indexed_under`).
pub(crate) const INVOLVED: crate::watch::cache::Index = crate::watch::cache::Index {
    holds: involved,
    mentions: &["\"deletionTimestamp\"", "\"ownerReferences\""],
};

fn involved(object: &Value) -> bool {
    object::meta(object).is_some_and(|meta| {
        meta.contains_key("deletionTimestamp")
            || meta
                .get("ownerReferences")
                .and_then(Value::as_array)
                .is_some_and(|refs| !refs.is_empty())
    })
}

/// The objects that take part in a pass, read from the watch caches: one
/// entry per storage location (kinds served at several versions are read
/// once).
struct Snapshot {
    nodes: Vec<Node>,
    /// Every cache was read at this revision or later: whatever changed up
    /// to it is in the snapshot, whichever cache holds it.
    floor: i64,
}

/// Reads every cache, once each has reached the latest revision any of them
/// (or the change that started the pass) has seen, or the store's current
/// one for a resync. Decisions span caches (an owner in one, its dependents
/// in others), so one lagging cache would hide dependents created before
/// their owner was deleted: an Orphan owner would be let go with them still
/// referring to it, and they would then be collected instead of orphaned.
/// Caches read later in the pass may have moved on; `floor` says how far
/// all of them are known to be complete. Where caches cannot learn that they
/// are current (old etcd), there is no barrier: `complete_from_storage`
/// reads the types that need it from storage instead.
async fn snapshot(core: &ApiCore, changed: &Changed) -> crate::ApiResult<Snapshot> {
    let mut caches = Vec::new();
    for def in collected_resources(core) {
        let cache = core.watch_cache(&def).await?;
        caches.push((def, cache));
    }
    if core.storage.progress_is_ordered() {
        reach_one_revision(core, changed, &caches).await?;
    }
    let mut snapshot = Snapshot {
        nodes: Vec::new(),
        floor: i64::MAX,
    };
    let mut read = Vec::with_capacity(caches.len());
    for (def, cache) in &caches {
        let prefix = def.key_prefix(&core.prefix, None);
        let (objects, revision) = cache.indexed_under(&prefix);
        snapshot.floor = snapshot.floor.min(revision);
        read.push((def.clone(), revision));
        snapshot
            .nodes
            .extend(objects.into_iter().map(|object| Node {
                def: Arc::clone(def),
                object,
            }));
    }
    if !core.storage.progress_is_ordered() {
        complete_from_storage(core, &mut snapshot, &read).await?;
    }
    Ok(snapshot)
}

/// Brings every cache to one revision (see `snapshot`), asking quiet ones
/// to confirm it.
async fn reach_one_revision(
    core: &ApiCore,
    changed: &Changed,
    caches: &[(Arc<ResourceDef>, Arc<WatchCache>)],
) -> crate::ApiResult<()> {
    let seen = caches
        .iter()
        .map(|(_, cache)| cache.revision())
        .max()
        .unwrap_or_default();
    let barrier = if changed.revision > 0 {
        changed.revision.max(seen)
    } else {
        core.current_revision().await?.max(seen)
    };
    if caches.iter().all(|(_, cache)| cache.revision() >= barrier) {
        return Ok(());
    }
    core.storage.request_progress(barrier);
    let caught_up = futures::future::join_all(
        caches
            .iter()
            .map(|(_, cache)| cache.wait_for_revision(barrier, CACHE_CATCH_UP)),
    )
    .await;
    if caught_up.contains(&false) {
        return Err(crate::ApiError::internal(format!(
            "watch caches did not reach revision {barrier} within {CACHE_CATCH_UP:?}"
        )));
    }
    Ok(())
}

/// On a store whose caches cannot learn that they are current (etcd before
/// 3.4.31 / 3.5.13 reports progress out of order, so it is not asked), a
/// quiet cache stays at its last change. Only an Orphan or Foreground owner
/// newer than such a cache needs it complete: the types whose caches were
/// read at an older revision than the newest such owner are read again from
/// storage, at one current revision. Other passes list nothing from storage.
/// `read` is each type with the revision its cache was read at.
async fn complete_from_storage(
    core: &ApiCore,
    snapshot: &mut Snapshot,
    read: &[(Arc<ResourceDef>, i64)],
) -> crate::ApiResult<()> {
    let newest_owner = snapshot
        .nodes
        .iter()
        .filter(|n| {
            n.deleting()
                && (n.has_finalizer(ORPHAN_FINALIZER) || n.has_finalizer(FOREGROUND_FINALIZER))
        })
        .map(Node::revision)
        .max()
        .unwrap_or_default();
    if newest_owner <= snapshot.floor {
        return Ok(());
    }
    let revision = core.current_revision().await?;
    let mut floor = revision;
    for (def, read_at) in read.iter().map(|(def, at)| (def, *at)) {
        if read_at >= newest_owner {
            floor = floor.min(read_at);
            continue;
        }
        let prefix = def.key_prefix(&core.prefix, None);
        let listed = core
            .storage
            .list(
                &prefix,
                ListParams {
                    revision: Some(revision),
                    ..ListParams::default()
                },
            )
            .await
            .map_err(crate::ApiError::internal)?;
        snapshot.nodes.retain(|n| !Arc::ptr_eq(&n.def, def));
        snapshot.nodes.extend(
            listed
                .items
                .iter()
                .filter_map(|kv| object::decode_at(&kv.value, kv.mod_revision))
                .filter(involved)
                .map(|object| Node {
                    def: Arc::clone(def),
                    object: Arc::new(object),
                }),
        );
    }
    snapshot.floor = floor;
    Ok(())
}

/// What a pass found.
struct PassOutcome {
    /// Some object has owners or is being deleted (worth a resync).
    involved: bool,
    /// An owner's deletion was newer than what every cache had read: its
    /// decision waits for the next pass, which should come soon.
    deferred: bool,
}

/// One pass over every object.
async fn pass(core: &ApiCore, changed: &Changed) -> crate::ApiResult<PassOutcome> {
    let Snapshot { nodes, floor } = snapshot(core, changed).await?;
    if nodes.is_empty() {
        return Ok(PassOutcome {
            involved: false,
            deferred: false,
        });
    }
    // Owners the caches hold (a dependent whose owner is not among them is
    // checked against storage before it is collected), and each owner's
    // dependents.
    let mut present: HashSet<&str> = HashSet::new();
    let mut dependents: HashMap<&str, Vec<&Node>> = HashMap::new();
    for node in &nodes {
        for reference in node.owner_references() {
            let uid = reference_uid(reference);
            if !present.contains(uid) && owner_cached(core, node, reference) {
                present.insert(uid);
            }
            dependents.entry(uid).or_default().push(node);
        }
    }
    let no_dependents = Vec::new();
    let mut deferred = false;
    for owner in nodes.iter().filter(|n| n.deleting()) {
        // Dependents created before this version of the owner may sit in a
        // cache read before it got there.
        if owner.revision() > floor {
            deferred = true;
            continue;
        }
        let owned = dependents.get(owner.uid()).unwrap_or(&no_dependents);
        if owner.has_finalizer(ORPHAN_FINALIZER) {
            orphan_dependents(core, owner, owned).await?;
        } else if owner.has_finalizer(FOREGROUND_FINALIZER) {
            delete_in_foreground(core, owner, owned).await?;
        }
    }
    let mut checked = HashSet::new();
    for node in nodes.iter().filter(|n| !n.owner_references().is_empty()) {
        if checked.insert(node.uid()) {
            collect_if_orphaned(core, node, &present).await?;
        }
    }
    Ok(PassOutcome {
        involved: true,
        deferred,
    })
}

/// Orphan: drop the owner from every dependent's references, then let the
/// owner go.
async fn orphan_dependents(core: &ApiCore, owner: &Node, owned: &[&Node]) -> crate::ApiResult<()> {
    let owner_uid = owner.uid().to_string();
    for dependent in owned {
        core.update_stored_metadata(
            &dependent.def,
            dependent.namespace(),
            dependent.name(),
            dependent.uid(),
            |meta| remove_owner_reference(meta, &owner_uid),
        )
        .await?;
    }
    release_finalizer(core, owner, ORPHAN_FINALIZER).await
}

/// Foreground: delete every dependent (in foreground too, so the deletion
/// cascades depth first); the owner goes once no dependent that blocks owner
/// deletion is left.
async fn delete_in_foreground(
    core: &ApiCore,
    owner: &Node,
    owned: &[&Node],
) -> crate::ApiResult<()> {
    let mut blocking = 0;
    for dependent in owned {
        let reference = dependent
            .owner_references()
            .iter()
            .find(|r| reference_uid(r) == owner.uid());
        if reference.is_some_and(blocks_owner_deletion) {
            blocking += 1;
        }
        if !dependent.deleting() {
            delete_dependent(core, dependent, "Foreground").await?;
        }
    }
    if blocking == 0 {
        release_finalizer(core, owner, FOREGROUND_FINALIZER).await?;
    }
    Ok(())
}

/// Background collection: a dependent none of whose owners exist any more
/// is deleted; references to owners that are gone are dropped while others
/// remain. An owner is only believed gone after storage confirms it.
async fn collect_if_orphaned(
    core: &ApiCore,
    node: &Node,
    present: &HashSet<&str>,
) -> crate::ApiResult<()> {
    let mut dangling = Vec::new();
    let references = node.owner_references();
    for reference in references {
        let uid = reference_uid(reference);
        if present.contains(uid) {
            continue;
        }
        if !owner_exists(core, node, reference).await? {
            dangling.push(uid.to_string());
        }
    }
    if dangling.is_empty() {
        return Ok(());
    }
    if dangling.len() == references.len() {
        if !node.deleting() {
            delete_dependent(core, node, "Background").await?;
        }
        return Ok(());
    }
    // Some owners remain: only the references to the missing ones go.
    core.update_stored_metadata(
        &node.def,
        node.namespace(),
        node.name(),
        node.uid(),
        |meta| {
            let mut changed = false;
            for uid in &dangling {
                // Every one, not just the first: no short-circuit.
                changed |= remove_owner_reference(meta, uid);
            }
            changed
        },
    )
    .await?;
    Ok(())
}

/// Reads the owner a reference names from storage (not the cache, which may
/// lag behind a create): it exists when an object of that kind and name with
/// that uid is stored. A reference to a kind this server does not serve
/// counts as existing, so nothing is deleted on a guess.
async fn owner_exists(
    core: &ApiCore,
    dependent: &Node,
    reference: &Value,
) -> crate::ApiResult<bool> {
    let (owner_def, namespace, name) = match owner_location(core, dependent, reference) {
        OwnerLocation::Unknown => return Ok(true),
        OwnerLocation::Impossible => return Ok(false),
        OwnerLocation::At(def, namespace, name) => (def, namespace, name),
    };
    let stored = core.get_if_exists(&owner_def, namespace, name).await?;
    Ok(stored.is_some_and(|owner| object::meta_str(&owner, "uid") == reference_uid(reference)))
}

/// Whether the owner a reference names is in its watch cache, with that
/// uid. A cache that lags may say no; the caller then asks storage.
fn owner_cached(core: &ApiCore, dependent: &Node, reference: &Value) -> bool {
    let OwnerLocation::At(owner_def, namespace, name) = owner_location(core, dependent, reference)
    else {
        return false;
    };
    core.cached_copy_once(&owner_def, namespace, name)
        .is_some_and(|owner| object::meta_str(&owner, "uid") == reference_uid(reference))
}

/// Where the owner an owner reference names would be stored.
enum OwnerLocation<'a> {
    /// A kind this server does not serve.
    Unknown,
    /// A namespaced owner of a cluster-scoped dependent, which cannot be.
    Impossible,
    At(Arc<ResourceDef>, Option<&'a str>, &'a str),
}

fn owner_location<'a>(
    core: &ApiCore,
    dependent: &'a Node,
    reference: &'a Value,
) -> OwnerLocation<'a> {
    let field = |name: &str| {
        reference
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let (api_version, kind) = (field("apiVersion"), field("kind"));
    let name = reference
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let Some(owner_def) = core.registry.lookup_kind(group, version, kind) else {
        return OwnerLocation::Unknown;
    };
    if !owner_def.namespaced {
        return OwnerLocation::At(owner_def, None, name);
    }
    // Owners are in the dependent's namespace.
    match dependent.namespace() {
        Some(namespace) => OwnerLocation::At(owner_def, Some(namespace), name),
        None => OwnerLocation::Impossible,
    }
}

async fn delete_dependent(core: &ApiCore, node: &Node, policy: &str) -> crate::ApiResult<()> {
    // Only the version the decision was made on: a cache may hold an older
    // one (one that still named an owner it has since been orphaned from).
    let opts = DeleteOptions {
        precondition_uid: Some(node.uid().to_string()),
        precondition_resource_version: Some(object::resource_version(&node.object).to_string()),
        propagation_policy: Some(policy.to_string()),
        ..Default::default()
    };
    match core
        .delete_as_system(&node.def, node.namespace(), node.name(), &opts)
        .await
    {
        Ok(_) => {
            tracing::debug!(
                resource = node.def.resource,
                name = node.name(),
                policy,
                "garbage collected"
            );
            Ok(())
        }
        // Gone already, changed since (the next pass decides again), or
        // replaced by a new object of the same name.
        Err(e) if matches!(e.code(), 404 | 409) => Ok(()),
        Err(e) => Err(e),
    }
}

async fn release_finalizer(core: &ApiCore, owner: &Node, finalizer: &str) -> crate::ApiResult<()> {
    core.update_stored_metadata(
        &owner.def,
        owner.namespace(),
        owner.name(),
        owner.uid(),
        |meta| {
            let Some(list) = meta.get_mut("finalizers").and_then(Value::as_array_mut) else {
                return false;
            };
            let before = list.len();
            list.retain(|f| f.as_str() != Some(finalizer));
            let changed = list.len() != before;
            if list.is_empty() {
                meta.remove("finalizers");
            }
            changed
        },
    )
    .await?;
    Ok(())
}

/// Removes the reference to `owner_uid`; false when there was none.
fn remove_owner_reference(meta: &mut Map<String, Value>, owner_uid: &str) -> bool {
    let Some(references) = meta
        .get_mut("ownerReferences")
        .and_then(Value::as_array_mut)
    else {
        return false;
    };
    let before = references.len();
    references.retain(|r| reference_uid(r) != owner_uid);
    let changed = references.len() != before;
    if references.is_empty() {
        meta.remove("ownerReferences");
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn removing_the_last_owner_reference_drops_the_field() {
        let mut meta = json!({
            "name": "web-1",
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "a"},
                {"apiVersion": "v1", "kind": "ConfigMap", "name": "c", "uid": "b"},
            ],
        });
        let meta = meta.as_object_mut().unwrap();
        assert!(remove_owner_reference(meta, "a"));
        assert_eq!(meta["ownerReferences"].as_array().unwrap().len(), 1);
        assert!(!remove_owner_reference(meta, "a"));
        assert!(remove_owner_reference(meta, "b"));
        assert!(!meta.contains_key("ownerReferences"));
    }

    /// An owner deleted with Orphan while the cache of its dependent's type
    /// lags: the pass must wait for every cache to reach the delete, or it
    /// misses the dependent, lets the owner go and later collects the
    /// dependent it was meant to orphan.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn orphaning_waits_for_a_lagging_cache_of_the_dependents() {
        let (_dir, core) =
            crate::testing::core_lagging_behind("/registry/secrets/", Duration::from_millis(500))
                .await;
        orphans_the_dependent(core).await;
    }

    /// The same where caches cannot learn that they are current (old etcd):
    /// the secrets cache stays at its last change, so the pass reads the
    /// secrets from storage.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn orphaning_without_progress_reads_a_lagging_type_from_storage() {
        let (_dir, core) = crate::testing::core_lagging_without_progress(
            "/registry/secrets/",
            Duration::from_millis(500),
        )
        .await;
        orphans_the_dependent(core).await;
    }

    /// Deletes an owner with Orphan while its dependent's cache lags; the
    /// dependent must lose the reference, not be collected.
    async fn orphans_the_dependent(core: ApiCore) {
        let core = Arc::new(core);
        tokio::spawn(run(core.clone()));

        use crate::testing::create_in_default;
        let owner = create_in_default(
            &core,
            "configmaps",
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owner"}}),
        )
        .await;
        let owner_uid = owner["metadata"]["uid"].as_str().expect("uid").to_string();
        create_in_default(
            &core,
            "secrets",
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {
                "name": "dependent",
                "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner_uid}],
            }}),
        )
        .await;
        let user = crate::auth::UserInfo::system();
        let configmaps = core.resolve("", "v1", "configmaps").expect("configmaps");
        core.delete(
            &user,
            &configmaps,
            Some("default"),
            "owner",
            &DeleteOptions {
                propagation_policy: Some("Orphan".into()),
                ..DeleteOptions::default()
            },
        )
        .await
        .expect("owner deleting");

        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while core
            .storage
            .get("/registry/configmaps/default/owner")
            .await
            .expect("read owner")
            .is_some()
        {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the owner was never let go"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // Give a wrong collector time to see the dependent and collect it.
        tokio::time::sleep(Duration::from_secs(2)).await;
        let dependent = core
            .storage
            .get("/registry/secrets/default/dependent")
            .await
            .expect("read dependent")
            .expect("the dependent was orphaned, not collected");
        let dependent: Value = serde_json::from_slice(&dependent.value).expect("json");
        assert!(
            dependent["metadata"].get("ownerReferences").is_none(),
            "the reference to the deleted owner is removed: {dependent}"
        );
    }
}
