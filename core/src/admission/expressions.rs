//! CEL in admission (webhook matchConditions, ValidatingAdmissionPolicy):
//! the variables upstream binds — `object`, `oldObject`, `request`,
//! `params`, `namespaceObject` and a policy's composited `variables` —
//! programs compiled once per configuration, and what each evaluation
//! costs, charged with the CRD rules' estimator before it runs.
//!
//! Objects are bound as plain maps, field names unescaped, as upstream's
//! unstructured values are. `authorizer` is not bound: an expression that
//! uses it fails as an undeclared reference.

use std::collections::HashMap;
use std::sync::Arc;

use kube_cel::cel::objects::{Key, Map};
use kube_cel::cel::{self, Context, Program};
use kube_cel::KubeCelExt;
use serde_json::{json, Value};

use super::attributes::Attributes;
use crate::registry::ResourceDef;

/// CEL's and Kubernetes' functions, registered once: each evaluation
/// binds its variables in a scope of its own over them.
static FUNCTIONS: std::sync::LazyLock<Context<'static>> =
    std::sync::LazyLock::new(|| Context::default().with_all());

/// Cost one expression may take (`PerCallLimit`).
pub(super) const PER_CALL_LIMIT: u64 = 1_000_000;

/// One expression, compiled when its configuration was first seen.
pub(super) struct Compiled {
    pub text: String,
    program: Result<Program, String>,
    /// The composited variables it names (`variables.x`).
    uses: Vec<String>,
}

impl Compiled {
    pub fn new(text: &str) -> Self {
        Compiled {
            text: text.to_string(),
            program: Program::compile(text).map_err(|e| e.to_string()),
            uses: variables_named(text),
        }
    }
}

/// `variables.<name>` references in an expression's text.
fn variables_named(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("variables.") {
        let before = rest[..at].chars().next_back();
        let after = &rest[at + "variables.".len()..];
        let name: String = after
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
            && !name.is_empty()
            && !names.contains(&name)
        {
            names.push(name);
        }
        rest = after;
    }
    names
}

/// What the expressions of one evaluation see.
pub(super) struct Inputs {
    pub object: Value,
    pub old_object: Value,
    pub request: Value,
    pub params: Value,
    pub namespace_object: Value,
}

impl Inputs {
    /// The inputs of a request: objects at the matched version (`invoked`),
    /// the namespace as admission shows it.
    pub fn new(
        attributes: &Attributes<'_>,
        invoked: &ResourceDef,
        object: Option<&Value>,
        old: Option<&Value>,
        namespace: Option<&Value>,
    ) -> Self {
        Inputs {
            object: object.cloned().unwrap_or(Value::Null),
            old_object: old.cloned().unwrap_or(Value::Null),
            request: request(attributes, invoked),
            params: Value::Null,
            namespace_object: namespace.map(namespace_object).unwrap_or(Value::Null),
        }
    }
}

/// The `request` variable: upstream's AdmissionRequest without uid and
/// objects, kind and resource at the matched version.
fn request(attributes: &Attributes<'_>, invoked: &ResourceDef) -> Value {
    let def = attributes.def;
    let user_info = attributes.user_info();
    let gvk = |d: &ResourceDef| json!({"group": d.group, "version": d.version, "kind": d.kind});
    let gvr =
        |d: &ResourceDef| json!({"group": d.group, "version": d.version, "resource": d.resource});
    let mut request = json!({
        "kind": gvk(invoked),
        "resource": gvr(invoked),
        "requestKind": gvk(def),
        "requestResource": gvr(def),
        "name": attributes.name,
        "namespace": attributes.namespace.unwrap_or_default(),
        "operation": attributes.operation.as_str(),
        "userInfo": user_info,
        "dryRun": attributes.dry_run,
        "options": attributes.options(),
    });
    if !attributes.subresource.is_empty() {
        request["subResource"] = json!(attributes.subresource);
        request["requestSubResource"] = json!(attributes.subresource);
    }
    request
}

/// The namespace fields upstream exposes as `namespaceObject`.
fn namespace_object(namespace: &Value) -> Value {
    let mut shown = json!({});
    if let Some(metadata) = namespace.get("metadata").and_then(Value::as_object) {
        let mut kept = metadata.clone();
        kept.remove("managedFields");
        kept.remove("ownerReferences");
        shown["metadata"] = Value::Object(kept);
    }
    if let Some(finalizers) = namespace.pointer("/spec/finalizers") {
        shown["spec"] = json!({"finalizers": finalizers});
    }
    let mut status = json!({});
    for key in ["phase", "conditions"] {
        if let Some(value) = namespace.pointer(&format!("/status/{key}")) {
            status[key] = value.clone();
        }
    }
    shown["status"] = status;
    shown
}

