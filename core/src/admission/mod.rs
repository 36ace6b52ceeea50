//! The admission chain every write passes, in upstream's order: mutating
//! webhooks once the object is decoded and defaulted (before the kind
//! prepares and validates it), validating webhooks once the kind's own
//! validation passed, just before storage. Dry-run writes run the chain and
//! store nothing. ValidatingAdmissionPolicy runs before the validating
//! webhooks. The built-in plugins join here.

pub mod attributes;
mod conditions;
mod expressions;
mod matching;
mod policies;
mod webhooks;

use serde_json::Value;

use crate::error::ApiResult;
use crate::verbs::ApiCore;
use attributes::{Attributes, Operation};

pub(crate) use policies::PolicySources;
pub(crate) use webhooks::WebhookSources;

impl ApiCore {
    /// Mutating admission: may change `object` (None on delete); the
    /// warnings the chain gave.
    pub(crate) async fn mutating_admission(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&mut Value>,
    ) -> ApiResult<Vec<String>> {
        if attributes.exempt_from_webhooks() {
            return Ok(Vec::new());
        }
        // NamespaceLifecycle, the chain's first plugin: nothing is created
        // in a namespace that is missing or terminating, before any webhook
        // sees the request.
        if attributes.operation == Operation::Create {
            self.ensure_namespace_accepts(attributes.def, attributes.namespace, attributes.name)
                .await?;
        }
        let started = std::time::Instant::now();
        let result = self.call_mutating_webhooks(attributes, object).await;
        observe_step("admit", attributes, &result, started);
        result
    }

    /// Validating admission of the object about to be stored (None on
    /// delete); the warnings the chain gave.
    pub(crate) async fn validate_admission(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
    ) -> ApiResult<Vec<String>> {
        let started = std::time::Instant::now();
        let result = self.validating_steps(attributes, object).await;
        observe_step("validate", attributes, &result, started);
        result
    }
}

impl ApiCore {
    /// ValidatingAdmissionPolicy, then the validating webhooks.
    async fn validating_steps(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
    ) -> ApiResult<Vec<String>> {
        let mut warnings = Vec::new();
        if !attributes.exempt_from_policies() {
            warnings.extend(self.validate_with_policies(attributes, object).await?);
        }
        if !attributes.exempt_from_webhooks() {
            warnings.extend(self.call_validating_webhooks(attributes, object).await?);
        }
        Ok(warnings)
    }

    /// Whether a delete must read the object for admission: only when a
    /// webhook or policy may look at it.
    pub(crate) fn admission_reads_deletes(&self) -> bool {
        self.has_admission_webhooks() || self.has_policy_bindings()
    }
}

/// Counts one admission step under upstream's step metric.
fn observe_step(
    type_: &str,
    attributes: &Attributes<'_>,
    result: &ApiResult<Vec<String>>,
    started: std::time::Instant,
) {
    crate::metrics::observe_admission_step(
        type_,
        attributes.operation.as_str(),
        result.is_err(),
        started.elapsed(),
    );
}
