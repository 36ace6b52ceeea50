//! The autoscaling API group's kinds, in upstream's discovery order.

mod horizontal_pod_autoscaler;

pub use horizontal_pod_autoscaler::HorizontalPodAutoscaler;

use crate::registry::ResourceDef;

pub fn resources() -> Vec<ResourceDef> {
    [horizontal_pod_autoscaler::resources()]
        .into_iter()
        .flatten()
        .collect()
}
