//! The cells of the batch/v1 printers.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::values::*;

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
