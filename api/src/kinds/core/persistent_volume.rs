//! PersistentVolume (core/v1): a piece of storage in the cluster.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::Printer;
use crate::registry::ResourceDef;
use crate::validate::corev1 as rules;

pub struct PersistentVolume;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "",
        "v1",
        "persistentvolumes",
        "PersistentVolume",
        false,
        Arc::new(PersistentVolume),
    )
    .short_names(&["pv"])
    .subresources(&["status"])]
}

impl Kind for PersistentVolume {
    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        crate::defaults::core_v1::persistent_volume(object);
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        rules::persistent_volume(object)
    }

    fn validate_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = rules::persistent_volume(object);
        errs.extend(rules::persistent_volume_update(object, old));
        errs
    }

    fn printer(&self) -> Printer {
        Printer::PersistentVolume
    }
}
