//! `x-kubernetes-validations`: the CEL rules of a structural schema,
//! compiled once when the definition is served and evaluated on every write
//! after the OpenAPI checks, with `self` (and `oldSelf` on update), as
//! apiextensions-apiserver evaluates them. The CEL engine is cel-rust with
//! Kubernetes' extension libraries (kube-cel); errors are worded and typed
//! as upstream's fieldErrorForReason.
//!
//! Before any rule runs, what the rules would cost on this object is charged
//! against upstream's budgets (`super::budget`); an object over them gets
//! upstream's error and no rule runs.

use serde_json::Value;

use super::schema::Schema;
use crate::error::FieldError;

/// The message upstream adds when OpenAPI errors stop the rules from running.
const NOT_CHECKED: &str = "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation";

/// The compiled rules of one schema, if it has any.
pub struct Rules {
    compiled: kube_cel::CompiledSchema,
    /// Each rule's `fieldPath`, by rule text: an error is reported there,
    /// but its value is the type of the node the rule is declared on.
    field_paths: Vec<(String, String)>,
    /// Whether some object the schema admits could take the rules over
    /// upstream's cost limits; when not, writes are not charged.
    charged: bool,
}

impl std::fmt::Debug for Rules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Rules")
    }
}

fn has_rules(schema: &Value) -> bool {
    match schema {
        Value::Object(map) => {
            map.contains_key("x-kubernetes-validations") || map.values().any(has_rules)
        }
        Value::Array(items) => items.iter().any(has_rules),
        _ => false,
    }
}

impl Rules {
    /// Compiles every rule of `schema` (the `openAPIV3Schema` JSON, parsed
    /// as `parsed`); None when it has none.
    pub fn compile(schema: &Value, parsed: &Schema) -> Option<Rules> {
        has_rules(schema).then(|| {
            let mut field_paths = Vec::new();
            collect_field_paths(schema, &mut field_paths);
            let charged = !super::budget::never_exceeds(schema, parsed);
            Rules {
                compiled: kube_cel::compile_schema(schema),
                field_paths,
                charged,
            }
        })
    }

    /// The rules' verdict on `object` (`old` on update), given the OpenAPI
    /// errors already found: upstream does not run the rules on an object
    /// with errors a rule could trip over, and says so.
    pub fn check(
        &self,
        schema: &Schema,
        object: &Value,
        old: Option<&Value>,
        schema_errors: &[FieldError],
    ) -> Vec<FieldError> {
        let blocking = schema_errors.iter().any(|e| {
            matches!(
                e.reason,
                "FieldValueNotSupported"
                    | "FieldValueRequired"
                    | "FieldValueTooLong"
                    | "FieldValueTooMany"
                    | "FieldValueTypeInvalid"
            )
        });
        if blocking {
            return vec![FieldError::invalid_rendered(
                "<nil>",
                "\"null\"",
                NOT_CHECKED,
            )];
        }
        let node_type = |path: &str| type_at(schema, path);
        if self.charged {
            if let Some(error) = super::budget::charge(&self.compiled, object, old, &node_type) {
                return vec![error];
            }
        }
        match kube_cel::validate_compiled(&self.compiled, object, old) {
            Ok(()) => Vec::new(),
            Err(errors) => errors
                .into_vec()
                .into_iter()
                .map(|e| field_error(schema, &e, self.declared_at(&e)))
                .collect(),
        }
    }
}

