//! PodTemplate (core/v1): a template for pods.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::defaults::pod_spec::pod_template_spec;
use crate::defaults::{ensure_child, Object};
use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::descriptions::{D_CONTAINERS, D_IMAGES};
use crate::printers::values::{container_cells, format_labels, get, name};
use crate::printers::{col, name_col, Cell, TableColumn};
use crate::registry::ResourceDef;
use crate::validate::field;
use crate::validate::pod::template_spec;

pub struct PodTemplate;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "",
        "v1",
        "podtemplates",
        "PodTemplate",
        true,
        Arc::new(PodTemplate),
    )]
}

impl Kind for PodTemplate {
    fn pod_template<'a>(&self, object: &'a Value) -> Option<&'a Value> {
        object.pointer("/template")
    }

    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        set_defaults(object);
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        validate(object)
    }

    fn validate_update(&self, object: &Value, _old: &Value) -> Vec<FieldError> {
        validate(object)
    }

    fn table_columns(&self) -> Vec<TableColumn> {
        vec![
            name_col(),
            col("Containers", "string", D_CONTAINERS),
            col("Images", "string", D_IMAGES),
            col("Pod Labels", "string", "The labels for the pod template."),
        ]
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        cells(object)
    }
}

/// `SetObjectDefaults_PodTemplate`.
fn set_defaults(template: &mut Object) {
    if let Some(template) = ensure_child(template, "template") {
        pod_template_spec(template);
    }
}

fn validate(object: &Value) -> Vec<FieldError> {
    template_spec(field(object, "template"), "template")
}

fn cells(o: &Value) -> Vec<Cell> {
    let (names, images) = container_cells(get(o, "/template/spec"));
    vec![
        name(o).into(),
        names.into(),
        images.into(),
        format_labels(o, "/template/metadata/labels").into(),
    ]
}
