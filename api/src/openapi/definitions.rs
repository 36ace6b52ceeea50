//! The schema definitions of every built-in kind, generated once from
//! k8s-openapi's schemars output and shared by the documents and
//! `unknown_fields`.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use k8s_openapi::schemars::generate::SchemaSettings;
use k8s_openapi::schemars::SchemaGenerator;
use serde_json::{json, Map, Value};

/// Prefix of the `$ref`s schemars writes with draft 2020-12 settings. The
/// generated definitions keep it; the documents rewrite it per flavour.
pub(crate) const RAW_REF_PREFIX: &str = "#/$defs/";

pub(crate) const STATUS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";
pub(crate) const DELETE_OPTIONS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions";
pub(crate) const PATCH: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch";
pub(crate) const WATCH_EVENT: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent";
pub(crate) const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";
pub(crate) const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// Definitions every group-version document carries because operations
/// refer to them whatever the kind.
pub(crate) const OPERATION_DEFINITIONS: [&str; 4] = [STATUS, DELETE_OPTIONS, PATCH, WATCH_EVENT];

/// All definitions reachable from the built-in kinds, keyed by upstream's
/// definition name (`io.k8s.api.core.v1.Pod`), in draft 2020-12 form.
pub(crate) type Definitions = BTreeMap<String, Value>;

/// Generated on first use: schemars builds a few hundred JSON trees, which is
/// worth doing once per process, not per request.
pub(crate) fn builtin() -> &'static Definitions {
    static DEFINITIONS: OnceLock<Definitions> = OnceLock::new();
    DEFINITIONS.get_or_init(generate)
}

macro_rules! generate_roots {
    ($generator:ident; $($ty:ty),* $(,)?) => {
        $( let _ = $generator.subschema_for::<$ty>(); )*
    };
}

