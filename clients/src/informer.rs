//! List+watch with a local cache: client-go's reflector and kube-runtime's
//! `watcher` + `reflector`, in one type.
//!
//! The informer lists, then watches from the list's resourceVersion with
//! bookmarks, so no change between the two is lost. A watch that ends (server
//! timeout, broken connection, restart) resumes from the last resourceVersion
//! seen, so events arrive once and in order. Only when the server answers that
//! the resourceVersion is too old (410 Expired: compacted away) does it list
//! again; the store is then replaced at once and the differences are reported
//! as ADDED / MODIFIED / DELETED, as client-go's `Replace` does (the
//! intermediate history is gone, so those events summarise it).
//!
//! The informer does its work inside [`Informer::next_event`]: nothing is
//! read from the server unless the caller polls, which gives natural
//! back-pressure. [`Informer::next_event`] is cancel-safe: dropping its future
//! loses no event.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use futures::StreamExt;
use serde_json::Value;
use tokio::time::Instant;

use crate::client::{
    resource_version_of, Client, EventType, GroupVersionResource, WatchParams, WatchStream,
};
use crate::error::{ApiError, Error, Result};

/// Where an object lives: namespace ("" when cluster-scoped) and name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectKey {
    pub namespace: String,
    pub name: String,
}

impl ObjectKey {
    pub fn new(namespace: Option<&str>, name: &str) -> Self {
        Self {
            namespace: namespace.unwrap_or_default().to_string(),
            name: name.to_string(),
        }
    }

    fn of(obj: &Value) -> Option<Self> {
        let meta = obj.get("metadata")?;
        Some(Self {
            namespace: meta
                .get("namespace")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            name: meta.get("name")?.as_str()?.to_string(),
        })
    }
}

impl std::fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.namespace.is_empty() {
            f.write_str(&self.name)
        } else {
            write!(f, "{}/{}", self.namespace, self.name)
        }
    }
}

#[derive(Default)]
struct StoreState {
    objects: HashMap<ObjectKey, Arc<Value>>,
    resource_version: String,
    synced: bool,
}

/// The informer's cache. Cheap to clone; every clone sees the same state, so
/// other tasks can read while the informer writes. Objects are shared
/// (`Arc`), so reads copy no JSON.
#[derive(Clone, Default)]
pub struct Store {
    state: Arc<RwLock<StoreState>>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("len", &self.len())
            .field("resource_version", &self.resource_version())
            .finish()
    }
}

impl Store {
    // A panic elsewhere while holding the lock leaves the map consistent
    // (every write is one insert, remove or swap), so poisoning is ignored.
    fn read(&self) -> std::sync::RwLockReadGuard<'_, StoreState> {
        self.state.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, StoreState> {
        self.state.write().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn get(&self, namespace: Option<&str>, name: &str) -> Option<Arc<Value>> {
        self.read()
            .objects
            .get(&ObjectKey::new(namespace, name))
            .cloned()
    }

    /// Every object, ordered by namespace and name.
    pub fn list(&self) -> Vec<Arc<Value>> {
        let state = self.read();
        let mut entries: Vec<_> = state.objects.iter().collect();
        entries.sort_by(|a, b| a.0.cmp(b.0));
        entries.into_iter().map(|(_, v)| v.clone()).collect()
    }

    /// Every key, sorted.
    pub fn keys(&self) -> Vec<ObjectKey> {
        let mut keys: Vec<_> = self.read().objects.keys().cloned().collect();
        keys.sort();
        keys
    }

    pub fn len(&self) -> usize {
        self.read().objects.len()
    }

    pub fn is_empty(&self) -> bool {
        self.read().objects.is_empty()
    }

    /// The resourceVersion the store reflects (of the last list, event or bookmark).
    pub fn resource_version(&self) -> String {
        self.read().resource_version.clone()
    }

    /// True once the first list has been applied.
    pub fn has_synced(&self) -> bool {
        self.read().synced
    }
}

/// What the informer reports, in the order it applied the changes to the store.
#[derive(Debug, Clone)]
pub enum InformerEvent {
    Added(Arc<Value>),
    Modified(Arc<Value>),
    /// The object as last seen (for a deletion found by a relist, the cached copy).
    Deleted(Arc<Value>),
    /// The store now holds a complete list at `resource_version`: after the
    /// first list (`relist: false`) or after a relist that replaced it.
    Synced {
        resource_version: String,
        relist: bool,
    },
}

impl InformerEvent {
    /// The object, for Added / Modified / Deleted.
    pub fn object(&self) -> Option<&Arc<Value>> {
        match self {
            Self::Added(o) | Self::Modified(o) | Self::Deleted(o) => Some(o),
            Self::Synced { .. } => None,
        }
    }
}

/// Exponential backoff with jitter between failed lists or watches,
/// defaulting to client-go's reflector values (800 ms doubling to 30 s).
#[derive(Debug, Clone)]
pub struct Backoff {
    pub initial: Duration,
    pub max: Duration,
    pub factor: f64,
    /// Each delay is stretched by a random fraction up to this (0.0–1.0), so
    /// many clients that failed together do not retry together.
    pub jitter: f64,
}

impl Default for Backoff {
    fn default() -> Self {
        Self {
            initial: Duration::from_millis(800),
            max: Duration::from_secs(30),
            factor: 2.0,
            jitter: 0.2,
        }
    }
}

struct BackoffState {
    config: Backoff,
    next: Duration,
}

impl BackoffState {
    fn new(config: Backoff) -> Self {
        Self {
            next: config.initial,
            config,
        }
    }

