//! End-to-end tests: each module starts the real `capstan` binary and
//! drives it with real clients. They are one test binary, not one per file,
//! so CI links once and runs every file's tests side by side.

mod admission_plugins;
mod admission_policies;
mod admission_review;
mod admission_webhooks;
mod aggregation;
mod api_groups;
mod api_services;
mod bad_input;
mod client_informer;
mod common;
mod connect;
mod conversion_webhook;
mod corpus;
mod custom_resources;
mod eviction;
mod exact_answers;
mod flowcontrol;
mod garbage_collection;
mod grpc;
mod grpc_webhooks;
mod kube_rs;
mod kubectl_flows;
mod lifecycle;
mod metadata;
mod metrics;
mod persistence;
mod pod_security;
mod protobuf;
mod python_client;
mod python_operators;
mod rbac;
mod resource_quota;
mod runtime_kinds;
mod server_side_apply;
mod service_cidrs;
mod services;
mod storage;
mod subresources;
mod tokens;
