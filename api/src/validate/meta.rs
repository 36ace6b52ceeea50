//! Helpers shared by every group: Go's printing of bad values, label and
//! selector rules (apimachinery's meta/v1 validation), port and name formats.

use serde_json::{Map, Value};

use super::{child, index, list_of, map_of, opt, str_of};
use crate::error::FieldError;
use crate::kinds::NameRule;
use crate::validate::object_meta;

pub const NEGATIVE_MSG: &str = "must be greater than or equal to 0";
pub const PORT_RANGE_MSG: &str = "must be between 1 and 65535, inclusive";
const QUALIFIED_NAME_RULE: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const PERCENT_MSG: &str = "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')";

pub use crate::error::go_quote;

/// `%#v` of a `map[string]string`: nil prints as `map[string]string(nil)`,
/// keys sorted as Go's fmt sorts them.
pub fn go_string_map(map: Option<&Value>) -> String {
    go_typed_string_map("map[string]string", map)
}

pub fn go_typed_string_map(type_name: &str, map: Option<&Value>) -> String {
    let Some(map) = map.and_then(Value::as_object) else {
        return format!("{type_name}(nil)");
    };
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    let body: Vec<String> = entries
        .into_iter()
        .map(|(k, v)| format!("{}:{}", go_quote(k), go_quote(v.as_str().unwrap_or(""))))
        .collect();
    format!("{type_name}{{{}}}", body.join(", "))
}

/// `%#v` of a `[]string` (or a slice of a named string type).
pub fn go_string_slice(type_name: &str, list: Option<&Value>) -> String {
    let Some(items) = list.and_then(Value::as_array) else {
        return format!("{type_name}(nil)");
    };
    let body: Vec<String> = items
        .iter()
        .map(|v| go_quote(v.as_str().unwrap_or("")))
        .collect();
    format!("{type_name}{{{}}}", body.join(", "))
}

/// `%#v` of a `metav1.LabelSelector`, as upstream prints a selector it rejects.
pub fn go_label_selector(selector: Option<&Value>) -> String {
    let Some(selector) = selector.filter(|s| !s.is_null()) else {
        return "\"null\"".to_string();
    };
    let expressions = match opt(selector, "matchExpressions").and_then(Value::as_array) {
        None => "[]v1.LabelSelectorRequirement(nil)".to_string(),
        Some(items) => {
            let body: Vec<String> = items
                .iter()
                .map(|e| {
                    format!(
                        "v1.LabelSelectorRequirement{{Key:{}, Operator:{}, Values:{}}}",
                        go_quote(str_of(e, "key")),
                        go_quote(str_of(e, "operator")),
                        go_string_slice("[]string", opt(e, "values"))
                    )
                })
                .collect();
            format!("[]v1.LabelSelectorRequirement{{{}}}", body.join(", "))
        }
    };
    format!(
        "v1.LabelSelector{{MatchLabels:{}, MatchExpressions:{}}}",
        go_string_map(opt(selector, "matchLabels")),
        expressions
    )
}

/// `%#v` of an `intstr.IntOrString`.
pub fn go_int_or_string(value: &Value) -> String {
    match value {
        Value::String(s) => format!(
            "intstr.IntOrString{{Type:1, IntVal:0, StrVal:{}}}",
            go_quote(s)
        ),
        other => format!(
            "intstr.IntOrString{{Type:0, IntVal:{}, StrVal:\"\"}}",
            other.as_i64().unwrap_or(0)
        ),
    }
}

/// How field.Error prints a pointer-to-int bad value: the number, or `"null"`.
pub fn go_opt_int(value: Option<i64>) -> String {
    value.map_or_else(|| "\"null\"".to_string(), |v| v.to_string())
}

/// How field.Error prints a pointer-to-string bad value.
pub fn go_opt_str(value: Option<&str>) -> String {
    value.map_or_else(|| "\"null\"".to_string(), go_quote)
}

