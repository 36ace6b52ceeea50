//! Capstan's server core, one folder per stage of a request:
//! authentication (who is calling), authorization (RBAC, impersonation,
//! the reviews), the run-time registry, the verbs, the watch caches and
//! their fan-out, the controllers, and the gRPC adapters. Both front ends
//! (REST facade, gRPC) call [`verbs::ApiCore`]. What objects are and what
//! each kind does is capstan-api's; storage is capstan-storage's.

pub mod addresses;
pub mod admission;
pub mod aggregator;
pub mod authentication;
pub mod authorization;
pub mod connect;
pub mod controllers;
pub mod deadline;
pub mod discovery;
pub mod grpc;
pub mod http_client;
pub mod inflight;
pub mod metrics;
pub mod registry;
pub mod verbs;
pub mod watch;
pub mod webhooks;

#[cfg(test)]
mod testing;

// The layers below, under the paths the server has always used.
pub use capstan_api::{
    apply, auth, conversion, custom, defaults, duplicate_fields, error, kinds, object, openapi,
    patch, printers, protobuf, quota, selectors, validate,
};
pub use capstan_storage as storage;

pub use error::{ApiError, ApiResult};
pub use verbs::ApiCore;
