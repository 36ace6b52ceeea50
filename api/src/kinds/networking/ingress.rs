//! Ingress (networking.k8s.io/v1): HTTP routes into the cluster.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::Printer;
use crate::registry::ResourceDef;
use crate::validate::networking as rules;

pub struct Ingress;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "networking.k8s.io",
        "v1",
        "ingresses",
        "Ingress",
        true,
        Arc::new(Ingress),
    )
    .short_names(&["ing"])
    .subresources(&["status"])]
}

impl Kind for Ingress {
    fn tracks_generation(&self) -> bool {
        true
    }

    fn empty_status(&self) -> Value {
        json!({"loadBalancer": {}})
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        rules::ingress(object)
    }

    fn validate_update(&self, object: &Value, _old: &Value) -> Vec<FieldError> {
        rules::ingress(object)
    }

    fn printer(&self) -> Printer {
        Printer::Ingress
    }
}
