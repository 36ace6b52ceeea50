//! Who is asking (set by the transport's authenticator) and what they ask
//! to do. The decision is RBAC's (`rbac.rs`), behind upstream's
//! privileged-group rule: `system:masters` may do anything.

use crate::error::ApiError;

pub const MASTERS_GROUP: &str = "system:masters";
pub const ANONYMOUS_USER: &str = "system:anonymous";
pub const UNAUTHENTICATED_GROUP: &str = "system:unauthenticated";
pub const AUTHENTICATED_GROUP: &str = "system:authenticated";

/// The authenticated identity of a request (upstream's user.Info).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserInfo {
    pub name: String,
    /// Set for service accounts (the account's uid) and by impersonation.
    pub uid: String,
    pub groups: Vec<String>,
    /// Upstream's extra attributes (e.g. a token's credential id).
    pub extra: std::collections::BTreeMap<String, Vec<String>>,
}

impl UserInfo {
    pub fn anonymous() -> Self {
        Self {
            name: ANONYMOUS_USER.to_string(),
            groups: vec![UNAUTHENTICATED_GROUP.to_string()],
            ..Self::default()
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
            ..Self::default()
        }
    }

    /// The server acting on its own behalf (controllers, bootstrap).
    pub fn system() -> Self {
        Self::authenticated("system:apiserver", vec![MASTERS_GROUP.to_string()])
    }

    pub fn is_anonymous(&self) -> bool {
        self.name == ANONYMOUS_USER
    }

    pub fn in_group(&self, group: &str) -> bool {
        self.groups.iter().any(|g| g == group)
    }

    /// The user as upstream's UserInfo JSON writes it (reviews): uid and
    /// extra only when set.
    pub fn to_json(&self) -> serde_json::Value {
        let mut user = serde_json::json!({"username": self.name, "groups": self.groups});
        if !self.uid.is_empty() {
            user["uid"] = serde_json::json!(self.uid);
        }
        if !self.extra.is_empty() {
            user["extra"] = serde_json::json!(self.extra);
        }
        user
    }
}

/// What a resource request wants to do.
#[derive(Debug, Clone, Copy)]
pub struct ResourceAttributes<'a> {
    pub verb: &'a str,
    pub group: &'a str,
    pub resource: &'a str,
    pub subresource: Option<&'a str>,
    pub namespace: Option<&'a str>,
    pub name: Option<&'a str>,
}

/// A request as the authorizer sees it: on a resource, or on a path.
#[derive(Debug, Clone, Copy)]
pub enum AccessRequest<'a> {
    Resource(&'a ResourceAttributes<'a>),
    Path { verb: &'a str, path: &'a str },
}

impl AccessRequest<'_> {
    pub fn verb(&self) -> &str {
        match self {
            Self::Resource(attrs) => attrs.verb,
            Self::Path { verb, .. } => verb,
        }
    }

    /// Upstream's 403 for a denied request (responsewriters.Forbidden).
    pub fn forbidden(&self, user: &UserInfo) -> ApiError {
        let attrs = match self {
            Self::Path { verb, path } => {
                return ApiError::forbidden(format!(
                    "forbidden: User \"{}\" cannot {verb} path \"{path}\"",
                    user.name
                ))
            }
            Self::Resource(attrs) => attrs,
        };
        let resource = match attrs.subresource {
            Some(sub) if !sub.is_empty() => format!("{}/{sub}", attrs.resource),
            _ => attrs.resource.to_string(),
        };
        let scope = match attrs.namespace {
            Some(ns) if !ns.is_empty() => format!("in the namespace \"{ns}\""),
            _ => "at the cluster scope".to_string(),
        };
        let why = format!(
            "User \"{}\" cannot {} resource \"{resource}\" in API group \"{}\" {scope}",
            user.name, attrs.verb, attrs.group
        );
        ApiError::forbidden_resource(attrs.group, attrs.resource, attrs.name.unwrap_or(""), &why)
    }
}

/// Paths every caller may get, as upstream's system:public-info-viewer
/// role, written as RBAC's non-resource URLs: exact, or a prefix ending in
/// `*`. The bootstrap policy's role of that name is written from this list
/// (rbac.rs bootstrap_policy).
pub const PUBLIC_URLS: &[&str] = &[
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
pub const DISCOVERY_URLS: &[&str] = &["/api", "/api/*", "/apis", "/apis/*", "/openapi/*"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn denials_carry_upstreams_forbidden_messages() {
        let list = ResourceAttributes {
            verb: "list",
            group: "",
            resource: "configmaps",
            subresource: None,
            namespace: Some("default"),
            name: None,
        };
        let err = AccessRequest::Resource(&list).forbidden(&UserInfo::anonymous());
        assert_eq!(err.code(), 403);
        assert_eq!(
            err.message,
            "configmaps is forbidden: User \"system:anonymous\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\""
        );
        let scale = ResourceAttributes {
            verb: "update",
            group: "apps",
            resource: "deployments",
            subresource: Some("scale"),
            namespace: None,
            name: Some("web"),
        };
        let alice = UserInfo::authenticated("alice", vec![]);
        let err = AccessRequest::Resource(&scale).forbidden(&alice);
        assert_eq!(
            err.message,
            "deployments.apps \"web\" is forbidden: User \"alice\" cannot update resource \"deployments/scale\" in API group \"apps\" at the cluster scope"
        );
        let details = err.details.expect("the resource in the details");
        assert_eq!(
            (
                details.name.as_str(),
                details.group.as_str(),
                details.kind.as_str()
            ),
            ("web", "apps", "deployments")
        );
        let path = AccessRequest::Path {
            verb: "get",
            path: "/metrics",
        };
        assert_eq!(
            path.forbidden(&alice).message,
            "forbidden: User \"alice\" cannot get path \"/metrics\""
        );
    }
}
