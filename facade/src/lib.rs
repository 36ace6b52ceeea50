//! The REST facade: Kubernetes paths, verbs, query options and content
//! negotiation translated into calls on the core's [`ApiCore`] — the same
//! methods the gRPC services call — and errors rendered as `metav1.Status`.

mod aggregation;
mod connect;
mod documents;
pub mod negotiation;
pub mod request_info;
pub mod table;
mod watch;

pub use documents::LazyOpenApi;
use {documents::*, watch::*};

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;
use capstan_core::auth::UserInfo;
use capstan_core::authentication::request_header::FrontProxy;
use capstan_core::authentication::{Admission, IMPERSONATION_PREFIX};
use capstan_core::discovery::{Discovery, AGGREGATED_CONTENT_TYPE};
use capstan_core::error::{ApiError, StatusReason};
use capstan_core::registry::ResourceDef;
use capstan_core::registry::{Registry, RegistryHandle};
use capstan_core::verbs::{
    self, ApiCore, FieldValidation, LazyObject, ListOptions, ObjectList, View, WriteOptions,
    WriteResult,
};
use serde::Serialize;
use serde_json::{json, Value};

use negotiation::{BodyFormat, IncludeObject, Output, MAX_REQUEST_BODY_BYTES};
use request_info::{ApiPath, ResourcePath};

/// Everything the facade serves from; built once at start-up.
pub struct FacadeState {
    pub core: Arc<ApiCore>,
    pub discovery: Arc<Discovery>,
    pub openapi: Option<LazyOpenApi>,
    pub version: Value,
    /// False until start-up finished and again once shutdown began.
    pub ready: Arc<AtomicBool>,
    /// `--request-timeout`: how long a request but a watch may take at
    /// most (its `timeout` parameter may shorten it).
    pub request_timeout: Duration,
    /// The OpenAPI v3 index with the remote group/versions, kept while
    /// the local documents and the APIServices it was made from last.
    pub merged_v3_index: std::sync::Mutex<Option<aggregation::MergedIndex>>,
    /// The OpenAPI v2 document with the extension servers' merged in.
    pub merged_v2: tokio::sync::Mutex<Option<aggregation::MergedV2>>,
}

pub fn router(state: Arc<FacadeState>) -> Router {
    Router::new().fallback(dispatch).with_state(state)
}

/// A `metav1.Status` failure response.
pub fn error_response(err: &ApiError) -> Response {
    let code = StatusCode::from_u16(err.code()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut resp = json_response(code, &err.to_status(), "application/json");
    // As upstream: a Status that says when to retry says it in the header too.
    if let Some(seconds) = err.details.as_ref().and_then(|d| d.retry_after_seconds) {
        resp.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    }
    resp
}

fn json_response<T: Serialize + ?Sized>(
    code: StatusCode,
    value: &T,
    content_type: &str,
) -> Response {
    json_bytes_response(
        code,
        serde_json::to_vec(value).unwrap_or_default(),
        content_type,
    )
}

fn json_bytes_response(code: StatusCode, mut body: Vec<u8>, content_type: &str) -> Response {
    // Go's json.Encoder ends every document with a newline.
    body.push(b'\n');
    let mut resp = (code, body).into_response();
    if let Ok(ct) = HeaderValue::from_str(content_type) {
        resp.headers_mut().insert(header::CONTENT_TYPE, ct);
    }
    resp
}

/// A response document: anything serialisable, which can also say what it
/// is in the protobuf envelope.
trait Document: Serialize {
    fn to_protobuf(&self) -> Result<Vec<u8>, capstan_core::protobuf::ProtobufError>;

    fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }
}

impl Document for Value {
    fn to_protobuf(&self) -> Result<Vec<u8>, capstan_core::protobuf::ProtobufError> {
        capstan_core::protobuf::encode_object(self)
    }
}

/// An object read from the store or the cache: in JSON, its served bytes.
impl Document for LazyObject {
    fn to_protobuf(&self) -> Result<Vec<u8>, capstan_core::protobuf::ProtobufError> {
        capstan_core::protobuf::encode_object(self)
    }

    fn to_json(&self) -> Vec<u8> {
        match self.json() {
            // Room for the newline json_bytes_response adds, so that it
            // copies nothing again.
            Some(json) => {
                let mut body = Vec::with_capacity(json.len() + 1);
                body.extend_from_slice(json);
                body
            }
            None => serde_json::to_vec(&**self).unwrap_or_default(),
        }
    }
}

/// A list whose items are the watch cache's own objects: in JSON, the
/// envelope and each item's cached encoding, concatenated; in other forms
/// written from their trees instead of being copied into a new tree first.
struct ListDocument<'a> {
    kind: String,
    api_version: String,
    metadata: Value,
    items: &'a [LazyObject],
}

impl Serialize for ListDocument<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(4))?;
        map.serialize_entry("kind", &self.kind)?;
        map.serialize_entry("apiVersion", &self.api_version)?;
        map.serialize_entry("metadata", &self.metadata)?;
        let items: Vec<&Value> = self.items.iter().map(|item| &**item).collect();
        map.serialize_entry("items", &items)?;
        map.end()
    }
}

