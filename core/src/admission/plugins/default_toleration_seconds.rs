//! DefaultTolerationSeconds: a pod that does not tolerate the not-ready
//! and unreachable NoExecute taints gets 300-second tolerations of them,
//! so its node's outage evicts it after five minutes.

use serde_json::{json, Value};

use super::super::attributes::{Attributes, Operation};

/// Upstream's `--default-not-ready-toleration-seconds` and
/// `--default-unreachable-toleration-seconds` defaults.
const TOLERATION_SECONDS: i64 = 300;
const TAINTS: [&str; 2] = [
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
];

pub(super) fn admit(attributes: &Attributes<'_>, pod: Option<&mut Value>) {
    if !super::refusal::is_core(attributes, "pods")
        || !matches!(attributes.operation, Operation::Create | Operation::Update)
    {
        return;
    }
    let Some(spec) = pod
        .and_then(|p| p.get_mut("spec"))
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    let tolerations = spec.entry("tolerations").or_insert_with(|| json!([]));
    if tolerations.is_null() {
        *tolerations = json!([]);
    }
    let Some(tolerations) = tolerations.as_array_mut() else {
        return;
    };
    for taint in TAINTS {
        // Only key and effect count: an empty key or effect matches all.
        let covered = tolerations.iter().any(|t| {
            let key = t.get("key").and_then(Value::as_str).unwrap_or("");
            let effect = t.get("effect").and_then(Value::as_str).unwrap_or("");
            (key == taint || key.is_empty()) && (effect == "NoExecute" || effect.is_empty())
        });
        if !covered {
            tolerations.push(json!({
                "key": taint,
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": TOLERATION_SECONDS,
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn added(tolerations: Value) -> Value {
        let mut pod = json!({"spec": {"tolerations": tolerations}});
        crate::testing::attributes_for("", "pods", Operation::Create, |attributes| {
            admit(attributes, Some(&mut pod))
        });
        pod["spec"]["tolerations"].clone()
    }

    #[test]
    fn both_tolerations_are_added_unless_tolerated() {
        let both = added(Value::Null);
        assert_eq!(
            both,
            json!([
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            ])
        );
        let own = json!({"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60});
        assert_eq!(added(json!([own])).as_array().map(Vec::len), Some(2));
        assert_eq!(added(json!([own]))[0], own);
        // NoSchedule does not cover the NoExecute taint; an empty key with an
        // empty effect covers both.
        assert_eq!(
            added(json!([{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]))
                .as_array()
                .map(Vec::len),
            Some(3)
        );
        assert_eq!(
            added(json!([{"operator": "Exists"}]))
                .as_array()
                .map(Vec::len),
            Some(1)
        );
    }
}
