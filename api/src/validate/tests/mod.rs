//! Per-kind cases: invalid variants with upstream's exact field, reason and
//! message; a valid object with no errors; immutability on update.

mod others;
mod pod;
mod status;
mod workloads;

use serde_json::{json, Value};

/// What the pipeline checks beyond the generic metadata for a new object:
/// the finalizer names and the kind's own rules.
fn validate_create(group: &str, kind: &str, object: &Value) -> Vec<FieldError> {
    let mut errs = super::meta::finalizers(object, true);
    errs.extend(crate::kinds::builtin(group, kind).validate_create(object));
    errs
}

fn validate_update(group: &str, kind: &str, object: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = super::meta::finalizers(object, true);
    errs.extend(crate::kinds::builtin(group, kind).validate_update(object, old));
    errs
}

fn validate_status_update(group: &str, kind: &str, object: &Value, old: &Value) -> Vec<FieldError> {
    crate::kinds::builtin(group, kind).validate_status_update(object, old)
}
use crate::error::FieldError;

const REQUIRED: &str = "FieldValueRequired";
const INVALID: &str = "FieldValueInvalid";
const NOT_SUPPORTED: &str = "FieldValueNotSupported";
const DUPLICATE: &str = "FieldValueDuplicate";
const FORBIDDEN: &str = "FieldValueForbidden";
const NOT_FOUND: &str = "FieldValueNotFound";

fn with(base: &Value, change: impl FnOnce(&mut Value)) -> Value {
    let mut v = base.clone();
    change(&mut v);
    v
}

#[track_caller]
fn expect(errs: Vec<FieldError>, want: &[(&str, &str, &str)]) {
    let got: Vec<(&str, &str, &str)> = errs
        .iter()
        .map(|e| (e.reason, e.field.as_str(), e.message.as_str()))
        .collect();
    assert_eq!(got, want);
}

#[track_caller]
fn create(group: &str, kind: &str, object: &Value, want: &[(&str, &str, &str)]) {
    expect(validate_create(group, kind, object), want);
}

// Fixtures several files share: valid objects to vary.

fn pod() -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "namespace": "d"},
        "spec": {
            "containers": [{
                "name": "web", "image": "nginx:1.27",
                "ports": [{"name": "http", "containerPort": 80, "protocol": "TCP", "hostPort": 0}],
                "env": [{"name": "MODE", "value": "prod"}],
                "resources": {
                    "requests": {"cpu": "100m", "memory": "64Mi"},
                    "limits": {"cpu": "1", "memory": "128Mi"}
                },
                "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                "livenessProbe": {"httpGet": {"path": "/", "port": 80}, "successThreshold": 1},
                "imagePullPolicy": "IfNotPresent",
                "terminationMessagePolicy": "File"
            }],
            "volumes": [{"name": "data", "emptyDir": {}}],
            "restartPolicy": "Always",
            "dnsPolicy": "ClusterFirst",
            "terminationGracePeriodSeconds": 30,
            "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}]
        }
    })
}

fn template() -> Value {
    json!({
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "web", "image": "nginx"}], "restartPolicy": "Always"}
    })
}

fn deployment() -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "d"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": template(),
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600
        }
    })
}

fn job() -> Value {
    json!({"spec": {"backoffLimit": 6, "completions": 1, "parallelism": 1, "template": {
        "metadata": {"labels": {"job": "x"}},
        "spec": {"containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "Never"}}}})
}

fn cron_job() -> Value {
    json!({"metadata": {"name": "nightly"}, "spec": {"schedule": "*/5 * * * *", "concurrencyPolicy": "Allow",
        "jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "OnFailure"}}}}}})
}
