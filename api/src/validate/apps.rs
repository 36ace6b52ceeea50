//! apps/v1: Deployment, ReplicaSet, DaemonSet, StatefulSet.

use serde_json::Value;

use super::meta::{self, go_label_selector};
use super::pod;
use super::{child, field, int_of, map_of, nonnegative_counts, opt, str_of};
use crate::error::FieldError;

/// The selector checks every apps kind shares: required, well formed, and
/// not empty (`what` names the kind in upstream's message).
fn selector(spec: &Value, what: &str, errs: &mut Vec<FieldError>) -> Option<Value> {
    let Some(selector) = opt(spec, "selector") else {
        errs.push(FieldError::required("spec.selector", ""));
        return None;
    };
    errs.extend(meta::label_selector(Some(selector), "spec.selector"));
    if meta::selector_is_empty(selector) {
        errs.push(FieldError::invalid_rendered(
            "spec.selector",
            &go_label_selector(Some(selector)),
            &format!("empty selector is invalid for {what}"),
        ));
    }
    Some(selector.clone())
}

/// The template must carry the labels the selector picks.
/// A missing selector converts to upstream's "match nothing", which is not
/// empty and so is checked (and never matches); an empty one matches all.
fn template_matches(selector: Option<&Value>, template: &Value, errs: &mut Vec<FieldError>) {
    if selector.is_some_and(meta::selector_is_empty) {
        return;
    }
    let labels = map_of(field(template, "metadata"), "labels");
    if !selector.is_some_and(|s| meta::selector_matches(s, labels)) {
        errs.push(FieldError::invalid_rendered(
            "spec.template.metadata.labels",
            &pod::template_labels_rendered(template),
            "`selector` does not match template `labels`",
        ));
    }
}

/// ValidatePodTemplateSpecForReplicaSet (also Deployments'): always-restart
/// pods without a deadline.
fn replica_set_template(
    selector: Option<&Value>,
    template: &Value,
    kind: &str,
    errs: &mut Vec<FieldError>,
) {
    template_matches(selector, template, errs);
    errs.extend(pod::template_spec(template, "spec.template"));
    restart_always(template, kind, errs);
}

fn restart_always(template: &Value, kind: &str, errs: &mut Vec<FieldError>) {
    let template_spec = field(template, "spec");
    let policy = pod::restart_policy(template_spec);
    if policy != "Always" {
        errs.push(FieldError::not_supported(
            "spec.template.spec.restartPolicy",
            policy,
            &["Always"],
        ));
    }
    if opt(template_spec, "activeDeadlineSeconds").is_some() {
        errs.push(FieldError::forbidden(
            "spec.template.spec.activeDeadlineSeconds",
            &format!("activeDeadlineSeconds in {kind} is not Supported"),
        ));
    }
}

fn nonnegative(spec: &Value, name: &str, default: i64, errs: &mut Vec<FieldError>) {
    if let Some(value) = int_of(spec, name).or((default >= 0).then_some(default)) {
        errs.extend(meta::nonnegative(value, &child("spec", name)));
    }
}

pub fn deployment(object: &Value) -> Vec<FieldError> {
    let spec = field(object, "spec");
    let mut errs = Vec::new();
    nonnegative(spec, "replicas", 1, &mut errs);
    let selector = selector(spec, "deployment", &mut errs);
    replica_set_template(
        selector.as_ref(),
        field(spec, "template"),
        "ReplicaSet",
        &mut errs,
    );
    errs.extend(deployment_strategy(field(spec, "strategy")));
    nonnegative(spec, "minReadySeconds", 0, &mut errs);
    nonnegative(spec, "revisionHistoryLimit", -1, &mut errs);
    if let Some(deadline) = int_of(spec, "progressDeadlineSeconds") {
        errs.extend(meta::nonnegative(deadline, "spec.progressDeadlineSeconds"));
        if deadline <= int_of(spec, "minReadySeconds").unwrap_or(0) {
            errs.push(FieldError::invalid_rendered(
                "spec.progressDeadlineSeconds",
                &deadline.to_string(),
                "must be greater than minReadySeconds",
            ));
        }
    }
    errs
}

