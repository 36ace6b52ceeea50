//! ValidatingWebhookConfiguration and MutatingWebhookConfiguration
//! (admissionregistration.k8s.io/v1): the webhooks admission calls. One
//! kind serves both; they differ only in the mutating webhook's
//! reinvocation policy.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::matching::{default_rule, match_conditions, rule_with_operations, strings, text};
use super::PROTOCOL_ANNOTATION;
use crate::defaults::{child, default_pointer, each_item, Object};
use crate::error::FieldError;
use crate::kinds::Kind;
use crate::kinds::NameRule;
use crate::printers::values::{age, len_of, name};
use crate::printers::{age_col, col, name_col, Cell, TableColumn};
use crate::registry::ResourceDef;
use crate::validate::meta::{go_string_slice, label_selector};
use crate::validate::object_meta::name_problems;

mod client_config;

pub struct WebhookConfiguration {
    pub mutating: bool,
}

pub fn resources() -> Vec<ResourceDef> {
    [
        (
            "validatingwebhookconfigurations",
            "ValidatingWebhookConfiguration",
            false,
        ),
        (
            "mutatingwebhookconfigurations",
            "MutatingWebhookConfiguration",
            true,
        ),
    ]
    .into_iter()
    .map(|(plural, kind, mutating)| {
        ResourceDef::new(
            "admissionregistration.k8s.io",
            "v1",
            plural,
            kind,
            false,
            Arc::new(WebhookConfiguration { mutating }),
        )
        .categories(&["api-extensions"])
    })
    .collect()
}

impl Kind for WebhookConfiguration {
    fn tracks_generation(&self) -> bool {
        true
    }

    fn spec_changed(&self, object: &Value, old: &Value) -> bool {
        object.get("webhooks") != old.get("webhooks")
    }

    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        set_defaults(object, self.mutating);
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        validate(object, None, self.mutating)
    }

    fn validate_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        validate(object, Some(old), self.mutating)
    }

    fn table_columns(&self) -> Vec<TableColumn> {
        vec![
            name_col(),
            col(
                "Webhooks",
                "integer",
                "Webhooks indicates the number of webhooks registered in this configuration",
            ),
            age_col(),
        ]
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        vec![
            name(object).into(),
            len_of(object, "/webhooks").into(),
            age(object),
        ]
    }
}

/// admissionregistration/v1 webhook defaults (`SetDefaults_ValidatingWebhook`,
/// `SetDefaults_MutatingWebhook`, `SetDefaults_Rule`, `SetDefaults_ServiceReference`).
/// sideEffects and admissionReviewVersions are required in v1, not defaulted.
fn set_defaults(configuration: &mut Object, mutating: bool) {
    each_item(configuration, "webhooks", |webhook| {
        default_pointer(webhook, "failurePolicy", json!("Fail"));
        default_pointer(webhook, "matchPolicy", json!("Equivalent"));
        default_pointer(webhook, "namespaceSelector", json!({}));
        default_pointer(webhook, "objectSelector", json!({}));
        default_pointer(webhook, "timeoutSeconds", json!(10));
        if mutating {
            default_pointer(webhook, "reinvocationPolicy", json!("Never"));
        }
        each_item(webhook, "rules", default_rule);
        if let Some(service) =
            child(webhook, "clientConfig").and_then(|config| child(config, "service"))
        {
            default_pointer(service, "port", json!(443));
        }
    });
}

const REVIEW_VERSIONS: [&str; 2] = ["v1", "v1beta1"];
const NO_SIDE_EFFECTS: [&str; 2] = ["None", "NoneOnDryRun"];
const SIDE_EFFECTS: [&str; 4] = ["None", "NoneOnDryRun", "Some", "Unknown"];

/// How Capstan calls a configuration's webhooks: AdmissionReview JSON
/// over HTTPS (upstream's, the default) or capstan.webhook.v1 over gRPC.
const PROTOCOLS: [&str; 2] = ["grpc", "https"];

/// A webhook configuration; `old` on update relaxes what upstream lets
/// existing configurations keep.
fn validate(configuration: &Value, old: Option<&Value>, mutating: bool) -> Vec<FieldError> {
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
    errs.extend(client_config::client_config(
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::validate as webhook_configuration;
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