    fn delay(&mut self) -> Duration {
        let base = self.next;
        self.next = self.next.mul_f64(self.config.factor).min(self.config.max);
        base.mul_f64(1.0 + self.config.jitter.clamp(0.0, 1.0) * rand::random::<f64>())
    }

    fn reset(&mut self) {
        self.next = self.config.initial;
    }
}

/// What to do after a backoff sleep.
#[derive(Debug, Clone, Copy)]
enum Resume {
    List,
    Watch,
}

enum Phase {
    List {
        relist: bool,
    },
    Watch,
    Streaming {
        stream: WatchStream,
        opened: Instant,
        delivered: bool,
    },
    Sleep {
        until: Instant,
        then: Resume,
    },
}

/// A watch that ends this soon without delivering anything is treated as a
/// failure, so a server that closes watches at once is not hammered.
const MIN_HEALTHY_WATCH: Duration = Duration::from_secs(1);

/// Lists and watches one collection, keeping a [`Store`]. See the module docs.
pub struct Informer {
    client: Client,
    gvr: GroupVersionResource,
    namespace: Option<String>,
    label_selector: String,
    store: Store,
    backoff: BackoffState,
    page_size: i64,
    watch_timeout: (u64, u64),
    phase: Phase,
    pending: VecDeque<InformerEvent>,
    /// The resourceVersion to resume a watch from; empty before the first list.
    last_rv: String,
    listed_once: bool,
}

impl Informer {
    /// An informer over `gvr` in `namespace` (None: all namespaces, or a
    /// cluster-scoped resource) with an optional label selector ("" for all).
    /// Nothing is sent until [`Informer::next_event`] is polled.
    pub fn new(
        client: Client,
        gvr: GroupVersionResource,
        namespace: Option<&str>,
        label_selector: &str,
    ) -> Self {
        Self {
            client,
            gvr,
            namespace: namespace.map(str::to_string),
            label_selector: label_selector.to_string(),
            store: Store::default(),
            backoff: BackoffState::new(Backoff::default()),
            page_size: 500,
            // client-go asks for 5–10 minute watches so that load spreads
            // and a silently stuck stream is replaced eventually.
            watch_timeout: (300, 600),
            phase: Phase::List { relist: false },
            pending: VecDeque::new(),
            last_rv: String::new(),
            listed_once: false,
        }
    }

    pub fn with_backoff(mut self, backoff: Backoff) -> Self {
        self.backoff = BackoffState::new(backoff);
        self
    }

    /// Items per list page (0: the whole list in one response).
    pub fn with_page_size(mut self, page_size: i64) -> Self {
        self.page_size = page_size;
        self
    }

    /// A handle on the cache, for other tasks to read.
    pub fn store(&self) -> Store {
        self.store.clone()
    }

