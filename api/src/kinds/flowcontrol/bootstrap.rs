//! The API Priority and Fairness configuration every kube-apiserver keeps
//! in place (upstream's `apis/flowcontrol/bootstrap`): the mandatory
//! objects validation pins down and the suggested ones a cluster starts
//! with, in their defaulted v1 form.

use serde_json::{json, Value};

/// The annotation that says the server keeps an object's spec up to date.
pub const AUTO_UPDATE_ANNOTATION: &str = "apf.kubernetes.io/autoupdate-spec";

fn object(kind: &str, name: &str, spec: Value) -> Value {
    json!({
        "kind": kind,
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
        "metadata": {"name": name, "annotations": {AUTO_UPDATE_ANNOTATION: "true"}},
        "spec": spec,
    })
}

fn limited(name: &str, shares: i64, lendable: i64, queues: i64, hand_size: i64) -> Value {
    object(
        "PriorityLevelConfiguration",
        name,
        json!({
            "type": "Limited",
            "limited": {
                "nominalConcurrencyShares": shares,
                "limitResponse": {
                    "type": "Queue",
                    "queuing": {"queues": queues, "handSize": hand_size, "queueLengthLimit": 50},
                },
                "lendablePercent": lendable,
            },
        }),
    )
}

/// Every resource and every non-resource URL.
fn everything() -> (Value, Value) {
    (
        json!([{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "clusterScope": true, "namespaces": ["*"]}]),
        json!([{"verbs": ["*"], "nonResourceURLs": ["*"]}]),
    )
}

fn group(name: &str) -> Value {
    json!({"kind": "Group", "group": {"name": name}})
}

fn user(name: &str) -> Value {
    json!({"kind": "User", "user": {"name": name}})
}

fn service_account(namespace: &str, name: &str) -> Value {
    json!({"kind": "ServiceAccount", "serviceAccount": {"namespace": namespace, "name": name}})
}

fn schema(
    name: &str,
    level: &str,
    precedence: i64,
    distinguisher: Option<&str>,
    rule: Value,
) -> Value {
    let mut spec = json!({
        "priorityLevelConfiguration": {"name": level},
        "matchingPrecedence": precedence,
    });
    if let Some(method) = distinguisher {
        spec["distinguisherMethod"] = json!({"type": method});
    }
    spec["rules"] = json!([rule]);
    object("FlowSchema", name, spec)
}

/// A rule for every request of `subjects`.
fn all_of(subjects: Vec<Value>) -> Value {
    let (resource_rules, non_resource_rules) = everything();
    json!({"subjects": subjects, "resourceRules": resource_rules, "nonResourceRules": non_resource_rules})
}

fn everyone() -> Vec<Value> {
    vec![
        group("system:unauthenticated"),
        group("system:authenticated"),
    ]
}

fn namespaced_writes(groups: &[&str], resources: &[&str]) -> Value {
    json!({"verbs": ["get", "create", "update"], "apiGroups": groups, "resources": resources, "namespaces": ["*"]})
}

/// The priority levels validation requires exactly (`exempt` may change
/// its `spec.exempt`).
pub fn mandatory_priority_levels() -> Vec<Value> {
    vec![
        object(
            "PriorityLevelConfiguration",
            "catch-all",
            json!({
                "type": "Limited",
                "limited": {
                    "nominalConcurrencyShares": 5,
                    "limitResponse": {"type": "Reject"},
                    "lendablePercent": 0,
                },
            }),
        ),
        object(
            "PriorityLevelConfiguration",
            "exempt",
            json!({"type": "Exempt", "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}}),
        ),
    ]
}

/// The flow schemas validation requires exactly.
pub fn mandatory_flow_schemas() -> Vec<Value> {
    vec![
        schema(
            "exempt",
            "exempt",
            1,
            None,
            all_of(vec![group("system:masters")]),
        ),
        schema(
            "catch-all",
            "catch-all",
            10000,
            Some("ByUser"),
            all_of(everyone()),
        ),
    ]
}

pub fn suggested_priority_levels() -> Vec<Value> {
    vec![
        limited("system", 30, 33, 64, 6),
        limited("node-high", 40, 25, 64, 6),
        limited("leader-election", 10, 0, 16, 4),
        limited("workload-high", 40, 50, 128, 6),
        limited("workload-low", 100, 90, 128, 6),
        limited("global-default", 20, 50, 128, 6),
    ]
}

pub fn suggested_flow_schemas() -> Vec<Value> {
    let controller_manager = "system:kube-controller-manager";
    let leases = namespaced_writes(&["coordination.k8s.io"], &["leases"]);
    vec![
        schema(
            "system-nodes",
            "system",
            500,
            Some("ByUser"),
            all_of(vec![group("system:nodes")]),
        ),
        schema(
            "system-node-high",
            "node-high",
            400,
            Some("ByUser"),
            json!({
                "subjects": [group("system:nodes")],
                "resourceRules": [
                    {"verbs": ["*"], "apiGroups": [""], "resources": ["nodes", "nodes/status"], "clusterScope": true, "namespaces": ["*"]},
                    {"verbs": ["*"], "apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "namespaces": ["*"]},
                ],
            }),
        ),
        schema(
            "probes",
            "exempt",
            2,
            None,
            json!({
                "subjects": everyone(),
                "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/readyz", "/livez"]}],
            }),
        ),
        schema(
            "system-leader-election",
            "leader-election",
            100,
            Some("ByUser"),
            json!({
                "subjects": [user(controller_manager), user("system:kube-scheduler"), service_account("kube-system", "*")],
                "resourceRules": [leases.clone()],
            }),
        ),
        schema(
            "workload-leader-election",
            "leader-election",
            200,
            Some("ByUser"),
            json!({
                "subjects": [service_account("kube-system", "*")],
                "resourceRules": [namespaced_writes(&[""], &["endpoints", "configmaps"]), leases],
            }),
        ),
        schema(
            "endpoint-controller",
            "workload-high",
            150,
            Some("ByUser"),
            json!({
                "subjects": [
                    user(controller_manager),
                    service_account("kube-system", "endpoint-controller"),
                    service_account("kube-system", "endpointslicemirroring-controller"),
                ],
                "resourceRules": [namespaced_writes(&[""], &["endpoints"])],
            }),
        ),
        schema(
            "kube-controller-manager",
            "workload-high",
            800,
            Some("ByNamespace"),
            all_of(vec![user(controller_manager)]),
        ),
        schema(
            "kube-scheduler",
            "workload-high",
            800,
            Some("ByNamespace"),
            all_of(vec![user("system:kube-scheduler")]),
        ),
        schema(
            "kube-system-service-accounts",
            "workload-high",
            900,
            Some("ByNamespace"),
            all_of(vec![service_account("kube-system", "*")]),
        ),
        schema(
            "service-accounts",
            "workload-low",
            9000,
            Some("ByUser"),
            all_of(vec![group("system:serviceaccounts")]),
        ),
        schema(
            "global-default",
            "global-default",
            9900,
            Some("ByUser"),
            all_of(everyone()),
        ),
    ]
}

/// The mandatory object named `name` among `objects`, if it is one.
pub(super) fn mandatory_spec(objects: Vec<Value>, name: &str) -> Option<Value> {
    objects
        .into_iter()
        .find(|object| object["metadata"]["name"] == name)
        .map(|mut object| object["spec"].take())
}
