//! The cells of the networking, RBAC, policy, storage, discovery and certificates printers.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::values::*;

// ---------------------------------------------------------------------------
// networking.k8s.io, rbac, policy, storage and friends

// ---------------------------------------------------------------------------
// admissionregistration

/// A binding's ParamRef column: `namespace/name`, `*/name` when the
/// namespace is not set (upstream cannot tell the param's scope here), or
/// the selector as its generated Go `String()` prints it.
pub(super) fn param_ref_cell(binding: &Value) -> String {
    let Some(reference) = get(binding, "/spec/paramRef").filter(|r| !r.is_null()) else {
        return "<unset>".to_string();
    };
    let name = text(reference, "/name");
    if !name.is_empty() {
        return match text(reference, "/namespace") {
            "" => format!("*/{name}"),
            namespace => format!("{namespace}/{name}"),
        };
    }
    match get(reference, "/selector").filter(|s| !s.is_null()) {
        Some(selector) => go_label_selector_string(selector),
        None => "<unset>".to_string(),
    }
}

/// The gogo-protobuf `String()` of a metav1.LabelSelector.
fn go_label_selector_string(selector: &Value) -> String {
    let labels: String = string_map(selector, "/matchLabels")
        .iter()
        .map(|(k, v)| format!("{k}: {v},"))
        .collect();
    let expressions: String = items(selector, "/matchExpressions")
        .iter()
        .map(|e| {
            let values: Vec<&str> = items(e, "/values")
                .iter()
                .filter_map(Value::as_str)
                .collect();
            format!(
                "LabelSelectorRequirement{{Key:{},Operator:{},Values:[{}],}},",
                text(e, "/key"),
                text(e, "/operator"),
                values.join(" ")
            )
        })
        .collect();
    format!(
        "&LabelSelector{{MatchLabels:map[string]string{{{labels}}},MatchExpressions:[]LabelSelectorRequirement{{{expressions}}},}}"
    )
}

pub(super) fn flow_schema_cells(fs: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let distinguisher = match get(fs, "/spec/distinguisherMethod") {
        Some(method) if !method.is_null() => text(method, "/type").to_string(),
        _ => "<none>".to_string(),
    };
    let missing = condition(items(fs, "/status/conditions"), "Dangling")
        .map(|dangling| text(dangling, "/status").to_string())
        .unwrap_or_else(|| "?".to_string());
    vec![
        name(fs).into(),
        text(fs, "/spec/priorityLevelConfiguration/name").into(),
        int(fs, "/spec/matchingPrecedence").into(),
        distinguisher.into(),
        age(fs, now),
        missing.into(),
    ]
}

pub(super) fn priority_level_cells(pl: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let limited = get(pl, "/spec/limited").filter(|l| !l.is_null());
    let shares: Value = match limited {
        Some(limited) => int(limited, "/nominalConcurrencyShares").into(),
        None => "<none>".into(),
    };
    let queuing = limited
        .and_then(|l| get(l, "/limitResponse/queuing"))
        .filter(|q| !q.is_null());
    let setting = |key: &str| -> Value {
        match queuing {
            Some(queuing) => int(queuing, key).into(),
            None => "<none>".into(),
        }
    };
    vec![
        name(pl).into(),
        text(pl, "/spec/type").into(),
        shares,
        setting("/queues"),
        setting("/handSize"),
        setting("/queueLengthLimit"),
        age(pl, now),
    ]
}

#[cfg(test)]
mod admission_tests {
    use serde_json::{json, Value};

    use super::param_ref_cell;

    #[test]
    fn param_ref_cells_read_as_upstream() {
        let cell = |reference: Value| param_ref_cell(&json!({"spec": {"paramRef": reference}}));
        assert_eq!(param_ref_cell(&json!({"spec": {}})), "<unset>");
        assert_eq!(cell(json!({"name": "limits"})), "*/limits");
        assert_eq!(
            cell(json!({"name": "limits", "namespace": "ops"})),
            "ops/limits"
        );
        assert_eq!(
            cell(json!({"selector": {"matchLabels": {"tier": "gold", "app": "x"},
                                     "matchExpressions": [{"key": "env", "operator": "In", "values": ["a", "b"]}]}})),
            "&LabelSelector{MatchLabels:map[string]string{app: x,tier: gold,},MatchExpressions:[]LabelSelectorRequirement{LabelSelectorRequirement{Key:env,Operator:In,Values:[a b],},},}"
        );
    }
}
