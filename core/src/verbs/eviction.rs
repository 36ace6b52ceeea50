//! `pods/<name>/eviction`: a pod deleted only as far as its
//! PodDisruptionBudget allows, as upstream's EvictionREST does. `kubectl
//! drain` evicts every pod of a node this way.
//!
//! The budget's `status.disruptionsAllowed` is spent by a compare-and-swap
//! on the budget's status (the status view's update, retried from storage
//! on conflict), so two replicas evicting at once cannot both spend the
//! last disruption.

use serde_json::{json, Value};

use crate::auth::UserInfo;
use crate::error::{ApiError, FieldError, StatusDetails, StatusReason};
use crate::object;
use crate::selectors::LabelSelector;
use crate::verbs::{
    ApiCore, BodySource, DeleteOptions, ListOptions, View, WriteOptions, WriteResult,
};

const EVICTION_DEFINITION: &str = "io.k8s.api.policy.v1.Eviction";

/// Upstream's refusal when the budget has no disruption to spend.
const BUDGET_VIOLATED: &str = "Cannot evict pod as it would violate the pod's disruption budget.";

/// Upstream refuses to keep track of more pods evicted but not yet gone.
const MAX_DISRUPTED_PODS: usize = 2000;

impl ApiCore {
    /// `POST pods/<name>/eviction`, authorized as `create pods/eviction`.
    /// Answers upstream's Success Status once the pod is deleted.
    pub async fn evict_pod_subresource(
        &self,
        user: &UserInfo,
        namespace: &str,
        pod_name: &str,
        mut eviction: Value,
        opts: &WriteOptions,
    ) -> crate::ApiResult<WriteResult> {
        let pods = self.resolve("", "v1", "pods")?;
        self.authorize(
            user,
            "create",
            &pods,
            Some(namespace),
            Some(pod_name),
            View::Eviction,
        )
        .await?;
        crate::verbs::decode_body_as(
            BodySource::Sent,
            EVICTION_DEFINITION,
            ("Eviction", "v1"),
            &mut eviction,
        )?;
        let named = object::name(&eviction);
        if !named.is_empty() && named != pod_name {
            return Err(ApiError::bad_request(
                "name in URL does not match name in Eviction object",
            ));
        }
        let mut delete = delete_options(eviction.get("deleteOptions"))?;
        delete.dry_run |= opts.dry_run;

        let pod = self.get_stored(&pods, Some(namespace), pod_name).await?.1;
        if !can_ignore_budget(&pod) {
            match self.budget_for(namespace, &pod).await? {
                None => {}
                Some(budget) if !is_ready(&pod) && unhealthy_pod_may_go(&budget) => {
                    // The pod must still be the unhealthy one looked at.
                    delete
                        .precondition_resource_version
                        .get_or_insert_with(|| object::resource_version(&pod).to_string());
                }
                Some(budget) => {
                    self.spend_disruption(namespace, pod_name, &budget, delete.dry_run)
                        .await?
                }
            }
        }
        self.delete_pod_for_eviction(&pods, namespace, pod_name, &delete)
            .await?;
        Ok(WriteResult::computed(crate::error::created_status()))
    }

    /// The one budget whose selector picks `pod`, if any; more than one is
    /// an error, as upstream.
    async fn budget_for(&self, namespace: &str, pod: &Value) -> crate::ApiResult<Option<Value>> {
        let budgets = self.resolve("policy", "v1", "poddisruptionbudgets")?;
        let list = self
            .list(
                &UserInfo::system(),
                &budgets,
                Some(namespace),
                &ListOptions::default(),
            )
            .await?;
        let mut matching = list.items.into_iter().filter(|budget| {
            // A nil or empty selector matches nothing here, not everything.
            budget
                .pointer("/spec/selector")
                .and_then(LabelSelector::from_object)
                .is_some_and(|selector| !selector.is_empty() && selector.matches(pod))
        });
        let first = matching.next();
        if matching.next().is_some() {
            return Err(ApiError::internal(
                "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
            ));
        }
        Ok(first.map(|budget| Value::clone(&budget)))
    }

