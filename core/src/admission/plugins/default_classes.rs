//! DefaultStorageClass and DefaultIngressClass: a new claim or ingress that
//! names no class gets the class annotated as the default (the newest, if
//! several are; the smallest name on a tie).

use serde_json::{json, Value};

use super::super::attributes::{Attributes, Operation};
use crate::error::ApiResult;
use crate::verbs::ApiCore;

/// Which annotation marks a default class, and where the object names it.
struct DefaultClass {
    group: &'static str,
    resource: &'static str,
    default_annotations: &'static [&'static str],
}

const STORAGE_CLASSES: DefaultClass = DefaultClass {
    group: "storage.k8s.io",
    resource: "storageclasses",
    default_annotations: &[
        "storageclass.kubernetes.io/is-default-class",
        "storageclass.beta.kubernetes.io/is-default-class",
    ],
};

const INGRESS_CLASSES: DefaultClass = DefaultClass {
    group: "networking.k8s.io",
    resource: "ingressclasses",
    default_annotations: &["ingressclass.kubernetes.io/is-default-class"],
};

fn annotation<'a>(object: &'a Value, key: &str) -> Option<&'a str> {
    object
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(key))
        .and_then(Value::as_str)
}

impl ApiCore {
    pub(super) async fn default_storage_class(
        &self,
        attributes: &Attributes<'_>,
        claim: Option<&mut Value>,
    ) -> ApiResult<()> {
        if !super::refusal::is_core(attributes, "persistentvolumeclaims")
            || attributes.operation != Operation::Create
        {
            return Ok(());
        }
        let Some(claim) = claim else {
            return Ok(());
        };
        // An explicit "" is a class too: no class at all.
        let has_class = annotation(claim, "volume.beta.kubernetes.io/storage-class").is_some()
            || claim
                .pointer("/spec/storageClassName")
                .is_some_and(|c| !c.is_null());
        if has_class {
            return Ok(());
        }
        if let Some(class) = self.default_class(&STORAGE_CLASSES).await? {
            if let Some(spec) = claim.get_mut("spec").and_then(Value::as_object_mut) {
                spec.insert("storageClassName".into(), json!(class));
            }
        }
        Ok(())
    }

    pub(super) async fn default_ingress_class(
        &self,
        attributes: &Attributes<'_>,
        ingress: Option<&mut Value>,
    ) -> ApiResult<()> {
        let def = attributes.def;
        if def.group != "networking.k8s.io"
            || def.resource != "ingresses"
            || !attributes.subresource.is_empty()
            || attributes.operation != Operation::Create
        {
            return Ok(());
        }
        let Some(ingress) = ingress else {
            return Ok(());
        };
        let has_class = annotation(ingress, "kubernetes.io/ingress.class").is_some()
            || ingress
                .pointer("/spec/ingressClassName")
                .is_some_and(|c| !c.is_null());
        if has_class {
            return Ok(());
        }
        if let Some(class) = self.default_class(&INGRESS_CLASSES).await? {
            if let Some(spec) = ingress.get_mut("spec").and_then(Value::as_object_mut) {
                spec.insert("ingressClassName".into(), json!(class));
            }
        }
        Ok(())
    }

    /// The default class's name: the newest of those annotated so, the
    /// smallest name among equally new ones.
    async fn default_class(&self, kind: &DefaultClass) -> ApiResult<Option<String>> {
        let def = self.resolve(kind.group, "v1", kind.resource)?;
        let cache = self.watch_cache(&def).await?;
        let (classes, _) = cache.list(&def.key_prefix(&self.prefix, None));
        let newest = classes
            .iter()
            .map(|(_, class)| class)
            .filter(|class| {
                kind.default_annotations
                    .iter()
                    .any(|key| annotation(class, key) == Some("true"))
            })
            .map(|class| {
                let created = class
                    .pointer("/metadata/creationTimestamp")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                let name = class
                    .pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                (created, name)
            })
            // RFC 3339 in UTC compares as text; newest first, then by name.
            .min_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        Ok(newest.map(|(_, name)| name))
    }
}
