//! The core's one error type. Every failure a client can see is an [`ApiError`];
//! it maps once to a `metav1.Status` (REST) and once to a `tonic::Status` (gRPC),
//! with upstream's reasons, codes and message forms.

use serde_json::{json, Value};

/// `metav1.StatusReason`, with the HTTP code each one travels with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusReason {
    BadRequest,
    Unauthorized,
    Forbidden,
    NotFound,
    AlreadyExists,
    Conflict,
    Gone,
    Expired,
    Invalid,
    MethodNotAllowed,
    NotAcceptable,
    RequestEntityTooLarge,
    UnsupportedMediaType,
    TooManyRequests,
    InternalError,
    ServiceUnavailable,
    Timeout,
    /// `metav1.StatusReasonUnknown` (""): a failure upstream passes on as
    /// it is, with a 500 (a conversion webhook's failure).
    Unknown,
}

impl StatusReason {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::BadRequest => "BadRequest",
            Self::Unauthorized => "Unauthorized",
            Self::Forbidden => "Forbidden",
            Self::NotFound => "NotFound",
            Self::AlreadyExists => "AlreadyExists",
            Self::Conflict => "Conflict",
            Self::Gone => "Gone",
            Self::Expired => "Expired",
            Self::Invalid => "Invalid",
            Self::MethodNotAllowed => "MethodNotAllowed",
            Self::NotAcceptable => "NotAcceptable",
            Self::RequestEntityTooLarge => "RequestEntityTooLarge",
            Self::UnsupportedMediaType => "UnsupportedMediaType",
            Self::TooManyRequests => "TooManyRequests",
            Self::InternalError => "InternalError",
            Self::ServiceUnavailable => "ServiceUnavailable",
            Self::Timeout => "Timeout",
            Self::Unknown => "",
        }
    }

    /// The reason upstream's errors carry for an HTTP code, as a client
    /// reads a Status without one (`apierrors.ReasonForError` by code).
    pub fn for_code(code: u16) -> Self {
        match code {
            400 => Self::BadRequest,
            401 => Self::Unauthorized,
            403 => Self::Forbidden,
            404 => Self::NotFound,
            405 => Self::MethodNotAllowed,
            406 => Self::NotAcceptable,
            409 => Self::Conflict,
            410 => Self::Gone,
            413 => Self::RequestEntityTooLarge,
            415 => Self::UnsupportedMediaType,
            422 => Self::Invalid,
            429 => Self::TooManyRequests,
            503 => Self::ServiceUnavailable,
            504 => Self::Timeout,
            _ => Self::InternalError,
        }
    }

    pub fn http_code(self) -> u16 {
        match self {
            Self::BadRequest => 400,
            Self::Unauthorized => 401,
            Self::Forbidden => 403,
            Self::NotFound => 404,
            Self::MethodNotAllowed => 405,
            Self::NotAcceptable => 406,
            Self::AlreadyExists | Self::Conflict => 409,
            Self::Gone | Self::Expired => 410,
            Self::RequestEntityTooLarge => 413,
            Self::UnsupportedMediaType => 415,
            Self::Invalid => 422,
            Self::TooManyRequests => 429,
            Self::InternalError | Self::Unknown => 500,
            Self::ServiceUnavailable => 503,
            Self::Timeout => 504,
        }
    }

    #[cfg(feature = "grpc")]
    fn grpc_code(self) -> tonic::Code {
        use tonic::Code;
        match self {
            Self::BadRequest | Self::Invalid => Code::InvalidArgument,
            Self::Unauthorized => Code::Unauthenticated,
            Self::Forbidden => Code::PermissionDenied,
            Self::NotFound => Code::NotFound,
            Self::AlreadyExists => Code::AlreadyExists,
            Self::Conflict => Code::Aborted,
            Self::Gone | Self::Expired => Code::OutOfRange,
            Self::MethodNotAllowed | Self::NotAcceptable | Self::UnsupportedMediaType => {
                Code::Unimplemented
            }
            Self::RequestEntityTooLarge | Self::TooManyRequests => Code::ResourceExhausted,
            Self::InternalError | Self::Unknown => Code::Internal,
            Self::ServiceUnavailable => Code::Unavailable,
            Self::Timeout => Code::DeadlineExceeded,
        }
    }
}

