//! The watch cache, as kube-apiserver's cacher: one storage watch per
//! resource type feeds an in-memory copy of the current state plus a window
//! of recent events. Lists at resourceVersion "0" and watches are served from
//! it, so N watchers cost one storage watch. A watcher that cannot keep up is
//! closed (its client re-watches from its last resourceVersion) instead of
//! blocking the others or growing memory.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use futures::StreamExt;
use serde_json::Value;
use tokio::sync::{mpsc, watch};

use super::cached::CachedObject;
use super::field_index::{FieldIndexSpec, FieldIndexes};
use crate::object;
use crate::selectors::{field_value, FieldSelector};
use crate::storage::{EventKind, ListParams, Storage, StorageError, StorageEvent};

/// Recent events kept for watches that resume from a resourceVersion.
const WINDOW: usize = 4096;
/// Events buffered per watcher before it counts as too slow and is closed.
const WATCHER_BUFFER: usize = 1024;
/// Pause before re-listing after the storage watch failed.
const RESTART_DELAY: Duration = Duration::from_millis(200);
/// The longest wait between attempts to resume a storage watch while the
/// store cannot be reached.
const MAX_RESUME_DELAY: Duration = Duration::from_secs(5);
/// Objects this process just wrote, kept for the caches (see `JustWritten`).
const JUST_WRITTEN: usize = 256;

/// A change as the cache saw it, shared by every watcher.
#[derive(Debug)]
pub struct CacheEvent {
    pub kind: EventKind,
    /// Shared with each watcher's view of the change.
    pub key: Arc<str>,
    /// The new object (Put) or the deleted object with the delete's
    /// revision; its wire forms are made by the first watcher that needs
    /// one.
    pub object: Arc<CachedObject>,
    /// The object before the change, for selector transitions.
    pub prev: Option<Arc<CachedObject>>,
    pub revision: i64,
    /// Whether the cache's `Index` holds for `object`, so a reader of the
    /// index need not parse every change.
    pub indexed: bool,
}

struct Watcher {
    prefix: String,
    tx: mpsc::Sender<Arc<CacheEvent>>,
    /// An indexed field (its position in the cache's `field_indexes`) and
    /// the one value the watcher selects: it is sent only the changes of
    /// objects that hold that value or held it before (a kubelet's watch of
    /// its node's pods is not sent every pod's changes).
    only: Option<(usize, String)>,
}

/// The values of each indexed field in a change: the object's after it and
/// before it.
type ChangedValues = Vec<(String, Option<String>)>;

/// Which objects a cache keeps an index of (see `WatchCache::indexed_under`).
#[derive(Clone, Copy)]
pub struct Index {
    pub holds: fn(&Value) -> bool,
    /// Text the JSON of every object `holds` for contains (the keys it
    /// reads): objects without any of it are not parsed to be asked.
    pub mentions: &'static [&'static str],
}

/// An `Index` with a searcher built for each of its mentions: building one
/// costs about as much as searching a small object, and a cache searches
/// every object it loads and every change.
#[derive(Clone)]
struct CompiledIndex {
    holds: fn(&Value) -> bool,
    mentions: Arc<[memchr::memmem::Finder<'static>]>,
}

impl CompiledIndex {
    fn of(index: Index) -> Self {
        Self {
            holds: index.holds,
            mentions: index
                .mentions
                .iter()
                .map(|text| memchr::memmem::Finder::new(text.as_bytes()))
                .collect(),
        }
    }

    /// Whether `holds` may be true of the object `json` encodes.
    fn may_hold(&self, json: &[u8]) -> bool {
        self.mentions
            .iter()
            .any(|finder| finder.find(json).is_some())
    }
}

const UNINDEXED: Index = Index {
    holds: |_| false,
    mentions: &[],
};

/// Objects under the keys they are stored at, in key order; the keys are
/// the cache's own, shared rather than copied.
pub type Entries<T> = Vec<(Arc<str>, Arc<T>)>;

/// Objects a thread loads apart from the others (see `WatchCache::load`).
const LOAD_PART: usize = 20_000;

/// One thread's share of a load, in key order.
struct LoadedPart {
    objects: Entries<CachedObject>,
    indexed: Vec<String>,
    fields: FieldIndexes,
}

#[derive(Default)]
struct State {
    /// Keys shared, not copied, with the lists and events that name them.
    objects: BTreeMap<Arc<str>, Arc<CachedObject>>,
    /// Keys of the objects the cache's `Index` holds for, kept as changes
    /// arrive, so a reader after those few does not walk every object.
    indexed: BTreeSet<String>,
    /// The kind's field indexes (`Kind::cache_indexes`).
    fields: FieldIndexes,
    revision: i64,
    window: VecDeque<Arc<CacheEvent>>,
    /// Oldest revision after which the window holds every event.
    window_start: i64,
    watchers: HashMap<u64, Watcher>,
    next_watcher: u64,
}

/// A cache's registration for one watcher: the events it missed, then live ones.
pub struct CacheWatch {
    pub backlog: Vec<Arc<CacheEvent>>,
    pub live: mpsc::Receiver<Arc<CacheEvent>>,
    /// Revision up to which every event has been handed to every watcher.
    pub dispatched: Arc<AtomicI64>,
}

/// Objects this process has just written, for the cache that is about to
/// see each as a change: a key and a revision name one stored value, and
/// the writer's object, with that revision as its resourceVersion, is that
/// value decoded, so the cache need not decode it again. A change the cache
/// sees before its writer gets here, or another replica's, is decoded as
/// before, and what it left here ages out (the newest `JUST_WRITTEN` are
/// kept).
#[derive(Default)]
struct JustWritten {
    entries: Mutex<VecDeque<JustWrittenEntry>>,
}

/// Revision, key, the object as the cache will hold it when its writer
/// encoded it (a create, for its answer), and its tree.
type JustWrittenEntry = (i64, String, Option<Arc<CachedObject>>, Arc<Value>);

impl JustWritten {
    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<JustWrittenEntry>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn offer(&self, key: &str, revision: i64, cached: Option<Arc<CachedObject>>, tree: Arc<Value>) {
        let mut entries = self.lock();
        if entries.len() >= JUST_WRITTEN {
            entries.pop_front();
        }
        entries.push_back((revision, key.to_string(), cached, tree));
    }

    /// The object written under `key` at `revision`, for the cache of
    /// `prefix` now seeing that change. The cache's other entries at or
    /// before it go too: its changes arrive in revision order, so nothing
    /// will take them (a writer that offered after the cache had seen its
    /// change), and they would hold their trees until 256 writes later.
    fn take(
        &self,
        prefix: &str,
        key: &str,
        revision: i64,
    ) -> Option<(Option<Arc<CachedObject>>, Arc<Value>)> {
        let mut entries = self.lock();
        let mut taken = None;
        entries.retain(|(rev, k, cached, tree)| {
            if *rev > revision || !k.starts_with(prefix) {
                return true;
            }
            if *rev == revision && k == key {
                taken = Some((cached.clone(), tree.clone()));
            }
            false
        });
        taken
    }
}

pub struct WatchCache {
    prefix: String,
    index: CompiledIndex,
    field_indexes: Vec<FieldIndexSpec>,
    just_written: Arc<JustWritten>,
    state: RwLock<State>,
    dispatched: Arc<AtomicI64>,
    ready: watch::Receiver<bool>,
    /// The revision the cache is current at, for readers waiting to catch up.
    current: watch::Sender<i64>,
    /// The task that fills the cache, stopped when its resource is no
    /// longer served.
    task: std::sync::OnceLock<tokio::task::AbortHandle>,
}

impl WatchCache {
    /// Starts filling a cache for every key under `prefix`.
    pub fn start(storage: Arc<dyn Storage>, prefix: String) -> Arc<Self> {
        Self::start_indexed(storage, prefix, UNINDEXED, Vec::new(), Arc::default())
    }

