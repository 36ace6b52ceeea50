//! The admissionregistration.k8s.io API group's kinds, in upstream's
//! discovery order: what the admission chain (core/src/admission/) reads.

mod policy;
mod webhook_configuration;

pub use webhook_configuration::WebhookConfiguration;

use crate::registry::ResourceDef;

pub fn resources() -> Vec<ResourceDef> {
    let mut resources = webhook_configuration::resources();
    resources.extend(policy::resources());
    resources
}
