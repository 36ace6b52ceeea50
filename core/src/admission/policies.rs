//! ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1): policies
//! and their bindings are read from their watch caches, each policy's CEL
//! compiled once per resourceVersion, and every request a bound policy
//! matches is validated as upstream's validating policy plugin does —
//! matchConstraints, the binding's matchResources, params (by name or
//! selector, `parameterNotFoundAction`), matchConditions, variables,
//! validations with their messages, auditAnnotations' types, the failure
//! policy and the binding's validationActions (Deny, Warn; Audit has no
//! audit log to go to yet).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use super::attributes::Attributes;
use super::conditions::{self, kind_of, Verdict};
use super::expressions::{Activation, Compiled, Inputs};
use super::matching::Criteria;
use crate::error::{ApiError, ApiResult, FieldError};
use crate::object::items_at;
use crate::registry::ResourceDef;
use crate::selectors::LabelSelector;
use crate::verbs::ApiCore;
use crate::watch::cache::WatchCache;

const GROUP: &str = "admissionregistration.k8s.io";
/// Cost the validations of one binding and param may use together
/// (`RuntimeCELCostBudget`).
const BUDGET: u64 = 10_000_000;
/// The longest message a messageExpression may give.
const MAX_MESSAGE_BYTES: usize = 5 * 1024;
const OUT_OF_BUDGET: &str =
    "validation failed due to running out of cost budget, no further validation rules will be run";

/// The policy and binding resources, their caches, and each policy's
/// compiled expressions by name.
pub(crate) struct PolicySources {
    policies: Arc<WatchCache>,
    bindings: Arc<WatchCache>,
    compiled: Mutex<HashMap<String, Arc<CompiledPolicy>>>,
}

/// A policy's expressions, compiled for one resourceVersion of it.
struct CompiledPolicy {
    resource_version: String,
    match_conditions: Vec<Compiled>,
    variables: Vec<(String, Compiled)>,
    validations: Vec<Validation>,
    audit_annotations: Vec<Compiled>,
}

struct Validation {
    expression: Compiled,
    message: String,
    message_expression: Option<Compiled>,
    reason: String,
}

fn text<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

impl CompiledPolicy {
    fn new(policy: &Value) -> Self {
        CompiledPolicy {
            resource_version: text(policy, "/metadata/resourceVersion").to_string(),
            match_conditions: conditions::compile(items_at(policy, "/spec/matchConditions")),
            variables: items_at(policy, "/spec/variables")
                .iter()
                .map(|v| {
                    (
                        text(v, "/name").to_string(),
                        Compiled::new(text(v, "/expression")),
                    )
                })
                .collect(),
            validations: items_at(policy, "/spec/validations")
                .iter()
                .map(|v| Validation {
                    expression: Compiled::new(text(v, "/expression")),
                    message: text(v, "/message").trim().to_string(),
                    message_expression: Some(text(v, "/messageExpression"))
                        .filter(|m| !m.trim().is_empty())
                        .map(Compiled::new),
                    reason: text(v, "/reason").to_string(),
                })
                .collect(),
            audit_annotations: items_at(policy, "/spec/auditAnnotations")
                .iter()
                .map(|a| Compiled::new(text(a, "/valueExpression").trim()))
                .collect(),
        }
    }
}

impl PolicySources {
    /// The policy's compiled expressions, compiled now if it changed.
    fn compiled(&self, name: &str, policy: &Value) -> Arc<CompiledPolicy> {
        let mut compiled = self.compiled.lock().unwrap_or_else(|p| p.into_inner());
        let version = text(policy, "/metadata/resourceVersion");
        match compiled.get(name) {
            Some(current) if current.resource_version == version => current.clone(),
            _ => {
                let fresh = Arc::new(CompiledPolicy::new(policy));
                compiled.insert(name.to_string(), fresh.clone());
                fresh
            }
        }
    }

    /// Forgets the compiled expressions of policies that are gone.
    fn keep_only(&self, names: &[&str]) {
        let mut compiled = self.compiled.lock().unwrap_or_else(|p| p.into_inner());
        compiled.retain(|name, _| names.contains(&name.as_str()));
    }
}

/// One failed validation (or a failure to evaluate one) of one binding.
struct Decision {
    message: String,
    reason: String,
}

/// Why a policy stopped the request.
enum Stop {
    /// A binding's Deny action on a failed validation.
    Denied(ApiError),
    /// The policy (binding None) or one of its bindings could not be
    /// applied: subject to the failure policy, not to the binding's
    /// actions.
    Misconfigured {
        binding: Option<String>,
        why: String,
    },
}

impl Stop {
    fn policy(why: impl Into<String>) -> Self {
        Stop::Misconfigured {
            binding: None,
            why: why.into(),
        }
    }
}

