//! `x-kubernetes-validations`: the CEL rules of a structural schema,
//! compiled once when the definition is served and evaluated on every write
//! after the OpenAPI checks, with `self` (and `oldSelf` on update), as
//! apiextensions-apiserver evaluates them. The CEL engine is cel-rust with
//! Kubernetes' extension libraries (kube-cel); values are typed as upstream
//! types them (`super::cel_values`), and errors are worded as upstream's.
//!
//! Only the nodes that declare rules are converted to CEL values, each
//! once for all of its rules: a write's cost is its rules', not its size.
//!
//! Before any rule runs, what the rules would cost on this object is charged
//! against upstream's budgets (`super::budget`); an object over them gets
//! upstream's error and no rule runs.

use std::ops::ControlFlow;
use std::sync::{Arc, LazyLock};

use kube_cel::cel::objects::OptionalValue;
use kube_cel::cel::{Context, ExecutionError, Value as Cel};
use kube_cel::{CompilationResult, KubeCelExt};
use serde_json::Value;

use super::cel_values::{resource_to_cel, to_cel};
use super::schema::Schema;
use crate::error::{go_quote, FieldError};

/// The message upstream adds when OpenAPI errors stop the rules from running.
const NOT_CHECKED: &str = "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation";

/// The longest message a `messageExpression` may give
/// (MaxEvaluatedMessageExpressionSizeBytes).
const MAX_MESSAGE_BYTES: usize = 5 * 1024;

/// CEL's and Kubernetes' functions, registered once: each node's rules run
/// in a scope of their own over them.
static FUNCTIONS: LazyLock<Context<'static>> = LazyLock::new(|| Context::default().with_all());

/// The compiled rules of one schema, if it has any.
pub struct Rules {
    root: RuleNode,
    /// Whether some object the schema admits could take the rules over
    /// upstream's cost limits; when not, writes are not charged.
    charged: bool,
}

impl std::fmt::Debug for Rules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Rules")
    }
}

/// The rules one schema node declares, and the nodes beneath it that
/// declare some: a write's walk visits nothing else.
pub struct RuleNode {
    pub rules: Vec<CompilationResult>,
    properties: Vec<(String, RuleNode)>,
    items: Option<Box<RuleNode>>,
    /// `additionalProperties`: a map's values.
    values: Option<Box<RuleNode>>,
    /// `allOf` branches' rules, which see the node as its own schema types it.
    all_of: Vec<RuleNode>,
    /// Whether a rule here reads `oldSelf` (only then is it converted).
    uses_old_self: bool,
}

impl RuleNode {
    /// The rule-bearing part of `compiled`; None when it declares none.
    /// Rules that failed to compile are left out: a definition with one
    /// is refused before it is served.
    fn prune(compiled: kube_cel::CompiledSchema) -> Option<RuleNode> {
        let kube_cel::CompiledSchema {
            validations,
            properties,
            items,
            additional_properties,
            all_of,
            ..
        } = compiled;
        let mut properties: Vec<(String, RuleNode)> = properties
            .into_iter()
            .filter_map(|(name, child)| RuleNode::prune(child).map(|node| (name, node)))
            .collect();
        properties.sort_by(|a, b| a.0.cmp(&b.0));
        let rules: Vec<CompilationResult> = validations.into_iter().flatten().collect();
        let node = RuleNode {
            uses_old_self: rules.iter().any(|r| r.is_transition_rule),
            rules,
            properties,
            items: items.and_then(|i| RuleNode::prune(*i)).map(Box::new),
            values: additional_properties
                .and_then(|v| RuleNode::prune(*v))
                .map(Box::new),
            all_of: all_of.into_iter().filter_map(RuleNode::prune).collect(),
        };
        let bare = node.rules.is_empty()
            && node.properties.is_empty()
            && node.items.is_none()
            && node.values.is_none()
            && node.all_of.is_empty();
        (!bare).then_some(node)
    }

