//! PodSecurity: a namespace's `pod-security.kubernetes.io/enforce|warn`
//! labels choose a level of the Pod Security Standards (and a version);
//! pods that violate the enforce level are refused, those that violate the
//! warn level are let through with upstream's warning, and workloads whose
//! pod template would violate are warned about only. Invalid labels are
//! refused on namespace writes; tightening a namespace's enforce level
//! warns about the pods already there.
//!
//! The admission configuration file (`--admission-control-config-file`)
//! may set the levels of unlabelled namespaces and exempt users,
//! namespaces and runtime classes (configuration.rs).
//!
//! Every version label is checked with the 1.32 (latest) standards; audit
//! annotations wait for the audit log.

mod checks;
mod configuration;

pub use configuration::PodSecurityConfiguration;
use configuration::{valid_version, LevelVersion};

use serde_json::Value;

use super::super::attributes::{Attributes, Operation};
use super::refusal::forbidden;
use crate::error::{ApiError, ApiResult, FieldError};
use crate::verbs::ApiCore;
use checks::Level;

const PREFIX: &str = "pod-security.kubernetes.io/";
/// Pod subresources the standards never look at.
const IGNORED_SUBRESOURCES: [&str; 8] = [
    "exec",
    "attach",
    "binding",
    "eviction",
    "log",
    "portforward",
    "proxy",
    "status",
];

/// A namespace's policy for one mode (enforce, warn): its labels, else
/// `default`; and what was wrong with its labels.
fn mode_policy(
    labels: Option<&Value>,
    mode: &str,
    default: &LevelVersion,
    errors: &mut Vec<FieldError>,
) -> LevelVersion {
    let label = |key: &str| {
        labels
            .and_then(|l| l.get(key))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let level_key = format!("{PREFIX}{mode}");
    let level = match label(&level_key) {
        None => default.level,
        Some(text) => Level::parse(&text).unwrap_or_else(|| {
            errors.push(FieldError::invalid(
                format!("metadata.labels[{level_key}]"),
                &text,
                "must be one of privileged, baseline, restricted",
            ));
            // Enforce fails closed; warn fails open.
            if mode == "enforce" {
                Level::Restricted
            } else {
                Level::Privileged
            }
        }),
    };
    let version_key = format!("{PREFIX}{mode}-version");
    let version = match label(&version_key) {
        None => default.version.clone(),
        Some(text) if valid_version(&text) => text,
        Some(text) => {
            errors.push(FieldError::invalid(
                format!("metadata.labels[{version_key}]"),
                &text,
                "must be \"latest\" or \"v1.x\"",
            ));
            "latest".to_string()
        }
    };
    LevelVersion { level, version }
}

/// The enforce and warn policies of a namespace (audit waits for the
/// audit log), with the label errors in upstream's order.
fn namespace_policy(
    namespace: &Value,
    defaults: &configuration::Defaults,
) -> (LevelVersion, LevelVersion, Vec<FieldError>) {
    let labels = namespace.pointer("/metadata/labels");
    let mut errors = Vec::new();
    let enforce = mode_policy(labels, "enforce", &defaults.enforce, &mut errors);
    let mut audit_errors = Vec::new();
    mode_policy(labels, "audit", &defaults.audit, &mut audit_errors);
    errors.extend(audit_errors);
    let warn = mode_policy(labels, "warn", &defaults.warn, &mut errors);
    (enforce, warn, errors)
}

/// The pod template a workload writes, if the resource is one.
fn pod_template<'a>(def: &crate::registry::ResourceDef, object: &'a Value) -> Option<&'a Value> {
    def.kind_impl
        .pod_template(object)
        .filter(|template| !template.is_null())
}

