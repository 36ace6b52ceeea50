//! The connect subresources over REST (`services/proxy`, `pods/proxy`,
//! `nodes/proxy`, `pods/log`, `pods/exec`, `pods/attach`,
//! `pods/portforward`): authorized with the verb the method gives, located
//! and forwarded by the core (`capstan_core::connect`), the answer
//! streamed back; a backend that switches protocols is spliced to the
//! client byte for byte, as upstream's UpgradeAwareHandler does.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use capstan_core::auth::{AccessRequest, ResourceAttributes, UserInfo};
use capstan_core::connect::{
    Connection, LinkRewriter, PodLogOptions, RemoteCommandStreams, PORT_FORWARD_PROTOCOL,
    SPDY_PROTOCOL, TUNNELING_PROTOCOL, WEBSOCKET_PROTOCOL,
};
use capstan_core::error::{ApiError, StatusReason};
use capstan_core::kinds::ConnectTo;
use http_body_util::BodyExt;

use crate::request_info::ResourcePath;
use crate::{not_found, FacadeState};

/// Response headers of a proxied answer that describe the hop, or open
/// it to other origins (upstream's corsRemovingTransport drops those).
const DROPPED_RESPONSE_HEADERS: &[&str] = &[
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "access-control-allow-credentials",
    "access-control-allow-headers",
    "access-control-allow-methods",
    "access-control-allow-origin",
];

/// How much of a kubelet's error body becomes the Status message.
const MAX_ERROR_BODY: usize = 50_000;

/// The methods each connect subresource takes.
fn allowed(subresource: &str, method: &Method) -> bool {
    match subresource {
        "proxy" => matches!(
            *method,
            Method::GET
                | Method::POST
                | Method::PUT
                | Method::PATCH
                | Method::DELETE
                | Method::HEAD
                | Method::OPTIONS
        ),
        "log" => *method == Method::GET,
        _ => matches!(*method, Method::GET | Method::POST),
    }
}

/// RequestInfo's verb for a method.
fn verb(method: &Method) -> &'static str {
    match *method {
        Method::GET | Method::HEAD => "get",
        Method::POST => "create",
        Method::PUT => "update",
        Method::PATCH => "patch",
        Method::DELETE => "delete",
        _ => "",
    }
}

/// What follows `/<subresource>` in the path (a proxy's sub-path).
fn subpath(path: &str, target: &ResourcePath, subresource: &str) -> String {
    let marker = format!(
        "/{}/{subresource}",
        target.name.as_deref().unwrap_or_default()
    );
    path.find(&marker)
        .map(|at| path[at + marker.len()..].to_string())
        .unwrap_or_default()
}

pub(super) async fn serve(
    state: &FacadeState,
    user: &UserInfo,
    target: &ResourcePath,
    subresource: &str,
    mut req: Request,
) -> Result<Response, ApiError> {
    let core = &state.core;
    let def = core.resolve(&target.group, &target.version, &target.resource)?;
    if !def.has_subresource(subresource) {
        return Err(not_found());
    }
    let name = target.name.as_deref().ok_or_else(not_found)?;
    let namespace = target.namespace.as_deref().unwrap_or("");
    let method = req.method().clone();
    let qualified = format!("{}/{subresource}", def.resource);
    if !allowed(subresource, &method) {
        return Err(ApiError::method_not_supported(
            &def.group,
            &qualified,
            &method.as_str().to_ascii_lowercase(),
        ));
    }
    let attributes = ResourceAttributes {
        verb: verb(&method),
        group: &def.group,
        resource: &def.resource,
        subresource: Some(subresource),
        namespace: target.namespace.as_deref(),
        name: Some(name),
    };
    core.authorize_request(user, &AccessRequest::Resource(&attributes))
        .await?;
    let query: Vec<(String, String)> =
        serde_urlencoded::from_str(req.uri().query().unwrap_or("")).unwrap_or_default();
    let subpath = subpath(req.uri().path(), target, subresource);
    let connection = match def.kind_impl.connect_to(subresource) {
        Some(ConnectTo::ServiceProxy) => {
            core.service_proxy_location(namespace, name, &subpath)
                .await?
        }
        Some(ConnectTo::PodProxy) => core.pod_proxy_location(namespace, name, &subpath).await?,
        Some(ConnectTo::NodeProxy) => core.node_proxy_location(name, &subpath).await?,
        Some(ConnectTo::PodLog) => {
            let options = PodLogOptions::from_query(&query)?;
            core.pod_log_location(namespace, name, &options).await?
        }
        Some(ConnectTo::PodStream) => {
            core.pod_stream_location(subresource, namespace, name, &query)
                .await?
        }
        None => return Err(not_found()),
    };
    if matches!(connection, Connection::NoContent) {
        return Ok(StatusCode::NO_CONTENT.into_response());
    }
    let translation = match subresource {
        "exec" | "attach" => websocket_key(req.headers(), WEBSOCKET_PROTOCOL).map(|key| {
            let streams = RemoteCommandStreams::from_query(&query);
            (key, Translation::RemoteCommand(streams))
        }),
        "portforward" => websocket_key(req.headers(), TUNNELING_PROTOCOL)
            .map(|key| (key, Translation::PortForward)),
        _ => None,
    };
    if let Some((key, translation)) = translation {
        return translated(state, &connection, req, &key, translation).await;
    }
    let links = (subresource == "proxy" && !capstan_core::http_client::is_upgrade(req.headers()))
        .then(|| link_rewriter(&req, &connection, &subpath))
        .flatten();
    if let (Some(links), Connection::Forward { uri, .. }) = (&links, &connection) {
        // The path the client asked for, as upstream's proxy Transport says it.
        if let Ok(forwarded) = HeaderValue::from_str(&links.forwarded_uri(uri.path())) {
            req.headers_mut().insert("X-Forwarded-Uri", forwarded);
        }
    }
    let client_upgrade = hyper::upgrade::on(&mut req);
    let (parts, body) = req.into_parts();
    let body = body
        .map_err(|e| Box::new(e) as Box<dyn std::error::Error + Send + Sync>)
        .boxed_unsync();
    let mut response = core
        .connect(&connection, http::Request::from_parts(parts, body))
        .await?;
    if response.status() == StatusCode::SWITCHING_PROTOCOLS {
        return Ok(spliced(client_upgrade, &mut response));
    }
    if subresource == "log" {
        return log_response(response, name).await;
    }
    let (mut parts, body) = response.into_parts();
    for header in DROPPED_RESPONSE_HEADERS {
        parts.headers.remove(*header);
    }
    match links {
        Some(links) => Ok(with_links_rewritten(&links, parts, body).await),
        None => Ok(Response::from_parts(parts, Body::new(body))),
    }
}

