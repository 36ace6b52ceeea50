//! ConfigMap (core/v1): configuration data as strings and bytes.

use std::sync::Arc;

use serde_json::Value;

use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::values::{age, len_of, name};
use crate::printers::{age_col, col, name_col, Cell, TableColumn};
use crate::registry::ResourceDef;
use crate::validate::config_data::{decoded_len, immutable_data, MAX_SECRET_SIZE};
use crate::validate::quantity::Quantity;
use crate::validate::{key, map_of};

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
        validate(object)
    }

    fn validate_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = validate(object);
        errs.extend(validate_update(object, old));
        errs
    }

    fn table_columns(&self) -> Vec<TableColumn> {
        vec![name_col(), col("Data", "string", D_CM_DATA), age_col()]
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        vec![
            name(object).into(),
            (len_of(object, "/data") + len_of(object, "/binaryData")).into(),
            age(object),
        ]
    }
}

fn validate(object: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut total = 0;
    let binary = map_of(object, "binaryData");
    for (k, v) in map_of(object, "data").into_iter().flatten() {
        let path = key("data", k);
        errs.extend(crate::validate::object_meta::config_map_key(&path, k));
        if binary.is_some_and(|b| b.contains_key(k)) {
            errs.push(FieldError::invalid(
                &path,
                k,
                "duplicate of key present in binaryData",
            ));
        }
        total += v.as_str().map_or(0, str::len);
    }
    for (k, v) in binary.into_iter().flatten() {
        errs.extend(crate::validate::object_meta::config_map_key(
            &key("binaryData", k),
            k,
        ));
        total += decoded_len(v);
    }
    if total > MAX_SECRET_SIZE {
        errs.push(FieldError::too_long_bytes("", MAX_SECRET_SIZE));
    }
    errs
}

fn validate_update(object: &Value, old: &Value) -> Vec<FieldError> {
    immutable_data(object, old, &["data", "binaryData"])
}

const D_CM_DATA: &str = "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.";
