//! Conversion of custom resources between a definition's versions:
//! `None` rewrites `apiVersion`; `Webhook` sends a ConversionReview to the
//! definition's webhook and checks its answer as upstream's webhook
//! converter does. The review's transport (HTTPS, the caBundle, service
//! resolution) is the server's, handed in as a [`ConversionTransport`].

use std::sync::Arc;

use serde_json::{json, Value};

use crate::conversion::ConversionError;

/// Sends a ConversionReview to a webhook and returns the review it answers
/// with; the error is the transport's, as upstream words it
/// (`Post "https://…": …`).
pub trait ConversionTransport: Send + Sync {
    fn send(&self, client_config: &Value, review: &Value) -> Result<Value, String>;
}

/// How objects move between a definition's versions.
#[derive(Clone)]
pub enum Strategy {
    None,
    Webhook {
        transport: Arc<dyn ConversionTransport>,
        client_config: Value,
        /// The ConversionReview version to send: v1 when the definition
        /// accepts it, else v1beta1.
        review_version: &'static str,
    },
}

impl std::fmt::Debug for Strategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Strategy::None => f.write_str("None"),
            Strategy::Webhook { .. } => f.write_str("Webhook"),
        }
    }
}

impl Strategy {
    /// The strategy `spec.conversion` names; a webhook needs a transport.
    pub fn of(
        conversion: Option<&Value>,
        transport: Option<Arc<dyn ConversionTransport>>,
    ) -> Strategy {
        let webhook = conversion
            .filter(|c| c.get("strategy").and_then(Value::as_str) == Some("Webhook"))
            .and_then(|c| c.get("webhook"));
        match (webhook, transport) {
            (Some(webhook), Some(transport)) => {
                let versions = crate::object::strings_at(webhook, "conversionReviewVersions");
                Strategy::Webhook {
                    transport,
                    client_config: webhook.get("clientConfig").cloned().unwrap_or(Value::Null),
                    review_version: if versions.iter().any(|v| v == "v1") || versions.is_empty() {
                        "v1"
                    } else {
                        "v1beta1"
                    },
                }
            }
            _ => Strategy::None,
        }
    }

    /// `object` at `target_api_version`.
    pub fn convert(
        &self,
        mut object: Value,
        target_api_version: &str,
    ) -> Result<Value, ConversionError> {
        let current = object
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if current == target_api_version {
            return Ok(object);
        }
        match self {
            Strategy::None => {
                if let Some(map) = object.as_object_mut() {
                    map.insert(
                        "apiVersion".into(),
                        Value::String(target_api_version.into()),
                    );
                }
                Ok(object)
            }
            Strategy::Webhook {
                transport,
                client_config,
                review_version,
            } => {
                let kind = object
                    .get("kind")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                let failed = |reason: String| {
                    ConversionError::Webhook(format!(
                        "conversion webhook for {current}, Kind={kind} failed: {reason}"
                    ))
                };
                let uid = uuid::Uuid::new_v4().to_string();
                let review = json!({
                    "kind": "ConversionReview",
                    "apiVersion": format!("apiextensions.k8s.io/{review_version}"),
                    "request": {
                        "uid": uid,
                        "desiredAPIVersion": target_api_version,
                        "objects": [&object],
                    },
                });
                let answer = transport.send(client_config, &review).map_err(failed)?;
                let converted =
                    checked_response(&answer, &uid, &object, target_api_version).map_err(failed)?;
                Ok(converted)
            }
        }
    }
}

/// The one converted object of a webhook's answer, checked as upstream's
/// webhook converter checks it.
fn checked_response(
    answer: &Value,
    uid: &str,
    original: &Value,
    target: &str,
) -> Result<Value, String> {
    let Some(response) = answer.get("response").filter(|r| r.is_object()) else {
        return Err("no response provided".into());
    };
    let answered_uid = response
        .get("uid")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if answered_uid != uid {
        return Err(format!(
            "expected response.uid={uid:?}, got {answered_uid:?}"
        ));
    }
    let result = response.get("result").cloned().unwrap_or(Value::Null);
    if result.get("status").and_then(Value::as_str) != Some("Success") {
        let message = result
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default();
        return Err(message.to_string());
    }
    let objects = response
        .get("convertedObjects")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if objects.len() != 1 {
        return Err(format!(
            "expected 1 converted objects, got {}",
            objects.len()
        ));
    }
    let converted = objects.into_iter().next().unwrap_or(Value::Null);
    if !converted.is_object() {
        return Err("invalid converted object at index 0: not an object".into());
    }
    let api_version = converted
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if api_version != target {
        return Err(format!(
            "invalid converted object at index 0: invalid apiVersion {api_version:?}, expected {target:?}"
        ));
    }
    let kind = converted
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let original_kind = original
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if kind != original_kind {
        return Err(format!(
            "invalid converted object at index 0: invalid kind {kind:?}, expected {original_kind:?}"
        ));
    }
    restore_metadata(original, converted)
        .map_err(|e| format!("invalid converted object at index 0: invalid metadata: {e}"))
}

