//! ResourceQuota (core/v1): limits on what a namespace may consume.

use std::sync::Arc;

use crate::kinds::Kind;
use crate::printers::Printer;
use crate::registry::ResourceDef;
use crate::validate::quantity::Quantity;
use serde_json::Value;

pub struct ResourceQuota;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "",
        "v1",
        "resourcequotas",
        "ResourceQuota",
        true,
        Arc::new(ResourceQuota),
    )
    .short_names(&["quota"])
    .subresources(&["status"])]
}

impl Kind for ResourceQuota {
    fn quota_usage(&self, _object: &Value) -> Vec<(String, Quantity)> {
        vec![("resourcequotas".into(), Quantity::count(1))]
    }

    fn printer(&self) -> Printer {
        Printer::ResourceQuota
    }
}
