//! Closed-loop load: N workers, each with its own connection, each sending
//! its next request as soon as the previous one is answered.

use std::sync::Arc;
use std::time::{Duration, Instant};

use capstan_client::{Client, GroupVersionResource};
use capstan_core::storage::Storage;
use serde_json::{json, Value};

use crate::error::BenchError;
use crate::rest::{expect_status, RestConn};

/// The ConfigMap every create sends: ~200 bytes of data, as the brief asks.
pub fn configmap(name: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"app": "bench"}},
        "data": {
            "config.yaml": "x".repeat(160),
            "mode": "benchmark",
            "owner": "capstan-bench",
        },
    })
}

/// A Deployment for status writes: one replica of a pod template that is
/// never scheduled (no controller runs).
pub fn deployment(name: &str) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": {"app": "bench"}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10"}]},
            },
        },
    })
}

pub enum Worker {
    Rest(RestConn),
    Grpc(Box<Client>),
    /// The storage ceiling: the same value written straight into the
    /// backend (the embedded store, or etcd through the client library the
    /// server uses), skipping HTTP, TLS, decoding, admission and encoding.
    Store {
        store: Arc<dyn Storage>,
        /// Replaces `/registry` in the key: the etcd ceiling writes beside
        /// the server's keys, and must not feed the server's watch.
        root: &'static str,
        /// A stored ConfigMap as the server writes it, so sizes match.
        template: Arc<Value>,
    },
    /// The transport floor: `capstan-relay` stores each body as it comes,
    /// so it is sent the stored ConfigMap, and etcd holds the same bytes
    /// as through the server.
    Relay {
        conn: RestConn,
        template: Arc<Value>,
    },
}

/// What each request of a closed-loop phase does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Creates a new ConfigMap.
    Create,
    /// Writes the worker's own ConfigMap (made first) with a new value of
    /// one field, as `WriteOp` says.
    Write(WriteOp),
    /// Deletes the ConfigMaps the worker made in a create phase, in order,
    /// until none is left.
    Delete,
}

/// How a write phase changes the worker's own ConfigMap (REST only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum WriteOp {
    /// A JSON merge patch of one field.
    MergePatch,
    /// A PUT of the whole object without a resourceVersion (ConfigMaps
    /// allow unconditional updates).
    Put,
    /// A server-side apply of the whole object by one field manager,
    /// forced (the object was created by another).
    Apply,
    /// A merge patch of the status subresource of a Deployment of the
    /// worker's own (no controller runs to write it back).
    Status,
}

impl WriteOp {
    pub fn label(self) -> &'static str {
        match self {
            Self::MergePatch => "REST merge patch (HTTP/2, TLS)",
            Self::Put => "REST PUT (HTTP/2, TLS)",
            Self::Apply => "REST server-side apply (HTTP/2, TLS)",
            Self::Status => "REST status merge patch, Deployment (HTTP/2, TLS)",
        }
    }

    pub fn slug(self) -> &'static str {
        match self {
            Self::MergePatch => "patch",
            Self::Put => "put",
            Self::Apply => "apply",
            Self::Status => "status",
        }
    }

    /// Makes the object a worker writes: a ConfigMap, or a Deployment for
    /// status writes.
    pub async fn make(
        self,
        worker: &mut Worker,
        namespace: &str,
        name: &str,
    ) -> Result<(), BenchError> {
        if self != Self::Status {
            return worker.create(namespace, name).await;
        }
        let conn = worker.rest("status writes")?;
        let body = serde_json::to_vec(&deployment(name))?;
        expect_status(
            conn.post(
                &format!("/apis/apps/v1/namespaces/{namespace}/deployments"),
                body,
            )
            .await?,
            201,
        )?;
        Ok(())
    }
}

impl Worker {
    fn rest(&mut self, what: &str) -> Result<&mut RestConn, BenchError> {
        match self {
            Self::Rest(conn) => Ok(conn),
            _ => Err(BenchError::Http(format!(
                "{what} are measured over REST only"
            ))),
        }
    }

    /// Sets `name`'s `mode` to a new value, the way `op` says.
    pub async fn write(
        &mut self,
        op: WriteOp,
        namespace: &str,
        name: &str,
        seq: u64,
    ) -> Result<(), BenchError> {
        let conn = self.rest("writes")?;
        let path = format!("/api/v1/namespaces/{namespace}/configmaps/{name}");
        let mode = format!("{}-{seq}", op.slug());
        let whole = || {
            let mut object = configmap(name);
            object["metadata"]["namespace"] = json!(namespace);
            object["data"]["mode"] = json!(mode);
            serde_json::to_vec(&object)
        };
        let response = match op {
            WriteOp::Status => {
                let body = serde_json::to_vec(&json!({"status": {"observedGeneration": seq}}))?;
                conn.merge_patch(
                    &format!("/apis/apps/v1/namespaces/{namespace}/deployments/{name}/status"),
                    body,
                )
                .await?
            }
            WriteOp::MergePatch => {
                let body = serde_json::to_vec(&json!({"data": {"mode": mode}}))?;
                conn.merge_patch(&path, body).await?
            }
            WriteOp::Put => conn.put(&path, whole()?).await?,
            WriteOp::Apply => {
                conn.apply(
                    &format!("{path}?fieldManager=capstan-bench&force=true"),
                    whole()?,
                )
                .await?
            }
        };
        expect_status(response, 200)?;
        Ok(())
    }

    /// Deletes `name`; false when it does not exist.
    pub async fn delete(&mut self, namespace: &str, name: &str) -> Result<bool, BenchError> {
        let conn = self.rest("deletes")?;
        let (status, body) = conn
            .delete(&format!("/api/v1/namespaces/{namespace}/configmaps/{name}"))
            .await?;
        if status == 404 {
            return Ok(false);
        }
        expect_status((status, body), 200)?;
        Ok(true)
    }

