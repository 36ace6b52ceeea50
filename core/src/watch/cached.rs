//! Objects as the watch cache holds them: the JSON they are served as,
//! encoded once, instead of a tree per object. A tree of a small object
//! takes many times its JSON's size; lists and watch events written as JSON
//! need only the bytes. Readers that want the tree parse it on demand.

use std::sync::{Arc, Mutex, OnceLock, Weak};

use bytes::Bytes;
use capstan_api::kinds::Kind;
use capstan_api::printers::RowJson;
use serde_json::Value;

/// One cached object: its JSON (resourceVersion included), the other wire
/// forms made from it on demand, and its tree while some reader holds it.
#[derive(Debug)]
pub struct CachedObject {
    json: Bytes,
    /// Wire forms for lists and watch events, the JSON among them; made
    /// once per object, shared by every reader of this version of it.
    /// Made when first asked for: most cached objects are never listed in
    /// protobuf or watched, and the set is twice the size of a small
    /// object's own record.
    encodings: OnceLock<Arc<SharedEncodings>>,
    /// The tree for readers that come back to the same objects again and
    /// again (admission plugins, controllers: `WatchCache::get` and
    /// `list`); kept while this version of the object is cached.
    kept: OnceLock<Arc<Value>>,
    /// The tree while any reader still holds it (watchers of one change,
    /// a list's selectors), so concurrent readers parse it once and the
    /// cache does not keep it.
    shared: Mutex<Weak<Value>>,
    /// The object's Table row (what `kubectl get` prints), kept by the
    /// first Table of this version of it: a row needs the tree, and a
    /// Table of many objects spent most of its time parsing them.
    table_row: OnceLock<Box<KeptRow>>,
}

/// A Table row and the printer that made it.
#[derive(Debug)]
struct KeptRow {
    /// Held weakly so the printer's allocation outlives the row: no other
    /// printer can come to stand at its address.
    printer: Weak<dyn Kind>,
    row: RowJson,
}

impl CachedObject {
    /// `object` encoded as it is served; readers that come while the
    /// caller still holds the tree share it instead of parsing.
    pub fn of(object: &Arc<Value>) -> Self {
        let cached = Self::encode(object);
        *cached.shared.lock().unwrap_or_else(|p| p.into_inner()) = Arc::downgrade(object);
        cached
    }

    /// `object` encoded as it is served.
    pub fn encode(object: &Value) -> Self {
        Self::from_json(serde_json::to_vec(object).unwrap_or_default())
    }

    /// A stored value as it is served at `revision` (its resourceVersion);
    /// None for a value that is not an object's JSON. Values as Capstan
    /// writes them are served as they are stored, the revision spliced in,
    /// without a tree.
    pub fn stored(raw: &[u8], revision: i64) -> Option<Self> {
        match capstan_api::stored_json::served_json_at(raw, revision) {
            Some(json) => Some(Self::from_json(json)),
            None => crate::object::decode_at(raw, revision).map(|tree| Self::encode(&tree)),
        }
    }

    /// An object its writer just stored as `stored` at `revision`, whose
    /// tree the writer holds: served as the stored bytes with the revision
    /// spliced in, as a later read from the store serves it, instead of
    /// encoding the tree again; readers share the writer's tree while it
    /// lasts.
    pub fn written(stored: &[u8], revision: i64, tree: &Arc<Value>) -> Self {
        match capstan_api::stored_json::served_json_at(stored, revision) {
            Some(json) => {
                let cached = Self::from_json(json);
                *cached.shared.lock().unwrap_or_else(|p| p.into_inner()) = Arc::downgrade(tree);
                cached
            }
            None => Self::of(tree),
        }
    }

    fn from_json(json: Vec<u8>) -> Self {
        // Buffers grow by doubling: a boxed slice gives the unused part back.
        Self {
            json: Bytes::from(json.into_boxed_slice()),
            encodings: OnceLock::new(),
            kept: OnceLock::new(),
            shared: Mutex::new(Weak::new()),
            table_row: OnceLock::new(),
        }
    }

    /// The object's JSON, as served.
    pub fn json(&self) -> &Bytes {
        &self.json
    }

