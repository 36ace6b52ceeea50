//! The embedded backend: one redb file in the data directory.
//!
//! Layout: `kv` holds the current value of every key; `log` holds every change
//! by revision (with the value it replaced) so watches can resume from any
//! revision not yet compacted and lists can read a past revision by undoing
//! the changes made after it. A single writer thread applies writes in
//! batches — one transaction and one fsync per batch (group commit) — which is
//! also what makes revisions strictly increasing and compare-and-swap exact.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use futures::StreamExt;
use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};
use tokio::sync::{broadcast, mpsc, oneshot};

use super::{
    EventKind, EventStream, KeyValue, ListParams, ListResult, Revision, Storage, StorageError,
    StorageEvent, StorageResult,
};

mod both_ends;

const KV: TableDefinition<&str, &[u8]> = TableDefinition::new("kv");
const LOG: TableDefinition<u64, &[u8]> = TableDefinition::new("log");
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
const META_REVISION: &str = "revision";
const META_COMPACTED: &str = "compacted";

/// Most writes one transaction takes; bounds the latency a batch adds.
const MAX_BATCH: usize = 512;
/// Live events buffered per watcher before it falls back to reading the log.
const EVENT_BUFFER: usize = 4096;

fn backend(err: impl std::fmt::Display) -> StorageError {
    StorageError::Backend(err.to_string())
}

/// A stored record: revisions then the value.
fn encode_record(create: Revision, modified: Revision, value: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + value.len());
    out.extend_from_slice(&create.to_le_bytes());
    out.extend_from_slice(&modified.to_le_bytes());
    out.extend_from_slice(value);
    out
}

fn decode_record(key: &str, raw: &[u8]) -> StorageResult<KeyValue> {
    if raw.len() < 16 {
        return Err(backend(format!("corrupt record for {key}")));
    }
    let create = i64::from_le_bytes(raw[0..8].try_into().map_err(backend)?);
    let modified = i64::from_le_bytes(raw[8..16].try_into().map_err(backend)?);
    Ok(KeyValue {
        key: key.to_string(),
        value: Arc::from(&raw[16..]),
        create_revision: create,
        mod_revision: modified,
    })
}

/// A log entry: the change and what it replaced.
struct LogEntry {
    kind: EventKind,
    key: String,
    value: Vec<u8>,
    create_revision: Revision,
    /// The previous value and its mod revision.
    prev: Option<(Revision, Vec<u8>)>,
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

fn encode_log(e: &LogEntry) -> Vec<u8> {
    let mut out = Vec::with_capacity(32 + e.key.len() + e.value.len());
    out.push(match e.kind {
        EventKind::Put => 0,
        EventKind::Delete => 1,
        // Never logged: progress is not a change.
        EventKind::Progress => 2,
    });
    out.extend_from_slice(&e.create_revision.to_le_bytes());
    put_bytes(&mut out, e.key.as_bytes());
    put_bytes(&mut out, &e.value);
    match &e.prev {
        Some((rev, value)) => {
            out.push(1);
            out.extend_from_slice(&rev.to_le_bytes());
            put_bytes(&mut out, value);
        }
        None => out.push(0),
    }
    out
}

struct Reader<'a> {
    raw: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> StorageResult<&'a [u8]> {
        let end = self.pos + n;
        let slice = self
            .raw
            .get(self.pos..end)
            .ok_or_else(|| backend("corrupt log entry"))?;
        self.pos = end;
        Ok(slice)
    }
    fn u8(&mut self) -> StorageResult<u8> {
        Ok(self.take(1)?[0])
    }
    fn i64(&mut self) -> StorageResult<i64> {
        Ok(i64::from_le_bytes(
            self.take(8)?.try_into().map_err(backend)?,
        ))
    }
    fn bytes(&mut self) -> StorageResult<&'a [u8]> {
        let len = u32::from_le_bytes(self.take(4)?.try_into().map_err(backend)?) as usize;
        self.take(len)
    }
}

