//! Patch application: JSON patch (RFC 6902), JSON merge patch (RFC 7386) and
//! strategic merge patch for built-in kinds.

pub mod patch_meta;
pub mod strategic;

use serde_json::Value;

use crate::error::{ApiError, ApiResult, StatusReason};

/// The patch formats upstream accepts, by content type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    Json,
    Merge,
    StrategicMerge,
    Apply,
}

/// Applies `patch` to `original` (an object of OpenAPI definition `definition`).
pub fn apply(
    patch_type: PatchType,
    original: &Value,
    patch: &Value,
    definition: &str,
) -> ApiResult<Value> {
    match patch_type {
        PatchType::Json => {
            let ops: json_patch::Patch = serde_json::from_value(patch.clone()).map_err(|e| {
                ApiError::bad_request(format!(
                    "the server rejected our request due to an error in our request: {e}"
                ))
            })?;
            let mut doc = original.clone();
            json_patch::patch(&mut doc, &ops).map_err(|e| {
                ApiError::new(
                    StatusReason::Invalid,
                    format!("the server rejected our request due to an error in our request: {e}"),
                )
            })?;
            Ok(doc)
        }
        PatchType::Merge => {
            if !patch.is_object() {
                return Err(ApiError::bad_request("json: cannot unmarshal into Go value of type map[string]interface {}: a merge patch must be a JSON object"));
            }
            let mut doc = original.clone();
            json_patch::merge(&mut doc, patch);
            Ok(doc)
        }
        PatchType::StrategicMerge => {
            if !patch.is_object() {
                return Err(ApiError::bad_request("json: cannot unmarshal into Go value of type map[string]interface {}: a strategic merge patch must be a JSON object"));
            }
            strategic_merge(original, patch, definition)
        }
        PatchType::Apply => Err(ApiError::new(
            StatusReason::UnsupportedMediaType,
            "apply patches are handled by server-side apply",
        )),
    }
}

fn strategic_merge(original: &Value, patch: &Value, definition: &str) -> ApiResult<Value> {
    strategic::apply_strategic_merge_patch(original, patch, definition).map_err(|e| {
        let reason = match e.status_code() {
            415 => StatusReason::UnsupportedMediaType,
            422 => StatusReason::Invalid,
            _ => StatusReason::BadRequest,
        };
        ApiError::new(reason, e.to_string())
    })
}
