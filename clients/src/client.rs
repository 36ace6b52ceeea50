//! The typed client: one HTTP/2 connection (a tonic `Channel`) to a capstan
//! server, with helpers that take and return objects as JSON.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use capstan_proto::json::{JsonStruct, JsonValue};
use capstan_proto::v1 as pb;
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use serde_json::Value;
use tonic::client::Grpc;
use tonic::codegen::http::uri::PathAndQuery;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};
use tonic_prost::ProstCodec;

use crate::bodies::{ListBodies, ObjectBody, WatchEventBody};
use crate::config::{load_kubeconfig, TlsConfig};
use crate::error::{ApiError, Error, Result};

/// Lists of every object in a large collection can be big; tonic's 4 MiB
/// default would turn a healthy list into an error.
const MAX_MESSAGE_BYTES: usize = 256 * 1024 * 1024;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
// Keepalives notice a server that vanished without closing the connection
// (power loss, a dropped NAT entry), which would otherwise leave a watch
// hanging forever.
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(30);
const KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(10);

/// Names a resource collection, as `/apis/<group>/<version>/<resource>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GroupVersionResource {
    /// Empty for the core group.
    pub group: String,
    pub version: String,
    pub resource: String,
}

impl GroupVersionResource {
    pub fn new(
        group: impl Into<String>,
        version: impl Into<String>,
        resource: impl Into<String>,
    ) -> Self {
        Self {
            group: group.into(),
            version: version.into(),
            resource: resource.into(),
        }
    }

    /// A resource of the core ("") group, e.g. `core("v1", "configmaps")`.
    pub fn core(version: impl Into<String>, resource: impl Into<String>) -> Self {
        Self::new("", version, resource)
    }

    fn to_pb(&self) -> Option<pb::GroupVersionResource> {
        Some(pb::GroupVersionResource {
            group: self.group.clone(),
            version: self.version.clone(),
            resource: self.resource.clone(),
        })
    }
}

impl std::fmt::Display for GroupVersionResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.group.is_empty() {
            write!(f, "{}/{}", self.version, self.resource)
        } else {
            write!(f, "{}/{}/{}", self.group, self.version, self.resource)
        }
    }
}

/// Options of a list, as the REST query parameters of the same names.
#[derive(Debug, Clone, Default)]
pub struct ListParams {
    pub label_selector: String,
    pub field_selector: String,
    /// 0 for no limit.
    pub limit: i64,
    pub continue_token: String,
    pub resource_version: String,
    pub resource_version_match: String,
}

/// One page of a list.
#[derive(Debug, Clone)]
pub struct ObjectList {
    /// The revision the list was read at; watch from here to miss nothing.
    pub resource_version: String,
    /// Non-empty when more pages follow.
    pub continue_token: String,
    pub remaining_item_count: Option<i64>,
    pub items: Vec<Value>,
}

/// Options of a watch.
#[derive(Debug, Clone, Default)]
pub struct WatchParams {
    pub label_selector: String,
    pub field_selector: String,
    /// Start after this revision; empty starts with the current state as ADDED events.
    pub resource_version: String,
    pub allow_bookmarks: bool,
    /// 0 leaves the server's default (30–60 minutes).
    pub timeout_seconds: i64,
    pub send_initial_events: bool,
}

/// The patch document's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// RFC 6902 JSON patch (an array of operations).
    Json,
    /// RFC 7386 JSON merge patch.
    Merge,
    /// Kubernetes strategic merge patch (built-in kinds).
    StrategicMerge,
    /// Server-side apply.
    Apply,
}

