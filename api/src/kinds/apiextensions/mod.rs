//! The apiextensions.k8s.io API group: CustomResourceDefinitions, whose
//! served versions become [`crate::custom::CustomResource`] kinds.

mod custom_resource_definition;
mod validation;

pub use custom_resource_definition::{
    condition, is_true, set_condition, CustomResourceDefinition, CLEANUP_FINALIZER,
};

use crate::registry::ResourceDef;

pub fn resources() -> Vec<ResourceDef> {
    custom_resource_definition::resources()
}
