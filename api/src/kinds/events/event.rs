//! Event (events.k8s.io/v1): a second view of core/v1 events, stored as them.
//!
//! Upstream's events/v1 conversion renames fields and moves nothing else, so
//! the mapping is a table and the round trip is lossless.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::conversion::{type_meta, unsupported, ConversionError};
use crate::kinds::core::event::{cells, columns, SELECTABLE_FIELDS};
use crate::kinds::Kind;
use crate::printers::{Cell, TableColumn};
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
    .selectable_fields(SELECTABLE_FIELDS)
    .stored_as("", "v1", "Event")]
}

impl Kind for Event {
    /// Between core/v1 (the storage version) and events.k8s.io/v1.
    fn convert(&self, object: Value, target_api_version: &str) -> Result<Value, ConversionError> {
        let (api_version, kind) = type_meta(&object)?;
        let ours = [CORE_API_VERSION, EVENTS_API_VERSION];
        match object {
            _ if api_version == target_api_version => Ok(object),
            Value::Object(map)
                if ours.contains(&api_version.as_str()) && ours.contains(&target_api_version) =>
            {
                Ok(Value::Object(convert(map, target_api_version)))
            }
            _ => Err(unsupported(kind, api_version, target_api_version)),
        }
    }

    fn table_columns(&self) -> Vec<TableColumn> {
        columns()
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        cells(object, true)
    }
}

/// (core/v1 field, events.k8s.io/v1 field) for every renamed top-level field.
const RENAMED: &[(&str, &str)] = &[
    ("involvedObject", "regarding"),
    ("message", "note"),
    ("reportingComponent", "reportingController"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
];

const CORE_API_VERSION: &str = "v1";
const EVENTS_API_VERSION: &str = "events.k8s.io/v1";

/// Rewrites `object` to `target` ("v1" or "events.k8s.io/v1"), keeping every
/// field that is not renamed.
fn convert(object: Map<String, Value>, target: &str) -> Map<String, Value> {
    let to_events = target == EVENTS_API_VERSION;
    let mut out = Map::with_capacity(object.len());
    out.insert("apiVersion".into(), Value::String(target.to_string()));
    out.insert("kind".into(), Value::String("Event".into()));
    for (field, value) in object {
        if field == "apiVersion" || field == "kind" {
            continue;
        }
        let renamed = RENAMED.iter().find_map(|(core, events)| {
            if to_events && field == *core {
                Some(*events)
            } else if !to_events && field == *events {
                Some(*core)
            } else {
                None
            }
        });
        out.insert(renamed.map(str::to_string).unwrap_or(field), value);
    }
    // core/v1 always carries these (non-pointer strings and objects in Go),
    // so an events.k8s.io event read back through core/v1 shows them.
    if !to_events {
        out.entry("involvedObject")
            .or_insert_with(|| Value::Object(Map::new()));
        out.entry("source")
            .or_insert_with(|| Value::Object(Map::new()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!("test inputs are objects"),
        }
    }

    #[test]
    fn core_event_reads_as_events_v1_and_back() {
        let core = json!({
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": "web.1", "namespace": "default"},
            "involvedObject": {"kind": "Pod", "name": "web", "namespace": "default"},
            "reason": "Scheduled",
            "message": "Successfully assigned default/web to node-1",
            "source": {"component": "default-scheduler"},
            "firstTimestamp": "2026-11-22T05:00:00Z",
            "lastTimestamp": "2026-11-22T05:00:01Z",
            "count": 2,
            "type": "Normal",
            "reportingComponent": "default-scheduler",
            "reportingInstance": "",
            "eventTime": null,
        });
        let events = Value::Object(convert(map(core.clone()), EVENTS_API_VERSION));
        assert_eq!(events["apiVersion"], "events.k8s.io/v1");
        assert_eq!(events["regarding"]["name"], "web");
        assert_eq!(
            events["note"],
            "Successfully assigned default/web to node-1"
        );
        assert_eq!(events["reportingController"], "default-scheduler");
        assert_eq!(events["deprecatedCount"], 2);
        assert_eq!(events["deprecatedSource"]["component"], "default-scheduler");
        assert!(events.get("involvedObject").is_none());
        let back = Value::Object(convert(map(events), CORE_API_VERSION));
        assert_eq!(back, core);
    }
}
