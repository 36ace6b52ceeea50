//! The etcd backend: the storage contract over etcd v3, for users who run
//! several capstan replicas. Every write is a transaction with a compare on
//! the key's revision, so replicas never overwrite each other's changes, and
//! revisions are etcd's own (shared by all replicas).

use std::future::Future;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use etcd_client::{
    Client, Compare, CompareOp, EventType, GetOptions, KvClient, Txn, TxnOp, TxnOpResponse,
    WatchClient, WatchOptions,
};
use futures::StreamExt;
use tokio_rustls::rustls;

use super::etcd_transport::{MemberChannel, NotSent};
use super::{
    prefix_end, EventKind, EventStream, KeyValue, ListParams, ListResult, Revision, Storage,
    StorageError, StorageEvent, StorageResult,
};

/// Where etcd is and how to authenticate to it (kube-apiserver's --etcd-* flags).
#[derive(Debug, Clone, Default)]
pub struct EtcdConfig {
    pub endpoints: Vec<String>,
    pub ca_file: Option<PathBuf>,
    pub cert_file: Option<PathBuf>,
    pub key_file: Option<PathBuf>,
}

/// How often an idle watch asks etcd for progress unprompted.
const PROGRESS_FALLBACK_INTERVAL: Duration = Duration::from_secs(5);

/// The largest etcd answer accepted: a whole unpaginated list, or a batch
/// of watch events. tonic's default (4 MiB) failed a list of 10,000
/// ConfigMaps; kube-apiserver's etcd client allows as much as gRPC can
/// carry (2 GiB).
const MAX_RESPONSE_BYTES: usize = i32::MAX as usize;

#[derive(Clone)]
pub struct EtcdStore {
    members: Arc<Members>,
    /// Every member reached at start-up runs an etcd whose progress reports
    /// are ordered with the watch's events (see `progress_is_ordered`).
    progress_ordered: bool,
    /// Bumped when a reader needs the watches to confirm how far they are;
    /// each watch then asks etcd for a progress notification.
    progress_wanted: tokio::sync::watch::Sender<u64>,
}

/// The etcd members given, one client each. Requests go to one member at a
/// time and move on to the next when it cannot be reached: etcd-client's
/// balancer over several endpoints keeps sending requests to a member that
/// refuses connections (they fail fast, so it looks the least loaded).
struct Members {
    clients: Vec<Client>,
    active: AtomicUsize,
}

impl Members {
    fn current(&self) -> (usize, &Client) {
        let index = self.active.load(Ordering::Relaxed) % self.clients.len();
        (index, &self.clients[index])
    }

