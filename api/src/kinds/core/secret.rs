//! Secret (core/v1): sensitive data.

use std::sync::Arc;

use serde_json::{Map, Value};

use base64::Engine as _;

use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::Printer;
use crate::registry::ResourceDef;
use crate::validate::corev1 as rules;
use crate::validate::object_meta;
use crate::validate::quantity::Quantity;

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
        crate::defaults::core_v1::secret(object);
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        let mut errs = Self::data_keys(object);
        errs.extend(rules::secret(object));
        errs
    }

    fn validate_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = Self::data_keys(object);
        errs.extend(rules::secret(object));
        errs.extend(rules::secret_update(object, old));
        errs
    }

    fn printer(&self) -> Printer {
        Printer::Secret
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
