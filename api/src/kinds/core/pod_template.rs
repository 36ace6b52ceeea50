//! PodTemplate (core/v1): a template for pods.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::Printer;
use crate::registry::ResourceDef;
use crate::validate::corev1 as rules;

pub struct PodTemplate;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "",
        "v1",
        "podtemplates",
        "PodTemplate",
        true,
        Arc::new(PodTemplate),
    )]
}

impl Kind for PodTemplate {
    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        crate::defaults::core_v1::pod_template(object);
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        rules::pod_template(object)
    }

    fn validate_update(&self, object: &Value, _old: &Value) -> Vec<FieldError> {
        rules::pod_template(object)
    }

    fn printer(&self) -> Printer {
        Printer::PodTemplate
    }
}
