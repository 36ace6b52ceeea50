//! The networking.k8s.io API group's kinds, in upstream's discovery order.

mod ingress;
mod ingress_class;
mod network_policy;

pub use ingress::Ingress;
pub use ingress_class::IngressClass;
pub use network_policy::NetworkPolicy;

use crate::registry::ResourceDef;

pub fn resources() -> Vec<ResourceDef> {
    [
        ingress_class::resources(),
        ingress::resources(),
        network_policy::resources(),
    ]
    .into_iter()
    .flatten()
    .collect()
}
