//! The admission chain every write passes, in upstream's order: mutating
//! webhooks once the object is decoded and defaulted (before the kind
//! prepares and validates it), validating webhooks once the kind's own
//! validation passed, just before storage. Dry-run writes run the chain and
//! store nothing. The built-in plugins and ValidatingAdmissionPolicy join
//! here.

mod webhooks;

use serde_json::{json, Value};

use crate::auth::UserInfo;
use crate::error::ApiResult;
use crate::registry::ResourceDef;
use crate::verbs::ApiCore;

pub(crate) use webhooks::WebhookSources;

/// What a request does, as admission names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    Create,
    Update,
    Delete,
}

impl Operation {
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
        }
    }

    /// The options kind a review carries for this operation.
    fn options_kind(self) -> &'static str {
        match self {
            Operation::Create => "CreateOptions",
            Operation::Update => "UpdateOptions",
            Operation::Delete => "DeleteOptions",
        }
    }
}

/// One request as admission sees it (upstream's admission.Attributes).
pub struct Attributes<'a> {
    pub operation: Operation,
    pub user: &'a UserInfo,
    pub def: &'a ResourceDef,
    /// The request's namespace; for a Namespace, its own name.
    pub namespace: Option<&'a str>,
    /// Empty on a create that generates the name.
    pub name: &'a str,
    pub subresource: &'a str,
    /// The stored object an update or delete changes.
    pub old: Option<&'a Value>,
    pub dry_run: bool,
    pub field_manager: &'a str,
}

impl Attributes<'_> {
    /// The operation's options, as a review carries them.
    fn options(&self) -> Value {
        let mut options = json!({
            "kind": self.operation.options_kind(),
            "apiVersion": "meta.k8s.io/v1",
        });
        if self.dry_run {
            options["dryRun"] = json!(["All"]);
        }
        if !self.field_manager.is_empty() && self.operation != Operation::Delete {
            options["fieldManager"] = json!(self.field_manager);
        }
        options
    }

    /// Webhook configurations and policies are never sent to webhooks, so
    /// a broken webhook cannot lock out its own repair.
    fn exempt(&self) -> bool {
        self.def.group == "admissionregistration.k8s.io"
            && matches!(
                self.def.kind.as_str(),
                "ValidatingWebhookConfiguration"
                    | "MutatingWebhookConfiguration"
                    | "ValidatingAdmissionPolicy"
                    | "ValidatingAdmissionPolicyBinding"
                    | "MutatingAdmissionPolicy"
                    | "MutatingAdmissionPolicyBinding"
            )
    }
}

/// The namespace admission names: the request's, or a Namespace's own name.
pub fn namespace_of<'a>(
    def: &ResourceDef,
    namespace: Option<&'a str>,
    name: &'a str,
) -> Option<&'a str> {
    if def.group.is_empty() && def.resource == "namespaces" {
        Some(name)
    } else {
        namespace
    }
}

impl ApiCore {
    /// Whether any admission webhook is configured: a delete reads the
    /// object for admission only then.
    pub(crate) fn has_admission_webhooks(&self) -> bool {
        self.has_webhooks()
    }

    /// Mutating admission: may change `object` (None on delete); the
    /// warnings the chain gave.
    pub(crate) async fn mutating_admission(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&mut Value>,
    ) -> ApiResult<Vec<String>> {
        if attributes.exempt() {
            return Ok(Vec::new());
        }
        self.call_mutating_webhooks(attributes, object).await
    }

    /// Validating admission of the object about to be stored (None on
    /// delete); the warnings the chain gave.
    pub(crate) async fn validate_admission(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
    ) -> ApiResult<Vec<String>> {
        if attributes.exempt() {
            return Ok(Vec::new());
        }
        self.call_validating_webhooks(attributes, object).await
    }
}