/// One evaluation: the inputs bound once, composited variables evaluated
/// when an expression first names them, and the cost spent so far.
pub(super) struct Activation<'a> {
    inputs: &'a Inputs,
    context: Context<'static>,
    variables: &'a [(String, Compiled)],
    evaluated: HashMap<String, Result<Value, String>>,
    pub spent: u64,
}

impl<'a> Activation<'a> {
    pub fn new(inputs: &'a Inputs, variables: &'a [(String, Compiled)]) -> Self {
        let mut context = FUNCTIONS.new_inner_scope();
        context.add_variable_from_value("object", to_cel(&inputs.object));
        context.add_variable_from_value("oldObject", to_cel(&inputs.old_object));
        context.add_variable_from_value("request", to_cel(&inputs.request));
        context.add_variable_from_value("params", to_cel(&inputs.params));
        context.add_variable_from_value("namespaceObject", to_cel(&inputs.namespace_object));
        context.add_variable_from_value("variables", to_cel(&json!({})));
        Activation {
            inputs,
            context,
            variables,
            evaluated: HashMap::new(),
            spent: 0,
        }
    }

    /// Evaluates one expression: its value, or why it has none, as the
    /// cause upstream puts after "resulted in error: ".
    pub fn evaluate(&mut self, compiled: &Compiled) -> Result<Value, String> {
        self.prepare_variables(&compiled.uses, 0)?;
        let program = compiled
            .program
            .as_ref()
            .map_err(|e| format!("compilation failed: {e}"))?;
        let variables = self.variables_json();
        let cost = capstan_api::custom::cost::charged_with(
            program.expression(),
            &[
                ("object", Some(&self.inputs.object)),
                ("oldObject", Some(&self.inputs.old_object)),
                ("request", Some(&self.inputs.request)),
                ("params", Some(&self.inputs.params)),
                ("namespaceObject", Some(&self.inputs.namespace_object)),
                ("variables", Some(&variables)),
            ],
        );
        self.spent = self.spent.saturating_add(cost);
        if cost > PER_CALL_LIMIT {
            return Err("operation cancelled: actual cost limit exceeded".into());
        }
        program
            .execute(&self.context)
            .map(|value| to_json(&value))
            .map_err(|e| e.to_string())
    }

    /// Evaluates the composited variables `names` use (and those they use)
    /// that have not been yet, binding the results under `variables`.
    fn prepare_variables(&mut self, names: &[String], depth: usize) -> Result<(), String> {
        let variables = self.variables;
        for name in names {
            if !self.evaluated.contains_key(name) {
                let Some((_, compiled)) = variables.iter().find(|(n, _)| n == name) else {
                    continue;
                };
                // A variable names only earlier ones; the bound stops a
                // cycle the text scan could imagine.
                let result = if depth > variables.len() {
                    Err("variable references form a cycle".to_string())
                } else {
                    self.prepare_variables(&compiled.uses, depth + 1)
                        .and_then(|()| self.evaluate_variable(name, compiled))
                };
                self.evaluated.insert(name.clone(), result);
                self.context
                    .add_variable_from_value("variables", to_cel(&self.variables_json()));
            }
            if let Some(Err(e)) = self.evaluated.get(name) {
                return Err(e.clone());
            }
        }
        Ok(())
    }

    fn evaluate_variable(&mut self, name: &str, compiled: &Compiled) -> Result<Value, String> {
        let program = compiled
            .program
            .as_ref()
            .map_err(|e| format!("composited variable {name:?} fails to compile: {e}"))?;
        let variables = self.variables_json();
        self.spent = self
            .spent
            .saturating_add(capstan_api::custom::cost::charged_with(
                program.expression(),
                &[
                    ("object", Some(&self.inputs.object)),
                    ("oldObject", Some(&self.inputs.old_object)),
                    ("params", Some(&self.inputs.params)),
                    ("namespaceObject", Some(&self.inputs.namespace_object)),
                    ("variables", Some(&variables)),
                ],
            ));
        program
            .execute(&self.context)
            .map(|value| to_json(&value))
            .map_err(|e| format!("composited variable {name:?} fails to evaluate: {e}"))
    }

    fn variables_json(&self) -> Value {
        Value::Object(
            self.evaluated
                .iter()
                .filter_map(|(name, result)| Some((name.clone(), result.as_ref().ok()?.clone())))
                .collect(),
        )
    }
}

