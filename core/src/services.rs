//! Service addresses: ClusterIPs from `--service-cluster-ip-range` and
//! NodePorts from `--service-node-port-range`, allocated on create, kept on
//! update, released on delete — through storage-backed range allocators, so
//! replicas never double-allocate.

use std::net::Ipv4Addr;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::allocator::{AllocationError, Ipv4Cidr, RangeAllocator};
use crate::error::{ApiError, ApiResult, FieldError};
use crate::storage::Storage;

pub const DEFAULT_CLUSTER_IP_RANGE: &str = "10.0.0.0/24";
pub const DEFAULT_NODE_PORT_RANGE: (u16, u16) = (30000, 32767);

pub struct ServiceAddresses {
    cidr: Ipv4Cidr,
    ips: RangeAllocator,
    node_port_base: u16,
    ports: RangeAllocator,
}

/// What a create allocated, to give back if the create fails.
#[derive(Debug, Default)]
pub struct Allocated {
    ip: Option<u64>,
    node_ports: Vec<u64>,
}

fn service_type(svc: &Value) -> &str {
    svc.pointer("/spec/type")
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP")
}

fn wants_node_ports(svc: &Value) -> bool {
    matches!(service_type(svc), "NodePort" | "LoadBalancer")
}

fn invalid(name: &str, cause: FieldError) -> ApiError {
    ApiError::invalid("", "Service", name, vec![cause])
}

impl ServiceAddresses {
    pub fn new(
        storage: Arc<dyn Storage>,
        prefix: &str,
        cidr: Ipv4Cidr,
        node_ports: (u16, u16),
    ) -> Self {
        let size = cidr.size();
        let (low, high) = node_ports;
        Self {
            ips: RangeAllocator::new(
                storage.clone(),
                format!("{prefix}/ranges/serviceips"),
                cidr.to_string(),
                size,
                // The network and broadcast addresses are never handed out.
                vec![0, size - 1],
            ),
            cidr,
            node_port_base: low,
            ports: RangeAllocator::new(
                storage,
                format!("{prefix}/ranges/servicenodeports"),
                format!("{low}-{high}"),
                u64::from(high.saturating_sub(low)) + 1,
                Vec::new(),
            ),
        }
    }

    /// The address the `kubernetes` Service gets: the range's first.
    pub fn first_address(&self) -> Ipv4Addr {
        self.cidr.address(1)
    }

    /// Fills `spec.clusterIP(s)` and NodePorts of a new Service.
    pub async fn allocate(&self, svc: &mut Value, name: &str) -> ApiResult<Allocated> {
        let mut allocated = Allocated::default();
        if let Err(e) = self.allocate_into(svc, name, &mut allocated).await {
            self.release_allocated(&allocated).await;
            return Err(e);
        }
        Ok(allocated)
    }

    async fn allocate_into(
        &self,
        svc: &mut Value,
        name: &str,
        allocated: &mut Allocated,
    ) -> ApiResult<()> {
        if service_type(svc) != "ExternalName" {
            let requested = svc
                .pointer("/spec/clusterIP")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let ip = if requested == "None" {
                "None".to_string()
            } else {
                let wanted = if requested.is_empty() {
                    None
                } else {
                    let offset = requested
                        .parse::<Ipv4Addr>()
                        .ok()
                        .and_then(|ip| self.cidr.offset_of(ip));
                    Some(offset.unwrap_or(u64::MAX))
                };
                match self.ips.allocate(wanted, "IP").await? {
                    Ok(offset) => {
                        allocated.ip = Some(offset);
                        self.cidr.address(offset).to_string()
                    }
                    Err(e) => {
                        let message = match (&e, requested.is_empty()) {
                            (AllocationError::Full, _) => "range is full".to_string(),
                            _ => format!("failed to allocate IP {requested}: {e}"),
                        };
                        return Err(invalid(
                            name,
                            FieldError {
                                reason: "FieldValueInvalid",
                                message: format!(
                                    "Invalid value: []string{{\"{requested}\"}}: {message}"
                                ),
                                field: "spec.clusterIPs".into(),
                            },
                        ));
                    }
                }
            };
            if let Some(spec) = svc.get_mut("spec").and_then(Value::as_object_mut) {
                spec.insert("clusterIP".into(), json!(ip));
                spec.insert("clusterIPs".into(), json!([ip]));
                spec.entry("ipFamilies").or_insert_with(|| json!(["IPv4"]));
                spec.entry("ipFamilyPolicy")
                    .or_insert_with(|| json!("SingleStack"));
            }
        }
        if wants_node_ports(svc) {
            self.allocate_node_ports(svc, name, allocated, None).await?;
        }
        Ok(())
    }

