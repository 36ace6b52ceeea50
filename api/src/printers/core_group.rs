//! The cells of the core/v1 kinds' printers.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::values::*;

/// When a container last terminated, for the "(5m ago)" restart suffix.
pub(super) fn last_finished(status: &Value) -> Option<DateTime<Utc>> {
    timestamp(status, "/lastState/terminated/finishedAt")
}

pub(super) fn later(a: Option<DateTime<Utc>>, b: Option<DateTime<Utc>>) -> Option<DateTime<Utc>> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

/// Upstream's exit-code/signal fallback when a terminated state has no reason.
pub(super) fn terminated_reason(term: &Value, prefix: &str) -> String {
    let reason = text(term, "/reason");
    if !reason.is_empty() {
        return format!("{prefix}{reason}");
    }
    let signal = int(term, "/signal");
    if signal != 0 {
        format!("{prefix}Signal:{signal}")
    } else {
        format!("{prefix}ExitCode:{}", int(term, "/exitCode"))
    }
}

pub(super) fn pod_cells(pod: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let conditions = items(pod, "/status/conditions");
    // The registry sets phase Pending on create; a bare object reads the same.
    let phase = str_or(pod, "/status/phase", "Pending");
    let mut reason = str_or(pod, "/status/reason", phase).to_string();
    if conditions
        .iter()
        .any(|c| text(c, "/type") == "PodScheduled" && text(c, "/reason") == "SchedulingGated")
    {
        reason = "SchedulingGated".to_string();
    }

    let init_specs = items(pod, "/spec/initContainers");
    // Sidecars (init containers with restartPolicy Always) count as regular
    // containers once they have started.
    let sidecar_specs: Vec<&Value> = init_specs
        .iter()
        .filter(|c| text(c, "/restartPolicy") == "Always")
        .collect();
    let sidecars: BTreeSet<&str> = sidecar_specs.iter().map(|c| text(c, "/name")).collect();
    let total = items(pod, "/spec/containers").len() + sidecar_specs.len();

    let mut ready = 0usize;
    let mut restarts = 0i64;
    let mut sidecar_restarts = 0i64;
    let mut last_restart = None;
    let mut last_sidecar_restart = None;
    let mut initializing = false;
    for (i, c) in items(pod, "/status/initContainerStatuses")
        .iter()
        .enumerate()
    {
        let count = int(c, "/restartCount");
        restarts += count;
        last_restart = later(last_restart, last_finished(c));
        let sidecar = sidecars.contains(text(c, "/name"));
        if sidecar {
            sidecar_restarts += count;
            last_sidecar_restart = later(last_sidecar_restart, last_finished(c));
        }
        let terminated = get(c, "/state/terminated");
        let waiting_reason = text(c, "/state/waiting/reason");
        if terminated.is_some_and(|t| int(t, "/exitCode") == 0) {
            continue;
        }
        if sidecar && boolean(c, "/started") == Some(true) {
            if boolean(c, "/ready") == Some(true) {
                ready += 1;
            }
            continue;
        }
        reason = if let Some(t) = terminated {
            terminated_reason(t, "Init:")
        } else if !waiting_reason.is_empty() && waiting_reason != "PodInitializing" {
            format!("Init:{waiting_reason}")
        } else {
            format!("Init:{}/{}", i, init_specs.len())
        };
        initializing = true;
        break;
    }

    if !initializing || condition_true(conditions, "Initialized") {
        restarts = sidecar_restarts;
        last_restart = last_sidecar_restart;
        let mut has_running = false;
        // Walk backwards so the first container's state wins, as upstream.
        for c in items(pod, "/status/containerStatuses").iter().rev() {
            restarts += int(c, "/restartCount");
            last_restart = later(last_restart, last_finished(c));
            let waiting_reason = text(c, "/state/waiting/reason");
            let terminated = get(c, "/state/terminated");
            if !waiting_reason.is_empty() {
                reason = waiting_reason.to_string();
            } else if let Some(t) = terminated {
                reason = terminated_reason(t, "");
            } else if boolean(c, "/ready") == Some(true) && get(c, "/state/running").is_some() {
                has_running = true;
                ready += 1;
            }
        }
        if reason == "Completed" && has_running {
            reason = if condition_true(conditions, "Ready") {
                "Running".to_string()
            } else {
                "NotReady".to_string()
            };
        }
    }

    if deleting(pod) && text(pod, "/status/reason") == "NodeLost" {
        reason = "Unknown".to_string();
    } else if deleting(pod) && phase != "Failed" && phase != "Succeeded" {
        reason = "Terminating".to_string();
    }

    let restarts_cell = match last_restart {
        Some(t) if restarts != 0 => format!("{restarts} ({} ago)", since(Some(t), now)),
        _ => restarts.to_string(),
    };

    let pod_ip = match items(pod, "/status/podIPs").first() {
        Some(ip) => text(ip, "/ip"),
        None => text(pod, "/status/podIP"),
    };
    let gates = items(pod, "/spec/readinessGates");
    let readiness_gates = if gates.is_empty() {
        "<none>".to_string()
    } else {
        let true_count = gates
            .iter()
            .filter(|g| condition_true(conditions, text(g, "/conditionType")))
            .count();
        format!("{true_count}/{}", gates.len())
    };

    vec![
        name(pod).into(),
        format!("{ready}/{total}").into(),
        reason.into(),
        restarts_cell.into(),
        age(pod, now),
        or_none(pod_ip.to_string()).into(),
        or_none(text(pod, "/spec/nodeName").to_string()).into(),
        or_none(text(pod, "/status/nominatedNodeName").to_string()).into(),
        readiness_gates.into(),
    ]
}