impl Document for ListDocument<'_> {
    /// The list's envelope around each item's own encoding: a cached
    /// object's is made once and kept with it (and shared with its watch
    /// events), so the next list only copies it.
    fn to_protobuf(&self) -> Result<Vec<u8>, capstan_core::protobuf::ProtobufError> {
        use capstan_core::protobuf::{encode_list, encode_object, ProtobufError};
        let head = json!({
            "kind": self.kind,
            "apiVersion": self.api_version,
            "metadata": self.metadata,
        });
        let items = self
            .items
            .iter()
            .map(|item| match item.encodings() {
                Some(encodings) => encodings
                    .protobuf_object
                    .get_or_init(|| encode_object(&item.tree_for_once()).ok().map(Bytes::from))
                    .clone()
                    // The item's own error, for the answer's fallback.
                    .ok_or(())
                    .or_else(|()| encode_object(item).map(Bytes::from)),
                None => encode_object(item).map(Bytes::from),
            })
            .collect::<Result<Vec<Bytes>, ProtobufError>>()?;
        encode_list(&head, items.iter().map(|item| &item[..]))
    }

    fn to_json(&self) -> Vec<u8> {
        let cached: usize = self
            .items
            .iter()
            .filter_map(|i| i.json())
            .map(|j| j.len() + 1)
            .sum();
        let mut out = Vec::with_capacity(cached + 128);
        out.extend_from_slice(b"{\"kind\":");
        // Strings and trees write into a Vec without failing.
        let _ = serde_json::to_writer(&mut out, &self.kind);
        out.extend_from_slice(b",\"apiVersion\":");
        let _ = serde_json::to_writer(&mut out, &self.api_version);
        out.extend_from_slice(b",\"metadata\":");
        let _ = serde_json::to_writer(&mut out, &self.metadata);
        out.extend_from_slice(b",\"items\":[");
        for (i, item) in self.items.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            match item.json() {
                Some(json) => out.extend_from_slice(json),
                None => {
                    let _ = serde_json::to_writer(&mut out, &**item);
                }
            }
        }
        out.extend_from_slice(b"]}");
        out
    }
}

fn encode<T: Document>(
    code: StatusCode,
    output: Output,
    value: &T,
    warnings: &[String],
) -> Response {
    let mut resp = match output {
        Output::Yaml => match serde_yaml::to_string(value) {
            Ok(text) => {
                let mut r = (code, text).into_response();
                r.headers_mut().insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/yaml"),
                );
                r
            }
            Err(e) => return error_response(&ApiError::internal(e)),
        },
        output if output.is_protobuf() => match value.to_protobuf() {
            Ok(bytes) => {
                let mut r = (code, bytes).into_response();
                r.headers_mut().insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static(capstan_core::protobuf::MEDIA_TYPE),
                );
                r
            }
            // Documents without a protobuf schema go out as JSON, which
            // every protobuf client also accepts.
            Err(_) => json_bytes_response(code, value.to_json(), "application/json"),
        },
        _ => json_bytes_response(code, value.to_json(), "application/json"),
    };
    for value in capstan_core::verbs::warning_values(warnings) {
        if let Ok(v) = HeaderValue::from_str(&value) {
            resp.headers_mut().append(header::WARNING, v);
        }
    }
    resp
}

fn not_found() -> ApiError {
    ApiError::new(
        StatusReason::NotFound,
        "the server could not find the requested resource",
    )
}

struct Query(Vec<(String, String)>);

impl Query {
    fn parse(raw: Option<&str>) -> Result<Self, ApiError> {
        let pairs = serde_urlencoded::from_str::<Vec<(String, String)>>(raw.unwrap_or(""))
            .map_err(|e| ApiError::bad_request(format!("invalid query: {e}")))?;
        Ok(Self(pairs))
    }
    fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
    fn all(&self, key: &str) -> Vec<String> {
        self.0
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .collect()
    }
    fn string(&self, key: &str) -> String {
        self.get(key).unwrap_or("").to_string()
    }
    fn flag(&self, key: &str) -> bool {
        matches!(self.get(key), Some("true" | "1" | "True"))
    }
    fn int(&self, key: &str) -> Result<Option<i64>, ApiError> {
        match self.get(key) {
            None | Some("") => Ok(None),
            Some(v) => v
                .parse()
                .map(Some)
                .map_err(|_| ApiError::bad_request(format!("invalid value for {key}: {v:?}"))),
        }
    }
}

fn dry_run(values: &[String]) -> Result<bool, ApiError> {
    match values {
        [] => Ok(false),
        [all] if all == "All" => Ok(true),
        [v, ..] => Err(ApiError::bad_request(format!(
            "dryRun: Unsupported value: {v:?}: supported values: \"All\""
        ))),
    }
}

fn write_options(q: &Query, user_agent: &str) -> Result<WriteOptions, ApiError> {
    Ok(WriteOptions {
        dry_run: dry_run(&q.all("dryRun"))?,
        field_manager: {
            let field_manager = q.string("fieldManager");
            capstan_core::verbs::check_field_manager(&field_manager)?;
            field_manager
        },
        default_field_manager: capstan_core::verbs::field_manager_from_user_agent(user_agent),
        field_validation: FieldValidation::parse(q.get("fieldValidation").unwrap_or(""))?,
        force: match q.get("force") {
            None | Some("false") => false,
            Some("true") => true,
            Some(other) => {
                return Err(ApiError::bad_request(format!(
                    "invalid boolean value for force: {other:?}"
                )))
            }
        },
        duplicate_fields: Vec::new(),
    })
}

/// The object a create or update writes, decoded by its Content-Type, and
/// the write's options with the keys the body repeated (the core reports
/// them as fieldValidation says).
fn written_object(
    (content_type, codecs): (Option<&str>, negotiation::Codecs),
    body: &[u8],
    kind: &str,
    q: &Query,
    user_agent: &str,
) -> Result<(Value, WriteOptions), ApiError> {
    let format = negotiation::body_format_for(content_type, false, codecs)?;
    let (object, duplicate_fields) = negotiation::decode_object(format, body, kind)?;
    let opts = WriteOptions {
        duplicate_fields,
        ..write_options(q, user_agent)?
    };
    Ok((object, opts))
}

