//! The built-in admission plugins, under upstream's names and in upstream's
//! order (kube-apiserver's AllOrderedPlugins): which are on by default, and
//! the `--enable-admission-plugins` / `--disable-admission-plugins` choice
//! among them. Each plugin Capstan implements lives in a file of its own;
//! the chain (`super`) runs the enabled ones' mutating step, then their
//! validating step, around the webhooks and policies.

mod always;
mod always_pull_images;
mod certificates;
mod configuration;
mod default_classes;
mod default_toleration_seconds;
mod limit_ranger;
mod node_restriction;
mod pod_references;
mod pod_security;
mod priority;
mod pvc_resize;
mod refusal;
mod resource_quota;
mod runtime_class;
mod service_account;
mod storage_protection;
mod taint_nodes;

use serde_json::Value;

use super::attributes::{Attributes, Operation, Step};
use crate::error::ApiResult;
use crate::verbs::ApiCore;

pub use resource_quota::quota_matches;
pub use service_account::TOKEN_MOUNT_PATH;
pub use storage_protection::{PVC_PROTECTION, PV_PROTECTION};

/// A plugin Capstan implements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plugin {
    AlwaysAdmit,
    NamespaceLifecycle,
    LimitRanger,
    ServiceAccount,
    NodeRestriction,
    TaintNodesByCondition,
    AlwaysPullImages,
    PodSecurity,
    Priority,
    DefaultTolerationSeconds,
    DefaultStorageClass,
    StorageObjectInUseProtection,
    PersistentVolumeClaimResize,
    RuntimeClass,
    CertificateApproval,
    CertificateSigning,
    CertificateSubjectRestriction,
    DefaultIngressClass,
    MutatingAdmissionWebhook,
    ValidatingAdmissionPolicy,
    ValidatingAdmissionWebhook,
    ResourceQuota,
    AlwaysDeny,
}

/// Every plugin upstream registers, in its order: whether it is on by
/// default, and what implements it here (None: not implemented yet).
const ORDERED: &[(&str, bool, Option<Plugin>)] = &[
    ("AlwaysAdmit", false, Some(Plugin::AlwaysAdmit)),
    ("NamespaceAutoProvision", false, None),
    ("NamespaceLifecycle", true, Some(Plugin::NamespaceLifecycle)),
    ("NamespaceExists", false, None),
    ("LimitPodHardAntiAffinityTopology", false, None),
    ("LimitRanger", true, Some(Plugin::LimitRanger)),
    ("ServiceAccount", true, Some(Plugin::ServiceAccount)),
    ("NodeRestriction", false, Some(Plugin::NodeRestriction)),
    (
        "TaintNodesByCondition",
        true,
        Some(Plugin::TaintNodesByCondition),
    ),
    ("AlwaysPullImages", false, Some(Plugin::AlwaysPullImages)),
    ("ImagePolicyWebhook", false, None),
    ("PodSecurity", true, Some(Plugin::PodSecurity)),
    ("PodNodeSelector", false, None),
    ("Priority", true, Some(Plugin::Priority)),
    (
        "DefaultTolerationSeconds",
        true,
        Some(Plugin::DefaultTolerationSeconds),
    ),
    ("PodTolerationRestriction", false, None),
    ("EventRateLimit", false, None),
    ("ExtendedResourceToleration", false, None),
    (
        "DefaultStorageClass",
        true,
        Some(Plugin::DefaultStorageClass),
    ),
    (
        "StorageObjectInUseProtection",
        true,
        Some(Plugin::StorageObjectInUseProtection),
    ),
    ("OwnerReferencesPermissionEnforcement", false, None),
    (
        "PersistentVolumeClaimResize",
        true,
        Some(Plugin::PersistentVolumeClaimResize),
    ),
    ("RuntimeClass", true, Some(Plugin::RuntimeClass)),
    (
        "CertificateApproval",
        true,
        Some(Plugin::CertificateApproval),
    ),
    ("CertificateSigning", true, Some(Plugin::CertificateSigning)),
    ("ClusterTrustBundleAttest", true, None),
    (
        "CertificateSubjectRestriction",
        true,
        Some(Plugin::CertificateSubjectRestriction),
    ),
    (
        "DefaultIngressClass",
        true,
        Some(Plugin::DefaultIngressClass),
    ),
    ("DenyServiceExternalIPs", false, None),
    ("MutatingAdmissionPolicy", true, None),
    (
        "MutatingAdmissionWebhook",
        true,
        Some(Plugin::MutatingAdmissionWebhook),
    ),
    (
        "ValidatingAdmissionPolicy",
        true,
        Some(Plugin::ValidatingAdmissionPolicy),
    ),
    (
        "ValidatingAdmissionWebhook",
        true,
        Some(Plugin::ValidatingAdmissionWebhook),
    ),
    ("ResourceQuota", true, Some(Plugin::ResourceQuota)),
    ("AlwaysDeny", false, Some(Plugin::AlwaysDeny)),
];

