//! ValidatingAdmissionPolicy status, as upstream's
//! validatingadmissionpolicy-status controller (kube-controller-manager)
//! keeps it: once per generation, `status.observedGeneration` and
//! `status.typeChecking`, the warnings type-checking each validation's
//! expression and messageExpression against the kinds the policy matches.
//!
//! The checking here is of fields: a path read from `object` or
//! `oldObject` that a matched kind's schema does not have is reported in
//! cel-go's words (`undefined field 'x'`). Type mismatches in operators
//! and functions are not found (cel-rust has no type checker).

use std::sync::Arc;

use futures::StreamExt;
use kube_cel::cel::common::ast::{EntryExpr, Expr, IdedExpr};
use serde_json::{json, Value};

use crate::auth::UserInfo;
use crate::object;
use crate::registry::ResourceDef;
use crate::verbs::ApiCore;
use crate::watch::EventType;

const CONTROLLER: &str = "validatingadmissionpolicy-status";
const GROUP: &str = "admissionregistration.k8s.io";
/// Upstream checks at most this many kinds per policy.
const MAX_KINDS: usize = 10;

pub async fn run(core: Arc<ApiCore>) {
    let system = UserInfo::system();
    let Ok(policies) = core.resolve(GROUP, "v1", "validatingadmissionpolicies") else {
        return;
    };
    loop {
        let rv = super::resynced(CONTROLLER, || sync_all(&core, &policies)).await;
        let events = match core
            .watch(&system, &policies, None, None, &super::watch_from(rv))
            .await
        {
            Ok(events) => events,
            Err(e) => {
                super::watch_failed(CONTROLLER, &e).await;
                continue;
            }
        };
        let mut events = events;
        while let Some(event) = events.next().await {
            match event.event_type {
                EventType::Added | EventType::Modified => {
                    if let Err(e) = sync(&core, &policies, &event.object).await {
                        tracing::warn!(policy = object::name(&event.object), error = %e, "type-checking a policy failed");
                    }
                }
                EventType::Error => break,
                _ => {}
            }
        }
    }
}

async fn sync_all(core: &ApiCore, policies: &ResourceDef) -> crate::ApiResult<String> {
    let list = core
        .list(&UserInfo::system(), policies, None, &Default::default())
        .await?;
    for policy in &list.items {
        sync(core, policies, policy).await?;
    }
    Ok(list.resource_version)
}

/// Writes the policy's status for its generation, once.
async fn sync(core: &ApiCore, policies: &ResourceDef, policy: &Value) -> crate::ApiResult<()> {
    let generation = policy
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let observed = policy
        .pointer("/status/observedGeneration")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if observed >= generation {
        return Ok(());
    }
    let warnings = type_check(core, policy);
    let mut updated = policy.clone();
    let mut status = policy
        .get("status")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    status.insert("observedGeneration".into(), json!(generation));
    status.insert(
        "typeChecking".into(),
        if warnings.is_empty() {
            json!({})
        } else {
            json!({ "expressionWarnings": warnings })
        },
    );
    updated["status"] = Value::Object(status);
    super::write_status(core, policies, updated, CONTROLLER).await
}

/// The kinds the policy's rules name exactly (no wildcards, no
/// subresources), sorted by group, version and kind, at most ten.
fn matched_kinds(core: &ApiCore, policy: &Value) -> Vec<Arc<ResourceDef>> {
    let rules = policy
        .pointer("/spec/matchConstraints/resourceRules")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut kinds: Vec<Arc<ResourceDef>> = Vec::new();
    for rule in &rules {
        let strings = |key: &str| object::strings_at(rule, key);
        for group in strings("apiGroups").iter().filter(|g| *g != "*") {
            for version in strings("apiVersions").iter().filter(|v| *v != "*") {
                for resource in strings("resources")
                    .iter()
                    .filter(|r| !r.contains('*') && !r.contains('/'))
                {
                    if let Some(def) = core.registry.lookup(group, version, resource) {
                        if !kinds.iter().any(|k| {
                            k.kind == def.kind && k.group == def.group && k.version == def.version
                        }) {
                            kinds.push(def);
                        }
                    }
                }
            }
        }
    }
    kinds.sort_by(|a, b| (&a.group, &a.version, &a.kind).cmp(&(&b.group, &b.version, &b.kind)));
    kinds.truncate(MAX_KINDS);
    kinds
}

/// The expression warnings of a policy's validations.
fn type_check(core: &ApiCore, policy: &Value) -> Vec<Value> {
    let kinds = matched_kinds(core, policy);
    if kinds.is_empty() {
        return Vec::new();
    }
    let validations = policy
        .pointer("/spec/validations")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut warnings = Vec::new();
    for (i, validation) in validations.iter().enumerate() {
        for key in ["expression", "messageExpression"] {
            let Some(text) = validation
                .get(key)
                .and_then(Value::as_str)
                .filter(|t| !t.trim().is_empty())
            else {
                continue;
            };
            let entries: Vec<String> = kinds
                .iter()
                .filter_map(|def| {
                    let problems = undefined_fields(text, def);
                    (!problems.is_empty()).then(|| {
                        let gvk = format!("{}/{}, Kind={}", def.group, def.version, def.kind);
                        format!("{gvk}: {}\n", problems.join("\n"))
                    })
                })
                .collect();
            if !entries.is_empty() {
                warnings.push(json!({
                    "fieldRef": format!("spec.validations[{i}].{key}"),
                    "warning": entries.join("\n"),
                }));
            }
        }
    }
    warnings
}

