//! ReplicationController (core/v1): keeps a number of pod replicas running (the ReplicaSet's predecessor).

use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::defaults::pod_spec::pod_template_spec;
use crate::defaults::{child, default_pointer, default_zero, ensure_child, Object};
use crate::error::FieldError;
use crate::kinds::{Kind, ScaleParts};
use crate::printers::values::{age, container_cells, format_labels, get, int, int_opt, name};
use crate::printers::{age_col, col, containers_images_cols, name_col, wide, Cell, TableColumn};
use crate::registry::ResourceDef;
use crate::validate::meta::{self, go_string_map};
use crate::validate::pod;
use crate::validate::quantity::Quantity;
use crate::validate::{field, int_of, map_of, opt};

pub struct ReplicationController;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "",
        "v1",
        "replicationcontrollers",
        "ReplicationController",
        true,
        Arc::new(ReplicationController),
    )
    .short_names(&["rc"])
    .categories(&["all"])
    .subresources(&["scale", "status"])
    .selectable_fields(&["status.replicas"])
    .storage_segment("controllers")]
}

impl Kind for ReplicationController {
    fn pod_template<'a>(&self, object: &'a Value) -> Option<&'a Value> {
        object.pointer("/spec/template")
    }

    fn quota_usage(&self, _object: &Value) -> Vec<(String, Quantity)> {
        vec![("replicationcontrollers".into(), Quantity::count(1))]
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

    /// A replication controller's selector is a plain label map.
    fn scale_of(&self, object: &Value) -> ScaleParts {
        let mut pairs: Vec<String> = object
            .pointer("/spec/selector")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                    .collect()
            })
            .unwrap_or_default();
        pairs.sort();
        ScaleParts {
            spec_replicas: object.pointer("/spec/replicas").and_then(Value::as_i64),
            status_replicas: object.pointer("/status/replicas").and_then(Value::as_i64),
            selector: pairs.join(","),
        }
    }

    fn validate_update(&self, object: &Value, _old: &Value) -> Vec<FieldError> {
        validate(object)
    }

    fn validate_status_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        crate::validate::workloads::replica_set_status(object, old)
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
            col("Desired", "integer", D_RC_SPEC_REPLICAS),
            col("Current", "integer", D_RC_STATUS_REPLICAS),
            col("Ready", "integer", D_RC_STATUS_READY),
            age_col(),
        ];
        c.extend(containers_images_cols());
        c.push(wide("Selector", "string", D_RC_SPEC_SELECTOR));
        c
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        cells(object)
    }
}

/// `SetDefaults_ReplicationController` (selector and labels from the template,
/// replicas 1) and the template's PodSpec defaults.
fn set_defaults(rc: &mut Object) {
    let template_labels = rc
        .get("spec")
        .and_then(|spec| spec.get("template"))
        .and_then(|template| template.get("metadata"))
        .and_then(|meta| meta.get("labels"))
        .and_then(Value::as_object)
        .filter(|labels| !labels.is_empty())
        .cloned();
    let Some(spec) = ensure_child(rc, "spec") else {
        return;
    };
    default_pointer(spec, "replicas", json!(1));
    if let Some(labels) = &template_labels {
        default_zero(spec, "selector", Value::Object(labels.clone()));
    }
    // Template is a pointer in ReplicationControllerSpec: defaulted only when sent.
    if let Some(template) = child(spec, "template") {
        pod_template_spec(template);
    }
    if let Some(labels) = template_labels {
        if let Some(meta) = ensure_child(rc, "metadata") {
            default_zero(meta, "labels", Value::Object(labels));
        }
    }
}

/// ValidateReplicationController's spec rules: the selector matches the
/// template, which restarts its pods always and sets no deadline.
fn validate(object: &Value) -> Vec<FieldError> {
    let spec = field(object, "spec");
    let mut errs = Vec::new();
    errs.extend(meta::nonnegative(
        int_of(spec, "minReadySeconds").unwrap_or(0),
        "spec.minReadySeconds",
    ));
    let selector = map_of(spec, "selector").filter(|s| !s.is_empty());
    if selector.is_none() {
        errs.push(FieldError::required("spec.selector", ""));
    }
    errs.extend(meta::nonnegative(
        int_of(spec, "replicas").unwrap_or(1),
        "spec.replicas",
    ));
    let Some(template) = opt(spec, "template") else {
        errs.push(FieldError::required("spec.template", ""));
        return errs;
    };
    if let Some(selector) = selector {
        let labels = opt(field(template, "metadata"), "labels");
        if !meta::map_selector_matches(selector, labels) {
            errs.push(FieldError::invalid_rendered(
                "spec.template.metadata.labels",
                &go_string_map(labels),
                "`selector` does not match template `labels`",
            ));
        }
    }
    errs.extend(pod::template_spec(template, "spec.template"));
    crate::validate::workloads::restart_always(template, "ReplicationController", &mut errs);
    errs
}

const D_RC_SPEC_REPLICAS: &str = "Replicas is the number of desired replicas. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller";
const D_RC_SPEC_SELECTOR: &str = "Selector is a label query over pods that should match the Replicas count. If Selector is empty, it is defaulted to the labels present on the Pod template. Label keys and values that must match in order to be controlled by this replication controller, if empty defaulted to labels on Pod template. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors";
const D_RC_STATUS_REPLICAS: &str = "Replicas is the most recently observed number of replicas. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller";
const D_RC_STATUS_READY: &str = "The number of ready replicas for this replication controller.";

fn cells(o: &Value) -> Vec<Cell> {
    let (names, images) = container_cells(get(o, "/spec/template/spec"));
    vec![
        name(o).into(),
        int_opt(o, "/spec/replicas").unwrap_or(1).into(),
        int(o, "/status/replicas").into(),
        int(o, "/status/readyReplicas").into(),
        age(o),
        names.into(),
        images.into(),
        format_labels(o, "/spec/selector").into(),
    ]
}
