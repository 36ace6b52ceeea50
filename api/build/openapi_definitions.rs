//! The OpenAPI schema definitions of the built-in kinds, generated here
//! from k8s-openapi's schemars output and embedded as JSON: the server
//! parses them once and never links schemars and the ~6 MB of code its
//! per-type generators compile to (docs/benchmarks.md, idle RSS).
//!
//! Output, in `$OUT_DIR`:
//! - `builtin_definitions.json`: every definition reachable from the
//!   built-in kinds and the operations' types, keyed by upstream's name
//!   (`io.k8s.api.core.v1.Pod`), in draft 2020-12 form;
//! - `discovery_definitions.json`: the discovery documents' types, which no
//!   kind refers to (the protobuf codec's JSON names need them);
//! - `strategic_merge_roots.json`: the definition names of the kinds a
//!   strategic merge patch applies to.

use std::path::Path;

use k8s_openapi::schemars::generate::SchemaSettings;
use k8s_openapi::schemars::{JsonSchema, SchemaGenerator};
use serde_json::Value;

pub(crate) fn write(out_dir: &Path) {
    let mut generator = SchemaGenerator::new(SchemaSettings::draft2020_12());
    // Registering a root adds its definition and, through `$ref`s, those of
    // every type it reaches; the roots' definition names are returned.
    macro_rules! roots {
        ($generator:ident; $($ty:ty),* $(,)?) => {
            vec![$({
                let _ = $generator.subschema_for::<$ty>();
                <$ty as JsonSchema>::schema_name().into_owned()
            }),*]
        };
    }
    // The kinds a strategic merge patch applies to.
    let strategic_merge_roots = roots!(generator;
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
        k8s_openapi::api::apps::v1::ControllerRevision,
        k8s_openapi::api::apps::v1::DaemonSet,
        k8s_openapi::api::apps::v1::Deployment,
        k8s_openapi::api::apps::v1::ReplicaSet,
        k8s_openapi::api::apps::v1::StatefulSet,
        k8s_openapi::api::autoscaling::v1::HorizontalPodAutoscaler,
        k8s_openapi::api::autoscaling::v1::Scale,
        k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler,
        k8s_openapi::api::batch::v1::CronJob,
        k8s_openapi::api::batch::v1::Job,
        k8s_openapi::api::networking::v1::Ingress,
        k8s_openapi::api::networking::v1::IngressClass,
        k8s_openapi::api::networking::v1::IPAddress,
        k8s_openapi::api::networking::v1::NetworkPolicy,
        k8s_openapi::api::networking::v1::ServiceCIDR,
        k8s_openapi::api::rbac::v1::ClusterRole,
        k8s_openapi::api::rbac::v1::ClusterRoleBinding,
        k8s_openapi::api::rbac::v1::Role,
        k8s_openapi::api::rbac::v1::RoleBinding,
        k8s_openapi::api::policy::v1::Eviction,
        k8s_openapi::api::policy::v1::PodDisruptionBudget,
        k8s_openapi::api::coordination::v1::Lease,
        k8s_openapi::api::scheduling::v1::PriorityClass,
        k8s_openapi::api::storage::v1::CSIDriver,
        k8s_openapi::api::storage::v1::CSINode,
        k8s_openapi::api::storage::v1::CSIStorageCapacity,
        k8s_openapi::api::storage::v1::StorageClass,
        k8s_openapi::api::storage::v1::VolumeAttachment,
        k8s_openapi::api::discovery::v1::EndpointSlice,
        k8s_openapi::api::events::v1::Event,
        k8s_openapi::api::node::v1::RuntimeClass,
        k8s_openapi::api::certificates::v1::CertificateSigningRequest,
        k8s_openapi::api::admissionregistration::v1::MutatingWebhookConfiguration,
        k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration,
        k8s_openapi::api::admissionregistration::v1::ValidatingAdmissionPolicy,
        k8s_openapi::api::admissionregistration::v1::ValidatingAdmissionPolicyBinding,
        k8s_openapi::api::flowcontrol::v1::FlowSchema,
        k8s_openapi::api::flowcontrol::v1::PriorityLevelConfiguration,
        k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
        k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService,
    );
    // The other built-in kinds, and the types operations refer to.
    roots!(generator;
        k8s_openapi::apimachinery::pkg::apis::meta::v1::DeleteOptions,
        k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta,
        k8s_openapi::apimachinery::pkg::apis::meta::v1::Patch,
        k8s_openapi::apimachinery::pkg::apis::meta::v1::WatchEvent<Value>,
        k8s_openapi::api::admissionregistration::v1alpha1::MutatingAdmissionPolicy,
        k8s_openapi::api::admissionregistration::v1alpha1::MutatingAdmissionPolicyBinding,
        k8s_openapi::api::admissionregistration::v1beta1::ValidatingAdmissionPolicy,
        k8s_openapi::api::admissionregistration::v1beta1::ValidatingAdmissionPolicyBinding,
        k8s_openapi::api::apiserverinternal::v1alpha1::StorageVersion,
        k8s_openapi::api::authentication::v1::SelfSubjectReview,
        k8s_openapi::api::authentication::v1::TokenRequest,
        k8s_openapi::api::authentication::v1::TokenReview,
        k8s_openapi::api::authorization::v1::LocalSubjectAccessReview,
        k8s_openapi::api::authorization::v1::SelfSubjectAccessReview,
        k8s_openapi::api::authorization::v1::SelfSubjectRulesReview,
        k8s_openapi::api::authorization::v1::SubjectAccessReview,
        k8s_openapi::api::certificates::v1alpha1::ClusterTrustBundle,
        k8s_openapi::api::certificates::v1beta1::ClusterTrustBundle,
        k8s_openapi::api::coordination::v1alpha2::LeaseCandidate,
        k8s_openapi::api::coordination::v1beta1::LeaseCandidate,
        k8s_openapi::api::networking::v1beta1::IPAddress,
        k8s_openapi::api::networking::v1beta1::ServiceCIDR,
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
        k8s_openapi::api::storage::v1alpha1::VolumeAttributesClass,
        k8s_openapi::api::storage::v1beta1::VolumeAttributesClass,
        k8s_openapi::api::storagemigration::v1alpha1::StorageVersionMigration,
        k8s_openapi::apimachinery::pkg::apis::meta::v1::Status,
    );
    let builtin = Value::Object(generator.take_definitions(false));

    let mut generator = SchemaGenerator::new(SchemaSettings::draft2020_12());
    roots!(generator;
        k8s_openapi::apimachinery::pkg::apis::meta::v1::APIGroupList,
        k8s_openapi::apimachinery::pkg::apis::meta::v1::APIResourceList,
        k8s_openapi::apimachinery::pkg::apis::meta::v1::APIVersions,
    );
    let discovery = Value::Object(generator.take_definitions(false));

    write_json(out_dir, "builtin_definitions.json", &builtin);
    write_json(out_dir, "discovery_definitions.json", &discovery);
    write_json(
        out_dir,
        "strategic_merge_roots.json",
        &Value::from(strategic_merge_roots),
    );
}

/// Unchanged output is not rewritten, so it never looks new to cargo.
fn write_json(out_dir: &Path, name: &str, value: &Value) {
    let path = out_dir.join(name);
    let text = value.to_string();
    if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
        if let Err(error) = std::fs::write(&path, text) {
            panic!("cannot write {}: {error}", path.display());
        }
    }
}
