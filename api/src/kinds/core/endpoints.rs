//! Endpoints (core/v1): the addresses behind a Service.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::defaults::{default_zero, each_item, Object};
use crate::kinds::Kind;
use crate::printers::values::{age, int, items, join_host_port, name, text};
use crate::printers::{age_col, col, name_col, Cell, TableColumn};
use crate::registry::ResourceDef;

pub struct Endpoints;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "",
        "v1",
        "endpoints",
        "Endpoints",
        true,
        Arc::new(Endpoints),
    )
    .short_names(&["ep"])
    .storage_segment("services/endpoints")]
}

impl Kind for Endpoints {
    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        set_defaults(object);
    }

    fn table_columns(&self) -> Vec<TableColumn> {
        vec![
            name_col(),
            col("Endpoints", "string", D_EP_SUBSETS),
            age_col(),
        ]
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        vec![
            name(object).into(),
            format_endpoints(object).into(),
            age(object),
        ]
    }
}

/// `SetDefaults_Endpoints`: port protocol TCP.
fn set_defaults(endpoints: &mut Object) {
    each_item(endpoints, "subsets", |subset| {
        each_item(subset, "ports", |port| {
            default_zero(port, "protocol", json!("TCP"));
        });
    });
}

const D_EP_SUBSETS: &str = "The set of all endpoints is the union of all subsets. Addresses are placed into subsets according to the IPs they share. A single address with multiple ports, some of which are ready and some of which are not (because they come from different containers) will result in the address being displayed in different subsets for the different ports. No address will appear in both Addresses and NotReadyAddresses in the same subset. Sets of addresses and ports that comprise a service.";

/// Up to three `ip:port` endpoints, then a count of the rest.
fn format_endpoints(ep: &Value) -> String {
    let subsets = items(ep, "/subsets");
    if subsets.is_empty() {
        return "<none>".to_string();
    }
    const MAX: usize = 3;
    let mut list: Vec<String> = Vec::new();
    let mut more = false;
    let mut count = 0usize;
    for ss in subsets {
        let addresses = items(ss, "/addresses");
        let ports = items(ss, "/ports");
        if ports.is_empty() {
            // Headless services may have no ports at all.
            count += addresses.len();
            for a in addresses {
                if list.len() == MAX {
                    more = true;
                    break;
                }
                list.push(text(a, "/ip").to_string());
            }
            continue;
        }
        for port in ports {
            count += addresses.len();
            for a in addresses {
                if list.len() == MAX {
                    more = true;
                    break;
                }
                list.push(join_host_port(text(a, "/ip"), int(port, "/port")));
            }
        }
    }
    let ret = list.join(",");
    if more {
        format!("{ret} + {} more...", count.saturating_sub(MAX))
    } else {
        ret
    }
}
