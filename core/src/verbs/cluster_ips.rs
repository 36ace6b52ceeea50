//! Service ClusterIPs as IPAddress objects, as kube-apiserver 1.33 keeps
//! them: the range's bitmap is allocated first (upstream still writes it
//! in 1.33), then an IPAddress named by the address is created for the
//! Service. That create is the claim: an address someone else's IPAddress
//! already names is taken, whatever the bitmap says. Releasing deletes it.

use std::net::Ipv4Addr;

use serde_json::{json, Value};

use crate::addresses::{cluster_ip_refused, Allocated};
use crate::auth::UserInfo;
use crate::error::{ApiError, StatusReason};
use crate::kinds::networking::ip_address::{ALLOCATOR, FAMILY_LABEL, MANAGED_BY_LABEL};
use crate::verbs::{ApiCore, DeleteOptions, WriteOptions};

/// Fresh addresses tried when the chosen ones turn out to be claimed.
const ATTEMPTS: usize = 16;
/// The field manager of the allocator's writes (the loopback client's).
const FIELD_MANAGER: &str = "kube-apiserver";

/// The IPAddress the allocator writes for a Service's address.
pub(crate) fn ip_address_for(ip: Ipv4Addr, namespace: &str, service: &str) -> Value {
    json!({
        "apiVersion": "networking.k8s.io/v1",
        "kind": "IPAddress",
        "metadata": {
            "name": ip.to_string(),
            "labels": {FAMILY_LABEL: "IPv4", MANAGED_BY_LABEL: ALLOCATOR},
        },
        "spec": {"parentRef": {"resource": "services", "namespace": namespace, "name": service}},
    })
}

impl ApiCore {
    /// Allocates a new Service's ClusterIP and NodePorts and claims the
    /// address with its IPAddress.
    pub(crate) async fn allocate_service_addresses(
        &self,
        namespace: &str,
        svc: &mut Value,
        name: &str,
    ) -> crate::ApiResult<Allocated> {
        let requested = svc
            .pointer("/spec/clusterIP")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let unallocated = svc.clone();
        for _ in 0..ATTEMPTS {
            let allocated = self.service_addresses.allocate(svc, name).await?;
            let Some(ip) = self.service_addresses.allocated_cluster_ip(&allocated) else {
                return Ok(allocated);
            };
            match self.claim_ip_address(ip, namespace, name).await {
                Ok(()) => return Ok(allocated),
                Err(e) if e.reason == StatusReason::AlreadyExists => {
                    self.service_addresses.release_allocated(&allocated).await;
                    if !requested.is_empty() {
                        return Err(cluster_ip_refused(
                            name,
                            &requested,
                            &format!("failed to allocate IP {requested}: provided IP is already allocated"),
                        ));
                    }
                    // Another address, from the Service as it came.
                    *svc = unallocated.clone();
                }
                Err(e) => {
                    self.service_addresses.release_allocated(&allocated).await;
                    return Err(e);
                }
            }
        }
        Err(ApiError::internal(
            "failed to allocate a serviceIP: range is full",
        ))
    }

    async fn claim_ip_address(
        &self,
        ip: Ipv4Addr,
        namespace: &str,
        service: &str,
    ) -> crate::ApiResult<()> {
        let def = self.resolve("networking.k8s.io", "v1", "ipaddresses")?;
        let opts = WriteOptions {
            field_manager: FIELD_MANAGER.to_string(),
            ..Default::default()
        };
        // A create inside a create: boxed, as async recursion must be.
        Box::pin(self.create(
            &UserInfo::system(),
            &def,
            None,
            ip_address_for(ip, namespace, service),
            &opts,
        ))
        .await
        .map(drop)
    }

    /// Gives back what a create allocated but did not store.
    pub(crate) async fn release_allocated_service_addresses(&self, allocated: &Allocated) {
        self.service_addresses.release_allocated(allocated).await;
        if let Some(ip) = self.service_addresses.allocated_cluster_ip(allocated) {
            self.release_ip_address(ip).await;
        }
    }

    /// Gives back what a deleted Service held.
    pub(crate) async fn release_service_addresses(&self, svc: &Value) {
        self.service_addresses.release(svc).await;
        if let Some(ip) = self.service_addresses.cluster_ip_in_range(svc) {
            self.release_ip_address(ip).await;
        }
    }

    /// Deletes an address's IPAddress; a failure is left to the repair
    /// pass, as upstream only logs it.
    pub(crate) async fn release_ip_address(&self, ip: Ipv4Addr) {
        let Ok(def) = self.resolve("networking.k8s.io", "v1", "ipaddresses") else {
            return;
        };
        let deleted = Box::pin(self.delete(
            &UserInfo::system(),
            &def,
            None,
            &ip.to_string(),
            &DeleteOptions::default(),
        ))
        .await;
        if let Err(e) = deleted {
            if e.reason != StatusReason::NotFound {
                tracing::warn!(ip = %ip, error = %e, "error releasing ip");
            }
        }
    }
}