fn list_options(q: &Query) -> Result<ListOptions, ApiError> {
    Ok(ListOptions {
        label_selector: q.string("labelSelector"),
        field_selector: q.string("fieldSelector"),
        limit: q.int("limit")?.unwrap_or(0),
        continue_token: q.string("continue"),
        resource_version: q.string("resourceVersion"),
        resource_version_match: q.string("resourceVersionMatch"),
        send_initial_events: send_initial_events(q),
    })
}

/// `sendInitialEvents`, when given as a boolean.
fn send_initial_events(q: &Query) -> Option<bool> {
    match q.get("sendInitialEvents") {
        Some("true") => Some(true),
        Some("false") => Some(false),
        _ => None,
    }
}

/// DeleteOptions from the body (kubectl sends one) and the query.
fn delete_options(
    q: &Query,
    body: &[u8],
    content_type: Option<&str>,
) -> Result<verbs::DeleteOptions, ApiError> {
    let protobuf = content_type.is_some_and(|c| c.starts_with(capstan_core::protobuf::MEDIA_TYPE));
    let from_body: Value = if body.iter().all(u8::is_ascii_whitespace) {
        json!({})
    } else if protobuf {
        negotiation::decode_body(BodyFormat::Protobuf, body, "DeleteOptions")?
    } else {
        serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("invalid DeleteOptions: {e}")))?
    };
    if !from_body.is_object() {
        return Err(ApiError::bad_request(
            "invalid DeleteOptions: expected an object",
        ));
    }
    let s = |v: &Value| v.as_str().map(str::to_string);
    let mut dry = q.all("dryRun");
    if let Some(list) = from_body.get("dryRun").and_then(Value::as_array) {
        dry.extend(list.iter().filter_map(Value::as_str).map(str::to_string));
    }
    let mut policy = s(&from_body["propagationPolicy"])
        .or_else(|| q.get("propagationPolicy").map(str::to_string));
    if policy.is_none() {
        if let Some(orphan) = from_body.get("orphanDependents").and_then(Value::as_bool) {
            policy = Some(if orphan { "Orphan" } else { "Background" }.to_string());
        }
    }
    // The policy's value is the core's to check (422 on DeleteOptions).
    Ok(verbs::DeleteOptions {
        grace_period_seconds: from_body["gracePeriodSeconds"]
            .as_i64()
            .or(q.int("gracePeriodSeconds")?),
        precondition_uid: s(&from_body["preconditions"]["uid"]),
        precondition_resource_version: s(&from_body["preconditions"]["resourceVersion"]),
        propagation_policy: policy,
        dry_run: dry_run(&dry)?,
    })
}

fn include_object(q: &Query) -> Result<IncludeObject, ApiError> {
    match q.get("includeObject") {
        None | Some("") | Some("Metadata") => Ok(IncludeObject::Metadata),
        Some("None") => Ok(IncludeObject::None),
        Some("Object") => Ok(IncludeObject::Object),
        Some(other) => Err(ApiError::bad_request(format!(
            "includeObject: Unsupported value: {other:?}: supported values: \"Metadata\", \"None\", \"Object\""
        ))),
    }
}

fn list_metadata(list: &ObjectList) -> Value {
    let mut meta = json!({"resourceVersion": list.resource_version});
    if let Some(c) = &list.continue_token {
        meta["continue"] = json!(c);
    }
    if let Some(n) = list.remaining_item_count {
        meta["remainingItemCount"] = json!(n);
    }
    meta
}

fn list_document<'a>(def: &ResourceDef, list: &'a ObjectList) -> ListDocument<'a> {
    ListDocument {
        kind: def.list_kind(),
        api_version: def.api_version(),
        metadata: list_metadata(list),
        items: &list.items,
    }
}

/// A get's answer: the object's bytes as read (JSON), or its view.
fn object_response(
    def: &ResourceDef,
    output: Output,
    q: &Query,
    object: &LazyObject,
) -> Result<Response, ApiError> {
    answer_with_object(def, output, q, (StatusCode::OK, object), &[])
}

/// One object, or a view of it; the object's own JSON, when it has one
/// encoded (the watch cache's, or what a create encoded for it), is written
/// as it is.
fn answer_with_object(
    def: &ResourceDef,
    output: Output,
    q: &Query,
    (code, object): (StatusCode, &LazyObject),
    warnings: &[String],
) -> Result<Response, ApiError> {
    if output == Output::Table || output.is_partial_metadata() {
        return Ok(encode(
            code,
            output,
            &*object_output(def, output, q, object)?,
            warnings,
        ));
    }
    Ok(encode(code, output, object, warnings))
}

/// One object, or a Table of it.
fn object_output<'a>(
    def: &ResourceDef,
    output: Output,
    q: &Query,
    object: &'a Value,
) -> Result<Cow<'a, Value>, ApiError> {
    match output {
        Output::Table => {
            let rv = object
                .pointer("/metadata/resourceVersion")
                .cloned()
                .unwrap_or(json!(""));
            Ok(Cow::Owned(table::to_table(
                def,
                std::slice::from_ref(object),
                json!({"resourceVersion": rv}),
                include_object(q)?,
            )))
        }
        output if output.is_partial_metadata() => Ok(Cow::Owned(table::partial_metadata(object))),
        _ => Ok(Cow::Borrowed(object)),
    }
}

