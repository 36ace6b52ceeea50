//! Every served kind: one implementation of [`Kind`] per kind, in the folder
//! of its API group (`apps/deployment.rs`). A kind's file declares the
//! resources it is served as (names, scope, verbs, subresources, selectable
//! fields, storage) and implements what its objects do: defaults,
//! preparation, validation, status handling, printing and conversion.
//!
//! The pipeline never asks which group or kind it is handling: it calls the
//! resource's [`Kind`]. Kinds built at run time (custom resources) implement
//! the same trait.

use serde_json::{json, Map, Value};

use crate::auth::UserInfo;
use crate::conversion::ConversionError;
use crate::error::FieldError;
use crate::openapi::TypeMismatch;
use crate::printers::{Cell, TableColumn};
use crate::registry::ResourceDef;

pub mod admissionregistration;
pub mod apiextensions;
pub mod apiregistration;
pub mod apps;
pub mod authentication;
pub mod authorization;
pub mod autoscaling;
pub mod batch;
pub mod certificates;
pub mod coordination;
pub mod core;
pub mod discovery;
pub mod events;
pub mod flowcontrol;
pub mod networking;
pub mod node;
pub mod policy;
pub mod rbac;
pub mod scheduling;
pub mod storage;

/// Which name format a kind accepts, as upstream's ValidateNameFunc choices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameRule {
    /// RFC 1123 subdomain (most kinds).
    Subdomain,
    /// RFC 1123 label (namespaces).
    Label,
    /// RFC 1035 label (services: must start with a letter).
    Dns1035Label,
    /// Any string usable as a URL path segment (RBAC kinds).
    PathSegment,
    /// An IP address in canonical form (IPAddress, named by its address).
    IpAddress,
}

/// How the pipeline serves a kind's objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handling {
    /// Kept in storage: every verb reads and writes it there.
    Stored,
    /// core/v1 Binding: a create that places a pod, stored nowhere.
    Binding,
    /// The access and token reviews: a create answered from the request.
    Review(Review),
    /// core/v1 ComponentStatus: computed on each read.
    ComponentStatus,
}

/// Which review a review kind is; the authorization stage answers each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Review {
    /// SelfSubjectReview (`kubectl auth whoami`).
    WhoAmI,
    /// TokenReview: whose is this bearer token.
    Token,
    /// SelfSubjectAccessReview (`kubectl auth can-i`).
    MayI,
    /// SelfSubjectRulesReview (`kubectl auth can-i --list`).
    MyRules,
    /// SubjectAccessReview and LocalSubjectAccessReview.
    MayThey,
}

/// What a write of an RBAC kind hands out, so the authorization stage can
/// refuse an escalation (upstream's policy-based storage of these kinds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grant {
    /// Its `rules` (Role, ClusterRole): its writer must hold them, or may
    /// `escalate` it.
    Rules,
    /// The role its `roleRef` names (RoleBinding, ClusterRoleBinding): its
    /// writer must hold that role's rules, or may `bind` it.
    RoleReference,
}

/// What a connect subresource of a kind reaches: upstream's Connecter
/// storages (`pods/proxy`, `pods/log`, `pods/exec`, `services/proxy`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectTo {
    /// One of the Service's endpoints (or its ExternalName).
    ServiceProxy,
    /// The pod's IP.
    PodProxy,
    /// The node's kubelet.
    NodeProxy,
    /// The kubelet's container logs of the pod.
    PodLog,
    /// The kubelet's exec, attach or port-forward stream of the pod.
    PodStream,
}

type Object = Map<String, Value>;

/// What the scale subresource shows of an object: its desired and
/// current replicas (absent reads as 0) and its label selector as a string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScaleParts {
    pub spec_replicas: Option<i64>,
    pub status_replicas: Option<i64>,
    pub selector: String,
}

/// What one kind's objects do. Every method has the behaviour of a kind
/// that adds nothing, so an implementation says only what differs.
///
/// Objects are Kubernetes JSON. Validation sees the object at its storage
/// version (the pipeline converts first); defaulting sees it at the version
/// of the request.
pub trait Kind: Send + Sync {
    /// Stored, or answered on the spot.
    fn handling(&self) -> Handling {
        Handling::Stored
    }

    /// What writing one of its objects grants; None for every kind but
    /// RBAC's four.
    fn grants(&self) -> Option<Grant> {
        None
    }

    fn name_rule(&self) -> NameRule {
        NameRule::Subdomain
    }

    /// The name a create with `generateName` gets: the prefix and a random
    /// suffix (upstream's SimpleNameGenerator).
    fn generated_name(&self, prefix: &str) -> String {
        format!("{prefix}{}", crate::object::random_suffix())
    }

    /// Whether an unqualified finalizer must be one of the standard ones
    /// (kube-apiserver's own kinds), or any qualified name will do (the
    /// kinds of the apiextensions and aggregator servers).
    fn standard_finalizers_only(&self) -> bool {
        true
    }