/// apimachinery's IsQualifiedName, message for message.
pub fn qualified_name_problems(value: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                problems.push("prefix part must be non-empty".to_string());
            } else {
                for msg in object_meta::name_problems(NameRule::Subdomain, prefix, false) {
                    problems.push(format!("prefix part {msg}"));
                }
            }
            *name
        }
        _ => {
            problems.push(format!("a qualified name {QUALIFIED_NAME_RULE} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"));
            return problems;
        }
    };
    if name.is_empty() {
        problems.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        problems.push("name part must be no more than 63 characters".to_string());
    }
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    if !valid {
        problems.push(format!("name part {QUALIFIED_NAME_RULE}"));
    }
    problems
}

/// ValidateLabelName: a label key (or anything keyed like one).
pub fn label_name(value: &str, path: &str) -> Vec<FieldError> {
    qualified_name_problems(value)
        .iter()
        .map(|msg| FieldError::invalid(path, value, msg))
        .collect()
}

/// ValidateLabels on a nested map (pod template labels, nodeSelector, ...).
pub fn labels(map: Option<&Value>, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (k, v) in map.and_then(Value::as_object).into_iter().flatten() {
        errs.extend(label_name(k, path));
        let value = v.as_str().unwrap_or("");
        for msg in object_meta::label_value_problems(value) {
            errs.push(FieldError::invalid(path, value, &msg));
        }
    }
    errs
}

/// ValidateAnnotations on nested metadata: keys are qualified names (compared
/// lowercased, as upstream does).
pub fn annotations(map: Option<&Value>, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut total = 0;
    for (k, v) in map.and_then(Value::as_object).into_iter().flatten() {
        for msg in qualified_name_problems(&k.to_lowercase()) {
            errs.push(FieldError::invalid(path, k, &msg));
        }
        total += k.len() + v.as_str().map_or(0, str::len);
    }
    if total > 256 * 1024 {
        errs.push(FieldError::too_long_bytes(path, 256 * 1024));
    }
    errs
}

/// ValidateLabelSelector (metav1).
pub fn label_selector(selector: Option<&Value>, path: &str) -> Vec<FieldError> {
    let Some(selector) = selector.filter(|s| !s.is_null()) else {
        return Vec::new();
    };
    let mut errs = labels(opt(selector, "matchLabels"), &child(path, "matchLabels"));
    let exprs_path = child(path, "matchExpressions");
    for (i, expr) in list_of(selector, "matchExpressions").iter().enumerate() {
        let expr_path = index(&exprs_path, i);
        let values = list_of(expr, "values");
        let operator = str_of(expr, "operator");
        match operator {
            "In" | "NotIn" => {
                if values.is_empty() {
                    errs.push(FieldError::required(
                        child(&expr_path, "values"),
                        "must be specified when `operator` is 'In' or 'NotIn'",
                    ));
                }
            }
            "Exists" | "DoesNotExist" => {
                if !values.is_empty() {
                    errs.push(FieldError::forbidden(
                        child(&expr_path, "values"),
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    ));
                }
            }
            _ => errs.push(FieldError::invalid(
                child(&expr_path, "operator"),
                operator,
                "not a valid selector operator",
            )),
        }
        errs.extend(label_name(str_of(expr, "key"), &child(&expr_path, "key")));
        for (j, value) in values.iter().enumerate() {
            let value = value.as_str().unwrap_or("");
            for msg in object_meta::label_value_problems(value) {
                errs.push(FieldError::invalid(
                    index(&child(&expr_path, "values"), j),
                    value,
                    &msg,
                ));
            }
        }
    }
    errs
}

/// A selector with neither matchLabels nor matchExpressions.
pub fn selector_is_empty(selector: &Value) -> bool {
    map_of(selector, "matchLabels").is_none_or(Map::is_empty)
        && list_of(selector, "matchExpressions").is_empty()
}