pub(super) fn pod_template_cells(o: &Value) -> Vec<Value> {
    let (names, images) = container_cells(get(o, "/template/spec"));
    vec![
        name(o).into(),
        names.into(),
        images.into(),
        format_labels(o, "/template/metadata/labels").into(),
    ]
}

pub(super) fn replication_controller_cells(o: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let (names, images) = container_cells(get(o, "/spec/template/spec"));
    vec![
        name(o).into(),
        int_opt(o, "/spec/replicas").unwrap_or(1).into(),
        int(o, "/status/replicas").into(),
        int(o, "/status/readyReplicas").into(),
        age(o, now),
        names.into(),
        images.into(),
        format_labels(o, "/spec/selector").into(),
    ]
}

pub(super) fn service_external_ip(svc: &Value) -> String {
    let external_ips: Vec<String> = items(svc, "/spec/externalIPs")
        .iter()
        .map(scalar_text)
        .collect();
    match str_or(svc, "/spec/type", "ClusterIP") {
        "ClusterIP" | "NodePort" => or_none(external_ips.join(",")),
        "LoadBalancer" => {
            let mut all = load_balancer_ingress(svc, "/status/loadBalancer/ingress");
            if all.is_empty() && external_ips.is_empty() {
                return "<pending>".to_string();
            }
            all.extend(external_ips);
            all.join(",")
        }
        "ExternalName" => text(svc, "/spec/externalName").to_string(),
        _ => "<unknown>".to_string(),
    }
}

pub(super) fn service_cells(svc: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let cluster_ip = match items(svc, "/spec/clusterIPs").first() {
        Some(ip) => scalar_text(ip),
        None => text(svc, "/spec/clusterIP").to_string(),
    };
    let ports: Vec<String> = items(svc, "/spec/ports")
        .iter()
        .map(|p| {
            let port = int(p, "/port");
            let protocol = str_or(p, "/protocol", "TCP");
            match int(p, "/nodePort") {
                node_port if node_port > 0 => format!("{port}:{node_port}/{protocol}"),
                _ => format!("{port}/{protocol}"),
            }
        })
        .collect();
    vec![
        name(svc).into(),
        str_or(svc, "/spec/type", "ClusterIP").into(),
        or_none(cluster_ip).into(),
        service_external_ip(svc).into(),
        or_none(ports.join(",")).into(),
        age(svc, now),
        format_labels(svc, "/spec/selector").into(),
    ]
}

/// Prints core/v1 events and events.k8s.io/v1 events; the latter rename the
/// fields, and upstream prints both from the same internal type.
pub(super) fn event_cells(ev: &Value, events_api: bool, now: DateTime<Utc>) -> Vec<Value> {
    let pick = |core: &'static str, events: &'static str| if events_api { events } else { core };
    let first_ts = timestamp(ev, pick("/firstTimestamp", "/deprecatedFirstTimestamp"));
    let first_seen = since(first_ts.or_else(|| timestamp(ev, "/eventTime")), now);
    let mut last_seen = match timestamp(ev, pick("/lastTimestamp", "/deprecatedLastTimestamp")) {
        Some(t) => since(Some(t), now),
        None => first_seen.clone(),
    };
    let mut count = int(ev, pick("/count", "/deprecatedCount"));
    if let Some(series) = get(ev, "/series") {
        last_seen = since(timestamp(series, "/lastObservedTime"), now);
        count = int(series, "/count");
    } else if count == 0 {
        // Singleton events in the new API carry no count.
        count = 1;
    }

    let obj = pick("/involvedObject", "/regarding");
    let kind = text(ev, &format!("{obj}/kind")).to_lowercase();
    let obj_name = text(ev, &format!("{obj}/name"));
    let target = if obj_name.is_empty() {
        kind
    } else {
        format!("{kind}/{obj_name}")
    };

    let source = pick("/source", "/deprecatedSource");
    let component = match text(ev, &format!("{source}/component")) {
        "" => text(ev, pick("/reportingComponent", "/reportingController")),
        c => c,
    };
    let host = match text(ev, &format!("{source}/host")) {
        "" => text(ev, "/reportingInstance"),
        h => h,
    };
    let source_text = if host.is_empty() {
        component.to_string()
    } else {
        format!("{component}, {host}")
    };

    vec![
        last_seen.into(),
        text(ev, "/type").into(),
        text(ev, "/reason").into(),
        target.into(),
        text(ev, &format!("{obj}/fieldPath")).into(),
        source_text.into(),
        text(ev, pick("/message", "/note")).trim().into(),
        first_seen.into(),
        count.into(),
        name(ev).into(),
    ]
}
