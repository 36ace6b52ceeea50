//! API Priority and Fairness' configuration, as kube-apiserver keeps it:
//! the producer (upstream's `priority-and-fairness-config-producer` hook)
//! puts the mandatory and suggested FlowSchemas and
//! PriorityLevelConfigurations in place and keeps those marked
//! `apf.kubernetes.io/autoupdate-spec: "true"` at their bootstrap spec;
//! the consumer marks each FlowSchema `Dangling` when its priority level
//! does not exist. Every write is a compare-and-swap, so replicas agree.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use serde_json::{json, Value};

use crate::auth::UserInfo;
use crate::error::StatusReason;
use crate::kinds::flowcontrol::bootstrap::{self, AUTO_UPDATE_ANNOTATION};
use crate::object;
use crate::registry::ResourceDef;
use crate::verbs::{ApiCore, DeleteOptions, ListOptions, View, WriteOptions};

const CONTROLLER: &str = "priority-and-fairness-config";
const PRODUCER: &str = "api-priority-and-fairness-config-producer-v1";
const CONSUMER: &str = "api-priority-and-fairness-config-consumer-v1";
const GROUP: &str = "flowcontrol.apiserver.k8s.io";
/// Upstream's producer checks the configuration once a minute.
const RESYNC: Duration = Duration::from_secs(60);

struct Resources {
    schemas: Arc<ResourceDef>,
    levels: Arc<ResourceDef>,
}

pub async fn run(core: Arc<ApiCore>) {
    let (Ok(schemas), Ok(levels)) = (
        core.resolve(GROUP, "v1", "flowschemas"),
        core.resolve(GROUP, "v1", "prioritylevelconfigurations"),
    ) else {
        return;
    };
    let resources = Resources { schemas, levels };
    let system = UserInfo::system();
    loop {
        let rv = super::resynced(CONTROLLER, || sync(&core, &resources)).await;
        let opts = super::watch_from(rv);
        let watched = futures::future::try_join(
            core.watch(&system, &resources.schemas, None, None, &opts),
            core.watch(&system, &resources.levels, None, None, &opts),
        )
        .await;
        let mut events = match watched {
            Ok((schemas, levels)) => futures::stream::select(schemas, levels),
            Err(e) => {
                super::watch_failed(CONTROLLER, &e).await;
                continue;
            }
        };
        let resync = tokio::time::sleep(RESYNC);
        tokio::pin!(resync);
        loop {
            tokio::select! {
                event = events.next() => {
                    let Some(event) = event else { break };
                    if event.object.get("kind").and_then(Value::as_str) == Some("Status") {
                        break;
                    }
                    if let Err(e) = mark_dangling(&core, &resources).await {
                        tracing::warn!(controller = CONTROLLER, error = %e, "marking dangling flow schemas failed");
                    }
                }
                _ = &mut resync => break,
            }
        }
    }
}

/// One pass: the configuration in place, then every schema's condition.
async fn sync(core: &ApiCore, resources: &Resources) -> crate::ApiResult<String> {
    ensure(core, resources).await?;
    mark_dangling(core, resources).await
}

async fn ensure(core: &ApiCore, resources: &Resources) -> crate::ApiResult<()> {
    let sets = [
        (
            &resources.levels,
            bootstrap::suggested_priority_levels(),
            false,
        ),
        (
            &resources.schemas,
            bootstrap::suggested_flow_schemas(),
            false,
        ),
        (
            &resources.levels,
            bootstrap::mandatory_priority_levels(),
            true,
        ),
        (
            &resources.schemas,
            bootstrap::mandatory_flow_schemas(),
            true,
        ),
    ];
    let mut wanted: BTreeSet<(String, String)> = BTreeSet::new();
    for (def, objects, mandatory) in sets {
        for wanted_object in objects {
            wanted.insert((
                def.resource.clone(),
                object::name(&wanted_object).to_string(),
            ));
            super::tolerate_races(ensure_one(core, def, wanted_object, mandatory).await)?;
        }
    }
    for def in [&resources.schemas, &resources.levels] {
        remove_unwanted(core, def, &wanted).await?;
    }
    Ok(())
}

fn writes() -> WriteOptions {
    WriteOptions {
        field_manager: PRODUCER.to_string(),
        ..Default::default()
    }
}