/// Whether `labels` satisfy a metav1.LabelSelector (matchLabels and every
/// expression, ANDed).
pub fn selector_matches(selector: &Value, labels: Option<&Map<String, Value>>) -> bool {
    let get = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
    let match_labels_ok = map_of(selector, "matchLabels")
        .into_iter()
        .flatten()
        .all(|(k, v)| get(k) == v.as_str());
    match_labels_ok
        && list_of(selector, "matchExpressions").iter().all(|expr| {
            let value = get(str_of(expr, "key"));
            let in_values = |v: &str| {
                list_of(expr, "values")
                    .iter()
                    .any(|candidate| candidate.as_str() == Some(v))
            };
            match str_of(expr, "operator") {
                "In" => value.is_some_and(in_values),
                "NotIn" => !value.is_some_and(in_values),
                "Exists" => value.is_some(),
                "DoesNotExist" => value.is_none(),
                _ => false,
            }
        })
}

/// Whether every pair of a map selector (RC, Service) is in `labels`.
pub fn map_selector_matches(selector: &Map<String, Value>, labels: Option<&Value>) -> bool {
    selector.iter().all(|(k, v)| {
        labels
            .and_then(|l| l.get(k))
            .and_then(Value::as_str)
            .is_some_and(|actual| Some(actual) == v.as_str())
    })
}

/// ValidateNonnegativeField.
pub fn nonnegative(value: i64, path: &str) -> Option<FieldError> {
    (value < 0).then(|| FieldError::invalid_rendered(path, &value.to_string(), NEGATIVE_MSG))
}

/// IsValidPortNum as an error on `path`.
pub fn port_number(value: i64, path: &str) -> Option<FieldError> {
    (!(1..=65535).contains(&value))
        .then(|| FieldError::invalid_rendered(path, &value.to_string(), PORT_RANGE_MSG))
}

/// IsValidPortName (IANA_SVC_NAME).
pub fn port_name_problems(name: &str) -> Vec<&'static str> {
    let mut problems = Vec::new();
    if name.len() > 15 {
        problems.push("must be no more than 15 characters");
    }
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        problems.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
    }
    if !name.chars().any(|c| c.is_ascii_lowercase()) {
        problems.push("must contain at least one letter (a-z)");
    }
    if name.contains("--") {
        problems.push("must not contain consecutive hyphens");
    }
    if name.starts_with('-') || name.ends_with('-') {
        problems.push("must not begin or end with a hyphen");
    }
    problems
}

pub fn port_name(name: &str, path: &str) -> Vec<FieldError> {
    port_name_problems(name)
        .into_iter()
        .map(|msg| FieldError::invalid(path, name, msg))
        .collect()
}

/// A name checked with one of the shared name rules (DNS label, subdomain).
pub fn name(rule: NameRule, value: &str, path: &str) -> Vec<FieldError> {
    object_meta::name_problems(rule, value, false)
        .iter()
        .map(|msg| FieldError::invalid(path, value, msg))
        .collect()
}

/// IsValidPercent plus the int branch of ValidatePositiveIntOrPercent.
pub fn positive_int_or_percent(value: &Value, path: &str) -> Vec<FieldError> {
    match value {
        Value::String(s) => {
            if percent_value(s).is_none() {
                vec![FieldError::invalid_rendered(
                    path,
                    &go_int_or_string(value),
                    PERCENT_MSG,
                )]
            } else {
                Vec::new()
            }
        }
        other => nonnegative(other.as_i64().unwrap_or(0), path)
            .into_iter()
            .collect(),
    }
}

