//! The policy API group's kinds, in upstream's discovery order.

mod pod_disruption_budget;

pub use pod_disruption_budget::PodDisruptionBudget;

use crate::registry::ResourceDef;

pub fn resources() -> Vec<ResourceDef> {
    [pod_disruption_budget::resources()]
        .into_iter()
        .flatten()
        .collect()
}
