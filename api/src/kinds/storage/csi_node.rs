//! CSINode (storage.k8s.io/v1): the CSI drivers on one node.

use std::sync::Arc;

use crate::kinds::Kind;
use crate::printers::Printer;
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
    fn printer(&self) -> Printer {
        Printer::CsiNode
    }
}