    /// Turns the informer into a stream of its events (never ending).
    pub fn into_stream(self) -> impl futures::Stream<Item = Result<InformerEvent>> + Send {
        futures::stream::unfold(self, |mut informer| async move {
            let item = informer.next_event().await;
            Some((item, informer))
        })
    }

    /// The next change, after it has been applied to the store.
    ///
    /// An `Err` reports a failed list or watch; the informer has already
    /// scheduled a retry with backoff, so keep calling. A resourceVersion
    /// that expired is not reported as an error: the relist that follows
    /// ends with [`InformerEvent::Synced`] `{ relist: true }`.
    pub async fn next_event(&mut self) -> Result<InformerEvent> {
        loop {
            if let Some(ev) = self.pending.pop_front() {
                return Ok(ev);
            }
            match &mut self.phase {
                Phase::Sleep { until, then } => {
                    let then = *then;
                    tokio::time::sleep_until(*until).await;
                    self.phase = match then {
                        Resume::List => Phase::List {
                            relist: self.listed_once,
                        },
                        Resume::Watch => Phase::Watch,
                    };
                }
                Phase::List { relist } => {
                    let relist = *relist;
                    let listed = self
                        .client
                        .list_all(
                            &self.gvr,
                            self.namespace.as_deref(),
                            &self.label_selector,
                            self.page_size,
                        )
                        .await;
                    match listed {
                        Ok(list) => {
                            self.backoff.reset();
                            self.replace(list.items, &list.resource_version, relist);
                            self.phase = Phase::Watch;
                        }
                        Err(e) => {
                            self.sleep_then(Resume::List);
                            return Err(e);
                        }
                    }
                }
                Phase::Watch => {
                    let (lo, hi) = self.watch_timeout;
                    let params = WatchParams {
                        label_selector: self.label_selector.clone(),
                        resource_version: self.last_rv.clone(),
                        allow_bookmarks: true,
                        timeout_seconds: (lo + rand::random::<u64>() % (hi - lo + 1)) as i64,
                        ..Default::default()
                    };
                    match self
                        .client
                        .watch(&self.gvr, self.namespace.as_deref(), &params)
                        .await
                    {
                        Ok(stream) => {
                            self.phase = Phase::Streaming {
                                stream,
                                opened: Instant::now(),
                                delivered: false,
                            };
                        }
                        Err(e) if e.is_expired() => self.relist(),
                        Err(e) => {
                            self.sleep_then(Resume::Watch);
                            return Err(e);
                        }
                    }
                }
                Phase::Streaming {
                    stream,
                    opened,
                    delivered,
                } => match stream.next().await {
                    Some(Ok(ev)) => {
                        *delivered = true;
                        self.backoff.reset();
                        if let Some(out) = self.apply(ev.event_type, ev.object)? {
                            return Ok(out);
                        }
                    }
                    Some(Err(e)) if e.is_expired() => self.relist(),
                    Some(Err(e)) => {
                        self.sleep_then(Resume::Watch);
                        return Err(e);
                    }
                    None => {
                        if !*delivered && opened.elapsed() < MIN_HEALTHY_WATCH {
                            self.sleep_then(Resume::Watch);
                        } else {
                            // A normal end (the watch timed out): resume at once.
                            self.phase = Phase::Watch;
                        }
                    }
                },
            }
        }
    }

    fn sleep_then(&mut self, then: Resume) {
        self.phase = Phase::Sleep {
            until: Instant::now() + self.backoff.delay(),
            then,
        };
    }

    fn relist(&mut self) {
        tracing::debug!(gvr = %self.gvr, rv = %self.last_rv, "resourceVersion expired; relisting");
        self.phase = Phase::List { relist: true };
    }

