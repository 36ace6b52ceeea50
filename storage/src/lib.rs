//! The storage contract every backend fulfils (see DESIGN.md, "Storage
//! contract"). Keys are strings laid out as kube-apiserver does
//! (`/registry/<resource>/<namespace>/<name>`); values are opaque bytes (the
//! JSON of the storage version). Revisions are the store's global, strictly
//! increasing counter and become `metadata.resourceVersion`.

pub mod embedded;
pub mod etcd;
mod etcd_transport;
/// Test support for the consumers of watches (not used by the server).
pub mod shaped;

use std::sync::Arc;

use futures::stream::BoxStream;

pub type Revision = i64;

/// A stored value and the revisions that describe it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyValue {
    pub key: String,
    pub value: Arc<[u8]>,
    /// Revision of the write that created the key.
    pub create_revision: Revision,
    /// Revision of the last write to the key.
    pub mod_revision: Revision,
}

/// One page of a range read.
#[derive(Debug, Clone)]
pub struct ListResult {
    pub items: Vec<KeyValue>,
    /// The revision the page was read at (the snapshot of every page of one list).
    pub revision: Revision,
    /// Keys in the range after the last item returned.
    pub remaining: u64,
}

#[derive(Debug, Clone, Default)]
pub struct ListParams {
    /// Read at this revision; None for the current one.
    pub revision: Option<Revision>,
    /// Only keys strictly greater than this (continuation).
    pub start_after: Option<String>,
    /// 0 for no limit.
    pub limit: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    Put,
    Delete,
    /// No key or value: every change under the prefix up to `revision` has
    /// been sent. Lets a quiet watcher (the watch cache) know it is current.
    Progress,
}

/// A change, in revision order, with the value before it for filtering
/// (a watcher must see an object leave its selector).
#[derive(Debug, Clone)]
pub struct StorageEvent {
    pub kind: EventKind,
    pub key: String,
    /// The new value (Put) or the deleted value (Delete).
    pub value: Arc<[u8]>,
    pub prev_value: Option<Arc<[u8]>>,
    pub revision: Revision,
    pub create_revision: Revision,
}

impl StorageEvent {
    /// A progress notification: everything up to `revision` was sent.
    pub fn progress(revision: Revision) -> Self {
        Self {
            kind: EventKind::Progress,
            key: String::new(),
            value: Arc::from(&[][..]),
            prev_value: None,
            revision,
            create_revision: 0,
        }
    }
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum StorageError {
    #[error("key not found: {0}")]
    NotFound(String),
    #[error("key already exists: {0}")]
    AlreadyExists(String),
    /// Compare-and-swap lost: the key's revision is not the expected one.
    #[error("revision conflict on {key}")]
    Conflict {
        key: String,
        current: Option<KeyValue>,
    },
    /// The requested revision was compacted away.
    #[error("required revision {requested} has been compacted (compacted revision {compacted})")]
    Compacted {
        requested: Revision,
        compacted: Revision,
    },
    /// The requested revision is in the future.
    #[error("required revision {requested} is a future revision (current revision {current})")]
    FutureRevision {
        requested: Revision,
        current: Revision,
    },
    #[error("storage backend: {0}")]
    Backend(String),
}

pub type StorageResult<T> = Result<T, StorageError>;

pub type EventStream = BoxStream<'static, StorageResult<StorageEvent>>;

#[async_trait::async_trait]
pub trait Storage: Send + Sync + 'static {
    async fn get(&self, key: &str) -> StorageResult<Option<KeyValue>>;

    /// Keys under `prefix` in key order, at one revision.
    async fn list(&self, prefix: &str, params: ListParams) -> StorageResult<ListResult>;

    /// Creates `key`; fails with AlreadyExists if it exists. Returns the new revision.
    async fn create(&self, key: &str, value: Vec<u8>) -> StorageResult<KeyValue>;

    /// Compare-and-swap: writes only if the key's mod revision is `expected`.
    async fn update(
        &self,
        key: &str,
        value: Vec<u8>,
        expected: Revision,
    ) -> StorageResult<KeyValue>;

    /// Deletes `key` (if `expected` is set, only at that revision); returns the
    /// deleted value with `mod_revision` set to the revision of the delete.
    async fn delete(&self, key: &str, expected: Option<Revision>) -> StorageResult<KeyValue>;

    /// Every change under `prefix` with a revision greater than `after`, in
    /// order, then live changes. Compacted if `after` is no longer held.
    async fn watch(&self, prefix: &str, after: Revision) -> StorageResult<EventStream>;

    /// Like `watch`, for a watcher that keeps every object itself (the watch
    /// cache): events need not carry `prev_value`, and a Delete's `value` may
    /// be empty (the watcher has the deleted object). etcd then skips reading
    /// the previous value of every key it reports, and sends half as much.
    async fn watch_latest(&self, prefix: &str, after: Revision) -> StorageResult<EventStream> {
        self.watch(prefix, after).await
    }

    async fn current_revision(&self) -> StorageResult<Revision>;

    /// The store's current revision when this process knows it without
    /// asking the store, because every write goes through it (the embedded
    /// store): a consistent read then compares it with a watch cache's and
    /// is served from the cache without reading the store. None for a store
    /// other processes write to (etcd, shared by replicas).
    fn known_revision(&self) -> Option<Revision> {
        None
    }

    /// Forgets history at and below `revision`.
    async fn compact(&self, revision: Revision) -> StorageResult<()>;

    /// Asks every watch for a Progress event once it has seen `revision`,
    /// so a caller waiting for a quiet watch to confirm a revision need not
    /// wait for that watch's next change.
    fn request_progress(&self, _revision: Revision) {}

    /// Whether a progress report (see `request_progress`) always follows
    /// every change the watch had still to deliver. Consistent reads are
    /// served from a watch cache only when it does.
    fn progress_is_ordered(&self) -> bool {
        true
    }

    /// The name componentstatuses reports this store under.
    fn component_name(&self) -> &'static str {
        "embedded-store"
    }
}

/// The end of the key range that starts with `prefix` (exclusive), as etcd's
/// prefix ranges compute it.
pub fn prefix_end(prefix: &str) -> String {
    let mut bytes = prefix.as_bytes().to_vec();
    while let Some(last) = bytes.pop() {
        if last < 0xff {
            bytes.push(last + 1);
            return String::from_utf8_lossy(&bytes).into_owned();
        }
    }
    String::new()
}
