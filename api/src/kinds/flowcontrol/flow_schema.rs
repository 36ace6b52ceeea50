//! FlowSchema (flowcontrol.apiserver.k8s.io/v1): which requests go to
//! which priority level, as upstream's `ValidateFlowSchema` checks them.

use std::cmp::Ordering;
use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::{bootstrap, conditions, strings, EXEMPT};
use crate::defaults::{default_zero, ensure_child, Object};
use crate::error::FieldError;
use crate::kinds::{Kind, NameRule};
use crate::printers::values::{age, condition, get, int, items, name, text};
use crate::printers::{age_col, col, name_col, Cell, TableColumn};
use crate::registry::ResourceDef;
use crate::validate::meta::{go_quote, go_string_slice};
use crate::validate::object_meta::name_problems;

pub struct FlowSchema;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "flowcontrol.apiserver.k8s.io",
        "v1",
        "flowschemas",
        "FlowSchema",
        false,
        Arc::new(FlowSchema),
    )
    .subresources(&["status"])]
}

const MAX_MATCHING_PRECEDENCE: i64 = 10000;
const SUPPORTED_VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "proxy",
    "update",
    "watch",
];

impl Kind for FlowSchema {
    fn tracks_generation(&self) -> bool {
        true
    }

    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        set_defaults(object);
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        validate(object)
    }

    // Upstream's update validation is its create validation.
    fn validate_update(&self, object: &Value, _old: &Value) -> Vec<FieldError> {
        validate(object)
    }

    fn validate_status_update(&self, object: &Value, _old: &Value) -> Vec<FieldError> {
        conditions(object)
    }

    fn table_columns(&self) -> Vec<TableColumn> {
        vec![
            name_col(),
            col("PriorityLevel", "string", D_FS_PRIORITY_LEVEL),
            col("MatchingPrecedence", "string", D_FS_PRECEDENCE),
            col("DistinguisherMethod", "string", D_FS_DISTINGUISHER),
            age_col(),
            col("MissingPL", "string", D_FS_MISSING_PL),
        ]
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        cells(object)
    }

    fn table_row_order(&self) -> Option<fn(&Value, &Value) -> Ordering> {
        Some(by_precedence_then_name)
    }
}

/// upstream's FlowSchemaSequence: the order in which schemas match.
fn by_precedence_then_name(a: &Value, b: &Value) -> Ordering {
    let precedence = |o: &Value| {
        o.pointer("/spec/matchingPrecedence")
            .and_then(Value::as_i64)
    };
    precedence(a)
        .cmp(&precedence(b))
        .then_with(|| crate::object::name(a).cmp(crate::object::name(b)))
}

fn validate(object: &Value) -> Vec<FieldError> {
    let name = crate::object::name(object);
    let empty = Value::Object(Map::new());
    let spec = object.get("spec").unwrap_or(&empty);
    let mut errs = validate_spec(name, spec);
    let mandatory = bootstrap::mandatory_spec(bootstrap::mandatory_flow_schemas(), name);
    if let Some(fixed) = mandatory {
        if !crate::validate::meta::semantically_equal(spec, &fixed) {
            errs.push(FieldError::invalid_rendered(
                "spec",
                &crate::openapi::go_values::go_format(spec),
                &format!("spec of '{name}' must equal the fixed value"),
            ));
        }
    }
    errs.extend(conditions(object));
    errs
}

