//! What the webhook configurations and the admission policies share: the
//! rules they match requests by, as upstream validates and defaults them,
//! and their CEL match conditions.

use serde_json::{json, Value};

use crate::defaults::{default_pointer, Object};
use crate::error::FieldError;
use crate::validate::meta::go_string_slice;
use crate::validate::object_meta::qualified_name_problems;

const OPERATIONS: [&str; 5] = ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"];
const SCOPES: [&str; 3] = ["*", "Cluster", "Namespaced"];
const MAX_MATCH_CONDITIONS: usize = 64;
pub(super) fn strings(value: Option<&Value>) -> Vec<&str> {
    value
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

pub(super) fn text<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

/// validateRuleWithOperations and the rule it embeds.
pub(super) fn rule_with_operations(rule: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let operations = strings(rule.get("operations"));
    if operations.is_empty() {
        errs.push(FieldError::required(format!("{path}.operations"), ""));
    }
    if operations.len() > 1 && operations.contains(&"*") {
        errs.push(FieldError::invalid_rendered(
            format!("{path}.operations"),
            &go_string_slice(
                "[]admissionregistration.OperationType",
                rule.get("operations"),
            ),
            "if '*' is present, must not specify other operations",
        ));
    }
    for (k, operation) in operations.iter().enumerate() {
        if !OPERATIONS.contains(operation) {
            errs.push(FieldError::not_supported(
                format!("{path}.operations[{k}]"),
                operation,
                &OPERATIONS,
            ));
        }
    }
    errs.extend(rule_of(rule, path));
    errs
}

/// validateRule, subresources allowed.
fn rule_of(rule: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (key, what) in [("apiGroups", "API groups"), ("apiVersions", "API versions")] {
        let values = strings(rule.get(key));
        if values.is_empty() {
            errs.push(FieldError::required(format!("{path}.{key}"), ""));
        }
        if values.len() > 1 && values.contains(&"*") {
            errs.push(FieldError::invalid_rendered(
                format!("{path}.{key}"),
                &go_string_slice("[]string", rule.get(key)),
                &format!("if '*' is present, must not specify other {what}"),
            ));
        }
    }
    for (k, version) in strings(rule.get("apiVersions")).iter().enumerate() {
        if version.is_empty() {
            errs.push(FieldError::required(format!("{path}.apiVersions[{k}]"), ""));
        }
    }
    errs.extend(resources(
        rule.get("resources"),
        &format!("{path}.resources"),
    ));
    if let Some(scope) = text(rule, "scope").filter(|s| !SCOPES.contains(s)) {
        errs.push(FieldError::not_supported(
            format!("{path}.scope"),
            scope,
            &SCOPES,
        ));
    }
    errs
}

/// validateResources: `x/*`, `*/x`, `*/*` and `*` must not overlap others.
fn resources(list: Option<&Value>, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let entries = strings(list);
    if entries.is_empty() {
        errs.push(FieldError::required(path, ""));
    }
    let mut wildcard_subresources: Vec<&str> = Vec::new();
    let mut wildcard_resources: Vec<&str> = Vec::new();
    let mut double_wildcard = false;
    let mut single_wildcard = false;
    // Upstream assigns rather than accumulates this flag, so only the
    // last entry without a subresource counts.
    let mut without_subresource = false;
    for (i, entry) in entries.iter().enumerate() {
        if entry.is_empty() {
            errs.push(FieldError::required(format!("{path}[{i}]"), ""));
            continue;
        }
        double_wildcard |= *entry == "*/*";
        single_wildcard |= *entry == "*";
        let Some((resource, subresource)) = entry.split_once('/') else {
            without_subresource = *entry != "*";
            continue;
        };
        if wildcard_subresources.contains(&resource) {
            errs.push(FieldError::invalid(
                format!("{path}[{i}]"),
                entry,
                &format!("if '{resource}/*' is present, must not specify {entry}"),
            ));
        }
        if wildcard_resources.contains(&subresource) {
            errs.push(FieldError::invalid(
                format!("{path}[{i}]"),
                entry,
                &format!("if '*/{subresource}' is present, must not specify {entry}"),
            ));
        }
        if subresource == "*" {
            wildcard_subresources.push(resource);
        }
        if resource == "*" {
            wildcard_resources.push(subresource);
        }
    }
    if entries.len() > 1 && double_wildcard {
        errs.push(FieldError::invalid_rendered(
            path,
            &go_string_slice("[]string", list),
            "if '*/*' is present, must not specify other resources",
        ));
    }
    if single_wildcard && without_subresource {
        errs.push(FieldError::invalid_rendered(
            path,
            &go_string_slice("[]string", list),
            "if '*' is present, must not specify other resources without subresources",
        ));
    }
    errs
}

/// matchConditions (of a webhook or a policy): at most 64, each
/// expression compiling, each name qualified and unique.
pub(super) fn match_conditions(list: Option<&Value>, path: &str) -> Vec<FieldError> {
    let conditions = list
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut errs = Vec::new();
    if conditions.len() > MAX_MATCH_CONDITIONS {
        errs.push(FieldError::too_many(
            path,
            conditions.len(),
            MAX_MATCH_CONDITIONS,
        ));
    }
    let mut names: Vec<&str> = Vec::new();
    for (k, condition) in conditions.iter().enumerate() {
        let expression = text(condition, "expression").unwrap_or("");
        let expression_path = format!("{path}[{k}].expression");
        if expression.trim().is_empty() {
            errs.push(FieldError::required(expression_path, ""));
        } else {
            errs.extend(compile_problem(&expression_path, expression.trim()));
        }
        let name = text(condition, "name").unwrap_or("");
        let name_path = format!("{path}[{k}].name");
        if name.is_empty() {
            errs.push(FieldError::required(name_path.clone(), ""));
        } else {
            for problem in qualified_name_problems(name) {
                errs.push(FieldError::invalid(name_path.clone(), name, &problem));
            }
        }
        if !name.is_empty() {
            if names.contains(&name) {
                errs.push(FieldError::duplicate(name_path, name));
            } else {
                names.push(name);
            }
        }
    }
    errs
}

/// A CEL expression that does not compile, as upstream's validation
/// reports it.
pub(super) fn compile_problem(path: &str, expression: &str) -> Option<FieldError> {
    kube_cel::cel::Program::compile(expression)
        .err()
        .map(|err| FieldError::invalid(path, expression, &format!("compilation failed: {err}")))
}

/// `SetDefaults_Rule`: scope "*".
pub(super) fn default_rule(rule: &mut Object) {
    default_pointer(rule, "scope", json!("*"));
}
