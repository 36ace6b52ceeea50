//! VolumeAttachment (storage.k8s.io/v1): a volume to attach to a node.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::kinds::Kind;
use crate::printers::Printer;
use crate::registry::ResourceDef;

pub struct VolumeAttachment;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "storage.k8s.io",
        "v1",
        "volumeattachments",
        "VolumeAttachment",
        false,
        Arc::new(VolumeAttachment),
    )
    .subresources(&["status"])]
}

impl Kind for VolumeAttachment {
    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        crate::defaults::other::volume_attachment(object);
    }

    fn empty_status(&self) -> Value {
        json!({"attached": false})
    }

    fn printer(&self) -> Printer {
        Printer::VolumeAttachment
    }
}
