//! CSIStorageCapacity (storage.k8s.io/v1): storage a driver can provide in a topology segment.

use std::sync::Arc;

use crate::kinds::Kind;
use crate::registry::ResourceDef;

pub struct CSIStorageCapacity;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "storage.k8s.io",
        "v1",
        "csistoragecapacities",
        "CSIStorageCapacity",
        true,
        Arc::new(CSIStorageCapacity),
    )]
}

impl Kind for CSIStorageCapacity {}
