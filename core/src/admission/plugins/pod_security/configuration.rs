//! PodSecurity's configuration, from the admission configuration file
//! (pod-security.admission.config.k8s.io PodSecurityConfiguration): the
//! levels of namespaces without labels, and the users, namespaces and
//! runtime classes exempt from the standards. Validated as upstream's
//! ValidatePodSecurityConfiguration words it.

use serde_json::Value;

use super::checks::Level;
use crate::error::FieldError;

/// A level and the version label it was chosen with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::admission::plugins) struct LevelVersion {
    pub(super) level: Level,
    pub(super) version: String,
}

impl LevelVersion {
    pub(in crate::admission::plugins) fn shown(&self) -> String {
        let level = match self.level {
            Level::Privileged => "privileged",
            Level::Baseline => "baseline",
            Level::Restricted => "restricted",
        };
        format!("{level}:{}", self.version)
    }
}

/// `latest` or `v1.<minor>` without a leading zero.
pub(super) fn valid_version(text: &str) -> bool {
    if text == "latest" {
        return true;
    }
    let Some(minor) = text.strip_prefix("v1.") else {
        return false;
    };
    !minor.is_empty()
        && minor.chars().all(|c| c.is_ascii_digit())
        && (minor == "0" || !minor.starts_with('0'))
}

const API_VERSIONS: [&str; 3] = [
    "pod-security.admission.config.k8s.io/v1",
    "pod-security.admission.config.k8s.io/v1beta1",
    "pod-security.admission.config.k8s.io/v1alpha1",
];

/// A namespace's levels when it has no labels: privileged, latest, unless
/// configured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::admission::plugins) struct Defaults {
    pub enforce: LevelVersion,
    pub audit: LevelVersion,
    pub warn: LevelVersion,
}