fn deployment_strategy(strategy: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let rolling = opt(strategy, "rollingUpdate");
    match str_of(strategy, "type") {
        "Recreate" => {
            if rolling.is_some() {
                errs.push(FieldError::forbidden(
                    "spec.strategy.rollingUpdate",
                    "may not be specified when strategy `type` is 'Recreate'",
                ));
            }
        }
        // An absent type is upstream's default, RollingUpdate.
        "" | "RollingUpdate" => {
            if let Some(rolling) = rolling {
                errs.extend(rolling_update(rolling, "spec.strategy.rollingUpdate"));
            }
        }
        other => {
            let rendered = format!(
                "apps.DeploymentStrategy{{Type:{}, RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}}",
                meta::go_quote(other)
            );
            errs.push(FieldError::not_supported_rendered(
                "spec.strategy",
                &rendered,
                &["Recreate", "RollingUpdate"],
            ));
        }
    }
    errs
}

/// ValidateRollingUpdateDeployment.
fn rolling_update(rolling: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let default = Value::String("25%".into());
    let unavailable = opt(rolling, "maxUnavailable").unwrap_or(&default);
    let surge = opt(rolling, "maxSurge").unwrap_or(&default);
    let unavailable_path = child(path, "maxUnavailable");
    errs.extend(meta::positive_int_or_percent(
        unavailable,
        &unavailable_path,
    ));
    errs.extend(meta::positive_int_or_percent(
        surge,
        &child(path, "maxSurge"),
    ));
    let is_zero = |v: &Value| match v {
        Value::String(s) => meta::percent_value(s) == Some(0),
        other => other.as_i64() == Some(0),
    };
    if is_zero(unavailable) && is_zero(surge) {
        errs.push(FieldError::invalid_rendered(
            &unavailable_path,
            &meta::go_int_or_string(unavailable),
            "may not be 0 when `maxSurge` is 0",
        ));
    }
    errs.extend(meta::not_more_than_100_percent(
        unavailable,
        &unavailable_path,
    ));
    errs
}

pub fn replica_set(object: &Value) -> Vec<FieldError> {
    let spec = field(object, "spec");
    let mut errs = Vec::new();
    nonnegative(spec, "replicas", 1, &mut errs);
    nonnegative(spec, "minReadySeconds", 0, &mut errs);
    // Upstream's ReplicaSet check says "deployment" too.
    let selector = selector(spec, "deployment", &mut errs);
    replica_set_template(
        selector.as_ref(),
        field(spec, "template"),
        "ReplicaSet",
        &mut errs,
    );
    errs
}

pub fn daemon_set(object: &Value) -> Vec<FieldError> {
    let spec = field(object, "spec");
    let mut errs = Vec::new();
    let selector = opt(spec, "selector");
    errs.extend(meta::label_selector(selector, "spec.selector"));
    let template = field(spec, "template");
    // A nil selector converts to "match nothing", so it never matches.
    let matches = selector
        .is_some_and(|s| meta::selector_matches(s, map_of(field(template, "metadata"), "labels")));
    if !matches {
        errs.push(FieldError::invalid_rendered(
            "spec.template.metadata.labels",
            &pod::template_labels_rendered(template),
            "`selector` does not match template `labels`",
        ));
    }
    if let Some(selector) = selector.filter(|s| meta::selector_is_empty(s)) {
        errs.push(FieldError::invalid_rendered(
            "spec.selector",
            &go_label_selector(Some(selector)),
            "empty selector is invalid for daemonset",
        ));
    }
    errs.extend(pod::template_spec(template, "spec.template"));
    restart_always(template, "DaemonSet", &mut errs);
    nonnegative(spec, "minReadySeconds", 0, &mut errs);
    nonnegative(spec, "templateGeneration", -1, &mut errs);
    let strategy = field(spec, "updateStrategy");
    match str_of(strategy, "type") {
        "" | "RollingUpdate" => {
            if let Some(rolling) = opt(strategy, "rollingUpdate") {
                errs.extend(daemon_set_rolling_update(rolling));
            }
        }
        "OnDelete" => {}
        other => errs.push(FieldError::not_supported_rendered(
            "spec.updateStrategy",
            &format!(
                "apps.DaemonSetUpdateStrategy{{Type:{}, RollingUpdate:(*apps.RollingUpdateDaemonSet)(nil)}}",
                meta::go_quote(other)
            ),
            &["RollingUpdate", "OnDelete"],
        )),
    }
    nonnegative(spec, "revisionHistoryLimit", -1, &mut errs);
    errs
}

