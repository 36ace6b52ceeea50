//! rbac.authorization.k8s.io/v1: Role, ClusterRole, RoleBinding,
//! ClusterRoleBinding.

use serde_json::Value;

use super::meta::{self, go_quote, go_string_slice};
use super::{child, field, index, list_of, opt, str_of};
use crate::error::FieldError;
use crate::kinds::NameRule;

const GROUP: &str = "rbac.authorization.k8s.io";

/// ValidatePolicyRule.
fn policy_rule(rule: &Value, namespaced: bool, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if list_of(rule, "verbs").is_empty() {
        errs.push(FieldError::required(
            child(path, "verbs"),
            "verbs must contain at least one value",
        ));
    }
    let urls = list_of(rule, "nonResourceURLs");
    if !urls.is_empty() {
        let rendered = go_string_slice("[]string", opt(rule, "nonResourceURLs"));
        if namespaced {
            errs.push(FieldError::invalid_rendered(
                child(path, "nonResourceURLs"),
                &rendered,
                "namespaced rules cannot apply to non-resource URLs",
            ));
        }
        if !list_of(rule, "apiGroups").is_empty()
            || !list_of(rule, "resources").is_empty()
            || !list_of(rule, "resourceNames").is_empty()
        {
            errs.push(FieldError::invalid_rendered(
                child(path, "nonResourceURLs"),
                &rendered,
                "rules cannot apply to both regular resources and non-resource URLs",
            ));
        }
        return errs;
    }
    if list_of(rule, "apiGroups").is_empty() {
        errs.push(FieldError::required(
            child(path, "apiGroups"),
            "resource rules must supply at least one api group",
        ));
    }
    if list_of(rule, "resources").is_empty() {
        errs.push(FieldError::required(
            child(path, "resources"),
            "resource rules must supply at least one resource",
        ));
    }
    errs
}

fn rules(object: &Value, namespaced: bool) -> Vec<FieldError> {
    list_of(object, "rules")
        .iter()
        .enumerate()
        .flat_map(|(i, rule)| policy_rule(rule, namespaced, &index("rules", i)))
        .collect()
}

pub fn role(object: &Value) -> Vec<FieldError> {
    rules(object, true)
}

pub fn cluster_role(object: &Value) -> Vec<FieldError> {
    let mut errs = rules(object, false);
    if let Some(aggregation) = opt(object, "aggregationRule") {
        let selectors = list_of(aggregation, "clusterRoleSelectors");
        if selectors.is_empty() {
            errs.push(FieldError::required(
                "aggregationRule.clusterRoleSelectors",
                "at least one clusterRoleSelector required if aggregationRule is non-nil",
            ));
        }
        for (i, selector) in selectors.iter().enumerate() {
            errs.extend(meta::label_selector(
                Some(selector),
                &index("aggregationRule.clusterRoleSelectors", i),
            ));
        }
    }
    errs
}

fn role_ref(object: &Value, kinds: &[&str]) -> Vec<FieldError> {
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

fn subjects(object: &Value, namespaced: bool) -> Vec<FieldError> {
    list_of(object, "subjects")
        .iter()
        .enumerate()
        .flat_map(|(i, s)| subject(s, namespaced, &index("subjects", i)))
        .collect()
}

pub fn role_binding(object: &Value) -> Vec<FieldError> {
    let mut errs = role_ref(object, &["Role", "ClusterRole"]);
    errs.extend(subjects(object, true));
    errs
}

pub fn cluster_role_binding(object: &Value) -> Vec<FieldError> {
    let mut errs = role_ref(object, &["ClusterRole"]);
    errs.extend(subjects(object, false));
    errs
}

/// roleRef cannot change once a binding exists.
pub fn role_ref_update(object: &Value, old: &Value) -> Vec<FieldError> {
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