/// cel-go's error for each field `text` reads from `object` or
/// `oldObject` that the kind's schema lacks.
fn undefined_fields(text: &str, def: &ResourceDef) -> Vec<String> {
    let Ok(program) = kube_cel::cel::Program::compile(text) else {
        return Vec::new();
    };
    let mut paths = Vec::new();
    collect_paths(program.expression(), &mut paths);
    let mut problems = Vec::new();
    for path in paths {
        // A synthetic object with just this path: the schema walk that
        // finds unknown fields on writes says whether the kind has it.
        let mut synthetic = Value::Null;
        for field in path.iter().rev() {
            synthetic = json!({ field.as_str(): synthetic });
        }
        let unknown = capstan_api::openapi::unknown_fields(&def.definition, &synthetic);
        let Some(first) = unknown.first() else {
            continue;
        };
        let field = first
            .rsplit('.')
            .next()
            .unwrap_or(first)
            .trim_matches(|c| c == '"' || c == '[' || c == ']');
        let problem = display_error(text, field);
        if !problems.contains(&problem) {
            problems.push(problem);
        }
    }
    problems
}

/// The field paths selected from `object` or `oldObject`.
fn collect_paths(expr: &IdedExpr, out: &mut Vec<Vec<String>>) {
    match &expr.expr {
        Expr::Select(select) => {
            if let Some(path) = rooted_path(expr) {
                if !out.contains(&path) {
                    out.push(path);
                }
            } else {
                collect_paths(&select.operand, out);
            }
        }
        Expr::Call(call) => {
            if let Some(target) = &call.target {
                collect_paths(target, out);
            }
            for arg in &call.args {
                collect_paths(arg, out);
            }
        }
        Expr::Comprehension(comprehension) => {
            for part in [
                &comprehension.iter_range,
                &comprehension.accu_init,
                &comprehension.loop_cond,
                &comprehension.loop_step,
                &comprehension.result,
            ] {
                collect_paths(part, out);
            }
        }
        Expr::List(list) => list.elements.iter().for_each(|e| collect_paths(e, out)),
        Expr::Map(map) => map.entries.iter().for_each(|entry| match &entry.expr {
            EntryExpr::MapEntry(e) => {
                collect_paths(&e.key, out);
                collect_paths(&e.value, out);
            }
            EntryExpr::StructField(f) => collect_paths(&f.value, out),
        }),
        Expr::Struct(s) => s.entries.iter().for_each(|entry| {
            if let EntryExpr::StructField(f) = &entry.expr {
                collect_paths(&f.value, out);
            }
        }),
        _ => {}
    }
}

/// `object.a.b` as ["a", "b"], when the chain starts at the object.
fn rooted_path(expr: &IdedExpr) -> Option<Vec<String>> {
    match &expr.expr {
        Expr::Select(select) => {
            let mut path = rooted_path(&select.operand)?;
            path.push(select.field.clone());
            Some(path)
        }
        Expr::Ident(name) if name == "object" || name == "oldObject" => Some(Vec::new()),
        _ => None,
    }
}

/// cel-go's display of an undefined field: the position of the `.`
/// selecting it, the line, and a caret under it.
fn display_error(text: &str, field: &str) -> String {
    let offset = find_select(text, field).unwrap_or(0);
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = text[line_start..offset].chars().count();
    let snippet = text[line_start..]
        .lines()
        .next()
        .unwrap_or("")
        .replace('\t', " ");
    format!(
        "ERROR: <input>:{line}:{}: undefined field '{field}'\n | {snippet}\n | {}^",
        column + 1,
        ".".repeat(column)
    )
}

/// The byte offset of the `.` in `.field` (not followed by more of an
/// identifier).
fn find_select(text: &str, field: &str) -> Option<usize> {
    let pattern = format!(".{field}");
    text.match_indices(&pattern).map(|(i, _)| i).find(|i| {
        !text[i + pattern.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_from_the_object_are_collected_through_calls_and_macros() {
        let program = kube_cel::cel::Program::compile(
            "object.spec.replicas > 1 && object.spec.template.spec.containers.all(c, c.image != '') && has(oldObject.metadata.labels)",
        )
        .expect("compiles");
        let mut paths = Vec::new();
        collect_paths(program.expression(), &mut paths);
        assert!(
            paths.contains(&vec!["spec".to_string(), "replicas".to_string()]),
            "{paths:?}"
        );
        assert!(
            paths.contains(&vec!["metadata".to_string(), "labels".to_string()]),
            "{paths:?}"
        );
        assert!(
            !paths.iter().any(|p| p.contains(&"image".to_string())),
            "{paths:?}"
        );
    }

    #[test]
    fn the_error_points_at_the_select_as_cel_go_does() {
        assert_eq!(
            display_error("object.replicaz > 1", "replicaz"),
            "ERROR: <input>:1:7: undefined field 'replicaz'\n | object.replicaz > 1\n | ......^"
        );
    }

    #[test]
    fn a_deployment_has_no_replicaz() {
        let def = capstan_api::registry::Registry::builtin()
            .lookup("apps", "v1", "deployments")
            .expect("deployments");
        assert_eq!(
            undefined_fields("object.spec.replicas > 1", &def),
            Vec::<String>::new()
        );
        assert_eq!(
            undefined_fields("object.spec.replicaz > 1", &def),
            ["ERROR: <input>:1:12: undefined field 'replicaz'\n | object.spec.replicaz > 1\n | ...........^"]
        );
        assert_eq!(
            undefined_fields("object.metadata.labels.app == 'x'", &def),
            Vec::<String>::new()
        );
    }
}
