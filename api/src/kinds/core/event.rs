//! Event (core/v1): a report of something that happened to an object.
//! Its table is also the events.k8s.io view's: upstream prints both from
//! one internal type.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::defaults::Object;
use crate::kinds::Kind;
use crate::printers::values::{get, int, name, text, timestamp};
use crate::printers::{col, name_col, wide, Cell, TableColumn};
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
        set_defaults(object);
    }

    fn table_columns(&self) -> Vec<TableColumn> {
        columns()
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        cells(object, false)
    }
}

/// Not a defaulter upstream, but what Go's encoding of a core/v1 Event
/// always shows: the reporting strings and the two references have no
/// `omitempty`, so clients read them as "" and {} when nobody set them.
fn set_defaults(event: &mut Object) {
    for field in ["reportingComponent", "reportingInstance"] {
        event
            .entry(field)
            .or_insert_with(|| Value::String(String::new()));
    }
    for field in ["involvedObject", "source"] {
        event
            .entry(field)
            .or_insert_with(|| Value::Object(Object::new()));
    }
}

const D_EV_LAST: &str = "The time at which the most recent occurrence of this event was recorded.";
const D_EV_TYPE: &str =
    "Type of this event (Normal, Warning), new types could be added in the future";
const D_EV_REASON: &str = "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.";
const D_EV_OBJECT: &str = "The object that this event is about.";
const D_EV_SOURCE: &str =
    "The component reporting this event. Should be a short machine understandable string.";
const D_EV_MESSAGE: &str = "A human-readable description of the status of this operation.";
const D_EV_FIRST: &str =
    "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)";
const D_EV_COUNT: &str = "The number of times this event has occurred.";
const D_OBJREF_FIELD_PATH: &str = "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: \"spec.containers{name}\" (where \"name\" refers to the name of the container that triggered the event) or if no container name is specified \"spec.containers[2]\" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.";

/// The columns of both Event kinds' tables.
pub(crate) fn columns() -> Vec<TableColumn> {
    vec![
        col("Last Seen", "string", D_EV_LAST),
        col("Type", "string", D_EV_TYPE),
        col("Reason", "string", D_EV_REASON),
        col("Object", "string", D_EV_OBJECT),
        wide("Subobject", "string", D_OBJREF_FIELD_PATH),
        wide("Source", "string", D_EV_SOURCE),
        col("Message", "string", D_EV_MESSAGE),
        wide("First Seen", "string", D_EV_FIRST),
        wide("Count", "string", D_EV_COUNT),
        TableColumn {
            priority: 1,
            ..name_col()
        },
    ]
}

/// Prints core/v1 events and events.k8s.io/v1 events; the latter rename the
/// fields, and upstream prints both from the same internal type.
pub(crate) fn cells(ev: &Value, events_api: bool) -> Vec<Cell> {
    let pick = |core: &'static str, events: &'static str| if events_api { events } else { core };
    let first_ts = timestamp(ev, pick("/firstTimestamp", "/deprecatedFirstTimestamp"));
    let first_seen = Cell::since(first_ts.or_else(|| timestamp(ev, "/eventTime")));
    let mut last_seen = match timestamp(ev, pick("/lastTimestamp", "/deprecatedLastTimestamp")) {
        Some(t) => Cell::since(Some(t)),
        None => first_seen.clone(),
    };
    let mut count = int(ev, pick("/count", "/deprecatedCount"));
    if let Some(series) = get(ev, "/series") {
        last_seen = Cell::since(timestamp(series, "/lastObservedTime"));
        count = int(series, "/count");
    } else if count == 0 {
        // Singleton events in the new API carry no count.
        count = 1;
    }

    let obj = pick("/involvedObject", "/regarding");
    let kind = text(ev, &format!("{obj}/kind")).to_lowercase();
    let obj_name = text(ev, &format!("{obj}/name"));
    let target = if obj_name.is_empty() {
        kind
    } else {
        format!("{kind}/{obj_name}")
    };

    let source = pick("/source", "/deprecatedSource");
    let component = match text(ev, &format!("{source}/component")) {
        "" => text(ev, pick("/reportingComponent", "/reportingController")),
        c => c,
    };
    let host = match text(ev, &format!("{source}/host")) {
        "" => text(ev, "/reportingInstance"),
        h => h,
    };
    let source_text = if host.is_empty() {
        component.to_string()
    } else {
        format!("{component}, {host}")
    };

    vec![
        last_seen,
        text(ev, "/type").into(),
        text(ev, "/reason").into(),
        target.into(),
        text(ev, &format!("{obj}/fieldPath")).into(),
        source_text.into(),
        text(ev, pick("/message", "/note")).trim().into(),
        first_seen,
        count.into(),
        name(ev).into(),
    ]
}
