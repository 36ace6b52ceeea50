//! StorageClass (storage.k8s.io/v1): a class of dynamically provisioned storage.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::defaults::{default_pointer, Object};
use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::values::{age, boolean, escape_pointer, name, str_or, text};
use crate::printers::{age_col, col, name_col, Cell, TableColumn};
use crate::registry::ResourceDef;
use crate::validate::meta::{self, go_opt_str};
use crate::validate::{index, list_of, map_of, opt, str_of};

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
        set_defaults(object);
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
        vec![
            name_col(),
            col("Provisioner", "string", D_SC_PROVISIONER),
            col("ReclaimPolicy", "string", D_SC_RECLAIM),
            col("VolumeBindingMode", "string", D_SC_BINDING_MODE),
            col("AllowVolumeExpansion", "string", D_SC_EXPANSION),
            age_col(),
        ]
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        cells(object)
    }
}

/// storage/v1 `SetDefaults_StorageClass`.
fn set_defaults(class: &mut Object) {
    default_pointer(class, "reclaimPolicy", json!("Delete"));
    default_pointer(class, "volumeBindingMode", json!("Immediate"));
}

const MAX_PARAMETERS: usize = 512;
const MAX_PARAMETERS_BYTES: usize = 256 * 1024;

fn validate(object: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let provisioner = str_of(object, "provisioner");
    if provisioner.is_empty() {
        errs.push(FieldError::required("provisioner", ""));
    } else {
        let lowered = provisioner.to_lowercase();
        errs.extend(meta::label_name(&lowered, "provisioner"));
    }
    if let Some(params) = map_of(object, "parameters") {
        if params.len() > MAX_PARAMETERS {
            errs.push(FieldError::too_long_bytes("parameters", MAX_PARAMETERS));
        } else {
            let mut total = 0;
            for (k, v) in params {
                if k.is_empty() {
                    errs.push(FieldError::invalid(
                        "parameters",
                        k,
                        "field can not be empty.",
                    ));
                }
                total += k.len() + v.as_str().map_or(0, str::len);
            }
            if total > MAX_PARAMETERS_BYTES {
                errs.push(FieldError::too_long_bytes(
                    "parameters",
                    MAX_PARAMETERS_BYTES,
                ));
            }
        }
    }
    match str_of(object, "reclaimPolicy") {
        "" | "Delete" | "Retain" => {}
        other => errs.push(FieldError::not_supported(
            "reclaimPolicy",
            other,
            &["Delete", "Retain"],
        )),
    }
    match str_of(object, "volumeBindingMode") {
        "" | "Immediate" | "WaitForFirstConsumer" => {}
        other => errs.push(FieldError::not_supported(
            "volumeBindingMode",
            other,
            &["Immediate", "WaitForFirstConsumer"],
        )),
    }
    for (i, term) in list_of(object, "allowedTopologies").iter().enumerate() {
        let term_path = index("allowedTopologies", i);
        let exprs = list_of(term, "matchLabelExpressions");
        let mut keys = std::collections::HashSet::new();
        for (j, expr) in exprs.iter().enumerate() {
            let expr_path = index(&format!("{term_path}.matchLabelExpressions"), j);
            let values = list_of(expr, "values");
            if values.is_empty() {
                errs.push(FieldError::required(format!("{expr_path}.values"), ""));
            }
            let mut seen = std::collections::HashSet::new();
            for (k, v) in values.iter().enumerate() {
                let v = v.as_str().unwrap_or("");
                if !seen.insert(v) {
                    errs.push(FieldError::duplicate(
                        index(&format!("{expr_path}.values"), k),
                        v,
                    ));
                }
            }
            let key_name = str_of(expr, "key");
            errs.extend(meta::label_name(key_name, &format!("{expr_path}.key")));
            if !keys.insert(key_name) {
                errs.push(FieldError::duplicate(format!("{expr_path}.key"), key_name));
            }
        }
    }
    errs
}

/// ValidateStorageClassUpdate: parameters, provisioner, reclaimPolicy and
/// volumeBindingMode are fixed.
fn validate_update(object: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let params = |o: &Value| map_of(o, "parameters").filter(|m| !m.is_empty()).cloned();
    if params(object) != params(old) {
        errs.push(FieldError::forbidden(
            "parameters",
            "updates to parameters are forbidden.",
        ));
    }
    if str_of(object, "provisioner") != str_of(old, "provisioner") {
        errs.push(FieldError::forbidden(
            "provisioner",
            "updates to provisioner are forbidden.",
        ));
    }
    let defaulted = |o: &'_ Value, name: &str, default: &'static str| -> String {
        match str_of(o, name) {
            "" => default.to_string(),
            v => v.to_string(),
        }
    };
    if defaulted(object, "reclaimPolicy", "Delete") != defaulted(old, "reclaimPolicy", "Delete") {
        errs.push(FieldError::forbidden(
            "reclaimPolicy",
            "updates to reclaimPolicy are forbidden.",
        ));
    }
    let new_mode = defaulted(object, "volumeBindingMode", "Immediate");
    if new_mode != defaulted(old, "volumeBindingMode", "Immediate") {
        let raw = opt(object, "volumeBindingMode").and_then(Value::as_str);
        errs.push(FieldError::immutable(
            "volumeBindingMode",
            &go_opt_str(raw.or(Some(new_mode.as_str()))),
        ));
    }
    errs
}

const D_SC_PROVISIONER: &str = "provisioner indicates the type of the provisioner.";
const D_SC_RECLAIM: &str = "reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes of this storage class. Defaults to Delete.";
const D_SC_BINDING_MODE: &str = "volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound.  When unset, VolumeBindingImmediate is used. This field is only honored by servers that enable the VolumeScheduling feature.";
const D_SC_EXPANSION: &str =
    "allowVolumeExpansion shows whether the storage class allow volume expand.";

fn cells(sc: &Value) -> Vec<Cell> {
    let annotation = |key: &str| {
        text(
            sc,
            &format!("/metadata/annotations/{}", escape_pointer(key)),
        ) == "true"
    };
    let mut display = name(sc).to_string();
    if annotation("storageclass.kubernetes.io/is-default-class")
        || annotation("storageclass.beta.kubernetes.io/is-default-class")
    {
        display.push_str(" (default)");
    }
    vec![
        display.into(),
        text(sc, "/provisioner").into(),
        str_or(sc, "/reclaimPolicy", "Delete").into(),
        str_or(sc, "/volumeBindingMode", "Immediate").into(),
        boolean(sc, "/allowVolumeExpansion").unwrap_or(false).into(),
        age(sc),
    ]
}
