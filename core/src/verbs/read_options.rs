//! How the options of a list or watch fit together, checked before any read
//! as upstream's ValidateListOptions does: resourceVersion,
//! resourceVersionMatch, continue and sendInitialEvents. A combination it
//! forbids gets 422 Invalid on `ListOptions.meta.k8s.io`, with one cause
//! per rule broken and upstream's wording.

use crate::error::{ApiError, ApiResult, FieldError};
use crate::verbs::ListOptions;
use crate::watch::WatchOptions;

const MATCH: &str = "resourceVersionMatch";
const EXACT: &str = "Exact";
const NOT_OLDER_THAN: &str = "NotOlderThan";

fn invalid(causes: Vec<FieldError>) -> ApiResult<()> {
    if causes.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid("meta.k8s.io", "ListOptions", "", causes))
    }
}

/// A list's options. Also: a continue token carries its own revision, so
/// naming another one beside it is a bad request, as upstream's storage
/// answers it.
pub fn validate_list(opts: &ListOptions) -> ApiResult<()> {
    let matched = opts.resource_version_match.as_str();
    let mut causes = Vec::new();
    if !matched.is_empty() {
        if opts.resource_version.is_empty() {
            causes.push(FieldError::forbidden(
                MATCH,
                "resourceVersionMatch is forbidden unless resourceVersion is provided",
            ));
        }
        if !opts.continue_token.is_empty() {
            causes.push(FieldError::forbidden(
                MATCH,
                "resourceVersionMatch is forbidden when continue is provided",
            ));
        }
        if matched != EXACT && matched != NOT_OLDER_THAN {
            causes.push(FieldError::not_supported(
                MATCH,
                matched,
                &[EXACT, NOT_OLDER_THAN, ""],
            ));
        }
        if matched == EXACT && opts.resource_version == "0" {
            causes.push(FieldError::forbidden(
                MATCH,
                "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
            ));
        }
    }
    if opts.send_initial_events.is_some() {
        causes.push(FieldError::forbidden(
            "sendInitialEvents",
            "sendInitialEvents is forbidden for list",
        ));
    }
    invalid(causes)?;
    if !opts.continue_token.is_empty() && !matches!(opts.resource_version.as_str(), "" | "0") {
        return Err(ApiError::bad_request(
            "specifying resource version is not allowed when using continue",
        ));
    }
    Ok(())
}

/// A watch's options: resourceVersionMatch belongs to streaming lists
/// (sendInitialEvents), which need NotOlderThan.
pub fn validate_watch(opts: &WatchOptions) -> ApiResult<()> {
    let matched = opts.resource_version_match.as_str();
    let mut causes = Vec::new();
    if opts.send_initial_events.is_some() && matched != NOT_OLDER_THAN {
        causes.push(FieldError::forbidden(
            MATCH,
            "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        ));
    }
    if !matched.is_empty() {
        if opts.send_initial_events.is_none() {
            causes.push(FieldError::forbidden(
                MATCH,
                "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
            ));
        }
        if matched != NOT_OLDER_THAN {
            causes.push(FieldError::not_supported(MATCH, matched, &[NOT_OLDER_THAN]));
        }
    }
    invalid(causes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(rv: &str, matched: &str, cont: &str) -> ListOptions {
        ListOptions {
            resource_version: rv.into(),
            resource_version_match: matched.into(),
            continue_token: cont.into(),
            ..ListOptions::default()
        }
    }

    fn message(result: ApiResult<()>) -> (u16, String) {
        let err = result.expect_err("rejected");
        (err.code(), err.message)
    }

    #[test]
    fn list_options_as_upstream_validates_them() {
        for ok in [
            list("", "", ""),
            list("0", "", ""),
            list("1", EXACT, ""),
            list("0", NOT_OLDER_THAN, ""),
            list("", "", "token"),
            list("0", "", "token"),
        ] {
            assert!(validate_list(&ok).is_ok(), "{ok:?}");
        }
        assert_eq!(
            message(validate_list(&list("0", EXACT, ""))),
            (
                422,
                "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: \
                 resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""
                    .into()
            )
        );
        assert_eq!(
            message(validate_list(&list("0", "foo", ""))),
            (
                422,
                "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Unsupported \
                 value: \"foo\": supported values: \"Exact\", \"NotOlderThan\", \"\""
                    .into()
            )
        );
        let (code, text) = message(validate_list(&list("", EXACT, "token")));
        assert_eq!(code, 422);
        assert!(
            text.contains("forbidden unless resourceVersion is provided")
                && text.contains("forbidden when continue is provided"),
            "{text}"
        );
        assert_eq!(
            message(validate_list(&list("5", "", "token"))),
            (
                400,
                "specifying resource version is not allowed when using continue".into()
            )
        );
        let streaming = ListOptions {
            send_initial_events: Some(true),
            ..ListOptions::default()
        };
        assert!(message(validate_list(&streaming))
            .1
            .ends_with("sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list"));
    }

    #[test]
    fn watch_options_as_upstream_validates_them() {
        let watch = |send: Option<bool>, matched: &str| WatchOptions {
            send_initial_events: send,
            resource_version_match: matched.into(),
            ..WatchOptions::default()
        };
        assert!(validate_watch(&watch(None, "")).is_ok());
        assert!(validate_watch(&watch(Some(true), NOT_OLDER_THAN)).is_ok());
        assert!(validate_watch(&watch(Some(false), NOT_OLDER_THAN)).is_ok());
        assert!(message(validate_watch(&watch(Some(true), "")))
            .1
            .ends_with("sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"));
        assert!(message(validate_watch(&watch(None, NOT_OLDER_THAN)))
            .1
            .ends_with("forbidden for watch unless sendInitialEvents is provided"));
        let (code, text) = message(validate_watch(&watch(Some(true), EXACT)));
        assert_eq!(code, 422);
        assert!(
            text.contains("Unsupported value: \"Exact\": supported values: \"NotOlderThan\""),
            "{text}"
        );
    }
}
