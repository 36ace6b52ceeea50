//! ServiceCIDR (networking.k8s.io/v1): a range Service ClusterIPs are
//! allocated from. The server keeps one named `kubernetes` for
//! `--service-cluster-ip-range`.

use std::net::IpAddr;
use std::sync::Arc;

use serde_json::Value;

use crate::error::FieldError;
use crate::kinds::Kind;
use crate::printers::values::{age, items, name};
use crate::printers::{age_col, col, name_col, Cell, TableColumn};
use crate::registry::ResourceDef;
use crate::validate::ip::cidr_problems;
use crate::validate::meta::go_string_slice;

pub struct ServiceCIDR;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "networking.k8s.io",
        "v1",
        "servicecidrs",
        "ServiceCIDR",
        false,
        Arc::new(ServiceCIDR),
    )
    .subresources(&["status"])]
}

/// The finalizer that keeps a range until no address depends on it.
pub const FINALIZER: &str = "networking.k8s.io/service-cidr-finalizer";

impl Kind for ServiceCIDR {
    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        spec(object.pointer("/spec/cidrs"))
    }

    /// Only the change from one range to two (same first) may be made.
    fn validate_update(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        let cidrs = strings(object.pointer("/spec/cidrs"));
        let old_cidrs = strings(old.pointer("/spec/cidrs"));
        let immutable = |field: String, rendered: String| FieldError::immutable(field, &rendered);
        if cidrs.len() == old_cidrs.len() {
            return cidrs
                .iter()
                .zip(&old_cidrs)
                .enumerate()
                .filter(|(_, (new, old))| new != old)
                .map(|(i, (new, _))| {
                    immutable(
                        format!("spec.cidrs[{i}]"),
                        crate::validate::meta::go_quote(new),
                    )
                })
                .collect();
        }
        if old_cidrs.len() == 1 && cidrs.len() == 2 {
            let mut errs = Vec::new();
            if cidrs[0] != old_cidrs[0] {
                errs.push(immutable(
                    "spec.cidrs[0]".into(),
                    crate::validate::meta::go_quote(cidrs[0]),
                ));
            }
            errs.extend(spec(object.pointer("/spec/cidrs")));
            return errs;
        }
        vec![immutable(
            "spec.cidrs".into(),
            go_string_slice("[]string", object.pointer("/spec/cidrs")),
        )]
    }

    fn table_columns(&self) -> Vec<TableColumn> {
        vec![
            name_col(),
            col("CIDRs", "string", D_SERVICE_CIDRS),
            age_col(),
        ]
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        vec![
            name(object).into(),
            items(object, "/spec/cidrs")
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(",")
                .into(),
            age(object),
        ]
    }
}

fn strings(list: Option<&Value>) -> Vec<&str> {
    list.and_then(Value::as_array)
        .map(|items| items.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn family(cidr: &str) -> Option<bool> {
    let address: IpAddr = cidr.split_once('/')?.0.parse().ok()?;
    Some(address.is_ipv4())
}

fn spec(list: Option<&Value>) -> Vec<FieldError> {
    let cidrs = strings(list);
    let path = "spec.cidrs";
    if cidrs.is_empty() {
        return vec![FieldError::required(path, "at least one CIDR required")];
    }
    if cidrs.len() > 2 {
        return vec![FieldError::invalid_rendered(
            path,
            &format!(
                "networking.ServiceCIDRSpec{{CIDRs:{}}}",
                go_string_slice("[]string", list)
            ),
            "may only hold up to 2 values",
        )];
    }
    let mut errs = Vec::new();
    for (i, cidr) in cidrs.iter().enumerate() {
        for problem in cidr_problems(cidr) {
            errs.push(FieldError::invalid(format!("{path}[{i}]"), cidr, &problem));
        }
    }
    if cidrs.len() == 2 && family(cidrs[0]).is_some() && family(cidrs[0]) == family(cidrs[1]) {
        errs.push(FieldError::invalid_rendered(
            path,
            &go_string_slice("[]string", list),
            "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64",
        ));
    }
    errs
}

const D_SERVICE_CIDRS: &str = "CIDRs defines the IP blocks in CIDR notation (e.g. \"192.168.0.0/24\" or \"2001:db8::/64\") from which to assign service cluster IPs. Max of two CIDRs is allowed, one of each IP family. This field is immutable.";

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn messages(errs: Vec<FieldError>) -> Vec<String> {
        errs.iter().map(FieldError::render).collect()
    }

    fn cidr(cidrs: Value) -> Value {
        json!({"metadata": {"name": "r"}, "spec": {"cidrs": cidrs}})
    }

    #[test]
    fn ranges_in_upstreams_words() {
        assert!(ServiceCIDR
            .validate_create(&cidr(json!(["10.96.0.0/12", "fd00::/108"])))
            .is_empty());
        assert_eq!(
            messages(ServiceCIDR.validate_create(&cidr(json!([])))),
            ["spec.cidrs: Required value: at least one CIDR required"]
        );
        assert_eq!(
            messages(ServiceCIDR.validate_create(&cidr(json!(["10.0.0.0/24", "10.1.0.1/24"])))),
            [
                r#"spec.cidrs[1]: Invalid value: "10.1.0.1/24": must not have bits set beyond the prefix length"#,
                r#"spec.cidrs: Invalid value: []string{"10.0.0.0/24", "10.1.0.1/24"}: may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64"#,
            ]
        );
        assert_eq!(
            messages(ServiceCIDR.validate_create(&cidr(json!([
                "10.0.0.0/24",
                "fd00::/64",
                "10.2.0.0/24"
            ])))),
            [
                r#"spec.cidrs: Invalid value: networking.ServiceCIDRSpec{CIDRs:[]string{"10.0.0.0/24", "fd00::/64", "10.2.0.0/24"}}: may only hold up to 2 values"#
            ]
        );
    }

    #[test]
    fn only_a_second_family_may_be_added() {
        let old = cidr(json!(["10.0.0.0/24"]));
        assert!(ServiceCIDR
            .validate_update(&cidr(json!(["10.0.0.0/24", "fd00::/64"])), &old)
            .is_empty());
        assert_eq!(
            messages(ServiceCIDR.validate_update(&cidr(json!(["10.1.0.0/24"])), &old)),
            [r#"spec.cidrs[0]: Invalid value: "10.1.0.0/24": field is immutable"#]
        );
        assert_eq!(
            messages(ServiceCIDR.validate_update(&cidr(json!([])), &old)),
            [r#"spec.cidrs: Invalid value: []string{}: field is immutable"#]
        );
    }
}
