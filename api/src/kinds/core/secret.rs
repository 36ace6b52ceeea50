//! Secret (core/v1): sensitive data.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{json, Map, Value};

use base64::Engine as _;

use crate::defaults::{default_zero, Object};
use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::values::{age, name, str_or, string_map};
use crate::printers::{age_col, col, name_col, Cell, TableColumn};
use crate::registry::ResourceDef;
use crate::validate::config_data::{decoded_len, immutable_data, MAX_SECRET_SIZE};
use crate::validate::meta::go_quote;
use crate::validate::object_meta;
use crate::validate::quantity::Quantity;
use crate::validate::{field, key, map_of, opt, str_of};

pub struct Secret;

pub fn resources() -> Vec<ResourceDef> {
    vec![
        ResourceDef::new("", "v1", "secrets", "Secret", true, Arc::new(Secret))
            .selectable_fields(&["type"]),
    ]
}

impl Kind for Secret {
    fn quota_usage(&self, _object: &Value) -> Vec<(String, Quantity)> {
        vec![("secrets".into(), Quantity::count(1))]
    }

    fn prepare_for_create(&self, object: &mut Value) {
        Self::normalize(object);
    }

    fn prepare_for_update(&self, object: &mut Value, _old: &Value) {
        Self::normalize(object);
    }

    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        set_defaults(object);
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        let mut errs = Self::data_keys(object);
        errs.extend(validate(object));
        errs
    }

    fn validate_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = Self::data_keys(object);
        errs.extend(validate(object));
        errs.extend(validate_update(object, old));
        errs
    }

    fn table_columns(&self) -> Vec<TableColumn> {
        vec![
            name_col(),
            col("Type", "string", D_SECRET_TYPE),
            col("Data", "string", D_SECRET_DATA),
            age_col(),
        ]
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        cells(object)
    }
}

/// `stringData` is write-only and folds into base64 `data`; `type`
/// defaults to Opaque; `data` values must be base64 and keys valid.
impl Secret {
    fn normalize(object: &mut Value) {
        let Some(obj) = object.as_object_mut() else {
            return;
        };
        if let Some(Value::Object(string_data)) = obj.remove("stringData") {
            let data = obj
                .entry("data")
                .or_insert_with(|| Value::Object(Map::new()));
            if !data.is_object() {
                *data = Value::Object(Map::new());
            }
            if let Some(data) = data.as_object_mut() {
                for (k, v) in string_data {
                    let text = v.as_str().unwrap_or_default().to_string();
                    data.insert(
                        k,
                        Value::String(base64::engine::general_purpose::STANDARD.encode(text)),
                    );
                }
            }
        }
        if obj
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .is_empty()
        {
            obj.insert("type".into(), Value::String("Opaque".into()));
        }
    }
}

impl Secret {
    /// Upstream's ValidateSecret key checks. The values need none: they
    /// were decoded as Go decodes `[]byte` (base64) before validation.
    fn data_keys(object: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        if let Some(data) = object.get("data") {
            match data.as_object() {
                Some(map) => {
                    for key in map.keys() {
                        errs.extend(object_meta::config_map_key(&format!("data[{key}]"), key));
                    }
                }
                None if data.is_null() => {}
                None => errs.push(FieldError::invalid("data", "", "must be a map")),
            }
        }
        errs
    }
}

/// `SetDefaults_Secret`.
fn set_defaults(secret: &mut Object) {
    default_zero(secret, "type", json!("Opaque"));
}

fn secret_data<'a>(object: &'a Value, name: &str) -> Option<&'a Value> {
    map_of(object, "data").and_then(|d| d.get(name))
}

