//! End-to-end harness: starts the real `capstan` binary on a fresh data
//! directory and drives it with the real clients (kubectl, grpcurl, curl).
//!
//! Every process started here has a bounded lifetime: one-shot commands are
//! killed when they overrun [`COMMAND_TIMEOUT`], streaming commands and the
//! server are killed when their handle drops (also while a test panics).
//!
//! Environment knobs:
//! - `CAPSTAN_TEST_KUBECTL`, `CAPSTAN_TEST_GRPCURL`, `CAPSTAN_TEST_CURL`: client binaries
//!   (default: `kubectl`, `grpcurl`, `curl` from PATH).
//! - `CAPSTAN_TEST_LOG`: RUST_LOG for the server (default `info`).
//! - `CAPSTAN_TEST_KEEP=1`: keep the data directory of a failed test.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// How long the server gets to write its port file and answer `/readyz`.
pub const START_TIMEOUT: Duration = Duration::from_secs(15);
/// Upper bound for any one-shot client command.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);
/// How long SIGTERM gets before SIGKILL (the server's own grace is 5 s).
pub const STOP_TIMEOUT: Duration = Duration::from_secs(8);
/// Default bound when waiting for streamed output.
pub const STREAM_TIMEOUT: Duration = Duration::from_secs(15);

fn tool(env: &str, default: &str) -> String {
    std::env::var(env).unwrap_or_else(|_| default.to_string())
}

/// kubectl from PATH. When that is the Google Cloud SDK's version dispatcher
/// (which asks the server for its version on every run before exec'ing the
/// matching client), use the 1.33 client it would pick directly.
pub fn kubectl_bin() -> String {
    static BIN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    BIN.get_or_init(|| {
        if let Ok(bin) = std::env::var("CAPSTAN_TEST_KUBECTL") {
            return bin;
        }
        let on_path = std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|dir| dir.join("kubectl"))
                .find(|p| p.is_file())
        });
        if let Some(real) = on_path.and_then(|p| fs::canonicalize(p).ok()) {
            let direct = real.with_file_name("kubectl.1.33");
            if real.to_string_lossy().contains("google-cloud-sdk") && direct.is_file() {
                return direct.to_string_lossy().into_owned();
            }
        }
        "kubectl".to_string()
    })
    .clone()
}
pub fn grpcurl_bin() -> String {
    tool("CAPSTAN_TEST_GRPCURL", "grpcurl")
}
pub fn curl_bin() -> String {
    tool("CAPSTAN_TEST_CURL", "curl")
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Renders a finished command for assertion messages.
pub fn describe_output(what: &str, out: &Output) -> String {
    format!(
        "{what}\n  exit: {}\n  stdout:\n{}\n  stderr:\n{}",
        out.status,
        indent(&text(&out.stdout)),
        indent(&text(&out.stderr))
    )
}

fn indent(s: &str) -> String {
    s.lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn spawn_reader<R: Read + Send + 'static>(
    source: Option<R>,
    sink: Arc<Mutex<Vec<u8>>>,
) -> Option<JoinHandle<()>> {
    let mut source = source?;
    Some(thread::spawn(move || {
        let mut buf = [0u8; 8192];
        loop {
            match source.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => sink.lock().unwrap().extend_from_slice(&buf[..n]),
            }
        }
    }))
}

/// Runs `cmd` to completion with a deadline; the process is killed (and the
/// test fails) if it overruns.
pub fn run_command(cmd: &mut Command, stdin: Option<&[u8]>, timeout: Duration) -> Output {
    let what = format!("{cmd:?}");
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
    if let (Some(input), Some(mut pipe)) = (stdin, child.stdin.take()) {
        let input = input.to_vec();
        // A writer thread, so a child that does not read cannot block us.
        thread::spawn(move || {
            let _ = pipe.write_all(&input);
        });
    }
    let out = Arc::new(Mutex::new(Vec::new()));
    let err = Arc::new(Mutex::new(Vec::new()));
    let out_reader = spawn_reader(child.stdout.take(), out.clone());
    let err_reader = spawn_reader(child.stderr.take(), err.clone());
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "{what} did not finish within {timeout:?}\n  stdout so far:\n{}\n  stderr so far:\n{}",
                    indent(&text(&out.lock().unwrap())),
                    indent(&text(&err.lock().unwrap()))
                );
            }
            Ok(None) => thread::sleep(Duration::from_millis(5)),
            Err(e) => panic!("waiting for {what}: {e}"),
        }
    };
    for reader in [out_reader, err_reader].into_iter().flatten() {
        let _ = reader.join();
    }
    let stdout = std::mem::take(&mut *out.lock().unwrap());
    let stderr = std::mem::take(&mut *err.lock().unwrap());
    Output {
        status,
        stdout,
        stderr,
    }
}