    /// The same, keeping an index of the objects `index` holds for, and
    /// taking the objects this process wrote from `just_written`.
    fn start_indexed(
        storage: Arc<dyn Storage>,
        prefix: String,
        index: Index,
        field_indexes: Vec<FieldIndexSpec>,
        just_written: Arc<JustWritten>,
    ) -> Arc<Self> {
        let (ready_tx, ready) = watch::channel(false);
        let cache = Arc::new(Self {
            prefix,
            index: CompiledIndex::of(index),
            field_indexes,
            just_written,
            state: RwLock::new(State::default()),
            dispatched: Arc::new(AtomicI64::new(0)),
            ready,
            current: watch::channel(0).0,
            task: std::sync::OnceLock::new(),
        });
        let task = tokio::spawn(Self::run(Arc::downgrade(&cache), storage, ready_tx));
        let _ = cache.task.set(task.abort_handle());
        cache
    }

    async fn run(
        cache: std::sync::Weak<Self>,
        storage: Arc<dyn Storage>,
        ready: watch::Sender<bool>,
    ) {
        loop {
            let Some(this) = cache.upgrade() else { return };
            let prefix = this.prefix.clone();
            drop(this);
            let listed = match storage.list(&prefix, ListParams::default()).await {
                Ok(listed) => listed,
                Err(e) => {
                    tracing::warn!(prefix, error = %e, "watch cache list failed");
                    tokio::time::sleep(RESTART_DELAY).await;
                    continue;
                }
            };
            let (index, specs) = match cache.upgrade() {
                Some(this) => (this.index.clone(), this.field_indexes.clone()),
                None => return,
            };
            // Off the runtime's threads: a store of many objects takes
            // seconds to load, and requests are served meanwhile.
            let Ok((objects, indexed, fields)) =
                tokio::task::spawn_blocking(move || Self::load(listed.items, &index, &specs)).await
            else {
                return;
            };
            let mut events = match storage.watch_latest(&prefix, listed.revision).await {
                Ok(events) => events,
                Err(e) => {
                    tracing::warn!(prefix, error = %e, "watch cache watch failed");
                    tokio::time::sleep(RESTART_DELAY).await;
                    continue;
                }
            };
            {
                let Some(this) = cache.upgrade() else { return };
                let mut state = this.write();
                // Watchers of the previous incarnation may have missed events:
                // closing them makes their clients re-watch.
                state.watchers.clear();
                state.objects = objects;
                state.indexed = indexed;
                state.fields = fields;
                state.revision = listed.revision;
                state.window.clear();
                state.window_start = listed.revision;
                this.dispatched.store(listed.revision, Ordering::Release);
                this.current.send_replace(listed.revision);
            }
            let _ = ready.send(true);
            loop {
                let mut compacted = false;
                while let Some(next) = events.next().await {
                    if matches!(&next, Ok(ev) if ev.kind == EventKind::Put) {
                        // The request that wrote this change usually wakes
                        // with the store's answer at the same moment; letting
                        // it run first lets it offer its object (JustWritten).
                        tokio::task::yield_now().await;
                    }
                    let Some(this) = cache.upgrade() else { return };
                    match next {
                        Ok(ev) => this.apply(ev),
                        Err(e) => {
                            tracing::info!(prefix, error = %e, "watch cache's storage watch ended");
                            compacted = matches!(e, crate::storage::StorageError::Compacted { .. });
                            break;
                        }
                    }
                }
                tokio::time::sleep(RESTART_DELAY).await;
                if compacted {
                    // etcd reports it on a watch it has already created:
                    // resuming from the same revision would only fail again.
                    tracing::info!(prefix, "watch cache restarting with a new list");
                    break;
                }
                // Resume where the cache is (an etcd member failing takes
                // its watches with it; another member has the same
                // history), so watchers stay open. While the store cannot
                // be reached (etcd restarting) the cache keeps trying, with
                // its watchers still open. Only a store that no longer holds
                // that revision, or not yet (restored from an older
                // backup), makes the cache list again.
                let mut delay = RESTART_DELAY;
                let resumed = loop {
                    let Some(this) = cache.upgrade() else { return };
                    let from = this.revision();
                    drop(this);
                    match storage.watch_latest(&prefix, from).await {
                        Ok(resumed) => break Some((from, resumed)),
                        Err(
                            e @ (StorageError::Compacted { .. }
                            | StorageError::FutureRevision { .. }),
                        ) => {
                            tracing::info!(prefix, error = %e, "watch cache restarting with a new list");
                            break None;
                        }
                        Err(e) => {
                            tracing::info!(prefix, error = %e, "watch cache cannot resume its storage watch yet");
                            tokio::time::sleep(delay).await;
                            delay = (delay * 2).min(MAX_RESUME_DELAY);
                        }
                    }
                };
                match resumed {
                    Some((from, resumed)) => {
                        tracing::info!(prefix, from, "watch cache resumed its storage watch");
                        events = resumed;
                    }
                    None => break,
                }
            }
        }
    }

    /// The cache's state from a list of every object in the store, made on
    /// every core: the objects are independent until the map is built.
    fn load(
        mut items: Vec<crate::storage::KeyValue>,
        index: &CompiledIndex,
        specs: &[FieldIndexSpec],
    ) -> (
        BTreeMap<Arc<str>, Arc<CachedObject>>,
        BTreeSet<String>,
        FieldIndexes,
    ) {
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(items.len().div_ceil(LOAD_PART));
        let part = items.len().div_ceil(threads.max(1));
        let mut parts = Vec::with_capacity(threads);
        while items.len() > part {
            parts.push(items.split_off(items.len() - part));
        }
        parts.push(items);
        parts.reverse();
        // A store with few objects (most resources) is loaded here: a thread
        // started for it would leave its allocator pages behind when it ends.
        let loaded: Vec<LoadedPart> = if parts.len() == 1 {
            parts
                .into_iter()
                .map(|part| Self::load_part(part, index, specs))
                .collect()
        } else {
            Self::load_parts(parts, index, specs)
        };
        let mut fields = FieldIndexes::new(specs);
        let mut objects = Vec::new();
        let mut indexed = Vec::new();
        for part in loaded {
            objects.extend(part.objects);
            indexed.extend(part.indexed);
            fields.merge(part.fields);
        }
        // In key order, as the store lists them: built in one pass.
        (
            objects.into_iter().collect(),
            indexed.into_iter().collect(),
            fields,
        )
    }

    /// Each part on a thread of its own.
    fn load_parts(
        parts: Vec<Vec<crate::storage::KeyValue>>,
        index: &CompiledIndex,
        specs: &[FieldIndexSpec],
    ) -> Vec<LoadedPart> {
        std::thread::scope(|scope| {
            let handles: Vec<_> = parts
                .into_iter()
                .map(|part| scope.spawn(move || Self::load_part(part, index, specs)))
                .collect();
            handles
                .into_iter()
                .map(|handle| {
                    handle
                        .join()
                        .unwrap_or_else(|e| std::panic::resume_unwind(e))
                })
                .collect()
        })
    }

