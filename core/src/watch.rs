//! Watch: turns the store's ordered change stream for one collection into
//! Kubernetes watch events, applying selectors with upstream's transition
//! rules (an object that stops matching is DELETED for that watcher).

use std::time::Duration;

use futures::stream::{self, BoxStream, StreamExt};
use serde_json::{json, Value};

use crate::auth::UserInfo;
use crate::error::{ApiError, ApiResult};
use crate::object;
use crate::registry::ResourceDef;
use crate::selectors::{FieldSelector, LabelSelector};
use crate::service::{selectable_fields, ApiCore, ListOptions};
use crate::storage::{EventKind, StorageError, StorageEvent};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    Added,
    Modified,
    Deleted,
    Bookmark,
    Error,
}

impl EventType {
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
    /// The object, a bookmark (kind + metadata.resourceVersion only), or a Status.
    pub object: Value,
}

#[derive(Debug, Clone, Default)]
pub struct WatchOptions {
    pub label_selector: String,
    pub field_selector: String,
    pub resource_version: String,
    pub allow_bookmarks: bool,
    pub timeout: Option<Duration>,
    pub send_initial_events: Option<bool>,
}

/// How often an idle watch with bookmarks allowed reports progress.
const BOOKMARK_INTERVAL: Duration = Duration::from_secs(60);
/// Upstream's --min-request-timeout; watches without a timeout last 1-2x this.
const MIN_REQUEST_TIMEOUT: Duration = Duration::from_secs(1800);

pub type WatchStream = BoxStream<'static, WatchEvent>;

struct Filter {
    labels: LabelSelector,
    fields: FieldSelector,
}

impl Filter {
    fn matches(&self, obj: &Value) -> bool {
        self.labels.matches(obj) && self.fields.matches(obj)
    }
}

fn decode_at(raw: &[u8], revision: i64) -> Option<Value> {
    let mut obj: Value = serde_json::from_slice(raw).ok()?;
    object::set_meta(
        &mut obj,
        "resourceVersion",
        Value::String(revision.to_string()),
    );
    Some(obj)
}

/// One store change as this watcher sees it, if at all.
fn translate(ev: &StorageEvent, filter: &Filter) -> Option<WatchEvent> {
    let current = decode_at(&ev.value, ev.revision)?;
    let previous = ev
        .prev_value
        .as_ref()
        .and_then(|p| decode_at(p, ev.revision));
    let was = previous.as_ref().is_some_and(|p| filter.matches(p));
    match ev.kind {
        EventKind::Delete => was.then_some(WatchEvent {
            event_type: EventType::Deleted,
            object: current,
        }),
        EventKind::Put => {
            let is = filter.matches(&current);
            match (previous.is_some() && was, is) {
                (true, true) => Some(WatchEvent {
                    event_type: EventType::Modified,
                    object: current,
                }),
                (false, true) => Some(WatchEvent {
                    event_type: EventType::Added,
                    object: current,
                }),
                (true, false) => previous.map(|p| WatchEvent {
                    event_type: EventType::Deleted,
                    object: p,
                }),
                (false, false) => None,
            }
        }
    }
}

fn bookmark(def: &ResourceDef, revision: i64, initial_events_end: bool) -> WatchEvent {
    let mut metadata = json!({"resourceVersion": revision.to_string()});
    if initial_events_end {
        metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
    }
    WatchEvent {
        event_type: EventType::Bookmark,
        object: json!({"kind": def.kind, "apiVersion": def.api_version(), "metadata": metadata}),
    }
}

fn error_event(err: &ApiError) -> WatchEvent {
    WatchEvent {
        event_type: EventType::Error,
        object: err.to_status(),
    }
}

