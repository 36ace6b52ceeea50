//! The admissionregistration.k8s.io API group's kinds, in upstream's
//! discovery order: what the admission chain (core/src/admission/) reads.

mod matching;
mod policy;
mod webhook_configuration;

pub use webhook_configuration::WebhookConfiguration;

/// The annotation that has a webhook configuration's webhooks called over
/// gRPC (`grpc`) instead of with AdmissionReview JSON over HTTPS (`https`,
/// the default): Capstan's own, as upstream's schema has no field for it.
pub const PROTOCOL_ANNOTATION: &str = "admission.capstan.dev/protocol";

use crate::registry::ResourceDef;

pub fn resources() -> Vec<ResourceDef> {
    let mut resources = webhook_configuration::resources();
    resources.extend(policy::resources());
    resources
}
