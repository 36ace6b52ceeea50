//! AlwaysDeny (off by default; upstream keeps it for tests): every write
//! is refused. AlwaysAdmit does nothing at all.

use serde_json::Value;

use super::super::attributes::Attributes;
use crate::error::ApiResult;

pub(super) fn deny(attributes: &Attributes<'_>, object: Option<&Value>) -> ApiResult<()> {
    Err(super::refusal::forbidden(
        attributes,
        object,
        "admission control is denying all modifications",
    ))
}