/// Go's strconv.ParseBool.
fn parse_bool(text: &str) -> Option<bool> {
    match text {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

fn auto_update_annotation(object: &Value) -> Option<&str> {
    object
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(AUTO_UPDATE_ANNOTATION))
        .and_then(Value::as_str)
}

/// Creates the bootstrap object when it is missing, or brings the stored
/// one back to it as upstream's ReviseIfNeeded decides.
async fn ensure_one(
    core: &ApiCore,
    def: &ResourceDef,
    wanted: Value,
    mandatory: bool,
) -> crate::ApiResult<()> {
    let system = UserInfo::system();
    let name = object::name(&wanted).to_string();
    let current = match core.get(&system, def, None, &name, "").await {
        Ok(current) => current,
        Err(e) if e.reason == StatusReason::NotFound => {
            return core
                .create(&system, def, None, wanted, &writes())
                .await
                .map(drop);
        }
        Err(e) => return Err(e),
    };
    let annotation = auto_update_annotation(&current).and_then(parse_bool);
    let auto_update = if mandatory {
        true
    } else {
        annotation.unwrap_or_else(|| current.pointer("/metadata/generation") == Some(&json!(1)))
    };
    let update_annotation = annotation != Some(auto_update);
    let spec_changed = auto_update && !spec_equalish(&wanted, &current);
    if !update_annotation && !spec_changed {
        return Ok(());
    }
    let mut revised = current;
    if spec_changed {
        revised["spec"] = wanted["spec"].clone();
    }
    if update_annotation {
        object::set_at(
            &mut revised,
            &["metadata", "annotations", AUTO_UPDATE_ANNOTATION],
            json!(auto_update.to_string()),
        );
    }
    core.update(&system, def, None, &name, revised, &writes(), View::Main)
        .await
        .map(drop)
}

/// Whether the stored spec is the bootstrap one; the exempt level's own
/// settings are the administrator's to tune.
fn spec_equalish(wanted: &Value, current: &Value) -> bool {
    let mut expected = wanted["spec"].clone();
    let stored = current.get("spec").cloned().unwrap_or(Value::Null);
    if expected.get("type").and_then(Value::as_str) == Some("Exempt") {
        match stored.get("exempt").filter(|e| !e.is_null()) {
            None => return false,
            Some(exempt) => expected["exempt"] = exempt.clone(),
        }
    }
    crate::validate::meta::semantically_equal(&expected, &stored)
}

/// Deletes what an earlier configuration put in place and this one no
/// longer has, when it is still marked for automatic updates.
async fn remove_unwanted(
    core: &ApiCore,
    def: &ResourceDef,
    wanted: &BTreeSet<(String, String)>,
) -> crate::ApiResult<()> {
    let system = UserInfo::system();
    let listed = core
        .list(&system, def, None, &ListOptions::default())
        .await?;
    for item in &listed.items {
        let name = object::name(item);
        if wanted.contains(&(def.resource.clone(), name.to_string()))
            || auto_update_annotation(item).and_then(parse_bool) != Some(true)
        {
            continue;
        }
        super::tolerate_races(
            core.delete(&system, def, None, name, &DeleteOptions::default())
                .await
                .map(drop),
        )?;
    }
    Ok(())
}

/// upstream's Dangling condition of a schema whose level exists or not.
fn dangling_condition(level: &str, found: bool) -> Value {
    let quoted = crate::validate::meta::go_quote(level);
    let (status, reason, message) = if found {
        (
            "False",
            "Found",
            format!("This FlowSchema references the PriorityLevelConfiguration object named {quoted} and it exists"),
        )
    } else {
        (
            "True",
            "NotFound",
            format!("This FlowSchema references the PriorityLevelConfiguration object named {quoted} but there is no such object"),
        )
    };
    json!({
        "type": "Dangling",
        "status": status,
        "lastTransitionTime": object::now_timestamp(),
        "reason": reason,
        "message": message,
    })
}

/// Writes each schema's Dangling condition where it changed; the
/// resourceVersion of the schemas it read.
async fn mark_dangling(core: &ApiCore, resources: &Resources) -> crate::ApiResult<String> {
    let system = UserInfo::system();
    let all = ListOptions::default();
    let levels = core.list(&system, &resources.levels, None, &all).await?;
    let level_names: BTreeSet<&str> = levels.items.iter().map(|l| object::name(l)).collect();
    let schemas = core.list(&system, &resources.schemas, None, &all).await?;
    for schema in &schemas.items {
        let level = schema
            .pointer("/spec/priorityLevelConfiguration/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        let wanted = dangling_condition(level, level_names.contains(level));
        let conditions = schema
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let same = |c: &Value| {
            ["status", "reason", "message"]
                .iter()
                .all(|key| c.get(*key) == wanted.get(*key))
        };
        let existing = conditions.iter().position(|c| c["type"] == "Dangling");
        if existing.is_some_and(|i| same(&conditions[i])) {
            continue;
        }
        let mut conditions = conditions;
        match existing {
            Some(i) => conditions[i] = wanted,
            None => conditions.push(wanted),
        }
        let mut updated = (**schema).clone();
        object::set_at(
            &mut updated,
            &["status", "conditions"],
            Value::Array(conditions),
        );
        super::write_status(core, &resources.schemas, updated, CONSUMER).await?;
    }
    Ok(schemas.resource_version)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exempt_levels_own_settings_are_not_reverted() {
        let wanted = bootstrap::mandatory_priority_levels().remove(1);
        let mut tuned = wanted.clone();
        tuned["spec"]["exempt"]["nominalConcurrencyShares"] = json!(20);
        assert!(spec_equalish(&wanted, &tuned));
        let mut without = wanted.clone();
        without["spec"].as_object_mut().unwrap().remove("exempt");
        assert!(!spec_equalish(&wanted, &without));
        let mut changed = bootstrap::suggested_priority_levels().remove(0);
        let original = changed.clone();
        changed["spec"]["limited"]["nominalConcurrencyShares"] = json!(1);
        assert!(!spec_equalish(&original, &changed));
    }

    #[test]
    fn dangling_conditions_in_upstreams_words() {
        let found = dangling_condition("workload-low", true);
        assert_eq!(found["status"], "False");
        assert_eq!(
            found["message"],
            r#"This FlowSchema references the PriorityLevelConfiguration object named "workload-low" and it exists"#
        );
        let missing = dangling_condition("nope", false);
        assert_eq!(
            (missing["status"].as_str(), missing["reason"].as_str()),
            (Some("True"), Some("NotFound"))
        );
    }
}
