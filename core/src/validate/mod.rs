//! Upstream's per-kind validation (kube-apiserver 1.32's `ValidateXxx` and
//! `ValidateXxxUpdate`) for the built-in kinds, with upstream's field paths
//! and messages byte for byte, so 422 causes read as kube-apiserver's.
//!
//! Objects arrive in their versioned JSON form, already defaulted. A field
//! upstream defaults is treated as holding its default when it is absent or
//! carries a protobuf zero value, so validation does not depend on every
//! default having been filled in. Metadata (name, namespace, labels,
//! annotations) is validated by the pipeline; nested ObjectMeta such as a pod
//! template's labels is validated here.
//!
//! Adding a kind is adding one arm to [`rules`].

mod apps;
mod autoscaling;
mod batch;
mod coordination;
mod corev1;
mod meta;
mod networking;
mod pod;
mod policy;
pub mod quantity;
mod rbac;
mod scheduling;
mod storage;

use serde_json::{Map, Value};

use crate::error::FieldError;

type CreateRule = fn(&Value) -> Vec<FieldError>;
type UpdateRule = fn(&Value, &Value) -> Vec<FieldError>;

/// What upstream checks for one kind: the object on its own (on create and
/// update), rules upstream applies only on create, and (for kinds with
/// immutable fields) the object against the stored one.
struct KindRules {
    validate: CreateRule,
    create_only: Option<CreateRule>,
    update: Option<UpdateRule>,
    /// ValidateXxxStatusUpdate's checks of the status itself.
    status_update: Option<UpdateRule>,
}

fn rules(group: &str, kind: &str) -> Option<KindRules> {
    let (create, update): (CreateRule, Option<UpdateRule>) = match (group, kind) {
        ("", "Pod") => (corev1::pod, Some(corev1::pod_update)),
        ("", "PodTemplate") => (corev1::pod_template, None),
        ("", "ReplicationController") => (corev1::replication_controller, None),
        ("", "ConfigMap") => (corev1::config_map, Some(corev1::config_map_update)),
        ("", "Secret") => (corev1::secret, Some(corev1::secret_update)),
        ("", "Namespace") => (corev1::namespace, None),
        ("", "ServiceAccount") => (corev1::service_account, None),
        ("", "Node") => (corev1::node, Some(corev1::node_update)),
        ("", "PersistentVolume") => (
            corev1::persistent_volume,
            Some(corev1::persistent_volume_update),
        ),
        ("", "PersistentVolumeClaim") => (
            corev1::persistent_volume_claim,
            Some(corev1::persistent_volume_claim_update),
        ),
        ("apps", "Deployment") => (apps::deployment, Some(apps::selector_update)),
        ("apps", "ReplicaSet") => (apps::replica_set, Some(apps::selector_update)),
        ("apps", "DaemonSet") => (apps::daemon_set, Some(apps::selector_update)),
        ("apps", "StatefulSet") => (apps::stateful_set, Some(apps::stateful_set_update)),
        ("batch", "Job") => (batch::job, Some(batch::job_update)),
        ("batch", "CronJob") => (batch::cron_job, None),
        ("rbac.authorization.k8s.io", "Role") => (rbac::role, None),
        ("rbac.authorization.k8s.io", "ClusterRole") => (rbac::cluster_role, None),
        ("rbac.authorization.k8s.io", "RoleBinding") => {
            (rbac::role_binding, Some(rbac::role_ref_update))
        }
        ("rbac.authorization.k8s.io", "ClusterRoleBinding") => {
            (rbac::cluster_role_binding, Some(rbac::role_ref_update))
        }
        ("networking.k8s.io", "Ingress") => (networking::ingress, None),
        ("networking.k8s.io", "NetworkPolicy") => (networking::network_policy, None),
        ("storage.k8s.io", "StorageClass") => {
            (storage::storage_class, Some(storage::storage_class_update))
        }
        ("coordination.k8s.io", "Lease") => (coordination::lease, None),
        ("scheduling.k8s.io", "PriorityClass") => (
            scheduling::priority_class,
            Some(scheduling::priority_class_update),
        ),
        ("autoscaling", "HorizontalPodAutoscaler") => {
            (autoscaling::horizontal_pod_autoscaler, None)
        }
        ("policy", "PodDisruptionBudget") => (policy::pod_disruption_budget, None),
        _ => return None,
    };
    let create_only: Option<CreateRule> = match (group, kind) {
        ("", "Pod") => Some(corev1::pod_create_only),
        ("batch", "CronJob") => Some(batch::cron_job_create_only),
        _ => None,
    };
    let status_update: Option<UpdateRule> = match (group, kind) {
        ("apps", "Deployment") => Some(apps::deployment_status),
        // ValidateReplicationControllerStatus checks what the ReplicaSet's does.
        ("apps", "ReplicaSet") | ("", "ReplicationController") => Some(apps::replica_set_status),
        ("apps", "StatefulSet") => Some(apps::stateful_set_status),
        ("apps", "DaemonSet") => Some(apps::daemon_set_status),
        ("autoscaling", "HorizontalPodAutoscaler") => {
            Some(autoscaling::horizontal_pod_autoscaler_status)
        }
        ("policy", "PodDisruptionBudget") => Some(policy::pod_disruption_budget_status),
        ("", "Namespace") => Some(corev1::namespace_status),
        _ => None,
    };
    Some(KindRules {
        validate: create,
        create_only,
        update,
        status_update,
    })
}

