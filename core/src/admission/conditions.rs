//! matchConditions (of a webhook or a policy): CEL expressions that decide
//! whether the request is for it at all, within upstream's budget for them.

use serde_json::Value;

use super::expressions::{Activation, Compiled};

/// Cost units all of one hook's conditions may use
/// (`RuntimeCELCostBudgetMatchConditions`).
const BUDGET: u64 = 2_500_000;

/// What the conditions decided.
pub(super) enum Verdict {
    Matches,
    /// One evaluated to false: the hook does not apply.
    Excluded,
    /// None was false, but some could not be evaluated (upstream's error
    /// texts, one per condition).
    Failed(Vec<String>),
}

impl Verdict {
    /// Upstream's aggregate of several condition errors.
    pub fn joined(errors: &[String]) -> String {
        match errors {
            [one] => one.clone(),
            many => format!("[{}]", many.join(", ")),
        }
    }
}

/// The conditions' `expression`s, compiled.
pub(super) fn compile(conditions: &[Value]) -> Vec<Compiled> {
    conditions
        .iter()
        .map(|c| Compiled::new(c.get("expression").and_then(Value::as_str).unwrap_or("")))
        .collect()
}

pub(super) fn evaluate(conditions: &[Compiled], activation: &mut Activation<'_>) -> Verdict {
    let started_at = activation.spent;
    let mut errors = Vec::new();
    for condition in conditions {
        let result = activation.evaluate(condition);
        if activation.spent.saturating_sub(started_at) > BUDGET {
            return Verdict::Failed(vec![
                "validation failed due to running out of cost budget, no further validation rules will be run".into(),
            ]);
        }
        match result {
            Ok(Value::Bool(true)) => {}
            Ok(Value::Bool(false)) => return Verdict::Excluded,
            Ok(other) => errors.push(format!(
                "expression '{}' resulted in error: no such overload: bool(result) for {}",
                condition.text,
                kind_of(&other)
            )),
            Err(cause) => errors.push(format!(
                "expression '{}' resulted in error: {cause}",
                condition.text
            )),
        }
    }
    if errors.is_empty() {
        Verdict::Matches
    } else {
        Verdict::Failed(errors)
    }
}

/// The CEL type name of a JSON result.
pub(super) fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null_type",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "double",
        Value::Number(_) => "int",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "map",
    }
}
