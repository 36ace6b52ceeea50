//! ComponentStatus (core/v1): the health of the control plane, computed on each read.

use std::sync::Arc;

use crate::kinds::{Handling, Kind};
use crate::printers::Printer;
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

    fn printer(&self) -> Printer {
        Printer::ComponentStatus
    }
}
