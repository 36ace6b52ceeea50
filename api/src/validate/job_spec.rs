//! The JobSpec checks a Job and a CronJob's job template share.

use serde_json::Value;

use super::meta;
use super::pod;
use super::{child, field, int_of, opt, str_of};
use crate::error::FieldError;

/// validateJobSpec: counts, completion mode, the template and its restart
/// policy (Always is not allowed for a Job).
pub(crate) fn job_spec(spec: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for name in [
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "ttlSecondsAfterFinished",
    ] {
        if let Some(value) = int_of(spec, name) {
            errs.extend(meta::nonnegative(value, &child(path, name)));
        }
    }
    if let Some(mode) = opt(spec, "completionMode").and_then(Value::as_str) {
        match mode {
            "NonIndexed" => {}
            "Indexed" => {
                if opt(spec, "completions").is_none() {
                    errs.push(FieldError::required(
                        child(path, "completions"),
                        "when completion mode is Indexed",
                    ));
                }
            }
            other => errs.push(FieldError::not_supported(
                child(path, "completionMode"),
                other,
                &["NonIndexed", "Indexed"],
            )),
        }
    }
    let template = field(spec, "template");
    let template_path = child(path, "template");
    errs.extend(pod::template_spec(template, &template_path));
    let policy_path = child(&child(&template_path, "spec"), "restartPolicy");
    match str_of(field(template, "spec"), "restartPolicy") {
        "Always" | "" => errs.push(FieldError::required(
            policy_path,
            "valid values: \"OnFailure\", \"Never\"",
        )),
        "OnFailure" if opt(spec, "podFailurePolicy").is_some() => errs.push(FieldError::invalid(
            policy_path,
            "OnFailure",
            "only \"Never\" is supported when podFailurePolicy is specified",
        )),
        "OnFailure" | "Never" => {}
        other => errs.push(FieldError::not_supported(
            policy_path,
            other,
            &["OnFailure", "Never"],
        )),
    }
    errs
}
