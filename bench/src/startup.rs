//! Start-up with many objects stored: a restart's time to `/readyz`, its
//! time until the watch cache serves reads, and the server's memory and CPU
//! by then — beside the same restart with none of those objects.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::error::BenchError;
use crate::rest::{expect_status, RestConn, TlsFiles};
use crate::server::ServerProc;
use crate::{ensure_namespace, say};

/// The namespace the objects are created in.
const NAMESPACE: &str = "bench-startup";

/// The file in a data directory that says how many objects were stored,
/// so a kept directory is filled once for many runs.
const MARKER: &str = "bench-startup-objects";

/// How long a restart may take until its cache serves reads.
const SERVED_TIMEOUT: Duration = Duration::from_secs(600);

/// One restart of a server with `objects` stored.
pub(super) struct Restart {
    /// Spawn → `/readyz` 200 (every server is stopped gracefully, so no
    /// start repairs the store).
    pub readyz: Duration,
    /// Spawn → a list at resourceVersion=0 (answered by the ConfigMaps' watch
    /// cache once it has loaded every one of them) answers 200.
    pub served: Duration,
    /// The server's RSS then.
    pub rss: u64,
    /// The server's CPU time then.
    pub cpu: Duration,
}

pub(super) struct StoredRestarts {
    pub objects: usize,
    pub restarts: Vec<Restart>,
}

/// Restarts `binary` `runs` times on a store holding no ConfigMaps of the
/// bench's and on one holding `objects` of them (small ones), alternating.
/// `keep` names a directory that keeps the filled store between bench runs.
pub(super) async fn measure(
    binary: &Path,
    objects: usize,
    runs: usize,
    keep: Option<&Path>,
) -> Result<Vec<StoredRestarts>, BenchError> {
    let work = tempfile::tempdir()?;
    let empty = work.path().join("empty");
    let filled = match keep {
        Some(dir) => dir.to_path_buf(),
        None => work.path().join("filled"),
    };
    ensure_filled(binary, &empty, 0).await?;
    ensure_filled(binary, &filled, objects).await?;
    let mut results = vec![
        StoredRestarts {
            objects: 0,
            restarts: Vec::new(),
        },
        StoredRestarts {
            objects,
            restarts: Vec::new(),
        },
    ];
    for run in 0..runs {
        for (result, dir) in results.iter_mut().zip([&empty, &filled]) {
            let restart = restart(binary, dir).await?;
            say(format!(
                "start-up with {} objects, run {}: /readyz {} ms, served {} ms, RSS {:.1} MiB, CPU {} ms",
                result.objects,
                run + 1,
                restart.readyz.as_millis(),
                restart.served.as_millis(),
                restart.rss as f64 / 1048576.0,
                restart.cpu.as_millis()
            ));
            result.restarts.push(restart);
        }
    }
    Ok(results)
}

async fn restart(binary: &Path, dir: &Path) -> Result<Restart, BenchError> {
    let server = ServerProc::start(binary, dir).await?;
    let tls = TlsFiles::from_data_dir(dir).config()?;
    let mut conn = RestConn::connect(server.port, tls).await?;
    // Another namespace's ConfigMaps: served by the same cache, which
    // holds the bench's objects too, without listing them all. (A get at
    // resourceVersion=0 would not do: storage answers it while the cache
    // loads.)
    let path = "/api/v1/namespaces/default/configmaps?resourceVersion=0";
    loop {
        // 503 while the cache loads (after its wait for it times out).
        if conn.get(path).await?.0 == 200 {
            break;
        }
        if server.since_spawn() > SERVED_TIMEOUT {
            return Err(BenchError::Startup(format!(
                "{path} did not answer 200 within {} s",
                SERVED_TIMEOUT.as_secs()
            )));
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let served = server.since_spawn();
    let restart = Restart {
        readyz: server.startup,
        served,
        rss: server.rss_bytes()?,
        cpu: server.cpu_time()?,
    };
    server.stop_gracefully()?;
    Ok(restart)
}

/// Makes `dir` a data directory holding `objects` small ConfigMaps in the
/// bench's namespace, unless its marker says it already does.
async fn ensure_filled(binary: &Path, dir: &Path, objects: usize) -> Result<(), BenchError> {
    let marker: PathBuf = dir.join(MARKER);
    if std::fs::read_to_string(&marker).ok().as_deref() == Some(&objects.to_string()) {
        say(format!("reusing {} ({objects} objects)", dir.display()));
        return Ok(());
    }
    let server = ServerProc::start(binary, dir).await?;
    let tls = TlsFiles::from_data_dir(dir).config()?;
    let mut conn = RestConn::connect(server.port, tls.clone()).await?;
    ensure_namespace(&mut conn, NAMESPACE).await?;
    create_objects(&server, &tls, objects).await?;
    server.stop_gracefully()?;
    std::fs::write(&marker, objects.to_string())?;
    Ok(())
}

/// Creates `o-0000000` .. through REST, many connections at once.
async fn create_objects(
    server: &ServerProc,
    tls: &Arc<rustls::ClientConfig>,
    objects: usize,
) -> Result<(), BenchError> {
    const CREATORS: usize = 32;
    let started = Instant::now();
    let mut tasks = Vec::new();
    for creator in 0..CREATORS {
        let mut conn = RestConn::connect(server.port, tls.clone()).await?;
        tasks.push(tokio::spawn(async move {
            for i in (creator..objects).step_by(CREATORS) {
                let body = serde_json::to_vec(&json!({
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": format!("o-{i:07}")},
                    "data": {"k": "v"},
                }))?;
                expect_status(
                    conn.post(&format!("/api/v1/namespaces/{NAMESPACE}/configmaps"), body)
                        .await?,
                    201,
                )?;
                // Creator 0 makes every 32nd; 100,000 is one of those.
                if creator == 0 && i % 100_000 == 0 && i > 0 {
                    say(format!("created about {i} objects"));
                }
            }
            Ok::<_, BenchError>(())
        }));
    }
    for task in tasks {
        task.await
            .map_err(|e| BenchError::Http(format!("creator panicked: {e}")))??;
    }
    say(format!(
        "created {objects} objects in {:.1} s",
        started.elapsed().as_secs_f64()
    ));
    Ok(())
}
