//! PersistentVolume (core/v1): a piece of storage in the cluster.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::defaults::volumes::persistent_volume_source;
use crate::defaults::{default_pointer, default_zero, ensure_child, Object};
use crate::error::FieldError;
use crate::kinds::Kind;
use crate::kinds::NameRule;
use crate::printers::values::{
    age, deleting, format_access_modes, get, name, ptr_str, quantity, storage_class_annotation,
    str_or, text,
};
use crate::printers::{age_col, col, name_col, wide, Cell, TableColumn};
use crate::registry::ResourceDef;
use crate::validate::meta::{self, go_quote};
use crate::validate::quantity::{self, QUANTITY_FORMAT_MSG};
use crate::validate::volume_modes::{access_modes, volume_mode};
use crate::validate::{child, field, key, list_of, map_of, opt, str_of};

pub struct PersistentVolume;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "",
        "v1",
        "persistentvolumes",
        "PersistentVolume",
        false,
        Arc::new(PersistentVolume),
    )
    .short_names(&["pv"])
    .subresources(&["status"])]
}

impl Kind for PersistentVolume {
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
            col("Capacity", "string", D_PV_CAPACITY),
            col("Access Modes", "string", D_PV_ACCESS),
            col("Reclaim Policy", "string", D_PV_RECLAIM),
            col("Status", "string", D_PV_PHASE),
            col("Claim", "string", D_PV_CLAIM),
            col("StorageClass", "string", "StorageClass of the pv"),
            col(
                "VolumeAttributesClass",
                "string",
                "VolumeAttributesClass of the pv",
            ),
            col("Reason", "string", D_PV_REASON),
            age_col(),
            wide("VolumeMode", "string", D_PV_VOLUME_MODE),
        ]
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        cells(object)
    }
}

/// `SetObjectDefaults_PersistentVolume`.
fn set_defaults(pv: &mut Object) {
    if let Some(spec) = ensure_child(pv, "spec") {
        default_zero(spec, "persistentVolumeReclaimPolicy", json!("Retain"));
        default_pointer(spec, "volumeMode", json!("Filesystem"));
        persistent_volume_source(spec);
    }
    if let Some(status) = ensure_child(pv, "status") {
        default_zero(status, "phase", json!("Pending"));
    }
}

/// The sources a PersistentVolume may name, in upstream's checking order.
const PV_SOURCES: &[&str] = &[
    "hostPath",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "glusterfs",
    "flocker",
    "nfs",
    "rbd",
    "quobyte",
    "cinder",
    "cephfs",
    "iscsi",
    "fc",
    "flexVolume",
    "azureFile",
    "vsphereVolume",
    "photonPersistentDisk",
    "portworxVolume",
    "azureDisk",
    "scaleIO",
    "local",
    "storageos",
    "csi",
];

/// `%#v` of a ResourceList, as far as it can be reproduced: nil, or the names.
fn go_resource_list(list: Option<&Value>) -> String {
    match list.and_then(Value::as_object) {
        None => "core.ResourceList(nil)".to_string(),
        Some(map) => {
            let mut names: Vec<&String> = map.keys().collect();
            names.sort();
            let body: Vec<String> = names
                .iter()
                .map(|n| format!("{}:resource.Quantity{{...}}", go_quote(n)))
                .collect();
            format!("core.ResourceList{{{}}}", body.join(", "))
        }
    }
}

