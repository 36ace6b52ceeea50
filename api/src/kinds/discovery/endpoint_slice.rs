//! EndpointSlice (discovery.k8s.io/v1): a slice of a Service's endpoints.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::kinds::Kind;
use crate::printers::Printer;
use crate::registry::ResourceDef;

pub struct EndpointSlice;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "discovery.k8s.io",
        "v1",
        "endpointslices",
        "EndpointSlice",
        true,
        Arc::new(EndpointSlice),
    )]
}

impl Kind for EndpointSlice {
    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        crate::defaults::other::endpoint_slice(object);
    }

    fn printer(&self) -> Printer {
        Printer::EndpointSlice
    }
}
