//! The string formats kube-openapi checks in custom resources; a format it
//! does not know passes, as upstream.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use base64::Engine as _;

/// Whether `value` is a valid string of `format`.
pub fn valid(format: &str, value: &str) -> bool {
    match format {
        "date-time" | "datetime" => chrono::DateTime::parse_from_rfc3339(value).is_ok(),
        "date" => chrono::NaiveDate::parse_from_str(value, "%Y-%m-%d").is_ok(),
        "uuid" | "uuid3" | "uuid4" | "uuid5" => uuid_version(value).is_some_and(|v| match format {
            "uuid3" => v == 3,
            "uuid4" => v == 4,
            "uuid5" => v == 5,
            _ => true,
        }),
        "ipv4" => value.parse::<Ipv4Addr>().is_ok(),
        "ipv6" => value.parse::<Ipv6Addr>().is_ok(),
        "cidr" => cidr(value),
        "mac" => mac(value),
        "hostname" => hostname(value),
        "byte" => base64::engine::general_purpose::STANDARD
            .decode(value)
            .is_ok(),
        "email" => email(value),
        _ => true,
    }
}

fn uuid_version(value: &str) -> Option<usize> {
    let parsed = uuid::Uuid::try_parse(value).ok()?;
    // kube-openapi's pattern wants the hyphenated form.
    (value.len() == 36).then(|| parsed.get_version_num())
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

fn hostname(value: &str) -> bool {
    !value.is_empty()
        && value.len() <= 255
        && value.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        })
}

fn email(value: &str) -> bool {
    match value.split_once('@') {
        Some((local, domain)) => !local.is_empty() && !domain.contains('@') && hostname(domain),
        None => false,
    }
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
}
