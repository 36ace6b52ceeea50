//! IPAddress (networking.k8s.io/v1): one allocated address, named by the
//! address itself, and what it is allocated to. The Service IP allocator
//! writes one per ClusterIP; its create is what claims the address.

use std::sync::Arc;

use serde_json::Value;

use crate::error::FieldError;
use crate::kinds::{Kind, NameRule};
use crate::printers::values::{self, age, get, text};
use crate::printers::{col, name_col, Cell, TableColumn};
use crate::registry::ResourceDef;
use crate::validate::meta::{go_quote, name, path_segment_name};

pub struct IPAddress;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "networking.k8s.io",
        "v1",
        "ipaddresses",
        "IPAddress",
        false,
        Arc::new(IPAddress),
    )
    .short_names(&["ip"])]
}

/// Labels the allocator puts on the addresses it owns.
pub const FAMILY_LABEL: &str = "ipaddress.kubernetes.io/ip-family";
pub const MANAGED_BY_LABEL: &str = "ipaddress.kubernetes.io/managed-by";
pub const ALLOCATOR: &str = "ipallocator.k8s.io";

impl Kind for IPAddress {
    fn name_rule(&self) -> NameRule {
        NameRule::IpAddress
    }

    // Upstream's generator for addresses adds nothing: the prefix is the
    // address.
    fn generated_name(&self, prefix: &str) -> String {
        prefix.to_string()
    }

    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        parent_reference(object.pointer("/spec/parentRef"))
    }

    fn validate_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = parent_reference(object.pointer("/spec/parentRef"));
        let parent = object.pointer("/spec/parentRef");
        if !crate::validate::meta::semantically_equal(
            parent.unwrap_or(&Value::Null),
            old.pointer("/spec/parentRef").unwrap_or(&Value::Null),
        ) {
            errs.push(FieldError::immutable(
                "spec.parentRef",
                &go_parent_reference(parent),
            ));
        }
        errs
    }

    fn table_columns(&self) -> Vec<TableColumn> {
        // Upstream defines no Age column but sends an age cell in each row
        // (kubectl prints as many cells as there are columns).
        vec![name_col(), col("ParentRef", "string", D_IP_PARENT_REF)]
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        vec![
            values::name(object).into(),
            parent_cell(object).into(),
            age(object),
        ]
    }
}

/// `%#v` of the ParentReference a pointer holds (Go prints what it points
/// to), or `null`.
fn go_parent_reference(parent: Option<&Value>) -> String {
    let Some(parent) = parent.filter(|p| !p.is_null()) else {
        return "null".to_string();
    };
    let field = |key: &str| go_quote(parent.get(key).and_then(Value::as_str).unwrap_or(""));
    format!(
        "networking.ParentReference{{Group:{}, Resource:{}, Namespace:{}, Name:{}}}",
        field("group"),
        field("resource"),
        field("namespace"),
        field("name")
    )
}

fn parent_reference(parent: Option<&Value>) -> Vec<FieldError> {
    let path = "spec.parentRef";
    let Some(parent) = parent.filter(|p| !p.is_null()) else {
        return vec![FieldError::required(path, "")];
    };
    let text = |key: &str| parent.get(key).and_then(Value::as_str).unwrap_or("");
    let mut errs = Vec::new();
    let group = text("group");
    if !group.is_empty() {
        errs.extend(name(NameRule::Subdomain, group, &format!("{path}.group")));
    }
    for key in ["resource", "name"] {
        let value = text(key);
        let field = format!("{path}.{key}");
        if value.is_empty() {
            errs.push(FieldError::required(field, ""));
        } else {
            errs.extend(path_segment_name(value, &field));
        }
    }
    let namespace = text("namespace");
    if !namespace.is_empty() {
        errs.extend(path_segment_name(namespace, &format!("{path}.namespace")));
    }
    errs
}

const D_IP_PARENT_REF: &str = "ParentRef references the resource that an IPAddress is attached to. An IPAddress must reference a parent object.";

/// `resource[.group][/namespace]/name` of an IPAddress's parent.
fn parent_cell(ip: &Value) -> String {
    let Some(parent) = get(ip, "/spec/parentRef").filter(|p| !p.is_null()) else {
        return "<none>".to_string();
    };
    let mut rendered = text(parent, "/resource").to_string();
    let group = text(parent, "/group");
    if !group.is_empty() {
        rendered = format!("{rendered}.{group}");
    }
    rendered = rendered.to_lowercase();
    let namespace = text(parent, "/namespace");
    if !namespace.is_empty() {
        rendered = format!("{rendered}/{namespace}");
    }
    format!("{rendered}/{}", text(parent, "/name"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn messages(errs: Vec<FieldError>) -> Vec<String> {
        errs.iter().map(FieldError::render).collect()
    }

    #[test]
    fn parent_references_in_upstreams_words() {
        assert_eq!(
            messages(IPAddress.validate_create(&json!({"spec": {}}))),
            ["spec.parentRef: Required value"]
        );
        assert_eq!(
            messages(IPAddress.validate_create(&json!({"spec": {"parentRef": {"group": "Bad_Group", "resource": "services", "name": "a/b"}}}))),
            [
                r#"spec.parentRef.group: Invalid value: "Bad_Group": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#,
                r#"spec.parentRef.name: Invalid value: "a/b": may not contain '/'"#,
            ]
        );
        let old = json!({"spec": {"parentRef": {"resource": "services", "namespace": "default", "name": "a"}}});
        let mut new = old.clone();
        new["spec"]["parentRef"]["name"] = json!("b");
        assert_eq!(
            messages(IPAddress.validate_update(&new, &old)),
            [
                r#"spec.parentRef: Invalid value: networking.ParentReference{Group:"", Resource:"services", Namespace:"default", Name:"b"}: field is immutable"#
            ]
        );
    }

    #[test]
    fn parent_references_print_as_upstreams() {
        use super::parent_cell as ip_address_parent;
        let parent =
            |reference: Value| ip_address_parent(&json!({"spec": {"parentRef": reference}}));
        assert_eq!(ip_address_parent(&json!({"spec": {}})), "<none>");
        assert_eq!(
            parent(json!({"resource": "services", "namespace": "default", "name": "web"})),
            "services/default/web"
        );
        assert_eq!(
            parent(
                json!({"group": "gateway.networking.k8s.io", "resource": "Gateways", "name": "gw"})
            ),
            "gateways.gateway.networking.k8s.io/gw"
        );
    }
}