    /// Leaves member `from` for the next one, unless another request
    /// already moved on.
    fn fail_over(&self, from: usize) {
        let next = (from + 1) % self.clients.len();
        if self
            .active
            .compare_exchange(from, next, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
            && next != from
        {
            tracing::warn!(member = from, next, "etcd member unreachable, failing over");
        }
    }
}

/// Whether etcd `version` orders requested progress reports with watch
/// events (etcd-io/etcd#15220, and #17557 for watches that get no events):
/// from 3.4.31, 3.5.13 and 3.6, the versions kube-apiserver requires before
/// it serves consistent lists from its watch cache.
fn orders_progress(version: &str) -> bool {
    let mut parts = version
        .trim_start_matches('v')
        .split(['.', '-', '+'])
        .map(|p| p.parse::<u64>().unwrap_or(0));
    let (major, minor, patch) = (
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
    );
    match (major, minor) {
        (3, 4) => patch >= 31,
        (3, 5) => patch >= 13,
        (3, m) => m >= 6,
        (m, _) => m > 3,
    }
}

/// The member could not be reached or dropped the connection.
fn unreachable(err: &etcd_client::Error) -> bool {
    match err {
        etcd_client::Error::GRpcStatus(status) => status.code() == tonic::Code::Unavailable,
        etcd_client::Error::TransportError(_) | etcd_client::Error::IoError(_) => true,
        _ => false,
    }
}

/// The request never left: the connection to the member could not be made.
/// Only then is it safe to send it again elsewhere; a write that was sent
/// may have been applied even though its answer was lost.
pub(super) fn never_sent(err: &etcd_client::Error) -> bool {
    let etcd_client::Error::GRpcStatus(status) = err else {
        return false;
    };
    let mut source = std::error::Error::source(status);
    while let Some(e) = source {
        if e.is::<NotSent>() {
            return true;
        }
        source = e.source();
    }
    false
}

fn backend(err: impl std::fmt::Display) -> StorageError {
    let text = err.to_string();
    // etcd reports these as gRPC errors; the contract has typed variants for them.
    if text.contains("required revision has been compacted") {
        return StorageError::Compacted {
            requested: 0,
            compacted: 0,
        };
    }
    if text.contains("required revision is a future revision") {
        return StorageError::FutureRevision {
            requested: 0,
            current: 0,
        };
    }
    StorageError::Backend(format!("etcd: {text}"))
}

fn to_kv(kv: &etcd_client::KeyValue) -> StorageResult<KeyValue> {
    Ok(KeyValue {
        key: String::from_utf8(kv.key().to_vec()).map_err(backend)?,
        value: Arc::from(kv.value()),
        create_revision: kv.create_revision(),
        mod_revision: kv.mod_revision(),
    })
}

fn read_pem(path: &PathBuf) -> StorageResult<Vec<u8>> {
    std::fs::read(path)
        .map_err(|e| StorageError::Backend(format!("reading {}: {e}", path.display())))
}

/// TLS to etcd from the --etcd-cafile/--etcd-certfile/--etcd-keyfile PEM
/// files: the members' certificates are verified against the CA, and the
/// client certificate, when given, is offered.
fn tls_config(config: &EtcdConfig) -> StorageResult<Arc<rustls::ClientConfig>> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let invalid = |path: &PathBuf, e: &dyn std::fmt::Display| {
        StorageError::Backend(format!("reading {}: {e}", path.display()))
    };
    let mut roots = rustls::RootCertStore::empty();
    if let Some(ca) = &config.ca_file {
        for cert in CertificateDer::pem_slice_iter(&read_pem(ca)?) {
            let cert = cert.map_err(|e| invalid(ca, &e))?;
            roots.add(cert).map_err(|e| invalid(ca, &e))?;
        }
    }
    let builder = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| StorageError::Backend(format!("etcd TLS: {e}")))?
    .with_root_certificates(roots);
    let mut tls = match (&config.cert_file, &config.key_file) {
        (Some(cert), Some(key)) => {
            let chain = CertificateDer::pem_slice_iter(&read_pem(cert)?)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| invalid(cert, &e))?;
            let private =
                PrivateKeyDer::from_pem_slice(&read_pem(key)?).map_err(|e| invalid(key, &e))?;
            builder
                .with_client_auth_cert(chain, private)
                .map_err(|e| StorageError::Backend(format!("etcd client certificate: {e}")))?
        }
        _ => builder.with_no_client_auth(),
    };
    tls.alpn_protocols = vec![b"h2".to_vec()];
    Ok(Arc::new(tls))
}

