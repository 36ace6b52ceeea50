//! The capstan process under test: spawn, wait for readiness, measure, stop.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::error::BenchError;
use crate::rest::{RestConn, TlsFiles};

/// How long a start may take before the run is abandoned.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// The CPUs the measured server runs on (`--server-cpus`), as a taskset list.
static SERVER_CPUS: std::sync::OnceLock<String> = std::sync::OnceLock::new();

fn cpu_list(cpus: &[usize]) -> String {
    cpus.iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// Moves this process to the CPUs not in `server_cpus` and has every server
/// it spawns run on `server_cpus` (both with util-linux's `taskset`).
pub fn pin(server_cpus: &[usize]) -> Result<(), BenchError> {
    let all = std::thread::available_parallelism().map_or(1, |n| n.get());
    let rest: Vec<usize> = (0..all).filter(|cpu| !server_cpus.contains(cpu)).collect();
    if rest.is_empty() || server_cpus.iter().any(|cpu| *cpu >= all) {
        return Err(BenchError::Startup(format!(
            "--server-cpus {} must leave at least one of CPUs 0-{} to the bench",
            cpu_list(server_cpus),
            all - 1
        )));
    }
    let status = Command::new("taskset")
        .args(["-a", "-p", "-c", &cpu_list(&rest)])
        .arg(std::process::id().to_string())
        .stdout(Stdio::null())
        .status()
        .map_err(|e| BenchError::Startup(format!("taskset: {e}")))?;
    if !status.success() {
        return Err(BenchError::Startup(format!("taskset failed: {status}")));
    }
    let _ = SERVER_CPUS.set(cpu_list(server_cpus));
    Ok(())
}

pub struct ServerProc {
    child: Child,
    pub port: u16,
    pub data_dir: PathBuf,
    /// Spawn → first `/readyz` 200.
    pub startup: Duration,
    spawned: Instant,
}

impl ServerProc {
    /// Spawns `binary serve` on a free port in `data_dir` and waits until
    /// `/readyz` answers 200.
    pub async fn start(binary: &Path, data_dir: &Path) -> Result<Self, BenchError> {
        Self::start_with(binary, data_dir, &[]).await
    }

    /// As [`ServerProc::start`], with extra `serve` flags (e.g. `--etcd-servers`).
    pub async fn start_with(
        binary: &Path,
        data_dir: &Path,
        extra: &[&str],
    ) -> Result<Self, BenchError> {
        let port_file = data_dir.join("port");
        let _ = std::fs::remove_file(&port_file);
        std::fs::create_dir_all(data_dir)?;
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(data_dir.join("server.log"))?;
        let spawned = Instant::now();
        let mut command = match SERVER_CPUS.get() {
            Some(cpus) => {
                let mut taskset = Command::new("taskset");
                taskset.args(["-c", cpus]).arg(binary);
                taskset
            }
            None => Command::new(binary),
        };
        let child = command
            .arg("serve")
            .arg("--data-dir")
            .arg(data_dir)
            .args(["--secure-port", "0"])
            .arg("--port-file")
            .arg(&port_file)
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| BenchError::Startup(format!("spawn {}: {e}", binary.display())))?;
        let mut server = Self {
            child,
            port: 0,
            data_dir: data_dir.to_path_buf(),
            startup: Duration::ZERO,
            spawned,
        };
        // The port file appears once the server listens and is about to
        // report ready; /readyz then confirms it end to end (TLS, routing).
        let port = loop {
            if let Some(port) = std::fs::read_to_string(&port_file)
                .ok()
                .and_then(|s| s.trim().parse::<u16>().ok())
            {
                break port;
            }
            server.check_alive()?;
            if spawned.elapsed() > START_TIMEOUT {
                return Err(BenchError::Startup("no port file after 60 s".into()));
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        };
        server.port = port;
        let tls = TlsFiles::from_data_dir(data_dir).config()?;
        loop {
            if let Ok(mut conn) = RestConn::connect(port, tls.clone()).await {
                if let Ok((200, _)) = conn.get("/readyz").await {
                    break;
                }
            }
            server.check_alive()?;
            if spawned.elapsed() > START_TIMEOUT {
                return Err(BenchError::Startup("/readyz never answered 200".into()));
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        server.startup = spawned.elapsed();
        Ok(server)
    }

    /// Time since the process was spawned.
    pub fn since_spawn(&self) -> Duration {
        self.spawned.elapsed()
    }

    fn check_alive(&mut self) -> Result<(), BenchError> {
        match self.child.try_wait()? {
            Some(status) => Err(BenchError::Startup(format!(
                "capstan exited with {status}; see {}",
                self.data_dir.join("server.log").display()
            ))),
            None => Ok(()),
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Resident set size in bytes (VmRSS).
    pub fn rss_bytes(&self) -> Result<u64, BenchError> {
        rss_of(&format!("/proc/{}/status", self.pid()))
    }

    /// User + system CPU time consumed so far.
    pub fn cpu_time(&self) -> Result<Duration, BenchError> {
        cpu_time_of(&format!("/proc/{}/stat", self.pid()))
    }

    /// SIGTERM and wait for the process to end (SIGKILL after 30 s): the
    /// store is closed cleanly, so the next start does not repair it.
    pub fn stop_gracefully(mut self) -> Result<(), BenchError> {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()?;
        if status.success() {
            let asked = Instant::now();
            while asked.elapsed() < Duration::from_secs(30) {
                if self.child.try_wait()?.is_some() {
                    return Ok(());
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        self.stop()
    }

    /// SIGKILL and reap: the store is crash-safe, and a graceful stop would
    /// only add its grace period to the run.
    pub fn stop(mut self) -> Result<(), BenchError> {
        self.child.kill()?;
        self.child.wait()?;
        Ok(())
    }
}

impl Drop for ServerProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn rss_of(path: &str) -> Result<u64, BenchError> {
    let text = std::fs::read_to_string(path)?;
    text.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        })
        .map(|kb| kb * 1024)
        .ok_or_else(|| BenchError::Proc(format!("no VmRSS in {path}")))
}

/// Clock ticks per second for /proc/*/stat; 100 on every Linux
/// configuration this runs on, but asked rather than assumed.
fn clock_ticks() -> u64 {
    static TICKS: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *TICKS.get_or_init(|| {
        Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(100)
    })
}

fn cpu_time_of(path: &str) -> Result<Duration, BenchError> {
    let text = std::fs::read_to_string(path)?;
    // The command name (field 2) may hold spaces; fields after its closing
    // parenthesis are fixed: utime and stime are the 12th and 13th there.
    let after = text
        .rsplit_once(')')
        .map(|(_, rest)| rest)
        .ok_or_else(|| BenchError::Proc(format!("unexpected {path}")))?;
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok());
    match (ticks(11), ticks(12)) {
        (Some(u), Some(s)) => Ok(Duration::from_millis((u + s) * 1000 / clock_ticks())),
        _ => Err(BenchError::Proc(format!("no utime/stime in {path}"))),
    }
}

/// The first process whose command line contains `needle` (e.g. the etcd
/// started for the run, found by its client URL).
pub fn find_pid(needle: &str) -> Option<u32> {
    std::fs::read_dir("/proc").ok()?.find_map(|entry| {
        let entry = entry.ok()?;
        let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
        let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        cmdline.contains(needle).then_some(pid)
    })
}

/// User + system CPU time of another process.
/// `read` of every process in `pids` added up; None for no process.
pub fn summed<T: std::iter::Sum>(
    pids: &[u32],
    read: impl Fn(u32) -> Result<T, BenchError>,
) -> Result<Option<T>, BenchError> {
    if pids.is_empty() {
        return Ok(None);
    }
    let each = pids
        .iter()
        .map(|pid| read(*pid))
        .collect::<Result<Vec<T>, _>>()?;
    Ok(Some(each.into_iter().sum()))
}

pub fn cpu_time_of_pid(pid: u32) -> Result<Duration, BenchError> {
    cpu_time_of(&format!("/proc/{pid}/stat"))
}

/// Resident set size of another process.
pub fn rss_of_pid(pid: u32) -> Result<u64, BenchError> {
    rss_of(&format!("/proc/{pid}/status"))
}

/// Resident set size of this (the load generator's) process.
pub fn own_rss_bytes() -> Result<u64, BenchError> {
    rss_of("/proc/self/status")
}

/// CPU time of this (the load generator's) process.
pub fn own_cpu_time() -> Result<Duration, BenchError> {
    cpu_time_of("/proc/self/stat")
}

/// Busy and total jiffies of all CPUs together, from /proc/stat.
pub fn machine_cpu() -> Result<(u64, u64), BenchError> {
    let text = std::fs::read_to_string("/proc/stat")?;
    let fields: Vec<u64> = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("cpu "))
        .ok_or_else(|| BenchError::Proc("no cpu line in /proc/stat".into()))?
        .split_whitespace()
        .filter_map(|f| f.parse().ok())
        .collect();
    if fields.len() < 8 {
        return Err(BenchError::Proc("short cpu line in /proc/stat".into()));
    }
    // user nice system idle iowait irq softirq steal; guest time is already
    // inside user.
    let idle = fields[3] + fields[4];
    let total: u64 = fields[..8].iter().sum();
    Ok((total - idle, total))
}
