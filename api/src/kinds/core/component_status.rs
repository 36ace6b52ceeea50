//! ComponentStatus (core/v1): the health of the control plane, computed on each read.

use std::sync::Arc;

use serde_json::Value;

use crate::kinds::{Handling, Kind};
use crate::printers::values::{condition, items, name, text};
use crate::printers::{col, name_col, Cell, TableColumn};
use crate::registry::ResourceDef;

pub struct ComponentStatus;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "",
        "v1",
        "componentstatuses",
        "ComponentStatus",
        false,
        Arc::new(ComponentStatus),
    )
    .short_names(&["cs"])
    .verbs(&["get", "list"])]
}

impl Kind for ComponentStatus {
    fn handling(&self) -> Handling {
        Handling::ComponentStatus
    }

    fn table_columns(&self) -> Vec<TableColumn> {
        vec![
            name_col(),
            col("Status", "string", "Status of the component conditions"),
            col("Message", "string", "Message of the component conditions"),
            col("Error", "string", "Error of the component conditions"),
        ]
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        cells(object)
    }
}

fn cells(cs: &Value) -> Vec<Cell> {
    let (status, message, error) = match condition(items(cs, "/conditions"), "Healthy") {
        Some(c) => (
            if text(c, "/status") == "True" {
                "Healthy"
            } else {
                "Unhealthy"
            },
            text(c, "/message"),
            text(c, "/error"),
        ),
        None => ("Unknown", "", ""),
    };
    vec![name(cs).into(), status.into(), message.into(), error.into()]
}
