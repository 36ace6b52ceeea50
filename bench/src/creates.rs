//! What the create benchmarks (capstan-crd-bench, capstan-admission-bench)
//! share: a running server with a client TLS configuration, creates by
//! several connections measured by the server's CPU and the latency of
//! each, and single writes to set a phase up.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::error::BenchError;
use crate::rest::{expect_status, RestConn};
use crate::server::ServerProc;

pub struct Bench {
    pub server: ServerProc,
    pub tls: Arc<rustls::ClientConfig>,
}

/// One measured phase of creates.
pub struct Measure {
    /// The server's CPU time per create.
    pub cpu_per_create: Duration,
    /// The median create latency.
    pub median: Duration,
    /// The phase's wall time.
    pub wall: Duration,
}

impl Bench {
    pub async fn conn(&self) -> Result<RestConn, BenchError> {
        RestConn::connect(self.server.port, self.tls.clone()).await
    }

    /// `count` creates at `path` of `make(<prefix>-<n>)` by `clients`
    /// connections.
    pub async fn creates(
        &self,
        path: &str,
        count: usize,
        clients: usize,
        make: fn(&str) -> Value,
        prefix: &str,
    ) -> Result<Measure, BenchError> {
        let mut conns = Vec::new();
        for _ in 0..clients {
            conns.push(self.conn().await?);
        }
        let cpu = self.server.cpu_time()?;
        let started = Instant::now();
        let mut tasks = Vec::new();
        for (client, mut conn) in conns.into_iter().enumerate() {
            let path = path.to_string();
            let prefix = prefix.to_string();
            tasks.push(tokio::spawn(async move {
                let mut latencies = Vec::new();
                for n in (client..count).step_by(clients) {
                    let body = serde_json::to_vec(&make(&format!("{prefix}-{n}")))?;
                    let sent = Instant::now();
                    expect_status(conn.post(&path, body).await?, 201)?;
                    latencies.push(sent.elapsed());
                }
                Ok::<_, BenchError>(latencies)
            }));
        }
        let mut latencies = Vec::new();
        for task in tasks {
            latencies.extend(task.await.map_err(|e| BenchError::Http(e.to_string()))??);
        }
        let wall = started.elapsed();
        let cpu_per_create = (self.server.cpu_time()? - cpu) / count.max(1) as u32;
        latencies.sort();
        Ok(Measure {
            cpu_per_create,
            median: latencies
                .get(latencies.len() / 2)
                .copied()
                .unwrap_or_default(),
            wall,
        })
    }

    pub async fn create(&self, path: &str, object: &Value) -> Result<(), BenchError> {
        let mut conn = self.conn().await?;
        expect_status(conn.post(path, serde_json::to_vec(object)?).await?, 201)?;
        Ok(())
    }

    pub async fn delete(&self, path: &str) -> Result<(), BenchError> {
        let mut conn = self.conn().await?;
        expect_status(conn.delete(path).await?, 200)?;
        Ok(())
    }
}

/// A duration in whole microseconds, as the tables print it.
pub fn micros(d: Duration) -> String {
    format!("{:.0}", d.as_secs_f64() * 1e6)
}
