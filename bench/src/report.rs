//! The result tables: throughput, CPU per request and shares, by backend and path.

use std::time::Duration;

use crate::{ms, Args, Backend, BackendRun, PathKind};

pub(super) fn per_op(cpu: Duration, ops: u64) -> String {
    if ops == 0 || cpu.is_zero() {
        return "–".into();
    }
    format!("{:.0} µs", cpu.as_secs_f64() * 1e6 / ops as f64)
}

pub(super) fn throughput_of(
    run: &BackendRun,
    kind: PathKind,
    clients: usize,
    round: usize,
) -> Option<f64> {
    run.creates
        .iter()
        .find(|r| r.kind == kind && r.clients == clients && r.round == round)
        .map(|r| r.result.throughput())
}

/// One round's throughput of `kind` as a share of that round's ceiling.
pub(super) fn round_share(
    run: &BackendRun,
    kind: PathKind,
    clients: usize,
    round: usize,
) -> Option<f64> {
    round_share_of(run, kind, PathKind::Baseline, clients, round)
}

pub(super) fn round_share_of(
    run: &BackendRun,
    kind: PathKind,
    ceiling: PathKind,
    clients: usize,
    round: usize,
) -> Option<f64> {
    match (
        throughput_of(run, kind, clients, round),
        throughput_of(run, ceiling, clients, round),
    ) {
        (Some(x), Some(ceiling)) if ceiling > 0.0 => Some(100.0 * x / ceiling),
        _ => None,
    }
}

pub(super) fn share_cell(share: Option<f64>) -> String {
    share.map_or_else(|| "–".into(), |s| format!("{s:.0} %"))
}

/// The median of the rounds' shares of `ceiling`, with their range when
/// there are several.
pub(super) fn share(run: &BackendRun, kind: PathKind, ceiling: PathKind, clients: usize) -> String {
    let mut shares: Vec<f64> = (0..run.rounds)
        .filter_map(|round| round_share_of(run, kind, ceiling, clients, round))
        .collect();
    shares.sort_by(f64::total_cmp);
    match shares.as_slice() {
        [] => "–".into(),
        [one] => share_cell(Some(*one)),
        all => {
            // An even count has two middles: their mean, not the upper one.
            let middle = all.len() / 2;
            let median = if all.len() % 2 == 0 {
                (all[middle - 1] + all[middle]) / 2.0
            } else {
                all[middle]
            };
            format!("{median:.0} % ({:.0}–{:.0})", all[0], all[all.len() - 1])
        }
    }
}

pub(super) fn print_writes(args: &Args, run: &BackendRun) {
    println!(
        "\n### Writes and deletes, {} backend{} (writes: one field of a ConfigMap of each client's own; deletes: what the REST create phase made; {} s measured after {} s warm-up; closed loop)\n",
        run.backend.label(),
        members_note(args, run),
        args.duration,
        args.warmup
    );
    let etcd = run.backend == Backend::Etcd;
    println!(
        "| path | clients | requests/s | p50 ms | p99 ms | errors | server CPU / request |{} client CPU / request |",
        if etcd { " etcd CPU / request |" } else { "" }
    );
    println!(
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |{} ---: |",
        if etcd { " ---: |" } else { "" }
    );
    for row in &run.writes {
        let etcd_cell = match row.etcd_cpu {
            Some(cpu) if etcd => format!(" {} |", per_op(cpu, row.result.ops)),
            _ if etcd => " – |".into(),
            _ => String::new(),
        };
        println!(
            "| {} (round {}) | {} | {:.0} | {} | {} | {} | {} |{etcd_cell} {} |",
            row.path,
            row.round + 1,
            row.clients,
            row.result.throughput(),
            ms(row.result.percentile(0.5)),
            ms(row.result.percentile(0.99)),
            row.result.errors,
            per_op(row.server_cpu, row.result.ops),
            per_op(row.client_cpu, row.result.ops),
        );
    }
}

/// ", N members" for an etcd cluster.
pub(super) fn members_note(args: &Args, run: &BackendRun) -> String {
    if run.backend == Backend::Etcd && args.etcd_members > 1 {
        format!(", {} members", args.etcd_members)
    } else {
        String::new()
    }
}

pub(super) fn print_creates(args: &Args, run: &BackendRun) {
    let etcd = run.backend == Backend::Etcd;
    println!(
        "\n### Creates, {} backend{} (ConfigMap, ~200 B of data, {} B stored; {} s measured after {} s warm-up; closed loop, one connection per client)\n",
        run.backend.label(),
        members_note(args, run),
        run.stored_bytes,
        args.duration,
        args.warmup
    );
    let (etcd_head, etcd_rule) = if etcd {
        (" etcd CPU / create |", " ---: |")
    } else {
        ("", "")
    };
    println!("| path | clients | creates/s | % of ceiling | p50 ms | p99 ms | errors | server CPU / create |{etcd_head} client CPU / create | machine CPU busy |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |{etcd_rule} ---: | ---: |");
    for row in &run.creates {
        let etcd_cell = match row.etcd_cpu {
            Some(cpu) if etcd => format!(" {} |", per_op(cpu, row.result.ops)),
            _ if etcd => " – |".into(),
            _ => String::new(),
        };
        let path = if run.rounds > 1 {
            format!("{} (round {})", row.path, row.round + 1)
        } else {
            row.path.clone()
        };
        println!(
            "| {} | {} | {:.0} | {} | {} | {} | {} | {} |{etcd_cell} {} | {:.0} % |",
            path,
            row.clients,
            row.result.throughput(),
            share_cell(round_share(run, row.kind, row.clients, row.round)),
            ms(row.result.percentile(0.5)),
            ms(row.result.percentile(0.99)),
            row.result.errors,
            per_op(row.server_cpu, row.result.ops),
            per_op(row.client_cpu, row.result.ops),
            100.0 * row.machine_busy,
        );
    }
}
