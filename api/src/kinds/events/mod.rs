//! The events.k8s.io API group's kinds, in upstream's discovery order.

mod event;

pub use event::Event;

use crate::registry::ResourceDef;

pub fn resources() -> Vec<ResourceDef> {
    [event::resources()].into_iter().flatten().collect()
}
