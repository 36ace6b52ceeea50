//! The networking.k8s.io API group's kinds, in upstream's discovery order.

mod ingress;
mod ingress_class;
pub mod ip_address;
mod network_policy;
pub mod service_cidr;

pub use ingress::Ingress;
pub use ingress_class::IngressClass;
pub use ip_address::IPAddress;
pub use network_policy::NetworkPolicy;
pub use service_cidr::ServiceCIDR;

use crate::registry::ResourceDef;

pub fn resources() -> Vec<ResourceDef> {
    [
        ingress_class::resources(),
        ingress::resources(),
        ip_address::resources(),
        network_policy::resources(),
        service_cidr::resources(),
    ]
    .into_iter()
    .flatten()
    .collect()
}