fn validate(object: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = field(object, "spec");
    let modes = list_of(spec, "accessModes");
    if modes.is_empty() {
        errs.push(FieldError::required("spec.accessModes", ""));
    }
    errs.extend(access_modes(modes, "spec.accessModes"));
    let capacity = map_of(spec, "capacity");
    if capacity.is_none_or(|c| c.is_empty()) {
        errs.push(FieldError::required("spec.capacity", ""));
    }
    if capacity.is_none_or(|c| !c.contains_key("storage") || c.len() > 1) {
        errs.push(FieldError::not_supported_rendered(
            "spec.capacity",
            &go_resource_list(opt(spec, "capacity")),
            &["storage"],
        ));
    }
    for (name, raw) in capacity.into_iter().flatten() {
        let path = key("spec.capacity", name);
        match quantity::from_json(raw) {
            Err(_) => errs.push(FieldError::invalid(
                path,
                raw.as_str().unwrap_or(""),
                QUANTITY_FORMAT_MSG,
            )),
            Ok(q) => {
                if q.is_negative() {
                    errs.push(FieldError::invalid_rendered(
                        &path,
                        &q.value().to_string(),
                        "must be a valid resource quantity",
                    ));
                }
                if q.is_negative() || q.is_zero() {
                    errs.push(FieldError::invalid(
                        path,
                        &q.canonical(),
                        "must be greater than zero",
                    ));
                }
            }
        }
    }
    let class = str_of(spec, "storageClassName");
    if !class.is_empty() {
        errs.extend(meta::name(
            NameRule::Subdomain,
            class,
            "spec.storageClassName",
        ));
    }
    errs.extend(volume_mode(spec, "spec.volumeMode"));
    match str_of(spec, "persistentVolumeReclaimPolicy") {
        "" | "Delete" | "Recycle" | "Retain" => {}
        other => errs.push(FieldError::not_supported(
            "spec.persistentVolumeReclaimPolicy",
            other,
            &["Delete", "Recycle", "Retain"],
        )),
    }
    let mut count = 0;
    for source in PV_SOURCES {
        let Some(body) = opt(spec, source) else {
            continue;
        };
        let path = child("spec", source);
        if count > 0 {
            errs.push(FieldError::forbidden(
                path,
                "may not specify more than 1 volume type",
            ));
            continue;
        }
        count += 1;
        let required: &[&str] = match *source {
            "hostPath" | "local" => &["path"],
            "nfs" => &["server", "path"],
            "csi" => &["driver", "volumeHandle"],
            _ => &[],
        };
        for name in required {
            if str_of(body, name).is_empty() {
                errs.push(FieldError::required(child(&path, name), ""));
            }
        }
        // Upstream's validatePathNoBacksteps for host paths.
        let host_path = str_of(body, "path");
        if *source == "hostPath" && host_path.split('/').any(|part| part == "..") {
            errs.push(FieldError::invalid(
                child(&path, "path"),
                host_path,
                "must not contain '..'",
            ));
        }
    }
    if count == 0 {
        errs.push(FieldError::required("spec", "must specify a volume type"));
    }
    errs
}

fn validate_update(object: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let pick = |spec: &Value| {
        let mut sources = serde_json::Map::new();
        for source in PV_SOURCES {
            if let Some(v) = opt(spec, source) {
                sources.insert((*source).to_string(), v.clone());
            }
        }
        Value::Object(sources)
    };
    let new_sources = pick(field(object, "spec"));
    let old_sources = pick(field(old, "spec"));
    if !meta::semantically_equal(&new_sources, &old_sources) {
        errs.push(FieldError::forbidden(
            "spec.persistentvolumesource",
            &format!(
                "spec.persistentvolumesource is immutable after creation\n{}",
                meta::diff(&old_sources, &new_sources)
            ),
        ));
    }
    errs.extend(crate::validate::volume_modes::volume_mode_unchanged(
        object, old,
    ));
    errs
}

const D_PV_CAPACITY: &str = "capacity is the description of the persistent volume's resources and capacity. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#capacity";
const D_PV_ACCESS: &str = "accessModes contains all ways the volume can be mounted. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes";
const D_PV_RECLAIM: &str = "persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim. Valid options are Retain (default for manually created PersistentVolumes), Delete (default for dynamically provisioned PersistentVolumes), and Recycle (deprecated). Recycle must be supported by the volume plugin underlying this PersistentVolume. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#reclaiming";
const D_PV_CLAIM: &str = "claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim. Expected to be non-nil when bound. claim.VolumeName is the authoritative bind between PV and PVC. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#binding";
const D_PV_VOLUME_MODE: &str = "volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state. Value of Filesystem is implied when not included in spec.";
const D_PV_PHASE: &str = "phase indicates if a volume is available, bound to a claim, or released by a claim. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#phase";
const D_PV_REASON: &str = "reason is a brief CamelCase string that describes any failure and is meant for machine parsing and tidy display in the CLI.";

fn cells(pv: &Value) -> Vec<Cell> {
    let claim = match get(pv, "/spec/claimRef") {
        Some(c) => format!("{}/{}", text(c, "/namespace"), text(c, "/name")),
        None => String::new(),
    };
    let phase = if deleting(pv) {
        "Terminating"
    } else {
        str_or(pv, "/status/phase", "Pending")
    };
    let class = storage_class_annotation(pv).unwrap_or_else(|| text(pv, "/spec/storageClassName"));
    vec![
        name(pv).into(),
        quantity(pv, "/spec/capacity/storage").into(),
        format_access_modes(pv, "/spec/accessModes").into(),
        str_or(pv, "/spec/persistentVolumeReclaimPolicy", "Retain").into(),
        phase.into(),
        claim.into(),
        class.into(),
        ptr_str(pv, "/spec/volumeAttributesClassName", "<unset>").into(),
        text(pv, "/status/reason").into(),
        age(pv),
        str_or(pv, "/spec/volumeMode", "Filesystem").into(),
    ]
}
