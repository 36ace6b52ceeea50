//! Upstream's limits on what CEL rules may cost: a definition's rules are
//! estimated when it is written (per rule, and for all rules of a version's
//! schema), and an object's rules are charged before they run (per call, and
//! for the whole object). Both use [`super::cost`]'s estimator.

use std::ops::ControlFlow;

use serde_json::Value;

use super::cost::{self, MAX_REQUEST, PER_CALL_LIMIT, RULE_LIMIT, RUNTIME_BUDGET, SCHEMA_LIMIT};
use super::rules::{visit, RuleNode, Visit};
use super::schema::Schema;
use crate::error::FieldError;

/// upstream's getCostErrorMessage.
fn over_budget(what: &str, cost: u64, limit: u64) -> String {
    let factor = cost as f64 / limit as f64;
    let factor = if factor > 100.0 {
        "more than 100x".to_string()
    } else if factor < 1.5 {
        format!("{factor:.6}x")
    } else {
        format!("{factor:.1}x")
    };
    format!("{what} exceeds budget by factor of {factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)")
}

/// Every expression's estimated cost, for the schema-wide total.
#[derive(Default)]
struct Total {
    sum: u64,
    expensive: Vec<(String, u64)>,
}

impl Total {
    fn observe(&mut self, path: String, cost: u64) {
        self.sum = self.sum.saturating_add(cost);
        if cost >= SCHEMA_LIMIT / 100 {
            self.expensive.push((path, cost));
        }
    }
}

/// The cost errors of a definition version's schema `props` (parsed as
/// `schema`), reported under `path` (`spec.versions[0].schema.openAPIV3Schema`).
/// `per_rule` is false when the schema is unchanged by an update: upstream
/// then lets rules that were accepted before keep their cost.
pub fn definition_errors(
    props: &Value,
    schema: &Schema,
    path: &str,
    per_rule: bool,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut total = Total::default();
    estimate_node(
        props,
        schema,
        path,
        Some(1),
        per_rule,
        &mut total,
        &mut errors,
    );
    if total.sum > SCHEMA_LIMIT {
        total
            .expensive
            .sort_by_key(|(_, cost)| std::cmp::Reverse(*cost));
        for (field, _) in total.expensive.iter().take(4) {
            errors.push(FieldError::forbidden(
                field.clone(),
                "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
            ));
        }
        errors.push(FieldError::forbidden(
            path.to_string(),
            &over_budget(
                "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
                total.sum,
                SCHEMA_LIMIT,
            ),
        ));
    }
    errors
}

/// The `x-kubernetes-validations` of a schema node.
fn rules_of(props: &Value) -> &[Value] {
    props
        .get("x-kubernetes-validations")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// A rule's expression under `key` (`rule`, `messageExpression`), parsed.
fn program(rule: &Value, key: &str) -> Option<kube_cel::cel::Program> {
    rule.get(key)
        .and_then(Value::as_str)
        .and_then(|text| kube_cel::cel::Program::compile(text).ok())
}

/// How many times a node's rules can run in one object: its cardinality,
/// or, when nothing bounds it, as many as fit in a request.
fn occurrences(schema: &Schema, cardinality: Option<u64>) -> u64 {
    cardinality.unwrap_or_else(|| MAX_REQUEST / (cost::min_serialized_size(schema) + 1))
}

/// A node's children (properties, items, a map's values), each with its
/// props, its path and its cardinality: a list's items occur maxItems
/// times as often as the list, a map's values maxProperties times.
fn children<'a>(
    props: &'a Value,
    schema: &'a Schema,
    path: &str,
    cardinality: Option<u64>,
) -> Vec<(&'a Value, &'a Schema, String, Option<u64>)> {
    let times = |n: Option<u64>| cardinality.zip(n).map(|(c, n)| c.saturating_mul(n));
    let mut found: Vec<_> = schema
        .properties
        .iter()
        .filter_map(|(name, child)| {
            let child_props = props.get("properties").and_then(|p| p.get(name))?;
            Some((
                child_props,
                &**child,
                format!("{path}.properties[{name}]"),
                cardinality,
            ))
        })
        .collect();
    if let (Some(items), Some(items_props)) = (schema.items.as_deref(), props.get("items")) {
        let count = times(schema.validation.max_items);
        found.push((items_props, items, format!("{path}.items"), count));
    }
    if let (Some(values), Some(values_props)) = (
        schema.additional_properties.as_deref(),
        props.get("additionalProperties"),
    ) {
        let count = times(schema.validation.max_properties);
        found.push((
            values_props,
            values,
            format!("{path}.additionalProperties"),
            count,
        ));
    }
    found
}