    /// Applies one watch event; returns what to report, if anything.
    fn apply(&mut self, event_type: EventType, object: Value) -> Result<Option<InformerEvent>> {
        if event_type == EventType::Error {
            let err = ApiError::from_status_object(object);
            if err.is_expired() {
                self.relist();
                return Ok(None);
            }
            self.sleep_then(Resume::Watch);
            return Err(Error::Api(err));
        }
        let rv = resource_version_of(&object).unwrap_or_default().to_string();
        if event_type == EventType::Bookmark {
            self.advance(rv);
            return Ok(None);
        }
        let key = ObjectKey::of(&object).ok_or_else(|| {
            // Without a name the object cannot be cached; the stream is
            // suspect, so start over from a clean list.
            self.relist();
            Error::InvalidObject(format!(
                "watch event {} without metadata.name",
                event_type.as_str()
            ))
        })?;
        let object = Arc::new(object);
        {
            let mut state = self.store.write();
            match event_type {
                EventType::Deleted => {
                    state.objects.remove(&key);
                }
                _ => {
                    state.objects.insert(key, object.clone());
                }
            }
        }
        self.advance(rv);
        Ok(Some(match event_type {
            EventType::Added => InformerEvent::Added(object),
            EventType::Deleted => InformerEvent::Deleted(object),
            _ => InformerEvent::Modified(object),
        }))
    }

    fn advance(&mut self, rv: String) {
        if rv.is_empty() {
            return;
        }
        self.store.write().resource_version = rv.clone();
        self.last_rv = rv;
    }

