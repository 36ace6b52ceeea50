//! Role-based access control as kube-apiserver's RBAC authorizer does it:
//! the rules of the Roles and ClusterRoles that a request's user is bound
//! to, read from the watch caches of the four RBAC resources (upstream reads
//! them from informers); the escalation checks on writes of those objects;
//! and the bootstrap policy every cluster starts with.
//!
//! Nothing here is held outside storage: every replica decides from the
//! same stored objects, so a binding written through one replica
//! authorizes requests on all of them.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::auth::{AccessRequest, ResourceAttributes, UserInfo, MASTERS_GROUP};
use crate::error::{ApiError, ApiResult, StatusReason};
use crate::kinds::Grant;
use crate::object;
use crate::registry::ResourceDef;
use crate::verbs::{ApiCore, LazyObject};

pub const RBAC_GROUP: &str = "rbac.authorization.k8s.io";
const SERVICE_ACCOUNT_PREFIX: &str = "system:serviceaccount:";

/// One RBAC PolicyRule (`rbac/v1`), with absent lists empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PolicyRule {
    pub verbs: Vec<String>,
    pub api_groups: Vec<String>,
    pub resources: Vec<String>,
    pub resource_names: Vec<String>,
    pub non_resource_urls: Vec<String>,
}

fn has(set: &[String], item: &str) -> bool {
    set.iter().any(|s| s == item)
}

fn has_all(set: &[String], items: &[String]) -> bool {
    items.iter().all(|item| has(set, item))
}

impl PolicyRule {
    pub fn from_json(rule: &Value) -> Self {
        Self {
            verbs: object::strings_at(rule, "verbs"),
            api_groups: object::strings_at(rule, "apiGroups"),
            resources: object::strings_at(rule, "resources"),
            resource_names: object::strings_at(rule, "resourceNames"),
            non_resource_urls: object::strings_at(rule, "nonResourceURLs"),
        }
    }

    /// The rules of a Role or ClusterRole object.
    pub fn of_role(role: &Value) -> Vec<Self> {
        role.get("rules")
            .and_then(Value::as_array)
            .map(|rules| rules.iter().map(Self::from_json).collect())
            .unwrap_or_default()
    }

    /// Upstream's RuleAllows.
    pub fn allows(&self, request: &AccessRequest<'_>) -> bool {
        let verb_matches = has(&self.verbs, "*") || has(&self.verbs, request.verb());
        match request {
            AccessRequest::Resource(attrs) => {
                let combined = match attrs.subresource {
                    Some(sub) if !sub.is_empty() => format!("{}/{sub}", attrs.resource),
                    _ => attrs.resource.to_string(),
                };
                verb_matches
                    && (has(&self.api_groups, "*") || has(&self.api_groups, attrs.group))
                    && self.resource_matches(&combined, attrs.subresource.unwrap_or(""))
                    && (self.resource_names.is_empty()
                        || has(&self.resource_names, attrs.name.unwrap_or("")))
            }
            AccessRequest::Path { path, .. } => {
                verb_matches
                    && self
                        .non_resource_urls
                        .iter()
                        .any(|rule| non_resource_url_matches(rule, path))
            }
        }
    }

    fn resource_matches(&self, combined: &str, subresource: &str) -> bool {
        self.resources.iter().any(|rule| {
            rule == "*"
                || rule == combined
                || (!subresource.is_empty() && rule.strip_prefix("*/") == Some(subresource))
        })
    }

    /// Upstream's ruleCovers: whether holding `self` holds all of `sub`.
    fn covers(&self, sub: &PolicyRule) -> bool {
        let verbs = has(&self.verbs, "*") || has_all(&self.verbs, &sub.verbs);
        let groups = has(&self.api_groups, "*") || has_all(&self.api_groups, &sub.api_groups);
        let resources = resources_cover(&self.resources, &sub.resources);
        let urls = sub.non_resource_urls.iter().all(|path| {
            self.non_resource_urls
                .iter()
                .any(|owner| non_resource_url_covers(owner, path))
        });
        let names = if sub.resource_names.is_empty() {
            self.resource_names.is_empty()
        } else {
            self.resource_names.is_empty() || has_all(&self.resource_names, &sub.resource_names)
        };
        verbs && groups && resources && names && urls
    }

    /// Upstream's BreakdownRule: one rule per group, resource, verb and
    /// name, then one per URL and verb.
    fn breakdown(&self) -> Vec<PolicyRule> {
        let names: Vec<Vec<String>> = if self.resource_names.is_empty() {
            vec![Vec::new()]
        } else {
            self.resource_names
                .iter()
                .map(|n| vec![n.clone()])
                .collect()
        };
        let mut out = Vec::new();
        for group in &self.api_groups {
            for resource in &self.resources {
                for verb in &self.verbs {
                    for name in &names {
                        out.push(PolicyRule {
                            verbs: vec![verb.clone()],
                            api_groups: vec![group.clone()],
                            resources: vec![resource.clone()],
                            resource_names: name.clone(),
                            non_resource_urls: Vec::new(),
                        });
                    }
                }
            }
        }
        for url in &self.non_resource_urls {
            for verb in &self.verbs {
                out.push(PolicyRule {
                    verbs: vec![verb.clone()],
                    non_resource_urls: vec![url.clone()],
                    ..Default::default()
                });
            }
        }
        out
    }

