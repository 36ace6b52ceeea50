//! Go's own checks on the scalar types a Kubernetes body carries, with the
//! messages Go gives: `time.Parse` with RFC 3339 layouts (metav1.Time and
//! MicroTime), `base64.StdEncoding` (`[]byte` fields), and `fmt`'s `%+v`
//! of a decoded JSON value (upstream quotes a strategic merge patch so).

use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TimeLayout {
    /// metav1.Time: `2006-01-02T15:04:05Z07:00`.
    Rfc3339,
    /// metav1.MicroTime: `2006-01-02T15:04:05.000000Z07:00`.
    Rfc3339Micro,
}

#[derive(Debug, Clone, Copy)]
enum Element {
    Literal(&'static str),
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
    Micros,
    Zone,
}

impl Element {
    /// The layout text Go quotes for the element.
    fn layout(self) -> &'static str {
        match self {
            Element::Literal(text) => text,
            Element::Year => "2006",
            Element::Month => "01",
            Element::Day => "02",
            Element::Hour => "15",
            Element::Minute => "04",
            Element::Second => "05",
            Element::Micros => ".000000",
            Element::Zone => "Z07:00",
        }
    }
}

/// Parses `value` as Go's `time.Parse(layout, value)` would, returning
/// Go's error text when it does not parse.
pub(crate) fn parse_go_time(value: &str, layout: TimeLayout) -> Result<(), String> {
    use Element::*;
    // RFC3339Micro is RFC3339 with six fraction digits before the zone.
    const RFC3339: [Element; 12] = [
        Year,
        Literal("-"),
        Month,
        Literal("-"),
        Day,
        Literal("T"),
        Hour,
        Literal(":"),
        Minute,
        Literal(":"),
        Second,
        Zone,
    ];
    let micro: Vec<Element>;
    let (layout_text, elements): (&str, &[Element]) = match layout {
        TimeLayout::Rfc3339 => ("2006-01-02T15:04:05Z07:00", &RFC3339),
        TimeLayout::Rfc3339Micro => {
            micro = RFC3339[..11]
                .iter()
                .copied()
                .chain([Micros, Zone])
                .collect();
            ("2006-01-02T15:04:05.000000Z07:00", &micro)
        }
    };
    let cannot_parse = |rest: &str, element: Element| {
        format!(
            "parsing time {} as {}: cannot parse {} as {}",
            go_quote(value),
            go_quote(layout_text),
            go_quote(rest),
            go_quote(element.layout())
        )
    };
    let out_of_range =
        |what: &str| format!("parsing time {}: {what} out of range", go_quote(value));
    let (mut year, mut month, mut day) = (0_i64, 0_i64, 0_i64);
    let mut rest = value;
    for (position, &element) in elements.iter().enumerate() {
        let hold = rest;
        let bad = || cannot_parse(hold, element);
        match element {
            Literal(text) => rest = rest.strip_prefix(text).ok_or_else(bad)?,
            Year => {
                let digits = rest.get(..4).ok_or_else(bad)?;
                year = go_atoi(digits).ok_or_else(bad)?;
                rest = &rest[4..];
            }
            Month | Day | Minute => {
                let (number, after) = two_digits(rest).ok_or_else(bad)?;
                rest = after;
                match element {
                    Month if !(1..=12).contains(&number) => return Err(out_of_range("month")),
                    Minute if number >= 60 => return Err(out_of_range("minute")),
                    Month => month = number,
                    Day => day = number,
                    _ => {}
                }
            }
            Hour => {
                let (number, after) = one_or_two_digits(rest).ok_or_else(bad)?;
                if number >= 24 {
                    return Err(out_of_range("hour"));
                }
                rest = after;
            }
            Second => {
                let (number, after) = two_digits(rest).ok_or_else(bad)?;
                if number >= 60 {
                    return Err(out_of_range("second"));
                }
                rest = after;
                // Go takes a fraction the layout does not name.
                let next_is_fraction = matches!(elements.get(position + 1), Some(Micros));
                let bytes = rest.as_bytes();
                if !next_is_fraction
                    && bytes.len() >= 2
                    && matches!(bytes[0], b'.' | b',')
                    && bytes[1].is_ascii_digit()
                {
                    let digits = bytes[1..].iter().take_while(|b| b.is_ascii_digit()).count();
                    rest = &rest[1 + digits..];
                }
            }
            Micros => {
                let bytes = rest.as_bytes();
                if bytes.len() < 7
                    || !matches!(bytes[0], b'.' | b',')
                    || !bytes[1..7].iter().all(u8::is_ascii_digit)
                {
                    return Err(bad());
                }
                rest = &rest[7..];
            }
            Zone => {
                if let Some(after) = rest.strip_prefix('Z') {
                    rest = after;
                    continue;
                }
                let bytes = rest.as_bytes();
                if bytes.len() < 6 || bytes[3] != b':' {
                    return Err(bad());
                }
                let (hours, _) = two_digits(&rest[1..3]).ok_or_else(bad)?;
                let (minutes, _) = two_digits(&rest[4..6]).ok_or_else(bad)?;
                if hours > 24 {
                    return Err(out_of_range("time zone offset hour"));
                }
                if minutes > 60 {
                    return Err(out_of_range("time zone offset minute"));
                }
                if !matches!(bytes[0], b'+' | b'-') {
                    return Err(bad());
                }
                rest = &rest[6..];
            }
        }
    }
    if !rest.is_empty() {
        return Err(format!(
            "parsing time {}: extra text: {}",
            go_quote(value),
            go_quote(rest)
        ));
    }
    if day < 1 || day > days_in(month, year) {
        return Err(out_of_range("day"));
    }
    Ok(())
}