async fn dispatch(State(state): State<Arc<FacadeState>>, req: Request) -> Response {
    let started = std::time::Instant::now();
    let measured = MeasuredRequest::of(&req);
    let _inflight = (!measured.long_running())
        .then(|| capstan_core::metrics::InflightGuard::enter(measured.mutating()));
    let answer = async {
        let deadline = if measured.long_running() {
            None
        } else {
            let parameter = query_value(req.uri().query().unwrap_or(""), "timeout");
            match capstan_core::deadline::rest_timeout(parameter.as_deref(), state.request_timeout)
            {
                Ok(timeout) => Some(tokio::time::Instant::from_std(started) + timeout),
                Err(message) => {
                    // Answered before the body is read: let the client
                    // finish sending it first (see `read_body`).
                    drain(req.into_body(), 0).await;
                    return Err(ApiError::bad_request(message));
                }
            }
        };
        capstan_core::deadline::within(deadline, handle(&state, req, &measured)).await
    };
    let resp = match answer.await {
        Ok(resp) => resp,
        Err(err) => error_response(&err),
    };
    measured.observe(resp.status().as_u16(), started.elapsed());
    resp
}

/// The first value of `name` in the raw query, decoded.
fn query_value(query: &str, name: &str) -> Option<String> {
    let pair = query
        .split('&')
        .find(|pair| pair.split_once('=').map_or(*pair, |(key, _)| key) == name)?;
    serde_urlencoded::from_str::<Vec<(String, String)>>(pair)
        .ok()?
        .pop()
        .map(|(_, value)| value)
}

/// Whether the raw query sets `name` (`true` or `1`; for dryRun, any value).
fn query_flag(query: &str, name: &str) -> bool {
    query.split('&').any(|pair| {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        key == name && (name == "dryRun" || matches!(value, "true" | "1"))
    })
}

/// What dispatch reads from a request before the handler consumes it: the
/// parsed path (which the handler shares), and what apiserver_request_total
/// and the in-flight limits count the request as.
struct MeasuredRequest {
    method: Method,
    /// The path as RequestInfo reads it, parsed once for the handler too.
    api_path: Option<ApiPath>,
    watch: bool,
    apply: bool,
    dry_run: bool,
}

impl MeasuredRequest {
    fn of(req: &Request) -> Self {
        let query = req.uri().query().unwrap_or("");
        let flag = |name: &str| query_flag(query, name);
        Self {
            method: req.method().clone(),
            api_path: request_info::parse(req.uri().path()),
            watch: flag("watch"),
            apply: content_type_of(req.headers())
                .is_some_and(|t| t.starts_with("application/apply-patch")),
            dry_run: flag("dryRun"),
        }
    }

    fn target(&self) -> Option<&ResourcePath> {
        match &self.api_path {
            Some(ApiPath::Resource(target)) => Some(target),
            _ => None,
        }
    }

    /// Upstream's reported verb (CleanVerb).
    fn verb(&self) -> &'static str {
        let collection = self.target().is_some_and(|t| t.name.is_none());
        match self.method {
            Method::GET if self.watch => "WATCH",
            Method::GET if collection => "LIST",
            Method::GET => "GET",
            Method::HEAD => "HEAD",
            Method::POST => "POST",
            Method::PUT => "PUT",
            Method::PATCH if self.apply => "APPLY",
            Method::PATCH => "PATCH",
            Method::DELETE => "DELETE",
            _ => "OTHER",
        }
    }

    /// Watches and the connect subresources (proxies, logs, exec,
    /// attach, port-forward) have no deadline and do not count against
    /// the in-flight limits, as upstream's long-running check says.
    fn long_running(&self) -> bool {
        self.watch
            || self
                .target()
                .is_some_and(|t| connect_subresource(t).is_some())
    }

    fn mutating(&self) -> bool {
        !matches!(self.method, Method::GET | Method::HEAD | Method::OPTIONS)
    }

    /// How the request counts against the in-flight limits.
    fn admission(&self) -> Admission {
        if self.long_running() {
            Admission::LongRunning
        } else if self.mutating() {
            Admission::Mutating
        } else {
            Admission::ReadOnly
        }
    }

    fn observe(&self, code: u16, elapsed: std::time::Duration) {
        let empty = String::new();
        let target = self.target();
        let text = |f: fn(&ResourcePath) -> &String| target.map(f).unwrap_or(&empty).as_str();
        let scope = match target {
            None => "",
            Some(t) if t.name.is_some() => "resource",
            Some(t) if t.namespace.is_some() => "namespace",
            Some(_) => "cluster",
        };
        let labels = capstan_core::metrics::RequestLabels {
            verb: self.verb(),
            dry_run: self.dry_run,
            group: text(|t| &t.group),
            version: text(|t| &t.version),
            resource: text(|t| &t.resource),
            subresource: target.and_then(|t| t.subresource.as_deref()).unwrap_or(""),
            scope,
        };
        capstan_core::metrics::observe_request(&labels, code, elapsed);
    }
}

/// The connect subresource a request names, if any.
fn connect_subresource(target: &ResourcePath) -> Option<&str> {
    target
        .subresource
        .as_deref()
        .filter(|s| capstan_core::connect::CONNECT_SUBRESOURCES.contains(s))
}

