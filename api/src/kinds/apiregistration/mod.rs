//! The apiregistration.k8s.io API group: APIServices, which say which
//! server answers a group/version — this one (Local) or an extension API
//! server behind a Service.

mod api_service;

pub use api_service::{local_available_condition, APIService, AUTOMANAGED_LABEL};

use crate::registry::ResourceDef;

pub fn resources() -> Vec<ResourceDef> {
    api_service::resources()
}
