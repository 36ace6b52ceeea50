//! The core service: one implementation of every verb, called in-process by
//! the REST facade and by the gRPC adapter. Each method runs the same stages:
//! authorization → registry lookup → prepare (metadata, strategy defaulting)
//! → validation → storage (create / compare-and-swap update / delete).

use std::borrow::Cow;
use std::sync::Arc;

use base64::Engine as _;
use serde_json::{json, Value};

use crate::auth::{AccessRequest, ResourceAttributes, UserInfo};
use crate::error::{ApiError, ApiResult};
use crate::object;
use crate::patch;
use crate::registry::{RegistryHandle, ResourceDef};
use crate::selectors::{FieldSelector, LabelSelector};
use crate::storage::{KeyValue, ListParams, Storage, StorageError};
use crate::validation;

/// Namespaces that exist on every cluster, as kube-apiserver's bootstrap creates them.
pub const SYSTEM_NAMESPACES: &[&str] =
    &["default", "kube-system", "kube-public", "kube-node-lease"];

/// Attempts of a server-side read-modify-write before giving up on conflicts.
const MAX_CONFLICT_RETRIES: usize = 8;

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
const SYSTEM_FIELD_MANAGER: &str = "kube-apiserver";

/// How a write's managedFields come about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FieldOwnership {
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
    fn refusal(
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

    fn type_error(
        self,
        kind_version: (&str, &str),
        object: &Value,
        mismatch: &crate::openapi::TypeMismatch,
    ) -> ApiError {
        self.refusal(kind_version, object, &mismatch.json, &mismatch.unstructured)
    }

    fn strict_error(self, kind_version: (&str, &str), object: &Value, errors: &str) -> ApiError {
        let detail = format!("strict decoding error: {errors}");
        self.refusal(kind_version, object, &detail, &detail)
    }
}

const SCALE_DEFINITION: &str = "io.k8s.api.autoscaling.v1.Scale";

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

/// What upstream's patch handler answers when the patched object does not
/// decode: Invalid, with no kind or name, on the field `patch`.
fn patch_invalid(value: String, detail: &str) -> ApiError {
    ApiError::invalid(
        "",
        "",
        "",
        vec![crate::error::FieldError::invalid("patch", &value, detail)],
    )
}

fn object_json(object: &Value) -> String {
    serde_json::to_string(object).unwrap_or_default()
}

/// upstream's checkName: an update's body must name the object and
/// namespace of its URL.
fn check_name_matches_url(object: &Value, name: &str, namespace: Option<&str>) -> ApiResult<()> {
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    Json,
    Merge,
    StrategicMerge,
    Apply,
}

/// A warning as an HTTP `Warning` value, as upstream sends them: code 299,
/// the "-" agent (RFC 7234) and the text as a quoted string. REST sends it
/// as a header, gRPC as `warning` metadata.
pub fn warning_value(text: &str) -> String {
    format!("299 - {}", Value::from(text))
}

/// A write's result: the object as stored and any warnings for the client.
#[derive(Debug, Clone)]
pub struct WriteResult {
    /// Shared with the watch cache when the cache can take it as the
    /// change it is about to see (`WatchCaches::offer_written`).
    pub object: Arc<Value>,
    pub warnings: Vec<String>,
    /// True when the write created the object (REST answers 201).
    pub created: bool,
}

impl WriteResult {
    /// What a create answers that computes its object instead of storing
    /// one (reviews, bindings): 201, no warnings.
    pub(crate) fn computed(object: Value) -> Self {
        Self {
            object: Arc::new(object),
            warnings: Vec::new(),
            created: true,
        }
    }
}

/// One page of a list.
#[derive(Debug, Clone)]
pub struct ObjectList {
    /// Shared with the watch cache when served from it: callers that only
    /// write them out never copy them.
    pub items: Vec<Arc<Value>>,
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
    pub(crate) caches: crate::cache::WatchCaches,
    pub(crate) service_addresses: crate::services::ServiceAddresses,
    /// Issues and checks service account tokens (None: not served).
    pub(crate) tokens: Option<crate::tokens::TokenAuthority>,
    /// How many requests of each kind may be in flight (inflight.rs).
    pub(crate) inflight: crate::inflight::InflightLimits,
    /// The RBAC resources and their caches, resolved once (rbac.rs).
    pub(crate) rbac: std::sync::OnceLock<Option<crate::rbac::RbacDefs>>,
}

/// How long a consistent read waits for the watch cache to catch up before
/// reading storage instead.
const CACHE_CATCH_UP: std::time::Duration = std::time::Duration::from_millis(250);

/// How long a request waits for a watch cache's first list.
pub(crate) const CACHE_READY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Fields every kind can be selected by; kinds may add their own.
pub(crate) fn selectable_fields(def: &ResourceDef) -> Vec<&str> {
    let mut fields = vec!["metadata.name"];
    if def.namespaced {
        fields.push("metadata.namespace");
    }
    fields.extend(def.selectable_fields.iter().map(String::as_str));
    fields
}

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
fn manager_context<'a>(
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
fn apply_defaults(def: &ResourceDef, object: &mut Value) {
    if let Some(object) = object.as_object_mut() {
        def.kind_impl.apply_defaults(&def.version, object);
    }
}

/// The object as `def` serves it, from its stored form.
pub(crate) fn served(def: &ResourceDef, stored: Value) -> ApiResult<Value> {
    if !def.converts_for_storage() {
        return Ok(stored);
    }
    def.kind_impl
        .convert(stored, &def.api_version())
        .map_err(ApiError::internal)
}

/// `served` for an object that may be shared: left as it is unless `def`
/// converts it.
fn served_shared(def: &ResourceDef, stored: Arc<Value>) -> ApiResult<Arc<Value>> {
    if !def.converts_for_storage() {
        return Ok(stored);
    }
    served(def, Arc::unwrap_or_clone(stored)).map(Arc::new)
}

/// The object as it is stored, from the form `def` serves.
fn storage_form<'a>(def: &ResourceDef, object: &'a Value) -> ApiResult<Cow<'a, Value>> {
    if !def.converts_for_storage() {
        return Ok(Cow::Borrowed(object));
    }
    def.kind_impl
        .convert(object.clone(), &def.storage_api_version())
        .map(Cow::Owned)
        .map_err(ApiError::internal)
}

/// The garbage collector's finalizer a delete's propagationPolicy asks for;
/// an unknown policy is upstream's 422 on DeleteOptions.
fn gc_finalizer_for(opts: &DeleteOptions) -> ApiResult<Option<&'static str>> {
    use crate::controllers::garbage_collector::{FOREGROUND_FINALIZER, ORPHAN_FINALIZER};
    match opts.propagation_policy.as_deref() {
        None | Some("Background") => Ok(None),
        Some("Orphan") => Ok(Some(ORPHAN_FINALIZER)),
        Some("Foreground") => Ok(Some(FOREGROUND_FINALIZER)),
        Some(other) => Err(ApiError::invalid(
            "meta.k8s.io",
            "DeleteOptions",
            "",
            vec![crate::error::FieldError::not_supported(
                "propagationPolicy",
                other,
                &["Foreground", "Background", "Orphan"],
            )],
        )),
    }
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

/// A continue token: the revision of the first page and the last key
/// returned, base64 JSON as upstream shapes it.
fn encode_continue(revision: i64, last_key: &str) -> String {
    let token = json!({"v": "meta.k8s.io/v1", "rv": revision, "start": format!("{last_key}\u{0}")});
    base64::engine::general_purpose::URL_SAFE.encode(token.to_string())
}

fn decode_continue(token: &str) -> ApiResult<(i64, String)> {
    let invalid = |why: &str| ApiError::bad_request(format!("continue key is not valid: {why}"));
    let raw = base64::engine::general_purpose::URL_SAFE
        .decode(token)
        .map_err(|_| invalid("incorrect encoded start resourceVersion (version meta.k8s.io/v1)"))?;
    let v: Value = serde_json::from_slice(&raw).map_err(|_| invalid("not JSON"))?;
    if v.get("v").and_then(Value::as_str) != Some("meta.k8s.io/v1") {
        return Err(invalid("server does not recognize this encoded key"));
    }
    let rv = v
        .get("rv")
        .and_then(Value::as_i64)
        .filter(|r| *r > 0)
        .ok_or_else(|| invalid("incorrect encoded start resourceVersion"))?;
    let start = v
        .get("start")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid("missing start"))?;
    let start = start.strip_suffix('\u{0}').unwrap_or(start);
    if start.contains("..") || start.starts_with('/') {
        return Err(invalid("path traversal attempt"));
    }
    Ok((rv, start.to_string()))
}

const EXPIRED_CONTINUE: &str = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.";

impl ApiCore {
    pub fn new(
        registry: Arc<RegistryHandle>,
        storage: Arc<dyn Storage>,
        prefix: impl Into<String>,
    ) -> Self {
        let prefix = prefix.into();
        let service_addresses = crate::services::ServiceAddresses::new(
            storage.clone(),
            &prefix,
            crate::services::DEFAULT_CLUSTER_IP_RANGE.parse().unwrap_or(
                crate::allocator::Ipv4Cidr {
                    base: 0x0a00_0000,
                    prefix: 24,
                },
            ),
            crate::services::DEFAULT_NODE_PORT_RANGE,
        );
        Self {
            registry,
            service_addresses,
            // The collector reads the objects that own or are being
            // deleted, kept indexed as they change.
            caches: crate::cache::WatchCaches::new(
                storage.clone(),
                crate::controllers::garbage_collector::involved,
            ),
            storage,
            prefix,
            tokens: None,
            inflight: crate::inflight::InflightLimits::default(),
            rbac: std::sync::OnceLock::new(),
        }
    }

    /// Uses these in-flight limits (the --max-*-inflight flags).
    pub fn with_inflight_limits(mut self, limits: crate::inflight::InflightLimits) -> Self {
        self.inflight = limits;
        self
    }

