//! The core API group's kinds, in upstream's discovery order.

mod binding;
mod component_status;
mod config_map;
mod endpoints;
pub(crate) mod event;
mod limit_range;
mod namespace;
mod node;
mod persistent_volume;
mod persistent_volume_claim;
mod pod;
mod pod_template;
mod replication_controller;
mod resource_quota;
mod secret;
mod service;
mod service_account;

pub use binding::Binding;
pub use component_status::ComponentStatus;
pub use config_map::ConfigMap;
pub use endpoints::Endpoints;
pub use event::Event;
pub use limit_range::LimitRange;
pub use namespace::Namespace;
pub use node::Node;
pub use persistent_volume::PersistentVolume;
pub use persistent_volume_claim::PersistentVolumeClaim;
pub use pod::Pod;
pub use pod_template::PodTemplate;
pub use replication_controller::ReplicationController;
pub use resource_quota::ResourceQuota;
pub use secret::Secret;
pub use service::Service;
pub use service_account::ServiceAccount;

use crate::registry::ResourceDef;

pub fn resources() -> Vec<ResourceDef> {
    [
        binding::resources(),
        component_status::resources(),
        config_map::resources(),
        endpoints::resources(),
        event::resources(),
        limit_range::resources(),
        namespace::resources(),
        node::resources(),
        persistent_volume_claim::resources(),
        persistent_volume::resources(),
        pod::resources(),
        pod_template::resources(),
        replication_controller::resources(),
        resource_quota::resources(),
        secret::resources(),
        service_account::resources(),
        service::resources(),
    ]
    .into_iter()
    .flatten()
    .collect()
}
