//! Request-header authentication, as kube-apiserver's `--requestheader-*`
//! flags configure it: a front proxy (Capstan itself, when it forwards to
//! an extension API server, or one in front of Capstan) presents a client
//! certificate from the request-header CA with an allowed common name, and
//! names the user in headers. The certificate check happens once per
//! connection (the server marks such connections [`FrontProxy`]); this
//! module reads the headers.

use std::collections::BTreeMap;

use crate::auth::UserInfo;
use crate::verbs::ApiCore;

/// Marks a connection whose client certificate chains to the
/// request-header CA and has an allowed common name: its requests may name
/// their user in headers.
#[derive(Debug, Clone, Copy)]
pub struct FrontProxy;

/// Which headers carry the user, as the `--requestheader-*-headers` flags
/// name them.
#[derive(Debug, Clone, Default)]
pub struct RequestHeaderNames {
    pub username_headers: Vec<String>,
    pub group_headers: Vec<String>,
    pub extra_headers_prefixes: Vec<String>,
}

impl RequestHeaderNames {
    /// kubeadm's choice, which Capstan's generated front-proxy
    /// configuration uses too.
    pub fn kubeadm() -> Self {
        Self {
            username_headers: vec!["X-Remote-User".to_string()],
            group_headers: vec!["X-Remote-Group".to_string()],
            extra_headers_prefixes: vec!["X-Remote-Extra-".to_string()],
        }
    }

    /// The user the headers name; None when no username header has a
    /// value, so the request is authenticated some other way (upstream's
    /// authenticator then reports "not mine" and the chain goes on).
    /// `headers` are (name, value) pairs with lowercase names, as both
    /// front ends' header maps give them.
    pub fn user<'h>(
        &self,
        headers: impl IntoIterator<Item = (&'h str, &'h str)>,
    ) -> Option<UserInfo> {
        let headers: Vec<(&str, &str)> = headers.into_iter().collect();
        let values_of = |wanted: &[String]| -> Vec<&str> {
            wanted
                .iter()
                .flat_map(|header| {
                    headers
                        .iter()
                        .filter(move |(name, _)| name.eq_ignore_ascii_case(header))
                        .map(|(_, value)| *value)
                })
                .collect()
        };
        let name = values_of(&self.username_headers)
            .into_iter()
            .map(str::trim)
            .find(|value| !value.is_empty())?
            .to_string();
        let groups = values_of(&self.group_headers)
            .into_iter()
            .filter(|value| !value.is_empty())
            .map(str::to_string)
            .collect();
        let mut extra: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (header, value) in &headers {
            let lower = header.to_ascii_lowercase();
            let key = self
                .extra_headers_prefixes
                .iter()
                .find_map(|prefix| lower.strip_prefix(prefix.to_ascii_lowercase().as_str()));
            if let Some(key) = key {
                // Keys are lowercased, then unescaped: headers cannot carry
                // the characters extra keys may have ("/" of a domain
                // prefix), so senders percent-encode them.
                let key = percent_encoding::percent_decode_str(key)
                    .decode_utf8_lossy()
                    .into_owned();
                extra.entry(key).or_default().push(value.to_string());
            }
        }
        // Like every authenticated user, in system:authenticated too
        // (upstream's AuthenticatedGroupAdder).
        let mut user = UserInfo::authenticated(name, groups);
        user.extra = extra;
        Some(user)
    }

    /// Whether `name` (lowercase) is one of the identity headers, which a
    /// request must not pass on to a backend as it came.
    pub fn is_identity_header(&self, name: &str) -> bool {
        self.username_headers
            .iter()
            .chain(&self.group_headers)
            .any(|header| header.eq_ignore_ascii_case(name))
            || self.extra_headers_prefixes.iter().any(|prefix| {
                name.len() >= prefix.len()
                    && name.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
            })
    }
}

impl ApiCore {
    /// Removes what a request authenticated with (Authorization,
    /// Proxy-Authorization, Impersonate-*, X-Remote-* and the configured
    /// request headers), as upstream's authentication and impersonation
    /// filters do before a request is proxied: the backend learns the
    /// caller from Capstan, not from these.
    pub(crate) fn strip_credentials(&self, headers: &mut http::HeaderMap) {
        let names = &self.request_header_names;
        let credentials: Vec<http::header::HeaderName> = headers
            .keys()
            .filter(|name| {
                let name = name.as_str();
                matches!(name, "authorization" | "proxy-authorization")
                    || name.starts_with(super::IMPERSONATION_PREFIX)
                    || name.starts_with("x-remote-")
                    || names.is_identity_header(name)
            })
            .cloned()
            .collect();
        for name in credentials {
            headers.remove(name);
        }
    }

    /// The user a connection's certificate authenticates: from the request's
    /// headers when it comes through a front proxy that names one,
    /// otherwise the certificate's own user (anonymous without one).
    pub fn connection_user<'h>(
        &self,
        certificate: Option<&UserInfo>,
        front_proxy: Option<&FrontProxy>,
        headers: impl IntoIterator<Item = (&'h str, &'h str)>,
    ) -> UserInfo {
        let from_headers = front_proxy.and_then(|_| self.request_header_names.user(headers));
        from_headers
            .or_else(|| certificate.cloned())
            .unwrap_or_else(UserInfo::anonymous)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_user_groups_and_unescaped_extra() {
        let names = RequestHeaderNames::kubeadm();
        let user = names
            .user([
                ("x-remote-user", " alice "),
                ("x-remote-group", "devs"),
                ("x-remote-group", "ops"),
                ("x-remote-extra-scopes", "a"),
                ("x-remote-extra-scopes", "b"),
                ("x-remote-extra-example.org%2fteam", "blue"),
                ("accept", "application/json"),
            ])
            .expect("a user");
        assert_eq!(user.name, "alice");
        assert_eq!(user.groups, ["devs", "ops", "system:authenticated"]);
        assert_eq!(user.extra["scopes"], ["a", "b"]);
        assert_eq!(user.extra["example.org/team"], ["blue"]);
    }

    #[test]
    fn no_username_is_not_an_identity() {
        let names = RequestHeaderNames::kubeadm();
        assert!(names.user([("x-remote-group", "devs")]).is_none());
        assert!(names.user([("x-remote-user", "  ")]).is_none());
    }

    #[test]
    fn identity_headers() {
        let names = RequestHeaderNames::kubeadm();
        assert!(names.is_identity_header("x-remote-user"));
        assert!(names.is_identity_header("x-remote-extra-anything"));
        assert!(!names.is_identity_header("x-remote-userx"));
        assert!(!names.is_identity_header("accept"));
    }
}