impl EtcdStore {
    pub async fn connect(config: &EtcdConfig) -> StorageResult<Self> {
        let tls = match (&config.ca_file, &config.cert_file) {
            (None, None) => None,
            _ => Some(tls_config(config)?),
        };
        if config.endpoints.is_empty() {
            return Err(StorageError::Backend("no etcd endpoints given".into()));
        }
        let mut clients = Vec::with_capacity(config.endpoints.len());
        for endpoint in &config.endpoints {
            let channel =
                MemberChannel::new(endpoint, tls.clone()).map_err(StorageError::Backend)?;
            clients.push(
                Client::from_channel(channel.into_etcd_channel(), None)
                    .await
                    .map_err(backend)?,
            );
        }
        let mut store = Self {
            members: Arc::new(Members {
                clients,
                active: AtomicUsize::new(0),
            }),
            progress_ordered: false,
            progress_wanted: tokio::sync::watch::channel(0).0,
        };
        // Fail at start-up, not on the first request, when etcd is unreachable.
        if let Err(e) = store.current_revision().await {
            let tls = match (&config.ca_file, &config.cert_file) {
                (None, None) => String::new(),
                (_, None) => " over TLS without a client certificate".to_string(),
                (_, Some(cert)) => format!(" over TLS with client certificate {}", cert.display()),
            };
            return Err(StorageError::Backend(format!(
                "cannot reach etcd at {}{tls}: {e}",
                config.endpoints.join(",")
            )));
        }
        let mut versions = Vec::new();
        for client in &store.members.clients {
            if let Ok(status) = client.maintenance_client().status().await {
                versions.push(status.version().to_string());
            }
        }
        store.progress_ordered =
            !versions.is_empty() && versions.iter().all(|v| orders_progress(v));
        if !store.progress_ordered {
            tracing::warn!(
                versions = versions.join(","),
                "etcd answers progress requests ahead of watch events \
                 (etcd-io/etcd#15220, fixed in 3.4.31, 3.5.13, 3.6): watches do \
                 not ask for progress, and consistent and streaming lists are \
                 served from etcd, not from the watch caches"
            );
        }
        Ok(store)
    }

    /// Runs `request` on the active member, failing over to the next one
    /// (and sending it again) while members cannot be reached.
    async fn on_member<T, F, Fut>(&self, request: F) -> Result<T, etcd_client::Error>
    where
        F: Fn(&Client) -> Fut,
        Fut: Future<Output = Result<T, etcd_client::Error>>,
    {
        let mut attempts = 0;
        loop {
            let (index, client) = self.members.current();
            match request(client).await {
                Err(e) if unreachable(&e) => {
                    self.members.fail_over(index);
                    attempts += 1;
                    if attempts >= self.members.clients.len() || !never_sent(&e) {
                        return Err(e);
                    }
                }
                done => return done,
            }
        }
    }

    async fn kv<T, F, Fut>(&self, request: F) -> Result<T, etcd_client::Error>
    where
        F: Fn(KvClient) -> Fut,
        Fut: Future<Output = Result<T, etcd_client::Error>>,
    {
        self.on_member(|client| {
            request(
                client
                    .kv_client()
                    .max_decoding_message_size(MAX_RESPONSE_BYTES),
            )
        })
        .await
    }

    async fn txn(&self, txn: Txn) -> StorageResult<etcd_client::TxnResponse> {
        self.kv(|mut kv| {
            let txn = txn.clone();
            async move { kv.txn(txn).await }
        })
        .await
        .map_err(backend)
    }

    async fn get_kv(&self, key: &str) -> StorageResult<Option<KeyValue>> {
        let resp = self
            .kv(|mut kv| async move { kv.get(key, None).await })
            .await
            .map_err(backend)?;
        resp.kvs().first().map(to_kv).transpose()
    }

    fn revision_of(header: Option<&etcd_client::ResponseHeader>) -> Revision {
        header.map(|h| h.revision()).unwrap_or_default()
    }

    /// After a failed compare: NotFound if the key is gone, Conflict otherwise.
    fn compare_failed(key: &str, responses: Vec<TxnOpResponse>) -> StorageError {
        let current = responses.into_iter().find_map(|r| match r {
            TxnOpResponse::Get(get) => get.kvs().first().and_then(|kv| to_kv(kv).ok()),
            _ => None,
        });
        match current {
            None => StorageError::NotFound(key.to_string()),
            Some(kv) => StorageError::Conflict {
                key: key.to_string(),
                current: Some(kv),
            },
        }
    }

