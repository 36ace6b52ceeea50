//! apps/v1 defaulters: pkg/apis/apps/v1/defaults.go.

use serde_json::json;

use super::core_v1::{persistent_volume_claim, pod_template_spec};
use super::{child, default_pointer, default_zero, each_item, ensure_child, str_field, Object};

/// `SetDefaults_Deployment`: replicas 1, RollingUpdate 25%/25%, history 10,
/// progress deadline 600 s.
pub(crate) fn deployment(deployment: &mut Object) {
    let Some(spec) = ensure_child(deployment, "spec") else {
        return;
    };
    default_pointer(spec, "replicas", json!(1));
    if let Some(strategy) = ensure_child(spec, "strategy") {
        default_zero(strategy, "type", json!("RollingUpdate"));
        if str_field(strategy, "type") == "RollingUpdate" {
            if let Some(rolling_update) = ensure_child(strategy, "rollingUpdate") {
                default_pointer(rolling_update, "maxUnavailable", json!("25%"));
                default_pointer(rolling_update, "maxSurge", json!("25%"));
            }
        }
    }
    default_pointer(spec, "revisionHistoryLimit", json!(10));
    default_pointer(spec, "progressDeadlineSeconds", json!(600));
    template(spec);
}

/// `SetDefaults_ReplicaSet`: replicas 1.
pub(crate) fn replica_set(replica_set: &mut Object) {
    let Some(spec) = ensure_child(replica_set, "spec") else {
        return;
    };
    default_pointer(spec, "replicas", json!(1));
    template(spec);
}

/// `SetDefaults_StatefulSet` (StatefulSetAutoDeletePVC is on by default in
/// 1.32) and the claim templates' PersistentVolumeClaim defaults.
pub(crate) fn stateful_set(stateful_set: &mut Object) {
    let Some(spec) = ensure_child(stateful_set, "spec") else {
        return;
    };
    default_zero(spec, "podManagementPolicy", json!("OrderedReady"));
    if let Some(strategy) = ensure_child(spec, "updateStrategy") {
        // RollingUpdate is only filled in when the type was defaulted too: an
        // explicit `type: RollingUpdate` without `rollingUpdate` stays as sent.
        if super::is_zero(strategy, "type") {
            strategy.insert("type".into(), json!("RollingUpdate"));
            default_pointer(strategy, "rollingUpdate", json!({}));
        }
        if str_field(strategy, "type") == "RollingUpdate" {
            if let Some(rolling_update) = child(strategy, "rollingUpdate") {
                default_pointer(rolling_update, "partition", json!(0));
            }
        }
    }
    if let Some(retention) = ensure_child(spec, "persistentVolumeClaimRetentionPolicy") {
        default_zero(retention, "whenDeleted", json!("Retain"));
        default_zero(retention, "whenScaled", json!("Retain"));
    }
    default_pointer(spec, "replicas", json!(1));
    default_pointer(spec, "revisionHistoryLimit", json!(10));
    template(spec);
    each_item(spec, "volumeClaimTemplates", persistent_volume_claim);
}

/// `SetDefaults_DaemonSet`: RollingUpdate maxUnavailable 1 maxSurge 0, history 10.
pub(crate) fn daemon_set(daemon_set: &mut Object) {
    let Some(spec) = ensure_child(daemon_set, "spec") else {
        return;
    };
    if let Some(strategy) = ensure_child(spec, "updateStrategy") {
        default_zero(strategy, "type", json!("RollingUpdate"));
        if str_field(strategy, "type") == "RollingUpdate" {
            if let Some(rolling_update) = ensure_child(strategy, "rollingUpdate") {
                default_pointer(rolling_update, "maxUnavailable", json!(1));
                default_pointer(rolling_update, "maxSurge", json!(0));
            }
        }
    }
    default_pointer(spec, "revisionHistoryLimit", json!(10));
    template(spec);
}

/// The non-pointer `template` of a workload spec.
fn template(spec: &mut Object) {
    if let Some(template) = ensure_child(spec, "template") {
        pod_template_spec(template);
    }
}