    /// Rewrites each rule's fieldPath as the field path it is reported at;
    /// one that names no field (refused since, but perhaps stored before)
    /// is dropped, and its rule reported where it is declared, as upstream.
    fn normalize_field_paths(&mut self, schema: &Schema) {
        for rule in &mut self.rules {
            rule.rule.field_path = rule
                .rule
                .field_path
                .as_deref()
                .filter(|path| !path.is_empty())
                .and_then(|path| super::field_path::normalized(path, schema).ok());
        }
        for (name, child) in &mut self.properties {
            if let Some(child_schema) = schema.properties.get(name) {
                child.normalize_field_paths(child_schema);
            }
        }
        if let (Some(items), Some(item_schema)) = (&mut self.items, &schema.items) {
            items.normalize_field_paths(item_schema);
        }
        if let (Some(values), Some(value_schema)) =
            (&mut self.values, &schema.additional_properties)
        {
            values.normalize_field_paths(value_schema);
        }
        for branch in &mut self.all_of {
            branch.normalize_field_paths(schema);
        }
    }
}

/// A node whose rules are to run on a value.
pub struct Visit<'a> {
    pub node: &'a RuleNode,
    pub schema: &'a Schema,
    pub value: &'a Value,
    /// The old value upstream correlates with this one on update.
    pub old: Option<&'a Value>,
    /// The field path, empty at the root.
    pub path: &'a str,
    /// The resource's root, whose type and object meta rules see.
    pub root: bool,
}

impl Visit<'_> {
    /// The node's rules that run on this value: a transition rule only on
    /// update, unless its `optionalOldSelf` lets it run on create too.
    pub fn running_rules(&self) -> impl Iterator<Item = &CompilationResult> {
        self.node.rules.iter().filter(|rule| {
            !rule.is_transition_rule
                || self.old.is_some()
                || rule.rule.optional_old_self == Some(true)
        })
    }

    /// The path as upstream's field.Path prints it.
    pub fn shown_path(&self) -> String {
        shown(self.path)
    }
}

fn shown(path: &str) -> String {
    if path.is_empty() {
        "<nil>".to_string()
    } else {
        path.to_string()
    }
}

/// Calls `each` on every node of `value` that declares rules, as
/// upstream's validator walks an object: null values are not visited, an
/// old value is correlated by field name, map key, or (only in a
/// `x-kubernetes-list-type: map` list) by the item's keys.
pub fn visit<B>(
    node: &RuleNode,
    schema: &Schema,
    value: &Value,
    old: Option<&Value>,
    path: &str,
    root: bool,
    each: &mut dyn FnMut(&Visit<'_>) -> ControlFlow<B>,
) -> ControlFlow<B> {
    if value.is_null() {
        return ControlFlow::Continue(());
    }
    let old = old.filter(|o| !o.is_null());
    if !node.rules.is_empty() {
        each(&Visit {
            node,
            schema,
            value,
            old,
            path,
            root,
        })?;
    }
    for branch in &node.all_of {
        visit(branch, schema, value, old, path, root, each)?;
    }
    let child_path = |segment: &str| {
        if path.is_empty() {
            segment.to_string()
        } else {
            format!("{path}.{segment}")
        }
    };
    match value {
        Value::Object(object) => {
            for (name, child) in &node.properties {
                if let (Some(child_value), Some(child_schema)) =
                    (object.get(name), schema.properties.get(name))
                {
                    let child_old = old.and_then(|o| o.get(name));
                    visit(
                        child,
                        child_schema,
                        child_value,
                        child_old,
                        &child_path(name),
                        false,
                        each,
                    )?;
                }
            }
            if let (Some(values), Some(values_schema)) =
                (&node.values, &schema.additional_properties)
            {
                for (key, child_value) in object {
                    let child_old = old.and_then(|o| o.get(key));
                    let key_path = format!("{path}[{key}]");
                    visit(
                        values,
                        values_schema,
                        child_value,
                        child_old,
                        &key_path,
                        false,
                        each,
                    )?;
                }
            }
        }
        Value::Array(list) => {
            if let (Some(items), Some(item_schema)) = (&node.items, &schema.items) {
                let old_list = old.and_then(Value::as_array);
                for (i, item) in list.iter().enumerate() {
                    let item_old = old_list.and_then(|o| correlated_item(schema, item, o));
                    let item_path = format!("{path}[{i}]");
                    visit(items, item_schema, item, item_old, &item_path, false, each)?;
                }
            }
        }
        _ => {}
    }
    ControlFlow::Continue(())
}

/// The old item of a map-type list with `item`'s keys; items of other
/// lists have no old value (their positions say nothing).
fn correlated_item<'a>(schema: &Schema, item: &Value, old: &'a [Value]) -> Option<&'a Value> {
    if schema.list_type.as_deref() != Some("map") || schema.list_map_keys.is_empty() {
        return None;
    }
    old.iter().find(|candidate| {
        schema
            .list_map_keys
            .iter()
            .all(|key| candidate.get(key) == item.get(key))
    })
}