/// Polls `probe` until it returns `Some`, or panics with `what` after `timeout`.
pub fn wait_until<T>(timeout: Duration, what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + timeout;
    let mut delay = Duration::from_millis(10);
    loop {
        if let Some(v) = probe() {
            return v;
        }
        if Instant::now() >= deadline {
            panic!("timed out after {timeout:?} waiting for {what}");
        }
        thread::sleep(delay);
        delay = (delay * 2).min(Duration::from_millis(200));
    }
}

/// A long-running client (a watch): output is collected in the background,
/// the process is killed on drop.
pub struct Streaming {
    what: String,
    child: Child,
    out: Arc<Mutex<Vec<u8>>>,
    err: Arc<Mutex<Vec<u8>>>,
}

impl Streaming {
    pub fn spawn(mut cmd: Command) -> Self {
        let what = format!("{cmd:?}");
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
        let out = Arc::new(Mutex::new(Vec::new()));
        let err = Arc::new(Mutex::new(Vec::new()));
        spawn_reader(child.stdout.take(), out.clone());
        spawn_reader(child.stderr.take(), err.clone());
        Self {
            what,
            child,
            out,
            err,
        }
    }

    pub fn stdout(&self) -> String {
        text(&self.out.lock().unwrap())
    }

    pub fn stderr(&self) -> String {
        text(&self.err.lock().unwrap())
    }

    /// Polls the output collected so far until `check` returns `Some`.
    pub fn wait_for<T>(&mut self, what: &str, mut check: impl FnMut(&str) -> Option<T>) -> T {
        self.wait_for_within(STREAM_TIMEOUT, what, &mut check)
    }