fn accept(headers: &HeaderMap) -> Option<String> {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

async fn handle(
    state: &FacadeState,
    req: Request,
    measured: &MeasuredRequest,
) -> Result<Response, ApiError> {
    let impersonation = req
        .headers()
        .iter()
        // Most requests have none of these.
        .filter(|(name, _)| name.as_str().starts_with(IMPERSONATION_PREFIX))
        .filter_map(|(name, value)| Some((name.as_str(), value.to_str().ok()?)));
    let authorization = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    let certificate = state.core.connection_user(
        req.extensions().get::<UserInfo>(),
        req.extensions().get::<FrontProxy>(),
        req.headers()
            .iter()
            .filter_map(|(name, value)| Some((name.as_str(), value.to_str().ok()?))),
    );
    let caller = state
        .core
        .caller(
            certificate,
            authorization,
            impersonation,
            measured.admission(),
        )
        .await?;
    let user = &caller.user;
    let path = req.uri().path().to_string();
    let method = req.method().clone();
    if let Some(resp) = non_resource(state, user, &method, &path, req.headers()).await? {
        return Ok(resp);
    }
    let Some(api_path) = &measured.api_path else {
        state
            .core
            .authorize_path(user, &verb_of_method(&method), &path)
            .await?;
        return Err(not_found());
    };
    if let Some(remote) = aggregation::remote_for(state, api_path).await? {
        return Box::pin(aggregation::proxy(state, user, &remote, api_path, req)).await;
    }
    if let ApiPath::Resource(target) = api_path {
        if let Some(subresource) = connect_subresource(target) {
            return Box::pin(connect::serve(state, user, target, subresource, req)).await;
        }
    }
    let resource = match api_path {
        ApiPath::Resource(r) => r,
        discovery_path => {
            state.core.authorize_path(user, "get", &path).await?;
            let remote = match discovery_path {
                ApiPath::Groups | ApiPath::Group(_) => state.core.remote_api_services().await?,
                _ => Vec::new(),
            };
            return discovery(state, &method, &path, req.headers(), discovery_path, remote);
        }
    };
    let query = Query::parse(req.uri().query())?;
    let headers = req.headers().clone();
    let body = read_body(req.into_body()).await?;
    resource_request(state, user, &method, &headers, &query, resource, body).await
}

/// How much of an oversized body is read and dropped before the 413 goes
/// out, and for how long.
const OVERSIZED_DRAIN_BYTES: usize = 64 * 1024 * 1024;
const OVERSIZED_DRAIN_TIME: Duration = Duration::from_secs(10);

/// The request body, up to the limit. An oversized one is read to its end
/// (within a bound) and dropped before answering 413, as Go's server lets
/// the client finish sending: over HTTP/2 an answer sent while the client
/// is still writing is followed by a reset of the stream, which some
/// clients (curl) report instead of the answer.
async fn read_body(mut body: Body) -> Result<Bytes, ApiError> {
    use http_body_util::BodyExt;
    let hint = usize::try_from(axum::body::HttpBody::size_hint(&body).lower()).unwrap_or(0);
    let mut collected = bytes::BytesMut::with_capacity(hint.min(MAX_REQUEST_BODY_BYTES));
    while let Some(frame) = body.frame().await {
        let frame = frame
            .map_err(|e| ApiError::bad_request(format!("error reading the request body: {e}")))?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        if collected.len() + data.len() > MAX_REQUEST_BODY_BYTES {
            drain(body, collected.len() + data.len()).await;
            return Err(ApiError::too_large(MAX_REQUEST_BODY_BYTES));
        }
        collected.extend_from_slice(&data);
    }
    Ok(collected.freeze())
}

/// Reads and drops the rest of a body answered before it was read (an
/// oversized one, `drained` bytes into it; a bad `timeout`), up to
/// [`OVERSIZED_DRAIN_BYTES`] and [`OVERSIZED_DRAIN_TIME`].
async fn drain(mut body: Body, mut drained: usize) {
    use http_body_util::BodyExt;
    let deadline = tokio::time::Instant::now() + OVERSIZED_DRAIN_TIME;
    while drained <= OVERSIZED_DRAIN_BYTES {
        match tokio::time::timeout_at(deadline, body.frame()).await {
            Ok(Some(Ok(frame))) => drained += frame.data_ref().map_or(0, |data| data.len()),
            _ => return,
        }
    }
}

fn verb_of_method(method: &Method) -> String {
    match *method {
        Method::GET | Method::HEAD => "get",
        Method::POST => "post",
        Method::PUT => "put",
        Method::PATCH => "patch",
        Method::DELETE => "delete",
        _ => "options",
    }
    .to_string()
}

/// Health, version and OpenAPI.
async fn non_resource(
    state: &FacadeState,
    user: &UserInfo,
    method: &Method,
    path: &str,
    headers: &HeaderMap,
) -> Result<Option<Response>, ApiError> {
    let health = ["/healthz", "/livez", "/readyz"].iter().find(|p| {
        path.strip_prefix(**p)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    });
    if let Some(check) = health {
        state.core.authorize_path(user, "get", path).await?;
        let ready = *check != "/readyz" || state.ready.load(Ordering::Relaxed);
        let (code, text) = if ready {
            (StatusCode::OK, "ok")
        } else {
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "[-]shutdown failed: reason withheld\nreadyz check failed",
            )
        };
        return Ok(Some(
            (
                code,
                [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
                text,
            )
                .into_response(),
        ));
    }
    if capstan_core::authentication::tokens::ISSUER_DISCOVERY_URLS.contains(&path) {
        state.core.authorize_path(user, "get", path).await?;
        let (document, content_type) = if path.starts_with("/openid/v1/jwks") {
            (state.core.jwks(), "application/jwk-set+json")
        } else {
            (state.core.openid_configuration(), "application/json")
        };
        let document = document.ok_or_else(not_found)?;
        return Ok(Some(json_response(StatusCode::OK, &document, content_type)));
    }
    if path == "/metrics" {
        state.core.authorize_path(user, "get", path).await?;
        return Ok(Some(
            (
                StatusCode::OK,
                [(
                    header::CONTENT_TYPE,
                    "text/plain; version=0.0.4; charset=utf-8",
                )],
                state.core.metrics_text(),
            )
                .into_response(),
        ));
    }
    if path == "/version" || path == "/version/" {
        state.core.authorize_path(user, "get", "/version").await?;
        return Ok(Some(json_response(
            StatusCode::OK,
            &state.version,
            "application/json",
        )));
    }
    if path == "/openapi/v2" || path.starts_with("/openapi/v3") {
        state.core.authorize_path(user, "get", path).await?;
        if *method != Method::GET {
            return Err(ApiError::new(
                StatusReason::MethodNotAllowed,
                format!("{method} is not supported on {path}"),
            ));
        }
        let openapi = state.openapi.as_ref().ok_or_else(not_found)?;
        let docs = if path == "/openapi/v2" {
            openapi.get_with_v2().await?
        } else {
            openapi.get().await?
        };
        let merged_v2 = if path == "/openapi/v2" {
            let remote = state.core.remote_api_services().await?;
            aggregation::merged_v2(state, &docs, &remote).await
        } else {
            None
        };
        // client-go fetches v2 only as gnostic protobuf (kubectl's client-side validation).
        if path == "/openapi/v2"
            && accept(headers).is_some_and(|a| a.contains("com.github.proto-openapi.spec.v2"))
        {
            let protobuf = match merged_v2 {
                Some((_, protobuf)) => protobuf,
                None => docs.v2_protobuf_shared().map_err(openapi_failed)?,
            };
            let protobuf = Bytes::from_owner(protobuf);
            let mut resp = (StatusCode::OK, protobuf).into_response();
            resp.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static(
                    "application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
                ),
            );
            resp.headers_mut()
                .insert(header::VARY, HeaderValue::from_static("Accept"));
            return Ok(Some(resp));
        }
        // Only JSON is served; a client asking for the protobuf form alone
        // must learn that rather than get bytes it cannot parse.
        let accepts_json = accept(headers).is_none_or(|a| a.contains("json") || a.contains("*/*"));
        if !accepts_json {
            return Err(ApiError::new(
                StatusReason::NotAcceptable,
                "only the following media types are accepted: application/json",
            ));
        }
        let bytes: Arc<[u8]> = if path == "/openapi/v2" {
            match merged_v2 {
                Some((json, _)) => json,
                None => docs.v2_shared().map_err(openapi_failed)?,
            }
        } else if path == "/openapi/v3" || path == "/openapi/v3/" {
            let remote = state.core.remote_api_services().await?;
            if remote.is_empty() {
                docs.v3_index_shared()
            } else {
                aggregation::cached_v3_index(&state.merged_v3_index, &docs, &remote)
            }
        } else {
            let gv = path.trim_start_matches("/openapi/v3/");
            // Inflated when not recently made or served: up to milliseconds
            // of CPU (api/v1), off the async threads.
            let local = match docs.recent_v3_group_version(gv) {
                Some(recent) => Some(recent),
                None => {
                    let (building, wanted) = (docs.clone(), gv.to_string());
                    tokio::task::spawn_blocking(move || building.v3_group_version(&wanted))
                        .await
                        .map_err(|_| ApiError::internal("the OpenAPI builder stopped"))?
                        .map_err(openapi_failed)?
                }
            };
            match local {
                Some(local) => local,
                None => return aggregation::remote_openapi(state, gv).await.map(Some),
            }
        };
        // The documents are megabytes; the response shares them uncopied.
        let mut resp = (StatusCode::OK, Bytes::from_owner(bytes)).into_response();
        resp.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        return Ok(Some(resp));
    }
    Ok(None)
}