/// Upstream's restoreObjectMeta: a webhook may change labels and
/// annotations only; everything else of metadata is the original's.
fn restore_metadata(original: &Value, mut converted: Value) -> Result<Value, String> {
    let original_meta = original
        .get("metadata")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let converted_meta = converted
        .get("metadata")
        .cloned()
        .unwrap_or_else(|| json!({}));
    if !converted_meta.is_object() {
        return Err("metadata must be an object".into());
    }
    let mut restored = original_meta.clone();
    for key in ["labels", "annotations"] {
        match converted_meta.get(key) {
            Some(value) if !value.is_null() => {
                if !value
                    .as_object()
                    .is_some_and(|m| m.values().all(Value::is_string))
                {
                    return Err(format!("metadata.{key} must be a map of strings"));
                }
                restored[key] = value.clone();
            }
            _ => {
                if let Some(map) = restored.as_object_mut() {
                    map.remove(key);
                }
            }
        }
    }
    if let Some(map) = converted.as_object_mut() {
        map.insert("metadata".into(), restored);
    }
    Ok(converted)
}

#[cfg(test)]
mod tests {
    use super::*;

    type Respond = Box<dyn Fn(&Value) -> Result<Value, String> + Send + Sync>;

    /// A webhook in the test: answers with what `respond` makes of the review.
    struct Fake(Respond);

    impl ConversionTransport for Fake {
        fn send(&self, _config: &Value, review: &Value) -> Result<Value, String> {
            (self.0)(review)
        }
    }

    fn webhook(
        respond: impl Fn(&Value) -> Result<Value, String> + Send + Sync + 'static,
    ) -> Strategy {
        Strategy::of(
            Some(
                &json!({"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"],
                "clientConfig": {"url": "https://127.0.0.1:1/convert"}}}),
            ),
            Some(Arc::new(Fake(Box::new(respond)))),
        )
    }

    fn widget() -> Value {
        json!({"apiVersion": "example.com/v1", "kind": "Widget",
               "metadata": {"name": "w", "uid": "u1", "labels": {"a": "b"}}, "spec": {"size": 3}})
    }

    /// Renames spec.size to spec.length and may tamper with the answer.
    fn converting(tamper: fn(&mut Value)) -> impl Fn(&Value) -> Result<Value, String> {
        move |review: &Value| {
            let request = &review["request"];
            let mut object = request["objects"][0].clone();
            object["apiVersion"] = request["desiredAPIVersion"].clone();
            object["spec"] = json!({"length": object["spec"]["size"]});
            object["metadata"]["labels"] = json!({"converted": "yes"});
            object["metadata"]["name"] = json!("renamed");
            let mut answer = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
                "response": {"uid": request["uid"], "result": {"status": "Success"}, "convertedObjects": [object]}});
            tamper(&mut answer);
            Ok(answer)
        }
    }

    #[test]
    fn a_webhook_converts_and_may_change_only_labels_and_annotations() {
        let converted = webhook(converting(|_| {}))
            .convert(widget(), "example.com/v2")
            .unwrap();
        assert_eq!(converted["apiVersion"], "example.com/v2");
        assert_eq!(converted["spec"], json!({"length": 3}));
        assert_eq!(converted["metadata"]["labels"], json!({"converted": "yes"}));
        assert_eq!(
            converted["metadata"]["name"], "w",
            "the name is the original's"
        );
    }

    #[test]
    fn bad_answers_are_refused_in_upstreams_words() {
        let failure = |tamper: fn(&mut Value)| {
            webhook(converting(tamper))
                .convert(widget(), "example.com/v2")
                .unwrap_err()
                .to_string()
        };
        let wrong_uid = failure(|a| a["response"]["uid"] = json!("other"));
        assert!(
            wrong_uid.starts_with(r#"conversion webhook for example.com/v1, Kind=Widget failed: expected response.uid=""#)
                && wrong_uid.ends_with(r#"", got "other""#),
            "{wrong_uid}"
        );
        assert_eq!(
            failure(|a| a["response"]["result"] =
                json!({"status": "Failure", "message": "no v2 for you"})),
            "conversion webhook for example.com/v1, Kind=Widget failed: no v2 for you"
        );
        assert_eq!(
            failure(
                |a| a["response"]["convertedObjects"][0]["apiVersion"] = json!("example.com/v3")
            ),
            r#"conversion webhook for example.com/v1, Kind=Widget failed: invalid converted object at index 0: invalid apiVersion "example.com/v3", expected "example.com/v2""#
        );
        let unreachable =
            webhook(|_| Err(r#"Post "https://127.0.0.1:1/convert": connection refused"#.into()))
                .convert(widget(), "example.com/v2")
                .unwrap_err()
                .to_string();
        assert_eq!(
            unreachable,
            r#"conversion webhook for example.com/v1, Kind=Widget failed: Post "https://127.0.0.1:1/convert": connection refused"#
        );
    }

    #[test]
    fn objects_already_at_the_version_are_not_sent() {
        let strategy = webhook(|_| Err("must not be called".into()));
        let same = strategy.convert(widget(), "example.com/v1").unwrap();
        assert_eq!(same, widget());
        let none = Strategy::of(Some(&json!({"strategy": "None"})), None);
        assert_eq!(
            none.convert(widget(), "example.com/v2").unwrap()["apiVersion"],
            "example.com/v2"
        );
    }
}
