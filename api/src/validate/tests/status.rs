//! Status writes: ValidateXxxStatusUpdate of the kinds that have one.

use serde_json::json;

use super::*;

#[track_caller]
fn status_update(kind: &str, object: &Value, old: &Value, want: &[(&str, &str, &str)]) {
    expect(validate_status_update("apps", kind, object, old), want);
}

fn with_status(status: Value) -> Value {
    with(&deployment(), |d| d["status"] = status)
}

#[test]
fn deployment_status_rejections() {
    let old = with_status(json!({"replicas": 3, "collisionCount": 2}));
    status_update(
        "Deployment",
        &with_status(json!({
            "replicas": 3, "readyReplicas": 3, "availableReplicas": 2,
            "updatedReplicas": 3, "collisionCount": 2, "observedGeneration": 1
        })),
        &old,
        &[],
    );
    status_update(
        "Deployment",
        &with_status(json!({
            "replicas": 2, "updatedReplicas": 4, "readyReplicas": 1,
            "availableReplicas": 3, "unavailableReplicas": -1,
            "observedGeneration": -1, "collisionCount": 1
        })),
        &old,
        &[
            (
                INVALID,
                "status.observedGeneration",
                "Invalid value: -1: must be greater than or equal to 0",
            ),
            (
                INVALID,
                "status.unavailableReplicas",
                "Invalid value: -1: must be greater than or equal to 0",
            ),
            (
                INVALID,
                "status.updatedReplicas",
                "Invalid value: 4: cannot be greater than status.replicas",
            ),
            (
                INVALID,
                "status.availableReplicas",
                "Invalid value: 3: cannot be greater than status.replicas",
            ),
            (
                INVALID,
                "status.availableReplicas",
                "Invalid value: 3: cannot be greater than readyReplicas",
            ),
            (
                INVALID,
                "status.collisionCount",
                "Invalid value: 1: cannot be decremented",
            ),
        ],
    );
    // Dropping a collisionCount once set is decrementing it, to 0.
    status_update(
        "Deployment",
        &with_status(json!({"replicas": 3})),
        &old,
        &[(
            INVALID,
            "status.collisionCount",
            "Invalid value: 0: cannot be decremented",
        )],
    );
}

#[test]
fn replica_set_stateful_set_and_daemon_set_status_rejections() {
    let none = json!({});
    status_update(
        "ReplicaSet",
        &json!({"status": {"replicas": 1, "fullyLabeledReplicas": 2, "readyReplicas": -1}}),
        &none,
        &[
            (
                INVALID,
                "status.readyReplicas",
                "Invalid value: -1: must be greater than or equal to 0",
            ),
            (
                INVALID,
                "status.fullyLabeledReplicas",
                "Invalid value: 2: cannot be greater than status.replicas",
            ),
            // Go compares the counts as they are: 0 available exceeds -1 ready.
            (
                INVALID,
                "status.availableReplicas",
                "Invalid value: 0: cannot be greater than readyReplicas",
            ),
        ],
    );
    status_update(
        "StatefulSet",
        &json!({"status": {"replicas": 2, "readyReplicas": 1, "availableReplicas": 2, "currentReplicas": 3}}),
        &none,
        &[
            (
                INVALID,
                "status.currentReplicas",
                "Invalid value: 3: cannot be greater than status.replicas",
            ),
            (
                INVALID,
                "status.availableReplicas",
                "Invalid value: 2: cannot be greater than status.readyReplicas",
            ),
        ],
    );
    status_update(
        "DaemonSet",
        &json!({"status": {"numberReady": -2, "collisionCount": -1}}),
        &none,
        &[
            (
                INVALID,
                "status.numberReady",
                "Invalid value: -2: must be greater than or equal to 0",
            ),
            (
                INVALID,
                "status.collisionCount",
                "Invalid value: -1: must be greater than or equal to 0",
            ),
        ],
    );
    // A ReplicationController's status is checked as a ReplicaSet's.
    expect(
        validate_status_update(
            "",
            "ReplicationController",
            &json!({"status": {"replicas": 1, "readyReplicas": 2, "availableReplicas": 1}}),
            &none,
        ),
        &[(
            INVALID,
            "status.readyReplicas",
            "Invalid value: 2: cannot be greater than status.replicas",
        )],
    );
    // Upstream's path for desiredReplicas carries a typo; clients see it.
    expect(
        validate_status_update(
            "autoscaling",
            "HorizontalPodAutoscaler",
            &json!({"status": {"currentReplicas": -1, "desiredReplicas": -2}}),
            &none,
        ),
        &[
            (
                INVALID,
                "status.currentReplicas",
                "Invalid value: -1: must be greater than or equal to 0",
            ),
            (
                INVALID,
                "status.desiredReplicasa",
                "Invalid value: -2: must be greater than or equal to 0",
            ),
        ],
    );
    // A PodDisruptionBudget's conditions are metav1 Conditions.
    let condition = json!({"type": "DisruptionAllowed", "status": "True", "reason": "SufficientPods", "lastTransitionTime": "2026-11-22T10:00:00Z"});
    expect(
        validate_status_update(
            "policy",
            "PodDisruptionBudget",
            &json!({"status": {"conditions": [condition.clone()], "expectedPods": 1}}),
            &none,
        ),
        &[],
    );
    expect(
        validate_status_update(
            "policy",
            "PodDisruptionBudget",
            &json!({"status": {
                "conditions": [
                    condition,
                    {"type": "DisruptionAllowed", "status": "Maybe", "reason": "1bad", "observedGeneration": -1}
                ],
                "currentHealthy": -1
            }}),
            &none,
        ),
        &[
            (DUPLICATE, "status.conditions[1].type", "Duplicate value: \"DisruptionAllowed\""),
            (NOT_SUPPORTED, "status.conditions[1].status", "Unsupported value: \"Maybe\": supported values: \"False\", \"True\", \"Unknown\""),
            (INVALID, "status.conditions[1].observedGeneration", "Invalid value: -1: must be greater than or equal to zero"),
            (REQUIRED, "status.conditions[1].lastTransitionTime", "Required value: must be set"),
            (INVALID, "status.conditions[1].reason", "Invalid value: \"1bad\": a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')"),
            (INVALID, "status.currentHealthy", "Invalid value: -1: must be greater than or equal to 0"),
        ],
    );
    // A namespace's phase follows its deletion timestamp.
    let namespace = |phase: &str, deleting: bool| {
        let mut ns = json!({"metadata": {"name": "n"}, "status": {"phase": phase}});
        if deleting {
            ns["metadata"]["deletionTimestamp"] = json!("2026-11-22T10:00:00Z");
        }
        validate_status_update("", "Namespace", &ns, &none)
    };
    expect(namespace("Active", false), &[]);
    expect(namespace("Terminating", true), &[]);
    expect(
        namespace("Terminating", false),
        &[(
            INVALID,
            "status.Phase",
            "Invalid value: \"Terminating\": may only be 'Active' if `deletionTimestamp` is empty",
        )],
    );
    expect(
        namespace("Active", true),
        &[(
            INVALID,
            "status.Phase",
            "Invalid value: \"Active\": may only be 'Terminating' if `deletionTimestamp` is not empty",
        )],
    );
    // Kinds without status rules accept any status.
    expect(
        validate_status_update("", "Pod", &json!({"status": {"x": -1}}), &none),
        &[],
    );
}