fn openapi_failed(e: capstan_core::openapi::OpenApiError) -> ApiError {
    ApiError::internal(format!("OpenAPI documents: {e}"))
}

#[allow(clippy::too_many_arguments)]
async fn resource_request(
    state: &FacadeState,
    user: &UserInfo,
    method: &Method,
    headers: &HeaderMap,
    q: &Query,
    target: &ResourcePath,
    body: Bytes,
) -> Result<Response, ApiError> {
    let core = &state.core;
    let def = core.resolve(&target.group, &target.version, &target.resource)?;
    if target.subresource.as_deref() == Some("token") && def.has_subresource("token") {
        return Box::pin(token_request(core, user, method, headers, target, &body)).await;
    }
    // Only the subresources a kind really serves answer; others are 404s.
    let view = View::parse(target.subresource.as_deref())
        .filter(|v| v.subresource().is_none_or(|sub| def.has_subresource(sub)))
        .ok_or_else(not_found)?;
    let codecs = negotiation::Codecs::of(&def);
    let output = negotiation::negotiate_output_for(accept(headers).as_deref(), codecs)?;
    let agent = headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if view != View::Main {
        return Box::pin(subresource_request(
            core,
            user,
            method,
            (q, agent),
            &def,
            target,
            view,
            content_type_of(headers),
            &body,
            output,
        ))
        .await;
    }
    let ns = target.namespace.as_deref();
    let name = target.name.as_deref();
    let content_type = content_type_of(headers);
    // The writes' futures are boxed: the largest verb's state would
    // otherwise be every request's, allocated and copied for each GET.
    match (method.clone(), name) {
        (Method::GET, _) if q.flag("watch") => watch(state, user, &def, ns, name, q, output).await,
        (Method::GET, Some(name)) => {
            let obj = core
                .get_view(
                    user,
                    &def,
                    ns,
                    name,
                    View::Main,
                    &q.string("resourceVersion"),
                )
                .await?;
            object_response(&def, output, q, &obj)
        }
        (Method::GET, None) => {
            let list = core.list(user, &def, ns, &list_options(q)?).await?;
            Ok(match output {
                Output::Table => {
                    let meta = list_metadata(&list);
                    let table = table::ListTable::new(&def, &list.items, meta, include_object(q)?);
                    encode(StatusCode::OK, output, &table::ListViewDocument(table), &[])
                }
                output if output.is_partial_metadata() => {
                    let partial =
                        table::PartialMetadataList::new(&list.items, list_metadata(&list));
                    encode(
                        StatusCode::OK,
                        output,
                        &table::ListViewDocument(partial),
                        &[],
                    )
                }
                _ => encode(StatusCode::OK, output, &list_document(&def, &list), &[]),
            })
        }
        (Method::POST, None) => {
            let (obj, opts) = written_object((content_type, codecs), &body, &def.kind, q, agent)?;
            let result = Box::pin(core.create(user, &def, ns, obj, &opts)).await?;
            write_response(&def, output, q, result)
        }
        (Method::PUT, Some(name)) => {
            let (obj, opts) = written_object((content_type, codecs), &body, &def.kind, q, agent)?;
            let result =
                Box::pin(core.update(user, &def, ns, name, obj, &opts, View::Main)).await?;
            write_response(&def, output, q, result)
        }
        (Method::PATCH, Some(name)) => {
            let BodyFormat::Patch(patch_type) =
                negotiation::body_format_for(content_type, true, codecs)?
            else {
                return Err(ApiError::internal("patch body format"));
            };
            let patch = negotiation::decode_body(BodyFormat::Patch(patch_type), &body, &def.kind)?;
            let opts = write_options(q, agent)?;
            let result =
                Box::pin(core.patch(user, &def, ns, name, patch_type, &patch, &opts, View::Main))
                    .await?;
            write_response(&def, output, q, result)
        }
        (Method::DELETE, Some(name)) => {
            let opts = delete_options(q, &body, content_type)?;
            let result = Box::pin(core.delete(user, &def, ns, name, &opts)).await?;
            let pending = result
                .object
                .pointer("/metadata/deletionTimestamp")
                .is_some();
            if pending || def.returns_deleted_object {
                return Ok(encode(
                    StatusCode::OK,
                    output,
                    &*object_output(&def, output, q, &result.object)?,
                    &[],
                ));
            }
            // Upstream answers an immediate delete with a Success Status.
            // StatusDetails.group is omitempty: the core group has none.
            let mut details = serde_json::Map::new();
            details.insert("name".into(), json!(name));
            if !def.group.is_empty() {
                details.insert("group".into(), json!(def.group));
            }
            details.insert("kind".into(), json!(def.resource));
            details.insert(
                "uid".into(),
                result
                    .object
                    .pointer("/metadata/uid")
                    .cloned()
                    .unwrap_or(Value::Null),
            );
            let status = json!({
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Success",
                "details": details,
            });
            let output = output.without_object_views();
            Ok(encode(StatusCode::OK, output, &status, &[]))
        }
        (Method::DELETE, None) => {
            let opts = delete_options(q, &body, content_type)?;
            let list_opts = list_options(q)?;
            let list = Box::pin(core.delete_collection(user, &def, ns, &list_opts, &opts)).await?;
            let output = output.without_object_views();
            Ok(encode(
                StatusCode::OK,
                output,
                &list_document(&def, &list),
                &[],
            ))
        }
        (m, _) => {
            let verb = match (m, name) {
                (Method::POST, Some(_)) => "create",
                (Method::PUT, None) => "update",
                (Method::PATCH, None) => "patch",
                _ => "unknown",
            };
            Err(ApiError::new(
                StatusReason::MethodNotAllowed,
                format!("the server does not allow this method on the requested resource ({verb})"),
            ))
        }
    }
}

