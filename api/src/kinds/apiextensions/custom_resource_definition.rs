//! CustomResourceDefinition (apiextensions.k8s.io/v1): a kind users add
//! while the server runs. This file is the definition object's own
//! behaviour (defaults, stored versions, validation, the delete that waits
//! for its custom resources); the controllers in capstan-core name,
//! establish, serve and clean up after it.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::error::FieldError;
use crate::kinds::Kind;
use crate::registry::ResourceDef;

/// Held by a definition being deleted until its custom resources are gone.
pub const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

pub struct CustomResourceDefinition;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "apiextensions.k8s.io",
        "v1",
        "customresourcedefinitions",
        "CustomResourceDefinition",
        false,
        Arc::new(CustomResourceDefinition),
    )
    .short_names(&["crd", "crds"])
    .categories(&["api-extensions"])
    .subresources(&["status"])
    .definition(
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition",
    )]
}

/// The condition of `type_` in a definition's status.
pub fn condition<'a>(crd: &'a Value, type_: &str) -> Option<&'a Value> {
    crd.pointer("/status/conditions")
        .and_then(Value::as_array)?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(type_))
}

/// Whether the condition of `type_` is True.
pub fn is_true(crd: &Value, type_: &str) -> bool {
    condition(crd, type_)
        .and_then(|c| c.get("status"))
        .and_then(Value::as_str)
        == Some("True")
}

/// Upstream's SetCRDCondition: the condition replaces the one of its type;
/// its lastTransitionTime moves only when its status does. Returns whether
/// anything changed.
pub fn set_condition(
    crd: &mut Value,
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
    now: &str,
) -> bool {
    let Some(object) = crd.as_object_mut() else {
        return false;
    };
    let status_field = object.entry("status").or_insert_with(|| json!({}));
    if !status_field.is_object() {
        *status_field = json!({});
    }
    let conditions = status_field
        .as_object_mut()
        .map(|s| s.entry("conditions").or_insert_with(|| json!([])));
    let Some(conditions) = conditions else {
        return false;
    };
    if !conditions.is_array() {
        *conditions = json!([]);
    }
    let Some(list) = conditions.as_array_mut() else {
        return false;
    };
    let text = |c: &Value, key: &str| {
        c.get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    match list
        .iter_mut()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(type_))
    {
        Some(existing) => {
            if text(existing, "status") == status
                && text(existing, "reason") == reason
                && text(existing, "message") == message
            {
                return false;
            }
            let transition = if text(existing, "status") == status {
                existing
                    .get("lastTransitionTime")
                    .cloned()
                    .unwrap_or(json!(now))
            } else {
                json!(now)
            };
            *existing = json!({
                "type": type_, "status": status, "lastTransitionTime": transition,
                "reason": reason, "message": message,
            });
        }
        None => list.push(json!({
            "type": type_, "status": status, "lastTransitionTime": now,
            "reason": reason, "message": message,
        })),
    }
    true
}

/// The name of the version marked as storage.
fn storage_version(crd: &Value) -> Option<String> {
    crd.pointer("/spec/versions")
        .and_then(Value::as_array)?
        .iter()
        .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .and_then(|v| v.get("name").and_then(Value::as_str))
        .map(str::to_string)
}

/// Appends the storage version to `status.storedVersions` if missing.
fn record_storage_version(crd: &mut Value) {
    let Some(version) = storage_version(crd) else {
        return;
    };
    let Some(status) = crd.get_mut("status").and_then(Value::as_object_mut) else {
        return;
    };
    let stored = status.entry("storedVersions").or_insert_with(|| json!([]));
    if !stored.is_array() {
        *stored = json!([]);
    }
    if let Some(list) = stored.as_array_mut() {
        if !list.iter().any(|v| v.as_str() == Some(version.as_str())) {
            list.push(Value::String(version));
        }
    }
}

impl Kind for CustomResourceDefinition {
    fn tracks_generation(&self) -> bool {
        true
    }

    fn standard_finalizers_only(&self) -> bool {
        false
    }

