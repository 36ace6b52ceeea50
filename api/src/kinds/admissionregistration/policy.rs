//! ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding
//! (admissionregistration.k8s.io/v1): CEL validations admission runs on
//! the requests a binding selects (core/src/admission/policies.rs).
//!
//! Expressions are parsed, not type-checked: upstream compiles them
//! against dynamic `object` and `params` types too, so what it refuses at
//! this point is what does not parse (and output types, which a parser
//! cannot know; those fail at admission instead).

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::matching::{compile_problem, default_rule, match_conditions, rule_with_operations};
use crate::defaults::{child, default_pointer, each_item, ensure_child, Object};
use crate::error::FieldError;
use crate::kinds::Kind;
use crate::kinds::NameRule;
use crate::object::items_at;
use crate::printers::values::{age, get, items, len_of, name, string_map, text as text_at};
use crate::printers::{age_col, col, name_col, Cell, TableColumn};
use crate::registry::ResourceDef;
use crate::validate::meta::{go_quote, go_string_slice, label_selector, path_segment_name};
use crate::validate::object_meta::{name_problems, qualified_name_problems};

const GROUP: &str = "admissionregistration.k8s.io";

pub struct Policy;

pub struct PolicyBinding;

pub fn resources() -> Vec<ResourceDef> {
    vec![
        ResourceDef::new(
            GROUP,
            "v1",
            "validatingadmissionpolicies",
            "ValidatingAdmissionPolicy",
            false,
            Arc::new(Policy),
        )
        .categories(&["api-extensions"])
        .subresources(&["status"]),
        ResourceDef::new(
            GROUP,
            "v1",
            "validatingadmissionpolicybindings",
            "ValidatingAdmissionPolicyBinding",
            false,
            Arc::new(PolicyBinding),
        )
        .categories(&["api-extensions"]),
    ]
}

impl Kind for Policy {
    fn tracks_generation(&self) -> bool {
        true
    }

    fn spec_changed(&self, object: &Value, old: &Value) -> bool {
        object.get("spec") != old.get("spec")
    }

    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        set_policy_defaults(object);
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        policy(object, None)
    }

    fn validate_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        policy(object, Some(old))
    }

    fn validate_status_update(&self, object: &Value, _old: &Value) -> Vec<FieldError> {
        policy_status(object)
    }

    fn table_columns(&self) -> Vec<TableColumn> {
        vec![
        name_col(),
        col(
            "Validations",
            "integer",
            "Validations indicates the number of validation rules defined in this configuration",
        ),
        col(
            "ParamKind",
            "string",
            "ParamKind specifies the kind of resources used to parameterize this policy",
        ),
        age_col(),
    ]
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        let param_kind = match get(object, "/spec/paramKind") {
            Some(kind) if !kind.is_null() => {
                format!(
                    "{}/{}",
                    text_at(kind, "/apiVersion"),
                    text_at(kind, "/kind")
                )
            }
            _ => "<unset>".to_string(),
        };
        vec![
            name(object).into(),
            len_of(object, "/spec/validations").into(),
            param_kind.into(),
            age(object),
        ]
    }
}

impl Kind for PolicyBinding {
    fn tracks_generation(&self) -> bool {
        true
    }

    fn spec_changed(&self, object: &Value, old: &Value) -> bool {
        object.get("spec") != old.get("spec")
    }

    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        set_binding_defaults(object);
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        binding(object)
    }

    fn validate_update(&self, object: &Value, _old: &Value) -> Vec<FieldError> {
        binding(object)
    }

    fn table_columns(&self) -> Vec<TableColumn> {
        vec![
            name_col(),
            col(
                "PolicyName",
                "string",
                "PolicyName indicates the policy definition which the policy binding binded to",
            ),
            col(
                "ParamRef",
                "string",
                "ParamRef indicates the param resource which sets the configration param",
            ),
            age_col(),
        ]
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        vec![
            name(object).into(),
            text_at(object, "/spec/policyName").into(),
            param_ref_cell(object).into(),
            age(object),
        ]
    }
}

