//! RuntimeClass: a pod naming a RuntimeClass gets the class's pod overhead
//! and its scheduling constraints (node selector, tolerations); a pod
//! naming a missing class, or declaring an overhead its class does not, is
//! refused.

use std::sync::Arc;

use serde_json::{json, Value};

use super::super::attributes::{Attributes, Operation};
use crate::auth::UserInfo;
use crate::error::{ApiError, ApiResult};
use crate::validate::meta::go_quote;
use crate::validate::quantity;
use crate::verbs::ApiCore;

fn applies(attributes: &Attributes<'_>) -> bool {
    super::refusal::is_core(attributes, "pods") && attributes.operation == Operation::Create
}

/// Two resource lists that name the same amounts (`1000m` is `1`).
fn same_resources(a: &Value, b: &Value) -> bool {
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return a == b;
    };
    a.len() == b.len()
        && a.iter().all(|(name, amount)| {
            b.get(name).is_some_and(|other| {
                match (quantity::from_json(amount), quantity::from_json(other)) {
                    (Ok(x), Ok(y)) => x == y,
                    _ => amount == other,
                }
            })
        })
}

fn has_overhead(pod: &Value) -> bool {
    pod.pointer("/spec/overhead")
        .and_then(Value::as_object)
        .is_some_and(|o| !o.is_empty())
}

const OVERHEAD_MISMATCH: &str =
    "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead";

impl ApiCore {
    /// The RuntimeClass the pod names: from the watch cache, else read
    /// (a class just created may not be cached yet).
    async fn runtime_class_of(
        &self,
        attributes: &Attributes<'_>,
        pod: &Value,
    ) -> ApiResult<Option<Arc<Value>>> {
        let Some(name) = pod
            .pointer("/spec/runtimeClassName")
            .and_then(Value::as_str)
        else {
            return Ok(None);
        };
        let def = self.resolve("node.k8s.io", "v1", "runtimeclasses")?;
        let cache = self.watch_cache(&def).await?;
        if let Some(class) = cache.get(&def.key(&self.prefix, None, name)) {
            return Ok(Some(class));
        }
        match self.get(&UserInfo::system(), &def, None, name, "").await {
            Ok(class) => Ok(Some(Arc::new(class))),
            Err(e) if e.code() == 404 => Err(super::refusal::forbidden(
                attributes,
                Some(pod),
                &format!("pod rejected: RuntimeClass {} not found", go_quote(name)),
            )),
            Err(e) => Err(e),
        }
    }

    pub(super) async fn admit_runtime_class(
        &self,
        attributes: &Attributes<'_>,
        pod: Option<&mut Value>,
    ) -> ApiResult<()> {
        let Some(pod) = pod else { return Ok(()) };
        if !applies(attributes) {
            return Ok(());
        }
        let Some(class) = self.runtime_class_of(attributes, pod).await? else {
            return Ok(());
        };
        let refuse = |pod: &Value, why: &str| super::refusal::forbidden(attributes, Some(pod), why);
        if let Some(fixed) = class.pointer("/overhead/podFixed").filter(|o| !o.is_null()) {
            if has_overhead(pod) && !same_resources(&pod["spec"]["overhead"], fixed) {
                return Err(refuse(pod, OVERHEAD_MISMATCH));
            }
            pod["spec"]["overhead"] = fixed.clone();
        } else if class.get("overhead").is_some_and(|o| !o.is_null()) {
            // An overhead without podFixed sets an empty one.
            if has_overhead(pod) {
                return Err(refuse(pod, OVERHEAD_MISMATCH));
            }
        }
        let Some(scheduling) = class.get("scheduling").filter(|s| !s.is_null()) else {
            return Ok(());
        };
        if let Some(selector) = scheduling.get("nodeSelector").and_then(Value::as_object) {
            let spec = pod["spec"].as_object_mut().ok_or_else(|| {
                ApiError::bad_request(
                    "Resource was marked with kind Pod but was unable to be converted",
                )
            })?;
            let ours = spec.entry("nodeSelector").or_insert_with(|| json!({}));
            if ours.is_null() {
                *ours = json!({});
            }
            let Some(ours) = ours.as_object_mut() else {
                return Ok(());
            };
            let mut conflict = None;
            for (key, value) in selector {
                match ours.get(key) {
                    Some(existing) if existing != value => {
                        let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
                        conflict = Some(format!(
                            "conflict: runtimeClass.scheduling.nodeSelector[{key}] = {}; pod.spec.nodeSelector[{key}] = {}",
                            text(value),
                            text(existing)
                        ));
                        break;
                    }
                    Some(_) => {}
                    None => {
                        ours.insert(key.clone(), value.clone());
                    }
                }
            }
            if let Some(conflict) = conflict {
                return Err(refuse(pod, &conflict));
            }
        }
        let theirs = crate::object::items_at(scheduling, "/tolerations");
        if !theirs.is_empty() {
            let ours = crate::object::items_at(pod, "/spec/tolerations").to_vec();
            pod["spec"]["tolerations"] = Value::Array(merge_tolerations(ours, theirs));
        }
        Ok(())
    }