    pub fn wait_for_within<T>(
        &mut self,
        timeout: Duration,
        what: &str,
        mut check: impl FnMut(&str) -> Option<T>,
    ) -> T {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(v) = check(&self.stdout()) {
                return v;
            }
            let exited = matches!(self.child.try_wait(), Ok(Some(_)));
            if exited {
                // Give the readers a moment to drain the pipes, then look once more.
                thread::sleep(Duration::from_millis(100));
                if let Some(v) = check(&self.stdout()) {
                    return v;
                }
            }
            if exited || Instant::now() >= deadline {
                panic!(
                    "{}: waiting for {what} ({})\n  command: {}\n  stdout:\n{}\n  stderr:\n{}",
                    if exited { "stream ended" } else { "timed out" },
                    if exited {
                        format!("{:?}", self.child.try_wait())
                    } else {
                        format!("{timeout:?}")
                    },
                    self.what,
                    indent(&self.stdout()),
                    indent(&self.stderr())
                );
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// Whether the process exits on its own within `timeout` (a stream the
    /// server ended).
    pub fn exits_within(&mut self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return true;
            }
            thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// Stops the process and returns everything it printed.
    pub fn stop(mut self) -> String {
        self.kill();
        thread::sleep(Duration::from_millis(20));
        self.stdout()
    }

    fn kill(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

impl Drop for Streaming {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The leading complete JSON values of a stream of concatenated JSON
/// documents (grpcurl prints one per message; REST watch one per line).
pub fn json_stream(s: &str) -> Vec<Value> {
    serde_json::Deserializer::from_str(s)
        .into_iter::<Value>()
        .map_while(Result::ok)
        .collect()
}

/// An HTTP response as curl saw it.
#[derive(Debug)]
pub struct HttpResponse {
    pub status: u16,
    pub headers: String,
    pub body: String,
    /// The body's bytes, for binary (protobuf) responses.
    pub raw: Vec<u8>,
}

impl HttpResponse {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("response body is not JSON ({e}): {self:?}"))
    }

    pub fn header(&self, name: &str) -> Option<String> {
        // With redirects or 100-continue there can be several header blocks; use the last.
        let block = self
            .headers
            .split("\r\n\r\n")
            .filter(|b| !b.trim().is_empty())
            .last()
            .unwrap_or("");
        block.lines().find_map(|line| {
            let (k, v) = line.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_string())
        })
    }

    /// Asserts a `metav1.Status` failure with this code and reason; returns it.
    pub fn assert_status(&self, code: u16, reason: &str) -> Value {
        assert_eq!(self.status, code, "unexpected HTTP status: {self:#?}");
        let status = self.json();
        assert_eq!(status["kind"], "Status", "{self:#?}");
        assert_eq!(status["apiVersion"], "v1", "{self:#?}");
        assert_eq!(status["status"], "Failure", "{self:#?}");
        assert_eq!(status["reason"], reason, "{self:#?}");
        assert_eq!(status["code"], code, "{self:#?}");
        status
    }
}

/// A gRPC error as grpcurl printed it.
#[derive(Debug, Clone)]
pub struct GrpcError {
    pub code: String,
    pub message: String,
    /// What grpcurl printed, for a failing test's message.
    #[allow(dead_code)]
    pub output: String,
}

static UNIQUE: AtomicUsize = AtomicUsize::new(0);

fn unique() -> usize {
    UNIQUE.fetch_add(1, Ordering::Relaxed)
}

/// One `capstan serve` process on a private data directory.
pub struct TestServer {
    dir: Option<tempfile::TempDir>,
    child: Option<Child>,
    port: u16,
    starts: usize,
    /// Extra `capstan serve` flags, kept across restarts.
    extra_args: Vec<String>,
}

impl TestServer {
    /// Starts the binary on a fresh data directory and waits until it serves.
    pub fn start() -> Self {
        Self::start_with(&[])
    }

    /// Starts the binary with extra `serve` flags (e.g. `--etcd-servers`).
    pub fn start_with(extra_args: &[&str]) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("capstan-e2e-")
            .tempdir()
            .expect("create a temp dir");
        let mut server = Self {
            dir: Some(dir),
            child: None,
            port: 0,
            starts: 0,
            extra_args: extra_args.iter().map(|a| a.to_string()).collect(),
        };
        server.spawn();
        server
    }

    /// A server this process runs (started in-process on `dir`, listening
    /// on `port`), driven through the same clients as a spawned one.
    pub fn attach(dir: tempfile::TempDir, port: u16) -> Self {
        Self {
            dir: Some(dir),
            child: None,
            port,
            starts: 1,
            extra_args: Vec::new(),
        }
    }

    /// Unless a test chooses its controllers, the kube-root-ca.crt
    /// publisher is off: it writes a ConfigMap into every namespace, which
    /// the tests that count a namespace's ConfigMaps do not expect. The
    /// tests of the publisher and of the ServiceAccount plugin turn it on.
    fn default_controllers(&self) -> Vec<&'static str> {
        if self
            .extra_args
            .iter()
            .any(|a| a.starts_with("--controllers"))
        {
            Vec::new()
        } else {
            vec!["--controllers=*,-root-ca-cert-publisher"]
        }
    }

    /// SIGKILL: no shutdown code runs, as in a crash or power loss.
    pub fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the server again on the same data directory after `kill9`.
    pub fn start_again(&mut self) {
        self.spawn();
    }