    pub async fn create(&mut self, namespace: &str, name: &str) -> Result<(), BenchError> {
        match self {
            Self::Rest(conn) => {
                post_configmap(conn, namespace, serde_json::to_vec(&configmap(name))?).await
            }
            Self::Grpc(client) => {
                client
                    .create(
                        &GroupVersionResource::core("v1", "configmaps"),
                        Some(namespace),
                        &configmap(name),
                    )
                    .await?;
                Ok(())
            }
            Self::Relay { conn, template } => {
                let stored = stored_copy(template, namespace, name);
                post_configmap(conn, namespace, serde_json::to_vec(&stored)?).await
            }
            Self::Store {
                store,
                root,
                template,
            } => {
                let key = format!("{root}/configmaps/{namespace}/{name}");
                let stored = stored_copy(template, namespace, name);
                store.create(&key, serde_json::to_vec(&stored)?).await?;
                Ok(())
            }
        }
    }
}

/// The stored ConfigMap `template` as `namespace/name`.
fn stored_copy(template: &Value, namespace: &str, name: &str) -> Value {
    let mut stored = template.clone();
    stored["metadata"]["name"] = json!(name);
    stored["metadata"]["namespace"] = json!(namespace);
    stored
}

/// Creates a ConfigMap over REST from `body`.
async fn post_configmap(
    conn: &mut RestConn,
    namespace: &str,
    body: Vec<u8>,
) -> Result<(), BenchError> {
    let path = format!("/api/v1/namespaces/{namespace}/configmaps");
    expect_status(conn.post(&path, body).await?, 201)?;
    Ok(())
}

/// Latencies and counts of one measured phase.
#[derive(Debug, Clone)]
pub struct PhaseResult {
    pub ops: u64,
    pub errors: u64,
    pub first_error: Option<String>,
    pub elapsed: Duration,
    /// Sorted, microseconds.
    pub latencies_us: Vec<u32>,
}

impl PhaseResult {
    pub fn throughput(&self) -> f64 {
        self.ops as f64 / self.elapsed.as_secs_f64()
    }

    pub fn percentile(&self, p: f64) -> Duration {
        percentile(&self.latencies_us, p)
    }
}

pub fn percentile(sorted_us: &[u32], p: f64) -> Duration {
    if sorted_us.is_empty() {
        return Duration::ZERO;
    }
    // Nearest-rank: the smallest sample with at least p of them at or below it.
    let rank = ((p * sorted_us.len() as f64).ceil() as usize).clamp(1, sorted_us.len());
    Duration::from_micros(u64::from(sorted_us[rank - 1]))
}

#[derive(Default)]
struct WorkerStats {
    ops: u64,
    errors: u64,
    first_error: Option<String>,
    latencies_us: Vec<u32>,
}

/// Each worker repeats `op` until `duration` is over. Writes go to the
/// worker's own ConfigMap, `<prefix>-<worker>`, which must exist; creates
/// and deletes to `<prefix>-<worker>-<n>` for n from 1 (a deleting worker
/// stops early at the first one that does not exist).
pub async fn run_ops(
    workers: Vec<Worker>,
    namespace: &str,
    prefix: &str,
    duration: Duration,
    op: Op,
) -> (Vec<Worker>, PhaseResult) {
    let start = Instant::now();
    let deadline = start + duration;
    let tasks: Vec<_> = workers
        .into_iter()
        .enumerate()
        .map(|(id, mut worker)| {
            let namespace = namespace.to_string();
            let prefix = prefix.to_string();
            tokio::spawn(async move {
                let mut stats = WorkerStats {
                    latencies_us: Vec::with_capacity(4096),
                    ..Default::default()
                };
                let mut seq = 0u64;
                let own = format!("{prefix}-{id}");
                while Instant::now() < deadline {
                    seq += 1;
                    let t0 = Instant::now();
                    let numbered = format!("{prefix}-{id}-{seq}");
                    let done = match op {
                        Op::Create => worker.create(&namespace, &numbered).await,
                        Op::Write(write) => worker.write(write, &namespace, &own, seq).await,
                        Op::Delete => match worker.delete(&namespace, &numbered).await {
                            Ok(true) => Ok(()),
                            Ok(false) => break,
                            Err(e) => Err(e),
                        },
                    };
                    match done {
                        Ok(()) => {
                            stats.ops += 1;
                            let us = t0.elapsed().as_micros();
                            stats
                                .latencies_us
                                .push(u32::try_from(us).unwrap_or(u32::MAX));
                        }
                        Err(e) => {
                            stats.errors += 1;
                            stats.first_error.get_or_insert_with(|| e.to_string());
                        }
                    }
                }
                (worker, stats, Instant::now())
            })
        })
        .collect();
    let mut workers = Vec::new();
    let mut result = PhaseResult {
        ops: 0,
        errors: 0,
        first_error: None,
        elapsed: Duration::ZERO,
        latencies_us: Vec::new(),
    };
    let mut last = start;
    for task in tasks {
        match task.await {
            Ok((worker, stats, finished)) => {
                result.ops += stats.ops;
                result.errors += stats.errors;
                if result.first_error.is_none() {
                    result.first_error = stats.first_error;
                }
                result.latencies_us.extend(stats.latencies_us);
                last = last.max(finished);
                workers.push(worker);
            }
            Err(e) => {
                result.errors += 1;
                result
                    .first_error
                    .get_or_insert_with(|| format!("worker panicked: {e}"));
            }
        }
    }
    result.elapsed = last - start;
    result.latencies_us.sort_unstable();
    (workers, result)
}
