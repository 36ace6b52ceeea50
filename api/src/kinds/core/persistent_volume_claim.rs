//! PersistentVolumeClaim (core/v1): a request for storage.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::error::FieldError;
use crate::kinds::Kind;
use crate::kinds::NameRule;
use crate::printers::values::{
    age, deleting, format_access_modes, name, ptr_str, quantity, storage_class_annotation, str_or,
    text,
};
use crate::printers::{age_col, col, name_col, wide, Cell, TableColumn};
use crate::registry::ResourceDef;
use crate::validate::meta;
use crate::validate::quantity::Quantity;
use crate::validate::quantity::{self, QUANTITY_FORMAT_MSG};
use crate::validate::volume_modes::{access_modes, volume_mode};
use crate::validate::{field, list_of, map_of, opt, str_of};

pub struct PersistentVolumeClaim;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "",
        "v1",
        "persistentvolumeclaims",
        "PersistentVolumeClaim",
        true,
        Arc::new(PersistentVolumeClaim),
    )
    .short_names(&["pvc"])
    .subresources(&["status"])]
}

impl Kind for PersistentVolumeClaim {
    fn quota_usage(&self, object: &Value) -> Vec<(String, Quantity)> {
        let mut usage = vec![("persistentvolumeclaims".to_string(), Quantity::count(1))];
        let storage = object
            .pointer("/spec/resources/requests/storage")
            .and_then(|q| crate::validate::quantity::from_json(q).ok());
        if let Some(storage) = storage {
            usage.push(("requests.storage".into(), storage));
        }
        let class = object
            .pointer("/spec/storageClassName")
            .and_then(Value::as_str)
            .filter(|c| !c.is_empty());
        if let Some(class) = class {
            let prefix = format!("{class}.storageclass.storage.k8s.io");
            usage.push((
                format!("{prefix}/persistentvolumeclaims"),
                Quantity::count(1),
            ));
            if let Some(storage) = storage {
                usage.push((format!("{prefix}/requests.storage"), storage));
            }
        }
        usage
    }

    fn quota_charges_updates(&self) -> bool {
        true
    }

    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        crate::defaults::volumes::persistent_volume_claim(object);
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
            col("Status", "string", D_PVC_PHASE),
            col("Volume", "string", D_PVC_VOLUME),
            col("Capacity", "string", D_PVC_CAPACITY),
            col("Access Modes", "string", D_PVC_ACCESS),
            col("StorageClass", "string", "StorageClass of the pvc"),
            col(
                "VolumeAttributesClass",
                "string",
                "VolumeAttributesClass of the pvc",
            ),
            age_col(),
            wide("VolumeMode", "string", D_PVC_VOLUME_MODE),
        ]
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        cells(object)
    }
}

fn validate(object: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = field(object, "spec");
    let modes = list_of(spec, "accessModes");
    if modes.is_empty() {
        errs.push(FieldError::required(
            "spec.accessModes",
            "at least 1 access mode is required",
        ));
    }
    errs.extend(meta::label_selector(opt(spec, "selector"), "spec.selector"));
    errs.extend(access_modes(modes, "spec.accessModes"));
    // Upstream keys the storage request under `resources`, not `requests`.
    let storage_path = "spec.resources[storage]";
    match map_of(field(spec, "resources"), "requests").and_then(|r| r.get("storage")) {
        None => errs.push(FieldError::required(storage_path, "")),
        Some(raw) => match quantity::from_json(raw) {
            Err(_) => errs.push(FieldError::invalid(
                storage_path,
                raw.as_str().unwrap_or(""),
                QUANTITY_FORMAT_MSG,
            )),
            Ok(q) if q.is_negative() || q.is_zero() => errs.push(FieldError::invalid(
                storage_path,
                &q.canonical(),
                "must be greater than zero",
            )),
            Ok(_) => {}
        },
    }
    if let Some(class) = opt(spec, "storageClassName").and_then(Value::as_str) {
        if !class.is_empty() {
            errs.extend(meta::name(
                NameRule::Subdomain,
                class,
                "spec.storageClassName",
            ));
        }
    }
    errs.extend(volume_mode(spec, "spec.volumeMode"));
    errs
}