    /// Whether `metadata.generation` counts spec changes.
    fn tracks_generation(&self) -> bool {
        false
    }

    /// Upstream's `SetDefaults_*` for an object at `version`, in place;
    /// idempotent (applied on decode and again before storing).
    fn apply_defaults(&self, _version: &str, _object: &mut Object) {}

    /// Whether [`Kind::apply_defaults`] runs on every read from storage too
    /// (upstream defaults custom resources when it decodes them).
    fn defaults_on_read(&self) -> bool {
        false
    }

    /// Clears or fills server-owned fields of a new object.
    fn prepare_for_create(&self, _object: &mut Value) {}

    /// Fills fields a new object takes from the user creating it.
    fn prepare_for_create_by(&self, _object: &mut Value, _user: &UserInfo) {}

    /// Whether a create may set status although the kind has a status
    /// subresource (nodes: the kubelet registers with its status).
    fn keeps_status_on_create(&self) -> bool {
        false
    }

    /// The status a new object starts with when the kind has a status
    /// subresource: upstream clears it to the Go zero value, whose JSON
    /// keeps the fields that have no `omitempty`.
    fn empty_status(&self) -> Value {
        json!({})
    }

    /// Carries server-owned fields over from the stored object on a write
    /// to the main resource or its status.
    fn prepare_for_update(&self, _object: &mut Value, _old: &Value) {}

    /// What a write through one of the kind's own subresources (beyond
    /// status and scale) may change: the stored `old` with that part of
    /// `object`. None for a subresource that writes nothing of the object.
    fn subresource_update(
        &self,
        _subresource: &str,
        _object: &Value,
        _old: &Value,
    ) -> Option<Value> {
        None
    }

    /// Whether objects are validated at the version of the request rather
    /// than converted to the storage version first (custom resources: each
    /// version has its own schema).
    fn validates_served_form(&self) -> bool {
        false
    }

    /// Upstream's ValidateXxx for a new object (metadata is the pipeline's).
    fn validate_create(&self, _object: &Value) -> Vec<FieldError> {
        Vec::new()
    }

    /// ValidateXxxUpdate against the stored `old` object.
    fn validate_update(&self, _object: &Value, _old: &Value) -> Vec<FieldError> {
        Vec::new()
    }

    /// Validation of a write through one of the kind's own subresources
    /// (pods' ephemeralcontainers, resize); None: [`Kind::validate_update`].
    fn validate_subresource_update(
        &self,
        _subresource: &str,
        _object: &Value,
        _old: &Value,
    ) -> Option<Vec<FieldError>> {
        None
    }

    /// ValidateXxxStatusUpdate's checks of a status written through `/status`.
    fn validate_status_update(&self, _object: &Value, _old: &Value) -> Vec<FieldError> {
        Vec::new()
    }

    /// Whether kind-specific finalizers (beyond `metadata.finalizers`) are
    /// done, so a delete may remove the object.
    fn finalizers_done(&self, _object: &Value) -> bool {
        true
    }

    /// Marks an object whose delete has to wait for finalizers.
    fn prepare_for_delete(&self, _object: &mut Value) {}

    /// Decodes a written object in place against the kind's schema, as
    /// upstream decodes a body: the paths of unknown fields it dropped, or
    /// the type error that refuses the write. `definition` is the
    /// resource's OpenAPI definition.
    fn decode(&self, definition: &str, object: &mut Value) -> Result<Vec<String>, TypeMismatch> {
        crate::openapi::decode_typed(definition, object)
    }

    /// Puts a finished object's keys where upstream's encoder writes them,
    /// so what is stored is upstream's bytes.
    fn put_in_order(&self, definition: &str, object: &mut Value) {
        crate::openapi::put_in_go_order(definition, object)
    }

    /// Whether an update changes what `metadata.generation` counts (when
    /// [`Kind::tracks_generation`]).
    fn spec_changed(&self, object: &Value, old: &Value) -> bool {
        object.get("spec") != old.get("spec")
    }

    /// What the scale subresource shows of an object.
    fn scale_of(&self, object: &Value) -> ScaleParts {
        ScaleParts {
            spec_replicas: object.pointer("/spec/replicas").and_then(Value::as_i64),
            status_replicas: object.pointer("/status/replicas").and_then(Value::as_i64),
            selector: crate::printers::label_selector_string(object.pointer("/spec/selector"))
                .unwrap_or_default(),
        }
    }

    /// Where the desired replicas live, as upstream names the path in errors.
    fn scale_replicas_path(&self) -> String {
        ".spec.replicas".to_string()
    }

    /// Writes a Scale's replicas into the object.
    fn set_scale_replicas(&self, object: &mut Value, replicas: i64) {
        crate::object::set_at(object, &["spec", "replicas"], json!(replicas));
    }

