//! Lease (coordination.k8s.io/v1): a lock with a holder and a renew time.

use std::sync::Arc;

use serde_json::Value;

use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::values::{age, name, text};
use crate::printers::{age_col, col, name_col, Cell, TableColumn};
use crate::registry::ResourceDef;
use crate::validate::{field, int_of, opt, str_of};

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
        validate(object)
    }

    fn validate_update(&self, object: &Value, _old: &Value) -> Vec<FieldError> {
        validate(object)
    }

    fn table_columns(&self) -> Vec<TableColumn> {
        vec![
            name_col(),
            col("Holder", "string", D_LEASE_HOLDER),
            age_col(),
        ]
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        vec![
            name(object).into(),
            text(object, "/spec/holderIdentity").into(),
            age(object),
        ]
    }
}

fn validate(object: &Value) -> Vec<FieldError> {
    let spec = field(object, "spec");
    let mut errs = Vec::new();
    if let Some(duration) = int_of(spec, "leaseDurationSeconds").filter(|d| *d <= 0) {
        errs.push(FieldError::invalid_rendered(
            "spec.leaseDurationSeconds",
            &duration.to_string(),
            "must be greater than 0",
        ));
    }
    if let Some(transitions) = int_of(spec, "leaseTransitions").filter(|t| *t < 0) {
        errs.push(FieldError::invalid_rendered(
            "spec.leaseTransitions",
            &transitions.to_string(),
            "must be greater than or equal to 0",
        ));
    }
    let strategy = opt(spec, "strategy").and_then(Value::as_str);
    if let Some(strategy) = strategy {
        match strategy {
            "OldestEmulationVersion" => {}
            "" => errs.push(FieldError::required("spec.strategy", "")),
            other => errs.push(FieldError::not_supported(
                "spec.strategy",
                other,
                &["OldestEmulationVersion"],
            )),
        }
    }
    let preferred = str_of(spec, "preferredHolder");
    if !preferred.is_empty() && strategy.is_none_or(str::is_empty) {
        errs.push(FieldError::forbidden(
            "spec.preferredHolder",
            "may only be specified if `strategy` is defined",
        ));
    }
    errs
}

const D_LEASE_HOLDER: &str = "holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field.";
