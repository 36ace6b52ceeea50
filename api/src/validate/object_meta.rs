//! Upstream's name and metadata validation rules, with their messages, so
//! 422 causes read exactly as kube-apiserver's.

use serde_json::Value;

use crate::error::FieldError;
use crate::kinds::NameRule;

const DNS1123_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const DNS1035_LABEL_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const CONFIG_KEY_MSG: &str = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";
const QUALIFIED_NAME_MSG: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

const LABEL_MAX: usize = 63;
const SUBDOMAIN_MAX: usize = 253;
/// Upstream's TotalAnnotationSizeLimitB.
const ANNOTATIONS_MAX_BYTES: usize = 256 * 1024;

fn is_lower_alnum(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

fn dns1123_label_ok(s: &str) -> bool {
    !s.is_empty()
        && s.chars().all(|c| is_lower_alnum(c) || c == '-')
        && s.chars().next().is_some_and(is_lower_alnum)
        && s.chars().last().is_some_and(is_lower_alnum)
}

fn dns1123_subdomain_ok(s: &str) -> bool {
    s.split('.').all(dns1123_label_ok)
}

fn dns1035_label_ok(s: &str) -> bool {
    dns1123_label_ok(s) && s.chars().next().is_some_and(|c| c.is_ascii_lowercase())
}

/// Problems with `value` as a name of this rule; `prefix` validates a
/// generateName, which may end in '-' (upstream's prefix mode).
pub fn name_problems(rule: NameRule, value: &str, prefix: bool) -> Vec<String> {
    // In prefix mode upstream appends "a" so a trailing '-' passes.
    let candidate = if prefix {
        format!("{value}a")
    } else {
        value.to_string()
    };
    match rule {
        NameRule::PathSegment => return path_segment_problems(value, prefix),
        // Upstream checks a generateName as the whole address it will be.
        NameRule::IpAddress => return crate::validate::ip::ip_problems(value),
        _ => {}
    }
    let (ok, max, msg) = match rule {
        NameRule::Subdomain => (
            dns1123_subdomain_ok(&candidate),
            SUBDOMAIN_MAX,
            DNS1123_SUBDOMAIN_MSG,
        ),
        NameRule::Label => (dns1123_label_ok(&candidate), LABEL_MAX, DNS1123_LABEL_MSG),
        NameRule::Dns1035Label => (dns1035_label_ok(&candidate), LABEL_MAX, DNS1035_LABEL_MSG),
        NameRule::PathSegment | NameRule::IpAddress => return Vec::new(),
    };
    let mut problems = Vec::new();
    if candidate.len() > max {
        problems.push(format!("must be no more than {max} characters"));
    }
    if !ok {
        problems.push(msg.to_string());
    }
    problems
}

/// Upstream's IsValidPathSegmentName (IsValidPathSegmentPrefix for a generateName).
fn path_segment_problems(value: &str, prefix: bool) -> Vec<String> {
    if !prefix {
        if let Some(bad) = [".", ".."].into_iter().find(|bad| value == *bad) {
            return vec![format!("may not be '{bad}'")];
        }
    }
    ["/", "%"]
        .into_iter()
        .filter(|bad| value.contains(bad))
        .map(|bad| format!("may not contain '{bad}'"))
        .collect()
}

pub fn config_map_key(field: &str, key: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if key.len() > SUBDOMAIN_MAX {
        errs.push(FieldError::invalid(
            field,
            key,
            &format!("must be no more than {SUBDOMAIN_MAX} characters"),
        ));
    }
    let ok = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !ok {
        errs.push(FieldError::invalid(field, key, CONFIG_KEY_MSG));
    }
    if key == "." {
        errs.push(FieldError::invalid(field, key, "must not be '.'"));
    } else if key == ".." {
        errs.push(FieldError::invalid(field, key, "must not be '..'"));
    } else if key.starts_with("..") {
        errs.push(FieldError::invalid(field, key, "must not start with '..'"));
    }
    errs
}

fn qualified_name_part_ok(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && s.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && s.chars().last().is_some_and(|c| c.is_ascii_alphanumeric())
}

/// A label or annotation key: `[prefix/]name`.
pub fn qualified_name_problems(key: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let (prefix, name) = match key.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    if let Some(prefix) = prefix {
        if prefix.is_empty() {
            problems.push("prefix part must be non-empty".to_string());
        } else {
            for p in name_problems(NameRule::Subdomain, prefix, false) {
                problems.push(format!("prefix part {p}"));
            }
        }
        if name.contains('/') {
            problems.push(format!("{QUALIFIED_NAME_MSG} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"));
            return problems;
        }
    }
    if name.is_empty() {
        problems.push("name part must be non-empty".to_string());
    } else {
        if name.len() > LABEL_MAX {
            problems.push(format!(
                "name part must be no more than {LABEL_MAX} characters"
            ));
        }
        if !qualified_name_part_ok(name) {
            problems.push(QUALIFIED_NAME_MSG.to_string());
        }
    }
    problems
}

pub fn label_value_problems(value: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if value.len() > LABEL_MAX {
        problems.push(format!("must be no more than {LABEL_MAX} characters"));
    }
    if !value.is_empty() && !qualified_name_part_ok(value) {
        problems.push(LABEL_VALUE_MSG.to_string());
    }
    problems
}

/// Validates the metadata every object shares: name (by the kind's rule),
/// namespace, labels and annotations.
pub fn object_meta(object: &Value, rule: NameRule, namespaced: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let meta = object.get("metadata").unwrap_or(&Value::Null);
    let name = meta.get("name").and_then(Value::as_str).unwrap_or("");
    let generate_name = meta
        .get("generateName")
        .and_then(Value::as_str)
        .unwrap_or("");
    if name.is_empty() {
        if generate_name.is_empty() {
            errs.push(FieldError::required(
                "metadata.name",
                "name or generateName is required",
            ));
        }
    } else {
        for msg in name_problems(rule, name, false) {
            errs.push(FieldError::invalid("metadata.name", name, &msg));
        }
    }
    if !generate_name.is_empty() {
        for msg in name_problems(rule, generate_name, true) {
            errs.push(FieldError::invalid(
                "metadata.generateName",
                generate_name,
                &msg,
            ));
        }
    }
    let namespace = meta.get("namespace").and_then(Value::as_str).unwrap_or("");
    if namespaced {
        if namespace.is_empty() {
            errs.push(FieldError::required("metadata.namespace", ""));
        } else {
            for msg in name_problems(NameRule::Label, namespace, false) {
                errs.push(FieldError::invalid("metadata.namespace", namespace, &msg));
            }
        }
    } else if !namespace.is_empty() {
        errs.push(FieldError::forbidden(
            "metadata.namespace",
            "not allowed on this type",
        ));
    }
    match meta.get("labels") {
        Some(Value::Object(labels)) => {
            for (key, value) in labels {
                for msg in qualified_name_problems(key) {
                    errs.push(FieldError::invalid("metadata.labels", key, &msg));
                }
                match value.as_str() {
                    Some(v) => {
                        for msg in label_value_problems(v) {
                            errs.push(FieldError::invalid("metadata.labels", v, &msg));
                        }
                    }
                    None => errs.push(FieldError::invalid(
                        "metadata.labels",
                        key,
                        "label values must be strings",
                    )),
                }
            }
        }
        None | Some(Value::Null) => {}
        Some(_) => errs.push(FieldError::invalid(
            "metadata.labels",
            "",
            "must be a map of strings",
        )),
    }
    match meta.get("annotations") {
        Some(Value::Object(annotations)) => {
            let mut total = 0;
            for (key, value) in annotations {
                for msg in qualified_name_problems(&key.to_lowercase()) {
                    errs.push(FieldError::invalid("metadata.annotations", key, &msg));
                }
                total += key.len() + value.as_str().map(str::len).unwrap_or(0);
            }
            if total > ANNOTATIONS_MAX_BYTES {
                errs.push(FieldError::too_long(
                    "metadata.annotations",
                    "",
                    ANNOTATIONS_MAX_BYTES,
                ));
            }
        }
        None | Some(Value::Null) => {}
        Some(_) => errs.push(FieldError::invalid(
            "metadata.annotations",
            "",
            "must be a map of strings",
        )),
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn subdomain_names() {
        assert!(name_problems(NameRule::Subdomain, "web.example-1", false).is_empty());
        assert_eq!(
            name_problems(NameRule::Subdomain, "Bad_Name", false).len(),
            1
        );
        assert_eq!(
            name_problems(NameRule::Subdomain, &"a".repeat(254), false),
            vec!["must be no more than 253 characters"]
        );
        assert!(name_problems(NameRule::Subdomain, "web-", true).is_empty());
    }

    #[test]
    fn service_names_must_start_with_a_letter() {
        assert!(!name_problems(NameRule::Dns1035Label, "1web", false).is_empty());
        assert!(name_problems(NameRule::Dns1035Label, "web1", false).is_empty());
    }

    #[test]
    fn label_keys_and_values() {
        assert!(qualified_name_problems("app.kubernetes.io/name").is_empty());
        assert!(!qualified_name_problems("bad key").is_empty());
        assert!(!qualified_name_problems("Bad.Prefix/name").is_empty());
        assert!(label_value_problems("").is_empty());
        assert!(!label_value_problems("-bad").is_empty());
    }

    #[test]
    fn meta_requires_a_name_and_checks_labels() {
        let errs = object_meta(
            &json!({"metadata": {"namespace": "d"}}),
            NameRule::Subdomain,
            true,
        );
        assert_eq!(errs[0].field, "metadata.name");
        assert_eq!(
            errs[0].message,
            "Required value: name or generateName is required"
        );
        let errs = object_meta(
            &json!({"metadata": {"name": "x", "namespace": "d", "labels": {"a": "in valid"}}}),
            NameRule::Subdomain,
            true,
        );
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].field, "metadata.labels");
    }
}
