//! The estimator against upstream's own numbers (apiextensions-apiserver's
//! TestCostEstimation and celcoststability_test).

use serde_json::{json, Value};

use super::*;

fn estimate(rule: &str, schema: Value) -> u64 {
    let program = kube_cel::cel::Program::compile(rule).expect("rule parses");
    let schema = Schema::parse(&schema).expect("schema parses");
    estimated(program.expression(), &schema).max
}

fn charge(rule: &str, value: Value) -> u64 {
    let program = kube_cel::cel::Program::compile(rule).expect("rule parses");
    charged(program.expression(), &value, None)
}

fn list_of(items: Value) -> Value {
    json!({"type": "array", "items": items})
}

#[test]
fn comprehensions_cost_per_item_as_upstream() {
    assert_eq!(
        estimate("self.all(x, true)", list_of(json!({"type": "number"}))),
        4718591
    );
    assert_eq!(
        estimate("self.all(x, true)", list_of(json!({"type": "string"}))),
        3145727
    );
    assert_eq!(
        estimate("self.all(x, true)", list_of(json!({"type": "boolean"}))),
        1887437
    );
    let bounded = json!({"type": "array", "maxItems": 10, "items": {"type": "number"}});
    assert_eq!(estimate("self.all(x, true)", bounded.clone()), 32);
    assert_eq!(estimate("self.all(x, self.all(y, true))", bounded), 352);
}

#[test]
fn strings_cost_by_their_bounded_size() {
    let unbounded = json!({"type": "string"});
    assert_eq!(estimate("self.contains('test')", unbounded.clone()), 314574);
    assert_eq!(estimate("self.startsWith('test')", unbounded), 2);
    let short = json!({"type": "string", "maxLength": 10});
    assert_eq!(estimate("self.contains('test')", short), 5);
    let long = json!({"type": "string", "maxLength": 1000});
    assert_eq!(estimate("self.contains('A')", long), 401);
    let enumerated = json!({"type": "string", "enum": ["Available", "Pending"]});
    assert_eq!(estimate("self.contains('A')", enumerated), 2);
    let fifty = json!({"type": "string", "maxLength": 50});
    assert_eq!(estimate("self.matches(\"x\")", fifty), 22);
    assert_eq!(
        estimate("oldSelf.size() == self.size()", json!({"type": "string"})),
        5
    );
}

#[test]
fn equality_costs_by_the_smaller_operand() {
    let strings = list_of(json!({"type": "string"}));
    assert_eq!(estimate("self[1] == self[1]", strings), 314577);
    assert_eq!(
        estimate("self[1] == 0.0", list_of(json!({"type": "number"}))),
        2
    );
}

#[test]
fn a_number_turned_to_text_has_no_known_size() {
    let object = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
    assert!(estimate("'x: ' + string(self.n)", object) > 100 * RULE_LIMIT);
}

#[test]
fn a_number_in_hand_turned_to_text_is_short() {
    let object = json!({"n": 12345});
    assert!(charge("'x: ' + string(self.n)", object) < 10);
}

#[test]
fn evaluation_is_charged_for_the_data_at_hand() {
    let object = json!({
        "listMap": [{"k": "a1", "v": "b1"}, {"k": "a2", "v": "b2"}, {"k": "a3", "v": "b3"}],
        "val1": [1, 2, 3],
        "text": "twelve runes",
        "a": {"b": 1}
    });
    assert_eq!(
        charge("self.listMap.all(m, m.k.startsWith('a'))", object.clone()),
        21
    );
    assert_eq!(charge("self.text.matches('^[^0-9]*$')", object.clone()), 8);
    assert_eq!(charge("has(self.a.b)", object.clone()), 2);
    assert_eq!(charge("1 in self.val1", object.clone()), 5);
    // Upstream charges 55: its `exists` stops at the first match, which an
    // estimate made before evaluating cannot know.
    assert_eq!(
        charge("self.listMap.map(m, m.v).exists(v, v == 'b1')", object),
        64
    );
}

mod budgets {
    use super::super::super::budget::definition_errors;
    use super::*;
    use crate::error::FieldError;