/// One field-level problem, as `metav1.StatusCause` (and upstream's field.Error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// "FieldValueInvalid", "FieldValueRequired", "FieldValueNotSupported", ...
    pub reason: &'static str,
    /// The full message without the field path, e.g. `Invalid value: "A": ...`.
    pub message: String,
    /// JSON path of the field, e.g. `metadata.name`.
    pub field: String,
}

impl FieldError {
    pub fn invalid(field: impl Into<String>, value: &str, detail: &str) -> Self {
        Self {
            reason: "FieldValueInvalid",
            message: format!("Invalid value: {}: {detail}", go_quote(value)),
            field: field.into(),
        }
    }

    /// A cause with a message only (no field, no reason), as an admission
    /// policy's denial carries it.
    pub fn message_only(message: impl Into<String>) -> Self {
        Self {
            reason: "",
            message: message.into(),
            field: String::new(),
        }
    }

    pub fn required(field: impl Into<String>, detail: &str) -> Self {
        let message = if detail.is_empty() {
            "Required value".to_string()
        } else {
            format!("Required value: {detail}")
        };
        Self {
            reason: "FieldValueRequired",
            message,
            field: field.into(),
        }
    }

    pub fn forbidden(field: impl Into<String>, detail: &str) -> Self {
        Self {
            reason: "FieldValueForbidden",
            message: format!("Forbidden: {detail}"),
            field: field.into(),
        }
    }

    pub fn too_long(field: impl Into<String>, value: &str, max: usize) -> Self {
        Self {
            reason: "FieldValueTooLong",
            message: format!(
                "Too long: may not be more than {max} bytes ({})",
                go_quote(value)
            ),
            field: field.into(),
        }
    }

    /// `Invalid value` whose value is already rendered the way Go's
    /// field.Error prints it (`-1`, `map[string]string{"a":"b"}`, `"x"`).
    pub fn invalid_rendered(field: impl Into<String>, rendered: &str, detail: &str) -> Self {
        let message = if detail.is_empty() {
            format!("Invalid value: {rendered}")
        } else {
            format!("Invalid value: {rendered}: {detail}")
        };
        Self {
            reason: "FieldValueInvalid",
            message,
            field: field.into(),
        }
    }

    /// upstream's TypeInvalid: a value of the wrong JSON type.
    pub fn type_invalid(field: impl Into<String>, rendered: &str, detail: &str) -> Self {
        Self {
            reason: "FieldValueTypeInvalid",
            ..Self::invalid_rendered(field, rendered, detail)
        }
    }

    /// `field is immutable`, upstream's ValidateImmutableField.
    pub fn immutable(field: impl Into<String>, rendered: &str) -> Self {
        Self::invalid_rendered(field, rendered, "field is immutable")
    }

    /// An enum value outside the supported set, listed in upstream's order.
    pub fn not_supported(field: impl Into<String>, value: &str, supported: &[&str]) -> Self {
        Self::not_supported_rendered(field, &go_quote(value), supported)
    }

    /// [`FieldError::not_supported`] for a value that is not printed as a string.
    pub fn not_supported_rendered(
        field: impl Into<String>,
        rendered: &str,
        supported: &[&str],
    ) -> Self {
        let mut message = format!("Unsupported value: {rendered}");
        if !supported.is_empty() {
            let quoted: Vec<String> = supported.iter().map(|v| go_quote(v)).collect();
            message.push_str(&format!(": supported values: {}", quoted.join(", ")));
        }
        Self {
            reason: "FieldValueNotSupported",
            message,
            field: field.into(),
        }
    }

    pub fn duplicate(field: impl Into<String>, value: &str) -> Self {
        Self::duplicate_rendered(field, &go_quote(value), "")
    }

    pub fn duplicate_rendered(field: impl Into<String>, rendered: &str, detail: &str) -> Self {
        let message = if detail.is_empty() {
            format!("Duplicate value: {rendered}")
        } else {
            format!("Duplicate value: {rendered}: {detail}")
        };
        Self {
            reason: "FieldValueDuplicate",
            message,
            field: field.into(),
        }
    }

