//! TokenReview (authentication.k8s.io/v1): who a bearer token belongs to, answered on create.

use std::sync::Arc;

use crate::kinds::{Handling, Kind, Review};
use crate::registry::ResourceDef;

pub struct TokenReview;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "authentication.k8s.io",
        "v1",
        "tokenreviews",
        "TokenReview",
        false,
        Arc::new(TokenReview),
    )
    .verbs(&["create"])]
}

impl Kind for TokenReview {
    fn handling(&self) -> Handling {
        Handling::Review(Review::Token)
    }
}