    /// Upstream's CompactString, as escalation errors print a rule.
    pub fn compact_string(&self) -> String {
        let fields = [
            ("APIGroups", &self.api_groups),
            ("Resources", &self.resources),
            ("NonResourceURLs", &self.non_resource_urls),
            ("ResourceNames", &self.resource_names),
            ("Verbs", &self.verbs),
        ];
        let parts: Vec<String> = fields
            .iter()
            .filter(|(_, values)| !values.is_empty())
            .map(|(name, values)| format!("{name}:{}", go_quoted_list(values)))
            .collect();
        format!("{{{}}}", parts.join(", "))
    }

    /// The rule as a SelfSubjectRulesReview lists it.
    fn review_json(&self) -> Value {
        if self.non_resource_urls.is_empty() {
            let mut rule = json!({
                "verbs": self.verbs,
                "apiGroups": self.api_groups,
                "resources": self.resources,
            });
            if !self.resource_names.is_empty() {
                rule["resourceNames"] = json!(self.resource_names);
            }
            rule
        } else {
            json!({"verbs": self.verbs, "nonResourceURLs": self.non_resource_urls})
        }
    }
}

/// Go's `%q` of a `[]string`: `["a" "b"]`.
pub(crate) fn go_quoted_list(values: &[String]) -> String {
    let quoted: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
    format!("[{}]", quoted.join(" "))
}

/// RBAC's NonResourceURLMatches: exact, `*`, or a prefix ending in `*`.
pub(crate) fn non_resource_url_matches(rule: &str, path: &str) -> bool {
    if rule == "*" || rule == path {
        return true;
    }
    rule.strip_suffix('*')
        .is_some_and(|prefix| path.starts_with(prefix))
}

fn non_resource_url_covers(owner: &str, path: &str) -> bool {
    owner == path
        || owner
            .strip_suffix('*')
            .is_some_and(|prefix| path.starts_with(prefix.trim_end_matches('*')))
}

/// Upstream's resourceCoversAll: `*`, the exact resource, or for a
/// subresource `*/<subresource>`.
fn resources_cover(owner: &[String], wanted: &[String]) -> bool {
    if has(owner, "*") || has_all(owner, wanted) {
        return true;
    }
    wanted.iter().all(|path| {
        has(owner, path)
            || path
                .split_once('/')
                .is_some_and(|(_, sub)| has(owner, &format!("*/{sub}")))
    })
}

/// Upstream's CompactRules: rules with one group, one resource and at
/// most one name that differ only by verb become one rule.
fn compact_rules(rules: Vec<PolicyRule>) -> Vec<PolicyRule> {
    let mut compacted: Vec<PolicyRule> = Vec::new();
    let mut simple: Vec<PolicyRule> = Vec::new();
    for rule in rules {
        let is_simple = rule.api_groups.len() == 1
            && rule.resources.len() == 1
            && rule.resource_names.len() <= 1
            && rule.non_resource_urls.is_empty();
        if !is_simple {
            compacted.push(rule);
            continue;
        }
        match simple.iter_mut().find(|s| {
            s.api_groups == rule.api_groups
                && s.resources == rule.resources
                && s.resource_names == rule.resource_names
        }) {
            Some(existing) => existing.verbs.extend(rule.verbs),
            None => simple.push(rule),
        }
    }
    compacted.extend(simple);
    compacted
}

/// Whether a binding subject is `user` (upstream's appliesToUser);
/// `namespace` is the binding's, which a ServiceAccount subject defaults to.
fn applies_to(subject: &Value, user: &UserInfo, namespace: &str) -> bool {
    let name = subject.get("name").and_then(Value::as_str).unwrap_or("");
    match subject.get("kind").and_then(Value::as_str).unwrap_or("") {
        "User" => user.name == name,
        "Group" => user.in_group(name),
        "ServiceAccount" => {
            let ns = subject
                .get("namespace")
                .and_then(Value::as_str)
                .filter(|ns| !ns.is_empty())
                .unwrap_or(namespace);
            !ns.is_empty() && user.name == format!("{SERVICE_ACCOUNT_PREFIX}{ns}:{name}")
        }
        _ => false,
    }
}