    /// Spends one of the budget's disruptions by compare-and-swap on its
    /// status, deciding again from the stored budget after a conflict.
    async fn spend_disruption(
        &self,
        namespace: &str,
        pod_name: &str,
        budget: &Value,
        dry_run: bool,
    ) -> crate::ApiResult<()> {
        let budgets = self.resolve("policy", "v1", "poddisruptionbudgets")?;
        let name = object::name(budget).to_string();
        if dry_run {
            // Checked, not written.
            return spent(budget, pod_name).map(|_| ());
        }
        let opts = WriteOptions {
            field_manager: "capstan-eviction".to_string(),
            ..Default::default()
        };
        self.update_internal(
            &UserInfo::system(),
            &budgets,
            Some(namespace),
            &name,
            &opts,
            View::Status,
            |current| spent(current, pod_name),
        )
        .await?;
        Ok(())
    }
}

/// The budget with one disruption spent on `pod_name`, or upstream's
/// refusal (checkAndDecrement).
fn spent(budget: &Value, pod_name: &str) -> crate::ApiResult<Value> {
    let name = object::name(budget);
    let int = |pointer: &str| budget.pointer(pointer).and_then(Value::as_i64).unwrap_or(0);
    let generation = int("/metadata/generation");
    if int("/status/observedGeneration") < generation {
        return Err(budget_refusal(
            format!("The disruption budget {name} is still being processed by the server."),
            10,
        ));
    }
    let allowed = int("/status/disruptionsAllowed");
    if allowed < 0 {
        return Err(ApiError::forbidden(format!(
            "poddisruptionbudget.policy \"{name}\" is forbidden: pdb disruptions allowed is negative"
        )));
    }
    let disrupted = budget
        .pointer("/status/disruptedPods")
        .and_then(Value::as_object)
        .map_or(0, |pods| pods.len());
    if disrupted > MAX_DISRUPTED_PODS {
        return Err(ApiError::forbidden(format!(
            "poddisruptionbudget.policy \"{name}\" is forbidden: DisruptedPods map too big - too many evictions not confirmed by PDB controller"
        )));
    }
    if allowed == 0 {
        return Err(budget_refusal(
            format!(
                "The disruption budget {name} needs {} healthy pods and has {} currently",
                int("/status/desiredHealthy"),
                int("/status/currentHealthy")
            ),
            0,
        ));
    }
    let mut updated = budget.clone();
    let status = &mut updated["status"];
    status["disruptionsAllowed"] = json!(allowed - 1);
    if allowed - 1 == 0 {
        set_disruption_allowed_false(status, int("/status/observedGeneration"));
    }
    if !status["disruptedPods"].is_object() {
        status["disruptedPods"] = json!({});
    }
    status["disruptedPods"][pod_name] = json!(object::now_timestamp());
    Ok(updated)
}

/// upstream's UpdateDisruptionAllowedCondition for a budget with none left.
fn set_disruption_allowed_false(status: &mut Value, observed_generation: i64) {
    if !status["conditions"].is_array() {
        status["conditions"] = json!([]);
    }
    let Some(conditions) = status["conditions"].as_array_mut() else {
        return;
    };
    let wanted = json!({
        "type": "DisruptionAllowed",
        "status": "False",
        "observedGeneration": observed_generation,
        "lastTransitionTime": object::now_timestamp(),
        "reason": "InsufficientPods",
        "message": "",
    });
    match conditions
        .iter_mut()
        .find(|c| c["type"] == "DisruptionAllowed")
    {
        Some(existing) => {
            if existing["status"] == "False" {
                // The transition time moves only when the status does.
                let mut kept = wanted;
                kept["lastTransitionTime"] = existing["lastTransitionTime"].clone();
                *existing = kept;
            } else {
                *existing = wanted;
            }
        }
        None => conditions.push(wanted),
    }
}

/// upstream's 429 with a DisruptionBudget cause.
fn budget_refusal(cause: String, retry_after_seconds: i64) -> ApiError {
    let mut error = ApiError::new(StatusReason::TooManyRequests, BUDGET_VIOLATED);
    error.details = Some(Box::new(StatusDetails {
        name: String::new(),
        group: String::new(),
        kind: String::new(),
        causes: vec![FieldError {
            reason: "DisruptionBudget",
            message: cause,
            field: String::new(),
        }],
        retry_after_seconds: (retry_after_seconds > 0).then_some(retry_after_seconds),
    }));
    error
}