fn two_digits(text: &str) -> Option<(i64, &str)> {
    let bytes = text.as_bytes();
    if bytes.len() < 2 || !bytes[0].is_ascii_digit() || !bytes[1].is_ascii_digit() {
        return None;
    }
    Some((
        i64::from(bytes[0] - b'0') * 10 + i64::from(bytes[1] - b'0'),
        &text[2..],
    ))
}

fn one_or_two_digits(text: &str) -> Option<(i64, &str)> {
    let bytes = text.as_bytes();
    match bytes {
        [a, b, ..] if a.is_ascii_digit() && b.is_ascii_digit() => two_digits(text),
        [a, ..] if a.is_ascii_digit() => Some((i64::from(a - b'0'), &text[1..])),
        _ => None,
    }
}

/// Go's time.atoi: an optional sign, then digits only.
fn go_atoi(text: &str) -> Option<i64> {
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let number: i64 = digits.parse().ok()?;
    Some(if negative { -number } else { number })
}

fn days_in(month: i64, year: i64) -> i64 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// The time package's quote: ASCII as is with `"` and `\` escaped, other
/// bytes as `\xNN`.
fn go_quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        if c.is_ascii() && c >= ' ' {
            if c == '"' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        } else {
            let mut buffer = [0; 4];
            for byte in c.encode_utf8(&mut buffer).bytes() {
                out.push_str(&format!("\\x{byte:02x}"));
            }
        }
    }
    out.push('"');
    out
}

/// The form Go writes back a `[]byte` it decoded from `text` (which
/// [`base64_error_offset`] accepted): line breaks dropped and nonzero
/// trailing bits cleared. None when `text` is already that form, which
/// is the usual case and costs no allocation.
pub(crate) fn canonical_base64(text: &str) -> Option<String> {
    use base64::Engine as _;
    if !text.ends_with('=') && !text.contains(['\r', '\n']) {
        return None;
    }
    let lenient = base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new().with_decode_allow_trailing_bits(true),
    );
    let joined: String = text.chars().filter(|c| !matches!(c, '\r' | '\n')).collect();
    let bytes = lenient.decode(&joined).ok()?;
    let canonical = base64::engine::general_purpose::STANDARD.encode(bytes);
    (canonical != text).then_some(canonical)
}

