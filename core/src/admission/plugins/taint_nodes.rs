//! TaintNodesByCondition: a new Node is tainted not-ready (NoSchedule)
//! until its kubelet reports it ready, so nothing is scheduled onto a
//! node before it can run pods.

use serde_json::{json, Value};

use super::super::attributes::{Attributes, Operation};

const NOT_READY: &str = "node.kubernetes.io/not-ready";

pub(super) fn admit(attributes: &Attributes<'_>, node: Option<&mut Value>) {
    if !super::refusal::is_core(attributes, "nodes") || attributes.operation != Operation::Create {
        return;
    }
    let Some(spec) = node.and_then(|n| {
        n.as_object_mut()
            .map(|n| n.entry("spec").or_insert_with(|| json!({})))
            .and_then(Value::as_object_mut)
    }) else {
        return;
    };
    let taints = spec.entry("taints").or_insert_with(|| json!([]));
    if taints.is_null() {
        *taints = json!([]);
    }
    let Some(taints) = taints.as_array_mut() else {
        return;
    };
    // Upstream's MatchTaint: key and effect, whatever the value.
    let tainted = taints.iter().any(|t| {
        t.get("key").and_then(Value::as_str) == Some(NOT_READY)
            && t.get("effect").and_then(Value::as_str) == Some("NoSchedule")
    });
    if !tainted {
        taints.push(json!({"key": NOT_READY, "effect": "NoSchedule"}));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::attributes_for;

    fn tainted(node: Value, operation: Operation) -> Value {
        let mut node = node;
        attributes_for("", "nodes", operation, |attributes| {
            admit(attributes, Some(&mut node))
        });
        node["spec"]["taints"].clone()
    }

    #[test]
    fn new_nodes_are_tainted_not_ready_once() {
        assert_eq!(
            tainted(json!({"metadata": {"name": "n"}}), Operation::Create),
            json!([{"key": NOT_READY, "effect": "NoSchedule"}])
        );
        let own = json!([{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
                         {"key": NOT_READY, "value": "x", "effect": "NoSchedule"}]);
        assert_eq!(
            tainted(json!({"spec": {"taints": own.clone()}}), Operation::Create),
            own
        );
        assert_eq!(tainted(json!({"spec": {}}), Operation::Update), Value::Null);
    }
}