fn decode_log(raw: &[u8]) -> StorageResult<LogEntry> {
    let mut r = Reader { raw, pos: 0 };
    let kind = match r.u8()? {
        0 => EventKind::Put,
        1 => EventKind::Delete,
        other => return Err(backend(format!("corrupt log entry kind {other}"))),
    };
    let create_revision = r.i64()?;
    let key = String::from_utf8(r.bytes()?.to_vec()).map_err(backend)?;
    let value = r.bytes()?.to_vec();
    let prev = match r.u8()? {
        1 => {
            let rev = r.i64()?;
            Some((rev, r.bytes()?.to_vec()))
        }
        _ => None,
    };
    Ok(LogEntry {
        kind,
        key,
        value,
        create_revision,
        prev,
    })
}

fn to_event(revision: Revision, e: LogEntry) -> StorageEvent {
    StorageEvent {
        kind: e.kind,
        key: e.key,
        value: Arc::from(e.value),
        prev_value: e.prev.map(|(_, v)| Arc::from(v)),
        revision,
        create_revision: e.create_revision,
    }
}

enum WriteOp {
    Create {
        key: String,
        value: Vec<u8>,
    },
    Update {
        key: String,
        value: Vec<u8>,
        expected: Revision,
    },
    Delete {
        key: String,
        expected: Option<Revision>,
    },
    Compact {
        revision: Revision,
    },
}

struct WriteRequest {
    op: WriteOp,
    reply: oneshot::Sender<StorageResult<Option<KeyValue>>>,
}

pub struct EmbeddedStore {
    db: Arc<Database>,
    writes: mpsc::Sender<WriteRequest>,
    events: broadcast::Sender<Arc<StorageEvent>>,
    /// The revision readers want quiet watches to confirm (request_progress).
    progress_wanted: tokio::sync::watch::Sender<Revision>,
    /// The last committed revision, published by the writer once its batch
    /// is durable and before any of the batch's writers hears back: this
    /// process is the store's only writer (redb locks the file), so it is
    /// the store's current revision, read without a transaction.
    committed: Arc<AtomicI64>,
    /// Joined on drop: the thread holds the database file's lock, and a
    /// store reopened right after (a restart, a repair tool) must find it free.
    writer: Option<std::thread::JoinHandle<()>>,
}

impl Drop for EmbeddedStore {
    fn drop(&mut self) {
        // Closing the only sender ends the writer's loop after its current batch.
        let (closed, _) = mpsc::channel(1);
        drop(std::mem::replace(&mut self.writes, closed));
        if let Some(writer) = self.writer.take() {
            let _ = writer.join();
        }
    }
}

/// How often a watch with nothing to deliver reports its revision unasked,
/// so idle watch caches stay roughly current for bookmarks.
const IDLE_PROGRESS_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);

/// redb's own default page cache (1 GiB); `open_with_cache` sets another.
pub const DEFAULT_CACHE_BYTES: usize = 1 << 30;

impl EmbeddedStore {
    /// Opens (or creates) `<dir>/capstan.redb` and starts the writer thread.
    pub fn open(dir: &Path) -> StorageResult<Self> {
        Self::open_with_cache(dir, DEFAULT_CACHE_BYTES)
    }

    /// The same, redb keeping at most `cache_bytes` of the file's pages in
    /// memory (pages beyond it are read from the file, through the OS's
    /// page cache).
    pub fn open_with_cache(dir: &Path, cache_bytes: usize) -> StorageResult<Self> {
        std::fs::create_dir_all(dir).map_err(backend)?;
        let db = Database::builder()
            .set_cache_size(cache_bytes)
            .create(dir.join("capstan.redb"))
            .map_err(backend)?;
        let revision = {
            let txn = db.begin_write().map_err(backend)?;
            let revision = {
                // Creating every table up front lets readers open them unconditionally.
                txn.open_table(KV).map_err(backend)?;
                txn.open_table(LOG).map_err(backend)?;
                let meta = txn.open_table(META).map_err(backend)?;
                let rev = meta.get(META_REVISION).map_err(backend)?.map(|v| v.value());
                rev.unwrap_or(1)
            };
            {
                let mut meta = txn.open_table(META).map_err(backend)?;
                meta.insert(META_REVISION, revision).map_err(backend)?;
            }
            txn.commit().map_err(backend)?;
            revision as Revision
        };
        let db = Arc::new(db);
        let (writes, rx) = mpsc::channel(MAX_BATCH * 4);
        let (events, _) = broadcast::channel(EVENT_BUFFER);
        let committed = Arc::new(AtomicI64::new(revision));
        let writer = Writer {
            db: db.clone(),
            revision,
            committed: committed.clone(),
            events: events.clone(),
        };
        let writer = std::thread::Builder::new()
            .name("capstan-store-writer".into())
            .spawn(move || writer.run(rx))
            .map_err(backend)?;
        Ok(Self {
            db,
            writes,
            events,
            progress_wanted: tokio::sync::watch::channel(0).0,
            committed,
            writer: Some(writer),
        })
    }