impl Default for Defaults {
    fn default() -> Self {
        let privileged = LevelVersion {
            level: Level::Privileged,
            version: "latest".to_string(),
        };
        Defaults {
            enforce: privileged.clone(),
            audit: privileged.clone(),
            warn: privileged,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodSecurityConfiguration {
    pub(in crate::admission::plugins) defaults: Defaults,
    pub(super) exempt_usernames: Vec<String>,
    pub(super) exempt_namespaces: Vec<String>,
    pub(super) exempt_runtime_classes: Vec<String>,
}

impl PodSecurityConfiguration {
    /// Reads a PodSecurityConfiguration document; the errors in
    /// upstream's words.
    pub fn parse(document: &Value) -> Result<Self, Vec<String>> {
        let api_version = document
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or("");
        let kind = document.get("kind").and_then(Value::as_str).unwrap_or("");
        if !API_VERSIONS.contains(&api_version) || kind != "PodSecurityConfiguration" {
            return Err(vec![format!(
                "expected a pod-security.admission.config.k8s.io PodSecurityConfiguration, got {api_version:?}, kind {kind:?}"
            )]);
        }
        let mut errors = Vec::new();
        let defaults = document.get("defaults").unwrap_or(&Value::Null);
        let mut mode = |mode: &str| {
            let text = |key: &str| defaults.get(key).and_then(Value::as_str);
            let level = match text(mode) {
                None => Level::Privileged,
                Some(given) => Level::parse(given).unwrap_or_else(|| {
                    errors.push(FieldError::invalid(
                        format!("defaults.{mode}"),
                        given,
                        "must be one of privileged, baseline, restricted",
                    ));
                    Level::Privileged
                }),
            };
            let version_key = format!("{mode}-version");
            let version = match text(&version_key) {
                None => "latest".to_string(),
                Some(given) if valid_version(given) => given.to_string(),
                Some(given) => {
                    errors.push(FieldError::invalid(
                        format!("defaults.{version_key}"),
                        given,
                        "must be \"latest\" or \"v1.x\"",
                    ));
                    "latest".to_string()
                }
            };
            LevelVersion { level, version }
        };
        let defaults = Defaults {
            enforce: mode("enforce"),
            audit: mode("audit"),
            warn: mode("warn"),
        };
        let exemptions = document.get("exemptions").unwrap_or(&Value::Null);
        let list =
            |key: &str, errors: &mut Vec<FieldError>, problems: &dyn Fn(&str) -> Vec<String>| {
                let mut seen: Vec<String> = Vec::new();
                for (i, item) in crate::object::items_at(exemptions, &format!("/{key}"))
                    .iter()
                    .enumerate()
                {
                    let path = format!("exemptions.{key}[{i}]");
                    let text = item.as_str().unwrap_or("");
                    for problem in problems(text) {
                        errors.push(FieldError::invalid(path.clone(), text, &problem));
                    }
                    if seen.iter().any(|s| s == text) {
                        errors.push(FieldError::duplicate(path, text));
                    } else {
                        seen.push(text.to_string());
                    }
                }
                seen
            };
        let exempt_usernames = list("usernames", &mut errors, &|name: &str| {
            if name.is_empty() {
                vec!["username must not be empty".to_string()]
            } else {
                Vec::new()
            }
        });
        let exempt_namespaces = list("namespaces", &mut errors, &|name: &str| {
            crate::validate::object_meta::name_problems(crate::kinds::NameRule::Label, name, false)
        });
        let exempt_runtime_classes = list("runtimeClasses", &mut errors, &|name: &str| {
            crate::validate::object_meta::name_problems(
                crate::kinds::NameRule::Subdomain,
                name,
                false,
            )
        });
        if !errors.is_empty() {
            return Err(errors.iter().map(FieldError::render).collect());
        }
        Ok(PodSecurityConfiguration {
            defaults,
            exempt_usernames,
            exempt_namespaces,
            exempt_runtime_classes,
        })
    }

    pub(super) fn exempts_namespace(&self, namespace: &str) -> bool {
        self.exempt_namespaces.iter().any(|n| n == namespace)
    }

    pub(super) fn exempts_user(&self, username: &str) -> bool {
        self.exempt_usernames.iter().any(|n| n == username)
    }

    pub(super) fn exempts_runtime_class(&self, spec: &Value) -> bool {
        spec.get("runtimeClassName")
            .and_then(Value::as_str)
            .is_some_and(|class| self.exempt_runtime_classes.iter().any(|c| c == class))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn defaults_and_exemptions_are_read() {
        let configuration = PodSecurityConfiguration::parse(&json!({
            "apiVersion": "pod-security.admission.config.k8s.io/v1",
            "kind": "PodSecurityConfiguration",
            "defaults": {"enforce": "baseline", "enforce-version": "v1.30", "warn": "restricted"},
            "exemptions": {"usernames": ["ci"], "namespaces": ["kube-system"], "runtimeClasses": ["kata"]}
        }))
        .expect("a valid configuration");
        assert_eq!(configuration.defaults.enforce.shown(), "baseline:v1.30");
        assert_eq!(configuration.defaults.warn.shown(), "restricted:latest");
        assert_eq!(configuration.defaults.audit.shown(), "privileged:latest");
        assert!(configuration.exempts_user("ci") && !configuration.exempts_user("dev"));
        assert!(configuration.exempts_namespace("kube-system"));
        assert!(configuration.exempts_runtime_class(&json!({"runtimeClassName": "kata"})));
    }

    #[test]
    fn invalid_configurations_are_worded_as_upstream() {
        let errors = PodSecurityConfiguration::parse(&json!({
            "apiVersion": "pod-security.admission.config.k8s.io/v1",
            "kind": "PodSecurityConfiguration",
            "defaults": {"enforce": "strict", "warn-version": "v2"},
            "exemptions": {"usernames": [""], "namespaces": ["Bad_NS", "ok", "ok"]}
        }))
        .expect_err("invalid");
        assert_eq!(
            errors[0],
            r#"defaults.enforce: Invalid value: "strict": must be one of privileged, baseline, restricted"#
        );
        assert_eq!(
            errors[1],
            r#"defaults.warn-version: Invalid value: "v2": must be "latest" or "v1.x""#
        );
        assert_eq!(
            errors[2],
            r#"exemptions.usernames[0]: Invalid value: "": username must not be empty"#
        );
        assert!(
            errors[3].starts_with(r#"exemptions.namespaces[0]: Invalid value: "Bad_NS": "#),
            "{errors:?}"
        );
        assert_eq!(
            errors[4],
            r#"exemptions.namespaces[2]: Duplicate value: "ok""#
        );
    }
}
