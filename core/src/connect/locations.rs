//! Where a connect subresource goes, as upstream finds it: a Service's
//! ready endpoint that belongs to one of its pods, a pod's IP and port, a
//! node's kubelet (its preferred address and daemon endpoint port), and
//! the kubelet paths of logs, exec, attach and port-forward. The errors
//! are upstream's.

use std::net::IpAddr;

use serde_json::Value;

use crate::auth::UserInfo;
use crate::error::{ApiError, ApiResult, FieldError, StatusReason};
use crate::object;
use crate::verbs::ApiCore;

/// Where a connect request goes.
#[derive(Debug, Clone)]
pub enum Connection {
    /// Forward to `uri`: through the kubelet client (its client
    /// certificate) or the plain proxy client; `upgrade_required` for
    /// exec, attach and port-forward, which only stream.
    Forward {
        uri: http::Uri,
        kubelet: bool,
        upgrade_required: bool,
    },
    /// Nothing to stream: the log of a pod no node runs yet (204).
    NoContent,
}

/// `pods/log`'s options (PodLogOptions), from the query.
#[derive(Debug, Clone, Default)]
pub struct PodLogOptions {
    pub container: String,
    pub follow: bool,
    pub previous: bool,
    pub timestamps: bool,
    pub since_seconds: Option<i64>,
    pub since_time: Option<String>,
    pub tail_lines: Option<i64>,
    pub limit_bytes: Option<i64>,
}

impl PodLogOptions {
    /// The options a query sets; a value that is not what its field takes
    /// is a 400, as upstream's parameter conversion answers it.
    pub fn from_query(query: &[(String, String)]) -> ApiResult<Self> {
        let mut options = Self::default();
        for (key, value) in query {
            let flag = || matches!(value.as_str(), "true" | "1" | "");
            let number = || {
                value.parse::<i64>().map_err(|_| {
                    ApiError::bad_request(format!(
                        "unable to parse {key:?}: strconv.ParseInt: parsing {value:?}: invalid syntax"
                    ))
                })
            };
            match key.as_str() {
                "container" => options.container = value.clone(),
                "follow" => options.follow = flag(),
                "previous" => options.previous = flag(),
                "timestamps" => options.timestamps = flag(),
                "sinceSeconds" => options.since_seconds = Some(number()?),
                "sinceTime" => options.since_time = Some(value.clone()),
                "tailLines" => options.tail_lines = Some(number()?),
                "limitBytes" => options.limit_bytes = Some(number()?),
                _ => {}
            }
        }
        Ok(options)
    }

    /// Upstream's ValidatePodLogOptions.
    fn validate(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        if let Some(tail) = self.tail_lines.filter(|t| *t < 0) {
            errors.push(FieldError::invalid_rendered(
                "tailLines",
                &tail.to_string(),
                "must be greater than or equal to 0",
            ));
        }
        if let Some(limit) = self.limit_bytes.filter(|l| *l < 1) {
            errors.push(FieldError::invalid_rendered(
                "limitBytes",
                &limit.to_string(),
                "must be greater than 0",
            ));
        }
        match (self.since_seconds, &self.since_time) {
            (Some(_), Some(_)) => errors.push(FieldError::forbidden(
                "",
                "at most one of `sinceTime` or `sinceSeconds` may be specified",
            )),
            (Some(seconds), None) if seconds < 1 => errors.push(FieldError::invalid_rendered(
                "sinceSeconds",
                &seconds.to_string(),
                "must be greater than 0",
            )),
            _ => {}
        }
        errors
    }

    /// The kubelet's query, keys sorted as Go's url.Values encodes them.
    fn kubelet_query(&self) -> String {
        let mut pairs: Vec<(&str, String)> = Vec::new();
        if self.follow {
            pairs.push(("follow", "true".into()));
        }
        if let Some(bytes) = self.limit_bytes {
            pairs.push(("limitBytes", bytes.to_string()));
        }
        if self.previous {
            pairs.push(("previous", "true".into()));
        }
        if let Some(seconds) = self.since_seconds {
            pairs.push(("sinceSeconds", seconds.to_string()));
        }
        if let Some(time) = &self.since_time {
            pairs.push(("sinceTime", time.clone()));
        }
        if let Some(lines) = self.tail_lines {
            pairs.push(("tailLines", lines.to_string()));
        }
        if self.timestamps {
            pairs.push(("timestamps", "true".into()));
        }
        encode(&pairs)
    }
}

