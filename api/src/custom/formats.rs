//! The string formats kube-openapi checks in custom resources (its strfmt
//! registry, with govalidator's patterns as Kubernetes vendors them); a
//! format it does not know passes, as upstream. Patterns spell out ASCII
//! classes (`[0-9]`, `[\t\n\f\r ]`) where Go's `\d` and `\s` are ASCII and
//! Rust's are not.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::LazyLock;

use regex::Regex;

mod mail_address;
mod request_uri;

fn pattern(source: &str) -> Regex {
    Regex::new(source).unwrap_or_else(|e| panic!("format pattern {source}: {e}"))
}

static UUID: LazyLock<Regex> = LazyLock::new(|| {
    pattern("(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
});
static UUID3: LazyLock<Regex> = LazyLock::new(|| {
    pattern("(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
});
static UUID4: LazyLock<Regex> = LazyLock::new(|| {
    pattern("(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
});
static UUID5: LazyLock<Regex> = LazyLock::new(|| {
    pattern("(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
});
/// kube-openapi's HostnamePattern: labels of letters, digits and symbols
/// of any script; with dots, a last label of 2-63 letters.
static HOSTNAME: LazyLock<Regex> = LazyLock::new(|| {
    pattern(
        r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$",
    )
});
static BASE64: LazyLock<Regex> = LazyLock::new(|| {
    pattern("^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$")
});
static CREDIT_CARD: LazyLock<Regex> = LazyLock::new(|| {
    pattern("^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35[0-9]{3})[0-9]{11})$")
});
/// strfmt's durationMatcher: a count and a unit, anywhere in the string.
static DURATION_PART: LazyLock<Regex> =
    LazyLock::new(|| pattern("([0-9]+)[\\t\\n\\f\\r ]*([A-Za-zµ]+)"));
static SSN: LazyLock<Regex> = LazyLock::new(|| pattern("^[0-9]{3}[- ]?[0-9]{2}[- ]?[0-9]{4}$"));
static HEX_COLOR: LazyLock<Regex> =
    LazyLock::new(|| pattern("^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$"));
static RGB_COLOR: LazyLock<Regex> = LazyLock::new(|| {
    let byte = "(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])";
    let space = r"[\t\n\f\r ]*";
    pattern(&format!(
        r"^rgb\({space}{byte}{space},{space}{byte}{space},{space}{byte}{space}\)$"
    ))
});

/// Whether `value` is a valid string of `format`.
pub fn valid(format: &str, value: &str) -> bool {
    match format {
        "date-time" | "datetime" => chrono::DateTime::parse_from_rfc3339(value).is_ok(),
        "date" => chrono::NaiveDate::parse_from_str(value, "%Y-%m-%d").is_ok(),
        "uuid" => UUID.is_match(value),
        "uuid3" => UUID3.is_match(value),
        "uuid4" => UUID4.is_match(value),
        "uuid5" => UUID5.is_match(value),
        "ipv4" => value.parse::<Ipv4Addr>().is_ok(),
        "ipv6" => value.parse::<Ipv6Addr>().is_ok(),
        "cidr" => cidr(value),
        "mac" => mac(value),
        "hostname" => hostname(value),
        "byte" => BASE64.is_match(value),
        "email" => mail_address::parses(value),
        "uri" => request_uri::parses(value),
        "isbn" => isbn(value, 10) || isbn(value, 13),
        "isbn10" => isbn(value, 10),
        "isbn13" => isbn(value, 13),
        "creditcard" => credit_card(value),
        "ssn" => SSN.is_match(value),
        "hexcolor" => HEX_COLOR.is_match(value),
        "rgbcolor" => RGB_COLOR.is_match(value),
        "bsonobjectid" => value.len() == 24 && value.chars().all(|c| c.is_ascii_hexdigit()),
        "duration" => go_duration(value) || scala_duration(value),
        _ => true,
    }
}

fn cidr(value: &str) -> bool {
    let Some((ip, bits)) = value.split_once('/') else {
        return false;
    };
    let Ok(bits) = bits.parse::<u8>() else {
        return false;
    };
    match ip.parse::<IpAddr>() {
        Ok(IpAddr::V4(_)) => bits <= 32,
        Ok(IpAddr::V6(_)) => bits <= 128,
        Err(_) => false,
    }
}

fn mac(value: &str) -> bool {
    let groups: Vec<&str> = value.split([':', '-']).collect();
    matches!(groups.len(), 6 | 8 | 20)
        && groups
            .iter()
            .all(|g| g.len() == 2 && g.chars().all(|c| c.is_ascii_hexdigit()))
}

/// kube-openapi's IsHostname: the pattern, at most 255 bytes, labels of
/// at most 63.
fn hostname(value: &str) -> bool {
    HOSTNAME.is_match(value) && value.len() <= 255 && value.split('.').all(|l| l.len() <= 63)
}

/// Whether Go's time.ParseDuration takes `value`: an optional sign, then
/// "0" or one or more decimal numbers each with a unit.
fn go_duration(value: &str) -> bool {
    let rest = value.strip_prefix(['-', '+']).unwrap_or(value);
    if rest == "0" {
        return true;
    }
    let mut rest = rest;
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        let whole = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        rest = &rest[whole..];
        let mut fraction = 0;
        if let Some(after) = rest.strip_prefix('.') {
            fraction = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            rest = &after[fraction..];
        }
        if whole == 0 && fraction == 0 {
            return false;
        }
        let unit_len = rest.len()
            - rest
                .trim_start_matches(|c: char| c != '.' && !c.is_ascii_digit())
                .len();
        if !matches!(
            &rest[..unit_len],
            "ns" | "us" | "µs" | "μs" | "ms" | "s" | "m" | "h"
        ) {
            return false;
        }
        rest = &rest[unit_len..];
    }
    true
}

/// strfmt's fallback for Scala-style durations ("3 days", "1 hr"): some
/// count and unit in the string names a unit, exactly (any case) or, for
/// each unit's longest name, as a prefix ("hours", "seconds").
fn scala_duration(value: &str) -> bool {
    const UNITS: [&[&str]; 8] = [
        &["ns", "nano"],
        &["us", "µs", "micro"],
        &["ms", "milli"],
        &["s", "sec"],
        &["m", "min"],
        &["h", "hr", "hour"],
        &["d", "day"],
        &["w", "wk", "week"],
    ];
    let mut named = false;
    for found in DURATION_PART.captures_iter(value) {
        // A count past an int is an error, whatever else the string says.
        if found[1].parse::<i64>().is_err() {
            return false;
        }
        let unit = found[2].to_lowercase();
        named |= UNITS.iter().any(|names| {
            names.iter().enumerate().any(|(i, name)| {
                unit.eq_ignore_ascii_case(name) || (i == names.len() - 1 && unit.starts_with(name))
            })
        });
    }
    named
}

/// govalidator's IsISBN: spaces and dashes dropped, then the digits and
/// their check digit.
fn isbn(value: &str, version: usize) -> bool {
    let digits: Vec<u8> = value
        .bytes()
        .filter(|b| !matches!(b, b'\t' | b'\n' | b'\x0c' | b'\r' | b' ' | b'-'))
        .collect();
    let digit = |b: u8| u32::from(b.wrapping_sub(b'0'));
    if version == 10 {
        let shaped = digits.len() == 10
            && digits[..9].iter().all(u8::is_ascii_digit)
            && (digits[9].is_ascii_digit() || digits[9] == b'X');
        if !shaped {
            return false;
        }
        let head: u32 = (0..9u32).map(|i| (i + 1) * digit(digits[i as usize])).sum();
        let last = if digits[9] == b'X' {
            10
        } else {
            digit(digits[9])
        };
        (head + 10 * last).is_multiple_of(11)
    } else {
        if digits.len() != 13 || !digits.iter().all(u8::is_ascii_digit) {
            return false;
        }
        let sum: u32 = (0..12)
            .map(|i| if i % 2 == 0 { 1 } else { 3 } * digit(digits[i]))
            .sum();
        digit(digits[12]) == (10 - sum % 10) % 10
    }
}

/// govalidator's IsCreditCard: the digits (all else dropped) of a known
/// issuer's shape, passing the Luhn check.
fn credit_card(value: &str) -> bool {
    let digits: String = value.chars().filter(char::is_ascii_digit).collect();
    if !CREDIT_CARD.is_match(&digits) {
        return false;
    }
    let sum: u32 = digits
        .bytes()
        .rev()
        .enumerate()
        .map(|(i, b)| {
            let d = u32::from(b - b'0');
            if i % 2 == 1 {
                let doubled = d * 2;
                if doubled >= 10 {
                    doubled % 10 + 1
                } else {
                    doubled
                }
            } else {
                d
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

#[cfg(test)]
mod tests {
    use super::valid;

    #[test]
    fn formats_accept_and_refuse() {
        assert!(valid("date-time", "2024-01-02T03:04:05Z"));
        assert!(!valid("date-time", "yesterday"));
        assert!(valid("date", "2024-02-29"));
        assert!(!valid("date", "2023-02-29"));
        assert!(valid("uuid", "123e4567-e89b-12d3-a456-426614174000"));
        assert!(!valid("uuid4", "123e4567-e89b-12d3-a456-426614174000"));
        assert!(valid("ipv4", "10.0.0.1"));
        assert!(!valid("ipv4", "10.0.0.256"));
        assert!(valid("cidr", "10.0.0.0/8"));
        assert!(!valid("cidr", "10.0.0.0/33"));
        assert!(valid("mac", "00:1a:2b:3c:4d:5e"));
        assert!(valid("hostname", "a-b.example.com"));
        assert!(!valid("hostname", "-a.example.com"));
        assert!(valid("byte", "aGVsbG8="));
        assert!(!valid("byte", "not base64!"));
        assert!(valid("email", "a@example.com"));
        assert!(valid("no-such-format", "anything"));
    }

    /// kube-openapi's patterns and govalidator's checks, case by case.
    #[test]
    fn formats_follow_kube_openapi() {
        for (format, value, expected) in [
            // UUIDs: any case, dashes optional, uuid4/5 with the RFC variant.
            ("uuid", "123E4567E89B12D3A456426614174000", true),
            ("uuid", "{123e4567-e89b-12d3-a456-426614174000}", false),
            ("uuid4", "123e4567-e89b-42d3-a456-426614174000", true),
            ("uuid4", "123e4567-e89b-42d3-c456-426614174000", false),
            ("uuid3", "123e4567-e89b-32d3-c456-426614174000", true),
            // Hostnames: one label, or a top-level label of letters.
            ("hostname", "localhost", true),
            ("hostname", "a.123", false),
            ("hostname", "bücher.example", true),
            ("hostname", &format!("{}.com", "a".repeat(64)), false),
            // byte: padded base64, never empty.
            ("byte", "", false),
            ("byte", "aGk=", true),
            ("byte", "aGk", false),
            ("isbn10", "0-306-40615-2", true),
            ("isbn10", "0306406153", false),
            ("isbn10", "080442957X", true),
            ("isbn13", "978-0-306-40615-7", true),
            ("isbn13", "9780306406158", false),
            ("isbn", "978 0 306 40615 7", true),
            ("creditcard", "4111 1111 1111 1111", true),
            ("creditcard", "4111-1111-1111-1112", false),
            ("creditcard", "1234567812345678", false),
            ("ssn", "123-45-6789", true),
            ("ssn", "123456789", true),
            ("ssn", "12-345-6789", false),
            ("hexcolor", "#fFf", true),
            ("hexcolor", "ff00aa", true),
            ("hexcolor", "#ff00a", false),
            ("rgbcolor", "rgb( 255, 0,10 )", true),
            ("rgbcolor", "rgb(256,0,0)", false),
            ("bsonobjectid", "507f1f77bcf86cd799439011", true),
            ("bsonobjectid", "507f1f77bcf86cd79943901", false),
            ("duration", "1h30m", true),
            ("duration", "-1.5h", true),
            ("duration", "0", true),
            ("duration", "300μs", true),
            ("duration", "3 days", true),
            ("duration", "2 Hours", true),
            ("duration", "5 fortnights", false),
            ("duration", "soon", false),
            ("duration", "", false),
            // email: Go's net/mail.ParseAddress, display names and all.
            ("email", "Barry Gibbs <bg@example.com>", true),
            ("email", "bg@example.com (Barry Gibbs)", true),
            ("email", "a@b@c", false),
            ("email", "Barry Gibbs", false),
            // uri: Go's net/url.ParseRequestURI, an absolute URI or path.
            ("uri", "https://example.com/a?b=c", true),
            ("uri", "http://example.com/a b", true),
            ("uri", "/relative", true),
            ("uri", "relative", false),
            ("uri", "http://a b.com/", false),
        ] {
            assert_eq!(valid(format, value), expected, "{format} {value:?}");
        }
    }
}
