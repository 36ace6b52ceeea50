//! APIService (apiregistration.k8s.io/v1): named `<version>.<group>`, a
//! group/version with its discovery priorities and, unless Local, the
//! Service of the extension API server that answers it. Validated,
//! defaulted and printed as kube-aggregator does; a Local one is Available
//! from its creation.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::error::FieldError;
use crate::kinds::{Kind, NameRule};
use crate::printers::values::{age, condition, get, items, name};
use crate::printers::{age_col, col, name_col, Cell, TableColumn};
use crate::registry::ResourceDef;

/// The label of the APIServices Capstan registers itself: `onstart` for
/// built-in group/versions, `true` for those of CustomResourceDefinitions.
pub const AUTOMANAGED_LABEL: &str = "kube-aggregator.kubernetes.io/automanaged";

pub struct APIService;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "apiregistration.k8s.io",
        "v1",
        "apiservices",
        "APIService",
        false,
        Arc::new(APIService),
    )
    .definition("io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService")
    .categories(&["api-extensions"])
    .subresources(&["status"])]
}

/// The condition a Local APIService has: always available.
pub fn local_available_condition(now: &str) -> Value {
    json!({
        "type": "Available",
        "status": "True",
        "lastTransitionTime": now,
        "reason": "Local",
        "message": "Local APIServices are always available",
    })
}

const D_APISERVICE_SERVICE: &str = "The reference to the service that hosts this API endpoint.";
const D_APISERVICE_AVAILABLE: &str = "Whether this service is available.";

fn is_local(object: &Value) -> bool {
    object.pointer("/spec/service").is_none_or(Value::is_null)
}

fn text<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

impl Kind for APIService {
    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        let service = object
            .get_mut("spec")
            .and_then(|s| s.get_mut("service"))
            .and_then(Value::as_object_mut);
        if let Some(service) = service {
            if service.get("port").is_none_or(Value::is_null) {
                service.insert("port".into(), json!(443));
            }
        }
    }

    fn prepare_for_create(&self, object: &mut Value) {
        let status = if is_local(object) {
            let now = crate::object::now_timestamp();
            json!({"conditions": [local_available_condition(&now)]})
        } else {
            json!({})
        };
        object["status"] = status;
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        validate(object)
    }

    fn validate_update(&self, object: &Value, _old: &Value) -> Vec<FieldError> {
        validate(object)
    }

    fn validate_status_update(&self, object: &Value, _old: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        for (i, condition) in crate::object::items_at(object, "/status/conditions")
            .iter()
            .enumerate()
        {
            let status = text(condition, "/status");
            if !["True", "False", "Unknown"].contains(&status) {
                errs.push(FieldError::not_supported(
                    format!("status.conditions[{i}].status"),
                    status,
                    &["True", "False", "Unknown"],
                ));
            }
        }
        errs
    }

    fn table_columns(&self) -> Vec<TableColumn> {
        vec![
            name_col(),
            col("Service", "string", D_APISERVICE_SERVICE),
            col("Available", "string", D_APISERVICE_AVAILABLE),
            age_col(),
        ]
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        let service = match get(object, "/spec/service") {
            Some(service) if !service.is_null() => {
                format!("{}/{}", text(service, "/namespace"), text(service, "/name"))
            }
            _ => "Local".to_string(),
        };
        let available = match condition(items(object, "/status/conditions"), "Available") {
            None => "Unknown".to_string(),
            Some(c) => match (text(c, "/status"), text(c, "/reason")) {
                ("True", _) => "True".to_string(),
                (status, "") => status.to_string(),
                (status, reason) => format!("{status} ({reason})"),
            },
        };
        vec![
            name(object).into(),
            service.into(),
            available.into(),
            age(object),
        ]
    }
}

