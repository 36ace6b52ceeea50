//! The defaults beneath a JobSpec, which a Job and a CronJob's job template
//! share (pkg/apis/batch/v1/zz_generated.defaults.go).

use serde_json::json;

use super::pod_spec::pod_template_spec;
use super::{child, default_zero, each_item, ensure_child, Object};

/// What zz_generated calls beneath a JobSpec.
pub(crate) fn job_spec_nested(spec: &mut Object) {
    if let Some(policy) = child(spec, "podFailurePolicy") {
        each_item(policy, "rules", |rule| {
            each_item(rule, "onPodConditions", |pattern| {
                default_zero(pattern, "status", json!("True"));
            });
        });
    }
    if let Some(template) = ensure_child(spec, "template") {
        pod_template_spec(template);
    }
}
