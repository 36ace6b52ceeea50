//! Watch responses: JSON lines, Tables, or length-prefixed protobuf frames.

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderValue};
use axum::response::Response;
use capstan_core::auth::UserInfo;
use capstan_core::error::{ApiError, StatusReason};
use capstan_core::registry::ResourceDef;
use capstan_core::watch::{EventType, WatchOptions};
use futures::StreamExt;
use serde_json::{json, Value};

use crate::negotiation::Output;
use crate::{include_object, send_initial_events, table, FacadeState, Query};

pub(super) async fn watch(
    state: &FacadeState,
    user: &UserInfo,
    def: &Arc<ResourceDef>,
    ns: Option<&str>,
    name: Option<&str>,
    q: &Query,
    output: Output,
) -> Result<Response, ApiError> {
    if output == Output::Yaml {
        return Err(ApiError::new(
            StatusReason::NotAcceptable,
            "only the following media types are accepted: application/json, application/json;stream=watch",
        ));
    }
    let opts = WatchOptions {
        label_selector: q.string("labelSelector"),
        field_selector: q.string("fieldSelector"),
        resource_version: q.string("resourceVersion"),
        allow_bookmarks: q.flag("allowWatchBookmarks"),
        timeout: q
            .int("timeoutSeconds")?
            .filter(|t| *t > 0)
            .map(|t| Duration::from_secs(t as u64)),
        send_initial_events: send_initial_events(q),
        resource_version_match: q.string("resourceVersionMatch"),
    };
    let include = include_object(q)?;
    let events = state.core.watch(user, def, ns, name, &opts).await?;
    let def = def.clone();
    let lines = events.map(move |ev| {
        let event_type = ev.event_type.as_str();
        // Views made for this watcher are encoded here; the object itself
        // is encoded once per change for all its watchers.
        let view = match (output, ev.event_type) {
            (Output::Table, EventType::Added | EventType::Modified | EventType::Deleted) => {
                let rv = ev
                    .object
                    .pointer("/metadata/resourceVersion")
                    .cloned()
                    .unwrap_or(json!(""));
                Some(table::to_table(
                    &def,
                    std::slice::from_ref(&*ev.object),
                    json!({"resourceVersion": rv}),
                    include,
                ))
            }
            (output, EventType::Added | EventType::Modified | EventType::Deleted)
                if output.is_partial_metadata() =>
            {
                Some(table::partial_metadata(&ev.object))
            }
            _ => None,
        };
        let frame = match (view, output.is_protobuf()) {
            (Some(view), true) => Bytes::from(protobuf_watch_frame(
                event_type,
                &view,
                capstan_core::protobuf::encode_object(&view).ok().as_deref(),
            )),
            (Some(view), false) => Bytes::from(json_watch_line(event_type, &json_bytes(&view))),
            (None, true) => {
                let embedded = ev.encodings().protobuf_object.get_or_init(|| {
                    capstan_core::protobuf::encode_object(&ev.object)
                        .ok()
                        .map(Bytes::from)
                });
                Bytes::from(protobuf_watch_frame(
                    event_type,
                    &ev.object,
                    embedded.as_deref(),
                ))
            }
            // The common case, a change sent to many watchers: one line
            // for all of them.
            (None, false) => ev.encodings().json_watch_line(event_type, || {
                let json = ev
                    .encodings()
                    .json_object
                    .get_or_init(|| Bytes::from(json_bytes(&ev.object)));
                json_watch_line(event_type, json)
            }),
        };
        Ok::<_, std::convert::Infallible>(frame)
    });
    let mut resp = Response::new(Body::from_stream(lines));
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(if output.is_protobuf() {
            capstan_core::protobuf::WATCH_MEDIA_TYPE
        } else {
            "application/json"
        }),
    );
    resp.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache, private"),
    );
    Ok(resp)
}

/// One protobuf watch frame from the object's encoding (`embedded`); an
/// object that cannot be encoded becomes an ERROR event carrying an
/// InternalError Status, so the client learns why rather than seeing the
/// stream stall.
/// `object` is read only when there is no encoding (a cached object is
/// not parsed for nothing).
pub(super) fn protobuf_watch_frame<O: std::borrow::Borrow<Value> + ?Sized>(
    event_type: &str,
    object: &O,
    embedded: Option<&[u8]>,
) -> Vec<u8> {
    let frame = match embedded {
        Some(embedded) => capstan_core::protobuf::watch_frame(event_type, embedded),
        None => capstan_core::protobuf::encode_watch_event(event_type, object.borrow()),
    };
    frame.unwrap_or_else(|e| {
        let status = ApiError::internal(e).to_status();
        capstan_core::protobuf::encode_watch_event("ERROR", &status).unwrap_or_default()
    })
}

pub(super) fn json_bytes(object: &Value) -> Vec<u8> {
    serde_json::to_vec(object).unwrap_or_else(|_| b"null".to_vec())
}

/// `{"type":…,"object":…}` and a newline around the object's JSON.
pub(super) fn json_watch_line(event_type: &str, object_json: &[u8]) -> Vec<u8> {
    let mut line = Vec::with_capacity(object_json.len() + event_type.len() + 24);
    line.extend_from_slice(b"{\"type\":\"");
    line.extend_from_slice(event_type.as_bytes());
    line.extend_from_slice(b"\",\"object\":");
    line.extend_from_slice(object_json);
    line.extend_from_slice(b"}\n");
    line
}