    fn errors(props: Value, per_rule: bool) -> Vec<String> {
        let schema = Schema::parse(&props).expect("schema parses");
        definition_errors(&props, &schema, "spec.validation.openAPIV3Schema", per_rule)
            .iter()
            .map(FieldError::render)
            .collect()
    }

    #[test]
    fn a_rule_over_its_estimate_is_forbidden_with_upstreams_factor() {
        let pairs = json!({"type": "object", "properties": {"names": {
            "type": "array", "items": {"type": "string"},
            "x-kubernetes-validations": [{"rule": "self.all(x, self.exists_one(y, x == y))"}]
        }}});
        assert_eq!(
            errors(pairs.clone(), true),
            [
                "spec.validation.openAPIV3Schema.properties[names].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)",
                "spec.validation.openAPIV3Schema.properties[names].x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
                "spec.validation.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)",
            ]
        );
        // An update leaving the schema as it was keeps its rules, but not
        // past the schema-wide total.
        assert_eq!(errors(pairs, false).len(), 2);
        let bounded = json!({"type": "object", "properties": {"names": {
            "type": "array", "maxItems": 100, "items": {"type": "string", "maxLength": 63},
            "x-kubernetes-validations": [{"rule": "self.all(x, self.exists_one(y, x == y))"}]
        }}});
        assert!(errors(bounded, true).is_empty());
    }

    #[test]
    fn rules_repeated_by_their_lists_length_add_up_for_the_schema() {
        let rules: Vec<Value> = (0..11)
            .map(|i| json!({"rule": format!("self.contains('{i}')")}))
            .collect();
        let props = json!({"type": "object", "properties": {"notes": {
            "type": "array", "maxItems": 30,
            "items": {"type": "string", "x-kubernetes-validations": rules}
        }}});
        let found = errors(props, true);
        let rule = |i: usize| {
            format!("spec.validation.openAPIV3Schema.properties[notes].items.x-kubernetes-validations[{i}].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema")
        };
        assert_eq!(found.len(), 5, "{found:#?}");
        assert_eq!(found[..4], [rule(0), rule(1), rule(2), rule(3)]);
        assert_eq!(found[4], "spec.validation.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of 1.038094x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)");
    }

    #[test]
    fn bounded_typed_rules_never_need_charging() {
        use super::super::super::budget::never_exceeds;
        let check = |props: Value| never_exceeds(&props, &Schema::parse(&props).unwrap());
        assert!(check(
            json!({"type": "object", "properties": {"spec": {"type": "object",
            "x-kubernetes-validations": [{"rule": "self.min <= self.max"}],
            "properties": {"min": {"type": "integer"}, "max": {"type": "integer"},
                "tags": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 20},
                         "x-kubernetes-validations": [{"rule": "self.all(t, t.startsWith('a'))"}]}}}}})
        ));
        // The CRD benchmark's schema (bench/src/bin/capstan-crd-bench.rs):
        // its writes are not charged, as docs/benchmarks.md says.
        assert!(check(
            json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {
                "s0": {"type": "string", "maxLength": 64}, "s1": {"type": "string", "maxLength": 64},
                "n0": {"type": "integer"}, "n1": {"type": "integer"},
                "n2": {"type": "integer"}, "n3": {"type": "integer"},
                "nested": {"type": "object", "properties": {"b": {"type": "integer"}}}},
            "x-kubernetes-validations": [
                {"rule": "self.n0 <= self.n1"},
                {"rule": "size(self.s0) < 64"},
                {"rule": "!has(self.nested) || self.nested.b >= 0"},
                {"rule": "self.s1.startsWith('v')"},
                {"rule": "self.n2 + self.n3 < 1000000"}]}}})
        ));
        // An unbounded list checked pairwise can exceed a call's limit.
        assert!(!check(json!({"type": "object", "properties": {"names": {
            "type": "array", "items": {"type": "string"},
            "x-kubernetes-validations": [{"rule": "self.all(x, self.exists_one(y, x == y))"}]}}})));
        // A field the schema does not describe has no known size.
        assert!(!check(
            json!({"type": "object", "properties": {"spec": {"type": "object",
            "x-kubernetes-preserve-unknown-fields": true,
            "x-kubernetes-validations": [{"rule": "self.anything.contains('x')"}]}}})
        ));
    }
}
