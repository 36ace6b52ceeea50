//! Upstream defaulting (kube-apiserver 1.32): the `SetDefaults_*` functions of
//! `pkg/apis/<group>/<version>/defaults.go`, the `+default` tags, and the call
//! graph `zz_generated.defaults.go` builds from them, applied to objects in their
//! versioned JSON form.
//!
//! Upstream defaults typed Go structs, so "unset" depends on the Go type of a
//! field: a pointer is unset when nil, a string when empty, a number when zero,
//! a map or slice when empty. Here a field is unset when absent or `null`, and
//! additionally when it holds that Go zero value for non-pointer fields — which
//! is also what objects decoded from protobuf bodies carry for fields the client
//! never set.
//!
//! Service defaults live in the service strategy and Namespace's name label in
//! the namespace strategy, so those kinds fill them in when they prepare a
//! write, not as defaults. (The strategy also sets a namespace's phase on
//! create and delete; its default is upstream's decode-time one, which status
//! writes rely on.)
//!
//! Upstream also defaults every object it decodes from storage, so defaults
//! show through whatever a strategy cleared or added after the request was
//! decoded (a PVC's `status.phase` after its status is reset, a Job's labels
//! after selector generation). Applying the defaults again just before the
//! object is stored reproduces that; they are idempotent.
//!
//! Not reproduced: `SetDefaults_ResourceList` rounding quantities up to milli
//! precision (a serializer-level concern together with quantity
//! canonicalization), and defaults behind feature gates that are off in 1.32
//! (pod-level resources, image volumes' pull policy).

// Each kind defaults itself in its file in `kinds/`; here are the defaults
// several kinds share (pod templates and specs, volume sources and claims,
// job specs) and the helpers every defaulter uses.
pub(crate) mod job_spec;
pub(crate) mod pod_spec;
pub(crate) mod volumes;

use serde_json::{Map, Value};

pub(crate) type Object = Map<String, Value>;

/// The child object at `key`, if there is one.
pub(crate) fn child<'a>(map: &'a mut Object, key: &str) -> Option<&'a mut Object> {
    map.get_mut(key).and_then(Value::as_object_mut)
}

/// The child object at `key`, created empty when absent or null: for fields
/// upstream declares as non-pointer structs, which always exist in Go and so
/// are always defaulted. `None` only when the field holds a non-object.
pub(crate) fn ensure_child<'a>(map: &'a mut Object, key: &str) -> Option<&'a mut Object> {
    let slot = map.entry(key).or_insert_with(|| Value::Object(Map::new()));
    if slot.is_null() {
        *slot = Value::Object(Map::new());
    }
    slot.as_object_mut()
}

/// Calls `f` on every object in the array at `key`.
pub(crate) fn each_item(map: &mut Object, key: &str, mut f: impl FnMut(&mut Object)) {
    if let Some(items) = map.get_mut(key).and_then(Value::as_array_mut) {
        items
            .iter_mut()
            .filter_map(Value::as_object_mut)
            .for_each(&mut f);
    }
}

/// Whether a pointer field is nil.
pub(crate) fn is_nil(map: &Object, key: &str) -> bool {
    map.get(key).is_none_or(Value::is_null)
}

/// Whether a field holds nothing in Go terms: nil, "", 0, false, or an empty
/// map or slice.
pub(crate) fn is_zero(map: &Object, key: &str) -> bool {
    match map.get(key) {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.is_empty(),
        Some(Value::Number(n)) => n.as_f64() == Some(0.0),
        Some(Value::Bool(b)) => !b,
        Some(Value::Array(a)) => a.is_empty(),
        Some(Value::Object(o)) => o.is_empty(),
    }
}

/// Defaults a pointer field (`if obj.X == nil`).
pub(crate) fn default_pointer(map: &mut Object, key: &str, value: Value) {
    if is_nil(map, key) {
        map.insert(key.to_string(), value);
    }
}

/// Defaults a non-pointer field (`if obj.X == ""`, `== 0`, `len(obj.X) == 0`).
pub(crate) fn default_zero(map: &mut Object, key: &str, value: Value) {
    if is_zero(map, key) {
        map.insert(key.to_string(), value);
    }
}

/// The string at `key`, "" when absent.
pub(crate) fn str_field<'a>(map: &'a Object, key: &str) -> &'a str {
    map.get(key).and_then(Value::as_str).unwrap_or("")
}

#[cfg(test)]
mod tests;