/// How upstream names a binding's subject in an allow reason.
fn describe_subject(subject: &Value, namespace: &str) -> String {
    let kind = subject.get("kind").and_then(Value::as_str).unwrap_or("");
    let name = subject.get("name").and_then(Value::as_str).unwrap_or("");
    if kind == "ServiceAccount" {
        let ns = subject
            .get("namespace")
            .and_then(Value::as_str)
            .filter(|ns| !ns.is_empty())
            .unwrap_or(namespace);
        return format!("{kind} {:?}", format!("{name}/{ns}"));
    }
    format!("{kind} {name:?}")
}

/// A decision with upstream's reason (for SubjectAccessReviews).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    pub reason: String,
}

/// The four RBAC resources' definitions and watch caches, resolved once
/// (`ApiCore::rbac_defs`), not per decision.
pub(crate) struct RbacDefs {
    roles: Arc<ResourceDef>,
    cluster_roles: Arc<ResourceDef>,
    role_bindings: Arc<ResourceDef>,
    cluster_role_bindings: Arc<ResourceDef>,
    /// The caches, in the order of the fields above.
    caches: [Arc<crate::watch::cache::WatchCache>; 4],
}

impl RbacDefs {
    fn cache(&self, def: &ResourceDef) -> &Arc<crate::watch::cache::WatchCache> {
        let at = match def.resource.as_str() {
            "roles" => 0,
            "clusterroles" => 1,
            "rolebindings" => 2,
            _ => 3,
        };
        &self.caches[at]
    }
}

/// Where a decision reads Roles, ClusterRoles and bindings from.
enum RbacObjects<'a> {
    /// The watch caches as they are: every decision looks here first.
    Cached {
        core: &'a ApiCore,
        defs: &'a RbacDefs,
    },
    /// One consistent read of what a decision in one namespace needs: a
    /// denial's second look, so that what was just written (through any
    /// replica) counts.
    Read {
        cluster_bindings: Vec<Arc<Value>>,
        bindings: Vec<Arc<Value>>,
        roles: Vec<Arc<Value>>,
        cluster_roles: Vec<Arc<Value>>,
    },
}

impl RbacObjects<'_> {
    fn cluster_bindings(&self) -> Vec<Arc<Value>> {
        match self {
            Self::Cached { core, defs } => {
                core.cached_under(defs, &defs.cluster_role_bindings, None)
            }
            Self::Read {
                cluster_bindings, ..
            } => cluster_bindings.clone(),
        }
    }

    fn bindings(&self, namespace: &str) -> Vec<Arc<Value>> {
        match self {
            Self::Cached { core, defs } => {
                core.cached_under(defs, &defs.role_bindings, Some(namespace))
            }
            Self::Read { bindings, .. } => bindings
                .iter()
                .filter(|b| object::namespace(b) == namespace)
                .cloned()
                .collect(),
        }
    }

    /// A Role in `namespace`, or a ClusterRole (namespace None).
    fn role(&self, namespace: Option<&str>, name: &str) -> Option<Arc<Value>> {
        match self {
            Self::Cached { core, defs } => {
                let def = if namespace.is_some() {
                    &defs.roles
                } else {
                    &defs.cluster_roles
                };
                defs.cache(def).get(&def.key(&core.prefix, namespace, name))
            }
            Self::Read {
                roles,
                cluster_roles,
                ..
            } => {
                let candidates = if namespace.is_some() {
                    roles
                } else {
                    cluster_roles
                };
                candidates
                    .iter()
                    .find(|r| {
                        object::name(r) == name
                            && namespace.is_none_or(|ns| object::namespace(r) == ns)
                    })
                    .cloned()
            }
        }
    }
}

impl ApiCore {
    /// The RBAC resources and their caches (started on first use).
    fn rbac_defs(&self) -> Option<&RbacDefs> {
        self.rbac
            .get_or_init(|| {
                let def = |resource| self.registry.lookup(RBAC_GROUP, "v1", resource);
                let (roles, cluster_roles, role_bindings, cluster_role_bindings) = (
                    def("roles")?,
                    def("clusterroles")?,
                    def("rolebindings")?,
                    def("clusterrolebindings")?,
                );
                let cache = |def: &ResourceDef| self.cache_of(def);
                let caches = [
                    cache(&roles),
                    cache(&cluster_roles),
                    cache(&role_bindings),
                    cache(&cluster_role_bindings),
                ];
                Some(RbacDefs {
                    roles,
                    cluster_roles,
                    role_bindings,
                    cluster_role_bindings,
                    caches,
                })
            })
            .as_ref()
    }

    /// The cached objects of `def` (in `namespace`, if given).
    fn cached_under(
        &self,
        defs: &RbacDefs,
        def: &ResourceDef,
        namespace: Option<&str>,
    ) -> Vec<Arc<Value>> {
        let prefix = def.key_prefix(&self.prefix, namespace);
        defs.cache(def)
            .list(&prefix)
            .0
            .into_iter()
            .map(|(_, object)| object)
            .collect()
    }

