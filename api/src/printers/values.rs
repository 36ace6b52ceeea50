//! JSON access for printing. Objects may be partial or malformed, so every accessor falls back to a zero value instead of failing.

pub(super) use std::collections::{BTreeMap, BTreeSet};

pub(super) use chrono::{DateTime, TimeDelta, Utc};
pub(super) use serde_json::Value;

pub(crate) use super::cell::Cell;

/// The value at a JSON pointer; an explicit `null` counts as absent, as it
/// does when Go decodes into a pointer field.
pub(crate) fn get<'a>(v: &'a Value, ptr: &str) -> Option<&'a Value> {
    v.pointer(ptr).filter(|x| !x.is_null())
}

pub(crate) fn text<'a>(v: &'a Value, ptr: &str) -> &'a str {
    get(v, ptr).and_then(Value::as_str).unwrap_or("")
}

/// A string field with an API default applied when it is missing or empty.
pub(crate) fn str_or<'a>(v: &'a Value, ptr: &str, default: &'a str) -> &'a str {
    match text(v, ptr) {
        "" => default,
        s => s,
    }
}

/// A `*string` field: set (even to "") wins, absent prints `default`.
pub(crate) fn ptr_str<'a>(v: &'a Value, ptr: &str, default: &'a str) -> &'a str {
    get(v, ptr).and_then(Value::as_str).unwrap_or(default)
}

pub(crate) fn int_opt(v: &Value, ptr: &str) -> Option<i64> {
    let x = get(v, ptr)?;
    x.as_i64()
        .or_else(|| x.as_u64().map(|u| i64::try_from(u).unwrap_or(i64::MAX)))
        .or_else(|| x.as_f64().map(|f| f as i64))
}

pub(crate) fn int(v: &Value, ptr: &str) -> i64 {
    int_opt(v, ptr).unwrap_or(0)
}

pub(crate) fn boolean(v: &Value, ptr: &str) -> Option<bool> {
    get(v, ptr).and_then(Value::as_bool)
}

pub(crate) fn items<'a>(v: &'a Value, ptr: &str) -> &'a [Value] {
    get(v, ptr)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// Number of entries in a list or map field.
pub(crate) fn len_of(v: &Value, ptr: &str) -> i64 {
    let n = match get(v, ptr) {
        Some(Value::Array(a)) => a.len(),
        Some(Value::Object(m)) => m.len(),
        _ => 0,
    };
    i64::try_from(n).unwrap_or(i64::MAX)
}

pub(crate) fn string_map(v: &Value, ptr: &str) -> BTreeMap<String, String> {
    let Some(Value::Object(m)) = get(v, ptr) else {
        return BTreeMap::new();
    };
    m.iter()
        .map(|(k, val)| (k.clone(), scalar_text(val)))
        .collect()
}

/// Renders a scalar (quantity, int-or-string, ...) as text.
pub(crate) fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// A resource.Quantity field. JSON carries quantities as strings already in
/// their serialized form; a missing one prints like Go's zero Quantity.
pub(crate) fn quantity(v: &Value, ptr: &str) -> String {
    match get(v, ptr) {
        Some(q) => scalar_text(q),
        None => "0".to_string(),
    }
}

/// A `*resource.Quantity` upstream formats with `String()`, which prints
/// "<nil>" for a nil pointer.
pub(crate) fn quantity_ptr(v: &Value, ptr: &str) -> String {
    get(v, ptr)
        .map(scalar_text)
        .unwrap_or_else(|| "<nil>".to_string())
}

