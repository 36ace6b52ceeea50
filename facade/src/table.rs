//! metav1.Table responses (what kubectl get prints), built from the core's
//! per-kind printers.

use capstan_core::printers::{cells_at, RowJson};
use capstan_core::registry::ResourceDef;
use capstan_core::verbs::LazyObject;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use crate::negotiation::IncludeObject;

/// PartialObjectMetadata of an object, the default row object.
pub fn partial_metadata(object: &Value) -> Value {
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": object.get("metadata").cloned().unwrap_or_else(|| json!({})),
    })
}

fn row(
    def: &ResourceDef,
    object: &Value,
    include: IncludeObject,
    now: chrono::DateTime<chrono::Utc>,
) -> Value {
    let cells = cells_at(&def.kind_impl.table_cells(object), now);
    let mut row = json!({ "cells": cells });
    match include {
        IncludeObject::None => {}
        IncludeObject::Metadata => row["object"] = partial_metadata(object),
        IncludeObject::Object => row["object"] = object.clone(),
    }
    row
}

/// A Table of `objects`, with list metadata when it answers a list.
pub fn to_table<T: std::borrow::Borrow<Value>>(
    def: &ResourceDef,
    objects: &[T],
    list_metadata: Value,
    include: IncludeObject,
) -> Value {
    let now = chrono::Utc::now();
    let mut ordered: Vec<&Value> = objects.iter().map(|o| o.borrow()).collect();
    if let Some(order) = def.kind_impl.table_row_order() {
        ordered.sort_by(|a, b| order(a, b));
    }
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_metadata,
        "columnDefinitions": def.kind_impl.table_columns(),
        "rows": ordered.into_iter().map(|o| row(def, o, include, now)).collect::<Vec<_>>(),
    })
}

/// A list answered as a view of its items (a Table, a
/// PartialObjectMetadataList): its tree, and the bytes that tree
/// serializes to written without building it (the tests compare them).
pub(crate) trait ListView {
    fn tree(&self) -> Value;
    fn json(&self) -> Vec<u8>;
}

/// A `ListView` as a response document: JSON from `json`, YAML and
/// protobuf from the tree.
pub(crate) struct ListViewDocument<V>(pub(crate) V);

impl<V: ListView> Serialize for ListViewDocument<V> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.tree().serialize(serializer)
    }
}

impl<V: ListView> crate::Document for ListViewDocument<V> {
    fn to_protobuf(&self) -> Result<Vec<u8>, capstan_core::protobuf::ProtobufError> {
        capstan_core::protobuf::encode_object(&self.0.tree())
    }

    fn to_json(&self) -> Vec<u8> {
        self.0.json()
    }
}

/// A list answered as a Table. In JSON it is written row by row from each
/// item (its cells, and its metadata or its own bytes as the row's
/// object) instead of being built as one tree first: the tree copied every
/// item's metadata twice (into the row, then into the document) and cost
/// about 20 times the plain list. A cached item's cells are the row its
/// cached object keeps, and its metadata is copied from its bytes, so a
/// Table of objects printed before parses none of them. YAML and protobuf
/// are written from the tree as before.
pub(crate) struct ListTable<'a> {
    def: &'a ResourceDef,
    items: &'a [LazyObject],
    list_metadata: Value,
    include: IncludeObject,
}

impl<'a> ListTable<'a> {
    pub(crate) fn new(
        def: &'a ResourceDef,
        items: &'a [LazyObject],
        list_metadata: Value,
        include: IncludeObject,
    ) -> Self {
        Self {
            def,
            items,
            list_metadata,
            include,
        }
    }
}

