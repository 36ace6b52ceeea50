//! `ApiCore`, what every verb shares (the options, the views, the body's
//! source, reading and writing the stored form) and the checks they make
//! before any verb runs (authorization, scope).

pub(super) use std::borrow::Cow;
pub(super) use std::sync::Arc;

pub(super) use base64::Engine as _;
pub(super) use serde_json::{json, Value};

pub(super) use crate::auth::{AccessRequest, ResourceAttributes, UserInfo};
pub(super) use crate::error::{ApiError, ApiResult};
pub(super) use crate::object;
pub(super) use crate::registry::{RegistryHandle, ResourceDef};
pub(super) use crate::selectors::{FieldSelector, LabelSelector};
pub(super) use crate::storage::{KeyValue, ListParams, Storage, StorageError};
pub(super) use crate::validate::object_meta;
pub(super) use crate::watch::cached::CachedObject;

/// Attempts of a server-side read-modify-write before giving up on conflicts.
pub(super) const MAX_CONFLICT_RETRIES: usize = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FieldValidation {
    /// Unknown fields are dropped silently.
    Ignore,
    /// Unknown fields are dropped and reported as warnings.
    #[default]
    Warn,
    /// Unknown fields fail the request.
    Strict,
}

impl FieldValidation {
    pub fn parse(value: &str) -> ApiResult<Self> {
        match value {
            "" | "Warn" => Ok(Self::Warn),
            "Ignore" => Ok(Self::Ignore),
            "Strict" => Ok(Self::Strict),
            other => Err(ApiError::bad_request(format!(
                "fieldValidation must be one of Ignore, Warn or Strict, got {other:?}"
            ))),
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct WriteOptions {
    pub dry_run: bool,
    /// Who owns the fields this write sets (managedFields), as the client
    /// named it; server-side apply requires it.
    pub field_manager: String,
    /// The manager of a write that names none: upstream's default from the
    /// client's User-Agent (see [`field_manager_from_user_agent`]).
    pub default_field_manager: String,
    pub field_validation: FieldValidation,
    /// Server-side apply only: take over fields other managers own.
    pub force: bool,
    /// Keys the JSON body repeated (dotted paths), found by the front end
    /// while decoding; reported per fieldValidation like unknown fields.
    pub duplicate_fields: Vec<String>,
}

/// Upstream's field manager for a write that names none: the User-Agent up
/// to its first '/', e.g. "kubectl" or "OpenAPI-Generator".
pub fn field_manager_from_user_agent(user_agent: &str) -> String {
    let prefix = user_agent.split('/').next().unwrap_or_default();
    prefix.chars().take(128).collect()
}

/// A fieldManager parameter as upstream checks it.
pub fn check_field_manager(field_manager: &str) -> ApiResult<()> {
    if field_manager.len() > 128 {
        return Err(ApiError::bad_request(
            "fieldManager: Too long: may not be more than 128 bytes",
        ));
    }
    Ok(())
}

/// The field manager of writes the server makes itself, as upstream names it.
pub(super) const SYSTEM_FIELD_MANAGER: &str = "kube-apiserver";

/// How a write's managedFields come about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FieldOwnership {
    /// A create/update/patch: the fields it changed become the manager's.
    RecordUpdate,
    /// Server-side apply already computed them.
    Applied,
}

/// Where a written object came from. Upstream decodes each with another
/// decoder and words a type or strict-decoding error in that handler's way.
#[derive(Debug, Clone, Copy)]
pub(crate) enum BodySource<'a> {
    /// A create's or update's body (encoding/json): 400.
    Sent,
    /// An update's body that was already decoded before the read.
    Decoded,
    /// A JSON or merge patch's result (encoding/json): 422 on `patch`,
    /// quoting the patched object.
    JsonPatch,
    /// A strategic merge patch's result (the unstructured converter): 422
    /// on `patch`, quoting the patch as Go prints it.
    StrategicPatch(&'a Value),
    /// A server-side apply's result.
    Applied,
}

impl BodySource<'_> {
    /// Upstream's refusal of a body decoded as `kind` in `version`: `json`
    /// is what Go's decoder said, `unstructured` what the unstructured
    /// converter said (strategic merge patches use that one).
    pub(super) fn refusal(
        self,
        (kind, version): (&str, &str),
        object: &Value,
        json: &str,
        unstructured: &str,
    ) -> ApiError {
        match self {
            BodySource::JsonPatch => patch_invalid(object_json(object), json),
            BodySource::StrategicPatch(patch) => {
                patch_invalid(crate::openapi::go_values::go_format(patch), unstructured)
            }
            BodySource::Sent | BodySource::Decoded | BodySource::Applied => ApiError::bad_request(
                format!("{kind} in version \"{version}\" cannot be handled as a {kind}: {json}"),
            ),
        }
    }

    pub(super) fn type_error(
        self,
        kind_version: (&str, &str),
        object: &Value,
        mismatch: &crate::openapi::TypeMismatch,
    ) -> ApiError {
        self.refusal(kind_version, object, &mismatch.json, &mismatch.unstructured)
    }

    pub(super) fn strict_error(
        self,
        kind_version: (&str, &str),
        object: &Value,
        errors: &str,
    ) -> ApiError {
        let detail = format!("strict decoding error: {errors}");
        self.refusal(kind_version, object, &detail, &detail)
    }
}

pub(super) const SCALE_DEFINITION: &str = "io.k8s.api.autoscaling.v1.Scale";

/// What upstream's patch handler answers when the patched object does not
/// decode: Invalid, with no kind or name, on the field `patch`.
pub(super) fn patch_invalid(value: String, detail: &str) -> ApiError {
    ApiError::invalid(
        "",
        "",
        "",
        vec![crate::error::FieldError::invalid("patch", &value, detail)],
    )
}

pub(super) fn object_json(object: &Value) -> String {
    serde_json::to_string(object).unwrap_or_default()
}

/// A body of another kind than the resource's own (a Scale, an Eviction)
/// decoded as upstream decodes it into that kind, refused in `source`'s
/// words (upstream's transformDecodeError for a sent body).
pub(crate) fn decode_body_as(
    source: BodySource<'_>,
    definition: &str,
    kind_version: (&str, &str),
    body: &mut Value,
) -> ApiResult<()> {
    crate::openapi::decode_typed(definition, body)
        .map(|_| ())
        .map_err(|mismatch| source.type_error(kind_version, body, &mismatch))
}

/// upstream's checkName: an update's body must name the object and
/// namespace of its URL.
pub(super) fn check_name_matches_url(
    object: &Value,
    name: &str,
    namespace: Option<&str>,
) -> ApiResult<()> {
    let object_name = object::name(object);
    if object_name != name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({object_name}) does not match the name on the URL ({name})"
        )));
    }
    let object_namespace = object::meta_str(object, "namespace");
    match namespace {
        Some(namespace) if !object_namespace.is_empty() && object_namespace != namespace => {
            Err(ApiError::bad_request(format!(
                "the namespace of the object ({object_namespace}) does not match the namespace on the URL ({namespace})"
            )))
        }
        _ => Ok(()),
    }
}

