//! Test support: a store whose watches are reshaped on their way out (made
//! late, cut short), for testing what consumes watches against failures
//! that a real store shows only under load or when an etcd member dies.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;

use super::{EventStream, KeyValue, ListParams, ListResult, Revision, Storage, StorageResult};

/// Reshapes the `nth` watch (counting from 0) opened under `prefix`.
pub type Shape = Box<dyn Fn(&str, usize, EventStream) -> EventStream + Send + Sync>;

/// Every change under `prefix` reported `lag` late: a watch cache that has
/// fallen behind storage (and the other caches).
pub fn lagging(prefix: &'static str, lag: Duration) -> Shape {
    Box::new(move |watched, _, events| {
        if !watched.starts_with(prefix) {
            return events;
        }
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut events = events;
            while let Some(event) = events.next().await {
                if tx.send((tokio::time::Instant::now() + lag, event)).is_err() {
                    break;
                }
            }
        });
        tokio_stream::wrappers::UnboundedReceiverStream::new(rx)
            .then(|(due, event)| async move {
                tokio::time::sleep_until(due).await;
                event
            })
            .boxed()
    })
}

/// The first watch ends with `error` once a change follows its first one
/// (that later change is not delivered); later watches are left alone.
pub fn first_watch_fails(error: fn() -> super::StorageError) -> Shape {
    Box::new(move |_, nth, events| {
        if nth > 0 {
            return events;
        }
        let mut changed = false;
        events
            .take_while(move |event| {
                let go = !changed;
                changed |= matches!(event, Ok(ev) if ev.kind == super::EventKind::Put);
                futures::future::ready(go)
            })
            .chain(futures::stream::once(async move { Err(error()) }))
            .boxed()
    })
}

pub struct ShapedWatches {
    inner: Arc<dyn Storage>,
    shape: Shape,
    watches: AtomicUsize,
    gets: AtomicUsize,
    lists: AtomicUsize,
    /// Watches still to be refused once the first was opened: a store that
    /// cannot be reached for a while.
    refusals: AtomicUsize,
    /// Watches report no progress and the store says its reports would not
    /// be ordered: etcd before 3.4.31 / 3.5.13, whose answers to progress
    /// requests capstan ignores.
    without_progress: bool,
}

impl ShapedWatches {
    pub fn new(inner: Arc<dyn Storage>, shape: Shape) -> Self {
        Self {
            inner,
            shape,
            watches: AtomicUsize::new(0),
            gets: AtomicUsize::new(0),
            lists: AtomicUsize::new(0),
            refusals: AtomicUsize::new(0),
            without_progress: false,
        }
    }

    /// The same, with watches that never report progress (see
    /// `without_progress`).
    pub fn without_progress(mut self) -> Self {
        self.without_progress = true;
        self
    }

    /// The same, refusing the `n` watches asked for after the first, as a
    /// store that cannot be reached for a while.
    pub fn refusing_watches_after_the_first(self, n: usize) -> Self {
        self.refusals.store(n, Ordering::Relaxed);
        self
    }

    fn refuses(&self) -> bool {
        self.watches.load(Ordering::Relaxed) > 0
            && self
                .refusals
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
                .is_ok()
    }

    /// How many gets were asked for.
    pub fn gets(&self) -> usize {
        self.gets.load(Ordering::Relaxed)
    }

    /// How many lists were asked for.
    pub fn lists(&self) -> usize {
        self.lists.load(Ordering::Relaxed)
    }

    fn shaped(&self, prefix: &str, events: EventStream) -> EventStream {
        let nth = self.watches.fetch_add(1, Ordering::Relaxed);
        let events = if self.without_progress {
            events
                .filter(|event| {
                    let progress = matches!(event, Ok(ev) if ev.kind == super::EventKind::Progress);
                    futures::future::ready(!progress)
                })
                .boxed()
        } else {
            events
        };
        (self.shape)(prefix, nth, events)
    }
}

#[async_trait::async_trait]
impl Storage for ShapedWatches {
    async fn get(&self, key: &str) -> StorageResult<Option<KeyValue>> {
        self.gets.fetch_add(1, Ordering::Relaxed);
        self.inner.get(key).await
    }

    async fn list(&self, prefix: &str, params: ListParams) -> StorageResult<ListResult> {
        self.lists.fetch_add(1, Ordering::Relaxed);
        self.inner.list(prefix, params).await
    }

    async fn create(&self, key: &str, value: Vec<u8>) -> StorageResult<KeyValue> {
        self.inner.create(key, value).await
    }

    async fn update(
        &self,
        key: &str,
        value: Vec<u8>,
        expected: Revision,
    ) -> StorageResult<KeyValue> {
        self.inner.update(key, value, expected).await
    }

    async fn delete(&self, key: &str, expected: Option<Revision>) -> StorageResult<KeyValue> {
        self.inner.delete(key, expected).await
    }

    async fn watch(&self, prefix: &str, after: Revision) -> StorageResult<EventStream> {
        let events = self.inner.watch(prefix, after).await?;
        Ok(self.shaped(prefix, events))
    }

    async fn watch_latest(&self, prefix: &str, after: Revision) -> StorageResult<EventStream> {
        if self.refuses() {
            return Err(super::StorageError::Backend("store unreachable".into()));
        }
        let events = self.inner.watch_latest(prefix, after).await?;
        Ok(self.shaped(prefix, events))
    }

    async fn current_revision(&self) -> StorageResult<Revision> {
        self.inner.current_revision().await
    }

    async fn compact(&self, revision: Revision) -> StorageResult<()> {
        self.inner.compact(revision).await
    }

    fn request_progress(&self, revision: Revision) {
        if !self.without_progress {
            self.inner.request_progress(revision)
        }
    }

    fn progress_is_ordered(&self) -> bool {
        !self.without_progress && self.inner.progress_is_ordered()
    }

    fn known_revision(&self) -> Option<Revision> {
        self.inner.known_revision()
    }
}