/// Secret rules beyond the data keys and base64 (those are the strategy's):
/// total size and the keys each well-known type requires.
fn validate(object: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let total: usize = map_of(object, "data")
        .into_iter()
        .flatten()
        .map(|(_, v)| decoded_len(v))
        .sum();
    if total > MAX_SECRET_SIZE {
        errs.push(FieldError::too_long_bytes("data", MAX_SECRET_SIZE));
    }
    let require = |name: &str, errs: &mut Vec<FieldError>| {
        if secret_data(object, name).is_none() {
            errs.push(FieldError::required(key("data", name), ""));
        }
    };
    match str_of(object, "type") {
        "kubernetes.io/service-account-token" => {
            let annotation = opt(field(object, "metadata"), "annotations")
                .and_then(|a| a.get("kubernetes.io/service-account.name"))
                .and_then(Value::as_str)
                .unwrap_or("");
            if annotation.is_empty() {
                errs.push(FieldError::required(
                    "metadata.annotations[kubernetes.io/service-account.name]",
                    "",
                ));
            }
        }
        "kubernetes.io/dockercfg" => errs.extend(docker_config(object, ".dockercfg")),
        "kubernetes.io/dockerconfigjson" => errs.extend(docker_config(object, ".dockerconfigjson")),
        "kubernetes.io/basic-auth"
            if secret_data(object, "username").is_none()
                && secret_data(object, "password").is_none() =>
        {
            require("username", &mut errs);
            require("password", &mut errs);
        }
        "kubernetes.io/ssh-auth"
            if secret_data(object, "ssh-privatekey").is_none_or(|v| decoded_len(v) == 0) =>
        {
            errs.push(FieldError::required("data[ssh-privatekey]", ""));
        }
        "kubernetes.io/tls" => {
            require("tls.crt", &mut errs);
            require("tls.key", &mut errs);
        }
        _ => {}
    }
    errs
}

/// A docker config key must be present and hold a JSON object.
fn docker_config(object: &Value, name: &str) -> Vec<FieldError> {
    let path = key("data", name);
    let Some(raw) = secret_data(object, name) else {
        return vec![FieldError::required(path, "")];
    };
    let bytes = raw
        .as_str()
        .and_then(|s| base64::engine::general_purpose::STANDARD.decode(s).ok())
        .unwrap_or_default();
    let problem = match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(_)) | Ok(Value::Null) => None,
        Ok(other) => Some(format!(
            "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            go_json_kind(&other)
        )),
        Err(e) if e.is_eof() => Some("unexpected end of JSON input".to_string()),
        Err(_) => {
            let first = String::from_utf8_lossy(&bytes)
                .trim_start()
                .chars()
                .next()
                .unwrap_or(' ');
            Some(format!(
                "invalid character '{first}' looking for beginning of value"
            ))
        }
    };
    problem
        .map(|msg| FieldError::invalid(path, "<secret contents redacted>", &msg))
        .into_iter()
        .collect()
}

fn go_json_kind(value: &Value) -> &'static str {
    match value {
        Value::Array(_) => "array",
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
        _ => "object",
    }
}

fn validate_update(object: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let new_type = str_of(object, "type");
    let old_type = str_of(old, "type");
    if new_type != old_type {
        errs.push(FieldError::immutable("type", &go_quote(new_type)));
    }
    errs.extend(immutable_data(object, old, &["data"]));
    errs
}

const D_SECRET_TYPE: &str = "Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types";
const D_SECRET_DATA: &str = "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4";

fn cells(o: &Value) -> Vec<Cell> {
    // stringData is write-only and merged into data upstream; count the union
    // in case an object still carries it.
    let mut keys: BTreeSet<String> = string_map(o, "/data").into_keys().collect();
    keys.extend(string_map(o, "/stringData").into_keys());
    vec![
        name(o).into(),
        str_or(o, "/type", "Opaque").into(),
        i64::try_from(keys.len()).unwrap_or(i64::MAX).into(),
        age(o),
    ]
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn string_data_folds_into_data() {
        let mut s = json!({"stringData": {"user": "admin"}});
        Secret.prepare_for_create(&mut s);
        assert_eq!(s["data"]["user"], "YWRtaW4=");
        assert_eq!(s["type"], "Opaque");
        assert!(s.get("stringData").is_none());
    }

    #[test]
    fn data_keys_must_be_config_map_keys() {
        let errs = Secret::data_keys(&json!({"data": {"a b": "YQ==", "ok.key": "YQ=="}}));
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].field, "data[a b]");
    }
}