    fn rbac_cached(&self) -> Option<RbacObjects<'_>> {
        Some(RbacObjects::Cached {
            core: self,
            defs: self.rbac_defs()?,
        })
    }

    /// A consistent read of the bindings and roles a decision in
    /// `namespace` reads (served from the caches once they are current,
    /// else from storage, as any consistent list).
    async fn rbac_read(&self, namespace: Option<&str>) -> ApiResult<RbacObjects<'static>> {
        let defs = self
            .rbac_defs()
            .ok_or_else(|| ApiError::internal("RBAC resources are not registered"))?;
        let everything = crate::verbs::ListOptions::default();
        let list = |def: &Arc<ResourceDef>, ns: Option<&str>| {
            let (def, ns, everything) = (def.clone(), ns.map(str::to_string), &everything);
            async move {
                self.list_stored(&def, ns.as_deref(), everything)
                    .await
                    .map(|list| list.items.into_iter().map(LazyObject::into_tree).collect())
            }
        };
        let namespace = namespace.filter(|ns| !ns.is_empty());
        let (cluster_bindings, cluster_roles) = futures::future::try_join(
            list(&defs.cluster_role_bindings, None),
            list(&defs.cluster_roles, None),
        )
        .await?;
        let (bindings, roles) = match namespace {
            Some(ns) => {
                futures::future::try_join(
                    list(&defs.role_bindings, Some(ns)),
                    list(&defs.roles, Some(ns)),
                )
                .await?
            }
            None => (Vec::new(), Vec::new()),
        };
        Ok(RbacObjects::Read {
            cluster_bindings,
            bindings,
            roles,
            cluster_roles,
        })
    }

    /// The rules a binding's roleRef grants, in the binding's namespace
    /// (upstream's GetRoleReferenceRules); Err names what is missing.
    fn role_reference_rules(
        objects: &RbacObjects<'_>,
        role_ref: &Value,
        namespace: &str,
    ) -> Result<Vec<PolicyRule>, ApiError> {
        let name = role_ref.get("name").and_then(Value::as_str).unwrap_or("");
        let (resource, ns) = match role_ref.get("kind").and_then(Value::as_str) {
            Some("Role") => ("roles", Some(namespace)),
            Some("ClusterRole") => ("clusterroles", None),
            other => {
                return Err(ApiError::bad_request(format!(
                    "unsupported role reference kind: {:?}",
                    other.unwrap_or("")
                )))
            }
        };
        objects
            .role(ns, name)
            .map(|role| PolicyRule::of_role(&role))
            .ok_or_else(|| ApiError::not_found(RBAC_GROUP, resource, name))
    }

    /// Upstream's VisitRulesFor: the rules of every ClusterRoleBinding, then
    /// every RoleBinding in `namespace`, that applies to `user`; `visit`
    /// returns false to stop. Bindings whose role is missing are skipped.
    fn visit_rules_for(
        objects: &RbacObjects<'_>,
        user: &UserInfo,
        namespace: Option<&str>,
        mut visit: impl FnMut(&dyn Fn() -> String, &PolicyRule) -> bool,
    ) {
        let namespaced = match namespace.filter(|ns| !ns.is_empty()) {
            Some(ns) => objects.bindings(ns),
            None => Vec::new(),
        };
        let scopes = [
            ("ClusterRoleBinding", objects.cluster_bindings()),
            ("RoleBinding", namespaced),
        ];
        for (kind, bindings) in &scopes {
            for binding in bindings {
                let ns = object::namespace(binding);
                let subjects = binding.get("subjects").and_then(Value::as_array);
                let Some(subject) = subjects
                    .into_iter()
                    .flatten()
                    .find(|s| applies_to(s, user, ns))
                else {
                    continue;
                };
                let role_ref = binding.get("roleRef").unwrap_or(&Value::Null);
                let Ok(rules) = Self::role_reference_rules(objects, role_ref, ns) else {
                    continue;
                };
                let describe = || {
                    let name = object::name(binding);
                    let binding_name = if ns.is_empty() {
                        name.to_string()
                    } else {
                        format!("{name}/{ns}")
                    };
                    format!(
                        "{kind} {binding_name:?} of {} {:?} to {}",
                        role_ref.get("kind").and_then(Value::as_str).unwrap_or(""),
                        role_ref.get("name").and_then(Value::as_str).unwrap_or(""),
                        describe_subject(subject, ns)
                    )
                };
                for rule in &rules {
                    if !visit(&describe, rule) {
                        return;
                    }
                }
            }
        }
    }

    fn rules_in(
        objects: &RbacObjects<'_>,
        user: &UserInfo,
        namespace: Option<&str>,
    ) -> Vec<PolicyRule> {
        let mut rules = Vec::new();
        Self::visit_rules_for(objects, user, namespace, |_, rule| {
            rules.push(rule.clone());
            true
        });
        rules
    }

    /// The rules that apply to `user` in `namespace` (upstream's RulesFor),
    /// as the caches have them.
    pub(crate) fn rules_for(&self, user: &UserInfo, namespace: Option<&str>) -> Vec<PolicyRule> {
        match self.rbac_cached() {
            Some(objects) => Self::rules_in(&objects, user, namespace),
            None => Vec::new(),
        }
    }

    /// RBAC's decision from `objects` (masters aside).
    fn decide_from(
        objects: &RbacObjects<'_>,
        user: &UserInfo,
        request: &AccessRequest<'_>,
    ) -> Decision {
        let namespace = match request {
            AccessRequest::Resource(attrs) => attrs.namespace,
            AccessRequest::Path { .. } => None,
        };
        let mut reason = None;
        Self::visit_rules_for(objects, user, namespace, |describe, rule| {
            if rule.allows(request) {
                reason = Some(format!("RBAC: allowed by {}", describe()));
                return false;
            }
            true
        });
        Decision {
            allowed: reason.is_some(),
            reason: reason.unwrap_or_default(),
        }
    }

    /// The decision of kube-apiserver's authorizer chain, from the caches:
    /// system:masters may do anything (upstream's privileged-group
    /// authorizer, which gives no reason), then RBAC.
    pub fn decide(&self, user: &UserInfo, request: &AccessRequest<'_>) -> Decision {
        if user.in_group(MASTERS_GROUP) {
            return Decision {
                allowed: true,
                reason: String::new(),
            };
        }
        match self.rbac_cached() {
            Some(objects) => Self::decide_from(&objects, user, request),
            None => Decision {
                allowed: false,
                reason: String::new(),
            },
        }
    }

    /// Allows the request or answers upstream's 403 (see `decide_current`).
    pub async fn authorize_request(
        &self,
        user: &UserInfo,
        request: &AccessRequest<'_>,
    ) -> ApiResult<()> {
        if self.decide_current(user, request).await.allowed {
            return Ok(());
        }
        Err(request.forbidden(user))
    }

    /// `verb` on a non-resource `path` (discovery, OpenAPI, health).
    pub async fn authorize_path(&self, user: &UserInfo, verb: &str, path: &str) -> ApiResult<()> {
        self.authorize_request(user, &AccessRequest::Path { verb, path })
            .await
    }

    /// As `decide`; an authenticated user's denial is decided again from a
    /// consistent read, so a binding just written (through any replica)
    /// counts at once. Anonymous denials are final: they cost no reads.
    pub(crate) async fn decide_current(
        &self,
        user: &UserInfo,
        request: &AccessRequest<'_>,
    ) -> Decision {
        let decision = self.decide(user, request);
        if decision.allowed || user.is_anonymous() {
            return decision;
        }
        let namespace = match request {
            AccessRequest::Resource(attrs) => attrs.namespace,
            AccessRequest::Path { .. } => None,
        };
        match self.rbac_read(namespace).await {
            Ok(objects) => Self::decide_from(&objects, user, request),
            Err(e) => {
                tracing::warn!(error = %e, "reading RBAC objects failed");
                decision
            }
        }
    }

    /// Upstream's escalation checks on a write of an RBAC object by `user`
    /// (its policy-based storage): a Role or ClusterRole may grant only
    /// what its writer holds, unless the writer may `escalate` it; a binding
    /// may bind only a role whose rules its writer holds, unless the writer
    /// may `bind` that role. `old` is the object an update replaces: a write
    /// that changes neither rules nor roleRef is not checked.
    pub(crate) async fn confirm_no_escalation(
        &self,
        user: &UserInfo,
        def: &ResourceDef,
        namespace: Option<&str>,
        object: &Value,
        old: Option<&Value>,
    ) -> ApiResult<()> {
        let Some(grant) = def.kind_impl.grants() else {
            return Ok(());
        };
        if user.in_group(MASTERS_GROUP) {
            return Ok(());
        }
        let name = object::name(object);
        let scope = namespace.filter(|_| def.namespaced);
        // Writes of RBAC objects are rare: decide from a consistent read.
        let objects = self.rbac_read(scope).await?;
        let rules = match grant {
            Grant::Rules => {
                if old.is_some_and(|old| old.get("rules") == object.get("rules")) {
                    return Ok(());
                }
                let escalate = ResourceAttributes {
                    verb: "escalate",
                    group: &def.group,
                    resource: &def.resource,
                    subresource: None,
                    namespace: scope,
                    name: Some(name),
                };
                if Self::decide_from(&objects, user, &AccessRequest::Resource(&escalate)).allowed {
                    return Ok(());
                }
                PolicyRule::of_role(object)
            }
            Grant::RoleReference => {
                let role_ref = object.get("roleRef").unwrap_or(&Value::Null);
                if old.is_some_and(|old| old.get("roleRef") == Some(role_ref)) {
                    return Ok(());
                }
                let role_resource = match role_ref.get("kind").and_then(Value::as_str) {
                    Some("Role") => "roles",
                    _ => "clusterroles",
                };
                let role_name = role_ref.get("name").and_then(Value::as_str).unwrap_or("");
                let bind = ResourceAttributes {
                    verb: "bind",
                    group: RBAC_GROUP,
                    resource: role_resource,
                    subresource: None,
                    namespace: scope,
                    name: Some(role_name),
                };
                if Self::decide_from(&objects, user, &AccessRequest::Resource(&bind)).allowed {
                    return Ok(());
                }
                Self::role_reference_rules(&objects, role_ref, scope.unwrap_or("")).map_err(
                    |err| {
                        ApiError::forbidden_resource(&def.group, &def.resource, name, &err.message)
                    },
                )?
            }
        };
        let owned = Self::rules_in(&objects, user, scope);
        let missing: Vec<PolicyRule> = rules
            .iter()
            .flat_map(PolicyRule::breakdown)
            .filter(|wanted| !owned.iter().any(|rule| rule.covers(wanted)))
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        let described: BTreeSet<String> = compact_rules(missing)
            .iter()
            .map(PolicyRule::compact_string)
            .collect();
        let message = format!(
            "user {:?} (groups={}) is attempting to grant RBAC permissions not currently held:\n{}",
            user.name,
            go_quoted_list(&user.groups),
            described.into_iter().collect::<Vec<_>>().join("\n")
        );
        Err(ApiError::forbidden_resource(
            &def.group,
            &def.resource,
            name,
            &message,
        ))
    }

    /// A SelfSubjectRulesReview's status: the rules that apply to `user` in
    /// `namespace`, resource rules and non-resource rules apart.
    pub(crate) fn rules_review(&self, user: &UserInfo, namespace: Option<&str>) -> Value {
        let mut resource_rules = Vec::new();
        let mut non_resource_rules = Vec::new();
        for rule in self.rules_for(user, namespace) {
            if !rule.resources.is_empty() {
                resource_rules.push(rule.review_json());
            }
            if !rule.non_resource_urls.is_empty() {
                non_resource_rules.push(rule.review_json());
            }
        }
        json!({
            "resourceRules": resource_rules,
            "nonResourceRules": non_resource_rules,
            "incomplete": false,
        })
    }

    /// Creates one bootstrap object, or reconciles the stored one as
    /// upstream reconciles its bootstrap policy: what this version grants is
    /// added to what is stored (nothing is taken away) unless the object
    /// opts out (autoupdate "false"). Read from storage: the caches start
    /// after these writes.
    async fn ensure_bootstrap_object(&self, def: &ResourceDef, object: Value) -> ApiResult<()> {
        let name = object::name(&object).to_string();
        let namespace = object::namespace(&object).to_string();
        let namespace = (!namespace.is_empty()).then_some(namespace.as_str());
        let stored = match self.get_stored(def, namespace, &name).await {
            Ok((_, stored)) => stored,
            Err(e) if e.reason == StatusReason::NotFound => {
                return self.create_if_missing(def, object).await;
            }
            Err(e) => return Err(e),
        };
        if reconciled(&stored, &object) == stored {
            return Ok(());
        }
        let opts = crate::verbs::WriteOptions {
            field_manager: "capstan-bootstrap".to_string(),
            ..Default::default()
        };
        self.update_internal(
            &UserInfo::system(),
            def,
            namespace,
            &name,
            &opts,
            crate::verbs::View::Main,
            |current| Ok(reconciled(current, &object)),
        )
        .await
        .map(|_| ())
    }

    /// Creates upstream's bootstrap ClusterRoles and ClusterRoleBindings
    /// that are missing (those the authorizer's defaults rest on), then
    /// waits for the RBAC caches to hold them. Safe on every replica.
    pub(crate) async fn bootstrap_rbac(&self) -> ApiResult<()> {
        let defs = self
            .rbac_defs()
            .ok_or_else(|| ApiError::internal("RBAC resources are not registered"))?;
        // Concurrently: on a fresh store the creates share fsyncs (the
        // embedded store's group commit; etcd's batching).
        let ensured = bootstrap_policy().into_iter().map(|(resource, object)| {
            let def = match resource {
                "clusterroles" => &defs.cluster_roles,
                "roles" => &defs.roles,
                "rolebindings" => &defs.role_bindings,
                _ => &defs.cluster_role_bindings,
            };
            self.ensure_bootstrap_object(def, object)
        });
        futures::future::try_join_all(ensured).await?;
        for def in [
            &defs.cluster_role_bindings,
            &defs.role_bindings,
            &defs.cluster_roles,
            &defs.roles,
        ] {
            let cache = defs.cache(def);
            if !cache.wait_ready(crate::verbs::CACHE_READY_TIMEOUT).await {
                return Err(ApiError::internal(format!(
                    "the {} cache did not load",
                    def.resource
                )));
            }
            // A store whose watches report no progress (old etcd) cannot
            // confirm a quiet cache is current; its events still arrive.
            if self.storage.progress_is_ordered() {
                self.catch_up(cache, crate::verbs::CACHE_READY_TIMEOUT)
                    .await?;
            }
        }
        Ok(())
    }
}

