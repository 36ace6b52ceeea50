//! DaemonSet (apps/v1): one pod on each node.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::defaults::pod_spec::workload_template;
use crate::defaults::{default_pointer, default_zero, ensure_child, str_field, Object};
use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::values::{
    age, container_cells, format_label_selector, format_labels, get, int, name,
};
use crate::printers::{age_col, col, containers_images_cols, name_col, wide, Cell, TableColumn};
use crate::registry::ResourceDef;
use crate::validate::meta::{self, go_label_selector};
use crate::validate::pod;
use crate::validate::workloads::{
    collision_count_decrement, collision_count_nonnegative, nonnegative, restart_always,
    selector_update,
};
use crate::validate::{child, field, map_of, nonnegative_counts, opt, str_of};

pub struct DaemonSet;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "apps",
        "v1",
        "daemonsets",
        "DaemonSet",
        true,
        Arc::new(DaemonSet),
    )
    .short_names(&["ds"])
    .categories(&["all"])
    .subresources(&["status"])]
}

impl Kind for DaemonSet {
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
        json!({
            "currentNumberScheduled": 0,
            "numberMisscheduled": 0,
            "desiredNumberScheduled": 0,
            "numberReady": 0,
        })
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
        validate_status(object, old)
    }

    fn table_columns(&self) -> Vec<TableColumn> {
        let mut c = vec![
            name_col(),
            col("Desired", "integer", D_DS_DESIRED),
            col("Current", "integer", D_DS_CURRENT),
            col("Ready", "integer", D_DS_READY),
            col("Up-to-date", "integer", D_DS_UPDATED),
            col("Available", "integer", D_DS_AVAILABLE),
            col("Node Selector", "string", D_POD_NODE_SELECTOR),
            age_col(),
        ];
        c.extend(containers_images_cols());
        c.push(wide("Selector", "string", D_DS_SELECTOR));
        c
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        cells(object)
    }
}

/// `SetDefaults_DaemonSet`: RollingUpdate maxUnavailable 1 maxSurge 0, history 10.
fn set_defaults(daemon_set: &mut Object) {
    let Some(spec) = ensure_child(daemon_set, "spec") else {
        return;
    };
    if let Some(strategy) = ensure_child(spec, "updateStrategy") {
        default_zero(strategy, "type", json!("RollingUpdate"));
        if str_field(strategy, "type") == "RollingUpdate" {
            if let Some(rolling_update) = ensure_child(strategy, "rollingUpdate") {
                default_pointer(rolling_update, "maxUnavailable", json!(1));
                default_pointer(rolling_update, "maxSurge", json!(0));
            }
        }
    }
    default_pointer(spec, "revisionHistoryLimit", json!(10));
    workload_template(spec);
}

fn validate(object: &Value) -> Vec<FieldError> {
    let spec = field(object, "spec");
    let mut errs = Vec::new();
    let selector = opt(spec, "selector");
    errs.extend(meta::label_selector(selector, "spec.selector"));
    let template = field(spec, "template");
    // A nil selector converts to "match nothing", so it never matches.
    let matches = selector
        .is_some_and(|s| meta::selector_matches(s, map_of(field(template, "metadata"), "labels")));
    if !matches {
        errs.push(FieldError::invalid_rendered(
            "spec.template.metadata.labels",
            &pod::template_labels_rendered(template),
            "`selector` does not match template `labels`",
        ));
    }
    if let Some(selector) = selector.filter(|s| meta::selector_is_empty(s)) {
        errs.push(FieldError::invalid_rendered(
            "spec.selector",
            &go_label_selector(Some(selector)),
            "empty selector is invalid for daemonset",
        ));
    }
    errs.extend(pod::template_spec(template, "spec.template"));
    restart_always(template, "DaemonSet", &mut errs);
    nonnegative(spec, "minReadySeconds", 0, &mut errs);
    nonnegative(spec, "templateGeneration", -1, &mut errs);
    let strategy = field(spec, "updateStrategy");
    match str_of(strategy, "type") {
        "" | "RollingUpdate" => {
            if let Some(rolling) = opt(strategy, "rollingUpdate") {
                errs.extend(rolling_update(rolling));
            }
        }
        "OnDelete" => {}
        other => errs.push(FieldError::not_supported_rendered(
            "spec.updateStrategy",
            &format!(
                "apps.DaemonSetUpdateStrategy{{Type:{}, RollingUpdate:(*apps.RollingUpdateDaemonSet)(nil)}}",
                meta::go_quote(other)
            ),
            &["RollingUpdate", "OnDelete"],
        )),
    }
    nonnegative(spec, "revisionHistoryLimit", -1, &mut errs);
    errs
}

