//! Server-side Table printing: the columns and cells `kubectl get` shows.
//!
//! kubectl asks for `application/json;as=Table;v=v1;g=meta.k8s.io` and prints
//! whatever columns the server returns, so these tables are what users see.
//! They follow kube-apiserver's printers (k8s.io/kubernetes
//! pkg/printers/internalversion) column for column. The server always renders
//! the wide variant (kubectl hides priority-1 columns itself unless `-o wide`),
//! so every row carries a cell for every column.
//!
//! Objects arrive as versioned Kubernetes JSON and may be partial. Upstream
//! prints internal objects that have been defaulted, so where a field has an
//! API default (replicas 1, protocol TCP, Service type ClusterIP, ...) a
//! missing value prints as that default; anything else missing prints as
//! upstream's zero value ("", 0, "<none>", "<unknown>").
//!
//! Each kind prints itself, in its file in `kinds/`; here is what their
//! printers share: [`TableColumn`] and the column builders, the cell helpers
//! (`values.rs`), the descriptions of columns several kinds show, upstream's
//! default table for kinds without a printer, and the tests of every printer.

mod cell;
pub(crate) mod descriptions;
#[cfg(test)]
mod tests;
pub(crate) mod values;

use chrono::SecondsFormat;
use std::borrow::Cow;

use serde_json::Value;

pub use cell::{cells_at, Cell, RowJson, Since};
pub use values::{human_duration, label_selector_string};

use {descriptions::*, values::*};

/// One column of a metav1.Table.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TableColumn {
    pub name: Cow<'static, str>,
    #[serde(rename = "type")]
    pub type_: Cow<'static, str>,
    pub format: Cow<'static, str>,
    pub description: Cow<'static, str>,
    pub priority: i32,
}

pub(crate) fn col(
    name: &'static str,
    type_: &'static str,
    description: &'static str,
) -> TableColumn {
    TableColumn {
        name: Cow::Borrowed(name),
        type_: Cow::Borrowed(type_),
        format: Cow::Borrowed(""),
        description: Cow::Borrowed(description),
        priority: 0,
    }
}

pub(crate) fn wide(
    name: &'static str,
    type_: &'static str,
    description: &'static str,
) -> TableColumn {
    TableColumn {
        priority: 1,
        ..col(name, type_, description)
    }
}

pub(crate) fn name_col() -> TableColumn {
    TableColumn {
        format: Cow::Borrowed("name"),
        ..col("Name", "string", D_NAME)
    }
}

pub(crate) fn age_col() -> TableColumn {
    col("Age", "string", D_CREATED)
}

pub(crate) fn containers_images_cols() -> [TableColumn; 2] {
    [
        wide("Containers", "string", D_CONTAINERS),
        wide("Images", "string", D_IMAGES),
    ]
}

/// The columns of upstream's default table convertor, which prints every
/// kind without a printer of its own.
pub fn default_table_columns() -> Vec<TableColumn> {
    vec![name_col(), col("Created At", "date", D_CREATED)]
}

/// A row of upstream's default table convertor.
pub fn default_table_cells(object: &Value) -> Vec<Cell> {
    // Upstream formats Go's zero time when the timestamp is missing.
    let created = timestamp(object, "/metadata/creationTimestamp")
        .map(|t| t.to_rfc3339_opts(SecondsFormat::Secs, true))
        .unwrap_or_else(|| "0001-01-01T00:00:00Z".to_string());
    vec![name(object).into(), created.into()]
}
