//! Parses a Kubernetes API path into what it addresses, as upstream's
//! RequestInfoFactory does.

/// What a path under /api or /apis names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApiPath {
    /// `/api`
    CoreVersions,
    /// `/apis`
    Groups,
    /// `/apis/<group>`
    Group(String),
    /// `/api/v1`, `/apis/<group>/<version>`
    ResourceList { group: String, version: String },
    /// A resource request.
    Resource(ResourcePath),
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResourcePath {
    pub group: String,
    pub version: String,
    pub namespace: Option<String>,
    pub resource: String,
    pub name: Option<String>,
    pub subresource: Option<String>,
}

/// Subresources of a namespace that keep `namespaces` as the resource.
const NAMESPACE_SUBRESOURCES: &[&str] = &["status", "finalize"];

/// None when the path is not an API path at all.
pub fn parse(path: &str) -> Option<ApiPath> {
    let parts: Vec<&str> = path
        .trim_matches('/')
        .split('/')
        .filter(|p| !p.is_empty())
        .collect();
    let (group, version, rest) = match parts.as_slice() {
        ["api"] => return Some(ApiPath::CoreVersions),
        ["apis"] => return Some(ApiPath::Groups),
        ["apis", group] => return Some(ApiPath::Group(group.to_string())),
        ["api", version, rest @ ..] => (String::new(), version.to_string(), rest),
        ["apis", group, version, rest @ ..] => (group.to_string(), version.to_string(), rest),
        _ => return None,
    };
    if rest.is_empty() {
        return Some(ApiPath::ResourceList { group, version });
    }
    let mut current: &[&str] = rest;
    let mut namespace = None;
    if current[0] == "namespaces" && current.len() > 1 {
        namespace = Some(current[1].to_string());
        if current.len() > 2 && !NAMESPACE_SUBRESOURCES.contains(&current[2]) {
            current = &current[2..];
        }
    }
    let resource = current[0].to_string();
    // `/api/v1/namespaces/<name>` names the namespace itself.
    if resource == "namespaces" {
        namespace = None;
    }
    Some(ApiPath::Resource(ResourcePath {
        group,
        version,
        namespace,
        resource,
        name: current.get(1).map(|s| s.to_string()),
        subresource: current.get(2).map(|s| s.to_string()),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(path: &str) -> ResourcePath {
        match parse(path) {
            Some(ApiPath::Resource(r)) => r,
            other => panic!("{path}: {other:?}"),
        }
    }

    #[test]
    fn namespaced_and_cluster_paths() {
        let r = res("/api/v1/namespaces/demo/configmaps/web");
        assert_eq!(
            (
                r.namespace.as_deref(),
                r.resource.as_str(),
                r.name.as_deref()
            ),
            (Some("demo"), "configmaps", Some("web"))
        );
        let r = res("/apis/apps/v1/namespaces/demo/deployments");
        assert_eq!((r.group.as_str(), r.name), ("apps", None));
        let r = res("/api/v1/namespaces/demo");
        assert_eq!(
            (r.resource.as_str(), r.name.as_deref(), r.namespace),
            ("namespaces", Some("demo"), None)
        );
        let r = res("/api/v1/namespaces/demo/status");
        assert_eq!(
            (r.resource.as_str(), r.subresource.as_deref()),
            ("namespaces", Some("status"))
        );
        let r = res("/api/v1/pods");
        assert_eq!((r.resource.as_str(), r.namespace), ("pods", None));
        let r = res("/api/v1/namespaces/d/pods/p/log");
        assert_eq!(r.subresource.as_deref(), Some("log"));
        assert_eq!(
            parse("/apis/apps/v1"),
            Some(ApiPath::ResourceList {
                group: "apps".into(),
                version: "v1".into()
            })
        );
        assert_eq!(parse("/healthz"), None);
    }
}
