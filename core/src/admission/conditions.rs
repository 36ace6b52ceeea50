//! A webhook's matchConditions: CEL expressions over the request (kube-cel's
//! admission evaluator binds `object`, `oldObject`, `request` and
//! `namespaceObject`), charged against upstream's budget for them before
//! they run.

use kube_cel::{
    AdmissionRequest, GroupVersionKind, GroupVersionResource, VapEvaluator, VapExpression,
};
use serde_json::Value;

use super::attributes::Attributes;

/// Cost units all of one webhook's conditions may use
/// (`RuntimeCELCostBudgetMatchConditions`).
const BUDGET: u64 = 2_500_000;

/// What the conditions decided.
pub(super) enum Verdict {
    Matches,
    /// One evaluated to false: the webhook is not called.
    Excluded,
    /// None was false, but some could not be evaluated (upstream's error
    /// texts, one per condition).
    Failed(Vec<String>),
}

pub(super) fn evaluate(
    conditions: &[Value],
    attributes: &Attributes<'_>,
    object: Option<&Value>,
    namespace_object: Option<Value>,
) -> Verdict {
    let expressions: Vec<String> = conditions
        .iter()
        .map(|c| {
            c.get("expression")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        })
        .collect();
    let object_value = object.cloned().unwrap_or(Value::Null);
    let mut spent: u64 = 0;
    for expression in &expressions {
        let Ok(program) = kube_cel::cel::Program::compile(expression) else {
            continue;
        };
        spent = spent.saturating_add(capstan_api::custom::cost::charged_with(
            program.expression(),
            &[
                ("object", object),
                ("oldObject", attributes.old),
                ("namespaceObject", namespace_object.as_ref()),
            ],
        ));
        if spent > BUDGET {
            return Verdict::Failed(vec![
                "validation failed due to running out of cost budget, no further validation rules will be run".into(),
            ]);
        }
    }
    let def = attributes.def;
    let request = AdmissionRequest {
        operation: attributes.operation.as_str().to_string(),
        username: attributes.user.name.clone(),
        uid: attributes.user.uid.clone(),
        groups: attributes.user.groups.clone(),
        name: attributes.name.to_string(),
        namespace: attributes.namespace.unwrap_or_default().to_string(),
        dry_run: attributes.dry_run,
        kind: GroupVersionKind {
            group: def.group.clone(),
            version: def.version.clone(),
            kind: def.kind.clone(),
        },
        resource: GroupVersionResource {
            group: def.group.clone(),
            version: def.version.clone(),
            resource: def.resource.clone(),
        },
    };
    let mut builder = VapEvaluator::builder()
        .object(object_value)
        .request(request);
    if let Some(old) = attributes.old {
        builder = builder.old_object(old.clone());
    }
    if let Some(namespace) = namespace_object {
        builder = builder.namespace_object(namespace);
    }
    let evaluator = builder.build();
    let checks: Vec<VapExpression> = expressions
        .iter()
        .map(|expression| VapExpression {
            expression: expression.clone(),
            message: None,
            message_expression: None,
        })
        .collect();
    let mut errors = Vec::new();
    for (expression, result) in expressions.iter().zip(evaluator.evaluate(&checks)) {
        if result.passed {
            continue;
        }
        let message = result.message.unwrap_or_default();
        if message == format!("validation expression '{expression}' evaluated to false") {
            return Verdict::Excluded;
        }
        let cause = message
            .strip_prefix("evaluation error: ")
            .unwrap_or(&message)
            .to_string();
        errors.push(format!(
            "expression '{expression}' resulted in error: {cause}"
        ));
    }
    if errors.is_empty() {
        Verdict::Matches
    } else {
        Verdict::Failed(errors)
    }
}
