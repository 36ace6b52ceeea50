//! ControllerRevision (apps/v1): an immutable snapshot of a workload's state.

use std::sync::Arc;

use crate::kinds::Kind;
use crate::printers::Printer;
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
    fn printer(&self) -> Printer {
        Printer::ControllerRevision
    }
}