/// `SetDefaults_MatchResources` and the rules inside.
fn default_match_resources(resources: &mut Object) {
    default_pointer(resources, "matchPolicy", json!("Equivalent"));
    default_pointer(resources, "namespaceSelector", json!({}));
    default_pointer(resources, "objectSelector", json!({}));
    each_item(resources, "resourceRules", default_rule);
    each_item(resources, "excludeResourceRules", default_rule);
}

/// admissionregistration/v1 `SetDefaults_ValidatingAdmissionPolicySpec`.
fn set_policy_defaults(policy: &mut Object) {
    let Some(spec) = ensure_child(policy, "spec") else {
        return;
    };
    default_pointer(spec, "failurePolicy", json!("Fail"));
    if let Some(constraints) = child(spec, "matchConstraints") {
        default_match_resources(constraints);
    }
}

/// admissionregistration/v1 ValidatingAdmissionPolicyBinding: its match resources.
fn set_binding_defaults(binding: &mut Object) {
    if let Some(resources) = child(binding, "spec").and_then(|spec| child(spec, "matchResources")) {
        default_match_resources(resources);
    }
}

const FAILURE_POLICIES: [&str; 2] = ["Fail", "Ignore"];
const MATCH_POLICIES: [&str; 2] = ["Equivalent", "Exact"];
const REASONS: [&str; 3] = ["Forbidden", "Invalid", "RequestEntityTooLarge"];
const ACTIONS: [&str; 3] = ["Audit", "Deny", "Warn"];
const MAX_AUDIT_ANNOTATIONS: usize = 20;
const MAX_VALUE_EXPRESSION_LENGTH: usize = 5 * 1024;

fn text<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

/// A policy; `old` on update, when unchanged matchConditions are not
/// compiled again.
pub fn policy(policy: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let null = Value::Null;
    let spec = policy.get("spec").unwrap_or(&null);
    let name = policy
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let mut errs = Vec::new();
    match text(spec, "failurePolicy") {
        None => errs.push(FieldError::required("spec.failurePolicy", "")),
        Some(value) if !FAILURE_POLICIES.contains(&value) => errs.push(FieldError::not_supported(
            "spec.failurePolicy",
            value,
            &FAILURE_POLICIES,
        )),
        Some(_) => {}
    }
    if let Some(kind) = spec.get("paramKind").filter(|k| !k.is_null()) {
        errs.extend(param_kind(kind, "spec.paramKind"));
    }
    match spec.get("matchConstraints").filter(|c| !c.is_null()) {
        None => errs.push(FieldError::required("spec.matchConstraints", "")),
        Some(constraints) => {
            errs.extend(match_resources(constraints, "spec.matchConstraints"));
            if items_at(constraints, "/resourceRules").is_empty() {
                errs.push(FieldError::required(
                    "spec.matchConstraints.resourceRules",
                    "",
                ));
            }
        }
    }
    let conditions_unchanged = old.is_some_and(|old| {
        let old_spec = old.get("spec").unwrap_or(&null);
        old_spec.get("paramKind") == spec.get("paramKind")
            && old_spec.get("matchConditions") == spec.get("matchConditions")
    });
    if !conditions_unchanged {
        errs.extend(match_conditions(
            spec.get("matchConditions"),
            "spec.matchConditions",
        ));
    }
    for (i, variable) in items_at(spec, "/variables").iter().enumerate() {
        errs.extend(self::variable(variable, &format!("spec.variables[{i}]")));
    }
    let validations = items_at(spec, "/validations");
    let annotations = items_at(spec, "/auditAnnotations");
    if validations.is_empty() && annotations.is_empty() {
        let why = "validations or auditAnnotations must contain at least one item";
        errs.push(FieldError::required("spec.validations", why));
        errs.push(FieldError::required("spec.auditAnnotations", why));
        return errs;
    }
    for (i, validation) in validations.iter().enumerate() {
        errs.extend(self::validation(
            validation,
            &format!("spec.validations[{i}]"),
        ));
    }
    if annotations.len() > MAX_AUDIT_ANNOTATIONS {
        errs.push(FieldError::invalid_rendered(
            "spec.auditAnnotations",
            &go_audit_annotations(annotations),
            &format!("must not have more than {MAX_AUDIT_ANNOTATIONS} auditAnnotations"),
        ));
    }
    let mut keys: Vec<&str> = Vec::new();
    for (i, annotation) in annotations.iter().enumerate() {
        let path = format!("spec.auditAnnotations[{i}]");
        errs.extend(audit_annotation(annotation, name, &path));
        let key = text(annotation, "key").unwrap_or("");
        if keys.contains(&key) {
            errs.push(FieldError::duplicate(format!("{path}.key"), key));
        }
        keys.push(key);
    }
    errs
}

