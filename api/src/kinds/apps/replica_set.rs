//! ReplicaSet (apps/v1): keeps a number of pod replicas running.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::defaults::pod_spec::workload_template;
use crate::defaults::{default_pointer, ensure_child, Object};
use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::values::{
    age, container_cells, format_label_selector, get, int, int_opt, name,
};
use crate::printers::{age_col, col, containers_images_cols, name_col, wide, Cell, TableColumn};
use crate::registry::ResourceDef;
use crate::validate::field;
use crate::validate::workloads::{
    nonnegative, replica_set_status, replica_set_template, selector, selector_update,
};

pub struct ReplicaSet;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "apps",
        "v1",
        "replicasets",
        "ReplicaSet",
        true,
        Arc::new(ReplicaSet),
    )
    .short_names(&["rs"])
    .categories(&["all"])
    .subresources(&["scale", "status"])
    .selectable_fields(&["status.replicas"])]
}

impl Kind for ReplicaSet {
    fn pod_template<'a>(&self, object: &'a Value) -> Option<&'a Value> {
        object.pointer("/spec/template")
    }

    fn tracks_generation(&self) -> bool {
        true
    }

    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        set_defaults(object);
    }

    fn empty_status(&self) -> Value {
        json!({"replicas": 0})
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        validate(object)
    }

    fn validate_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = validate(object);
        errs.extend(selector_update(object, old));
        errs
    }

    fn validate_status_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        replica_set_status(object, old)
    }

    fn absent_field_value(&self, field: &str) -> &'static str {
        match field {
            "status.replicas" => "0",
            _ => "",
        }
    }

    fn table_columns(&self) -> Vec<TableColumn> {
        let mut c = vec![
            name_col(),
            col("Desired", "integer", D_RS_SPEC_REPLICAS),
            col("Current", "integer", D_RS_STATUS_REPLICAS),
            col("Ready", "integer", D_RS_STATUS_READY),
            age_col(),
        ];
        c.extend(containers_images_cols());
        c.push(wide("Selector", "string", D_RS_SPEC_SELECTOR));
        c
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        cells(object)
    }
}

/// `SetDefaults_ReplicaSet`: replicas 1.
fn set_defaults(replica_set: &mut Object) {
    let Some(spec) = ensure_child(replica_set, "spec") else {
        return;
    };
    default_pointer(spec, "replicas", json!(1));
    workload_template(spec);
}

fn validate(object: &Value) -> Vec<FieldError> {
    let spec = field(object, "spec");
    let mut errs = Vec::new();
    nonnegative(spec, "replicas", 1, &mut errs);
    nonnegative(spec, "minReadySeconds", 0, &mut errs);
    // Upstream's ReplicaSet check says "deployment" too.
    let selector = selector(spec, "deployment", &mut errs);
    replica_set_template(
        selector.as_ref(),
        field(spec, "template"),
        "ReplicaSet",
        &mut errs,
    );
    errs
}

const D_RS_SPEC_REPLICAS: &str = "Replicas is the number of desired pods. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicaset";
const D_RS_SPEC_SELECTOR: &str = "Selector is a label query over pods that should match the replica count. Label keys and values that must match in order to be controlled by this replica set. It must match the pod template's labels. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors";
const D_RS_STATUS_REPLICAS: &str = "Replicas is the most recently observed number of non-terminating pods. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicaset";
const D_RS_STATUS_READY: &str =
    "The number of non-terminating pods targeted by this ReplicaSet with a Ready Condition.";

fn cells(rs: &Value) -> Vec<Cell> {
    let (names, images) = container_cells(get(rs, "/spec/template/spec"));
    vec![
        name(rs).into(),
        int_opt(rs, "/spec/replicas").unwrap_or(1).into(),
        int(rs, "/status/replicas").into(),
        int(rs, "/status/readyReplicas").into(),
        age(rs),
        names.into(),
        images.into(),
        format_label_selector(get(rs, "/spec/selector")).into(),
    ]
}
