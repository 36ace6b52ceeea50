//! ControllerRevision (apps/v1): an immutable snapshot of a workload's state.

use std::sync::Arc;

use serde_json::Value;

use crate::kinds::Kind;
use crate::printers::values::{age, boolean, int, items, name, text};
use crate::printers::{age_col, col, name_col, Cell, TableColumn};
use crate::registry::ResourceDef;

pub struct ControllerRevision;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "apps",
        "v1",
        "controllerrevisions",
        "ControllerRevision",
        true,
        Arc::new(ControllerRevision),
    )]
}

impl Kind for ControllerRevision {
    fn table_columns(&self) -> Vec<TableColumn> {
        vec![
            name_col(),
            col("Controller", "string", "Controller of the object"),
            col("Revision", "string", D_CR_REVISION),
            age_col(),
        ]
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        cells(object)
    }
}

const D_CR_REVISION: &str = "Revision indicates the revision of the state represented by Data.";

fn cells(cr: &Value) -> Vec<Cell> {
    let controller = items(cr, "/metadata/ownerReferences")
        .iter()
        .find(|r| boolean(r, "/controller") == Some(true))
        .map(|r| {
            let group = match text(r, "/apiVersion").split_once('/') {
                Some((g, _)) => g,
                None => "",
            };
            let kind = text(r, "/kind");
            let ref_name = text(r, "/name");
            // formatResourceName: "kind.group/name", lower-cased, or just the
            // name when the kind is unknown.
            match (kind, group) {
                ("", "") => ref_name.to_string(),
                (k, "") => format!("{}/{ref_name}", k.to_lowercase()),
                (k, g) => format!("{}/{ref_name}", format!("{k}.{g}").to_lowercase()),
            }
        })
        .unwrap_or_else(|| "<none>".to_string());
    vec![
        name(cr).into(),
        controller.into(),
        int(cr, "/revision").into(),
        age(cr),
    ]
}
