//! SubjectAccessReview (authorization.k8s.io/v1): may a user act, answered on create.

use std::sync::Arc;

use crate::kinds::{Handling, Kind, Review};
use crate::registry::ResourceDef;

pub struct SubjectAccessReview;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "authorization.k8s.io",
        "v1",
        "subjectaccessreviews",
        "SubjectAccessReview",
        false,
        Arc::new(SubjectAccessReview),
    )
    .verbs(&["create"])]
}

impl Kind for SubjectAccessReview {
    fn handling(&self) -> Handling {
        Handling::Review(Review::MayThey)
    }
}