fn validate_spec(name: &str, spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let precedence = spec
        .get("matchingPrecedence")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let precedence_error = |detail: &str| {
        FieldError::invalid_rendered("spec.matchingPrecedence", &precedence.to_string(), detail)
    };
    if precedence <= 0 {
        errs.push(precedence_error("must be a positive value"));
    }
    if precedence > MAX_MATCHING_PRECEDENCE {
        errs.push(precedence_error(&format!(
            "must not be greater than {MAX_MATCHING_PRECEDENCE}"
        )));
    }
    if precedence == 1 && name != EXEMPT {
        errs.push(precedence_error(
            "only the schema named 'exempt' may have matchingPrecedence 1",
        ));
    }
    if let Some(method) = spec.get("distinguisherMethod").filter(|m| !m.is_null()) {
        let method_type = method.get("type").and_then(Value::as_str).unwrap_or("");
        if !matches!(method_type, "ByNamespace" | "ByUser") {
            errs.push(FieldError::not_supported_rendered(
                "spec.distinguisherMethod.type",
                &format!(
                    "flowcontrol.FlowDistinguisherMethod{{Type:{}}}",
                    go_quote(method_type)
                ),
                &["ByNamespace", "ByUser"],
            ));
        }
    }
    let level = spec
        .pointer("/priorityLevelConfiguration/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    if level.is_empty() {
        errs.push(FieldError::required(
            "spec.priorityLevelConfiguration.name",
            "must reference a priority level",
        ));
    } else {
        for problem in name_problems(NameRule::Subdomain, level, false) {
            errs.push(FieldError::invalid(
                "spec.priorityLevelConfiguration.name",
                level,
                &problem,
            ));
        }
    }
    let rules = spec.get("rules").and_then(Value::as_array);
    for (i, rule) in rules.into_iter().flatten().enumerate() {
        errs.extend(validate_rule(rule, &format!("spec.rules[{i}]")));
    }
    errs
}

fn validate_rule(rule: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let list = |key: &str| {
        rule.get(key)
            .and_then(Value::as_array)
            .filter(|l| !l.is_empty())
    };
    match list("subjects") {
        Some(subjects) => {
            for (j, subject) in subjects.iter().enumerate() {
                errs.extend(validate_subject(subject, &format!("{path}.subjects[{j}]")));
            }
        }
        None => errs.push(FieldError::required(
            format!("{path}.subjects"),
            "subjects must contain at least one value",
        )),
    }
    let resource_rules = list("resourceRules");
    let non_resource_rules = list("nonResourceRules");
    if resource_rules.is_none() && non_resource_rules.is_none() {
        errs.push(FieldError::required(
            path,
            "at least one of resourceRules and nonResourceRules has to be non-empty",
        ));
    }
    for (k, resource_rule) in resource_rules.into_iter().flatten().enumerate() {
        errs.extend(validate_resource_rule(
            resource_rule,
            &format!("{path}.resourceRules[{k}]"),
        ));
    }
    for (k, non_resource_rule) in non_resource_rules.into_iter().flatten().enumerate() {
        errs.extend(validate_non_resource_rule(
            non_resource_rule,
            &format!("{path}.nonResourceRules[{k}]"),
        ));
    }
    errs
}

fn validate_subject(subject: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let present = |key: &str| subject.get(key).is_some_and(|v| !v.is_null());
    let forbidden_unless = |key: &str, kind: &str| {
        FieldError::forbidden(
            format!("{path}.{key}"),
            &format!("{key} is forbidden when subject kind is not '{kind}'"),
        )
    };
    let kind = subject.get("kind").and_then(Value::as_str).unwrap_or("");
    let (own, others): (&str, [(&str, &str); 2]) = match kind {
        "ServiceAccount" => ("serviceAccount", [("user", "User"), ("group", "Group")]),
        "User" => (
            "user",
            [("serviceAccount", "ServiceAccount"), ("group", "Group")],
        ),
        "Group" => (
            "group",
            [("serviceAccount", "ServiceAccount"), ("user", "User")],
        ),
        other => {
            errs.push(FieldError::not_supported(
                format!("{path}.kind"),
                other,
                &["Group", "ServiceAccount", "User"],
            ));
            return errs;
        }
    };
    errs.extend(validate_subject_detail(own, kind, subject.get(own), path));
    for (key, kind) in others {
        if present(key) {
            errs.push(forbidden_unless(key, kind));
        }
    }
    errs
}