/// Whether a pod update changes what the standards look at.
fn significant_update(new: &Value, old: &Value) -> bool {
    let list = |pod: &Value, key: &str| -> Vec<Value> {
        pod.pointer(&format!("/spec/{key}"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    for key in ["containers", "initContainers"] {
        let (a, b) = (list(new, key), list(old, key));
        if a.len() != b.len()
            || a.iter()
                .zip(&b)
                .any(|(x, y)| x.get("image") != y.get("image"))
        {
            return true;
        }
    }
    let seccomp = |pod: &Value| -> Vec<(String, Value)> {
        pod.pointer("/metadata/annotations")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter(|(k, _)| k.starts_with("container.seccomp.security.alpha.kubernetes.io/"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    if seccomp(new) != seccomp(old) {
        return true;
    }
    let old_ephemeral = list(old, "ephemeralContainers");
    list(new, "ephemeralContainers").iter().any(|container| {
        !old_ephemeral.iter().any(|o| {
            o.get("name") == container.get("name") && o.get("image") == container.get("image")
        })
    })
}

impl ApiCore {
    pub(super) async fn validate_pod_security(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
    ) -> ApiResult<Vec<String>> {
        let def = attributes.def;
        let Some(object) = object else {
            return Ok(Vec::new());
        };
        if !matches!(attributes.operation, Operation::Create | Operation::Update) {
            return Ok(Vec::new());
        }
        if def.group.is_empty() && def.resource == "namespaces" {
            return self.validate_namespace_labels(attributes, object).await;
        }
        let is_pod = def.group.is_empty() && def.resource == "pods";
        if is_pod && IGNORED_SUBRESOURCES.contains(&attributes.subresource) {
            return Ok(Vec::new());
        }
        let template = if is_pod {
            None
        } else if attributes.subresource.is_empty() {
            match pod_template(def, object) {
                Some(template) => Some(template),
                None => return Ok(Vec::new()),
            }
        } else {
            return Ok(Vec::new());
        };
        if is_pod && attributes.operation == Operation::Update {
            if let Some(old) = attributes.old {
                if !significant_update(object, old) {
                    return Ok(Vec::new());
                }
            }
        }
        let Some(namespace) = attributes.namespace else {
            return Ok(Vec::new());
        };
        let configuration = self.admission_plugins.pod_security();
        // Upstream's exemptions: the namespace, then (for pods) the
        // requesting user, then the runtime class.
        if configuration.exempts_namespace(namespace)
            || (is_pod && configuration.exempts_user(&attributes.user.name))
        {
            return Ok(Vec::new());
        }
        let Ok(namespace) = self.namespace_object(namespace).await else {
            return Ok(Vec::new());
        };
        let (enforce, warn, _) = namespace_policy(&namespace, &configuration.defaults);
        let (metadata, spec) = match template {
            Some(template) => (
                template.get("metadata").unwrap_or(&Value::Null),
                template.get("spec").unwrap_or(&Value::Null),
            ),
            None => (
                object.get("metadata").unwrap_or(&Value::Null),
                object.get("spec").unwrap_or(&Value::Null),
            ),
        };
        if configuration.exempts_runtime_class(spec) {
            return Ok(Vec::new());
        }
        if is_pod {
            let violations = checks::evaluate(enforce.level, metadata, spec);
            if !violations.is_empty() {
                return Err(forbidden(
                    attributes,
                    Some(object),
                    &format!(
                        "violates PodSecurity {:?}: {}",
                        enforce.shown(),
                        checks::described(&violations)
                    ),
                ));
            }
        }
        let violations = checks::evaluate(warn.level, metadata, spec);
        if violations.is_empty() {
            return Ok(Vec::new());
        }
        Ok(vec![format!(
            "would violate PodSecurity {:?}: {}",
            warn.shown(),
            checks::described(&violations)
        )])
    }

    /// A namespace's labels must name levels and versions; tightening its
    /// enforce level warns about the pods that would not be admitted now.
    async fn validate_namespace_labels(
        &self,
        attributes: &Attributes<'_>,
        namespace: &Value,
    ) -> ApiResult<Vec<String>> {
        if !attributes.subresource.is_empty() {
            return Ok(Vec::new());
        }
        let configuration = self.admission_plugins.pod_security();
        let defaults = &configuration.defaults;
        let (enforce, _, errors) = namespace_policy(namespace, defaults);
        let old_policy = attributes.old.map(|old| namespace_policy(old, defaults));
        if !errors.is_empty() {
            let unchanged = old_policy
                .as_ref()
                .is_some_and(|(_, _, old_errors)| !old_errors.is_empty() && *old_errors == errors);
            if !unchanged {
                return Err(ApiError::invalid("", "Namespace", attributes.name, errors));
            }
        }
        let Some((old_enforce, _, _)) = old_policy else {
            return Ok(Vec::new());
        };
        let tightened = enforce != old_enforce
            && enforce.level != Level::Privileged
            && !(enforce.version == old_enforce.version && enforce.level <= old_enforce.level);
        if !tightened || configuration.exempts_namespace(attributes.name) {
            return Ok(Vec::new());
        }
        self.existing_pod_warnings(attributes.name, &enforce).await
    }

    /// upstream's warnings for the pods a new enforce level would refuse:
    /// a header, then one line per distinct set of reasons.
    async fn existing_pod_warnings(
        &self,
        namespace: &str,
        enforce: &LevelVersion,
    ) -> ApiResult<Vec<String>> {
        let pods = self.resolve("", "v1", "pods")?;
        let cache = self.watch_cache(&pods).await?;
        let (listed, _) = cache.list(&pods.key_prefix(&self.prefix, Some(namespace)));
        let mut by_reasons: std::collections::BTreeMap<String, Vec<String>> = Default::default();
        let configuration = self.admission_plugins.pod_security();
        for (_, pod) in &listed {
            let spec = pod.get("spec").unwrap_or(&Value::Null);
            if configuration.exempts_runtime_class(spec) {
                continue;
            }
            let violations = checks::evaluate(
                enforce.level,
                pod.get("metadata").unwrap_or(&Value::Null),
                pod.get("spec").unwrap_or(&Value::Null),
            );
            if !violations.is_empty() {
                let name = crate::object::name(pod).to_string();
                by_reasons
                    .entry(checks::reasons(&violations))
                    .or_default()
                    .push(name);
            }
        }
        if by_reasons.is_empty() {
            return Ok(Vec::new());
        }
        let mut lines: Vec<String> = by_reasons
            .into_iter()
            .map(|(reasons, mut names)| {
                names.sort();
                match names.len() {
                    1 => format!("{}: {reasons}", names[0]),
                    2 => format!("{} (and 1 other pod): {reasons}", names[0]),
                    n => format!("{} (and {} other pods): {reasons}", names[0], n - 1),
                }
            })
            .collect();
        lines.sort();
        let mut warnings = vec![format!(
            "existing pods in namespace {namespace:?} violate the new PodSecurity enforce level {:?}",
            enforce.shown()
        )];
        warnings.extend(lines);
        Ok(warnings)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn labels_choose_levels_and_invalid_ones_fail_as_upstream() {
        let namespace = json!({"metadata": {"labels": {
            "pod-security.kubernetes.io/enforce": "strict",
            "pod-security.kubernetes.io/enforce-version": "v1.01",
            "pod-security.kubernetes.io/warn": "baseline",
            "pod-security.kubernetes.io/warn-version": "v1.32"
        }}});
        let (enforce, warn, errors) =
            namespace_policy(&namespace, &configuration::Defaults::default());
        assert_eq!(enforce.shown(), "restricted:latest");
        assert_eq!(warn.shown(), "baseline:v1.32");
        let rendered: Vec<String> = errors.iter().map(FieldError::render).collect();
        assert_eq!(
            rendered,
            [
                r#"metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted"#,
                r#"metadata.labels[pod-security.kubernetes.io/enforce-version]: Invalid value: "v1.01": must be "latest" or "v1.x""#,
            ]
        );
        assert!(valid_version("v1.0") && valid_version("v1.32") && !valid_version("1.32"));
    }

    #[test]
    fn only_significant_pod_updates_are_checked() {
        let pod = json!({"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
        let mut relabelled = pod.clone();
        relabelled["metadata"]["labels"]["a"] = json!("c");
        assert!(!significant_update(&relabelled, &pod));
        let mut reimaged = pod.clone();
        reimaged["spec"]["containers"][0]["image"] = json!("nginx:2");
        assert!(significant_update(&reimaged, &pod));
    }
}
