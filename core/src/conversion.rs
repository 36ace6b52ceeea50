//! Conversion between the versions a kind is served at.
//!
//! Objects are stored at one version per kind (upstream's storage version);
//! a request at another version is converted on the way in and every read
//! on the way out. Kinds served at a single version pass through untouched.

mod events;

use serde_json::Value;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConversionError {
    #[error("the object to convert is not a JSON object")]
    NotAnObject,
    #[error("no conversion for {kind} from {from} to {to}")]
    Unsupported {
        kind: String,
        from: String,
        to: String,
    },
}

/// Converts `object` (carrying its own apiVersion and kind) to
/// `target_api_version`; identity when it is already there.
pub fn convert(object: Value, target_api_version: &str) -> Result<Value, ConversionError> {
    let Value::Object(map) = object else {
        return Err(ConversionError::NotAnObject);
    };
    let from = map
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if from == target_api_version {
        return Ok(Value::Object(map));
    }
    let kind = map
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    match (kind.as_str(), from.as_str(), target_api_version) {
        (
            "Event",
            events::CORE_API_VERSION | events::EVENTS_API_VERSION,
            events::CORE_API_VERSION | events::EVENTS_API_VERSION,
        ) => Ok(Value::Object(events::convert(map, target_api_version))),
        _ => Err(ConversionError::Unsupported {
            kind,
            from,
            to: target_api_version.to_string(),
        }),
    }
}