impl Rules {
    /// Compiles every rule of `schema` (the `openAPIV3Schema` JSON, parsed
    /// as `parsed`); None when it has none.
    pub fn compile(schema: &Value, parsed: &Schema) -> Option<Rules> {
        let mut root = RuleNode::prune(kube_cel::compile_schema(schema))?;
        root.normalize_field_paths(parsed);
        Some(Rules {
            root,
            charged: !super::budget::never_exceeds(schema, parsed),
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
        if self.charged {
            if let Some(error) = super::budget::charge(&self.root, schema, object, old) {
                return vec![error];
            }
        }
        let mut errors = Vec::new();
        let _ = visit::<()>(&self.root, schema, object, old, "", true, &mut |node| {
            evaluate(node, &mut errors);
            ControlFlow::Continue(())
        });
        errors
    }
}

/// Runs one node's rules, `self` (and `oldSelf`) converted once for all.
fn evaluate(at: &Visit<'_>, errors: &mut Vec<FieldError>) {
    let convert = |value: &Value| {
        if at.root {
            resource_to_cel(value, at.schema)
        } else {
            to_cel(value, at.schema)
        }
    };
    let mut scope = FUNCTIONS.new_inner_scope();
    scope.add_variable_from_value("self", convert(at.value));
    let old_self = at.old.filter(|_| at.node.uses_old_self).map(convert);
    if let Some(old_self) = &old_self {
        scope.add_variable_from_value("oldSelf", old_self.clone());
    }
    // With optionalOldSelf, oldSelf is a CEL optional, empty on create.
    let mut optional_scope = None;
    for rule in at.running_rules() {
        let optional = rule.rule.optional_old_self == Some(true);
        let context = if optional {
            &*optional_scope.get_or_insert_with(|| {
                let mut with_optional = scope.new_inner_scope();
                let held = match &old_self {
                    Some(old) => OptionalValue::of(old.clone()),
                    None => OptionalValue::none(),
                };
                with_optional.add_variable_from_value("oldSelf", Cel::Opaque(Arc::new(held)));
                with_optional
            })
        } else {
            &scope
        };
        match rule.program.execute(context) {
            Ok(Cel::Bool(true)) => {}
            Ok(_) => errors.push(failed(at, rule, &scope)),
            Err(error) => errors.push(FieldError::invalid(
                at.shown_path(),
                &at.schema.type_,
                &runtime_error(&error, rule),
            )),
        }
    }
}

/// How upstream names a rule in its errors (ruleErrorString).
pub(super) fn rule_named(rule: &CompilationResult) -> &str {
    rule.rule
        .message
        .as_deref()
        .filter(|m| !m.is_empty())
        .unwrap_or(&rule.rule.rule)
        .trim()
}

/// A rule that evaluated to false: its message (or messageExpression's)
/// at the rule's fieldPath, of the kind its reason names.
fn failed(at: &Visit<'_>, rule: &CompilationResult, scope: &Context<'_>) -> FieldError {
    let path = match rule.rule.field_path.as_deref() {
        Some(field_path) if !field_path.is_empty() => {
            if at.path.is_empty() {
                field_path.to_string()
            } else {
                format!("{}.{field_path}", at.path)
            }
        }
        _ => at.shown_path(),
    };
    let evaluated = rule
        .message_program
        .as_ref()
        .and_then(|program| match program.execute(scope) {
            Ok(Cel::String(message)) => Some(message.trim().to_string()),
            _ => None,
        })
        .filter(|m| !m.is_empty() && !m.contains('\n') && m.len() <= MAX_MESSAGE_BYTES);
    let detail = evaluated.unwrap_or_else(|| match rule.rule.message.as_deref() {
        Some(message) if !message.is_empty() => message.trim().to_string(),
        _ => format!("failed rule: {}", rule_named(rule)),
    });
    let type_ = &at.schema.type_;
    match rule.rule.reason.as_deref() {
        Some("FieldValueForbidden") => FieldError::forbidden(path, &detail),
        Some("FieldValueRequired") => FieldError::required(path, &detail),
        Some("FieldValueDuplicate") => FieldError::duplicate(path, type_),
        _ => FieldError::invalid(path, type_, &detail),
    }
}

/// A rule that could not be evaluated, worded as upstream words cel-go's
/// errors.
fn runtime_error(error: &ExecutionError, rule: &CompilationResult) -> String {
    let text = match error {
        ExecutionError::NoSuchOverload
        | ExecutionError::UnsupportedBinaryOperator(..)
        | ExecutionError::UnsupportedUnaryOperator(..)
        | ExecutionError::ValuesNotComparable(..)
        | ExecutionError::UnexpectedType { .. }
        | ExecutionError::UnsupportedTargetType { .. } => {
            return format!(
                "'no such overload': call arguments did not match a supported operator, function or macro signature for rule: {}",
                rule_named(rule)
            );
        }
        ExecutionError::NoSuchKey(key) => format!("no such key: {key}"),
        ExecutionError::IndexOutOfBounds(Cel::Int(index)) => {
            format!("index out of bounds: {index}")
        }
        ExecutionError::DivisionByZero(_) => "division by zero".to_string(),
        ExecutionError::RemainderByZero(_) => "modulus by zero".to_string(),
        ExecutionError::Overflow(..) => "integer overflow".to_string(),
        other => other.to_string(),
    };
    format!("{text} evaluating rule: {}", rule_named(rule))
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

/// Problems compiling the rules of a definition's schema, reported at
/// `path` (the schema's field path) as upstream's CRD validation does:
/// rules that do not compile, `optionalOldSelf` on a rule that never reads
/// `oldSelf`, and `oldSelf` where no old value can be matched to the new.
pub fn compile_errors(schema: &Value, path: &str) -> Vec<FieldError> {
    if !has_rules(schema) {
        return Vec::new();
    }
    let compiled = kube_cel::compile_schema(schema);
    let mut errors = Vec::new();
    collect(&compiled, schema, path, None, &mut errors);
    // Properties come in no particular order; upstream's map has none
    // either, but an answer should not change between requests.
    errors.sort_by_key(FieldError::render);
    errors
}

/// `uncorrelatable`: the path of the list above this node whose items have
/// no old value (any list but a `map` one), if there is one.
fn collect(
    compiled: &kube_cel::CompiledSchema,
    schema: &Value,
    path: &str,
    uncorrelatable: Option<&str>,
    errors: &mut Vec<FieldError>,
) {
    for (i, result) in compiled.validations.iter().enumerate() {
        let at = |key: &str| format!("{path}.x-kubernetes-validations[{i}].{key}");
        match result {
            Err(error) => {
                let declared = schema
                    .pointer(&format!("/x-kubernetes-validations/{i}"))
                    .unwrap_or(&Value::Null);
                let (field, detail) = match error {
                    kube_cel::CompilationError::MessageExpressionParse { .. } => (
                        at("messageExpression"),
                        format!("messageExpression compilation failed: {error}"),
                    ),
                    _ => (at("rule"), format!("compilation failed: {error}")),
                };
                errors.push(FieldError::invalid_rendered(
                    field,
                    &go_validation_rule(declared),
                    &detail,
                ));
            }
            Ok(rule) if rule.is_transition_rule => {
                if let Some(within) = uncorrelatable {
                    errors.push(FieldError::invalid(
                        at("rule"),
                        &rule.rule.rule,
                        &format!("oldSelf cannot be used on the uncorrelatable portion of the schema within {within}"),
                    ));
                }
            }
            Ok(rule) => {
                if let Some(optional) = rule.rule.optional_old_self {
                    errors.push(FieldError::invalid_rendered(
                        at("optionalOldSelf"),
                        &optional.to_string(),
                        "may not be set if oldSelf is not used in rule",
                    ));
                }
            }
        }
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
                uncorrelatable,
                errors,
            );
        }
    }
    if let (Some(items), Some(items_schema)) = (&compiled.items, schema.get("items")) {
        let map_list = schema.get("x-kubernetes-list-type").and_then(Value::as_str) == Some("map");
        let within = uncorrelatable.or((!map_list).then_some(path));
        collect(
            items,
            items_schema,
            &format!("{path}.items"),
            within,
            errors,
        );
    }
    if let (Some(additional), Some(additional_schema)) = (
        &compiled.additional_properties,
        schema.get("additionalProperties"),
    ) {
        collect(
            additional,
            additional_schema,
            &format!("{path}.additionalProperties"),
            uncorrelatable,
            errors,
        );
    }
}

/// A declared rule as upstream's errors print it: Go's `%#v` of the
/// internal `apiextensions.ValidationRule`. Go prints a set pointer field as
/// its address, which differs from run to run; a fixed one stands in.
fn go_validation_rule(declared: &Value) -> String {
    let text = |key: &str| go_quote(declared.get(key).and_then(Value::as_str).unwrap_or(""));
    let pointer = |key: &str, type_: &str| {
        let address = if declared.get(key).is_some_and(|v| !v.is_null()) {
            "0xc000000000"
        } else {
            "nil"
        };
        format!("({type_})({address})")
    };
    format!(
        "apiextensions.ValidationRule{{Rule:{}, Message:{}, MessageExpression:{}, Reason:{}, FieldPath:{}, OptionalOldSelf:{}}}",
        text("rule"),
        text("message"),
        text("messageExpression"),
        pointer("reason", "*apiextensions.FieldValueErrorReason"),
        text("fieldPath"),
        pointer("optionalOldSelf", "*bool"),
    )
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
        assert!(errors[0].message.starts_with(
            r#"Invalid value: apiextensions.ValidationRule{Rule:"self.min <=", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed"#
        ));
        let bare = json!({"type": "object"});
        assert!(Rules::compile(&bare, &Schema::parse(&bare).unwrap()).is_none());
    }

