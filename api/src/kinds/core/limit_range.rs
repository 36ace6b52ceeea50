//! LimitRange (core/v1): per-namespace defaults and bounds for resources.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::defaults::{child, each_item, str_field, Object};
use crate::kinds::Kind;
use crate::registry::ResourceDef;

pub struct LimitRange;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "",
        "v1",
        "limitranges",
        "LimitRange",
        true,
        Arc::new(LimitRange),
    )
    .short_names(&["limits"])]
}

impl Kind for LimitRange {
    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        set_defaults(object);
    }
}

/// `SetDefaults_LimitRangeItem`: for Container limits, default ← max,
/// defaultRequest ← default, then defaultRequest ← min, key by key.
fn set_defaults(limit_range: &mut Object) {
    let Some(spec) = child(limit_range, "spec") else {
        return;
    };
    each_item(spec, "limits", |item| {
        if str_field(item, "type") != "Container" {
            return;
        }
        let resource_list = |item: &Object, key: &str| -> Object {
            item.get(key)
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default()
        };
        let mut default = resource_list(item, "default");
        for (name, quantity) in resource_list(item, "max") {
            default.entry(name).or_insert(quantity);
        }
        let mut default_request = resource_list(item, "defaultRequest");
        for (name, quantity) in default.iter().chain(resource_list(item, "min").iter()) {
            default_request
                .entry(name.clone())
                .or_insert_with(|| quantity.clone());
        }
        // Upstream always allocates both maps, but empty maps are omitted when
        // encoded, so only non-empty ones show.
        for (key, list) in [("default", default), ("defaultRequest", default_request)] {
            if !list.is_empty() || item.get(key).is_some_and(Value::is_object) {
                item.insert(key.into(), Value::Object(list));
            }
        }
    });
}