/// ValidateRollingUpdateDaemonSet: exactly one of maxUnavailable and
/// maxSurge is non-zero (defaults 1 and 0).
fn daemon_set_rolling_update(rolling: &Value) -> Vec<FieldError> {
    let path = "spec.updateStrategy.rollingUpdate";
    let mut errs = Vec::new();
    let unavailable = opt(rolling, "maxUnavailable")
        .cloned()
        .unwrap_or(Value::from(1));
    let surge = opt(rolling, "maxSurge").cloned().unwrap_or(Value::from(0));
    let unavailable_path = child(path, "maxUnavailable");
    let surge_path = child(path, "maxSurge");
    errs.extend(meta::positive_int_or_percent(
        &unavailable,
        &unavailable_path,
    ));
    errs.extend(meta::positive_int_or_percent(&surge, &surge_path));
    errs.extend(meta::not_more_than_100_percent(
        &unavailable,
        &unavailable_path,
    ));
    errs.extend(meta::not_more_than_100_percent(&surge, &surge_path));
    let non_zero = |v: &Value| match v {
        Value::String(s) => meta::percent_value(s) != Some(0),
        other => other.as_i64() != Some(0),
    };
    match (non_zero(&unavailable), non_zero(&surge)) {
        (true, true) => errs.push(FieldError::invalid_rendered(
            &surge_path,
            &meta::go_int_or_string(&surge),
            "may not be set when maxUnavailable is non-zero",
        )),
        (false, false) => errs.push(FieldError::required(
            &unavailable_path,
            "cannot be 0 when maxSurge is 0",
        )),
        _ => {}
    }
    errs
}

pub fn stateful_set(object: &Value) -> Vec<FieldError> {
    let spec = field(object, "spec");
    let mut errs = Vec::new();
    match str_of(spec, "podManagementPolicy") {
        "" | "OrderedReady" | "Parallel" => {}
        other => errs.push(FieldError::invalid(
            "spec.podManagementPolicy",
            other,
            "must be 'OrderedReady' or 'Parallel'",
        )),
    }
    let strategy = field(spec, "updateStrategy");
    let rolling = opt(strategy, "rollingUpdate");
    match str_of(strategy, "type") {
        "OnDelete" => {
            if rolling.is_some() {
                errs.push(FieldError::invalid_rendered(
                    "spec.updateStrategy.rollingUpdate",
                    "apps.RollingUpdateStatefulSetStrategy{...}",
                    "only allowed for updateStrategy 'RollingUpdate'",
                ));
            }
        }
        "" | "RollingUpdate" => {
            if let Some(rolling) = rolling {
                if let Some(partition) = int_of(rolling, "partition") {
                    errs.extend(meta::nonnegative(
                        partition,
                        "spec.updateStrategy.rollingUpdate.partition",
                    ));
                }
            }
        }
        other => errs.push(FieldError::invalid_rendered(
            "spec.updateStrategy",
            &format!(
                "apps.StatefulSetUpdateStrategy{{Type:{}, RollingUpdate:(*apps.RollingUpdateStatefulSetStrategy)(nil)}}",
                meta::go_quote(other)
            ),
            "must be 'RollingUpdate' or 'OnDelete'",
        )),
    }
    if let Some(policy) = opt(spec, "persistentVolumeClaimRetentionPolicy") {
        for name in ["whenDeleted", "whenScaled"] {
            match str_of(policy, name) {
                "" | "Retain" | "Delete" => {}
                other => errs.push(FieldError::not_supported(
                    child("spec.persistentVolumeClaimRetentionPolicy", name),
                    other,
                    &["Retain", "Delete"],
                )),
            }
        }
    }
    if let Some(start) = opt(spec, "ordinals").and_then(|o| int_of(o, "start")) {
        errs.extend(meta::nonnegative(start, "spec.ordinals.start"));
    }
    nonnegative(spec, "replicas", 1, &mut errs);
    nonnegative(spec, "minReadySeconds", 0, &mut errs);
    let selector = selector(spec, "statefulset", &mut errs);
    let template = field(spec, "template");
    template_matches(selector.as_ref(), template, &mut errs);
    // 1.32 validates only the template's labels and annotations for a
    // StatefulSet, not its pod spec (that came in 1.34).
    let template_meta = field(template, "metadata");
    errs.extend(meta::labels(
        opt(template_meta, "labels"),
        "spec.template.labels",
    ));
    errs.extend(meta::annotations(
        opt(template_meta, "annotations"),
        "spec.template.annotations",
    ));
    restart_always(template, "StatefulSet", &mut errs);
    errs
}