/// A status write: the type-checking warnings and the conditions.
pub fn policy_status(policy: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let warnings = policy
        .pointer("/status/typeChecking/expressionWarnings")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for (i, warning) in warnings.iter().enumerate() {
        let path = format!("status.typeChecking.expressionWarnings[{i}]");
        if text(warning, "warning").unwrap_or("").is_empty() {
            errs.push(FieldError::required(format!("{path}.warning"), ""));
        }
        if text(warning, "fieldRef").unwrap_or("").trim().is_empty() {
            errs.push(FieldError::required(format!("{path}.fieldRef"), ""));
        }
    }
    let conditions = policy
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    errs.extend(crate::validate::meta::conditions(
        conditions,
        "status.conditions",
    ));
    errs
}

/// A binding (create and update alike).
pub fn binding(binding: &Value) -> Vec<FieldError> {
    let null = Value::Null;
    let spec = binding.get("spec").unwrap_or(&null);
    let mut errs = Vec::new();
    match text(spec, "policyName").unwrap_or("") {
        "" => errs.push(FieldError::required("spec.policyName", "")),
        name => {
            for problem in name_problems(NameRule::Subdomain, name, false) {
                errs.push(FieldError::invalid("spec.policyName", name, &problem));
            }
        }
    }
    if let Some(reference) = spec.get("paramRef").filter(|r| !r.is_null()) {
        errs.extend(param_ref(reference, "spec.paramRef"));
    }
    if let Some(resources) = spec.get("matchResources").filter(|r| !r.is_null()) {
        errs.extend(match_resources(resources, "spec.matchResources"));
    }
    errs.extend(validation_actions(
        spec.get("validationActions"),
        "spec.validationActions",
    ));
    errs
}

/// validateParamKind.
fn param_kind(kind: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let api_version_path = format!("{path}.apiVersion");
    match text(kind, "apiVersion").unwrap_or("") {
        "" => errs.push(FieldError::required(api_version_path, "")),
        api_version if api_version.matches('/').count() > 1 => errs.push(FieldError::invalid(
            api_version_path,
            api_version,
            &format!("unexpected GroupVersion string: {api_version}"),
        )),
        api_version => {
            let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
            let (group, version) = if api_version == "/" {
                ("", "")
            } else {
                (group, version)
            };
            if !group.is_empty() {
                let problems = name_problems(NameRule::Subdomain, group, false);
                if !problems.is_empty() {
                    errs.push(FieldError::invalid(
                        api_version_path.clone(),
                        group,
                        &problems.join(","),
                    ));
                }
            }
            if version.is_empty() {
                errs.push(FieldError::invalid(
                    api_version_path,
                    api_version,
                    "version must be specified",
                ));
            } else {
                let problems = name_problems(NameRule::Dns1035Label, version, false);
                if !problems.is_empty() {
                    errs.push(FieldError::invalid(
                        api_version_path,
                        version,
                        &problems.join(","),
                    ));
                }
            }
        }
    }
    match text(kind, "kind").unwrap_or("") {
        "" => errs.push(FieldError::required(format!("{path}.kind"), "")),
        name => {
            let problems = name_problems(NameRule::Dns1035Label, &name.to_lowercase(), false);
            if !problems.is_empty() {
                errs.push(FieldError::invalid(
                    format!("{path}.kind"),
                    name,
                    &format!(
                        "may have mixed case, but should otherwise match: {}",
                        problems.join(",")
                    ),
                ));
            }
        }
    }
    errs
}

