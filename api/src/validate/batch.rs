//! batch/v1: Job and CronJob, with robfig/cron's schedule parser rules.

use serde_json::Value;

use super::meta::{self, go_label_selector, go_opt_int};
use super::pod;
use super::{child, field, int_of, map_of, opt, str_of};
use crate::error::FieldError;

pub fn job(object: &Value) -> Vec<FieldError> {
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

/// validateJobSpec: counts, completion mode, the template and its restart
/// policy (Always is not allowed for a Job).
fn job_spec(spec: &Value, path: &str) -> Vec<FieldError> {
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

/// ValidateJobSpecUpdate: selector, completions, completionMode and (unless
/// the job is suspended and never started) the template are fixed.
pub fn job_update(object: &Value, old: &Value) -> Vec<FieldError> {
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
    let suspended = super::bool_of(new_spec, "suspend");
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

pub fn cron_job(object: &Value) -> Vec<FieldError> {
    cron_job_spec(field(object, "spec"))
}

/// Job names get an 11-character suffix, so a new CronJob's name is capped
/// at 52 (upstream skips this on update so older objects stay editable).
pub fn cron_job_create_only(object: &Value) -> Vec<FieldError> {
    let name = str_of(field(object, "metadata"), "name");
    if name.len() > 52 {
        return vec![FieldError::invalid(
            "metadata.name",
            name,
            "must be no more than 52 characters",
        )];
    }
    Vec::new()
}

/// validateCronJobSpec. Upstream lets an object whose stored schedule already
/// uses TZ keep it on update; that legacy allowance is not carried.
fn cron_job_spec(spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let schedule = str_of(spec, "schedule");
    if schedule.is_empty() {
        errs.push(FieldError::required("spec.schedule", ""));
    } else {
        if let Err(msg) = parse_schedule(schedule) {
            errs.push(FieldError::invalid("spec.schedule", schedule, &msg));
        }
        if schedule.contains("TZ") {
            errs.push(FieldError::invalid(
                "spec.schedule",
                schedule,
                "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
            ));
        }
    }
    if let Some(deadline) = int_of(spec, "startingDeadlineSeconds") {
        errs.extend(meta::nonnegative(deadline, "spec.startingDeadlineSeconds"));
    }
    if let Some(zone) = opt(spec, "timeZone").and_then(Value::as_str) {
        if zone.is_empty() {
            errs.push(FieldError::invalid(
                "spec.timeZone",
                zone,
                "timeZone must be nil or non-empty string",
            ));
        } else if zone.eq_ignore_ascii_case("Local") {
            errs.push(FieldError::invalid(
                "spec.timeZone",
                zone,
                "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
            ));
        } else if let Some(problem) = time_zone_problem(zone) {
            errs.push(FieldError::invalid("spec.timeZone", zone, &problem));
        }
    }
    match str_of(spec, "concurrencyPolicy") {
        "" | "Allow" | "Forbid" | "Replace" => {}
        other => errs.push(FieldError::not_supported(
            "spec.concurrencyPolicy",
            other,
            &["Allow", "Forbid", "Replace"],
        )),
    }
    let job_template = field(spec, "jobTemplate");
    let job_spec_value = field(job_template, "spec");
    errs.extend(job_spec(job_spec_value, "spec.jobTemplate.spec"));
    if let Some(selector) = opt(job_spec_value, "selector") {
        errs.push(FieldError::invalid_rendered(
            "spec.jobTemplate.spec.selector",
            &go_label_selector(Some(selector)),
            "`selector` will be auto-generated",
        ));
    }
    if super::bool_of(job_spec_value, "manualSelector") {
        errs.push(FieldError::not_supported_rendered(
            "spec.jobTemplate.spec.manualSelector",
            "true",
            &["nil", "false"],
        ));
    }
    for name in ["successfulJobsHistoryLimit", "failedJobsHistoryLimit"] {
        if let Some(limit) = int_of(spec, name) {
            errs.extend(meta::nonnegative(limit, &child("spec", name)));
        }
    }
    errs
}

/// One cron field's bounds and names.
struct Bounds {
    min: u32,
    max: u32,
    names: &'static [(&'static str, u32)],
}

const MONTH_NAMES: &[(&str, u32)] = &[
    ("jan", 1),
    ("feb", 2),
    ("mar", 3),
    ("apr", 4),
    ("may", 5),
    ("jun", 6),
    ("jul", 7),
    ("aug", 8),
    ("sep", 9),
    ("oct", 10),
    ("nov", 11),
    ("dec", 12),
];
const DOW_NAMES: &[(&str, u32)] = &[
    ("sun", 0),
    ("mon", 1),
    ("tue", 2),
    ("wed", 3),
    ("thu", 4),
    ("fri", 5),
    ("sat", 6),
];

const FIELDS: [Bounds; 5] = [
    Bounds {
        min: 0,
        max: 59,
        names: &[],
    },
    Bounds {
        min: 0,
        max: 23,
        names: &[],
    },
    Bounds {
        min: 1,
        max: 31,
        names: &[],
    },
    Bounds {
        min: 1,
        max: 12,
        names: MONTH_NAMES,
    },
    Bounds {
        min: 0,
        max: 6,
        names: DOW_NAMES,
    },
];

/// cron.ParseStandard: five fields or a descriptor; Err carries robfig/cron's
/// message.
pub fn parse_schedule(spec: &str) -> Result<(), String> {
    let mut spec = spec.to_string();
    if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
        let Some(space) = spec.find(' ') else {
            return Err(format!("provided bad location {spec}: unknown time zone"));
        };
        spec = spec[space..].trim().to_string();
    }
    if let Some(descriptor) = spec.strip_prefix('@') {
        return match descriptor {
            "yearly" | "annually" | "monthly" | "weekly" | "daily" | "midnight" | "hourly" => {
                Ok(())
            }
            _ => match descriptor.strip_prefix("every ") {
                Some(duration) if go_duration_ok(duration) => Ok(()),
                Some(duration) => Err(format!(
                    "failed to parse duration {spec}: time: invalid duration {}",
                    meta::go_quote(duration)
                )),
                None => Err(format!("unrecognized descriptor: {spec}")),
            },
        };
    }
    let fields: Vec<&str> = spec.split_whitespace().collect();
    if fields.len() != 5 {
        return Err(format!(
            "expected exactly 5 fields, found {}: [{}]",
            fields.len(),
            fields.join(" ")
        ));
    }
    for (text, bounds) in fields.iter().zip(FIELDS.iter()) {
        for expr in text.split(',') {
            range(expr, bounds)?;
        }
    }
    Ok(())
}

