//! ServiceAccount: a new pod runs as its namespace's `default` account
//! unless it names one, which must exist; it gets the projected
//! `kube-api-access-*` volume (a bound token, the `kube-root-ca.crt` CA and
//! its namespace) mounted into every container and init container, unless
//! the pod or its account turns automounting off; it inherits the
//! account's image pull secrets when it has none. Mirror pods (a kubelet's
//! static pods) may reference no account, secret or token.

use std::time::Duration;

use serde_json::{json, Value};

use super::super::attributes::{Attributes, Operation};
use super::refusal::forbidden;
use crate::auth::UserInfo;
use crate::error::{ApiResult, StatusReason};
use crate::verbs::ApiCore;

const DEFAULT_ACCOUNT: &str = "default";
const MIRROR_ANNOTATION: &str = "kubernetes.io/config.mirror";
const VOLUME_PREFIX: &str = "kube-api-access-";
/// Where containers find their token, CA and namespace.
pub const TOKEN_MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
/// A bound token's lifetime as the kubelet requests it (an hour and
/// seven seconds: upstream's warn-only marker).
const TOKEN_EXPIRATION_SECONDS: i64 = 3607;
/// How often the `default` account is looked for before a pod is refused:
/// a pod created right after its namespace waits for the controller.
const DEFAULT_ACCOUNT_ATTEMPTS: usize = 10;

fn is_mirror(pod: &Value) -> bool {
    pod.pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .is_some_and(|a| a.contains_key(MIRROR_ANNOTATION))
}