impl ApiCore {
    fn policy_sources(&self) -> Option<&PolicySources> {
        self.admission_policies
            .get_or_init(|| {
                let source = |resource| {
                    let def = self.registry.lookup(GROUP, "v1", resource)?;
                    Some(self.caches.for_prefix(&def.key_prefix(&self.prefix, None)))
                };
                Some(PolicySources {
                    policies: source("validatingadmissionpolicies")?,
                    bindings: source("validatingadmissionpolicybindings")?,
                    compiled: Mutex::default(),
                })
            })
            .as_ref()
    }

    /// The bindings in effect, by name.
    fn policy_bindings(&self) -> Vec<Arc<Value>> {
        let Some(sources) = self.policy_sources() else {
            return Vec::new();
        };
        sources.bindings.all_values()
    }

    /// Whether any policy is bound: a delete reads the object for
    /// admission only when a policy or webhook may look at it.
    pub(crate) fn has_policy_bindings(&self) -> bool {
        !self.policy_bindings().is_empty()
    }

    /// Every bound policy that applies to the request, in name order;
    /// the warnings they gave, or the first denial.
    pub(super) async fn validate_with_policies(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
    ) -> ApiResult<Vec<String>> {
        let bindings = self.policy_bindings();
        let Some(sources) = self.policy_sources().filter(|_| !bindings.is_empty()) else {
            return Ok(Vec::new());
        };
        let policies = sources.policies.all_values();
        let names: Vec<&str> = policies.iter().map(|p| text(p, "/metadata/name")).collect();
        sources.keep_only(&names);
        let mut warnings = Vec::new();
        for policy in &policies {
            let name = text(policy, "/metadata/name");
            let bound: Vec<&Arc<Value>> = bindings
                .iter()
                .filter(|b| text(b, "/spec/policyName") == name)
                .collect();
            if bound.is_empty() {
                continue;
            }
            let compiled = sources.compiled(name, policy);
            let fails_open = text(policy, "/spec/failurePolicy") == "Ignore";
            let outcome = self
                .apply_policy(policy, &compiled, &bound, attributes, object, &mut warnings)
                .await;
            match outcome {
                Ok(()) => {}
                Err(Stop::Denied(denied)) => return Err(denied),
                Err(Stop::Misconfigured { why, .. }) if fails_open => {
                    tracing::warn!(policy = name, "Failed to apply policy, failing open: {why}");
                }
                Err(Stop::Misconfigured { binding: None, why }) => {
                    let denier = format!("ValidatingAdmissionPolicy '{name}'");
                    let why = format!("failed to configure policy: {why}");
                    return Err(denial(attributes, object, &denier, &why, ""));
                }
                Err(Stop::Misconfigured {
                    binding: Some(binding),
                    why,
                }) => {
                    let denier =
                        format!("ValidatingAdmissionPolicy '{name}' with binding '{binding}'");
                    let why = format!("failed to configure binding: {why}");
                    return Err(denial(attributes, object, &denier, &why, ""));
                }
            }
        }
        Ok(warnings)
    }

    /// One policy against the request, with each of its bindings.
    async fn apply_policy(
        &self,
        policy: &Value,
        compiled: &CompiledPolicy,
        bindings: &[&Arc<Value>],
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        warnings: &mut Vec<String>,
    ) -> Result<(), Stop> {
        let policy_name = text(policy, "/metadata/name");
        let Some(constraints) = policy
            .pointer("/spec/matchConstraints")
            .filter(|c| !c.is_null())
        else {
            return Err(Stop::policy(
                "policy contained no match constraints, a required field",
            ));
        };
        let invocation = match self
            .matches(
                &Criteria::of_match_resources(constraints, false),
                attributes,
                object,
            )
            .await
        {
            Ok(Some(invocation)) => invocation,
            Ok(None) => return Ok(()),
            Err(e) => return Err(Stop::policy(e.message)),
        };
        let param_def = self.param_def(policy)?;
        let converted = invocation
            .to_invoked(attributes, object)
            .map_err(|e| Stop::policy(e.message))?;
        let old = invocation
            .to_invoked(attributes, attributes.old)
            .map_err(|e| Stop::policy(e.message))?;
        let object_at = converted.as_ref().or(object);
        let old_at = old.as_ref().or(attributes.old);
        let def = attributes.def;
        let is_namespace = def.group.is_empty() && def.resource == "namespaces";
        let namespace = match attributes.namespace {
            Some(namespace) if def.namespaced && !is_namespace => {
                self.namespace_object(namespace).await.ok()
            }
            _ => None,
        };
        let fails_open = text(policy, "/spec/failurePolicy") == "Ignore";
        for binding in bindings {
            let binding_name = text(binding, "/metadata/name");
            let configure = |why: String| Stop::Misconfigured {
                binding: Some(binding_name.to_string()),
                why,
            };
            if let Some(resources) = binding
                .pointer("/spec/matchResources")
                .filter(|r| !r.is_null())
            {
                match self
                    .matches(
                        &Criteria::of_match_resources(resources, true),
                        attributes,
                        object,
                    )
                    .await
                {
                    Ok(Some(_)) => {}
                    Ok(None) => continue,
                    Err(e) => return Err(configure(e.message)),
                }
            }
            let params = match &param_def {
                Some(param_def) => self
                    .params(param_def, binding, attributes)
                    .await
                    .map_err(configure)?,
                None => vec![Value::Null],
            };
            for param in params {
                let mut inputs = Inputs::new(
                    attributes,
                    invocation.def(attributes),
                    object_at,
                    old_at,
                    namespace.as_ref(),
                );
                inputs.params = param;
                let decisions = evaluate(compiled, &inputs, fails_open);
                act_on(
                    policy_name,
                    binding,
                    decisions,
                    attributes,
                    object,
                    warnings,
                )
                .map_err(Stop::Denied)?;
            }
        }
        Ok(())
    }

