//! IngressClass (networking.k8s.io/v1): which controller implements an Ingress.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::kinds::Kind;
use crate::printers::Printer;
use crate::registry::ResourceDef;

pub struct IngressClass;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "networking.k8s.io",
        "v1",
        "ingressclasses",
        "IngressClass",
        false,
        Arc::new(IngressClass),
    )]
}

impl Kind for IngressClass {
    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        crate::defaults::other::ingress_class(object);
    }

    fn printer(&self) -> Printer {
        Printer::IngressClass
    }
}
