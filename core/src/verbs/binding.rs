//! Pod binding: `POST /api/v1/namespaces/<ns>/bindings` and the
//! `pods/<name>/binding` subresource, which schedulers use to place a pod on
//! a node. Nothing is stored as a Binding; the pod gets `spec.nodeName` and
//! the PodScheduled condition, as upstream's BindingREST does.

use serde_json::{json, Value};

use crate::error::{ApiError, FieldError};
use crate::object;
use crate::verbs::{ApiCore, View, WriteOptions};

impl ApiCore {
    /// Binds the pod a Binding names to its target node (the caller has
    /// authorized the create). Answers upstream's Success Status.
    pub(crate) async fn bind_pod(
        &self,
        user: &crate::auth::UserInfo,
        namespace: &str,
        binding: &Value,
        opts: &WriteOptions,
    ) -> crate::ApiResult<Value> {
        let name = object::name(binding).to_string();
        let target_kind = binding
            .pointer("/target/kind")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let node = binding
            .pointer("/target/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let mut errs = Vec::new();
        if name.is_empty() {
            errs.push(FieldError::required(
                "metadata.name",
                "name or generateName is required",
            ));
        }
        if !target_kind.is_empty() && target_kind != "Node" {
            errs.push(FieldError::not_supported(
                "target.kind",
                target_kind,
                &["Node", "<empty>"],
            ));
        }
        if node.is_empty() {
            errs.push(FieldError::required("target.name", ""));
        }
        if !errs.is_empty() {
            return Err(ApiError::invalid("", "Binding", &name, errs));
        }
        let pods = self.resolve("", "v1", "pods")?;
        self.update_internal(
            user,
            &pods,
            Some(namespace),
            &name,
            opts,
            View::Binding,
            |old| assign(old, &node),
        )
        .await?;
        Ok(crate::error::created_status())
    }
}

/// The pod placed on `node`, unless it is being deleted or placed already.
fn assign(pod: &Value, node: &str) -> crate::ApiResult<Value> {
    let name = object::name(pod);
    if object::meta(pod).is_some_and(|m| m.contains_key("deletionTimestamp")) {
        return Err(ApiError::conflict(
            "",
            "pods",
            name,
            &format!("pod {name} is being deleted, cannot be assigned to a host"),
        ));
    }
    let assigned = pod
        .pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !assigned.is_empty() {
        return Err(ApiError::conflict(
            "",
            "pods",
            name,
            &format!("pod {name} is already assigned to node {assigned:?}"),
        ));
    }
    let mut bound = pod.clone();
    bound["spec"]["nodeName"] = json!(node);
    set_scheduled(&mut bound);
    Ok(bound)
}

/// PodScheduled=True, added or updated in place (upstream's UpdatePodCondition).
fn set_scheduled(pod: &mut Value) {
    let now = object::now_timestamp();
    let status = &mut pod["status"];
    if !status.is_object() {
        *status = json!({});
    }
    let conditions = &mut status["conditions"];
    if !conditions.is_array() {
        *conditions = json!([]);
    }
    if let Some(list) = conditions.as_array_mut() {
        match list.iter_mut().find(|c| c["type"] == "PodScheduled") {
            Some(condition) => {
                if condition["status"] != "True" {
                    condition["lastTransitionTime"] = json!(now);
                }
                condition["status"] = json!("True");
            }
            None => list.push(json!({
                "type": "PodScheduled",
                "status": "True",
                "lastProbeTime": null,
                "lastTransitionTime": now,
            })),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assigning_sets_the_node_once() {
        let pod = json!({"metadata": {"name": "web"}, "spec": {"containers": []},
                         "status": {"phase": "Pending"}});
        let bound = assign(&pod, "node-1").unwrap();
        assert_eq!(bound["spec"]["nodeName"], "node-1");
        assert_eq!(bound["status"]["conditions"][0]["type"], "PodScheduled");
        assert_eq!(bound["status"]["conditions"][0]["status"], "True");
        let again = assign(&bound, "node-2").unwrap_err();
        assert_eq!(again.code(), 409);
        assert!(again
            .message
            .contains("already assigned to node \"node-1\""));
    }
}