    /// Swaps in a fresh list and queues the differences as events.
    fn replace(&mut self, items: Vec<Value>, resource_version: &str, relist: bool) {
        let mut fresh: HashMap<ObjectKey, Arc<Value>> = HashMap::with_capacity(items.len());
        let mut order = Vec::with_capacity(items.len());
        for item in items {
            if let Some(key) = ObjectKey::of(&item) {
                order.push(key.clone());
                fresh.insert(key, Arc::new(item));
            }
        }
        let old = {
            let mut state = self.store.write();
            state.resource_version = resource_version.to_string();
            state.synced = true;
            std::mem::replace(&mut state.objects, fresh.clone())
        };
        let mut gone: Vec<_> = old
            .iter()
            .filter(|(k, _)| !fresh.contains_key(*k))
            .collect();
        gone.sort_by(|a, b| a.0.cmp(b.0));
        for (_, obj) in gone {
            self.pending.push_back(InformerEvent::Deleted(obj.clone()));
        }
        for key in order {
            let Some(obj) = fresh.get(&key) else { continue };
            match old.get(&key) {
                None => self.pending.push_back(InformerEvent::Added(obj.clone())),
                Some(prev) if resource_version_of(prev) != resource_version_of(obj) => {
                    self.pending.push_back(InformerEvent::Modified(obj.clone()))
                }
                Some(_) => {}
            }
        }
        self.pending.push_back(InformerEvent::Synced {
            resource_version: resource_version.to_string(),
            relist,
        });
        self.last_rv = resource_version.to_string();
        self.listed_once = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cm(name: &str, rv: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": name, "namespace": "ns", "resourceVersion": rv}})
    }

    /// An informer whose client is never used: these tests drive `replace`
    /// and `apply` directly.
    fn informer() -> Informer {
        let channel = tonic::transport::Endpoint::from_static("http://127.0.0.1:1").connect_lazy();
        Informer::new(
            Client::from_channel(channel),
            GroupVersionResource::core("v1", "configmaps"),
            Some("ns"),
            "",
        )
    }

    fn drain(inf: &mut Informer) -> Vec<String> {
        inf.pending
            .drain(..)
            .map(|ev| match ev {
                InformerEvent::Added(o) => {
                    format!("ADDED {}", o["metadata"]["name"].as_str().unwrap())
                }
                InformerEvent::Modified(o) => {
                    format!("MODIFIED {}", o["metadata"]["name"].as_str().unwrap())
                }
                InformerEvent::Deleted(o) => {
                    format!("DELETED {}", o["metadata"]["name"].as_str().unwrap())
                }
                InformerEvent::Synced {
                    resource_version,
                    relist,
                } => format!("SYNCED {resource_version} {relist}"),
            })
            .collect()
    }

    #[tokio::test]
    async fn first_list_adds_everything_then_syncs() {
        let mut inf = informer();
        inf.replace(vec![cm("a", "1"), cm("b", "2")], "5", false);
        assert_eq!(drain(&mut inf), ["ADDED a", "ADDED b", "SYNCED 5 false"]);
        let store = inf.store();
        assert!(store.has_synced());
        assert_eq!(store.len(), 2);
        assert_eq!(store.resource_version(), "5");
        assert_eq!(inf.last_rv, "5");
    }

    #[tokio::test]
    async fn relist_reports_only_the_differences() {
        let mut inf = informer();
        inf.replace(vec![cm("a", "1"), cm("b", "2"), cm("c", "3")], "3", false);
        drain(&mut inf);
        inf.replace(vec![cm("a", "1"), cm("b", "7"), cm("d", "8")], "9", true);
        assert_eq!(
            drain(&mut inf),
            ["DELETED c", "MODIFIED b", "ADDED d", "SYNCED 9 true"]
        );
        let keys: Vec<_> = inf
            .store()
            .keys()
            .into_iter()
            .map(|k| k.to_string())
            .collect();
        assert_eq!(keys, ["ns/a", "ns/b", "ns/d"]);
    }

    #[tokio::test]
    async fn watch_events_update_the_store_in_order() {
        let mut inf = informer();
        inf.replace(vec![], "1", false);
        drain(&mut inf);
        let ev = inf.apply(EventType::Added, cm("a", "2")).unwrap();
        assert!(matches!(ev, Some(InformerEvent::Added(_))));
        let ev = inf.apply(EventType::Modified, cm("a", "3")).unwrap();
        assert!(matches!(ev, Some(InformerEvent::Modified(_))));
        assert_eq!(
            inf.store().get(Some("ns"), "a").unwrap()["metadata"]["resourceVersion"],
            "3"
        );
        let ev = inf.apply(EventType::Deleted, cm("a", "4")).unwrap();
        assert!(matches!(ev, Some(InformerEvent::Deleted(_))));
        assert!(inf.store().is_empty());
        assert_eq!(inf.last_rv, "4");
    }

    #[tokio::test]
    async fn bookmarks_move_the_resume_point_silently() {
        let mut inf = informer();
        inf.replace(vec![], "1", false);
        let bookmark = json!({"kind": "ConfigMap", "metadata": {"resourceVersion": "42"}});
        assert!(inf.apply(EventType::Bookmark, bookmark).unwrap().is_none());
        assert_eq!(inf.last_rv, "42");
        assert_eq!(inf.store().resource_version(), "42");
    }

    #[tokio::test]
    async fn an_expired_error_event_relists_without_an_error() {
        let mut inf = informer();
        inf.replace(vec![], "1", false);
        let status = json!({"kind": "Status", "code": 410, "reason": "Expired",
                            "message": "too old resource version: 1 (5)"});
        assert!(inf.apply(EventType::Error, status).unwrap().is_none());
        assert!(matches!(inf.phase, Phase::List { relist: true }));
    }

    #[tokio::test]
    async fn other_error_events_back_off_and_resume_the_watch() {
        let mut inf = informer();
        inf.replace(vec![], "1", false);
        let status = json!({"kind": "Status", "code": 500, "reason": "InternalError",
                            "message": "boom"});
        let err = inf.apply(EventType::Error, status).unwrap_err();
        assert!(err.to_string().contains("boom"), "{err}");
        assert!(matches!(
            inf.phase,
            Phase::Sleep {
                then: Resume::Watch,
                ..
            }
        ));
    }

    #[test]
    fn backoff_grows_to_its_cap_and_resets() {
        let mut b = BackoffState::new(Backoff {
            initial: Duration::from_millis(100),
            max: Duration::from_millis(350),
            factor: 2.0,
            jitter: 0.0,
        });
        let delays: Vec<_> = (0..4).map(|_| b.delay().as_millis()).collect();
        assert_eq!(delays, [100, 200, 350, 350]);
        b.reset();
        assert_eq!(b.delay().as_millis(), 100);
    }

    #[test]
    fn jitter_only_stretches() {
        let mut b = BackoffState::new(Backoff {
            initial: Duration::from_millis(100),
            max: Duration::from_secs(1),
            factor: 1.0,
            jitter: 0.5,
        });
        for _ in 0..100 {
            let d = b.delay().as_millis();
            assert!((100..=150).contains(&d), "{d}");
        }
    }
}
