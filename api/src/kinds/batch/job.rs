//! Job (batch/v1): pods that run to completion.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::defaults::job_spec::job_spec_nested;
use crate::defaults::{default_pointer, default_zero, ensure_child, is_nil, Object};
use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::descriptions::D_JOB_SELECTOR;
use crate::printers::values::{
    age, condition_true, container_cells, deleting, format_label_selector, get, human_duration,
    int, int_opt, items, name, timestamp,
};
use crate::printers::{age_col, col, containers_images_cols, name_col, wide, Cell, TableColumn};
use crate::registry::ResourceDef;
use crate::validate::job_spec::job_spec;
use crate::validate::meta::{self, go_label_selector, go_opt_int};
use crate::validate::pod;
use crate::validate::{bool_of, child, field, int_of, map_of, opt};

pub struct Job;

pub fn resources() -> Vec<ResourceDef> {
    vec![
        ResourceDef::new("batch", "v1", "jobs", "Job", true, Arc::new(Job))
            .categories(&["all"])
            .subresources(&["status"])
            .selectable_fields(&["status.successful"]),
    ]
}

impl Kind for Job {
    fn pod_template<'a>(&self, object: &'a Value) -> Option<&'a Value> {
        object.pointer("/spec/template")
    }

    fn prepare_for_create(&self, object: &mut Value) {
        let uid = object
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        generate_job_selector(object, &uid);
    }

    fn tracks_generation(&self) -> bool {
        true
    }

    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        set_defaults(object);
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        validate(object)
    }

    fn validate_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = validate(object);
        errs.extend(validate_update(object, old));
        errs
    }

    fn absent_field_value(&self, field: &str) -> &'static str {
        match field {
            "status.successful" => "0",
            _ => "",
        }
    }

    fn table_columns(&self) -> Vec<TableColumn> {
        let mut c = vec![
            name_col(),
            col("Status", "string", "Status of the job."),
            col("Completions", "string", D_JOB_SUCCEEDED),
            col("Duration", "string", "Time required to complete the job."),
            age_col(),
        ];
        c.extend(containers_images_cols());
        c.push(wide("Selector", "string", D_JOB_SELECTOR));
        c
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        cells(object)
    }
}

/// `SetDefaults_Job` (JobPodReplacementPolicy is on by default in 1.32).
fn set_defaults(job: &mut Object) {
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
pub(crate) fn generate_job_selector(object: &mut Value, uid: &str) {
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

fn validate(object: &Value) -> Vec<FieldError> {
    let spec = field(object, "spec");
    let mut errs = job_spec(spec, "spec");
    // The Job strategy generates the selector when the client leaves it out
    // (manualSelector unset), so only a client-supplied one is checked here.
    if let Some(selector) = opt(spec, "selector") {
        errs.extend(meta::label_selector(Some(selector), "spec.selector"));
        let labels = map_of(field(field(spec, "template"), "metadata"), "labels");
        if !meta::selector_matches(selector, labels) {
            errs.push(FieldError::invalid_rendered(
                "spec.template.metadata.labels",
                &pod::template_labels_rendered(field(spec, "template")),
                "`selector` does not match template `labels`",
            ));
        }
    }
    errs
}

/// ValidateJobSpecUpdate: selector, completions, completionMode and (unless
/// the job is suspended and never started) the template are fixed.
fn validate_update(object: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let new_spec = field(object, "spec");
    let old_spec = field(old, "spec");
    let new_completions = int_of(new_spec, "completions");
    if new_completions != int_of(old_spec, "completions") {
        errs.push(FieldError::immutable(
            "spec.completions",
            &go_opt_int(new_completions),
        ));
    }
    let new_selector = opt(new_spec, "selector");
    if new_selector != opt(old_spec, "selector") {
        errs.push(FieldError::immutable(
            "spec.selector",
            &go_label_selector(new_selector),
        ));
    }
    let new_template = field(new_spec, "template");
    let old_template = field(old_spec, "template");
    let never_started = opt(field(old, "status"), "startTime").is_none();
    let suspended = bool_of(new_spec, "suspend");
    let comparable = |t: &Value| {
        if suspended && never_started {
            without_scheduling_directives(t)
        } else {
            t.clone()
        }
    };
    if !meta::semantically_equal(&comparable(new_template), &comparable(old_template)) {
        errs.push(FieldError::immutable(
            "spec.template",
            &format!("core.PodTemplateSpec{}", new_template),
        ));
    }
    for name in ["completionMode", "podFailurePolicy", "managedBy"] {
        let new_value = opt(new_spec, name);
        if new_value != opt(old_spec, name) {
            let rendered = match new_value {
                Some(Value::String(s)) => meta::go_quote(s),
                Some(other) => other.to_string(),
                None => "\"null\"".to_string(),
            };
            errs.push(FieldError::immutable(child("spec", name), &rendered));
        }
    }
    errs
}

/// A suspended Job that never ran may change its pods' scheduling
/// directives: node affinity, node selector, tolerations, scheduling gates,
/// labels and annotations.
fn without_scheduling_directives(template: &Value) -> Value {
    let mut t = template.clone();
    if let Some(meta) = t.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("labels");
        meta.remove("annotations");
    }
    if let Some(spec) = t.get_mut("spec").and_then(Value::as_object_mut) {
        for name in ["nodeSelector", "tolerations", "schedulingGates"] {
            spec.remove(name);
        }
        if let Some(affinity) = spec.get_mut("affinity").and_then(Value::as_object_mut) {
            affinity.remove("nodeAffinity");
        }
    }
    t
}

const D_JOB_SUCCEEDED: &str = "The number of pods which reached phase Succeeded. The value increases monotonically for a given spec. However, it may decrease in reaction to scale down of elastic indexed jobs.";

fn cells(job: &Value) -> Vec<Cell> {
    let succeeded = int(job, "/status/succeeded");
    let completions = match int_opt(job, "/spec/completions") {
        Some(c) => format!("{succeeded}/{c}"),
        None => match int(job, "/spec/parallelism") {
            p if p > 1 => format!("{succeeded}/1 of {p}"),
            _ => format!("{succeeded}/1"),
        },
    };
    let duration = match (
        timestamp(job, "/status/startTime"),
        timestamp(job, "/status/completionTime"),
    ) {
        (None, _) => String::new().into(),
        (Some(start), None) => Cell::since(Some(start)),
        (Some(start), Some(end)) => human_duration(end - start).into(),
    };
    let conditions = items(job, "/status/conditions");
    let status = if condition_true(conditions, "Complete") {
        "Complete"
    } else if condition_true(conditions, "Failed") {
        "Failed"
    } else if deleting(job) {
        "Terminating"
    } else if condition_true(conditions, "Suspended") {
        "Suspended"
    } else if condition_true(conditions, "FailureTarget") {
        "FailureTarget"
    } else {
        "Running"
    };
    let (names, images) = container_cells(get(job, "/spec/template/spec"));
    vec![
        name(job).into(),
        status.into(),
        completions.into(),
        duration,
        age(job),
        names.into(),
        images.into(),
        format_label_selector(get(job, "/spec/selector")).into(),
    ]
}
