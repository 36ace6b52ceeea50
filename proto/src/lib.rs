//! Generated protobuf and tonic code for package `capstan.v1`.

pub mod json;

pub mod v1 {
    tonic::include_proto!("capstan.v1");

    /// Encoded descriptors of every capstan.v1 file, for server reflection.
    pub const FILE_DESCRIPTOR_SET: &[u8] =
        tonic::include_file_descriptor_set!("capstan_descriptor");
}

/// The service an admission webhook serves when its configuration asks to
/// be called over gRPC (`admission.capstan.dev/protocol: grpc`).
pub mod webhook {
    pub mod v1 {
        tonic::include_proto!("capstan.webhook.v1");
    }
}