fn validate_subject_detail(
    key: &str,
    kind: &str,
    detail: Option<&Value>,
    path: &str,
) -> Vec<FieldError> {
    let path = format!("{path}.{key}");
    let Some(detail) = detail.filter(|d| !d.is_null()) else {
        return vec![FieldError::required(
            path,
            &format!("{key} is required when subject kind is '{kind}'"),
        )];
    };
    let mut errs = Vec::new();
    let name = detail.get("name").and_then(Value::as_str).unwrap_or("");
    if name.is_empty() {
        errs.push(FieldError::required(format!("{path}.name"), ""));
    } else if key == "serviceAccount" && name != "*" {
        for problem in name_problems(NameRule::Subdomain, name, false) {
            errs.push(FieldError::invalid(format!("{path}.name"), name, &problem));
        }
    }
    if key == "serviceAccount" {
        let namespace = detail
            .get("namespace")
            .and_then(Value::as_str)
            .unwrap_or("");
        if namespace.is_empty() {
            errs.push(FieldError::required(
                format!("{path}.namespace"),
                "must specify namespace for service account",
            ));
        }
        for problem in name_problems(NameRule::Label, namespace, false)
            .into_iter()
            .filter(|_| !namespace.is_empty())
        {
            errs.push(FieldError::invalid(
                format!("{path}.namespace"),
                namespace,
                &problem,
            ));
        }
    }
    errs
}

fn validate_verbs(rule: &Value, path: &str) -> Option<FieldError> {
    let verbs = strings(rule, "verbs");
    let field = format!("{path}.verbs");
    if verbs.is_empty() {
        return Some(FieldError::required(
            field,
            "verbs must contain at least one value",
        ));
    }
    let rendered = || go_string_slice("[]string", rule.get("verbs"));
    if verbs.contains(&"*") {
        return (verbs.len() > 1).then(|| {
            FieldError::invalid_rendered(
                field.clone(),
                &rendered(),
                "if '*' is present, must not specify other verbs",
            )
        });
    }
    verbs
        .iter()
        .any(|verb| !SUPPORTED_VERBS.contains(verb))
        .then(|| FieldError::not_supported_rendered(field, &rendered(), SUPPORTED_VERBS))
}

/// A list that must have members, and `*` only on its own.
fn validate_wildcard_list(
    rule: &Value,
    path: &str,
    key: &str,
    required: &str,
    what: &str,
) -> Option<FieldError> {
    let items = strings(rule, key);
    let field = format!("{path}.{key}");
    if items.is_empty() {
        return Some(FieldError::required(field, required));
    }
    (items.len() > 1 && items.contains(&"*")).then(|| {
        FieldError::invalid_rendered(
            field,
            &go_string_slice("[]string", rule.get(key)),
            &format!("if '*' is present, must not specify other {what}"),
        )
    })
}

fn validate_resource_rule(rule: &Value, path: &str) -> Vec<FieldError> {
    let mut errs: Vec<FieldError> = validate_verbs(rule, path).into_iter().collect();
    errs.extend(validate_wildcard_list(
        rule,
        path,
        "apiGroups",
        "resource rules must supply at least one api group",
        "api groups",
    ));
    errs.extend(validate_wildcard_list(
        rule,
        path,
        "resources",
        "resource rules must supply at least one resource",
        "resources",
    ));
    let namespaces = strings(rule, "namespaces");
    let cluster_scope = rule
        .get("clusterScope")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if namespaces.is_empty() && !cluster_scope {
        errs.push(FieldError::required(
            format!("{path}.namespaces"),
            "resource rules that are not cluster scoped must supply at least one namespace",
        ));
    } else if namespaces.contains(&"*") {
        if namespaces.len() > 1 {
            errs.push(FieldError::invalid_rendered(
                format!("{path}.namespaces"),
                &go_string_slice("[]string", rule.get("namespaces")),
                "if '*' is present, must not specify other namespaces",
            ));
        }
    } else {
        for (index, namespace) in namespaces.iter().enumerate() {
            for problem in name_problems(NameRule::Label, namespace, false) {
                errs.push(FieldError::invalid(
                    format!("{path}.namespaces[{index}]"),
                    namespace,
                    &format!("each member of this list must be '*' or a DNS-1123 label; {problem}"),
                ));
            }
        }
    }
    errs
}

