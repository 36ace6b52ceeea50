//! The cells of the core/v1 kinds' printers.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::values::*;

/// Prints core/v1 events and events.k8s.io/v1 events; the latter rename the
/// fields, and upstream prints both from the same internal type.
pub(super) fn event_cells(ev: &Value, events_api: bool, now: DateTime<Utc>) -> Vec<Value> {
    let pick = |core: &'static str, events: &'static str| if events_api { events } else { core };
    let first_ts = timestamp(ev, pick("/firstTimestamp", "/deprecatedFirstTimestamp"));
    let first_seen = since(first_ts.or_else(|| timestamp(ev, "/eventTime")), now);
    let mut last_seen = match timestamp(ev, pick("/lastTimestamp", "/deprecatedLastTimestamp")) {
        Some(t) => since(Some(t), now),
        None => first_seen.clone(),
    };
    let mut count = int(ev, pick("/count", "/deprecatedCount"));
    if let Some(series) = get(ev, "/series") {
        last_seen = since(timestamp(series, "/lastObservedTime"), now);
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
        last_seen.into(),
        text(ev, "/type").into(),
        text(ev, "/reason").into(),
        target.into(),
        text(ev, &format!("{obj}/fieldPath")).into(),
        source_text.into(),
        text(ev, pick("/message", "/note")).trim().into(),
        first_seen.into(),
        count.into(),
        name(ev).into(),
    ]
}
