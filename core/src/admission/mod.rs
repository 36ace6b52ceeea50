//! The admission chain every write passes, in upstream's order: the
//! built-in plugins' mutating steps and the mutating webhooks once the
//! object is decoded and defaulted (before the kind prepares and validates
//! it); the plugins' validating steps, ValidatingAdmissionPolicy and the
//! validating webhooks once the kind's own validation passed, just before
//! storage. Dry-run writes run the chain and store nothing.

pub mod attributes;
mod conditions;
mod expressions;
mod matching;
pub mod plugins;
mod policies;
mod webhooks;

use serde_json::Value;

use crate::error::ApiResult;
use crate::verbs::ApiCore;
use attributes::{Attributes, Step};
use plugins::Plugin;

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
        let started = std::time::Instant::now();
        let result = self.mutating_steps(attributes, object).await;
        observe_step(Step::Admit, attributes, &result, started);
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
        observe_step(Step::Validate, attributes, &result, started);
        result
    }
}

impl ApiCore {
    /// The built-in plugins' mutating steps (NamespaceLifecycle first),
    /// then the mutating webhooks.
    async fn mutating_steps(
        &self,
        attributes: &Attributes<'_>,
        mut object: Option<&mut Value>,
    ) -> ApiResult<Vec<String>> {
        self.admit_with_plugins(attributes, object.as_deref_mut())
            .await?;
        if attributes.exempt_from_webhooks()
            || !self.admission_plugins.has(Plugin::MutatingAdmissionWebhook)
        {
            return Ok(Vec::new());
        }
        let started = std::time::Instant::now();
        let result = self.call_mutating_webhooks(attributes, object).await;
        let plugin = Plugin::MutatingAdmissionWebhook;
        plugins::observe(plugin, Step::Admit, attributes, result.is_err(), started);
        result
    }

    /// The built-in plugins' validating steps, ValidatingAdmissionPolicy,
    /// then the validating webhooks.
    async fn validating_steps(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
    ) -> ApiResult<Vec<String>> {
        let mut warnings = self.validate_with_plugins(attributes, object).await?;
        if !attributes.exempt_from_policies()
            && self
                .admission_plugins
                .has(Plugin::ValidatingAdmissionPolicy)
        {
            let started = std::time::Instant::now();
            let result = self.validate_with_policies(attributes, object).await;
            let plugin = Plugin::ValidatingAdmissionPolicy;
            plugins::observe(plugin, Step::Validate, attributes, result.is_err(), started);
            warnings.extend(result?);
        }
        if !attributes.exempt_from_webhooks()
            && self
                .admission_plugins
                .has(Plugin::ValidatingAdmissionWebhook)
        {
            let started = std::time::Instant::now();
            let result = self.call_validating_webhooks(attributes, object).await;
            let plugin = Plugin::ValidatingAdmissionWebhook;
            plugins::observe(plugin, Step::Validate, attributes, result.is_err(), started);
            warnings.extend(result?);
        }
        self.charge_quota_if_enabled(attributes, object).await?;
        Ok(warnings)
    }

    /// Whether a delete must read the object for admission: only when a
    /// plugin that judges deletes is enabled, or a webhook or policy may
    /// look at it.
    pub(crate) fn admission_reads_deletes(&self) -> bool {
        self.admission_plugins.judges_deletes()
            || self.has_admission_webhooks()
            || self.has_policy_bindings()
    }
}

/// Counts one admission step under upstream's step metric.
fn observe_step(
    step: Step,
    attributes: &Attributes<'_>,
    result: &ApiResult<Vec<String>>,
    started: std::time::Instant,
) {
    crate::metrics::observe_admission_step(
        step.as_str(),
        attributes.operation.as_str(),
        result.is_err(),
        started.elapsed(),
    );
}