    async fn submit(&self, op: WriteOp) -> StorageResult<Option<KeyValue>> {
        let (reply, rx) = oneshot::channel();
        self.writes
            .send(WriteRequest { op, reply })
            .await
            .map_err(|_| backend("store writer stopped"))?;
        rx.await.map_err(|_| backend("store writer stopped"))?
    }

    /// A list, read on the calling thread (a blocking one: reading many
    /// objects takes seconds).
    fn list_blocking(db: &Database, prefix: &str, params: ListParams) -> StorageResult<ListResult> {
        let txn = db.begin_read().map_err(backend)?;
        let (current, compacted) = Self::read_meta(&txn)?;
        let at = params.revision.unwrap_or(current);
        if at > current {
            return Err(StorageError::FutureRevision {
                requested: at,
                current,
            });
        }
        if at < compacted {
            return Err(StorageError::Compacted {
                requested: at,
                compacted,
            });
        }
        let start = match &params.start_after {
            Some(after) if after.as_str() >= prefix => format!("{after}\0"),
            _ => prefix.to_string(),
        };
        let end = super::prefix_end(prefix);
        // The value each key had at `at`, for keys changed after it: the
        // earliest later change's previous value (None: absent at `at`).
        let mut past: BTreeMap<String, Option<KeyValue>> = BTreeMap::new();
        if at < current {
            let log = txn.open_table(LOG).map_err(backend)?;
            for entry in log
                .range((at + 1) as u64..=current as u64)
                .map_err(backend)?
            {
                let (_, raw) = entry.map_err(backend)?;
                let e = decode_log(raw.value())?;
                if e.key.as_str() < start.as_str()
                    || e.key.as_str() >= end.as_str()
                    || past.contains_key(&e.key)
                {
                    continue;
                }
                let before = match (e.kind, e.prev) {
                    (_, Some((mod_revision, value))) => Some(KeyValue {
                        key: e.key.clone(),
                        value: Arc::from(value),
                        create_revision: e.create_revision,
                        mod_revision,
                    }),
                    (_, None) => None,
                };
                past.insert(e.key, before);
            }
        }
        let kv = txn.open_table(KV).map_err(backend)?;
        let current_items = if params.limit == 0 {
            both_ends::read(&kv, start.as_str()..end.as_str(), &past)?
        } else {
            let mut range = kv.range(start.as_str()..end.as_str()).map_err(backend)?;
            let mut current_items = Vec::new();
            for entry in range.by_ref() {
                let (k, v) = entry.map_err(backend)?;
                let key = k.value();
                if !past.contains_key(key) {
                    current_items.push(decode_record(key, v.value())?);
                }
                if past.is_empty() && current_items.len() == params.limit {
                    break;
                }
            }
            if past.is_empty() && current_items.len() == params.limit {
                // A page of the current revision: the keys after it are only
                // counted, not decoded.
                let mut remaining = 0u64;
                for entry in range {
                    entry.map_err(backend)?;
                    remaining += 1;
                }
                return Ok(ListResult {
                    items: current_items,
                    revision: at,
                    remaining,
                });
            }
            current_items
        };
        let mut merged: Vec<KeyValue> = current_items;
        if !past.is_empty() {
            // The range's records come in key order; the past values are
            // sorted in among them.
            merged.extend(past.into_values().flatten());
            merged.sort_by(|a, b| a.key.cmp(&b.key));
        }
        let total = merged.len();
        let limit = if params.limit == 0 {
            total
        } else {
            params.limit.min(total)
        };
        merged.truncate(limit);
        Ok(ListResult {
            items: merged,
            revision: at,
            remaining: (total - limit) as u64,
        })
    }

