//! Capstan's API layer: what a Kubernetes object is and what each kind does,
//! with no I/O and no async runtime. The object model and its metadata, the
//! built-in kinds (`kinds/`: defaults, validation, printers, conversion),
//! the registry snapshot, errors as `metav1.Status`, selectors, patch and
//! server-side apply, the OpenAPI documents and schemas, and the protobuf
//! codecs. The server (capstan-core) runs requests through it.

pub mod apply;
pub mod auth;
pub mod conversion;
pub mod custom;
pub mod defaults;
pub mod duplicate_fields;
pub mod error;
pub mod kinds;
pub mod object;
pub mod openapi;
pub mod patch;
pub mod printers;
pub mod protobuf;
pub mod quota;
pub mod registry;
pub mod selectors;
pub mod stored_json;
pub mod validate;

pub use error::{ApiError, ApiResult};
