//! CSIDriver (storage.k8s.io/v1): a CSI volume driver and how to call it.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::kinds::Kind;
use crate::printers::Printer;
use crate::registry::ResourceDef;

pub struct CSIDriver;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "storage.k8s.io",
        "v1",
        "csidrivers",
        "CSIDriver",
        false,
        Arc::new(CSIDriver),
    )]
}

impl Kind for CSIDriver {
    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        crate::defaults::other::csi_driver(object);
    }

    fn printer(&self) -> Printer {
        Printer::CsiDriver
    }
}
