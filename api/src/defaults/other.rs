//! Defaulters of the smaller groups: autoscaling, rbac, networking, storage,
//! scheduling, discovery, admissionregistration, flowcontrol, apiextensions
//! and apiregistration (each pkg/apis/<group>/<version>/defaults.go).

use serde_json::json;

use super::{child, default_pointer, default_zero, each_item, ensure_child, str_field, Object};

/// admissionregistration/v1 webhook defaults (`SetDefaults_ValidatingWebhook`,
/// `SetDefaults_MutatingWebhook`, `SetDefaults_Rule`, `SetDefaults_ServiceReference`).
/// sideEffects and admissionReviewVersions are required in v1, not defaulted.
pub(crate) fn webhook_configuration(configuration: &mut Object, mutating: bool) {
    each_item(configuration, "webhooks", |webhook| {
        default_pointer(webhook, "failurePolicy", json!("Fail"));
        default_pointer(webhook, "matchPolicy", json!("Equivalent"));
        default_pointer(webhook, "namespaceSelector", json!({}));
        default_pointer(webhook, "objectSelector", json!({}));
        default_pointer(webhook, "timeoutSeconds", json!(10));
        if mutating {
            default_pointer(webhook, "reinvocationPolicy", json!("Never"));
        }
        each_item(webhook, "rules", rule);
        if let Some(service) =
            child(webhook, "clientConfig").and_then(|config| child(config, "service"))
        {
            default_pointer(service, "port", json!(443));
        }
    });
}

/// `SetDefaults_Rule`: scope "*".
fn rule(rule: &mut Object) {
    default_pointer(rule, "scope", json!("*"));
}

/// `SetDefaults_MatchResources` and the rules inside.
fn match_resources(resources: &mut Object) {
    default_pointer(resources, "matchPolicy", json!("Equivalent"));
    default_pointer(resources, "namespaceSelector", json!({}));
    default_pointer(resources, "objectSelector", json!({}));
    each_item(resources, "resourceRules", rule);
    each_item(resources, "excludeResourceRules", rule);
}

/// admissionregistration/v1 `SetDefaults_ValidatingAdmissionPolicySpec`.
pub(crate) fn validating_admission_policy(policy: &mut Object) {
    let Some(spec) = ensure_child(policy, "spec") else {
        return;
    };
    default_pointer(spec, "failurePolicy", json!("Fail"));
    if let Some(constraints) = child(spec, "matchConstraints") {
        match_resources(constraints);
    }
}

/// admissionregistration/v1 ValidatingAdmissionPolicyBinding: its match resources.
pub(crate) fn validating_admission_policy_binding(binding: &mut Object) {
    if let Some(resources) = child(binding, "spec").and_then(|spec| child(spec, "matchResources")) {
        match_resources(resources);
    }
}

/// flowcontrol/v1 `SetDefaults_FlowSchemaSpec`: matching precedence 1000.
pub(crate) fn flow_schema(schema: &mut Object) {
    if let Some(spec) = ensure_child(schema, "spec") {
        default_zero(spec, "matchingPrecedence", json!(1000));
    }
}

/// flowcontrol/v1 priority levels: shares, lendable percent and queuing shape.
pub(crate) fn priority_level_configuration(configuration: &mut Object) {
    let Some(spec) = child(configuration, "spec") else {
        return;
    };
    if let Some(limited) = child(spec, "limited") {
        // A pointer in v1: an explicit 0 is kept (it means "no seats").
        default_pointer(limited, "nominalConcurrencyShares", json!(30));
        default_pointer(limited, "lendablePercent", json!(0));
        if let Some(queuing) = child(limited, "limitResponse").and_then(|r| child(r, "queuing")) {
            default_zero(queuing, "handSize", json!(8));
            default_zero(queuing, "queues", json!(64));
            default_zero(queuing, "queueLengthLimit", json!(50));
        }
    }
    if let Some(exempt) = child(spec, "exempt") {
        default_pointer(exempt, "nominalConcurrencyShares", json!(0));
        default_pointer(exempt, "lendablePercent", json!(0));
    }
}

/// apiextensions/v1 `SetDefaults_CustomResourceDefinitionSpec` and the
/// conversion webhook's service port.
pub(crate) fn custom_resource_definition(crd: &mut Object) {
    let Some(spec) = ensure_child(crd, "spec") else {
        return;
    };
    if let Some(names) = ensure_child(spec, "names") {
        let kind = str_field(names, "kind").to_string();
        if !kind.is_empty() {
            default_zero(names, "singular", json!(kind.to_lowercase()));
            default_zero(names, "listKind", json!(format!("{kind}List")));
        }
    }
    default_pointer(spec, "conversion", json!({"strategy": "None"}));
    if let Some(service) = child(spec, "conversion")
        .and_then(|conversion| child(conversion, "webhook"))
        .and_then(|webhook| child(webhook, "clientConfig"))
        .and_then(|config| child(config, "service"))
    {
        default_pointer(service, "port", json!(443));
    }
}

/// apiregistration/v1 `SetDefaults_ServiceReference`: port 443.
pub(crate) fn api_service(service: &mut Object) {
    if let Some(reference) = child(service, "spec").and_then(|spec| child(spec, "service")) {
        default_pointer(reference, "port", json!(443));
    }
}
