//! The storage.k8s.io API group's kinds, in upstream's discovery order.

mod csi_driver;
mod csi_node;
mod csi_storage_capacity;
mod storage_class;
mod volume_attachment;

pub use csi_driver::CSIDriver;
pub use csi_node::CSINode;
pub use csi_storage_capacity::CSIStorageCapacity;
pub use storage_class::StorageClass;
pub use volume_attachment::VolumeAttachment;

use crate::registry::ResourceDef;

pub fn resources() -> Vec<ResourceDef> {
    [
        csi_driver::resources(),
        csi_node::resources(),
        csi_storage_capacity::resources(),
        storage_class::resources(),
        volume_attachment::resources(),
    ]
    .into_iter()
    .flatten()
    .collect()
}