fn content_type_of(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
}

/// GET, PUT and PATCH of `/status` and `/scale`.
#[allow(clippy::too_many_arguments)]
async fn subresource_request(
    core: &ApiCore,
    user: &UserInfo,
    method: &Method,
    (q, agent): (&Query, &str),
    def: &ResourceDef,
    target: &ResourcePath,
    view: View,
    content_type: Option<&str>,
    body: &[u8],
    output: Output,
) -> Result<Response, ApiError> {
    let ns = target.namespace.as_deref();
    let Some(name) = target.name.as_deref() else {
        return Err(not_found());
    };
    // A Scale is not the kind's object: no Table for it.
    let output = if view == View::Scale {
        output.without_object_views()
    } else {
        output
    };
    let body_kind = if view == View::Scale {
        "Scale"
    } else {
        &def.kind
    };
    // pods/<name>/binding and pods/<name>/eviction take a Binding or an
    // Eviction for this pod, and only POST.
    if matches!(view, View::Binding | View::Eviction) {
        let (subresource, kind) = match view {
            View::Binding => ("pods/binding", "Binding"),
            _ => ("pods/eviction", "Eviction"),
        };
        if *method != Method::POST {
            return Err(ApiError::method_not_supported(
                &def.group,
                subresource,
                &method.as_str().to_ascii_lowercase(),
            ));
        }
        let format = negotiation::body_format(content_type, false)?;
        let mut posted = negotiation::decode_body(format, body, kind)?;
        let (namespace, opts) = (ns.unwrap_or_default(), write_options(q, agent)?);
        let result = if view == View::Binding {
            if capstan_core::object::name(&posted).is_empty() {
                capstan_core::object::set_meta(&mut posted, "name", json!(name));
            }
            core.bind_pod_subresource(user, namespace, posted, &opts)
                .await?
        } else {
            core.evict_pod_subresource(user, namespace, name, posted, &opts)
                .await?
        };
        return Ok(encode(
            StatusCode::CREATED,
            output.without_object_views(),
            &*result.object,
            &result.warnings,
        ));
    }
    // A custom resource's status is the resource's own (JSON only); its
    // Scale is the built-in autoscaling/v1 kind.
    let codecs = if view == View::Scale {
        negotiation::Codecs::BUILT_IN
    } else {
        negotiation::Codecs::of(def)
    };
    let result = match *method {
        Method::GET => {
            let obj = core
                .get_view(user, def, ns, name, view, &q.string("resourceVersion"))
                .await?;
            return object_response(def, output, q, &obj);
        }
        Method::PUT => {
            let (obj, opts) = written_object((content_type, codecs), body, body_kind, q, agent)?;
            core.update(user, def, ns, name, obj, &opts, view).await?
        }
        Method::PATCH => {
            let BodyFormat::Patch(patch_type) =
                negotiation::body_format_for(content_type, true, codecs)?
            else {
                return Err(ApiError::internal("patch body format"));
            };
            let patch = negotiation::decode_body(BodyFormat::Patch(patch_type), body, body_kind)?;
            core.patch(
                user,
                def,
                ns,
                name,
                patch_type,
                &patch,
                &write_options(q, agent)?,
                view,
            )
            .await?
        }
        _ => {
            return Err(ApiError::new(
                StatusReason::MethodNotAllowed,
                format!(
                    "the server does not allow this method on the requested resource ({method})"
                ),
            ))
        }
    };
    write_response(def, output, q, result)
}

