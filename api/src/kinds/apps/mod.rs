//! The apps API group's kinds, in upstream's discovery order.

mod controller_revision;
mod daemon_set;
mod deployment;
mod replica_set;
mod stateful_set;

pub use controller_revision::ControllerRevision;
pub use daemon_set::DaemonSet;
pub use deployment::Deployment;
pub use replica_set::ReplicaSet;
pub use stateful_set::StatefulSet;

use crate::registry::ResourceDef;

pub fn resources() -> Vec<ResourceDef> {
    [
        controller_revision::resources(),
        daemon_set::resources(),
        deployment::resources(),
        replica_set::resources(),
        stateful_set::resources(),
    ]
    .into_iter()
    .flatten()
    .collect()
}
