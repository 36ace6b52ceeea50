//! Job (batch/v1): pods that run to completion.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::Printer;
use crate::registry::ResourceDef;
use crate::validate::batch as rules;

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
    fn prepare_for_create(&self, object: &mut Value) {
        let uid = object
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        crate::defaults::generate_job_selector(object, &uid);
    }

    fn tracks_generation(&self) -> bool {
        true
    }

    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        crate::defaults::batch::job(object);
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        rules::job(object)
    }

    fn validate_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = rules::job(object);
        errs.extend(rules::job_update(object, old));
        errs
    }

    fn absent_field_value(&self, field: &str) -> &'static str {
        match field {
            "status.successful" => "0",
            _ => "",
        }
    }

    fn printer(&self) -> Printer {
        Printer::Job
    }
}
