//! Binding (core/v1): a create that places a pod on a node, stored nowhere.

use std::sync::Arc;

use crate::kinds::{Handling, Kind};
use crate::registry::ResourceDef;

pub struct Binding;

pub fn resources() -> Vec<ResourceDef> {
    let kind = Arc::new(Binding);
    vec![ResourceDef::new("", "v1", "bindings", "Binding", true, kind.clone()).verbs(&["create"])]
}

impl Kind for Binding {
    fn handling(&self) -> Handling {
        Handling::Binding
    }
}