    /// One etcd watch under `prefix` after `after`; `with_prev` asks etcd for
    /// each key's previous value (a read per event on etcd's side).
    async fn watch_from(
        &self,
        prefix: &str,
        after: Revision,
        with_prev: bool,
    ) -> StorageResult<EventStream> {
        let mut options = WatchOptions::new()
            .with_range(prefix_end(prefix))
            .with_start_revision(after + 1)
            .with_progress_notify();
        if with_prev {
            options = options.with_prev_key();
        }
        let stream = self
            .on_member(|client| {
                let mut watches: WatchClient = client
                    .watch_client()
                    .max_decoding_message_size(MAX_RESPONSE_BYTES);
                let options = options.clone();
                async move { watches.watch(prefix, Some(options)).await }
            })
            .await
            .map_err(backend)?;
        let (requests, stream) = stream.split();
        // Polled by the watcher itself (the watch cache's task), not by a
        // task of its own: every event would otherwise cross a channel and
        // wake a second task.
        let state = WatchState {
            requests,
            stream,
            wanted: self.progress_wanted.subscribe(),
            ask: tokio::time::interval(PROGRESS_FALLBACK_INTERVAL),
            requests_answered_in_order: self.progress_ordered,
            pending: std::collections::VecDeque::new(),
            ended: false,
            after,
        };
        Ok(futures::stream::unfold(state, WatchState::next).boxed())
    }
}

/// One etcd watch as a stream of storage events.
struct WatchState {
    requests: etcd_client::WatchRequestSender,
    stream: etcd_client::WatchResponseStream,
    /// Progress wanted by a reader (see `request_progress`).
    wanted: tokio::sync::watch::Receiver<u64>,
    ask: tokio::time::Interval,
    /// Whether etcd answers a progress request after the changes it covers
    /// (see `orders_progress`). Older versions answer at once, ahead of
    /// changes a watch still has to deliver (etcd-io/etcd#15220): this
    /// watch then never asks, and passes on only the progress etcd reports
    /// by itself, per watch and in order (`--experimental-watch-progress-
    /// notify-interval`, 10 minutes by default).
    requests_answered_in_order: bool,
    /// Events of the last response not handed out yet.
    pending: std::collections::VecDeque<StorageEvent>,
    /// An error was handed out: the stream ends after it.
    ended: bool,
    after: Revision,
}

impl WatchState {
    async fn next(mut self) -> Option<(StorageResult<StorageEvent>, Self)> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Some((Ok(event), self));
            }
            if self.ended {
                return None;
            }
            // etcd reports progress on request only when the watcher has sent
            // everything up to the header's revision. Readers that need a
            // quiet watch cache to confirm it is current ask for it (see
            // request_progress); a slow tick keeps idle caches roughly
            // current for bookmarks without a steady stream of requests.
            let ask = self.requests_answered_in_order;
            let message = tokio::select! {
                m = self.stream.message() => m,
                changed = self.wanted.changed(), if ask => {
                    if changed.is_err() || self.requests.request_progress().await.is_err() {
                        return None;
                    }
                    continue;
                }
                _ = self.ask.tick(), if ask => {
                    if self.requests.request_progress().await.is_err() {
                        return None;
                    }
                    continue;
                }
            };
            let resp = match message {
                Ok(Some(resp)) => resp,
                Ok(None) => return None,
                Err(e) => {
                    self.ended = true;
                    return Some((Err(backend(e)), self));
                }
            };
            if resp.compact_revision() > 0
                || (resp.canceled() && resp.cancel_reason().contains("compacted"))
            {
                self.ended = true;
                let compacted = StorageError::Compacted {
                    requested: self.after + 1,
                    compacted: resp.compact_revision(),
                };
                return Some((Err(compacted), self));
            }
            if resp.canceled() {
                self.ended = true;
                let canceled =
                    StorageError::Backend(format!("etcd watch canceled: {}", resp.cancel_reason()));
                return Some((Err(canceled), self));
            }
            if resp.events().is_empty() && !resp.created() {
                // An answer to a progress request carries no watch id; one
                // etcd sends by itself carries the watch's.
                let requested = resp.watch_id() == -1;
                if requested && !self.requests_answered_in_order {
                    continue;
                }
                let revision = EtcdStore::revision_of(resp.header());
                if revision > 0 {
                    return Some((Ok(StorageEvent::progress(revision)), self));
                }
                continue;
            }
            self.pending
                .extend(resp.events().iter().filter_map(storage_event));
        }
    }
}