/// The number before '%' of a valid percent string.
pub fn percent_value(s: &str) -> Option<i64> {
    let digits = s.strip_suffix('%')?;
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// IsNotMoreThan100Percent.
pub fn not_more_than_100_percent(value: &Value, path: &str) -> Option<FieldError> {
    let percent = value.as_str().and_then(percent_value)?;
    (percent > 100).then(|| {
        FieldError::invalid_rendered(
            path,
            &go_int_or_string(value),
            "must not be greater than 100%",
        )
    })
}

/// metadata.finalizers: qualified names, and (`kube_rule`, core's
/// ValidateObjectMeta for the kinds kube-apiserver itself serves) an
/// unqualified one must be one of the standard finalizers. The
/// apiextensions and aggregator servers use apimachinery's rule alone.
pub fn finalizers(object: &Value, kube_rule: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let meta = super::field(object, "metadata");
    for (i, finalizer) in list_of(meta, "finalizers").iter().enumerate() {
        let value = finalizer.as_str().unwrap_or("");
        let path = index("metadata.finalizers", i);
        if kube_rule {
            errs.extend(finalizer_name(value, &path));
        } else {
            errs.extend(
                qualified_name_problems(value)
                    .iter()
                    .map(|msg| FieldError::invalid(&path, value, msg)),
            );
        }
    }
    errs
}

/// ValidateFinalizerName plus validateKubeFinalizerName.
pub fn finalizer_name(value: &str, path: &str) -> Vec<FieldError> {
    let mut errs: Vec<FieldError> = qualified_name_problems(value)
        .iter()
        .map(|msg| FieldError::invalid(path, value, msg))
        .collect();
    if !value.contains('/') && !matches!(value, "kubernetes" | "orphan" | "foregroundDeletion") {
        errs.push(FieldError::invalid(
            path,
            value,
            "name is neither a standard finalizer name nor is it fully qualified",
        ));
    }
    errs
}

/// IsValidPathSegmentName (RBAC names, scale target names).
pub fn path_segment_name(value: &str, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if value == "." || value == ".." {
        errs.push(FieldError::invalid(
            path,
            value,
            &format!("may not be '{value}'"),
        ));
        return errs;
    }
    for illegal in ["/", "%"] {
        if value.contains(illegal) {
            errs.push(FieldError::invalid(
                path,
                value,
                &format!("may not contain '{illegal}'"),
            ));
        }
    }
    errs
}

/// IsValidCIDR.
pub fn cidr(value: &str, path: &str) -> Option<FieldError> {
    parse_cidr(value).is_none().then(|| {
        FieldError::invalid(
            path,
            value,
            "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
        )
    })
}

/// A CIDR as (address, prefix length).
pub fn parse_cidr(value: &str) -> Option<(std::net::IpAddr, u8)> {
    let (addr, bits) = value.split_once('/')?;
    let addr: std::net::IpAddr = addr.parse().ok()?;
    let bits: u8 = bits.parse().ok()?;
    let max = if addr.is_ipv4() { 32 } else { 128 };
    (bits <= max).then_some((addr, bits))
}

/// Whether `inner` (address, bits) lies inside `outer`.
pub fn cidr_contains(outer: (std::net::IpAddr, u8), addr: std::net::IpAddr) -> bool {
    use std::net::IpAddr;
    match (outer.0, addr) {
        (IpAddr::V4(o), IpAddr::V4(a)) => {
            let mask = if outer.1 == 0 {
                0
            } else {
                u32::MAX << (32 - outer.1)
            };
            u32::from(o) & mask == u32::from(a) & mask
        }
        (IpAddr::V6(o), IpAddr::V6(a)) => {
            let mask = if outer.1 == 0 {
                0
            } else {
                u128::MAX << (128 - outer.1)
            };
            u128::from(o) & mask == u128::from(a) & mask
        }
        _ => false,
    }
}

/// The value as Go's typed structs see it: null, false, 0, "" and empty
/// lists and maps are what an unset field holds, so they are dropped. This
/// keeps a protobuf body's zero values (`hostPort: 0`) from counting as a
/// change against a stored object that omits them.
pub fn semantic(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), semantic(v)))
                .filter(|(_, v)| !is_zero(v))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(semantic).collect()),
        other => other.clone(),
    }
}

fn is_zero(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
    }
}

/// Whether two values are equal the way upstream's semantic equality sees
/// them (zero values and absence alike).
pub fn semantically_equal(a: &Value, b: &Value) -> bool {
    semantic(a) == semantic(b)
}

/// A compact description of how two JSON values differ, standing in for the
/// go-cmp diff upstream appends to some Forbidden messages.
pub fn diff(old: &Value, new: &Value) -> String {
    let mut lines = Vec::new();
    diff_into("", old, new, &mut lines);
    lines.join("\n")
}

