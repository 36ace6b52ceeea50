//! The discovery.k8s.io API group's kinds, in upstream's discovery order.

mod endpoint_slice;

pub use endpoint_slice::EndpointSlice;

use crate::registry::ResourceDef;

pub fn resources() -> Vec<ResourceDef> {
    [endpoint_slice::resources()]
        .into_iter()
        .flatten()
        .collect()
}
