//! The coordination.k8s.io API group's kinds, in upstream's discovery order.

mod lease;

pub use lease::Lease;

use crate::registry::ResourceDef;

pub fn resources() -> Vec<ResourceDef> {
    [lease::resources()].into_iter().flatten().collect()
}