/// The enabled plugins, in upstream's order.
#[derive(Clone, Debug)]
pub struct Plugins {
    enabled: Vec<Plugin>,
    /// What `--admission-control-config-file` configures.
    configurations: std::sync::Arc<configuration::Configurations>,
}

impl Default for Plugins {
    fn default() -> Self {
        Plugins::choose(&[], &[]).unwrap_or(Plugins {
            enabled: Vec::new(),
            configurations: Default::default(),
        })
    }
}

impl Plugins {
    /// The default plugins, plus `enable`, less `disable`, as
    /// kube-apiserver's flags choose them; errors in upstream's words,
    /// and for a plugin Capstan does not implement yet.
    pub fn choose(enable: &[String], disable: &[String]) -> Result<Self, Vec<String>> {
        let mut errors = Vec::new();
        let known = |name: &str| ORDERED.iter().any(|(n, _, _)| *n == name);
        for (flag, names) in [
            ("enable-admission-plugins", enable),
            ("disable-admission-plugins", disable),
        ] {
            for name in names.iter().filter(|n| !known(n)) {
                errors.push(format!("{flag} plugin {name:?} is unknown"));
            }
        }
        let mut overlap: Vec<&String> = enable.iter().filter(|n| disable.contains(n)).collect();
        overlap.sort();
        if !overlap.is_empty() {
            let names: Vec<&str> = overlap.iter().map(|n| n.as_str()).collect();
            errors.push(format!(
                "[{}] in enable-admission-plugins and disable-admission-plugins overlapped",
                names.join(" ")
            ));
        }
        for (name, _, implemented) in ORDERED {
            if implemented.is_none() && enable.iter().any(|n| n == name) {
                errors.push(format!(
                    "enable-admission-plugins plugin {name:?} is not implemented by capstan yet"
                ));
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        let enabled = ORDERED
            .iter()
            .filter(|(name, on, _)| {
                (*on || enable.iter().any(|n| n == name)) && !disable.iter().any(|n| n == name)
            })
            .filter_map(|(_, _, plugin)| *plugin)
            .collect();
        Ok(Plugins {
            enabled,
            configurations: Default::default(),
        })
    }

    /// The plugins configured by an admission configuration file
    /// (`--admission-control-config-file`).
    pub fn configured(mut self, file: &std::path::Path) -> Result<Self, Vec<String>> {
        self.configurations = std::sync::Arc::new(configuration::read(file)?);
        Ok(self)
    }

    /// PodSecurity's defaults and exemptions.
    pub(super) fn pod_security(&self) -> &pod_security::PodSecurityConfiguration {
        &self.configurations.pod_security
    }

    /// Upstream's name of a plugin.
    pub fn name(plugin: Plugin) -> &'static str {
        ORDERED
            .iter()
            .find(|(_, _, p)| *p == Some(plugin))
            .map_or("", |(name, _, _)| *name)
    }

    pub fn has(&self, plugin: Plugin) -> bool {
        self.enabled.contains(&plugin)
    }

    /// Whether an enabled plugin may refuse a delete (the others leave
    /// deletes alone, which then need no admission at all).
    pub fn judges_deletes(&self) -> bool {
        self.has(Plugin::NodeRestriction) || self.has(Plugin::AlwaysDeny)
    }

    /// Upstream's names of the enabled plugins, in order.
    pub fn names(&self) -> Vec<&'static str> {
        ORDERED
            .iter()
            .filter(|(_, _, p)| p.is_some_and(|p| self.has(p)))
            .map(|(name, _, _)| *name)
            .collect()
    }
}

