//! Whether Go's `net/url.ParseRequestURI` takes a string: govalidator's
//! `IsRequestURI`, which kube-openapi registers for the `uri` format.
//!
//! Ported from Go 1.24's `src/net/url/url.go` (the Go Kubernetes 1.33 is
//! built with), as it was before the October 2025 security releases
//! (Go 1.24.8 / 1.25.2, CVE-2025-47912), which also require the text inside
//! a bracketed host to parse as an IPv6 address. Here brackets are checked
//! as Go 1.24.0 checks them: an optional port after `]`, `%25` starting a
//! zone, and the host's escaping rules.
//!
//! Only acceptance is ported; the parsed parts are never built. Go works on
//! bytes, and so does this port, so no index lands inside a character.

/// Whether `value` is an absolute URI or an absolute path, as an HTTP
/// request line carries them (so a `#fragment` is just more path).
pub(super) fn parses(value: &str) -> bool {
    let raw = value.as_bytes();
    // Only ASCII controls: Go lets bytes of multi-byte characters through.
    if raw.is_empty() || raw.iter().any(|&b| b < b' ' || b == 0x7f) {
        return false;
    }
    if raw == b"*" {
        return true;
    }
    let Some(scheme) = split_scheme(raw) else {
        return false;
    };
    let (has_scheme, rest) = match scheme {
        Scheme::Present(rest) => (true, rest),
        Scheme::Absent => (false, raw),
    };
    // The query is kept raw, never checked; a lone trailing '?' cuts the
    // same way as any other.
    let rest = match rest.iter().position(|&b| b == b'?') {
        Some(at) => &rest[..at],
        None => rest,
    };
    if !rest.starts_with(b"/") {
        // `scheme:opaque` is taken as it is; without a scheme, a request
        // target must be an absolute path.
        return has_scheme;
    }
    let path = match rest.strip_prefix(b"//") {
        // `//host/path` is a path when there is no scheme.
        Some(after) if has_scheme => {
            let (authority, path) = match after.iter().position(|&b| b == b'/') {
                Some(at) => after.split_at(at),
                None => (after, &b""[..]),
            };
            if !authority_parses(authority) {
                return false;
            }
            path
        }
        _ => rest,
    };
    unescapes(path, Mode::Path)
}

enum Scheme<'a> {
    /// A scheme and the `:` after it were found; what follows them.
    Present(&'a [u8]),
    /// The string does not start with a scheme: all of it is the rest.
    Absent,
}

/// Go's `getScheme`: a letter, then letters, digits, `+`, `-` or `.`, up
/// to a `:`. A leading `:` is an error ("missing protocol scheme"), not
/// merely a missing scheme.
fn split_scheme(raw: &[u8]) -> Option<Scheme<'_>> {
    for (i, &c) in raw.iter().enumerate() {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i > 0 => {}
            b':' if i == 0 => return None,
            b':' => return Some(Scheme::Present(&raw[i + 1..])),
            _ => return Some(Scheme::Absent),
        }
    }
    Some(Scheme::Absent)
}

/// Go's `parseAuthority`: the host after the last `@`, and before it
/// userinfo of RFC 3986's characters with well-formed escapes.
fn authority_parses(authority: &[u8]) -> bool {
    let (userinfo, host) = match authority.iter().rposition(|&b| b == b'@') {
        Some(at) => (Some(&authority[..at]), &authority[at + 1..]),
        None => (None, authority),
    };
    if !host_parses(host) {
        return false;
    }
    // Go unescapes the user and the password separately, split at the
    // first ':'; an escape never spans a ':', so checking the whole is the
    // same.
    userinfo.is_none_or(|info| valid_userinfo(info) && unescapes(info, Mode::UserPassword))
}

/// Go's `validUserinfo`: unreserved characters, sub-delims, `:`, `%` and
/// `@` (the host was split at the last `@`). Non-ASCII is refused.
fn valid_userinfo(info: &[u8]) -> bool {
    info.iter()
        .all(|b| b.is_ascii_alphanumeric() || b"-._:~!$&'()*+,;=%@".contains(b))
}

/// Go's `parseHost`: `host[:port]` or `[literal][:port]`, the literal's
/// zone (after `%25`) escaped more freely than the rest.
fn host_parses(host: &[u8]) -> bool {
    if host.starts_with(b"[") {
        let Some(close) = host.iter().rposition(|&b| b == b']') else {
            return false;
        };
        if !valid_optional_port(&host[close + 1..]) {
            return false;
        }
        if let Some(zone) = memchr::memmem::find(&host[..close], b"%25") {
            return unescapes(&host[..zone], Mode::Host)
                && unescapes(&host[zone..close], Mode::Zone)
                && unescapes(&host[close..], Mode::Host);
        }
    } else if let Some(colon) = host.iter().rposition(|&b| b == b':') {
        if !valid_optional_port(&host[colon..]) {
            return false;
        }
    }
    unescapes(host, Mode::Host)
}

/// Go's `validOptionalPort`: empty, or `:` and digits (maybe none).
fn valid_optional_port(port: &[u8]) -> bool {
    match port.split_first() {
        None => true,
        Some((b':', digits)) => digits.iter().all(u8::is_ascii_digit),
        Some(_) => false,
    }
}

/// The parts of a URL Go's `unescape` checks differently.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Path,
    UserPassword,
    Host,
    Zone,
}

