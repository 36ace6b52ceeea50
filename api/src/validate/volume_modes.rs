//! What a PersistentVolume and a claim share: their access modes and
//! volume mode.

use serde_json::Value;

use super::opt;
use crate::error::FieldError;

const ACCESS_MODES: &[&str] = &[
    "ReadOnlyMany",
    "ReadWriteMany",
    "ReadWriteOnce",
    "ReadWriteOncePod",
];

pub(crate) fn access_modes(modes: &[Value], path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut once_pod = false;
    let mut other = false;
    for mode in modes {
        let mode = mode.as_str().unwrap_or("");
        if !ACCESS_MODES.contains(&mode) {
            errs.push(FieldError::not_supported(path, mode, ACCESS_MODES));
        }
        if mode == "ReadWriteOncePod" {
            once_pod = true;
        } else {
            other = true;
        }
    }
    if once_pod && other {
        errs.push(FieldError::forbidden(
            path,
            "may not use ReadWriteOncePod with other access modes",
        ));
    }
    errs
}

pub(crate) fn volume_mode(spec: &Value, path: &str) -> Option<FieldError> {
    let mode = opt(spec, "volumeMode")?.as_str().unwrap_or("");
    (!matches!(mode, "Block" | "Filesystem"))
        .then(|| FieldError::not_supported(path, mode, &["Block", "Filesystem"]))
}

/// ValidatePersistentVolumeUpdate's and ValidatePersistentVolumeClaimUpdate's
/// shared rule: the volume mode never changes.
pub(crate) fn volume_mode_unchanged(object: &Value, old: &Value) -> Option<FieldError> {
    fn mode(object: &Value) -> Option<&str> {
        opt(super::field(object, "spec"), "volumeMode").and_then(Value::as_str)
    }
    let new_mode = mode(object);
    (new_mode != mode(old))
        .then(|| FieldError::immutable("volumeMode", &super::meta::go_opt_str(new_mode)))
}