/// An etcd event as a storage event (None for a key that is not UTF-8).
fn storage_event(ev: &etcd_client::Event) -> Option<StorageEvent> {
    let kv = ev.kv()?;
    let key = String::from_utf8(kv.key().to_vec()).ok()?;
    let prev = ev.prev_kv().map(|p| Arc::<[u8]>::from(p.value()));
    let (kind, value, create_revision) = match ev.event_type() {
        EventType::Put => (EventKind::Put, Arc::from(kv.value()), kv.create_revision()),
        EventType::Delete => (
            EventKind::Delete,
            prev.clone().unwrap_or_else(|| Arc::from(&[][..])),
            ev.prev_kv()
                .map(|p| p.create_revision())
                .unwrap_or_default(),
        ),
    };
    Some(StorageEvent {
        kind,
        key,
        value,
        prev_value: prev,
        revision: kv.mod_revision(),
        create_revision,
    })
}

#[async_trait::async_trait]
impl Storage for EtcdStore {
    async fn get(&self, key: &str) -> StorageResult<Option<KeyValue>> {
        self.get_kv(key).await
    }

    async fn list(&self, prefix: &str, params: ListParams) -> StorageResult<ListResult> {
        let start = match &params.start_after {
            Some(after) if after.as_str() >= prefix => format!("{after}\0"),
            _ => prefix.to_string(),
        };
        let mut options = GetOptions::new().with_range(prefix_end(prefix));
        if params.limit > 0 {
            options = options.with_limit(params.limit as i64);
        }
        if let Some(rev) = params.revision {
            options = options.with_revision(rev);
        }
        let resp = self
            .kv(|mut kv| {
                let (start, options) = (start.clone(), options.clone());
                async move { kv.get(start, Some(options)).await }
            })
            .await
            .map_err(|e| match backend(e) {
                StorageError::Compacted { .. } => StorageError::Compacted {
                    requested: params.revision.unwrap_or_default(),
                    compacted: 0,
                },
                other => other,
            })?;
        let items = resp
            .kvs()
            .iter()
            .map(to_kv)
            .collect::<StorageResult<Vec<_>>>()?;
        let revision = params
            .revision
            .unwrap_or_else(|| Self::revision_of(resp.header()));
        let remaining = (resp.count() as u64).saturating_sub(items.len() as u64);
        Ok(ListResult {
            items,
            revision,
            remaining,
        })
    }

    async fn create(&self, key: &str, value: Vec<u8>) -> StorageResult<KeyValue> {
        let txn = Txn::new()
            .when([Compare::create_revision(key, CompareOp::Equal, 0)])
            .and_then([TxnOp::put(key, value.clone(), None)]);
        let resp = self.txn(txn).await?;
        if !resp.succeeded() {
            return Err(StorageError::AlreadyExists(key.to_string()));
        }
        let rev = Self::revision_of(resp.header());
        Ok(KeyValue {
            key: key.to_string(),
            value: Arc::from(value),
            create_revision: rev,
            mod_revision: rev,
        })
    }