impl ApiCore {
    pub(super) async fn admit_service_account(
        &self,
        attributes: &Attributes<'_>,
        pod: Option<&mut Value>,
    ) -> ApiResult<()> {
        if !super::refusal::is_core(attributes, "pods") || attributes.operation != Operation::Create
        {
            return Ok(());
        }
        let Some(pod) = pod else {
            return Ok(());
        };
        if is_mirror(pod) {
            return Ok(());
        }
        let named = pod
            .pointer("/spec/serviceAccountName")
            .and_then(Value::as_str)
            .unwrap_or("");
        let account_name = if named.is_empty() {
            DEFAULT_ACCOUNT.to_string()
        } else {
            named.to_string()
        };
        let account = self
            .service_account(attributes, Some(pod), &account_name)
            .await?;
        let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
            return Ok(());
        };
        spec.insert("serviceAccountName".into(), json!(account_name));
        // The deprecated field repeats it, as the v1 encoding writes it.
        spec.insert("serviceAccount".into(), json!(account_name));
        let automount = spec
            .get("automountServiceAccountToken")
            .and_then(Value::as_bool)
            .or_else(|| {
                account
                    .get("automountServiceAccountToken")
                    .and_then(Value::as_bool)
            })
            .unwrap_or(true);
        if automount {
            mount_token(spec);
        }
        let has_pull_secrets = spec
            .get("imagePullSecrets")
            .and_then(Value::as_array)
            .is_some_and(|s| !s.is_empty());
        let inherited: Vec<Value> = account
            .get("imagePullSecrets")
            .and_then(Value::as_array)
            .map(|secrets| {
                secrets
                    .iter()
                    .map(|s| json!({"name": s.get("name").cloned().unwrap_or(json!(""))}))
                    .collect()
            })
            .unwrap_or_default();
        if !has_pull_secrets && !inherited.is_empty() {
            spec.insert("imagePullSecrets".into(), Value::Array(inherited));
        }
        Ok(())
    }

    pub(super) async fn validate_service_account(
        &self,
        attributes: &Attributes<'_>,
        pod: Option<&Value>,
    ) -> ApiResult<()> {
        if !super::refusal::is_core(attributes, "pods") || attributes.operation != Operation::Create
        {
            return Ok(());
        }
        let Some(pod) = pod else {
            return Ok(());
        };
        if is_mirror(pod) {
            return mirror_refusal(pod)
                .map_or(Ok(()), |why| Err(forbidden(attributes, Some(pod), why)));
        }
        let name = pod
            .pointer("/spec/serviceAccountName")
            .and_then(Value::as_str)
            .unwrap_or("");
        if name.is_empty() {
            let namespace = attributes.namespace.unwrap_or_default();
            let pod_name = pod
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or("");
            return Err(forbidden(
                attributes,
                Some(pod),
                &format!("no service account specified for pod {namespace}/{pod_name}"),
            ));
        }
        self.service_account(attributes, Some(pod), name)
            .await
            .map(|_| ())
    }

    /// The pod's account: from the watch cache, else storage; the
    /// `default` one is waited for a while, as its controller may not have
    /// created it yet.
    async fn service_account(
        &self,
        attributes: &Attributes<'_>,
        pod: Option<&Value>,
        name: &str,
    ) -> ApiResult<Value> {
        let namespace = attributes.namespace.unwrap_or_default();
        let accounts = self.resolve("", "v1", "serviceaccounts")?;
        if let Some(account) = self.cached_copy(&accounts, Some(namespace), name) {
            return Ok((*account).clone());
        }
        let attempts = if name == DEFAULT_ACCOUNT {
            DEFAULT_ACCOUNT_ATTEMPTS
        } else {
            1
        };
        let mut last = None;
        for attempt in 0..attempts {
            if attempt > 0 {
                let pause = 100 + rand::random_range(0..100);
                tokio::time::sleep(Duration::from_millis(pause)).await;
            }
            match self
                .get(&UserInfo::system(), &accounts, Some(namespace), name, "")
                .await
            {
                Ok(account) => return Ok(account),
                Err(e) if e.reason == StatusReason::NotFound => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        let cause = last
            .map(|_| format!("serviceaccount {name:?} not found"))
            .unwrap_or_default();
        Err(forbidden(
            attributes,
            pod,
            &format!("error looking up service account {namespace}/{name}: {cause}"),
        ))
    }
}

/// Why a mirror pod may not be created, if it may not.
fn mirror_refusal(pod: &Value) -> Option<&'static str> {
    let spec = pod.get("spec")?;
    if spec
        .get("serviceAccountName")
        .and_then(Value::as_str)
        .is_some_and(|n| !n.is_empty())
    {
        return Some("a mirror pod may not reference service accounts");
    }
    if super::pod_references::references_secrets(spec) {
        return Some("a mirror pod may not reference secrets");
    }
    let projects_token = spec
        .get("volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v.pointer("/projected/sources").and_then(Value::as_array))
        .flatten()
        .any(|source| source.get("serviceAccountToken").is_some());
    projects_token.then_some("a mirror pod may not use ServiceAccountToken volume projections")
}

/// Mounts the token volume into every init container and container that
/// has nothing at the mount path yet, adding the volume unless the pod
/// already has one of that name prefix.
fn mount_token(spec: &mut serde_json::Map<String, Value>) {
    let existing = spec
        .get("volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v.get("name").and_then(Value::as_str))
        .find(|name| name.starts_with(VOLUME_PREFIX))
        .map(str::to_string);
    let volume_name = existing
        .clone()
        .unwrap_or_else(|| format!("{VOLUME_PREFIX}{}", crate::object::random_suffix()));
    let mut mounted = false;
    for key in ["initContainers", "containers"] {
        let Some(containers) = spec.get_mut(key).and_then(Value::as_array_mut) else {
            continue;
        };
        for container in containers {
            let Some(container) = container.as_object_mut() else {
                continue;
            };
            let mounts = container.entry("volumeMounts").or_insert_with(|| json!([]));
            if mounts.is_null() {
                *mounts = json!([]);
            }
            let Some(mounts) = mounts.as_array_mut() else {
                continue;
            };
            if mounts
                .iter()
                .any(|m| m.get("mountPath").and_then(Value::as_str) == Some(TOKEN_MOUNT_PATH))
            {
                continue;
            }
            mounts.push(json!({
                "name": volume_name,
                "readOnly": true,
                "mountPath": TOKEN_MOUNT_PATH,
            }));
            mounted = true;
        }
    }
    if existing.is_some() || !mounted {
        return;
    }
    let volumes = spec.entry("volumes").or_insert_with(|| json!([]));
    if volumes.is_null() {
        *volumes = json!([]);
    }
    if let Some(volumes) = volumes.as_array_mut() {
        volumes.push(json!({
            "name": volume_name,
            "projected": {
                "sources": [
                    {"serviceAccountToken": {"expirationSeconds": TOKEN_EXPIRATION_SECONDS, "path": "token"}},
                    {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                    {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}
                ],
                "defaultMode": 420
            }
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(value: Value) -> serde_json::Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn the_token_is_mounted_into_every_container_once() {
        let mut pod = spec(json!({
            "initContainers": [{"name": "init", "image": "busybox"}],
            "containers": [
                {"name": "a", "image": "nginx"},
                {"name": "b", "image": "nginx", "volumeMounts": [{"name": "own", "mountPath": TOKEN_MOUNT_PATH}]}
            ],
            "ephemeralContainers": [{"name": "debug", "image": "busybox"}]
        }));
        mount_token(&mut pod);
        let volume = &pod["volumes"][0];
        let name = volume["name"].as_str().unwrap_or_default();
        assert!(
            name.len() == 21
                && name.starts_with(VOLUME_PREFIX)
                && name[16..]
                    .chars()
                    .all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c)),
            "{name}"
        );
        assert_eq!(volume["projected"]["defaultMode"], 420);
        assert_eq!(
            volume["projected"]["sources"][0],
            json!({"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}})
        );
        let mount = json!({"name": name, "readOnly": true, "mountPath": TOKEN_MOUNT_PATH});
        assert_eq!(pod["initContainers"][0]["volumeMounts"], json!([mount]));
        assert_eq!(pod["containers"][0]["volumeMounts"], json!([mount]));
        assert_eq!(
            pod["containers"][1]["volumeMounts"]
                .as_array()
                .map(Vec::len),
            Some(1)
        );
        assert!(pod["ephemeralContainers"][0].get("volumeMounts").is_none());
    }

    #[test]
    fn no_volume_when_every_container_mounts_the_path_itself() {
        let mut pod = spec(json!({"containers": [
            {"name": "a", "image": "nginx", "volumeMounts": [{"name": "own", "mountPath": TOKEN_MOUNT_PATH}]}
        ]}));
        mount_token(&mut pod);
        assert!(pod.get("volumes").is_none());
    }

    #[test]
    fn mirror_pods_reference_no_account_secret_or_token() {
        let refusal = |spec: Value| mirror_refusal(&json!({"spec": spec}));
        assert_eq!(refusal(json!({"containers": []})), None);
        assert_eq!(
            refusal(json!({"serviceAccountName": "x"})),
            Some("a mirror pod may not reference service accounts")
        );
        assert_eq!(
            refusal(json!({"containers": [{"envFrom": [{"secretRef": {"name": "s"}}]}]})),
            Some("a mirror pod may not reference secrets")
        );
        assert_eq!(
            refusal(
                json!({"volumes": [{"name": "t", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}}]})
            ),
            Some("a mirror pod may not use ServiceAccountToken volume projections")
        );
    }
}
