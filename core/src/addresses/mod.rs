//! Service addresses: ClusterIPs from `--service-cluster-ip-range` and
//! NodePorts from `--service-node-port-range`, allocated on create, kept on
//! update, released on delete — through storage-backed range allocators, so
//! replicas never double-allocate. A repair pass (upstream's ClusterIP and
//! NodePort repair controllers) brings the ranges back in line with the
//! Services that exist: what a Service uses is marked, and what none uses
//! is freed once it has been found unused several passes in a row.

pub mod allocator;

use std::collections::{BTreeSet, HashMap};
use std::future::Future;
use std::net::Ipv4Addr;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::error::{ApiError, ApiResult, FieldError};
use crate::storage::Storage;
use allocator::{AllocationError, Ipv4Cidr, RangeAllocator};

pub const DEFAULT_CLUSTER_IP_RANGE: &str = "10.0.0.0/24";
pub const DEFAULT_NODE_PORT_RANGE: (u16, u16) = (30000, 32767);

/// Passes in a row that must find a value allocated but used by no Service
/// before it is freed (upstream's numRepairsBeforeLeakCleanup): a create
/// between allocating and storing its Service looks leaked to one pass.
pub const REPAIRS_BEFORE_LEAK_CLEANUP: u32 = 3;

/// Values that repair passes found allocated but unused, with how many
/// passes in a row did. Each replica keeps its own; storage's
/// compare-and-swap decides what is freed.
#[derive(Debug, Default)]
pub struct LeakCounts {
    ips: HashMap<u64, u32>,
    ports: HashMap<u64, u32>,
}

/// What one repair pass changed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Repaired {
    /// Values Services use that the ranges did not have marked.
    pub marked: Vec<String>,
    /// Values no Service used for REPAIRS_BEFORE_LEAK_CLEANUP passes.
    pub freed: Vec<String>,
    /// A range changed while the pass ran; it is left for the next one.
    pub conflicted: bool,
}

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

