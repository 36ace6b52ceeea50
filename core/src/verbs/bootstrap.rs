//! What every cluster starts with: the system namespaces, the RBAC policy and the `kubernetes` Service.

use super::api_core::*;

/// Namespaces that exist on every cluster, as kube-apiserver's bootstrap creates them.
pub const SYSTEM_NAMESPACES: &[&str] =
    &["default", "kube-system", "kube-public", "kube-node-lease"];

impl ApiCore {
    /// Creates the `kubernetes` Service in `default` (the range's first
    /// address) and lists this server in its Endpoints, as upstream's
    /// bootstrap controller does; each replica adds its own address.
    pub async fn bootstrap_kubernetes_service(
        &self,
        address: std::net::IpAddr,
        port: u16,
    ) -> ApiResult<()> {
        let services = self.resolve("", "v1", "services")?;
        let service = json!({
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "kubernetes", "namespace": "default",
                         "labels": {"component": "apiserver", "provider": "kubernetes"}},
            "spec": {"type": "ClusterIP", "clusterIP": self.service_addresses.first_address().to_string(),
                     "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": port}]},
        });
        let created = self
            .reconcile_system_object(&services, "default", "kubernetes", |current| {
                current.is_none().then(|| service.clone())
            })
            .await;
        if let Err(e) = created {
            // Another replica may have created it (and taken its address) meanwhile.
            let now = self
                .get_if_exists(&services, Some("default"), "kubernetes")
                .await?;
            if now.is_none() {
                return Err(e);
            }
        }
        let endpoints = self.resolve("", "v1", "endpoints")?;
        let entry = json!({"ip": address.to_string()});
        let subset_port = json!({"name": "https", "port": port, "protocol": "TCP"});
        self.reconcile_system_object(&endpoints, "default", "kubernetes", |current| {
            let mut addresses: Vec<Value> = current
                .and_then(|c| c.pointer("/subsets/0/addresses"))
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let ports_match =
                current.and_then(|c| c.pointer("/subsets/0/ports/0")) == Some(&subset_port);
            if addresses.contains(&entry) && ports_match {
                return None;
            }
            addresses.retain(|a| a != &entry);
            addresses.push(entry.clone());
            let mut desired = current.cloned().unwrap_or_else(|| {
                json!({
                    "apiVersion": "v1", "kind": "Endpoints",
                    "metadata": {"name": "kubernetes", "namespace": "default",
                                 "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
                })
            });
            desired["subsets"] = json!([{"addresses": addresses, "ports": [subset_port.clone()]}]);
            Some(desired)
        })
        .await?;
        // The same address in the EndpointSlice clients of discovery.k8s.io read.
        let slices = self.resolve("discovery.k8s.io", "v1", "endpointslices")?;
        let address_type = if address.is_ipv4() { "IPv4" } else { "IPv6" };
        let endpoint = json!({"addresses": [address.to_string()], "conditions": {"ready": true}});
        let slice_port = json!({"name": "https", "port": port, "protocol": "TCP"});
        self.reconcile_system_object(&slices, "default", "kubernetes", |current| {
            let mut endpoints: Vec<Value> = current
                .and_then(|c| c.get("endpoints"))
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let ports_match = current.and_then(|c| c.pointer("/ports/0")) == Some(&slice_port);
            if endpoints.contains(&endpoint) && ports_match {
                return None;
            }
            endpoints.retain(|e| e["addresses"] != endpoint["addresses"]);
            endpoints.push(endpoint.clone());
            let mut desired = current.cloned().unwrap_or_else(|| {
                json!({
                    "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                    "metadata": {"name": "kubernetes", "namespace": "default",
                                 "labels": {"kubernetes.io/service-name": "kubernetes"}},
                    "addressType": address_type,
                })
            });
            desired["endpoints"] = json!(endpoints);
            desired["ports"] = json!([slice_port.clone()]);
            Some(desired)
        })
        .await
    }

    /// Creates or updates an object the server itself maintains: `desired`
    /// gets the current object (None when absent) and returns what it should
    /// be, or None when it is right already. Retries on conflicts with other
    /// replicas doing the same.
    pub(super) async fn reconcile_system_object(
        &self,
        def: &ResourceDef,
        namespace: &str,
        name: &str,
        desired: impl Fn(Option<&Value>) -> Option<Value>,
    ) -> ApiResult<()> {
        let system = UserInfo::system();
        let opts = WriteOptions {
            field_manager: SYSTEM_FIELD_MANAGER.to_string(),
            ..Default::default()
        };
        for _ in 0..MAX_CONFLICT_RETRIES {
            let current = self.get_if_exists(def, Some(namespace), name).await?;
            let current = current.map(|c| served(def, c)).transpose()?;
            let Some(wanted) = desired(current.as_ref()) else {
                return Ok(());
            };
            let written = match current {
                Some(_) => {
                    self.update(
                        &system,
                        def,
                        Some(namespace),
                        name,
                        wanted,
                        &opts,
                        View::Main,
                    )
                    .await
                }
                None => {
                    self.create(&system, def, Some(namespace), wanted, &opts)
                        .await
                }
            };
            match written {
                Ok(_) => return Ok(()),
                Err(e)
                    if matches!(
                        e.reason,
                        crate::error::StatusReason::Conflict
                            | crate::error::StatusReason::AlreadyExists
                    ) =>
                {
                    continue
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Creates the namespaces and the RBAC policy every cluster has; safe to
    /// run on every replica.
    pub async fn bootstrap(&self) -> ApiResult<()> {
        let def = self.resolve("", "v1", "namespaces")?;
        let created = SYSTEM_NAMESPACES.iter().map(|ns| {
            let namespace =
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
            self.create_if_missing(&def, namespace)
        });
        futures::future::try_join_all(created).await?;
        self.bootstrap_priority_classes().await?;
        self.bootstrap_rbac().await
    }

    /// The two system PriorityClasses kube-apiserver creates at start
    /// (`scheduling/bootstrap-system-priority-classes`); existing ones are
    /// left as they are.
    async fn bootstrap_priority_classes(&self) -> ApiResult<()> {
        let def = self.resolve("scheduling.k8s.io", "v1", "priorityclasses")?;
        for (name, value, description) in [
            (
                "system-node-critical",
                2_000_001_000,
                "Used for system critical pods that must not be moved from their current node.",
            ),
            (
                "system-cluster-critical",
                2_000_000_000,
                "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
            ),
        ] {
            let class = json!({
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": name},
                "value": value,
                "description": description,
                "preemptionPolicy": "PreemptLowerPriority",
            });
            self.create_if_missing(&def, class).await?;
        }
        Ok(())
    }

    /// Stores a cluster-scoped object the server itself defines (bootstrap)
    /// unless one of its name exists; another replica creating it first is
    /// fine.
    pub(crate) async fn create_if_missing(
        &self,
        def: &ResourceDef,
        mut object: Value,
    ) -> ApiResult<()> {
        let namespace = object::namespace(&object);
        let namespace = (!namespace.is_empty()).then_some(namespace);
        let key = def.key(&self.prefix, namespace, object::name(&object));
        if self
            .storage
            .get(&key)
            .await
            .map_err(ApiError::internal)?
            .is_some()
        {
            return Ok(());
        }
        self.fill_new_metadata(def, &mut object);
        def.kind_impl.prepare_for_create(&mut object);
        match self.storage.create(&key, encode(&object)?).await {
            Ok(_) | Err(StorageError::AlreadyExists(_)) => Ok(()),
            Err(e) => Err(ApiError::internal(e)),
        }
    }
}
