//! ValidatingWebhookConfiguration and MutatingWebhookConfiguration
//! (admissionregistration.k8s.io/v1): the webhooks admission calls. One
//! kind serves both; they differ only in the mutating webhook's
//! reinvocation policy.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::Printer;
use crate::registry::ResourceDef;
use crate::validate::admissionregistration as rules;

pub struct WebhookConfiguration {
    pub mutating: bool,
}

pub fn resources() -> Vec<ResourceDef> {
    [
        (
            "validatingwebhookconfigurations",
            "ValidatingWebhookConfiguration",
            false,
        ),
        (
            "mutatingwebhookconfigurations",
            "MutatingWebhookConfiguration",
            true,
        ),
    ]
    .into_iter()
    .map(|(plural, kind, mutating)| {
        ResourceDef::new(
            "admissionregistration.k8s.io",
            "v1",
            plural,
            kind,
            false,
            Arc::new(WebhookConfiguration { mutating }),
        )
        .categories(&["api-extensions"])
    })
    .collect()
}

impl Kind for WebhookConfiguration {
    fn tracks_generation(&self) -> bool {
        true
    }

    fn spec_changed(&self, object: &Value, old: &Value) -> bool {
        object.get("webhooks") != old.get("webhooks")
    }

    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        crate::defaults::other::webhook_configuration(object, self.mutating);
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        rules::webhook_configuration(object, None, self.mutating)
    }

    fn validate_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        rules::webhook_configuration(object, Some(old), self.mutating)
    }

    fn printer(&self) -> Printer {
        Printer::WebhookConfiguration
    }
}
