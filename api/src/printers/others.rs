//! The cells of the networking, RBAC, policy, storage, discovery and certificates printers.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::values::*;

// ---------------------------------------------------------------------------
// networking.k8s.io, rbac, policy, storage and friends

pub(super) fn ingress_cells(ing: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let class = ptr_str(ing, "/spec/ingressClassName", "<none>");
    const MAX: usize = 3;
    let rules = items(ing, "/spec/rules");
    let mut hosts: Vec<&str> = Vec::new();
    let mut more = false;
    for rule in rules {
        if hosts.len() == MAX {
            more = true;
        }
        let host = text(rule, "/host");
        if !more && !host.is_empty() {
            hosts.push(host);
        }
    }
    let hosts = if hosts.is_empty() {
        "*".to_string()
    } else if more {
        format!("{} + {} more...", hosts.join(","), rules.len() - MAX)
    } else {
        hosts.join(",")
    };
    let ports = if items(ing, "/spec/tls").is_empty() {
        "80"
    } else {
        "80, 443"
    };
    vec![
        name(ing).into(),
        class.into(),
        hosts.into(),
        load_balancer_ingress(ing, "/status/loadBalancer/ingress")
            .join(",")
            .into(),
        ports.into(),
        age(ing, now),
    ]
}

pub(super) fn ingress_class_cells(ic: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let parameters = match get(ic, "/spec/parameters") {
        Some(p) => {
            let mut s = text(p, "/kind").to_string();
            if let Some(g) = get(p, "/apiGroup").and_then(Value::as_str) {
                s = format!("{s}.{g}");
            }
            format!("{s}/{}", text(p, "/name"))
        }
        None => "<none>".to_string(),
    };
    vec![
        name(ic).into(),
        text(ic, "/spec/controller").into(),
        parameters.into(),
        age(ic, now),
    ]
}

pub(super) fn role_binding_cells(rb: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let mut users = Vec::new();
    let mut groups = Vec::new();
    let mut sas = Vec::new();
    for s in items(rb, "/subjects") {
        let subject = text(s, "/name");
        match text(s, "/kind") {
            "ServiceAccount" => sas.push(format!("{}/{subject}", text(s, "/namespace"))),
            "User" => users.push(subject.to_string()),
            "Group" => groups.push(subject.to_string()),
            _ => {}
        }
    }
    vec![
        name(rb).into(),
        format!(
            "{}/{}",
            text(rb, "/roleRef/kind"),
            text(rb, "/roleRef/name")
        )
        .into(),
        age(rb, now),
        users.join(", ").into(),
        groups.join(", ").into(),
        sas.join(", ").into(),
    ]
}

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

/// `resource[.group][/namespace]/name` of an IPAddress's parent.
pub(super) fn ip_address_parent(ip: &Value) -> String {
    let Some(parent) = get(ip, "/spec/parentRef").filter(|p| !p.is_null()) else {
        return "<none>".to_string();
    };
    let mut rendered = text(parent, "/resource").to_string();
    let group = text(parent, "/group");
    if !group.is_empty() {
        rendered = format!("{rendered}.{group}");
    }
    rendered = rendered.to_lowercase();
    let namespace = text(parent, "/namespace");
    if !namespace.is_empty() {
        rendered = format!("{rendered}/{namespace}");
    }
    format!("{rendered}/{}", text(parent, "/name"))
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

    #[test]
    fn parent_references_print_as_upstreams() {
        use super::ip_address_parent;
        let parent =
            |reference: Value| ip_address_parent(&json!({"spec": {"parentRef": reference}}));
        assert_eq!(ip_address_parent(&json!({"spec": {}})), "<none>");
        assert_eq!(
            parent(json!({"resource": "services", "namespace": "default", "name": "web"})),
            "services/default/web"
        );
        assert_eq!(
            parent(
                json!({"group": "gateway.networking.k8s.io", "resource": "Gateways", "name": "gw"})
            ),
            "gateways.gateway.networking.k8s.io/gw"
        );
    }
}
