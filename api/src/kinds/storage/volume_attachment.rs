//! VolumeAttachment (storage.k8s.io/v1): a volume to attach to a node.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::defaults::volumes::persistent_volume_source;
use crate::defaults::{child, Object};
use crate::kinds::Kind;
use crate::printers::values::{age, boolean, name, text};
use crate::printers::{age_col, col, name_col, Cell, TableColumn};
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
        set_defaults(object);
    }

    fn empty_status(&self) -> Value {
        json!({"attached": false})
    }

    fn table_columns(&self) -> Vec<TableColumn> {
        vec![
            name_col(),
            // Upstream marks this column as a name column too; kept for parity.
            TableColumn {
                format: Cow::Borrowed("name"),
                ..col("Attacher", "string", D_VA_ATTACHER)
            },
            col("PV", "string", D_VA_PV),
            col("Node", "string", D_VA_NODE),
            col("Attached", "boolean", D_VA_ATTACHED),
            age_col(),
        ]
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        vec![
            name(object).into(),
            text(object, "/spec/attacher").into(),
            text(object, "/spec/source/persistentVolumeName").into(),
            text(object, "/spec/nodeName").into(),
            boolean(object, "/status/attached").unwrap_or(false).into(),
            age(object),
        ]
    }
}

/// storage/v1 VolumeAttachment: the inline PersistentVolumeSpec's source defaults.
fn set_defaults(attachment: &mut Object) {
    if let Some(inline) = child(attachment, "spec")
        .and_then(|spec| child(spec, "source"))
        .and_then(|source| child(source, "inlineVolumeSpec"))
    {
        persistent_volume_source(inline);
    }
}

const D_VA_ATTACHER: &str = "attacher indicates the name of the volume driver that MUST handle this request. This is the name returned by GetPluginName().";
const D_VA_NODE: &str = "nodeName represents the node that the volume should be attached to.";
const D_VA_PV: &str =
    "persistentVolumeName represents the name of the persistent volume to attach.";
const D_VA_ATTACHED: &str = "attached indicates the volume is successfully attached. This field must only be set by the entity completing the attach operation, i.e. the external-attacher.";
