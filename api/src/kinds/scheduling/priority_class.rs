//! PriorityClass (scheduling.k8s.io/v1): a priority pods can ask for.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::Printer;
use crate::registry::ResourceDef;
use crate::validate::scheduling as rules;

pub struct PriorityClass;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "scheduling.k8s.io",
        "v1",
        "priorityclasses",
        "PriorityClass",
        false,
        Arc::new(PriorityClass),
    )
    .short_names(&["pc"])]
}

impl Kind for PriorityClass {
    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        crate::defaults::other::priority_class(object);
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        rules::priority_class(object)
    }

    fn validate_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = rules::priority_class(object);
        errs.extend(rules::priority_class_update(object, old));
        errs
    }

    fn printer(&self) -> Printer {
        Printer::PriorityClass
    }
}
