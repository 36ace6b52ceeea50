//! ResourceQuota, the chain's last step: a create (or a charged update)
//! whose usage would take a quota of its namespace over its hard limits is
//! refused; otherwise the usage is charged to each matching quota's
//! `status.used` by compare-and-swap before the object is stored, so
//! concurrent writers (on any replica) can never spend the same unit
//! twice. A conflict re-reads the quota and checks again.

use std::sync::Arc;

use serde_json::Value;

use super::super::attributes::{Attributes, Operation};
use super::refusal::forbidden;
use crate::error::ApiResult;
use crate::quota::{self, Usage};
use crate::registry::ResourceDef;
use crate::verbs::ApiCore;

/// Resources upstream never charges.
const IGNORED: [(&str, &str); 10] = [
    ("", "bindings"),
    ("", "componentstatuses"),
    ("", "events"),
    ("events.k8s.io", "events"),
    ("authentication.k8s.io", "tokenreviews"),
    ("authentication.k8s.io", "selfsubjectreviews"),
    ("authorization.k8s.io", "subjectaccessreviews"),
    ("authorization.k8s.io", "selfsubjectaccessreviews"),
    ("authorization.k8s.io", "localsubjectaccessreviews"),
    ("authorization.k8s.io", "selfsubjectrulesreviews"),
];

/// Whether a quota applies to the object: it limits something the object
/// uses, and the object is in every scope the quota names.
pub fn quota_matches(quota: &Value, def: &ResourceDef, object: &Value, usage: &Usage) -> bool {
    let hard = quota::parse_map(quota.pointer("/status/hard"));
    if !usage.keys().any(|k| hard.contains_key(k)) {
        return false;
    }
    scope_requirements(quota).iter().all(|requirement| {
        def.kind_impl
            .quota_scope_matches(requirement, object)
            .unwrap_or(false)
    })
}

/// A quota's scopes and scope selector as requirements.
fn scope_requirements(quota: &Value) -> Vec<Value> {
    let mut requirements: Vec<Value> = crate::object::strings_at(&quota["spec"], "scopes")
        .into_iter()
        .map(|scope| serde_json::json!({"scopeName": scope, "operator": "Exists"}))
        .collect();
    if let Some(expressions) = quota
        .pointer("/spec/scopeSelector/matchExpressions")
        .and_then(Value::as_array)
    {
        requirements.extend(expressions.iter().cloned());
    }
    requirements
}

impl ApiCore {
    pub(super) async fn charge_quota(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
    ) -> ApiResult<()> {
        let def = attributes.def;
        let (Some(object), Some(namespace)) = (object, attributes.namespace) else {
            return Ok(());
        };
        let charged = match attributes.operation {
            Operation::Create => true,
            Operation::Update => def.kind_impl.quota_charges_updates(),
            Operation::Delete => false,
        };
        if !charged
            || !attributes.subresource.is_empty()
            || !def.namespaced
            || IGNORED.contains(&(def.group.as_str(), def.resource.as_str()))
        {
            return Ok(());
        }
        let quotas_def = self.resolve("", "v1", "resourcequotas")?;
        let cache = self.watch_cache(&quotas_def).await?;
        let (quotas, _) = cache.list(&quotas_def.key_prefix(&self.prefix, Some(namespace)));
        if quotas.is_empty() {
            return Ok(());
        }
        let delta = self.usage_delta(def, object, attributes.old);
        if delta.is_empty() {
            return Ok(());
        }
        for (_, quota) in quotas {
            self.charge_one(attributes, object, &quotas_def, quota, &delta)
                .await?;
        }
        Ok(())
    }

    /// What the write adds: the object's usage, less the old object's on
    /// an update (never below zero); zero amounts left out.
    fn usage_delta(&self, def: &ResourceDef, object: &Value, old: Option<&Value>) -> Usage {
        let usage = quota::usage(def, object);
        let before = old.map(|old| quota::usage(def, old)).unwrap_or_default();
        usage
            .into_iter()
            .filter_map(|(name, amount)| {
                let added = match before.get(&name) {
                    Some(earlier) => amount - *earlier,
                    None => amount,
                };
                (!added.is_zero() && !added.is_negative()).then_some((name, added))
            })
            .collect()
    }

    /// Checks one quota and charges it by compare-and-swap, deciding again
    /// from storage's copy after a conflict.
    async fn charge_one(
        &self,
        attributes: &Attributes<'_>,
        object: &Value,
        quotas_def: &ResourceDef,
        quota: Arc<Value>,
        delta: &Usage,
    ) -> ApiResult<()> {
        let def = attributes.def;
        if !quota_matches(&quota, def, object, delta) {
            return Ok(());
        }
        let charge = |current: &Value| -> ApiResult<Option<Value>> {
            if !quota_matches(current, def, object, delta) {
                return Ok(None);
            }
            let new_used = checked(current, def, object, delta)
                .map_err(|why| forbidden(attributes, Some(object), &why))?;
            if attributes.dry_run {
                return Ok(None);
            }
            let mut charged = current.clone();
            if let Some(status) = charged.get_mut("status").and_then(Value::as_object_mut) {
                status.insert("used".into(), quota::to_json(&new_used));
            }
            Ok(Some(charged))
        };
        let name = crate::object::name(&quota);
        self.compare_and_swap(quotas_def, attributes.namespace, name, charge)
            .await
    }
}

/// The quota's `status.used` with `delta` charged, or why it may not be:
/// a resource the quota demands is not set, the quota's usage is not known
/// yet, or the charge would go over a hard limit.
fn checked(
    quota: &Value,
    def: &ResourceDef,
    object: &Value,
    delta: &Usage,
) -> Result<Usage, String> {
    let name = crate::object::name(quota);
    let hard = quota::parse_map(quota.pointer("/status/hard"));
    let used = quota::parse_map(quota.pointer("/status/used"));
    let limited: Vec<String> = hard.keys().cloned().collect();
    if let Some(problem) = def.kind_impl.quota_constraints(&limited, object) {
        return Err(format!("failed quota: {name}: {problem}"));
    }
    let requested: Usage = delta
        .iter()
        .filter(|(k, _)| hard.contains_key(*k))
        .map(|(k, v)| (k.clone(), *v))
        .collect();
    let unknown: Vec<&str> = requested
        .keys()
        .filter(|k| !used.contains_key(*k))
        .map(String::as_str)
        .collect();
    if !unknown.is_empty() {
        return Err(format!(
            "status unknown for quota: {name}, resources: {}",
            unknown.join(",")
        ));
    }
    let mut new_used = used.clone();
    for (k, v) in &requested {
        quota::add(&mut new_used, k, *v);
    }
    let exceeded: Vec<&String> = requested
        .keys()
        .filter(|k| match (new_used.get(*k), hard.get(*k)) {
            (Some(total), Some(limit)) => total > limit,
            _ => false,
        })
        .collect();
    if !exceeded.is_empty() {
        let pick = |usage: &Usage| -> Usage {
            exceeded
                .iter()
                .filter_map(|k| Some(((*k).clone(), *usage.get(*k)?)))
                .collect()
        };
        return Err(format!(
            "exceeded quota: {name}, requested: {}, used: {}, limited: {}",
            quota::printed(&pick(&requested)),
            quota::printed(&pick(&used)),
            quota::printed(&pick(&hard))
        ));
    }
    Ok(new_used)
}
