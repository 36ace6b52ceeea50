//! PersistentVolumeClaim (core/v1): a request for storage.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::Printer;
use crate::registry::ResourceDef;
use crate::validate::corev1 as rules;
use crate::validate::quantity::Quantity;

pub struct PersistentVolumeClaim;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "",
        "v1",
        "persistentvolumeclaims",
        "PersistentVolumeClaim",
        true,
        Arc::new(PersistentVolumeClaim),
    )
    .short_names(&["pvc"])
    .subresources(&["status"])]
}

impl Kind for PersistentVolumeClaim {
    fn quota_usage(&self, object: &Value) -> Vec<(String, Quantity)> {
        let mut usage = vec![("persistentvolumeclaims".to_string(), Quantity::count(1))];
        let storage = object
            .pointer("/spec/resources/requests/storage")
            .and_then(|q| crate::validate::quantity::from_json(q).ok());
        if let Some(storage) = storage {
            usage.push(("requests.storage".into(), storage));
        }
        let class = object
            .pointer("/spec/storageClassName")
            .and_then(Value::as_str)
            .filter(|c| !c.is_empty());
        if let Some(class) = class {
            let prefix = format!("{class}.storageclass.storage.k8s.io");
            usage.push((
                format!("{prefix}/persistentvolumeclaims"),
                Quantity::count(1),
            ));
            if let Some(storage) = storage {
                usage.push((format!("{prefix}/requests.storage"), storage));
            }
        }
        usage
    }

    fn quota_charges_updates(&self) -> bool {
        true
    }

    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        crate::defaults::core_v1::persistent_volume_claim(object);
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        rules::persistent_volume_claim(object)
    }

    fn validate_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = rules::persistent_volume_claim(object);
        errs.extend(rules::persistent_volume_claim_update(object, old));
        errs
    }

    fn printer(&self) -> Printer {
        Printer::PersistentVolumeClaim
    }
}