/// Where Go's `base64.StdEncoding.Decode` stops on `text` (its
/// CorruptInputError offset), or None when it decodes. Go skips `\r` and
/// `\n`, requires padding, and ignores nonzero trailing bits.
pub(crate) fn base64_error_offset(text: &str) -> Option<usize> {
    let src = text.as_bytes();
    let valid = |b: u8| b.is_ascii_alphanumeric() || b == b'+' || b == b'/';
    let skip_newlines = |mut at: usize| {
        while at < src.len() && matches!(src[at], b'\r' | b'\n') {
            at += 1;
        }
        at
    };
    let mut si = 0;
    loop {
        let mut j = 0;
        while j < 4 {
            if si == src.len() {
                return if j == 0 { None } else { Some(si - j) };
            }
            let byte = src[si];
            si += 1;
            if valid(byte) {
                j += 1;
                continue;
            }
            if matches!(byte, b'\r' | b'\n') {
                continue;
            }
            if byte != b'=' {
                return Some(si - 1);
            }
            // Padding: the end of the data.
            match j {
                0 | 1 => return Some(si - 1),
                2 => {
                    si = skip_newlines(si);
                    if si == src.len() {
                        return Some(src.len());
                    }
                    if src[si] != b'=' {
                        return Some(si - 1);
                    }
                    si += 1;
                }
                _ => {}
            }
            si = skip_newlines(si);
            return if si < src.len() { Some(si) } else { None };
        }
    }
}

/// `fmt.Sprintf("%+v", v)` of the value Go's JSON decoder makes of `value`
/// (maps with sorted keys, integers as int64, other numbers as float64).
pub fn go_format(value: &Value) -> String {
    let mut out = String::new();
    write_go(value, &mut out);
    out
}

fn write_go(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("<nil>"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::String(s) => out.push_str(s),
        Value::Number(n) => match n.as_i64() {
            Some(i) => out.push_str(&i.to_string()),
            None => out.push_str(&go_float(n.as_f64().unwrap_or_default())),
        },
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write_go(item, out);
            }
            out.push(']');
        }
        Value::Object(fields) => {
            let mut keys: Vec<&String> = fields.keys().collect();
            keys.sort();
            out.push_str("map[");
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(key);
                out.push(':');
                write_go(&fields[key], out);
            }
            out.push(']');
        }
    }
}

/// A bad value as upstream's `field.Error` prints it: simple types with
/// `%v`, strings with `%q`, nil as `null`, maps and slices with `%#v`.
pub fn field_value(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::String(s) => serde_json::to_string(s).unwrap_or_default(),
        Value::Array(_) | Value::Object(_) => go_sharp_v(value),
        scalar => go_format(scalar),
    }
}

/// `fmt.Sprintf("%#v", v)` of the value Go's JSON decoder makes of `value`.
pub fn go_sharp_v(value: &Value) -> String {
    let mut out = String::new();
    write_go_sharp(value, &mut out, false);
    out
}

fn write_go_sharp(value: &Value, out: &mut String, nested: bool) {
    match value {
        Value::Null if nested => out.push_str("interface {}(nil)"),
        Value::Null => out.push_str("<nil>"),
        Value::String(s) => out.push_str(&serde_json::to_string(s).unwrap_or_default()),
        Value::Array(items) => {
            out.push_str("[]interface {}{");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_go_sharp(item, out, true);
            }
            out.push('}');
        }
        Value::Object(fields) => {
            let mut keys: Vec<&String> = fields.keys().collect();
            keys.sort();
            out.push_str("map[string]interface {}{");
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&serde_json::to_string(key).unwrap_or_default());
                out.push(':');
                write_go_sharp(&fields[key], out, true);
            }
            out.push('}');
        }
        scalar => write_go(scalar, out),
    }
}

