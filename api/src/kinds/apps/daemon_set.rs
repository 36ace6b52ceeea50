//! DaemonSet (apps/v1): one pod on each node.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::Printer;
use crate::registry::ResourceDef;
use crate::validate::apps as rules;

pub struct DaemonSet;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "apps",
        "v1",
        "daemonsets",
        "DaemonSet",
        true,
        Arc::new(DaemonSet),
    )
    .short_names(&["ds"])
    .categories(&["all"])
    .subresources(&["status"])]
}

impl Kind for DaemonSet {
    fn tracks_generation(&self) -> bool {
        true
    }

    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        crate::defaults::apps::daemon_set(object);
    }

    fn empty_status(&self) -> Value {
        json!({
            "currentNumberScheduled": 0,
            "numberMisscheduled": 0,
            "desiredNumberScheduled": 0,
            "numberReady": 0,
        })
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        rules::daemon_set(object)
    }

    fn validate_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = rules::daemon_set(object);
        errs.extend(rules::selector_update(object, old));
        errs
    }

    fn validate_status_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        rules::daemon_set_status(object, old)
    }

    fn printer(&self) -> Printer {
        Printer::DaemonSet
    }
}