/// Upstream's ValidateAPIService.
fn validate(object: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let (group, version) = (text(object, "/spec/group"), text(object, "/spec/version"));
    let name = crate::object::name(object);
    let wanted = format!("{version}.{group}");
    if !name.is_empty()
        && crate::validate::object_meta::name_problems(NameRule::PathSegment, name, false)
            .is_empty()
        && name != wanted
    {
        errs.push(FieldError::invalid(
            "metadata.name",
            name,
            &format!("must be `spec.version+\".\"+spec.group`: {wanted:?}"),
        ));
    }
    if group.is_empty() && version != "v1" {
        errs.push(FieldError::required(
            "spec.group",
            "only v1 may have an empty group and it better be legacy kube",
        ));
    }
    if !group.is_empty() {
        for problem in
            crate::validate::object_meta::name_problems(NameRule::Subdomain, group, false)
        {
            errs.push(FieldError::invalid("spec.group", group, &problem));
        }
    }
    for problem in
        crate::validate::object_meta::name_problems(NameRule::Dns1035Label, version, false)
    {
        errs.push(FieldError::invalid("spec.version", version, &problem));
    }
    let number = |pointer: &str| object.pointer(pointer).and_then(Value::as_i64).unwrap_or(0);
    let group_priority = number("/spec/groupPriorityMinimum");
    if !(1..=20000).contains(&group_priority) {
        errs.push(FieldError::invalid_rendered(
            "spec.groupPriorityMinimum",
            &group_priority.to_string(),
            "must be positive and less than 20000",
        ));
    }
    let version_priority = number("/spec/versionPriority");
    if !(1..=1000).contains(&version_priority) {
        errs.push(FieldError::invalid_rendered(
            "spec.versionPriority",
            &version_priority.to_string(),
            "must be positive and less than 1000",
        ));
    }
    let ca_bundle = text(object, "/spec/caBundle");
    let skips_verify = object.pointer("/spec/insecureSkipTLSVerify") == Some(&Value::Bool(true));
    if is_local(object) {
        if !ca_bundle.is_empty() {
            use base64::Engine as _;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(ca_bundle)
                .map_or(0, |decoded| decoded.len());
            errs.push(FieldError::invalid(
                "spec.caBundle",
                &format!("{bytes} bytes"),
                "local APIServices may not have a caBundle",
            ));
        }
        if skips_verify {
            errs.push(FieldError::invalid_rendered(
                "spec.insecureSkipTLSVerify",
                "true",
                "local APIServices may not have insecureSkipTLSVerify",
            ));
        }
        return errs;
    }
    if text(object, "/spec/service/namespace").is_empty() {
        errs.push(FieldError::required("spec.service.namespace", ""));
    }
    if text(object, "/spec/service/name").is_empty() {
        errs.push(FieldError::required("spec.service.name", ""));
    }
    let port = number("/spec/service/port");
    if !(1..=65535).contains(&port) {
        errs.push(FieldError::invalid_rendered(
            "spec.service.port",
            &port.to_string(),
            "port is not valid: must be between 1 and 65535, inclusive",
        ));
    }
    if skips_verify && !ca_bundle.is_empty() {
        errs.push(FieldError::invalid_rendered(
            "spec.insecureSkipTLSVerify",
            "true",
            "may not be true if caBundle is present",
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use chrono::Utc;

    use super::*;

    fn rendered(errs: Vec<FieldError>) -> Vec<String> {
        errs.iter().map(FieldError::render).collect()
    }

    fn api_service(name: &str, spec: Value) -> Value {
        json!({"metadata": {"name": name}, "spec": spec})
    }

    #[test]
    fn valid_local_and_remote_services_pass() {
        let local = api_service(
            "v1.apps",
            json!({"group": "apps", "version": "v1", "groupPriorityMinimum": 17800, "versionPriority": 15}),
        );
        assert!(validate(&local).is_empty());
        let remote = api_service(
            "v1beta1.metrics.k8s.io",
            json!({"group": "metrics.k8s.io", "version": "v1beta1", "groupPriorityMinimum": 100,
                   "versionPriority": 100, "insecureSkipTLSVerify": true,
                   "service": {"namespace": "kube-system", "name": "metrics-server", "port": 443}}),
        );
        assert!(validate(&remote).is_empty());
    }

    #[test]
    fn each_rule_is_worded_as_upstream() {
        let bad = api_service(
            "v1.wrong",
            json!({"group": "Bad_Group", "version": "V1", "groupPriorityMinimum": 0,
                   "versionPriority": 1001, "insecureSkipTLSVerify": true, "caBundle": "QUJD",
                   "service": {"namespace": "", "name": "svc", "port": 70000}}),
        );
        let errs = rendered(validate(&bad));
        assert_eq!(
            errs[0],
            r#"metadata.name: Invalid value: "v1.wrong": must be `spec.version+"."+spec.group`: "V1.Bad_Group""#
        );
        assert!(
            errs[1].starts_with(r#"spec.group: Invalid value: "Bad_Group": "#),
            "{errs:?}"
        );
        assert!(
            errs[2].starts_with(r#"spec.version: Invalid value: "V1": "#),
            "{errs:?}"
        );
        assert_eq!(
            errs[3..],
            [
                "spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000",
                "spec.versionPriority: Invalid value: 1001: must be positive and less than 1000",
                "spec.service.namespace: Required value",
                "spec.service.port: Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive",
                "spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present",
            ]
        );
        let local = api_service(
            "v1.",
            json!({"group": "", "version": "v1", "groupPriorityMinimum": 18000, "versionPriority": 1,
                   "caBundle": "QUJD", "insecureSkipTLSVerify": true}),
        );
        assert_eq!(
            rendered(validate(&local)),
            [
                r#"spec.caBundle: Invalid value: "3 bytes": local APIServices may not have a caBundle"#,
                "spec.insecureSkipTLSVerify: Invalid value: true: local APIServices may not have insecureSkipTLSVerify",
            ]
        );
        let legacy = api_service(
            "v2.",
            json!({"group": "", "version": "v2", "groupPriorityMinimum": 1, "versionPriority": 1}),
        );
        assert_eq!(
            rendered(validate(&legacy)),
            ["spec.group: Required value: only v1 may have an empty group and it better be legacy kube"]
        );
    }

    #[test]
    fn the_table_shows_the_service_and_availability() {
        let now = Utc::now();
        let cells =
            |object: Value| crate::printers::cells_at(&APIService.table_cells(&object), now);
        let local = json!({"metadata": {"name": "v1."}, "spec": {},
            "status": {"conditions": [local_available_condition("2026-01-01T00:00:00Z")]}});
        assert_eq!(cells(local)[1..3], [json!("Local"), json!("True")]);
        let down = json!({"metadata": {"name": "v1beta1.metrics.k8s.io"},
            "spec": {"service": {"namespace": "kube-system", "name": "metrics-server"}},
            "status": {"conditions": [{"type": "Available", "status": "False", "reason": "MissingEndpoints"}]}});
        assert_eq!(
            cells(down)[1..3],
            [
                json!("kube-system/metrics-server"),
                json!("False (MissingEndpoints)")
            ]
        );
        let unknown = json!({"metadata": {"name": "v1.x.io"}, "spec": {"service": {"namespace": "a", "name": "b"}}});
        assert_eq!(cells(unknown)[2], json!("Unknown"));
    }
}
