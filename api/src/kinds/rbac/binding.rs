//! What a RoleBinding and a ClusterRoleBinding share: their role
//! reference and subjects (validated, defaulted and printed alike).

use serde_json::{json, Value};

use crate::defaults::{default_zero, each_item, ensure_child, str_field, Object};
use crate::error::FieldError;
use crate::kinds::NameRule;
use crate::printers::values::{age, items, name, text};
use crate::printers::Cell;
use crate::validate::meta::{self, go_quote};
use crate::validate::{child, field, index, list_of, str_of};

const GROUP: &str = "rbac.authorization.k8s.io";

pub(super) fn role_ref(object: &Value, kinds: &[&str]) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let role_ref = field(object, "roleRef");
    // An empty apiGroup is defaulted to the RBAC group.
    let group = str_of(role_ref, "apiGroup");
    if !group.is_empty() && group != GROUP {
        errs.push(FieldError::not_supported(
            "roleRef.apiGroup",
            group,
            &[GROUP],
        ));
    }
    let kind = str_of(role_ref, "kind");
    if !kinds.contains(&kind) {
        errs.push(FieldError::not_supported("roleRef.kind", kind, kinds));
    }
    let name = str_of(role_ref, "name");
    if name.is_empty() {
        errs.push(FieldError::required("roleRef.name", ""));
    } else {
        errs.extend(meta::path_segment_name(name, "roleRef.name"));
    }
    errs
}

/// ValidateRoleBindingSubject.
fn subject(subject: &Value, namespaced: bool, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = str_of(subject, "name");
    if name.is_empty() {
        errs.push(FieldError::required(child(path, "name"), ""));
    }
    let group = str_of(subject, "apiGroup");
    match str_of(subject, "kind") {
        "ServiceAccount" => {
            if !name.is_empty() {
                errs.extend(meta::name(NameRule::Subdomain, name, &child(path, "name")));
            }
            if !group.is_empty() {
                errs.push(FieldError::not_supported(
                    child(path, "apiGroup"),
                    group,
                    &[""],
                ));
            }
            if !namespaced && str_of(subject, "namespace").is_empty() {
                errs.push(FieldError::required(child(path, "namespace"), ""));
            }
        }
        // An empty apiGroup on a User or Group is defaulted to the RBAC group.
        "User" | "Group" => {
            if !group.is_empty() && group != GROUP {
                errs.push(FieldError::not_supported(
                    child(path, "apiGroup"),
                    group,
                    &[GROUP],
                ));
            }
        }
        other => errs.push(FieldError::not_supported(
            child(path, "kind"),
            other,
            &["ServiceAccount", "User", "Group"],
        )),
    }
    errs
}

pub(super) fn subjects(object: &Value, namespaced: bool) -> Vec<FieldError> {
    list_of(object, "subjects")
        .iter()
        .enumerate()
        .flat_map(|(i, s)| subject(s, namespaced, &index("subjects", i)))
        .collect()
}

/// roleRef cannot change once a binding exists.
pub(super) fn role_ref_update(object: &Value, old: &Value) -> Vec<FieldError> {
    let parts = |o: &Value| {
        let r = field(o, "roleRef");
        let group = match str_of(r, "apiGroup") {
            "" => GROUP,
            g => g,
        };
        (
            group.to_string(),
            str_of(r, "kind").to_string(),
            str_of(r, "name").to_string(),
        )
    };
    let new = parts(object);
    if new == parts(old) {
        return Vec::new();
    }
    let rendered = format!(
        "rbac.RoleRef{{APIGroup:{}, Kind:{}, Name:{}}}",
        go_quote(&new.0),
        go_quote(&new.1),
        go_quote(&new.2)
    );
    vec![FieldError::invalid_rendered(
        "roleRef",
        &rendered,
        "cannot change roleRef",
    )]
}

/// rbac/v1: roleRef's group, and each subject's group by kind.
pub(super) fn set_defaults(binding: &mut Object) {
    if let Some(role_ref) = ensure_child(binding, "roleRef") {
        default_zero(role_ref, "apiGroup", json!("rbac.authorization.k8s.io"));
    }
    each_item(binding, "subjects", |subject| {
        let group = match str_field(subject, "kind") {
            "User" | "Group" => "rbac.authorization.k8s.io",
            _ => return,
        };
        default_zero(subject, "apiGroup", json!(group));
    });
}

pub(super) fn cells(rb: &Value) -> Vec<Cell> {
    let mut users = Vec::new();
    let mut groups = Vec::new();
    let mut sas = Vec::new();
    for s in items(rb, "/subjects") {
        let subject = text(s, "/name");
        match text(s, "/kind") {
            "ServiceAccount" => sas.push(format!("{}/{subject}", text(s, "/namespace"))),
            "User" => users.push(subject.to_string()),
            "Group" => groups.push(subject.to_string()),
            _ => {}
        }
    }
    vec![
        name(rb).into(),
        format!(
            "{}/{}",
            text(rb, "/roleRef/kind"),
            text(rb, "/roleRef/name")
        )
        .into(),
        age(rb),
        users.join(", ").into(),
        groups.join(", ").into(),
        sas.join(", ").into(),
    ]
}
