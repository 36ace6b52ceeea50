//! The scale subresource: an autoscaling/v1 Scale view of a workload's
//! spec.replicas, as upstream serves it for deployments, replicasets,
//! statefulsets and replicationcontrollers.

use serde_json::{json, Value};

use crate::error::{ApiError, ApiResult, FieldError};
use crate::object;
use crate::registry::ResourceDef;

/// The Scale a GET of the subresource answers: upstream shows none for an
/// object whose spec replicas field does not exist (a custom resource).
pub fn read_scale(def: &ResourceDef, object: &Value) -> ApiResult<Value> {
    if def.kind_impl.scale_of(object).spec_replicas.is_none() {
        return Err(ApiError::internal(format!(
            "the spec replicas field {:?} does not exist",
            def.kind_impl.scale_replicas_path()
        )));
    }
    Ok(to_scale(def, object))
}

pub fn to_scale(def: &ResourceDef, object: &Value) -> Value {
    let parts = def.kind_impl.scale_of(object);
    let mut metadata = json!({});
    for field in [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "creationTimestamp",
    ] {
        if let Some(v) = object::meta(object).and_then(|m| m.get(field)) {
            metadata[field] = v.clone();
        }
    }
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": metadata,
        "spec": {"replicas": parts.spec_replicas.unwrap_or(0)},
        "status": {
            "replicas": parts.status_replicas.unwrap_or(0),
            "selector": parts.selector,
        },
    })
}

/// Checks a Scale sent by a client (type, name, replicas).
fn check_scale(name: &str, scale: &Value) -> ApiResult<()> {
    let kind = scale.get("kind").and_then(Value::as_str).unwrap_or("Scale");
    let api_version = scale
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("autoscaling/v1");
    if kind != "Scale" || api_version != "autoscaling/v1" {
        return Err(ApiError::bad_request(format!(
            "{kind} in version \"{api_version}\" cannot be handled as a Scale: the scale subresource takes an autoscaling/v1 Scale"
        )));
    }
    let body_name = object::name(scale);
    if !body_name.is_empty() && body_name != name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({body_name}) does not match the name on the URL ({name})"
        )));
    }
    match scale.pointer("/spec/replicas") {
        Some(Value::Number(n))
            if n.as_i64()
                .is_some_and(|r| (0..=i64::from(i32::MAX)).contains(&r)) =>
        {
            Ok(())
        }
        None | Some(Value::Null) => Ok(()),
        Some(other) => Err(ApiError::invalid(
            "autoscaling",
            "Scale",
            name,
            vec![FieldError::invalid(
                "spec.replicas",
                &other.to_string(),
                "must be greater than or equal to 0",
            )],
        )),
    }
}

/// The workload with the Scale's replicas; the Scale's resourceVersion, if
/// any, becomes the write's precondition.
/// Checks the Scale (type, name, replicas) first.
pub fn apply_scale(def: &ResourceDef, name: &str, old: &Value, scale: &Value) -> ApiResult<Value> {
    check_scale(name, scale)?;
    let mut updated = old.clone();
    let replicas = scale
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    def.kind_impl.set_scale_replicas(&mut updated, replicas);
    let rv = object::resource_version(scale).to_string();
    object::set_meta(&mut updated, "resourceVersion", Value::String(rv));
    Ok(updated)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;

    #[test]
    fn scale_round_trip() {
        let r = Registry::builtin();
        let deploy = r.lookup("apps", "v1", "deployments").unwrap();
        let d = json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "d", "uid": "u", "resourceVersion": "7"},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}},
            "status": {"replicas": 1}
        });
        let scale = to_scale(&deploy, &d);
        assert_eq!(scale["spec"]["replicas"], 2);
        assert_eq!(scale["status"]["selector"], "app=web");
        assert_eq!(scale["metadata"]["resourceVersion"], "7");
        let mut wanted = scale.clone();
        wanted["spec"]["replicas"] = json!(5);
        let updated = apply_scale(&deploy, "web", &d, &wanted).unwrap();
        assert_eq!(updated["spec"]["replicas"], 5);
        wanted["spec"]["replicas"] = json!(-1);
        assert_eq!(
            apply_scale(&deploy, "web", &d, &wanted).unwrap_err().code(),
            422
        );
    }
}
