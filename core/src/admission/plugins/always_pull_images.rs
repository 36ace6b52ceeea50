//! AlwaysPullImages (off by default; CIS asks for it): every container of
//! a new or re-imaged pod pulls its image, so a pod cannot use an image
//! another tenant's pull credentials brought onto the node.

use serde_json::{json, Value};

use super::super::attributes::{Attributes, Operation};
use crate::error::{ApiResult, FieldError};

const CONTAINER_LISTS: [&str; 3] = ["initContainers", "containers", "ephemeralContainers"];

/// Whether the plugin looks at the request: creates and updates of pods
/// themselves, but updates that bring no new image.
fn applies(attributes: &Attributes<'_>, pod: &Value) -> bool {
    if !super::refusal::is_core(attributes, "pods") {
        return false;
    }
    match attributes.operation {
        Operation::Create => true,
        Operation::Update => {
            let old_images = images(attributes.old.unwrap_or(&Value::Null));
            images(pod).iter().any(|image| !old_images.contains(image))
        }
        Operation::Delete => false,
    }
}

fn images(pod: &Value) -> Vec<&str> {
    CONTAINER_LISTS
        .iter()
        .flat_map(|list| crate::object::items_at(pod, &format!("/spec/{list}")))
        .filter_map(|c| c.get("image").and_then(Value::as_str))
        .collect()
}

pub(super) fn admit(attributes: &Attributes<'_>, pod: Option<&mut Value>) {
    let Some(pod) = pod else { return };
    if !applies(attributes, pod) {
        return;
    }
    for list in CONTAINER_LISTS {
        let containers = pod
            .pointer_mut(&format!("/spec/{list}"))
            .and_then(Value::as_array_mut);
        for container in containers.into_iter().flatten() {
            if let Some(container) = container.as_object_mut() {
                container.insert("imagePullPolicy".into(), json!("Always"));
            }
        }
    }
}

/// Refuses a pod a later step left pulling less than always.
pub(super) fn validate(attributes: &Attributes<'_>, pod: Option<&Value>) -> ApiResult<()> {
    let Some(pod) = pod else { return Ok(()) };
    if !applies(attributes, pod) {
        return Ok(());
    }
    let mut errors = Vec::new();
    for list in CONTAINER_LISTS {
        for (i, container) in crate::object::items_at(pod, &format!("/spec/{list}"))
            .iter()
            .enumerate()
        {
            let policy = container
                .get("imagePullPolicy")
                .and_then(Value::as_str)
                .unwrap_or("");
            if policy != "Always" {
                errors.push(
                    FieldError::not_supported(
                        format!("spec.{list}[{i}].imagePullPolicy"),
                        policy,
                        &["Always"],
                    )
                    .render(),
                );
            }
        }
    }
    match errors.len() {
        0 => Ok(()),
        1 => Err(super::refusal::forbidden(attributes, Some(pod), &errors[0])),
        _ => Err(super::refusal::forbidden(
            attributes,
            Some(pod),
            &format!("[{}]", errors.join(", ")),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{attributes_for, attributes_with};

    fn pod(images: &[&str]) -> Value {
        let containers: Vec<Value> = images
            .iter()
            .enumerate()
            .map(|(i, image)| json!({"name": format!("c{i}"), "image": image, "imagePullPolicy": "IfNotPresent"}))
            .collect();
        json!({"metadata": {"name": "p"}, "spec": {"containers": containers,
               "initContainers": [{"name": "init", "image": "busybox"}]}})
    }

    #[test]
    fn new_pods_always_pull() {
        let mut created = pod(&["nginx", "redis"]);
        attributes_for("", "pods", Operation::Create, |a| {
            admit(a, Some(&mut created))
        });
        assert_eq!(
            created["spec"]["containers"][1]["imagePullPolicy"],
            "Always"
        );
        assert_eq!(
            created["spec"]["initContainers"][0]["imagePullPolicy"],
            "Always"
        );
        attributes_for("", "pods", Operation::Create, |a| {
            assert!(validate(a, Some(&created)).is_ok())
        });
    }

    #[test]
    fn updates_with_only_known_images_are_left_alone() {
        let old = pod(&["nginx"]);
        let mut same = pod(&["nginx"]);
        attributes_with("", "pods", Operation::Update, "", Some(&old), |a| {
            admit(a, Some(&mut same));
            assert!(validate(a, Some(&same)).is_ok());
        });
        assert_eq!(
            same["spec"]["containers"][0]["imagePullPolicy"],
            "IfNotPresent"
        );
        let reimaged = pod(&["nginx:2"]);
        let refused = attributes_with("", "pods", Operation::Update, "", Some(&old), |a| {
            validate(a, Some(&reimaged))
        });
        assert_eq!(
            refused.map_err(|e| e.to_string()),
            Err(r#"pods "x" is forbidden: [spec.initContainers[0].imagePullPolicy: Unsupported value: "": supported values: "Always", spec.containers[0].imagePullPolicy: Unsupported value: "IfNotPresent": supported values: "Always"]"#.to_string())
        );
    }
}
