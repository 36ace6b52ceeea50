//! A pod's QoS class, which its status shows from creation on, a resize
//! may not change, and a quota's BestEffort scope selects by.

use serde_json::Value;

/// Upstream's GetPodQOS over cpu and memory of the (init) containers:
/// BestEffort without any request or limit, Guaranteed when every container
/// limits both and requests what it limits, Burstable otherwise. Requests
/// and limits are compared per container as written (defaulting has copied
/// limits into missing requests); upstream compares the sums, which only
/// differs for equal amounts spelled differently.
pub(super) fn qos_class(spec: &Value) -> &'static str {
    const COMPUTE: [&str; 2] = ["cpu", "memory"];
    let containers = ["containers", "initContainers"]
        .into_iter()
        .filter_map(|field| spec.get(field).and_then(Value::as_array))
        .flatten();
    // Malformed quantities do not count as zero; validation rejects them.
    let is_zero = |q: &Value| crate::validate::quantity::from_json(q).is_ok_and(|q| q.is_zero());
    let mut any = false;
    let mut guaranteed = true;
    for container in containers {
        let resources = |kind: &str| {
            container
                .pointer(&format!("/resources/{kind}"))
                .and_then(Value::as_object)
        };
        let (requests, limits) = (resources("requests"), resources("limits"));
        for name in COMPUTE {
            let request = requests.and_then(|r| r.get(name)).filter(|q| !is_zero(q));
            let limit = limits.and_then(|l| l.get(name)).filter(|q| !is_zero(q));
            any |= request.is_some() || limit.is_some();
            if limit.is_none() || request.is_some_and(|r| Some(r) != limit) {
                guaranteed = false;
            }
        }
    }
    match (any, guaranteed) {
        (false, _) => "BestEffort",
        (true, true) => "Guaranteed",
        (true, false) => "Burstable",
    }
}
