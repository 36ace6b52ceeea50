//! Which requests a webhook, a policy or a policy binding applies to, as
//! upstream's matching predicates decide: the namespace and object
//! selectors, the resource rules (with resourceNames and exclusions), and
//! at an equivalent version when matchPolicy is Equivalent. Whoever
//! matched at another version sees the objects converted to it.

use std::sync::Arc;

use serde_json::Value;

use super::attributes::{Attributes, Operation};
use crate::error::{ApiError, ApiResult};
use crate::object::items_at;
use crate::registry::ResourceDef;
use crate::selectors::LabelSelector;
use crate::verbs::ApiCore;

/// What decides whether something applies to a request: a webhook's
/// fields, or a policy's or binding's MatchResources.
pub(super) struct Criteria<'a> {
    pub namespace_selector: Option<&'a Value>,
    pub object_selector: Option<&'a Value>,
    pub rules: &'a [Value],
    pub exclude_rules: &'a [Value],
    pub match_policy: &'a str,
    /// A binding's resources without rules take every request its policy
    /// matched; a webhook's or policy's take none.
    pub no_rules_match_all: bool,
}

impl<'a> Criteria<'a> {
    /// A webhook's own fields.
    pub fn of_webhook(webhook: &'a Value) -> Self {
        Criteria {
            namespace_selector: webhook.get("namespaceSelector"),
            object_selector: webhook.get("objectSelector"),
            rules: items_at(webhook, "/rules"),
            exclude_rules: &[],
            match_policy: webhook
                .get("matchPolicy")
                .and_then(Value::as_str)
                .unwrap_or(""),
            no_rules_match_all: false,
        }
    }

    /// A policy's `matchConstraints` or a binding's `matchResources`.
    pub fn of_match_resources(resources: &'a Value, no_rules_match_all: bool) -> Self {
        Criteria {
            namespace_selector: resources.get("namespaceSelector"),
            object_selector: resources.get("objectSelector"),
            rules: items_at(resources, "/resourceRules"),
            exclude_rules: items_at(resources, "/excludeResourceRules"),
            match_policy: resources
                .get("matchPolicy")
                .and_then(Value::as_str)
                .unwrap_or(""),
            no_rules_match_all,
        }
    }
}

/// How a match applies: at the request's own version, or at an
/// equivalent one the rules name, the objects converted to it.
pub(super) struct Invocation {
    pub equivalent: Option<Arc<ResourceDef>>,
}

impl Invocation {
    pub fn def<'a>(&'a self, attributes: &'a Attributes<'_>) -> &'a ResourceDef {
        self.equivalent.as_deref().unwrap_or(attributes.def)
    }

    /// `object` at the invoked version (None when no conversion is needed).
    pub fn to_invoked(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
    ) -> ApiResult<Option<Value>> {
        let (Some(other), Some(object)) = (&self.equivalent, object) else {
            return Ok(None);
        };
        convert(attributes.def, object.clone(), &other.api_version()).map(Some)
    }

    /// A patched object back at the request's version.
    pub fn to_requested(&self, attributes: &Attributes<'_>, object: Value) -> ApiResult<Value> {
        match &self.equivalent {
            Some(_) => convert(attributes.def, object, &attributes.def.api_version()),
            None => Ok(object),
        }
    }
}

fn convert(def: &ResourceDef, object: Value, api_version: &str) -> ApiResult<Value> {
    def.kind_impl
        .convert(object, api_version)
        .map_err(|e| ApiError::internal(format!("failed to convert object version: {e}")))
}

impl ApiCore {
    /// Whether `criteria` apply to the request, and how. Selector errors
    /// count only when the rules matched, as upstream reports them.
    pub(super) async fn matches(
        &self,
        criteria: &Criteria<'_>,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
    ) -> ApiResult<Option<Invocation>> {
        let namespace_error = match self
            .namespace_matches(criteria.namespace_selector, attributes, object)
            .await
        {
            Ok(false) => return Ok(None),
            Ok(true) => None,
            Err(e) => Some(e),
        };
        if !object_matches(criteria.object_selector, object, attributes.old) {
            return Ok(None);
        }
        if !criteria.exclude_rules.is_empty()
            && self
                .rules_match(criteria.exclude_rules, criteria.match_policy, attributes)
                .is_some()
        {
            return Ok(None);
        }
        let invocation = if criteria.rules.is_empty() && criteria.no_rules_match_all {
            Invocation { equivalent: None }
        } else {
            match self.rules_match(criteria.rules, criteria.match_policy, attributes) {
                Some(invocation) => invocation,
                None => return Ok(None),
            }
        };
        if let Some(e) = namespace_error {
            return Err(e);
        }
        Ok(Some(invocation))
    }

