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
/// every few seconds returns them without touching the request path: this
/// thread's pages and, a round later, the other workers' (`idle_collect`).
#[cfg(not(feature = "system-allocator"))]
async fn return_freed_pages() {
    let mut every = tokio::time::interval(RETURN_FREED_PAGES_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        idle_collect::ROUND.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // SAFETY: mi_collect only reorganises mimalloc's own free lists and
        // pages; it reads no caller memory and may run on any thread.
        unsafe { libmimalloc_sys::mi_collect(false) };
    }
}

/// A worker's pages whose blocks other threads freed (a list's body is
/// allocated on the worker that encodes it and freed on the one that sends
/// it) go back to the allocator only when the owning thread collects them:
/// `return_freed_pages` collects on whichever thread it runs on. So each
/// worker also collects once per round of `return_freed_pages`, as it parks
/// after a sleep. Not on every park, nor on parks under load: collecting
/// on parks at most once a second cost creates about a tenth more CPU, as
/// pages given back were soon asked for again.
#[cfg(not(feature = "system-allocator"))]
mod idle_collect {
    use std::cell::Cell;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::{Duration, Instant};

    /// A worker that slept at least this long before its latest wake-up is
    /// between requests rather than serving a burst of them.
    const IDLE_SLEEP: Duration = Duration::from_millis(10);

    /// Rounds of `return_freed_pages` so far.
    pub(super) static ROUND: AtomicU64 = AtomicU64::new(0);

    thread_local! {
        static PARKED_AT: Cell<Option<Instant>> = const { Cell::new(None) };
        static SLEPT: Cell<bool> = const { Cell::new(false) };
        static COLLECTED_IN: Cell<u64> = const { Cell::new(0) };
    }

    pub(super) fn on_unpark() {
        unparked_at(Instant::now());
    }

    pub(super) fn on_park() {
        parked_at(Instant::now(), ROUND.load(Ordering::Relaxed), || {
            // SAFETY: as in return_freed_pages; this thread's own pages.
            unsafe { libmimalloc_sys::mi_collect(false) }
        });
    }

    fn unparked_at(now: Instant) {
        SLEPT.set(
            PARKED_AT
                .get()
                .is_some_and(|parked| now.saturating_duration_since(parked) >= IDLE_SLEEP),
        );
    }

    fn parked_at(now: Instant, round: u64, collect: impl FnOnce()) {
        if SLEPT.replace(false) && COLLECTED_IN.get() != round {
            COLLECTED_IN.set(round);
            collect();
        }
        PARKED_AT.set(Some(now));
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use std::time::Duration;

        /// A worker collects once per round, at the first park after a
        /// wake-up that ended a sleep of 10 ms or more; never on the parks
        /// of a busy worker (short sleeps), whatever the round.
        #[test]
        fn a_worker_collects_once_a_round_after_sleeping() {
            let start = Instant::now();
            let at = |ms: u64| start + Duration::from_millis(ms);
            let collections = Cell::new(0);
            let park = |ms: u64, round: u64| {
                parked_at(at(ms), round, || collections.set(collections.get() + 1))
            };
            park(0, 1);
            assert_eq!(collections.get(), 0, "no wake-up yet");
            for ms in 1..50 {
                unparked_at(at(ms));
                park(ms, 1 + ms);
            }
            assert_eq!(collections.get(), 0, "busy: 1 ms sleeps");
            unparked_at(at(100));
            park(101, 60);
            assert_eq!(collections.get(), 1, "after a 51 ms sleep");
            unparked_at(at(200));
            park(201, 60);
            assert_eq!(collections.get(), 1, "same round");
            unparked_at(at(300));
            park(301, 61);
            assert_eq!(collections.get(), 2, "next round");
        }
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
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_all();
    #[cfg(not(feature = "system-allocator"))]
    builder
        .on_thread_park(idle_collect::on_park)
        .on_thread_unpark(idle_collect::on_unpark);
    let runtime = match builder.build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("capstan: cannot start the runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    #[cfg(not(feature = "system-allocator"))]
    runtime.spawn(return_freed_pages());
    // On a worker, not polled by `block_on` on this thread: start-up's
    // allocations then sit on pages a worker collects once idle, where this
    // thread, parked in `block_on` from then on, would never collect them.
    let failure = match runtime.block_on(runtime.spawn(server::serve(args))) {
        Ok(Ok(())) => return std::process::ExitCode::SUCCESS,
        Ok(Err(e)) => e.to_string(),
        // The server's task panicked (its message is already printed).
        Err(e) => e.to_string(),
    };
    eprintln!("capstan: {failure}");
    std::process::ExitCode::FAILURE
}