/// One node's rules, then its children's. `cardinality` is how many times
/// the node can occur in one object (None: nothing bounds it).
fn estimate_node(
    props: &Value,
    schema: &Schema,
    path: &str,
    cardinality: Option<u64>,
    per_rule: bool,
    total: &mut Total,
    errors: &mut Vec<FieldError>,
) {
    for (i, rule) in rules_of(props).iter().enumerate() {
        // A rule runs once per occurrence of its node; its message only
        // when it fails, so upstream does not multiply that.
        for (key, what, repeated) in [
            ("rule", "estimated rule cost", true),
            (
                "messageExpression",
                "estimated messageExpression cost",
                false,
            ),
        ] {
            let Some(program) = program(rule, key) else {
                continue;
            };
            let mut cost = cost::estimated(program.expression(), schema).max;
            if repeated {
                cost = cost.saturating_mul(occurrences(schema, cardinality));
            }
            let field = format!("{path}.x-kubernetes-validations[{i}].{key}");
            if per_rule && cost > RULE_LIMIT {
                errors.push(FieldError::forbidden(
                    field.clone(),
                    &over_budget(what, cost, RULE_LIMIT),
                ));
            }
            total.observe(field, cost);
        }
    }
    for (child_props, child, child_path, count) in children(props, schema, path, cardinality) {
        estimate_node(
            child_props,
            child,
            &child_path,
            count,
            per_rule,
            total,
            errors,
        );
    }
}

/// Whether the rules of `props` (parsed as `schema`) can never exceed the
/// run-time limits on any object the schema admits: then writes need not
/// be charged at all. False whenever a bound is not known.
pub fn never_exceeds(props: &Value, schema: &Schema) -> bool {
    let mut total: u64 = 0;
    within_limits(props, schema, Some(1), &mut total) && total <= RUNTIME_BUDGET
}

fn within_limits(
    props: &Value,
    schema: &Schema,
    cardinality: Option<u64>,
    total: &mut u64,
) -> bool {
    for rule in rules_of(props) {
        let Some(per_call) =
            program(rule, "rule").and_then(|p| cost::ceiling(p.expression(), schema))
        else {
            return false;
        };
        if per_call > PER_CALL_LIMIT {
            return false;
        }
        *total = total.saturating_add(per_call.saturating_mul(occurrences(schema, cardinality)));
    }
    children(props, schema, "", cardinality)
        .into_iter()
        .all(|(child_props, child, _, count)| within_limits(child_props, child, count, total))
}

/// Charges the rules `root` would run on `value` (`old` on update, both
/// typed by `schema`) against upstream's per-call limit and per-object
/// budget; the error upstream reports when one is exceeded (no rule then
/// runs).
pub fn charge(
    root: &RuleNode,
    schema: &Schema,
    value: &Value,
    old: Option<&Value>,
) -> Option<FieldError> {
    let mut remaining = RUNTIME_BUDGET;
    let outcome = visit(root, schema, value, old, "", true, &mut |at| {
        charge_node(at, &mut remaining).map_or(ControlFlow::Continue(()), ControlFlow::Break)
    });
    match outcome {
        ControlFlow::Break(error) => Some(error),
        ControlFlow::Continue(()) => None,
    }
}

/// Charges one node's rules; the error if they are over what is left.
fn charge_node(at: &Visit<'_>, remaining: &mut u64) -> Option<FieldError> {
    let out_of_budget = || {
        FieldError::invalid(
            at.shown_path(),
            &at.schema.type_,
            "validation failed due to running out of cost budget, no further validation rules will be run",
        )
    };
    let mut runs = at.running_rules();
    let first = runs.next()?;
    if *remaining == 0 {
        return Some(out_of_budget());
    }
    for rule in std::iter::once(first).chain(runs) {
        let cost = cost::charged(rule.program.expression(), at.value, at.old);
        // A call stopped at the limit has still spent the limit.
        if cost.min(PER_CALL_LIMIT + 1) > *remaining {
            return Some(out_of_budget());
        }
        if cost > PER_CALL_LIMIT {
            let named = super::rules::rule_named(rule);
            return Some(FieldError::invalid(
                at.shown_path(),
                &at.schema.type_,
                &format!("'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: {named}"),
            ));
        }
        *remaining -= cost;
    }
    None
}