    pub fn not_found(field: impl Into<String>, value: &str) -> Self {
        Self {
            reason: "FieldValueNotFound",
            message: format!("Not found: {}", go_quote(value)),
            field: field.into(),
        }
    }

    /// `Too many: 3: must have at most 2 items`.
    pub fn too_many(field: impl Into<String>, actual: usize, max: usize) -> Self {
        let noun = if max == 1 { "item" } else { "items" };
        Self {
            reason: "FieldValueTooMany",
            message: format!("Too many: {actual}: must have at most {max} {noun}"),
            field: field.into(),
        }
    }

    /// `Too long: may not be more than N bytes` (upstream's TooLong, which
    /// never prints the value).
    pub fn too_long_bytes(field: impl Into<String>, max: usize) -> Self {
        let unit = if max == 1 { "byte" } else { "bytes" };
        Self {
            reason: "FieldValueTooLong",
            message: format!("Too long: may not be more than {max} {unit}"),
            field: field.into(),
        }
    }

    /// `field: message`, as upstream's field.Error.Error().
    pub fn render(&self) -> String {
        format!("{}: {}", self.field, self.message)
    }
}

/// Go's `%q` of a string (strconv.Quote), which is how upstream quotes
/// invalid values.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() => {
                if (c as u32) <= 0xffff {
                    out.push_str(&format!("\\u{:04x}", c as u32));
                } else {
                    out.push_str(&format!("\\U{:08x}", c as u32));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `metav1.StatusDetails`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatusDetails {
    pub name: String,
    pub group: String,
    pub kind: String,
    pub causes: Vec<FieldError>,
    pub retry_after_seconds: Option<i64>,
}

/// A failed API call, carrying everything needed to build a `metav1.Status`.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct ApiError {
    pub reason: StatusReason,
    pub message: String,
    /// Boxed: errors travel through every Result in the pipeline, so they stay small.
    pub details: Option<Box<StatusDetails>>,
    /// A code and reason another component chose (an admission webhook's
    /// denial), passed on as they are instead of the reason's own.
    pub passed: Option<Box<PassedStatus>>,
    /// What in admission refused the request (a webhook, a policy, a
    /// plugin), for the Admission service's answer.
    pub denied_by: Option<Box<str>>,
}

/// The code and reason of a Status another component answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PassedStatus {
    pub code: u16,
    /// Any text, or empty (then the Status has no reason).
    pub reason: String,
}

/// `group` + `resource`, printed as upstream's `schema.GroupResource.String()`
/// ("configmaps", "deployments.apps").
pub fn qualified(resource: &str, group: &str) -> String {
    if group.is_empty() {
        resource.to_string()
    } else {
        format!("{resource}.{group}")
    }
}

impl ApiError {
    pub fn new(reason: StatusReason, message: impl Into<String>) -> Self {
        Self {
            reason,
            message: message.into(),
            details: None,
            passed: None,
            denied_by: None,
        }
    }

    /// The same error, naming what in admission refused the request
    /// (unless it names something already).
    pub fn denied_by(mut self, who: &str) -> Self {
        if self.denied_by.is_none() {
            self.denied_by = Some(who.into());
        }
        self
    }

    /// A failure with the code and reason another component answered.
    pub fn passed(code: u16, reason: &str, message: impl Into<String>) -> Self {
        Self {
            passed: Some(Box::new(PassedStatus {
                code,
                reason: reason.to_string(),
            })),
            ..Self::new(StatusReason::Unknown, message)
        }
    }

    /// The same failure answered with another code and reason, as upstream
    /// overwrites them on an admission policy's Forbidden.
    pub fn answered_as(mut self, code: u16, reason: &str) -> Self {
        self.passed = Some(Box::new(PassedStatus {
            code,
            reason: reason.to_string(),
        }));
        self
    }