#[derive(Debug, Clone, Default)]
pub struct ListOptions {
    pub label_selector: String,
    pub field_selector: String,
    pub limit: i64,
    pub continue_token: String,
    pub resource_version: String,
    pub resource_version_match: String,
    /// Only for watches: a list that names it is refused.
    pub send_initial_events: Option<bool>,
}

#[derive(Debug, Clone, Default)]
pub struct DeleteOptions {
    pub grace_period_seconds: Option<i64>,
    pub precondition_uid: Option<String>,
    pub precondition_resource_version: Option<String>,
    pub propagation_policy: Option<String>,
    pub dry_run: bool,
}

/// What a request addresses: the object itself or one of its subresources.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum View {
    #[default]
    Main,
    /// `/status`: only status changes.
    Status,
    /// `/scale`: an autoscaling/v1 Scale over spec.replicas.
    Scale,
    /// `/approval` of a CertificateSigningRequest: only status.conditions change.
    Approval,
    /// `pods/<name>/binding`: a scheduler places the pod (spec.nodeName and
    /// the PodScheduled condition change together).
    Binding,
    /// `namespaces/<name>/finalize`: only spec.finalizers change (the usual
    /// way out of a namespace stuck in Terminating).
    Finalize,
    /// `pods/<name>/eviction`: a delete within the pod's disruption budget.
    Eviction,
    /// `pods/<name>/ephemeralcontainers`: only spec.ephemeralContainers
    /// change, and only by additions (`kubectl debug`).
    EphemeralContainers,
    /// `pods/<name>/resize`: only containers' resources and resizePolicy
    /// change (in-place vertical scaling).
    Resize,
}

