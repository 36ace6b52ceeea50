//! admissionregistration.k8s.io/v1: upstream's ValidateMutatingWebhookConfiguration
//! and ValidateValidatingWebhookConfiguration (and their updates).

use serde_json::Value;

use super::meta::{go_string_slice, label_selector};
use super::object_meta::{name_problems, qualified_name_problems};
use crate::error::FieldError;
use crate::kinds::admissionregistration::PROTOCOL_ANNOTATION;
use crate::kinds::NameRule;

const OPERATIONS: [&str; 5] = ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"];
const SCOPES: [&str; 3] = ["*", "Cluster", "Namespaced"];
const REVIEW_VERSIONS: [&str; 2] = ["v1", "v1beta1"];
const NO_SIDE_EFFECTS: [&str; 2] = ["None", "NoneOnDryRun"];
const SIDE_EFFECTS: [&str; 4] = ["None", "NoneOnDryRun", "Some", "Unknown"];
const MAX_MATCH_CONDITIONS: usize = 64;
/// How Capstan calls a configuration's webhooks: AdmissionReview JSON
/// over HTTPS (upstream's, the default) or capstan.webhook.v1 over gRPC.
const PROTOCOLS: [&str; 2] = ["grpc", "https"];

fn strings(value: Option<&Value>) -> Vec<&str> {
    value
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn text<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

/// A webhook configuration; `old` on update relaxes what upstream lets
/// existing configurations keep.
pub fn webhook_configuration(
    configuration: &Value,
    old: Option<&Value>,
    mutating: bool,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let protocol = configuration
        .pointer("/metadata/annotations")
        .and_then(|annotations| annotations.get(PROTOCOL_ANNOTATION));
    if let Some(protocol) = protocol {
        let protocol = protocol.as_str().unwrap_or_default();
        if !PROTOCOLS.contains(&protocol) {
            errs.push(FieldError::not_supported(
                format!("metadata.annotations[{PROTOCOL_ANNOTATION}]"),
                protocol,
                &PROTOCOLS,
            ));
        }
    }
    let webhooks = configuration
        .get("webhooks")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let old_webhooks = old
        .and_then(|o| o.get("webhooks"))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    // Upstream lets an update keep side effects and review versions the
    // configuration already had.
    let strict_side_effects = old.is_none()
        || old_webhooks
            .iter()
            .all(|w| text(w, "sideEffects").is_some_and(|s| NO_SIDE_EFFECTS.contains(&s)));
    let require_known_versions = old.is_none()
        || old_webhooks.iter().all(|w| {
            strings(w.get("admissionReviewVersions"))
                .iter()
                .any(|v| REVIEW_VERSIONS.contains(v))
        });
    let mut names: Vec<&str> = Vec::new();
    for (i, webhook) in webhooks.iter().enumerate() {
        let path = format!("webhooks[{i}]");
        errs.extend(one_webhook(webhook, &path, mutating, strict_side_effects));
        errs.extend(review_versions(
            webhook.get("admissionReviewVersions"),
            &format!("{path}.admissionReviewVersions"),
            require_known_versions,
        ));
        let name = text(webhook, "name").unwrap_or("");
        if !name.is_empty() {
            if names.contains(&name) {
                errs.push(FieldError::duplicate(format!("{path}.name"), name));
            } else {
                names.push(name);
            }
        }
        let old_conditions = old_webhooks.get(i).and_then(|w| w.get("matchConditions"));
        if webhook.get("matchConditions") != old_conditions {
            errs.extend(match_conditions(
                webhook.get("matchConditions"),
                &format!("{path}.matchConditions"),
            ));
        }
    }
    errs
}

fn one_webhook(webhook: &Value, path: &str, mutating: bool, strict: bool) -> Vec<FieldError> {
    let mut errs =
        fully_qualified_name(&format!("{path}.name"), text(webhook, "name").unwrap_or(""));
    let rules = webhook
        .get("rules")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for (j, rule) in rules.iter().enumerate() {
        errs.extend(rule_with_operations(rule, &format!("{path}.rules[{j}]")));
    }
    for (key, supported) in [
        ("failurePolicy", &["Fail", "Ignore"][..]),
        ("matchPolicy", &["Equivalent", "Exact"][..]),
    ] {
        if let Some(value) = text(webhook, key).filter(|v| !supported.contains(v)) {
            errs.push(FieldError::not_supported(
                format!("{path}.{key}"),
                value,
                supported,
            ));
        }
    }
    let allowed: &[&str] = if strict {
        &NO_SIDE_EFFECTS
    } else {
        &SIDE_EFFECTS
    };
    match text(webhook, "sideEffects") {
        None => errs.push(FieldError::required(
            format!("{path}.sideEffects"),
            &format!("must specify one of {}", allowed.join(", ")),
        )),
        Some(value) if !allowed.contains(&value) => errs.push(FieldError::not_supported(
            format!("{path}.sideEffects"),
            value,
            allowed,
        )),
        Some(_) => {}
    }
    if let Some(timeout) = webhook.get("timeoutSeconds").and_then(Value::as_i64) {
        if !(1..=30).contains(&timeout) {
            errs.push(FieldError::invalid_rendered(
                format!("{path}.timeoutSeconds"),
                &timeout.to_string(),
                "the timeout value must be between 1 and 30 seconds",
            ));
        }
    }
    for key in ["namespaceSelector", "objectSelector"] {
        errs.extend(label_selector(webhook.get(key), &format!("{path}.{key}")));
    }
    errs.extend(super::webhook::client_config(
        &format!("{path}.clientConfig"),
        webhook.get("clientConfig"),
    ));
    if mutating {
        if let Some(value) =
            text(webhook, "reinvocationPolicy").filter(|v| !["IfNeeded", "Never"].contains(v))
        {
            errs.push(FieldError::not_supported(
                format!("{path}.reinvocationPolicy"),
                value,
                &["IfNeeded", "Never"],
            ));
        }
    }
    errs
}

/// IsFullyQualifiedName: a DNS subdomain of at least three segments.
fn fully_qualified_name(path: &str, name: &str) -> Vec<FieldError> {
    if name.is_empty() {
        return vec![FieldError::required(path, "")];
    }
    let problems = name_problems(NameRule::Subdomain, name, false);
    if !problems.is_empty() {
        return vec![FieldError::invalid(path, name, &problems.join(","))];
    }
    if name.split('.').count() < 3 {
        return vec![FieldError::invalid(
            path,
            name,
            "should be a domain with at least three segments separated by dots",
        )];
    }
    Vec::new()
}

/// validateRuleWithOperations and the rule it embeds.
pub(crate) fn rule_with_operations(rule: &Value, path: &str) -> Vec<FieldError> {
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

/// validateAdmissionReviewVersions.
fn review_versions(list: Option<&Value>, path: &str, require_known: bool) -> Vec<FieldError> {
    let versions = strings(list);
    if versions.is_empty() {
        return vec![FieldError::required(
            path,
            &format!("must specify one of {}", REVIEW_VERSIONS.join(", ")),
        )];
    }
    let mut errs = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (i, version) in versions.iter().enumerate() {
        if seen.contains(version) {
            errs.push(FieldError::invalid(
                format!("{path}[{i}]"),
                version,
                "duplicate version",
            ));
            continue;
        }
        seen.push(version);
        for problem in name_problems(NameRule::Dns1035Label, version, false) {
            errs.push(FieldError::invalid(
                format!("{path}[{i}]"),
                version,
                &problem,
            ));
        }
    }
    if require_known && !versions.iter().any(|v| REVIEW_VERSIONS.contains(v)) {
        errs.push(FieldError::invalid_rendered(
            path,
            &go_string_slice("[]string", list),
            &format!(
                "must include at least one of {}",
                REVIEW_VERSIONS.join(", ")
            ),
        ));
    }
    errs
}

/// matchConditions (of a webhook or a policy): at most 64, each
/// expression compiling, each name qualified and unique.
pub(crate) fn match_conditions(list: Option<&Value>, path: &str) -> Vec<FieldError> {
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
pub(crate) fn compile_problem(path: &str, expression: &str) -> Option<FieldError> {
    kube_cel::cel::Program::compile(expression)
        .err()
        .map(|err| FieldError::invalid(path, expression, &format!("compilation failed: {err}")))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rendered(errors: Vec<FieldError>) -> Vec<String> {
        errors.iter().map(FieldError::render).collect()
    }

    fn webhook(extra: Value) -> Value {
        let mut hook = json!({
            "name": "check.example.com",
            "clientConfig": {"url": "https://hooks.example.com/check"},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}],
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"]
        });
        if let (Some(hook), Some(extra)) = (hook.as_object_mut(), extra.as_object()) {
            hook.extend(extra.clone());
        }
        hook
    }

    #[test]
    fn a_valid_configuration_passes() {
        let config = json!({"webhooks": [webhook(json!({}))]});
        assert!(webhook_configuration(&config, None, true).is_empty());
    }

    #[test]
    fn each_rule_is_worded_as_upstream() {
        let config = json!({"webhooks": [
            webhook(json!({
                "name": "check",
                "rules": [{"operations": ["*", "CREATE"], "apiGroups": [], "apiVersions": ["v1"],
                           "resources": ["*/*", "pods"], "scope": "Everywhere"}],
                "failurePolicy": "Maybe",
                "timeoutSeconds": 31,
                "clientConfig": {"url": "http://hooks.example.com/x?a=b"},
                "admissionReviewVersions": ["v2"]
            })),
            webhook(json!({"sideEffects": "Some", "clientConfig": {"service": {"name": "svc", "namespace": "ns", "path": "no-slash"}}})),
            webhook(json!({"name": "check", "admissionReviewVersions": []}))
        ]});
        assert_eq!(
            rendered(webhook_configuration(&config, None, true)),
            [
                r#"webhooks[0].name: Invalid value: "check": should be a domain with at least three segments separated by dots"#,
                r#"webhooks[0].rules[0].operations: Invalid value: []admissionregistration.OperationType{"*", "CREATE"}: if '*' is present, must not specify other operations"#,
                "webhooks[0].rules[0].apiGroups: Required value",
                r#"webhooks[0].rules[0].resources: Invalid value: []string{"*/*", "pods"}: if '*/*' is present, must not specify other resources"#,
                r#"webhooks[0].rules[0].scope: Unsupported value: "Everywhere": supported values: "*", "Cluster", "Namespaced""#,
                r#"webhooks[0].failurePolicy: Unsupported value: "Maybe": supported values: "Fail", "Ignore""#,
                "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds",
                r#"webhooks[0].clientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]"#,
                r#"webhooks[0].clientConfig.url: Invalid value: "a=b": query parameters are not permitted in the URL"#,
                r#"webhooks[0].admissionReviewVersions: Invalid value: []string{"v2"}: must include at least one of v1, v1beta1"#,
                r#"webhooks[1].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun""#,
                r#"webhooks[1].clientConfig.service.path: Invalid value: "no-slash": must start with a '/'"#,
                r#"webhooks[2].name: Invalid value: "check": should be a domain with at least three segments separated by dots"#,
                "webhooks[2].admissionReviewVersions: Required value: must specify one of v1, v1beta1",
                r#"webhooks[2].name: Duplicate value: "check""#,
            ]
        );
    }

    #[test]
    fn the_protocol_annotation_names_grpc_or_https() {
        let annotated = |protocol: &str| {
            json!({"metadata": {"annotations": {PROTOCOL_ANNOTATION: protocol}},
                   "webhooks": [webhook(json!({}))]})
        };
        assert!(webhook_configuration(&annotated("grpc"), None, true).is_empty());
        assert!(webhook_configuration(&annotated("https"), None, false).is_empty());
        assert_eq!(
            rendered(webhook_configuration(&annotated("http2"), None, true)),
            [
                r#"metadata.annotations[admission.capstan.dev/protocol]: Unsupported value: "http2": supported values: "grpc", "https""#
            ]
        );
    }

    #[test]
    fn match_conditions_must_compile() {
        let config = json!({"webhooks": [webhook(json!({"matchConditions": [
            {"name": "ok", "expression": "true"},
            {"name": "ok", "expression": "object.metadata.name =="}
        ]}))]});
        let errs = rendered(webhook_configuration(&config, None, false));
        assert!(
            errs[0].starts_with(r#"webhooks[0].matchConditions[1].expression: Invalid value: "object.metadata.name ==": compilation failed: "#),
            "{errs:?}"
        );
        assert_eq!(
            errs[1],
            r#"webhooks[0].matchConditions[1].name: Duplicate value: "ok""#
        );
    }
}
