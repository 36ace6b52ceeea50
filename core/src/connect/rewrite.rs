//! Links in what `services/proxy`, `pods/proxy` and `nodes/proxy` answer,
//! rewritten to go through the proxy, as upstream's proxy Transport does:
//! a `Location` header, and in an HTML body (gzip or deflate encoded, or
//! not at all) the URL attributes of the elements upstream lists. A link
//! to another host, or a relative one, is left as it is; an absolute path
//! (on no host, the backend's or the client's) gets the proxy's path in
//! front of it.

/// The elements and attributes whose values are URLs (upstream's
/// atomsToAttrs).
const URL_ATTRIBUTES: &[(&str, &[&str])] = &[
    ("a", &["href"]),
    ("applet", &["codebase"]),
    ("area", &["href"]),
    ("audio", &["src"]),
    ("base", &["href"]),
    ("blockquote", &["cite"]),
    ("body", &["background"]),
    ("button", &["formaction"]),
    ("command", &["icon"]),
    ("del", &["cite"]),
    ("embed", &["src"]),
    ("form", &["action"]),
    ("frame", &["longdesc", "src"]),
    ("head", &["profile"]),
    ("html", &["manifest"]),
    ("iframe", &["longdesc", "src"]),
    ("img", &["longdesc", "src", "usemap"]),
    ("input", &["src", "usemap", "formaction"]),
    ("ins", &["cite"]),
    ("link", &["href"]),
    ("object", &["classid", "codebase", "data", "usemap"]),
    ("q", &["cite"]),
    ("script", &["src"]),
    ("source", &["src"]),
    ("video", &["poster", "src"]),
];

/// Where the proxy is and who asked: what a link is rewritten against.
#[derive(Debug, Clone)]
pub struct LinkRewriter {
    /// The proxy's own path, e.g. `/api/v1/namespaces/ns/services/web:80/proxy`.
    pub path_prepend: String,
    /// The backend's `host:port`.
    pub backend_host: String,
    /// The `Host` the client sent.
    pub request_host: String,
}

/// A URL reference split as RFC 3986 splits it.
struct Reference<'a> {
    scheme: Option<&'a str>,
    host: Option<&'a str>,
    path: &'a str,
    rest: &'a str,
}

fn split(reference: &str) -> Reference<'_> {
    let scheme_end = reference.find(':').filter(|&at| {
        let scheme = &reference[..at];
        scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    });
    let (scheme, after) = match scheme_end {
        Some(at) => (Some(&reference[..at]), &reference[at + 1..]),
        None => (None, reference),
    };
    let (host, after) = match after.strip_prefix("//") {
        Some(authority) => {
            let end = authority.find(['/', '?', '#']).unwrap_or(authority.len());
            (Some(&authority[..end]), &authority[end..])
        }
        None => (None, after),
    };
    let end = after.find(['?', '#']).unwrap_or(after.len());
    Reference {
        scheme,
        host,
        path: &after[..end],
        rest: &after[end..],
    }
}

/// Go's path.Join of two absolute paths: joined and cleaned.
fn join(prefix: &str, path: &str) -> String {
    let whole = format!("{prefix}/{path}");
    let mut parts: Vec<&str> = Vec::new();
    for segment in whole.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    format!("/{}", parts.join("/"))
}

impl LinkRewriter {
    /// upstream's rewriteURL for one link (its Transport has no scheme or
    /// host of its own, as for every proxied request).
    pub fn rewrite(&self, link: &str) -> String {
        let reference = split(link);
        let host = reference.host.unwrap_or("");
        let other_host = !host.is_empty() && host != self.backend_host && host != self.request_host;
        if other_host || !reference.path.starts_with('/') {
            return link.to_string();
        }
        // Scheme and host stay only for a link to the client's own host.
        let origin = match (reference.scheme, reference.host) {
            (scheme, Some(host)) if host == self.request_host => {
                let scheme = scheme.map(|s| format!("{s}:")).unwrap_or_default();
                format!("{scheme}//{host}")
            }
            _ => String::new(),
        };
        let path = if reference.path.starts_with(&self.path_prepend) {
            reference.path.to_string()
        } else {
            let mut joined = join(&self.path_prepend, reference.path);
            if reference.path.ends_with('/') && !joined.ends_with('/') {
                joined.push('/');
            }
            joined
        };
        format!("{origin}{path}{}", reference.rest)
    }

    /// An HTML document with its links rewritten; None when it cannot be
    /// parsed as one (then it goes out as it came).
    pub fn rewrite_html(&self, html: &[u8]) -> Option<Vec<u8>> {
        use lol_html::{element, HtmlRewriter, Settings};
        let mut handlers = Vec::new();
        for (tag, attributes) in URL_ATTRIBUTES {
            for attribute in *attributes {
                let selector = format!("{tag}[{attribute}]");
                handlers.push(element!(selector, move |el| {
                    if let Some(value) = el.get_attribute(attribute) {
                        let rewritten = self.rewrite(&value);
                        if rewritten != value {
                            el.set_attribute(attribute, &rewritten)?;
                        }
                    }
                    Ok(())
                }));
            }
        }
        let mut output = Vec::with_capacity(html.len() + 256);
        let mut rewriter = HtmlRewriter::new(
            Settings {
                element_content_handlers: handlers,
                ..Settings::new()
            },
            |chunk: &[u8]| output.extend_from_slice(chunk),
        );
        rewriter.write(html).ok()?;
        rewriter.end().ok()?;
        Some(output)
    }