/// validateMatchResources: defaulting fills the required parts, so an
/// absent one was sent as null.
fn match_resources(resources: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    match text(resources, "matchPolicy") {
        None => errs.push(FieldError::required(format!("{path}.matchPolicy"), "")),
        Some(value) if !MATCH_POLICIES.contains(&value) => errs.push(FieldError::not_supported(
            format!("{path}.matchPolicy"),
            value,
            &MATCH_POLICIES,
        )),
        Some(_) => {}
    }
    for key in ["namespaceSelector", "objectSelector"] {
        match resources.get(key).filter(|s| !s.is_null()) {
            None => errs.push(FieldError::required(format!("{path}.{key}"), "")),
            Some(selector) => errs.extend(label_selector(Some(selector), &format!("{path}.{key}"))),
        }
    }
    for key in ["resourceRules", "excludeResourceRules"] {
        for (i, rule) in items_at(resources, &format!("/{key}")).iter().enumerate() {
            errs.extend(named_rule(rule, &format!("{path}.{key}[{i}]")));
        }
    }
    errs
}

/// validateNamedRuleWithOperations.
fn named_rule(rule: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (i, name) in items_at(rule, "/resourceNames").iter().enumerate() {
        let name = name.as_str().unwrap_or("");
        let name_path = format!("{path}.resourceNames[{i}]");
        errs.extend(path_segment_name(name, &name_path));
        if seen.contains(&name) {
            errs.push(FieldError::duplicate(name_path, name));
        } else {
            seen.push(name);
        }
    }
    errs.extend(rule_with_operations(rule, path));
    errs
}

/// validateVariable: a CEL identifier and an expression that compiles.
fn variable(variable: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = text(variable, "name").unwrap_or("");
    if name.trim().is_empty() {
        errs.push(FieldError::required(
            format!("{path}.name"),
            "name is not specified",
        ));
    } else if !is_cel_identifier(name) {
        errs.push(FieldError::invalid(
            format!("{path}.name"),
            name,
            "name is not a valid CEL identifier",
        ));
    }
    let expression = text(variable, "expression").unwrap_or("");
    if expression.trim().is_empty() {
        errs.push(FieldError::required(
            format!("{path}.expression"),
            "expression is not specified",
        ));
    } else {
        errs.extend(compile_problem(&format!("{path}.expression"), expression));
    }
    errs
}

fn is_cel_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
        && !crate::custom::cel_values::RESERVED.contains(&name)
}

/// validateValidation.
fn validation(validation: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let expression = text(validation, "expression").unwrap_or("");
    if expression.trim().is_empty() {
        errs.push(FieldError::required(
            format!("{path}.expression"),
            "expression is not specified",
        ));
    } else {
        errs.extend(compile_problem(&format!("{path}.expression"), expression));
    }
    let message_expression = text(validation, "messageExpression").unwrap_or("");
    if !message_expression.is_empty() && message_expression.trim().is_empty() {
        errs.push(FieldError::invalid(
            format!("{path}.messageExpression"),
            message_expression,
            "must be non-empty if specified",
        ));
    } else if !message_expression.trim().is_empty() {
        errs.extend(compile_problem(
            &format!("{path}.messageExpression"),
            message_expression,
        ));
    }
    let message = text(validation, "message").unwrap_or("");
    if !message.is_empty() && message.trim().is_empty() {
        errs.push(FieldError::invalid(
            format!("{path}.message"),
            message,
            "message must be non-empty if specified",
        ));
    } else if message.trim().contains(['\n', '\r']) {
        errs.push(FieldError::invalid(
            format!("{path}.message"),
            message,
            "message must not contain line breaks",
        ));
    }
    if let Some(reason) = text(validation, "reason").filter(|r| !REASONS.contains(r)) {
        errs.push(FieldError::not_supported(
            format!("{path}.reason"),
            reason,
            &REASONS,
        ));
    }
    errs
}

/// validateAuditAnnotation: the key qualified under the policy's name,
/// the value expression present, bounded and compiling.
fn audit_annotation(annotation: &Value, policy_name: &str, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let key = text(annotation, "key").unwrap_or("");
    if policy_name.is_empty() {
        errs.push(FieldError::invalid(
            format!("{path}.key"),
            key,
            "requires metadata.name be non-empty",
        ));
    } else {
        let qualified = format!("{policy_name}/{key}");
        for problem in qualified_name_problems(&qualified) {
            errs.push(FieldError::invalid(
                format!("{path}.key"),
                &qualified,
                &problem,
            ));
        }
    }
    let value_path = format!("{path}.valueExpression");
    let expression = text(annotation, "valueExpression").unwrap_or("").trim();
    if expression.is_empty() {
        errs.push(FieldError::required(
            value_path,
            "valueExpression is not specified",
        ));
    } else if expression.len() > MAX_VALUE_EXPRESSION_LENGTH {
        errs.push(FieldError::required(
            value_path,
            &format!("must not exceed {MAX_VALUE_EXPRESSION_LENGTH} bytes in length"),
        ));
    } else {
        errs.extend(compile_problem(&value_path, expression));
    }
    errs
}

