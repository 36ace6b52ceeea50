//! The node.k8s.io API group's kinds, in upstream's discovery order.

mod runtime_class;

pub use runtime_class::RuntimeClass;

use crate::registry::ResourceDef;

pub fn resources() -> Vec<ResourceDef> {
    [runtime_class::resources()].into_iter().flatten().collect()
}
