//! ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding
//! (admissionregistration.k8s.io/v1): CEL validations admission runs on
//! the requests a binding selects (core/src/admission/policies.rs).

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::Printer;
use crate::registry::ResourceDef;
use crate::validate::admission_policy as rules;

const GROUP: &str = "admissionregistration.k8s.io";

pub struct Policy;

pub struct PolicyBinding;

pub fn resources() -> Vec<ResourceDef> {
    vec![
        ResourceDef::new(
            GROUP,
            "v1",
            "validatingadmissionpolicies",
            "ValidatingAdmissionPolicy",
            false,
            Arc::new(Policy),
        )
        .categories(&["api-extensions"])
        .subresources(&["status"]),
        ResourceDef::new(
            GROUP,
            "v1",
            "validatingadmissionpolicybindings",
            "ValidatingAdmissionPolicyBinding",
            false,
            Arc::new(PolicyBinding),
        )
        .categories(&["api-extensions"]),
    ]
}

impl Kind for Policy {
    fn tracks_generation(&self) -> bool {
        true
    }

    fn spec_changed(&self, object: &Value, old: &Value) -> bool {
        object.get("spec") != old.get("spec")
    }

    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        crate::defaults::other::validating_admission_policy(object);
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        rules::policy(object, None)
    }

    fn validate_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        rules::policy(object, Some(old))
    }

    fn validate_status_update(&self, object: &Value, _old: &Value) -> Vec<FieldError> {
        rules::policy_status(object)
    }

    fn printer(&self) -> Printer {
        Printer::ValidatingAdmissionPolicy
    }
}

impl Kind for PolicyBinding {
    fn tracks_generation(&self) -> bool {
        true
    }

    fn spec_changed(&self, object: &Value, old: &Value) -> bool {
        object.get("spec") != old.get("spec")
    }

    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        crate::defaults::other::validating_admission_policy_binding(object);
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        rules::binding(object)
    }

    fn validate_update(&self, object: &Value, _old: &Value) -> Vec<FieldError> {
        rules::binding(object)
    }

    fn printer(&self) -> Printer {
        Printer::ValidatingAdmissionPolicyBinding
    }
}