/// upstream's refusal of a requested ClusterIP it could not allocate.
pub fn cluster_ip_refused(name: &str, requested: &str, why: &str) -> ApiError {
    invalid(
        name,
        FieldError {
            reason: "FieldValueInvalid",
            message: format!("Invalid value: []string{{\"{requested}\"}}: {why}"),
            field: "spec.clusterIPs".into(),
        },
    )
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

    /// `--service-cluster-ip-range`, as the default ServiceCIDR holds it.
    pub fn cluster_ip_range(&self) -> String {
        self.cidr.to_string()
    }

    /// The ClusterIP a create allocated, if it allocated one.
    pub fn allocated_cluster_ip(&self, allocated: &Allocated) -> Option<Ipv4Addr> {
        allocated.ip.map(|offset| self.cidr.address(offset))
    }

    /// The Service's ClusterIP when it is one from the range.
    pub fn cluster_ip_in_range(&self, svc: &Value) -> Option<Ipv4Addr> {
        self.cluster_ip_offset(svc)
            .map(|offset| self.cidr.address(offset))
    }

    /// Whether `ip` is an address of the range.
    pub fn in_range(&self, ip: Ipv4Addr) -> bool {
        self.cidr.offset_of(ip).is_some()
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
                        return Err(cluster_ip_refused(name, &requested, &message));
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
        if let Some(offset) = self.cluster_ip_offset(svc) {
            self.release_logged(&self.ips, offset).await;
        }
        for offset in self.node_port_offsets(Self::node_ports(svc)) {
            self.release_logged(&self.ports, offset).await;
        }
    }

    /// Node ports `old` held that `new` no longer does.
    pub async fn release_dropped(&self, new: &Value, old: &Value) {
        let kept = Self::node_ports(new);
        let dropped = Self::node_ports(old)
            .into_iter()
            .filter(|np| !kept.contains(np));
        for offset in self.node_port_offsets(dropped) {
            self.release_logged(&self.ports, offset).await;
        }
    }

    /// The offset in the range of the Service's ClusterIP, when it has one
    /// from the range.
    fn cluster_ip_offset(&self, svc: &Value) -> Option<u64> {
        svc.pointer("/spec/clusterIP")
            .and_then(Value::as_str)
            .and_then(|ip| ip.parse::<Ipv4Addr>().ok())
            .and_then(|ip| self.cidr.offset_of(ip))
    }

    /// The offsets in the range of `node_ports` (those below it have none).
    fn node_port_offsets(&self, node_ports: impl IntoIterator<Item = i64>) -> Vec<u64> {
        node_ports
            .into_iter()
            .filter_map(|np| u64::try_from(np - i64::from(self.node_port_base)).ok())
            .collect()
    }

    /// One repair pass over both ranges. The ranges are read before
    /// `services` lists the Services, so a value allocated after that read
    /// makes the write conflict instead of being freed.
    pub async fn repair<F>(&self, services: F, leaks: &mut LeakCounts) -> ApiResult<Repaired>
    where
        F: Future<Output = ApiResult<Vec<Arc<Value>>>>,
    {
        let (ip_revision, mut ip_bitmap) = self.ips.snapshot().await?;
        let (port_revision, mut port_bitmap) = self.ports.snapshot().await?;
        let services = services.await?;
        let mut used_ips = BTreeSet::new();
        let mut used_ports = BTreeSet::new();
        for svc in &services {
            used_ips.extend(self.cluster_ip_offset(svc));
            used_ports.extend(self.node_port_offsets(Self::node_ports(svc)));
        }
        let mut repaired = Repaired::default();
        let (marked, freed) = reconcile(&mut ip_bitmap, &used_ips, &mut leaks.ips);
        if !(marked.is_empty() && freed.is_empty()) {
            let ip = |offset: &u64| self.cidr.address(*offset).to_string();
            repaired.marked.extend(marked.iter().map(ip));
            repaired.freed.extend(freed.iter().map(ip));
            repaired.conflicted |= !self.ips.replace(ip_revision, &ip_bitmap).await?;
        }
        let (marked, freed) = reconcile(&mut port_bitmap, &used_ports, &mut leaks.ports);
        if !(marked.is_empty() && freed.is_empty()) {
            let port = |offset: &u64| (u64::from(self.node_port_base) + offset).to_string();
            repaired.marked.extend(marked.iter().map(port));
            repaired.freed.extend(freed.iter().map(port));
            repaired.conflicted |= !self.ports.replace(port_revision, &port_bitmap).await?;
        }
        Ok(repaired)
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

/// Marks in `bitmap` what is `used`, and frees what is set but unused once
/// `leaks` has counted it unused REPAIRS_BEFORE_LEAK_CLEANUP passes in a
/// row; the offsets marked and freed.
fn reconcile(
    bitmap: &mut Vec<u8>,
    used: &BTreeSet<u64>,
    leaks: &mut HashMap<u64, u32>,
) -> (Vec<u64>, Vec<u64>) {
    let marked: Vec<u64> = used
        .iter()
        .copied()
        .filter(|offset| !allocator::is_set(bitmap, *offset))
        .collect();
    let unused: Vec<u64> = bitmap
        .iter()
        .enumerate()
        .filter(|(_, byte)| **byte != 0)
        .flat_map(|(index, _)| (index as u64 * 8)..(index as u64 * 8 + 8))
        .filter(|offset| allocator::is_set(bitmap, *offset) && !used.contains(offset))
        .collect();
    for offset in &marked {
        allocator::set(bitmap, *offset, true);
    }
    let mut still_unused = HashMap::new();
    let mut freed = Vec::new();
    for offset in unused {
        let passes = leaks.get(&offset).copied().unwrap_or(0) + 1;
        if passes >= REPAIRS_BEFORE_LEAK_CLEANUP {
            allocator::set(bitmap, offset, false);
            freed.push(offset);
        } else {
            still_unused.insert(offset, passes);
        }
    }
    *leaks = still_unused;
    (marked, freed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::embedded::EmbeddedStore;

    fn addresses() -> (tempfile::TempDir, ServiceAddresses) {
        let dir = tempfile::tempdir().expect("temp dir");
        let store: Arc<dyn Storage> = Arc::new(EmbeddedStore::open(dir.path()).expect("store"));
        let cidr: Ipv4Cidr = "10.0.0.0/24".parse().expect("cidr");
        let addresses = ServiceAddresses::new(store, "/registry", cidr, (30000, 30099));
        (dir, addresses)
    }

    async fn allocate_ip(addresses: &ServiceAddresses, offset: u64) {
        let allocated = addresses.ips.allocate(Some(offset), "IP").await;
        assert_eq!(allocated.expect("storage"), Ok(offset));
    }

    fn service(ip: &str, node_port: Option<i64>) -> Arc<Value> {
        let mut ports = json!([{"port": 80}]);
        if let Some(node_port) = node_port {
            ports[0]["nodePort"] = json!(node_port);
        }
        Arc::new(json!({"spec": {"clusterIP": ip, "ports": ports}}))
    }

    /// A value a Service uses is marked at once; one that no Service uses is
    /// freed only on the third pass in a row that finds it unused, so a
    /// create caught between allocating and storing its Service keeps it.
    #[tokio::test]
    async fn repair_marks_what_services_use_and_frees_lasting_leaks() {
        let (_dir, addresses) = addresses();
        // A leak: allocated, but the Service was never stored.
        allocate_ip(&addresses, 7).await;
        assert_eq!(
            addresses
                .ports
                .allocate(Some(5), "port")
                .await
                .expect("port"),
            Ok(5)
        );
        // In use: allocated and stored.
        assert_eq!(
            addresses.ips.allocate(Some(1), "IP").await.expect("ip"),
            Ok(1)
        );
        // In use, but never marked (written by something that skipped the allocator).
        let services = vec![
            service("10.0.0.1", None),
            service("10.0.0.9", Some(30042)),
            service("None", None),
        ];
        let listed = || async { Ok(services.clone()) };
        let mut leaks = LeakCounts::default();

        let first = addresses
            .repair(listed(), &mut leaks)
            .await
            .expect("repair");
        assert_eq!(first.marked, ["10.0.0.9", "30042"]);
        assert!(first.freed.is_empty() && !first.conflicted, "{first:?}");
        let second = addresses
            .repair(listed(), &mut leaks)
            .await
            .expect("repair");
        assert_eq!(second, Repaired::default());
        let third = addresses
            .repair(listed(), &mut leaks)
            .await
            .expect("repair");
        assert_eq!(third.freed, ["10.0.0.7", "30005"]);
        assert!(third.marked.is_empty() && !third.conflicted, "{third:?}");

        let (_, ips) = addresses.ips.snapshot().await.expect("ips");
        let (_, ports) = addresses.ports.snapshot().await.expect("ports");
        let set = |bitmap: &[u8], offsets: &[u64]| {
            offsets
                .iter()
                .map(|o| allocator::is_set(bitmap, *o))
                .collect::<Vec<_>>()
        };
        assert_eq!(set(&ips, &[1, 7, 9]), [true, false, true]);
        assert_eq!(set(&ports, &[5, 42]), [false, true]);
        // Freed values can be allocated again.
        allocate_ip(&addresses, 7).await;
    }

    /// A value that comes back into use before its third pass starts its
    /// count again.
    #[tokio::test]
    async fn a_value_used_again_is_no_longer_counted_as_leaked() {
        let (_dir, addresses) = addresses();
        allocate_ip(&addresses, 7).await;
        let mut leaks = LeakCounts::default();
        let none = || async { Ok(Vec::new()) };
        let using = || async { Ok(vec![service("10.0.0.7", None)]) };
        for listed in [
            none().await,
            none().await,
            using().await,
            none().await,
            none().await,
        ] {
            let repaired = addresses
                .repair(async { listed }, &mut leaks)
                .await
                .expect("repair");
            assert!(repaired.freed.is_empty(), "{repaired:?}");
        }
        let repaired = addresses.repair(none(), &mut leaks).await.expect("repair");
        assert_eq!(repaired.freed, ["10.0.0.7"]);
    }

    /// An allocation made while a pass runs (after it read the ranges)
    /// makes its write conflict: nothing is freed from under it.
    #[tokio::test]
    async fn a_pass_that_races_an_allocation_writes_nothing() {
        let (_dir, addresses) = addresses();
        allocate_ip(&addresses, 7).await;
        let mut leaks = LeakCounts::default();
        for _ in 1..REPAIRS_BEFORE_LEAK_CLEANUP {
            addresses
                .repair(async { Ok(Vec::new()) }, &mut leaks)
                .await
                .expect("repair");
        }
        let racing = async {
            // A create allocates between the pass's read and its write.
            assert_eq!(addresses.ips.allocate(Some(8), "IP").await?, Ok(8));
            Ok(Vec::new())
        };
        let repaired = addresses.repair(racing, &mut leaks).await.expect("repair");
        assert!(repaired.conflicted, "{repaired:?}");
        let (_, ips) = addresses.ips.snapshot().await.expect("ips");
        assert!(allocator::is_set(&ips, 7) && allocator::is_set(&ips, 8));
    }
}