    pub fn dir(&self) -> &Path {
        self.dir.as_ref().expect("data dir").path()
    }
    pub fn port(&self) -> u16 {
        self.port
    }
    pub fn kubeconfig(&self) -> PathBuf {
        self.dir().join("admin.kubeconfig")
    }
    pub fn ca_cert(&self) -> PathBuf {
        self.dir().join("pki/ca.crt")
    }
    pub fn admin_cert(&self) -> PathBuf {
        self.dir().join("pki/admin.crt")
    }
    pub fn admin_key(&self) -> PathBuf {
        self.dir().join("pki/admin.key")
    }
    pub fn log_path(&self) -> PathBuf {
        self.dir().join("server.log")
    }
    fn port_file(&self) -> PathBuf {
        self.dir().join("port")
    }
    pub fn base_url(&self) -> String {
        format!("https://127.0.0.1:{}", self.port)
    }
    /// A path for a scratch file inside the data dir's parent temp dir.
    pub fn scratch(&self, name: &str) -> PathBuf {
        let dir = self.dir().join("scratch");
        fs::create_dir_all(&dir).expect("scratch dir");
        dir.join(format!("{}-{name}", unique()))
    }

    pub fn server_log(&self) -> String {
        fs::read_to_string(self.log_path()).unwrap_or_default()
    }

