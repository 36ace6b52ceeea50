//! flowcontrol.apiserver.k8s.io/v1 as kube-apiserver serves it: the
//! mandatory and suggested API Priority and Fairness configuration put in
//! place at start (and kept there), FlowSchemas marked Dangling when their
//! priority level is missing, upstream's validation and printer columns.
//! Driven with kubectl and curl against the real binary.

use std::time::Duration;

use crate::common::{self, TestServer};
use serde_json::{json, Value};

const FLOW_SCHEMAS: &str = "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas";
const LEVELS: &str = "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations";

fn wait_for_configuration(s: &TestServer) {
    common::wait_until(
        Duration::from_secs(20),
        "the bootstrap configuration",
        || {
            let schemas = s.get_json(FLOW_SCHEMAS);
            let marked = schemas["items"].as_array().map(|items| {
                items.len() == 13
                    && items.iter().all(|fs| {
                        fs.pointer("/status/conditions/0/type") == Some(&json!("Dangling"))
                    })
            });
            marked.unwrap_or(false).then_some(())
        },
    );
}

fn dangling(s: &TestServer, name: &str) -> Option<String> {
    let schema = s.get_json(&format!("{FLOW_SCHEMAS}/{name}"));
    schema["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Dangling")
        .and_then(|c| c["status"].as_str().map(str::to_string))
}