    fn read_meta(txn: &redb::ReadTransaction) -> StorageResult<(Revision, Revision)> {
        let meta = txn.open_table(META).map_err(backend)?;
        let current = meta
            .get(META_REVISION)
            .map_err(backend)?
            .map(|v| v.value())
            .unwrap_or(1);
        let compacted = meta
            .get(META_COMPACTED)
            .map_err(backend)?
            .map(|v| v.value())
            .unwrap_or(0);
        Ok((current as Revision, compacted as Revision))
    }

    /// Log entries with revisions in (after, upto] whose keys start with `prefix`.
    fn read_log(
        db: &Database,
        prefix: &str,
        after: Revision,
        upto: Option<Revision>,
    ) -> StorageResult<(Vec<StorageEvent>, Revision)> {
        let txn = db.begin_read().map_err(backend)?;
        let (current, compacted) = Self::read_meta(&txn)?;
        if after < compacted {
            return Err(StorageError::Compacted {
                requested: after + 1,
                compacted,
            });
        }
        let upto = upto.unwrap_or(current).min(current);
        let log = txn.open_table(LOG).map_err(backend)?;
        let mut out = Vec::new();
        if upto <= after {
            return Ok((out, after.max(upto)));
        }
        for entry in log
            .range((after + 1) as u64..=upto as u64)
            .map_err(backend)?
        {
            let (rev, raw) = entry.map_err(backend)?;
            let e = decode_log(raw.value())?;
            if e.key.starts_with(prefix) {
                out.push(to_event(rev.value() as Revision, e));
            }
        }
        Ok((out, upto))
    }
}

#[async_trait::async_trait]
impl Storage for EmbeddedStore {
    async fn get(&self, key: &str) -> StorageResult<Option<KeyValue>> {
        let txn = self.db.begin_read().map_err(backend)?;
        let kv = txn.open_table(KV).map_err(backend)?;
        match kv.get(key).map_err(backend)? {
            Some(raw) => Ok(Some(decode_record(key, raw.value())?)),
            None => Ok(None),
        }
    }

    async fn list(&self, prefix: &str, params: ListParams) -> StorageResult<ListResult> {
        let db = self.db.clone();
        let prefix = prefix.to_owned();
        tokio::task::spawn_blocking(move || Self::list_blocking(&db, &prefix, params))
            .await
            .map_err(backend)?
    }

    async fn create(&self, key: &str, value: Vec<u8>) -> StorageResult<KeyValue> {
        let kv = self
            .submit(WriteOp::Create {
                key: key.to_string(),
                value,
            })
            .await?;
        kv.ok_or_else(|| backend("create returned nothing"))
    }

    async fn update(
        &self,
        key: &str,
        value: Vec<u8>,
        expected: Revision,
    ) -> StorageResult<KeyValue> {
        let kv = self
            .submit(WriteOp::Update {
                key: key.to_string(),
                value,
                expected,
            })
            .await?;
        kv.ok_or_else(|| backend("update returned nothing"))
    }

    async fn delete(&self, key: &str, expected: Option<Revision>) -> StorageResult<KeyValue> {
        let kv = self
            .submit(WriteOp::Delete {
                key: key.to_string(),
                expected,
            })
            .await?;
        kv.ok_or_else(|| backend("delete returned nothing"))
    }

