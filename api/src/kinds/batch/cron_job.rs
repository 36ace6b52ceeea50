//! CronJob (batch/v1): Jobs on a schedule.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::Printer;
use crate::registry::ResourceDef;
use crate::validate::batch as rules;

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
    fn tracks_generation(&self) -> bool {
        true
    }

    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        crate::defaults::batch::cron_job(object);
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        let mut errs = rules::cron_job(object);
        errs.extend(rules::cron_job_create_only(object));
        errs
    }

    fn validate_update(&self, object: &Value, _old: &Value) -> Vec<FieldError> {
        rules::cron_job(object)
    }

    fn printer(&self) -> Printer {
        Printer::CronJob
    }
}