    fn spawn(&mut self) {
        assert!(self.child.is_none(), "server already running");
        self.starts += 1;
        let port_file = self.port_file();
        let _ = fs::remove_file(&port_file);
        let mut log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log_path())
            .expect("open server log");
        writeln!(log, "===== capstan start #{} =====", self.starts).expect("write log");
        let log_err = log.try_clone().expect("clone log handle");
        let child = Command::new(env!("CARGO_BIN_EXE_capstan"))
            .arg("serve")
            .arg("--data-dir")
            .arg(self.dir())
            .args(["--secure-port", "0", "--port-file"])
            .arg(&port_file)
            .args(self.default_controllers())
            .args(&self.extra_args)
            .env(
                "RUST_LOG",
                std::env::var("CAPSTAN_TEST_LOG").unwrap_or_else(|_| "info".into()),
            )
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::from(log))
            .stderr(Stdio::from(log_err))
            .spawn()
            .expect("spawn capstan");
        self.child = Some(child);
        self.port = 0;

        let deadline = Instant::now() + START_TIMEOUT;
        let mut last = String::from("no port file yet");
        loop {
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                self.child = None;
                panic!(
                    "capstan exited during start-up with {status}\n{}",
                    self.server_log()
                );
            }
            if let Some(port) = fs::read_to_string(&port_file)
                .ok()
                .and_then(|t| t.trim().parse::<u16>().ok())
                .filter(|p| *p != 0)
            {
                self.port = port;
                match self.probe_ready() {
                    Ok(()) => return,
                    Err(e) => last = e,
                }
            }
            if Instant::now() >= deadline {
                panic!(
                    "capstan was not ready within {START_TIMEOUT:?} (last: {last})\n{}",
                    self.server_log()
                );
            }
            thread::sleep(Duration::from_millis(25));
        }
    }

    fn probe_ready(&self) -> Result<(), String> {
        let out = run_command(
            Command::new(curl_bin())
                .args(["-sS", "--max-time", "2", "--cacert"])
                .arg(self.ca_cert())
                .arg("--cert")
                .arg(self.admin_cert())
                .arg("--key")
                .arg(self.admin_key())
                .arg(format!("{}/readyz", self.base_url())),
            None,
            Duration::from_secs(5),
        );
        if out.status.success() && text(&out.stdout).trim() == "ok" {
            Ok(())
        } else {
            Err(format!(
                "readyz: {} {}",
                text(&out.stdout).trim(),
                text(&out.stderr).trim()
            ))
        }
    }

    /// SIGTERM, then SIGKILL after [`STOP_TIMEOUT`]. Returns the exit status and
    /// whether the server exited on its own.
    pub fn stop(&mut self) -> Option<(ExitStatus, bool)> {
        let mut child = self.child.take()?;
        if let Ok(Some(status)) = child.try_wait() {
            return Some((status, true));
        }
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let deadline = Instant::now() + STOP_TIMEOUT;
        loop {
            match child.try_wait() {
                Ok(Some(status)) => return Some((status, true)),
                Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(20)),
                _ => {
                    let _ = child.kill();
                    let status = child.wait().ok()?;
                    return Some((status, false));
                }
            }
        }
    }

    /// Stops the server with SIGTERM (asserting a clean exit) and starts it
    /// again on the same data directory (it picks a new port).
    pub fn restart(&mut self) {
        let (status, graceful) = self.stop().expect("server was running");
        assert!(
            graceful && status.success(),
            "capstan did not shut down cleanly on SIGTERM within {STOP_TIMEOUT:?} (status {status}, graceful {graceful})\n{}",
            self.server_log()
        );
        self.spawn();
    }

    // ---------------------------------------------------------------- kubectl

    pub fn kubectl_command(&self) -> Command {
        let mut cmd = Command::new(kubectl_bin());
        cmd.env("KUBECONFIG", self.kubeconfig())
            .arg("--cache-dir")
            .arg(self.dir().join("kube-cache"));
        cmd
    }

    /// Runs kubectl with this server's kubeconfig.
    pub fn kubectl(&self, args: &[&str]) -> Output {
        run_command(self.kubectl_command().args(args), None, COMMAND_TIMEOUT)
    }

    pub fn kubectl_stdin(&self, args: &[&str], stdin: &str) -> Output {
        run_command(
            self.kubectl_command().args(args),
            Some(stdin.as_bytes()),
            COMMAND_TIMEOUT,
        )
    }

    /// Runs kubectl, asserts success, returns stdout.
    #[track_caller]
    pub fn kubectl_ok(&self, args: &[&str]) -> String {
        let out = self.kubectl(args);
        assert!(
            out.status.success(),
            "{}\n{}",
            describe_output(&format!("kubectl {}", args.join(" ")), &out),
            self.log_tail()
        );
        text(&out.stdout)
    }

    /// [`Self::kubectl_ok`] with its arguments written as one line, split at
    /// whitespace (for arguments that hold none).
    #[track_caller]
    pub fn kubectl_line(&self, line: &str) -> String {
        let args: Vec<&str> = line.split_whitespace().collect();
        self.kubectl_ok(&args)
    }

    /// Runs kubectl, asserts failure, returns stderr.
    #[track_caller]
    pub fn kubectl_err(&self, args: &[&str]) -> String {
        let out = self.kubectl(args);
        assert!(
            !out.status.success(),
            "expected failure: {}",
            describe_output(&format!("kubectl {}", args.join(" ")), &out)
        );
        text(&out.stderr)
    }

    /// `kubectl <args> -f -` with `manifest` on stdin; asserts success.
    #[track_caller]
    pub fn kubectl_with_manifest(&self, args: &[&str], manifest: &str) -> String {
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["-f", "-"]);
        let out = self.kubectl_stdin(&all, manifest);
        assert!(
            out.status.success(),
            "{}\nmanifest:\n{manifest}\n{}",
            describe_output(&format!("kubectl {}", all.join(" ")), &out),
            self.log_tail()
        );
        text(&out.stdout)
    }

    /// `kubectl apply -f -`; asserts success, returns stdout.
    #[track_caller]
    pub fn apply(&self, manifest: &str) -> String {
        self.kubectl_with_manifest(&["apply"], manifest)
    }

    /// Runs kubectl with `-o json` appended and parses the output.
    #[track_caller]
    pub fn kubectl_json(&self, args: &[&str]) -> Value {
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["-o", "json"]);
        let out = self.kubectl_ok(&all);
        serde_json::from_str(&out)
            .unwrap_or_else(|e| panic!("kubectl output is not JSON ({e}):\n{out}"))
    }

    /// A long-running kubectl (e.g. `get -w`), killed on drop.
    pub fn kubectl_spawn(&self, args: &[&str]) -> Streaming {
        let mut cmd = self.kubectl_command();
        cmd.args(args);
        Streaming::spawn(cmd)
    }

    // ---------------------------------------------------------------- grpcurl

    fn grpcurl_command(&self, flags: &[&str]) -> Command {
        let mut cmd = Command::new(grpcurl_bin());
        cmd.arg("-cacert")
            .arg(self.ca_cert())
            .arg("-cert")
            .arg(self.admin_cert())
            .arg("-key")
            .arg(self.admin_key())
            .args(flags)
            .arg(format!("localhost:{}", self.port));
        cmd
    }

    /// `grpcurl <tls flags> <flags> localhost:<port> <rest>`.
    pub fn grpcurl(&self, flags: &[&str], rest: &[&str]) -> Output {
        run_command(
            self.grpcurl_command(flags).args(rest),
            None,
            COMMAND_TIMEOUT,
        )
    }

    /// Like [`Self::grpcurl`], asserting success and returning stdout.
    #[track_caller]
    pub fn grpcurl_ok(&self, flags: &[&str], rest: &[&str]) -> String {
        let out = self.grpcurl(flags, rest);
        assert!(
            out.status.success(),
            "{}",
            describe_output(
                &format!("grpcurl {} {}", flags.join(" "), rest.join(" ")),
                &out
            )
        );
        text(&out.stdout)
    }

    /// Calls a unary method with a JSON request (sent on stdin).
    pub fn grpc_call(&self, method: &str, request: &Value) -> Result<Value, GrpcError> {
        let body = serde_json::to_vec(request).expect("encode request");
        let out = run_command(
            self.grpcurl_command(&["-d", "@"]).arg(method),
            Some(&body),
            COMMAND_TIMEOUT,
        );
        let stdout = text(&out.stdout);
        let stderr = text(&out.stderr);
        if out.status.success() {
            return serde_json::from_str(&stdout).map_err(|e| GrpcError {
                code: "(unparsable output)".into(),
                message: e.to_string(),
                output: stdout,
            });
        }
        let field = |name: &str| {
            stderr
                .lines()
                .find_map(|l| l.trim().strip_prefix(name).map(|v| v.trim().to_string()))
                .unwrap_or_default()
        };
        Err(GrpcError {
            code: field("Code:"),
            message: field("Message:"),
            output: format!("{stdout}{stderr}"),
        })
    }

    #[track_caller]
    pub fn grpc_ok(&self, method: &str, request: &Value) -> Value {
        match self.grpc_call(method, request) {
            Ok(v) => v,
            Err(e) => panic!("{method} {request} failed: {e:?}\n{}", self.log_tail()),
        }
    }

    #[track_caller]
    pub fn grpc_err(&self, method: &str, request: &Value) -> GrpcError {
        match self.grpc_call(method, request) {
            Ok(v) => panic!("{method} {request} succeeded, expected an error: {v:#}"),
            Err(e) => e,
        }
    }

    /// A server-streaming call (Watch), bounded by `-max-time`; killed on drop.
    pub fn grpc_stream(&self, method: &str, request: &Value, max_time_secs: u32) -> Streaming {
        let max_time = max_time_secs.to_string();
        let data = request.to_string();
        let mut cmd = self.grpcurl_command(&["-max-time", &max_time, "-d", &data]);
        cmd.arg(method);
        Streaming::spawn(cmd)
    }

    // ------------------------------------------------------------------- curl

    pub fn curl_command(&self, with_cert: bool) -> Command {
        let mut cmd = Command::new(curl_bin());
        cmd.args(["-sS", "--max-time", "20", "-H", "Expect:", "--cacert"])
            .arg(self.ca_cert());
        if with_cert {
            cmd.arg("--cert")
                .arg(self.admin_cert())
                .arg("--key")
                .arg(self.admin_key());
        }
        cmd
    }

    fn curl_impl(
        &self,
        with_cert: bool,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
    ) -> HttpResponse {
        let body_out = self.scratch("resp-body");
        let headers_out = self.scratch("resp-headers");
        let mut cmd = self.curl_command(with_cert);
        cmd.args(["-X", method, "-o"])
            .arg(&body_out)
            .arg("-D")
            .arg(&headers_out)
            .args(["-w", "%{http_code}"]);
        for (k, v) in headers {
            cmd.arg("-H").arg(format!("{k}: {v}"));
        }
        if let Some(body) = body {
            let body_in = self.scratch("req-body");
            fs::write(&body_in, body).expect("write request body");
            cmd.arg("--data-binary")
                .arg(format!("@{}", body_in.display()));
        }
        cmd.arg(format!("{}{path}", self.base_url()));
        let out = run_command(&mut cmd, None, COMMAND_TIMEOUT);
        assert!(
            out.status.success(),
            "{}",
            describe_output(&format!("curl {method} {path}"), &out)
        );
        let status = text(&out.stdout).trim().parse().unwrap_or_else(|_| {
            panic!("curl printed no status: {}", describe_output("curl", &out))
        });
        let raw = fs::read(&body_out).unwrap_or_default();
        HttpResponse {
            status,
            headers: fs::read_to_string(&headers_out).unwrap_or_default(),
            body: String::from_utf8_lossy(&raw).into_owned(),
            raw,
        }
    }

    /// A raw HTTPS request authenticated with the admin client certificate.
    pub fn curl(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
    ) -> HttpResponse {
        self.curl_impl(true, method, path, headers, body)
    }

    /// A raw HTTPS request without a client certificate.
    pub fn curl_anonymous(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
    ) -> HttpResponse {
        self.curl_impl(false, method, path, headers, body)
    }

    pub fn get(&self, path: &str) -> HttpResponse {
        self.curl("GET", path, &[], None)
    }

    /// GET that must answer 200 with JSON.
    #[track_caller]
    pub fn get_json(&self, path: &str) -> Value {
        let resp = self.get(path);
        assert_eq!(resp.status, 200, "GET {path}: {resp:#?}");
        resp.json()
    }

    /// A request whose body is `body` of `content_type`.
    pub fn send(&self, method: &str, path: &str, content_type: &str, body: &str) -> HttpResponse {
        self.curl(
            method,
            path,
            &[("Content-Type", content_type)],
            Some(body.as_bytes()),
        )
    }

    /// POST of a JSON document.
    pub fn post_json(&self, path: &str, body: &Value) -> HttpResponse {
        self.curl(
            "POST",
            path,
            &[("Content-Type", "application/json")],
            Some(body.to_string().as_bytes()),
        )
    }

    /// A REST watch (`?watch=1...`) streamed by curl; killed on drop.
    pub fn curl_stream(&self, path: &str, max_time_secs: u32) -> Streaming {
        let mut cmd = Command::new(curl_bin());
        cmd.args([
            "-sS",
            "-N",
            "--max-time",
            &max_time_secs.to_string(),
            "--cacert",
        ])
        .arg(self.ca_cert())
        .arg("--cert")
        .arg(self.admin_cert())
        .arg("--key")
        .arg(self.admin_key())
        .arg(format!("{}{path}", self.base_url()));
        Streaming::spawn(cmd)
    }

    /// Creates a namespace through REST (JSON) and asserts 201.
    #[track_caller]
    pub fn create_namespace(&self, name: &str) -> Value {
        let resp = self.post_json(
            "/api/v1/namespaces",
            &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}),
        );
        assert_eq!(resp.status, 201, "create namespace {name}: {resp:#?}");
        resp.json()
    }

    /// The last lines of the server log, for assertion messages.
    pub fn log_tail(&self) -> String {
        let log = self.server_log();
        let lines: Vec<&str> = log.lines().collect();
        let start = lines.len().saturating_sub(40);
        format!("--- server log (tail) ---\n{}", lines[start..].join("\n"))
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        let stopped = self.stop();
        if thread::panicking() {
            eprintln!(
                "\n===== capstan server log ({}) =====\n{}\n===== end of server log (stopped: {stopped:?}) =====",
                self.log_path().display(),
                self.server_log()
            );
            if std::env::var_os("CAPSTAN_TEST_KEEP").is_some() {
                if let Some(dir) = self.dir.take() {
                    eprintln!("keeping data dir {}", dir.keep().display());
                }
            }
        }
    }
}

