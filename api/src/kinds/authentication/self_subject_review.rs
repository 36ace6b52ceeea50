//! SelfSubjectReview (authentication.k8s.io/v1): `kubectl auth whoami`: the requesting user, answered on create.

use std::sync::Arc;

use crate::kinds::{Handling, Kind, Review};
use crate::registry::ResourceDef;

pub struct SelfSubjectReview;

pub fn resources() -> Vec<ResourceDef> {
    let kind = Arc::new(SelfSubjectReview);
    vec![ResourceDef::new(
        "authentication.k8s.io",
        "v1",
        "selfsubjectreviews",
        "SelfSubjectReview",
        false,
        kind.clone(),
    )
    .verbs(&["create"])]
}

impl Kind for SelfSubjectReview {
    fn handling(&self) -> Handling {
        Handling::Review(Review::WhoAmI)
    }
}
