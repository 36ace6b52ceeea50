//! The aggregation layer, as kube-aggregator does it: an APIService with a
//! `spec.service` hands its group/version to an extension API server.
//! Requests for it are authenticated and authorized here, then forwarded
//! (transport.rs) to the Service's address (backend.rs) with Capstan's
//! front-proxy certificate and the caller in `X-Remote-*` headers. The
//! APIServices are read from their watch cache, which every replica keeps
//! from storage; their availability is the availability controller's.

mod api_service;
mod backend;
mod discovery;
mod registry;
mod transport;

pub use crate::http_client::ProxyBody;
pub use api_service::RemoteApiService;
pub use backend::Location;
pub(crate) use backend::{endpoint_addresses, service_port};
pub(crate) use discovery::RemoteDiscovery;
pub use discovery::RemoteVersion;
pub(crate) use transport::BackendAnswer;
pub(crate) use transport::ProxyClients;
pub use transport::{ForwardError, ProbeError, ProxyIdentity};