/// Whether Go's `unescape` succeeds: every `%` starts two hex digits; in a
/// host, ASCII may be neither escaped (RFC 3986 lets hosts escape only
/// non-ASCII bytes; `%25` excepted, for RFC 6874 zones) nor a character a
/// host may not hold; in a zone, an escape may only spell what could have
/// been written plainly, or a space.
fn unescapes(s: &[u8], mode: Mode) -> bool {
    let host_like = matches!(mode, Mode::Host | Mode::Zone);
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        if c != b'%' {
            if host_like && c < 0x80 && !host_byte(c) {
                return false;
            }
            i += 1;
            continue;
        }
        let (Some(hi), Some(lo)) = (
            s.get(i + 1).copied().and_then(hex),
            s.get(i + 2).copied().and_then(hex),
        ) else {
            return false;
        };
        let percent = hi == 2 && lo == 5;
        match mode {
            Mode::Host if hi < 8 && !percent => return false,
            Mode::Zone => {
                let byte = hi << 4 | lo;
                if !percent && byte != b' ' && (byte >= 0x80 || !host_byte(byte)) {
                    return false;
                }
            }
            _ => {}
        }
        i += 3;
    }
    true
}

/// The ASCII bytes Go's `shouldEscape` leaves alone in a host (and zone):
/// unreserved characters, RFC 3986's sub-delims, and `:[]<>"` for ports,
/// IPv6 literals and compatibility.
fn host_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"-_.~!$&'()*+,;=:[]<>\"".contains(&c)
}

fn hex(c: u8) -> Option<u8> {
    char::from(c)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}

#[cfg(test)]
mod tests {
    use super::parses;

    /// Cases from Go's url_test.go (parseRequestURLTests, and TestParseErrors
    /// where ParseRequestURI agrees with Parse), and what Go 1.24's
    /// ParseRequestURI returns for the rest.
    #[test]
    fn follows_go_parse_request_uri() {
        for (value, expected) in [
            // parseRequestURLTests
            ("http://foo.com", true),
            ("http://foo.com/", true),
            ("http://foo.com/path", true),
            ("/", true),
            ("//not.a.user@not.a.host/just/a/path", true),
            ("//not.a.user@%66%6f%6f.com/just/a/path/also", true),
            ("*", true),
            ("http://192.168.0.1/", true),
            ("http://192.168.0.1:8080/", true),
            ("http://[fe80::1]/", true),
            ("http://[fe80::1]:8080/", true),
            ("http://[fe80::1%25en0]/", true),
            ("http://[fe80::1%25en0]:8080/", true),
            ("http://[fe80::1%25%65%6e%301-._~]/", true),
            ("http://[fe80::1%25%65%6e%301-._~]:8080/", true),
            ("foo.html", false),
            ("../dir/", false),
            (" http://foo.com", false),
            ("http://192.168.0.%31/", false),
            ("http://192.168.0.%31:8080/", false),
            ("http://[fe80::%31]/", false),
            ("http://[fe80::%31]:8080/", false),
            ("http://[fe80::%31%25en0]/", false),
            ("http://[fe80::%31%25en0]:8080/", false),
            ("http://[fe80::1%en0]/", false),
            ("http://[fe80::1%en0]:8080/", false),
            // TestParseErrors
            ("http://[::1]", true),
            ("http://[::1]:80", true),
            ("http://[::1]:namedport", false),
            ("http://x:namedport", false),
            ("http://[::1]/", true),
            ("http://[::1]a", false),
            ("http://[::1]%23", false),
            ("http://[::1%25en0]", true),
            ("http://[::1]:", true),
            ("http://x:", true),
            ("http://[::1]:%38%30", false),
            ("http://x:%38%30", false),
            ("http://[::1%25%41]", true),
            ("http://[%10::1]", false),
            ("http://[::1]/%48", true),
            ("http://%41:8080/", false),
            ("mysql://x@y(z:123)/foo", false),
            ("mysql://x@y(1.2.3.4:123)/foo", false),
            ("ht tp://foo.com", false),
            ("ahttp://foo.com", true),
            ("1http://foo.com", false),
            ("http://[]%20%48%54%54%50%2f/", false),
            ("http://a b.com/", false),
            ("cache_object:foo", false),
            ("cache_object/:foo/bar", false),
            // TestInvalidUserPassword, TestRejectControlCharacters
            ("http://user^:passwo^rd@foo.com/", false),
            ("http://foo.com/?foo\nbar", false),
            ("http\r://foo.com/", false),
            ("http://foo\x7f.com/", false),
            ("http://foo.com/ctl\u{80}", true),
            // The rest of parse's rules.
            ("", false),
            (":foo", false),
            ("mailto:someone@example.com", true),
            ("urn:%zz", true),
            ("http://example.com/a b", true),
            ("http://example.com/a#frag", true),
            ("http://example.com/%zz", false),
            ("http://example.com/%4", false),
            ("/a?%zz", true),
            ("/a?", true),
            ("http://user:pa%20ss@example.com/", true),
            ("http://us%zzer@example.com/", false),
            ("http://üser@example.com/", false),
            ("http://a@b@example.com/", true),
            ("http://bücher.example/", true),
            ("http://%C3%BC.example/", true),
            ("http://ex_ample.com/", true),
            ("http://example.com:8o/", false),
            ("http://[::1/", false),
            ("http://[::1%25%C3%BC]/", false),
            ("http://[::1%25a%20b]/", true),
            ("http://[::1%25a/b]/", false),
            ("http:", true),
            ("http://", true),
        ] {
            assert_eq!(parses(value), expected, "{value:?}");
        }
    }
}
