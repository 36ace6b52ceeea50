//! The rbac.authorization.k8s.io API group's kinds, in upstream's discovery order.

mod cluster_role_binding;
mod cluster_role;
mod role_binding;
mod role;

pub use cluster_role_binding::ClusterRoleBinding;
pub use cluster_role::ClusterRole;
pub use role_binding::RoleBinding;
pub use role::Role;

use crate::registry::ResourceDef;

pub fn resources() -> Vec<ResourceDef> {
    [
        cluster_role_binding::resources(),
        cluster_role::resources(),
        role_binding::resources(),
        role::resources(),
    ]
    .into_iter()
    .flatten()
    .collect()
}