impl PatchType {
    fn to_pb(self) -> pb::PatchType {
        match self {
            Self::Json => pb::PatchType::JsonPatch,
            Self::Merge => pb::PatchType::MergePatch,
            Self::StrategicMerge => pb::PatchType::StrategicMergePatch,
            Self::Apply => pb::PatchType::ApplyPatch,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    Added,
    Modified,
    Deleted,
    /// Progress: only `metadata.resourceVersion` is meaningful.
    Bookmark,
    /// The object is a `metav1.Status`; the watch ends after it.
    Error,
}

impl EventType {
    fn parse(text: &str) -> Result<Self> {
        Ok(match text {
            "ADDED" => Self::Added,
            "MODIFIED" => Self::Modified,
            "DELETED" => Self::Deleted,
            "BOOKMARK" => Self::Bookmark,
            "ERROR" => Self::Error,
            other => {
                return Err(Error::InvalidObject(format!(
                    "unknown watch event type {other:?}"
                )))
            }
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Added => "ADDED",
            Self::Modified => "MODIFIED",
            Self::Deleted => "DELETED",
            Self::Bookmark => "BOOKMARK",
            Self::Error => "ERROR",
        }
    }
}

#[derive(Debug, Clone)]
pub struct WatchEvent {
    pub event_type: EventType,
    pub object: Value,
}

impl WatchEvent {
    /// `metadata.resourceVersion` of the object or bookmark.
    pub fn resource_version(&self) -> Option<&str> {
        resource_version_of(&self.object)
    }

    /// The server's error, for an ERROR event.
    pub fn error(&self) -> Option<ApiError> {
        (self.event_type == EventType::Error)
            .then(|| ApiError::from_status_object(self.object.clone()))
    }
}

pub(crate) fn resource_version_of(obj: &Value) -> Option<&str> {
    obj.get("metadata")?.get("resourceVersion")?.as_str()
}

pub type WatchStream = BoxStream<'static, Result<WatchEvent>>;

/// Receives each warning the server attaches to an answer (an unknown
/// field dropped under `fieldValidation=Warn`, a deprecated API), as
/// client-go's `WarningHandler` does. The default logs them.
pub type WarningHandler = Arc<dyn Fn(&str) + Send + Sync>;

/// A capstan gRPC client. Cloning is cheap and shares the connection.
#[derive(Clone)]
pub struct Client {
    resources: pb::resources_client::ResourcesClient<Channel>,
    discovery: pb::discovery_client::DiscoveryClient<Channel>,
    /// The same connection, for the helpers' calls, which decode the
    /// answers as bodies (bodies.rs) rather than as the generated messages.
    grpc: Grpc<Channel>,
    warnings: WarningHandler,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("resources", &self.resources)
            .field("discovery", &self.discovery)
            .finish_non_exhaustive()
    }
}

/// The default warning handler: a log line per warning, as client-go's.
fn log_warning(text: &str) {
    tracing::warn!(target: "capstan_client", "{text}");
}

/// The text of a `warning` metadata value, which the server writes in the
/// form of an HTTP Warning header: `299 - "text"`, the text quoted as a
/// JSON string. Anything else is passed on as it came.
fn warning_text(value: &str) -> String {
    value
        .strip_prefix("299 - ")
        .and_then(|quoted| serde_json::from_str::<String>(quoted).ok())
        .unwrap_or_else(|| value.to_string())
}

fn object_body(obj: ObjectBody) -> Result<Value> {
    obj.body
        .map(Value::from)
        .ok_or_else(|| Error::InvalidObject("the server sent an object without a body".into()))
}

fn ns(namespace: Option<&str>) -> String {
    namespace.unwrap_or_default().to_string()
}

/// The request's copy of `obj`, which the generated message owns.
fn to_struct(obj: &Value) -> Result<JsonStruct> {
    obj.as_object()
        .cloned()
        .map(JsonStruct)
        .ok_or_else(|| Error::InvalidObject("an object must be a JSON object".into()))
}

impl Client {
    /// Connects to `endpoint` (e.g. `https://127.0.0.1:6443`) with mutual TLS.
    /// The connection is made now, so a wrong address or certificate fails here.
    pub async fn connect(endpoint: impl Into<String>, tls: TlsConfig) -> Result<Self> {
        let endpoint = endpoint.into();
        let tls_config = ClientTlsConfig::new()
            .ca_certificate(Certificate::from_pem(&tls.ca_pem))
            .identity(Identity::from_pem(
                &tls.client_cert_pem,
                &tls.client_key_pem,
            ))
            .domain_name(tls.domain.clone());
        let invalid = |source| Error::InvalidEndpoint {
            endpoint: endpoint.clone(),
            source,
        };
        let channel = Endpoint::from_shared(endpoint.clone())
            .map_err(invalid)?
            .tls_config(tls_config)
            .map_err(invalid)?
            .connect_timeout(CONNECT_TIMEOUT)
            .tcp_nodelay(true)
            .http2_keep_alive_interval(KEEPALIVE_INTERVAL)
            .keep_alive_timeout(KEEPALIVE_TIMEOUT)
            .keep_alive_while_idle(true)
            .connect()
            .await
            .map_err(|source| Error::Connect {
                endpoint: endpoint.clone(),
                source,
            })?;
        Ok(Self::from_channel(channel))
    }

    /// Connects with the current context of a kubeconfig (capstan writes
    /// `<data-dir>/admin.kubeconfig`).
    pub async fn from_kubeconfig(path: impl AsRef<Path>) -> Result<Self> {
        let target = load_kubeconfig(path.as_ref())?;
        Self::connect(target.server, target.tls).await
    }

    /// Wraps a channel made elsewhere (other TLS settings, a test server).
    pub fn from_channel(channel: Channel) -> Self {
        Self {
            resources: pb::resources_client::ResourcesClient::new(channel.clone())
                .max_decoding_message_size(MAX_MESSAGE_BYTES)
                .max_encoding_message_size(MAX_MESSAGE_BYTES),
            discovery: pb::discovery_client::DiscoveryClient::new(channel.clone())
                .max_decoding_message_size(MAX_MESSAGE_BYTES),
            grpc: Grpc::new(channel)
                .max_decoding_message_size(MAX_MESSAGE_BYTES)
                .max_encoding_message_size(MAX_MESSAGE_BYTES),
            warnings: Arc::new(log_warning),
        }
    }

    /// Hands the server's warnings to `handler` instead of the log.
    pub fn with_warning_handler(mut self, handler: WarningHandler) -> Self {
        self.warnings = handler;
        self
    }

    /// A unary call whose answer is decoded as `Answer`.
    async fn unary<Req, Answer>(&self, method: &'static str, request: Req) -> Result<Answer>
    where
        Req: prost::Message + Send + Sync + 'static,
        Answer: prost::Message + Default + Send + Sync + 'static,
    {
        let mut grpc = self.ready().await?;
        let answer = grpc
            .unary(
                tonic::Request::new(request),
                PathAndQuery::from_static(method),
                ProstCodec::<Req, Answer>::default(),
            )
            .await?;
        for value in answer.metadata().get_all("warning") {
            if let Ok(value) = value.to_str() {
                (self.warnings)(&warning_text(value));
            }
        }
        Ok(answer.into_inner())
    }

    async fn ready(&self) -> Result<Grpc<Channel>> {
        let mut grpc = self.grpc.clone();
        grpc.ready()
            .await
            .map_err(|e| tonic::Status::unavailable(format!("connection not ready: {e}")))?;
        Ok(grpc)
    }

    /// The generated stub, for calls the helpers do not cover.
    pub fn resources(&self) -> pb::resources_client::ResourcesClient<Channel> {
        self.resources.clone()
    }

    pub fn discovery(&self) -> pb::discovery_client::DiscoveryClient<Channel> {
        self.discovery.clone()
    }

    pub async fn get(
        &self,
        gvr: &GroupVersionResource,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Value> {
        let answer: ObjectBody = self
            .unary(
                "/capstan.v1.Resources/Get",
                pb::GetRequest {
                    resource: gvr.to_pb(),
                    namespace: ns(namespace),
                    name: name.to_string(),
                    resource_version: String::new(),
                    subresource: String::new(),
                },
            )
            .await?;
        object_body(answer)
    }

    /// One page; see [`Client::list_all`] for every page at one revision.
    pub async fn list(
        &self,
        gvr: &GroupVersionResource,
        namespace: Option<&str>,
        params: &ListParams,
    ) -> Result<ObjectList> {
        let list: ListBodies = self
            .unary(
                "/capstan.v1.Resources/List",
                pb::ListRequest {
                    resource: gvr.to_pb(),
                    namespace: ns(namespace),
                    label_selector: params.label_selector.clone(),
                    field_selector: params.field_selector.clone(),
                    limit: params.limit,
                    continue_token: params.continue_token.clone(),
                    resource_version: params.resource_version.clone(),
                    resource_version_match: params.resource_version_match.clone(),
                },
            )
            .await?;
        Ok(ObjectList {
            resource_version: list.resource_version,
            continue_token: list.continue_token,
            remaining_item_count: list.remaining_item_count,
            items: list
                .items
                .into_iter()
                .map(object_body)
                .collect::<Result<_>>()?,
        })
    }

    /// Every page of a list, `page_size` items at a time (0: one page). The
    /// server reads every page at the first page's revision, so the result is
    /// one consistent snapshot.
    pub async fn list_all(
        &self,
        gvr: &GroupVersionResource,
        namespace: Option<&str>,
        label_selector: &str,
        page_size: i64,
    ) -> Result<ObjectList> {
        let mut params = ListParams {
            label_selector: label_selector.to_string(),
            limit: page_size,
            ..Default::default()
        };
        let mut all = self.list(gvr, namespace, &params).await?;
        while !all.continue_token.is_empty() {
            params.continue_token = std::mem::take(&mut all.continue_token);
            let page = self.list(gvr, namespace, &params).await?;
            all.items.extend(page.items);
            all.continue_token = page.continue_token;
        }
        all.remaining_item_count = None;
        Ok(all)
    }

    pub async fn create(
        &self,
        gvr: &GroupVersionResource,
        namespace: Option<&str>,
        object: &Value,
    ) -> Result<Value> {
        let answer: ObjectBody = self
            .unary(
                "/capstan.v1.Resources/Create",
                pb::CreateRequest {
                    resource: gvr.to_pb(),
                    namespace: ns(namespace),
                    object: Some(to_struct(object)?),
                    options: None,
                },
            )
            .await?;
        object_body(answer)
    }

    /// Replaces the object named by its `metadata.name`. A
    /// `metadata.resourceVersion` in it makes the write a compare-and-swap.
    pub async fn update(
        &self,
        gvr: &GroupVersionResource,
        namespace: Option<&str>,
        object: &Value,
    ) -> Result<Value> {
        let name = object
            .get("metadata")
            .and_then(|m| m.get("name"))
            .and_then(Value::as_str)
            .ok_or_else(|| Error::InvalidObject("update needs metadata.name".into()))?;
        let answer: ObjectBody = self
            .unary(
                "/capstan.v1.Resources/Update",
                pb::UpdateRequest {
                    resource: gvr.to_pb(),
                    namespace: ns(namespace),
                    name: name.to_string(),
                    object: Some(to_struct(object)?),
                    options: None,
                    subresource: String::new(),
                },
            )
            .await?;
        object_body(answer)
    }

    pub async fn patch(
        &self,
        gvr: &GroupVersionResource,
        namespace: Option<&str>,
        name: &str,
        patch_type: PatchType,
        patch: &Value,
    ) -> Result<Value> {
        let answer: ObjectBody = self
            .unary(
                "/capstan.v1.Resources/Patch",
                pb::PatchRequest {
                    resource: gvr.to_pb(),
                    namespace: ns(namespace),
                    name: name.to_string(),
                    r#type: patch_type.to_pb() as i32,
                    patch: Some(JsonValue(patch.clone())),
                    options: None,
                    force: false,
                    subresource: String::new(),
                },
            )
            .await?;
        object_body(answer)
    }

    /// Deletes by name; returns the deleted object (or, with finalizers, the
    /// object marked for deletion).
    pub async fn delete(
        &self,
        gvr: &GroupVersionResource,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Value> {
        let answer: ObjectBody = self
            .unary(
                "/capstan.v1.Resources/Delete",
                pb::DeleteRequest {
                    resource: gvr.to_pb(),
                    namespace: ns(namespace),
                    name: name.to_string(),
                    options: None,
                },
            )
            .await?;
        object_body(answer)
    }

    /// A server-streaming watch. The stream ends when the server closes it
    /// (timeout) or after an ERROR event; transport failures arrive as `Err`.
    pub async fn watch(
        &self,
        gvr: &GroupVersionResource,
        namespace: Option<&str>,
        params: &WatchParams,
    ) -> Result<WatchStream> {
        let request = pb::WatchRequest {
            resource: gvr.to_pb(),
            namespace: ns(namespace),
            label_selector: params.label_selector.clone(),
            field_selector: params.field_selector.clone(),
            resource_version: params.resource_version.clone(),
            allow_watch_bookmarks: params.allow_bookmarks,
            timeout_seconds: params.timeout_seconds,
            send_initial_events: params.send_initial_events,
        };
        let stream = self
            .ready()
            .await?
            .server_streaming(
                tonic::Request::new(request),
                PathAndQuery::from_static("/capstan.v1.Resources/Watch"),
                ProstCodec::<pb::WatchRequest, WatchEventBody>::default(),
            )
            .await?
            .into_inner();
        Ok(stream
            .map_err(Error::from)
            .and_then(|ev| async move {
                let event_type = EventType::parse(&ev.r#type)?;
                let object = ev
                    .object
                    .ok_or_else(|| Error::InvalidObject("a watch event without an object".into()))
                    .and_then(object_body)?;
                Ok(WatchEvent { event_type, object })
            })
            .boxed())
    }
}

#[cfg(test)]
mod tests {
    use super::warning_text;

    #[test]
    fn warnings_are_read_from_their_header_form() {
        assert_eq!(
            warning_text(r#"299 - "unknown field \"colour\"""#),
            r#"unknown field "colour""#
        );
        // Anything not in that form is passed on whole.
        assert_eq!(warning_text("plain text"), "plain text");
        assert_eq!(
            warning_text(r#"299 - "unterminated"#),
            r#"299 - "unterminated"#
        );
    }
}
