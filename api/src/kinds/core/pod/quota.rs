//! What a pod counts against a ResourceQuota (upstream's pod evaluator):
//! `pods` and its compute resources while it is not terminal, its scopes,
//! and the resources a quota makes every container set.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::quota::{pod_requests_and_limits, Usage};
use crate::validate::quantity::Quantity;

/// Resources charged both bare and as `requests.<name>`.
const STANDARD: [&str; 3] = ["cpu", "memory", "ephemeral-storage"];
/// What a quota may demand containers set: hard names → (requests or
/// limits, resource).
const DEMANDED: [(&str, &str, &str); 6] = [
    ("cpu", "requests", "cpu"),
    ("memory", "requests", "memory"),
    ("requests.cpu", "requests", "cpu"),
    ("requests.memory", "requests", "memory"),
    ("limits.cpu", "limits", "cpu"),
    ("limits.memory", "limits", "memory"),
];

fn is_terminal(pod: &Value) -> bool {
    matches!(
        pod.pointer("/status/phase").and_then(Value::as_str),
        Some("Succeeded" | "Failed")
    )
}

pub(super) fn usage(pod: &Value) -> Vec<(String, Quantity)> {
    if is_terminal(pod) {
        return Vec::new();
    }
    let (requests, limits) = pod_requests_and_limits(pod);
    let mut usage = Usage::new();
    usage.insert("pods".into(), Quantity::count(1));
    for (name, amount) in &requests {
        if STANDARD.contains(&name.as_str()) || name.starts_with("hugepages-") {
            usage.insert(name.clone(), *amount);
        }
        usage.insert(format!("requests.{name}"), *amount);
    }
    for (name, amount) in &limits {
        if STANDARD.contains(&name.as_str()) {
            usage.insert(format!("limits.{name}"), *amount);
        }
    }
    usage.into_iter().collect()
}

/// One scope requirement (`{scopeName, operator, values}`) against a pod.
pub(super) fn scope_matches(requirement: &Value, pod: &Value) -> bool {
    let text = |key: &str| requirement.get(key).and_then(Value::as_str).unwrap_or("");
    let spec = pod.get("spec").unwrap_or(&Value::Null);
    let terminating = spec
        .get("activeDeadlineSeconds")
        .and_then(Value::as_i64)
        .is_some_and(|s| s >= 0);
    let best_effort = super::qos::qos_class(spec) == "BestEffort";
    let holds = match text("scopeName") {
        "Terminating" => terminating,
        "NotTerminating" => !terminating,
        "BestEffort" => best_effort,
        "NotBestEffort" => !best_effort,
        "PriorityClass" => {
            let class = spec
                .get("priorityClassName")
                .and_then(Value::as_str)
                .unwrap_or("");
            let values = crate::object::strings_at(requirement, "values");
            return match text("operator") {
                "In" => values.iter().any(|v| v == class),
                "NotIn" => !values.iter().any(|v| v == class),
                "DoesNotExist" => class.is_empty(),
                _ => !class.is_empty(),
            };
        }
        _ => false,
    };
    match text("operator") {
        "DoesNotExist" | "NotIn" => !holds,
        _ => holds,
    }
}

/// `must specify <resource> for: <containers>; …` for what the limited
/// resources demand and some container does not set.
pub(super) fn constraints(limited: &[String], pod: &Value) -> Option<String> {
    let spec = pod.get("spec").unwrap_or(&Value::Null);
    let mut missing: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (hard, key, resource) in DEMANDED {
        if !limited.iter().any(|l| l == hard) {
            continue;
        }
        for list in ["initContainers", "containers"] {
            for container in spec
                .get(list)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let set = container
                    .pointer(&format!("/resources/{key}/{resource}"))
                    .is_some_and(|q| !q.is_null());
                if !set {
                    let name = container
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string();
                    missing.entry(hard).or_default().push(name);
                }
            }
        }
    }
    if missing.is_empty() {
        return None;
    }
    let parts: Vec<String> = missing
        .into_iter()
        .map(|(resource, mut names)| {
            names.sort();
            names.dedup();
            format!("{resource} for: {}", names.join(","))
        })
        .collect();
    Some(format!("must specify {}", parts.join("; ")))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn containers_must_set_what_a_quota_limits() {
        let pod = json!({"spec": {"containers": [
            {"name": "d", "resources": {"limits": {"cpu": "1"}}},
            {"name": "c"}
        ]}});
        let limited = [
            "limits.cpu".to_string(),
            "requests.memory".to_string(),
            "pods".to_string(),
        ];
        assert_eq!(
            constraints(&limited, &pod).as_deref(),
            Some("must specify limits.cpu for: c; requests.memory for: c,d")
        );
    }

    #[test]
    fn a_running_pod_counts_its_compute_resources() {
        let pod = json!({"spec": {"containers": [
            {"name": "c", "resources": {"requests": {"cpu": "250m", "nvidia.com/gpu": "1"}, "limits": {"memory": "1Gi"}}}
        ]}});
        let usage: Vec<String> = usage(&pod)
            .into_iter()
            .map(|(k, v)| format!("{k}={}", v.canonical()))
            .collect();
        assert_eq!(
            usage,
            [
                "cpu=250m",
                "limits.memory=1Gi",
                "pods=1",
                "requests.cpu=250m",
                "requests.nvidia.com/gpu=1"
            ]
        );
        let done = json!({"status": {"phase": "Succeeded"}});
        assert!(self::usage(&done).is_empty());
    }
}