/// `current`, a stored bootstrap ClusterRole or ClusterRoleBinding, with
/// what `expected` (this version's) adds, as upstream reconciles them:
/// missing labels and annotations, rules the stored ones do not cover (or,
/// for an aggregated role, missing selectors), missing subjects. Extra
/// permissions and subjects stay; `autoupdate: "false"` leaves it alone.
fn reconciled(current: &Value, expected: &Value) -> Value {
    let mut merged = current.clone();
    let autoupdate = current
        .pointer("/metadata/annotations/rbac.authorization.kubernetes.io~1autoupdate")
        .and_then(Value::as_str);
    if autoupdate == Some("false") {
        return merged;
    }
    for field in ["labels", "annotations"] {
        let wanted = expected
            .pointer(&format!("/metadata/{field}"))
            .and_then(Value::as_object);
        for (key, value) in wanted.into_iter().flatten() {
            let map = merged
                .pointer_mut("/metadata")
                .and_then(Value::as_object_mut)
                .map(|meta| meta.entry(field).or_insert_with(|| json!({})));
            if let Some(Value::Object(map)) = map {
                map.entry(key.clone()).or_insert_with(|| value.clone());
            }
        }
    }
    if expected.get("aggregationRule").is_some() {
        if merged.get("aggregationRule").is_none() {
            if let Some(object) = merged.as_object_mut() {
                object.insert(
                    "aggregationRule".into(),
                    json!({"clusterRoleSelectors": []}),
                );
            }
        }
        append_missing(
            &mut merged,
            expected,
            "/aggregationRule/clusterRoleSelectors",
            &|have: &[Value], selector: &Value| !have.contains(selector),
        );
    } else if expected.get("rules").is_some() {
        append_missing(&mut merged, expected, "/rules", &|have, rule| {
            let owned: Vec<PolicyRule> = have.iter().map(PolicyRule::from_json).collect();
            !PolicyRule::from_json(rule)
                .breakdown()
                .iter()
                .all(|wanted| owned.iter().any(|o| o.covers(wanted)))
        });
    }
    if expected.get("subjects").is_some() {
        append_missing(&mut merged, expected, "/subjects", &|have, subject| {
            let same = |a: &Value, b: &Value| {
                ["kind", "name", "namespace"]
                    .iter()
                    .all(|k| a.get(k).and_then(Value::as_str) == b.get(k).and_then(Value::as_str))
            };
            !have.iter().any(|h| same(h, subject))
        });
    }
    merged
}

