//! LimitRanger: a new pod's containers get the default requests and limits
//! of their namespace's LimitRanges (noted in the `kubernetes.io/limit-ranger`
//! annotation), and a pod or claim must stay within each range's min, max
//! and limit-to-request ratio, for each container, the pod as a whole, or
//! the claim's storage.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::super::attributes::{Attributes, Operation};
use super::refusal::forbidden;
use crate::error::ApiResult;
use crate::quota::{parse_map, pod_requests_and_limits, Usage};
use crate::validate::quantity::Quantity;
use crate::verbs::ApiCore;

const ANNOTATION: &str = "kubernetes.io/limit-ranger";

/// What the request asks of LimitRanger: pods are defaulted and checked on
/// create only (their resources cannot change later), claims are checked
/// on create and update.
fn handled(attributes: &Attributes<'_>) -> Option<&'static str> {
    if !attributes.subresource.is_empty() || !attributes.def.group.is_empty() {
        return None;
    }
    let deleting = attributes
        .old
        .and_then(|o| o.pointer("/metadata/deletionTimestamp"))
        .is_some_and(|t| !t.is_null());
    if deleting {
        return None;
    }
    match (attributes.def.resource.as_str(), attributes.operation) {
        ("pods", Operation::Create) => Some("pods"),
        ("persistentvolumeclaims", Operation::Create | Operation::Update) => {
            Some("persistentvolumeclaims")
        }
        _ => None,
    }
}

impl ApiCore {
    async fn limit_ranges(&self, namespace: &str) -> ApiResult<Vec<Arc<Value>>> {
        let def = self.resolve("", "v1", "limitranges")?;
        let cache = self.watch_cache(&def).await?;
        let (ranges, _) = cache.list(&def.key_prefix(&self.prefix, Some(namespace)));
        Ok(ranges.into_iter().map(|(_, range)| range).collect())
    }

    pub(super) async fn admit_limit_ranger(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&mut Value>,
    ) -> ApiResult<()> {
        let (Some("pods"), Some(pod), Some(namespace)) =
            (handled(attributes), object, attributes.namespace)
        else {
            return Ok(());
        };
        for range in self.limit_ranges(namespace).await? {
            apply_container_defaults(&range, pod);
        }
        Ok(())
    }

    pub(super) async fn validate_limit_ranger(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
    ) -> ApiResult<()> {
        let (Some(resource), Some(object), Some(namespace)) =
            (handled(attributes), object, attributes.namespace)
        else {
            return Ok(());
        };
        let mut problems = Vec::new();
        for range in self.limit_ranges(namespace).await? {
            for item in items(&range) {
                problems.extend(match resource {
                    "pods" => pod_problems(item, object),
                    _ => claim_problems(item, object),
                });
            }
        }
        match problems.as_slice() {
            [] => Ok(()),
            [one] => Err(forbidden(attributes, Some(object), one)),
            many => Err(forbidden(
                attributes,
                Some(object),
                &format!("[{}]", many.join(", ")),
            )),
        }
    }
}

fn items(range: &Value) -> &[Value] {
    range
        .pointer("/spec/limits")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

fn item_type(item: &Value) -> &str {
    item.get("type").and_then(Value::as_str).unwrap_or("")
}

/// Sets the range's Container defaults a container does not set, and
/// notes what it set in the pod's annotation.
fn apply_container_defaults(range: &Value, pod: &mut Value) {
    let mut default_limits = Map::new();
    let mut default_requests = Map::new();
    for item in items(range).iter().filter(|i| item_type(i) == "Container") {
        for (key, target) in [
            ("default", &mut default_limits),
            ("defaultRequest", &mut default_requests),
        ] {
            if let Some(list) = item.get(key).and_then(Value::as_object) {
                target.extend(list.clone());
            }
        }
    }
    if default_limits.is_empty() && default_requests.is_empty() {
        return;
    }
    let mut notes = Vec::new();
    for (list, prefix) in [
        ("containers", "container"),
        ("initContainers", "init container"),
    ] {
        let Some(containers) = pod
            .pointer_mut(&format!("/spec/{list}"))
            .and_then(Value::as_array_mut)
        else {
            continue;
        };
        for container in containers {
            let name = container
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let Some(container) = container.as_object_mut() else {
                continue;
            };
            let resources = container.entry("resources").or_insert_with(|| json!({}));
            let set_requests = fill(resources, "requests", &default_requests);
            let set_limits = fill(resources, "limits", &default_limits);
            if !set_requests.is_empty() {
                notes.push(format!(
                    "{} request for {prefix} {name}",
                    set_requests.join(", ")
                ));
            }
            if !set_limits.is_empty() {
                notes.push(format!(
                    "{} limit for {prefix} {name}",
                    set_limits.join(", ")
                ));
            }
        }
    }
    if notes.is_empty() {
        return;
    }
    if let Some(metadata) = pod.get_mut("metadata").and_then(Value::as_object_mut) {
        let annotations = metadata.entry("annotations").or_insert_with(|| json!({}));
        if !annotations.is_object() {
            *annotations = json!({});
        }
        annotations[ANNOTATION] = json!(format!("LimitRanger plugin set: {}", notes.join("; ")));
    }
}

/// Sets each default `resources[key]` lacks; the names set, sorted.
fn fill(resources: &mut Value, key: &str, defaults: &Map<String, Value>) -> Vec<String> {
    if defaults.is_empty() {
        return Vec::new();
    }
    if !resources.is_object() {
        *resources = json!({});
    }
    let existed = resources.get(key).is_some_and(Value::is_object);
    let list = &mut resources[key];
    if !list.is_object() {
        *list = json!({});
    }
    let mut set = Vec::new();
    if let Some(list) = list.as_object_mut() {
        for (name, amount) in defaults {
            if !list.contains_key(name) {
                list.insert(name.clone(), amount.clone());
                set.push(name.clone());
            }
        }
    }
    if !existed && resources[key].as_object().is_some_and(Map::is_empty) {
        if let Some(resources) = resources.as_object_mut() {
            resources.remove(key);
        }
    }
    set.sort();
    set
}

/// A range item's checks on a pod: each container for a Container item,
/// the pod's totals for a Pod item.
fn pod_problems(item: &Value, pod: &Value) -> Vec<String> {
    match item_type(item) {
        "Container" => {
            let mut problems = Vec::new();
            for list in ["containers", "initContainers"] {
                for container in pod
                    .pointer(&format!("/spec/{list}"))
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let requests = parse_map(container.pointer("/resources/requests"));
                    let limits = parse_map(container.pointer("/resources/limits"));
                    problems.extend(bounds(item, "Container", &requests, &limits, true));
                }
            }
            problems
        }
        "Pod" => {
            let (requests, limits) = pod_requests_and_limits(pod);
            bounds(item, "Pod", &requests, &limits, true)
        }
        _ => Vec::new(),
    }
}

/// A range item's checks on a claim's storage request.
fn claim_problems(item: &Value, claim: &Value) -> Vec<String> {
    if item_type(item) != "PersistentVolumeClaim" {
        return Vec::new();
    }
    let requests = parse_map(claim.pointer("/spec/resources/requests"));
    bounds(
        item,
        "PersistentVolumeClaim",
        &requests,
        &Usage::new(),
        false,
    )
}

/// min, max and maxLimitRequestRatio, resource by resource in name order,
/// worded as upstream's minConstraint, maxConstraint (for a claim, its
/// requests) and limitRequestRatioConstraint.
fn bounds(
    item: &Value,
    kind: &str,
    requests: &Usage,
    limits: &Usage,
    has_limits: bool,
) -> Vec<String> {
    let mut problems = Vec::new();
    let bound = |key: &str| -> BTreeMap<String, Quantity> { parse_map(item.get(key)) };
    for (name, min) in bound("min") {
        let min_text = min.canonical();
        match requests.get(&name) {
            None => problems.push(format!(
                "minimum {name} usage per {kind} is {min_text}.  No request is specified"
            )),
            Some(request) if *request < min => problems.push(format!(
                "minimum {name} usage per {kind} is {min_text}, but request is {}",
                request.canonical()
            )),
            Some(_) => {
                if let Some(limit) = limits.get(&name).filter(|l| **l < min) {
                    problems.push(format!(
                        "minimum {name} usage per {kind} is {min_text}, but limit is {}",
                        limit.canonical()
                    ));
                }
            }
        }
    }
    for (name, max) in bound("max") {
        let max_text = max.canonical();
        if !has_limits {
            match requests.get(&name) {
                None => problems.push(format!(
                    "maximum {name} usage per {kind} is {max_text}.  No request is specified"
                )),
                Some(request) if *request > max => problems.push(format!(
                    "maximum {name} usage per {kind} is {max_text}, but request is {}",
                    request.canonical()
                )),
                Some(_) => {}
            }
            continue;
        }
        match limits.get(&name) {
            None => problems.push(format!(
                "maximum {name} usage per {kind} is {max_text}.  No limit is specified"
            )),
            Some(limit) if *limit > max => problems.push(format!(
                "maximum {name} usage per {kind} is {max_text}, but limit is {}",
                limit.canonical()
            )),
            Some(_) => {
                if let Some(request) = requests.get(&name).filter(|r| **r > max) {
                    problems.push(format!(
                        "maximum {name} usage per {kind} is {max_text}, but request is {}",
                        request.canonical()
                    ));
                }
            }
        }
    }
    if has_limits {
        for (name, ratio) in bound("maxLimitRequestRatio") {
            let ratio_text = ratio.canonical();
            let request = requests.get(&name).filter(|r| !r.is_zero());
            let limit = limits.get(&name).filter(|l| !l.is_zero());
            match (request, limit) {
                (None, _) => problems.push(format!(
                    "{name} max limit to request ratio per {kind} is {ratio_text}, but no request is specified or request is 0"
                )),
                (_, None) => problems.push(format!(
                    "{name} max limit to request ratio per {kind} is {ratio_text}, but no limit is specified or limit is 0"
                )),
                (Some(request), Some(limit)) => {
                    let observed = limit.as_f64() / request.as_f64();
                    if observed > ratio.as_f64() {
                        problems.push(format!(
                            "{name} max limit to request ratio per {kind} is {ratio_text}, but provided ratio is {observed:.6}"
                        ));
                    }
                }
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(limits: Value) -> Value {
        json!({"spec": {"limits": limits}})
    }

    #[test]
    fn defaults_are_set_and_noted_as_upstream() {
        let range = range(json!([{"type": "Container",
            "default": {"cpu": "500m", "memory": "256Mi"},
            "defaultRequest": {"cpu": "100m", "memory": "128Mi"}}]));
        let mut pod = json!({"metadata": {"name": "p"}, "spec": {
            "initContainers": [{"name": "init"}],
            "containers": [{"name": "web", "resources": {"limits": {"cpu": "1"}}}]
        }});
        apply_container_defaults(&range, &mut pod);
        assert_eq!(
            pod["spec"]["containers"][0]["resources"],
            json!({"limits": {"cpu": "1", "memory": "256Mi"}, "requests": {"cpu": "100m", "memory": "128Mi"}})
        );
        assert_eq!(
            pod["metadata"]["annotations"][ANNOTATION],
            "LimitRanger plugin set: cpu, memory request for container web; memory limit for container web; cpu, memory request for init container init; cpu, memory limit for init container init"
        );
    }

    #[test]
    fn bounds_are_worded_as_upstream() {
        let item = json!({"type": "Container", "min": {"cpu": "100m"}, "max": {"memory": "1Gi"},
                          "maxLimitRequestRatio": {"cpu": "2"}});
        let pod = |resources: Value| json!({"spec": {"containers": [{"name": "c", "resources": resources}]}});
        assert_eq!(
            pod_problems(
                &item,
                &pod(
                    json!({"requests": {"cpu": "50m"}, "limits": {"cpu": "150m", "memory": "2Gi"}})
                )
            ),
            [
                "minimum cpu usage per Container is 100m, but request is 50m",
                "maximum memory usage per Container is 1Gi, but limit is 2Gi",
                "cpu max limit to request ratio per Container is 2, but provided ratio is 3.000000",
            ]
        );
        assert_eq!(
            pod_problems(&item, &pod(json!({}))),
            [
                "minimum cpu usage per Container is 100m.  No request is specified",
                "maximum memory usage per Container is 1Gi.  No limit is specified",
                "cpu max limit to request ratio per Container is 2, but no request is specified or request is 0",
            ]
        );
        let claim_item = json!({"type": "PersistentVolumeClaim", "max": {"storage": "10Gi"}});
        let claim = json!({"spec": {"resources": {"requests": {"storage": "20Gi"}}}});
        assert_eq!(
            claim_problems(&claim_item, &claim),
            ["maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi"]
        );
    }
}