    async fn watch(&self, prefix: &str, after: Revision) -> StorageResult<EventStream> {
        // Subscribe before reading the backlog so no change falls between them.
        let mut live = self.events.subscribe();
        let mut wanted = self.progress_wanted.subscribe();
        let (backlog, caught_up) = Self::read_log(&self.db, prefix, after, None)?;
        // Boxed in the channel: its buffer is allocated in blocks of 32
        // slots, and one of events inline (~90 bytes each) was ~3 KiB per
        // watch cache, one cache per served resource.
        let (tx, rx) = mpsc::channel::<StorageResult<Box<StorageEvent>>>(256);
        let db = self.db.clone();
        let prefix = prefix.to_string();
        tokio::spawn(async move {
            let mut last = after;
            for ev in backlog {
                last = ev.revision;
                if tx.send(Ok(Box::new(ev))).await.is_err() {
                    return;
                }
            }
            last = last.max(caught_up);
            if tx
                .send(Ok(Box::new(StorageEvent::progress(last))))
                .await
                .is_err()
            {
                return;
            }
            // Changes under other prefixes are not sent; this watch reports
            // how far it is current when a reader asks (request_progress)
            // and, when idle, once a second. Reporting on every foreign
            // change woke every watch cache on every write.
            let mut asked: Revision = 0;
            let mut reported = last;
            let mut idle_tick = tokio::time::interval(IDLE_PROGRESS_INTERVAL);
            loop {
                let received = tokio::select! {
                    r = live.recv() => r,
                    changed = wanted.changed() => {
                        if changed.is_err() {
                            return;
                        }
                        asked = asked.max(*wanted.borrow_and_update());
                        if asked <= last && reported < last {
                            reported = last;
                            let _ = tx.try_send(Ok(Box::new(StorageEvent::progress(last))));
                        }
                        continue;
                    }
                    _ = idle_tick.tick() => {
                        if reported < last && tx.capacity() == tx.max_capacity() {
                            reported = last;
                            let _ = tx.try_send(Ok(Box::new(StorageEvent::progress(last))));
                        }
                        continue;
                    }
                    _ = tx.closed() => return,
                };
                // The events a commit sent after this one are taken here
                // too, not each through another round of select! (whose
                // futures every feed, one per watch cache, made and dropped
                // per event).
                let mut next = Some(received);
                while let Some(received) = next.take().or_else(|| buffered(&mut live)) {
                    match received {
                        Ok(ev) => {
                            if ev.revision <= last {
                                continue;
                            }
                            last = ev.revision;
                            if ev.key.starts_with(&prefix) {
                                reported = last;
                                if tx.send(Ok(Box::new((*ev).clone()))).await.is_err() {
                                    return;
                                }
                            } else if asked > reported && last >= asked {
                                // A reader is waiting for this revision.
                                reported = last;
                                let _ = tx.try_send(Ok(Box::new(StorageEvent::progress(last))));
                            }
                        }
                        // Fell behind the live buffer: catch up from the log, which
                        // keeps every event, so the watcher loses nothing.
                        Err(broadcast::error::RecvError::Lagged(_)) => {
                            match Self::read_log(&db, &prefix, last, None) {
                                Ok((events, caught_up)) => {
                                    for ev in events {
                                        last = ev.revision;
                                        if tx.send(Ok(Box::new(ev))).await.is_err() {
                                            return;
                                        }
                                    }
                                    last = last.max(caught_up);
                                }
                                Err(err) => {
                                    let _ = tx.send(Err(err)).await;
                                    return;
                                }
                            }
                        }
                        Err(broadcast::error::RecvError::Closed) => return,
                    }
                }
            }
        });
        Ok(tokio_stream::wrappers::ReceiverStream::new(rx)
            .map(|event| event.map(|boxed| *boxed))
            .boxed())
    }

    async fn current_revision(&self) -> StorageResult<Revision> {
        Ok(self.committed.load(Ordering::Acquire))
    }

    fn known_revision(&self) -> Option<Revision> {
        Some(self.committed.load(Ordering::Acquire))
    }

    async fn compact(&self, revision: Revision) -> StorageResult<()> {
        self.submit(WriteOp::Compact { revision }).await.map(|_| ())
    }

    fn request_progress(&self, revision: Revision) {
        self.progress_wanted.send_if_modified(|wanted| {
            let raise = revision > *wanted;
            if raise {
                *wanted = revision;
            }
            raise
        });
    }
}

/// An event already in the live buffer, if there is one: received (or
/// lagged) as `recv` would, without waiting.
fn buffered(
    live: &mut broadcast::Receiver<Arc<StorageEvent>>,
) -> Option<Result<Arc<StorageEvent>, broadcast::error::RecvError>> {
    match live.try_recv() {
        Ok(event) => Some(Ok(event)),
        Err(broadcast::error::TryRecvError::Lagged(missed)) => {
            Some(Err(broadcast::error::RecvError::Lagged(missed)))
        }
        Err(broadcast::error::TryRecvError::Empty | broadcast::error::TryRecvError::Closed) => None,
    }
}

struct Writer {
    db: Arc<Database>,
    revision: Revision,
    committed: Arc<AtomicI64>,
    events: broadcast::Sender<Arc<StorageEvent>>,
}

impl Writer {
    fn run(mut self, mut rx: mpsc::Receiver<WriteRequest>) {
        while let Some(first) = rx.blocking_recv() {
            let mut batch = vec![first];
            while batch.len() < MAX_BATCH {
                match rx.try_recv() {
                    Ok(req) => batch.push(req),
                    Err(_) => break,
                }
            }
            self.apply(batch);
        }
    }