/// `%v` of a float64: `%g` with the shortest digits, so an exponent (at
/// least two digits, signed) below 1e-4 or from 1e6 up.
pub fn go_float(f: f64) -> String {
    if f == 0.0 || !f.is_finite() {
        return format!("{f}");
    }
    let exponent = f.abs().log10().floor() as i32;
    if (-4..6).contains(&exponent) {
        return format!("{f}");
    }
    let formatted = format!("{f:e}");
    let (mantissa, exp) = formatted.split_once('e').unwrap_or((&formatted, "0"));
    let (sign, digits) = match exp.strip_prefix('-') {
        Some(digits) => ('-', digits),
        None => ('+', exp),
    };
    format!("{mantissa}e{sign}{digits:0>2}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_parse_or_fail_as_go_says() {
        let rfc = TimeLayout::Rfc3339;
        assert_eq!(parse_go_time("2024-02-29T10:00:00Z", rfc), Ok(()));
        assert_eq!(parse_go_time("2024-02-29T10:00:00.123+02:00", rfc), Ok(()));
        assert_eq!(
            parse_go_time("yesterday", rfc).unwrap_err(),
            r#"parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006""#
        );
        assert_eq!(
            parse_go_time("2024-01-01 10:00:00Z", rfc).unwrap_err(),
            r#"parsing time "2024-01-01 10:00:00Z" as "2006-01-02T15:04:05Z07:00": cannot parse " 10:00:00Z" as "T""#
        );
        assert_eq!(
            parse_go_time("2024-13-01T00:00:00Z", rfc).unwrap_err(),
            r#"parsing time "2024-13-01T00:00:00Z": month out of range"#
        );
        assert_eq!(
            parse_go_time("2023-02-29T00:00:00Z", rfc).unwrap_err(),
            r#"parsing time "2023-02-29T00:00:00Z": day out of range"#
        );
        assert_eq!(
            parse_go_time("2024-01-01T00:00:00Zjunk", rfc).unwrap_err(),
            r#"parsing time "2024-01-01T00:00:00Zjunk": extra text: "junk""#
        );
        assert_eq!(
            parse_go_time("2024-01-01T00:00:00", rfc).unwrap_err(),
            r#"parsing time "2024-01-01T00:00:00" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "Z07:00""#
        );
        let micro = TimeLayout::Rfc3339Micro;
        assert_eq!(parse_go_time("2024-01-01T00:00:00.000001Z", micro), Ok(()));
        assert_eq!(
            parse_go_time("2024-01-01T00:00:00Z", micro).unwrap_err(),
            r#"parsing time "2024-01-01T00:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000""#
        );
    }

    #[test]
    fn base64_offsets_are_gos() {
        assert_eq!(base64_error_offset(""), None);
        assert_eq!(base64_error_offset("aGVsbG8="), None);
        assert_eq!(base64_error_offset("aGVs\nbG8="), None);
        assert_eq!(
            base64_error_offset("aGVsbG9="),
            None,
            "trailing bits are ignored"
        );
        assert_eq!(base64_error_offset("not base64!"), Some(3));
        assert_eq!(base64_error_offset("abc"), Some(0));
        assert_eq!(base64_error_offset("ab=c"), Some(2));
        assert_eq!(base64_error_offset("ab=="), None);
        assert_eq!(base64_error_offset("ab==ab=="), Some(4));
    }

    #[test]
    fn values_print_as_gos_percent_plus_v() {
        let value = serde_json::json!({"spec": {"replicas": "three", "b": [1, 1.5, true, null]}});
        assert_eq!(
            go_format(&value),
            "map[spec:map[b:[1 1.5 true <nil>] replicas:three]]"
        );
        assert_eq!(go_float(123456.5), "123456.5");
        assert_eq!(go_float(1e20), "1e+20");
        assert_eq!(go_float(0.00001), "1e-05");
    }

    #[test]
    fn field_values_print_as_field_error_does() {
        use serde_json::json;
        assert_eq!(field_value(&json!("a")), r#""a""#);
        assert_eq!(field_value(&json!(3)), "3");
        assert_eq!(field_value(&json!(null)), "null");
        assert_eq!(
            field_value(&json!({"b": [1, "x", null], "a": true})),
            r#"map[string]interface {}{"a":true, "b":[]interface {}{1, "x", interface {}(nil)}}"#
        );
    }
}