    /// Issues and accepts service account tokens with `authority`.
    pub fn with_token_authority(mut self, authority: crate::tokens::TokenAuthority) -> Self {
        self.tokens = Some(authority);
        self
    }

    /// Uses these ranges for ClusterIPs and NodePorts (the
    /// --service-cluster-ip-range and --service-node-port-range flags).
    pub fn with_service_ranges(
        mut self,
        cidr: crate::allocator::Ipv4Cidr,
        node_ports: (u16, u16),
    ) -> Self {
        self.service_addresses = crate::services::ServiceAddresses::new(
            self.storage.clone(),
            &self.prefix,
            cidr,
            node_ports,
        );
        self
    }

    /// Creates the `kubernetes` Service in `default` (the range's first
    /// address) and lists this server in its Endpoints, as upstream's
    /// bootstrap controller does; each replica adds its own address.
    pub async fn bootstrap_kubernetes_service(
        &self,
        address: std::net::IpAddr,
        port: u16,
    ) -> ApiResult<()> {
        let services = self.resolve("", "v1", "services")?;
        let service = json!({
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "kubernetes", "namespace": "default",
                         "labels": {"component": "apiserver", "provider": "kubernetes"}},
            "spec": {"type": "ClusterIP", "clusterIP": self.service_addresses.first_address().to_string(),
                     "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": port}]},
        });
        let created = self
            .reconcile_system_object(&services, "default", "kubernetes", |current| {
                current.is_none().then(|| service.clone())
            })
            .await;
        if let Err(e) = created {
            // Another replica may have created it (and taken its address) meanwhile.
            let now = self
                .get_if_exists(&services, Some("default"), "kubernetes")
                .await?;
            if now.is_none() {
                return Err(e);
            }
        }
        let endpoints = self.resolve("", "v1", "endpoints")?;
        let entry = json!({"ip": address.to_string()});
        let subset_port = json!({"name": "https", "port": port, "protocol": "TCP"});
        self.reconcile_system_object(&endpoints, "default", "kubernetes", |current| {
            let mut addresses: Vec<Value> = current
                .and_then(|c| c.pointer("/subsets/0/addresses"))
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let ports_match =
                current.and_then(|c| c.pointer("/subsets/0/ports/0")) == Some(&subset_port);
            if addresses.contains(&entry) && ports_match {
                return None;
            }
            addresses.retain(|a| a != &entry);
            addresses.push(entry.clone());
            let mut desired = current.cloned().unwrap_or_else(|| {
                json!({
                    "apiVersion": "v1", "kind": "Endpoints",
                    "metadata": {"name": "kubernetes", "namespace": "default",
                                 "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
                })
            });
            desired["subsets"] = json!([{"addresses": addresses, "ports": [subset_port.clone()]}]);
            Some(desired)
        })
        .await?;
        // The same address in the EndpointSlice clients of discovery.k8s.io read.
        let slices = self.resolve("discovery.k8s.io", "v1", "endpointslices")?;
        let address_type = if address.is_ipv4() { "IPv4" } else { "IPv6" };
        let endpoint = json!({"addresses": [address.to_string()], "conditions": {"ready": true}});
        let slice_port = json!({"name": "https", "port": port, "protocol": "TCP"});
        self.reconcile_system_object(&slices, "default", "kubernetes", |current| {
            let mut endpoints: Vec<Value> = current
                .and_then(|c| c.get("endpoints"))
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let ports_match = current.and_then(|c| c.pointer("/ports/0")) == Some(&slice_port);
            if endpoints.contains(&endpoint) && ports_match {
                return None;
            }
            endpoints.retain(|e| e["addresses"] != endpoint["addresses"]);
            endpoints.push(endpoint.clone());
            let mut desired = current.cloned().unwrap_or_else(|| {
                json!({
                    "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                    "metadata": {"name": "kubernetes", "namespace": "default",
                                 "labels": {"kubernetes.io/service-name": "kubernetes"}},
                    "addressType": address_type,
                })
            });
            desired["endpoints"] = json!(endpoints);
            desired["ports"] = json!([slice_port.clone()]);
            Some(desired)
        })
        .await
    }

    /// Creates or updates an object the server itself maintains: `desired`
    /// gets the current object (None when absent) and returns what it should
    /// be, or None when it is right already. Retries on conflicts with other
    /// replicas doing the same.
    async fn reconcile_system_object(
        &self,
        def: &ResourceDef,
        namespace: &str,
        name: &str,
        desired: impl Fn(Option<&Value>) -> Option<Value>,
    ) -> ApiResult<()> {
        let system = UserInfo::system();
        let opts = WriteOptions {
            field_manager: SYSTEM_FIELD_MANAGER.to_string(),
            ..Default::default()
        };
        for _ in 0..MAX_CONFLICT_RETRIES {
            let current = self.get_if_exists(def, Some(namespace), name).await?;
            let current = current.map(|c| served(def, c)).transpose()?;
            let Some(wanted) = desired(current.as_ref()) else {
                return Ok(());
            };
            let written = match current {
                Some(_) => {
                    self.update(
                        &system,
                        def,
                        Some(namespace),
                        name,
                        wanted,
                        &opts,
                        View::Main,
                    )
                    .await
                }
                None => {
                    self.create(&system, def, Some(namespace), wanted, &opts)
                        .await
                }
            };
            match written {
                Ok(_) => return Ok(()),
                Err(e)
                    if matches!(
                        e.reason,
                        crate::error::StatusReason::Conflict
                            | crate::error::StatusReason::AlreadyExists
                    ) =>
                {
                    continue
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
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

    /// Creates the namespaces and the RBAC policy every cluster has; safe to
    /// run on every replica.
    pub async fn bootstrap(&self) -> ApiResult<()> {
        let def = self.resolve("", "v1", "namespaces")?;
        let created = SYSTEM_NAMESPACES.iter().map(|ns| {
            let namespace =
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
            self.create_if_missing(&def, namespace)
        });
        futures::future::try_join_all(created).await?;
        self.bootstrap_rbac().await
    }

    /// Stores a cluster-scoped object the server itself defines (bootstrap)
    /// unless one of its name exists; another replica creating it first is
    /// fine.
    pub(crate) async fn create_if_missing(
        &self,
        def: &ResourceDef,
        mut object: Value,
    ) -> ApiResult<()> {
        let key = def.key(&self.prefix, None, object::name(&object));
        if self
            .storage
            .get(&key)
            .await
            .map_err(ApiError::internal)?
            .is_some()
        {
            return Ok(());
        }
        self.fill_new_metadata(def, &mut object);
        def.kind_impl.prepare_for_create(&mut object);
        match self.storage.create(&key, encode(&object)?).await {
            Ok(_) | Err(StorageError::AlreadyExists(_)) => Ok(()),
            Err(e) => Err(ApiError::internal(e)),
        }
    }

    fn key(&self, def: &ResourceDef, namespace: Option<&str>, name: &str) -> String {
        def.key(&self.prefix, namespace, name)
    }

    /// The watch cache's copy of one object, as stored, without waiting for
    /// a cache that is still loading (None: ask storage). It may lag behind
    /// storage.
    pub(crate) fn cached_copy(
        &self,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<Arc<Value>> {
        self.caches
            .for_prefix(&def.key_prefix(&self.prefix, None))
            .get(&self.key(def, namespace, name))
    }

    /// Nothing when storage has reached `wanted`; upstream's 504 "Too large
    /// resource version" when it has not.
    async fn storage_reached(&self, wanted: i64) -> ApiResult<()> {
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
    fn scope<'a>(
        &self,
        def: &ResourceDef,
        namespace: Option<&'a str>,
    ) -> ApiResult<Option<&'a str>> {
        if !def.namespaced {
            return Ok(None);
        }
        Ok(namespace.filter(|ns| !ns.is_empty()))
    }

    fn require_namespace<'a>(
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

    pub(crate) async fn get_stored(
        &self,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
    ) -> ApiResult<(KeyValue, Value)> {
        let kv = self
            .storage
            .get(&self.key(def, namespace, name))
            .await
            .map_err(|e| storage_error(def, name, e))?
            .ok_or_else(|| ApiError::not_found(&def.group, &def.resource, name))?;
        let obj = decode(&kv)?;
        Ok((kv, obj))
    }

    /// One object. `resource_version` as upstream reads it: "" is a
    /// consistent read (storage), "0" any version (the watch cache's copy
    /// when it has one), and a revision means not older than it: storage's
    /// copy, once storage has reached it (504 otherwise).
    pub async fn get(
        &self,
        user: &UserInfo,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
        resource_version: &str,
    ) -> ApiResult<Value> {
        self.get_as(user, def, namespace, name, resource_version, View::Main)
            .await
    }

    /// A get authorized as `view`'s (a subresource's get reads the object).
    async fn get_as(
        &self,
        user: &UserInfo,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
        resource_version: &str,
        view: View,
    ) -> ApiResult<Value> {
        let namespace = self.require_namespace(def, namespace)?;
        self.authorize(user, "get", def, namespace, Some(name), view)
            .await?;
        if def.is_component_status() {
            return self.get_component_status(name).await;
        }
        let stored = match resource_version {
            "" => self.get_stored(def, namespace, name).await?.1,
            "0" => match self.cached_copy(def, namespace, name) {
                Some(object) => Value::clone(&object),
                // Not seen yet (or a cache still loading): storage knows.
                None => self.get_stored(def, namespace, name).await?.1,
            },
            rv => {
                let wanted = parse_revision(rv)?;
                let found = self.get_stored(def, namespace, name).await;
                let at = match &found {
                    Ok((kv, _)) => kv.mod_revision,
                    Err(_) => 0,
                };
                if wanted > at {
                    self.storage_reached(wanted).await?;
                }
                found?.1
            }
        };
        served(def, stored)
    }

    pub async fn list(
        &self,
        user: &UserInfo,
        def: &ResourceDef,
        namespace: Option<&str>,
        opts: &ListOptions,
    ) -> ApiResult<ObjectList> {
        let namespace = self.scope(def, namespace)?;
        self.authorize(user, "list", def, namespace, None, View::Main)
            .await?;
        crate::read_options::validate_list(opts)?;
        if def.is_component_status() {
            return self.list_component_statuses().await;
        }
        let mut list = self.list_stored(def, namespace, opts).await?;
        if def.converts_for_storage() {
            list.items = std::mem::take(&mut list.items)
                .into_iter()
                .map(|item| served(def, Arc::unwrap_or_clone(item)).map(Arc::new))
                .collect::<ApiResult<_>>()?;
        }
        Ok(list)
    }

    /// A list in the stored form; selectors match that form, so a field
    /// selector means the same at every version a kind is served at.
    pub(crate) async fn list_stored(
        &self,
        def: &ResourceDef,
        namespace: Option<&str>,
        opts: &ListOptions,
    ) -> ApiResult<ObjectList> {
        let labels = LabelSelector::parse(&opts.label_selector)?;
        let fields =
            FieldSelector::parse(&opts.field_selector, &selectable_fields(def), &|field| {
                def.kind_impl.absent_field_value(field)
            })?;
        let prefix = def.key_prefix(&self.prefix, namespace);
        let mut params = ListParams::default();
        if !opts.continue_token.is_empty() {
            let (rv, start) = decode_continue(&opts.continue_token)?;
            params.revision = Some(rv);
            params.start_after = Some(format!("{prefix}{start}"));
        } else {
            // `read_options::validate_list` has refused what does not fit.
            match (
                opts.resource_version.as_str(),
                opts.resource_version_match.as_str(),
            ) {
                ("0", _) => {
                    // "Any" resourceVersion: served from the watch cache, whole
                    // (upstream's cache also ignores limit here).
                    let cache = self.watch_cache(def).await?;
                    let (objects, revision) = cache.list(&prefix);
                    let items = objects
                        .iter()
                        .filter(|(_, o)| labels.matches(o) && fields.matches(o))
                        .map(|(_, o)| o.clone())
                        .collect();
                    return Ok(ObjectList {
                        items,
                        resource_version: revision.to_string(),
                        continue_token: None,
                        remaining_item_count: None,
                    });
                }
                ("", _) => {
                    if let Some(page) = self
                        .consistent_list_from_cache(def, &prefix, &labels, &fields, opts.limit)
                        .await?
                    {
                        return Ok(page);
                    }
                }
                // A paginated list at a resourceVersion without a match is
                // exact too, as upstream keeps it for old clients.
                (rv, matched) if matched == "Exact" || (matched.is_empty() && opts.limit > 0) => {
                    params.revision = Some(parse_revision(rv)?)
                }
                // Not older than rv: the current state is, unless rv is in the future.
                (rv, _) => self.storage_reached(parse_revision(rv)?).await?,
            }
        }
        // Selectors filter after the read, so a page may come back short;
        // keep reading until the page is full or the range ends, as upstream does.
        let limit = usize::try_from(opts.limit.max(0)).unwrap_or(0);
        let mut items = Vec::new();
        let mut revision = None;
        let mut last_key: Option<String> = None;
        let mut remaining: u64;
        loop {
            let page = self
                .storage
                .list(
                    &prefix,
                    ListParams {
                        revision: revision.or(params.revision),
                        start_after: last_key.clone().or(params.start_after.clone()),
                        limit: if limit == 0 { 0 } else { limit - items.len() },
                    },
                )
                .await
                .map_err(|e| match e {
                    StorageError::Compacted { .. } if !opts.continue_token.is_empty() => {
                        ApiError::expired(EXPIRED_CONTINUE)
                    }
                    other => storage_error(def, "", other),
                })?;
            revision = Some(page.revision);
            remaining = page.remaining;
            let filtered = labels.is_empty() && fields.is_empty();
            for kv in &page.items {
                last_key = Some(kv.key.clone());
                let obj = decode(kv)?;
                if filtered || (labels.matches(&obj) && fields.matches(&obj)) {
                    items.push(Arc::new(obj));
                }
            }
            if limit == 0 || items.len() >= limit || remaining == 0 || page.items.is_empty() {
                break;
            }
        }
        let revision = revision.unwrap_or_default();
        let (continue_token, remaining_item_count) = match (&last_key, remaining) {
            (Some(last), r) if limit > 0 && r > 0 => {
                let relative = last.strip_prefix(&prefix).unwrap_or(last);
                let count = (labels.is_empty() && fields.is_empty()).then_some(r as i64);
                (Some(encode_continue(revision, relative)), count)
            }
            _ => (None, None),
        };
        Ok(ObjectList {
            items,
            resource_version: revision.to_string(),
            continue_token,
            remaining_item_count,
        })
    }

    /// Checks apiVersion/kind of a request body against the endpoint and fills them in.
    fn check_type(&self, def: &ResourceDef, object: &mut Value) -> ApiResult<()> {
        let Some(obj) = object.as_object_mut() else {
            return Err(ApiError::bad_request(format!(
                "the object provided is unrecognized (must be of type {}): expected a JSON object",
                def.kind
            )));
        };
        let api_version = def.api_version();
        let body_version = obj
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let body_kind = obj
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if !body_version.is_empty() && body_version != api_version {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({body_version}) does not match the expected API version ({api_version})"
            )));
        }
        if !body_kind.is_empty() && body_kind != def.kind {
            let version = body_version.rsplit('/').next().unwrap_or("").to_string();
            return Err(ApiError::bad_request(format!(
                "{body_kind} in version \"{version}\" cannot be handled as a {}: the kind in the request body does not match the resource",
                def.kind
            )));
        }
        // First, in TypeMeta's order, as upstream serializes them; in
        // place, without rebuilding the object's map.
        obj.shift_insert(0, "kind".into(), Value::String(def.kind.to_string()));
        obj.shift_insert(1, "apiVersion".into(), Value::String(api_version));
        Ok(())
    }

    /// The namespace in the body must agree with the URL; it defaults to it.
    fn check_namespace(
        &self,
        def: &ResourceDef,
        namespace: Option<&str>,
        object: &mut Value,
    ) -> ApiResult<()> {
        if !def.namespaced {
            object::remove_meta(object, "namespace");
            return Ok(());
        }
        let url_ns = namespace.unwrap_or("");
        let body_ns = object::namespace(object).to_string();
        if !body_ns.is_empty() && body_ns != url_ns {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        object::set_meta(object, "namespace", Value::String(url_ns.to_string()));
        Ok(())
    }

    pub(crate) fn fill_new_metadata(&self, def: &ResourceDef, object: &mut Value) {
        object::set_meta(object, "uid", Value::String(object::new_uid()));
        object::set_meta(
            object,
            "creationTimestamp",
            Value::String(object::now_timestamp()),
        );
        for server_owned in [
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "selfLink",
        ] {
            object::remove_meta(object, server_owned);
        }
        if def.kind_impl.tracks_generation() {
            object::set_meta(object, "generation", json!(1));
        } else {
            object::remove_meta(object, "generation");
        }
    }

    /// Upstream's validation of a new object (`old` None) or an update;
    /// kinds stored at another version are validated in their stored form,
    /// the one upstream's (internal-version) rules are written against.
    /// A write through `/status` answers only for metadata and status, as
    /// upstream's ValidateXxxStatusUpdate: the rest is the stored object's,
    /// which a rule added since must not make unwritable.
    fn validate(
        &self,
        def: &ResourceDef,
        object: &Value,
        old: Option<&Value>,
        name: &str,
        view: View,
    ) -> ApiResult<()> {
        let kind = &def.kind_impl;
        let mut errs = validation::object_meta(object, kind.name_rule(), def.namespaced);
        errs.extend(crate::validate::meta::finalizers(object));
        let converted;
        let (object, old) = if def.converts_for_storage() {
            converted = (
                storage_form(def, object)?,
                old.map(|o| storage_form(def, o)).transpose()?,
            );
            (&*converted.0, converted.1.as_deref())
        } else {
            (object, old)
        };
        errs.extend(match (old, view.subresource()) {
            (None, _) => kind.validate_create(object),
            (Some(old), Some(sub)) => kind
                .validate_subresource_update(sub, object, old)
                .unwrap_or_else(|| kind.validate_update(object, old)),
            (Some(old), None) => kind.validate_update(object, old),
        });
        if view == View::Status {
            errs.retain(|e| {
                let top = e.field.split(['.', '[']).next().unwrap_or_default();
                top == "status" || top == "metadata"
            });
            if let Some(old) = old {
                errs.extend(kind.validate_status_update(object, old));
            }
        }
        if errs.is_empty() {
            Ok(())
        } else {
            Err(ApiError::invalid(&def.group, &def.kind, name, errs))
        }
    }

    /// Decodes `object` against the kind's schema, as upstream decodes a
    /// body into its Go type: a mistyped value fails the write with the
    /// error upstream gives where the object came from; fields the schema
    /// lacks are dropped and handled per the request's fieldValidation.
    fn check_fields(
        &self,
        def: &ResourceDef,
        object: &mut Value,
        opts: &WriteOptions,
        source: BodySource<'_>,
    ) -> ApiResult<Vec<String>> {
        let unknown = match crate::openapi::decode_typed(&def.definition, object) {
            Ok(unknown) => unknown,
            Err(mismatch) => {
                return Err(source.type_error((&def.kind, &def.version), object, &mismatch))
            }
        };
        let mut unknown: Vec<String> = unknown
            .into_iter()
            .map(|f| format!("unknown field \"{f}\""))
            .collect();
        unknown.extend(
            opts.duplicate_fields
                .iter()
                .map(|f| format!("duplicate field \"{f}\"")),
        );
        match opts.field_validation {
            FieldValidation::Strict if !unknown.is_empty() => {
                Err(source.strict_error((&def.kind, &def.version), object, &unknown.join(", ")))
            }
            FieldValidation::Ignore => Ok(Vec::new()),
            _ => Ok(unknown),
        }
    }

    async fn ensure_namespace_accepts(
        &self,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
    ) -> ApiResult<()> {
        let Some(ns) = namespace.filter(|_| def.namespaced) else {
            return Ok(());
        };
        // As upstream's NamespaceLifecycle admission: answer from the cache
        // (no storage round trip per create), and ask storage only when the
        // cache has not seen the namespace yet, so a just-created one is
        // never refused. A namespace that starts terminating meanwhile is
        // cleaned up by the namespace controller, which retries until empty.
        let ns_def = self.resolve("", "v1", "namespaces")?;
        let cached = self
            .watch_cache(&ns_def)
            .await
            .ok()
            .and_then(|cache| cache.get(&ns_def.key(&self.prefix, None, ns)));
        let ns_obj = match cached {
            Some(obj) => obj,
            None => Arc::new(self.get_stored(&ns_def, None, ns).await?.1),
        };
        let phase = ns_obj.get("status").and_then(|status| status.get("phase"));
        if phase.and_then(Value::as_str) == Some("Terminating") {
            return Err(ApiError::forbidden(format!(
                "{} \"{}\" is forbidden: unable to create new content in namespace {ns} because it is being terminated",
                crate::error::qualified(&def.resource, &def.group),
                name
            )));
        }
        Ok(())
    }

    /// `POST pods/<name>/binding`: a Binding for that pod, authorized as
    /// upstream authorizes the subresource (`create pods/binding`).
    pub async fn bind_pod_subresource(
        &self,
        user: &UserInfo,
        namespace: &str,
        binding: Value,
        opts: &WriteOptions,
    ) -> ApiResult<WriteResult> {
        let pods = self.resolve("", "v1", "pods")?;
        let name = object::name(&binding).to_string();
        self.authorize(
            user,
            "create",
            &pods,
            Some(namespace),
            Some(&name),
            View::Binding,
        )
        .await?;
        let status = self.bind_pod(user, namespace, &binding, opts).await?;
        Ok(WriteResult::computed(status))
    }

    pub async fn create(
        &self,
        user: &UserInfo,
        def: &ResourceDef,
        namespace: Option<&str>,
        object: Value,
        opts: &WriteOptions,
    ) -> ApiResult<WriteResult> {
        let namespace = self.require_namespace(def, namespace)?;
        self.authorize(user, "create", def, namespace, None, View::Main)
            .await?;
        if def.is_review() {
            let mut review = object;
            self.check_type(def, &mut review)?;
            self.check_namespace(def, namespace, &mut review)?;
            let answered = crate::review::answer(self, user, def, review).await?;
            return Ok(WriteResult::computed(answered));
        }
        if def.is_binding() {
            let status = self
                .bind_pod(user, namespace.unwrap_or_default(), &object, opts)
                .await?;
            return Ok(WriteResult::computed(status));
        }
        self.create_authorized(
            user,
            def,
            namespace,
            object,
            opts,
            FieldOwnership::RecordUpdate,
        )
        .await
    }

    async fn create_authorized(
        &self,
        user: &UserInfo,
        def: &ResourceDef,
        namespace: Option<&str>,
        mut object: Value,
        opts: &WriteOptions,
        ownership: FieldOwnership,
    ) -> ApiResult<WriteResult> {
        self.check_type(def, &mut object)?;
        self.check_namespace(def, namespace, &mut object)?;
        let warnings = self.check_fields(def, &mut object, opts, BodySource::Sent)?;
        if !object::resource_version(&object).is_empty() {
            return Err(ApiError::bad_request(
                "resourceVersion should not be set on objects to be created",
            ));
        }
        let generate_name = object::meta_str(&object, "generateName").to_string();
        apply_defaults(def, &mut object);
        self.fill_new_metadata(def, &mut object);
        if def.has_subresource("status") && !def.kind_impl.keeps_status_on_create() {
            // Status is the controllers' to write, through /status; a new
            // object starts with the empty status Go would encode.
            if let Some(obj) = object.as_object_mut() {
                obj.insert("status".into(), def.kind_impl.empty_status());
            }
        }
        def.kind_impl.prepare_for_create(&mut object);
        def.kind_impl.prepare_for_create_by(&mut object, user);
        // Upstream defaults again when it reads the stored object back, so
        // defaults show through whatever the strategy cleared or added.
        apply_defaults(def, &mut object);
        if ownership == FieldOwnership::RecordUpdate {
            let time = object::now_timestamp();
            let api_version = def.api_version();
            let ctx = manager_context(opts, &api_version, View::Main, &time);
            crate::apply::record_update(None, &mut object, &def.definition, &ctx)?;
        }
        let generated = object::name(&object).is_empty() && !generate_name.is_empty();
        // A generated name that collides is retried with a fresh suffix.
        for attempt in 0.. {
            if generated {
                object::set_meta(
                    &mut object,
                    "name",
                    Value::String(format!("{generate_name}{}", object::random_suffix())),
                );
            }
            let name = object::name(&object).to_string();
            self.validate(def, &object, None, &name, View::Main)?;
            self.confirm_no_escalation(user, def, namespace, &object, None)
                .await?;
            self.ensure_namespace_accepts(def, namespace, &name).await?;
            if opts.dry_run {
                crate::openapi::put_in_go_order(&def.definition, &mut object);
                return Ok(WriteResult {
                    object: Arc::new(object),
                    warnings,
                    created: true,
                });
            }
            let key = self.key(def, namespace, &name);
            let allocated = if def.kind_impl.allocates_service_addresses() {
                Some(self.service_addresses.allocate(&mut object, &name).await?)
            } else {
                None
            };
            crate::openapi::put_in_go_order(&def.definition, &mut object);
            let bytes = encode(&*storage_form(def, &object)?)?;
            let stored = self.storage.create(&key, bytes).await;
            if let (Err(_), Some(allocated)) = (&stored, &allocated) {
                self.service_addresses.release_allocated(allocated).await;
            }
            match stored {
                Ok(kv) => {
                    object::set_meta(
                        &mut object,
                        "resourceVersion",
                        Value::String(kv.mod_revision.to_string()),
                    );
                    let object = Arc::new(object);
                    self.offer_stored(def, &key, kv.mod_revision, &object);
                    return Ok(WriteResult {
                        object,
                        warnings,
                        created: true,
                    });
                }
                Err(StorageError::AlreadyExists(_))
                    if generated && attempt < MAX_CONFLICT_RETRIES =>
                {
                    continue
                }
                Err(e) => return Err(storage_error(def, &name, e)),
            }
        }
        unreachable!("the retry loop returns")
    }

    /// Brings a replacement for `old` in line with it: server-owned metadata
    /// carried over, the parts the view does not own restored, generation
    /// bumped on spec changes, strategy applied.
    fn prepare_update(&self, def: &ResourceDef, object: &mut Value, old: &Value, view: View) {
        match view {
            // Upstream's approval strategy: the new conditions, nothing else.
            View::Approval => {
                *object = crate::object::only_at(old, object, &["status", "conditions"]);
                return;
            }
            // Only status changes through the status subresource.
            View::Status => {
                *object = crate::object::only_at(old, object, &["status"]);
                return;
            }
            // The kind's own subresources own their part of the object.
            View::EphemeralContainers | View::Resize | View::Finalize => {
                let sub = view.subresource().unwrap_or_default();
                if let Some(updated) = def.kind_impl.subresource_update(sub, object, old) {
                    *object = updated;
                }
                return;
            }
            // A binding writes spec.nodeName and status together; an
            // eviction writes nothing of the pod.
            View::Binding | View::Eviction => {}
            // Status belongs to the status subresource; main writes keep it.
            View::Main | View::Scale if def.has_subresource("status") => {
                crate::object::replace_at(object, old, &["status"]);
            }
            View::Main | View::Scale => {}
        }
        for carried in [
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generation",
        ] {
            match object::meta(old).and_then(|m| m.get(carried)).cloned() {
                Some(v) => object::set_meta(object, carried, v),
                None => object::remove_meta(object, carried),
            }
        }
        object::remove_meta(object, "selfLink");
        def.kind_impl.prepare_for_update(object, old);
        if def.kind_impl.tracks_generation() && object.get("spec") != old.get("spec") {
            let generation = object::meta(old)
                .and_then(|m| m.get("generation"))
                .and_then(Value::as_i64)
                .unwrap_or(0);
            object::set_meta(object, "generation", json!(generation + 1));
        }
    }

    /// Hands `object`, just stored under `key` at `revision` (its
    /// resourceVersion), to the watch caches, which take it instead of
    /// decoding the change. Only a kind stored as it is served is the
    /// stored value decoded.
    fn offer_stored(&self, def: &ResourceDef, key: &str, revision: i64, object: &Arc<Value>) {
        if !def.converts_for_storage() {
            self.caches.offer_written(key, revision, object.clone());
        }
    }

    /// Stores `object` over `current` with compare-and-swap; a no-op update
    /// keeps the stored object (and its resourceVersion) untouched.
    async fn write_update(
        &self,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
        current: &Current,
        mut object: Value,
        dry_run: bool,
    ) -> Result<Updated<Arc<Value>>, StorageErrorOrApi> {
        // Upstream skips a write that changes nothing, keeping the
        // resourceVersion; compare as JSON, where key order does not matter.
        let stored_form = storage_form(def, &object)?;
        if same_stored_form(&current.object, &stored_form) {
            return Ok(Updated::Unchanged(Arc::new(served(
                def,
                current.object.clone(),
            )?)));
        }
        let bytes = encode(&stored_form)?;
        if dry_run {
            // Nothing was written: the object is still at the stored revision.
            object::set_meta(
                &mut object,
                "resourceVersion",
                Value::String(current.revision.to_string()),
            );
            return Ok(Updated::Written(Arc::new(object)));
        }
        let key = self.key(def, namespace, name);
        // Deleting the last finalizer of an object being deleted finishes the delete.
        let finished = object::meta(&object).is_some_and(|m| m.contains_key("deletionTimestamp"))
            && object::finalizers(&object).is_empty()
            && def.kind_impl.finalizers_done(&object);
        if finished {
            let kv = self
                .storage
                .delete(&key, Some(current.revision))
                .await
                .map_err(StorageErrorOrApi::Storage)?;
            object::set_meta(
                &mut object,
                "resourceVersion",
                Value::String(kv.mod_revision.to_string()),
            );
            return Ok(Updated::Written(Arc::new(object)));
        }
        let kv = self
            .storage
            .update(&key, bytes, current.revision)
            .await
            .map_err(StorageErrorOrApi::Storage)?;
        object::set_meta(
            &mut object,
            "resourceVersion",
            Value::String(kv.mod_revision.to_string()),
        );
        let object = Arc::new(object);
        self.offer_stored(def, &key, kv.mod_revision, &object);
        Ok(Updated::Written(object))
    }

    /// The object an update starts from. With `cached`, the watch cache's
    /// copy when it has one: no storage round trip, but it may lag behind
    /// storage, so the caller trusts only a compare-and-swap that succeeds
    /// against it (see `read_modify_write`).
    async fn current_for_update(
        &self,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
        cached: bool,
    ) -> ApiResult<Current> {
        if cached {
            if let Some(object) = self.cached_copy(def, namespace, name) {
                if let Ok(revision) = object::resource_version(&object).parse::<i64>() {
                    return Ok(Current {
                        object: Value::clone(&object),
                        revision,
                        from_cache: true,
                    });
                }
            }
        }
        let (kv, object) = self.get_stored(def, namespace, name).await?;
        Ok(Current {
            object,
            revision: kv.mod_revision,
            from_cache: false,
        })
    }

    /// The main resource, or one of its subresources.
    pub async fn get_view(
        &self,
        user: &UserInfo,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
        view: View,
        resource_version: &str,
    ) -> ApiResult<Value> {
        self.check_view(def, view)?;
        let object = self
            .get_as(user, def, namespace, name, resource_version, view)
            .await?;
        Ok(match view {
            View::Scale => crate::scale::to_scale(def, &object),
            _ => object,
        })
    }

    fn check_view(&self, def: &ResourceDef, view: View) -> ApiResult<()> {
        match view.subresource() {
            Some(sub) if !def.has_subresource(sub) => Err(ApiError::new(
                crate::error::StatusReason::NotFound,
                "the server could not find the requested resource",
            )),
            _ => Ok(()),
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub async fn update(
        &self,
        user: &UserInfo,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
        object: Value,
        opts: &WriteOptions,
        view: View,
    ) -> ApiResult<WriteResult> {
        let namespace = self.require_namespace(def, namespace)?;
        self.authorize(user, "update", def, namespace, Some(name), view)
            .await?;
        self.check_view(def, view)?;
        // As upstream's update handler: the body is decoded and its name
        // checked against the URL before anything is read.
        let mut object = object;
        let (source, decoded_warnings) = if view == View::Scale {
            decode_body_as(
                BodySource::Sent,
                SCALE_DEFINITION,
                ("Scale", "v1"),
                &mut object,
            )?;
            (BodySource::Sent, Vec::new())
        } else {
            self.check_type(def, &mut object)?;
            let warnings = self.check_fields(def, &mut object, opts, BodySource::Sent)?;
            (BodySource::Decoded, warnings)
        };
        check_name_matches_url(&object, name, namespace)?;
        let mut result = self
            .read_modify_write(
                user,
                def,
                namespace,
                name,
                view,
                opts,
                FieldOwnership::RecordUpdate,
                source,
                |old| match view {
                    View::Scale => crate::scale::apply_scale(name, old, &object),
                    _ => Ok(object.clone()),
                },
            )
            .await?;
        if !decoded_warnings.is_empty() {
            result.warnings.splice(0..0, decoded_warnings);
        }
        Ok(result)
    }

    #[allow(clippy::too_many_arguments)]
    pub async fn patch(
        &self,
        user: &UserInfo,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
        patch_type: PatchType,
        patch_body: &Value,
        opts: &WriteOptions,
        view: View,
    ) -> ApiResult<WriteResult> {
        let namespace = self.require_namespace(def, namespace)?;
        self.authorize(user, "patch", def, namespace, Some(name), view)
            .await?;
        self.check_view(def, view)?;
        if patch_type == PatchType::Apply {
            return self
                .server_side_apply(user, def, namespace, name, patch_body, opts, view)
                .await;
        }
        if opts.force {
            return Err(ApiError::invalid(
                "meta.k8s.io",
                "PatchOptions",
                "",
                vec![crate::error::FieldError::forbidden(
                    "force",
                    "may not be specified for non-apply patch",
                )],
            ));
        }
        let source = match patch_type {
            PatchType::StrategicMerge => BodySource::StrategicPatch(patch_body),
            _ => BodySource::JsonPatch,
        };
        self.read_modify_write(
            user,
            def,
            namespace,
            name,
            view,
            opts,
            FieldOwnership::RecordUpdate,
            source,
            |old| {
                if view == View::Scale {
                    // A scale patch applies to the Scale, then lands in spec.replicas.
                    let scale = crate::scale::to_scale(def, old);
                    let mut patched =
                        patch::apply(patch_type, &scale, patch_body, SCALE_DEFINITION)?;
                    decode_body_as(source, SCALE_DEFINITION, ("Scale", "v1"), &mut patched)?;
                    return crate::scale::apply_scale(name, old, &patched);
                }
                patch::apply(patch_type, old, patch_body, &def.definition)
            },
        )
        .await
    }

    /// An update on the server's own behalf through `view` (the caller has
    /// authorized it), with the usual checks and conflict retries.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn update_internal(
        &self,
        user: &UserInfo,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
        opts: &WriteOptions,
        view: View,
        mutate: impl Fn(&Value) -> ApiResult<Value>,
    ) -> ApiResult<WriteResult> {
        self.read_modify_write(
            user,
            def,
            namespace,
            name,
            view,
            opts,
            FieldOwnership::RecordUpdate,
            BodySource::Sent,
            mutate,
        )
        .await
    }

    /// `PATCH` with `application/apply-patch+yaml`: merges the applied
    /// configuration into the object (creating it when there is none),
    /// with conflicts against other field managers unless forced.
    #[allow(clippy::too_many_arguments)]
    async fn server_side_apply(
        &self,
        user: &UserInfo,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
        config: &Value,
        opts: &WriteOptions,
        view: View,
    ) -> ApiResult<WriteResult> {
        if opts.field_manager.is_empty() {
            return Err(ApiError::invalid(
                "meta.k8s.io",
                "PatchOptions",
                "",
                vec![crate::error::FieldError::required(
                    "fieldManager",
                    "is required for apply patch",
                )],
            ));
        }
        if view == View::Scale {
            return Err(ApiError::new(
                crate::error::StatusReason::UnsupportedMediaType,
                "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json",
            ));
        }
        let api_version = def.api_version();
        let time = object::now_timestamp();
        let ctx = manager_context(opts, &api_version, view, &time);
        let merge = |old: &Value| -> ApiResult<Value> {
            Ok(crate::apply::apply(
                Some(old),
                config,
                &def.definition,
                &ctx,
                opts.force,
            )?)
        };
        let update = || {
            self.read_modify_write(
                user,
                def,
                namespace,
                name,
                view,
                opts,
                FieldOwnership::Applied,
                BodySource::Applied,
                merge,
            )
        };
        // Most applies find the object (in the watch cache, without a read
        // of storage); only a missing one is created.
        match update().await {
            Err(e) if e.code() == 404 && view == View::Main => {}
            other => return other,
        }
        let created = crate::apply::apply(None, config, &def.definition, &ctx, opts.force)?;
        let created_name = object::name(&created).to_string();
        if created_name != name {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({created_name}) does not match the name on the URL ({name})"
            )));
        }
        let result = self
            .create_authorized(user, def, namespace, created, opts, FieldOwnership::Applied)
            .await;
        match result {
            // Someone created it meanwhile: apply over theirs instead.
            Err(e) if e.reason == crate::error::StatusReason::AlreadyExists => update().await,
            other => other,
        }
    }

    /// The server side of every update: start from the current object (the
    /// watch cache's copy, or storage's), let `mutate` produce the client's
    /// version of it, check it, keep what the view does
    /// not own, and compare-and-swap it in, retrying when someone else wrote
    /// in between — unless the client named the resourceVersion it expects.
    #[allow(clippy::too_many_arguments)]
    async fn read_modify_write(
        &self,
        user: &UserInfo,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
        view: View,
        opts: &WriteOptions,
        ownership: FieldOwnership,
        source: BodySource<'_>,
        mutate: impl Fn(&Value) -> ApiResult<Value>,
    ) -> ApiResult<WriteResult> {
        // As upstream's GuaranteedUpdate: start from the watch cache's copy,
        // saving a storage read. Only a compare-and-swap that succeeds proves
        // that copy was current; any other outcome (an error, a stale
        // precondition, nothing to write) is decided again from storage. A
        // dry run writes nothing to prove it, so it reads storage.
        let mut from_storage = opts.dry_run;
        for _ in 0..MAX_CONFLICT_RETRIES {
            let current = self
                .current_for_update(def, namespace, name, !from_storage)
                .await?;
            let cached = current.from_cache;
            from_storage = true;
            match self
                .update_once(
                    user, def, namespace, name, view, opts, ownership, source, &mutate, &current,
                )
                .await
            {
                Ok(Updated::Written(result)) => return Ok(result),
                Ok(Updated::Unchanged(result)) if !cached => return Ok(result),
                Err(StorageErrorOrApi::Storage(StorageError::Conflict { .. })) => continue,
                _ if cached => continue,
                Ok(Updated::Unchanged(result)) => return Ok(result),
                Err(StorageErrorOrApi::Storage(e)) => return Err(storage_error(def, name, e)),
                Err(StorageErrorOrApi::Api(e)) => return Err(e),
            }
        }
        Err(ApiError::stale_object(&def.group, &def.resource, name))
    }

    /// One attempt of `read_modify_write` from `current`.
    #[allow(clippy::too_many_arguments)]
    async fn update_once(
        &self,
        user: &UserInfo,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
        view: View,
        opts: &WriteOptions,
        ownership: FieldOwnership,
        source: BodySource<'_>,
        mutate: &impl Fn(&Value) -> ApiResult<Value>,
        current: &Current,
    ) -> Result<Updated<WriteResult>, StorageErrorOrApi> {
        let old = served(def, current.object.clone())?;
        let mut candidate = mutate(&old)?;
        self.check_type(def, &mut candidate)?;
        let candidate_name = object::name(&candidate).to_string();
        if candidate_name != name {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({candidate_name}) does not match the name on the URL ({name})"
            ))
            .into());
        }
        self.check_namespace(def, namespace, &mut candidate)?;
        let warnings = match source {
            BodySource::Decoded => Vec::new(),
            _ => self.check_fields(def, &mut candidate, opts, source)?,
        };
        let precondition = object::resource_version(&candidate).to_string();
        if !precondition.is_empty() && precondition != current.revision.to_string() {
            return Err(ApiError::stale_object(&def.group, &def.resource, name).into());
        }
        apply_defaults(def, &mut candidate);
        self.prepare_update(def, &mut candidate, &old, view);
        apply_defaults(def, &mut candidate);
        if ownership == FieldOwnership::RecordUpdate {
            let time = object::now_timestamp();
            let api_version = def.api_version();
            let ctx = manager_context(opts, &api_version, view, &time);
            crate::apply::record_update(Some(&old), &mut candidate, &def.definition, &ctx)
                .map_err(ApiError::from)?;
        }
        object::remove_meta(&mut candidate, "resourceVersion");
        // A binding writes the pod directly, as upstream's BindingREST
        // does, without the pod's update rules (which forbid nodeName).
        let previous = (view != View::Binding).then_some(&old);
        self.validate(def, &candidate, previous, name, view)?;
        self.confirm_no_escalation(user, def, namespace, &candidate, Some(&old))
            .await?;
        let allocated = if def.kind_impl.allocates_service_addresses() && view == View::Main {
            Some(
                self.service_addresses
                    .carry_over(&mut candidate, &old, name)
                    .await?,
            )
        } else {
            None
        };
        crate::openapi::put_in_go_order(&def.definition, &mut candidate);
        let written = self
            .write_update(def, namespace, name, current, candidate, opts.dry_run)
            .await;
        if let Some(allocated) = &allocated {
            match (&written, opts.dry_run) {
                (Ok(Updated::Written(new)), false) => {
                    self.service_addresses.release_dropped(new, &old).await
                }
                _ => self.service_addresses.release_allocated(allocated).await,
            }
        }
        Ok(written?.map(|object| WriteResult {
            object: match view {
                View::Scale => Arc::new(crate::scale::to_scale(def, &object)),
                _ => object,
            },
            warnings,
            created: false,
        }))
    }

    pub async fn delete(
        &self,
        user: &UserInfo,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
        opts: &DeleteOptions,
    ) -> ApiResult<WriteResult> {
        let namespace = self.require_namespace(def, namespace)?;
        self.authorize(user, "delete", def, namespace, Some(name), View::Main)
            .await?;
        let mut done = self.delete_authorized(def, namespace, name, opts).await?;
        done.object = served_shared(def, done.object)?;
        Ok(done)
    }

    /// An eviction's delete of the pod: authorized as the eviction was.
    pub(crate) async fn delete_pod_for_eviction(
        &self,
        pods: &ResourceDef,
        namespace: &str,
        name: &str,
        opts: &DeleteOptions,
    ) -> ApiResult<()> {
        self.delete_authorized(pods, Some(namespace), name, opts)
            .await
            .map(|_| ())
    }

    async fn delete_authorized(
        &self,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
        opts: &DeleteOptions,
    ) -> ApiResult<WriteResult> {
        let gc_finalizer = gc_finalizer_for(opts)?;
        // Starts from the watch cache's copy, as updates do (see
        // read_modify_write): only a compare-and-swap that succeeds proves it
        // current, so every other outcome is decided again from storage.
        let mut from_storage = opts.dry_run;
        for _ in 0..MAX_CONFLICT_RETRIES {
            let current = self
                .current_for_update(def, namespace, name, !from_storage)
                .await?;
            let cached = current.from_cache;
            from_storage = true;
            let mut obj = current.object;
            // Orphan and Foreground deletes wait for the garbage collector,
            // which holds the object through a finalizer of its own.
            if let Some(finalizer) = gc_finalizer {
                let deleting =
                    object::meta(&obj).is_some_and(|m| m.contains_key("deletionTimestamp"));
                if !deleting && !object::finalizers(&obj).iter().any(|f| f == finalizer) {
                    if let Some(meta) = object::meta_mut(&mut obj) {
                        let list = meta.entry("finalizers").or_insert_with(|| json!([]));
                        if let Some(list) = list.as_array_mut() {
                            list.push(Value::String(finalizer.to_string()));
                        }
                    }
                }
            }
            if let Some(uid) = &opts.precondition_uid {
                let actual = object::meta_str(&obj, "uid");
                if uid != actual {
                    if cached {
                        continue;
                    }
                    return Err(ApiError::conflict(&def.group, &def.resource, name, &format!(
                        "Precondition failed: UID in precondition: {uid}, UID in object meta: {actual}"
                    )));
                }
            }
            if let Some(rv) = &opts.precondition_resource_version {
                let actual = current.revision.to_string();
                if *rv != actual {
                    if cached {
                        continue;
                    }
                    return Err(ApiError::conflict(&def.group, &def.resource, name, &format!(
                        "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {actual}"
                    )));
                }
            }
            // Objects with finalizers are only marked; whoever owns the last
            // finalizer finishes the delete by removing it.
            let pending =
                !object::finalizers(&obj).is_empty() || !def.kind_impl.finalizers_done(&obj);
            if pending {
                if object::meta(&obj).is_some_and(|m| m.contains_key("deletionTimestamp")) {
                    if cached {
                        continue;
                    }
                    return Ok(WriteResult {
                        object: Arc::new(obj),
                        warnings: Vec::new(),
                        created: false,
                    });
                }
                let mut marked = obj.clone();
                object::set_meta(
                    &mut marked,
                    "deletionTimestamp",
                    Value::String(object::now_timestamp()),
                );
                object::set_meta(&mut marked, "deletionGracePeriodSeconds", json!(0));
                def.kind_impl.prepare_for_delete(&mut marked);
                object::remove_meta(&mut marked, "resourceVersion");
                if opts.dry_run {
                    return Ok(WriteResult {
                        object: Arc::new(marked),
                        warnings: Vec::new(),
                        created: false,
                    });
                }
                let key = self.key(def, namespace, name);
                match self
                    .storage
                    .update(&key, encode(&marked)?, current.revision)
                    .await
                {
                    Ok(kv) => {
                        object::set_meta(
                            &mut marked,
                            "resourceVersion",
                            Value::String(kv.mod_revision.to_string()),
                        );
                        return Ok(WriteResult {
                            object: Arc::new(marked),
                            warnings: Vec::new(),
                            created: false,
                        });
                    }
                    Err(StorageError::Conflict { .. }) => continue,
                    Err(e) => return Err(storage_error(def, name, e)),
                }
            }
            if opts.dry_run {
                return Ok(WriteResult {
                    object: Arc::new(obj),
                    warnings: Vec::new(),
                    created: false,
                });
            }
            let key = self.key(def, namespace, name);
            match self.storage.delete(&key, Some(current.revision)).await {
                Ok(kv) => {
                    if def.kind_impl.allocates_service_addresses() {
                        self.service_addresses.release(&obj).await;
                    }
                    object::set_meta(
                        &mut obj,
                        "resourceVersion",
                        Value::String(kv.mod_revision.to_string()),
                    );
                    return Ok(WriteResult {
                        object: Arc::new(obj),
                        warnings: Vec::new(),
                        created: false,
                    });
                }
                Err(StorageError::Conflict { .. }) => continue,
                Err(StorageError::NotFound(_)) if cached => continue,
                Err(StorageError::NotFound(_)) => {
                    return Err(ApiError::not_found(&def.group, &def.resource, name))
                }
                Err(e) => return Err(storage_error(def, name, e)),
            }
        }
        Err(ApiError::stale_object(&def.group, &def.resource, name))
    }

    pub async fn delete_collection(
        &self,
        user: &UserInfo,
        def: &ResourceDef,
        namespace: Option<&str>,
        list: &ListOptions,
        opts: &DeleteOptions,
    ) -> ApiResult<ObjectList> {
        let namespace = self.scope(def, namespace)?;
        self.authorize(user, "deletecollection", def, namespace, None, View::Main)
            .await?;
        // Checked once up front, as upstream does, even when nothing matches.
        gc_finalizer_for(opts)?;
        let listed = self.list_authorized(def, namespace, list).await?;
        let mut deleted = Vec::new();
        for item in listed.items {
            let ns = object::namespace(&item).to_string();
            let ns = (!ns.is_empty()).then_some(ns.as_str());
            match self
                .delete_authorized(def, ns, object::name(&item), opts)
                .await
            {
                Ok(done) => deleted.push(served_shared(def, done.object)?),
                // Someone else deleted it meanwhile: the goal is met.
                Err(e) if e.code() == 404 => {}
                Err(e) => return Err(e),
            }
        }
        Ok(ObjectList {
            items: deleted,
            resource_version: listed.resource_version,
            continue_token: None,
            remaining_item_count: None,
        })
    }

    /// A list on behalf of an already authorized caller (internal use).
    pub(crate) async fn list_authorized(
        &self,
        def: &ResourceDef,
        namespace: Option<&str>,
        opts: &ListOptions,
    ) -> ApiResult<ObjectList> {
        self.list(&UserInfo::system(), def, namespace, opts).await
    }

    /// Brings `cache` to the store's current revision, asking a quiet watch
    /// for progress, for at most `within`: the current revision, and whether
    /// the cache got there.
    pub(crate) async fn catch_up(
        &self,
        cache: &crate::cache::WatchCache,
        within: std::time::Duration,
    ) -> ApiResult<(i64, bool)> {
        let current = self.current_revision().await?;
        if cache.revision() < current {
            self.storage.request_progress(current);
        }
        Ok((current, cache.wait_for_revision(current, within).await))
    }

    /// A consistent read served from the watch cache once it has caught up
    /// with the store's current revision (None: serve it from storage).
    /// Later pages of a paginated list come from storage at the same
    /// revision, which holds exactly the state the cache had.
    async fn consistent_list_from_cache(
        &self,
        def: &ResourceDef,
        prefix: &str,
        labels: &LabelSelector,
        fields: &FieldSelector,
        limit: i64,
    ) -> ApiResult<Option<ObjectList>> {
        // A cache knows it is current only from progress reports; a store
        // whose reports can run ahead of its watch events (old etcd) serves
        // consistent reads itself, as kube-apiserver falls back to etcd.
        if !self.storage.progress_is_ordered() {
            return Ok(None);
        }
        let cache = self.watch_cache(def).await?;
        if !self.catch_up(&cache, CACHE_CATCH_UP).await?.1 {
            return Ok(None);
        }
        let (objects, revision) = cache.list(prefix);
        let selective = !(labels.is_empty() && fields.is_empty());
        let mut matching = objects
            .into_iter()
            .filter(|(_, o)| !selective || (labels.matches(o) && fields.matches(o)));
        let limit = usize::try_from(limit).unwrap_or(0);
        let mut items = Vec::new();
        let mut last_key = None;
        for (key, object) in matching.by_ref() {
            if limit > 0 && items.len() == limit {
                // There is more: the page ends at the previous key.
                let remaining = 1 + matching.count();
                let relative = last_key
                    .as_deref()
                    .and_then(|k: &str| k.strip_prefix(prefix))
                    .unwrap_or_default()
                    .to_string();
                return Ok(Some(ObjectList {
                    items,
                    resource_version: revision.to_string(),
                    continue_token: Some(encode_continue(revision, &relative)),
                    remaining_item_count: (!selective).then_some(remaining as i64),
                }));
            }
            last_key = Some(key);
            items.push(object);
        }
        Ok(Some(ObjectList {
            items,
            resource_version: revision.to_string(),
            continue_token: None,
            remaining_item_count: None,
        }))
    }

    /// The resource type's watch cache, once it has loaded.
    pub(crate) async fn watch_cache(
        &self,
        def: &ResourceDef,
    ) -> ApiResult<Arc<crate::cache::WatchCache>> {
        let cache = self.caches.for_prefix(&def.key_prefix(&self.prefix, None));
        if !cache.wait_ready(CACHE_READY_TIMEOUT).await {
            return Err(ApiError::new(
                crate::error::StatusReason::ServiceUnavailable,
                format!("the watch cache for {} is not ready yet", def.resource),
            ));
        }
        Ok(cache)
    }

    /// Starts every resource type's watch cache (at start-up, so first
    /// requests do not wait for the initial lists).
    pub fn start_watch_caches(&self) {
        for def in self.registry.snapshot().resources() {
            self.start_watch_cache(def);
        }
    }

    fn start_watch_cache(&self, def: &ResourceDef) {
        if def.is_stored() {
            self.caches.for_prefix(&def.key_prefix(&self.prefix, None));
        }
    }

    /// Serves `resources` from now on (replacing any of the same
    /// group/version/resource) and starts their watch caches. Discovery,
    /// OpenAPI and the controllers follow the registry on their own.
    pub fn add_resources(&self, resources: Vec<ResourceDef>) {
        let change = self.registry.add(resources);
        self.follow(&change);
    }

    /// Stops serving the named group/version/resources: requests for them
    /// are 404s from now on, and their watch caches stop with every
    /// watcher closed. Stored objects stay (as upstream keeps a removed
    /// CRD's objects until they are deleted).
    pub fn remove_resources(&self, resources: &[(String, String, String)]) {
        let change = self.registry.remove(resources);
        self.follow(&change);
    }

    fn follow(&self, change: &crate::registry::RegistryChange) {
        let served = self.registry.snapshot();
        let still_stored = |prefix: &str| {
            served
                .resources()
                .iter()
                .any(|r| r.is_stored() && r.key_prefix(&self.prefix, None) == prefix)
        };
        for def in change.removed.iter().filter(|d| d.is_stored()) {
            let prefix = def.key_prefix(&self.prefix, None);
            if !still_stored(&prefix)
                || change
                    .added
                    .iter()
                    .any(|a| a.key_prefix(&self.prefix, None) == prefix)
            {
                self.caches.stop(&prefix);
            }
        }
        for def in &change.added {
            self.start_watch_cache(def);
        }
    }

    pub async fn current_revision(&self) -> ApiResult<i64> {
        self.storage
            .current_revision()
            .await
            .map_err(ApiError::internal)
    }

    /// Removes the "kubernetes" finalizer of a terminating namespace (the
    /// finalize subresource's job), which completes its delete. False when
    /// someone else (another replica) already did.
    /// Changes the metadata of a stored object with compare-and-swap,
    /// retrying on conflicts; `change` returns false when there is nothing
    /// to do. Returns false when the object is gone or is another
    /// incarnation (its uid differs from `uid`). Used by controllers, which
    /// act for the system, not a user.
    pub(crate) async fn update_stored_metadata(
        &self,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
        uid: &str,
        change: impl Fn(&mut serde_json::Map<String, Value>) -> bool,
    ) -> ApiResult<bool> {
        for _ in 0..MAX_CONFLICT_RETRIES {
            let current = match self.current_for_update(def, namespace, name, false).await {
                Ok(found) => found,
                Err(e) if e.code() == 404 => return Ok(false),
                Err(e) => return Err(e),
            };
            let mut stored = current.object.clone();
            if object::meta_str(&stored, "uid") != uid {
                return Ok(false);
            }
            let changed = object::meta_mut(&mut stored).is_some_and(&change);
            if !changed {
                return Ok(true);
            }
            object::remove_meta(&mut stored, "resourceVersion");
            let stored = served(def, stored)?;
            match self
                .write_update(def, namespace, name, &current, stored, false)
                .await
            {
                Ok(_) => return Ok(true),
                Err(StorageErrorOrApi::Storage(StorageError::Conflict { .. })) => continue,
                Err(StorageErrorOrApi::Storage(StorageError::NotFound(_))) => return Ok(false),
                Err(StorageErrorOrApi::Storage(e)) => return Err(storage_error(def, name, e)),
                Err(StorageErrorOrApi::Api(e)) => return Err(e),
            }
        }
        Err(ApiError::stale_object(&def.group, &def.resource, name))
    }

    /// The stored object of `def` named `name`, if it exists.
    pub(crate) async fn get_if_exists(
        &self,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
    ) -> ApiResult<Option<Value>> {
        match self.get_stored(def, namespace, name).await {
            Ok((_, stored)) => Ok(Some(stored)),
            Err(e) if e.code() == 404 => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Internal delete on behalf of a controller.
    pub(crate) async fn delete_as_system(
        &self,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
        opts: &DeleteOptions,
    ) -> ApiResult<WriteResult> {
        self.delete_authorized(def, namespace, name, opts).await
    }

    pub(crate) async fn release_namespace_finalizer(&self, name: &str) -> ApiResult<bool> {
        let def = self.resolve("", "v1", "namespaces")?;
        for _ in 0..MAX_CONFLICT_RETRIES {
            let current = match self.current_for_update(&def, None, name, false).await {
                Ok(found) => found,
                Err(e) if e.code() == 404 => return Ok(false),
                Err(e) => return Err(e),
            };
            let mut released = current.object.clone();
            if let Some(finalizers) = released
                .pointer_mut("/spec/finalizers")
                .and_then(Value::as_array_mut)
            {
                finalizers.retain(|f| f.as_str() != Some("kubernetes"));
            }
            object::remove_meta(&mut released, "resourceVersion");
            match self
                .write_update(&def, None, name, &current, released, false)
                .await
            {
                Ok(_) => return Ok(true),
                Err(StorageErrorOrApi::Storage(StorageError::Conflict { .. })) => continue,
                Err(StorageErrorOrApi::Storage(StorageError::NotFound(_))) => return Ok(false),
                Err(StorageErrorOrApi::Storage(e)) => return Err(storage_error(&def, name, e)),
                Err(StorageErrorOrApi::Api(e)) => return Err(e),
            }
        }
        Err(ApiError::stale_object(&def.group, &def.resource, name))
    }
}

/// The object an update starts from (see `current_for_update`).
struct Current {
    /// As stored (at the storage version), with its resourceVersion.
    object: Value,
    revision: i64,
    /// Taken from the watch cache, which may lag behind storage.
    from_cache: bool,
}

/// What an update did.
enum Updated<T = Value> {
    Written(T),
    /// Nothing changed: nothing was written, the result is the stored object.
    Unchanged(T),
}

impl<T> Updated<T> {
    fn map<U>(self, f: impl FnOnce(T) -> U) -> Updated<U> {
        match self {
            Self::Written(t) => Updated::Written(f(t)),
            Self::Unchanged(t) => Updated::Unchanged(f(t)),
        }
    }
}

/// Whether `stored` (as read back, with its resourceVersion) holds exactly
/// `form` (an object's stored form); resourceVersion is not part of what is
/// stored, so it is left out on both sides.
fn same_stored_form(stored: &Value, form: &Value) -> bool {
    fn without_version(
        meta: &serde_json::Map<String, Value>,
    ) -> impl Iterator<Item = (&String, &Value)> {
        meta.iter().filter(|(key, _)| *key != "resourceVersion")
    }
    match (stored, form) {
        (Value::Object(stored), Value::Object(form)) => {
            stored.len() == form.len()
                && stored
                    .iter()
                    .all(|(key, value)| match (value, form.get(key)) {
                        (Value::Object(meta), Some(Value::Object(form_meta)))
                            if key == "metadata" =>
                        {
                            without_version(meta).count() == without_version(form_meta).count()
                                && without_version(meta).all(|(k, v)| form_meta.get(k) == Some(v))
                        }
                        (value, Some(form_value)) => value == form_value,
                        (_, None) => false,
                    })
        }
        _ => stored == form,
    }
}

/// A write's failure: a storage outcome the caller may retry on, or a final API error.
enum StorageErrorOrApi {
    Storage(StorageError),
    Api(ApiError),
}

impl From<ApiError> for StorageErrorOrApi {
    fn from(e: ApiError) -> Self {
        Self::Api(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a write hands the watch cache in place of its change is what
    /// the stored bytes decode to, for creates, updates and patches alike.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn written_objects_are_their_stored_values_decoded() {
        let (_dir, core) = crate::storage::shaped::core_unshaped().await;
        let def = core.resolve("", "v1", "configmaps").expect("configmaps");
        let user = UserInfo::system();
        let opts = WriteOptions::default();
        let key = core.key(&def, Some("default"), "w");
        let stored_decoded = |core: &ApiCore| {
            let storage = core.storage.clone();
            let key = key.clone();
            async move {
                let kv = storage.get(&key).await.expect("read").expect("stored");
                object::decode_at(&kv.value, kv.mod_revision).expect("decodes")
            }
        };
        let created = core
            .create(
                &user,
                &def,
                Some("default"),
                json!({"apiVersion": "v1", "kind": "ConfigMap",
                       "metadata": {"name": "w", "labels": {"a": "1"}}, "data": {"n": "1.0"}}),
                &opts,
            )
            .await
            .expect("created");
        assert_eq!(*created.object, stored_decoded(&core).await);
        let mut replacement = Value::clone(&created.object);
        replacement["data"]["n"] = json!("2");
        replacement["metadata"]["annotations"] = json!({"b": "2"});
        let updated = core
            .update(
                &user,
                &def,
                Some("default"),
                "w",
                replacement,
                &opts,
                View::Main,
            )
            .await
            .expect("updated");
        assert_eq!(*updated.object, stored_decoded(&core).await);
        let patched = core
            .patch(
                &user,
                &def,
                Some("default"),
                "w",
                PatchType::Merge,
                &json!({"data": {"m": "3"}}),
                &opts,
                View::Main,
            )
            .await
            .expect("patched");
        assert_eq!(*patched.object, stored_decoded(&core).await);
        // And the cache, once current, holds that same object.
        let cache = core.caches.for_prefix(&def.key_prefix(&core.prefix, None));
        let revision: i64 = object::resource_version(&patched.object)
            .parse()
            .expect("a revision");
        assert!(
            cache
                .wait_for_revision(revision, std::time::Duration::from_secs(5))
                .await
        );
        assert_eq!(cache.get(&key).as_deref(), Some(&*patched.object));
    }

    /// The object's keys come out in Go's struct order (kind and apiVersion
    /// first, then ConfigMap's fields as declared) whatever order the body
    /// gave, as upstream writes what it decoded.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn keys_are_stored_in_go_struct_order() {
        let (_dir, core) = crate::storage::shaped::core_unshaped().await;
        let def = core.resolve("", "v1", "configmaps").expect("configmaps");
        let body: Value = serde_json::from_str(
            r#"{"data": {"a": "1"}, "kind": "ConfigMap", "metadata": {"name": "c"},
                "immutable": false, "apiVersion": "v1", "binaryData": {}}"#,
        )
        .expect("json");
        let created = core
            .create(
                &UserInfo::system(),
                &def,
                Some("default"),
                body,
                &WriteOptions::default(),
            )
            .await
            .expect("created");
        let keys: Vec<&str> = created
            .object
            .as_object()
            .expect("an object")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "kind",
                "apiVersion",
                "metadata",
                "immutable",
                "data",
                "binaryData"
            ]
        );
    }

    /// A write through /status answers for metadata and status only: a
    /// stored spec that the rules refuse (written before a rule existed)
    /// does not block it, while a write of the main resource still is.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn status_writes_answer_only_for_status_and_metadata() {
        let (_dir, core) = crate::storage::shaped::core_unshaped().await;
        let user = UserInfo::system();
        let def = core
            .resolve("apps", "v1", "deployments")
            .expect("deployments");
        let write = WriteOptions::default();
        let ns = Some("default");
        core.create(
            &user,
            &def,
            ns,
            json!({
                "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                "spec": {
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": {
                        "metadata": {"labels": {"app": "web"}},
                        "spec": {"containers": [{"name": "c", "image": "pause"}]},
                    },
                },
            }),
            &write,
        )
        .await
        .expect("created");
        // A spec today's rules refuse, as if stored before they existed.
        let key = "/registry/deployments/default/web";
        let kv = core.storage.get(key).await.expect("read").expect("stored");
        let mut stored: Value = serde_json::from_slice(&kv.value).expect("json");
        stored["spec"]["replicas"] = json!(-1);
        core.storage
            .update(
                key,
                serde_json::to_vec(&stored).expect("json"),
                kv.mod_revision,
            )
            .await
            .expect("rewritten");
        let patch = |view: View, body: Value| {
            let (core, user, def, write) = (&core, &user, &def, &write);
            async move {
                core.patch(user, def, ns, "web", PatchType::Merge, &body, write, view)
                    .await
            }
        };
        let status = patch(View::Status, json!({"status": {"observedGeneration": 7}}))
            .await
            .expect("a status write is not held up by the spec");
        assert_eq!(status.object["status"]["observedGeneration"], 7);
        let main = patch(View::Main, json!({"metadata": {"labels": {"tier": "web"}}}))
            .await
            .expect_err("a write of the main resource is");
        assert_eq!(main.code(), 422, "{main:?}");
        assert!(main.message.contains("spec.replicas"), "{}", main.message);
    }

    /// Updates and deletes start from the watch cache's copy. With that
    /// cache lagging behind storage, a patch is neither lost (its
    /// compare-and-swap fails and it is redone from storage), nor skipped as
    /// a no-op because the stale copy already looked like the result, and a
    /// precondition newer than the cache is checked against storage.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn updates_from_a_lagging_cache_are_neither_lost_nor_skipped() {
        use std::time::Duration;
        let (_dir, core) = crate::storage::shaped::core_lagging_behind(
            "/registry/configmaps/",
            Duration::from_millis(500),
        )
        .await;
        let user = UserInfo::system();
        let def = core.resolve("", "v1", "configmaps").expect("configmaps");
        let write = WriteOptions::default();
        let ns = Some("default");
        crate::storage::shaped::create_in_default(
            &core,
            "configmaps",
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web"}, "data": {"k": "a"}}),
        )
        .await;
        tokio::time::sleep(Duration::from_millis(800)).await;
        let patch = |body: Value| {
            let (core, user, def, write) = (&core, &user, &def, &write);
            async move {
                core.patch(
                    user,
                    def,
                    ns,
                    "web",
                    PatchType::Merge,
                    &body,
                    write,
                    View::Main,
                )
                .await
                .expect("patched")
                .object
            }
        };
        let stored = || async {
            let kv = core
                .storage
                .get("/registry/configmaps/default/web")
                .await
                .expect("read")
                .expect("stored");
            decode(&kv).expect("decodes")
        };
        // The cache is current: this one needs no read.
        patch(json!({"data": {"k": "b"}})).await;
        // The cache still says k=a: not a no-op.
        let back = patch(json!({"data": {"k": "a"}})).await;
        assert_eq!(stored().await["data"]["k"], "a");
        assert_eq!(
            back["metadata"]["resourceVersion"],
            stored().await["metadata"]["resourceVersion"]
        );
        // The cache is two writes behind: the patch is redone from storage.
        patch(json!({"data": {"k2": "x"}})).await;
        assert_eq!(stored().await["data"], json!({"k": "a", "k2": "x"}));
        // A precondition newer than the cache holds against storage.
        let mut replacement = stored().await;
        replacement["data"]["k3"] = json!("y");
        core.update(&user, &def, ns, "web", replacement, &write, View::Main)
            .await
            .expect("an update at the stored resourceVersion");
        assert_eq!(stored().await["data"]["k3"], "y");
        // So does a delete's, and it deletes.
        let rv = stored().await["metadata"]["resourceVersion"]
            .as_str()
            .map(String::from);
        let options = DeleteOptions {
            precondition_resource_version: rv,
            ..DeleteOptions::default()
        };
        core.delete(&user, &def, ns, "web", &options)
            .await
            .expect("a delete at the stored resourceVersion");
        let gone = core
            .storage
            .get("/registry/configmaps/default/web")
            .await
            .expect("read");
        assert!(gone.is_none(), "deleted");
    }

    #[test]
    fn continue_tokens_round_trip_and_reject_garbage() {
        let token = encode_continue(42, "default/web");
        assert_eq!(
            decode_continue(&token).unwrap(),
            (42, "default/web".to_string())
        );
        assert_eq!(decode_continue("!!!").unwrap_err().code(), 400);
        let traversal = base64::engine::general_purpose::URL_SAFE
            .encode(json!({"v": "meta.k8s.io/v1", "rv": 1, "start": "../x"}).to_string());
        assert_eq!(decode_continue(&traversal).unwrap_err().code(), 400);
    }

    #[test]
    fn field_validation_values() {
        assert_eq!(
            FieldValidation::parse("Strict").unwrap(),
            FieldValidation::Strict
        );
        assert!(FieldValidation::parse("strict").is_err());
    }
}