impl View {
    /// Parses a URL's subresource segment.
    pub fn parse(subresource: Option<&str>) -> Option<Self> {
        match subresource {
            None => Some(Self::Main),
            Some("status") => Some(Self::Status),
            Some("scale") => Some(Self::Scale),
            Some("approval") => Some(Self::Approval),
            Some("binding") => Some(Self::Binding),
            Some("finalize") => Some(Self::Finalize),
            Some("eviction") => Some(Self::Eviction),
            Some("ephemeralcontainers") => Some(Self::EphemeralContainers),
            Some("resize") => Some(Self::Resize),
            Some(_) => None,
        }
    }

    pub fn subresource(self) -> Option<&'static str> {
        match self {
            Self::Main => None,
            Self::Status => Some("status"),
            Self::Scale => Some("scale"),
            Self::Approval => Some("approval"),
            Self::Binding => Some("binding"),
            Self::Finalize => Some("finalize"),
            Self::Eviction => Some("eviction"),
            Self::EphemeralContainers => Some("ephemeralcontainers"),
            Self::Resize => Some("resize"),
        }
    }
}

pub use crate::patch::PatchType;
pub use crate::watch::cached::LazyObject;

/// A warning as an HTTP `Warning` value, as upstream sends them: code 299,
/// the "-" agent (RFC 7234) and the text as a quoted string. REST sends it
/// as a header, gRPC as `warning` metadata.
pub fn warning_value(text: &str) -> String {
    format!("299 - {}", Value::from(text))
}

/// A response's warnings as upstream's recorder sends them: empty ones,
/// repeats and ones holding control characters left out; when together
/// they pass 4096 characters, each is cut to 256 and those past the limit
/// are dropped.
pub fn warning_values(warnings: &[String]) -> Vec<String> {
    const MAX_TOTAL: usize = 4096;
    const TRUNCATED: usize = 256;
    let mut kept: Vec<&str> = Vec::new();
    for warning in warnings {
        let text = warning.as_str();
        if !text.is_empty() && !text.chars().any(char::is_control) && !kept.contains(&text) {
            kept.push(text);
        }
    }
    let total: usize = kept.iter().map(|w| w.chars().count()).sum();
    if total <= MAX_TOTAL {
        return kept.into_iter().map(warning_value).collect();
    }
    let mut written = 0;
    let mut values = Vec::new();
    for text in kept {
        if written >= MAX_TOTAL {
            break;
        }
        let cut: String = text.chars().take(TRUNCATED).collect();
        written += cut.chars().count();
        values.push(warning_value(&cut));
    }
    values
}

/// A write's result: the object as stored and any warnings for the client.
#[derive(Debug, Clone)]
pub struct WriteResult {
    /// Shared with the watch cache when the cache can take it as the
    /// change it is about to see (`WatchCaches::offer_written`).
    pub object: Arc<Value>,
    /// The same object as the watch cache holds it, when the write made
    /// that: its JSON is the answer's, encoded once.
    pub cached: Option<Arc<CachedObject>>,
    pub warnings: Vec<String>,
    /// True when the write created the object (REST answers 201).
    pub created: bool,
}

impl WriteResult {
    /// The written object as a reader takes it: its cached form when the
    /// write made one, otherwise its tree.
    pub fn lazy_object(&self) -> LazyObject {
        match &self.cached {
            Some(cached) => LazyObject::written(cached.clone(), self.object.clone()),
            None => LazyObject::from(self.object.clone()),
        }
    }

    /// What a create answers that computes its object instead of storing
    /// one (reviews, bindings): 201, no warnings.
    pub(crate) fn computed(object: Value) -> Self {
        Self::without_warnings(object, true)
    }

    /// An answer of `object` alone: no warnings, no cached form.
    pub(crate) fn without_warnings(object: Value, created: bool) -> Self {
        Self {
            object: Arc::new(object),
            cached: None,
            warnings: Vec::new(),
            created,
        }
    }
}

/// One page of a list.
#[derive(Debug, Clone)]
pub struct ObjectList {
    /// The watch cache's encoded objects when served from it: callers
    /// that only write them out as JSON copy their bytes and never parse
    /// them.
    pub items: Vec<LazyObject>,
    pub resource_version: String,
    pub continue_token: Option<String>,
    pub remaining_item_count: Option<i64>,
}

