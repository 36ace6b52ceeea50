//! Admission webhooks (admissionregistration.k8s.io/v1): the configurations
//! are read from their watch caches (so every replica follows a change
//! within the watch's latency), matched against each request as upstream's
//! ShouldCallHook does, and called with an AdmissionReview over HTTPS
//! (`crate::webhooks`). Mutating webhooks run one after another and may
//! patch the object (reinvoked once when `reinvocationPolicy: IfNeeded` and
//! a later one changed it); validating webhooks run concurrently.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use super::attributes::Attributes;
use super::conditions::{self, Verdict};
use super::expressions::{Activation, Compiled, Inputs};
use super::matching::{Criteria, Invocation};
use crate::error::{ApiError, ApiResult};
use crate::metrics::WebhookOutcome;
use crate::registry::ResourceDef;
use crate::validate::meta::go_quote;
use crate::verbs::ApiCore;
use crate::watch::cache::WatchCache;

const GROUP: &str = "admissionregistration.k8s.io";
/// A webhook's place: its configuration's uid and resourceVersion, and its
/// index there.
type ConditionsKey = (String, String, usize);

/// Compiled matchConditions kept before the cache starts over.
const MAX_COMPILED_CONDITIONS: usize = 4096;
/// Upstream's default `timeoutSeconds`.
const DEFAULT_TIMEOUT_SECONDS: u64 = 10;

/// The two configuration resources and their watch caches, resolved once.
pub(crate) struct WebhookSources {
    validating: Arc<WatchCache>,
    mutating: Arc<WatchCache>,
    /// Each webhook's compiled matchConditions, by configuration uid,
    /// resourceVersion and webhook index: compiled once per version.
    conditions: std::sync::Mutex<HashMap<ConditionsKey, Arc<Vec<Compiled>>>>,
}