pub(crate) fn timestamp(v: &Value, ptr: &str) -> Option<DateTime<Utc>> {
    let s = get(v, ptr)?.as_str()?;
    DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

pub(crate) fn name(v: &Value) -> &str {
    text(v, "/metadata/name")
}

/// How long before the response the object was created.
pub(crate) fn age(v: &Value) -> Cell {
    Cell::since(timestamp(v, "/metadata/creationTimestamp"))
}

pub(crate) fn deleting(v: &Value) -> bool {
    get(v, "/metadata/deletionTimestamp").is_some()
}

/// JSON pointer segments must escape "~" and "/" (label keys contain "/").
pub(crate) fn escape_pointer(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

pub(crate) fn or_none(s: String) -> String {
    if s.is_empty() {
        "<none>".to_string()
    } else {
        s
    }
}

/// labels.FormatLabels: sorted `k=v` pairs, "<none>" when empty.
pub(crate) fn format_labels(v: &Value, ptr: &str) -> String {
    let pairs: Vec<String> = string_map(v, ptr)
        .into_iter()
        .map(|(k, val)| format!("{k}={val}"))
        .collect();
    or_none(pairs.join(","))
}

/// labels.Selector.String() for a metav1.LabelSelector. None means the
/// selector cannot be converted (upstream's LabelSelectorAsSelector error).
pub fn label_selector_string(sel: Option<&Value>) -> Option<String> {
    let Some(sel) = sel else {
        // A nil selector selects nothing; it prints as "" like an empty one.
        return Some(String::new());
    };
    let mut reqs: Vec<(String, String)> = Vec::new();
    for (k, val) in string_map(sel, "/matchLabels") {
        let s = format!("{k}={val}");
        reqs.push((k, s));
    }
    for expr in items(sel, "/matchExpressions") {
        let key = text(expr, "/key").to_string();
        let mut values: Vec<String> = items(expr, "/values").iter().map(scalar_text).collect();
        values.sort();
        let s = match text(expr, "/operator") {
            "In" | "NotIn" if values.is_empty() => return None,
            "Exists" | "DoesNotExist" if !values.is_empty() => return None,
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.clone(),
            "DoesNotExist" => format!("!{key}"),
            _ => return None,
        };
        reqs.push((key, s));
    }
    reqs.sort_by(|a, b| a.0.cmp(&b.0));
    Some(
        reqs.into_iter()
            .map(|(_, s)| s)
            .collect::<Vec<_>>()
            .join(","),
    )
}

/// metav1.FormatLabelSelector.
pub(crate) fn format_label_selector(sel: Option<&Value>) -> String {
    match label_selector_string(sel) {
        Some(s) => or_none(s),
        None => "<error>".to_string(),
    }
}

/// Comma-joined container names and images of a pod spec.
pub(crate) fn container_cells(spec: Option<&Value>) -> (String, String) {
    let containers = spec.map(|s| items(s, "/containers")).unwrap_or(&[]);
    let names: Vec<&str> = containers.iter().map(|c| text(c, "/name")).collect();
    let images: Vec<&str> = containers.iter().map(|c| text(c, "/image")).collect();
    (names.join(","), images.join(","))
}

pub(crate) fn print_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}

/// First condition of `type_` in a condition list, like upstream's helpers
/// that stop at the first match.
pub(crate) fn condition<'a>(conditions: &'a [Value], type_: &str) -> Option<&'a Value> {
    conditions.iter().find(|c| text(c, "/type") == type_)
}

pub(crate) fn condition_true(conditions: &[Value], type_: &str) -> bool {
    condition(conditions, type_).is_some_and(|c| text(c, "/status") == "True")
}

/// net.JoinHostPort: IPv6 literals need brackets.
pub(crate) fn join_host_port(host: &str, port: i64) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// "a,b,c + N more..." lists, shared by several printers.
pub(crate) fn list_with_more(list: &[String], more: bool, count: usize, max: usize) -> String {
    let ret = list.join(",");
    if more {
        return format!("{ret} + {} more...", count.saturating_sub(max));
    }
    if ret.is_empty() {
        return "<unset>".to_string();
    }
    ret
}

/// Formats a duration the way k8s.io/apimachinery's `duration.HumanDuration`
/// does: about two significant figures, so ages stay short in a table.
pub fn human_duration(d: TimeDelta) -> String {
    // Clock skew of under two seconds reads as "now" rather than an error.
    let seconds = d.num_seconds();
    if seconds < -1 {
        return "<invalid>".to_string();
    }
    if seconds < 0 {
        return "0s".to_string();
    }
    if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        if s == 0 {
            return format!("{minutes}m");
        }
        return format!("{minutes}m{s}s");
    }
    if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = minutes / 60;
    if hours < 8 {
        let m = minutes % 60;
        if m == 0 {
            return format!("{hours}h");
        }
        return format!("{hours}h{m}m");
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        if h == 0 {
            return format!("{}d", hours / 24);
        }
        return format!("{}d{}h", hours / 24, h);
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        if dy == 0 {
            return format!("{}y", hours / 24 / 365);
        }
        return format!("{}y{}d", hours / 24 / 365, dy);
    }
    format!("{}y", hours / 24 / 365)
}

/// The distinct IPs/hostnames of a load balancer status, sorted as upstream's
/// string set does. The server always prints wide, so nothing is clipped.
pub(crate) fn load_balancer_ingress(o: &Value, ptr: &str) -> Vec<String> {
    let set: BTreeSet<String> = items(o, ptr)
        .iter()
        .filter_map(|i| {
            let ip = text(i, "/ip");
            let host = text(i, "/hostname");
            if !ip.is_empty() {
                Some(ip.to_string())
            } else if !host.is_empty() {
                Some(host.to_string())
            } else {
                None
            }
        })
        .collect();
    set.into_iter().collect()
}

/// helper.GetAccessModesAsString: fixed order, duplicates dropped.
pub(crate) fn format_access_modes(o: &Value, ptr: &str) -> String {
    let modes: BTreeSet<&str> = items(o, ptr).iter().filter_map(Value::as_str).collect();
    [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ]
    .iter()
    .filter(|(mode, _)| modes.contains(mode))
    .map(|(_, short)| *short)
    .collect::<Vec<_>>()
    .join(",")
}

/// The beta storage-class annotation still wins over the spec field.
pub(crate) fn storage_class_annotation(o: &Value) -> Option<&str> {
    get(
        o,
        &format!(
            "/metadata/annotations/{}",
            escape_pointer("volume.beta.kubernetes.io/storage-class")
        ),
    )
    .and_then(Value::as_str)
}