#[test]
fn the_bootstrap_configuration_prints_as_upstreams() {
    let s = TestServer::start();
    wait_for_configuration(&s);
    let schemas = s.kubectl_ok(&["get", "flowschemas"]);
    let rows: Vec<Vec<&str>> = schemas
        .lines()
        .map(|line| line.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows[0],
        [
            "NAME",
            "PRIORITYLEVEL",
            "MATCHINGPRECEDENCE",
            "DISTINGUISHERMETHOD",
            "AGE",
            "MISSINGPL"
        ]
    );
    // Rows in matching order, as upstream's printer sorts them.
    let names: Vec<&str> = rows[1..].iter().map(|r| r[0]).collect();
    assert_eq!(
        names,
        [
            "exempt",
            "probes",
            "system-leader-election",
            "endpoint-controller",
            "workload-leader-election",
            "system-node-high",
            "system-nodes",
            "kube-controller-manager",
            "kube-scheduler",
            "kube-system-service-accounts",
            "service-accounts",
            "global-default",
            "catch-all",
        ]
    );
    assert_eq!(rows[1][1..4], ["exempt", "1", "<none>"]);
    assert_eq!(rows[13][1..4], ["catch-all", "10000", "ByUser"]);
    assert!(rows[1..].iter().all(|r| r[5] == "False"), "{schemas}");

    let levels = s.kubectl_ok(&["get", "prioritylevelconfigurations"]);
    let rows: Vec<Vec<&str>> = levels
        .lines()
        .map(|line| line.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows[0],
        [
            "NAME",
            "TYPE",
            "NOMINALCONCURRENCYSHARES",
            "QUEUES",
            "HANDSIZE",
            "QUEUELENGTHLIMIT",
            "AGE"
        ]
    );
    let row = |name: &str| rows.iter().find(|r| r[0] == name).unwrap().clone();
    assert_eq!(
        row("catch-all")[1..6],
        ["Limited", "5", "<none>", "<none>", "<none>"]
    );
    assert_eq!(
        row("exempt")[1..6],
        ["Exempt", "<none>", "<none>", "<none>", "<none>"]
    );
    assert_eq!(
        row("workload-low")[1..6],
        ["Limited", "100", "128", "6", "50"]
    );
    assert_eq!(rows.len(), 9, "{levels}");

    let exempt = s.get_json(&format!("{LEVELS}/exempt"));
    assert_eq!(
        exempt["metadata"]["annotations"],
        json!({"apf.kubernetes.io/autoupdate-spec": "true"})
    );
    assert_eq!(
        exempt["spec"],
        json!({"type": "Exempt", "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}})
    );
    let probes = s.get_json(&format!("{FLOW_SCHEMAS}/probes"));
    let condition = &probes["status"]["conditions"][0];
    assert_eq!(condition["reason"], "Found");
    assert_eq!(
        condition["message"],
        r#"This FlowSchema references the PriorityLevelConfiguration object named "exempt" and it exists"#
    );
    let mut managers: Vec<&str> = probes["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["manager"].as_str())
        .collect();
    managers.sort();
    assert_eq!(
        managers,
        [
            "api-priority-and-fairness-config-consumer-v1",
            "api-priority-and-fairness-config-producer-v1"
        ]
    );
}

#[test]
fn a_schema_without_its_level_is_dangling_until_the_level_exists() {
    let s = TestServer::start();
    wait_for_configuration(&s);
    s.apply(
        "apiVersion: flowcontrol.apiserver.k8s.io/v1\nkind: FlowSchema\nmetadata:\n  name: batch-jobs\nspec:\n  priorityLevelConfiguration:\n    name: batch\n  distinguisherMethod:\n    type: ByNamespace\n  rules:\n  - subjects:\n    - kind: ServiceAccount\n      serviceAccount: {namespace: batch, name: '*'}\n    resourceRules:\n    - verbs: [list, watch]\n      apiGroups: ['']\n      resources: [pods]\n      namespaces: [batch]\n",
    );
    let created = s.get_json(&format!("{FLOW_SCHEMAS}/batch-jobs"));
    // Defaulted as upstream's v1 defaults.
    assert_eq!(created["spec"]["matchingPrecedence"], 1000);
    common::wait_until(Duration::from_secs(10), "batch-jobs dangling", || {
        (dangling(&s, "batch-jobs").as_deref() == Some("True")).then_some(())
    });
    let line = s.kubectl_ok(&["get", "flowschema", "batch-jobs", "--no-headers"]);
    assert!(line.trim_end().ends_with("True"), "{line}");
    let schema = s.get_json(&format!("{FLOW_SCHEMAS}/batch-jobs"));
    assert_eq!(
        schema["status"]["conditions"][0]["message"],
        r#"This FlowSchema references the PriorityLevelConfiguration object named "batch" but there is no such object"#
    );

    s.apply(
        "apiVersion: flowcontrol.apiserver.k8s.io/v1\nkind: PriorityLevelConfiguration\nmetadata:\n  name: batch\nspec:\n  type: Limited\n  limited:\n    limitResponse:\n      type: Queue\n      queuing: {}\n",
    );
    let level = s.get_json(&format!("{LEVELS}/batch"));
    assert_eq!(
        level["spec"]["limited"],
        json!({"nominalConcurrencyShares": 30, "limitResponse": {"type": "Queue", "queuing": {"queues": 64, "handSize": 8, "queueLengthLimit": 50}}, "lendablePercent": 0})
    );
    common::wait_until(Duration::from_secs(10), "batch-jobs found", || {
        (dangling(&s, "batch-jobs").as_deref() == Some("False")).then_some(())
    });
}

#[test]
fn invalid_configuration_gets_upstreams_answers() {
    let s = TestServer::start();
    wait_for_configuration(&s);
    let schema = json!({
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
        "kind": "FlowSchema",
        "metadata": {"name": "bad"},
        "spec": {
            "priorityLevelConfiguration": {"name": "workload-low"},
            "matchingPrecedence": 1,
            "rules": [{"subjects": [{"kind": "User"}], "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["healthz"]}]}],
        },
    });
    let status = s
        .post_json(FLOW_SCHEMAS, &schema)
        .assert_status(422, "Invalid");
    assert_eq!(
        status["message"],
        "FlowSchema.flowcontrol.apiserver.k8s.io \"bad\" is invalid: [spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1, spec.rules[0].subjects[0].user: Required value: user is required when subject kind is 'User', spec.rules[0].nonResourceRules[0].nonResourceURLs[0]: Invalid value: \"healthz\": must start with slash]"
    );

    let level = json!({
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
        "kind": "PriorityLevelConfiguration",
        "metadata": {"name": "wide"},
        "spec": {"type": "Limited", "limited": {"limitResponse": {"type": "Queue", "queuing": {"queues": 128, "handSize": 9}}}},
    });
    let status = s.post_json(LEVELS, &level).assert_status(422, "Invalid");
    assert_eq!(
        status["message"],
        "PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io \"wide\" is invalid: spec.limited.limitResponse.queuing.handSize: Invalid value: 9: required entropy bits of deckSize 128 and handSize 9 should not be greater than 60"
    );

    // The mandatory objects are fixed; the exempt level's own settings are not.
    let err = s.kubectl_err(&[
        "patch",
        "prioritylevelconfiguration",
        "catch-all",
        "--type=merge",
        "-p",
        r#"{"spec":{"limited":{"nominalConcurrencyShares":50}}}"#,
    ]);
    assert!(
        err.contains("spec of 'catch-all' must equal the fixed value"),
        "{err}"
    );
    s.kubectl_ok(&[
        "patch",
        "prioritylevelconfiguration",
        "exempt",
        "--type=merge",
        "-p",
        r#"{"spec":{"exempt":{"nominalConcurrencyShares":10}}}"#,
    ]);
}

#[test]
fn the_configuration_is_put_back_at_start() {
    let mut s = TestServer::start();
    wait_for_configuration(&s);
    s.kubectl_ok(&["delete", "prioritylevelconfiguration", "workload-low"]);
    // A suggested schema still marked for updates is put back; one whose
    // mark says false is the administrator's.
    s.kubectl_ok(&[
        "patch",
        "flowschema",
        "service-accounts",
        "--type=merge",
        "-p",
        r#"{"spec":{"matchingPrecedence":8000}}"#,
    ]);
    s.kubectl_ok(&[
        "patch",
        "flowschema",
        "global-default",
        "--type=merge",
        "-p",
        r#"{"metadata":{"annotations":{"apf.kubernetes.io/autoupdate-spec":"false"}},"spec":{"matchingPrecedence":9800}}"#,
    ]);
    // Objects of an earlier configuration marked for updates go.
    s.apply(
        "apiVersion: flowcontrol.apiserver.k8s.io/v1\nkind: FlowSchema\nmetadata:\n  name: retired\n  annotations: {apf.kubernetes.io/autoupdate-spec: 'true'}\nspec:\n  priorityLevelConfiguration: {name: workload-low}\n  rules: []\n",
    );
    s.restart();
    common::wait_until(
        Duration::from_secs(20),
        "the configuration put back",
        || {
            let level = s.get(&format!("{LEVELS}/workload-low"));
            let retired = s.get(&format!("{FLOW_SCHEMAS}/retired"));
            (level.status == 200 && retired.status == 404).then_some(())
        },
    );
    let precedence = |name: &str| -> Value {
        s.get_json(&format!("{FLOW_SCHEMAS}/{name}"))["spec"]["matchingPrecedence"].clone()
    };
    assert_eq!(precedence("service-accounts"), 9000);
    assert_eq!(precedence("global-default"), 9800);
}
