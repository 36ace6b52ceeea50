//! Upstream's per-kind validation (kube-apiserver 1.32's `ValidateXxx` and
//! `ValidateXxxUpdate`) for the built-in kinds, with upstream's field paths
//! and messages byte for byte, so 422 causes read as kube-apiserver's.
//!
//! Objects arrive in their versioned JSON form, already defaulted. A field
//! upstream defaults is treated as holding its default when it is absent or
//! carries a protobuf zero value, so validation does not depend on every
//! default having been filled in. Metadata (name, namespace, labels,
//! annotations) is validated by the pipeline; nested ObjectMeta such as a pod
//! template's labels is validated here.
//!
//! Each kind's rules live in its file in `kinds/`; what is here is what
//! several kinds share (metadata, selectors, quantities, pod templates and
//! specs, workload and job specs, ...) and the JSON accessors they read with.

pub(crate) mod config_data;
pub mod ip;
pub(crate) mod job_spec;
pub mod meta;
pub mod object_meta;
pub(crate) mod pod;
pub mod quantity;
pub(crate) mod volume_modes;
pub(crate) mod workloads;

use serde_json::{Map, Value};

use crate::error::FieldError;

/// ValidateNonnegativeField on each of `names` under `parent` (at
/// `parent_path`), an absent count reading 0 as Go's typed field does.
pub(crate) fn nonnegative_counts(
    parent: &Value,
    parent_path: &str,
    names: &[&str],
    errs: &mut Vec<FieldError>,
) {
    for name in names {
        let count = int_of(parent, name).unwrap_or(0);
        errs.extend(meta::nonnegative(count, &child(parent_path, name)));
    }
}

// Small accessors over the JSON form. Absent, null and Go zero values read the
// same, as upstream's typed structs see them.

static NULL: Value = Value::Null;

pub(crate) fn field<'a>(v: &'a Value, key: &str) -> &'a Value {
    v.get(key).unwrap_or(&NULL)
}

pub(crate) fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// A pointer field: `None` when absent or null.
pub(crate) fn opt<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key).filter(|f| !f.is_null())
}

pub(crate) fn int_of(v: &Value, key: &str) -> Option<i64> {
    v.get(key).and_then(Value::as_i64)
}

pub(crate) fn bool_of(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool).unwrap_or(false)
}

pub(crate) fn list_of<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

pub(crate) fn map_of<'a>(v: &'a Value, key: &str) -> Option<&'a Map<String, Value>> {
    v.get(key).and_then(Value::as_object)
}

/// `base.name`, as field.Path.Child.
pub(crate) fn child(base: &str, name: &str) -> String {
    if base.is_empty() {
        name.to_string()
    } else {
        format!("{base}.{name}")
    }
}

/// `base[i]`, as field.Path.Index.
pub(crate) fn index(base: &str, i: usize) -> String {
    format!("{base}[{i}]")
}

/// `base[key]`, as field.Path.Key.
pub(crate) fn key(base: &str, k: &str) -> String {
    format!("{base}[{k}]")
}

#[cfg(test)]
mod tests;