fn diff_into(path: &str, old: &Value, new: &Value, lines: &mut Vec<String>) {
    if old == new {
        return;
    }
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let sub = child(path, k);
                diff_into(
                    &sub,
                    a.get(k).unwrap_or(&Value::Null),
                    b.get(k).unwrap_or(&Value::Null),
                    lines,
                );
            }
        }
        _ => {
            lines.push(format!("- {path}: {old}"));
            lines.push(format!("+ {path}: {new}"));
        }
    }
}

const CONDITION_REASON_FMT: &str = "[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?";
const CONDITION_REASON_MSG: &str = "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'";
const MAX_CONDITION_REASON_BYTES: usize = 1024;
const MAX_CONDITION_MESSAGE_BYTES: usize = 32 * 1024;

/// The condition reason format, `[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?`.
fn is_condition_reason(reason: &str) -> bool {
    let bytes = reason.as_bytes();
    let inner = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b',' | b':');
    match bytes {
        [] => false,
        [only] => only.is_ascii_alphabetic(),
        [first, middle @ .., last] => {
            first.is_ascii_alphabetic()
                && middle.iter().all(inner)
                && (last.is_ascii_alphanumeric() || *last == b'_')
        }
    }
}

/// metav1 ValidateConditions: each condition's type, status, observed
/// generation, transition time, reason and message, and no type twice.
pub fn conditions(list: &[Value], path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (i, condition) in list.iter().enumerate() {
        let at = format!("{path}[{i}]");
        let text = |key: &str| condition.get(key).and_then(Value::as_str).unwrap_or("");
        let kind = text("type");
        if seen.contains(&kind) {
            errs.push(FieldError::duplicate(format!("{at}.type"), kind));
        } else {
            seen.push(kind);
        }
        errs.extend(label_name(kind, &format!("{at}.type")));
        let status = text("status");
        if !matches!(status, "True" | "False" | "Unknown") {
            errs.push(FieldError::not_supported(
                format!("{at}.status"),
                status,
                &["False", "True", "Unknown"],
            ));
        }
        let generation = condition
            .get("observedGeneration")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        if generation < 0 {
            errs.push(FieldError::invalid_rendered(
                format!("{at}.observedGeneration"),
                &generation.to_string(),
                "must be greater than or equal to zero",
            ));
        }
        if text("lastTransitionTime").is_empty() {
            errs.push(FieldError::required(
                format!("{at}.lastTransitionTime"),
                "must be set",
            ));
        }
        let reason = text("reason");
        if reason.is_empty() {
            errs.push(FieldError::required(format!("{at}.reason"), "must be set"));
        } else {
            if !is_condition_reason(reason) {
                let message = format!(
                    "{CONDITION_REASON_MSG} (e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is '{CONDITION_REASON_FMT}')"
                );
                errs.push(FieldError::invalid(
                    format!("{at}.reason"),
                    reason,
                    &message,
                ));
            }
            if reason.len() > MAX_CONDITION_REASON_BYTES {
                errs.push(FieldError::too_long_bytes(
                    format!("{at}.reason"),
                    MAX_CONDITION_REASON_BYTES,
                ));
            }
        }
        if text("message").len() > MAX_CONDITION_MESSAGE_BYTES {
            errs.push(FieldError::too_long_bytes(
                format!("{at}.message"),
                MAX_CONDITION_MESSAGE_BYTES,
            ));
        }
    }
    errs
}

#[cfg(test)]
mod condition_reason_tests {
    use super::is_condition_reason;

    #[test]
    fn condition_reasons_follow_upstreams_format() {
        for ok in [
            "A",
            "a_",
            "MyName",
            "ReasonA,ReasonB",
            "ReasonA:ReasonB",
            "x9",
        ] {
            assert!(is_condition_reason(ok), "{ok}");
        }
        for bad in ["", "1a", "_a", "a,", "a:", "a-b", "a b"] {
            assert!(!is_condition_reason(bad), "{bad}");
        }
    }
}
