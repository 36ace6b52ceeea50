//! core/v1 Event ⇄ events.k8s.io/v1 Event.
//!
//! Both are views of one stored object (core/v1 is the storage version).
//! Upstream's events/v1 conversion renames fields and moves nothing else, so
//! the mapping is a table and the round trip is lossless.

use serde_json::{Map, Value};

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

pub(super) const CORE_API_VERSION: &str = "v1";
pub(super) const EVENTS_API_VERSION: &str = "events.k8s.io/v1";

/// Rewrites `object` to `target` ("v1" or "events.k8s.io/v1"), keeping every
/// field that is not renamed.
pub(super) fn convert(object: Map<String, Value>, target: &str) -> Map<String, Value> {
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
