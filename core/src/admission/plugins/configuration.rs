//! `--admission-control-config-file`: an AdmissionConfiguration
//! (apiserver.config.k8s.io/v1, or apiserver.k8s.io/v1alpha1) naming each
//! plugin's configuration inline or by a path relative to the file.
//! Capstan reads PodSecurity's; a configuration for a plugin whose
//! settings it does not read is refused rather than silently ignored.

use std::path::Path;

use serde_json::Value;

use super::pod_security::PodSecurityConfiguration;

const API_VERSIONS: [&str; 2] = ["apiserver.config.k8s.io/v1", "apiserver.k8s.io/v1alpha1"];

/// What the file configures.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Configurations {
    pub pod_security: PodSecurityConfiguration,
}

/// A YAML or JSON document as JSON.
fn read_document(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        format!("unable to read admission control configuration from {path:?} [{e}]")
    })?;
    serde_yaml::from_str::<Value>(&text)
        .map_err(|e| format!("unable to read admission control configuration from {path:?} [{e}]"))
}

/// Reads the configuration file; errors in upstream's words where it has
/// them.
pub fn read(path: &Path) -> Result<Configurations, Vec<String>> {
    let document = read_document(path).map_err(|e| vec![e])?;
    let api_version = document
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let kind = document.get("kind").and_then(Value::as_str).unwrap_or("");
    if !API_VERSIONS.contains(&api_version) || kind != "AdmissionConfiguration" {
        return Err(vec![format!(
            "unable to read admission control configuration from {path:?}: expected an apiserver.config.k8s.io/v1 AdmissionConfiguration, got {api_version:?}, kind {kind:?}"
        )]);
    }
    let base = path.parent().unwrap_or(Path::new("."));
    let mut configurations = Configurations::default();
    let mut errors = Vec::new();
    for plugin in crate::object::items_at(&document, "/plugins") {
        let name = plugin.get("name").and_then(Value::as_str).unwrap_or("");
        let configuration = match (plugin.get("configuration"), plugin.get("path")) {
            (Some(inline), _) if !inline.is_null() => inline.clone(),
            (_, Some(Value::String(relative))) => match read_document(&base.join(relative)) {
                Ok(document) => document,
                Err(e) => {
                    errors.push(e);
                    continue;
                }
            },
            _ => continue,
        };
        match name {
            "PodSecurity" => match PodSecurityConfiguration::parse(&configuration) {
                Ok(pod_security) => configurations.pod_security = pod_security,
                Err(problems) => errors.extend(
                    problems
                        .into_iter()
                        .map(|p| format!("admission plugin \"PodSecurity\": {p}")),
                ),
            },
            other => errors.push(format!(
                "admission plugin {other:?}: capstan does not read this plugin's configuration"
            )),
        }
    }
    if errors.is_empty() {
        Ok(configurations)
    } else {
        Err(errors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_and_path_configurations_are_read() {
        let dir = tempfile::tempdir().expect("a directory");
        std::fs::write(
            dir.path().join("pod-security.yaml"),
            "apiVersion: pod-security.admission.config.k8s.io/v1\nkind: PodSecurityConfiguration\ndefaults:\n  enforce: baseline\n",
        )
        .expect("written");
        let file = dir.path().join("admission.yaml");
        std::fs::write(
            &file,
            "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  path: pod-security.yaml\n",
        )
        .expect("written");
        let configured = read(&file).expect("a valid file");
        assert_eq!(
            configured.pod_security.defaults.enforce.shown(),
            "baseline:latest"
        );

        std::fs::write(
            &file,
            "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: EventRateLimit\n  configuration: {}\n",
        )
        .expect("written");
        assert_eq!(
            read(&file).expect_err("refused"),
            [
                r#"admission plugin "EventRateLimit": capstan does not read this plugin's configuration"#
            ]
        );
    }
}
