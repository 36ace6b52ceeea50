//! The authentication.k8s.io API group's kinds, in upstream's discovery order.

mod self_subject_review;
mod token_review;

pub use self_subject_review::SelfSubjectReview;
pub use token_review::TokenReview;

use crate::registry::ResourceDef;

pub fn resources() -> Vec<ResourceDef> {
    [self_subject_review::resources(), token_review::resources()]
        .into_iter()
        .flatten()
        .collect()
}