fn validate_non_resource_rule(rule: &Value, path: &str) -> Vec<FieldError> {
    let mut errs: Vec<FieldError> = validate_verbs(rule, path).into_iter().collect();
    let urls = strings(rule, "nonResourceURLs");
    if let Some(error) = validate_wildcard_list(
        rule,
        path,
        "nonResourceURLs",
        "nonResourceURLs must contain at least one value",
        "non-resource URLs",
    ) {
        errs.push(error);
    } else if !urls.contains(&"*") {
        for (index, url) in urls.iter().enumerate() {
            if let Some(problem) = non_resource_url_problem(url) {
                errs.push(FieldError::invalid(
                    format!("{path}.nonResourceURLs[{index}]"),
                    url,
                    problem,
                ));
            }
        }
    }
    errs
}

/// upstream's ValidateNonResourceURLPath: the first problem of a path.
fn non_resource_url_problem(url: &str) -> Option<&'static str> {
    if url.is_empty() {
        return Some("must not be empty");
    }
    if url == "/" {
        return None;
    }
    if !url.starts_with('/') {
        return Some("must start with slash");
    }
    if url.contains(' ') {
        return Some("must not contain white-space");
    }
    if url.contains("//") {
        return Some("must not contain double slash");
    }
    let stars = url.matches('*').count();
    (stars > 1 || (stars == 1 && !url.ends_with("/*")))
        .then_some("wildcard can only do suffix matching")
}

/// flowcontrol/v1 `SetDefaults_FlowSchemaSpec`: matching precedence 1000.
fn set_defaults(schema: &mut Object) {
    if let Some(spec) = ensure_child(schema, "spec") {
        default_zero(spec, "matchingPrecedence", json!(1000));
    }
}

const D_FS_PRIORITY_LEVEL: &str =
    "`name` is the name of the priority level configuration being referenced Required.";
const D_FS_PRECEDENCE: &str = "`matchingPrecedence` is used to choose among the FlowSchemas that match a given request. The chosen FlowSchema is among those with the numerically lowest (which we take to be logically highest) MatchingPrecedence.  Each MatchingPrecedence value must be ranged in [1,10000]. Note that if the precedence is not specified, it will be set to 1000 as default.";
const D_FS_DISTINGUISHER: &str = "`distinguisherMethod` defines how to compute the flow distinguisher for requests that match this schema. `nil` specifies that the distinguisher is disabled and thus will always be the empty string.";
const D_FS_MISSING_PL: &str = "references a broken or non-existent PriorityLevelConfiguration";