impl WebhookSources {
    /// A webhook's matchConditions, compiled when its configuration
    /// version is first seen (older versions' are dropped then).
    fn compiled_conditions(&self, hook: &Hook, conditions: &[Value]) -> Arc<Vec<Compiled>> {
        let meta = |key: &str| {
            hook.configuration
                .pointer(&format!("/metadata/{key}"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let key = (meta("uid"), meta("resourceVersion"), hook.index);
        let mut cache = self.conditions.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(compiled) = cache.get(&key) {
            return compiled.clone();
        }
        cache.retain(|(uid, version, _), _| *uid != key.0 || *version == key.1);
        // Deleted configurations' entries are dropped wholesale now and then.
        if cache.len() > MAX_COMPILED_CONDITIONS {
            cache.clear();
        }
        let compiled = Arc::new(conditions::compile(conditions));
        cache.insert(key, compiled.clone());
        compiled
    }
}

/// One webhook of one configuration.
struct Hook {
    configuration: Arc<Value>,
    index: usize,
}

impl Hook {
    fn spec(&self) -> &Value {
        self.configuration
            .pointer(&format!("/webhooks/{}", self.index))
            .unwrap_or(&Value::Null)
    }

    fn name(&self) -> &str {
        text(self.spec(), "name")
    }

    fn fails_open(&self) -> bool {
        text(self.spec(), "failurePolicy") == "Ignore"
    }

    /// Whether its configuration asks for calls over gRPC.
    fn over_grpc(&self) -> bool {
        self.configuration
            .pointer("/metadata/annotations")
            .and_then(|annotations| {
                annotations.get(capstan_api::kinds::admissionregistration::PROTOCOL_ANNOTATION)
            })
            .and_then(Value::as_str)
            == Some("grpc")
    }
}

/// How long one call may take: the webhook's `timeoutSeconds`, but never
/// past the request's deadline, so that webhooks failing open one after
/// another cannot together outlast the request (kubernetes#128162); once
/// the deadline passed, calls fail at once.
fn call_timeout(spec: &Value) -> Duration {
    let configured = Duration::from_secs(
        spec.get("timeoutSeconds")
            .and_then(Value::as_u64)
            .unwrap_or(DEFAULT_TIMEOUT_SECONDS),
    );
    crate::deadline::remaining().map_or(configured, |left| configured.min(left))
}

fn text<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or("")
}

fn strings(value: &Value, key: &str) -> Vec<String> {
    crate::object::strings_at(value, key)
}

/// Why a call did not give an answer: subject to the failure policy.
struct CallError(String);

/// What a webhook answered.
struct Answer {
    warnings: Vec<String>,
    /// A mutating webhook's JSONPatch, when it sent one.
    patch: Option<json_patch::Patch>,
}

impl ApiCore {
    fn webhook_sources(&self) -> Option<&WebhookSources> {
        self.admission_webhooks
            .get_or_init(|| {
                let source = |resource| {
                    let def = self.registry.lookup(GROUP, "v1", resource)?;
                    Some(self.caches.for_prefix(&def.key_prefix(&self.prefix, None)))
                };
                Some(WebhookSources {
                    validating: source("validatingwebhookconfigurations")?,
                    mutating: source("mutatingwebhookconfigurations")?,
                    conditions: Default::default(),
                })
            })
            .as_ref()
    }

    /// Every webhook of one type, configurations by name and their webhooks
    /// in order, as upstream lists them.
    fn hooks(&self, mutating: bool) -> Vec<Hook> {
        let Some(sources) = self.webhook_sources() else {
            return Vec::new();
        };
        let cache = if mutating {
            &sources.mutating
        } else {
            &sources.validating
        };
        cache
            .all_values()
            .into_iter()
            .flat_map(|configuration| {
                let count = configuration
                    .get("webhooks")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len);
                (0..count).map(move |index| Hook {
                    configuration: configuration.clone(),
                    index,
                })
            })
            .collect()
    }

    /// Whether any admission webhook is configured: a delete reads the
    /// object for admission only then.
    pub(super) fn has_admission_webhooks(&self) -> bool {
        !self.hooks(true).is_empty() || !self.hooks(false).is_empty()
    }

    pub(super) async fn call_mutating_webhooks(
        &self,
        attributes: &Attributes<'_>,
        mut object: Option<&mut Value>,
    ) -> ApiResult<Vec<String>> {
        let hooks = self.hooks(true);
        if hooks.is_empty() {
            return Ok(Vec::new());
        }
        let mut warnings = Vec::new();
        let mut invoked_if_needed: Vec<usize> = Vec::new();
        let mut reinvoke: Vec<usize> = Vec::new();
        for round in 0..2 {
            for (i, hook) in hooks.iter().enumerate() {
                if round == 1 && !reinvoke.contains(&i) {
                    continue;
                }
                let current = object.as_deref();
                let Some(invocation) = self.should_call(hook, attributes, current).await? else {
                    continue;
                };
                let before = current.cloned();
                // Boxed: a call's future is most of the chain's size, and
                // every write's future would carry it, called or not.
                let answer =
                    Box::pin(self.call_hook(hook, attributes, current, true, &invocation)).await?;
                let Some(answer) = answer else { continue };
                warnings.extend(answer.warnings);
                if let Some(patch) = answer.patch.filter(|p| !p.0.is_empty()) {
                    let Some(target) = object.as_deref_mut() else {
                        return Err(ApiError::internal(format!(
                            "admission webhook {} attempted to modify the object, which is not supported for this operation",
                            go_quote(hook.name())
                        )));
                    };
                    let mut invoked = invocation
                        .to_invoked(attributes, Some(target))?
                        .unwrap_or_else(|| target.clone());
                    json_patch::patch(&mut invoked, &patch).map_err(ApiError::internal)?;
                    *target = invocation.to_requested(attributes, invoked)?;
                    crate::verbs::apply_defaults(attributes.def, target);
                    if round == 0 && before.as_ref() != Some(target) {
                        reinvoke.extend(invoked_if_needed.iter().copied());
                    }
                }
                if round == 0 && text(hook.spec(), "reinvocationPolicy") == "IfNeeded" {
                    invoked_if_needed.push(i);
                }
            }
            if reinvoke.is_empty() {
                break;
            }
        }
        Ok(warnings)
    }

    pub(super) async fn call_validating_webhooks(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
    ) -> ApiResult<Vec<String>> {
        let hooks = self.hooks(false);
        let mut matched = Vec::new();
        for hook in &hooks {
            if let Some(invocation) = self.should_call(hook, attributes, object).await? {
                matched.push((hook, invocation));
            }
        }
        let calls = matched
            .iter()
            .map(|(hook, invocation)| self.call_hook(hook, attributes, object, false, invocation));
        let mut warnings = Vec::new();
        for answer in futures::future::join_all(calls).await {
            if let Some(answer) = answer? {
                warnings.extend(answer.warnings);
            }
        }
        Ok(warnings)
    }

    /// Upstream's ShouldCallHook: the webhook's selectors and rules, then
    /// its matchConditions; how to call the webhook if so.
    async fn should_call(
        &self,
        hook: &Hook,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
    ) -> ApiResult<Option<Invocation>> {
        let Some(invocation) = self
            .matches(&Criteria::of_webhook(hook.spec()), attributes, object)
            .await?
        else {
            return Ok(None);
        };
        let converted = invocation.to_invoked(attributes, object)?;
        let matched = self
            .match_conditions(hook, attributes, &invocation, converted.as_ref().or(object))
            .await?;
        Ok(matched.then_some(invocation))
    }

    /// The webhook's matchConditions (CEL over `object`, `oldObject`,
    /// `request` and `namespaceObject`): any false skips the webhook;
    /// errors fail the request under failurePolicy Fail and skip the
    /// webhook under Ignore, as upstream's matcher decides.
    async fn match_conditions(
        &self,
        hook: &Hook,
        attributes: &Attributes<'_>,
        invocation: &Invocation,
        object: Option<&Value>,
    ) -> ApiResult<bool> {
        let conditions = hook
            .spec()
            .get("matchConditions")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        if conditions.is_empty() {
            return Ok(true);
        }
        let def = attributes.def;
        let namespace = match attributes.namespace {
            Some(namespace) if def.namespaced => self.namespace_object(namespace).await.ok(),
            _ => None,
        };
        let old = invocation.to_invoked(attributes, attributes.old)?;
        let inputs = Inputs::new(
            attributes,
            invocation.def(attributes),
            object,
            old.as_ref().or(attributes.old),
            namespace.as_ref(),
        );
        let mut activation = Activation::new(&inputs, &[]);
        let compiled = match self.webhook_sources() {
            Some(sources) => sources.compiled_conditions(hook, conditions),
            None => Arc::new(conditions::compile(conditions)),
        };
        match conditions::evaluate(&compiled, &mut activation) {
            Verdict::Matches => Ok(true),
            Verdict::Excluded => Ok(false),
            Verdict::Failed(_) if hook.fails_open() => Ok(false),
            Verdict::Failed(errors) => Err(ApiError::forbidden_resource(
                &def.group,
                &def.resource,
                attributes.name,
                &Verdict::joined(&errors),
            )
            .denied_by(&format!("admission webhook {}", go_quote(hook.name())))),
        }
    }

    /// Calls one webhook; None when it failed and its failure policy
    /// ignores that.
    async fn call_hook(
        &self,
        hook: &Hook,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        mutating: bool,
        invocation: &Invocation,
    ) -> ApiResult<Option<Answer>> {
        let name = hook.name();
        let spec = hook.spec();
        if attributes.dry_run && !matches!(text(spec, "sideEffects"), "None" | "NoneOnDryRun") {
            return Err(ApiError::bad_request(format!(
                "admission webhook {} does not support dry run",
                go_quote(name)
            )));
        }
        let started = std::time::Instant::now();
        let converted = invocation.to_invoked(attributes, object)?;
        let old = invocation.to_invoked(attributes, attributes.old)?;
        let objects = (
            converted.as_ref().or(object),
            old.as_ref().or(attributes.old),
        );
        let invoked = invocation.def(attributes);
        let result = self
            .review(hook, attributes, invoked, objects, mutating)
            .await;
        let outcome = match &result {
            Ok(Ok(_)) => WebhookOutcome::Allowed,
            Ok(Err(denial)) => WebhookOutcome::Denied(denial.code()),
            Err(_) => WebhookOutcome::Failed {
                failed_open: hook.fails_open(),
            },
        };
        let type_ = if mutating { "admit" } else { "validating" };
        let operation = attributes.operation.as_str();
        crate::metrics::observe_webhook(name, type_, operation, &outcome, started.elapsed());
        match result {
            Ok(Ok(answer)) => Ok(Some(answer)),
            Ok(Err(denial)) => Err(denial),
            Err(CallError(reason)) if hook.fails_open() => {
                tracing::warn!(
                    webhook = name,
                    "Failed calling webhook, failing open: {reason}"
                );
                Ok(None)
            }
            Err(CallError(reason)) => Err(ApiError::internal(format!(
                "failed calling webhook {}: {reason}",
                go_quote(name)
            ))
            .denied_by(&format!("admission webhook {}", go_quote(name)))),
        }
    }

    /// Sends the AdmissionReview (over gRPC when the configuration asks)
    /// and checks the answer: the webhook's verdict (an answer or its
    /// denial), or why there is none.
    async fn review(
        &self,
        hook: &Hook,
        attributes: &Attributes<'_>,
        invoked: &ResourceDef,
        objects: (Option<&Value>, Option<&Value>),
        mutating: bool,
    ) -> Result<ApiResult<Answer>, CallError> {
        let spec = hook.spec();
        let name = hook.name();
        let version = strings(spec, "admissionReviewVersions")
            .into_iter()
            .find(|v| v == "v1" || v == "v1beta1")
            .ok_or_else(|| {
                CallError("could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)".into())
            })?;
        let uid = crate::object::new_uid();
        let request = request(&uid, attributes, invoked, objects);
        let timeout = call_timeout(spec);
        let client_config = spec.get("clientConfig").unwrap_or(&Value::Null);
        let invalid = |why: String| CallError(format!("received invalid webhook response: {why}"));
        let uid_echoed = |response: &Value| {
            let got = text(response, "uid");
            if got == uid {
                Ok(())
            } else {
                Err(invalid(format!(
                    "expected response.uid={uid:?}, got {got:?}"
                )))
            }
        };
        let response = if hook.over_grpc() {
            let response = self
                .admit_over_grpc(client_config, name, &request, timeout)
                .await
                .map_err(|e| CallError(format!("failed to call webhook: {e}")))?;
            uid_echoed(&response)?;
            response
        } else {
            let api_version = format!("admission.k8s.io/{version}");
            let review = json!({
                "kind": "AdmissionReview",
                "apiVersion": api_version,
                "request": request,
            });
            let mut answer = self
                .post_to_webhook(client_config, &review, timeout)
                .await
                .map_err(|e| CallError(format!("failed to call webhook: {e}")))?;
            let response = answer
                .get_mut("response")
                .filter(|r| r.is_object())
                .map(Value::take)
                .ok_or_else(|| invalid("webhook response was absent".into()))?;
            if version == "v1" {
                uid_echoed(&response)?;
                let (got_version, got_kind) = (text(&answer, "apiVersion"), text(&answer, "kind"));
                if got_version != api_version || got_kind != "AdmissionReview" {
                    let (group, version) =
                        got_version.rsplit_once('/').unwrap_or(("", got_version));
                    return Err(invalid(format!(
                        "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got {group}/{version}, Kind={got_kind}"
                    )));
                }
            }
            response
        };
        let response = &response;
        let patch = response.get("patch").and_then(Value::as_str);
        let patch_type = response.get("patchType").and_then(Value::as_str);
        if !mutating {
            if patch.is_some() {
                return Err(invalid(
                    "validating webhook may not return response.patch".into(),
                ));
            }
            if patch_type.is_some() {
                return Err(invalid(
                    "validating webhook may not return response.patchType".into(),
                ));
            }
        }
        let warnings = strings(response, "warnings")
            .into_iter()
            .filter(|w| !w.is_empty() && !w.chars().any(char::is_control))
            .collect();
        if response.get("allowed").and_then(Value::as_bool) != Some(true) {
            return Ok(Err(denial(name, response.get("status"))));
        }
        let patch = match (patch, patch_type) {
            (None, None) => None,
            (Some(_), None) => {
                return Err(invalid(
                    "webhook returned response.patch but not response.patchType".into(),
                ))
            }
            (None, Some(_)) => {
                return Err(invalid(
                    "webhook returned response.patchType but not response.patch".into(),
                ))
            }
            (Some(_), Some("")) => {
                return Err(invalid(
                    "webhook returned invalid response.patchType of \"\"".into(),
                ))
            }
            (Some(encoded), Some("JSONPatch")) => Some(decode_patch(encoded)?),
            (Some(_), Some(other)) => {
                return Err(CallError(format!("unsupported patch type {other:?}")))
            }
        };
        Ok(Ok(Answer { warnings, patch }))
    }
}

/// The AdmissionReview request for one call.
fn request(
    uid: &str,
    attributes: &Attributes<'_>,
    invoked: &ResourceDef,
    (object, old): (Option<&Value>, Option<&Value>),
) -> Value {
    let gvk =
        |def: &ResourceDef| json!({"group": def.group, "version": def.version, "kind": def.kind});
    let gvr = |def: &ResourceDef| json!({"group": def.group, "version": def.version, "resource": def.resource});
    let user_info = attributes.user_info();
    let mut request = json!({
        "uid": uid,
        "kind": gvk(invoked),
        "resource": gvr(invoked),
        "requestKind": gvk(attributes.def),
        "requestResource": gvr(attributes.def),
    });
    if !attributes.subresource.is_empty() {
        request["subResource"] = json!(attributes.subresource);
        request["requestSubResource"] = json!(attributes.subresource);
    }
    if !attributes.name.is_empty() {
        request["name"] = json!(attributes.name);
    }
    if let Some(namespace) = attributes.namespace {
        request["namespace"] = json!(namespace);
    }
    request["operation"] = json!(attributes.operation.as_str());
    request["userInfo"] = user_info;
    if let Some(object) = object {
        request["object"] = object.clone();
    }
    if let Some(old) = old {
        request["oldObject"] = old.clone();
    }
    request["dryRun"] = json!(attributes.dry_run);
    request["options"] = attributes.options();
    request
}

/// A response's base64 JSONPatch.
fn decode_patch(encoded: &str) -> Result<json_patch::Patch, CallError> {
    use base64::Engine as _;
    let undecodable = |e: &dyn std::fmt::Display| {
        CallError(format!(
            "received undecodable patch in webhook response: {e}"
        ))
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map_err(|e| undecodable(&e))?;
    if bytes.is_empty() {
        return Ok(json_patch::Patch(Vec::new()));
    }
    serde_json::from_slice(&bytes).map_err(|e| undecodable(&e))
}

/// A webhook's `allowed: false`, with its status's code (at least 400),
/// reason and message, as upstream's ToStatusErr passes them on.
fn denial(name: &str, status: Option<&Value>) -> ApiError {
    let status = status.unwrap_or(&Value::Null);
    let code = status
        .get("code")
        .and_then(Value::as_u64)
        .filter(|c| (400..=599).contains(c))
        .unwrap_or(400) as u16;
    let reason = text(status, "reason");
    let message = text(status, "message");
    let quoted = go_quote(name);
    let text = match (message, reason) {
        ("", "") => format!("admission webhook {quoted} denied the request without explanation"),
        ("", reason) => format!("admission webhook {quoted} denied the request: {reason}"),
        (message, _) => format!("admission webhook {quoted} denied the request: {message}"),
    };
    ApiError::passed(code, reason, text).denied_by(&format!("admission webhook {quoted}"))
}
