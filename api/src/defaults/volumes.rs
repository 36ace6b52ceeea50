//! The defaults of volume sources and claims, which pod volumes share with
//! PersistentVolumes (and a VolumeAttachment's inline spec), and
//! PersistentVolumeClaims with a StatefulSet's claim templates and a pod's
//! ephemeral volumes.

use serde_json::json;

use super::{child, default_pointer, default_zero, ensure_child, Object};

/// The volume-source defaults of a PersistentVolumeSpec (also used for the
/// inline spec of a VolumeAttachment).
pub(crate) fn persistent_volume_source(spec: &mut Object) {
    if let Some(host_path) = child(spec, "hostPath") {
        default_pointer(host_path, "type", json!(""));
    }
    if let Some(rbd) = child(spec, "rbd") {
        rbd_defaults(rbd);
    }
    if let Some(iscsi) = child(spec, "iscsi") {
        default_zero(iscsi, "iscsiInterface", json!("default"));
    }
    if let Some(azure_disk) = child(spec, "azureDisk") {
        azure_disk_defaults(azure_disk);
    }
    if let Some(scale_io) = child(spec, "scaleIO") {
        scale_io_defaults(scale_io);
    }
}

/// `SetObjectDefaults_PersistentVolumeClaim`.
pub(crate) fn persistent_volume_claim(pvc: &mut Object) {
    if let Some(spec) = ensure_child(pvc, "spec") {
        persistent_volume_claim_spec(spec);
    }
    if let Some(status) = ensure_child(pvc, "status") {
        default_zero(status, "phase", json!("Pending"));
    }
}

/// `SetDefaults_PersistentVolumeClaimSpec`.
pub(crate) fn persistent_volume_claim_spec(spec: &mut Object) {
    default_pointer(spec, "volumeMode", json!("Filesystem"));
}

/// RBDVolumeSource / RBDPersistentVolumeSource `+default` tags.
pub(super) fn rbd_defaults(rbd: &mut Object) {
    default_zero(rbd, "pool", json!("rbd"));
    default_zero(rbd, "user", json!("admin"));
    default_zero(rbd, "keyring", json!("/etc/ceph/keyring"));
}

/// AzureDiskVolumeSource `+default` tags.
pub(super) fn azure_disk_defaults(disk: &mut Object) {
    default_pointer(disk, "cachingMode", json!("ReadWrite"));
    default_pointer(disk, "fsType", json!("ext4"));
    default_pointer(disk, "readOnly", json!(false));
    default_pointer(disk, "kind", json!("Shared"));
}

/// ScaleIOVolumeSource / ScaleIOPersistentVolumeSource `+default` tags.
pub(super) fn scale_io_defaults(scale_io: &mut Object) {
    default_zero(scale_io, "storageMode", json!("ThinProvisioned"));
    default_zero(scale_io, "fsType", json!("xfs"));
}