    #[test]
    fn old_self_only_where_an_old_value_can_be_matched() {
        let schema = json!({"type": "object", "properties": {
            "atomic": {"type": "array", "items": {"type": "object",
                "properties": {"name": {"type": "string"}},
                "x-kubernetes-validations": [{"rule": "self.name == oldSelf.name"}]}},
            "keyed": {"type": "array", "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "required": ["name"],
                    "properties": {"name": {"type": "string"}},
                    "x-kubernetes-validations": [{"rule": "self.name == oldSelf.name"}]}},
            "plain": {"type": "string", "x-kubernetes-validations": [
                {"rule": "self != 'x'", "optionalOldSelf": true},
                {"rule": "self == oldSelf", "optionalOldSelf": false}]}}});
        let errors: Vec<String> = compile_errors(&schema, "spec.validation.openAPIV3Schema")
            .iter()
            .map(FieldError::render)
            .collect();
        assert_eq!(
            errors,
            [
                r#"spec.validation.openAPIV3Schema.properties[atomic].items.x-kubernetes-validations[0].rule: Invalid value: "self.name == oldSelf.name": oldSelf cannot be used on the uncorrelatable portion of the schema within spec.validation.openAPIV3Schema.properties[atomic]"#,
                "spec.validation.openAPIV3Schema.properties[plain].x-kubernetes-validations[0].optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule",
            ]
        );
    }

    #[test]
    fn a_rule_is_reported_at_its_field_path_as_upstream_prints_it() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"ports": {"type": "object",
                "additionalProperties": {"type": "integer"}}},
            "x-kubernetes-validations": [
                {"rule": "!('http' in self.ports) || self.ports['http'] > 0",
                 "message": "must be positive", "fieldPath": ".ports.http"},
                {"rule": "self.ports.size() < 2", "fieldPath": "['ports']"},
                {"rule": "self.ports.size() < 3", "fieldPath": ".nowhere"}]}}});
        let (parsed, rules) = compiled(&schema);
        let object = json!({"spec": {"ports": {"http": 0, "https": 1, "x": 2}}});
        assert_eq!(
            rendered(&rules.check(&parsed, &object, None, &[])),
            [
                r#"spec.ports[http]: Invalid value: "object": must be positive"#,
                r#"spec.ports: Invalid value: "object": failed rule: self.ports.size() < 2"#,
                r#"spec: Invalid value: "object": failed rule: self.ports.size() < 3"#,
            ]
        );
    }

    fn compiled(raw: &Value) -> (Schema, Rules) {
        let parsed = Schema::parse(raw).unwrap();
        let rules = Rules::compile(raw, &parsed).expect("rules");
        (parsed, rules)
    }

    #[test]
    fn only_nodes_that_declare_rules_are_visited() {
        let (parsed, rules) = compiled(&schema());
        let widget =
            json!({"metadata": {"name": "w"}, "spec": {"min": 1, "max": 2, "locked": true}});
        let mut visited = Vec::new();
        let _ = visit::<()>(&rules.root, &parsed, &widget, None, "", true, &mut |at| {
            visited.push(at.path.to_string());
            ControlFlow::Continue(())
        });
        assert_eq!(visited, ["spec", "spec.max"]);
    }

    #[test]
    fn optional_old_self_is_an_optional() {
        let raw = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"size": {"type": "integer"}},
            "x-kubernetes-validations": [{"rule": "!oldSelf.hasValue() || self.size >= oldSelf.value().size",
                "optionalOldSelf": true, "message": "no shrinking"}]}}});
        let (parsed, rules) = compiled(&raw);
        let small = json!({"spec": {"size": 1}});
        let big = json!({"spec": {"size": 5}});
        assert!(rules.check(&parsed, &small, None, &[]).is_empty());
        assert!(rules.check(&parsed, &big, Some(&small), &[]).is_empty());
        assert_eq!(
            rendered(&rules.check(&parsed, &small, Some(&big), &[])),
            [r#"spec: Invalid value: "object": no shrinking"#]
        );
    }

    #[test]
    fn list_items_are_correlated_only_in_map_lists() {
        let item = json!({"type": "object", "properties": {"name": {"type": "string"}, "size": {"type": "integer"}},
            "x-kubernetes-validations": [{"rule": "self.size >= oldSelf.size", "message": "no shrinking"}]});
        let raw = |list_type: &str| {
            let mut list =
                json!({"type": "array", "items": item, "x-kubernetes-list-type": list_type});
            if list_type == "map" {
                list["x-kubernetes-list-map-keys"] = json!(["name"]);
            }
            json!({"type": "object", "properties": {"parts": list}})
        };
        let old = json!({"parts": [{"name": "a", "size": 1}, {"name": "b", "size": 9}]});
        let new = json!({"parts": [{"name": "b", "size": 5}, {"name": "a", "size": 2}]});
        let (parsed, rules) = compiled(&raw("map"));
        assert_eq!(
            rendered(&rules.check(&parsed, &new, Some(&old), &[])),
            [r#"parts[0]: Invalid value: "object": no shrinking"#]
        );
        let (parsed, rules) = compiled(&raw("atomic"));
        assert!(rules.check(&parsed, &new, Some(&old), &[]).is_empty());
    }

    #[test]
    fn messages_and_errors_are_worded_as_upstream() {
        let raw = json!({"type": "object", "properties": {
            "labels": {"type": "object", "additionalProperties": {"type": "string",
                "x-kubernetes-validations": [{"rule": "self.size() < 3",
                    "messageExpression": "'label ' + self + ' is too long'"}]}},
            "spec": {"type": "object", "properties": {"x": {"type": "integer"}},
                "x-kubernetes-validations": [
                    {"rule": "self.x > 0", "message": "x must be positive"},
                    {"rule": "self.x < 10", "messageExpression": "''"},
                    {"rule": "self.x != 5", "reason": "FieldValueDuplicate"}]}}});
        let (parsed, rules) = compiled(&raw);
        let mut errors = rendered(&rules.check(
            &parsed,
            &json!({"labels": {"app.kubernetes.io/name": "long"}, "spec": {}}),
            None,
            &[],
        ));
        errors.sort();
        assert_eq!(
            errors,
            [
                r#"labels[app.kubernetes.io/name]: Invalid value: "string": label long is too long"#,
                r#"spec: Invalid value: "object": no such key: x evaluating rule: self.x != 5"#,
                r#"spec: Invalid value: "object": no such key: x evaluating rule: self.x < 10"#,
                r#"spec: Invalid value: "object": no such key: x evaluating rule: x must be positive"#,
            ]
        );
        let mut errors = rendered(&rules.check(&parsed, &json!({"spec": {"x": 50}}), None, &[]));
        errors.sort();
        assert_eq!(
            errors,
            [r#"spec: Invalid value: "object": failed rule: self.x < 10"#]
        );
        assert_eq!(
            rendered(&rules.check(&parsed, &json!({"spec": {"x": 5}}), None, &[])),
            [r#"spec: Duplicate value: "object""#]
        );
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
