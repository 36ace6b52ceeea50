//! Watch: turns the store's ordered change stream for one collection into
//! Kubernetes watch events, applying selectors with upstream's transition
//! rules (an object that stops matching is DELETED for that watcher).

pub mod cache;
pub mod cached;

pub use cached::SharedEncodings;
pub mod field_index;

use std::time::Duration;

use std::future::Future;
use std::task::{ready, Poll};

use futures::stream::{self, BoxStream, StreamExt};
use serde_json::{json, Value};

use crate::auth::UserInfo;
use crate::error::{ApiError, ApiResult};
use crate::object;
use crate::registry::ResourceDef;
use crate::selectors::{FieldSelector, LabelSelector};
use crate::storage::{EventKind, ListParams, StorageError, StorageEvent};
use crate::verbs::ApiCore;
use crate::watch::cache::{CacheEvent, CacheWatch};
use crate::watch::cached::{CachedObject, LazyObject};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    Added,
    Modified,
    Deleted,
    Bookmark,
    Error,
}

impl EventType {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Added => "ADDED",
            Self::Modified => "MODIFIED",
            Self::Deleted => "DELETED",
            Self::Bookmark => "BOOKMARK",
            Self::Error => "ERROR",
        }
    }
}

#[derive(Debug, Clone)]
pub struct WatchEvent {
    pub event_type: EventType,
    /// The object, a bookmark (kind + metadata.resourceVersion only), or a
    /// Status. Shared: every watcher of a change gets the same cached
    /// object, so fan-out costs no copies, and one that writes it as JSON
    /// never parses it.
    pub object: LazyObject,
    encodings: EventEncodings,
}

/// Where a watch event's encodings are kept, shared like its object: the
/// first watcher that needs one makes it, every other watcher of the same
/// change reuses it.
#[derive(Debug, Clone)]
enum EventEncodings {
    /// With the cached object, made when a watcher first asks: watchers in
    /// the server itself (controllers) read the tree and never encode.
    Cached(Arc<CachedObject>),
    /// An object the cache does not hold (a bookmark, a Status, an object
    /// gone from a watcher's selection).
    Own(Arc<SharedEncodings>),
}

impl WatchEvent {
    /// An event whose object no other watcher shares.
    pub fn new(event_type: EventType, object: Arc<Value>) -> Self {
        Self::of(event_type, object.into())
    }

    /// An event of `object`, sharing the cache's encodings when it is a
    /// cached object.
    fn of(event_type: EventType, object: LazyObject) -> Self {
        Self {
            event_type,
            encodings: match object.cached_object() {
                Some(cached) => EventEncodings::Cached(cached.clone()),
                None => EventEncodings::Own(Arc::default()),
            },
            object,
        }
    }

