//! Binding (core/v1): a create that places a pod on a node, stored nowhere.

use std::sync::Arc;

use crate::kinds::{Handling, Kind};
use crate::registry::ResourceDef;

pub struct Binding;

pub fn resources() -> Vec<ResourceDef> {
    vec![
        ResourceDef::new("", "v1", "bindings", "Binding", true, Arc::new(Binding))
            .verbs(&["create"]),
    ]
}

impl Kind for Binding {
    fn handling(&self) -> Handling {
        Handling::Binding
    }
}