    fn load_part(
        items: Vec<crate::storage::KeyValue>,
        index: &CompiledIndex,
        specs: &[FieldIndexSpec],
    ) -> LoadedPart {
        let mut fields = FieldIndexes::new(specs);
        let mut indexed = Vec::new();
        let mut objects = Vec::with_capacity(items.len());
        for kv in items {
            let Some(cached) = CachedObject::stored(&kv.value, kv.mod_revision) else {
                continue;
            };
            drop(kv.value);
            if !fields.is_empty() || index.may_hold(cached.json()) {
                let tree = cached.parsed();
                if (index.holds)(&tree) {
                    indexed.push(kv.key.clone());
                }
                fields.insert(&kv.key, &tree);
            }
            objects.push((Arc::from(kv.key), Arc::new(cached)));
        }
        LoadedPart {
            objects,
            indexed,
            fields,
        }
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, State> {
        self.state
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, State> {
        self.state
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn apply(&self, ev: StorageEvent) {
        if ev.kind == EventKind::Progress {
            self.advance(&mut self.write(), ev.revision);
            return;
        }
        // Decoded and encoded before the lock is taken: readers wait only
        // for the swap.
        let new = if ev.kind == EventKind::Delete && ev.value.is_empty() {
            None
        } else if let Some((cached, tree)) = (ev.kind == EventKind::Put)
            .then(|| self.just_written.take(&self.prefix, &ev.key, ev.revision))
            .flatten()
        {
            let cached = cached.unwrap_or_else(|| Arc::new(CachedObject::of(&tree)));
            Some((cached, Some(tree)))
        } else {
            let Some(cached) = CachedObject::stored(&ev.value, ev.revision) else {
                tracing::warn!(key = ev.key, "watch cache skipped an undecodable value");
                return;
            };
            let cached = Arc::new(cached);
            // Parsed only for what reads the tree: the field indexes, an
            // index that may hold.
            let tree = (!self.field_indexes.is_empty()
                || (ev.kind == EventKind::Put && self.index.may_hold(cached.json())))
            .then(|| cached.parsed());
            Some((cached, tree))
        };
        let indexed = ev.kind == EventKind::Put
            && new
                .as_ref()
                .and_then(|(_, tree)| tree.as_ref())
                .is_some_and(|tree| (self.index.holds)(tree));
        // Kept alive while the change is dispatched, so that reading its
        // indexed fields for selective watchers shares this tree.
        let _tree = new.as_ref().and_then(|(_, tree)| tree.clone());
        let key: Arc<str> = Arc::from(ev.key.as_str());
        let mut guard = self.write();
        let state = &mut *guard;
        let (object, prev, indexed) = match new {
            Some((cached, tree)) => {
                let prev = match ev.kind {
                    EventKind::Put => {
                        if indexed {
                            state.indexed.insert(ev.key.clone());
                        } else {
                            state.indexed.remove(&ev.key);
                        }
                        let prev = state.objects.insert(key.clone(), cached.clone());
                        if !state.fields.is_empty() {
                            if let Some(prev) = &prev {
                                state.fields.remove(&ev.key, &prev.parsed());
                            }
                            // Parsed above whenever the cache has field indexes.
                            if let Some(tree) = &tree {
                                state.fields.insert(&ev.key, tree);
                            }
                        }
                        prev
                    }
                    EventKind::Delete | EventKind::Progress => {
                        state.indexed.remove(&ev.key);
                        let prev = state.objects.remove(ev.key.as_str());
                        if let Some(prev) = prev.as_ref().filter(|_| !state.fields.is_empty()) {
                            state.fields.remove(&ev.key, &prev.parsed());
                        }
                        prev
                    }
                };
                (cached, prev, indexed)
            }
            // The store left the deleted value out (see `watch_latest`): the
            // cache has it, and upstream reports it at the delete's revision.
            None => {
                state.indexed.remove(&ev.key);
                let Some(prev) = state.objects.remove(ev.key.as_str()) else {
                    // Nothing to report for a key the cache never held.
                    self.advance(state, ev.revision);
                    return;
                };
                let prev_tree = prev.parsed();
                state.fields.remove(&ev.key, &prev_tree);
                let mut deleted = Value::clone(&prev_tree);
                object::set_meta(
                    &mut deleted,
                    "resourceVersion",
                    Value::String(ev.revision.to_string()),
                );
                (Arc::new(CachedObject::encode(&deleted)), Some(prev), false)
            }
        };
        if ev.revision <= state.revision {
            // A progress report got ahead of this change: a store broke the
            // contract of `Storage::request_progress` (the etcd store drops
            // the out-of-order answers of etcd before 3.4.31 / 3.5.13).
            tracing::warn!(
                prefix = self.prefix,
                reported = state.revision,
                change = ev.revision,
                "storage reported progress past a change it had not delivered yet"
            );
        }
        let event = Arc::new(CacheEvent {
            kind: ev.kind,
            key,
            object,
            prev,
            revision: ev.revision,
            indexed,
        });
        state.revision = ev.revision;
        if state.window.len() >= WINDOW {
            if let Some(evicted) = state.window.pop_front() {
                state.window_start = evicted.revision;
            }
        }
        state.window.push_back(event.clone());
        // try_send never waits: a full buffer means the watcher is too slow.
        let mut values: Option<ChangedValues> = None;
        state.watchers.retain(|_, w| {
            if !event.key.starts_with(&w.prefix) {
                return true;
            }
            if let Some((field, wanted)) = &w.only {
                let values = values.get_or_insert_with(|| self.changed_values(&event));
                if let Some((now, before)) = values.get(*field) {
                    if now != wanted && before.as_ref() != Some(wanted) {
                        return true;
                    }
                }
            }
            w.tx.try_send(event.clone()).is_ok()
        });
        self.dispatched.store(event.revision, Ordering::Release);
        self.current.send_replace(event.revision);
    }

    /// The values of the cache's indexed fields in `event`'s object and in
    /// the one before it.
    fn changed_values(&self, event: &CacheEvent) -> ChangedValues {
        let now = event.object.parsed();
        let before = event.prev.as_ref().map(|prev| prev.parsed());
        self.field_indexes
            .iter()
            .map(|spec| {
                let value = |tree: &Value| field_value(tree, &spec.field, spec.absent).into_owned();
                (value(&now), before.as_deref().map(value))
            })
            .collect()
    }

    /// The cache is current at `revision` without an event to hand out.
    fn advance(&self, state: &mut State, revision: i64) {
        if revision > state.revision {
            state.revision = revision;
            self.dispatched.store(revision, Ordering::Release);
            self.current.send_replace(revision);
        }
    }

    /// Waits (bounded) until the cache is current at `revision` or later.
    pub async fn wait_for_revision(&self, revision: i64, timeout: Duration) -> bool {
        let mut current = self.current.subscribe();
        tokio::time::timeout(timeout, current.wait_for(|r| *r >= revision))
            .await
            .is_ok_and(|r| r.is_ok())
    }

    /// Waits (bounded) until the first list is loaded.
    pub async fn wait_ready(&self, timeout: Duration) -> bool {
        let mut ready = self.ready.clone();
        tokio::time::timeout(timeout, ready.wait_for(|r| *r))
            .await
            .is_ok_and(|r| r.is_ok())
    }

    pub fn revision(&self) -> i64 {
        self.read().revision
    }

    /// How many objects the cache holds.
    pub fn len(&self) -> usize {
        self.read().objects.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// One object by key, as the cache last saw it; its tree is kept for
    /// the next reader (see `CachedObject::value`).
    pub fn get(&self, key: &str) -> Option<Arc<Value>> {
        let cached = self.read().objects.get(key).cloned();
        cached.map(|object| object.value())
    }

    /// One object by key, its tree not kept (for a reader that will not
    /// come back to it soon).
    pub fn peek(&self, key: &str) -> Option<Arc<Value>> {
        self.cached(key).map(|object| object.parsed())
    }

    /// One object by key as the cache holds it (its bytes; no tree made).
    pub fn cached(&self, key: &str) -> Option<Arc<CachedObject>> {
        self.read().objects.get(key).cloned()
    }

    /// The same, if the cache is current at `revision` or later (None if
    /// not: it has not seen every change up to it). Some(None): there is
    /// no such object at that revision.
    pub fn cached_at(&self, key: &str, revision: i64) -> Option<Option<Arc<CachedObject>>> {
        let state = self.read();
        (state.revision >= revision).then(|| state.objects.get(key).cloned())
    }

    /// Keys and objects under `prefix` (a namespace's or the whole type's),
    /// in key order, and the revision they are current at; their trees are
    /// kept, for readers that come back to the same objects (admission
    /// plugins, controllers). Lists served to clients take
    /// `list_candidates`' encoded objects instead.
    pub fn list(&self, prefix: &str) -> (Entries<Value>, i64) {
        let (entries, revision) = {
            let state = self.read();
            (Self::entries_under(&state, prefix), state.revision)
        };
        let trees = entries
            .into_iter()
            .map(|(key, object)| (key, object.value()))
            .collect();
        (trees, revision)
    }

    /// The objects under `prefix` that the cache's index holds for,
    /// without their keys, and the revision they are current at. The cost
    /// is theirs, not that of every object.
    pub fn indexed_under(&self, prefix: &str) -> (Vec<Arc<Value>>, i64) {
        let (objects, revision): (Vec<_>, _) = {
            let state = self.read();
            let objects = state
                .indexed
                .range(prefix.to_string()..)
                .take_while(|k| k.starts_with(prefix))
                .filter_map(|k| state.objects.get(k.as_str()).cloned())
                .collect();
            (objects, state.revision)
        };
        (objects.iter().map(|o| o.value()).collect(), revision)
    }

    /// The objects under `prefix` whose JSON contains `text`, in key order,
    /// their trees kept. The cached JSON is always compact (stored bytes
    /// served only when canonical, others re-encoded), so `"key":{` finds
    /// exactly the objects with an object at `key` somewhere; the others
    /// are neither parsed nor given a tree to keep.
    pub fn list_mentioning(&self, prefix: &str, text: &str) -> Vec<Arc<Value>> {
        let entries = Self::entries_under(&self.read(), prefix);
        let finder = memchr::memmem::Finder::new(text.as_bytes());
        entries
            .into_iter()
            .filter(|(_, object)| finder.find(object.json()).is_some())
            .map(|(_, object)| object.value())
            .collect()
    }

    /// The objects under `prefix` that `fields` selects may be among, in
    /// key order, and the revision they are current at: those an index
    /// finds for one of its `field=value` terms, or else every object. The
    /// caller still matches each against its selectors.
    pub fn list_candidates(
        &self,
        prefix: &str,
        fields: &FieldSelector,
    ) -> (Entries<CachedObject>, i64) {
        let state = self.read();
        let indexed = fields
            .equalities()
            .find_map(|(field, value)| state.fields.keys(field, value));
        let entries = match indexed {
            Some(keys) => keys
                .into_iter()
                .flatten()
                .filter(|key| key.starts_with(prefix))
                .filter_map(|key| {
                    let (key, object) = state.objects.get_key_value(key.as_str())?;
                    Some((key.clone(), object.clone()))
                })
                .collect(),
            None => Self::entries_under(&state, prefix),
        };
        (entries, state.revision)
    }

    fn entries_under(state: &State, prefix: &str) -> Entries<CachedObject> {
        Self::under(state, prefix)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    /// Every object the cache holds, in key order (by name, for a
    /// cluster-scoped type), as trees kept for the next reader: for
    /// configuration every write consults (admission webhooks, policy
    /// bindings), usually none, so an empty cache costs nothing.
    pub fn all_values(&self) -> Vec<Arc<Value>> {
        let objects: Vec<Arc<CachedObject>> = self.read().objects.values().cloned().collect();
        objects.iter().map(|object| object.value()).collect()
    }

    /// The objects under `prefix` (a namespace's or the whole type's), in
    /// key order, without their keys, and the revision they are current
    /// at: for a list that selects nothing, whose keys no one reads.
    pub fn objects_under(&self, prefix: &str) -> (Vec<Arc<CachedObject>>, i64) {
        let state = self.read();
        let objects = Self::under(&state, prefix)
            .map(|(_, object)| object.clone())
            .collect();
        (objects, state.revision)
    }

    /// The entries whose keys start with `prefix`. The range ends where
    /// such keys end (the prefix with its last byte raised), so a walk of
    /// thousands of objects reads none of their keys on the way.
    fn under<'s>(
        state: &'s State,
        prefix: &str,
    ) -> impl Iterator<Item = (&'s Arc<str>, &'s Arc<CachedObject>)> + 's {
        use std::ops::Bound;
        // Prefixes end in '/'; one that ends otherwise is bounded by a
        // comparison of each key instead.
        let past = prefix
            .as_bytes()
            .last()
            .filter(|last| **last < 0x7f)
            .map(|last| format!("{}{}", &prefix[..prefix.len() - 1], char::from(last + 1)));
        let compared = past.is_none().then(|| prefix.to_string());
        let end = match &past {
            Some(past) => Bound::Excluded(past.as_str()),
            None => Bound::Unbounded,
        };
        state
            .objects
            .range::<str, _>((Bound::Included(prefix), end))
            .take_while(move |(key, _)| compared.as_deref().is_none_or(|p| key.starts_with(p)))
    }

    /// Registers a watcher for events under `prefix` after `after`. None
    /// when the window no longer reaches back that far (the caller falls
    /// back to storage or answers 410).
    pub fn watch(&self, prefix: &str, after: i64) -> Option<CacheWatch> {
        self.watch_selecting(prefix, after, &FieldSelector::default())
    }

    /// The same for a watcher whose `fields` may select one value of an
    /// indexed field: it is then sent only the changes of objects that
    /// hold that value or held it (it still matches each itself).
    pub fn watch_selecting(
        &self,
        prefix: &str,
        after: i64,
        fields: &FieldSelector,
    ) -> Option<CacheWatch> {
        let only = self.selected_value(fields);
        let mut state = self.write();
        if after < state.window_start {
            return None;
        }
        Some(Self::register(
            &mut state,
            prefix,
            after,
            self.dispatched.clone(),
            only,
        ))
    }

    /// The first `field=value` of `fields` on an indexed field.
    fn selected_value(&self, fields: &FieldSelector) -> Option<(usize, String)> {
        fields.equalities().find_map(|(field, value)| {
            let at = self
                .field_indexes
                .iter()
                .position(|spec| spec.field == field)?;
            Some((at, value.to_string()))
        })
    }

    /// The current objects under `prefix` and a watcher from exactly their
    /// revision, taken atomically.
    pub fn list_and_watch(&self, prefix: &str) -> (Entries<CachedObject>, i64, CacheWatch) {
        self.list_and_watch_selecting(prefix, &FieldSelector::default())
    }

    /// The same for a watcher whose `fields` may select one value of an
    /// indexed field (see `watch_selecting`).
    pub fn list_and_watch_selecting(
        &self,
        prefix: &str,
        fields: &FieldSelector,
    ) -> (Entries<CachedObject>, i64, CacheWatch) {
        let only = self.selected_value(fields);
        let mut state = self.write();
        let items = Self::entries_under(&state, prefix);
        let revision = state.revision;
        let watch = Self::register(&mut state, prefix, revision, self.dispatched.clone(), only);
        (items, revision, watch)
    }

    fn register(
        state: &mut State,
        prefix: &str,
        after: i64,
        dispatched: Arc<AtomicI64>,
        only: Option<(usize, String)>,
    ) -> CacheWatch {
        let backlog = state
            .window
            .iter()
            .filter(|e| e.revision > after && e.key.starts_with(prefix))
            .cloned()
            .collect();
        let (tx, live) = mpsc::channel(WATCHER_BUFFER);
        let id = state.next_watcher;
        state.next_watcher += 1;
        state.watchers.insert(
            id,
            Watcher {
                prefix: prefix.to_string(),
                tx,
                only,
            },
        );
        CacheWatch {
            backlog,
            live,
            dispatched,
        }
    }

    /// Stops following storage and closes every watcher (their clients see
    /// the watch end, as upstream's watches end when a CRD is removed).
    fn stop(&self) {
        if let Some(task) = self.task.get() {
            task.abort();
        }
        self.write().watchers.clear();
    }

    #[cfg(test)]
    fn watcher_count(&self) -> usize {
        self.read().watchers.len()
    }
}

/// One cache per resource type, started on first use.
pub struct WatchCaches {
    storage: Arc<dyn Storage>,
    /// Every cache's index.
    index: Index,
    caches: Mutex<HashMap<String, Arc<WatchCache>>>,
    just_written: Arc<JustWritten>,
}

impl WatchCaches {
    pub fn new(storage: Arc<dyn Storage>, index: Index) -> Self {
        Self {
            storage,
            index,
            caches: Mutex::new(HashMap::new()),
            just_written: Arc::default(),
        }
    }

    /// An object was just stored under `key` at `revision`, as it is (with
    /// that revision as its resourceVersion): the cache of its type can
    /// take `cached` and its `tree` rather than decode the change.
    pub fn offer_written(
        &self,
        key: &str,
        revision: i64,
        cached: Option<Arc<CachedObject>>,
        tree: Arc<Value>,
    ) {
        self.just_written.offer(key, revision, cached, tree);
    }

    /// The cache for a resource type's key prefix, started if needed.
    pub fn for_prefix(&self, prefix: &str) -> Arc<WatchCache> {
        self.for_prefix_indexed(prefix, Vec::new)
    }

    /// The same, a cache started here indexing the fields `indexes` names
    /// (its kind's).
    pub fn for_prefix_indexed(
        &self,
        prefix: &str,
        indexes: impl FnOnce() -> Vec<FieldIndexSpec>,
    ) -> Arc<WatchCache> {
        let mut caches = self.caches.lock().unwrap_or_else(|p| p.into_inner());
        caches
            .entry(prefix.to_string())
            .or_insert_with(|| {
                WatchCache::start_indexed(
                    self.storage.clone(),
                    prefix.to_string(),
                    self.index,
                    indexes(),
                    self.just_written.clone(),
                )
            })
            .clone()
    }

    /// Stops the cache of a key prefix no longer served, closing its
    /// watchers; a later `for_prefix` starts a new one.
    pub fn stop(&self, prefix: &str) {
        let stopped = {
            let mut caches = self.caches.lock().unwrap_or_else(|p| p.into_inner());
            caches.remove(prefix)
        };
        if let Some(cache) = stopped {
            cache.stop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::embedded::EmbeddedStore;

    async fn store() -> (tempfile::TempDir, Arc<dyn Storage>) {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn Storage> = Arc::new(EmbeddedStore::open(dir.path()).unwrap());
        (dir, store)
    }

    /// A cache of `/r/po/` indexing `spec.nodeName`, as pods' caches do.
    fn pods_by_node(s: &Arc<dyn Storage>) -> Arc<WatchCache> {
        WatchCache::start_indexed(
            s.clone(),
            "/r/po/".into(),
            UNINDEXED,
            vec![FieldIndexSpec {
                field: "spec.nodeName".into(),
                absent: "",
            }],
            Arc::default(),
        )
    }

    async fn until(cache: &WatchCache, revision: i64) {
        for _ in 0..200 {
            if cache.revision() >= revision {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("cache did not reach revision {revision}");
    }

    /// What a writer offers is what the cache keeps, when its key and
    /// revision match the change; otherwise the change is decoded.
    #[tokio::test]
    async fn a_written_object_is_taken_instead_of_decoded() {
        let (_d, s) = store().await;
        let caches = WatchCaches::new(s.clone(), UNINDEXED);
        let cache = caches.for_prefix("/r/cm/");
        assert!(cache.wait_ready(Duration::from_secs(5)).await);
        let next = s
            .list("/r/cm/", ListParams::default())
            .await
            .unwrap()
            .revision
            + 1;
        let written = Arc::new(serde_json::json!(
            {"metadata": {"name": "x", "resourceVersion": next.to_string()}}
        ));
        // A create offers the object encoded as its answer is; the cache
        // holds that very encoding.
        let encoded = Arc::new(CachedObject::of(&written));
        caches.offer_written("/r/cm/a/x", next, Some(encoded.clone()), written.clone());
        // Offered at a revision the change will not have: decoded instead.
        let stale = Arc::new(serde_json::json!({"metadata": {"name": "y"}}));
        caches.offer_written("/r/cm/a/y", next, None, stale.clone());
        let x = s
            .create("/r/cm/a/x", br#"{"metadata":{"name":"x"}}"#.to_vec())
            .await
            .unwrap();
        assert_eq!(x.mod_revision, next);
        let y = s
            .create("/r/cm/a/y", br#"{"metadata":{"name":"y"}}"#.to_vec())
            .await
            .unwrap();
        until(&cache, y.mod_revision).await;
        let kept = cache.get("/r/cm/a/x").expect("x cached");
        assert!(Arc::ptr_eq(&kept, &written), "{kept}");
        let held = cache.cached("/r/cm/a/x").expect("x cached");
        assert!(Arc::ptr_eq(&held, &encoded));
        let decoded = cache.get("/r/cm/a/y").expect("y cached");
        assert!(!Arc::ptr_eq(&decoded, &stale));
        assert_eq!(
            decoded["metadata"]["resourceVersion"],
            y.mod_revision.to_string()
        );
    }

    /// A stopped cache closes its watchers and is replaced by a new one
    /// when its prefix is served again.
    #[tokio::test]
    async fn a_stopped_cache_closes_its_watchers() {
        let (_d, s) = store().await;
        let caches = WatchCaches::new(s.clone(), UNINDEXED);
        let cache = caches.for_prefix("/r/w/");
        assert!(cache.wait_ready(Duration::from_secs(5)).await);
        let mut watch = cache.watch("/r/w/", cache.revision()).expect("a watch");
        caches.stop("/r/w/");
        let ended = tokio::time::timeout(Duration::from_secs(5), watch.live.recv()).await;
        assert!(matches!(ended, Ok(None)), "the watch ended");
        s.create("/r/w/a/x", b"{}".to_vec()).await.unwrap();
        assert!(
            cache.get("/r/w/a/x").is_none(),
            "the stopped cache follows nothing"
        );
        let again = caches.for_prefix("/r/w/");
        assert!(!Arc::ptr_eq(&cache, &again));
        assert!(again.wait_ready(Duration::from_secs(5)).await);
        assert!(again.get("/r/w/a/x").is_some());
    }

    #[test]
    fn only_the_newest_writes_are_kept() {
        let just = JustWritten::default();
        for revision in 0..(JUST_WRITTEN as i64 + 10) {
            just.offer("/k", revision, None, Arc::new(Value::Null));
        }
        assert_eq!(just.lock().len(), JUST_WRITTEN);
        assert!(just.take("/", "/k", 0).is_none());
        assert!(just.take("/", "/k", JUST_WRITTEN as i64 + 9).is_some());
        assert!(just.take("/", "/k", JUST_WRITTEN as i64 + 9).is_none());
    }

    /// What a cache's change passes can no longer be taken, and goes; other
    /// caches' entries and later ones stay.
    #[test]
    fn a_change_taken_drops_what_its_cache_left_before_it() {
        let just = JustWritten::default();
        just.offer("/r/a/late", 5, None, Arc::new(Value::Null));
        just.offer("/r/b/other", 6, None, Arc::new(Value::Null));
        just.offer("/r/a/x", 7, None, Arc::new(Value::Null));
        just.offer("/r/a/next", 8, None, Arc::new(Value::Null));
        assert!(just.take("/r/a/", "/r/a/x", 7).is_some());
        let left: Vec<(i64, String)> = just
            .lock()
            .iter()
            .map(|(rev, key, _, _)| (*rev, key.clone()))
            .collect();
        assert_eq!(
            left,
            [(6, "/r/b/other".to_string()), (8, "/r/a/next".to_string())]
        );
    }

    /// A prefix's range ends where its keys end, neighbours that sort
    /// just after it (`/r/cm0`, `/r/cma/…`) left out.
    #[tokio::test]
    async fn every_value_comes_in_key_order_and_an_empty_cache_has_none() {
        let (_d, s) = store().await;
        let empty = WatchCache::start(s.clone(), "/r/none/".into());
        assert!(empty.wait_ready(Duration::from_secs(5)).await);
        assert!(empty.all_values().is_empty());
        for name in ["b", "a", "c"] {
            let value = format!(r#"{{"metadata":{{"name":"{name}"}}}}"#);
            s.create(&format!("/r/hooks/{name}"), value.into_bytes())
                .await
                .unwrap();
        }
        let cache = WatchCache::start(s.clone(), "/r/hooks/".into());
        assert!(cache.wait_ready(Duration::from_secs(5)).await);
        let names: Vec<String> = cache
            .all_values()
            .iter()
            .map(|v| crate::object::name(v).to_string())
            .collect();
        assert_eq!(names, ["a", "b", "c"]);
    }

    #[tokio::test]
    async fn objects_under_a_prefix_are_exactly_those_its_keys_start() {
        let (_d, s) = store().await;
        for key in [
            "/r/cm/a/x",
            "/r/cm/b/y",
            "/r/cm0",
            "/r/cma/z",
            "/r/cl/q",
            "/r/c\u{e9}/w",
        ] {
            s.create(key, br#"{"metadata":{"name":"n"}}"#.to_vec())
                .await
                .unwrap();
        }
        let cache = WatchCache::start(s.clone(), "/r/".into());
        assert!(cache.wait_ready(Duration::from_secs(5)).await);
        let keys = |prefix: &str| -> Vec<String> {
            let state = cache.read();
            WatchCache::under(&state, prefix)
                .map(|(key, _)| key.to_string())
                .collect()
        };
        assert_eq!(keys("/r/cm/"), ["/r/cm/a/x", "/r/cm/b/y"]);
        assert_eq!(keys("/r/cm/b/"), ["/r/cm/b/y"]);
        assert_eq!(
            keys("/r/cm"),
            ["/r/cm/a/x", "/r/cm/b/y", "/r/cm0", "/r/cma/z"]
        );
        // A prefix ending in a character past ASCII is compared key by key.
        assert_eq!(keys("/r/c\u{e9}"), ["/r/c\u{e9}/w"]);
        assert_eq!(keys("/r/cx/"), Vec::<String>::new());
        let (objects, revision) = cache.objects_under("/r/cm/");
        assert_eq!(objects.len(), 2);
        assert_eq!(revision, cache.revision());
    }

    #[tokio::test]
    async fn lists_and_watches_follow_the_store() {
        let (_d, s) = store().await;
        s.create("/r/cm/a/x", br#"{"metadata":{"name":"x"}}"#.to_vec())
            .await
            .unwrap();
        let cache = WatchCache::start(s.clone(), "/r/cm/".into());
        assert!(cache.wait_ready(Duration::from_secs(5)).await);
        let (items, rev) = cache.list("/r/cm/");
        assert_eq!(items.len(), 1);
        assert_eq!(items[0].1["metadata"]["resourceVersion"], rev.to_string());
        let (_, start, mut w) = cache.list_and_watch("/r/cm/a/");
        let created = s
            .create("/r/cm/a/y", br#"{"metadata":{"name":"y"}}"#.to_vec())
            .await
            .unwrap();
        s.create("/r/cm/b/z", br#"{"metadata":{"name":"z"}}"#.to_vec())
            .await
            .unwrap();
        let ev = tokio::time::timeout(Duration::from_secs(5), w.live.recv())
            .await
            .unwrap()
            .unwrap();
        assert_eq!((&*ev.key, ev.revision), ("/r/cm/a/y", created.mod_revision));
        assert!(ev.revision > start);
        // Resuming inside the window replays what was missed, namespace-filtered.
        let resumed = cache.watch("/r/cm/a/", start).unwrap();
        assert_eq!(resumed.backlog.len(), 1);
        // Before the window: the caller must go elsewhere.
        assert!(cache.watch("/r/cm/", start - 10).is_none());
    }

    /// Only objects whose JSON holds the text are listed and parsed, also
    /// when they were stored with whitespace (the cache re-encodes those).
    #[tokio::test]
    async fn a_list_of_mentions_parses_only_what_mentions() {
        let (_d, s) = store().await;
        for (key, json) in [
            (
                "/r/as/a",
                r#"{"metadata":{"name":"a"},"spec":{"service":{"name":"s"}}}"#,
            ),
            (
                "/r/as/b",
                r#"{"metadata":{"name":"b"},"spec":{"group":"g"}}"#,
            ),
            (
                "/r/as/c",
                r#"{"metadata": {"name": "c"}, "spec": {"service": {"name": "t"}}}"#,
            ),
            (
                "/r/as/d",
                r#"{"metadata":{"name":"d"},"spec":{"service":null}}"#,
            ),
        ] {
            s.create(key, json.as_bytes().to_vec()).await.unwrap();
        }
        let cache = WatchCache::start(s.clone(), "/r/as/".into());
        assert!(cache.wait_ready(Duration::from_secs(5)).await);
        let names: Vec<String> = cache
            .list_mentioning("/r/as/", "\"service\":{")
            .iter()
            .map(|o| {
                o["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
            .collect();
        assert_eq!(names, ["a", "c"]);
        assert!(!cache.cached("/r/as/b").unwrap().keeps_tree());
        assert!(cache.cached("/r/as/a").unwrap().keeps_tree());
    }

    /// The index follows creates, updates in and out of it, and deletes,
    /// and is rebuilt by the first list.
    #[tokio::test]
    async fn the_index_follows_every_change() {
        fn labelled(object: &Value) -> bool {
            object.pointer("/metadata/labels/indexed").is_some()
        }
        let (_d, s) = store().await;
        s.create(
            "/r/cm/a/listed",
            br#"{"metadata":{"labels":{"indexed":"y"}}}"#.to_vec(),
        )
        .await
        .unwrap();
        let cache = WatchCache::start_indexed(
            s.clone(),
            "/r/cm/".into(),
            Index {
                holds: labelled,
                mentions: &["\"indexed\""],
            },
            Vec::new(),
            Arc::default(),
        );
        assert!(cache.wait_ready(Duration::from_secs(5)).await);
        let plain = s.create("/r/cm/a/plain", b"{}".to_vec()).await.unwrap();
        s.create(
            "/r/cm/b/other",
            br#"{"metadata":{"labels":{"indexed":"y"}}}"#.to_vec(),
        )
        .await
        .unwrap();
        let into = s
            .update(
                "/r/cm/a/plain",
                br#"{"metadata":{"labels":{"indexed":"y"}}}"#.to_vec(),
                plain.mod_revision,
            )
            .await
            .unwrap();
        until(&cache, into.mod_revision).await;
        let indexed = |prefix: &str| cache.indexed_under(prefix).0.len();
        assert_eq!(indexed("/r/cm/a/"), 2, "listed and plain, not other");
        assert_eq!(indexed("/r/cm/"), 3);
        let out = s
            .update("/r/cm/a/plain", b"{}".to_vec(), into.mod_revision)
            .await
            .unwrap();
        let gone = s.delete("/r/cm/b/other", None).await.unwrap();
        until(&cache, out.mod_revision.max(gone.mod_revision)).await;
        assert_eq!(indexed("/r/cm/"), 1, "only the listed one is left");
    }

    /// A kind's field index follows creates, moves and deletes, and a list
    /// selecting one value reads what the index holds for it, under the
    /// prefix asked for; other selectors read every object.
    /// A load split between threads holds every object once, in key
    /// order, with the index and the field index of all of them.
    #[test]
    fn a_load_on_several_threads_is_a_load_of_everything() {
        let count = LOAD_PART * 2 + 7;
        let items: Vec<crate::storage::KeyValue> = (0..count)
            .map(|i| {
                let owned = if i % 1000 == 0 {
                    r#","ownerReferences":[{"name":"o"}]"#
                } else {
                    ""
                };
                crate::storage::KeyValue {
                    key: format!("/r/po/ns/p{i:06}"),
                    value: format!(
                        r#"{{"metadata":{{"name":"p{i:06}"{owned}}},"spec":{{"nodeName":"n{}"}}}}"#,
                        i % 3
                    )
                    .into_bytes()
                    .into(),
                    create_revision: 1,
                    mod_revision: i as i64 + 1,
                }
            })
            .collect();
        let specs = [FieldIndexSpec {
            field: "spec.nodeName".into(),
            absent: "",
        }];
        let (objects, indexed, fields) = WatchCache::load(
            items,
            &CompiledIndex::of(crate::controllers::garbage_collector::INVOLVED),
            &specs,
        );
        assert_eq!(objects.len(), count);
        let last = objects.get("/r/po/ns/p040006").expect("the last object");
        assert_eq!(last.parsed()["metadata"]["resourceVersion"], "40007");
        assert_eq!(indexed.len(), count.div_ceil(1000));
        assert!(indexed.contains("/r/po/ns/p039000"));
        let on_n1 = fields.keys("spec.nodeName", "n1").flatten().expect("n1");
        assert_eq!(on_n1.len(), (0..count).filter(|i| i % 3 == 1).count());
        assert!(on_n1.contains("/r/po/ns/p040003"));
    }

    #[tokio::test]
    async fn field_indexes_answer_lists_selecting_one_value() {
        let (_d, s) = store().await;
        s.create("/r/po/a/listed", br#"{"spec":{"nodeName":"n1"}}"#.to_vec())
            .await
            .unwrap();
        let cache = pods_by_node(&s);
        assert!(cache.wait_ready(Duration::from_secs(5)).await);
        let moved = s
            .create("/r/po/a/moved", br#"{"spec":{"nodeName":"n1"}}"#.to_vec())
            .await
            .unwrap();
        s.create("/r/po/b/other", br#"{"spec":{"nodeName":"n1"}}"#.to_vec())
            .await
            .unwrap();
        let unscheduled = s.create("/r/po/a/pending", b"{}".to_vec()).await.unwrap();
        let moved = s
            .update(
                "/r/po/a/moved",
                br#"{"spec":{"nodeName":"n2"}}"#.to_vec(),
                moved.mod_revision,
            )
            .await
            .unwrap();
        until(&cache, moved.mod_revision.max(unscheduled.mod_revision)).await;
        let selected = |prefix: &str, selector: &str| -> Vec<String> {
            let fields =
                FieldSelector::parse(selector, &["spec.nodeName", "metadata.name"], &|_| "")
                    .expect("selector");
            cache
                .list_candidates(prefix, &fields)
                .0
                .into_iter()
                .map(|(key, _)| key.to_string())
                .collect()
        };
        assert_eq!(
            selected("/r/po/", "spec.nodeName=n1"),
            ["/r/po/a/listed", "/r/po/b/other"]
        );
        assert_eq!(selected("/r/po/a/", "spec.nodeName=n1"), ["/r/po/a/listed"]);
        assert_eq!(selected("/r/po/", "spec.nodeName=n2"), ["/r/po/a/moved"]);
        assert_eq!(selected("/r/po/", "spec.nodeName="), ["/r/po/a/pending"]);
        assert!(selected("/r/po/", "spec.nodeName=n3").is_empty());
        assert_eq!(selected("/r/po/a/", "spec.nodeName!=n1").len(), 3);
        assert_eq!(selected("/r/po/", "metadata.name=x").len(), 4);
        let gone = s.delete("/r/po/b/other", None).await.unwrap();
        until(&cache, gone.mod_revision).await;
        assert_eq!(selected("/r/po/", "spec.nodeName=n1"), ["/r/po/a/listed"]);
    }

    /// A watcher selecting one value of an indexed field is sent only the
    /// changes of objects that hold it or held it; others get every one.
    #[tokio::test]
    async fn watchers_selecting_an_indexed_value_get_only_its_changes() {
        let (_d, s) = store().await;
        let cache = pods_by_node(&s);
        assert!(cache.wait_ready(Duration::from_secs(5)).await);
        let on = |node: &str| {
            FieldSelector::parse(
                &format!("spec.nodeName={node}"),
                &["spec.nodeName"],
                &|_| "",
            )
            .unwrap()
        };
        let start = cache.revision();
        let mut n1 = cache.watch_selecting("/r/po/", start, &on("n1")).unwrap();
        let mut n2 = cache.watch_selecting("/r/po/", start, &on("n2")).unwrap();
        let (_, _, mut unscheduled) = cache.list_and_watch_selecting("/r/po/", &on(""));
        let mut every = cache.watch("/r/po/", start).unwrap();
        let a = s
            .create("/r/po/x/a", br#"{"spec":{"nodeName":"n1"}}"#.to_vec())
            .await
            .unwrap();
        s.create("/r/po/x/b", br#"{"spec":{"nodeName":"n2"}}"#.to_vec())
            .await
            .unwrap();
        s.create("/r/po/x/c", b"{}".to_vec()).await.unwrap();
        let moved = s
            .update(
                "/r/po/x/a",
                br#"{"spec":{"nodeName":"n2"}}"#.to_vec(),
                a.mod_revision,
            )
            .await
            .unwrap();
        let gone = s.delete("/r/po/x/b", None).await.unwrap();
        until(&cache, moved.mod_revision.max(gone.mod_revision)).await;
        let keys = |w: &mut CacheWatch| {
            let mut keys = Vec::new();
            while let Ok(event) = w.live.try_recv() {
                keys.push(event.key.to_string());
            }
            keys
        };
        assert_eq!(
            keys(&mut n1),
            ["/r/po/x/a", "/r/po/x/a"],
            "created on n1, moved away"
        );
        assert_eq!(
            keys(&mut n2),
            ["/r/po/x/b", "/r/po/x/a", "/r/po/x/b"],
            "created, moved in, deleted"
        );
        assert_eq!(keys(&mut unscheduled), ["/r/po/x/c"]);
        assert_eq!(keys(&mut every).len(), 5);
    }

    #[tokio::test]
    async fn a_slow_watcher_is_closed_not_waited_for() {
        let (_d, s) = store().await;
        let cache = WatchCache::start(s.clone(), "/r/cm/".into());
        assert!(cache.wait_ready(Duration::from_secs(5)).await);
        let (_, _, mut slow) = cache.list_and_watch("/r/cm/");
        let (_, _, mut fast) = cache.list_and_watch("/r/cm/");
        let mut last = 0;
        for i in 0..(WATCHER_BUFFER + 50) {
            last = s
                .create(&format!("/r/cm/k{i}"), b"{}".to_vec())
                .await
                .unwrap()
                .mod_revision;
            while let Ok(_ev) = fast.live.try_recv() {}
        }
        until(&cache, last).await;
        while fast.live.try_recv().is_ok() {}
        // The slow one got a full buffer and was dropped; the fast one stays.
        assert_eq!(cache.watcher_count(), 1);
        let mut received = 0;
        while slow.live.recv().await.is_some() {
            received += 1;
        }
        assert_eq!(received, WATCHER_BUFFER);
    }

    /// Three changes written through `store` reach a watcher of a cache
    /// over it, in order, within `within` each, and the cache listed only
    /// once: its storage watch was resumed, never restarted.
    async fn watchers_miss_nothing_and_the_cache_lists_once(
        store: Arc<crate::storage::shaped::ShapedWatches>,
        within: Duration,
    ) {
        let cache = WatchCache::start(store.clone(), "/r/cm/".into());
        assert!(cache.wait_ready(Duration::from_secs(5)).await);
        let (_, _, mut watcher) = cache.list_and_watch("/r/cm/");
        let mut created = Vec::new();
        for name in ["a", "b", "c"] {
            created.push(
                store
                    .create(&format!("/r/cm/{name}"), b"{}".to_vec())
                    .await
                    .unwrap()
                    .mod_revision,
            );
        }
        let mut seen = Vec::new();
        while seen.len() < created.len() {
            let event = tokio::time::timeout(within, watcher.live.recv())
                .await
                .expect("an event in time")
                .expect("the watcher stays open");
            seen.push(event.revision);
        }
        assert_eq!(seen, created);
        assert_eq!(store.lists(), 1, "resumed, not listed again");
    }

    /// A storage watch that fails (an etcd member dying takes its watches
    /// with it) is resumed from the cache's revision: the cache does not
    /// list again, and its watchers stay open and miss nothing.
    #[tokio::test]
    async fn a_failed_storage_watch_is_resumed_and_watchers_stay_open() {
        use crate::storage::shaped::ShapedWatches;
        use crate::storage::StorageError;
        let (_d, inner) = store().await;
        // The first watch ends with an error after its first change.
        let store = Arc::new(ShapedWatches::new(
            inner,
            crate::storage::shaped::first_watch_fails(|| {
                StorageError::Backend("member lost".into())
            }),
        ));
        watchers_miss_nothing_and_the_cache_lists_once(store, Duration::from_secs(5)).await;
    }

    /// A store that cannot be reached for a while (etcd restarting) does
    /// not make the cache list again: it keeps trying to resume, its
    /// watchers stay open, and they get what changed meanwhile.
    #[tokio::test]
    async fn a_storage_watch_is_resumed_after_the_store_comes_back() {
        use crate::storage::shaped::ShapedWatches;
        let (_d, inner) = store().await;
        let store = Arc::new(
            ShapedWatches::new(
                inner,
                crate::storage::shaped::first_watch_fails(|| {
                    StorageError::Backend("connection lost".into())
                }),
            )
            .refusing_watches_after_the_first(3),
        );
        watchers_miss_nothing_and_the_cache_lists_once(store, Duration::from_secs(10)).await;
    }

    /// A storage watch that ends because its revision was compacted (etcd
    /// says so on a watch it has created) cannot be resumed: the cache lists
    /// again and closes its watchers, whose clients re-list.
    #[tokio::test]
    async fn a_compacted_storage_watch_makes_the_cache_list_again() {
        use crate::storage::shaped::ShapedWatches;
        use crate::storage::StorageError;
        let (_d, inner) = store().await;
        // The first watch ends as compacted once a change follows its first;
        // the next (after the new list) is left alone.
        let store = Arc::new(ShapedWatches::new(
            inner,
            crate::storage::shaped::first_watch_fails(|| StorageError::Compacted {
                requested: 1,
                compacted: 2,
            }),
        ));
        let cache = WatchCache::start(store.clone(), "/r/cm/".into());
        assert!(cache.wait_ready(Duration::from_secs(5)).await);
        let (_, _, mut watcher) = cache.list_and_watch("/r/cm/");
        let created = store
            .create("/r/cm/a", b"{}".to_vec())
            .await
            .unwrap()
            .mod_revision;
        let first = tokio::time::timeout(Duration::from_secs(5), watcher.live.recv())
            .await
            .expect("an event within 5 s")
            .expect("the change");
        assert_eq!(first.revision, created);
        // The next change ends the watch: the watcher is closed, and the
        // cache lists again (and so has that change).
        store.create("/r/cm/b", b"{}".to_vec()).await.unwrap();
        let closed = tokio::time::timeout(Duration::from_secs(5), watcher.live.recv())
            .await
            .expect("closed within 5 s");
        assert!(closed.is_none(), "closed, not another event");
        for _ in 0..100 {
            if store.lists() >= 2 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(store.lists(), 2, "listed again");
        let later = store.create("/r/cm/c", b"{}".to_vec()).await.unwrap();
        until(&cache, later.mod_revision).await;
        assert_eq!(cache.list("/r/cm/").0.len(), 3);
    }
}