/// Deployment, ReplicaSet and DaemonSet: spec.selector cannot change.
pub fn selector_update(object: &Value, old: &Value) -> Vec<FieldError> {
    let new_selector = opt(field(object, "spec"), "selector");
    let old_selector = opt(field(old, "spec"), "selector");
    if normalized_selector(new_selector) != normalized_selector(old_selector) {
        return vec![FieldError::immutable(
            "spec.selector",
            &go_label_selector(new_selector),
        )];
    }
    Vec::new()
}

/// A selector with empty maps and lists dropped, as Go's semantic equality
/// treats nil and empty alike.
fn normalized_selector(selector: Option<&Value>) -> Option<Value> {
    let selector = selector?;
    let mut out = serde_json::Map::new();
    if let Some(labels) = map_of(selector, "matchLabels").filter(|m| !m.is_empty()) {
        out.insert("matchLabels".into(), Value::Object(labels.clone()));
    }
    let exprs = super::list_of(selector, "matchExpressions");
    if !exprs.is_empty() {
        out.insert("matchExpressions".into(), Value::Array(exprs.to_vec()));
    }
    Some(Value::Object(out))
}

/// The StatefulSet spec fields an update may change.
const STATEFUL_SET_UPDATABLE: &[&str] = &[
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "revisionHistoryLimit",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
];

pub fn stateful_set_update(object: &Value, old: &Value) -> Vec<FieldError> {
    let strip = |spec: &Value| {
        let mut spec = spec.clone();
        if let Some(obj) = spec.as_object_mut() {
            for name in STATEFUL_SET_UPDATABLE {
                obj.remove(*name);
            }
            obj.retain(|_, v| !v.is_null());
        }
        spec
    };
    let mut errs = Vec::new();
    if !meta::semantically_equal(&strip(field(object, "spec")), &strip(field(old, "spec"))) {
        errs.push(FieldError::forbidden(
            "spec",
            "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
        ));
    }
    errs
}

/// One status count: upstream's typed field reads 0 when absent.
fn status_count(status: &Value, name: &str) -> i64 {
    int_of(status, name).unwrap_or(0)
}

/// Upstream's `msg := "cannot be greater than status.replicas"` checks on
/// each of `bounded`, then availableReplicas against readyReplicas (whose
/// message differs by kind).
fn replica_bounds(status: &Value, bounded: &[&str], above_ready: &str, errs: &mut Vec<FieldError>) {
    let checks = bounded
        .iter()
        .map(|name| (*name, "replicas", GREATER_THAN_REPLICAS))
        .chain([("availableReplicas", "readyReplicas", above_ready)]);
    for (name, limit, message) in checks {
        let value = status_count(status, name);
        if value > status_count(status, limit) {
            errs.push(FieldError::invalid_rendered(
                child("status", name),
                &value.to_string(),
                message,
            ));
        }
    }
}

/// The optional collisionCount, when set: nonnegative.
fn collision_count_nonnegative(status: &Value, errs: &mut Vec<FieldError>) {
    if let Some(count) = opt(status, "collisionCount").and_then(Value::as_i64) {
        errs.extend(meta::nonnegative(count, "status.collisionCount"));
    }
}