fn storage_request(object: &Value) -> Option<quantity::Quantity> {
    map_of(field(field(object, "spec"), "resources"), "requests")
        .and_then(|r| r.get("storage"))
        .and_then(|raw| quantity::from_json(raw).ok())
}

/// ValidatePersistentVolumeClaimUpdate: the spec is fixed except a first
/// volumeName and, for bound claims, the storage request (with 1.32's
/// RecoverVolumeExpansionFailure: not below status.capacity).
fn validate_update(object: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut new_spec = field(object, "spec").clone();
    let mut old_spec = field(old, "spec").clone();
    if str_of(&old_spec, "volumeName").is_empty() {
        match new_spec.get("volumeName").cloned() {
            Some(v) => {
                if let Some(obj) = old_spec.as_object_mut() {
                    obj.insert("volumeName".into(), v);
                }
            }
            None => {
                if let Some(obj) = old_spec.as_object_mut() {
                    obj.remove("volumeName");
                }
            }
        }
    }
    let bound = str_of(field(object, "status"), "phase") == "Bound";
    if bound {
        let old_storage = old_spec.pointer("/resources/requests/storage").cloned();
        if let Some(requests) = new_spec
            .pointer_mut("/resources/requests")
            .and_then(Value::as_object_mut)
        {
            match old_storage {
                Some(v) => requests.insert("storage".into(), v),
                None => requests.remove("storage"),
            };
        }
    }
    for name in ["volumeAttributesClassName"] {
        if bound {
            match old_spec.get(name).cloned() {
                Some(v) => new_spec.as_object_mut().map(|o| o.insert(name.into(), v)),
                None => new_spec.as_object_mut().map(|o| o.remove(name)),
            };
        }
    }
    if !meta::semantically_equal(&new_spec, &old_spec) {
        errs.push(FieldError::forbidden(
            "spec",
            &format!(
                "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n{}",
                meta::diff(&old_spec, &new_spec)
            ),
        ));
    }
    if let (Some(new_size), Some(old_size)) = (storage_request(object), storage_request(old)) {
        if new_size < old_size {
            let status_size = map_of(field(old, "status"), "capacity")
                .and_then(|c| c.get("storage"))
                .and_then(|raw| quantity::from_json(raw).ok());
            let at_or_below_status = match status_size {
                Some(status) => new_size <= status,
                None => new_size.is_negative() || new_size.is_zero(),
            };
            if at_or_below_status {
                errs.push(FieldError::forbidden(
                    "spec.resources.requests.storage",
                    "field can not be less than status.capacity",
                ));
            }
        }
    }
    errs.extend(crate::validate::volume_modes::volume_mode_unchanged(
        object, old,
    ));
    errs
}

const D_PVC_PHASE: &str = "phase represents the current phase of PersistentVolumeClaim.";
const D_PVC_CAPACITY: &str = "capacity represents the actual resources of the underlying volume.";
const D_PVC_ACCESS: &str = "accessModes contains the actual access modes the volume backing the PVC has. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes-1";
const D_PVC_VOLUME: &str =
    "volumeName is the binding reference to the PersistentVolume backing this claim.";
const D_PVC_VOLUME_MODE: &str = "volumeMode defines what type of volume is required by the claim. Value of Filesystem is implied when not included in claim spec.";

fn cells(pvc: &Value) -> Vec<Cell> {
    let phase = if deleting(pvc) {
        "Terminating"
    } else {
        str_or(pvc, "/status/phase", "Pending")
    };
    let volume = text(pvc, "/spec/volumeName");
    // Capacity and modes are only meaningful once bound.
    let (capacity, modes) = if volume.is_empty() {
        (String::new(), String::new())
    } else {
        (
            quantity(pvc, "/status/capacity/storage"),
            format_access_modes(pvc, "/status/accessModes"),
        )
    };
    let class =
        storage_class_annotation(pvc).unwrap_or_else(|| text(pvc, "/spec/storageClassName"));
    vec![
        name(pvc).into(),
        phase.into(),
        volume.into(),
        capacity.into(),
        modes.into(),
        class.into(),
        ptr_str(pvc, "/spec/volumeAttributesClassName", "<unset>").into(),
        age(pvc),
        str_or(pvc, "/spec/volumeMode", "Filesystem").into(),
    ]
}