/// `serviceaccounts/<name>/token`: a TokenRequest, answered with a signed
/// token (`kubectl create token`); only POST.
async fn token_request(
    core: &ApiCore,
    user: &UserInfo,
    method: &Method,
    headers: &HeaderMap,
    target: &ResourcePath,
    body: &[u8],
) -> Result<Response, ApiError> {
    if *method != Method::POST {
        return Err(ApiError::method_not_supported(
            "",
            "serviceaccounts/token",
            &method.as_str().to_ascii_lowercase(),
        ));
    }
    let (Some(namespace), Some(name)) = (target.namespace.as_deref(), target.name.as_deref())
    else {
        return Err(not_found());
    };
    let output = negotiation::negotiate_output(accept(headers).as_deref(), false)?;
    let format = negotiation::body_format(content_type_of(headers), false)?;
    let request = negotiation::decode_body(format, body, "TokenRequest")?;
    let answered = core.request_token(user, namespace, name, request).await?;
    Ok(encode(
        StatusCode::CREATED,
        output.without_object_views(),
        &answered,
        &[],
    ))
}

fn write_response(
    def: &ResourceDef,
    output: Output,
    q: &Query,
    result: WriteResult,
) -> Result<Response, ApiError> {
    let code = if result.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    answer_with_object(
        def,
        output,
        q,
        (code, &result.lazy_object()),
        &result.warnings,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_core::watch::cached::CachedObject;

    /// A list written from the cache's encodings is, byte for byte, the
    /// list serde writes from the trees; items without an encoding are
    /// written from their trees in the same place.
    #[test]
    fn a_list_of_cached_objects_is_their_bytes_in_the_envelope() {
        let a = json!({"kind": "ConfigMap", "apiVersion": "v1",
            "metadata": {"name": "a", "resourceVersion": "5"},
            "data": {"k": "v \"quoted\" ü <>&"}});
        let b = json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "b"}});
        let items = vec![
            LazyObject::cached(Arc::new(CachedObject::encode(&a))),
            LazyObject::from(b.clone()),
        ];
        let metadata = json!({"resourceVersion": "9", "continue": "x"});
        let doc = ListDocument {
            kind: "ConfigMapList".into(),
            api_version: "v1".into(),
            metadata: metadata.clone(),
            items: &items,
        };
        let expected = serde_json::to_string(&json!({"kind": "ConfigMapList",
            "apiVersion": "v1", "metadata": metadata, "items": [a, b]}))
        .unwrap();
        assert_eq!(String::from_utf8(doc.to_json()).unwrap(), expected);
        assert_eq!(serde_json::to_string(&doc).unwrap(), expected);
        // Protobuf: the items' kept envelopes in the list's, the same
        // bytes as the whole list encoded from its tree.
        let whole: Value = serde_json::from_str(&expected).unwrap();
        assert_eq!(
            doc.to_protobuf().unwrap(),
            capstan_core::protobuf::encode_object(&whole).unwrap()
        );
        assert!(
            items[0]
                .encodings()
                .unwrap()
                .protobuf_object
                .get()
                .is_some(),
            "kept for the next list"
        );
        let empty = ListDocument { items: &[], ..doc };
        assert_eq!(
            String::from_utf8(empty.to_json()).unwrap(),
            r#"{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"9","continue":"x"},"items":[]}"#
        );
    }

    fn output_size<A, B, Fut: std::future::Future>(_: fn(A, B) -> Fut) -> usize {
        std::mem::size_of::<Fut>()
    }

    /// Every request's future is allocated and copied whole (axum boxes
    /// it), whatever the request: at 27.8 KB in a test build it cost each
    /// create about 2 % of the server's CPU in memcpy. The writes' and
    /// the rare paths' futures are boxed where they are awaited, so a
    /// large one added there cannot grow every request again unnoticed.
    #[test]
    fn a_requests_future_stays_small() {
        let size = output_size(dispatch);
        assert!(size <= 8 * 1024, "dispatch's future is {size} bytes");
    }
}