impl ApiCore {
    /// The enabled built-in plugins' mutating steps, in order (the
    /// webhooks and policies are the chain's own steps).
    pub(super) async fn admit_with_plugins(
        &self,
        attributes: &Attributes<'_>,
        mut object: Option<&mut Value>,
    ) -> ApiResult<()> {
        for plugin in &self.admission_plugins.enabled {
            let started = std::time::Instant::now();
            let Some(result) = self
                .admit_with(*plugin, attributes, object.as_deref_mut())
                .await
            else {
                continue;
            };
            observe(*plugin, Step::Admit, attributes, result.is_err(), started);
            result.map_err(|e| e.denied_by(Plugins::name(*plugin)))?;
        }
        Ok(())
    }

    /// The plugin's mutating step; None when it has none.
    async fn admit_with(
        &self,
        plugin: Plugin,
        attributes: &Attributes<'_>,
        object: Option<&mut Value>,
    ) -> Option<ApiResult<()>> {
        Some(match plugin {
            Plugin::NamespaceLifecycle => self.namespace_lifecycle(attributes).await,
            Plugin::LimitRanger => self.admit_limit_ranger(attributes, object).await,
            Plugin::ServiceAccount => self.admit_service_account(attributes, object).await,
            Plugin::Priority => self.admit_priority(attributes, object).await,
            Plugin::DefaultTolerationSeconds => {
                default_toleration_seconds::admit(attributes, object);
                Ok(())
            }
            Plugin::DefaultStorageClass => self.default_storage_class(attributes, object).await,
            Plugin::DefaultIngressClass => self.default_ingress_class(attributes, object).await,
            Plugin::TaintNodesByCondition => {
                taint_nodes::admit(attributes, object);
                Ok(())
            }
            Plugin::AlwaysPullImages => {
                always_pull_images::admit(attributes, object);
                Ok(())
            }
            Plugin::StorageObjectInUseProtection => {
                storage_protection::admit(attributes, object);
                Ok(())
            }
            Plugin::RuntimeClass => self.admit_runtime_class(attributes, object).await,
            Plugin::NodeRestriction => {
                self.admit_node_restriction(attributes, object.as_deref())
                    .await
            }
            Plugin::PersistentVolumeClaimResize
            | Plugin::CertificateApproval
            | Plugin::CertificateSigning
            | Plugin::CertificateSubjectRestriction
            | Plugin::AlwaysAdmit
            | Plugin::AlwaysDeny
            | Plugin::PodSecurity
            | Plugin::ResourceQuota
            | Plugin::MutatingAdmissionWebhook
            | Plugin::ValidatingAdmissionPolicy
            | Plugin::ValidatingAdmissionWebhook => return None,
        })
    }

    /// The enabled built-in plugins' validating steps, in order (but
    /// ResourceQuota, which comes after the webhooks); their warnings.
    pub(super) async fn validate_with_plugins(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
    ) -> ApiResult<Vec<String>> {
        let mut warnings = Vec::new();
        for plugin in &self.admission_plugins.enabled {
            let started = std::time::Instant::now();
            let Some(result) = self.validate_with(*plugin, attributes, object).await else {
                continue;
            };
            observe(
                *plugin,
                Step::Validate,
                attributes,
                result.is_err(),
                started,
            );
            warnings.extend(result.map_err(|e| e.denied_by(Plugins::name(*plugin)))?);
        }
        Ok(warnings)
    }