/// validateParamRef.
fn param_ref(reference: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = text(reference, "name").unwrap_or("");
    let selector = reference.get("selector").filter(|s| !s.is_null());
    let exclusive = "name and selector are mutually exclusive";
    if !name.is_empty() {
        errs.extend(path_segment_name(name, &format!("{path}.name")));
        if selector.is_some() {
            errs.push(FieldError::forbidden(format!("{path}.name"), exclusive));
        }
    }
    if let Some(selector) = selector {
        errs.extend(label_selector(Some(selector), &format!("{path}.selector")));
        if !name.is_empty() {
            errs.push(FieldError::forbidden(format!("{path}.selector"), exclusive));
        }
    }
    if name.is_empty() && selector.is_none() {
        errs.push(FieldError::required(
            path,
            "one of name or selector must be specified",
        ));
    }
    let action_path = format!("{path}.parameterNotFoundAction");
    match text(reference, "parameterNotFoundAction").unwrap_or("") {
        "" => errs.push(FieldError::required(action_path, "")),
        "Deny" | "Allow" => {}
        other => errs.push(FieldError::not_supported(
            action_path,
            other,
            &["Deny", "Allow"],
        )),
    }
    errs
}

/// validateValidationActions.
fn validation_actions(list: Option<&Value>, path: &str) -> Vec<FieldError> {
    let actions: Vec<&str> = list
        .and_then(Value::as_array)
        .map(|items| items.iter().map(|a| a.as_str().unwrap_or("")).collect())
        .unwrap_or_default();
    let mut errs = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (i, action) in actions.iter().enumerate() {
        if !ACTIONS.contains(action) {
            errs.push(FieldError::not_supported(
                format!("{path}[{i}]"),
                action,
                &ACTIONS,
            ));
        }
        if seen.contains(action) {
            errs.push(FieldError::duplicate(format!("{path}[{i}]"), action));
        }
        seen.push(action);
    }
    if seen.contains(&"Deny") && seen.contains(&"Warn") {
        errs.push(FieldError::invalid_rendered(
            path,
            &go_string_slice("[]admissionregistration.ValidationAction", list),
            "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)",
        ));
    }
    if seen.is_empty() {
        errs.push(FieldError::required(
            path,
            "at least one validation action is required",
        ));
    }
    errs
}

/// `%#v` of a policy's auditAnnotations, as upstream prints them.
fn go_audit_annotations(annotations: &[Value]) -> String {
    let body: Vec<String> = annotations
        .iter()
        .map(|a| {
            format!(
                "admissionregistration.AuditAnnotation{{Key:{}, ValueExpression:{}}}",
                go_quote(text(a, "key").unwrap_or("")),
                go_quote(text(a, "valueExpression").unwrap_or(""))
            )
        })
        .collect();
    format!(
        "[]admissionregistration.AuditAnnotation{{{}}}",
        body.join(", ")
    )
}

/// A binding's ParamRef column: `namespace/name`, `*/name` when the
/// namespace is not set (upstream cannot tell the param's scope here), or
/// the selector as its generated Go `String()` prints it.
fn param_ref_cell(binding: &Value) -> String {
    let Some(reference) = get(binding, "/spec/paramRef").filter(|r| !r.is_null()) else {
        return "<unset>".to_string();
    };
    let name = text_at(reference, "/name");
    if !name.is_empty() {
        return match text_at(reference, "/namespace") {
            "" => format!("*/{name}"),
            namespace => format!("{namespace}/{name}"),
        };
    }
    match get(reference, "/selector").filter(|s| !s.is_null()) {
        Some(selector) => go_label_selector_string(selector),
        None => "<unset>".to_string(),
    }
}