fn generate() -> Definitions {
    let mut generator = SchemaGenerator::new(SchemaSettings::draft2020_12());
    generate_roots!(generator;
        k8s_openapi::apimachinery::pkg::apis::meta::v1::DeleteOptions,
        k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta,
        k8s_openapi::apimachinery::pkg::apis::meta::v1::Patch,
        k8s_openapi::apimachinery::pkg::apis::meta::v1::WatchEvent<Value>,
        k8s_openapi::api::admissionregistration::v1::MutatingWebhookConfiguration,
        k8s_openapi::api::admissionregistration::v1::ValidatingAdmissionPolicy,
        k8s_openapi::api::admissionregistration::v1::ValidatingAdmissionPolicyBinding,
        k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration,
        k8s_openapi::api::admissionregistration::v1alpha1::MutatingAdmissionPolicy,
        k8s_openapi::api::admissionregistration::v1alpha1::MutatingAdmissionPolicyBinding,
        k8s_openapi::api::admissionregistration::v1beta1::ValidatingAdmissionPolicy,
        k8s_openapi::api::admissionregistration::v1beta1::ValidatingAdmissionPolicyBinding,
        k8s_openapi::api::apiserverinternal::v1alpha1::StorageVersion,
        k8s_openapi::api::apps::v1::ControllerRevision,
        k8s_openapi::api::apps::v1::DaemonSet,
        k8s_openapi::api::apps::v1::Deployment,
        k8s_openapi::api::apps::v1::ReplicaSet,
        k8s_openapi::api::apps::v1::StatefulSet,
        k8s_openapi::api::authentication::v1::SelfSubjectReview,
        k8s_openapi::api::authentication::v1::TokenRequest,
        k8s_openapi::api::authentication::v1::TokenReview,
        k8s_openapi::api::authorization::v1::LocalSubjectAccessReview,
        k8s_openapi::api::authorization::v1::SelfSubjectAccessReview,
        k8s_openapi::api::authorization::v1::SelfSubjectRulesReview,
        k8s_openapi::api::authorization::v1::SubjectAccessReview,
        k8s_openapi::api::autoscaling::v1::HorizontalPodAutoscaler,
        k8s_openapi::api::autoscaling::v1::Scale,
        k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler,
        k8s_openapi::api::batch::v1::CronJob,
        k8s_openapi::api::batch::v1::Job,
        k8s_openapi::api::certificates::v1::CertificateSigningRequest,
        k8s_openapi::api::certificates::v1alpha1::ClusterTrustBundle,
        k8s_openapi::api::certificates::v1beta1::ClusterTrustBundle,
        k8s_openapi::api::coordination::v1::Lease,
        k8s_openapi::api::coordination::v1alpha2::LeaseCandidate,
        k8s_openapi::api::coordination::v1beta1::LeaseCandidate,
        k8s_openapi::api::core::v1::Binding,
        k8s_openapi::api::core::v1::ComponentStatus,
        k8s_openapi::api::core::v1::ConfigMap,
        k8s_openapi::api::core::v1::Endpoints,
        k8s_openapi::api::core::v1::Event,
        k8s_openapi::api::core::v1::LimitRange,
        k8s_openapi::api::core::v1::Namespace,
        k8s_openapi::api::core::v1::Node,
        k8s_openapi::api::core::v1::PersistentVolume,
        k8s_openapi::api::core::v1::PersistentVolumeClaim,
        k8s_openapi::api::core::v1::Pod,
        k8s_openapi::api::core::v1::PodTemplate,
        k8s_openapi::api::core::v1::ReplicationController,
        k8s_openapi::api::core::v1::ResourceQuota,
        k8s_openapi::api::core::v1::Secret,
        k8s_openapi::api::core::v1::Service,
        k8s_openapi::api::core::v1::ServiceAccount,
        k8s_openapi::api::discovery::v1::EndpointSlice,
        k8s_openapi::api::events::v1::Event,
        k8s_openapi::api::flowcontrol::v1::FlowSchema,
        k8s_openapi::api::flowcontrol::v1::PriorityLevelConfiguration,
        k8s_openapi::api::networking::v1::IPAddress,
        k8s_openapi::api::networking::v1::Ingress,
        k8s_openapi::api::networking::v1::IngressClass,
        k8s_openapi::api::networking::v1::NetworkPolicy,
        k8s_openapi::api::networking::v1::ServiceCIDR,
        k8s_openapi::api::networking::v1beta1::IPAddress,
        k8s_openapi::api::networking::v1beta1::ServiceCIDR,
        k8s_openapi::api::node::v1::RuntimeClass,
        k8s_openapi::api::policy::v1::Eviction,
        k8s_openapi::api::policy::v1::PodDisruptionBudget,
        k8s_openapi::api::rbac::v1::ClusterRole,
        k8s_openapi::api::rbac::v1::ClusterRoleBinding,
        k8s_openapi::api::rbac::v1::Role,
        k8s_openapi::api::rbac::v1::RoleBinding,
        k8s_openapi::api::resource::v1alpha3::DeviceClass,
        k8s_openapi::api::resource::v1alpha3::DeviceTaintRule,
        k8s_openapi::api::resource::v1alpha3::ResourceClaim,
        k8s_openapi::api::resource::v1alpha3::ResourceClaimTemplate,
        k8s_openapi::api::resource::v1alpha3::ResourceSlice,
        k8s_openapi::api::resource::v1beta1::DeviceClass,
        k8s_openapi::api::resource::v1beta1::ResourceClaim,
        k8s_openapi::api::resource::v1beta1::ResourceClaimTemplate,
        k8s_openapi::api::resource::v1beta1::ResourceSlice,
        k8s_openapi::api::resource::v1beta2::DeviceClass,
        k8s_openapi::api::resource::v1beta2::ResourceClaim,
        k8s_openapi::api::resource::v1beta2::ResourceClaimTemplate,
        k8s_openapi::api::resource::v1beta2::ResourceSlice,
        k8s_openapi::api::scheduling::v1::PriorityClass,
        k8s_openapi::api::storage::v1::CSIDriver,
        k8s_openapi::api::storage::v1::CSINode,
        k8s_openapi::api::storage::v1::CSIStorageCapacity,
        k8s_openapi::api::storage::v1::StorageClass,
        k8s_openapi::api::storage::v1::VolumeAttachment,
        k8s_openapi::api::storage::v1alpha1::VolumeAttributesClass,
        k8s_openapi::api::storage::v1beta1::VolumeAttributesClass,
        k8s_openapi::api::storagemigration::v1alpha1::StorageVersionMigration,
        k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
        k8s_openapi::apimachinery::pkg::apis::meta::v1::Status,
        k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService,
    );
    generator.take_definitions(false).into_iter().collect()
}

