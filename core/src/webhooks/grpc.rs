//! Admission webhooks called over gRPC
//! (`capstan.webhook.v1.AdmissionWebhook/Admit`): the AdmissionReview's
//! request and response carried as protobuf messages field for field, over
//! one HTTP/2 channel per target verified against the `caBundle`. The
//! admission chain builds and checks the JSON forms either way; this module
//! only translates them.

use std::time::Duration;

use base64::Engine as _;
use capstan_proto::json::JsonStruct;
use capstan_proto::v1::GroupVersionResource;
use capstan_proto::webhook::v1 as pb;
use serde_json::{json, Map, Value};
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};

use super::{ConnectionKey, Target};
use crate::verbs::ApiCore;

impl ApiCore {
    /// Calls the gRPC webhook `client_config` names with `request` (an
    /// AdmissionReview's `request`, as JSON) and returns its answer as an
    /// AdmissionReview's `response`; errors read as Go's gRPC client's.
    pub(crate) async fn admit_over_grpc(
        &self,
        client_config: &Value,
        webhook: &str,
        request: &Value,
        timeout: Duration,
    ) -> Result<Value, String> {
        let target = self.webhook_target(client_config).await?;
        let channel = self.webhook_connections.channel(&target)?;
        let mut call = tonic::Request::new(to_message(request, webhook));
        call.set_timeout(timeout);
        let mut client = pb::admission_webhook_client::AdmissionWebhookClient::new(channel);
        // tonic's own timer (set from grpc-timeout) or this one, whichever
        // fires first, means the deadline passed.
        let deadline_exceeded =
            || "rpc error: code = DeadlineExceeded desc = context deadline exceeded".to_string();
        match tokio::time::timeout(timeout, client.admit(call)).await {
            Ok(Ok(answer)) => Ok(from_message(answer.into_inner())),
            Ok(Err(status)) if timed_out(&status) => Err(deadline_exceeded()),
            Ok(Err(status)) => Err(go_rpc_error(&status)),
            Err(_) => Err(deadline_exceeded()),
        }
    }
}

impl super::Connections {
    /// The channel to `target`, opened on first use and shared by every
    /// later call (HTTP/2 multiplexes them).
    fn channel(&self, target: &Target) -> Result<Channel, String> {
        let key: ConnectionKey = target.key();
        let mut channels = self.grpc.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(channel) = channels.get(&key) {
            return Ok(channel.clone());
        }
        let host = if target.host.contains(':') {
            format!("[{}]", target.host)
        } else {
            target.host.clone()
        };
        let mut tls = ClientTlsConfig::new().domain_name(target.server_name.clone());
        if !target.ca_bundle.is_empty() {
            tls = tls.ca_certificate(Certificate::from_pem(&target.ca_bundle));
        }
        let channel = Endpoint::from_shared(format!("https://{host}:{}", target.port))
            .and_then(|endpoint| endpoint.tls_config(tls))
            .map_err(|e| format!("rpc error: code = Unavailable desc = {}", error_chain(&e)))?
            .connect_lazy();
        channels.insert(key, channel.clone());
        Ok(channel)
    }
}

/// Whether tonic ended the call because its grpc-timeout ran out.
fn timed_out(status: &tonic::Status) -> bool {
    let mut cause = std::error::Error::source(status);
    while let Some(error) = cause {
        if error.is::<tonic::TimeoutExpired>() {
            return true;
        }
        cause = error.source();
    }
    status.code() == tonic::Code::Cancelled && status.message() == "Timeout expired"
}

/// Go's `rpc error: code = … desc = …`, with what the transport said.
fn go_rpc_error(status: &tonic::Status) -> String {
    let code = format!("{:?}", status.code());
    let mut desc = status.message().to_string();
    if let Some(source) = std::error::Error::source(status) {
        desc = format!("{desc}: {}", error_chain(source));
    }
    format!("rpc error: code = {code} desc = {desc}")
}

fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(next) = cause {
        let said = next.to_string();
        if !text.contains(&said) {
            text = format!("{text}: {said}");
        }
        cause = next.source();
    }
    text
}

