//! The scheduling.k8s.io API group's kinds, in upstream's discovery order.

mod priority_class;

pub use priority_class::PriorityClass;

use crate::registry::ResourceDef;

pub fn resources() -> Vec<ResourceDef> {
    [priority_class::resources()]
        .into_iter()
        .flatten()
        .collect()
}
