//! RuntimeClass (node.k8s.io/v1): a container runtime configuration.

use std::sync::Arc;

use crate::kinds::Kind;
use crate::printers::Printer;
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
    fn printer(&self) -> Printer {
        Printer::RuntimeClass
    }
}
