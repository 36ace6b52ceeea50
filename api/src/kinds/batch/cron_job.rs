//! CronJob (batch/v1): Jobs on a schedule.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::defaults::job_spec::job_spec_nested;
use crate::defaults::{default_pointer, default_zero, ensure_child, Object};
use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::descriptions::D_JOB_SELECTOR;
use crate::printers::values::{
    age, boolean, container_cells, format_label_selector, get, len_of, name, print_bool, ptr_str,
    text, timestamp,
};
use crate::printers::{age_col, col, containers_images_cols, name_col, wide, Cell, TableColumn};
use crate::registry::ResourceDef;
use crate::validate::job_spec::job_spec;
use crate::validate::meta::{self, go_label_selector};
use crate::validate::{bool_of, child, field, int_of, opt, str_of};

pub struct CronJob;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "batch",
        "v1",
        "cronjobs",
        "CronJob",
        true,
        Arc::new(CronJob),
    )
    .short_names(&["cj"])
    .categories(&["all"])
    .subresources(&["status"])]
}

impl Kind for CronJob {
    fn pod_template<'a>(&self, object: &'a Value) -> Option<&'a Value> {
        object.pointer("/spec/jobTemplate/spec/template")
    }

    fn tracks_generation(&self) -> bool {
        true
    }

    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        set_defaults(object);
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        let mut errs = validate(object);
        errs.extend(validate_name_length(object));
        errs
    }

    fn validate_update(&self, object: &Value, _old: &Value) -> Vec<FieldError> {
        validate(object)
    }

    fn table_columns(&self) -> Vec<TableColumn> {
        let mut c = vec![
            name_col(),
            col("Schedule", "string", D_CJ_SCHEDULE),
            col("Timezone", "string", D_CJ_TIMEZONE),
            col("Suspend", "boolean", D_CJ_SUSPEND),
            col("Active", "integer", D_CJ_ACTIVE),
            col("Last Schedule", "string", D_CJ_LAST_SCHEDULE),
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

/// `SetDefaults_CronJob`. The job template gets only the type-level defaults
/// beneath it (pod template, failure-policy patterns): `SetDefaults_Job` is
/// registered for Job objects, not for the JobSpec inside a JobTemplateSpec.
fn set_defaults(cron_job: &mut Object) {
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

fn validate(object: &Value) -> Vec<FieldError> {
    cron_job_spec(field(object, "spec"))
}

/// Job names get an 11-character suffix, so a new CronJob's name is capped
/// at 52 (upstream skips this on update so older objects stay editable).
fn validate_name_length(object: &Value) -> Vec<FieldError> {
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
    if bool_of(job_spec_value, "manualSelector") {
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
fn parse_schedule(spec: &str) -> Result<(), String> {
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

const D_CJ_SCHEDULE: &str = "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.";
const D_CJ_TIMEZONE: &str = "The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones. If not specified, this will default to the time zone of the kube-controller-manager process. The set of valid time zone names and the time zone offset is loaded from the system-wide time zone database by the API server during CronJob validation and the controller manager during execution. If no system-wide time zone database can be found a bundled version of the database is used instead. If the time zone name becomes invalid during the lifetime of a CronJob or due to a change in host configuration, the controller will stop creating new new Jobs and will create a system event with the reason UnknownTimeZone. More information can be found in https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#time-zones";
const D_CJ_SUSPEND: &str = "This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.  Defaults to false.";
const D_CJ_ACTIVE: &str = "A list of pointers to currently running jobs.";
const D_CJ_LAST_SCHEDULE: &str =
    "Information when was the last time the job was successfully scheduled.";

fn cells(cj: &Value) -> Vec<Cell> {
    let last_schedule = match timestamp(cj, "/status/lastScheduleTime") {
        Some(t) => Cell::since(Some(t)),
        None => "<none>".into(),
    };
    let time_zone = ptr_str(cj, "/spec/timeZone", "<none>");
    let (names, images) = container_cells(get(cj, "/spec/jobTemplate/spec/template/spec"));
    vec![
        name(cj).into(),
        text(cj, "/spec/schedule").into(),
        time_zone.into(),
        print_bool(boolean(cj, "/spec/suspend").unwrap_or(false)).into(),
        len_of(cj, "/status/active").into(),
        last_schedule,
        age(cj),
        names.into(),
        images.into(),
        format_label_selector(get(cj, "/spec/jobTemplate/spec/selector")).into(),
    ]
}
