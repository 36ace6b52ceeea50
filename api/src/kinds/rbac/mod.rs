//! The rbac.authorization.k8s.io API group's kinds, in upstream's discovery order.

mod binding;
mod cluster_role;
mod cluster_role_binding;
mod policy_rule;
mod role;
mod role_binding;

pub use cluster_role::ClusterRole;
pub use cluster_role_binding::ClusterRoleBinding;
pub use role::Role;
pub use role_binding::RoleBinding;

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
