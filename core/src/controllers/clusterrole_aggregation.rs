//! ClusterRole aggregation, as upstream's clusterrole-aggregation
//! controller: a ClusterRole with an `aggregationRule` holds the rules of
//! every other ClusterRole its selectors match (in name order, each rule
//! once), so `admin`, `edit` and `view` grow with the roles labelled
//! `rbac.authorization.k8s.io/aggregate-to-*`.

use std::sync::Arc;

use futures::StreamExt;
use serde_json::Value;

use crate::auth::UserInfo;
use crate::authorization::rbac::RBAC_GROUP;
use crate::object;
use crate::selectors::LabelSelector;
use crate::verbs::{ApiCore, ListOptions, View, WriteOptions};

const FIELD_MANAGER: &str = "clusterrole-aggregation-controller";

pub async fn run(core: Arc<ApiCore>) {
    let system = UserInfo::system();
    let Ok(cluster_roles) = core.resolve(RBAC_GROUP, "v1", "clusterroles") else {
        return;
    };
    loop {
        let rv = super::resynced(FIELD_MANAGER, || reconcile_all(&core)).await;
        let opts = super::watch_from(rv);
        let mut events = match core.watch(&system, &cluster_roles, None, None, &opts).await {
            Ok(events) => events,
            Err(e) => {
                super::watch_failed(FIELD_MANAGER, &e).await;
                continue;
            }
        };
        // Any change may change what a selector picks: aggregate again
        // after each burst of changes (the next list sees them all).
        while let Some(event) = events.next().await {
            if event.object.get("kind").and_then(Value::as_str) == Some("Status") {
                break;
            }
            let mut drained = 0;
            while drained < 1000 {
                match futures::FutureExt::now_or_never(events.next()) {
                    Some(Some(_)) => drained += 1,
                    _ => break,
                }
            }
            if let Err(e) = reconcile_all(&core).await {
                tracing::warn!(error = %e, "clusterrole aggregation failed");
            }
        }
    }
}

/// Aggregates every ClusterRole that has an aggregationRule; the
/// resourceVersion of the list it worked from.
async fn reconcile_all(core: &ApiCore) -> crate::ApiResult<String> {
    let def = core.resolve(RBAC_GROUP, "v1", "clusterroles")?;
    let list = core
        .list(&UserInfo::system(), &def, None, &ListOptions::default())
        .await?;
    let mut roles: Vec<&Value> = list.items.iter().map(|role| &**role).collect();
    roles.sort_by(|a, b| object::name(a).cmp(object::name(b)));
    for role in &roles {
        let Some(wanted) = aggregated_rules(role, &roles) else {
            continue;
        };
        if role.get("rules") == Some(&wanted) {
            continue;
        }
        let name = object::name(role).to_string();
        let opts = WriteOptions {
            field_manager: FIELD_MANAGER.to_string(),
            ..Default::default()
        };
        let written = core
            .update_internal(
                &UserInfo::system(),
                &def,
                None,
                &name,
                &opts,
                View::Main,
                |current| {
                    let mut updated = current.clone();
                    if let Some(fields) = updated.as_object_mut() {
                        fields.insert("rules".into(), wanted.clone());
                    }
                    Ok(updated)
                },
            )
            .await;
        if let Err(e) = written {
            tracing::warn!(role = name, error = %e, "aggregating a clusterrole failed");
        }
    }
    Ok(list.resource_version)
}

/// The rules `role` aggregates from `roles` (sorted by name), or None when
/// it has no aggregationRule.
fn aggregated_rules(role: &Value, roles: &[&Value]) -> Option<Value> {
    let selectors: Vec<LabelSelector> = role
        .pointer("/aggregationRule/clusterRoleSelectors")?
        .as_array()?
        .iter()
        .filter_map(LabelSelector::from_object)
        .collect();
    let name = object::name(role);
    let mut rules: Vec<Value> = Vec::new();
    for other in roles {
        if object::name(other) == name || !selectors.iter().any(|s| s.matches(other)) {
            continue;
        }
        let other_rules = other.get("rules").and_then(Value::as_array);
        for rule in other_rules.into_iter().flatten() {
            if !rules.contains(rule) {
                rules.push(rule.clone());
            }
        }
    }
    Some(Value::Array(rules))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn aggregation_takes_each_matching_roles_rules_once_in_name_order() {
        let view = json!({"metadata": {"name": "view"}, "aggregationRule": {"clusterRoleSelectors": [
            {"matchLabels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
            {"matchExpressions": [{"key": "extra", "operator": "Exists"}]}
        ]}});
        let pods = json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]});
        let jobs = json!({"verbs": ["get"], "apiGroups": ["batch"], "resources": ["jobs"]});
        let roles: Vec<Arc<Value>> = [
            json!({"metadata": {"name": "b-to-view", "labels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}}, "rules": [jobs, pods]}),
            json!({"metadata": {"name": "a-extra", "labels": {"extra": ""}}, "rules": [pods]}),
            json!({"metadata": {"name": "unlabelled"}, "rules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]}),
            view.clone(),
        ]
        .into_iter()
        .map(Arc::new)
        .collect();
        let mut sorted: Vec<&Value> = roles.iter().map(|role| &**role).collect();
        sorted.sort_by(|a, b| object::name(a).cmp(object::name(b)));
        assert_eq!(aggregated_rules(&view, &sorted), Some(json!([pods, jobs])));
        assert_eq!(aggregated_rules(&roles[0], &sorted), None);
    }
}
