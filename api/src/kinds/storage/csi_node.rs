//! CSINode (storage.k8s.io/v1): the CSI drivers on one node.

use std::sync::Arc;

use serde_json::Value;

use crate::kinds::Kind;
use crate::printers::values::{age, len_of, name};
use crate::printers::{age_col, col, name_col, Cell, TableColumn};
use crate::registry::ResourceDef;

pub struct CSINode;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "storage.k8s.io",
        "v1",
        "csinodes",
        "CSINode",
        false,
        Arc::new(CSINode),
    )]
}

impl Kind for CSINode {
    fn table_columns(&self) -> Vec<TableColumn> {
        vec![
            name_col(),
            col(
                "Drivers",
                "integer",
                "Drivers indicates the number of CSI drivers registered on the node",
            ),
            age_col(),
        ]
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        vec![
            name(object).into(),
            len_of(object, "/spec/drivers").into(),
            age(object),
        ]
    }
}
