//! SelfSubjectRulesReview (authorization.k8s.io/v1): `kubectl auth can-i --list`, answered on create.

use std::sync::Arc;

use crate::kinds::{Handling, Kind, Review};
use crate::registry::ResourceDef;

pub struct SelfSubjectRulesReview;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "authorization.k8s.io",
        "v1",
        "selfsubjectrulesreviews",
        "SelfSubjectRulesReview",
        false,
        Arc::new(SelfSubjectRulesReview),
    )
    .verbs(&["create"])]
}

impl Kind for SelfSubjectRulesReview {
    fn handling(&self) -> Handling {
        Handling::Review(Review::MyRules)
    }
}
