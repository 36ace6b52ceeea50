//! A Rust client for Capstan's gRPC API.
//!
//! - [`Client`]: get, list, create, update, patch, delete and watch on any
//!   resource, objects as `serde_json::Value`.
//! - Warnings the server attaches to an answer (a field dropped under
//!   `fieldValidation=Warn`, for one) go to a [`WarningHandler`]: by
//!   default the log, as client-go's, or your own
//!   ([`Client::with_warning_handler`]).
//! - [`Informer`]: list, then watch from the list's resourceVersion, keeping a
//!   [`Store`] that other tasks read; re-lists when the server says the
//!   resourceVersion is too old, backs off on transient errors.
//!
//! ```no_run
//! # async fn run() -> Result<(), capstan_client::Error> {
//! use capstan_client::{Client, GroupVersionResource, Informer, InformerEvent};
//!
//! let client = Client::from_kubeconfig("capstan-data/admin.kubeconfig").await?;
//! let configmaps = GroupVersionResource::core("v1", "configmaps");
//! let mut informer = Informer::new(client, configmaps, Some("default"), "");
//! let store = informer.store();
//! loop {
//!     match informer.next_event().await {
//!         Ok(InformerEvent::Added(obj)) => println!("added {}", obj["metadata"]["name"]),
//!         Ok(_) => {}
//!         Err(e) => eprintln!("informer: {e} (retrying)"),
//!     }
//!     println!("{} objects cached", store.len());
//! }
//! # }
//! ```

mod bodies;
mod client;
mod config;
mod error;
mod informer;

/// The generated capstan.v1 messages, for calls the helpers do not cover;
/// their objects are `serde_json` values (`capstan_proto::json`).
pub use capstan_proto::{json, v1 as pb};
pub use client::{
    Client, EventType, GroupVersionResource, ListParams, ObjectList, PatchType, WarningHandler,
    WatchEvent, WatchParams, WatchStream,
};
pub use config::{load_kubeconfig, parse_kubeconfig, KubeconfigTarget, TlsConfig};
pub use error::{ApiError, Error, Result};
pub use informer::{Backoff, Informer, InformerEvent, ObjectKey, Store};
