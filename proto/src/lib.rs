//! Generated protobuf and tonic code for package `capstan.v1`.

pub mod json;

pub mod v1 {
    tonic::include_proto!("capstan.v1");

    /// Encoded descriptors of every capstan.v1 file, for server reflection.
    pub const FILE_DESCRIPTOR_SET: &[u8] =
        tonic::include_file_descriptor_set!("capstan_descriptor");
}
