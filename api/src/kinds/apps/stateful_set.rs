//! StatefulSet (apps/v1): pods with stable identities and storage.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::defaults::pod_spec::workload_template;
use crate::defaults::volumes::persistent_volume_claim;
use crate::defaults::{
    child, default_pointer, default_zero, each_item, ensure_child, is_zero, str_field, Object,
};
use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::values::{age, container_cells, get, int, int_opt, name};
use crate::printers::{age_col, col, containers_images_cols, name_col, Cell, TableColumn};
use crate::registry::ResourceDef;
use crate::validate::meta;
use crate::validate::workloads::{
    collision_count_decrement, collision_count_nonnegative, nonnegative, replica_bounds,
    restart_always, selector, template_matches,
};
use crate::validate::{child as child_path, field, int_of, nonnegative_counts, opt, str_of};

pub struct StatefulSet;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "apps",
        "v1",
        "statefulsets",
        "StatefulSet",
        true,
        Arc::new(StatefulSet),
    )
    .short_names(&["sts"])
    .categories(&["all"])
    .subresources(&["scale", "status"])]
}

impl Kind for StatefulSet {
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
        json!({"replicas": 0, "availableReplicas": 0})
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        validate(object)
    }

    fn validate_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = validate(object);
        errs.extend(validate_update(object, old));
        errs
    }

    fn validate_status_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        validate_status(object, old)
    }

    fn table_columns(&self) -> Vec<TableColumn> {
        let mut c = vec![
            name_col(),
            col("Ready", "string", "Number of the pod with ready state"),
            age_col(),
        ];
        c.extend(containers_images_cols());
        c
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        cells(object)
    }
}

/// `SetDefaults_StatefulSet` (StatefulSetAutoDeletePVC is on by default in
/// 1.32) and the claim templates' PersistentVolumeClaim defaults.
fn set_defaults(stateful_set: &mut Object) {
    let Some(spec) = ensure_child(stateful_set, "spec") else {
        return;
    };
    default_zero(spec, "podManagementPolicy", json!("OrderedReady"));
    if let Some(strategy) = ensure_child(spec, "updateStrategy") {
        // RollingUpdate is only filled in when the type was defaulted too: an
        // explicit `type: RollingUpdate` without `rollingUpdate` stays as sent.
        if is_zero(strategy, "type") {
            strategy.insert("type".into(), json!("RollingUpdate"));
            default_pointer(strategy, "rollingUpdate", json!({}));
        }
        if str_field(strategy, "type") == "RollingUpdate" {
            if let Some(rolling_update) = child(strategy, "rollingUpdate") {
                default_pointer(rolling_update, "partition", json!(0));
            }
        }
    }
    if let Some(retention) = ensure_child(spec, "persistentVolumeClaimRetentionPolicy") {
        default_zero(retention, "whenDeleted", json!("Retain"));
        default_zero(retention, "whenScaled", json!("Retain"));
    }
    default_pointer(spec, "replicas", json!(1));
    default_pointer(spec, "revisionHistoryLimit", json!(10));
    workload_template(spec);
    each_item(spec, "volumeClaimTemplates", persistent_volume_claim);
}

