//! batch/v1 defaulters: pkg/apis/batch/v1/defaults.go, and the Job selector
//! generation of pkg/registry/batch/job/strategy.go.

use serde_json::{json, Value};

use super::core_v1::pod_template_spec;
use super::{child, default_pointer, default_zero, each_item, ensure_child, is_nil, Object};

/// `SetDefaults_Job` (JobPodReplacementPolicy is on by default in 1.32).
pub(crate) fn job(job: &mut Object) {
    let template_labels = job
        .get("spec")
        .and_then(|spec| spec.pointer("/template/metadata/labels"))
        .filter(|labels| labels.as_object().is_some_and(|l| !l.is_empty()))
        .cloned();
    let Some(spec) = ensure_child(job, "spec") else {
        return;
    };
    if is_nil(spec, "completions") && is_nil(spec, "parallelism") {
        spec.insert("completions".into(), json!(1));
    }
    default_pointer(spec, "parallelism", json!(1));
    if is_nil(spec, "backoffLimit") {
        // With a per-index limit the global one must not cut in first.
        let backoff_limit = if is_nil(spec, "backoffLimitPerIndex") {
            6
        } else {
            i32::MAX
        };
        spec.insert("backoffLimit".into(), json!(backoff_limit));
    }
    default_pointer(spec, "completionMode", json!("NonIndexed"));
    default_pointer(spec, "suspend", json!(false));
    if is_nil(spec, "podReplacementPolicy") {
        let policy = if is_nil(spec, "podFailurePolicy") {
            "TerminatingOrFailed"
        } else {
            "Failed"
        };
        spec.insert("podReplacementPolicy".into(), json!(policy));
    }
    default_pointer(spec, "manualSelector", json!(false));
    job_spec_nested(spec);
    if let Some(labels) = template_labels {
        if let Some(meta) = ensure_child(job, "metadata") {
            default_zero(meta, "labels", labels);
        }
    }
}

/// `SetDefaults_CronJob`. The job template gets only the type-level defaults
/// beneath it (pod template, failure-policy patterns): `SetDefaults_Job` is
/// registered for Job objects, not for the JobSpec inside a JobTemplateSpec.
pub(crate) fn cron_job(cron_job: &mut Object) {
    let Some(spec) = ensure_child(cron_job, "spec") else {
        return;
    };
    default_zero(spec, "concurrencyPolicy", json!("Allow"));
    default_pointer(spec, "suspend", json!(false));
    default_pointer(spec, "successfulJobsHistoryLimit", json!(3));
    default_pointer(spec, "failedJobsHistoryLimit", json!(1));
    if let Some(job_template) = ensure_child(spec, "jobTemplate") {
        if let Some(job_template_meta) = ensure_child(job_template, "metadata") {
            // Non-pointer ObjectMeta: upstream encodes its zero timestamp as null.
            job_template_meta
                .entry("creationTimestamp")
                .or_insert(Value::Null);
        }
        if let Some(job_spec) = ensure_child(job_template, "spec") {
            job_spec_nested(job_spec);
        }
    }
}

/// What zz_generated calls beneath a JobSpec.
fn job_spec_nested(spec: &mut Object) {
    if let Some(policy) = child(spec, "podFailurePolicy") {
        each_item(policy, "rules", |rule| {
            each_item(rule, "onPodConditions", |pattern| {
                default_zero(pattern, "status", json!("True"));
            });
        });
    }
    if let Some(template) = ensure_child(spec, "template") {
        pod_template_spec(template);
    }
}

/// Job label keys of pkg/apis/batch (the legacy unprefixed ones are still set).
const JOB_NAME_LABELS: [&str; 2] = ["job-name", "batch.kubernetes.io/job-name"];
const CONTROLLER_UID_LABELS: [&str; 2] = ["controller-uid", "batch.kubernetes.io/controller-uid"];
const CONTROLLER_UID_LABEL: &str = "batch.kubernetes.io/controller-uid";

/// The Job strategy's `generateSelector` (PrepareForCreate, not a defaulter):
/// unless `spec.manualSelector` is true, labels the pod template with the job's
/// name and `uid` and selects `batch.kubernetes.io/controller-uid=<uid>`.
/// Labels the user already set are kept (validation rejects conflicts). Call it
/// on create once `metadata.name` (after generateName) and the uid are known,
/// then apply the defaults once more: upstream re-defaults every object it
/// decodes from storage, which is how a label-less Job ends up with the
/// generated template labels as its own `metadata.labels` in the create
/// response and on every read.
pub fn generate_job_selector(object: &mut Value, uid: &str) {
    let Some(job) = object.as_object_mut() else {
        return;
    };
    let name = job
        .get("metadata")
        .and_then(|meta| meta.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let Some(spec) = ensure_child(job, "spec") else {
        return;
    };
    if spec.get("manualSelector").and_then(Value::as_bool) == Some(true) {
        return;
    }
    if let Some(labels) = ensure_child(spec, "template")
        .and_then(|template| ensure_child(template, "metadata"))
        .and_then(|meta| ensure_child(meta, "labels"))
    {
        for key in JOB_NAME_LABELS {
            labels.entry(key).or_insert_with(|| json!(name));
        }
        for key in CONTROLLER_UID_LABELS {
            labels.entry(key).or_insert_with(|| json!(uid));
        }
    }
    if let Some(match_labels) =
        ensure_child(spec, "selector").and_then(|selector| ensure_child(selector, "matchLabels"))
    {
        match_labels
            .entry(CONTROLLER_UID_LABEL)
            .or_insert_with(|| json!(uid));
    }
}