    /// The details' causes (when the error has details).
    pub fn with_causes(mut self, causes: Vec<FieldError>) -> Self {
        if let Some(details) = self.details.as_mut() {
            details.causes = causes;
        }
        self
    }

    fn with_details(mut self, name: &str, group: &str, kind: &str) -> Self {
        self.details = Some(Box::new(StatusDetails {
            name: name.to_string(),
            group: group.to_string(),
            kind: kind.to_string(),
            ..Default::default()
        }));
        self
    }

    pub fn not_found(group: &str, resource: &str, name: &str) -> Self {
        Self::new(
            StatusReason::NotFound,
            format!("{} \"{name}\" not found", qualified(resource, group)),
        )
        .with_details(name, group, resource)
    }

    pub fn already_exists(group: &str, resource: &str, name: &str) -> Self {
        Self::new(
            StatusReason::AlreadyExists,
            format!("{} \"{name}\" already exists", qualified(resource, group)),
        )
        .with_details(name, group, resource)
    }

    pub fn conflict(group: &str, resource: &str, name: &str, why: &str) -> Self {
        Self::new(
            StatusReason::Conflict,
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": {why}",
                qualified(resource, group)
            ),
        )
        .with_details(name, group, resource)
    }

    /// The optimistic-concurrency failure every client retries on.
    pub fn stale_object(group: &str, resource: &str, name: &str) -> Self {
        Self::conflict(
            group,
            resource,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    /// 422 with causes; `kind` and `group` name the kind as upstream's
    /// `schema.GroupKind.String()` does ("Deployment.apps").
    pub fn invalid(group: &str, kind: &str, name: &str, causes: Vec<FieldError>) -> Self {
        let rendered: Vec<String> = causes.iter().map(FieldError::render).collect();
        let summary = match rendered.len() {
            1 => rendered[0].clone(),
            _ => format!("[{}]", rendered.join(", ")),
        };
        let mut err = Self::new(
            StatusReason::Invalid,
            format!(
                "{} \"{name}\" is invalid: {summary}",
                qualified(kind, group)
            ),
        )
        .with_details(name, group, kind);
        if let Some(details) = err.details.as_mut() {
            details.causes = causes;
        }
        err
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusReason::BadRequest, message)
    }

    /// MethodNotAllowed with a message of its own.
    pub fn method_refused(group: &str, resource: &str, message: String) -> Self {
        Self::new(StatusReason::MethodNotAllowed, message).with_details("", group, resource)
    }

    pub fn method_not_supported(group: &str, resource: &str, verb: &str) -> Self {
        Self::new(
            StatusReason::MethodNotAllowed,
            format!(
                "{verb} is not supported on resources of kind \"{}\"",
                qualified(resource, group)
            ),
        )
        .with_details("", group, resource)
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(StatusReason::Forbidden, message)
    }

    /// Upstream's NewForbidden for a resource: `<resource> "<name>" is
    /// forbidden: <why>`, with the resource in the details.
    pub fn forbidden_resource(group: &str, resource: &str, name: &str, why: &str) -> Self {
        let subject = match name {
            "" => qualified(resource, group),
            name => format!("{} {name:?}", qualified(resource, group)),
        };
        Self::new(
            StatusReason::Forbidden,
            format!("{subject} is forbidden: {why}"),
        )
        .with_details(name, group, resource)
    }

    /// Upstream's 429 for a server at its in-flight limit.
    pub fn too_many_requests() -> Self {
        let mut err = Self::new(
            StatusReason::TooManyRequests,
            "Too many requests, please try again later.",
        );
        err.details = Some(Box::new(StatusDetails {
            retry_after_seconds: Some(1),
            ..StatusDetails::default()
        }));
        err
    }

    pub fn unauthorized() -> Self {
        Self::new(StatusReason::Unauthorized, "Unauthorized")
    }

    /// A resourceVersion the store no longer holds (watch or continue token).
    pub fn expired(message: impl Into<String>) -> Self {
        Self::new(StatusReason::Expired, message)
    }

    /// Upstream's answer to a read at a revision the server has not reached
    /// in time (504, NewTooLargeResourceVersionError): client-go recognizes
    /// it by its cause, and retries after a second.
    pub fn too_large_resource_version(requested: i64, current: i64) -> Self {
        let mut err = Self::new(
            StatusReason::Timeout,
            format!("Timeout: Too large resource version: {requested}, current: {current}"),
        );
        err.details = Some(Box::new(StatusDetails {
            causes: vec![FieldError {
                reason: "ResourceVersionTooLarge",
                message: "Too large resource version".into(),
                field: String::new(),
            }],
            retry_after_seconds: Some(1),
            ..StatusDetails::default()
        }));
        err
    }

    pub fn too_large(limit: usize) -> Self {
        Self::new(
            StatusReason::RequestEntityTooLarge,
            format!("Request entity too large: limit is {limit}"),
        )
    }

    /// A conversion that failed: a webhook's failure reaches the client as
    /// upstream passes it on (500, no reason, the bare message); any other
    /// is an internal error.
    pub fn conversion(error: crate::conversion::ConversionError) -> Self {
        match error {
            crate::conversion::ConversionError::Webhook(message) => {
                Self::new(StatusReason::Unknown, message)
            }
            other => Self::internal(other),
        }
    }

    pub fn internal(cause: impl std::fmt::Display) -> Self {
        Self::new(
            StatusReason::InternalError,
            format!("Internal error occurred: {cause}"),
        )
    }

    pub fn code(&self) -> u16 {
        match &self.passed {
            Some(passed) => passed.code,
            None => self.reason.http_code(),
        }
    }

    /// The `metav1.Status` object for this error.
    pub fn to_status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason.as_str(),
        });
        if let Some(passed) = &self.passed {
            status["reason"] = passed.reason.clone().into();
        }
        if status["reason"] == "" {
            if let Some(map) = status.as_object_mut() {
                map.remove("reason");
            }
        }
        if let Some(details) = &self.details {
            let mut d = serde_json::Map::new();
            if !details.name.is_empty() {
                d.insert("name".into(), details.name.clone().into());
            }
            if !details.group.is_empty() {
                d.insert("group".into(), details.group.clone().into());
            }
            if !details.kind.is_empty() {
                d.insert("kind".into(), details.kind.clone().into());
            }
            if !details.causes.is_empty() {
                let causes: Vec<Value> = details
                    .causes
                    .iter()
                    .map(|c| {
                        // Each omitted when empty, as upstream's StatusCause.
                        let mut cause = json!({});
                        if !c.reason.is_empty() {
                            cause["reason"] = c.reason.into();
                        }
                        if !c.message.is_empty() {
                            cause["message"] = c.message.clone().into();
                        }
                        if !c.field.is_empty() {
                            cause["field"] = c.field.clone().into();
                        }
                        cause
                    })
                    .collect();
                d.insert("causes".into(), causes.into());
            }
            if let Some(retry) = details.retry_after_seconds {
                d.insert("retryAfterSeconds".into(), retry.into());
            }
            status["details"] = Value::Object(d);
        }
        // Last, after details, as metav1.Status declares it.
        status["code"] = self.code().into();
        status
    }

    /// The gRPC status: the code that matches the reason, the same message,
    /// and the full `metav1.Status` JSON in the `x-kubernetes-status-bin`
    /// trailer for clients that want reason and causes. (The standard
    /// grpc-status-details-bin slot must hold a google.rpc.Status, which
    /// clients such as grpcurl parse strictly.)
    #[cfg(feature = "grpc")]
    pub fn to_grpc(&self) -> tonic::Status {
        let body = serde_json::to_vec(&self.to_status()).unwrap_or_default();
        let mut metadata = tonic::metadata::MetadataMap::new();
        metadata.insert_bin(
            STATUS_TRAILER,
            tonic::metadata::MetadataValue::from_bytes(&body),
        );
        // A status another component answered has no reason of ours: its
        // code says what it is.
        let reason = match &self.passed {
            Some(passed) => StatusReason::for_code(passed.code),
            None => self.reason,
        };
        tonic::Status::with_metadata(reason.grpc_code(), self.message.clone(), metadata)
    }
}