/// The names of a list's items, in order.
#[track_caller]
pub fn item_names(list: &Value) -> Vec<&str> {
    list["items"]
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {list}"))
        .iter()
        .map(|item| item["metadata"]["name"].as_str().expect("a named item"))
        .collect()
}

/// Parses a resourceVersion; capstan's are the store's integer revision.
#[track_caller]
pub fn rv(value: &Value) -> u64 {
    let s = value
        .as_str()
        .unwrap_or_else(|| panic!("resourceVersion is not a string: {value}"));
    s.parse()
        .unwrap_or_else(|_| panic!("resourceVersion {s:?} is not an integer"))
}

/// Splits `kubectl` table output into rows of whitespace-separated cells.
pub fn table_rows(out: &str) -> Vec<Vec<String>> {
    out.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect()
}

/// Writes `contents` to a file (for tests that need a manifest on disk).
pub fn write_file(path: &Path, contents: &str) {
    let mut f = File::create(path).unwrap_or_else(|e| panic!("create {}: {e}", path.display()));
    f.write_all(contents.as_bytes()).expect("write file");
}

/// A real etcd (Debian's etcd-server) and two capstan replicas on it; the
/// etcd lives as long as the first value is kept.
pub async fn two_replicas_on_etcd() -> (
    capstan_core::storage::etcd::testing::EtcdServer,
    TestServer,
    TestServer,
) {
    let etcd = capstan_core::storage::etcd::testing::EtcdServer::start()
        .await
        .expect("a real etcd (Debian's etcd-server)");
    let args = ["--etcd-servers", etcd.endpoint.as_str()];
    let (a, b) = (TestServer::start_with(&args), TestServer::start_with(&args));
    (etcd, a, b)
}