pub struct ApiCore {
    /// The served resources; changes while the server runs (see
    /// [`ApiCore::add_resources`]).
    pub registry: Arc<RegistryHandle>,
    pub(crate) storage: Arc<dyn Storage>,
    pub(crate) prefix: String,
    pub(crate) caches: crate::watch::cache::WatchCaches,
    pub(crate) service_addresses: crate::addresses::ServiceAddresses,
    /// Issues and checks service account tokens (None: not served).
    pub(crate) tokens: Option<crate::authentication::tokens::TokenAuthority>,
    /// How many requests of each kind may be in flight (inflight.rs).
    pub(crate) inflight: crate::inflight::InflightLimits,
    /// The RBAC resources and their caches, resolved once (rbac.rs).
    pub(crate) rbac: std::sync::OnceLock<Option<crate::authorization::rbac::RbacDefs>>,
    /// The admission webhook configurations' resources and caches,
    /// resolved once (admission/webhooks.rs).
    pub(crate) admission_webhooks: std::sync::OnceLock<Option<crate::admission::WebhookSources>>,
    /// The admission policies' resources, caches and compiled
    /// expressions (admission/policies.rs).
    pub(crate) admission_policies: std::sync::OnceLock<Option<crate::admission::PolicySources>>,
    /// The built-in admission plugins enabled (admission/plugins/).
    pub(crate) admission_plugins: crate::admission::plugins::Plugins,
    /// Idle connections to webhooks, reused across calls.
    pub(crate) webhook_connections: crate::webhooks::Connections,
    /// The headers a front proxy names its caller in.
    pub(crate) request_header_names: crate::authentication::request_header::RequestHeaderNames,
    /// Pooled clients to extension API servers (aggregator/).
    pub(crate) proxy_clients: crate::aggregator::ProxyClients,
    /// The client certificate Capstan proxies with.
    pub(crate) proxy_identity: Option<crate::aggregator::ProxyIdentity>,
    /// Whether backends are reached at their endpoints, not their ClusterIP.
    pub(crate) aggregator_routing: bool,
    /// What the remote APIServices' backends serve, for discovery.
    pub(crate) remote_discovery: crate::aggregator::RemoteDiscovery,
    /// How kubelets are reached, and the clients connect subresources use.
    pub(crate) kubelet: crate::connect::KubeletConfig,
    pub(crate) connect_clients: crate::connect::ConnectClients,
}

/// How long a request waits for a watch cache's first list.
pub(crate) const CACHE_READY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

pub(crate) fn storage_error(def: &ResourceDef, name: &str, err: StorageError) -> ApiError {
    match err {
        StorageError::NotFound(_) => ApiError::not_found(&def.group, &def.resource, name),
        StorageError::AlreadyExists(_) => ApiError::already_exists(&def.group, &def.resource, name),
        StorageError::Conflict { .. } => ApiError::stale_object(&def.group, &def.resource, name),
        StorageError::Compacted { .. } => {
            ApiError::expired("The resourceVersion for the provided list is too old.")
        }
        StorageError::FutureRevision { requested, current } => {
            ApiError::too_large_resource_version(requested, current)
        }
        StorageError::Backend(msg) => ApiError::internal(msg),
    }
}

/// Decodes a stored value and stamps it with its revision.
pub(crate) fn decode(kv: &KeyValue) -> ApiResult<Value> {
    let mut obj: Value = serde_json::from_slice(&kv.value)
        .map_err(|e| ApiError::internal(format!("stored object {} is not JSON: {e}", kv.key)))?;
    object::set_meta(
        &mut obj,
        "resourceVersion",
        Value::String(kv.mod_revision.to_string()),
    );
    Ok(obj)
}

/// The field manager of a write through `view`.
pub(super) fn manager_context<'a>(
    opts: &'a WriteOptions,
    api_version: &'a str,
    view: View,
    time: &'a str,
) -> crate::apply::ManagerContext<'a> {
    let manager = if opts.field_manager.is_empty() {
        &opts.default_field_manager
    } else {
        &opts.field_manager
    };
    crate::apply::ManagerContext {
        manager,
        api_version,
        subresource: view.subresource(),
        time,
    }
}

