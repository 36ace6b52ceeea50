//! The cells of the apps/v1 and batch/v1 printers.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::values::*;

// ---------------------------------------------------------------------------
// apps/v1

pub(super) fn deployment_cells(d: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let desired = int_opt(d, "/spec/replicas").unwrap_or(1);
    let (names, images) = container_cells(get(d, "/spec/template/spec"));
    // Unlike the other workloads, upstream prints the raw selector string
    // here, without the "<none>" substitution.
    let selector =
        label_selector_string(get(d, "/spec/selector")).unwrap_or_else(|| "<invalid>".to_string());
    vec![
        name(d).into(),
        format!("{}/{desired}", int(d, "/status/readyReplicas")).into(),
        int(d, "/status/updatedReplicas").into(),
        int(d, "/status/availableReplicas").into(),
        age(d, now),
        names.into(),
        images.into(),
        selector.into(),
    ]
}

pub(super) fn replica_set_cells(rs: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let (names, images) = container_cells(get(rs, "/spec/template/spec"));
    vec![
        name(rs).into(),
        int_opt(rs, "/spec/replicas").unwrap_or(1).into(),
        int(rs, "/status/replicas").into(),
        int(rs, "/status/readyReplicas").into(),
        age(rs, now),
        names.into(),
        images.into(),
        format_label_selector(get(rs, "/spec/selector")).into(),
    ]
}

pub(super) fn statefulset_cells(ss: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let (names, images) = container_cells(get(ss, "/spec/template/spec"));
    vec![
        name(ss).into(),
        format!(
            "{}/{}",
            int(ss, "/status/readyReplicas"),
            int_opt(ss, "/spec/replicas").unwrap_or(1)
        )
        .into(),
        age(ss, now),
        names.into(),
        images.into(),
    ]
}

pub(super) fn daemonset_cells(ds: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let (names, images) = container_cells(get(ds, "/spec/template/spec"));
    vec![
        name(ds).into(),
        int(ds, "/status/desiredNumberScheduled").into(),
        int(ds, "/status/currentNumberScheduled").into(),
        int(ds, "/status/numberReady").into(),
        int(ds, "/status/updatedNumberScheduled").into(),
        int(ds, "/status/numberAvailable").into(),
        format_labels(ds, "/spec/template/spec/nodeSelector").into(),
        age(ds, now),
        names.into(),
        images.into(),
        format_label_selector(get(ds, "/spec/selector")).into(),
    ]
}

pub(super) fn controller_revision_cells(cr: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let controller = items(cr, "/metadata/ownerReferences")
        .iter()
        .find(|r| boolean(r, "/controller") == Some(true))
        .map(|r| {
            let group = match text(r, "/apiVersion").split_once('/') {
                Some((g, _)) => g,
                None => "",
            };
            let kind = text(r, "/kind");
            let ref_name = text(r, "/name");
            // formatResourceName: "kind.group/name", lower-cased, or just the
            // name when the kind is unknown.
            match (kind, group) {
                ("", "") => ref_name.to_string(),
                (k, "") => format!("{}/{ref_name}", k.to_lowercase()),
                (k, g) => format!("{}/{ref_name}", format!("{k}.{g}").to_lowercase()),
            }
        })
        .unwrap_or_else(|| "<none>".to_string());
    vec![
        name(cr).into(),
        controller.into(),
        int(cr, "/revision").into(),
        age(cr, now),
    ]
}

// ---------------------------------------------------------------------------
// batch/v1

pub(super) fn job_cells(job: &Value, now: DateTime<Utc>) -> Vec<Value> {
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
        (None, _) => String::new(),
        (Some(start), None) => human_duration(now - start),
        (Some(start), Some(end)) => human_duration(end - start),
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
        duration.into(),
        age(job, now),
        names.into(),
        images.into(),
        format_label_selector(get(job, "/spec/selector")).into(),
    ]
}

pub(super) fn cronjob_cells(cj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let last_schedule = match timestamp(cj, "/status/lastScheduleTime") {
        Some(t) => since(Some(t), now),
        None => "<none>".to_string(),
    };
    let time_zone = ptr_str(cj, "/spec/timeZone", "<none>");
    let (names, images) = container_cells(get(cj, "/spec/jobTemplate/spec/template/spec"));
    vec![
        name(cj).into(),
        text(cj, "/spec/schedule").into(),
        time_zone.into(),
        print_bool(boolean(cj, "/spec/suspend").unwrap_or(false)).into(),
        len_of(cj, "/status/active").into(),
        last_schedule.into(),
        age(cj, now),
        names.into(),
        images.into(),
        format_label_selector(get(cj, "/spec/jobTemplate/spec/selector")).into(),
    ]
}