    async fn update(
        &self,
        key: &str,
        value: Vec<u8>,
        expected: Revision,
    ) -> StorageResult<KeyValue> {
        // The put leaves the create revision as it was; reading the key back
        // in the same txn (keys only) reports it without a second round trip.
        let txn = Txn::new()
            .when([Compare::mod_revision(key, CompareOp::Equal, expected)])
            .and_then([
                TxnOp::put(key, value.clone(), None),
                TxnOp::get(key, Some(GetOptions::new().with_keys_only())),
            ])
            .or_else([TxnOp::get(key, None)]);
        let resp = self.txn(txn).await?;
        if !resp.succeeded() {
            return Err(Self::compare_failed(key, resp.op_responses()));
        }
        let rev = Self::revision_of(resp.header());
        let create_revision = resp
            .op_responses()
            .into_iter()
            .find_map(|r| match r {
                TxnOpResponse::Get(get) => get.kvs().first().map(|kv| kv.create_revision()),
                _ => None,
            })
            .unwrap_or_default();
        Ok(KeyValue {
            key: key.to_string(),
            value: Arc::from(value),
            create_revision,
            mod_revision: rev,
        })
    }

    async fn delete(&self, key: &str, expected: Option<Revision>) -> StorageResult<KeyValue> {
        let compare = match expected {
            Some(rev) => Compare::mod_revision(key, CompareOp::Equal, rev),
            None => Compare::create_revision(key, CompareOp::Greater, 0),
        };
        let txn = Txn::new()
            .when([compare])
            .and_then([TxnOp::delete(
                key,
                Some(etcd_client::DeleteOptions::new().with_prev_key()),
            )])
            .or_else([TxnOp::get(key, None)]);
        let resp = self.txn(txn).await?;
        if !resp.succeeded() {
            return Err(Self::compare_failed(key, resp.op_responses()));
        }
        let rev = Self::revision_of(resp.header());
        let deleted = resp.op_responses().into_iter().find_map(|r| match r {
            TxnOpResponse::Delete(d) => d.prev_kvs().first().and_then(|kv| to_kv(kv).ok()),
            _ => None,
        });
        let deleted = deleted.ok_or_else(|| StorageError::NotFound(key.to_string()))?;
        Ok(KeyValue {
            mod_revision: rev,
            ..deleted
        })
    }

    async fn watch(&self, prefix: &str, after: Revision) -> StorageResult<EventStream> {
        self.watch_from(prefix, after, true).await
    }

    async fn watch_latest(&self, prefix: &str, after: Revision) -> StorageResult<EventStream> {
        self.watch_from(prefix, after, false).await
    }

    async fn current_revision(&self) -> StorageResult<Revision> {
        let resp = self
            .kv(|mut kv| async move {
                kv.get("\0", Some(GetOptions::new().with_count_only()))
                    .await
            })
            .await
            .map_err(backend)?;
        Ok(Self::revision_of(resp.header()))
    }

