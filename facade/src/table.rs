//! metav1.Table responses (what kubectl get prints), built from the core's
//! per-kind printers.

use capstan_core::registry::ResourceDef;
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
    let mut row = json!({"cells": def.kind_impl.table_cells(object, now)});
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
