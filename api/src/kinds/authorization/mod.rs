//! The authorization.k8s.io API group's kinds, in upstream's discovery order.

mod local_subject_access_review;
mod self_subject_access_review;
mod self_subject_rules_review;
mod subject_access_review;

pub use local_subject_access_review::LocalSubjectAccessReview;
pub use self_subject_access_review::SelfSubjectAccessReview;
pub use self_subject_rules_review::SelfSubjectRulesReview;
pub use subject_access_review::SubjectAccessReview;

use crate::registry::ResourceDef;

pub fn resources() -> Vec<ResourceDef> {
    [
        local_subject_access_review::resources(),
        self_subject_access_review::resources(),
        self_subject_rules_review::resources(),
        subject_access_review::resources(),
    ]
    .into_iter()
    .flatten()
    .collect()
}