    /// The resource the policy's paramKind names, if it has one.
    fn param_def(&self, policy: &Value) -> Result<Option<Arc<ResourceDef>>, Stop> {
        let Some(kind) = policy.pointer("/spec/paramKind").filter(|k| !k.is_null()) else {
            return Ok(None);
        };
        let api_version = text(kind, "/apiVersion");
        let kind = text(kind, "/kind");
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        self.registry
            .lookup_kind(group, version, kind)
            .map(Some)
            .ok_or_else(|| {
                Stop::policy(format!(
                    "failed to find resource referenced by paramKind: '{group}/{version}, Kind={kind}'"
                ))
            })
    }

    /// The params a binding refers to: by name or selector, in the
    /// binding's namespace or the request's. None found is an error under
    /// `parameterNotFoundAction: Deny`, and no evaluation at all under
    /// Allow.
    async fn params(
        &self,
        def: &ResourceDef,
        binding: &Value,
        attributes: &Attributes<'_>,
    ) -> Result<Vec<Value>, String> {
        let Some(reference) = binding.pointer("/spec/paramRef").filter(|r| !r.is_null()) else {
            return Ok(vec![Value::Null]);
        };
        let cache = self.caches.for_prefix(&def.key_prefix(&self.prefix, None));
        if !cache.wait_ready(Duration::from_secs(1)).await {
            return Err(format!(
                "paramKind kind `{}, Kind={}` not yet synced to use for admission",
                def.api_version(),
                def.kind
            ));
        }
        let referenced_namespace = text(reference, "/namespace");
        let namespace = if def.namespaced {
            let namespace = match referenced_namespace {
                "" => attributes.namespace.unwrap_or_default(),
                namespace => namespace,
            };
            if namespace.is_empty() {
                return Err("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources".into());
            }
            Some(namespace)
        } else {
            if !referenced_namespace.is_empty() {
                return Err(
                    "paramRef.namespace must not be provided for a cluster-scoped `paramKind`"
                        .into(),
                );
            }
            None
        };
        let name = text(reference, "/name");
        let selector = reference.get("selector").filter(|s| !s.is_null());
        let found: Vec<Value> = match (name, selector) {
            ("", None) => return Err("one of name or selector must be provided".into()),
            (name, None) => cache
                .get(&def.key(&self.prefix, namespace, name))
                .map(|p| vec![(*p).clone()])
                .unwrap_or_default(),
            ("", Some(selector)) => {
                let selector = LabelSelector::from_object(selector)
                    .ok_or_else(|| "invalid paramRef.selector".to_string())?;
                let (listed, _) = cache.list(&def.key_prefix(&self.prefix, namespace));
                listed
                    .into_iter()
                    .filter(|(_, p)| selector.matches(p))
                    .map(|(_, p)| (*p).clone())
                    .collect()
            }
            (_, Some(_)) => {
                return Err("paramRef.name and paramRef.selector are mutually exclusive".into())
            }
        };
        let found: Vec<Value> = found
            .into_iter()
            .map(|p| {
                if p.get("apiVersion").and_then(Value::as_str) == Some(&def.api_version()) {
                    p
                } else {
                    def.kind_impl
                        .convert(p.clone(), &def.api_version())
                        .unwrap_or(p)
                }
            })
            .collect();
        if found.is_empty() && text(reference, "/parameterNotFoundAction") == "Deny" {
            return Err(
                "no params found for policy binding with `Deny` parameterNotFoundAction".into(),
            );
        }
        Ok(found)
    }
}

