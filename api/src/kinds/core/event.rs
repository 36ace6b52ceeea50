//! Event (core/v1): a report of something that happened to an object.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::kinds::Kind;
use crate::printers::Printer;
use crate::registry::ResourceDef;

pub struct Event;

pub fn resources() -> Vec<ResourceDef> {
    let kind = Arc::new(Event);
    vec![
        ResourceDef::new("", "v1", "events", "Event", true, kind.clone())
            .short_names(&["ev"])
            .selectable_fields(&[
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
            ]),
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