    /// Upstream's v1 SetDefaults_CustomResourceDefinition(Spec).
    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) else {
            return;
        };
        if let Some(names) = spec.get_mut("names").and_then(Value::as_object_mut) {
            let kind = names
                .get("kind")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            let empty = |names: &Map<String, Value>, key: &str| {
                names
                    .get(key)
                    .and_then(Value::as_str)
                    .is_none_or(str::is_empty)
            };
            if empty(names, "singular") {
                names.insert("singular".into(), json!(kind.to_lowercase()));
            }
            if empty(names, "listKind") && !kind.is_empty() {
                names.insert("listKind".into(), json!(format!("{kind}List")));
            }
        }
        match spec.get_mut("conversion") {
            None | Some(Value::Null) => {
                spec.insert("conversion".into(), json!({"strategy": "None"}));
            }
            Some(conversion) => {
                if let Some(service) = conversion.pointer_mut("/webhook/clientConfig/service") {
                    if let Some(service) = service.as_object_mut() {
                        service.entry("port").or_insert(json!(443));
                    }
                }
            }
        }
    }

    fn empty_status(&self) -> Value {
        json!({"acceptedNames": {"plural": "", "kind": ""}, "storedVersions": []})
    }

    fn prepare_for_create(&self, object: &mut Value) {
        record_storage_version(object);
    }

    fn prepare_for_update(&self, object: &mut Value, _old: &Value) {
        record_storage_version(object);
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        super::validation::definition(object, None)
    }

    fn validate_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        super::validation::definition(object, Some(old))
    }

    fn validate_status_update(&self, object: &Value, _old: &Value) -> Vec<FieldError> {
        super::validation::accepted_names(object)
    }

    /// A definition is never removed by its first delete: that marks it
    /// (below) and the cleanup controller finishes it.
    fn finalizers_done(&self, object: &Value) -> bool {
        crate::object::meta(object).is_some_and(|m| m.contains_key("deletionTimestamp"))
    }

    /// The first delete marks the definition Terminating and holds it with
    /// the cleanup finalizer until its custom resources are deleted.
    fn prepare_for_delete(&self, object: &mut Value) {
        let mut finalizers = crate::object::finalizers(object);
        if !finalizers.iter().any(|f| f == CLEANUP_FINALIZER) {
            finalizers.push(CLEANUP_FINALIZER.to_string());
            crate::object::set_meta(object, "finalizers", json!(finalizers));
        }
        set_condition(
            object,
            "Terminating",
            "True",
            "InstanceDeletionPending",
            "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
            &crate::object::now_timestamp(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_stored_versions_follow_upstream() {
        let kind = CustomResourceDefinition;
        let mut crd = json!({"spec": {"names": {"kind": "Widget", "plural": "widgets"},
            "versions": [{"name": "v1", "served": true, "storage": false},
                         {"name": "v2", "served": true, "storage": true}]},
            "status": kind.empty_status()});
        kind.apply_defaults("v1", crd.as_object_mut().unwrap());
        assert_eq!(crd["spec"]["names"]["singular"], "widget");
        assert_eq!(crd["spec"]["names"]["listKind"], "WidgetList");
        assert_eq!(crd["spec"]["conversion"], json!({"strategy": "None"}));
        kind.prepare_for_create(&mut crd);
        assert_eq!(crd["status"]["storedVersions"], json!(["v2"]));
        crd["spec"]["versions"][0]["storage"] = json!(true);
        crd["spec"]["versions"][1]["storage"] = json!(false);
        kind.prepare_for_update(&mut crd, &Value::Null);
        assert_eq!(crd["status"]["storedVersions"], json!(["v2", "v1"]));
    }

    #[test]
    fn conditions_keep_their_transition_time_while_status_stays() {
        let mut crd = json!({});
        assert!(set_condition(
            &mut crd,
            "Established",
            "False",
            "Installing",
            "m",
            "t1"
        ));
        assert!(!set_condition(
            &mut crd,
            "Established",
            "False",
            "Installing",
            "m",
            "t2"
        ));
        assert!(set_condition(
            &mut crd,
            "Established",
            "False",
            "Other",
            "m",
            "t3"
        ));
        assert_eq!(
            condition(&crd, "Established").unwrap()["lastTransitionTime"],
            "t1"
        );
        assert!(set_condition(
            &mut crd,
            "Established",
            "True",
            "InitialNamesAccepted",
            "m",
            "t4"
        ));
        assert_eq!(
            condition(&crd, "Established").unwrap()["lastTransitionTime"],
            "t4"
        );
        assert!(is_true(&crd, "Established"));
    }
}