    /// Every wire form of this version of the object.
    pub fn encodings(&self) -> &Arc<SharedEncodings> {
        self.encodings.get_or_init(|| {
            let encodings = SharedEncodings::default();
            let _ = encodings.json_object.set(self.json.clone());
            Arc::new(encodings)
        })
    }

    /// The tree, kept from now on (for readers that come back to it).
    pub fn value(&self) -> Arc<Value> {
        self.kept.get_or_init(|| self.parsed()).clone()
    }

    /// The object's Table row as `printer` prints it: made by `make` for
    /// the first Table of this version of the object and kept; None when
    /// the row kept is another printer's (a custom resource's columns
    /// changed since), which the caller makes without keeping.
    pub fn table_row(
        &self,
        printer: &Arc<dyn Kind>,
        make: impl FnOnce() -> RowJson,
    ) -> Option<&RowJson> {
        let kept = self.table_row.get_or_init(|| {
            Box::new(KeptRow {
                printer: Arc::downgrade(printer),
                row: make(),
            })
        });
        std::ptr::addr_eq(kept.printer.as_ptr(), Arc::as_ptr(printer)).then_some(&kept.row)
    }

    /// Whether the set of encodings was made (a reader asked for it).
    #[cfg(test)]
    pub(crate) fn has_encodings(&self) -> bool {
        self.encodings.get().is_some()
    }

    /// Whether the tree is kept (a reader asked for `value`).
    #[cfg(test)]
    pub(crate) fn keeps_tree(&self) -> bool {
        self.kept.get().is_some()
    }

    /// The tree, shared with any reader that holds it now, not kept.
    pub fn parsed(&self) -> Arc<Value> {
        if let Some(kept) = self.kept.get() {
            return kept.clone();
        }
        let mut shared = self.shared.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(tree) = shared.upgrade() {
            return tree;
        }
        // The bytes were written from a tree: they parse.
        let tree = Arc::new(serde_json::from_slice(&self.json).unwrap_or(Value::Null));
        *shared = Arc::downgrade(&tree);
        tree
    }
}

/// Wire forms of one object, made once per version of it however many
/// readers (watchers, lists) it goes to.
#[derive(Debug, Default)]
pub struct SharedEncodings {
    /// The object as an encoded `capstan.v1.Object` (gRPC watches and lists).
    pub grpc_object: std::sync::OnceLock<bytes::Bytes>,
    /// The object as JSON (REST watches and lists).
    pub json_object: std::sync::OnceLock<bytes::Bytes>,
    /// The object in the Kubernetes protobuf envelope (REST watches and lists with
    /// protobuf); None when its kind has no protobuf schema.
    pub protobuf_object: std::sync::OnceLock<Option<bytes::Bytes>>,
    /// A REST watch event of the object as a JSON line, with its event
    /// type: shared by the watchers of one change while any of their frames
    /// still holds it, not kept with the object (a line is the object's
    /// size again). One at a time: the watchers of a change nearly all see
    /// the same type.
    json_watch_line: Mutex<(&'static str, Weak<Vec<u8>>)>,
}

impl SharedEncodings {
    /// The JSON watch line of this object as an `event_type` event
    /// ("MODIFIED"): the one another watcher's frame still holds, or
    /// `make()` (then shared in turn).
    pub fn json_watch_line(
        &self,
        event_type: &'static str,
        make: impl FnOnce() -> Vec<u8>,
    ) -> Bytes {
        let mut shared = self
            .json_watch_line
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let line = match (shared.0 == event_type, shared.1.upgrade()) {
            (true, Some(line)) => line,
            _ => {
                let line = Arc::new(make());
                *shared = (event_type, Arc::downgrade(&line));
                line
            }
        };
        Bytes::from_owner(SharedLine(line))
    }
}

/// A shared line as the owner of the `Bytes` a frame sends.
struct SharedLine(Arc<Vec<u8>>);

impl AsRef<[u8]> for SharedLine {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// An object the core hands out: a tree, or a cached object whose tree is
/// parsed only when something reads it as one. Writers that need only JSON
/// take `json()`; everything else reads it as a `Value`.
#[derive(Debug, Clone)]
pub struct LazyObject {
    cached: Option<Arc<CachedObject>>,
    tree: OnceLock<Arc<Value>>,
}

impl LazyObject {
    pub fn cached(object: Arc<CachedObject>) -> Self {
        Self {
            tree: match object.kept.get() {
                Some(kept) => OnceLock::from(kept.clone()),
                None => OnceLock::new(),
            },
            cached: Some(object),
        }
    }