    /// A body of `encoding` (none, gzip or deflate) decoded, rewritten and
    /// encoded again; None for another encoding or one that does not
    /// decode.
    pub fn rewrite_encoded_html(&self, body: &[u8], encoding: &str) -> Option<Vec<u8>> {
        use std::io::{Read, Write};
        match encoding {
            "" | "identity" => self.rewrite_html(body),
            "gzip" => {
                let mut html = Vec::new();
                flate2::read::GzDecoder::new(body)
                    .read_to_end(&mut html)
                    .ok()?;
                let rewritten = self.rewrite_html(&html)?;
                let mut encoder =
                    flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
                encoder.write_all(&rewritten).ok()?;
                encoder.finish().ok()
            }
            "deflate" => {
                let mut html = Vec::new();
                flate2::read::DeflateDecoder::new(body)
                    .read_to_end(&mut html)
                    .ok()?;
                let rewritten = self.rewrite_html(&html)?;
                let mut encoder =
                    flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
                encoder.write_all(&rewritten).ok()?;
                encoder.finish().ok()
            }
            _ => None,
        }
    }

    /// `X-Forwarded-Uri` for a request to `backend_path`: the path the
    /// client asked for.
    pub fn forwarded_uri(&self, backend_path: &str) -> String {
        let mut uri = join(&self.path_prepend, backend_path);
        if backend_path.ends_with('/') && !uri.ends_with('/') {
            uri.push('/');
        }
        uri
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewriter() -> LinkRewriter {
        LinkRewriter {
            path_prepend: "/api/v1/namespaces/ns/services/web:80/proxy".to_string(),
            backend_host: "10.1.2.3:8080".to_string(),
            request_host: "localhost:8001".to_string(),
        }
    }

    #[test]
    fn links_are_rewritten_as_upstreams_rewrite_url_does() {
        let r = rewriter();
        assert_eq!(
            r.rewrite("/login"),
            "/api/v1/namespaces/ns/services/web:80/proxy/login"
        );
        assert_eq!(
            r.rewrite("/dir/"),
            "/api/v1/namespaces/ns/services/web:80/proxy/dir/"
        );
        assert_eq!(
            r.rewrite("/a/../b?x=1#top"),
            "/api/v1/namespaces/ns/services/web:80/proxy/b?x=1#top"
        );
        assert_eq!(
            r.rewrite("http://10.1.2.3:8080/login"),
            "/api/v1/namespaces/ns/services/web:80/proxy/login"
        );
        assert_eq!(
            r.rewrite("http://localhost:8001/login"),
            "http://localhost:8001/api/v1/namespaces/ns/services/web:80/proxy/login"
        );
        assert_eq!(
            r.rewrite("http://example.com/login"),
            "http://example.com/login"
        );
        assert_eq!(r.rewrite("//example.com/x"), "//example.com/x");
        assert_eq!(r.rewrite("relative/path"), "relative/path");
        assert_eq!(
            r.rewrite("mailto:someone@example.com"),
            "mailto:someone@example.com"
        );
        assert_eq!(
            r.rewrite("/api/v1/namespaces/ns/services/web:80/proxy/already"),
            "/api/v1/namespaces/ns/services/web:80/proxy/already"
        );
    }

    #[test]
    fn html_links_are_rewritten_and_the_rest_kept() {
        let html = br#"<html><head><link href="/style.css"></head><body><a href="/next">next</a> <a href="other">rel</a><img src="http://example.com/i.png"><p>/not-a-link</p></body></html>"#;
        let out = String::from_utf8(rewriter().rewrite_html(html).unwrap()).unwrap();
        assert_eq!(
            out,
            r#"<html><head><link href="/api/v1/namespaces/ns/services/web:80/proxy/style.css"></head><body><a href="/api/v1/namespaces/ns/services/web:80/proxy/next">next</a> <a href="other">rel</a><img src="http://example.com/i.png"><p>/not-a-link</p></body></html>"#
        );
    }

    #[test]
    fn gzip_bodies_are_rewritten_inside() {
        use std::io::{Read, Write};
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(br#"<a href="/x">x</a>"#).unwrap();
        let body = encoder.finish().unwrap();
        let rewritten = rewriter().rewrite_encoded_html(&body, "gzip").unwrap();
        let mut html = String::new();
        flate2::read::GzDecoder::new(&rewritten[..])
            .read_to_string(&mut html)
            .unwrap();
        assert_eq!(
            html,
            r#"<a href="/api/v1/namespaces/ns/services/web:80/proxy/x">x</a>"#
        );
        assert!(rewriter().rewrite_encoded_html(&body, "br").is_none());
    }
}
