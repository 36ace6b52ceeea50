//! `componentstatuses` (deprecated upstream, still served by 1.32): the
//! health of what this server depends on, computed on each read. Storage is
//! probed with a revision read; the controllers run in-process, so they are
//! as healthy as the server answering. No scheduler runs with Capstan, so
//! none is reported rather than one invented.

use serde_json::{json, Value};

use crate::error::ApiError;
use crate::verbs::{ApiCore, LazyObject, ObjectList};

impl ApiCore {
    async fn component_statuses(&self) -> Vec<Value> {
        let storage = match self.storage.current_revision().await {
            Ok(_) => condition("True", "ok", ""),
            Err(e) => condition("False", "", &e.to_string()),
        };
        vec![
            component("controller-manager", condition("True", "ok", "")),
            component(self.storage.component_name(), storage),
        ]
    }

    pub(crate) async fn get_component_status(&self, name: &str) -> crate::ApiResult<Value> {
        self.component_statuses()
            .await
            .into_iter()
            .find(|c| c["metadata"]["name"] == name)
            .ok_or_else(|| ApiError::not_found("", "componentstatuses", name))
    }

    pub(crate) async fn list_component_statuses(&self) -> crate::ApiResult<ObjectList> {
        Ok(ObjectList {
            items: self
                .component_statuses()
                .await
                .into_iter()
                .map(LazyObject::from)
                .collect(),
            resource_version: String::new(),
            continue_token: None,
            remaining_item_count: None,
        })
    }
}

fn condition(status: &str, message: &str, error: &str) -> Value {
    let mut condition = json!({"type": "Healthy", "status": status});
    if !message.is_empty() {
        condition["message"] = json!(message);
    }
    if !error.is_empty() {
        condition["error"] = json!(error);
    }
    condition
}

fn component(name: &str, condition: Value) -> Value {
    json!({
        "kind": "ComponentStatus",
        "apiVersion": "v1",
        "metadata": {"name": name},
        "conditions": [condition],
    })
}