    /// The plugin's validating step; None when it has none here
    /// (ResourceQuota's comes after the webhooks).
    async fn validate_with(
        &self,
        plugin: Plugin,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
    ) -> Option<ApiResult<Vec<String>>> {
        let none = |result: ApiResult<()>| result.map(|()| Vec::new());
        Some(match plugin {
            Plugin::LimitRanger => none(self.validate_limit_ranger(attributes, object).await),
            Plugin::ServiceAccount => none(self.validate_service_account(attributes, object).await),
            Plugin::PodSecurity => self.validate_pod_security(attributes, object).await,
            Plugin::Priority => none(self.validate_priority(attributes, object).await),
            Plugin::AlwaysDeny => none(always::deny(attributes, object)),
            Plugin::AlwaysPullImages => none(always_pull_images::validate(attributes, object)),
            Plugin::PersistentVolumeClaimResize => {
                none(self.validate_pvc_resize(attributes, object).await)
            }
            Plugin::RuntimeClass => none(self.validate_runtime_class(attributes, object).await),
            Plugin::CertificateApproval => {
                none(self.validate_certificate_approval(attributes, object).await)
            }
            Plugin::CertificateSigning => {
                none(self.validate_certificate_signing(attributes, object).await)
            }
            Plugin::CertificateSubjectRestriction => {
                none(certificates::validate_subject(attributes, object))
            }
            Plugin::AlwaysAdmit
            | Plugin::NamespaceLifecycle
            | Plugin::NodeRestriction
            | Plugin::TaintNodesByCondition
            | Plugin::DefaultTolerationSeconds
            | Plugin::DefaultStorageClass
            | Plugin::StorageObjectInUseProtection
            | Plugin::DefaultIngressClass
            | Plugin::MutatingAdmissionWebhook
            | Plugin::ValidatingAdmissionPolicy
            | Plugin::ValidatingAdmissionWebhook
            | Plugin::ResourceQuota => return None,
        })
    }

    /// ResourceQuota, the chain's last step, when enabled.
    pub(super) async fn charge_quota_if_enabled(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
    ) -> ApiResult<()> {
        if self.admission_plugins.has(Plugin::ResourceQuota) {
            let started = std::time::Instant::now();
            let result = self.charge_quota(attributes, object).await;
            observe(
                Plugin::ResourceQuota,
                Step::Validate,
                attributes,
                result.is_err(),
                started,
            );
            result.map_err(|e| e.denied_by(Plugins::name(Plugin::ResourceQuota)))?;
        }
        Ok(())
    }

    /// NamespaceLifecycle: nothing is created in a namespace that is
    /// missing or terminating, before any webhook sees the request.
    async fn namespace_lifecycle(&self, attributes: &Attributes<'_>) -> ApiResult<()> {
        if attributes.operation != Operation::Create {
            return Ok(());
        }
        self.ensure_namespace_accepts(attributes.def, attributes.namespace, attributes.name)
            .await
    }
}

/// Counts a plugin's step under upstream's per-controller metric.
pub(super) fn observe(
    plugin: Plugin,
    step: Step,
    attributes: &Attributes<'_>,
    rejected: bool,
    started: std::time::Instant,
) {
    observe_controller(
        plugin,
        step,
        attributes.operation,
        rejected,
        started.elapsed(),
    );
}

fn observe_controller(
    plugin: Plugin,
    step: Step,
    operation: Operation,
    rejected: bool,
    elapsed: std::time::Duration,
) {
    let find = || {
        crate::metrics::admission_controller_histogram(
            Plugins::name(plugin),
            step.as_str(),
            operation.as_str(),
            rejected,
        )
    };
    let seconds = elapsed.as_secs_f64();
    match CONTROLLER_HISTOGRAMS.get(histogram_slot(plugin, step, operation, rejected)) {
        Some(kept) => kept.get_or_init(find).observe(seconds),
        // A plugin declared after the last one the slots count.
        None => find().observe(seconds),
    }
}