impl ApiCore {
    pub async fn watch(
        &self,
        user: &UserInfo,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: Option<&str>,
        opts: &WatchOptions,
    ) -> ApiResult<WatchStream> {
        let namespace = if def.namespaced {
            namespace.filter(|ns| !ns.is_empty())
        } else {
            None
        };
        crate::auth::authorize_resource(
            user,
            &crate::auth::ResourceAttributes {
                verb: "watch",
                group: def.group,
                resource: def.resource,
                namespace,
                name,
            },
        )?;
        if !def.supports("watch") {
            return Err(ApiError::method_not_supported(
                def.group,
                def.resource,
                "watch",
            ));
        }
        let mut field_selector = opts.field_selector.clone();
        if let Some(name) = name {
            if !field_selector.is_empty() {
                field_selector.push(',');
            }
            field_selector.push_str(&format!("metadata.name={name}"));
        }
        let filter = Filter {
            labels: LabelSelector::parse(&opts.label_selector)?,
            fields: FieldSelector::parse(&field_selector, &selectable_fields(def))?,
        };
        let prefix = def.key_prefix(&self.prefix, namespace);
        let rv = opts.resource_version.as_str();
        // Without a resourceVersion ("" or "0") a watch starts with the
        // current state as ADDED events, as upstream does; so does an explicit
        // sendInitialEvents=true.
        let initial = opts
            .send_initial_events
            .unwrap_or(rv.is_empty() || rv == "0");
        let mut initial_events = Vec::new();
        let start = if initial {
            let listed = self
                .list_authorized(
                    def,
                    namespace,
                    &ListOptions {
                        label_selector: opts.label_selector.clone(),
                        field_selector: field_selector.clone(),
                        ..Default::default()
                    },
                )
                .await?;
            initial_events = listed
                .items
                .into_iter()
                .map(|object| WatchEvent {
                    event_type: EventType::Added,
                    object,
                })
                .collect();
            listed.resource_version.parse::<i64>().unwrap_or(0)
        } else {
            rv.parse::<i64>()
                .ok()
                .filter(|r| *r >= 0)
                .ok_or_else(|| ApiError::bad_request(format!("invalid resource version {rv:?}")))?
        };
        if opts.send_initial_events == Some(true) && opts.allow_bookmarks {
            initial_events.push(bookmark(def, start, true));
        }
        let timeout = opts.timeout.unwrap_or_else(|| {
            let extra = rand::random::<f64>();
            MIN_REQUEST_TIMEOUT.mul_f64(1.0 + extra)
        });
        let deadline = tokio::time::Instant::now() + timeout;
        let head = stream::iter(initial_events);
        let changes = match self.storage.watch(&prefix, start).await {
            Ok(s) => s,
            Err(StorageError::Compacted { compacted, .. }) => {
                // Upstream answers a too-old watch with one ERROR event, then ends.
                let err = ApiError::expired(format!(
                    "too old resource version: {start} ({})",
                    compacted + 1
                ));
                return Ok(stream::iter(vec![error_event(&err)]).boxed());
            }
            Err(e) => return Err(ApiError::internal(e)),
        };
        let def_kind = def.kind;
        let api_version = def.api_version();
        let bookmarks = opts.allow_bookmarks;
        struct State {
            changes: crate::storage::EventStream,
            filter: Filter,
            last: i64,
            done: bool,
        }
        let state = State {
            changes,
            filter,
            last: start,
            done: false,
        };
        let tail = stream::unfold(state, move |mut st| {
            let api_version = api_version.clone();
            async move {
                loop {
                    if st.done {
                        return None;
                    }
                    let tick = tokio::time::sleep(BOOKMARK_INTERVAL);
                    tokio::select! {
                        _ = tokio::time::sleep_until(deadline) => return None,
                        _ = tick, if bookmarks => {
                            let ev = WatchEvent {
                                event_type: EventType::Bookmark,
                                object: json!({"kind": def_kind, "apiVersion": api_version, "metadata": {"resourceVersion": st.last.to_string()}}),
                            };
                            return Some((ev, st));
                        }
                        next = st.changes.next() => match next {
                            None => return None,
                            Some(Err(e)) => {
                                st.done = true;
                                let err = match e {
                                    StorageError::Compacted { requested, compacted } => ApiError::expired(format!("too old resource version: {requested} ({})", compacted + 1)),
                                    other => ApiError::internal(other),
                                };
                                return Some((error_event(&err), st));
                            }
                            Some(Ok(ev)) => {
                                st.last = ev.revision;
                                if let Some(out) = translate(&ev, &st.filter) {
                                    return Some((out, st));
                                }
                            }
                        }
                    }
                }
            }
        });
        Ok(head.chain(tail).boxed())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn ev(kind: EventKind, value: Value, prev: Option<Value>) -> StorageEvent {
        StorageEvent {
            kind,
            key: "/k".into(),
            value: Arc::from(serde_json::to_vec(&value).unwrap()),
            prev_value: prev.map(|p| Arc::from(serde_json::to_vec(&p).unwrap())),
            revision: 7,
            create_revision: 1,
        }
    }

    #[test]
    fn selector_transitions_follow_upstream() {
        let filter = Filter {
            labels: LabelSelector::parse("app=web").unwrap(),
            fields: FieldSelector::default(),
        };
        let web = json!({"metadata": {"name": "a", "labels": {"app": "web"}}});
        let api = json!({"metadata": {"name": "a", "labels": {"app": "api"}}});
        let t = |e| translate(&e, &filter).map(|w| w.event_type);
        assert_eq!(
            t(ev(EventKind::Put, web.clone(), None)),
            Some(EventType::Added)
        );
        assert_eq!(
            t(ev(EventKind::Put, web.clone(), Some(web.clone()))),
            Some(EventType::Modified)
        );
        assert_eq!(
            t(ev(EventKind::Put, api.clone(), Some(web.clone()))),
            Some(EventType::Deleted)
        );
        assert_eq!(
            t(ev(EventKind::Put, web.clone(), Some(api.clone()))),
            Some(EventType::Added)
        );
        assert_eq!(t(ev(EventKind::Put, api.clone(), None)), None);
        assert_eq!(
            t(ev(EventKind::Delete, web.clone(), Some(web.clone()))),
            Some(EventType::Deleted)
        );
        let out = translate(&ev(EventKind::Put, web, None), &filter).unwrap();
        assert_eq!(out.object["metadata"]["resourceVersion"], "7");
    }
}