    fn apply(&mut self, batch: Vec<WriteRequest>) {
        let start_revision = self.revision;
        let mut results = Vec::with_capacity(batch.len());
        let mut events = Vec::new();
        let outcome = (|| -> StorageResult<()> {
            let txn = self.db.begin_write().map_err(backend)?;
            {
                let mut kv = txn.open_table(KV).map_err(backend)?;
                let mut log = txn.open_table(LOG).map_err(backend)?;
                let mut meta = txn.open_table(META).map_err(backend)?;
                for req in &batch {
                    let result = self.apply_one(&req.op, &mut kv, &mut log, &mut meta, &mut events);
                    results.push(result);
                }
                meta.insert(META_REVISION, self.revision as u64)
                    .map_err(backend)?;
            }
            txn.commit().map_err(backend)
        })();
        match outcome {
            Ok(()) => {
                self.committed.store(self.revision, Ordering::Release);
                for ev in events {
                    // No receivers is normal (no watchers).
                    let _ = self.events.send(Arc::new(ev));
                }
                for (req, result) in batch.into_iter().zip(results) {
                    let _ = req.reply.send(result);
                }
            }
            Err(err) => {
                self.revision = start_revision;
                for req in batch {
                    let _ = req.reply.send(Err(err.clone()));
                }
            }
        }
    }

