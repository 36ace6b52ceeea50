//! `capstan`: a Kubernetes API server, gRPC-first.

use capstan::{server, ServeArgs};
use clap::{Parser, Subcommand};

// The request path allocates many small short-lived values (JSON trees,
// field sets, HTTP/2 frames); glibc malloc spent about 15 % of the server's
// CPU on them under load (perf, etcd creates at 8 clients), mimalloc far less.
// Without transparent huge pages (feature no_thp): with them the kernel
// zeroed 2 MiB pages as mimalloc reused memory, 7 % of the server's CPU.
// The `system-allocator` feature builds without it, for heap profilers
// (heaptrack, valgrind) that see only the system allocator's calls.
#[cfg(not(feature = "system-allocator"))]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// How often the allocator is asked to give back pages freed more than its
/// purge delay (1 s) ago.
#[cfg(not(feature = "system-allocator"))]
const RETURN_FREED_PAGES_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// mimalloc gives freed pages back to the system only when some thread next
/// asks it for new pages, so an idle server kept what its start-up (and any
/// burst since) had freed: about 6 MiB more than with immediate purging
/// (docs/benchmarks.md), which costs creates about 10 % more CPU. Asking
/// every few seconds returns them without touching the request path.
#[cfg(not(feature = "system-allocator"))]
async fn return_freed_pages() {
    let mut every = tokio::time::interval(RETURN_FREED_PAGES_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        // SAFETY: mi_collect only reorganises mimalloc's own free lists and
        // pages; it reads no caller memory and may run on any thread.
        unsafe { libmimalloc_sys::mi_collect(false) };
    }
}

#[derive(Parser)]
#[command(
    name = "capstan",
    version,
    about = "A Kubernetes API server, gRPC-first"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the Kubernetes API (REST and gRPC on one TLS port).
    Serve(ServeArgs),
}

fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    // `capstan` alone serves with the defaults.
    let command =
        cli.command
            .unwrap_or_else(|| match Cli::parse_from(["capstan", "serve"]).command {
                Some(command) => command,
                None => unreachable!("serve was given"),
            });
    let Command::Serve(args) = command;
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("capstan: cannot start the runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    #[cfg(not(feature = "system-allocator"))]
    runtime.spawn(return_freed_pages());
    match runtime.block_on(server::serve(args)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("capstan: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