/// Appends to the list at `path` (a JSON pointer whose parent exists, or
/// a top-level key) each item of `expected`'s list there that `missing`
/// says the current list lacks.
fn append_missing(
    merged: &mut Value,
    expected: &Value,
    path: &str,
    missing: &dyn Fn(&[Value], &Value) -> bool,
) {
    let wanted = expected.pointer(path).and_then(Value::as_array).cloned();
    for item in wanted.into_iter().flatten() {
        let mut list: Vec<Value> = merged
            .pointer(path)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if !missing(&list, &item) {
            continue;
        }
        list.push(item);
        let (parent, key) = path.rsplit_once('/').unwrap_or(("", path));
        let target = if parent.is_empty() {
            Some(&mut *merged)
        } else {
            merged.pointer_mut(parent)
        };
        if let Some(Value::Object(object)) = target {
            object.insert(key.to_string(), Value::Array(list));
        }
    }
}

/// Upstream's user-facing default ClusterRoles, as Kubernetes 1.32 renders
/// them with its default feature gates: admin, edit and view (filled in by
/// the clusterrole-aggregation controller), the system:aggregate-to-* roles
/// they gather, and system:monitoring.
const DEFAULT_ROLES: &str = include_str!("rbac_bootstrap_roles.json");

/// Upstream's ClusterRoles and ClusterRoleBindings for the system's own
/// components (kube-scheduler, kube-controller-manager, kube-proxy, nodes,
/// the certificate approvers, system:auth-delegator and others), as 1.32
/// renders them with default feature gates (the DRA rules, off by default
/// until 1.34, left out): `{"clusterRoles": [...], "clusterRoleBindings": [...]}`.
const SYSTEM_ROLES: &str = include_str!("rbac_system_roles.json");

