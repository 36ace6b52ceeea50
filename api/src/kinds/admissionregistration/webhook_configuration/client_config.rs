//! The client configuration of a webhook the server calls (admission
//! webhooks; CRD conversion webhooks), as upstream's `util/webhook`
//! validation words it.

use serde_json::Value;

use crate::error::FieldError;
use crate::kinds::NameRule;
use crate::validate::object_meta::name_problems;

const FORM: &str = "; desired format: https://host[/path]";

/// ValidateWebhookURL with https forced.
fn url(path: &str, raw: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let parsed = match ::url::Url::parse(raw) {
        Ok(parsed) => parsed,
        // Go parses a bare path as a URL without scheme or host.
        Err(::url::ParseError::RelativeUrlWithoutBase) => {
            errs.push(FieldError::invalid(
                path,
                "",
                &format!("'https' is the only allowed URL scheme{FORM}"),
            ));
            errs.push(FieldError::invalid(
                path,
                "",
                &format!("host must be specified{FORM}"),
            ));
            return errs;
        }
        Err(err) => {
            errs.push(FieldError::required(
                path,
                &format!("url must be a valid URL: parse {raw:?}: {err}{FORM}"),
            ));
            return errs;
        }
    };
    if parsed.scheme() != "https" {
        errs.push(FieldError::invalid(
            path,
            parsed.scheme(),
            &format!("'https' is the only allowed URL scheme{FORM}"),
        ));
    }
    let host = parsed.host_str().unwrap_or_default();
    if host.is_empty() {
        errs.push(FieldError::invalid(
            path,
            "",
            &format!("host must be specified{FORM}"),
        ));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        let user = match parsed.password() {
            Some(password) => format!("{}:{password}", parsed.username()),
            None => parsed.username().to_string(),
        };
        errs.push(FieldError::invalid(
            path,
            &user,
            "user information is not permitted in the URL",
        ));
    }
    if let Some(fragment) = parsed.fragment() {
        errs.push(FieldError::invalid(
            path,
            fragment,
            "fragments are not permitted in the URL",
        ));
    }
    if let Some(query) = parsed.query() {
        errs.push(FieldError::invalid(
            path,
            query,
            "query parameters are not permitted in the URL",
        ));
    }
    errs
}

/// ValidateWebhookService. Upstream's caller hands name and namespace over
/// in each other's places (kubernetes#141353), so a missing name is reported
/// at `.namespace` and the reverse; clients see that, so this does too.
fn service(path: &str, service: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let text = |key: &str| service.get(key).and_then(Value::as_str).unwrap_or("");
    if text("name").is_empty() {
        errs.push(FieldError::required(format!("{path}.namespace"), ""));
    }
    if text("namespace").is_empty() {
        errs.push(FieldError::required(format!("{path}.name"), ""));
    }
    if let Some(port) = service.get("port").and_then(Value::as_i64) {
        if !(1..=65535).contains(&port) {
            errs.push(FieldError::invalid_rendered(
                format!("{path}.port"),
                &port.to_string(),
                "port is not valid: must be between 1 and 65535, inclusive",
            ));
        }
    }
    let Some(webhook_path) = service.get("path").and_then(Value::as_str) else {
        return errs;
    };
    let path_field = format!("{path}.path");
    if webhook_path.is_empty() || webhook_path == "/" {
        return errs;
    }
    if webhook_path == "//" {
        errs.push(FieldError::invalid(
            path_field,
            webhook_path,
            "segment[0] may not be empty",
        ));
        return errs;
    }
    if !webhook_path.starts_with('/') {
        errs.push(FieldError::invalid(
            path_field,
            webhook_path,
            "must start with a '/'",
        ));
        return errs;
    }
    let trimmed = webhook_path.strip_prefix('/').unwrap_or(webhook_path);
    let trimmed = trimmed.strip_suffix('/').unwrap_or(trimmed);
    for (i, segment) in trimmed.split('/').enumerate() {
        if segment.is_empty() {
            errs.push(FieldError::invalid(
                path_field.clone(),
                webhook_path,
                &format!("segment[{i}] may not be empty"),
            ));
            continue;
        }
        for problem in name_problems(NameRule::Subdomain, segment, false) {
            errs.push(FieldError::invalid(
                path_field.clone(),
                webhook_path,
                &format!("segment[{i}]: {problem}"),
            ));
        }
    }
    errs
}

/// A client config naming exactly one of url and service, each valid.
pub(super) fn client_config(path: &str, config: Option<&Value>) -> Vec<FieldError> {
    let config = config.unwrap_or(&Value::Null);
    match (config.get("url"), config.get("service")) {
        (Some(url_value), None) => url(
            &format!("{path}.url"),
            url_value.as_str().unwrap_or_default(),
        ),
        (None, Some(service_value)) => service(&format!("{path}.service"), service_value),
        _ => vec![FieldError::required(
            path,
            "exactly one of url or service is required",
        )],
    }
}
