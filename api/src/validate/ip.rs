//! apimachinery's strict IP and CIDR syntax (IsValidIP, IsValidCIDR as of
//! 1.33): what the sloppy parser Go once used accepts but the strict one
//! refuses gets its own message, and only the canonical form passes.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

const INVALID_IP: &str = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";
const INVALID_CIDR: &str = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";

/// An IPv4 address as Go's old parser read it: four decimal parts of up
/// to three digits, leading zeros allowed.
fn sloppy_ipv4(text: &str) -> Option<Ipv4Addr> {
    let mut octets = [0u8; 4];
    let mut parts = text.split('.');
    for octet in &mut octets {
        let part = parts.next()?;
        if part.is_empty() || part.len() > 3 || !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        *octet = part.parse().ok()?;
    }
    parts.next().is_none().then_some(Ipv4Addr::from(octets))
}

fn is_ipv4_mapped(ip: &Ipv6Addr) -> bool {
    ip.to_ipv4_mapped().is_some()
}

/// Problems with `text` as an IP address (empty when it is valid).
pub fn ip_problems(text: &str) -> Vec<String> {
    let ip: IpAddr = match text.parse() {
        Ok(ip) => ip,
        Err(_) if sloppy_ipv4(text).is_some() => return vec!["must not have leading 0s".into()],
        Err(_) => return vec![INVALID_IP.into()],
    };
    if let IpAddr::V6(v6) = ip {
        if is_ipv4_mapped(&v6) {
            return vec!["must not be an IPv4-mapped IPv6 address".into()];
        }
    }
    let canonical = ip.to_string();
    if canonical != text {
        return vec![format!("must be in canonical form (\"{canonical}\")")];
    }
    Vec::new()
}

/// Problems with `text` as a CIDR (empty when it is valid).
pub fn cidr_problems(text: &str) -> Vec<String> {
    let Some((address, bits)) = text.split_once('/') else {
        return vec![INVALID_CIDR.into()];
    };
    let strict_bits = !(bits.len() > 1 && bits.starts_with('0'));
    let Ok(prefix) = bits.parse::<u8>() else {
        return vec![INVALID_CIDR.into()];
    };
    let ip: IpAddr = match address.parse() {
        Ok(ip) => ip,
        Err(_) if prefix <= 32 && sloppy_ipv4(address).is_some() => {
            return vec!["must not have leading 0s in IP or prefix length".into()];
        }
        Err(_) => return vec![INVALID_CIDR.into()],
    };
    let max = if ip.is_ipv4() { 32 } else { 128 };
    if prefix > max || !bits.bytes().all(|b| b.is_ascii_digit()) {
        return vec![INVALID_CIDR.into()];
    }
    if !strict_bits {
        return vec!["must not have leading 0s in IP or prefix length".into()];
    }
    let network = match ip {
        IpAddr::V6(v6) if is_ipv4_mapped(&v6) => {
            return vec!["must not have an IPv4-mapped IPv6 address".into()];
        }
        IpAddr::V4(v4) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
            IpAddr::V4(Ipv4Addr::from(u32::from(v4) & mask))
        }
        IpAddr::V6(v6) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
            IpAddr::V6(Ipv6Addr::from(u128::from(v6) & mask))
        }
    };
    if network != ip {
        return vec!["must not have bits set beyond the prefix length".into()];
    }
    let canonical = format!("{network}/{prefix}");
    if canonical != text {
        return vec![format!("must be in canonical form (\"{canonical}\")")];
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_in_apimachinerys_words() {
        assert!(ip_problems("10.0.0.1").is_empty());
        assert!(ip_problems("2001:db8::1").is_empty());
        assert_eq!(ip_problems("10.01.2.3"), ["must not have leading 0s"]);
        assert_eq!(
            ip_problems("::ffff:1.2.3.4"),
            ["must not be an IPv4-mapped IPv6 address"]
        );
        assert_eq!(
            ip_problems("2001:DB8::1"),
            [r#"must be in canonical form ("2001:db8::1")"#]
        );
        assert_eq!(
            ip_problems("2001:db8:0:0:0::1"),
            [r#"must be in canonical form ("2001:db8::1")"#]
        );
        assert_eq!(ip_problems("ten"), [INVALID_IP]);
    }

    #[test]
    fn cidrs_in_apimachinerys_words() {
        assert!(cidr_problems("10.96.0.0/12").is_empty());
        assert!(cidr_problems("fd00::/108").is_empty());
        assert_eq!(
            cidr_problems("10.96.0.1/12"),
            ["must not have bits set beyond the prefix length"]
        );
        assert_eq!(
            cidr_problems("010.96.0.0/12"),
            ["must not have leading 0s in IP or prefix length"]
        );
        assert_eq!(
            cidr_problems("10.96.0.0/012"),
            ["must not have leading 0s in IP or prefix length"]
        );
        assert_eq!(
            cidr_problems("FD00::/108"),
            [r#"must be in canonical form ("fd00::/108")"#]
        );
        assert_eq!(cidr_problems("10.0.0.0/33"), [INVALID_CIDR]);
        assert_eq!(cidr_problems("10.0.0.0"), [INVALID_CIDR]);
    }
}