fn text(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn object(value: &Value, key: &str) -> Option<JsonStruct> {
    match value.get(key) {
        Some(Value::Object(map)) => Some(JsonStruct(map.clone())),
        _ => None,
    }
}

/// An AdmissionReview request (JSON) as the gRPC message.
fn to_message(request: &Value, webhook: &str) -> pb::AdmissionRequest {
    let kind = |key: &str| {
        request.get(key).map(|gvk| pb::GroupVersionKind {
            group: text(gvk, "group"),
            version: text(gvk, "version"),
            kind: text(gvk, "kind"),
        })
    };
    let resource = |key: &str| {
        request.get(key).map(|gvr| GroupVersionResource {
            group: text(gvr, "group"),
            version: text(gvr, "version"),
            resource: text(gvr, "resource"),
        })
    };
    let user = request.get("userInfo").unwrap_or(&Value::Null);
    let extra_values = user.get("extra").unwrap_or(&Value::Null);
    let extra = extra_values
        .as_object()
        .map(|extra| {
            extra
                .keys()
                .map(|key| {
                    let items = crate::object::strings_at(extra_values, key);
                    (key.clone(), pb::ExtraValue { items })
                })
                .collect()
        })
        .unwrap_or_default();
    pb::AdmissionRequest {
        uid: text(request, "uid"),
        kind: kind("kind"),
        resource: resource("resource"),
        sub_resource: text(request, "subResource"),
        request_kind: kind("requestKind"),
        request_resource: resource("requestResource"),
        request_sub_resource: text(request, "requestSubResource"),
        name: text(request, "name"),
        namespace: text(request, "namespace"),
        operation: text(request, "operation"),
        user_info: Some(pb::UserInfo {
            username: text(user, "username"),
            uid: text(user, "uid"),
            groups: crate::object::strings_at(user, "groups"),
            extra,
        }),
        object: object(request, "object"),
        old_object: object(request, "oldObject"),
        dry_run: request.get("dryRun").and_then(Value::as_bool) == Some(true),
        options: object(request, "options"),
        webhook: webhook.to_string(),
    }
}

/// The gRPC answer as an AdmissionReview response (JSON), so both
/// transports' answers are checked alike.
fn from_message(answer: pb::AdmissionResponse) -> Value {
    let mut response = Map::new();
    response.insert("uid".into(), json!(answer.uid));
    response.insert("allowed".into(), json!(answer.allowed));
    if let Some(status) = answer.status {
        response.insert("status".into(), Value::Object(status.0));
    }
    if let Some(patch) = answer.patch {
        let encoded = base64::engine::general_purpose::STANDARD.encode(patch);
        response.insert("patch".into(), json!(encoded));
    }
    if let Some(patch_type) = answer.patch_type {
        response.insert("patchType".into(), json!(patch_type));
    }
    if !answer.audit_annotations.is_empty() {
        response.insert("auditAnnotations".into(), json!(answer.audit_annotations));
    }
    if !answer.warnings.is_empty() {
        response.insert("warnings".into(), json!(answer.warnings));
    }
    Value::Object(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_carry_every_review_field() {
        let request = json!({
            "uid": "u-1",
            "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
            "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
            "subResource": "scale",
            "requestKind": {"group": "apps", "version": "v1beta2", "kind": "Deployment"},
            "requestResource": {"group": "apps", "version": "v1beta2", "resource": "deployments"},
            "requestSubResource": "scale",
            "name": "web",
            "namespace": "default",
            "operation": "UPDATE",
            "userInfo": {"username": "alice", "uid": "42", "groups": ["devs"], "extra": {"scopes": ["a", "b"]}},
            "object": {"kind": "Scale"},
            "oldObject": {"kind": "Scale", "spec": {"replicas": 1}},
            "dryRun": true,
            "options": {"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1"},
        });
        let message = to_message(&request, "scale.example.com");
        assert_eq!(message.uid, "u-1");
        assert_eq!(
            message.kind.as_ref().map(|k| k.kind.as_str()),
            Some("Deployment")
        );
        assert_eq!(
            message
                .request_resource
                .as_ref()
                .map(|r| r.version.as_str()),
            Some("v1beta2")
        );
        assert_eq!(message.sub_resource, "scale");
        assert_eq!(message.request_sub_resource, "scale");
        assert_eq!(
            (message.name.as_str(), message.namespace.as_str()),
            ("web", "default")
        );
        assert_eq!(message.operation, "UPDATE");
        let user = message.user_info.expect("user info");
        assert_eq!((user.username.as_str(), user.uid.as_str()), ("alice", "42"));
        assert_eq!(user.groups, vec!["devs"]);
        assert_eq!(user.extra["scopes"].items, vec!["a", "b"]);
        assert_eq!(
            message.old_object.map(|o| o.0["spec"].clone()),
            Some(json!({"replicas": 1}))
        );
        assert!(message.dry_run);
        assert_eq!(
            message.options.map(|o| o.0["kind"].clone()),
            Some(json!("UpdateOptions"))
        );
        assert_eq!(message.webhook, "scale.example.com");
    }

    #[test]
    fn answers_read_as_review_responses() {
        let answer = pb::AdmissionResponse {
            uid: "u-1".into(),
            allowed: true,
            status: None,
            patch: Some(br#"[{"op":"add","path":"/a","value":1}]"#.to_vec()),
            patch_type: Some("JSONPatch".into()),
            audit_annotations: [("k".to_string(), "v".to_string())].into(),
            warnings: vec!["careful".into()],
        };
        assert_eq!(
            from_message(answer),
            json!({"uid": "u-1", "allowed": true,
                   "patch": "W3sib3AiOiJhZGQiLCJwYXRoIjoiL2EiLCJ2YWx1ZSI6MX1d",
                   "patchType": "JSONPatch", "auditAnnotations": {"k": "v"},
                   "warnings": ["careful"]})
        );
        let denied = pb::AdmissionResponse {
            uid: "u-2".into(),
            status: Some(JsonStruct(
                json!({"code": 403, "message": "no"})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            )),
            ..Default::default()
        };
        assert_eq!(
            from_message(denied),
            json!({"uid": "u-2", "allowed": false, "status": {"code": 403, "message": "no"}})
        );
    }

    #[test]
    fn rpc_errors_read_as_gos() {
        let status = tonic::Status::unavailable("connection refused");
        assert_eq!(
            go_rpc_error(&status),
            "rpc error: code = Unavailable desc = connection refused"
        );
    }
}
