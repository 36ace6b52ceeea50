//! Event (events.k8s.io/v1): a second view of core/v1 events, stored as them.

use std::sync::Arc;

use serde_json::Value;

use crate::conversion::ConversionError;
use crate::kinds::Kind;
use crate::printers::Printer;
use crate::registry::ResourceDef;

pub struct Event;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "events.k8s.io",
        "v1",
        "events",
        "Event",
        true,
        Arc::new(Event),
    )
    .short_names(&["ev"])
    .selectable_fields(crate::kinds::core::event::SELECTABLE_FIELDS)
    .stored_as("", "v1", "Event")]
}

impl Kind for Event {
    fn convert(&self, object: Value, target_api_version: &str) -> Result<Value, ConversionError> {
        crate::conversion::event(object, target_api_version)
    }

    fn printer(&self) -> Printer {
        Printer::Event { events_api: true }
    }
}
