//! What can go wrong while benchmarking.

#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("io: {0}")]
    Io(#[from] std::io::Error),
    #[error("tls: {0}")]
    Tls(String),
    #[error("http: {0}")]
    Http(String),
    #[error("http/2: {0}")]
    Hyper(#[from] hyper::Error),
    #[error("HTTP {0}: {1}")]
    Status(u16, String),
    #[error("grpc client: {0}")]
    Client(#[from] capstan_client::Error),
    #[error("storage: {0}")]
    Storage(#[from] capstan_core::storage::StorageError),
    #[error("json: {0}")]
    Json(#[from] serde_json::Error),
    #[error("start-up: {0}")]
    Startup(String),
    #[error("/proc: {0}")]
    Proc(String),
}
