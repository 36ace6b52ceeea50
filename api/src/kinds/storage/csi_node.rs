//! CSINode (storage.k8s.io/v1): the CSI drivers on one node.

use std::sync::Arc;

use crate::kinds::Kind;
use crate::printers::Printer;
use crate::registry::ResourceDef;

pub struct CSINode;

pub fn resources() -> Vec<ResourceDef> {
    let kind = Arc::new(CSINode);
    vec![ResourceDef::new(
        "storage.k8s.io",
        "v1",
        "csinodes",
        "CSINode",
        false,
        kind.clone(),
    )]
}

impl Kind for CSINode {
    fn printer(&self) -> Printer {
        Printer::CsiNode
    }
}