    /// Gives every port of a NodePort/LoadBalancer Service a node port,
    /// keeping the ones `old` already had.
    async fn allocate_node_ports(
        &self,
        svc: &mut Value,
        name: &str,
        allocated: &mut Allocated,
        old: Option<&Value>,
    ) -> ApiResult<()> {
        let old_ports: Vec<(i64, String, i64)> = old
            .and_then(|o| o.pointer("/spec/ports"))
            .and_then(Value::as_array)
            .map(|ports| {
                ports
                    .iter()
                    .map(|p| {
                        (
                            p["port"].as_i64().unwrap_or(0),
                            p["protocol"].as_str().unwrap_or("TCP").to_string(),
                            p["nodePort"].as_i64().unwrap_or(0),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        let count = svc
            .pointer("/spec/ports")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        for i in 0..count {
            let Some(port) = svc.pointer_mut(&format!("/spec/ports/{i}")) else {
                continue;
            };
            let number = port["port"].as_i64().unwrap_or(0);
            let protocol = port["protocol"].as_str().unwrap_or("TCP").to_string();
            let requested = port["nodePort"].as_i64().unwrap_or(0);
            let kept = old_ports
                .iter()
                .find(|(p, proto, np)| {
                    *p == number
                        && *proto == protocol
                        && *np != 0
                        && (requested == 0 || requested == *np)
                })
                .map(|(_, _, np)| *np);
            if let Some(np) = kept {
                port["nodePort"] = json!(np);
                continue;
            }
            let wanted = (requested != 0).then(|| {
                u64::try_from(requested - i64::from(self.node_port_base)).unwrap_or(u64::MAX)
            });
            match self.ports.allocate(wanted, "port").await? {
                Ok(offset) => {
                    allocated.node_ports.push(offset);
                    port["nodePort"] = json!(i64::from(self.node_port_base) + offset as i64);
                }
                Err(e) => {
                    return Err(invalid(
                        name,
                        FieldError {
                            reason: "FieldValueInvalid",
                            message: format!("Invalid value: {requested}: {e}"),
                            field: format!("spec.ports[{i}].nodePort"),
                        },
                    ))
                }
            }
        }
        Ok(())
    }

    /// Keeps what `old` had allocated (upstream's patchAllocatedValues),
    /// refuses ClusterIP changes, and allocates node ports for new ports.
    pub async fn carry_over(
        &self,
        svc: &mut Value,
        old: &Value,
        name: &str,
    ) -> ApiResult<Allocated> {
        let old_ip = old
            .pointer("/spec/clusterIP")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let new_ip = svc
            .pointer("/spec/clusterIP")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if !old_ip.is_empty() {
            if new_ip.is_empty() {
                if let Some(spec) = svc.get_mut("spec").and_then(Value::as_object_mut) {
                    for field in ["clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"] {
                        if let Some(v) = old.pointer(&format!("/spec/{field}")) {
                            spec.entry(field).or_insert_with(|| v.clone());
                        }
                    }
                }
            } else if new_ip != old_ip && service_type(svc) != "ExternalName" {
                return Err(invalid(
                    name,
                    FieldError::invalid("spec.clusterIPs[0]", &new_ip, "may not change once set"),
                ));
            }
        }
        let mut allocated = Allocated::default();
        if wants_node_ports(svc) {
            if let Err(e) = self
                .allocate_node_ports(svc, name, &mut allocated, Some(old))
                .await
            {
                self.release_allocated(&allocated).await;
                return Err(e);
            }
        }
        Ok(allocated)
    }

    pub async fn release_allocated(&self, allocated: &Allocated) {
        if let Some(ip) = allocated.ip {
            self.release_logged(&self.ips, ip).await;
        }
        for port in &allocated.node_ports {
            self.release_logged(&self.ports, *port).await;
        }
    }

    /// Gives back what a deleted Service held.
    pub async fn release(&self, svc: &Value) {
        let ip = svc
            .pointer("/spec/clusterIP")
            .and_then(Value::as_str)
            .unwrap_or("");
        if let Some(offset) = ip
            .parse::<Ipv4Addr>()
            .ok()
            .and_then(|ip| self.cidr.offset_of(ip))
        {
            self.release_logged(&self.ips, offset).await;
        }
        for node_port in Self::node_ports(svc) {
            if let Ok(offset) = u64::try_from(node_port - i64::from(self.node_port_base)) {
                self.release_logged(&self.ports, offset).await;
            }
        }
    }

    /// Node ports `old` held that `new` no longer does.
    pub async fn release_dropped(&self, new: &Value, old: &Value) {
        let kept = Self::node_ports(new);
        for np in Self::node_ports(old)
            .into_iter()
            .filter(|np| !kept.contains(np))
        {
            if let Ok(offset) = u64::try_from(np - i64::from(self.node_port_base)) {
                self.release_logged(&self.ports, offset).await;
            }
        }
    }

    fn node_ports(svc: &Value) -> Vec<i64> {
        svc.pointer("/spec/ports")
            .and_then(Value::as_array)
            .map(|ports| {
                ports
                    .iter()
                    .filter_map(|p| p["nodePort"].as_i64())
                    .filter(|np| *np != 0)
                    .collect()
            })
            .unwrap_or_default()
    }

    async fn release_logged(&self, allocator: &RangeAllocator, offset: u64) {
        if let Err(e) = allocator.release(offset).await {
            // A leaked value only shrinks the range; the service write stands.
            tracing::warn!(range = allocator.range(), offset, error = %e, "release failed");
        }
    }
}
