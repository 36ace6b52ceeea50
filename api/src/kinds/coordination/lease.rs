//! Lease (coordination.k8s.io/v1): a lock with a holder and a renew time.

use std::sync::Arc;

use serde_json::Value;

use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::Printer;
use crate::registry::ResourceDef;
use crate::validate::coordination as rules;

pub struct Lease;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "coordination.k8s.io",
        "v1",
        "leases",
        "Lease",
        true,
        Arc::new(Lease),
    )]
}

impl Kind for Lease {
    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        rules::lease(object)
    }

    fn validate_update(&self, object: &Value, _old: &Value) -> Vec<FieldError> {
        rules::lease(object)
    }

    fn printer(&self) -> Printer {
        Printer::Lease
    }
}
