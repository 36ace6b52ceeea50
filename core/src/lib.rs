//! Capstan's core: the object model, the resource registry and per-kind
//! strategies, storage backends, watch, authorization, and the gRPC services.
//! Both front ends (REST facade, gRPC) call [`verbs::ApiCore`].

pub mod allocator;
mod binding;
pub mod cache;
pub mod caller;
mod component_status;
pub mod controllers;
pub mod discovery;
mod eviction;
pub mod grpc;
pub mod grpc_encode;
pub mod grpc_served;
pub mod impersonation;
pub mod inflight;
pub mod metrics;
pub mod rbac;
pub mod read_options;
pub mod registry;
mod review;
pub mod scale;
pub mod services;
pub mod tokens;
pub mod verbs;
pub mod watch;

#[cfg(test)]
mod testing;

// The layers below, under the paths the server has always used.
pub use capstan_api::{
    apply, auth, conversion, defaults, duplicate_fields, error, kinds, object, openapi, patch,
    printers, protobuf, selectors, validate,
};
pub use capstan_storage as storage;

pub use error::{ApiError, ApiResult};
pub use verbs::ApiCore;