fn range(expr: &str, bounds: &Bounds) -> Result<(), String> {
    let range_and_step: Vec<&str> = expr.split('/').collect();
    let low_and_high: Vec<&str> = range_and_step[0].split('-').collect();
    let single = low_and_high.len() == 1;
    let (start, mut end) = if low_and_high[0] == "*" || low_and_high[0] == "?" {
        (bounds.min, bounds.max)
    } else {
        let start = int_or_name(low_and_high[0], bounds)?;
        let end = match low_and_high.len() {
            1 => start,
            2 => int_or_name(low_and_high[1], bounds)?,
            _ => return Err(format!("too many hyphens: {expr}")),
        };
        (start, end)
    };
    let step = match range_and_step.len() {
        1 => 1,
        2 => {
            let step = parse_uint(range_and_step[1])?;
            if single {
                end = bounds.max;
            }
            step
        }
        _ => return Err(format!("too many slashes: {expr}")),
    };
    if start < bounds.min {
        return Err(format!(
            "beginning of range ({start}) below minimum ({}): {expr}",
            bounds.min
        ));
    }
    if end > bounds.max {
        return Err(format!(
            "end of range ({end}) above maximum ({}): {expr}",
            bounds.max
        ));
    }
    if start > end {
        return Err(format!(
            "beginning of range ({start}) beyond end of range ({end}): {expr}"
        ));
    }
    if step == 0 {
        return Err(format!("step of range should be a positive number: {expr}"));
    }
    Ok(())
}

fn int_or_name(expr: &str, bounds: &Bounds) -> Result<u32, String> {
    let lower = expr.to_lowercase();
    if let Some((_, value)) = bounds.names.iter().find(|(name, _)| *name == lower) {
        return Ok(*value);
    }
    parse_uint(expr)
}

/// mustParseInt, with strconv.Atoi's error text.
fn parse_uint(expr: &str) -> Result<u32, String> {
    let digits = expr.strip_prefix(['+', '-']).unwrap_or(expr);
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        return Err(format!(
            "failed to parse int from {expr}: strconv.Atoi: parsing {}: invalid syntax",
            meta::go_quote(expr)
        ));
    }
    let value: i64 = expr.parse().map_err(|_| {
        format!(
            "failed to parse int from {expr}: strconv.Atoi: parsing {}: value out of range",
            meta::go_quote(expr)
        )
    })?;
    if value < 0 {
        return Err(format!("negative number ({value}) not allowed: {expr}"));
    }
    u32::try_from(value).map_err(|_| format!("end of range ({value}) above maximum: {expr}"))
}

/// Whether Go's time.ParseDuration accepts `text` (e.g. "1h30m", "90s").
fn go_duration_ok(text: &str) -> bool {
    let mut rest = text.strip_prefix(['+', '-']).unwrap_or(text);
    if rest == "0" {
        return true;
    }
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if number_len == 0 {
            return false;
        }
        rest = &rest[number_len..];
        let unit = ["ns", "us", "µs", "μs", "ms", "s", "m", "h"]
            .iter()
            .find(|u| rest.starts_with(**u));
        match unit {
            Some(u) => rest = &rest[u.len()..],
            None => return false,
        }
    }
    true
}

/// What Go's time.LoadLocation says of `zone`, if it fails. Upstream embeds
/// the IANA database (time/tzdata); here the system's copy is asked, and a
/// machine without one accepts any well-formed name rather than refusing
/// valid ones.
fn time_zone_problem(zone: &str) -> Option<String> {
    if zone == "UTC" {
        return None;
    }
    let malformed = zone.starts_with('/')
        || zone.contains('\\')
        || zone.split('/').any(|part| part == ".." || part.is_empty());
    if malformed {
        return Some("time: invalid location name".to_string());
    }
    let databases = [
        "/usr/share/zoneinfo",
        "/usr/share/lib/zoneinfo",
        "/etc/zoneinfo",
    ];
    let database = databases
        .iter()
        .map(std::path::Path::new)
        .find(|dir| dir.join("UTC").is_file())?;
    (!database.join(zone).is_file()).then(|| format!("unknown time zone {zone}"))
}
