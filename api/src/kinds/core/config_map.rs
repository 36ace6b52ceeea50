//! ConfigMap (core/v1): configuration data as strings and bytes.

use std::sync::Arc;

use serde_json::Value;

use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::Printer;
use crate::registry::ResourceDef;
use crate::validate::corev1 as rules;
use crate::validate::quantity::Quantity;

pub struct ConfigMap;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "",
        "v1",
        "configmaps",
        "ConfigMap",
        true,
        Arc::new(ConfigMap),
    )
    .short_names(&["cm"])]
}

impl Kind for ConfigMap {
    fn quota_usage(&self, _object: &Value) -> Vec<(String, Quantity)> {
        vec![("configmaps".into(), Quantity::count(1))]
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        rules::config_map(object)
    }

    fn validate_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = rules::config_map(object);
        errs.extend(rules::config_map_update(object, old));
        errs
    }

    fn printer(&self) -> Printer {
        Printer::ConfigMap
    }
}
