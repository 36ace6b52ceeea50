//! StorageObjectInUseProtection: new PersistentVolumes and
//! PersistentVolumeClaims get the protection finalizer, so deleting one a
//! pod still uses (a claim) or a claim is still bound to (a volume) waits
//! until the storage-protection controller finds it unused.

use serde_json::{json, Value};

use super::super::attributes::{Attributes, Operation};

pub const PVC_PROTECTION: &str = "kubernetes.io/pvc-protection";
pub const PV_PROTECTION: &str = "kubernetes.io/pv-protection";

pub(super) fn admit(attributes: &Attributes<'_>, object: Option<&mut Value>) {
    if attributes.operation != Operation::Create {
        return;
    }
    let finalizer = if super::refusal::is_core(attributes, "persistentvolumeclaims") {
        PVC_PROTECTION
    } else if super::refusal::is_core(attributes, "persistentvolumes") {
        PV_PROTECTION
    } else {
        return;
    };
    let Some(metadata) = object.and_then(|o| {
        o.as_object_mut()
            .map(|o| o.entry("metadata").or_insert_with(|| json!({})))
            .and_then(Value::as_object_mut)
    }) else {
        return;
    };
    let finalizers = metadata.entry("finalizers").or_insert_with(|| json!([]));
    if finalizers.is_null() {
        *finalizers = json!([]);
    }
    if let Some(finalizers) = finalizers.as_array_mut() {
        if !finalizers.iter().any(|f| f == finalizer) {
            finalizers.push(json!(finalizer));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::attributes_for;

    fn finalizers(resource: &str, object: Value, operation: Operation) -> Value {
        let mut object = object;
        attributes_for("", resource, operation, |attributes| {
            admit(attributes, Some(&mut object))
        });
        object["metadata"]["finalizers"].clone()
    }

    #[test]
    fn claims_and_volumes_are_protected_once() {
        assert_eq!(
            finalizers("persistentvolumeclaims", json!({}), Operation::Create),
            json!([PVC_PROTECTION])
        );
        assert_eq!(
            finalizers(
                "persistentvolumes",
                json!({"metadata": {"finalizers": ["a", PV_PROTECTION]}}),
                Operation::Create
            ),
            json!(["a", PV_PROTECTION])
        );
        assert_eq!(
            finalizers("persistentvolumeclaims", json!({}), Operation::Update),
            Value::Null
        );
        assert_eq!(
            finalizers("configmaps", json!({}), Operation::Create),
            Value::Null
        );
    }
}