/// The binding's validationActions on its decisions: warnings added, and
/// the first denied one as the error to answer.
fn act_on(
    policy_name: &str,
    binding: &Value,
    decisions: Vec<Decision>,
    attributes: &Attributes<'_>,
    object: Option<&Value>,
    warnings: &mut Vec<String>,
) -> Result<(), ApiError> {
    let binding_name = text(binding, "/metadata/name");
    let actions = crate::object::strings_at(&binding["spec"], "validationActions");
    for decision in decisions {
        if actions.iter().any(|a| a == "Warn") {
            warnings.push(format!(
                "Validation failed for ValidatingAdmissionPolicy '{policy_name}' with binding '{binding_name}': {}",
                decision.message
            ));
        }
        if actions.iter().any(|a| a == "Audit") {
            tracing::info!(
                policy = policy_name,
                binding = binding_name,
                "validation failure recorded for audit: {}",
                decision.message
            );
        }
        if actions.iter().any(|a| a == "Deny") {
            let denier =
                format!("ValidatingAdmissionPolicy '{policy_name}' with binding '{binding_name}'");
            return Err(denial(
                attributes,
                object,
                &denier,
                &decision.message,
                &decision.reason,
            ));
        }
    }
    Ok(())
}

/// Upstream's rejection: a Forbidden naming the resource and object, with
/// the decision's reason (Invalid when none) and its code.
fn denial(
    attributes: &Attributes<'_>,
    object: Option<&Value>,
    denier: &str,
    why: &str,
    reason: &str,
) -> ApiError {
    let def = attributes.def;
    let name = attributes.name_in_errors(object.or(attributes.old));
    let reason = if reason.is_empty() { "Invalid" } else { reason };
    let code = match reason {
        "Forbidden" => 403,
        "Unauthorized" => 401,
        "RequestEntityTooLarge" => 413,
        _ => 422,
    };
    let message = format!("{denier} denied request: {why}");
    ApiError::forbidden_resource(&def.group, &def.resource, name, &message)
        .answered_as(code, reason)
        .with_causes(vec![FieldError::message_only(message)])
        .denied_by(denier)
}

/// A policy's matchConditions, validations and auditAnnotations for one
/// binding and param: the failed validations.
fn evaluate(policy: &CompiledPolicy, inputs: &Inputs, fails_open: bool) -> Vec<Decision> {
    let mut activation = Activation::new(inputs, &policy.variables);
    let error = |message: String| Decision {
        message,
        reason: String::new(),
    };
    match conditions::evaluate(&policy.match_conditions, &mut activation) {
        Verdict::Matches => {}
        Verdict::Excluded => return Vec::new(),
        Verdict::Failed(_) if fails_open => return Vec::new(),
        Verdict::Failed(errors) => return vec![error(Verdict::joined(&errors))],
    }
    let started_at = activation.spent;
    let mut decisions = Vec::new();
    for validation in &policy.validations {
        let result = activation.evaluate(&validation.expression);
        if activation.spent.saturating_sub(started_at) > BUDGET {
            if !fails_open {
                decisions.push(error(OUT_OF_BUDGET.into()));
            }
            return decisions;
        }
        let expression = &validation.expression.text;
        match result {
            Ok(Value::Bool(true)) => {}
            Ok(Value::Bool(false)) => decisions.push(Decision {
                message: failure_message(validation, &mut activation),
                reason: validation.reason.clone(),
            }),
            Ok(other) if !fails_open => decisions.push(error(format!(
                "expression '{expression}' resulted in error: no such overload: bool(result) for {}",
                kind_of(&other)
            ))),
            Err(cause) if !fails_open => decisions.push(error(format!(
                "expression '{expression}' resulted in error: {cause}"
            ))),
            _ => {}
        }
    }
    let mut audit = Activation::new(inputs, &policy.variables);
    for annotation in &policy.audit_annotations {
        match audit.evaluate(annotation) {
            Ok(Value::String(_) | Value::Null) => {}
            Ok(other) => decisions.push(error(format!(
                "valueExpression '{}' resulted in unsupported return type: {}. Return type must be either string or null.",
                annotation.text,
                kind_of(&other)
            ))),
            Err(cause) if !fails_open => decisions.push(error(format!(
                "expression '{}' resulted in error: {cause}",
                annotation.text
            ))),
            Err(_) => {}
        }
    }
    decisions
}

/// A failed validation's message: its messageExpression's result when
/// that is a usable single line, else its message, else the expression.
fn failure_message(validation: &Validation, activation: &mut Activation<'_>) -> String {
    if let Some(message_expression) = &validation.message_expression {
        if let Ok(Value::String(message)) = activation.evaluate(message_expression) {
            let message = message.trim();
            if !message.is_empty() && message.len() <= MAX_MESSAGE_BYTES && !message.contains('\n')
            {
                return message.to_string();
            }
        }
    }
    if !validation.message.is_empty() {
        return validation.message.clone();
    }
    format!("failed expression: {}", validation.expression.text.trim())
}