/// A CA and a serving certificate for 127.0.0.1 signed by it, as PEM (CA,
/// certificate, key): what a webhook server in a test presents.
pub fn loopback_certificates() -> (String, String, String) {
    certificates_for(&[])
}

/// [`loopback_certificates`] whose serving certificate also carries the
/// DNS names `names` (an extension API server's `<service>.<namespace>.svc`).
pub fn certificates_for(names: &[&str]) -> (String, String, String) {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair, SanType};
    let ca_key = KeyPair::generate().expect("a CA key");
    let mut ca = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_cert = ca.self_signed(&ca_key).expect("the CA");
    let issuer = Issuer::new(ca, ca_key);
    let key = KeyPair::generate().expect("a key");
    let mut leaf = CertificateParams::new(Vec::<String>::new()).expect("params");
    leaf.subject_alt_names = vec![SanType::IpAddress("127.0.0.1".parse().expect("an IP"))];
    for name in names {
        leaf.subject_alt_names
            .push(SanType::DnsName((*name).try_into().expect("a DNS name")));
    }
    let cert = leaf
        .signed_by(&key, &issuer)
        .expect("the serving certificate");
    (ca_cert.pem(), cert.pem(), key.serialize_pem())
}

/// A webhook server in a test: a Python standard-library HTTPS server on
/// 127.0.0.1 running a test's `Handler` class, with the CA that signed its
/// certificate.
pub struct PythonWebhook {
    pub process: Streaming,
    pub port: u16,
    /// PEM of the CA: what a `caBundle` holds (base64-encoded).
    pub ca: String,
}

