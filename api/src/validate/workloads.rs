//! What the workload kinds share (Deployment, ReplicaSet, DaemonSet,
//! StatefulSet, and ReplicationController's status): selectors, their pod
//! template, and the replica counts of their status.

use serde_json::Value;

use super::meta::{self, go_label_selector};
use super::pod;
use super::{child, field, int_of, list_of, map_of, nonnegative_counts, opt};
use crate::error::FieldError;

/// The selector checks every apps kind shares: required, well formed, and
/// not empty (`what` names the kind in upstream's message).
pub(crate) fn selector(spec: &Value, what: &str, errs: &mut Vec<FieldError>) -> Option<Value> {
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
pub(crate) fn template_matches(
    selector: Option<&Value>,
    template: &Value,
    errs: &mut Vec<FieldError>,
) {
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
pub(crate) fn replica_set_template(
    selector: Option<&Value>,
    template: &Value,
    kind: &str,
    errs: &mut Vec<FieldError>,
) {
    template_matches(selector, template, errs);
    errs.extend(pod::template_spec(template, "spec.template"));
    restart_always(template, kind, errs);
}

pub(crate) fn restart_always(template: &Value, kind: &str, errs: &mut Vec<FieldError>) {
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

pub(crate) fn nonnegative(spec: &Value, name: &str, default: i64, errs: &mut Vec<FieldError>) {
    if let Some(value) = int_of(spec, name).or((default >= 0).then_some(default)) {
        errs.extend(meta::nonnegative(value, &child("spec", name)));
    }
}

/// Deployment, ReplicaSet and DaemonSet: spec.selector cannot change.
pub(crate) fn selector_update(object: &Value, old: &Value) -> Vec<FieldError> {
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
    let exprs = list_of(selector, "matchExpressions");
    if !exprs.is_empty() {
        out.insert("matchExpressions".into(), Value::Array(exprs.to_vec()));
    }
    Some(Value::Object(out))
}

/// One status count: upstream's typed field reads 0 when absent.
fn status_count(status: &Value, name: &str) -> i64 {
    int_of(status, name).unwrap_or(0)
}

/// Upstream's `msg := "cannot be greater than status.replicas"` checks on
/// each of `bounded`, then availableReplicas against readyReplicas (whose
/// message differs by kind).
pub(crate) fn replica_bounds(
    status: &Value,
    bounded: &[&str],
    above_ready: &str,
    errs: &mut Vec<FieldError>,
) {
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
pub(crate) fn collision_count_nonnegative(status: &Value, errs: &mut Vec<FieldError>) {
    if let Some(count) = opt(status, "collisionCount").and_then(Value::as_i64) {
        errs.extend(meta::nonnegative(count, "status.collisionCount"));
    }
}

/// IsDecremented: collisionCount never falls below the stored one, nor is
/// dropped once set.
pub(crate) fn collision_count_decrement(
    status: &Value,
    old_status: &Value,
    errs: &mut Vec<FieldError>,
) {
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

/// ValidateReplicaSetStatusUpdate's status checks.
pub(crate) fn replica_set_status(object: &Value, _old: &Value) -> Vec<FieldError> {
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
