//! NodeRestriction (off by default; CIS asks for it): a kubelet — a user
//! `system:node:<name>` in the group `system:nodes` — may write only what
//! belongs to its node: its own Node object (without the labels reserved
//! to administrators, or new taints), mirror pods bound to it, the status
//! and evictions of its pods, its lease and CSINode, tokens for its pods,
//! and certificate requests in its own name.

use serde_json::Value;

use super::super::attributes::{Attributes, Operation};
use super::pod_references;
use super::refusal::forbidden;
use crate::auth::UserInfo;
use crate::error::{ApiResult, StatusReason};
use crate::verbs::ApiCore;

const NODE_USER_PREFIX: &str = "system:node:";
const NODES_GROUP: &str = "system:nodes";
const MIRROR_ANNOTATION: &str = "kubernetes.io/config.mirror";
const NODE_LEASE_NAMESPACE: &str = "kube-node-lease";
const KUBELET_SIGNERS: [&str; 2] = [
    "kubernetes.io/kubelet-serving",
    "kubernetes.io/kube-apiserver-client-kubelet",
];

/// Labels a kubelet sets on its own Node.
const KUBELET_LABELS: [&str; 11] = [
    "kubernetes.io/hostname",
    "kubernetes.io/os",
    "kubernetes.io/arch",
    "beta.kubernetes.io/os",
    "beta.kubernetes.io/arch",
    "beta.kubernetes.io/instance-type",
    "node.kubernetes.io/instance-type",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
];

/// Whether a pod spec references one kind of object.
type ReferenceCheck = fn(&Value) -> bool;

/// The node a user is, as upstream's NodeIdentifier reads it: None for
/// anyone else (a `system:node:` name without the group included).
fn node_of(user: &UserInfo) -> Option<&str> {
    let name = user.name.strip_prefix(NODE_USER_PREFIX)?;
    user.groups.iter().any(|g| g == NODES_GROUP).then_some(name)
}

fn text<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn in_domain(prefix: &str, domain: &str) -> bool {
    prefix == domain || prefix.ends_with(&format!(".{domain}"))
}

/// A label only administrators may set on a Node: under
/// node-restriction.kubernetes.io, or a Kubernetes label a kubelet does
/// not set.
fn forbidden_node_label(key: &str) -> bool {
    let Some((prefix, _)) = key.split_once('/') else {
        return false;
    };
    if in_domain(prefix, "node-restriction.kubernetes.io") {
        return true;
    }
    let kubernetes = in_domain(prefix, "kubernetes.io") || in_domain(prefix, "k8s.io");
    let kubelet = KUBELET_LABELS.contains(&key)
        || in_domain(prefix, "kubelet.kubernetes.io")
        || in_domain(prefix, "node.kubernetes.io");
    kubernetes && !kubelet
}