    /// An object a write just made, as both its cached form and its tree.
    pub fn written(cached: Arc<CachedObject>, tree: Arc<Value>) -> Self {
        Self {
            cached: Some(cached),
            tree: OnceLock::from(tree),
        }
    }

    /// The cached object this was handed out from; None for a tree made
    /// elsewhere.
    pub fn cached_object(&self) -> Option<&Arc<CachedObject>> {
        self.cached.as_ref()
    }

    /// The object as a tree (parsed now if it was not yet).
    pub fn tree(&self) -> &Arc<Value> {
        self.tree.get_or_init(|| match &self.cached {
            Some(cached) => cached.parsed(),
            None => Arc::new(Value::Null),
        })
    }

    /// The object as a tree for one use: the one this item holds, else
    /// parsed (or shared with a reader holding it) and not kept in the
    /// item. A pass that makes something to keep for each of many items
    /// (their encodings, their Table rows) so holds one tree at a time
    /// instead of all of them until the pass ends, with what it keeps
    /// made among them.
    pub fn tree_for_once(&self) -> Arc<Value> {
        match (self.tree.get(), &self.cached) {
            (None, Some(cached)) => cached.parsed(),
            _ => self.tree().clone(),
        }
    }

    pub fn into_tree(self) -> Arc<Value> {
        self.tree();
        self.tree.into_inner().unwrap_or_default()
    }

    /// The object's JSON as the cache encoded it; None for a tree made
    /// elsewhere (a storage read, a conversion), which is encoded as usual.
    pub fn json(&self) -> Option<&Bytes> {
        self.cached.as_deref().map(CachedObject::json)
    }

    /// The cache's wire forms of the object, when it came from the cache.
    pub fn encodings(&self) -> Option<&Arc<SharedEncodings>> {
        self.cached.as_deref().map(CachedObject::encodings)
    }
}

impl From<Arc<Value>> for LazyObject {
    fn from(tree: Arc<Value>) -> Self {
        Self {
            cached: None,
            tree: OnceLock::from(tree),
        }
    }
}

impl From<Value> for LazyObject {
    fn from(tree: Value) -> Self {
        Arc::new(tree).into()
    }
}

impl std::ops::Deref for LazyObject {
    type Target = Value;

    fn deref(&self) -> &Value {
        self.tree()
    }
}

impl std::borrow::Borrow<Value> for LazyObject {
    fn borrow(&self) -> &Value {
        self.tree()
    }
}

impl serde::Serialize for LazyObject {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.tree().serialize(serializer)
    }
}

impl PartialEq for LazyObject {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_cached_object_is_its_json_and_parses_back_to_its_tree() {
        let tree = json!({"kind": "ConfigMap", "metadata": {"name": "a", "resourceVersion": "7"}, "data": {"k": "v"}});
        let cached = Arc::new(CachedObject::encode(&tree));
        assert_eq!(cached.json().as_ref(), serde_json::to_vec(&tree).unwrap());
        assert_eq!(cached.json().len(), cached.json().as_ref().len());
        assert!(!cached.has_encodings(), "made when first asked for");
        assert!(Arc::ptr_eq(cached.encodings(), cached.encodings()));
        assert_eq!(
            cached.encodings().json_object.get(),
            Some(cached.json()),
            "the JSON is one of its encodings"
        );
        let lazy = LazyObject::cached(cached.clone());
        assert_eq!(*lazy, tree);
        // Readers at the same time share one tree; none is kept after.
        let again = cached.parsed();
        assert_eq!(
            CachedObject::stored(
                br#"{"kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"v"}}"#,
                7
            )
            .expect("an object")
            .json(),
            cached.json(),
            "a stored value is served with its revision"
        );
        assert!(Arc::ptr_eq(lazy.tree(), &again));
        drop((lazy, again));
        assert!(cached.shared.lock().unwrap().upgrade().is_none());
        assert!(cached.kept.get().is_none());
        // `value` keeps it.
        let kept = cached.value();
        assert!(Arc::ptr_eq(&kept, &cached.parsed()));
        assert!(Arc::ptr_eq(&kept, LazyObject::cached(cached).tree()));
    }

