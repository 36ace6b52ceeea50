//! SelfSubjectAccessReview (authorization.k8s.io/v1): `kubectl auth can-i`, answered on create.

use std::sync::Arc;

use crate::kinds::{Handling, Kind, Review};
use crate::registry::ResourceDef;

pub struct SelfSubjectAccessReview;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "authorization.k8s.io",
        "v1",
        "selfsubjectaccessreviews",
        "SelfSubjectAccessReview",
        false,
        Arc::new(SelfSubjectAccessReview),
    )
    .verbs(&["create"])]
}

impl Kind for SelfSubjectAccessReview {
    fn handling(&self) -> Handling {
        Handling::Review(Review::MayI)
    }
}
