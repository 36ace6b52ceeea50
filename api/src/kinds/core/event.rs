//! Event (core/v1): a report of something that happened to an object.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::kinds::Kind;
use crate::printers::Printer;
use crate::registry::ResourceDef;

pub struct Event;

/// The fields events can be selected by (upstream's event GetAttrs); the
/// events.k8s.io view selects by the same, as selectors match the stored form.
pub(crate) const SELECTABLE_FIELDS: &[&str] = &[
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
];

pub fn resources() -> Vec<ResourceDef> {
    vec![
        ResourceDef::new("", "v1", "events", "Event", true, Arc::new(Event))
            .short_names(&["ev"])
            .selectable_fields(SELECTABLE_FIELDS),
    ]
}

impl Kind for Event {
    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        crate::defaults::core_v1::event(object);
    }

    fn printer(&self) -> Printer {
        Printer::Event { events_api: false }
    }
}