    /// A tree for one use is not kept in the item: once the caller drops
    /// it, neither the item nor the cached object holds it. An item that
    /// holds a tree (a write's, a kept one) gives that one.
    #[test]
    fn a_tree_for_once_is_not_kept_in_the_item() {
        let tree = json!({"kind": "ConfigMap", "metadata": {"name": "a", "resourceVersion": "7"}});
        let cached = Arc::new(CachedObject::encode(&tree));
        let item = LazyObject::cached(cached.clone());
        let once = item.tree_for_once();
        assert_eq!(*once, tree);
        assert!(
            Arc::ptr_eq(&once, &item.tree_for_once()),
            "shared while held"
        );
        drop(once);
        assert!(item.tree.get().is_none());
        assert!(cached.shared.lock().unwrap().upgrade().is_none());

        let held = item.tree().clone();
        assert!(Arc::ptr_eq(&held, &item.tree_for_once()));
        let written = Arc::new(tree);
        let item = LazyObject::written(cached, written.clone());
        assert!(Arc::ptr_eq(&written, &item.tree_for_once()));
        let bare = LazyObject::from(written.clone());
        assert!(Arc::ptr_eq(&written, &bare.tree_for_once()));
    }

    /// A write's object is served as its stored bytes with the revision
    /// spliced in: what encoding its tree gives, without encoding it, and
    /// readers share the writer's tree. Stored bytes the splice does not
    /// take (a float) are answered from the tree instead.
    #[test]
    fn a_written_object_is_its_stored_bytes_at_its_revision() {
        let mut tree = json!({"kind": "ConfigMap", "apiVersion": "v1",
            "metadata": {"name": "a", "namespace": "n", "uid": "u",
                "creationTimestamp": "2026-11-28T00:00:00Z"},
            "data": {"k": "v \"quoted\" ü"}});
        // Where a create puts it once stored.
        capstan_api::object::set_meta(&mut tree, "resourceVersion", json!("12"));
        let tree = Arc::new(tree);
        let stored = serde_json::to_vec(&capstan_api::object::StoredForm(&tree)).expect("encodes");
        assert!(!String::from_utf8_lossy(&stored).contains("resourceVersion"));
        let written = CachedObject::written(&stored, 12, &tree);
        assert_eq!(written.json().as_ref(), serde_json::to_vec(&*tree).unwrap());
        assert!(Arc::ptr_eq(&written.parsed(), &tree), "the writer's tree");
        let lazy = LazyObject::written(Arc::new(written), tree.clone());
        assert!(Arc::ptr_eq(lazy.tree(), &tree));

        let float = Arc::new(json!({"metadata": {"name": "f", "resourceVersion": "3"},
            "spec": {"ratio": 0.5}}));
        let stored = serde_json::to_vec(&capstan_api::object::StoredForm(&float)).expect("encodes");
        assert_eq!(capstan_api::stored_json::served_json_at(&stored, 3), None);
        let written = CachedObject::written(&stored, 3, &float);
        assert_eq!(
            written.json().as_ref(),
            serde_json::to_vec(&*float).unwrap()
        );
    }

    /// The watchers of one change share its line while any frame holds
    /// it; once none does, it is gone (not kept with the object), and
    /// another event type gets a line of its own.
    #[test]
    fn watchers_of_a_change_share_its_line_while_they_hold_it() {
        let encodings = SharedEncodings::default();
        let made = std::cell::Cell::new(0);
        let line = |event_type, text: &str| {
            encodings.json_watch_line(event_type, || {
                made.set(made.get() + 1);
                text.as_bytes().to_vec()
            })
        };
        let first = line("MODIFIED", "modified");
        let second = line("MODIFIED", "made again");
        assert_eq!((first.as_ptr(), made.get()), (second.as_ptr(), 1));
        assert_eq!(second.as_ref(), b"modified");
        drop((first, second));
        let remade = line("MODIFIED", "made again");
        assert_eq!(remade.as_ref(), b"made again");
        assert_eq!(line("MODIFIED", "not made").as_ref(), b"made again");
        assert_eq!(line("DELETED", "deleted").as_ref(), b"deleted");
        assert_eq!(made.get(), 3);
    }
}