    fn apply_one(
        &mut self,
        op: &WriteOp,
        kv: &mut redb::Table<&str, &[u8]>,
        log: &mut redb::Table<u64, &[u8]>,
        meta: &mut redb::Table<&str, u64>,
        events: &mut Vec<StorageEvent>,
    ) -> StorageResult<Option<KeyValue>> {
        let existing =
            |kv: &redb::Table<&str, &[u8]>, key: &str| -> StorageResult<Option<KeyValue>> {
                match kv.get(key).map_err(backend)? {
                    Some(raw) => Ok(Some(decode_record(key, raw.value())?)),
                    None => Ok(None),
                }
            };
        match op {
            WriteOp::Create { key, value } => {
                if existing(kv, key)?.is_some() {
                    return Err(StorageError::AlreadyExists(key.clone()));
                }
                let rev = self.revision + 1;
                self.write(kv, log, events, EventKind::Put, key, value, rev, rev, None)?;
                self.revision = rev;
                Ok(Some(KeyValue {
                    key: key.clone(),
                    value: Arc::from(value.as_slice()),
                    create_revision: rev,
                    mod_revision: rev,
                }))
            }
            WriteOp::Update {
                key,
                value,
                expected,
            } => {
                let Some(old) = existing(kv, key)? else {
                    return Err(StorageError::NotFound(key.clone()));
                };
                if old.mod_revision != *expected {
                    return Err(StorageError::Conflict {
                        key: key.clone(),
                        current: Some(old),
                    });
                }
                let rev = self.revision + 1;
                let prev = Some((old.mod_revision, old.value.to_vec()));
                self.write(
                    kv,
                    log,
                    events,
                    EventKind::Put,
                    key,
                    value,
                    old.create_revision,
                    rev,
                    prev,
                )?;
                self.revision = rev;
                Ok(Some(KeyValue {
                    key: key.clone(),
                    value: Arc::from(value.as_slice()),
                    create_revision: old.create_revision,
                    mod_revision: rev,
                }))
            }
            WriteOp::Delete { key, expected } => {
                let Some(old) = existing(kv, key)? else {
                    return Err(StorageError::NotFound(key.clone()));
                };
                if let Some(expected) = expected {
                    if old.mod_revision != *expected {
                        return Err(StorageError::Conflict {
                            key: key.clone(),
                            current: Some(old),
                        });
                    }
                }
                let rev = self.revision + 1;
                kv.remove(key.as_str()).map_err(backend)?;
                let entry = LogEntry {
                    kind: EventKind::Delete,
                    key: key.clone(),
                    value: old.value.to_vec(),
                    create_revision: old.create_revision,
                    prev: Some((old.mod_revision, old.value.to_vec())),
                };
                log.insert(rev as u64, encode_log(&entry).as_slice())
                    .map_err(backend)?;
                events.push(to_event(rev, entry));
                self.revision = rev;
                Ok(Some(KeyValue {
                    mod_revision: rev,
                    ..old
                }))
            }
            WriteOp::Compact { revision } => {
                let revision = (*revision).min(self.revision);
                let compacted = meta
                    .get(META_COMPACTED)
                    .map_err(backend)?
                    .map(|v| v.value())
                    .unwrap_or(0);
                if (revision as u64) > compacted {
                    log.retain_in(..=(revision as u64), |_, _| false)
                        .map_err(backend)?;
                    meta.insert(META_COMPACTED, revision as u64)
                        .map_err(backend)?;
                }
                Ok(None)
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn write(
        &self,
        kv: &mut redb::Table<&str, &[u8]>,
        log: &mut redb::Table<u64, &[u8]>,
        events: &mut Vec<StorageEvent>,
        kind: EventKind,
        key: &str,
        value: &[u8],
        create_revision: Revision,
        revision: Revision,
        prev: Option<(Revision, Vec<u8>)>,
    ) -> StorageResult<()> {
        kv.insert(
            key,
            encode_record(create_revision, revision, value).as_slice(),
        )
        .map_err(backend)?;
        let entry = LogEntry {
            kind,
            key: key.to_string(),
            value: value.to_vec(),
            create_revision,
            prev,
        };
        log.insert(revision as u64, encode_log(&entry).as_slice())
            .map_err(backend)?;
        events.push(to_event(revision, entry));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;

    fn store() -> (tempfile::TempDir, EmbeddedStore) {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = EmbeddedStore::open(dir.path()).expect("open");
        (dir, store)
    }

    #[tokio::test]
    async fn create_update_delete_with_cas() {
        let (_d, s) = store();
        let a = s.create("/r/a", b"1".to_vec()).await.unwrap();
        assert!(matches!(
            s.create("/r/a", b"x".to_vec()).await,
            Err(StorageError::AlreadyExists(_))
        ));
        let b = s
            .update("/r/a", b"2".to_vec(), a.mod_revision)
            .await
            .unwrap();
        assert!(b.mod_revision > a.mod_revision);
        assert_eq!(b.create_revision, a.create_revision);
        assert!(matches!(
            s.update("/r/a", b"3".to_vec(), a.mod_revision).await,
            Err(StorageError::Conflict { .. })
        ));
        let d = s.delete("/r/a", Some(b.mod_revision)).await.unwrap();
        assert_eq!(&*d.value, b"2");
        assert!(s.get("/r/a").await.unwrap().is_none());
    }

    #[tokio::test]
    async fn list_pages_and_past_revisions() {
        let (_d, s) = store();
        for i in 0..5 {
            s.create(&format!("/r/k{i}"), vec![b'0' + i]).await.unwrap();
        }
        s.create("/other/x", b"x".to_vec()).await.unwrap();
        let page = s
            .list(
                "/r/",
                ListParams {
                    limit: 2,
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        assert_eq!(page.items.len(), 2);
        assert_eq!(page.remaining, 3);
        let snapshot = page.revision;
        // Changes after the snapshot must not show in later pages of it.
        s.delete("/r/k3", None).await.unwrap();
        let k4 = s.get("/r/k4").await.unwrap().unwrap();
        s.update("/r/k4", b"changed".to_vec(), k4.mod_revision)
            .await
            .unwrap();
        s.create("/r/k5", b"5".to_vec()).await.unwrap();
        let rest = s
            .list(
                "/r/",
                ListParams {
                    revision: Some(snapshot),
                    start_after: Some(page.items[1].key.clone()),
                    limit: 0,
                },
            )
            .await
            .unwrap();
        let keys: Vec<&str> = rest.items.iter().map(|kv| kv.key.as_str()).collect();
        assert_eq!(keys, vec!["/r/k2", "/r/k3", "/r/k4"]);
        assert_eq!(&*rest.items[2].value, b"4");
        assert_eq!(rest.items[2].mod_revision, k4.mod_revision);
    }

    #[tokio::test]
    async fn watch_replays_then_follows_and_compaction_expires() {
        let (_d, s) = store();
        let first = s.create("/r/a", b"1".to_vec()).await.unwrap();
        s.create("/r/b", b"2".to_vec()).await.unwrap();
        let mut w = s.watch("/r/", first.mod_revision - 1).await.unwrap();
        s.create("/x/ignored", b"0".to_vec()).await.unwrap();
        s.delete("/r/a", None).await.unwrap();
        let mut kinds = Vec::new();
        while kinds.len() < 3 {
            let ev = w.next().await.unwrap().unwrap();
            if ev.kind != EventKind::Progress {
                kinds.push((ev.key.clone(), ev.kind));
            }
        }
        assert_eq!(
            kinds,
            vec![
                ("/r/a".to_string(), EventKind::Put),
                ("/r/b".to_string(), EventKind::Put),
                ("/r/a".to_string(), EventKind::Delete)
            ]
        );
        let current = s.current_revision().await.unwrap();
        s.compact(current).await.unwrap();
        assert!(matches!(
            s.watch("/r/", first.mod_revision).await,
            Err(StorageError::Compacted { .. })
        ));
        assert!(s.watch("/r/", current).await.is_ok());
    }

    #[tokio::test]
    async fn an_idle_watcher_reports_progress_when_asked_and_once_a_second() {
        let (_d, s) = store();
        let mut w = s.watch("/quiet/", 0).await.unwrap();
        let first = w.next().await.unwrap().unwrap();
        assert_eq!(first.kind, EventKind::Progress);
        // Asked for a revision: reported as soon as the watch has seen it.
        let other = s.create("/busy/a", b"1".to_vec()).await.unwrap();
        s.request_progress(other.mod_revision);
        let ev = tokio::time::timeout(std::time::Duration::from_millis(500), w.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(
            (ev.kind, ev.revision),
            (EventKind::Progress, other.mod_revision)
        );
        // Unasked, an idle watch still reports within its idle interval.
        let later = s.create("/busy/b", b"2".to_vec()).await.unwrap();
        let ev = tokio::time::timeout(std::time::Duration::from_secs(3), w.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(
            (ev.kind, ev.revision),
            (EventKind::Progress, later.mod_revision)
        );
    }

    /// Writes batched into few commits reach a watch of their prefix each
    /// once, in revision order, the other prefix's left out; the store's
    /// known revision is the last acknowledged write's, and a progress
    /// asked for at it (or the change at it) follows every event before it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_batch_of_writes_reaches_a_watch_in_order() {
        let (_d, s) = store();
        let s = std::sync::Arc::new(s);
        let mut w = s.watch("/r/", 0).await.unwrap();
        let writes = (0..200).map(|i| {
            let s = s.clone();
            tokio::spawn(async move {
                let prefix = if i % 2 == 0 { "/r/" } else { "/x/" };
                s.create(&format!("{prefix}{i:03}"), b"v".to_vec())
                    .await
                    .unwrap()
            })
        });
        let mut written = Vec::new();
        for write in writes.collect::<Vec<_>>() {
            written.push(write.await.unwrap());
        }
        let last = written.iter().map(|kv| kv.mod_revision).max().unwrap();
        assert_eq!(s.known_revision(), Some(last));
        assert_eq!(s.current_revision().await.unwrap(), last);
        let mut expected: Vec<_> = written
            .iter()
            .filter(|kv| kv.key.starts_with("/r/"))
            .map(|kv| (kv.mod_revision, kv.key.clone()))
            .collect();
        expected.sort();
        s.request_progress(last);
        let mut seen = Vec::new();
        loop {
            let ev = tokio::time::timeout(std::time::Duration::from_secs(5), w.next())
                .await
                .unwrap()
                .unwrap()
                .unwrap();
            if ev.kind != EventKind::Progress {
                seen.push((ev.revision, ev.key.clone()));
            }
            // Reported by a progress, or by the change at it.
            if ev.revision == last {
                break;
            }
        }
        assert_eq!(seen, expected);
    }

    #[tokio::test]
    async fn revisions_survive_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let rev = {
            let s = EmbeddedStore::open(dir.path()).unwrap();
            s.create("/r/a", b"1".to_vec()).await.unwrap().mod_revision
        };
        let s = EmbeddedStore::open(dir.path()).unwrap();
        assert_eq!(s.current_revision().await.unwrap(), rev);
        let next = s.create("/r/b", b"2".to_vec()).await.unwrap();
        assert!(next.mod_revision > rev);
    }
}