/// The name upstream gives a kind's list type: same package, `<Kind>List`.
pub(crate) fn list_definition_name(definition: &str, kind: &str) -> String {
    match definition.rsplit_once('.') {
        Some((package, _)) => format!("{package}.{kind}List"),
        None => format!("{kind}List"),
    }
}

/// The schema of `<Kind>List`: k8s-openapi models lists as a generic
/// `List<T>` without a schema of its own, so it is written here the way
/// upstream publishes it.
pub(crate) fn list_schema(kind: &str, item_definition: &str) -> Value {
    json!({
        "description": format!("{kind}List is a list of {kind} objects."),
        "type": "object",
        "properties": {
            "apiVersion": {
                "description": API_VERSION_DESCRIPTION,
                "type": "string",
            },
            "items": {
                "description": format!("List of {kind} objects."),
                "type": "array",
                "items": { "$ref": format!("{RAW_REF_PREFIX}{item_definition}") },
            },
            "kind": {
                "description": KIND_DESCRIPTION,
                "type": "string",
            },
            "metadata": {
                "$ref": format!("{RAW_REF_PREFIX}{LIST_META}"),
                "description": "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds",
            },
        },
        "required": ["items"],
    })
}

/// Stand-in for a kind k8s-openapi does not know (a custom resource): the
/// type fields and metadata are known, everything else is preserved, so
/// clients neither reject nor prune its fields.
pub(crate) fn opaque_kind_schema(kind: &str) -> Value {
    let mut properties = Map::new();
    insert_type_meta(&mut properties, "Standard object's metadata.");
    json!({
        "description": format!("{kind} is served without a published schema."),
        "type": "object",
        "properties": properties,
        "x-kubernetes-preserve-unknown-fields": true,
    })
}

/// A kind published with its own schema (a custom resource's structural
/// schema), with the type fields and metadata every object has, as
/// upstream's CRD OpenAPI builder adds them.
pub(crate) fn custom_kind_schema(schema: &Value) -> Value {
    let mut schema = schema.clone();
    let Some(map) = schema.as_object_mut() else {
        return schema;
    };
    let properties = map
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(properties) = properties.as_object_mut() {
        insert_type_meta(
            properties,
            "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
        );
    }
    schema
}

/// The apiVersion, kind and metadata properties every object has.
fn insert_type_meta(properties: &mut Map<String, Value>, metadata_description: &str) {
    properties.insert(
        "apiVersion".into(),
        json!({ "description": API_VERSION_DESCRIPTION, "type": "string" }),
    );
    properties.insert(
        "kind".into(),
        json!({ "description": KIND_DESCRIPTION, "type": "string" }),
    );
    properties.insert(
        "metadata".into(),
        json!({
            "$ref": format!("{RAW_REF_PREFIX}{OBJECT_META}"),
            "description": metadata_description,
        }),
    );
}

const API_VERSION_DESCRIPTION: &str = "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";
const KIND_DESCRIPTION: &str = "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";

/// Names of the definitions `schema` refers to directly.
pub(crate) fn direct_refs(schema: &Value, out: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                // JSONSchemaProps has a *property* named `$ref`; only a string
                // value is a reference.
                match (key.as_str(), value) {
                    ("$ref", Value::String(reference)) => {
                        if let Some(name) = reference.strip_prefix(RAW_REF_PREFIX) {
                            out.push(name.to_owned());
                        }
                    }
                    _ => direct_refs(value, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| direct_refs(item, out)),
        _ => {}
    }
}
