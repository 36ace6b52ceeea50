//! ResourceQuota (core/v1): limits on what a namespace may consume.

use std::sync::Arc;

use crate::kinds::Kind;
use crate::printers::values::{age, name, string_map};
use crate::printers::{age_col, col, name_col, Cell, TableColumn};
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

    fn table_columns(&self) -> Vec<TableColumn> {
        vec![
        name_col(),
        col(
            "Request",
            "string",
            "Request represents a minimum amount of cpu/memory that a container may consume.",
        ),
        col(
            "Limit",
            "string",
            "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.",
        ),
        age_col(),
    ]
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        cells(object)
    }
}

fn cells(rq: &Value) -> Vec<Cell> {
    let used = string_map(rq, "/status/used");
    let mut requests: Vec<String> = Vec::new();
    let mut limits: Vec<String> = Vec::new();
    for (resource, hard) in string_map(rq, "/status/hard") {
        let used = used
            .get(&resource)
            .cloned()
            .unwrap_or_else(|| "0".to_string());
        let entry = format!("{resource}: {used}/{hard}");
        let mut pieces = resource.split('.');
        let is_limit = pieces.next() == Some("limits") && pieces.next().is_some();
        if is_limit {
            limits.push(entry);
        } else {
            requests.push(entry);
        }
    }
    vec![
        name(rq).into(),
        requests.join(", ").into(),
        limits.join(", ").into(),
        age(rq),
    ]
}
