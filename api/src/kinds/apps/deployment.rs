//! Deployment (apps/v1): declarative updates of ReplicaSets.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::defaults::pod_spec::workload_template;
use crate::defaults::{default_pointer, default_zero, ensure_child, str_field, Object};
use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::values::{
    age, container_cells, get, int, int_opt, label_selector_string, name,
};
use crate::printers::{age_col, col, containers_images_cols, name_col, wide, Cell, TableColumn};
use crate::registry::ResourceDef;
use crate::validate::meta;
use crate::validate::workloads::{
    collision_count_decrement, collision_count_nonnegative, nonnegative, replica_bounds,
    replica_set_template, selector, selector_update,
};
use crate::validate::{child, field, int_of, nonnegative_counts, opt, str_of};

pub struct Deployment;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "apps",
        "v1",
        "deployments",
        "Deployment",
        true,
        Arc::new(Deployment),
    )
    .short_names(&["deploy"])
    .categories(&["all"])
    .subresources(&["scale", "status"])]
}

impl Kind for Deployment {
    fn pod_template<'a>(&self, object: &'a Value) -> Option<&'a Value> {
        object.pointer("/spec/template")
    }

    fn tracks_generation(&self) -> bool {
        true
    }

    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        set_defaults(object);
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
            col("Ready", "string", "Number of the pod with ready state"),
            col("Up-to-date", "string", D_DEPLOY_UPDATED),
            col("Available", "string", D_DEPLOY_AVAILABLE),
            age_col(),
        ];
        c.extend(containers_images_cols());
        c.push(wide("Selector", "string", D_DEPLOY_SELECTOR));
        c
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        cells(object)
    }
}

/// `SetDefaults_Deployment`: replicas 1, RollingUpdate 25%/25%, history 10,
/// progress deadline 600 s.
fn set_defaults(deployment: &mut Object) {
    let Some(spec) = ensure_child(deployment, "spec") else {
        return;
    };
    default_pointer(spec, "replicas", json!(1));
    if let Some(strategy) = ensure_child(spec, "strategy") {
        default_zero(strategy, "type", json!("RollingUpdate"));
        if str_field(strategy, "type") == "RollingUpdate" {
            if let Some(rolling_update) = ensure_child(strategy, "rollingUpdate") {
                default_pointer(rolling_update, "maxUnavailable", json!("25%"));
                default_pointer(rolling_update, "maxSurge", json!("25%"));
            }
        }
    }
    default_pointer(spec, "revisionHistoryLimit", json!(10));
    default_pointer(spec, "progressDeadlineSeconds", json!(600));
    workload_template(spec);
}

fn validate(object: &Value) -> Vec<FieldError> {
    let spec = field(object, "spec");
    let mut errs = Vec::new();
    nonnegative(spec, "replicas", 1, &mut errs);
    let selector = selector(spec, "deployment", &mut errs);
    replica_set_template(
        selector.as_ref(),
        field(spec, "template"),
        "ReplicaSet",
        &mut errs,
    );
    errs.extend(deployment_strategy(field(spec, "strategy")));
    nonnegative(spec, "minReadySeconds", 0, &mut errs);
    nonnegative(spec, "revisionHistoryLimit", -1, &mut errs);
    if let Some(deadline) = int_of(spec, "progressDeadlineSeconds") {
        errs.extend(meta::nonnegative(deadline, "spec.progressDeadlineSeconds"));
        if deadline <= int_of(spec, "minReadySeconds").unwrap_or(0) {
            errs.push(FieldError::invalid_rendered(
                "spec.progressDeadlineSeconds",
                &deadline.to_string(),
                "must be greater than minReadySeconds",
            ));
        }
    }
    errs
}

fn deployment_strategy(strategy: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let rolling = opt(strategy, "rollingUpdate");
    match str_of(strategy, "type") {
        "Recreate" => {
            if rolling.is_some() {
                errs.push(FieldError::forbidden(
                    "spec.strategy.rollingUpdate",
                    "may not be specified when strategy `type` is 'Recreate'",
                ));
            }
        }
        // An absent type is upstream's default, RollingUpdate.
        "" | "RollingUpdate" => {
            if let Some(rolling) = rolling {
                errs.extend(rolling_update(rolling, "spec.strategy.rollingUpdate"));
            }
        }
        other => {
            let rendered = format!(
                "apps.DeploymentStrategy{{Type:{}, RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}}",
                meta::go_quote(other)
            );
            errs.push(FieldError::not_supported_rendered(
                "spec.strategy",
                &rendered,
                &["Recreate", "RollingUpdate"],
            ));
        }
    }
    errs
}

/// ValidateRollingUpdateDeployment.
fn rolling_update(rolling: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let default = Value::String("25%".into());
    let unavailable = opt(rolling, "maxUnavailable").unwrap_or(&default);
    let surge = opt(rolling, "maxSurge").unwrap_or(&default);
    let unavailable_path = child(path, "maxUnavailable");
    errs.extend(meta::positive_int_or_percent(
        unavailable,
        &unavailable_path,
    ));
    errs.extend(meta::positive_int_or_percent(
        surge,
        &child(path, "maxSurge"),
    ));
    let is_zero = |v: &Value| match v {
        Value::String(s) => meta::percent_value(s) == Some(0),
        other => other.as_i64() == Some(0),
    };
    if is_zero(unavailable) && is_zero(surge) {
        errs.push(FieldError::invalid_rendered(
            &unavailable_path,
            &meta::go_int_or_string(unavailable),
            "may not be 0 when `maxSurge` is 0",
        ));
    }
    errs.extend(meta::not_more_than_100_percent(
        unavailable,
        &unavailable_path,
    ));
    errs
}

/// ValidateDeploymentStatusUpdate's status checks (metadata is the
/// pipeline's).
fn validate_status(object: &Value, old: &Value) -> Vec<FieldError> {
    let status = field(object, "status");
    let mut errs = Vec::new();
    nonnegative_counts(
        status,
        "status",
        &[
            "observedGeneration",
            "replicas",
            "updatedReplicas",
            "readyReplicas",
            "availableReplicas",
            "unavailableReplicas",
        ],
        &mut errs,
    );
    collision_count_nonnegative(status, &mut errs);
    replica_bounds(
        status,
        &["updatedReplicas", "readyReplicas", "availableReplicas"],
        "cannot be greater than readyReplicas",
        &mut errs,
    );
    collision_count_decrement(status, field(old, "status"), &mut errs);
    errs
}

const D_DEPLOY_UPDATED: &str = "Total number of non-terminating pods targeted by this deployment that have the desired template spec.";
const D_DEPLOY_AVAILABLE: &str = "Total number of available non-terminating pods (ready for at least minReadySeconds) targeted by this deployment.";
const D_DEPLOY_SELECTOR: &str = "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment. It must match the pod template's labels.";

fn cells(d: &Value) -> Vec<Cell> {
    let desired = int_opt(d, "/spec/replicas").unwrap_or(1);
    let (names, images) = container_cells(get(d, "/spec/template/spec"));
    // Unlike the other workloads, upstream prints the raw selector string
    // here, without the "<none>" substitution.
    let selector =
        label_selector_string(get(d, "/spec/selector")).unwrap_or_else(|| "<invalid>".to_string());
    vec![
        name(d).into(),
        format!("{}/{desired}", int(d, "/status/readyReplicas")).into(),
        int(d, "/status/updatedReplicas").into(),
        int(d, "/status/availableReplicas").into(),
        age(d),
        names.into(),
        images.into(),
        selector.into(),
    ]
}
