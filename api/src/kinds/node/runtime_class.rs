//! RuntimeClass (node.k8s.io/v1): a container runtime configuration.

use std::sync::Arc;

use serde_json::Value;

use crate::kinds::Kind;
use crate::printers::values::{age, name, text};
use crate::printers::{age_col, col, name_col, Cell, TableColumn};
use crate::registry::ResourceDef;

pub struct RuntimeClass;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "node.k8s.io",
        "v1",
        "runtimeclasses",
        "RuntimeClass",
        false,
        Arc::new(RuntimeClass),
    )]
}

impl Kind for RuntimeClass {
    fn table_columns(&self) -> Vec<TableColumn> {
        // Upstream looks the description up under a key ObjectMeta does not
        // have, so it is empty there too.
        vec![name_col(), col("Handler", "string", ""), age_col()]
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        vec![
            name(object).into(),
            text(object, "/handler").into(),
            age(object),
        ]
    }
}