/// The bootstrap policy: cluster-admin for system:masters; self-reviews for
/// every authenticated user (system:basic-user); discovery for
/// authenticated users and health and version for everyone (written from the
/// same lists the facade serves, `auth::DISCOVERY_URLS` and
/// `auth::PUBLIC_URLS`); then upstream's default roles and the
/// system:monitoring binding.
fn bootstrap_policy() -> Vec<(&'static str, Value)> {
    let metadata = |name: &str| {
        json!({
            "name": name,
            "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
            "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"},
        })
    };
    let role = |name: &str, rules: Value| {
        (
            "clusterroles",
            json!({
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRole",
                "metadata": metadata(name),
                "rules": rules,
            }),
        )
    };
    let binding = |name: &str, groups: &[&str]| {
        let subjects: Vec<Value> = groups
            .iter()
            .map(|g| json!({"kind": "Group", "apiGroup": RBAC_GROUP, "name": g}))
            .collect();
        (
            "clusterrolebindings",
            json!({
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": metadata(name),
                "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": name},
                "subjects": subjects,
            }),
        )
    };
    let self_reviews: Vec<Value> = crate::authorization::review::SELF_REVIEWS
        .iter()
        .map(|(group, resources)| {
            json!({"verbs": ["create"], "apiGroups": [group], "resources": resources})
        })
        .collect();
    let authenticated = crate::auth::AUTHENTICATED_GROUP;
    let mut policy = vec![
        role(
            "cluster-admin",
            json!([
                {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
                {"verbs": ["*"], "nonResourceURLs": ["*"]},
            ]),
        ),
        role("system:basic-user", json!(self_reviews)),
        role(
            "system:discovery",
            json!([{"verbs": ["get"], "nonResourceURLs": crate::auth::DISCOVERY_URLS}]),
        ),
        role(
            "system:public-info-viewer",
            json!([{"verbs": ["get"], "nonResourceURLs": crate::auth::PUBLIC_URLS}]),
        ),
        binding("cluster-admin", &[MASTERS_GROUP]),
        binding("system:basic-user", &[authenticated]),
        binding("system:discovery", &[authenticated]),
        binding(
            "system:public-info-viewer",
            &[authenticated, crate::auth::UNAUTHENTICATED_GROUP],
        ),
    ];
    // Parsed in a unit test, so it cannot fail here.
    let defaults: Vec<Value> = serde_json::from_str(DEFAULT_ROLES).unwrap_or_default();
    policy.extend(defaults.into_iter().map(|role| ("clusterroles", role)));
    policy.push(binding("system:monitoring", &["system:monitoring"]));
    let system: Value = serde_json::from_str(SYSTEM_ROLES).unwrap_or_default();
    for (list, resource) in [
        ("clusterRoles", "clusterroles"),
        ("clusterRoleBindings", "clusterrolebindings"),
    ] {
        let objects = system.get(list).and_then(Value::as_array).cloned();
        policy.extend(objects.into_iter().flatten().map(|o| (resource, o)));
    }
    policy.push(role(
        "system:service-account-issuer-discovery",
        json!([{"verbs": ["get"], "nonResourceURLs": crate::authentication::tokens::ISSUER_DISCOVERY_URLS}]),
    ));
    policy.push(binding(
        "system:service-account-issuer-discovery",
        &["system:serviceaccounts"],
    ));
    policy.extend(kube_system_policy());
    policy
}

