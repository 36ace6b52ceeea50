//! The connect subresources, as kube-apiserver's Connecters serve them:
//! `services/proxy`, `pods/proxy` and `nodes/proxy` forward any request
//! to a Service's endpoint, a pod's IP or a node's kubelet; `pods/log`,
//! `pods/exec`, `pods/attach` and `pods/portforward` go to the kubelet of
//! the pod's node. locations.rs finds where (upstream's ResourceLocation,
//! LogLocation and streamLocation, with their errors); transport.rs
//! forwards, splicing the two connections of an upgrade (WebSocket, SPDY)
//! once the backend switches protocols; translator.rs (over spdy.rs)
//! answers kubectl's WebSocket exec and attach itself and speaks SPDY to
//! the kubelet.

mod locations;
mod rewrite;
mod spdy;
mod translator;
mod transport;

pub use locations::{Connection, PodLogOptions};
pub use rewrite::LinkRewriter;
pub use translator::{
    translate, tunnel, websocket_accept, RemoteCommandStreams, PORT_FORWARD_PROTOCOL,
    SPDY_PROTOCOL, TUNNELING_PROTOCOL, WEBSOCKET_PROTOCOL,
};
pub(crate) use transport::ConnectClients;
pub use transport::{ConnectBody, KubeletConfig};

/// Upstream's default `--kubelet-preferred-address-types`.
pub const DEFAULT_PREFERRED_ADDRESS_TYPES: &[&str] = &[
    "Hostname",
    "InternalDNS",
    "InternalIP",
    "ExternalDNS",
    "ExternalIP",
];

/// The subresources served by connecting somewhere else.
pub const CONNECT_SUBRESOURCES: &[&str] = &["proxy", "log", "exec", "attach", "portforward"];
