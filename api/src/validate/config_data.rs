//! What a ConfigMap and a Secret share: the size limit of their data and
//! what `immutable: true` freezes.

use base64::Engine as _;
use serde_json::Value;

use super::{bool_of, map_of};
use crate::error::FieldError;

/// Upstream's MaxSecretSize, shared by Secrets and ConfigMaps.
pub(crate) const MAX_SECRET_SIZE: usize = 1024 * 1024;

const IMMUTABLE_WHEN_SET: &str = "field is immutable when `immutable` is set";

/// Secret- and ConfigMap-style `immutable: true`: the flag and the data stay.
pub(crate) fn immutable_data(object: &Value, old: &Value, data_fields: &[&str]) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if !bool_of(old, "immutable") {
        return errs;
    }
    if !bool_of(object, "immutable") {
        errs.push(FieldError::forbidden("immutable", IMMUTABLE_WHEN_SET));
    }
    for name in data_fields {
        if map_or_empty(object, name) != map_or_empty(old, name) {
            errs.push(FieldError::forbidden(*name, IMMUTABLE_WHEN_SET));
        }
    }
    errs
}

/// A map field where null and absent are the same nil map.
fn map_or_empty(object: &Value, name: &str) -> Option<serde_json::Map<String, Value>> {
    map_of(object, name).filter(|m| !m.is_empty()).cloned()
}

pub(crate) fn decoded_len(value: &Value) -> usize {
    value
        .as_str()
        .and_then(|s| base64::engine::general_purpose::STANDARD.decode(s).ok())
        .map_or(0, |bytes| bytes.len())
}
