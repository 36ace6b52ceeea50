//! SelfSubjectAccessReview (authorization.k8s.io/v1): `kubectl auth can-i`, answered on create.

use std::sync::Arc;

use crate::kinds::{Handling, Kind, Review};
use crate::registry::ResourceDef;

pub struct SelfSubjectAccessReview;

pub fn resources() -> Vec<ResourceDef> {
    let kind = Arc::new(SelfSubjectAccessReview);
    vec![ResourceDef::new(
        "authorization.k8s.io",
        "v1",
        "selfsubjectaccessreviews",
        "SelfSubjectAccessReview",
        false,
        kind.clone(),
    )
    .verbs(&["create"])]
}

impl Kind for SelfSubjectAccessReview {
    fn handling(&self) -> Handling {
        Handling::Review(Review::MayI)
    }
}
