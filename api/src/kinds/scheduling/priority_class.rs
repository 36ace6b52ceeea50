//! PriorityClass (scheduling.k8s.io/v1): a priority pods can ask for.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::defaults::{default_pointer, Object};
use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::values::{age, boolean, int, name, str_or};
use crate::printers::{age_col, col, name_col, Cell, TableColumn};
use crate::registry::ResourceDef;
use crate::validate::meta::go_opt_str;
use crate::validate::pod;
use crate::validate::{bool_of, field, int_of, opt, str_of};

pub struct PriorityClass;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "scheduling.k8s.io",
        "v1",
        "priorityclasses",
        "PriorityClass",
        false,
        Arc::new(PriorityClass),
    )
    .short_names(&["pc"])]
}

impl Kind for PriorityClass {
    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        set_defaults(object);
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        validate(object)
    }

    fn validate_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = validate(object);
        errs.extend(validate_update(object, old));
        errs
    }

    fn table_columns(&self) -> Vec<TableColumn> {
        vec![
            name_col(),
            col("Value", "integer", D_PC_VALUE),
            col("Global-Default", "boolean", D_PC_GLOBAL_DEFAULT),
            age_col(),
            col("PreemptionPolicy", "string", D_PC_PREEMPTION),
        ]
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        vec![
            name(object).into(),
            int(object, "/value").into(),
            boolean(object, "/globalDefault").unwrap_or(false).into(),
            age(object),
            str_or(object, "/preemptionPolicy", "PreemptLowerPriority").into(),
        ]
    }
}

/// scheduling/v1 `SetDefaults_PriorityClass`.
fn set_defaults(class: &mut Object) {
    default_pointer(class, "preemptionPolicy", json!("PreemptLowerPriority"));
}

const HIGHEST_USER_DEFINABLE_PRIORITY: i64 = 1_000_000_000;
/// The predefined system classes and their fixed values.
const SYSTEM_CLASSES: &[(&str, i64)] = &[
    ("system-node-critical", 2_000_001_000),
    ("system-cluster-critical", 2_000_000_000),
];

fn validate(object: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = str_of(field(object, "metadata"), "name");
    let value = int_of(object, "value").unwrap_or(0);
    if name.starts_with("system-") {
        let problem = match SYSTEM_CLASSES.iter().find(|(n, _)| *n == name) {
            None => Some(format!("{name} is not a known system priority class")),
            Some((_, expected)) if *expected != value => {
                Some(format!("value of {name} PriorityClass must be {expected}"))
            }
            Some(_) if bool_of(object, "globalDefault") => Some(format!(
                "globalDefault of {name} PriorityClass must be false"
            )),
            Some(_) => None,
        };
        if let Some(problem) = problem {
            errs.push(FieldError::forbidden(
                "metadata.name",
                &format!("priority class names with 'system-' prefix are reserved for system use only. error: {problem}"),
            ));
        }
    } else if value > HIGHEST_USER_DEFINABLE_PRIORITY {
        errs.push(FieldError::forbidden(
            "value",
            &format!(
                "maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}"
            ),
        ));
    }
    if let Some(policy) = opt(object, "preemptionPolicy").and_then(Value::as_str) {
        errs.extend(pod::preemption_policy(policy, "preemptionPolicy"));
    }
    errs
}

/// value and preemptionPolicy are fixed once created.
fn validate_update(object: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if int_of(object, "value").unwrap_or(0) != int_of(old, "value").unwrap_or(0) {
        errs.push(FieldError::forbidden(
            "value",
            "may not be changed in an update.",
        ));
    }
    let policy = |o: &'_ Value| -> String {
        match opt(o, "preemptionPolicy").and_then(Value::as_str) {
            None | Some("") => "PreemptLowerPriority".to_string(),
            Some(p) => p.to_string(),
        }
    };
    let new_policy = policy(object);
    if new_policy != policy(old) {
        errs.push(FieldError::immutable(
            "preemptionPolicy",
            &go_opt_str(Some(&new_policy)),
        ));
    }
    errs
}

const D_PC_VALUE: &str = "value represents the integer value of this priority class. This is the actual priority that pods receive when they have the name of this class in their pod spec.";
const D_PC_GLOBAL_DEFAULT: &str = "globalDefault specifies whether this PriorityClass should be considered as the default priority for pods that do not have any priority class. Only one PriorityClass can be marked as `globalDefault`. However, if more than one PriorityClasses exists with their `globalDefault` field set to true, the smallest value of such global default PriorityClasses will be used as the default priority.";
const D_PC_PREEMPTION: &str = "preemptionPolicy is the Policy for preempting pods with lower priority. One of Never, PreemptLowerPriority. Defaults to PreemptLowerPriority if unset.";