    /// The object's encodings, shared by every watcher of this change.
    pub fn encodings(&self) -> &SharedEncodings {
        match &self.encodings {
            EventEncodings::Cached(cached) => cached.encodings(),
            EventEncodings::Own(own) => own,
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct WatchOptions {
    pub label_selector: String,
    pub field_selector: String,
    pub resource_version: String,
    pub allow_bookmarks: bool,
    pub timeout: Option<Duration>,
    pub send_initial_events: Option<bool>,
    /// NotOlderThan, required with `send_initial_events` (see
    /// `read_options::validate_watch`).
    pub resource_version_match: String,
}

/// How long a streaming list without a resourceVersion waits for the watch
/// cache to reach the store's current revision (upstream's cacher blocks
/// for 3 s too) before answering 504.
const FRESH_CACHE_WAIT: Duration = Duration::from_secs(3);

/// How often a watch with bookmarks allowed reports progress (upstream's
/// cacher: about once a minute per watcher, whatever events it sent).
const BOOKMARK_INTERVAL: Duration = Duration::from_secs(60);
/// Upstream's --min-request-timeout; watches without a timeout last 1-2x this.
const MIN_REQUEST_TIMEOUT: Duration = Duration::from_secs(1800);

pub type WatchStream = BoxStream<'static, WatchEvent>;

struct Filter {
    labels: LabelSelector,
    fields: FieldSelector,
    /// Whether the watched resource's keys hold a namespace.
    namespaced: bool,
}

impl Filter {
    /// Whether the object stored under `key` passes (see `selects`).
    fn matches_at(&self, key: &str, obj: &LazyObject) -> bool {
        selects(&self.labels, &self.fields, self.namespaced, key, obj)
    }
}

/// Whether `labels` and `fields` select the object stored under `key`:
/// without selectors it is not read at all, so a cached object is not
/// parsed for it, and a selector on its name or namespace alone is answered
/// from the key (as upstream's cacher keeps those fields beside each
/// object). `namespaced`: whether the resource's keys hold a namespace.
pub(crate) fn selects(
    labels: &LabelSelector,
    fields: &FieldSelector,
    namespaced: bool,
    key: &str,
    obj: &LazyObject,
) -> bool {
    if labels.is_empty() && fields.is_empty() {
        return true;
    }
    if labels.is_empty() {
        let mut segments = key.rsplit('/');
        let name = segments.next().unwrap_or_default();
        let namespace = if namespaced {
            segments.next().unwrap_or_default()
        } else {
            ""
        };
        if let Some(matched) = fields.matches_name(name, namespace) {
            return matched;
        }
    }
    labels.matches(obj) && fields.matches(obj)
}

/// One change, from the cache or from storage, with the object before it.
struct Change {
    kind: EventKind,
    key: Arc<str>,
    revision: i64,
    current: LazyObject,
    prev: Option<LazyObject>,
}

impl Change {
    fn from_storage(ev: &StorageEvent) -> Option<Self> {
        if ev.kind == EventKind::Progress {
            return None;
        }
        Some(Self {
            kind: ev.kind,
            key: ev.key.as_str().into(),
            revision: ev.revision,
            current: object::decode_at(&ev.value, ev.revision)?.into(),
            prev: ev
                .prev_value
                .as_ref()
                .and_then(|p| object::decode_at(p, ev.revision))
                .map(LazyObject::from),
        })
    }

    fn from_cache(ev: &CacheEvent) -> Self {
        Self {
            kind: ev.kind,
            key: ev.key.clone(),
            revision: ev.revision,
            current: LazyObject::cached(ev.object.clone()),
            prev: ev.prev.clone().map(LazyObject::cached),
        }
    }
}

/// One change as this watcher sees it, if at all.
fn translate(change: &Change, filter: &Filter) -> Option<WatchEvent> {
    let current = &change.current;
    let matches = |object: &LazyObject| filter.matches_at(&change.key, object);
    let was = change.prev.as_ref().is_some_and(matches);
    match change.kind {
        EventKind::Delete => {
            // The deleted object carries the revision of the delete.
            let matched = was || (change.prev.is_none() && matches(current));
            matched.then(|| WatchEvent::of(EventType::Deleted, current.clone()))
        }
        EventKind::Put => match (was, matches(current)) {
            (true, true) => Some(WatchEvent::of(EventType::Modified, current.clone())),
            (false, true) => Some(WatchEvent::of(EventType::Added, current.clone())),
            (true, false) => change.prev.as_ref().map(|p| {
                let mut gone = Value::clone(p);
                object::set_meta(
                    &mut gone,
                    "resourceVersion",
                    Value::String(change.revision.to_string()),
                );
                WatchEvent::new(EventType::Deleted, Arc::new(gone))
            }),
            (false, false) => None,
        },
        EventKind::Progress => None,
    }
}

/// A BOOKMARK: only the kind and the revision the watcher is current at.
fn bookmark(kind: &str, api_version: &str, revision: i64, initial_events_end: bool) -> WatchEvent {
    let mut metadata = json!({"resourceVersion": revision.to_string()});
    if initial_events_end {
        metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
    }
    WatchEvent::new(
        EventType::Bookmark,
        Arc::new(json!({"kind": kind, "apiVersion": api_version, "metadata": metadata})),
    )
}

/// The initial events of a watch: an ADDED for each object (stored under
/// its key) that matches.
fn added_events<K: AsRef<str>>(
    objects: impl Iterator<Item = (K, LazyObject)>,
    filter: &Filter,
) -> Vec<WatchEvent> {
    objects
        .filter(|(key, o)| filter.matches_at(key.as_ref(), o))
        .map(|(_, object)| WatchEvent::of(EventType::Added, object))
        .collect()
}

fn error_event(err: &ApiError) -> WatchEvent {
    WatchEvent::new(EventType::Error, Arc::new(err.to_status()))
}

fn too_old(requested: i64, oldest: i64) -> ApiError {
    ApiError::expired(format!("too old resource version: {requested} ({oldest})"))
}

/// Where a watcher's changes come from.
enum Source {
    Cache {
        backlog: std::collections::VecDeque<Arc<CacheEvent>>,
        live: tokio::sync::mpsc::Receiver<Arc<CacheEvent>>,
        dispatched: Arc<AtomicI64>,
    },
    Storage(crate::storage::EventStream),
}

impl Source {
    fn from_cache(w: CacheWatch) -> Self {
        Self::Cache {
            backlog: w.backlog.into(),
            live: w.live,
            dispatched: w.dispatched,
        }
    }

    /// The next change; None when the source ended (for a cache watcher:
    /// it was too slow and got closed, and its client re-watches).
    fn poll_next(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> Poll<Option<Result<Change, StorageError>>> {
        match self {
            Self::Cache { backlog, live, .. } => {
                if let Some(ev) = backlog.pop_front() {
                    return Poll::Ready(Some(Ok(Change::from_cache(&ev))));
                }
                live.poll_recv(cx)
                    .map(|ev| ev.map(|ev| Ok(Change::from_cache(&ev))))
            }
            Self::Storage(stream) => loop {
                match ready!(stream.poll_next_unpin(cx)) {
                    None => return Poll::Ready(None),
                    Some(Ok(ev)) => {
                        if let Some(change) = Change::from_storage(&ev) {
                            return Poll::Ready(Some(Ok(change)));
                        }
                    }
                    Some(Err(e)) => return Poll::Ready(Some(Err(e))),
                }
            },
        }
    }

    /// The revision a bookmark may claim: every event up to it was delivered.
    fn progress(&self, last: i64) -> i64 {
        match self {
            Self::Cache {
                backlog,
                live,
                dispatched,
            } => {
                // Read the dispatch mark before checking the queue: anything
                // dispatched up to the mark is then either queued or consumed.
                let mark = dispatched.load(Ordering::Acquire);
                if backlog.is_empty() && live.is_empty() {
                    last.max(mark)
                } else {
                    last
                }
            }
            Self::Storage(_) => last,
        }
    }
}

/// A watch's changes after its initial events, as this watcher sees them,
/// with its bookmarks, until its deadline. Written as a stream rather than
/// an async loop: it is polled once per change for each of many watchers,
/// and an async step per poll remade its future and copied the kind's
/// names for every event.
struct Changes {
    source: Source,
    filter: Filter,
    last: i64,
    done: bool,
    // Made once per watch: a timer made for every event costs each of many
    // watchers two registrations with the timer wheel.
    deadline: std::pin::Pin<Box<tokio::time::Sleep>>,
    /// None when the client did not allow bookmarks.
    bookmarks: Option<Bookmarks>,
}

struct Bookmarks {
    next: std::pin::Pin<Box<tokio::time::Sleep>>,
    kind: String,
    api_version: String,
}

impl futures::Stream for Changes {
    type Item = WatchEvent;

    fn poll_next(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> Poll<Option<WatchEvent>> {
        let this = self.get_mut();
        if this.done {
            return Poll::Ready(None);
        }
        // The timers first: a watcher whose changes never stop still ends
        // at its deadline and gets its bookmarks.
        if this.deadline.as_mut().poll(cx).is_ready() {
            this.done = true;
            return Poll::Ready(None);
        }
        if let Some(bookmarks) = &mut this.bookmarks {
            if bookmarks.next.as_mut().poll(cx).is_ready() {
                bookmarks
                    .next
                    .as_mut()
                    .reset(tokio::time::Instant::now() + BOOKMARK_INTERVAL);
                this.last = this.source.progress(this.last);
                return Poll::Ready(Some(bookmark(
                    &bookmarks.kind,
                    &bookmarks.api_version,
                    this.last,
                    false,
                )));
            }
        }
        loop {
            match ready!(this.source.poll_next(cx)) {
                None => {
                    this.done = true;
                    return Poll::Ready(None);
                }
                Some(Err(e)) => {
                    this.done = true;
                    let err = match e {
                        StorageError::Compacted {
                            requested,
                            compacted,
                        } => too_old(requested, compacted + 1),
                        other => ApiError::internal(other),
                    };
                    return Poll::Ready(Some(error_event(&err)));
                }
                Some(Ok(change)) => {
                    // Registration may predate the client's revision.
                    if change.revision <= this.last {
                        continue;
                    }
                    this.last = change.revision;
                    if let Some(out) = translate(&change, &this.filter) {
                        return Poll::Ready(Some(out));
                    }
                }
            }
        }
    }
}

impl ApiCore {
    /// The changes under `prefix` after revision `after`: from the cache,
    /// or from storage when the cache's window no longer reaches back that
    /// far. A revision storage no longer holds gets the stream upstream
    /// answers it with: one ERROR event (410), then the end.
    async fn changes_after(
        &self,
        cache: &crate::watch::cache::WatchCache,
        prefix: &str,
        after: i64,
        fields: &FieldSelector,
    ) -> ApiResult<Result<Source, WatchStream>> {
        if let Some(registration) = cache.watch_selecting(prefix, after, fields) {
            return Ok(Ok(Source::from_cache(registration)));
        }
        match self.storage.watch(prefix, after).await {
            Ok(stream) => Ok(Ok(Source::Storage(stream))),
            Err(StorageError::Compacted { compacted, .. }) => {
                let err = too_old(after, compacted + 1);
                Ok(Err(stream::iter(vec![error_event(&err)]).boxed()))
            }
            Err(e) => Err(ApiError::internal(e)),
        }
    }

    pub async fn watch(
        &self,
        user: &UserInfo,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: Option<&str>,
        opts: &WatchOptions,
    ) -> ApiResult<WatchStream> {
        let namespace = if def.namespaced {
            namespace.filter(|ns| !ns.is_empty())
        } else {
            None
        };
        let attrs = crate::auth::ResourceAttributes {
            verb: "watch",
            group: &def.group,
            resource: &def.resource,
            subresource: None,
            namespace,
            name,
        };
        self.authorize_request(user, &crate::auth::AccessRequest::Resource(&attrs))
            .await?;
        if !def.supports("watch") {
            return Err(ApiError::method_not_supported(
                &def.group,
                &def.resource,
                "watch",
            ));
        }
        crate::verbs::read_options::validate_watch(opts)?;
        let mut field_selector = opts.field_selector.clone();
        if let Some(name) = name {
            if !field_selector.is_empty() {
                field_selector.push(',');
            }
            field_selector.push_str(&format!("metadata.name={name}"));
        }
        let filter = Filter {
            labels: LabelSelector::parse(&opts.label_selector)?,
            fields: FieldSelector::for_resource(&field_selector, def)?,
            namespaced: def.namespaced,
        };
        let prefix = def.key_prefix(&self.prefix, namespace);
        let rv = opts.resource_version.as_str();
        // Without a resourceVersion ("" or "0") a watch starts with the
        // current state as ADDED events, as upstream does; so does an explicit
        // sendInitialEvents=true.
        let initial = opts
            .send_initial_events
            .unwrap_or(rv.is_empty() || rv == "0");
        let cache = self.watch_cache(def).await?;
        // A streaming list without a resourceVersion is a consistent read:
        // its initial events include every change made before the request.
        let consistent = opts.send_initial_events == Some(true) && rv.is_empty();
        let (mut head, start, source) = if consistent && !self.storage.progress_is_ordered() {
            // The cache cannot learn that it is current (old etcd): the
            // initial state comes from storage, the changes after it from
            // the cache.
            let listed = self
                .storage
                .list(&prefix, ListParams::default())
                .await
                .map_err(ApiError::internal)?;
            let objects = listed.items.iter().filter_map(|kv| {
                let object = object::decode_at(&kv.value, kv.mod_revision)?;
                Some((kv.key.clone(), LazyObject::from(object)))
            });
            let added = added_events(objects, &filter);
            match self
                .changes_after(&cache, &prefix, listed.revision, &filter.fields)
                .await?
            {
                Ok(source) => (added, listed.revision, source),
                Err(too_old) => return Ok(too_old),
            }
        } else if initial {
            if consistent {
                // The cache must first reach the current revision.
                let (current, reached) = self.catch_up(&cache, FRESH_CACHE_WAIT).await?;
                if !reached {
                    return Err(ApiError::too_large_resource_version(
                        current,
                        cache.revision(),
                    ));
                }
            }
            let (objects, revision, registration) =
                cache.list_and_watch_selecting(&prefix, &filter.fields);
            let objects = objects
                .into_iter()
                .map(|(key, object)| (key, LazyObject::cached(object)));
            let added = added_events(objects, &filter);
            (added, revision, Source::from_cache(registration))
        } else {
            let after = crate::verbs::parse_revision(rv)?;
            match self
                .changes_after(&cache, &prefix, after, &filter.fields)
                .await?
            {
                Ok(source) => (Vec::new(), after, source),
                Err(too_old) => return Ok(too_old),
            }
        };
        if opts.send_initial_events == Some(true) && opts.allow_bookmarks {
            head.push(bookmark(&def.kind, &def.api_version(), start, true));
        }
        let timeout = opts.timeout.unwrap_or_else(|| {
            let extra = rand::random::<f64>();
            MIN_REQUEST_TIMEOUT.mul_f64(1.0 + extra)
        });
        let deadline = tokio::time::Instant::now() + timeout;
        let tail = Changes {
            source,
            filter,
            last: start,
            done: false,
            deadline: Box::pin(tokio::time::sleep_until(deadline)),
            bookmarks: opts.allow_bookmarks.then(|| Bookmarks {
                next: Box::pin(tokio::time::sleep(BOOKMARK_INTERVAL)),
                kind: def.kind.clone(),
                api_version: def.api_version(),
            }),
        };
        let events = stream::iter(head).chain(tail);
        if !def.transforms_on_read() {
            return Ok(events.boxed());
        }
        // Stored at another version, or defaulted on read: every object
        // goes out as the watched resource serves it.
        let form = crate::registry::ServedForm::of(def);
        Ok(events
            .map(move |event| match event.event_type {
                EventType::Bookmark | EventType::Error => event,
                event_type => {
                    match form.serve(Arc::unwrap_or_clone(event.object.into_tree())) {
                        // A new object: the cache event's encodings are of the stored one.
                        Ok(object) => WatchEvent::new(event_type, Arc::new(object)),
                        Err(e) => error_event(&ApiError::conversion(e)),
                    }
                }
            })
            .boxed())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// A cached object's events share the object's encodings, made only
    /// when a watcher first encodes; other events share their own.
    #[test]
    fn events_share_encodings_made_when_first_asked_for() {
        let cached = Arc::new(CachedObject::encode(
            &json!({"kind": "ConfigMap", "metadata": {"name": "a", "resourceVersion": "3"}}),
        ));
        let added = WatchEvent::of(EventType::Added, LazyObject::cached(cached.clone()));
        let modified = WatchEvent::of(EventType::Modified, LazyObject::cached(cached.clone()));
        assert!(
            !cached.has_encodings(),
            "events of a change do not make the set; a watcher that encodes does"
        );
        let line = || b"line".to_vec();
        let first = added.encodings().json_watch_line("ADDED", line);
        let second = modified.encodings().json_watch_line("ADDED", line);
        assert_eq!(first.as_ptr(), second.as_ptr(), "one set for the object");
        assert!(std::ptr::eq(added.encodings(), &**cached.encodings()));

        let mark = bookmark("ConfigMap", "v1", 3, false);
        let copy = mark.clone();
        assert!(std::ptr::eq(mark.encodings(), copy.encodings()));
        let another = bookmark("ConfigMap", "v1", 4, false);
        assert!(!std::ptr::eq(mark.encodings(), another.encodings()));
    }

    /// sendInitialEvents=true without a resourceVersion: the initial events
    /// include a change made just before, even with the cache 500 ms behind.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_streaming_list_without_a_version_waits_for_the_cache() {
        let (_dir, core) = crate::testing::core_lagging_behind(
            "/registry/configmaps/",
            Duration::from_millis(500),
        )
        .await;
        streams_the_state_then_each_change_once(&core, Duration::from_secs(5)).await;
    }

    /// The same where the cache cannot learn that it is current (old etcd
    /// reports no progress it can trust): the initial events come from
    /// storage, live changes from the cache, each once. The cache lags
    /// longer than a streaming list waits for it (`FRESH_CACHE_WAIT`), so
    /// only the storage path answers.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_streaming_list_without_progress_reads_storage() {
        let lag = FRESH_CACHE_WAIT + Duration::from_secs(2);
        let (_dir, core) =
            crate::testing::core_lagging_without_progress("/registry/configmaps/", lag).await;
        streams_the_state_then_each_change_once(&core, lag * 3).await;
    }

    /// A streaming list started just after "fresh" was created has it in
    /// its initial events; "later", created after, comes next, within
    /// `within`, and "fresh" does not come again.
    async fn streams_the_state_then_each_change_once(core: &ApiCore, within: Duration) {
        let mut events = streaming_list_after_a_create(core).await;
        create_configmap(core, "later").await;
        let next = tokio::time::timeout(within, events.next())
            .await
            .expect("the change in time")
            .expect("open");
        assert_eq!(
            (next.event_type, crate::object::name(&next.object)),
            (EventType::Added, "later"),
            "\"fresh\" was in the initial events, and is not sent again"
        );
    }

    /// A watcher's timers come before its changes: an elapsed deadline
    /// ends the stream though a change is waiting, a bookmark due is sent
    /// first (at the revision before the waiting change), then the change.
    #[tokio::test]
    async fn timers_come_before_waiting_changes() {
        let changes = |deadline: Duration, bookmark_in: Duration| {
            let (tx, live) = tokio::sync::mpsc::channel(4);
            let object =
                json!({"kind": "ConfigMap", "metadata": {"name": "a", "resourceVersion": "8"}});
            tx.try_send(Arc::new(CacheEvent {
                kind: EventKind::Put,
                key: Arc::from("/registry/configmaps/default/a"),
                object: Arc::new(CachedObject::encode(&object)),
                prev: None,
                revision: 8,
                indexed: false,
            }))
            .unwrap();
            let stream = Changes {
                source: Source::Cache {
                    backlog: Default::default(),
                    live,
                    dispatched: Arc::new(AtomicI64::new(8)),
                },
                filter: Filter {
                    labels: LabelSelector::default(),
                    fields: FieldSelector::default(),
                    namespaced: true,
                },
                last: 7,
                done: false,
                deadline: Box::pin(tokio::time::sleep(deadline)),
                bookmarks: Some(Bookmarks {
                    next: Box::pin(tokio::time::sleep(bookmark_in)),
                    kind: "ConfigMap".into(),
                    api_version: "v1".into(),
                }),
            };
            (tx, stream)
        };
        let (_tx, mut ended) = changes(Duration::ZERO, Duration::from_secs(60));
        tokio::time::sleep(Duration::from_millis(1)).await;
        assert!(ended.next().await.is_none(), "the deadline ends it");
        assert!(ended.next().await.is_none());

        let (_tx, mut marked) = changes(Duration::from_secs(60), Duration::ZERO);
        tokio::time::sleep(Duration::from_millis(1)).await;
        let first = marked.next().await.expect("a bookmark");
        assert_eq!(first.event_type, EventType::Bookmark);
        assert_eq!(first.object["metadata"]["resourceVersion"], "7");
        let second = marked.next().await.expect("the change");
        assert_eq!(second.event_type, EventType::Added);
        assert_eq!(crate::object::name(&second.object), "a");
    }

    async fn create_configmap(core: &ApiCore, name: &str) {
        crate::testing::create_in_default(
            core,
            "configmaps",
            serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}),
        )
        .await;
    }

    /// Creates ConfigMap "fresh", then starts a streaming list of
    /// namespace default without a resourceVersion, and checks that its
    /// initial events are exactly "fresh"; the rest of the stream.
    async fn streaming_list_after_a_create(core: &ApiCore) -> WatchStream {
        create_configmap(core, "fresh").await;
        let user = UserInfo::system();
        let def = core.resolve("", "v1", "configmaps").expect("configmaps");
        let opts = WatchOptions {
            send_initial_events: Some(true),
            resource_version_match: "NotOlderThan".into(),
            allow_bookmarks: true,
            ..WatchOptions::default()
        };
        let mut events = core
            .watch(&user, &def, Some("default"), None, &opts)
            .await
            .expect("a streaming list");
        let mut names = Vec::new();
        while let Some(event) = events.next().await {
            if event.event_type == EventType::Bookmark {
                break;
            }
            names.push(crate::object::name(&event.object).to_string());
        }
        assert_eq!(names, ["fresh"]);
        events
    }

    fn ev(kind: EventKind, value: Value, prev: Option<Value>) -> StorageEvent {
        StorageEvent {
            kind,
            key: "/k".into(),
            value: Arc::from(serde_json::to_vec(&value).unwrap()),
            prev_value: prev.map(|p| Arc::from(serde_json::to_vec(&p).unwrap())),
            revision: 7,
            create_revision: 1,
        }
    }

    /// A selector on name or namespace alone is answered from the key (the
    /// object, which says otherwise here, is not read); any other selector
    /// reads the object.
    #[test]
    fn name_and_namespace_selectors_read_the_key() {
        let filter = |labels: &str, fields: &str, namespaced: bool| Filter {
            labels: LabelSelector::parse(labels).unwrap(),
            fields: FieldSelector::parse(
                fields,
                &["metadata.name", "metadata.namespace", "status.phase"],
                &|_| "",
            )
            .unwrap(),
            namespaced,
        };
        let elsewhere = LazyObject::from(json!({"metadata": {"name": "zz", "namespace": "other",
            "labels": {"app": "web"}}, "status": {"phase": "Running"}}));
        let key = "/registry/configmaps/default/a";
        let by_key = |f: &Filter| f.matches_at(key, &elsewhere);
        assert!(by_key(&filter("", "metadata.name=a", true)));
        assert!(by_key(&filter(
            "",
            "metadata.name=a,metadata.namespace=default",
            true
        )));
        assert!(!by_key(&filter("", "metadata.namespace=other", true)));
        assert!(by_key(&filter("", "metadata.name!=zz", true)));
        assert!(by_key(&filter("", "metadata.name=a", false)));
        assert!(!by_key(&filter(
            "",
            "metadata.name=a,status.phase=Running",
            true
        )));
        assert!(by_key(&filter("app=web", "", true)));
        assert!(!by_key(&filter("app=web", "metadata.name=a", true)));
    }

    #[test]
    fn selector_transitions_follow_upstream() {
        let filter = Filter {
            labels: LabelSelector::parse("app=web").unwrap(),
            fields: FieldSelector::default(),
            namespaced: true,
        };
        let web = json!({"metadata": {"name": "a", "labels": {"app": "web"}}});
        let api = json!({"metadata": {"name": "a", "labels": {"app": "api"}}});
        let t = |e: StorageEvent| {
            translate(&Change::from_storage(&e).unwrap(), &filter).map(|w| w.event_type)
        };
        assert_eq!(
            t(ev(EventKind::Put, web.clone(), None)),
            Some(EventType::Added)
        );
        assert_eq!(
            t(ev(EventKind::Put, web.clone(), Some(web.clone()))),
            Some(EventType::Modified)
        );
        assert_eq!(
            t(ev(EventKind::Put, api.clone(), Some(web.clone()))),
            Some(EventType::Deleted)
        );
        assert_eq!(
            t(ev(EventKind::Put, web.clone(), Some(api.clone()))),
            Some(EventType::Added)
        );
        assert_eq!(t(ev(EventKind::Put, api.clone(), None)), None);
        assert_eq!(
            t(ev(EventKind::Delete, web.clone(), Some(web.clone()))),
            Some(EventType::Deleted)
        );
        let out = translate(
            &Change::from_storage(&ev(EventKind::Put, web, None)).unwrap(),
            &filter,
        )
        .unwrap();
        assert_eq!(out.object["metadata"]["resourceVersion"], "7");
    }
}