fn labels(object: Option<&Value>) -> serde_json::Map<String, Value> {
    object
        .and_then(|o| o.pointer("/metadata/labels"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

impl ApiCore {
    pub(super) async fn admit_node_restriction(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
    ) -> ApiResult<()> {
        let Some(node) = node_of(attributes.user) else {
            return Ok(());
        };
        if node.is_empty() {
            return Err(forbidden(
                attributes,
                object,
                &format!(
                    "could not determine node from user {:?}",
                    attributes.user.name
                ),
            ));
        }
        let def = attributes.def;
        let refuse = |why: String| Err(forbidden(attributes, object, &why));
        match (def.group.as_str(), def.resource.as_str()) {
            ("", "pods") => self.node_writes_pod(attributes, node, object).await,
            ("", "nodes") => node_writes_node(attributes, node, object),
            ("", "persistentvolumeclaims") => node_writes_claim(attributes, node, object),
            ("", "serviceaccounts") if attributes.subresource == "token" => {
                self.node_requests_token(attributes, node, object).await
            }
            ("coordination.k8s.io", "leases") => {
                let name = named(attributes, object);
                if attributes.namespace != Some(NODE_LEASE_NAMESPACE) {
                    refuse(format!(
                        "can only access leases in the {NODE_LEASE_NAMESPACE:?} system namespace"
                    ))
                } else if name != node {
                    refuse(
                        "can only access node lease with the same name as the requesting node"
                            .into(),
                    )
                } else {
                    Ok(())
                }
            }
            ("storage.k8s.io", "csinodes") if named(attributes, object) != node => {
                refuse("can only access CSINode with the same name as the requesting node".into())
            }
            ("resource.k8s.io", "resourceslices") => {
                let slice = match attributes.operation {
                    Operation::Create => object,
                    Operation::Delete => attributes.old,
                    Operation::Update => return Ok(()),
                };
                let verb = if attributes.operation == Operation::Create {
                    "create"
                } else {
                    "delete"
                };
                if slice.is_some_and(|s| text(s, "/spec/nodeName") != node) {
                    refuse(format!(
                        "can only {verb} ResourceSlice with the same NodeName as the requesting node"
                    ))
                } else {
                    Ok(())
                }
            }
            ("certificates.k8s.io", "certificatesigningrequests")
                if attributes.operation == Operation::Create
                    && attributes.subresource.is_empty() =>
            {
                let Some(csr) = object else { return Ok(()) };
                if !KUBELET_SIGNERS.contains(&text(csr, "/spec/signerName")) {
                    return Ok(());
                }
                match super::certificates::subject_common_name(csr) {
                    Err(why) => refuse(format!("unable to parse csr: {why}")),
                    Ok(name) if name == format!("{NODE_USER_PREFIX}{node}") => Ok(()),
                    Ok(_) => refuse(format!(
                        "can only create a node CSR with CN={NODE_USER_PREFIX}{node}"
                    )),
                }
            }
            _ => Ok(()),
        }
    }

    /// The pod as stored, for checks on a pod the request names.
    async fn stored_pod(&self, attributes: &Attributes<'_>, name: &str) -> ApiResult<Value> {
        let pods = self.resolve("", "v1", "pods")?;
        self.get(&UserInfo::system(), &pods, attributes.namespace, name, "")
            .await
            .map_err(|e| match e.reason {
                StatusReason::NotFound => e,
                _ => forbidden(attributes, None, &e.message),
            })
    }

    async fn node_writes_pod(
        &self,
        attributes: &Attributes<'_>,
        node: &str,
        object: Option<&Value>,
    ) -> ApiResult<()> {
        let refuse = |why: String| Err(forbidden(attributes, object, &why));
        let operation = attributes.operation.as_str();
        match (attributes.subresource, attributes.operation) {
            ("", Operation::Create) => match object {
                Some(pod) => self.node_creates_pod(attributes, node, pod).await,
                None => Ok(()),
            },
            ("", Operation::Delete) => {
                let pod = self.stored_pod(attributes, attributes.name).await?;
                if text(&pod, "/spec/nodeName") != node {
                    return refuse(format!(
                        "node {node:?} can only delete pods with spec.nodeName set to itself"
                    ));
                }
                Ok(())
            }
            ("", _) => refuse(format!(
                "unexpected operation {operation:?}, node {node:?} can only create and delete mirror pods"
            )),
            ("status", Operation::Update) => {
                let old = attributes.old.unwrap_or(&Value::Null);
                if text(old, "/spec/nodeName") != node {
                    return refuse(format!(
                        "node {node:?} can only update pod status for pods with spec.nodeName set to itself"
                    ));
                }
                if labels(object) != labels(Some(old)) {
                    return refuse(format!(
                        "node {node:?} cannot update labels through pod status"
                    ));
                }
                let claims = |pod: Option<&Value>| {
                    crate::object::items_at(pod.unwrap_or(&Value::Null), "/status/resourceClaimStatuses")
                        .iter()
                        .map(|c| (text(c, "/name").to_string(), text(c, "/resourceClaimName").to_string()))
                        .collect::<Vec<_>>()
                };
                if claims(object) != claims(Some(old)) {
                    return refuse(format!(
                        "node {node:?} cannot update resource claim statues"
                    ));
                }
                Ok(())
            }
            ("status", _) => refuse(format!("unexpected operation {operation:?}")),
            ("eviction", Operation::Create) => {
                let name = match attributes.name {
                    "" => object.map_or("", |o| text(o, "/metadata/name")),
                    name => name,
                };
                if name.is_empty() {
                    return refuse("could not determine pod from request data".into());
                }
                let pod = self.stored_pod(attributes, name).await?;
                if text(&pod, "/spec/nodeName") != node {
                    return refuse(format!(
                        "node {node} can only evict pods with spec.nodeName set to itself"
                    ));
                }
                Ok(())
            }
            ("eviction", _) => refuse(format!("unexpected operation {operation}")),
            (other, _) => refuse(format!(
                "unexpected pod subresource {other:?}, only 'status' and 'eviction' are allowed"
            )),
        }
    }

    /// A node creates only mirror pods of its own, owned by its Node and
    /// referencing nothing it could not read.
    async fn node_creates_pod(
        &self,
        attributes: &Attributes<'_>,
        node: &str,
        pod: &Value,
    ) -> ApiResult<()> {
        let refuse = |why: String| Err(forbidden(attributes, Some(pod), &why));
        let mirror = pod
            .pointer("/metadata/annotations")
            .and_then(Value::as_object)
            .is_some_and(|a| a.contains_key(MIRROR_ANNOTATION));
        if !mirror {
            return refuse(format!(
                "pod does not have {MIRROR_ANNOTATION:?} annotation, node {node:?} can only create mirror pods"
            ));
        }
        if text(pod, "/spec/nodeName") != node {
            return refuse(format!(
                "node {node:?} can only create pods with spec.nodeName set to itself"
            ));
        }
        let owners = crate::object::items_at(pod, "/metadata/ownerReferences");
        if owners.len() > 1 {
            return refuse(format!(
                "node {node:?} can only create pods with a single owner reference set to itself"
            ));
        }
        let Some(owner) = owners.first().filter(|o| {
            text(o, "/apiVersion") == "v1" && text(o, "/kind") == "Node" && text(o, "/name") == node
        }) else {
            return refuse(format!(
                "node {node:?} can only create pods with an owner reference set to itself"
            ));
        };
        if owner.get("controller") != Some(&Value::Bool(true)) {
            return refuse(format!(
                "node {node:?} can only create pods with a controller owner reference set to itself"
            ));
        }
        if owner.get("blockOwnerDeletion") == Some(&Value::Bool(true)) {
            return refuse(format!(
                "node {node:?} must not set blockOwnerDeletion on an owner reference"
            ));
        }
        let nodes = self.resolve("", "v1", "nodes")?;
        let stored = match self.get(&UserInfo::system(), &nodes, None, node, "").await {
            Ok(stored) => stored,
            Err(e) if e.reason == StatusReason::NotFound => return Err(e),
            Err(e) => {
                return refuse(format!(
                    "error looking up node {node} to verify uid: {}",
                    e.message
                ))
            }
        };
        let (owner_uid, node_uid) = (text(owner, "/uid"), text(&stored, "/metadata/uid"));
        if owner_uid != node_uid {
            return refuse(format!(
                "node {node} UID mismatch: expected {owner_uid} got {node_uid}"
            ));
        }
        let spec = pod.get("spec").unwrap_or(&Value::Null);
        if !text(spec, "/serviceAccountName").is_empty() {
            return refuse(format!(
                "node {node:?} can not create pods that reference a service account"
            ));
        }
        let references: [(&str, ReferenceCheck); 4] = [
            ("secrets", pod_references::references_secrets),
            ("configmaps", pod_references::references_config_maps),
            (
                "clustertrustbundles",
                pod_references::references_cluster_trust_bundles,
            ),
            ("persistentvolumeclaims", pod_references::references_claims),
        ];
        for (what, references) in references {
            if references(spec) {
                return refuse(format!(
                    "node {node:?} can not create pods that reference {what}"
                ));
            }
        }
        Ok(())
    }

    /// A token for one of the node's own pods, bound to it.
    async fn node_requests_token(
        &self,
        attributes: &Attributes<'_>,
        node: &str,
        request: Option<&Value>,
    ) -> ApiResult<()> {
        if attributes.operation != Operation::Create {
            return Ok(());
        }
        let refuse = |why: String| Err(forbidden(attributes, request, &why));
        let bound = request
            .and_then(|r| r.pointer("/spec/boundObjectRef"))
            .filter(|b| !b.is_null());
        let Some(bound) = bound.filter(|b| {
            text(b, "/apiVersion") == "v1"
                && text(b, "/kind") == "Pod"
                && !text(b, "/name").is_empty()
        }) else {
            return refuse("node requested token not bound to a pod".into());
        };
        let uid = text(bound, "/uid");
        if uid.is_empty() {
            return refuse("node requested token with a pod binding without a uid".into());
        }
        let pod = self.stored_pod(attributes, text(bound, "/name")).await?;
        if text(&pod, "/metadata/uid") != uid {
            return refuse(format!(
                "the UID in the bound object reference ({uid}) does not match the UID in record. The object might have been deleted and then recreated"
            ));
        }
        if text(&pod, "/spec/nodeName") != node {
            return refuse(
                "node requested token bound to a pod scheduled on a different node".into(),
            );
        }
        Ok(())
    }
}

/// The object's name: the request's, or on a create the object's own.
fn named<'a>(attributes: &'a Attributes<'a>, object: Option<&'a Value>) -> &'a str {
    match (attributes.operation, object) {
        (Operation::Create, Some(object)) => text(object, "/metadata/name"),
        _ => attributes.name,
    }
}

fn node_writes_node(
    attributes: &Attributes<'_>,
    node: &str,
    object: Option<&Value>,
) -> ApiResult<()> {
    let refuse = |why: String| Err(forbidden(attributes, object, &why));
    let name = named(attributes, object);
    if name != node {
        return refuse(format!(
            "node {node:?} is not allowed to modify node {name:?}"
        ));
    }
    let Some(object) = object else { return Ok(()) };
    let config_source = |o: &Value| {
        o.pointer("/spec/configSource")
            .filter(|c| !c.is_null())
            .cloned()
    };
    match attributes.operation {
        Operation::Create => {
            if config_source(object).is_some() {
                return refuse(format!(
                    "node {node:?} is not allowed to create pods with a non-nil configSource"
                ));
            }
            let mut keys: Vec<String> = labels(Some(object))
                .keys()
                .filter(|k| forbidden_node_label(k))
                .cloned()
                .collect();
            keys.sort();
            if !keys.is_empty() {
                return refuse(format!(
                    "node {node:?} is not allowed to set the following labels: {}",
                    keys.join(", ")
                ));
            }
            Ok(())
        }
        Operation::Update => {
            let old = attributes.old.unwrap_or(&Value::Null);
            if let Some(source) = config_source(object) {
                if config_source(old).as_ref() != Some(&source) {
                    return refuse(format!(
                        "node {node:?} is not allowed to update configSource to a new non-nil configSource"
                    ));
                }
            }
            let taints = |o: &Value| crate::object::items_at(o, "/spec/taints").to_vec();
            if taints(object) != taints(old) {
                return refuse(format!("node {node:?} is not allowed to modify taints"));
            }
            let owners = |o: &Value| o.pointer("/metadata/ownerReferences").cloned();
            if owners(object) != owners(old) {
                return refuse(format!(
                    "node {node:?} is not allowed to modify ownerReferences"
                ));
            }
            let (new_labels, old_labels) = (labels(Some(object)), labels(Some(old)));
            let mut changed: Vec<String> = new_labels
                .keys()
                .chain(old_labels.keys())
                .filter(|k| new_labels.get(*k) != old_labels.get(*k) && forbidden_node_label(k))
                .cloned()
                .collect();
            changed.sort();
            changed.dedup();
            if !changed.is_empty() {
                return refuse(format!(
                    "is not allowed to modify labels: {}",
                    changed.join(", ")
                ));
            }
            Ok(())
        }
        Operation::Delete => Ok(()),
    }
}

/// A node updates only the capacity and conditions of a claim's status.
fn node_writes_claim(
    attributes: &Attributes<'_>,
    node: &str,
    object: Option<&Value>,
) -> ApiResult<()> {
    let refuse = |why: String| Err(forbidden(attributes, object, &why));
    if attributes.subresource != "status" {
        return refuse("may only update PVC status".into());
    }
    if attributes.operation != Operation::Update {
        return refuse(format!(
            "unexpected operation {:?}",
            attributes.operation.as_str()
        ));
    }
    let stripped = |claim: Option<&Value>| {
        let mut claim = claim.cloned().unwrap_or(Value::Null);
        for pointer in [
            "/metadata/resourceVersion",
            "/metadata/managedFields",
            "/status/capacity",
            "/status/conditions",
            "/status/allocatedResourceStatuses",
            "/status/allocatedResources",
        ] {
            if let Some((parent, key)) = pointer.rsplit_once('/') {
                if let Some(map) = claim.pointer_mut(parent).and_then(Value::as_object_mut) {
                    map.remove(key);
                }
            }
        }
        claim
    };
    let (new, old) = (stripped(object), stripped(attributes.old));
    if new != old {
        return refuse(format!(
            "node {node:?} is not allowed to update fields other than status.quantity and status.conditions: {}",
            changed_paths(&old, &new, "").join(", ")
        ));
    }
    Ok(())
}

/// Where two objects differ, as JSON paths (upstream prints a cmp.Diff).
fn changed_paths(old: &Value, new: &Value, at: &str) -> Vec<String> {
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter()
                .flat_map(|key| {
                    let (x, y) = (
                        a.get(key).unwrap_or(&Value::Null),
                        b.get(key).unwrap_or(&Value::Null),
                    );
                    changed_paths(x, y, &format!("{at}.{key}"))
                })
                .collect()
        }
        (a, b) if a == b => Vec::new(),
        _ => vec![at.trim_start_matches('.').to_string()],
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn only_nodes_in_their_group_are_restricted() {
        let node = |name: &str, groups: &[&str]| UserInfo {
            name: name.to_string(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
            ..UserInfo::system()
        };
        assert_eq!(node_of(&node("system:node:n1", &[NODES_GROUP])), Some("n1"));
        assert_eq!(
            node_of(&node("system:node:n1", &["system:authenticated"])),
            None
        );
        assert_eq!(node_of(&node("alice", &[NODES_GROUP])), None);
    }

    #[test]
    fn administrators_keep_their_node_labels() {
        for (key, forbidden) in [
            ("node-restriction.kubernetes.io/pool", true),
            ("example.node-restriction.kubernetes.io/pool", true),
            ("node-role.kubernetes.io/control-plane", true),
            ("kubernetes.io/hostname", false),
            ("topology.kubernetes.io/zone", false),
            (
                "node.kubernetes.io/exclude-from-external-load-balancers",
                false,
            ),
            ("kubelet.kubernetes.io/x", false),
            ("example.com/team", false),
            ("plain", false),
            ("k8s.io/other", true),
        ] {
            assert_eq!(forbidden_node_label(key), forbidden, "{key}");
        }
    }

    #[test]
    fn differences_are_named_by_path() {
        assert_eq!(
            changed_paths(
                &json!({"spec": {"a": 1, "b": 2}, "status": {}}),
                &json!({"spec": {"a": 1, "b": 3}, "status": {"phase": "Bound"}}),
                ""
            ),
            ["spec.b", "status.phase"]
        );
    }
}
