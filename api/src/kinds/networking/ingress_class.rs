//! IngressClass (networking.k8s.io/v1): which controller implements an Ingress.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::defaults::{child, default_pointer, Object};
use crate::kinds::Kind;
use crate::printers::values::{age, get, name, text};
use crate::printers::{age_col, col, name_col, Cell, TableColumn};
use crate::registry::ResourceDef;

pub struct IngressClass;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "networking.k8s.io",
        "v1",
        "ingressclasses",
        "IngressClass",
        false,
        Arc::new(IngressClass),
    )]
}

impl Kind for IngressClass {
    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        set_defaults(object);
    }

    fn table_columns(&self) -> Vec<TableColumn> {
        vec![
            name_col(),
            col(
                "Controller",
                "string",
                "Controller that is responsible for handling this class",
            ),
            col(
                "Parameters",
                "string",
                "A reference to a resource with additional parameters",
            ),
            age_col(),
        ]
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        cells(object)
    }
}

/// networking/v1 `SetDefaults_IngressClass`: parameters scope Cluster.
fn set_defaults(class: &mut Object) {
    if let Some(parameters) = child(class, "spec").and_then(|spec| child(spec, "parameters")) {
        default_pointer(parameters, "scope", json!("Cluster"));
    }
}

fn cells(ic: &Value) -> Vec<Cell> {
    let parameters = match get(ic, "/spec/parameters") {
        Some(p) => {
            let mut s = text(p, "/kind").to_string();
            if let Some(g) = get(p, "/apiGroup").and_then(Value::as_str) {
                s = format!("{s}.{g}");
            }
            format!("{s}/{}", text(p, "/name"))
        }
        None => "<none>".to_string(),
    };
    vec![
        name(ic).into(),
        text(ic, "/spec/controller").into(),
        parameters.into(),
        age(ic),
    ]
}
