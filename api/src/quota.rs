//! What objects count against a ResourceQuota (upstream's quota
//! evaluators): every object its `count/<resource>[.<group>]`, plus what
//! its kind adds ([`crate::kinds::Kind::quota_usage`]): a pod's compute
//! resources, a service's ports, a claim's storage. Shared by the
//! ResourceQuota admission plugin and the quota controller.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::registry::ResourceDef;
use crate::validate::quantity::{self, Quantity};

/// Resource name → amount.
pub type Usage = BTreeMap<String, Quantity>;

/// Upstream's name for an object count: `count/pods`, `count/deployments.apps`.
pub fn count_name(def: &ResourceDef) -> String {
    if def.group.is_empty() {
        format!("count/{}", def.resource)
    } else {
        format!("count/{}.{}", def.resource, def.group)
    }
}

/// Everything `object` counts for.
pub fn usage(def: &ResourceDef, object: &Value) -> Usage {
    let mut usage = Usage::new();
    usage.insert(count_name(def), Quantity::count(1));
    for (name, amount) in def.kind_impl.quota_usage(object) {
        add(&mut usage, &name, amount);
    }
    usage
}

pub fn add(usage: &mut Usage, name: &str, amount: Quantity) {
    let total = usage.get(name).copied().unwrap_or(Quantity::count(0)) + amount;
    usage.insert(name.to_string(), total);
}

/// A `{name: quantity}` map (a quota's hard or used), unparsable entries
/// left out.
pub fn parse_map(value: Option<&Value>) -> Usage {
    value
        .and_then(Value::as_object)
        .map(|map| {
            map.iter()
                .filter_map(|(k, v)| Some((k.clone(), quantity::from_json(v).ok()?)))
                .collect()
        })
        .unwrap_or_default()
}

/// A usage as JSON, each amount in its canonical form.
pub fn to_json(usage: &Usage) -> Value {
    Value::Object(
        usage
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.canonical())))
            .collect(),
    )
}

/// `k=v,k=v` sorted by name, as upstream's quota messages print a list.
pub fn printed(usage: &Usage) -> String {
    usage
        .iter()
        .map(|(k, v)| format!("{k}={}", v.canonical()))
        .collect::<Vec<_>>()
        .join(",")
}

/// The requests and limits of a pod: its containers summed (sidecar init
/// containers too), at least its largest regular init container (with the
/// sidecars started before it), plus its overhead.
pub fn pod_requests_and_limits(pod: &Value) -> (Usage, Usage) {
    let spec = pod.get("spec").unwrap_or(&Value::Null);
    let amounts = |container: &Value, key: &str| -> Usage {
        parse_map(container.pointer(&format!("/resources/{key}")))
    };
    let sum = |a: &mut Usage, b: &Usage| {
        for (k, v) in b {
            add(a, k, *v);
        }
    };
    let at_least = |a: &mut Usage, b: &Usage| {
        for (k, v) in b {
            if a.get(k).is_none_or(|current| current < v) {
                a.insert(k.clone(), *v);
            }
        }
    };
    let list = |key: &str| -> Vec<Value> {
        spec.get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let mut result = (Usage::new(), Usage::new());
    for (i, key) in ["requests", "limits"].into_iter().enumerate() {
        let mut total = Usage::new();
        for container in list("containers") {
            sum(&mut total, &amounts(&container, key));
        }
        let mut sidecars = Usage::new();
        let mut init_peak = Usage::new();
        for container in list("initContainers") {
            let restarts = container.get("restartPolicy").and_then(Value::as_str) == Some("Always");
            if restarts {
                sum(&mut sidecars, &amounts(&container, key));
                at_least(&mut init_peak, &sidecars);
            } else {
                let mut running = sidecars.clone();
                sum(&mut running, &amounts(&container, key));
                at_least(&mut init_peak, &running);
            }
        }
        sum(&mut total, &sidecars);
        at_least(&mut total, &init_peak);
        let overhead = parse_map(spec.get("overhead"));
        if !total.is_empty() {
            sum(&mut total, &overhead);
        }
        if i == 0 {
            result.0 = total;
        } else {
            result.1 = total;
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_pod_counts_its_largest_init_container_and_its_sidecars() {
        let pod = json!({"spec": {
            "initContainers": [
                {"name": "setup", "resources": {"requests": {"cpu": "2"}}},
                {"name": "proxy", "restartPolicy": "Always", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}
            ],
            "containers": [
                {"name": "a", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "1"}}},
                {"name": "b", "resources": {"requests": {"cpu": "250m"}}}
            ]
        }});
        let (requests, limits) = pod_requests_and_limits(&pod);
        assert_eq!(printed(&requests), "cpu=2,memory=1088Mi");
        assert_eq!(printed(&limits), "cpu=1");
    }
}