/// A pod that is finished, not yet running or already going has caused
/// its disruption already: no budget applies (canIgnorePDB).
fn can_ignore_budget(pod: &Value) -> bool {
    let phase = pod.pointer("/status/phase").and_then(Value::as_str);
    matches!(phase, Some("Succeeded" | "Failed" | "Pending"))
        || object::meta(pod).is_some_and(|m| m.contains_key("deletionTimestamp"))
}

fn is_ready(pod: &Value) -> bool {
    pod.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|conditions| {
            conditions
                .iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
        })
}

/// Whether a pod that is not ready may go without spending a disruption:
/// the budget says AlwaysAllow, or it is healthy enough without the pod.
fn unhealthy_pod_may_go(budget: &Value) -> bool {
    let policy = budget
        .pointer("/spec/unhealthyPodEvictionPolicy")
        .and_then(Value::as_str);
    let int = |pointer: &str| budget.pointer(pointer).and_then(Value::as_i64).unwrap_or(0);
    let desired = int("/status/desiredHealthy");
    policy == Some("AlwaysAllow") || (int("/status/currentHealthy") >= desired && desired > 0)
}

/// The Eviction's deleteOptions as the delete takes them.
fn delete_options(options: Option<&Value>) -> crate::ApiResult<DeleteOptions> {
    let Some(options) = options.filter(|o| !o.is_null()) else {
        return Ok(DeleteOptions::default());
    };
    let text = |pointer: &str| {
        options
            .pointer(pointer)
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let mut dry_run = false;
    for value in options
        .get("dryRun")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        match value.as_str() {
            Some("All") => dry_run = true,
            other => {
                return Err(ApiError::invalid(
                    "policy",
                    "Eviction",
                    "",
                    vec![FieldError::not_supported(
                        "deleteOptions.dryRun",
                        other.unwrap_or_default(),
                        &["All"],
                    )],
                ))
            }
        }
    }
    Ok(DeleteOptions {
        grace_period_seconds: options.get("gracePeriodSeconds").and_then(Value::as_i64),
        precondition_uid: text("/preconditions/uid"),
        precondition_resource_version: text("/preconditions/resourceVersion"),
        propagation_policy: text("/propagationPolicy"),
        dry_run,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(allowed: i64) -> Value {
        json!({
            "metadata": {"name": "pdb", "generation": 1},
            "spec": {"selector": {"matchLabels": {"app": "web"}}},
            "status": {"observedGeneration": 1, "disruptionsAllowed": allowed,
                       "desiredHealthy": 2, "currentHealthy": 2, "expectedPods": 3}
        })
    }

    #[test]
    fn a_disruption_is_spent_and_the_last_one_marks_the_condition() {
        let once = spent(&budget(2), "p1").expect("allowed");
        assert_eq!(once["status"]["disruptionsAllowed"], 1);
        assert!(once["status"]["disruptedPods"]["p1"].is_string());
        assert!(once["status"].get("conditions").is_none());
        let last = spent(&once, "p2").expect("allowed");
        assert_eq!(last["status"]["disruptionsAllowed"], 0);
        assert_eq!(last["status"]["conditions"][0]["type"], "DisruptionAllowed");
        assert_eq!(last["status"]["conditions"][0]["status"], "False");
        assert_eq!(
            last["status"]["conditions"][0]["reason"],
            "InsufficientPods"
        );
    }

    #[test]
    fn an_exhausted_or_unprocessed_budget_refuses_as_upstream() {
        let error = spent(&budget(0), "p").expect_err("refused");
        assert_eq!(error.code(), 429);
        assert_eq!(error.message, BUDGET_VIOLATED);
        let details = error.details.expect("details");
        assert_eq!(
            details.causes[0].message,
            "The disruption budget pdb needs 2 healthy pods and has 2 currently"
        );
        assert_eq!(details.retry_after_seconds, None);

        let mut unprocessed = budget(1);
        unprocessed["metadata"]["generation"] = json!(2);
        let error = spent(&unprocessed, "p").expect_err("refused");
        let details = error.details.expect("details");
        assert_eq!(
            details.causes[0].message,
            "The disruption budget pdb is still being processed by the server."
        );
        assert_eq!(details.retry_after_seconds, Some(10));

        let error = spent(&budget(-1), "p").expect_err("refused");
        assert_eq!(error.code(), 403);
    }
}
