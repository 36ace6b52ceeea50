//! LimitRange (core/v1): per-namespace defaults and bounds for resources.

use std::sync::Arc;

use serde_json::{Map, Value};

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
        crate::defaults::core_v1::limit_range(object);
    }
}