/// kube-apiserver 1.32's ValidateXxx for a new object of this kind (group "" =
/// core). `object` has already been defaulted and its name, namespace, labels
/// and annotations validated by the pipeline; kinds without rules yield nothing.
pub fn validate_create(group: &str, kind: &str, object: &Value) -> Vec<FieldError> {
    let Some(rules) = rules(group, kind) else {
        return Vec::new();
    };
    let mut errs = meta::finalizers(object);
    errs.extend((rules.validate)(object));
    if let Some(create_only) = rules.create_only {
        errs.extend(create_only(object));
    }
    errs
}

/// ValidateXxxUpdate: everything [`validate_create`] checks plus the fields
/// upstream keeps immutable, compared against the stored `old` object.
pub fn validate_update(group: &str, kind: &str, object: &Value, old: &Value) -> Vec<FieldError> {
    let Some(rules) = rules(group, kind) else {
        return Vec::new();
    };
    let mut errs = meta::finalizers(object);
    errs.extend((rules.validate)(object));
    if let Some(update) = rules.update {
        errs.extend(update(object, old));
    }
    errs
}

/// ValidatePodEphemeralContainersUpdate: the pod as [`validate_create`]
/// checks it, without the create-only rules, and its ephemeral containers
/// only ever added.
pub fn validate_ephemeral_containers_update(object: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = meta::finalizers(object);
    errs.extend(corev1::pod(object));
    errs.extend(pod::ephemeral_containers_only_added(object, old));
    errs
}

/// ValidatePodResize: the pod as [`validate_create`] checks it, without the
/// create-only rules, and the resize rules against the stored pod.
pub fn validate_pod_resize(object: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = meta::finalizers(object);
    errs.extend(corev1::pod(object));
    errs.extend(pod::resize(object, old));
    errs
}

/// ValidateXxxStatusUpdate's checks of a status written through `/status`,
/// against the stored `old` object (kinds without them yield nothing).
pub fn validate_status_update(
    group: &str,
    kind: &str,
    object: &Value,
    old: &Value,
) -> Vec<FieldError> {
    rules(group, kind)
        .and_then(|rules| rules.status_update)
        .map(|check| check(object, old))
        .unwrap_or_default()
}

/// ValidateNonnegativeField on each of `names` under `parent` (at
/// `parent_path`), an absent count reading 0 as Go's typed field does.
fn nonnegative_counts(
    parent: &Value,
    parent_path: &str,
    names: &[&str],
    errs: &mut Vec<FieldError>,
) {
    for name in names {
        let count = int_of(parent, name).unwrap_or(0);
        errs.extend(meta::nonnegative(count, &child(parent_path, name)));
    }
}

// Small accessors over the JSON form. Absent, null and Go zero values read the
// same, as upstream's typed structs see them.

static NULL: Value = Value::Null;

fn field<'a>(v: &'a Value, key: &str) -> &'a Value {
    v.get(key).unwrap_or(&NULL)
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// A pointer field: `None` when absent or null.
fn opt<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key).filter(|f| !f.is_null())
}

fn int_of(v: &Value, key: &str) -> Option<i64> {
    v.get(key).and_then(Value::as_i64)
}

fn bool_of(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn list_of<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

fn map_of<'a>(v: &'a Value, key: &str) -> Option<&'a Map<String, Value>> {
    v.get(key).and_then(Value::as_object)
}

/// `base.name`, as field.Path.Child.
fn child(base: &str, name: &str) -> String {
    if base.is_empty() {
        name.to_string()
    } else {
        format!("{base}.{name}")
    }
}

/// `base[i]`, as field.Path.Index.
fn index(base: &str, i: usize) -> String {
    format!("{base}[{i}]")
}

/// `base[key]`, as field.Path.Key.
fn key(base: &str, k: &str) -> String {
    format!("{base}[{k}]")
}

#[cfg(test)]
mod tests;
