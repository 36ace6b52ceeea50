//! Capstan's core: the object model, the resource registry and per-kind
//! strategies, storage backends, watch, authorization, and the gRPC services.
//! Both front ends (REST facade, gRPC) call [`verbs::ApiCore`].

pub mod allocator;
pub mod apply;
pub mod auth;
mod binding;
pub mod cache;
pub mod caller;
mod component_status;
pub mod controllers;
pub mod conversion;
pub mod defaults;
pub mod discovery;
pub mod duplicate_fields;
pub mod error;
mod eviction;
pub mod grpc;
pub mod grpc_encode;
pub mod grpc_served;
pub mod impersonation;
pub mod inflight;
pub mod kinds;
pub mod metrics;
pub mod object;
pub mod openapi;
pub mod patch;
pub mod printers;
pub mod protobuf;
pub mod rbac;
pub mod read_options;
pub mod registry;
mod review;
pub mod scale;
pub mod selectors;
pub mod services;
pub mod storage;
pub mod tokens;
pub mod validate;
pub mod verbs;
pub mod watch;

pub use error::{ApiError, ApiResult};
pub use verbs::ApiCore;