/// How links in a proxied answer are rewritten: against the proxy's path
/// (the request's, less what goes to the backend), the backend's host and
/// the host the client asked.
fn link_rewriter(req: &Request, connection: &Connection, subpath: &str) -> Option<LinkRewriter> {
    let Connection::Forward { uri, .. } = connection else {
        return None;
    };
    let path = req.uri().path();
    let path_prepend = path
        .strip_suffix(subpath)
        .unwrap_or(path)
        .trim_end_matches('/')
        .to_string();
    let request_host = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_string)
        .or_else(|| req.uri().authority().map(|a| a.to_string()))
        .unwrap_or_default();
    Some(LinkRewriter {
        path_prepend,
        backend_host: uri.authority().map(|a| a.to_string()).unwrap_or_default(),
        request_host,
    })
}

/// An HTML body bigger than this goes out as it came.
const MAX_REWRITTEN_BODY: usize = 64 << 20;

/// A proxied answer with its `Location`, or the links of its HTML body,
/// rewritten to go through the proxy (upstream's proxy Transport).
async fn with_links_rewritten(
    links: &LinkRewriter,
    mut parts: http::response::Parts,
    body: hyper::body::Incoming,
) -> Response {
    if let Some(location) = parts
        .headers
        .get(header::LOCATION)
        .and_then(|l| l.to_str().ok())
    {
        if let Ok(rewritten) = HeaderValue::from_str(&links.rewrite(location)) {
            parts.headers.insert(header::LOCATION, rewritten);
        }
        return Response::from_parts(parts, Body::new(body));
    }
    let html = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|t| t.to_str().ok())
        .and_then(|t| t.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("text/html"));
    if !html {
        return Response::from_parts(parts, Body::new(body));
    }
    let limited = http_body_util::Limited::new(body, MAX_REWRITTEN_BODY);
    let Ok(collected) = limited.collect().await else {
        return plain_bad_gateway();
    };
    let bytes = collected.to_bytes();
    let encoding = parts
        .headers
        .get(header::CONTENT_ENCODING)
        .and_then(|e| e.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    let body = match links.rewrite_encoded_html(&bytes, &encoding) {
        Some(rewritten) => {
            parts.headers.remove(header::CONTENT_LENGTH);
            bytes::Bytes::from(rewritten)
        }
        None => bytes,
    };
    Response::from_parts(parts, Body::from(body))
}

/// A backend body that could not be read whole.
fn plain_bad_gateway() -> Response {
    (
        StatusCode::BAD_GATEWAY,
        "error reading the proxied response\n",
    )
        .into_response()
}

/// What Capstan does with a WebSocket it answers itself.
enum Translation {
    /// exec or attach: channels to and from SPDY streams.
    RemoteCommand(RemoteCommandStreams),
    /// port-forward: SPDY tunnelled in binary messages.
    PortForward,
}

impl Translation {
    fn protocols(&self) -> (&'static str, &'static str) {
        match self {
            Translation::RemoteCommand(_) => (WEBSOCKET_PROTOCOL, SPDY_PROTOCOL),
            Translation::PortForward => (TUNNELING_PROTOCOL, PORT_FORWARD_PROTOCOL),
        }
    }
}

