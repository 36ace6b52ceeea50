//! SelfSubjectReview (authentication.k8s.io/v1): `kubectl auth whoami`: the requesting user, answered on create.

use std::sync::Arc;

use crate::kinds::{Handling, Kind, Review};
use crate::registry::ResourceDef;

pub struct SelfSubjectReview;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "authentication.k8s.io",
        "v1",
        "selfsubjectreviews",
        "SelfSubjectReview",
        false,
        Arc::new(SelfSubjectReview),
    )
    .verbs(&["create"])]
}

impl Kind for SelfSubjectReview {
    fn handling(&self) -> Handling {
        Handling::Review(Review::WhoAmI)
    }
}