/// What follows a test's `Handler` in its webhook script: serve it over
/// HTTPS on a free loopback port, with the certificate and key named on the
/// command line, and print the port.
const PYTHON_HTTPS_SERVER: &str = r#"
import ssl, sys
from http.server import ThreadingHTTPServer

server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(sys.argv[1], sys.argv[2])
server.socket = context.wrap_socket(server.socket, server_side=True)
print("port", server.server_address[1], flush=True)
server.serve_forever()
"#;

/// Starts `handler` (Python defining a `Handler` request handler class)
/// as a [`PythonWebhook`] with certificates from [`loopback_certificates`],
/// files in `server`'s scratch directory.
pub fn start_python_webhook(server: &TestServer, handler: &str) -> PythonWebhook {
    let (ca, cert, key) = loopback_certificates();
    let (cert_path, key_path, script_path) = (
        server.scratch("webhook.crt"),
        server.scratch("webhook.key"),
        server.scratch("webhook.py"),
    );
    fs::write(&cert_path, cert).expect("the certificate");
    fs::write(&key_path, key).expect("the key");
    fs::write(&script_path, format!("{handler}\n{PYTHON_HTTPS_SERVER}")).expect("the script");
    let mut python = Command::new("python3");
    python.arg(&script_path).arg(&cert_path).arg(&key_path);
    let mut process = Streaming::spawn(python);
    let port: u16 = process.wait_for("the webhook's port", |out| {
        out.lines()
            .find_map(|l| l.strip_prefix("port "))
            .and_then(|p| p.trim().parse().ok())
    });
    PythonWebhook { process, port, ca }
}