fn collect_field_paths(schema: &Value, out: &mut Vec<(String, String)>) {
    match schema {
        Value::Object(map) => {
            for rule in map
                .get("x-kubernetes-validations")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let (Some(text), Some(path)) = (
                    rule.get("rule").and_then(Value::as_str),
                    rule.get("fieldPath").and_then(Value::as_str),
                ) {
                    out.push((text.to_string(), path.to_string()));
                }
            }
            map.values().for_each(|v| collect_field_paths(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_field_paths(v, out)),
        _ => {}
    }
}

impl Rules {
    /// The path of the node a failed rule is declared on.
    fn declared_at(&self, error: &kube_cel::ValidationError) -> String {
        let path = error.field_path.as_str();
        self.field_paths
            .iter()
            .filter(|(rule, _)| *rule == error.rule)
            .find_map(|(_, field_path)| {
                let suffix = if field_path.starts_with('.') {
                    field_path.clone()
                } else {
                    format!(".{field_path}")
                };
                path.strip_suffix(suffix.as_str())
                    .or_else(|| path.strip_suffix(suffix.trim_start_matches('.')))
                    .map(str::to_string)
            })
            .unwrap_or_else(|| path.to_string())
    }
}

/// The schema type of the node at a field path (`spec.items[0].name`), as
/// upstream names the invalid value of a failed rule.
fn type_at(schema: &Schema, path: &str) -> String {
    let mut node = Some(schema);
    for segment in path.split('.').filter(|s| !s.is_empty()) {
        let (key, indices) = match segment.find('[') {
            Some(open) => (&segment[..open], segment[open..].matches('[').count()),
            None => (segment, 0),
        };
        node = node.and_then(|n| {
            if key.is_empty() {
                Some(n)
            } else {
                n.property(key)
            }
        });
        for _ in 0..indices {
            node = node.and_then(|n| n.items.as_deref().or(n.additional_properties.as_deref()));
        }
    }
    node.map(|n| n.type_.clone()).unwrap_or_default()
}

/// Upstream's fieldErrorForReason.
fn field_error(
    schema: &Schema,
    error: &kube_cel::ValidationError,
    declared_at: String,
) -> FieldError {
    let path = error.field_path.as_str();
    let value = serde_json::to_string(&type_at(schema, &declared_at)).unwrap_or_default();
    match (&error.kind, error.reason.as_deref()) {
        (kube_cel::ErrorKind::ValidationFailure, Some("FieldValueForbidden")) => {
            FieldError::forbidden(path, &error.message)
        }
        (kube_cel::ErrorKind::ValidationFailure, Some("FieldValueRequired")) => {
            FieldError::required(path, &error.message)
        }
        (kube_cel::ErrorKind::ValidationFailure, Some("FieldValueDuplicate")) => {
            FieldError::duplicate_rendered(path, &value, "")
        }
        _ => FieldError::invalid_rendered(path, &value, &error.message),
    }
}

/// Problems compiling the rules of a definition's schema, reported at
/// `path` (the schema's field path) as upstream's CRD validation does.
pub fn compile_errors(schema: &Value, path: &str) -> Vec<FieldError> {
    if !has_rules(schema) {
        return Vec::new();
    }
    let compiled = kube_cel::compile_schema(schema);
    let mut errors = Vec::new();
    collect(&compiled, schema, path, &mut errors);
    errors
}

fn collect(
    compiled: &kube_cel::CompiledSchema,
    schema: &Value,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    for (i, result) in compiled.validations.iter().enumerate() {
        let Err(error) = result else {
            continue;
        };
        let rule = schema
            .pointer(&format!("/x-kubernetes-validations/{i}/rule"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        let (field, detail) = match error {
            kube_cel::CompilationError::MessageExpressionParse { .. } => (
                format!("{path}.x-kubernetes-validations[{i}].messageExpression"),
                format!("messageExpression compilation failed: {error}"),
            ),
            _ => (
                format!("{path}.x-kubernetes-validations[{i}].rule"),
                format!("compilation failed: {error}"),
            ),
        };
        errors.push(FieldError::invalid(field, rule, &detail));
    }
    for (name, child) in &compiled.properties {
        if let Some(child_schema) = schema.pointer(&format!(
            "/properties/{}",
            name.replace('~', "~0").replace('/', "~1")
        )) {
            collect(
                child,
                child_schema,
                &format!("{path}.properties[{name}]"),
                errors,
            );
        }
    }
    if let (Some(items), Some(items_schema)) = (&compiled.items, schema.get("items")) {
        collect(items, items_schema, &format!("{path}.items"), errors);
    }
    if let (Some(additional), Some(additional_schema)) = (
        &compiled.additional_properties,
        schema.get("additionalProperties"),
    ) {
        collect(
            additional,
            additional_schema,
            &format!("{path}.additionalProperties"),
            errors,
        );
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "x-kubernetes-validations": [
                        {"rule": "self.min <= self.max", "message": "min must not exceed max", "fieldPath": ".min"},
                        {"rule": "!has(self.locked) || self.locked == oldSelf.locked", "reason": "FieldValueForbidden", "message": "locked is immutable"}
                    ],
                    "properties": {
                        "min": {"type": "integer"},
                        "max": {"type": "integer", "x-kubernetes-validations": [{"rule": "self < 100"}]},
                        "locked": {"type": "boolean"}
                    }
                }
            }
        })
    }

    fn rendered(errors: &[FieldError]) -> Vec<String> {
        errors.iter().map(FieldError::render).collect()
    }

    #[test]
    fn failed_rules_are_worded_as_upstream() {
        let raw = schema();
        let parsed = Schema::parse(&raw).unwrap();
        let rules = Rules::compile(&raw, &parsed).expect("rules");
        let widget = json!({"spec": {"min": 150, "max": 120}});
        let mut errors = rendered(&rules.check(&parsed, &widget, None, &[]));
        errors.sort();
        assert_eq!(
            errors,
            [
                r#"spec.max: Invalid value: "integer": failed rule: self < 100"#,
                r#"spec.min: Invalid value: "object": min must not exceed max"#,
            ]
        );
    }

    #[test]
    fn transition_rules_see_the_old_object() {
        let raw = schema();
        let parsed = Schema::parse(&raw).unwrap();
        let rules = Rules::compile(&raw, &parsed).expect("rules");
        let old = json!({"spec": {"min": 1, "max": 2, "locked": true}});
        let new = json!({"spec": {"min": 1, "max": 2, "locked": false}});
        assert!(rules.check(&parsed, &new, None, &[]).is_empty());
        assert_eq!(
            rendered(&rules.check(&parsed, &new, Some(&old), &[])),
            ["spec: Forbidden: locked is immutable"]
        );
    }

    #[test]
    fn rules_wait_for_a_valid_object() {
        let raw = schema();
        let parsed = Schema::parse(&raw).unwrap();
        let rules = Rules::compile(&raw, &parsed).expect("rules");
        let earlier = [FieldError::required("spec.min", "")];
        assert_eq!(
            rendered(&rules.check(&parsed, &json!({}), None, &earlier)),
            [format!(r#"<nil>: Invalid value: "null": {NOT_CHECKED}"#)]
        );
    }

    #[test]
    fn rules_that_do_not_compile_are_reported_where_they_are() {
        let bad = json!({"type": "object", "properties": {"spec": {"type": "object",
            "x-kubernetes-validations": [{"rule": "self.min <="}]}}});
        let errors = compile_errors(&bad, "spec.validation.openAPIV3Schema");
        assert_eq!(errors.len(), 1);
        assert_eq!(
            errors[0].field,
            "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule"
        );
        assert!(errors[0]
            .message
            .starts_with(r#"Invalid value: "self.min <=": compilation failed"#));
        let bare = json!({"type": "object"});
        assert!(Rules::compile(&bare, &Schema::parse(&bare).unwrap()).is_none());
    }

    fn unique_names(count: usize) -> Value {
        Value::Array((0..count).map(|i| json!(format!("n{i}"))).collect())
    }

    fn groups_schema() -> Value {
        let names = json!({"type": "array", "items": {"type": "string"},
            "x-kubernetes-validations": [{"rule": "self.all(x, self.exists_one(y, x == y))",
                "message": "names must be unique"}]});
        json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "names": names,
            "groups": {"type": "array", "items": {"type": "object", "properties": {"names": names}}}
        }}}})
    }

    #[test]
    fn a_rule_costing_more_than_one_call_may_does_not_run() {
        let raw = groups_schema();
        let parsed = Schema::parse(&raw).unwrap();
        let rules = Rules::compile(&raw, &parsed).expect("rules");
        let fits = json!({"spec": {"names": unique_names(300)}});
        assert!(rules.check(&parsed, &fits, None, &[]).is_empty());
        let too_many = json!({"spec": {"names": unique_names(500)}});
        assert_eq!(
            rendered(&rules.check(&parsed, &too_many, None, &[])),
            [
                r#"spec.names: Invalid value: "array": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: names must be unique"#
            ]
        );
    }

    #[test]
    fn rules_share_one_budget_per_object() {
        let raw = groups_schema();
        let parsed = Schema::parse(&raw).unwrap();
        let rules = Rules::compile(&raw, &parsed).expect("rules");
        let group = json!({"names": unique_names(300)});
        let groups = |n: usize| json!({"spec": {"groups": vec![group.clone(); n]}});
        assert!(rules.check(&parsed, &groups(22), None, &[]).is_empty());
        assert_eq!(
            rendered(&rules.check(&parsed, &groups(25), None, &[])),
            [
                r#"spec.groups[22].names: Invalid value: "array": validation failed due to running out of cost budget, no further validation rules will be run"#
            ]
        );
    }
}