    /// The rules against the request: exactly, else (unless matchPolicy is
    /// Exact) at another served version of the resource a rule names.
    fn rules_match(
        &self,
        rules: &[Value],
        match_policy: &str,
        attributes: &Attributes<'_>,
    ) -> Option<Invocation> {
        if rules
            .iter()
            .any(|rule| rule_matches(rule, attributes, attributes.def))
        {
            return Some(Invocation { equivalent: None });
        }
        if match_policy == "Exact" {
            return None;
        }
        let def = attributes.def;
        let registry = self.registry.snapshot();
        let others: Vec<&Arc<ResourceDef>> = registry
            .resources()
            .iter()
            .filter(|r| {
                r.group == def.group && r.resource == def.resource && r.version != def.version
            })
            .collect();
        rules.iter().find_map(|rule| {
            others
                .iter()
                .find(|other| rule_matches(rule, attributes, other))
                .map(|other| Invocation {
                    equivalent: Some(Arc::clone(other)),
                })
        })
    }

    /// The namespace selector: not applied to cluster-scoped resources
    /// other than namespaces; a Namespace written is matched by its own
    /// labels.
    async fn namespace_matches(
        &self,
        selector: Option<&Value>,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
    ) -> ApiResult<bool> {
        let def = attributes.def;
        let is_namespace = def.group.is_empty() && def.resource == "namespaces";
        let Some(selector) = selector.filter(|s| s.as_object().is_some_and(|m| !m.is_empty()))
        else {
            return Ok(true);
        };
        if !def.namespaced && !is_namespace {
            return Ok(true);
        }
        let Some(selector) = LabelSelector::from_object(selector) else {
            return Ok(false);
        };
        if selector.is_empty() {
            return Ok(true);
        }
        let writes_namespace = is_namespace
            && attributes.subresource.is_empty()
            && matches!(attributes.operation, Operation::Create | Operation::Update);
        if let (true, Some(object)) = (writes_namespace, object) {
            return Ok(selector.matches(object));
        }
        let name = if is_namespace {
            attributes.name
        } else {
            attributes.namespace.unwrap_or_default()
        };
        let namespace = self.namespace_object(name).await?;
        Ok(selector.matches(&namespace))
    }

    /// A namespace as admission reads it.
    /// The watch cache's copy when it has one (as upstream's informer
    /// lister), else storage's: no storage round trip per request.
    pub(super) async fn namespace_object(&self, name: &str) -> ApiResult<Value> {
        let namespaces = self.resolve("", "v1", "namespaces")?;
        if let Some(cached) = self.cached_copy(&namespaces, None, name) {
            return Ok(Value::clone(&cached));
        }
        self.get(
            &crate::auth::UserInfo::system(),
            &namespaces,
            None,
            name,
            "",
        )
        .await
    }
}

/// The object selector against the object and the old object.
fn object_matches(selector: Option<&Value>, object: Option<&Value>, old: Option<&Value>) -> bool {
    let Some(selector) = selector.filter(|s| s.as_object().is_some_and(|m| !m.is_empty())) else {
        return true;
    };
    let Some(selector) = LabelSelector::from_object(selector) else {
        return false;
    };
    if selector.is_empty() {
        return true;
    }
    [object, old]
        .into_iter()
        .flatten()
        .any(|o| o.get("metadata").is_some() && selector.matches(o))
}

/// One rule against the request: operation, group, version, resource (with
/// `*`, `x/*`, `*/y` forms), scope, and resourceNames when it has them (a
/// create that generates its name has none to match).
fn rule_matches(rule: &Value, attributes: &Attributes<'_>, def: &ResourceDef) -> bool {
    let strings = |key: &str| crate::object::strings_at(rule, key);
    let has = |key: &str, wanted: &str| {
        strings(key)
            .iter()
            .any(|entry| entry == "*" || entry == wanted)
    };
    if !has("operations", attributes.operation.as_str())
        || !has("apiGroups", &def.group)
        || !has("apiVersions", &def.version)
    {
        return false;
    }
    let resource_matches = strings("resources").iter().any(|entry| {
        let (resource, subresource) = entry.split_once('/').unwrap_or((entry, ""));
        (resource == "*" || resource == def.resource)
            && (subresource == "*" || subresource == attributes.subresource)
    });
    if !resource_matches {
        return false;
    }
    let names = strings("resourceNames");
    if !names.is_empty() && !names.iter().any(|n| n == attributes.name) {
        return false;
    }
    let is_namespace = def.group.is_empty() && def.resource == "namespaces";
    match rule.get("scope").and_then(Value::as_str).unwrap_or("") {
        "Namespaced" => attributes.namespace.is_some() && !is_namespace,
        "Cluster" => attributes.namespace.is_none() || is_namespace,
        _ => true,
    }
}