/// IsDecremented: collisionCount never falls below the stored one, nor is
/// dropped once set.
fn collision_count_decrement(status: &Value, old_status: &Value, errs: &mut Vec<FieldError>) {
    let new = opt(status, "collisionCount").and_then(Value::as_i64);
    let old = opt(old_status, "collisionCount").and_then(Value::as_i64);
    let decremented = match (new, old) {
        (None, Some(_)) => true,
        (Some(new), Some(old)) => new < old,
        _ => false,
    };
    if decremented {
        errs.push(FieldError::invalid_rendered(
            "status.collisionCount",
            &new.unwrap_or(0).to_string(),
            "cannot be decremented",
        ));
    }
}

const GREATER_THAN_REPLICAS: &str = "cannot be greater than status.replicas";

/// ValidateDeploymentStatusUpdate's status checks (metadata is the
/// pipeline's).
pub fn deployment_status(object: &Value, old: &Value) -> Vec<FieldError> {
    let status = field(object, "status");
    let mut errs = Vec::new();
    nonnegative_counts(
        status,
        "status",
        &[
            "observedGeneration",
            "replicas",
            "updatedReplicas",
            "readyReplicas",
            "availableReplicas",
            "unavailableReplicas",
        ],
        &mut errs,
    );
    collision_count_nonnegative(status, &mut errs);
    replica_bounds(
        status,
        &["updatedReplicas", "readyReplicas", "availableReplicas"],
        "cannot be greater than readyReplicas",
        &mut errs,
    );
    collision_count_decrement(status, field(old, "status"), &mut errs);
    errs
}

/// ValidateReplicaSetStatusUpdate's status checks.
pub fn replica_set_status(object: &Value, _old: &Value) -> Vec<FieldError> {
    let status = field(object, "status");
    let mut errs = Vec::new();
    nonnegative_counts(
        status,
        "status",
        &[
            "replicas",
            "fullyLabeledReplicas",
            "readyReplicas",
            "availableReplicas",
            "observedGeneration",
        ],
        &mut errs,
    );
    replica_bounds(
        status,
        &["fullyLabeledReplicas", "readyReplicas", "availableReplicas"],
        "cannot be greater than readyReplicas",
        &mut errs,
    );
    errs
}

/// ValidateStatefulSetStatusUpdate's status checks.
pub fn stateful_set_status(object: &Value, old: &Value) -> Vec<FieldError> {
    let status = field(object, "status");
    let mut errs = Vec::new();
    nonnegative_counts(
        status,
        "status",
        &[
            "replicas",
            "readyReplicas",
            "currentReplicas",
            "updatedReplicas",
            "availableReplicas",
        ],
        &mut errs,
    );
    // A pointer upstream: checked only when set.
    if let Some(generation) = opt(status, "observedGeneration").and_then(Value::as_i64) {
        errs.extend(meta::nonnegative(generation, "status.observedGeneration"));
    }
    collision_count_nonnegative(status, &mut errs);
    replica_bounds(
        status,
        &[
            "readyReplicas",
            "currentReplicas",
            "updatedReplicas",
            "availableReplicas",
        ],
        "cannot be greater than status.readyReplicas",
        &mut errs,
    );
    collision_count_decrement(status, field(old, "status"), &mut errs);
    errs
}

/// ValidateDaemonSetStatusUpdate's status checks.
pub fn daemon_set_status(object: &Value, old: &Value) -> Vec<FieldError> {
    let status = field(object, "status");
    let mut errs = Vec::new();
    nonnegative_counts(
        status,
        "status",
        &[
            "currentNumberScheduled",
            "numberMisscheduled",
            "desiredNumberScheduled",
            "numberReady",
            "observedGeneration",
            "updatedNumberScheduled",
            "numberAvailable",
            "numberUnavailable",
        ],
        &mut errs,
    );
    collision_count_nonnegative(status, &mut errs);
    collision_count_decrement(status, field(old, "status"), &mut errs);
    errs
}
