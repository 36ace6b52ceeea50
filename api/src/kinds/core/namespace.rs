//! Namespace (core/v1): a scope for names.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::defaults::{default_zero, ensure_child, Object};
use crate::error::FieldError;
use crate::kinds::{Kind, NameRule};
use crate::printers::values::{age, name, str_or};
use crate::printers::{age_col, col, name_col, Cell, TableColumn};
use crate::registry::ResourceDef;
use crate::validate::meta;
use crate::validate::{field, list_of, opt, str_of};
use serde_json::json;

pub struct Namespace;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "",
        "v1",
        "namespaces",
        "Namespace",
        false,
        Arc::new(Namespace),
    )
    .short_names(&["ns"])
    .verbs(&[
        "create", "delete", "get", "list", "patch", "update", "watch",
    ])
    .subresources(&["finalize", "status"])
    .selectable_fields(&["status.phase"])]
}

impl Kind for Namespace {
    fn prepare_for_create(&self, object: &mut Value) {
        let Some(obj) = object.as_object_mut() else {
            return;
        };
        // Upstream keeps the finalizers a client asked for and makes sure
        // "kubernetes" is among them.
        let spec = obj.entry("spec").or_insert_with(|| json!({}));
        if !spec.is_object() {
            *spec = json!({});
        }
        if let Some(spec) = spec.as_object_mut() {
            let finalizers = spec.entry("finalizers").or_insert_with(|| json!([]));
            if !finalizers.is_array() {
                *finalizers = json!([]);
            }
            if let Some(list) = finalizers.as_array_mut() {
                if !list.iter().any(|f| f == "kubernetes") {
                    list.push(json!("kubernetes"));
                }
            }
        }
        obj.insert("status".into(), json!({"phase": "Active"}));
        label_with_own_name(object);
    }

    fn finalizers_done(&self, object: &Value) -> bool {
        object
            .pointer("/spec/finalizers")
            .and_then(Value::as_array)
            .is_none_or(|f| f.is_empty())
    }

    fn prepare_for_delete(&self, object: &mut Value) {
        if let Some(obj) = object.as_object_mut() {
            obj.insert("status".into(), json!({"phase": "Terminating"}));
        }
    }

    fn prepare_for_update(&self, object: &mut Value, old: &Value) {
        // spec.finalizers and status belong to the finalize and status subresources.
        if let Some(obj) = object.as_object_mut() {
            for field in ["spec", "status"] {
                match old.get(field) {
                    Some(v) => obj.insert(field.into(), v.clone()),
                    None => obj.remove(field),
                };
            }
        }
        label_with_own_name(object);
    }

    fn subresource_update(&self, subresource: &str, object: &Value, old: &Value) -> Option<Value> {
        // Only spec.finalizers changes through finalize.
        (subresource == "finalize")
            .then(|| crate::object::only_at(old, object, &["spec", "finalizers"]))
    }

    fn name_rule(&self) -> NameRule {
        NameRule::Label
    }

    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        set_defaults(object);
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        validate(object)
    }

    fn validate_update(&self, object: &Value, _old: &Value) -> Vec<FieldError> {
        validate(object)
    }

    fn validate_status_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        validate_status(object, old)
    }

    fn table_columns(&self) -> Vec<TableColumn> {
        vec![
            name_col(),
            col("Status", "string", "The status of the namespace"),
            age_col(),
        ]
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        vec![
            name(object).into(),
            str_or(object, "/status/phase", "Active").into(),
            age(object),
        ]
    }
}

/// Every namespace carries its own name as the `kubernetes.io/metadata.name`
/// label, as upstream sets it on create and keeps it on update.
fn label_with_own_name(object: &mut Value) {
    let name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .map(str::to_string);
    if let (Some(name), Some(meta)) = (
        name,
        object.get_mut("metadata").and_then(Value::as_object_mut),
    ) {
        let labels = meta
            .entry("labels")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(labels) = labels.as_object_mut() {
            labels.insert("kubernetes.io/metadata.name".into(), Value::String(name));
        }
    }
}

/// `SetDefaults_NamespaceStatus`: a namespace is Active unless it says
/// otherwise. The status struct always exists in Go, so a status write
/// without one stores `{"phase": "Active"}`.
fn set_defaults(namespace: &mut Object) {
    if let Some(status) = ensure_child(namespace, "status") {
        default_zero(status, "phase", json!("Active"));
    }
}

/// Namespace spec.finalizers (reported on `spec.finalizers`, unindexed, as
/// upstream does).
fn validate(object: &Value) -> Vec<FieldError> {
    list_of(field(object, "spec"), "finalizers")
        .iter()
        .flat_map(|f| meta::finalizer_name(f.as_str().unwrap_or(""), "spec.finalizers"))
        .collect()
}

/// ValidateNamespaceStatusUpdate: the phase follows the deletion timestamp
/// (upstream's path, `status.Phase`, capitalised as it is).
fn validate_status(object: &Value, _old: &Value) -> Vec<FieldError> {
    let phase = str_of(field(object, "status"), "phase");
    let deleting = opt(field(object, "metadata"), "deletionTimestamp").is_some();
    let (expected, message) = if deleting {
        (
            "Terminating",
            "may only be 'Terminating' if `deletionTimestamp` is not empty",
        )
    } else {
        (
            "Active",
            "may only be 'Active' if `deletionTimestamp` is empty",
        )
    };
    if phase == expected {
        Vec::new()
    } else {
        vec![FieldError::invalid("status.Phase", phase, message)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespace_starts_active_with_finalizer() {
        let mut ns = json!({"metadata": {"name": "demo"}});
        Namespace.prepare_for_create(&mut ns);
        assert_eq!(ns["status"]["phase"], "Active");
        assert_eq!(ns["spec"]["finalizers"][0], "kubernetes");
        assert_eq!(
            ns["metadata"]["labels"]["kubernetes.io/metadata.name"],
            "demo"
        );
    }
}
