//! Conversion between the versions a kind is served at. Objects are stored at
//! one version per kind (upstream's storage version); a request at another
//! version is converted on the way in and every read on the way out. In
//! kube-apiserver 1.32 that is HorizontalPodAutoscaler (autoscaling/v1 and
//! autoscaling/v2; stored as v2) and Event (core/v1, which is stored, and
//! events.k8s.io/v1), each converted in its kind file. What every conversion
//! shares is here: its error and an object's type.

use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConversionError {
    #[error("object has no apiVersion or kind")]
    MissingTypeMeta,
    #[error("converting {kind} from {from} to {to} is not supported")]
    Unsupported {
        kind: String,
        from: String,
        to: String,
    },
    /// A conversion webhook's failure, in upstream's words.
    #[error("{0}")]
    Webhook(String),
    #[error("annotation {annotation} does not hold valid JSON: {reason}")]
    InvalidAnnotation {
        annotation: &'static str,
        reason: String,
    },
}

/// The apiVersion and kind an object says it has.
pub(crate) fn type_meta(object: &Value) -> Result<(String, String), ConversionError> {
    let text = |key: &str| {
        object
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or(ConversionError::MissingTypeMeta)
    };
    Ok((text("apiVersion")?, text("kind")?))
}

pub(crate) fn unsupported(kind: String, from: String, to: &str) -> ConversionError {
    ConversionError::Unsupported {
        kind,
        from,
        to: to.to_string(),
    }
}

/// What a kind served at one version does: the object as it is when it is
/// already at `target_api_version`, an error otherwise.
pub fn unconvertible(object: Value, target_api_version: &str) -> Result<Value, ConversionError> {
    let (api_version, kind) = type_meta(&object)?;
    if api_version == target_api_version {
        return Ok(object);
    }
    Err(unsupported(kind, api_version, target_api_version))
}
