//! Who is asking (set by the transport's authenticator) and whether they may.
//!
//! Until RBAC lands, the policy is kube-apiserver's bootstrap policy reduced
//! to what holds without role objects: `system:masters` may do anything;
//! authenticated users may read discovery, OpenAPI and health; anonymous users
//! may read health and version only (system:public-info-viewer).

use crate::error::{qualified, ApiError};

pub const MASTERS_GROUP: &str = "system:masters";
pub const ANONYMOUS_USER: &str = "system:anonymous";
pub const UNAUTHENTICATED_GROUP: &str = "system:unauthenticated";
pub const AUTHENTICATED_GROUP: &str = "system:authenticated";

/// The authenticated identity of a request (upstream's user.Info).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserInfo {
    pub name: String,
    pub groups: Vec<String>,
}

impl UserInfo {
    pub fn anonymous() -> Self {
        Self {
            name: ANONYMOUS_USER.to_string(),
            groups: vec![UNAUTHENTICATED_GROUP.to_string()],
        }
    }

    /// An authenticated user; adds `system:authenticated` as upstream does.
    pub fn authenticated(name: impl Into<String>, mut groups: Vec<String>) -> Self {
        if !groups.iter().any(|g| g == AUTHENTICATED_GROUP) {
            groups.push(AUTHENTICATED_GROUP.to_string());
        }
        Self {
            name: name.into(),
            groups,
        }
    }

    /// The server acting on its own behalf (controllers, bootstrap).
    pub fn system() -> Self {
        Self::authenticated("system:apiserver", vec![MASTERS_GROUP.to_string()])
    }

    pub fn is_anonymous(&self) -> bool {
        self.name == ANONYMOUS_USER
    }

    pub(crate) fn in_group(&self, group: &str) -> bool {
        self.groups.iter().any(|g| g == group)
    }
}

/// What a resource request wants to do.
pub struct ResourceAttributes<'a> {
    pub verb: &'a str,
    pub group: &'a str,
    pub resource: &'a str,
    pub namespace: Option<&'a str>,
    pub name: Option<&'a str>,
}

pub fn authorize_resource(user: &UserInfo, attrs: &ResourceAttributes<'_>) -> Result<(), ApiError> {
    if user.in_group(MASTERS_GROUP) {
        return Ok(());
    }
    // system:basic-user: any authenticated user may ask about themselves.
    if !user.is_anonymous()
        && attrs.verb == "create"
        && crate::review::is_self_review(attrs.group, attrs.resource)
    {
        return Ok(());
    }
    let subject = match attrs.name {
        Some(name) if !name.is_empty() => {
            format!("{} \"{name}\"", qualified(attrs.resource, attrs.group))
        }
        _ => qualified(attrs.resource, attrs.group),
    };
    let scope = match attrs.namespace {
        Some(ns) if !ns.is_empty() => format!("in the namespace \"{ns}\""),
        _ => "at the cluster scope".to_string(),
    };
    Err(ApiError::forbidden(format!(
        "{subject} is forbidden: User \"{}\" cannot {} resource \"{}\" in API group \"{}\" {scope}",
        user.name, attrs.verb, attrs.resource, attrs.group
    )))
}

/// Paths every caller may get, as upstream's system:public-info-viewer
/// role, written as RBAC's non-resource URLs: exact, or a prefix ending in
/// `*`. The self-rules review lists these same rules.
pub(crate) const PUBLIC_URLS: &[&str] = &[
    "/healthz",
    "/healthz/*",
    "/livez",
    "/livez/*",
    "/readyz",
    "/readyz/*",
    "/version",
    "/version/*",
];

/// Paths authenticated users may get: API and OpenAPI discovery, as
/// upstream's system:discovery role.
pub(crate) const DISCOVERY_URLS: &[&str] = &["/api", "/api/*", "/apis", "/apis/*", "/openapi/*"];

/// RBAC's NonResourceURLMatches.
fn url_matches(rule: &str, path: &str) -> bool {
    match rule.strip_suffix('*') {
        Some(prefix) => path.starts_with(prefix),
        None => path == rule,
    }
}

pub fn authorize_path(user: &UserInfo, verb: &str, path: &str) -> Result<(), ApiError> {
    if user.in_group(MASTERS_GROUP) {
        return Ok(());
    }
    let granted = |urls: &[&str]| urls.iter().any(|rule| url_matches(rule, path));
    let public = granted(PUBLIC_URLS);
    let discovery = !user.is_anonymous() && granted(DISCOVERY_URLS);
    if verb == "get" && (public || discovery) {
        return Ok(());
    }
    Err(ApiError::forbidden(format!(
        "forbidden: User \"{}\" cannot {verb} path \"{path}\"",
        user.name
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masters_may_do_anything() {
        let admin = UserInfo::authenticated("admin", vec![MASTERS_GROUP.into()]);
        let attrs = ResourceAttributes {
            verb: "delete",
            group: "",
            resource: "secrets",
            namespace: Some("kube-system"),
            name: Some("x"),
        };
        assert!(authorize_resource(&admin, &attrs).is_ok());
    }

    #[test]
    fn anonymous_gets_upstream_forbidden_message() {
        let attrs = ResourceAttributes {
            verb: "list",
            group: "",
            resource: "configmaps",
            namespace: Some("default"),
            name: None,
        };
        let err = authorize_resource(&UserInfo::anonymous(), &attrs).unwrap_err();
        assert_eq!(err.code(), 403);
        assert_eq!(
            err.message,
            "configmaps is forbidden: User \"system:anonymous\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\""
        );
        assert!(authorize_path(&UserInfo::anonymous(), "get", "/healthz").is_ok());
        assert!(authorize_path(&UserInfo::anonymous(), "get", "/api").is_err());
    }
}
