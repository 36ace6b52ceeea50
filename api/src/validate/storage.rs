//! storage.k8s.io/v1: StorageClass.

use serde_json::Value;

use super::meta::{self, go_opt_str};
use super::{index, list_of, map_of, opt, str_of};
use crate::error::FieldError;

const MAX_PARAMETERS: usize = 512;
const MAX_PARAMETERS_BYTES: usize = 256 * 1024;

pub fn storage_class(object: &Value) -> Vec<FieldError> {
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
pub fn storage_class_update(object: &Value, old: &Value) -> Vec<FieldError> {
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