/// Upstream's namespaced bootstrap policy in kube-system that Capstan's
/// features rest on: who may read the extension-apiserver-authentication
/// ConfigMap (extension API servers are bound to the Role by their
/// installers; the scheduler and controller manager by default).
fn kube_system_policy() -> Vec<(&'static str, Value)> {
    let metadata = |name: &str| {
        json!({
            "name": name,
            "namespace": "kube-system",
            "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
            "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"},
        })
    };
    let reader = "extension-apiserver-authentication-reader";
    vec![
        (
            "roles",
            json!({
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "Role",
                "metadata": metadata(reader),
                "rules": [{
                    "verbs": ["get", "list", "watch"],
                    "apiGroups": [""],
                    "resources": ["configmaps"],
                    "resourceNames": [crate::controllers::authentication_trust::CONFIG_MAP],
                }],
            }),
        ),
        (
            "rolebindings",
            json!({
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": metadata(&format!("system::{reader}")),
                "roleRef": {"apiGroup": RBAC_GROUP, "kind": "Role", "name": reader},
                "subjects": [
                    {"kind": "User", "apiGroup": RBAC_GROUP, "name": "system:kube-controller-manager"},
                    {"kind": "User", "apiGroup": RBAC_GROUP, "name": "system:kube-scheduler"},
                ],
            }),
        ),
    ]
}

#[cfg(test)]
#[path = "rbac_tests.rs"]
mod tests;