    fn component_name(&self) -> &'static str {
        "etcd-0"
    }

    /// etcd answers with the revision current when it handles the request,
    /// which is at least `revision`. Watches on an etcd that answers out of
    /// order do not ask (see `WatchState::requests_answered_in_order`).
    fn request_progress(&self, _revision: Revision) {
        self.progress_wanted
            .send_modify(|asked| *asked = asked.wrapping_add(1));
    }

    fn progress_is_ordered(&self) -> bool {
        self.progress_ordered
    }

    async fn compact(&self, revision: Revision) -> StorageResult<()> {
        match self
            .kv(|mut kv| async move { kv.compact(revision, None).await })
            .await
        {
            Ok(_) => Ok(()),
            // Compacting at or below the compacted revision has nothing left to do.
            Err(e) => match backend(e) {
                StorageError::Compacted { .. } => Ok(()),
                other => Err(other),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::orders_progress;

    #[test]
    fn progress_is_ordered_from_the_versions_kube_apiserver_requires() {
        for old in [
            "3.4.23", "3.4.30", "3.5.0", "3.5.12", "3.3.27", "v3.4.23", "garbage",
        ] {
            assert!(!orders_progress(old), "{old}");
        }
        for fixed in [
            "3.4.31", "3.4.35", "3.5.13", "3.5.21", "3.6.0", "3.6.4", "v3.6.1", "4.0.0",
        ] {
            assert!(orders_progress(fixed), "{fixed}");
        }
    }
}

/// A throwaway etcd for tests and benchmarks: the real `etcd` binary on free
/// loopback ports with a temporary data directory, stopped on drop.
pub mod testing {
    use std::net::TcpListener;
    use std::path::{Path, PathBuf};
    use std::process::{Child, Command, Stdio};
    use std::time::{Duration, Instant};

    use super::{EtcdConfig, EtcdStore};

    pub struct EtcdServer {
        child: Child,
        pub endpoint: String,
        data_dir: PathBuf,
        /// How clients reach it (the endpoint, and TLS files if any).
        config: EtcdConfig,
    }

    fn free_port() -> std::io::Result<u16> {
        Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
    }

    /// The arguments of one etcd member on loopback.
    fn member_args(
        name: &str,
        data_dir: &Path,
        client_url: &str,
        peer_url: &str,
        initial_cluster: &str,
    ) -> Vec<String> {
        [
            "--name",
            name,
            "--data-dir",
            &data_dir.display().to_string(),
            "--listen-client-urls",
            client_url,
            "--advertise-client-urls",
            client_url,
            "--listen-peer-urls",
            peer_url,
            "--initial-advertise-peer-urls",
            peer_url,
            "--initial-cluster",
            initial_cluster,
            "--logger",
            "zap",
            "--log-level",
            "error",
        ]
        .iter()
        .map(|a| a.to_string())
        .collect()
    }

    fn spawn_member(args: &[String]) -> Result<Child, String> {
        Command::new("etcd")
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start etcd (is Debian's etcd-server installed?): {e}"))
    }

    /// Waits until a client configured as `config` connects.
    async fn wait_until_connects(config: &EtcdConfig, within: Duration) -> Result<(), String> {
        let deadline = Instant::now() + within;
        while EtcdStore::connect(config).await.is_err() {
            if Instant::now() > deadline {
                return Err(format!(
                    "etcd at {} not ready within {within:?}",
                    config.endpoints.join(",")
                ));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Ok(())
    }

    /// The files of an etcd that serves TLS and requires client
    /// certificates: its CA, its serving pair, and the pair a client shows.
    pub struct EtcdTlsFiles {
        pub ca: PathBuf,
        pub server_cert: PathBuf,
        pub server_key: PathBuf,
        pub client_cert: PathBuf,
        pub client_key: PathBuf,
    }

    impl EtcdServer {
        /// Starts etcd and waits until it answers (at most 20 s).
        pub async fn start() -> Result<Self, String> {
            Self::launch(None).await
        }

        /// Starts etcd serving TLS on its client port and requiring client
        /// certificates signed by `tls.ca`.
        pub async fn start_tls(tls: &EtcdTlsFiles) -> Result<Self, String> {
            Self::launch(Some(tls)).await
        }

        async fn launch(tls: Option<&EtcdTlsFiles>) -> Result<Self, String> {
            let client = free_port().map_err(|e| e.to_string())?;
            let peer = free_port().map_err(|e| e.to_string())?;
            let data_dir =
                std::env::temp_dir().join(format!("capstan-etcd-{}-{client}", std::process::id()));
            let scheme = if tls.is_some() { "https" } else { "http" };
            let client_url = format!("{scheme}://127.0.0.1:{client}");
            let peer_url = format!("http://127.0.0.1:{peer}");
            let mut args = member_args(
                "capstan-test",
                &data_dir,
                &client_url,
                &peer_url,
                &format!("capstan-test={peer_url}"),
            );
            let mut config = EtcdConfig {
                endpoints: vec![client_url.clone()],
                ..Default::default()
            };
            if let Some(tls) = tls {
                for (flag, path) in [
                    ("--cert-file", &tls.server_cert),
                    ("--key-file", &tls.server_key),
                    ("--trusted-ca-file", &tls.ca),
                ] {
                    args.extend([flag.to_string(), path.display().to_string()]);
                }
                args.push("--client-cert-auth".into());
                config.ca_file = Some(tls.ca.clone());
                config.cert_file = Some(tls.client_cert.clone());
                config.key_file = Some(tls.client_key.clone());
            }
            let server = Self {
                child: spawn_member(&args)?,
                endpoint: client_url,
                data_dir,
                config,
            };
            wait_until_connects(&server.config, Duration::from_secs(20)).await?;
            Ok(server)
        }

        pub fn config(&self) -> EtcdConfig {
            self.config.clone()
        }

        pub async fn connect(&self) -> crate::StorageResult<EtcdStore> {
            EtcdStore::connect(&self.config).await
        }
    }

    impl Drop for EtcdServer {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
            let _ = std::fs::remove_dir_all(&self.data_dir);
        }
    }

    /// A cluster of etcd members on loopback, as users who outgrow one
    /// machine run it; members can be killed and restarted to test
    /// fail-over.
    pub struct EtcdCluster {
        members: Vec<Option<Child>>,
        /// Each member's etcd arguments, to restart it as it was.
        args: Vec<Vec<String>>,
        /// Client URLs, one per member.
        pub endpoints: Vec<String>,
        data_dirs: Vec<PathBuf>,
    }

    impl EtcdCluster {
        /// Starts `size` members and waits until the cluster answers
        /// through every member (at most 30 s).
        pub async fn start(size: usize) -> Result<Self, String> {
            let mut clients = Vec::new();
            let mut peers = Vec::new();
            for _ in 0..size {
                clients.push(free_port().map_err(|e| e.to_string())?);
                peers.push(free_port().map_err(|e| e.to_string())?);
            }
            let initial_cluster = peers
                .iter()
                .enumerate()
                .map(|(i, port)| format!("member{i}=http://127.0.0.1:{port}"))
                .collect::<Vec<_>>()
                .join(",");
            let mut cluster = Self {
                members: Vec::new(),
                args: Vec::new(),
                endpoints: clients
                    .iter()
                    .map(|port| format!("http://127.0.0.1:{port}"))
                    .collect(),
                data_dirs: Vec::new(),
            };
            for (i, (client, peer)) in clients.iter().zip(&peers).enumerate() {
                let data_dir = std::env::temp_dir()
                    .join(format!("capstan-etcd-{}-{client}", std::process::id()));
                let args = member_args(
                    &format!("member{i}"),
                    &data_dir,
                    &format!("http://127.0.0.1:{client}"),
                    &format!("http://127.0.0.1:{peer}"),
                    &initial_cluster,
                );
                cluster.members.push(Some(spawn_member(&args)?));
                cluster.args.push(args);
                cluster.data_dirs.push(data_dir);
            }
            for i in 0..size {
                cluster.wait_ready(i, Duration::from_secs(30)).await?;
            }
            Ok(cluster)
        }

        async fn wait_ready(&self, index: usize, within: Duration) -> Result<(), String> {
            let config = EtcdConfig {
                endpoints: vec![self.endpoints[index].clone()],
                ..Default::default()
            };
            wait_until_connects(&config, within).await
        }

        /// Kills member `index` with SIGKILL.
        pub fn kill(&mut self, index: usize) {
            if let Some(mut child) = self.members.get_mut(index).and_then(Option::take) {
                let _ = child.kill();
                let _ = child.wait();
            }
        }

        /// Starts a killed member again on its data and waits until it
        /// answers.
        pub async fn restart(&mut self, index: usize) -> Result<(), String> {
            self.kill(index);
            self.members[index] = Some(spawn_member(&self.args[index])?);
            self.wait_ready(index, Duration::from_secs(30)).await
        }
    }

    impl Drop for EtcdCluster {
        fn drop(&mut self) {
            for i in 0..self.members.len() {
                self.kill(i);
            }
            for dir in &self.data_dirs {
                let _ = std::fs::remove_dir_all(dir);
            }
        }
    }
}
