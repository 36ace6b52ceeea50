//! The core service: one implementation of every verb, called in-process by
//! the REST facade and by the gRPC adapter. Each method runs the same stages:
//! authorization → registry lookup → prepare (metadata, strategy defaulting)
//! → validation → storage (create / compare-and-swap update / delete).

mod api_core;
mod binding;
mod bootstrap;
mod checks;
mod cluster_ips;
mod component_status;
mod create;
mod delete;
mod delete_collection;
mod eviction;
mod get;
mod list;
mod patch;
pub mod read_options;
pub mod scale;
mod serving;
#[cfg(test)]
mod tests;
mod update;

pub use api_core::*;
pub use bootstrap::SYSTEM_NAMESPACES;
pub(crate) use cluster_ips::ip_address_for;