    /// Why a verb is refused for now although the resource has it, in
    /// upstream's words (a custom resource whose definition is being
    /// deleted takes no creates).
    fn refuses(&self, _verb: &str) -> Option<String> {
        None
    }

    /// Whether objects of this kind hold ClusterIPs and NodePorts.
    fn allocates_service_addresses(&self) -> bool {
        false
    }

    /// Where its connect subresource `subresource` leads; None: it has none
    /// of that name.
    fn connect_to(&self, _subresource: &str) -> Option<ConnectTo> {
        None
    }

    /// The pod template an object of a workload kind holds, which the
    /// PodSecurity admission plugin checks (upstream's
    /// DefaultPodSpecResources).
    fn pod_template<'a>(&self, _object: &'a Value) -> Option<&'a Value> {
        None
    }

    /// The selectable fields its watch cache indexes objects by, so a list
    /// selecting one value of such a field reads only the objects holding
    /// it (upstream's cacher indexes pods by `spec.nodeName`, which every
    /// kubelet selects on).
    fn cache_indexes(&self) -> &[&str] {
        &[]
    }

    /// How upstream renders a selectable field the object leaves out: its
    /// Go value's `fmt.Sprint`, the zero of its type ("" for a string).
    fn absent_field_value(&self, _field: &str) -> &'static str {
        ""
    }

    /// The kind's OpenAPI v3 schema when it has no built-in definition (a
    /// custom resource's structural schema), for the published documents.
    /// Fewer verbs than it serves for discovery to list, when the kind
    /// wants clients to stop using some (updates still go on).
    fn advertised_verbs(&self) -> Option<&'static [&'static str]> {
        None
    }

    /// What server-side apply reads of a custom kind's schema (list types,
    /// map keys); built-in kinds are resolved from their definitions.
    fn apply_schema(&self) -> Option<crate::apply::CustomSchema> {
        None
    }

    /// A custom kind's OpenAPI v3 schema, shared with the documents.
    fn openapi_schema(&self) -> Option<std::sync::Arc<Value>> {
        None
    }

    /// What an object counts against a ResourceQuota besides its
    /// `count/<resource>` (upstream's quota evaluator's usage).
    fn quota_usage(&self, _object: &Value) -> Vec<(String, crate::validate::quantity::Quantity)> {
        Vec::new()
    }

    /// Whether an update is charged too (for the change), not only a create.
    fn quota_charges_updates(&self) -> bool {
        false
    }

    /// Whether the object falls under one scope requirement of a quota
    /// (`{scopeName, operator, values}`); None: the kind has no scopes, so
    /// a scoped quota does not apply to it.
    fn quota_scope_matches(&self, _requirement: &Value, _object: &Value) -> Option<bool> {
        None
    }

    /// What a quota limiting `limited` demands of the object and it does
    /// not give (a pod's containers must set what is limited).
    fn quota_constraints(&self, _limited: &[String], _object: &Value) -> Option<String> {
        None
    }

    /// The columns `kubectl get` shows: upstream's printer for the kind, or
    /// its default table (Name, Created At) for a kind without one.
    fn table_columns(&self) -> Vec<TableColumn> {
        crate::printers::default_table_columns()
    }

    /// One row's cells, one per column; `now` makes ages testable.
    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        crate::printers::default_table_cells(object)
    }

    /// How a Table of several objects orders its rows, when upstream's
    /// printer sorts them (flow schemas print in matching order).
    fn table_row_order(&self) -> Option<fn(&Value, &Value) -> std::cmp::Ordering> {
        None
    }

    /// The object at `target_api_version`, another version this kind is
    /// served at.
    fn convert(&self, object: Value, target_api_version: &str) -> Result<Value, ConversionError> {
        crate::conversion::unconvertible(object, target_api_version)
    }
}

/// Everything Capstan serves built in, in upstream's discovery order
/// (core/v1 first, then the groups as kube-apiserver lists them).
pub fn builtin_resources() -> Vec<ResourceDef> {
    [
        self::core::resources(),
        // kube-aggregator serves its own group first in /apis.
        apiregistration::resources(),
        apps::resources(),
        events::resources(),
        authentication::resources(),
        authorization::resources(),
        autoscaling::resources(),
        batch::resources(),
        certificates::resources(),
        networking::resources(),
        policy::resources(),
        rbac::resources(),
        storage::resources(),
        admissionregistration::resources(),
        apiextensions::resources(),
        scheduling::resources(),
        coordination::resources(),
        node::resources(),
        discovery::resources(),
        flowcontrol::resources(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// A built-in kind by its (storage) group and kind, for unit tests of
/// per-kind behaviour.
#[cfg(test)]
pub(crate) fn builtin(group: &str, kind: &str) -> std::sync::Arc<dyn Kind> {
    builtin_resources()
        .into_iter()
        .find(|r| r.group == group && r.kind == kind)
        .map(|r| r.kind_impl)
        .unwrap_or_else(|| panic!("no built-in kind {group}/{kind}"))
}