fn encode(pairs: &[(&str, String)]) -> String {
    pairs
        .iter()
        .map(|(key, value)| {
            format!(
                "{key}={}",
                percent_encoding::utf8_percent_encode(value, percent_encoding::NON_ALPHANUMERIC)
            )
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// `name`, `name:port` or `scheme:name:port` (upstream's
/// SplitSchemeNamePort); None when malformed.
fn split_scheme_name_port(id: &str) -> Option<(&str, &str, &str)> {
    let parts: Vec<&str> = id.split(':').collect();
    let (scheme, name, port) = match parts.as_slice() {
        [name] => ("", *name, ""),
        [name, port] => ("", *name, *port),
        [scheme, name, port] => (*scheme, *name, *port),
        _ => return None,
    };
    (!name.is_empty() && matches!(scheme, "" | "http" | "https")).then_some((scheme, name, port))
}

/// Go's net.IP.IsGlobalUnicast.
fn is_global_unicast(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            !(v4.is_unspecified()
                || v4.is_loopback()
                || v4.is_multicast()
                || v4.is_link_local()
                || v4.is_broadcast())
        }
        IpAddr::V6(v6) => {
            !(v6.is_unspecified()
                || v6.is_loopback()
                || v6.is_multicast()
                || (v6.segments()[0] & 0xffc0) == 0xfe80)
        }
    }
}

fn host_port(host: &str, port: &str) -> String {
    match (host.contains(':'), port.is_empty()) {
        (true, true) => format!("[{host}]"),
        (true, false) => format!("[{host}]:{port}"),
        (false, true) => host.to_string(),
        (false, false) => format!("{host}:{port}"),
    }
}

/// `base` joined with the requested sub-path, keeping its trailing slash
/// (Go's JoinPreservingTrailingSlash).
fn joined(base: &str, subpath: &str) -> String {
    let mut path = format!(
        "{}/{}",
        base.trim_end_matches('/'),
        subpath.trim_start_matches('/')
    );
    if !subpath.ends_with('/') {
        path = path.trim_end_matches('/').to_string();
    }
    if path.is_empty() {
        path.push('/');
    }
    path
}

fn uri(scheme: &str, authority: &str, path_and_query: &str) -> ApiResult<http::Uri> {
    let scheme = if scheme.is_empty() { "http" } else { scheme };
    format!("{scheme}://{authority}{path_and_query}")
        .parse()
        .map_err(|e| ApiError::bad_request(format!("invalid location: {e}")))
}

fn text<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// The pod's IPs, as status.podIPs (or status.podIP) lists them.
fn pod_ips(pod: &Value) -> Vec<&str> {
    let listed: Vec<&str> = object::items_at(pod, "/status/podIPs")
        .iter()
        .filter_map(|ip| ip.get("ip").and_then(Value::as_str))
        .collect();
    if listed.is_empty() {
        Some(text(pod, "/status/podIP"))
            .filter(|ip| !ip.is_empty())
            .into_iter()
            .collect()
    } else {
        listed
    }
}

/// The container a log, exec or attach means (upstream's
/// validateContainer): the one named, or the pod's only one.
fn container_of(pod: &Value, requested: &str) -> ApiResult<String> {
    let name = object::name(pod);
    let names: Vec<&str> = [
        "/spec/initContainers",
        "/spec/containers",
        "/spec/ephemeralContainers",
    ]
    .iter()
    .flat_map(|pointer| object::items_at(pod, pointer).iter())
    .filter_map(|c| c.get("name").and_then(Value::as_str))
    .collect();
    if !requested.is_empty() {
        if names.contains(&requested) {
            return Ok(requested.to_string());
        }
        return Err(ApiError::bad_request(format!(
            "container {requested} is not valid for pod {name}"
        )));
    }
    match object::items_at(pod, "/spec/containers") {
        [only] => Ok(only
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()),
        [] => Err(ApiError::bad_request(format!(
            "a container name must be specified for pod {name}"
        ))),
        _ => Err(ApiError::bad_request(format!(
            "a container name must be specified for pod {name}, choose one of: [{}]",
            names.join(" ")
        ))),
    }
}

impl ApiCore {
    async fn system_get(
        &self,
        resource: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> ApiResult<Value> {
        let def = self.resolve("", "v1", resource)?;
        self.get(&UserInfo::system(), &def, namespace, name, "")
            .await
    }

    /// services/proxy: a ready endpoint address of the Service that is
    /// one of its namespace's pods, at the port the id names.
    pub async fn service_proxy_location(
        &self,
        namespace: &str,
        id: &str,
        subpath: &str,
    ) -> ApiResult<Connection> {
        let (scheme, name, port) = split_scheme_name_port(id)
            .ok_or_else(|| ApiError::bad_request(format!("invalid service request {id:?}")))?;
        let mut port_name = port.to_string();
        if let Ok(number) = port.parse::<u64>() {
            let service = self.system_get("services", Some(namespace), name).await?;
            port_name = object::items_at(&service, "/spec/ports")
                .iter()
                .find(|p| p.get("port").and_then(Value::as_u64) == Some(number))
                .map(|p| text(p, "/name").to_string())
                .ok_or_else(|| {
                    ApiError::new(
                        StatusReason::ServiceUnavailable,
                        format!("no service port {number} found for service {name:?}"),
                    )
                })?;
        }
        let endpoints = self.system_get("endpoints", Some(namespace), name).await?;
        let subsets = object::items_at(&endpoints, "/subsets");
        if subsets.is_empty() {
            return Err(ApiError::new(
                StatusReason::ServiceUnavailable,
                format!("no endpoints available for service {name:?}"),
            ));
        }
        let start = rand::random_range(0..subsets.len());
        for subset in subsets.iter().cycle().skip(start).take(subsets.len()) {
            let addresses = object::items_at(subset, "/addresses");
            if addresses.is_empty() {
                continue;
            }
            let Some(port) = object::items_at(subset, "/ports")
                .iter()
                .find(|p| text(p, "/name") == port_name)
                .and_then(|p| p.get("port").and_then(Value::as_u64))
            else {
                continue;
            };
            let first = rand::random_range(0..addresses.len());
            for address in addresses.iter().cycle().skip(first).take(addresses.len()) {
                let ip = text(address, "/ip");
                if self.is_pod_address(namespace, address, ip).await {
                    let path = joined("", subpath);
                    return Ok(Connection::Forward {
                        uri: uri(scheme, &host_port(ip, &port.to_string()), &path)?,
                        kubelet: false,
                        upgrade_required: false,
                    });
                }
                tracing::debug!(ip, "endpoint address is not its pod's, skipping");
            }
        }
        Err(ApiError::new(
            StatusReason::ServiceUnavailable,
            format!("no endpoints available for service {id:?}"),
        ))
    }

    /// Upstream's isValidAddress: the address names a pod of this
    /// namespace that has this IP.
    async fn is_pod_address(&self, namespace: &str, address: &Value, ip: &str) -> bool {
        let Some(target) = address.get("targetRef") else {
            return false;
        };
        if text(target, "/namespace") != namespace {
            return false;
        }
        match self
            .system_get("pods", Some(namespace), text(target, "/name"))
            .await
        {
            Ok(pod) => pod_ips(&pod).contains(&ip),
            Err(_) => false,
        }
    }

    /// pods/proxy: the pod's IP at the port the id names, or its first
    /// declared container port.
    pub async fn pod_proxy_location(
        &self,
        namespace: &str,
        id: &str,
        subpath: &str,
    ) -> ApiResult<Connection> {
        let (scheme, name, port) = split_scheme_name_port(id)
            .ok_or_else(|| ApiError::bad_request(format!("invalid pod request {id:?}")))?;
        let pod = self.system_get("pods", Some(namespace), name).await?;
        let mut port = port.to_string();
        if port.is_empty() {
            if let Some(first) = object::items_at(&pod, "/spec/containers")
                .iter()
                .flat_map(|c| object::items_at(c, "/ports").first())
                .find_map(|p| p.get("containerPort").and_then(Value::as_u64))
            {
                port = first.to_string();
            }
        }
        let ip = pod_ips(&pod).first().copied().unwrap_or("");
        let allowed = ip.parse::<IpAddr>().is_ok_and(is_global_unicast);
        if !allowed {
            return Err(ApiError::bad_request("address not allowed"));
        }
        Ok(Connection::Forward {
            uri: uri(scheme, &host_port(ip, &port), &joined("", subpath))?,
            kubelet: false,
            upgrade_required: false,
        })
    }

    /// nodes/proxy: the node's kubelet (its client certificate), or
    /// another port of the node with the plain client.
    pub async fn node_proxy_location(&self, id: &str, subpath: &str) -> ApiResult<Connection> {
        let (scheme, name, port) = split_scheme_name_port(id)
            .ok_or_else(|| ApiError::bad_request(format!("invalid node request {id:?}")))?;
        let (host, kubelet_port) = self.kubelet_of(name).await?;
        let addresses = tokio::net::lookup_host((host.as_str(), 0))
            .await
            .map_err(|_| ApiError::bad_request("no addresses for hostname"))?
            .collect::<Vec<_>>();
        if addresses.is_empty() {
            return Err(ApiError::bad_request("no addresses for hostname"));
        }
        if addresses.iter().any(|a| !is_global_unicast(a.ip())) {
            return Err(ApiError::bad_request("address not allowed"));
        }
        let path = joined("", subpath);
        if port.is_empty() || port == kubelet_port.to_string() {
            return Ok(Connection::Forward {
                uri: uri("https", &host_port(&host, &kubelet_port.to_string()), &path)?,
                kubelet: true,
                upgrade_required: false,
            });
        }
        Ok(Connection::Forward {
            uri: uri(scheme, &host_port(&host, port), &path)?,
            kubelet: false,
            upgrade_required: false,
        })
    }

    /// A node's kubelet: its first address of the preferred types and its
    /// daemon endpoint port (10250 when unset).
    async fn kubelet_of(&self, node_name: &str) -> ApiResult<(String, u16)> {
        let node = self.system_get("nodes", None, node_name).await?;
        let addresses = object::items_at(&node, "/status/addresses");
        let host = self
            .kubelet
            .preferred_address_types
            .iter()
            .find_map(|wanted| {
                addresses
                    .iter()
                    .find(|a| text(a, "/type") == wanted)
                    .map(|a| text(a, "/address").to_string())
            })
            .ok_or_else(|| {
                let known: Vec<String> = addresses
                    .iter()
                    .map(|a| format!("{{{} {}}}", text(a, "/type"), text(a, "/address")))
                    .collect();
                ApiError::internal(format!(
                    "no preferred addresses found; known addresses: [{}]",
                    known.join(" ")
                ))
            })?;
        let port = node
            .pointer("/status/daemonEndpoints/kubeletEndpoint/Port")
            .and_then(Value::as_u64)
            .and_then(|p| u16::try_from(p).ok())
            .filter(|p| *p > 0)
            .unwrap_or(10250);
        Ok((host, port))
    }

    /// `path?query` on the node's kubelet.
    async fn kubelet_connection(
        &self,
        node: &str,
        path: &str,
        query: &str,
        upgrade_required: bool,
    ) -> ApiResult<Connection> {
        let (host, port) = self.kubelet_of(node).await?;
        let path_and_query = if query.is_empty() {
            path.to_string()
        } else {
            format!("{path}?{query}")
        };
        Ok(Connection::Forward {
            uri: uri(
                "https",
                &host_port(&host, &port.to_string()),
                &path_and_query,
            )?,
            kubelet: true,
            upgrade_required,
        })
    }

    /// pods/log: the kubelet's containerLogs of the pod's container; no
    /// content while the pod has no node.
    pub async fn pod_log_location(
        &self,
        namespace: &str,
        name: &str,
        options: &PodLogOptions,
    ) -> ApiResult<Connection> {
        let errors = options.validate();
        if !errors.is_empty() {
            return Err(ApiError::invalid("", "PodLogOptions", name, errors));
        }
        let pod = self.system_get("pods", Some(namespace), name).await?;
        let container = container_of(&pod, &options.container)?;
        let node = text(&pod, "/spec/nodeName");
        if node.is_empty() {
            return Ok(Connection::NoContent);
        }
        let path = format!("/containerLogs/{namespace}/{name}/{container}");
        self.kubelet_connection(node, &path, &options.kubelet_query(), false)
            .await
    }

    /// pods/exec, pods/attach and pods/portforward: the kubelet's
    /// streaming endpoint for the pod (and container), with the streams
    /// the query asks for in the kubelet's parameter names.
    pub async fn pod_stream_location(
        &self,
        subresource: &str,
        namespace: &str,
        name: &str,
        query: &[(String, String)],
    ) -> ApiResult<Connection> {
        let pod = self.system_get("pods", Some(namespace), name).await?;
        let value_of = |key: &str| {
            query
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
        };
        let flag = |key: &str| value_of(key).is_some_and(|v| matches!(v, "true" | "1" | ""));
        let path = if subresource == "portforward" {
            format!("/portForward/{namespace}/{name}")
        } else {
            let container = container_of(&pod, value_of("container").unwrap_or(""))?;
            let verb = if subresource == "exec" {
                "exec"
            } else {
                "attach"
            };
            format!("/{verb}/{namespace}/{name}/{container}")
        };
        let node = text(&pod, "/spec/nodeName");
        if node.is_empty() {
            return Err(ApiError::bad_request(format!(
                "pod {name} does not have a host assigned"
            )));
        }
        let mut pairs: Vec<(&str, String)> = Vec::new();
        if subresource == "portforward" {
            let ports: Vec<&str> = query
                .iter()
                .filter(|(k, _)| k == "ports")
                .map(|(_, v)| v.as_str())
                .collect();
            if !ports.is_empty() {
                pairs.push(("port", ports.join(",")));
            }
        } else {
            if subresource == "exec" {
                for (_, command) in query.iter().filter(|(k, _)| k == "command") {
                    pairs.push(("command", command.clone()));
                }
            }
            for (option, kubelet) in [
                ("stderr", "error"),
                ("stdin", "input"),
                ("stdout", "output"),
                ("tty", "tty"),
            ] {
                if flag(option) {
                    pairs.push((kubelet, "1".into()));
                }
            }
        }
        self.kubelet_connection(node, &path, &encode(&pairs), true)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids() {
        assert_eq!(split_scheme_name_port("web"), Some(("", "web", "")));
        assert_eq!(split_scheme_name_port("web:80"), Some(("", "web", "80")));
        assert_eq!(
            split_scheme_name_port("https:web:443"),
            Some(("https", "web", "443"))
        );
        assert_eq!(split_scheme_name_port("ftp:web:21"), None);
        assert_eq!(split_scheme_name_port(":80"), None);
        assert_eq!(split_scheme_name_port("a:b:c:d"), None);
    }

    #[test]
    fn paths_keep_their_trailing_slash() {
        assert_eq!(joined("", ""), "/");
        assert_eq!(joined("", "/"), "/");
        assert_eq!(joined("", "/a/b"), "/a/b");
        assert_eq!(joined("", "/a/b/"), "/a/b/");
    }

    #[test]
    fn containers_are_defaulted_as_upstream() {
        let one = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "web"}]}});
        assert_eq!(container_of(&one, "").unwrap(), "web");
        let two = json!({"metadata": {"name": "p"}, "spec": {
            "initContainers": [{"name": "init"}], "containers": [{"name": "a"}, {"name": "b"}]}});
        assert_eq!(
            container_of(&two, "").unwrap_err().message,
            "a container name must be specified for pod p, choose one of: [init a b]"
        );
        assert_eq!(
            container_of(&two, "c").unwrap_err().message,
            "container c is not valid for pod p"
        );
        assert_eq!(container_of(&two, "init").unwrap(), "init");
    }

    #[test]
    fn log_options_validate_and_encode() {
        let options = PodLogOptions::from_query(&[
            ("tailLines".into(), "-1".into()),
            ("sinceSeconds".into(), "5".into()),
            ("sinceTime".into(), "2026-01-01T00:00:00Z".into()),
        ])
        .unwrap();
        let rendered: Vec<String> = options.validate().iter().map(FieldError::render).collect();
        assert_eq!(
            rendered,
            [
                "tailLines: Invalid value: -1: must be greater than or equal to 0",
                ": Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified"
            ]
        );
        let follow = PodLogOptions {
            follow: true,
            tail_lines: Some(10),
            timestamps: true,
            ..Default::default()
        };
        assert_eq!(
            follow.kubelet_query(),
            "follow=true&tailLines=10&timestamps=true"
        );
    }

    #[test]
    fn global_unicast_as_go() {
        assert!(is_global_unicast("10.0.0.1".parse().unwrap()));
        assert!(!is_global_unicast("127.0.0.1".parse().unwrap()));
        assert!(!is_global_unicast("169.254.1.1".parse().unwrap()));
        assert!(!is_global_unicast("fe80::1".parse().unwrap()));
        assert!(is_global_unicast("2001:db8::1".parse().unwrap()));
    }
}