/// The gogo-protobuf `String()` of a metav1.LabelSelector.
fn go_label_selector_string(selector: &Value) -> String {
    let labels: String = string_map(selector, "/matchLabels")
        .iter()
        .map(|(k, v)| format!("{k}: {v},"))
        .collect();
    let expressions: String = items(selector, "/matchExpressions")
        .iter()
        .map(|e| {
            let values: Vec<&str> = items(e, "/values")
                .iter()
                .filter_map(Value::as_str)
                .collect();
            format!(
                "LabelSelectorRequirement{{Key:{},Operator:{},Values:[{}],}},",
                text_at(e, "/key"),
                text_at(e, "/operator"),
                values.join(" ")
            )
        })
        .collect();
    format!(
        "&LabelSelector{{MatchLabels:map[string]string{{{labels}}},MatchExpressions:[]LabelSelectorRequirement{{{expressions}}},}}"
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rendered(errors: Vec<FieldError>) -> Vec<String> {
        errors.iter().map(FieldError::render).collect()
    }

    fn valid_policy() -> Value {
        json!({
            "metadata": {"name": "replicas.example.com"},
            "spec": {
                "failurePolicy": "Fail",
                "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
                "matchConstraints": {
                    "matchPolicy": "Equivalent", "namespaceSelector": {}, "objectSelector": {},
                    "resourceRules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": ["apps"],
                                       "apiVersions": ["v1"], "resources": ["deployments"], "scope": "*"}]
                },
                "variables": [{"name": "replicas", "expression": "object.spec.replicas"}],
                "validations": [{"expression": "variables.replicas <= int(params.data.max)",
                                 "messageExpression": "'at most ' + params.data.max"}],
                "auditAnnotations": [{"key": "replicas", "valueExpression": "string(object.spec.replicas)"}]
            }
        })
    }

    #[test]
    fn a_valid_policy_and_binding_pass() {
        assert_eq!(
            rendered(policy(&valid_policy(), None)),
            Vec::<String>::new()
        );
        let binding = json!({"spec": {
            "policyName": "replicas.example.com",
            "paramRef": {"name": "limits", "parameterNotFoundAction": "Deny"},
            "validationActions": ["Deny", "Audit"]
        }});
        assert_eq!(rendered(self::binding(&binding)), Vec::<String>::new());
    }

    #[test]
    fn policy_problems_are_worded_as_upstream() {
        let broken = json!({
            "metadata": {"name": "p"},
            "spec": {
                "failurePolicy": "Sometimes",
                "paramKind": {"apiVersion": "a/b/c", "kind": "Not_A_Kind"},
                "matchConstraints": {"matchPolicy": "Equivalent", "namespaceSelector": {}, "objectSelector": {}},
                "variables": [{"name": "in", "expression": "1"}, {"name": "", "expression": " "}],
                "validations": [
                    {"expression": " ", "message": "two\nlines", "reason": "Unauthorized"},
                    {"expression": "object.x ==", "messageExpression": "  "}
                ],
                "auditAnnotations": [
                    {"key": "k", "valueExpression": "'v'"},
                    {"key": "k", "valueExpression": ""}
                ]
            }
        });
        let errs = rendered(policy(&broken, None));
        let compile = errs
            .iter()
            .position(|e| e.starts_with(r#"spec.validations[1].expression: Invalid value: "object.x ==": compilation failed: "#))
            .expect("compile error");
        let mut rest = errs.clone();
        rest.remove(compile);
        assert_eq!(
            rest,
            [
                r#"spec.failurePolicy: Unsupported value: "Sometimes": supported values: "Fail", "Ignore""#,
                r#"spec.paramKind.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c"#,
                r#"spec.paramKind.kind: Invalid value: "Not_A_Kind": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"#,
                "spec.matchConstraints.resourceRules: Required value",
                r#"spec.variables[0].name: Invalid value: "in": name is not a valid CEL identifier"#,
                "spec.variables[1].name: Required value: name is not specified",
                "spec.variables[1].expression: Required value: expression is not specified",
                "spec.validations[0].expression: Required value: expression is not specified",
                "spec.validations[0].message: Invalid value: \"two\\nlines\": message must not contain line breaks",
                r#"spec.validations[0].reason: Unsupported value: "Unauthorized": supported values: "Forbidden", "Invalid", "RequestEntityTooLarge""#,
                r#"spec.validations[1].messageExpression: Invalid value: "  ": must be non-empty if specified"#,
                r#"spec.auditAnnotations[1].valueExpression: Required value: valueExpression is not specified"#,
                r#"spec.auditAnnotations[1].key: Duplicate value: "k""#,
            ]
        );
    }

    #[test]
    fn a_policy_needs_validations_or_audit_annotations() {
        let mut empty = valid_policy();
        empty["spec"]["validations"] = json!([]);
        empty["spec"]["auditAnnotations"] = json!([]);
        assert_eq!(
            rendered(policy(&empty, None)),
            [
                "spec.validations: Required value: validations or auditAnnotations must contain at least one item",
                "spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item",
            ]
        );
    }

    #[test]
    fn binding_problems_are_worded_as_upstream() {
        let broken = json!({"spec": {
            "paramRef": {"name": "a/b", "selector": {}, "parameterNotFoundAction": "Maybe"},
            "matchResources": {"matchPolicy": "Exact", "namespaceSelector": {}, "objectSelector": {},
                               "resourceRules": [{"resourceNames": ["x", "x"], "operations": ["*"], "apiGroups": ["*"],
                                                  "apiVersions": ["*"], "resources": ["*"]}]},
            "validationActions": ["Deny", "Warn", "Deny", "Shout"]
        }});
        assert_eq!(
            rendered(binding(&broken)),
            [
                "spec.policyName: Required value",
                r#"spec.paramRef.name: Invalid value: "a/b": may not contain '/'"#,
                "spec.paramRef.name: Forbidden: name and selector are mutually exclusive",
                "spec.paramRef.selector: Forbidden: name and selector are mutually exclusive",
                r#"spec.paramRef.parameterNotFoundAction: Unsupported value: "Maybe": supported values: "Deny", "Allow""#,
                r#"spec.matchResources.resourceRules[0].resourceNames[1]: Duplicate value: "x""#,
                r#"spec.validationActions[2]: Duplicate value: "Deny""#,
                r#"spec.validationActions[3]: Unsupported value: "Shout": supported values: "Audit", "Deny", "Warn""#,
                r#"spec.validationActions: Invalid value: []admissionregistration.ValidationAction{"Deny", "Warn", "Deny", "Shout"}: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)"#,
            ]
        );
        let bare = json!({"spec": {"policyName": "p", "paramRef": {}, "validationActions": []}});
        assert_eq!(
            rendered(binding(&bare)),
            [
                "spec.paramRef: Required value: one of name or selector must be specified",
                "spec.paramRef.parameterNotFoundAction: Required value",
                "spec.validationActions: Required value: at least one validation action is required",
            ]
        );
    }

    #[test]
    fn status_warnings_need_text_and_a_field() {
        let status = json!({"status": {"typeChecking": {"expressionWarnings": [{"fieldRef": "", "warning": ""}]}}});
        assert_eq!(
            rendered(policy_status(&status)),
            [
                "status.typeChecking.expressionWarnings[0].warning: Required value",
                "status.typeChecking.expressionWarnings[0].fieldRef: Required value",
            ]
        );
    }

    #[test]
    fn param_ref_cells_read_as_upstream() {
        let cell = |reference: Value| param_ref_cell(&json!({"spec": {"paramRef": reference}}));
        assert_eq!(param_ref_cell(&json!({"spec": {}})), "<unset>");
        assert_eq!(cell(json!({"name": "limits"})), "*/limits");
        assert_eq!(
            cell(json!({"name": "limits", "namespace": "ops"})),
            "ops/limits"
        );
        assert_eq!(
            cell(json!({"selector": {"matchLabels": {"tier": "gold", "app": "x"},
                                     "matchExpressions": [{"key": "env", "operator": "In", "values": ["a", "b"]}]}})),
            "&LabelSelector{MatchLabels:map[string]string{app: x,tier: gold,},MatchExpressions:[]LabelSelectorRequirement{LabelSelectorRequirement{Key:env,Operator:In,Values:[a b],},},}"
        );
    }
}
