//! The Local APIServices, as kube-aggregator's autoregister and
//! crdregistration controllers keep them: one `<version>.<group>` for every
//! built-in group/version in upstream's priority table (labelled
//! `onstart`) and for every served version of a CustomResourceDefinition
//! (labelled `true`, removed when no definition serves it any more).
//! Built-in group/versions come from the registry, which every replica
//! shares; definitions' from storage, so a replica that has not yet served
//! a new definition does not remove its APIService. Writes are
//! compare-and-swap; a conflict or a create another replica won waits for
//! the next pass.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::auth::UserInfo;
use crate::kinds::apiregistration::AUTOMANAGED_LABEL;
use crate::object;
use crate::registry::Origin;
use crate::verbs::{ApiCore, DeleteOptions, ListOptions, View, WriteOptions};

const CONTROLLER: &str = "apiservice-registration";
/// How often APIServices are checked besides registry changes (a user or
/// another replica may have changed them).
const RESYNC: Duration = Duration::from_secs(30);

/// Upstream's priorities (group, version, groupPriorityMinimum,
/// versionPriority) of the built-in group/versions that get a Local
/// APIService; the group/versions Capstan serves pick theirs from here.
const PRIORITIES: &[(&str, &str, i64, i64)] = &[
    ("", "v1", 18000, 1),
    ("apiregistration.k8s.io", "v1", 18000, 15),
    ("apps", "v1", 17800, 15),
    ("events.k8s.io", "v1", 17750, 15),
    ("events.k8s.io", "v1beta1", 17750, 5),
    ("authentication.k8s.io", "v1", 17700, 15),
    ("authentication.k8s.io", "v1beta1", 17700, 9),
    ("authentication.k8s.io", "v1alpha1", 17700, 1),
    ("authorization.k8s.io", "v1", 17600, 15),
    ("autoscaling", "v2", 17500, 30),
    ("autoscaling", "v1", 17500, 15),
    ("autoscaling", "v2beta1", 17500, 9),
    ("autoscaling", "v2beta2", 17500, 1),
    ("batch", "v1", 17400, 15),
    ("batch", "v1beta1", 17400, 9),
    ("batch", "v2alpha1", 17400, 9),
    ("certificates.k8s.io", "v1", 17300, 15),
    ("certificates.k8s.io", "v1beta1", 17300, 9),
    ("certificates.k8s.io", "v1alpha1", 17300, 1),
    ("networking.k8s.io", "v1", 17200, 15),
    ("networking.k8s.io", "v1beta1", 17200, 9),
    ("policy", "v1", 17100, 15),
    ("policy", "v1beta1", 17100, 9),
    ("rbac.authorization.k8s.io", "v1", 17000, 15),
    ("storage.k8s.io", "v1", 16800, 15),
    ("storage.k8s.io", "v1beta1", 16800, 9),
    ("storage.k8s.io", "v1alpha1", 16800, 1),
    ("apiextensions.k8s.io", "v1", 16700, 15),
    ("admissionregistration.k8s.io", "v1", 16700, 15),
    ("admissionregistration.k8s.io", "v1beta1", 16700, 12),
    ("admissionregistration.k8s.io", "v1alpha1", 16700, 9),
    ("scheduling.k8s.io", "v1", 16600, 15),
    ("coordination.k8s.io", "v1", 16500, 15),
    ("coordination.k8s.io", "v1beta1", 16500, 13),
    ("coordination.k8s.io", "v1alpha2", 16500, 12),
    ("node.k8s.io", "v1", 16300, 15),
    ("node.k8s.io", "v1beta1", 16300, 9),
    ("node.k8s.io", "v1alpha1", 16300, 1),
    ("discovery.k8s.io", "v1", 16200, 15),
    ("discovery.k8s.io", "v1beta1", 16200, 12),
    ("resource.k8s.io", "v1beta2", 16200, 15),
    ("resource.k8s.io", "v1beta1", 16200, 9),
    ("resource.k8s.io", "v1alpha3", 16200, 1),
    ("flowcontrol.apiserver.k8s.io", "v1", 16100, 21),
    ("flowcontrol.apiserver.k8s.io", "v1beta3", 16100, 18),
    ("flowcontrol.apiserver.k8s.io", "v1beta2", 16100, 15),
    ("flowcontrol.apiserver.k8s.io", "v1beta1", 16100, 12),
    ("flowcontrol.apiserver.k8s.io", "v1alpha1", 16100, 9),
    ("internal.apiserver.k8s.io", "v1alpha1", 16000, 9),
    ("storagemigration.k8s.io", "v1alpha1", 15800, 9),
];

/// A CustomResourceDefinition group/version's priorities.
const CUSTOM_PRIORITIES: (i64, i64) = (1000, 100);

