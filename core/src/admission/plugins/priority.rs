//! Priority: a new pod's `priorityClassName` (or the global default class)
//! becomes its `priority` and `preemptionPolicy`; a pod may not claim a
//! priority its class does not give. At most one PriorityClass is the
//! global default.

use std::sync::Arc;

use serde_json::{json, Value};

use super::super::attributes::{Attributes, Operation};
use super::refusal::forbidden;
use crate::error::{ApiError, ApiResult};
use crate::verbs::ApiCore;

const GROUP: &str = "scheduling.k8s.io";

fn is_global_default(class: &Value) -> bool {
    class.get("globalDefault").and_then(Value::as_bool) == Some(true)
}

fn name(class: &Value) -> &str {
    class
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
}

impl ApiCore {
    /// Every PriorityClass, from the watch cache.
    async fn priority_classes(&self) -> ApiResult<Vec<Arc<Value>>> {
        let def = self.resolve(GROUP, "v1", "priorityclasses")?;
        let cache = self.watch_cache(&def).await?;
        let (classes, _) = cache.list(&def.key_prefix(&self.prefix, None));
        Ok(classes.into_iter().map(|(_, class)| class).collect())
    }

    pub(super) async fn admit_priority(
        &self,
        attributes: &Attributes<'_>,
        pod: Option<&mut Value>,
    ) -> ApiResult<()> {
        if !super::refusal::is_core(attributes, "pods") {
            return Ok(());
        }
        let Some(pod) = pod else {
            return Ok(());
        };
        match attributes.operation {
            // The fields are immutable: an update that leaves them out
            // keeps the stored ones.
            Operation::Update => {
                let Some(old_spec) = attributes.old.and_then(|o| o.get("spec")) else {
                    return Ok(());
                };
                if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) {
                    for key in ["priority", "preemptionPolicy"] {
                        if spec.get(key).is_none_or(Value::is_null) {
                            if let Some(old) = old_spec.get(key).filter(|v| !v.is_null()) {
                                spec.insert(key.into(), old.clone());
                            }
                        }
                    }
                }
                Ok(())
            }
            Operation::Create => self.resolve_pod_priority(attributes, pod).await,
            Operation::Delete => Ok(()),
        }
    }

    async fn resolve_pod_priority(
        &self,
        attributes: &Attributes<'_>,
        pod: &mut Value,
    ) -> ApiResult<()> {
        let class_name = pod
            .pointer("/spec/priorityClassName")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let classes = self.priority_classes().await.map_err(|e| {
            ApiError::internal(format!(
                "failed to get default priority class: {}",
                e.message
            ))
        })?;
        let (class_name, priority, policy) = if class_name.is_empty() {
            // Should several be defaults after a race, the lowest wins.
            let default = classes
                .iter()
                .filter(|c| is_global_default(c))
                .min_by_key(|c| c.get("value").and_then(Value::as_i64).unwrap_or(0));
            match default {
                Some(class) => (
                    name(class).to_string(),
                    class.get("value").and_then(Value::as_i64).unwrap_or(0),
                    class
                        .get("preemptionPolicy")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                ),
                None => (String::new(), 0, Some("PreemptLowerPriority".to_string())),
            }
        } else {
            let Some(class) = classes.iter().find(|c| name(c) == class_name) else {
                return Err(forbidden(
                    attributes,
                    Some(pod),
                    &format!("no PriorityClass with name {class_name} was found"),
                ));
            };
            (
                class_name.clone(),
                class.get("value").and_then(Value::as_i64).unwrap_or(0),
                class
                    .get("preemptionPolicy")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            )
        };
        if let Some(given) = pod.pointer("/spec/priority").and_then(Value::as_i64) {
            if given != priority {
                return Err(forbidden(
                    attributes,
                    Some(pod),
                    &format!("the integer value of priority ({given}) must not be provided in pod spec; priority admission controller computed {priority} from the given PriorityClass name"),
                ));
            }
        }
        if let Some(policy) = &policy {
            if let Some(given) = pod
                .pointer("/spec/preemptionPolicy")
                .and_then(Value::as_str)
                .filter(|given| given != policy)
            {
                return Err(forbidden(
                    attributes,
                    Some(pod),
                    &format!("the string value of PreemptionPolicy ({given}) must not be provided in pod spec; priority admission controller computed {policy} from the given PriorityClass name"),
                ));
            }
        }
        let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
            return Ok(());
        };
        if !class_name.is_empty() {
            spec.insert("priorityClassName".into(), json!(class_name));
        }
        spec.insert("priority".into(), json!(priority));
        if let Some(policy) = policy {
            spec.insert("preemptionPolicy".into(), json!(policy));
        }
        Ok(())
    }

    /// Only one PriorityClass may be the global default.
    pub(super) async fn validate_priority(
        &self,
        attributes: &Attributes<'_>,
        class: Option<&Value>,
    ) -> ApiResult<()> {
        let def = attributes.def;
        if def.group != GROUP
            || def.resource != "priorityclasses"
            || !attributes.subresource.is_empty()
            || !matches!(attributes.operation, Operation::Create | Operation::Update)
        {
            return Ok(());
        }
        let Some(class) = class.filter(|c| is_global_default(c)) else {
            return Ok(());
        };
        let classes = self.priority_classes().await.map_err(|e| {
            ApiError::internal(format!(
                "failed to get default priority class: {}",
                e.message
            ))
        })?;
        let other = classes
            .iter()
            .find(|c| is_global_default(c) && name(c) != name(class));
        if let Some(other) = other {
            return Err(forbidden(
                attributes,
                Some(class),
                &format!(
                    "PriorityClass {} is already marked as default. Only one default can exist",
                    name(other)
                ),
            ));
        }
        Ok(())
    }
}
