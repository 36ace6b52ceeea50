//! Pod's printer (upstream's printPod): the READY, STATUS and RESTARTS
//! kubectl shows, derived from the container statuses as upstream does.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::printers::values::{
    age, boolean, condition_true, deleting, get, int, items, name, or_none, str_or, text, timestamp,
};
use crate::printers::{age_col, col, name_col, wide, Cell, Since, TableColumn};

const D_POD_IP: &str = "podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.";
const D_POD_NOMINATED: &str = "nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods. This field does not guarantee that the pod will be scheduled on this node. Scheduler may decide to place the pod elsewhere if other nodes become available sooner. Scheduler may also decide to give the resources on this node to a higher priority pod that is created after preemption. As a result, this field may be different than PodSpec.nodeName when the pod is scheduled.";
const D_POD_NODE: &str = "NodeName indicates in which node this pod is scheduled. If empty, this pod is a candidate for scheduling by the scheduler defined in schedulerName. Once this field is set, the kubelet for this node becomes responsible for the lifecycle of this pod. This field should not be used to express a desire for the pod to be scheduled on a specific node. https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#nodename";
const D_POD_READINESS_GATES: &str = "If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to \"True\" More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates";

pub(super) fn columns() -> Vec<TableColumn> {
    vec![
        name_col(),
        col(
            "Ready",
            "string",
            "The aggregate readiness state of this pod for accepting traffic.",
        ),
        col(
            "Status",
            "string",
            "The aggregate status of the containers in this pod.",
        ),
        col(
            "Restarts",
            "string",
            "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.",
        ),
        age_col(),
        wide("IP", "string", D_POD_IP),
        wide("Node", "string", D_POD_NODE),
        wide("Nominated Node", "string", D_POD_NOMINATED),
        wide("Readiness Gates", "string", D_POD_READINESS_GATES),
    ]
}

/// When a container last terminated, for the "(5m ago)" restart suffix.
fn last_finished(status: &Value) -> Option<DateTime<Utc>> {
    timestamp(status, "/lastState/terminated/finishedAt")
}

fn later(a: Option<DateTime<Utc>>, b: Option<DateTime<Utc>>) -> Option<DateTime<Utc>> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

/// Upstream's exit-code/signal fallback when a terminated state has no reason.
fn terminated_reason(term: &Value, prefix: &str) -> String {
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

pub(super) fn cells(pod: &Value) -> Vec<Cell> {
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
        Some(t) if restarts != 0 => Cell::Since(Since {
            before: format!("{restarts} (").into(),
            at: Some(t),
            after: " ago)",
        }),
        _ => restarts.to_string().into(),
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
        restarts_cell,
        age(pod),
        or_none(pod_ip.to_string()).into(),
        or_none(text(pod, "/spec/nodeName").to_string()).into(),
        or_none(text(pod, "/status/nominatedNodeName").to_string()).into(),
        readiness_gates.into(),
    ]
}