fn histogram_slot(plugin: Plugin, step: Step, operation: Operation, rejected: bool) -> usize {
    ((plugin as usize * 2 + step as usize) * OPERATIONS + operation as usize) * 2
        + usize::from(rejected)
}

const OPERATIONS: usize = Operation::Delete as usize + 1;
const HISTOGRAM_SLOTS: usize = (Plugin::AlwaysDeny as usize + 1) * 2 * OPERATIONS * 2;

/// Each plugin step's histogram per operation and outcome, found once and
/// kept (made on first use, so /metrics shows only what was observed, as
/// upstream's does).
static CONTROLLER_HISTOGRAMS: [std::sync::OnceLock<prometheus::Histogram>; HISTOGRAM_SLOTS] =
    [const { std::sync::OnceLock::new() }; HISTOGRAM_SLOTS];

#[cfg(test)]
mod tests {
    use super::*;

    /// Each plugin step, operation and outcome keeps a histogram of its
    /// own, labelled as upstream's metric labels it.
    #[test]
    fn each_plugin_step_is_counted_under_its_own_labels() {
        let mut slots = std::collections::HashSet::new();
        for plugin in ORDERED.iter().filter_map(|(_, _, p)| *p) {
            for step in [Step::Admit, Step::Validate] {
                for operation in [Operation::Create, Operation::Update, Operation::Delete] {
                    for rejected in [false, true] {
                        let slot = histogram_slot(plugin, step, operation, rejected);
                        assert!(slot < HISTOGRAM_SLOTS, "{plugin:?} has no slot");
                        assert!(slots.insert(slot), "{plugin:?} shares a slot");
                    }
                }
            }
        }
        let labelled = || {
            crate::metrics::admission_controller_histogram(
                "PersistentVolumeClaimResize",
                "validate",
                "UPDATE",
                true,
            )
        };
        let before = labelled().get_sample_count();
        for _ in 0..2 {
            observe_controller(
                Plugin::PersistentVolumeClaimResize,
                Step::Validate,
                Operation::Update,
                true,
                std::time::Duration::from_millis(1),
            );
        }
        assert_eq!(labelled().get_sample_count(), before + 2);
    }

    fn strings(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn defaults_are_upstreams_in_its_order() {
        assert_eq!(
            Plugins::default().names(),
            [
                "NamespaceLifecycle",
                "LimitRanger",
                "ServiceAccount",
                "TaintNodesByCondition",
                "PodSecurity",
                "Priority",
                "DefaultTolerationSeconds",
                "DefaultStorageClass",
                "StorageObjectInUseProtection",
                "PersistentVolumeClaimResize",
                "RuntimeClass",
                "CertificateApproval",
                "CertificateSigning",
                "CertificateSubjectRestriction",
                "DefaultIngressClass",
                "MutatingAdmissionWebhook",
                "ValidatingAdmissionPolicy",
                "ValidatingAdmissionWebhook",
                "ResourceQuota",
            ]
        );
        let chosen = Plugins::choose(&strings(&["AlwaysDeny"]), &strings(&["Priority"]))
            .expect("valid flags");
        assert!(chosen.has(Plugin::AlwaysDeny) && !chosen.has(Plugin::Priority));
    }

    #[test]
    fn flag_errors_are_worded_as_upstream() {
        let errors = Plugins::choose(
            &strings(&["Nope", "Priority", "ClusterTrustBundleAttest"]),
            &strings(&["Priority", "Nada"]),
        )
        .expect_err("invalid flags");
        assert_eq!(
            errors,
            [
                r#"enable-admission-plugins plugin "Nope" is unknown"#,
                r#"disable-admission-plugins plugin "Nada" is unknown"#,
                "[Priority] in enable-admission-plugins and disable-admission-plugins overlapped",
                r#"enable-admission-plugins plugin "ClusterTrustBundleAttest" is not implemented by capstan yet"#,
            ]
        );
    }
}
