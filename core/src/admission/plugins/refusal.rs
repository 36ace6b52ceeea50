//! What the plugins share: which requests are about a core resource, and
//! upstream's admission.NewForbidden. A leaf, so plugins depend on it and
//! not on each other or on the chain.

use serde_json::Value;

use super::super::attributes::Attributes;

/// Whether the request is a write of the core resource `resource` itself
/// (not a subresource).
pub(super) fn is_core(attributes: &Attributes<'_>, resource: &str) -> bool {
    let def = attributes.def;
    def.group.is_empty() && def.resource == resource && attributes.subresource.is_empty()
}

/// Upstream's admission.NewForbidden for the request's resource.
pub(super) fn forbidden(
    attributes: &Attributes<'_>,
    object: Option<&Value>,
    why: &str,
) -> crate::error::ApiError {
    let def = attributes.def;
    crate::error::ApiError::forbidden_resource(
        &def.group,
        &def.resource,
        attributes.name_in_errors(object),
        why,
    )
}