/// The client's `Sec-WebSocket-Key` when it asks for a WebSocket that
/// speaks `protocol`, one Capstan translates (upstream does so for these
/// protocols only; older ones go through to the kubelet).
fn websocket_key(headers: &http::HeaderMap, protocol: &str) -> Option<String> {
    let websocket = headers
        .get(header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"));
    let offered = headers
        .get_all(header::SEC_WEBSOCKET_PROTOCOL)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|p| p.trim() == protocol);
    let key = headers.get(header::SEC_WEBSOCKET_KEY)?.to_str().ok()?;
    (websocket && offered).then(|| key.to_string())
}

/// exec, attach or port-forward over WebSocket: the kubelet is asked for
/// SPDY, and once it switches, the client's WebSocket is answered here
/// and the two are carried into each other (upstream's
/// StreamTranslatorProxy and tunneling handler). A kubelet that refuses
/// answers the client as it answered.
async fn translated(
    state: &FacadeState,
    connection: &Connection,
    mut req: Request,
    key: &str,
    translation: Translation,
) -> Result<Response, ApiError> {
    let (websocket_protocol, spdy_protocol) = translation.protocols();
    let client_upgrade = hyper::upgrade::on(&mut req);
    let mut spdy = http::Request::builder()
        .method(Method::POST)
        .uri(req.uri().clone())
        .header(header::CONNECTION, "Upgrade")
        .header(header::UPGRADE, "SPDY/3.1")
        .header("X-Stream-Protocol-Version", spdy_protocol);
    if let Some(agent) = req.headers().get(header::USER_AGENT) {
        spdy = spdy.header(header::USER_AGENT, agent);
    }
    let empty = http_body_util::Empty::<bytes::Bytes>::new()
        .map_err(|e| Box::new(e) as Box<dyn std::error::Error + Send + Sync>)
        .boxed_unsync();
    let request = spdy.body(empty).map_err(ApiError::internal)?;
    let mut response = state.core.connect(connection, request).await?;
    if response.status() != StatusCode::SWITCHING_PROTOCOLS {
        let (parts, body) = response.into_parts();
        return Ok(Response::from_parts(parts, Body::new(body)));
    }
    let kubelet_upgrade = hyper::upgrade::on(&mut response);
    tokio::spawn(async move {
        let (Ok(client), Ok(kubelet)) = (client_upgrade.await, kubelet_upgrade.await) else {
            return;
        };
        let (client, kubelet) = (
            hyper_util::rt::TokioIo::new(client),
            hyper_util::rt::TokioIo::new(kubelet),
        );
        match translation {
            Translation::RemoteCommand(streams) => {
                capstan_core::connect::translate(client, kubelet, streams).await
            }
            Translation::PortForward => capstan_core::connect::tunnel(client, kubelet).await,
        }
    });
    let mut answer = Response::new(Body::empty());
    *answer.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let headers = answer.headers_mut();
    headers.insert(header::CONNECTION, HeaderValue::from_static("Upgrade"));
    headers.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    headers.insert(
        header::SEC_WEBSOCKET_PROTOCOL,
        HeaderValue::from_static(websocket_protocol),
    );
    let accept = capstan_core::connect::websocket_accept(key.as_bytes());
    headers.insert(
        header::SEC_WEBSOCKET_ACCEPT,
        HeaderValue::from_str(&accept).map_err(ApiError::internal)?,
    );
    Ok(answer)
}

/// The answer to a request the backend switched protocols for: its 101,
/// while a task copies bytes both ways between the client's upgraded
/// connection and the backend's until either ends.
pub(super) fn spliced(
    client_upgrade: hyper::upgrade::OnUpgrade,
    response: &mut http::Response<hyper::body::Incoming>,
) -> Response {
    let backend_upgrade = hyper::upgrade::on(&mut *response);
    tokio::spawn(async move {
        let (Ok(client), Ok(backend)) = (client_upgrade.await, backend_upgrade.await) else {
            return;
        };
        let mut client = hyper_util::rt::TokioIo::new(client);
        let mut backend = hyper_util::rt::TokioIo::new(backend);
        let _ = tokio::io::copy_bidirectional(&mut client, &mut backend).await;
    });
    let mut answer = Response::new(Body::empty());
    *answer.status_mut() = response.status();
    *answer.headers_mut() = response.headers().clone();
    answer
}

/// A kubelet's log answer: streamed as text/plain, or its error body as
/// the Status message, as upstream's GenericHttpResponseChecker words it.
async fn log_response(
    response: http::Response<hyper::body::Incoming>,
    pod: &str,
) -> Result<Response, ApiError> {
    let status = response.status();
    if status.is_success() {
        let (_, body) = response.into_parts();
        let mut answer = Response::new(Body::new(body));
        answer
            .headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
        return Ok(answer);
    }
    let mut text = response
        .into_body()
        .collect()
        .await
        .map(|collected| collected.to_bytes().to_vec())
        .unwrap_or_default();
    text.truncate(MAX_ERROR_BODY);
    let text = String::from_utf8_lossy(&text).into_owned();
    Err(match status.as_u16() {
        500 => ApiError::internal(text),
        400 => ApiError::bad_request(text),
        code => {
            tracing::debug!(pod, code, "the kubelet refused a log request");
            ApiError::new(StatusReason::for_code(code), text)
        }
    })
}
