//! PersistentVolumeClaimResize: a claim may grow only when it is bound and
//! its StorageClass allows volume expansion (shrinking is the claim's own
//! validation's to refuse).

use serde_json::Value;

use super::super::attributes::{Attributes, Operation};
use crate::error::ApiResult;
use crate::validate::quantity::{self, Quantity};
use crate::verbs::ApiCore;

const BETA_CLASS_ANNOTATION: &str = "volume.beta.kubernetes.io/storage-class";

/// Upstream's GetPersistentVolumeClaimClass: the beta annotation (even
/// empty), else spec.storageClassName, else "".
fn class_of(claim: &Value) -> &str {
    claim
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(BETA_CLASS_ANNOTATION))
        .or_else(|| claim.pointer("/spec/storageClassName"))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// The storage requested; none counts as zero.
fn requested_storage(claim: &Value) -> Quantity {
    claim
        .pointer("/spec/resources/requests/storage")
        .and_then(|q| quantity::from_json(q).ok())
        .unwrap_or_else(|| Quantity::count(0))
}

impl ApiCore {
    pub(super) async fn validate_pvc_resize(
        &self,
        attributes: &Attributes<'_>,
        claim: Option<&Value>,
    ) -> ApiResult<()> {
        let (Some(claim), Some(old)) = (claim, attributes.old) else {
            return Ok(());
        };
        if !super::refusal::is_core(attributes, "persistentvolumeclaims")
            || attributes.operation != Operation::Update
            || requested_storage(claim) <= requested_storage(old)
        {
            return Ok(());
        }
        let refuse = |why: &str| Err(super::refusal::forbidden(attributes, Some(claim), why));
        if old.pointer("/status/phase").and_then(Value::as_str) != Some("Bound") {
            return refuse("Only bound persistent volume claims can be expanded");
        }
        if !self.allows_expansion(class_of(claim), class_of(old)).await {
            return refuse("only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize");
        }
        Ok(())
    }

    /// Whether the claim's class (the same before and after) exists and
    /// sets allowVolumeExpansion.
    async fn allows_expansion(&self, class: &str, old_class: &str) -> bool {
        if class.is_empty() || class != old_class {
            return false;
        }
        let Ok(def) = self.resolve("storage.k8s.io", "v1", "storageclasses") else {
            return false;
        };
        let Ok(cache) = self.watch_cache(&def).await else {
            return false;
        };
        let key = def.key(&self.prefix, None, class);
        cache
            .get(&key)
            .is_some_and(|found| found.get("allowVolumeExpansion") == Some(&Value::Bool(true)))
    }
}
