//! What admission knows of one request (upstream's admission.Attributes);
//! a leaf the verbs import without reaching the chain itself.

use serde_json::{json, Value};

use crate::auth::UserInfo;
use crate::registry::ResourceDef;

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
    pub(super) fn options_kind(self) -> &'static str {
        match self {
            Operation::Create => "CreateOptions",
            Operation::Update => "UpdateOptions",
            Operation::Delete => "DeleteOptions",
        }
    }
}

/// The chain's two steps, as the admission metrics name them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Admit,
    Validate,
}

impl Step {
    pub fn as_str(self) -> &'static str {
        match self {
            Step::Admit => "admit",
            Step::Validate => "validate",
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
    pub(super) fn options(&self) -> Value {
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

    /// The name upstream's admission.NewForbidden puts in its message: the
    /// request's, else the object's name or generateName, else "Unknown".
    pub(super) fn name_in_errors<'o>(&'o self, object: Option<&'o Value>) -> &'o str {
        let named = |key: &str| {
            object
                .and_then(|o| o.pointer(&format!("/metadata/{key}")))
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty())
        };
        Some(self.name)
            .filter(|n| !n.is_empty())
            .or_else(|| named("name"))
            .or_else(|| named("generateName"))
            .unwrap_or("Unknown")
    }

    /// The requesting user as an AdmissionReview's `userInfo` (and CEL's
    /// `request.userInfo`): empty parts left out.
    pub(super) fn user_info(&self) -> Value {
        let user = self.user;
        let mut user_info = json!({"username": user.name});
        if !user.uid.is_empty() {
            user_info["uid"] = json!(user.uid);
        }
        if !user.groups.is_empty() {
            user_info["groups"] = json!(user.groups);
        }
        if !user.extra.is_empty() {
            user_info["extra"] = json!(user.extra);
        }
        user_info
    }

    /// Webhook configurations and policies are never sent to webhooks, so
    /// a broken webhook cannot lock out its own repair.
    pub(super) fn exempt_from_webhooks(&self) -> bool {
        self.def.group == "admissionregistration.k8s.io"
            && (self.exempt_from_policies()
                || matches!(
                    self.def.kind.as_str(),
                    "ValidatingWebhookConfiguration" | "MutatingWebhookConfiguration"
                ))
    }

    /// Policies and their bindings are never validated by policies
    /// (webhook configurations are).
    pub(super) fn exempt_from_policies(&self) -> bool {
        self.def.group == "admissionregistration.k8s.io"
            && matches!(
                self.def.kind.as_str(),
                "ValidatingAdmissionPolicy"
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