fn validate(object: &Value) -> Vec<FieldError> {
    let spec = field(object, "spec");
    let mut errs = Vec::new();
    match str_of(spec, "podManagementPolicy") {
        "" | "OrderedReady" | "Parallel" => {}
        other => errs.push(FieldError::invalid(
            "spec.podManagementPolicy",
            other,
            "must be 'OrderedReady' or 'Parallel'",
        )),
    }
    let strategy = field(spec, "updateStrategy");
    let rolling = opt(strategy, "rollingUpdate");
    match str_of(strategy, "type") {
        "OnDelete" => {
            if rolling.is_some() {
                errs.push(FieldError::invalid_rendered(
                    "spec.updateStrategy.rollingUpdate",
                    "apps.RollingUpdateStatefulSetStrategy{...}",
                    "only allowed for updateStrategy 'RollingUpdate'",
                ));
            }
        }
        "" | "RollingUpdate" => {
            if let Some(rolling) = rolling {
                if let Some(partition) = int_of(rolling, "partition") {
                    errs.extend(meta::nonnegative(
                        partition,
                        "spec.updateStrategy.rollingUpdate.partition",
                    ));
                }
            }
        }
        other => errs.push(FieldError::invalid_rendered(
            "spec.updateStrategy",
            &format!(
                "apps.StatefulSetUpdateStrategy{{Type:{}, RollingUpdate:(*apps.RollingUpdateStatefulSetStrategy)(nil)}}",
                meta::go_quote(other)
            ),
            "must be 'RollingUpdate' or 'OnDelete'",
        )),
    }
    if let Some(policy) = opt(spec, "persistentVolumeClaimRetentionPolicy") {
        for name in ["whenDeleted", "whenScaled"] {
            match str_of(policy, name) {
                "" | "Retain" | "Delete" => {}
                other => errs.push(FieldError::not_supported(
                    child_path("spec.persistentVolumeClaimRetentionPolicy", name),
                    other,
                    &["Retain", "Delete"],
                )),
            }
        }
    }
    if let Some(start) = opt(spec, "ordinals").and_then(|o| int_of(o, "start")) {
        errs.extend(meta::nonnegative(start, "spec.ordinals.start"));
    }
    nonnegative(spec, "replicas", 1, &mut errs);
    nonnegative(spec, "minReadySeconds", 0, &mut errs);
    let selector = selector(spec, "statefulset", &mut errs);
    let template = field(spec, "template");
    template_matches(selector.as_ref(), template, &mut errs);
    // 1.32 validates only the template's labels and annotations for a
    // StatefulSet, not its pod spec (that came in 1.34).
    let template_meta = field(template, "metadata");
    errs.extend(meta::labels(
        opt(template_meta, "labels"),
        "spec.template.labels",
    ));
    errs.extend(meta::annotations(
        opt(template_meta, "annotations"),
        "spec.template.annotations",
    ));
    restart_always(template, "StatefulSet", &mut errs);
    errs
}

/// The StatefulSet spec fields an update may change.
const STATEFUL_SET_UPDATABLE: &[&str] = &[
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "revisionHistoryLimit",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
];

fn validate_update(object: &Value, old: &Value) -> Vec<FieldError> {
    let strip = |spec: &Value| {
        let mut spec = spec.clone();
        if let Some(obj) = spec.as_object_mut() {
            for name in STATEFUL_SET_UPDATABLE {
                obj.remove(*name);
            }
            obj.retain(|_, v| !v.is_null());
        }
        spec
    };
    let mut errs = Vec::new();
    if !meta::semantically_equal(&strip(field(object, "spec")), &strip(field(old, "spec"))) {
        errs.push(FieldError::forbidden(
            "spec",
            "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
        ));
    }
    errs
}

/// ValidateStatefulSetStatusUpdate's status checks.
fn validate_status(object: &Value, old: &Value) -> Vec<FieldError> {
    let status = field(object, "status");
    let mut errs = Vec::new();
    nonnegative_counts(
        status,
        "status",
        &[
            "replicas",
            "readyReplicas",
            "currentReplicas",
            "updatedReplicas",
            "availableReplicas",
        ],
        &mut errs,
    );
    // A pointer upstream: checked only when set.
    if let Some(generation) = opt(status, "observedGeneration").and_then(Value::as_i64) {
        errs.extend(meta::nonnegative(generation, "status.observedGeneration"));
    }
    collision_count_nonnegative(status, &mut errs);
    replica_bounds(
        status,
        &[
            "readyReplicas",
            "currentReplicas",
            "updatedReplicas",
            "availableReplicas",
        ],
        "cannot be greater than status.readyReplicas",
        &mut errs,
    );
    collision_count_decrement(status, field(old, "status"), &mut errs);
    errs
}

fn cells(ss: &Value) -> Vec<Cell> {
    let (names, images) = container_cells(get(ss, "/spec/template/spec"));
    vec![
        name(ss).into(),
        format!(
            "{}/{}",
            int(ss, "/status/readyReplicas"),
            int_opt(ss, "/spec/replicas").unwrap_or(1)
        )
        .into(),
        age(ss),
        names.into(),
        images.into(),
    ]
}