    pub(super) async fn validate_runtime_class(
        &self,
        attributes: &Attributes<'_>,
        pod: Option<&Value>,
    ) -> ApiResult<()> {
        let Some(pod) = pod else { return Ok(()) };
        if !applies(attributes) || !has_overhead(pod) {
            return Ok(());
        }
        let class = self.runtime_class_of(attributes, pod).await?;
        let fixed = class
            .as_ref()
            .and_then(|c| c.get("overhead"))
            .filter(|o| !o.is_null())
            .map(|o| o.get("podFixed").cloned().unwrap_or_else(|| json!({})));
        match fixed {
            Some(fixed) if same_resources(&pod["spec"]["overhead"], &fixed) => Ok(()),
            Some(_) => Err(super::refusal::forbidden(attributes, Some(pod), OVERHEAD_MISMATCH)),
            None => Err(super::refusal::forbidden(
                attributes,
                Some(pod),
                "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead",
            )),
        }
    }
}

fn field<'a>(toleration: &'a Value, key: &str) -> &'a str {
    toleration.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Upstream's isSuperset: whether `wider` tolerates whatever `toleration`
/// does.
fn is_superset(wider: &Value, toleration: &Value) -> bool {
    if wider == toleration {
        return true;
    }
    let key = field(wider, "key");
    if field(toleration, "key") != key && (!key.is_empty() || field(wider, "operator") != "Exists")
    {
        return false;
    }
    let effect = field(wider, "effect");
    if field(toleration, "effect") != effect && !effect.is_empty() {
        return false;
    }
    if effect == "NoExecute" {
        if let Some(seconds) = wider.get("tolerationSeconds").and_then(Value::as_i64) {
            match toleration.get("tolerationSeconds").and_then(Value::as_i64) {
                Some(theirs) if theirs <= seconds => {}
                _ => return false,
            }
        }
    }
    match field(wider, "operator") {
        "Equal" | "" => {
            field(toleration, "operator") == "Equal"
                && field(toleration, "value") == field(wider, "value")
        }
        "Exists" => true,
        _ => false,
    }
}

/// Upstream's MergeTolerations: both lists, without tolerations another
/// one already covers (of equal ones, the first is kept).
fn merge_tolerations(first: Vec<Value>, second: &[Value]) -> Vec<Value> {
    let all: Vec<Value> = first.into_iter().chain(second.iter().cloned()).collect();
    let mut merged: Vec<Value> = Vec::new();
    for (i, toleration) in all.iter().enumerate() {
        let covered = merged.iter().any(|kept| is_superset(kept, toleration))
            || all[i + 1..]
                .iter()
                .any(|later| later != toleration && is_superset(later, toleration));
        if !covered {
            merged.push(toleration.clone());
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overheads_compare_by_amount() {
        assert!(same_resources(
            &json!({"cpu": "1", "memory": "1Gi"}),
            &json!({"cpu": "1000m", "memory": "1073741824"})
        ));
        assert!(!same_resources(&json!({"cpu": "1"}), &json!({"cpu": "2"})));
        assert!(!same_resources(
            &json!({"cpu": "1"}),
            &json!({"cpu": "1", "memory": "1Gi"})
        ));
    }

    #[test]
    fn tolerations_merge_as_upstreams() {
        let exists_all = json!({"operator": "Exists"});
        let gpu =
            json!({"key": "gpu", "operator": "Equal", "value": "yes", "effect": "NoSchedule"});
        let gpu_any = json!({"key": "gpu", "operator": "Exists"});
        let evict_60 = json!({"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60});
        let evict_30 = json!({"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30});
        // A wider toleration swallows narrower ones on either side.
        assert_eq!(
            merge_tolerations(vec![gpu.clone()], std::slice::from_ref(&gpu_any)),
            vec![gpu_any.clone()]
        );
        assert_eq!(
            merge_tolerations(
                vec![gpu.clone(), exists_all.clone()],
                std::slice::from_ref(&gpu_any)
            ),
            vec![exists_all]
        );
        // Equal ones: the first stays.
        assert_eq!(
            merge_tolerations(vec![gpu.clone()], std::slice::from_ref(&gpu)),
            vec![gpu.clone()]
        );
        // NoExecute: the longer tolerationSeconds does not cover the shorter's
        // absence, but the shorter is covered by the longer.
        assert_eq!(
            merge_tolerations(vec![evict_30.clone()], std::slice::from_ref(&evict_60)),
            vec![evict_60]
        );
    }
}