/// Upstream's defaulting for the version the request speaks.
pub(crate) fn apply_defaults(def: &ResourceDef, object: &mut Value) {
    if let Some(object) = object.as_object_mut() {
        def.kind_impl.apply_defaults(&def.version, object);
    }
}

/// The object as `def` serves it, from its stored form.
pub(crate) fn served(def: &ResourceDef, stored: Value) -> ApiResult<Value> {
    if !def.transforms_on_read() {
        return Ok(stored);
    }
    def.serve(stored).map_err(ApiError::conversion)
}

/// `served` for an object that may be shared: left as it is unless `def`
/// changes it on the way out.
pub(super) fn served_shared(def: &ResourceDef, stored: Arc<Value>) -> ApiResult<Arc<Value>> {
    if !def.transforms_on_read() {
        return Ok(stored);
    }
    served(def, Arc::unwrap_or_clone(stored)).map(Arc::new)
}

/// The object as it is stored, from the form `def` serves.
pub(super) fn storage_form<'a>(def: &ResourceDef, object: &'a Value) -> ApiResult<Cow<'a, Value>> {
    if !def.converts_for_storage() {
        return Ok(Cow::Borrowed(object));
    }
    def.kind_impl
        .convert(object.clone(), &def.storage_api_version())
        .map(Cow::Owned)
        .map_err(ApiError::conversion)
}

pub(crate) fn encode(object: &Value) -> ApiResult<Vec<u8>> {
    serde_json::to_vec(&object::StoredForm(object)).map_err(ApiError::internal)
}

pub(crate) fn parse_revision(rv: &str) -> ApiResult<i64> {
    rv.parse::<i64>()
        .ok()
        .filter(|v| *v >= 0)
        .ok_or_else(|| ApiError::bad_request(format!("invalid resource version {rv:?}")))
}

impl ApiCore {
    pub fn new(
        registry: Arc<RegistryHandle>,
        storage: Arc<dyn Storage>,
        prefix: impl Into<String>,
    ) -> Self {
        let prefix = prefix.into();
        let service_addresses = crate::addresses::ServiceAddresses::new(
            storage.clone(),
            &prefix,
            crate::addresses::DEFAULT_CLUSTER_IP_RANGE
                .parse()
                .unwrap_or(crate::addresses::allocator::Ipv4Cidr {
                    base: 0x0a00_0000,
                    prefix: 24,
                }),
            crate::addresses::DEFAULT_NODE_PORT_RANGE,
        );
        Self {
            registry,
            service_addresses,
            // The collector reads the objects that own or are being
            // deleted, kept indexed as they change.
            caches: crate::watch::cache::WatchCaches::new(
                storage.clone(),
                crate::controllers::garbage_collector::INVOLVED,
            ),
            storage,
            prefix,
            tokens: None,
            inflight: crate::inflight::InflightLimits::default(),
            rbac: std::sync::OnceLock::new(),
            admission_webhooks: std::sync::OnceLock::new(),
            admission_policies: std::sync::OnceLock::new(),
            admission_plugins: Default::default(),
            webhook_connections: Default::default(),
            request_header_names:
                crate::authentication::request_header::RequestHeaderNames::kubeadm(),
            proxy_clients: Default::default(),
            proxy_identity: None,
            aggregator_routing: false,
            remote_discovery: Default::default(),
            kubelet: crate::connect::KubeletConfig {
                preferred_address_types: crate::connect::DEFAULT_PREFERRED_ADDRESS_TYPES
                    .iter()
                    .map(|t| t.to_string())
                    .collect(),
                ..Default::default()
            },
            connect_clients: Default::default(),
        }
    }

    /// Uses these in-flight limits (the --max-*-inflight flags).
    pub fn with_request_header_names(
        mut self,
        names: crate::authentication::request_header::RequestHeaderNames,
    ) -> Self {
        self.request_header_names = names;
        self
    }

    /// Proxies to extension API servers with this client certificate,
    /// reaching them at their endpoints when `routing`.
    pub fn with_aggregator(
        mut self,
        identity: Option<crate::aggregator::ProxyIdentity>,
        routing: bool,
    ) -> Self {
        self.proxy_identity = identity;
        self.aggregator_routing = routing;
        self
    }