impl ListView for ListTable<'_> {
    fn tree(&self) -> Value {
        to_table(
            self.def,
            self.items,
            self.list_metadata.clone(),
            self.include,
        )
    }

    fn json(&self) -> Vec<u8> {
        let now = chrono::Utc::now();
        let mut ordered: Vec<&LazyObject> = self.items.iter().collect();
        if let Some(order) = self.def.kind_impl.table_row_order() {
            ordered.sort_by(|a, b| order(a, b));
        }
        let mut out = Vec::with_capacity(256 + self.items.len() * 128);
        out.extend_from_slice(br#"{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":"#);
        // Trees and strings write into a Vec without failing.
        let _ = serde_json::to_writer(&mut out, &self.list_metadata);
        out.extend_from_slice(br#","columnDefinitions":"#);
        let _ = serde_json::to_writer(&mut out, &self.def.kind_impl.table_columns());
        out.extend_from_slice(br#","rows":["#);
        for (i, item) in ordered.into_iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(br#"{"cells":"#);
            write_cells(&mut out, self.def, item, now);
            match self.include {
                IncludeObject::None => {}
                IncludeObject::Metadata => {
                    out.extend_from_slice(br#","object":"#);
                    write_partial_metadata_of(&mut out, item);
                }
                IncludeObject::Object => {
                    out.extend_from_slice(br#","object":"#);
                    write_object(&mut out, item);
                }
            }
            out.push(b'}');
        }
        out.extend_from_slice(b"]}");
        out
    }
}

/// An item's cells, from the row its cached object keeps (made and kept
/// on the first Table of it), so a Table of cached objects parses only
/// those it has not printed before.
fn write_cells(
    out: &mut Vec<u8>,
    def: &ResourceDef,
    item: &LazyObject,
    now: chrono::DateTime<chrono::Utc>,
) {
    let kind = &def.kind_impl;
    // The tree is not kept in the item: a first Table held every item's
    // tree until its end, and the kept rows, made among them, pinned
    // their pages.
    let make = || RowJson::of(&kind.table_cells(&item.tree_for_once()));
    match item
        .cached_object()
        .and_then(|cached| cached.table_row(kind, make))
    {
        Some(row) => row.write(now, out),
        None => make().write(now, out),
    }
}

/// A list answered as a PartialObjectMetadataList. In JSON each item's
/// metadata is copied from its own bytes, parsed no further than finding
/// where it starts and ends.
pub(crate) struct PartialMetadataList<'a> {
    items: &'a [LazyObject],
    list_metadata: Value,
}

impl<'a> PartialMetadataList<'a> {
    pub(crate) fn new(items: &'a [LazyObject], list_metadata: Value) -> Self {
        Self {
            items,
            list_metadata,
        }
    }
}

impl ListView for PartialMetadataList<'_> {
    fn tree(&self) -> Value {
        let mut doc = json!({
            "kind": "PartialObjectMetadataList",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": self.list_metadata,
        });
        // Inserted as built; json!() would copy every item again.
        doc["items"] = Value::Array(
            self.items
                .iter()
                .map(|item| partial_metadata(item))
                .collect(),
        );
        doc
    }

    fn json(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(256 + self.items.len() * 512);
        out.extend_from_slice(
            br#"{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":"#,
        );
        let _ = serde_json::to_writer(&mut out, &self.list_metadata);
        out.extend_from_slice(br#","items":["#);
        for (i, item) in self.items.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_partial_metadata_of(&mut out, item);
        }
        out.extend_from_slice(b"]}");
        out
    }
}

const PARTIAL_METADATA_HEAD: &[u8] =
    br#"{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":"#;

/// `partial_metadata`'s bytes for the item: its metadata copied from its
/// bytes when it has them, else serialized from its tree in place.
fn write_partial_metadata_of(out: &mut Vec<u8>, item: &LazyObject) {
    out.extend_from_slice(PARTIAL_METADATA_HEAD);
    match item.json().and_then(|json| metadata_slice(json)) {
        Some(metadata) => out.extend_from_slice(metadata.get().as_bytes()),
        None => match item.get("metadata") {
            Some(metadata) => {
                let _ = serde_json::to_writer(&mut *out, metadata);
            }
            None => out.extend_from_slice(b"{}"),
        },
    }
    out.push(b'}');
}

/// The object's own bytes when it has them, as its tree serializes.
fn write_object(out: &mut Vec<u8>, object: &LazyObject) {
    match object.json() {
        Some(json) => out.extend_from_slice(json),
        None => {
            let _ = serde_json::to_writer(&mut *out, &**object);
        }
    }
}

/// Where an object's `metadata` is in its JSON: the object's bytes are
/// what its tree serializes to, so the slice is what the metadata's tree
/// serializes to, found without building either tree.
fn metadata_slice(json: &[u8]) -> Option<&RawValue> {
    #[derive(serde::Deserialize)]
    struct Metadata<'a> {
        #[serde(borrow)]
        metadata: Option<&'a RawValue>,
    }
    serde_json::from_slice::<Metadata<'_>>(json).ok()?.metadata
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Document;
    use capstan_core::registry::Registry;
    use capstan_core::watch::cached::CachedObject;
    use std::sync::Arc;

    fn def(group: &str, version: &str, resource: &str) -> Arc<ResourceDef> {
        Registry::builtin()
            .lookup(group, version, resource)
            .expect("built in")
    }

    /// Items as a list hands them out: the cache's (with their bytes) and
    /// trees without bytes, metadata with text that JSON escapes.
    fn items(objects: &[Value]) -> Vec<LazyObject> {
        objects
            .iter()
            .enumerate()
            .map(|(i, object)| match i % 2 {
                0 => LazyObject::cached(Arc::new(CachedObject::encode(object))),
                _ => LazyObject::from(object.clone()),
            })
            .collect()
    }

    fn config_map(name: &str) -> Value {
        json!({"kind": "ConfigMap", "apiVersion": "v1",
            "metadata": {"name": name, "namespace": "ns", "resourceVersion": "7",
                "creationTimestamp": "2020-01-02T03:04:05Z",
                "labels": {"a": "x \"quoted\" ü <>&\u{2028}"},
                "annotations": {"note": "line\nbreak\u{1}"}},
            "data": {"k": "v", "l": "w"}})
    }

    /// The rows written one by one are the bytes of the Table built as a
    /// tree, for every `includeObject` and for a kind that orders its rows.
    #[test]
    fn a_list_table_in_json_is_the_tables_tree() {
        let config_maps = def("", "v1", "configmaps");
        let objects: Vec<Value> = ["b", "a", "c"].into_iter().map(config_map).collect();
        let no_metadata = json!({"kind": "ConfigMap", "apiVersion": "v1", "data": {}});
        let mut with_bare = objects.clone();
        with_bare.push(no_metadata);
        let flow_schemas = def("flowcontrol.apiserver.k8s.io", "v1", "flowschemas");
        let schema = |name: &str, precedence: i64| {
            json!({"kind": "FlowSchema", "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
                "metadata": {"name": name, "creationTimestamp": "2020-01-02T03:04:05Z"},
                "spec": {"matchingPrecedence": precedence,
                    "priorityLevelConfiguration": {"name": "global-default"}}})
        };
        let schemas = vec![schema("b", 900), schema("a", 100), schema("c", 100)];
        let list_metadata = json!({"resourceVersion": "9", "continue": "x"});
        for (def, objects) in [(&config_maps, &with_bare), (&flow_schemas, &schemas)] {
            let items = items(objects);
            for include in [
                IncludeObject::None,
                IncludeObject::Metadata,
                IncludeObject::Object,
            ] {
                let table =
                    ListViewDocument(ListTable::new(def, &items, list_metadata.clone(), include));
                let tree = to_table(def, objects, list_metadata.clone(), include);
                assert_eq!(
                    String::from_utf8(table.to_json()).unwrap(),
                    serde_json::to_string(&tree).unwrap(),
                    "{} {include:?}",
                    def.resource
                );
                assert_eq!(
                    serde_json::to_string(&table).unwrap(),
                    serde_json::to_string(&tree).unwrap()
                );
            }
        }
        let empty = ListViewDocument(ListTable::new(
            &config_maps,
            &[],
            json!({}),
            IncludeObject::Metadata,
        ));
        assert_eq!(
            serde_json::from_slice::<Value>(&empty.to_json()).unwrap()["rows"],
            json!([])
        );
    }

    /// A Table keeps each cached item's row, and later Tables write the
    /// kept rows (no tree parsed) with ages as of their own time; a
    /// printer that is not the one a row was kept for makes its own.
    #[test]
    fn a_table_keeps_cached_items_rows_for_later_tables() {
        let config_maps = def("", "v1", "configmaps");
        let created = chrono::Utc::now() - chrono::TimeDelta::hours(3);
        let object = json!({"kind": "ConfigMap", "apiVersion": "v1",
            "metadata": {"name": "a", "namespace": "ns",
                "creationTimestamp": created.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)},
            "data": {"k": "v"}});
        let cached = Arc::new(CachedObject::encode(&object));
        let table_of = |def: &ResourceDef| {
            let items = [LazyObject::cached(cached.clone())];
            let table = ListTable::new(def, &items, json!({}), IncludeObject::None).json();
            serde_json::from_slice::<Value>(&table).unwrap()["rows"][0]["cells"].take()
        };
        let first = table_of(&config_maps);
        assert_eq!(first, json!(["a", 1, "3h"]));
        assert!(cached
            .table_row(&config_maps.kind_impl, || panic!(
                "the first Table kept its row"
            ))
            .is_some());
        let again = table_of(&config_maps);
        assert_eq!(again, first);
        // What a later Table writes is the kept row, not one made again.
        let primed = Arc::new(CachedObject::encode(&object));
        let _ = primed.table_row(&config_maps.kind_impl, || {
            RowJson::of(&[capstan_core::printers::Cell::from("kept")])
        });
        let items = [LazyObject::cached(primed)];
        let table = ListTable::new(&config_maps, &items, json!({}), IncludeObject::None).json();
        assert_eq!(
            serde_json::from_slice::<Value>(&table).unwrap()["rows"][0]["cells"],
            json!(["kept"])
        );

        // The same objects printed by another printer (a custom resource
        // whose columns changed): that printer's cells, nothing kept.
        let other = ResourceDef::new(
            "",
            "v1",
            "configmaps",
            "ConfigMap",
            true,
            def("", "v1", "secrets").kind_impl.clone(),
        );
        let printed = table_of(&other);
        assert_eq!(
            printed,
            json!(cells_at(
                &other.kind_impl.table_cells(&object),
                chrono::Utc::now()
            ))
        );
        assert!(cached
            .table_row(&other.kind_impl, || panic!("kept"))
            .is_none());
    }

    /// Each item's metadata copied from its bytes is what the item's
    /// PartialObjectMetadata tree writes, escapes included.
    #[test]
    fn a_partial_metadata_list_in_json_is_its_tree() {
        let mut objects: Vec<Value> = ["b", "a"].into_iter().map(config_map).collect();
        objects.push(json!({"kind": "ConfigMap", "apiVersion": "v1", "data": {}}));
        objects.push(json!({"kind": "ConfigMap", "apiVersion": "v1",
            "data": {"metadata": {"name": "not this one"}}, "metadata": {"name": "late"}}));
        let mut items = items(&objects);
        // Bytes for the bare object too, so that the copy handles it.
        items.push(LazyObject::cached(Arc::new(CachedObject::encode(
            &objects[2],
        ))));
        objects.push(objects[2].clone());
        let list_metadata = json!({"resourceVersion": "9"});
        let list = ListViewDocument(PartialMetadataList::new(&items, list_metadata.clone()));
        let expected = json!({
            "kind": "PartialObjectMetadataList",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": list_metadata,
            "items": objects.iter().map(partial_metadata).collect::<Vec<_>>(),
        });
        assert_eq!(
            String::from_utf8(list.to_json()).unwrap(),
            serde_json::to_string(&expected).unwrap()
        );
        assert_eq!(
            serde_json::to_string(&list).unwrap(),
            serde_json::to_string(&expected).unwrap()
        );
        assert_eq!(
            list.to_protobuf().unwrap(),
            capstan_core::protobuf::encode_object(&expected).unwrap()
        );
    }
}