/// The (groupPriorityMinimum, versionPriority) of a group/version this
/// server serves itself: upstream's table for built-in ones, a custom
/// resource definition's otherwise.
pub fn local_priorities(group: &str, version: &str) -> (i64, i64) {
    PRIORITIES
        .iter()
        .find(|(g, v, _, _)| *g == group && *v == version)
        .map(|(_, _, group_priority, version_priority)| (*group_priority, *version_priority))
        .unwrap_or(CUSTOM_PRIORITIES)
}

pub async fn run(core: Arc<ApiCore>) {
    let mut changes = core.registry.subscribe();
    loop {
        if let Err(e) = sync(&core).await {
            tracing::warn!(controller = CONTROLLER, error = %e, "registering APIServices failed");
        }
        tokio::select! {
            _ = changes.recv() => {}
            _ = tokio::time::sleep(RESYNC) => {}
        }
    }
}

/// The Local APIService a group/version should have: its spec and label.
struct Wanted {
    spec: Value,
    label: &'static str,
}

fn wanted(
    group: &str,
    version: &str,
    (group_priority, version_priority): (i64, i64),
    label: &'static str,
) -> Wanted {
    Wanted {
        spec: json!({"group": group, "version": version,
                     "groupPriorityMinimum": group_priority, "versionPriority": version_priority}),
        label,
    }
}

/// Every Local APIService there should be, by name.
async fn desired(core: &ApiCore) -> crate::ApiResult<BTreeMap<String, Wanted>> {
    let mut desired = BTreeMap::new();
    let registry = core.registry.snapshot();
    for def in registry.resources() {
        if def.origin != Origin::BuiltIn || def.group == "apiregistration.k8s.io" {
            continue;
        }
        let known = PRIORITIES
            .iter()
            .find(|(g, v, _, _)| *g == def.group && *v == def.version);
        if let Some((group, version, group_priority, version_priority)) = known {
            desired.insert(
                format!("{version}.{group}"),
                wanted(
                    group,
                    version,
                    (*group_priority, *version_priority),
                    "onstart",
                ),
            );
        }
    }
    let definitions = core.resolve("apiextensions.k8s.io", "v1", "customresourcedefinitions")?;
    let list = core
        .list(
            &UserInfo::system(),
            &definitions,
            None,
            &ListOptions::default(),
        )
        .await?;
    for definition in &list.items {
        let group = definition
            .pointer("/spec/group")
            .and_then(Value::as_str)
            .unwrap_or("");
        for version in object::items_at(definition, "/spec/versions") {
            if version.get("served") != Some(&Value::Bool(true)) {
                continue;
            }
            let name = version.get("name").and_then(Value::as_str).unwrap_or("");
            desired
                .entry(format!("{name}.{group}"))
                .or_insert_with(|| wanted(group, name, CUSTOM_PRIORITIES, "true"));
        }
    }
    Ok(desired)
}

fn label_of(api_service: &Value) -> Option<&str> {
    api_service
        .pointer("/metadata/labels")
        .and_then(|l| l.get(AUTOMANAGED_LABEL))
        .and_then(Value::as_str)
}

/// Creates the missing Local APIServices, puts back the spec of the ones
/// Capstan manages, and removes definitions' ones nothing serves.
async fn sync(core: &ApiCore) -> crate::ApiResult<()> {
    let system = UserInfo::system();
    let def = core.resolve("apiregistration.k8s.io", "v1", "apiservices")?;
    let desired = desired(core).await?;
    let existing = core
        .list(&system, &def, None, &ListOptions::default())
        .await?;
    let opts = WriteOptions {
        field_manager: "kube-apiserver".to_string(),
        ..Default::default()
    };
    let mut seen = std::collections::BTreeSet::new();
    for current in &existing.items {
        let name = object::name(current);
        seen.insert(name.to_string());
        let Some(label) = label_of(current) else {
            // Not Capstan's: a user's APIService of the same name wins.
            continue;
        };
        let result = match desired.get(name) {
            Some(wanted) if current.get("spec") != Some(&wanted.spec) => {
                let mut updated = (**current).clone();
                updated["spec"] = wanted.spec.clone();
                core.update(&system, &def, None, name, updated, &opts, View::Main)
                    .await
                    .map(|_| ())
            }
            Some(_) => Ok(()),
            None if label == "true" => core
                .delete(&system, &def, None, name, &DeleteOptions::default())
                .await
                .map(|_| ()),
            None => Ok(()),
        };
        super::tolerate_races(result)?;
    }
    for (name, wanted) in desired.iter().filter(|(name, _)| !seen.contains(*name)) {
        let api_service = json!({
            "apiVersion": "apiregistration.k8s.io/v1",
            "kind": "APIService",
            "metadata": {"name": name, "labels": {AUTOMANAGED_LABEL: wanted.label}},
            "spec": wanted.spec,
        });
        super::tolerate_races(
            core.create(&system, &def, None, api_service, &opts)
                .await
                .map(|_| ()),
        )?;
    }
    Ok(())
}