    /// Reaches kubelets as `config` says.
    pub fn with_kubelet(mut self, config: crate::connect::KubeletConfig) -> Self {
        self.kubelet = config;
        self
    }

    pub fn with_inflight_limits(mut self, limits: crate::inflight::InflightLimits) -> Self {
        self.inflight = limits;
        self
    }

    /// Runs the admission chain with these built-in plugins.
    pub fn with_admission_plugins(mut self, plugins: crate::admission::plugins::Plugins) -> Self {
        self.admission_plugins = plugins;
        self
    }

    /// Issues and accepts service account tokens with `authority`.
    pub fn with_token_authority(
        mut self,
        authority: crate::authentication::tokens::TokenAuthority,
    ) -> Self {
        self.tokens = Some(authority);
        self
    }

    /// Uses these ranges for ClusterIPs and NodePorts (the
    /// --service-cluster-ip-range and --service-node-port-range flags).
    pub fn with_service_ranges(
        mut self,
        cidr: crate::addresses::allocator::Ipv4Cidr,
        node_ports: (u16, u16),
    ) -> Self {
        self.service_addresses = crate::addresses::ServiceAddresses::new(
            self.storage.clone(),
            &self.prefix,
            cidr,
            node_ports,
        );
        self
    }

    /// The resource behind a group/version/resource, or upstream's 404.
    pub fn resolve(
        &self,
        group: &str,
        version: &str,
        resource: &str,
    ) -> ApiResult<Arc<ResourceDef>> {
        self.registry
            .lookup(group, version, resource)
            .ok_or_else(|| {
                ApiError::new(
                    crate::error::StatusReason::NotFound,
                    "the server could not find the requested resource",
                )
            })
    }

    pub(super) fn key(&self, def: &ResourceDef, namespace: Option<&str>, name: &str) -> String {
        def.key(&self.prefix, namespace, name)
    }

    /// Nothing when storage has reached `wanted`; upstream's 504 "Too large
    /// resource version" when it has not.
    pub(super) async fn storage_reached(&self, wanted: i64) -> ApiResult<()> {
        let current = self.current_revision().await?;
        if wanted > current {
            return Err(ApiError::too_large_resource_version(wanted, current));
        }
        Ok(())
    }

    /// Authorizes `verb` on the resource (or `view`'s subresource) for
    /// `user`, then checks the resource serves the verb.
    pub(crate) async fn authorize(
        &self,
        user: &UserInfo,
        verb: &str,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: Option<&str>,
        view: View,
    ) -> ApiResult<()> {
        let attrs = ResourceAttributes {
            verb,
            group: &def.group,
            resource: &def.resource,
            subresource: view.subresource(),
            namespace: if def.namespaced { namespace } else { None },
            name,
        };
        self.authorize_request(user, &AccessRequest::Resource(&attrs))
            .await?;
        if let Some(why) = def.kind_impl.refuses(verb) {
            return Err(ApiError::method_refused(&def.group, &def.resource, why));
        }
        if !def.supports(verb) {
            return Err(ApiError::method_not_supported(
                &def.group,
                &def.resource,
                verb,
            ));
        }
        Ok(())
    }

    /// The namespace argument as the resource's scope sees it.
    pub(super) fn scope<'a>(
        &self,
        def: &ResourceDef,
        namespace: Option<&'a str>,
    ) -> ApiResult<Option<&'a str>> {
        if !def.namespaced {
            return Ok(None);
        }
        Ok(namespace.filter(|ns| !ns.is_empty()))
    }

    pub(super) fn require_namespace<'a>(
        &self,
        def: &ResourceDef,
        namespace: Option<&'a str>,
    ) -> ApiResult<Option<&'a str>> {
        match self.scope(def, namespace)? {
            None if def.namespaced => Err(ApiError::bad_request(
                "the server could not find the requested resource: a namespace is required",
            )),
            other => Ok(other),
        }
    }

    pub async fn current_revision(&self) -> ApiResult<i64> {
        self.storage
            .current_revision()
            .await
            .map_err(ApiError::internal)
    }
}

/// A write's failure: a storage outcome the caller may retry on, or a final API error.
pub(super) enum StorageErrorOrApi {
    Storage(StorageError),
    Api(ApiError),
}

impl From<ApiError> for StorageErrorOrApi {
    fn from(e: ApiError) -> Self {
        Self::Api(e)
    }
}