fn cells(fs: &Value) -> Vec<Cell> {
    let distinguisher = match get(fs, "/spec/distinguisherMethod") {
        Some(method) if !method.is_null() => text(method, "/type").to_string(),
        _ => "<none>".to_string(),
    };
    let missing = condition(items(fs, "/status/conditions"), "Dangling")
        .map(|dangling| text(dangling, "/status").to_string())
        .unwrap_or_else(|| "?".to_string());
    vec![
        name(fs).into(),
        text(fs, "/spec/priorityLevelConfiguration/name").into(),
        int(fs, "/spec/matchingPrecedence").into(),
        distinguisher.into(),
        age(fs),
        missing.into(),
    ]
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn messages(object: &Value) -> Vec<String> {
        FlowSchema
            .validate_create(object)
            .iter()
            .map(FieldError::render)
            .collect()
    }

    fn schema(name: &str, spec: Value) -> Value {
        json!({"metadata": {"name": name}, "spec": spec})
    }

    #[test]
    fn the_bootstrap_schemas_are_valid() {
        for object in bootstrap::mandatory_flow_schemas()
            .into_iter()
            .chain(bootstrap::suggested_flow_schemas())
        {
            assert_eq!(messages(&object), Vec::<String>::new(), "{object}");
        }
    }

    #[test]
    fn spec_rules_in_upstreams_words() {
        let errs = messages(&schema(
            "s",
            json!({
                "priorityLevelConfiguration": {"name": ""},
                "matchingPrecedence": 1,
                "distinguisherMethod": {"type": "ByColor"},
                "rules": [{
                    "subjects": [{"kind": "User", "user": {"name": "u"}, "group": {"name": "g"}}],
                    "resourceRules": [{"verbs": ["get", "*"], "apiGroups": [], "resources": ["pods"], "namespaces": ["Not_A_Label"]}],
                    "nonResourceRules": [{"verbs": ["fly"], "nonResourceURLs": ["/a/*/b"]}],
                }],
            }),
        ));
        assert_eq!(
            errs,
            vec![
                "spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1",
                r#"spec.distinguisherMethod.type: Unsupported value: flowcontrol.FlowDistinguisherMethod{Type:"ByColor"}: supported values: "ByNamespace", "ByUser""#,
                "spec.priorityLevelConfiguration.name: Required value: must reference a priority level",
                "spec.rules[0].subjects[0].group: Forbidden: group is forbidden when subject kind is not 'Group'",
                r#"spec.rules[0].resourceRules[0].verbs: Invalid value: []string{"get", "*"}: if '*' is present, must not specify other verbs"#,
                "spec.rules[0].resourceRules[0].apiGroups: Required value: resource rules must supply at least one api group",
                r#"spec.rules[0].resourceRules[0].namespaces[0]: Invalid value: "Not_A_Label": each member of this list must be '*' or a DNS-1123 label; a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"#,
                r#"spec.rules[0].nonResourceRules[0].verbs: Unsupported value: []string{"fly"}: supported values: "create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch""#,
                r#"spec.rules[0].nonResourceRules[0].nonResourceURLs[0]: Invalid value: "/a/*/b": wildcard can only do suffix matching"#,
            ]
        );
    }

    #[test]
    fn subjects_need_their_details() {
        let errs = messages(&schema(
            "s",
            json!({
                "priorityLevelConfiguration": {"name": "p"},
                "matchingPrecedence": 10001,
                "rules": [{
                    "subjects": [
                        {"kind": "ServiceAccount", "serviceAccount": {"name": ""}},
                        {"kind": "Group"},
                        {"kind": "Robot"},
                    ],
                }],
            }),
        ));
        assert_eq!(
            errs,
            vec![
                "spec.matchingPrecedence: Invalid value: 10001: must not be greater than 10000",
                "spec.rules[0].subjects[0].serviceAccount.name: Required value",
                "spec.rules[0].subjects[0].serviceAccount.namespace: Required value: must specify namespace for service account",
                "spec.rules[0].subjects[1].group: Required value: group is required when subject kind is 'Group'",
                r#"spec.rules[0].subjects[2].kind: Unsupported value: "Robot": supported values: "Group", "ServiceAccount", "User""#,
                "spec.rules[0]: Required value: at least one of resourceRules and nonResourceRules has to be non-empty",
            ]
        );
    }

    #[test]
    fn the_mandatory_schemas_are_fixed() {
        let mut exempt = bootstrap::mandatory_flow_schemas().remove(0);
        exempt["spec"]["rules"][0]["subjects"][0]["group"]["name"] = json!("admins");
        let errs = messages(&exempt);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(
            errs[0].starts_with("spec: Invalid value: ")
                && errs[0].ends_with(": spec of 'exempt' must equal the fixed value"),
            "{errs:?}"
        );
    }

    #[test]
    fn status_conditions_need_distinct_types() {
        let object = json!({"metadata": {"name": "s"}, "status": {"conditions": [
            {"type": "Dangling", "status": "True"}, {"type": "Dangling"}, {"status": "False"},
        ]}});
        let errs: Vec<String> = FlowSchema
            .validate_status_update(&object, &object)
            .iter()
            .map(FieldError::render)
            .collect();
        assert_eq!(
            errs,
            vec![
                r#"status.conditions[1].type: Duplicate value: "Dangling""#,
                "status.conditions[2].type: Required value: must not be empty",
            ]
        );
    }

    #[test]
    fn rows_follow_matching_order() {
        let a = json!({"metadata": {"name": "b"}, "spec": {"matchingPrecedence": 5}});
        let b = json!({"metadata": {"name": "a"}, "spec": {"matchingPrecedence": 5}});
        let c = json!({"metadata": {"name": "z"}, "spec": {"matchingPrecedence": 1}});
        let mut rows = [&a, &b, &c];
        rows.sort_by(|x, y| by_precedence_then_name(x, y));
        assert_eq!(rows.map(crate::object::name), ["z", "a", "b"]);
    }
}