/// gRPC trailer carrying the `metav1.Status` JSON of a failed call.
pub const STATUS_TRAILER: &str = "x-kubernetes-status-bin";

#[cfg(feature = "grpc")]
impl From<ApiError> for tonic::Status {
    fn from(err: ApiError) -> Self {
        err.to_grpc()
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

/// The Success Status a create that stores nothing of its own answers (a
/// binding, an eviction): upstream's create handler fills in 201.
pub fn created_status() -> Value {
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "code": 201,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_matches_upstream_form() {
        let s = ApiError::not_found("apps", "deployments", "web").to_status();
        assert_eq!(s["message"], "deployments.apps \"web\" not found");
        assert_eq!(s["reason"], "NotFound");
        assert_eq!(s["code"], 404);
        assert_eq!(s["details"]["kind"], "deployments");
        assert_eq!(s["details"]["group"], "apps");
    }

    #[test]
    fn invalid_lists_causes_with_field_paths() {
        let err = ApiError::invalid(
            "",
            "ConfigMap",
            "Bad",
            vec![FieldError::invalid(
                "metadata.name",
                "Bad",
                "must be lowercase",
            )],
        );
        let s = err.to_status();
        assert_eq!(s["code"], 422);
        assert_eq!(
            s["message"],
            "ConfigMap \"Bad\" is invalid: metadata.name: Invalid value: \"Bad\": must be lowercase"
        );
        assert_eq!(s["details"]["causes"][0]["field"], "metadata.name");
        assert_eq!(s["details"]["causes"][0]["reason"], "FieldValueInvalid");
    }

    #[test]
    fn conflict_carries_the_retry_message() {
        let s = ApiError::stale_object("", "configmaps", "x").to_status();
        assert_eq!(s["code"], 409);
        assert_eq!(s["message"], "Operation cannot be fulfilled on configmaps \"x\": the object has been modified; please apply your changes to the latest version and try again");
    }

    #[cfg(feature = "grpc")]
    #[test]
    fn grpc_errors_carry_the_status_in_a_trailer() {
        let status = ApiError::not_found("", "configmaps", "x").to_grpc();
        assert!(status.details().is_empty());
        let raw = status
            .metadata()
            .get_bin(STATUS_TRAILER)
            .unwrap()
            .to_bytes()
            .unwrap();
        let decoded: Value = serde_json::from_slice(&raw).unwrap();
        assert_eq!(decoded["reason"], "NotFound");
    }

    #[cfg(feature = "grpc")]
    #[test]
    fn grpc_codes_follow_reasons() {
        assert_eq!(
            ApiError::not_found("", "pods", "p").to_grpc().code(),
            tonic::Code::NotFound
        );
        assert_eq!(
            ApiError::stale_object("", "pods", "p").to_grpc().code(),
            tonic::Code::Aborted
        );
    }

    #[cfg(feature = "grpc")]
    #[test]
    fn a_passed_status_maps_to_grpc_by_its_code() {
        let denied = ApiError::passed(403, "", "admission webhook \"x\" denied the request");
        assert_eq!(denied.to_grpc().code(), tonic::Code::PermissionDenied);
        let invalid =
            ApiError::forbidden_resource("", "configmaps", "c", "no").answered_as(422, "Invalid");
        assert_eq!(invalid.to_grpc().code(), tonic::Code::InvalidArgument);
    }

    #[test]
    fn an_answered_status_keeps_its_message_with_the_new_code() {
        let invalid =
            ApiError::forbidden_resource("", "configmaps", "c", "no").answered_as(422, "Invalid");
        assert_eq!(
            invalid.to_status()["message"],
            "configmaps \"c\" is forbidden: no"
        );
        assert_eq!(invalid.to_status()["reason"], "Invalid");
        assert_eq!(invalid.to_status()["code"], 422);
    }

    #[test]
    fn a_message_only_cause_has_neither_reason_nor_field() {
        let err = ApiError::forbidden_resource("", "configmaps", "c", "no")
            .with_causes(vec![FieldError::message_only("no")]);
        assert_eq!(
            err.to_status()["details"]["causes"],
            json!([{"message": "no"}])
        );
    }
}
