//! What a Role and a ClusterRole share: their rules, as upstream's
//! ValidatePolicyRule checks them.

use serde_json::Value;

use crate::error::FieldError;
use crate::validate::meta::go_string_slice;
use crate::validate::{child, index, list_of, opt};

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

pub(super) fn rules(object: &Value, namespaced: bool) -> Vec<FieldError> {
    list_of(object, "rules")
        .iter()
        .enumerate()
        .flat_map(|(i, rule)| policy_rule(rule, namespaced, &index("rules", i)))
        .collect()
}
