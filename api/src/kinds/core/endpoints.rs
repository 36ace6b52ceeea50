//! Endpoints (core/v1): the addresses behind a Service.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::kinds::Kind;
use crate::printers::Printer;
use crate::registry::ResourceDef;

pub struct Endpoints;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "",
        "v1",
        "endpoints",
        "Endpoints",
        true,
        Arc::new(Endpoints),
    )
    .short_names(&["ep"])
    .storage_segment("services/endpoints")]
}

impl Kind for Endpoints {
    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        crate::defaults::core_v1::endpoints(object);
    }

    fn printer(&self) -> Printer {
        Printer::Endpoints
    }
}
