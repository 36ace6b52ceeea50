//! The client's error types.

use std::path::PathBuf;

use serde_json::Value;

/// Everything a [`Client`](crate::Client) call can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("invalid endpoint {endpoint:?}: {source}")]
    InvalidEndpoint {
        endpoint: String,
        #[source]
        source: tonic::transport::Error,
    },
    #[error("connecting to {endpoint}: {source}")]
    Connect {
        endpoint: String,
        #[source]
        source: tonic::transport::Error,
    },
    #[error("reading kubeconfig {path}: {source}")]
    KubeconfigRead {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("parsing kubeconfig: {0}")]
    KubeconfigParse(#[from] serde_yaml::Error),
    #[error("kubeconfig: {0}")]
    Kubeconfig(String),
    #[error("kubeconfig field {field}: invalid base64: {source}")]
    KubeconfigBase64 {
        field: &'static str,
        #[source]
        source: base64::DecodeError,
    },
    /// The server answered with an error status.
    #[error(transparent)]
    Api(#[from] ApiError),
    /// An argument or a server answer that cannot be turned into what was asked for.
    #[error("invalid object: {0}")]
    InvalidObject(String),
}

impl Error {
    /// The server's error, if this is one.
    pub fn api(&self) -> Option<&ApiError> {
        match self {
            Self::Api(e) => Some(e),
            _ => None,
        }
    }

    /// 404 / NotFound.
    pub fn is_not_found(&self) -> bool {
        self.api().is_some_and(|e| e.code == tonic::Code::NotFound)
    }

    /// 409 AlreadyExists.
    pub fn is_already_exists(&self) -> bool {
        self.api()
            .is_some_and(|e| e.code == tonic::Code::AlreadyExists)
    }

    /// 409 Conflict (a stale resourceVersion on update).
    pub fn is_conflict(&self) -> bool {
        self.api().is_some_and(|e| e.code == tonic::Code::Aborted)
    }

    /// 410 Gone / Expired: the resourceVersion asked for is no longer held.
    pub fn is_expired(&self) -> bool {
        self.api().is_some_and(ApiError::is_expired)
    }
}

/// An error status from the server: the gRPC code and message, plus the
/// `metav1.Status` the server attaches in the status details.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message} ({code:?})")]
pub struct ApiError {
    pub code: tonic::Code,
    pub message: String,
    /// The `metav1.Status` object (reason, code, details), when the server sent one.
    pub status: Option<Value>,
}

impl ApiError {
    /// `metav1.Status.reason`, e.g. "NotFound", "Expired".
    pub fn reason(&self) -> Option<&str> {
        self.status.as_ref()?.get("reason")?.as_str()
    }

    /// The HTTP code the REST side would answer with.
    pub fn http_code(&self) -> Option<u16> {
        self.status
            .as_ref()?
            .get("code")?
            .as_u64()
            .and_then(|c| u16::try_from(c).ok())
    }

    pub fn is_expired(&self) -> bool {
        self.http_code() == Some(410)
            || matches!(self.reason(), Some("Expired" | "Gone"))
            // The core maps Expired and Gone to OUT_OF_RANGE when no Status is attached.
            || (self.status.is_none() && self.code == tonic::Code::OutOfRange)
    }

    /// From a watch ERROR event, whose object is a `metav1.Status`.
    pub(crate) fn from_status_object(status: Value) -> Self {
        let http = status.get("code").and_then(Value::as_u64).unwrap_or(500);
        let code = match http {
            400 | 422 => tonic::Code::InvalidArgument,
            401 => tonic::Code::Unauthenticated,
            403 => tonic::Code::PermissionDenied,
            404 => tonic::Code::NotFound,
            409 => tonic::Code::Aborted,
            410 => tonic::Code::OutOfRange,
            429 => tonic::Code::ResourceExhausted,
            503 => tonic::Code::Unavailable,
            504 => tonic::Code::DeadlineExceeded,
            _ => tonic::Code::Internal,
        };
        let message = status
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("watch error")
            .to_string();
        Self {
            code,
            message,
            status: Some(status),
        }
    }
}

/// Trailer in which capstan sends the `metav1.Status` JSON of a failed call.
pub const STATUS_TRAILER: &str = "x-kubernetes-status-bin";

fn parse_status(bytes: &[u8]) -> Option<Value> {
    serde_json::from_slice::<Value>(bytes)
        .ok()
        .filter(|v| v.get("kind").and_then(Value::as_str) == Some("Status"))
}

impl From<tonic::Status> for ApiError {
    fn from(status: tonic::Status) -> Self {
        // The trailer is where the server puts it; the status details are
        // read too, for servers that carry it there instead.
        let from_trailer = status
            .metadata()
            .get_bin(STATUS_TRAILER)
            .and_then(|v| v.to_bytes().ok())
            .and_then(|b| parse_status(&b));
        let parsed = from_trailer.or_else(|| parse_status(status.details()));
        Self {
            code: status.code(),
            message: status.message().to_string(),
            status: parsed,
        }
    }
}

impl From<tonic::Status> for Error {
    fn from(status: tonic::Status) -> Self {
        Self::Api(status.into())
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn status_details_are_parsed() {
        let body = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
            "reason": "NotFound", "code": 404, "message": "configmaps \"x\" not found"});
        let status = tonic::Status::with_details(
            tonic::Code::NotFound,
            "configmaps \"x\" not found",
            serde_json::to_vec(&body).unwrap().into(),
        );
        let err = Error::from(status);
        assert!(err.is_not_found());
        let api = err.api().unwrap();
        assert_eq!(api.reason(), Some("NotFound"));
        assert_eq!(api.http_code(), Some(404));
    }

    #[test]
    fn status_trailer_is_parsed() {
        let body = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
            "reason": "AlreadyExists", "code": 409, "message": "configmaps \"x\" already exists"});
        let mut metadata = tonic::metadata::MetadataMap::new();
        metadata.insert_bin(
            STATUS_TRAILER,
            tonic::metadata::MetadataValue::from_bytes(&serde_json::to_vec(&body).unwrap()),
        );
        let status = tonic::Status::with_metadata(
            tonic::Code::AlreadyExists,
            "configmaps \"x\" already exists",
            metadata,
        );
        let err = Error::from(status);
        assert!(err.is_already_exists());
        assert_eq!(err.api().and_then(ApiError::http_code), Some(409));
        assert_eq!(err.api().and_then(ApiError::reason), Some("AlreadyExists"));
    }

    #[test]
    fn a_status_without_details_still_classifies() {
        let err = Error::from(tonic::Status::out_of_range("too old resource version"));
        assert!(err.is_expired());
        assert!(Error::from(tonic::Status::aborted("x")).is_conflict());
    }

    #[test]
    fn watch_error_events_map_to_codes() {
        let e = ApiError::from_status_object(json!({"kind": "Status", "code": 410,
            "reason": "Expired", "message": "too old resource version: 1 (5)"}));
        assert!(e.is_expired());
        assert_eq!(e.code, tonic::Code::OutOfRange);
        assert_eq!(e.message, "too old resource version: 1 (5)");
    }
}