/// ValidateRollingUpdateDaemonSet: exactly one of maxUnavailable and
/// maxSurge is non-zero (defaults 1 and 0).
fn rolling_update(rolling: &Value) -> Vec<FieldError> {
    let path = "spec.updateStrategy.rollingUpdate";
    let mut errs = Vec::new();
    let unavailable = opt(rolling, "maxUnavailable")
        .cloned()
        .unwrap_or(Value::from(1));
    let surge = opt(rolling, "maxSurge").cloned().unwrap_or(Value::from(0));
    let unavailable_path = child(path, "maxUnavailable");
    let surge_path = child(path, "maxSurge");
    errs.extend(meta::positive_int_or_percent(
        &unavailable,
        &unavailable_path,
    ));
    errs.extend(meta::positive_int_or_percent(&surge, &surge_path));
    errs.extend(meta::not_more_than_100_percent(
        &unavailable,
        &unavailable_path,
    ));
    errs.extend(meta::not_more_than_100_percent(&surge, &surge_path));
    let non_zero = |v: &Value| match v {
        Value::String(s) => meta::percent_value(s) != Some(0),
        other => other.as_i64() != Some(0),
    };
    match (non_zero(&unavailable), non_zero(&surge)) {
        (true, true) => errs.push(FieldError::invalid_rendered(
            &surge_path,
            &meta::go_int_or_string(&surge),
            "may not be set when maxUnavailable is non-zero",
        )),
        (false, false) => errs.push(FieldError::required(
            &unavailable_path,
            "cannot be 0 when maxSurge is 0",
        )),
        _ => {}
    }
    errs
}

/// ValidateDaemonSetStatusUpdate's status checks.
fn validate_status(object: &Value, old: &Value) -> Vec<FieldError> {
    let status = field(object, "status");
    let mut errs = Vec::new();
    nonnegative_counts(
        status,
        "status",
        &[
            "currentNumberScheduled",
            "numberMisscheduled",
            "desiredNumberScheduled",
            "numberReady",
            "observedGeneration",
            "updatedNumberScheduled",
            "numberAvailable",
            "numberUnavailable",
        ],
        &mut errs,
    );
    collision_count_nonnegative(status, &mut errs);
    collision_count_decrement(status, field(old, "status"), &mut errs);
    errs
}

const D_POD_NODE_SELECTOR: &str = "NodeSelector is a selector which must be true for the pod to fit on a node. Selector which must match a node's labels for the pod to be scheduled on that node. More info: https://kubernetes.io/docs/concepts/configuration/assign-pod-node/";
const D_DS_DESIRED: &str = "The total number of nodes that should be running the daemon pod (including nodes correctly running the daemon pod). More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/";
const D_DS_CURRENT: &str = "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod. More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/";
const D_DS_READY: &str = "numberReady is the number of nodes that should be running the daemon pod and have one or more of the daemon pod running with a Ready Condition.";
const D_DS_UPDATED: &str = "The total number of nodes that are running updated daemon pod";
const D_DS_AVAILABLE: &str = "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)";
const D_DS_SELECTOR: &str = "A label query over pods that are managed by the daemon set. Must match in order to be controlled. It must match the pod template's labels. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors";

fn cells(ds: &Value) -> Vec<Cell> {
    let (names, images) = container_cells(get(ds, "/spec/template/spec"));
    vec![
        name(ds).into(),
        int(ds, "/status/desiredNumberScheduled").into(),
        int(ds, "/status/currentNumberScheduled").into(),
        int(ds, "/status/numberReady").into(),
        int(ds, "/status/updatedNumberScheduled").into(),
        int(ds, "/status/numberAvailable").into(),
        format_labels(ds, "/spec/template/spec/nodeSelector").into(),
        age(ds),
        names.into(),
        images.into(),
        format_label_selector(get(ds, "/spec/selector")).into(),
    ]
}
