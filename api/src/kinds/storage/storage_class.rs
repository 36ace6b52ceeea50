//! StorageClass (storage.k8s.io/v1): a class of dynamically provisioned storage.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::Printer;
use crate::registry::ResourceDef;
use crate::validate::storage as rules;

pub struct StorageClass;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "storage.k8s.io",
        "v1",
        "storageclasses",
        "StorageClass",
        false,
        Arc::new(StorageClass),
    )
    .short_names(&["sc"])
    .returns_deleted_object()]
}

impl Kind for StorageClass {
    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        crate::defaults::other::storage_class(object);
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        rules::storage_class(object)
    }

    fn validate_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = rules::storage_class(object);
        errs.extend(rules::storage_class_update(object, old));
        errs
    }

    fn printer(&self) -> Printer {
        Printer::StorageClass
    }
}