/// A JSON value as CEL sees an unstructured one.
fn to_cel(value: &Value) -> cel::Value {
    match value {
        Value::Null => cel::Value::Null,
        Value::Bool(b) => cel::Value::Bool(*b),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => cel::Value::Int(i),
            (None, Some(u)) => cel::Value::UInt(u),
            _ => cel::Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => cel::Value::String(Arc::new(s.clone())),
        Value::Array(items) => cel::Value::List(Arc::new(items.iter().map(to_cel).collect())),
        Value::Object(map) => cel::Value::Map(Map {
            map: Arc::new(
                map.iter()
                    .map(|(k, v)| (Key::String(Arc::new(k.clone())), to_cel(v)))
                    .collect(),
            ),
        }),
    }
}

/// A CEL result as JSON (messages, audit values, composited variables).
fn to_json(value: &cel::Value) -> Value {
    match value {
        cel::Value::Null => Value::Null,
        cel::Value::Bool(b) => json!(b),
        cel::Value::Int(i) => json!(i),
        cel::Value::UInt(u) => json!(u),
        cel::Value::Float(f) => json!(f),
        cel::Value::String(s) => json!(s.as_str()),
        cel::Value::Bytes(b) => json!(String::from_utf8_lossy(b)),
        cel::Value::List(items) => Value::Array(items.iter().map(to_json).collect()),
        cel::Value::Map(map) => Value::Object(
            map.map
                .iter()
                .map(|(k, v)| {
                    let key = match k {
                        Key::String(s) => s.to_string(),
                        Key::Int(i) => i.to_string(),
                        Key::Uint(u) => u.to_string(),
                        Key::Bool(b) => b.to_string(),
                    };
                    (key, to_json(v))
                })
                .collect(),
        ),
        cel::Value::Duration(d) => json!(format!("{}s", d.num_seconds())),
        cel::Value::Timestamp(t) => json!(t.to_rfc3339()),
        cel::Value::Function(..) | cel::Value::Opaque(_) => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(object: Value, params: Value) -> Inputs {
        Inputs {
            object,
            old_object: Value::Null,
            request: json!({"operation": "CREATE"}),
            params,
            namespace_object: Value::Null,
        }
    }

    #[test]
    fn labels_with_dots_are_read_by_their_own_key() {
        let inputs = inputs(
            json!({"metadata": {"labels": {"app.kubernetes.io/name": "web"}}}),
            Value::Null,
        );
        let mut activation = Activation::new(&inputs, &[]);
        let check = Compiled::new("object.metadata.labels['app.kubernetes.io/name'] == 'web'");
        assert_eq!(activation.evaluate(&check), Ok(json!(true)));
    }

    #[test]
    fn composited_variables_are_evaluated_when_named() {
        let inputs = inputs(
            json!({"spec": {"replicas": 5}}),
            json!({"data": {"max": "3"}}),
        );
        let variables = vec![
            (
                "replicas".to_string(),
                Compiled::new("object.spec.replicas"),
            ),
            ("limit".to_string(), Compiled::new("int(params.data.max)")),
            (
                "over".to_string(),
                Compiled::new("variables.replicas > variables.limit"),
            ),
            ("broken".to_string(), Compiled::new("object.missing.field")),
        ];
        let mut activation = Activation::new(&inputs, &variables);
        assert_eq!(
            activation.evaluate(&Compiled::new("variables.over")),
            Ok(json!(true))
        );
        assert!(activation.spent > 0);
        let failed = activation.evaluate(&Compiled::new("variables.broken == 1"));
        assert!(
            failed
                .as_ref()
                .is_err_and(|e| e.starts_with("composited variable \"broken\" fails to evaluate: ")),
            "{failed:?}"
        );
    }

    #[test]
    fn variable_references_are_found_in_the_text() {
        assert_eq!(
            variables_named("variables.a + myvariables.b + x.variables.c + variables.a_1"),
            ["a", "a_1"]
        );
    }

    #[test]
    fn an_expression_over_the_per_call_limit_is_cancelled() {
        let big: Vec<i64> = (0..2000).collect();
        let inputs = inputs(json!({"items": big}), Value::Null);
        let mut activation = Activation::new(&inputs, &[]);
        let costly = Compiled::new("object.items.all(a, object.items.all(b, a + b >= 0))");
        assert_eq!(
            activation.evaluate(&costly),
            Err("operation cancelled: actual cost limit exceeded".to_string())
        );
    }
}
