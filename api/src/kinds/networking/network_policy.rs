//! NetworkPolicy (networking.k8s.io/v1): which traffic pods accept and send.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::Printer;
use crate::registry::ResourceDef;
use crate::validate::networking as rules;

pub struct NetworkPolicy;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "networking.k8s.io",
        "v1",
        "networkpolicies",
        "NetworkPolicy",
        true,
        Arc::new(NetworkPolicy),
    )
    .short_names(&["netpol"])]
}

impl Kind for NetworkPolicy {
    fn tracks_generation(&self) -> bool {
        true
    }

    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        crate::defaults::other::network_policy(object);
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        rules::network_policy(object)
    }

    fn validate_update(&self, object: &Value, _old: &Value) -> Vec<FieldError> {
        rules::network_policy(object)
    }

    fn printer(&self) -> Printer {
        Printer::NetworkPolicy
    }
}
