//! LocalSubjectAccessReview (authorization.k8s.io/v1): may a user act in one namespace, answered on create.

use std::sync::Arc;

use crate::kinds::{Handling, Kind, Review};
use crate::registry::ResourceDef;

pub struct LocalSubjectAccessReview;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "authorization.k8s.io",
        "v1",
        "localsubjectaccessreviews",
        "LocalSubjectAccessReview",
        true,
        Arc::new(LocalSubjectAccessReview),
    )
    .verbs(&["create"])]
}

impl Kind for LocalSubjectAccessReview {
    fn handling(&self) -> Handling {
        Handling::Review(Review::MayThey)
    }
}
