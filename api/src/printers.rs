//! Server-side Table printing: the columns and cells `kubectl get` shows.
//!
//! kubectl asks for `application/json;as=Table;v=v1;g=meta.k8s.io` and prints
//! whatever columns the server returns, so these tables are what users see.
//! They follow kube-apiserver's printers (k8s.io/kubernetes
//! pkg/printers/internalversion) column for column. The server always renders
//! the wide variant (kubectl hides priority-1 columns itself unless `-o wide`),
//! so every row carries a cell for every column.
//!
//! Objects arrive as versioned Kubernetes JSON and may be partial. Upstream
//! prints internal objects that have been defaulted, so where a field has an
//! API default (replicas 1, protocol TCP, Service type ClusterIP, ...) a
//! missing value prints as that default; anything else missing prints as
//! upstream's zero value ("", 0, "<none>", "<unknown>").

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, SecondsFormat, TimeDelta, Utc};
use serde_json::{json, Value};

/// One column of a metav1.Table.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TableColumn {
    pub name: &'static str,
    #[serde(rename = "type")]
    pub type_: &'static str,
    pub format: &'static str,
    pub description: &'static str,
    pub priority: i32,
}

/// Upstream's printers for the built-in kinds; a kind names its own
/// ([`crate::kinds::Kind::printer`]). Kinds without one get upstream's
/// default table convertor (Name, Created At).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Printer {
    Pod,
    PodTemplate,
    ReplicationController,
    Service,
    Endpoints,
    Node,
    Event { events_api: bool },
    Namespace,
    Secret,
    ServiceAccount,
    ConfigMap,
    PersistentVolume,
    PersistentVolumeClaim,
    ResourceQuota,
    ComponentStatus,
    Deployment,
    ReplicaSet,
    StatefulSet,
    DaemonSet,
    ControllerRevision,
    Job,
    CronJob,
    HorizontalPodAutoscaler,
    Ingress,
    IngressClass,
    NetworkPolicy,
    RoleBinding { cluster: bool },
    PodDisruptionBudget,
    StorageClass,
    CsiDriver,
    CsiNode,
    VolumeAttachment,
    Lease,
    PriorityClass,
    RuntimeClass,
    EndpointSlice,
    WebhookConfiguration,
    CertificateSigningRequest,
    Default,
}

fn col(name: &'static str, type_: &'static str, description: &'static str) -> TableColumn {
    TableColumn {
        name,
        type_,
        format: "",
        description,
        priority: 0,
    }
}

fn wide(name: &'static str, type_: &'static str, description: &'static str) -> TableColumn {
    TableColumn {
        priority: 1,
        ..col(name, type_, description)
    }
}

fn name_col() -> TableColumn {
    TableColumn {
        format: "name",
        ..col("Name", "string", D_NAME)
    }
}

fn age_col() -> TableColumn {
    col("Age", "string", D_CREATED)
}

const D_CONTAINERS: &str = "Names of each container in the template.";
const D_IMAGES: &str = "Images referenced by each container in the template.";

fn containers_images_cols() -> [TableColumn; 2] {
    [
        wide("Containers", "string", D_CONTAINERS),
        wide("Images", "string", D_IMAGES),
    ]
}

/// The columns `printer` prints.
pub fn table_columns(printer: Printer) -> Vec<TableColumn> {
    use Printer::*;
    match printer {
        Pod => vec![
            name_col(),
            col(
                "Ready",
                "string",
                "The aggregate readiness state of this pod for accepting traffic.",
            ),
            col(
                "Status",
                "string",
                "The aggregate status of the containers in this pod.",
            ),
            col(
                "Restarts",
                "string",
                "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.",
            ),
            age_col(),
            wide("IP", "string", D_POD_IP),
            wide("Node", "string", D_POD_NODE),
            wide("Nominated Node", "string", D_POD_NOMINATED),
            wide("Readiness Gates", "string", D_POD_READINESS_GATES),
        ],
        PodTemplate => vec![
            name_col(),
            col("Containers", "string", D_CONTAINERS),
            col("Images", "string", D_IMAGES),
            col("Pod Labels", "string", "The labels for the pod template."),
        ],
        ReplicationController => {
            let mut c = vec![
                name_col(),
                col("Desired", "integer", D_RC_SPEC_REPLICAS),
                col("Current", "integer", D_RC_STATUS_REPLICAS),
                col("Ready", "integer", D_RC_STATUS_READY),
                age_col(),
            ];
            c.extend(containers_images_cols());
            c.push(wide("Selector", "string", D_RC_SPEC_SELECTOR));
            c
        }
        Service => vec![
            name_col(),
            col("Type", "string", D_SVC_TYPE),
            col("Cluster-IP", "string", D_SVC_CLUSTER_IP),
            col("External-IP", "string", D_SVC_EXTERNAL_IPS),
            col("Port(s)", "string", D_SVC_PORTS),
            age_col(),
            wide("Selector", "string", D_SVC_SELECTOR),
        ],
        Endpoints => vec![
            name_col(),
            col("Endpoints", "string", D_EP_SUBSETS),
            age_col(),
        ],
        Node => vec![
            name_col(),
            col("Status", "string", "The status of the node"),
            col("Roles", "string", "The roles of the node"),
            age_col(),
            col("Version", "string", D_NODE_KUBELET),
            wide("Internal-IP", "string", D_NODE_ADDRESSES),
            wide("External-IP", "string", D_NODE_ADDRESSES),
            wide("OS-Image", "string", D_NODE_OS_IMAGE),
            wide("Kernel-Version", "string", D_NODE_KERNEL),
            wide("Container-Runtime", "string", D_NODE_RUNTIME),
        ],
        Event { .. } => vec![
            col("Last Seen", "string", D_EV_LAST),
            col("Type", "string", D_EV_TYPE),
            col("Reason", "string", D_EV_REASON),
            col("Object", "string", D_EV_OBJECT),
            wide("Subobject", "string", D_OBJREF_FIELD_PATH),
            wide("Source", "string", D_EV_SOURCE),
            col("Message", "string", D_EV_MESSAGE),
            wide("First Seen", "string", D_EV_FIRST),
            wide("Count", "string", D_EV_COUNT),
            TableColumn {
                priority: 1,
                ..name_col()
            },
        ],
        Namespace => vec![
            name_col(),
            col("Status", "string", "The status of the namespace"),
            age_col(),
        ],
        Secret => vec![
            name_col(),
            col("Type", "string", D_SECRET_TYPE),
            col("Data", "string", D_SECRET_DATA),
            age_col(),
        ],
        ServiceAccount => vec![
            name_col(),
            col("Secrets", "string", D_SA_SECRETS),
            age_col(),
        ],
        ConfigMap => vec![name_col(), col("Data", "string", D_CM_DATA), age_col()],
        PersistentVolume => vec![
            name_col(),
            col("Capacity", "string", D_PV_CAPACITY),
            col("Access Modes", "string", D_PV_ACCESS),
            col("Reclaim Policy", "string", D_PV_RECLAIM),
            col("Status", "string", D_PV_PHASE),
            col("Claim", "string", D_PV_CLAIM),
            col("StorageClass", "string", "StorageClass of the pv"),
            col(
                "VolumeAttributesClass",
                "string",
                "VolumeAttributesClass of the pv",
            ),
            col("Reason", "string", D_PV_REASON),
            age_col(),
            wide("VolumeMode", "string", D_PV_VOLUME_MODE),
        ],
        PersistentVolumeClaim => vec![
            name_col(),
            col("Status", "string", D_PVC_PHASE),
            col("Volume", "string", D_PVC_VOLUME),
            col("Capacity", "string", D_PVC_CAPACITY),
            col("Access Modes", "string", D_PVC_ACCESS),
            col("StorageClass", "string", "StorageClass of the pvc"),
            col(
                "VolumeAttributesClass",
                "string",
                "VolumeAttributesClass of the pvc",
            ),
            age_col(),
            wide("VolumeMode", "string", D_PVC_VOLUME_MODE),
        ],
        ResourceQuota => vec![
            name_col(),
            col(
                "Request",
                "string",
                "Request represents a minimum amount of cpu/memory that a container may consume.",
            ),
            col(
                "Limit",
                "string",
                "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.",
            ),
            age_col(),
        ],
        ComponentStatus => vec![
            name_col(),
            col("Status", "string", "Status of the component conditions"),
            col("Message", "string", "Message of the component conditions"),
            col("Error", "string", "Error of the component conditions"),
        ],
        Deployment => {
            let mut c = vec![
                name_col(),
                col("Ready", "string", "Number of the pod with ready state"),
                col("Up-to-date", "string", D_DEPLOY_UPDATED),
                col("Available", "string", D_DEPLOY_AVAILABLE),
                age_col(),
            ];
            c.extend(containers_images_cols());
            c.push(wide("Selector", "string", D_DEPLOY_SELECTOR));
            c
        }
        ReplicaSet => {
            let mut c = vec![
                name_col(),
                col("Desired", "integer", D_RS_SPEC_REPLICAS),
                col("Current", "integer", D_RS_STATUS_REPLICAS),
                col("Ready", "integer", D_RS_STATUS_READY),
                age_col(),
            ];
            c.extend(containers_images_cols());
            c.push(wide("Selector", "string", D_RS_SPEC_SELECTOR));
            c
        }
        StatefulSet => {
            let mut c = vec![
                name_col(),
                col("Ready", "string", "Number of the pod with ready state"),
                age_col(),
            ];
            c.extend(containers_images_cols());
            c
        }
        DaemonSet => {
            let mut c = vec![
                name_col(),
                col("Desired", "integer", D_DS_DESIRED),
                col("Current", "integer", D_DS_CURRENT),
                col("Ready", "integer", D_DS_READY),
                col("Up-to-date", "integer", D_DS_UPDATED),
                col("Available", "integer", D_DS_AVAILABLE),
                col("Node Selector", "string", D_POD_NODE_SELECTOR),
                age_col(),
            ];
            c.extend(containers_images_cols());
            c.push(wide("Selector", "string", D_DS_SELECTOR));
            c
        }
        ControllerRevision => vec![
            name_col(),
            col("Controller", "string", "Controller of the object"),
            col("Revision", "string", D_CR_REVISION),
            age_col(),
        ],
        Job => {
            let mut c = vec![
                name_col(),
                col("Status", "string", "Status of the job."),
                col("Completions", "string", D_JOB_SUCCEEDED),
                col("Duration", "string", "Time required to complete the job."),
                age_col(),
            ];
            c.extend(containers_images_cols());
            c.push(wide("Selector", "string", D_JOB_SELECTOR));
            c
        }
        CronJob => {
            let mut c = vec![
                name_col(),
                col("Schedule", "string", D_CJ_SCHEDULE),
                col("Timezone", "string", D_CJ_TIMEZONE),
                col("Suspend", "boolean", D_CJ_SUSPEND),
                col("Active", "integer", D_CJ_ACTIVE),
                col("Last Schedule", "string", D_CJ_LAST_SCHEDULE),
                age_col(),
            ];
            c.extend(containers_images_cols());
            c.push(wide("Selector", "string", D_JOB_SELECTOR));
            c
        }
        HorizontalPodAutoscaler => vec![
            name_col(),
            col("Reference", "string", D_HPA_REF),
            col("Targets", "string", D_HPA_METRICS),
            col("MinPods", "string", D_HPA_MIN),
            col("MaxPods", "string", D_HPA_MAX),
            col("Replicas", "string", D_HPA_CURRENT),
            age_col(),
        ],
        Ingress => vec![
            name_col(),
            col(
                "Class",
                "string",
                "The name of the IngressClass resource that should be used for additional configuration",
            ),
            col(
                "Hosts",
                "string",
                "Hosts that incoming requests are matched against before the ingress rule",
            ),
            col(
                "Address",
                "string",
                "Address is a list containing ingress points for the load-balancer",
            ),
            col("Ports", "string", "Ports of TLS configurations that open"),
            age_col(),
        ],
        IngressClass => vec![
            name_col(),
            col(
                "Controller",
                "string",
                "Controller that is responsible for handling this class",
            ),
            col(
                "Parameters",
                "string",
                "A reference to a resource with additional parameters",
            ),
            age_col(),
        ],
        NetworkPolicy => vec![
            name_col(),
            col("Pod-Selector", "string", D_NETPOL_POD_SELECTOR),
            age_col(),
        ],
        RoleBinding { cluster } => {
            let (role_ref, users, groups, sas) = if cluster {
                (
                    D_CRB_ROLE_REF,
                    "Users in the clusterRoleBinding",
                    "Groups in the clusterRoleBinding",
                    "ServiceAccounts in the clusterRoleBinding",
                )
            } else {
                (
                    D_RB_ROLE_REF,
                    "Users in the roleBinding",
                    "Groups in the roleBinding",
                    "ServiceAccounts in the roleBinding",
                )
            };
            vec![
                name_col(),
                col("Role", "string", role_ref),
                age_col(),
                wide("Users", "string", users),
                wide("Groups", "string", groups),
                wide("ServiceAccounts", "string", sas),
            ]
        }
        PodDisruptionBudget => vec![
            name_col(),
            col(
                "Min Available",
                "string",
                "The minimum number of pods that must be available.",
            ),
            col(
                "Max Unavailable",
                "string",
                "The maximum number of pods that may be unavailable.",
            ),
            col(
                "Allowed Disruptions",
                "integer",
                "Calculated number of pods that may be disrupted at this time.",
            ),
            age_col(),
        ],
        StorageClass => vec![
            name_col(),
            col("Provisioner", "string", D_SC_PROVISIONER),
            col("ReclaimPolicy", "string", D_SC_RECLAIM),
            col("VolumeBindingMode", "string", D_SC_BINDING_MODE),
            col("AllowVolumeExpansion", "string", D_SC_EXPANSION),
            age_col(),
        ],
        CsiDriver => vec![
            name_col(),
            col("AttachRequired", "boolean", D_CSID_ATTACH),
            col("PodInfoOnMount", "boolean", D_CSID_POD_INFO),
            col("StorageCapacity", "boolean", D_CSID_CAPACITY),
            col("TokenRequests", "string", D_CSID_TOKEN),
            col("RequiresRepublish", "boolean", D_CSID_REPUBLISH),
            col("Modes", "string", D_CSID_MODES),
            age_col(),
        ],
        CsiNode => vec![
            name_col(),
            col(
                "Drivers",
                "integer",
                "Drivers indicates the number of CSI drivers registered on the node",
            ),
            age_col(),
        ],
        VolumeAttachment => vec![
            name_col(),
            // Upstream marks this column as a name column too; kept for parity.
            TableColumn {
                format: "name",
                ..col("Attacher", "string", D_VA_ATTACHER)
            },
            col("PV", "string", D_VA_PV),
            col("Node", "string", D_VA_NODE),
            col("Attached", "boolean", D_VA_ATTACHED),
            age_col(),
        ],
        Lease => vec![
            name_col(),
            col("Holder", "string", D_LEASE_HOLDER),
            age_col(),
        ],
        PriorityClass => vec![
            name_col(),
            col("Value", "integer", D_PC_VALUE),
            col("Global-Default", "boolean", D_PC_GLOBAL_DEFAULT),
            age_col(),
            col("PreemptionPolicy", "string", D_PC_PREEMPTION),
        ],
        // Upstream looks the description up under a key ObjectMeta does not
        // have, so it is empty there too.
        RuntimeClass => vec![name_col(), col("Handler", "string", ""), age_col()],
        EndpointSlice => vec![
            name_col(),
            col("AddressType", "string", D_EPS_ADDRESS_TYPE),
            col("Ports", "string", D_EPS_PORTS),
            col("Endpoints", "string", D_EPS_ENDPOINTS),
            age_col(),
        ],
        WebhookConfiguration => vec![
            name_col(),
            col(
                "Webhooks",
                "integer",
                "Webhooks indicates the number of webhooks registered in this configuration",
            ),
            age_col(),
        ],
        CertificateSigningRequest => vec![
            name_col(),
            age_col(),
            col("SignerName", "string", D_CSR_SIGNER),
            col("Requestor", "string", D_CSR_REQUEST),
            col("RequestedDuration", "string", D_CSR_EXPIRATION),
            col("Condition", "string", D_CSR_CONDITIONS),
        ],
        Default => vec![name_col(), col("Created At", "date", D_CREATED)],
    }
}

/// One row's cells (same length as the columns), for one object (Kubernetes JSON).
/// `now` is passed in so AGE is testable.
pub fn table_cells(printer: Printer, object: &Value, now: DateTime<Utc>) -> Vec<Value> {
    use Printer::*;
    let o = object;
    match printer {
        Pod => pod_cells(o, now),
        PodTemplate => pod_template_cells(o),
        ReplicationController => replication_controller_cells(o, now),
        Service => service_cells(o, now),
        Endpoints => vec![name(o).into(), format_endpoints(o).into(), age(o, now)],
        Node => node_cells(o, now),
        Event { events_api } => event_cells(o, events_api, now),
        Namespace => vec![
            name(o).into(),
            str_or(o, "/status/phase", "Active").into(),
            age(o, now),
        ],
        Secret => secret_cells(o, now),
        ServiceAccount => vec![name(o).into(), len_of(o, "/secrets").into(), age(o, now)],
        ConfigMap => vec![
            name(o).into(),
            (len_of(o, "/data") + len_of(o, "/binaryData")).into(),
            age(o, now),
        ],
        PersistentVolume => persistent_volume_cells(o, now),
        PersistentVolumeClaim => persistent_volume_claim_cells(o, now),
        ResourceQuota => resource_quota_cells(o, now),
        ComponentStatus => component_status_cells(o),
        Deployment => deployment_cells(o, now),
        ReplicaSet => replica_set_cells(o, now),
        StatefulSet => statefulset_cells(o, now),
        DaemonSet => daemonset_cells(o, now),
        ControllerRevision => controller_revision_cells(o, now),
        Job => job_cells(o, now),
        CronJob => cronjob_cells(o, now),
        HorizontalPodAutoscaler => hpa_cells(o, now),
        Ingress => ingress_cells(o, now),
        IngressClass => ingress_class_cells(o, now),
        NetworkPolicy => vec![
            name(o).into(),
            format_label_selector(get(o, "/spec/podSelector")).into(),
            age(o, now),
        ],
        RoleBinding { .. } => role_binding_cells(o, now),
        PodDisruptionBudget => pdb_cells(o, now),
        StorageClass => storage_class_cells(o, now),
        CsiDriver => csi_driver_cells(o, now),
        CsiNode => vec![
            name(o).into(),
            len_of(o, "/spec/drivers").into(),
            age(o, now),
        ],
        VolumeAttachment => vec![
            name(o).into(),
            text(o, "/spec/attacher").into(),
            text(o, "/spec/source/persistentVolumeName").into(),
            text(o, "/spec/nodeName").into(),
            boolean(o, "/status/attached").unwrap_or(false).into(),
            age(o, now),
        ],
        Lease => vec![
            name(o).into(),
            text(o, "/spec/holderIdentity").into(),
            age(o, now),
        ],
        PriorityClass => vec![
            name(o).into(),
            int(o, "/value").into(),
            boolean(o, "/globalDefault").unwrap_or(false).into(),
            age(o, now),
            str_or(o, "/preemptionPolicy", "PreemptLowerPriority").into(),
        ],
        RuntimeClass => vec![name(o).into(), text(o, "/handler").into(), age(o, now)],
        EndpointSlice => endpoint_slice_cells(o, now),
        WebhookConfiguration => vec![name(o).into(), len_of(o, "/webhooks").into(), age(o, now)],
        CertificateSigningRequest => csr_cells(o, now),
        Default => {
            // Upstream formats Go's zero time when the timestamp is missing.
            let created = timestamp(o, "/metadata/creationTimestamp")
                .map(|t| t.to_rfc3339_opts(SecondsFormat::Secs, true))
                .unwrap_or_else(|| "0001-01-01T00:00:00Z".to_string());
            vec![name(o).into(), created.into()]
        }
    }
}

/// Formats a duration the way k8s.io/apimachinery's `duration.HumanDuration`
/// does: about two significant figures, so ages stay short in a table.
pub fn human_duration(d: TimeDelta) -> String {
    // Clock skew of under two seconds reads as "now" rather than an error.
    let seconds = d.num_seconds();
    if seconds < -1 {
        return "<invalid>".to_string();
    }
    if seconds < 0 {
        return "0s".to_string();
    }
    if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        if s == 0 {
            return format!("{minutes}m");
        }
        return format!("{minutes}m{s}s");
    }
    if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = minutes / 60;
    if hours < 8 {
        let m = minutes % 60;
        if m == 0 {
            return format!("{hours}h");
        }
        return format!("{hours}h{m}m");
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        if h == 0 {
            return format!("{}d", hours / 24);
        }
        return format!("{}d{}h", hours / 24, h);
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        if dy == 0 {
            return format!("{}y", hours / 24 / 365);
        }
        return format!("{}y{}d", hours / 24 / 365, dy);
    }
    format!("{}y", hours / 24 / 365)
}

// ---------------------------------------------------------------------------
// JSON access. Objects may be partial or malformed, so every accessor falls
// back to a zero value instead of failing.

/// The value at a JSON pointer; an explicit `null` counts as absent, as it
/// does when Go decodes into a pointer field.
fn get<'a>(v: &'a Value, ptr: &str) -> Option<&'a Value> {
    v.pointer(ptr).filter(|x| !x.is_null())
}

fn text<'a>(v: &'a Value, ptr: &str) -> &'a str {
    get(v, ptr).and_then(Value::as_str).unwrap_or("")
}

/// A string field with an API default applied when it is missing or empty.
fn str_or<'a>(v: &'a Value, ptr: &str, default: &'a str) -> &'a str {
    match text(v, ptr) {
        "" => default,
        s => s,
    }
}

/// A `*string` field: set (even to "") wins, absent prints `default`.
fn ptr_str<'a>(v: &'a Value, ptr: &str, default: &'a str) -> &'a str {
    get(v, ptr).and_then(Value::as_str).unwrap_or(default)
}

fn int_opt(v: &Value, ptr: &str) -> Option<i64> {
    let x = get(v, ptr)?;
    x.as_i64()
        .or_else(|| x.as_u64().map(|u| i64::try_from(u).unwrap_or(i64::MAX)))
        .or_else(|| x.as_f64().map(|f| f as i64))
}

fn int(v: &Value, ptr: &str) -> i64 {
    int_opt(v, ptr).unwrap_or(0)
}

fn boolean(v: &Value, ptr: &str) -> Option<bool> {
    get(v, ptr).and_then(Value::as_bool)
}

fn items<'a>(v: &'a Value, ptr: &str) -> &'a [Value] {
    get(v, ptr)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// Number of entries in a list or map field.
fn len_of(v: &Value, ptr: &str) -> i64 {
    let n = match get(v, ptr) {
        Some(Value::Array(a)) => a.len(),
        Some(Value::Object(m)) => m.len(),
        _ => 0,
    };
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn string_map(v: &Value, ptr: &str) -> BTreeMap<String, String> {
    let Some(Value::Object(m)) = get(v, ptr) else {
        return BTreeMap::new();
    };
    m.iter()
        .map(|(k, val)| (k.clone(), scalar_text(val)))
        .collect()
}

/// Renders a scalar (quantity, int-or-string, ...) as text.
fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// A resource.Quantity field. JSON carries quantities as strings already in
/// their serialized form; a missing one prints like Go's zero Quantity.
fn quantity(v: &Value, ptr: &str) -> String {
    match get(v, ptr) {
        Some(q) => scalar_text(q),
        None => "0".to_string(),
    }
}

/// A `*resource.Quantity` upstream formats with `String()`, which prints
/// "<nil>" for a nil pointer.
fn quantity_ptr(v: &Value, ptr: &str) -> String {
    get(v, ptr)
        .map(scalar_text)
        .unwrap_or_else(|| "<nil>".to_string())
}

fn timestamp(v: &Value, ptr: &str) -> Option<DateTime<Utc>> {
    let s = get(v, ptr)?.as_str()?;
    DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

fn name(v: &Value) -> &str {
    text(v, "/metadata/name")
}

fn since(t: Option<DateTime<Utc>>, now: DateTime<Utc>) -> String {
    match t {
        Some(t) => human_duration(now - t),
        None => "<unknown>".to_string(),
    }
}

fn age(v: &Value, now: DateTime<Utc>) -> Value {
    since(timestamp(v, "/metadata/creationTimestamp"), now).into()
}

fn deleting(v: &Value) -> bool {
    get(v, "/metadata/deletionTimestamp").is_some()
}

/// JSON pointer segments must escape "~" and "/" (label keys contain "/").
fn escape_pointer(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

fn or_none(s: String) -> String {
    if s.is_empty() {
        "<none>".to_string()
    } else {
        s
    }
}

/// labels.FormatLabels: sorted `k=v` pairs, "<none>" when empty.
fn format_labels(v: &Value, ptr: &str) -> String {
    let pairs: Vec<String> = string_map(v, ptr)
        .into_iter()
        .map(|(k, val)| format!("{k}={val}"))
        .collect();
    or_none(pairs.join(","))
}

/// labels.Selector.String() for a metav1.LabelSelector. None means the
/// selector cannot be converted (upstream's LabelSelectorAsSelector error).
pub fn label_selector_string(sel: Option<&Value>) -> Option<String> {
    let Some(sel) = sel else {
        // A nil selector selects nothing; it prints as "" like an empty one.
        return Some(String::new());
    };
    let mut reqs: Vec<(String, String)> = Vec::new();
    for (k, val) in string_map(sel, "/matchLabels") {
        let s = format!("{k}={val}");
        reqs.push((k, s));
    }
    for expr in items(sel, "/matchExpressions") {
        let key = text(expr, "/key").to_string();
        let mut values: Vec<String> = items(expr, "/values").iter().map(scalar_text).collect();
        values.sort();
        let s = match text(expr, "/operator") {
            "In" | "NotIn" if values.is_empty() => return None,
            "Exists" | "DoesNotExist" if !values.is_empty() => return None,
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.clone(),
            "DoesNotExist" => format!("!{key}"),
            _ => return None,
        };
        reqs.push((key, s));
    }
    reqs.sort_by(|a, b| a.0.cmp(&b.0));
    Some(
        reqs.into_iter()
            .map(|(_, s)| s)
            .collect::<Vec<_>>()
            .join(","),
    )
}

/// metav1.FormatLabelSelector.
fn format_label_selector(sel: Option<&Value>) -> String {
    match label_selector_string(sel) {
        Some(s) => or_none(s),
        None => "<error>".to_string(),
    }
}

/// Comma-joined container names and images of a pod spec.
fn container_cells(spec: Option<&Value>) -> (String, String) {
    let containers = spec.map(|s| items(s, "/containers")).unwrap_or(&[]);
    let names: Vec<&str> = containers.iter().map(|c| text(c, "/name")).collect();
    let images: Vec<&str> = containers.iter().map(|c| text(c, "/image")).collect();
    (names.join(","), images.join(","))
}

fn print_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}

/// First condition of `type_` in a condition list, like upstream's helpers
/// that stop at the first match.
fn condition<'a>(conditions: &'a [Value], type_: &str) -> Option<&'a Value> {
    conditions.iter().find(|c| text(c, "/type") == type_)
}

fn condition_true(conditions: &[Value], type_: &str) -> bool {
    condition(conditions, type_).is_some_and(|c| text(c, "/status") == "True")
}

/// net.JoinHostPort: IPv6 literals need brackets.
fn join_host_port(host: &str, port: i64) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// "a,b,c + N more..." lists, shared by several printers.
fn list_with_more(list: &[String], more: bool, count: usize, max: usize) -> String {
    let ret = list.join(",");
    if more {
        return format!("{ret} + {} more...", count.saturating_sub(max));
    }
    if ret.is_empty() {
        return "<unset>".to_string();
    }
    ret
}

// ---------------------------------------------------------------------------
// core/v1

/// When a container last terminated, for the "(5m ago)" restart suffix.
fn last_finished(status: &Value) -> Option<DateTime<Utc>> {
    timestamp(status, "/lastState/terminated/finishedAt")
}

fn later(a: Option<DateTime<Utc>>, b: Option<DateTime<Utc>>) -> Option<DateTime<Utc>> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

/// Upstream's exit-code/signal fallback when a terminated state has no reason.
fn terminated_reason(term: &Value, prefix: &str) -> String {
    let reason = text(term, "/reason");
    if !reason.is_empty() {
        return format!("{prefix}{reason}");
    }
    let signal = int(term, "/signal");
    if signal != 0 {
        format!("{prefix}Signal:{signal}")
    } else {
        format!("{prefix}ExitCode:{}", int(term, "/exitCode"))
    }
}

fn pod_cells(pod: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let conditions = items(pod, "/status/conditions");
    // The registry sets phase Pending on create; a bare object reads the same.
    let phase = str_or(pod, "/status/phase", "Pending");
    let mut reason = str_or(pod, "/status/reason", phase).to_string();
    if conditions
        .iter()
        .any(|c| text(c, "/type") == "PodScheduled" && text(c, "/reason") == "SchedulingGated")
    {
        reason = "SchedulingGated".to_string();
    }

    let init_specs = items(pod, "/spec/initContainers");
    // Sidecars (init containers with restartPolicy Always) count as regular
    // containers once they have started.
    let sidecar_specs: Vec<&Value> = init_specs
        .iter()
        .filter(|c| text(c, "/restartPolicy") == "Always")
        .collect();
    let sidecars: BTreeSet<&str> = sidecar_specs.iter().map(|c| text(c, "/name")).collect();
    let total = items(pod, "/spec/containers").len() + sidecar_specs.len();

    let mut ready = 0usize;
    let mut restarts = 0i64;
    let mut sidecar_restarts = 0i64;
    let mut last_restart = None;
    let mut last_sidecar_restart = None;
    let mut initializing = false;
    for (i, c) in items(pod, "/status/initContainerStatuses")
        .iter()
        .enumerate()
    {
        let count = int(c, "/restartCount");
        restarts += count;
        last_restart = later(last_restart, last_finished(c));
        let sidecar = sidecars.contains(text(c, "/name"));
        if sidecar {
            sidecar_restarts += count;
            last_sidecar_restart = later(last_sidecar_restart, last_finished(c));
        }
        let terminated = get(c, "/state/terminated");
        let waiting_reason = text(c, "/state/waiting/reason");
        if terminated.is_some_and(|t| int(t, "/exitCode") == 0) {
            continue;
        }
        if sidecar && boolean(c, "/started") == Some(true) {
            if boolean(c, "/ready") == Some(true) {
                ready += 1;
            }
            continue;
        }
        reason = if let Some(t) = terminated {
            terminated_reason(t, "Init:")
        } else if !waiting_reason.is_empty() && waiting_reason != "PodInitializing" {
            format!("Init:{waiting_reason}")
        } else {
            format!("Init:{}/{}", i, init_specs.len())
        };
        initializing = true;
        break;
    }

    if !initializing || condition_true(conditions, "Initialized") {
        restarts = sidecar_restarts;
        last_restart = last_sidecar_restart;
        let mut has_running = false;
        // Walk backwards so the first container's state wins, as upstream.
        for c in items(pod, "/status/containerStatuses").iter().rev() {
            restarts += int(c, "/restartCount");
            last_restart = later(last_restart, last_finished(c));
            let waiting_reason = text(c, "/state/waiting/reason");
            let terminated = get(c, "/state/terminated");
            if !waiting_reason.is_empty() {
                reason = waiting_reason.to_string();
            } else if let Some(t) = terminated {
                reason = terminated_reason(t, "");
            } else if boolean(c, "/ready") == Some(true) && get(c, "/state/running").is_some() {
                has_running = true;
                ready += 1;
            }
        }
        if reason == "Completed" && has_running {
            reason = if condition_true(conditions, "Ready") {
                "Running".to_string()
            } else {
                "NotReady".to_string()
            };
        }
    }

    if deleting(pod) && text(pod, "/status/reason") == "NodeLost" {
        reason = "Unknown".to_string();
    } else if deleting(pod) && phase != "Failed" && phase != "Succeeded" {
        reason = "Terminating".to_string();
    }

    let restarts_cell = match last_restart {
        Some(t) if restarts != 0 => format!("{restarts} ({} ago)", since(Some(t), now)),
        _ => restarts.to_string(),
    };

    let pod_ip = match items(pod, "/status/podIPs").first() {
        Some(ip) => text(ip, "/ip"),
        None => text(pod, "/status/podIP"),
    };
    let gates = items(pod, "/spec/readinessGates");
    let readiness_gates = if gates.is_empty() {
        "<none>".to_string()
    } else {
        let true_count = gates
            .iter()
            .filter(|g| condition_true(conditions, text(g, "/conditionType")))
            .count();
        format!("{true_count}/{}", gates.len())
    };

    vec![
        name(pod).into(),
        format!("{ready}/{total}").into(),
        reason.into(),
        restarts_cell.into(),
        age(pod, now),
        or_none(pod_ip.to_string()).into(),
        or_none(text(pod, "/spec/nodeName").to_string()).into(),
        or_none(text(pod, "/status/nominatedNodeName").to_string()).into(),
        readiness_gates.into(),
    ]
}

fn pod_template_cells(o: &Value) -> Vec<Value> {
    let (names, images) = container_cells(get(o, "/template/spec"));
    vec![
        name(o).into(),
        names.into(),
        images.into(),
        format_labels(o, "/template/metadata/labels").into(),
    ]
}

fn replication_controller_cells(o: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let (names, images) = container_cells(get(o, "/spec/template/spec"));
    vec![
        name(o).into(),
        int_opt(o, "/spec/replicas").unwrap_or(1).into(),
        int(o, "/status/replicas").into(),
        int(o, "/status/readyReplicas").into(),
        age(o, now),
        names.into(),
        images.into(),
        format_labels(o, "/spec/selector").into(),
    ]
}

/// The distinct IPs/hostnames of a load balancer status, sorted as upstream's
/// string set does. The server always prints wide, so nothing is clipped.
fn load_balancer_ingress(o: &Value, ptr: &str) -> Vec<String> {
    let set: BTreeSet<String> = items(o, ptr)
        .iter()
        .filter_map(|i| {
            let ip = text(i, "/ip");
            let host = text(i, "/hostname");
            if !ip.is_empty() {
                Some(ip.to_string())
            } else if !host.is_empty() {
                Some(host.to_string())
            } else {
                None
            }
        })
        .collect();
    set.into_iter().collect()
}

fn service_external_ip(svc: &Value) -> String {
    let external_ips: Vec<String> = items(svc, "/spec/externalIPs")
        .iter()
        .map(scalar_text)
        .collect();
    match str_or(svc, "/spec/type", "ClusterIP") {
        "ClusterIP" | "NodePort" => or_none(external_ips.join(",")),
        "LoadBalancer" => {
            let mut all = load_balancer_ingress(svc, "/status/loadBalancer/ingress");
            if all.is_empty() && external_ips.is_empty() {
                return "<pending>".to_string();
            }
            all.extend(external_ips);
            all.join(",")
        }
        "ExternalName" => text(svc, "/spec/externalName").to_string(),
        _ => "<unknown>".to_string(),
    }
}

fn service_cells(svc: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let cluster_ip = match items(svc, "/spec/clusterIPs").first() {
        Some(ip) => scalar_text(ip),
        None => text(svc, "/spec/clusterIP").to_string(),
    };
    let ports: Vec<String> = items(svc, "/spec/ports")
        .iter()
        .map(|p| {
            let port = int(p, "/port");
            let protocol = str_or(p, "/protocol", "TCP");
            match int(p, "/nodePort") {
                node_port if node_port > 0 => format!("{port}:{node_port}/{protocol}"),
                _ => format!("{port}/{protocol}"),
            }
        })
        .collect();
    vec![
        name(svc).into(),
        str_or(svc, "/spec/type", "ClusterIP").into(),
        or_none(cluster_ip).into(),
        service_external_ip(svc).into(),
        or_none(ports.join(",")).into(),
        age(svc, now),
        format_labels(svc, "/spec/selector").into(),
    ]
}

/// Up to three `ip:port` endpoints, then a count of the rest.
fn format_endpoints(ep: &Value) -> String {
    let subsets = items(ep, "/subsets");
    if subsets.is_empty() {
        return "<none>".to_string();
    }
    const MAX: usize = 3;
    let mut list: Vec<String> = Vec::new();
    let mut more = false;
    let mut count = 0usize;
    for ss in subsets {
        let addresses = items(ss, "/addresses");
        let ports = items(ss, "/ports");
        if ports.is_empty() {
            // Headless services may have no ports at all.
            count += addresses.len();
            for a in addresses {
                if list.len() == MAX {
                    more = true;
                    break;
                }
                list.push(text(a, "/ip").to_string());
            }
            continue;
        }
        for port in ports {
            count += addresses.len();
            for a in addresses {
                if list.len() == MAX {
                    more = true;
                    break;
                }
                list.push(join_host_port(text(a, "/ip"), int(port, "/port")));
            }
        }
    }
    let ret = list.join(",");
    if more {
        format!("{ret} + {} more...", count.saturating_sub(MAX))
    } else {
        ret
    }
}

fn node_address(node: &Value, type_: &str) -> String {
    items(node, "/status/addresses")
        .iter()
        .find(|a| text(a, "/type") == type_)
        .map(|a| text(a, "/address").to_string())
        .unwrap_or_else(|| "<none>".to_string())
}

fn node_cells(node: &Value, now: DateTime<Utc>) -> Vec<Value> {
    // Upstream keeps the last condition of each type; only Ready is shown.
    let mut status: Vec<String> = Vec::new();
    if let Some(c) = items(node, "/status/conditions")
        .iter()
        .rev()
        .find(|c| text(c, "/type") == "Ready")
    {
        status.push(if text(c, "/status") == "True" {
            "Ready".to_string()
        } else {
            "NotReady".to_string()
        });
    }
    if status.is_empty() {
        status.push("Unknown".to_string());
    }
    if boolean(node, "/spec/unschedulable") == Some(true) {
        status.push("SchedulingDisabled".to_string());
    }

    let mut roles = BTreeSet::new();
    for (k, v) in string_map(node, "/metadata/labels") {
        if let Some(role) = k.strip_prefix("node-role.kubernetes.io/") {
            if !role.is_empty() {
                roles.insert(role.to_string());
            }
        } else if k == "kubernetes.io/role" && !v.is_empty() {
            roles.insert(v);
        }
    }
    let roles: Vec<String> = roles.into_iter().collect();

    let info = |field: &str| -> Value {
        match text(node, &format!("/status/nodeInfo/{field}")) {
            "" => "<unknown>".into(),
            s => s.into(),
        }
    };
    vec![
        name(node).into(),
        status.join(",").into(),
        or_none(roles.join(",")).into(),
        age(node, now),
        text(node, "/status/nodeInfo/kubeletVersion").into(),
        node_address(node, "InternalIP").into(),
        node_address(node, "ExternalIP").into(),
        info("osImage"),
        info("kernelVersion"),
        info("containerRuntimeVersion"),
    ]
}

/// Prints core/v1 events and events.k8s.io/v1 events; the latter rename the
/// fields, and upstream prints both from the same internal type.
fn event_cells(ev: &Value, events_api: bool, now: DateTime<Utc>) -> Vec<Value> {
    let pick = |core: &'static str, events: &'static str| if events_api { events } else { core };
    let first_ts = timestamp(ev, pick("/firstTimestamp", "/deprecatedFirstTimestamp"));
    let first_seen = since(first_ts.or_else(|| timestamp(ev, "/eventTime")), now);
    let mut last_seen = match timestamp(ev, pick("/lastTimestamp", "/deprecatedLastTimestamp")) {
        Some(t) => since(Some(t), now),
        None => first_seen.clone(),
    };
    let mut count = int(ev, pick("/count", "/deprecatedCount"));
    if let Some(series) = get(ev, "/series") {
        last_seen = since(timestamp(series, "/lastObservedTime"), now);
        count = int(series, "/count");
    } else if count == 0 {
        // Singleton events in the new API carry no count.
        count = 1;
    }

    let obj = pick("/involvedObject", "/regarding");
    let kind = text(ev, &format!("{obj}/kind")).to_lowercase();
    let obj_name = text(ev, &format!("{obj}/name"));
    let target = if obj_name.is_empty() {
        kind
    } else {
        format!("{kind}/{obj_name}")
    };

    let source = pick("/source", "/deprecatedSource");
    let component = match text(ev, &format!("{source}/component")) {
        "" => text(ev, pick("/reportingComponent", "/reportingController")),
        c => c,
    };
    let host = match text(ev, &format!("{source}/host")) {
        "" => text(ev, "/reportingInstance"),
        h => h,
    };
    let source_text = if host.is_empty() {
        component.to_string()
    } else {
        format!("{component}, {host}")
    };

    vec![
        last_seen.into(),
        text(ev, "/type").into(),
        text(ev, "/reason").into(),
        target.into(),
        text(ev, &format!("{obj}/fieldPath")).into(),
        source_text.into(),
        text(ev, pick("/message", "/note")).trim().into(),
        first_seen.into(),
        count.into(),
        name(ev).into(),
    ]
}

fn secret_cells(o: &Value, now: DateTime<Utc>) -> Vec<Value> {
    // stringData is write-only and merged into data upstream; count the union
    // in case an object still carries it.
    let mut keys: BTreeSet<String> = string_map(o, "/data").into_keys().collect();
    keys.extend(string_map(o, "/stringData").into_keys());
    vec![
        name(o).into(),
        str_or(o, "/type", "Opaque").into(),
        i64::try_from(keys.len()).unwrap_or(i64::MAX).into(),
        age(o, now),
    ]
}

/// helper.GetAccessModesAsString: fixed order, duplicates dropped.
fn access_modes(o: &Value, ptr: &str) -> String {
    let modes: BTreeSet<&str> = items(o, ptr).iter().filter_map(Value::as_str).collect();
    [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ]
    .iter()
    .filter(|(mode, _)| modes.contains(mode))
    .map(|(_, short)| *short)
    .collect::<Vec<_>>()
    .join(",")
}

/// The beta storage-class annotation still wins over the spec field.
fn storage_class_annotation(o: &Value) -> Option<&str> {
    get(
        o,
        &format!(
            "/metadata/annotations/{}",
            escape_pointer("volume.beta.kubernetes.io/storage-class")
        ),
    )
    .and_then(Value::as_str)
}

fn persistent_volume_cells(pv: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let claim = match get(pv, "/spec/claimRef") {
        Some(c) => format!("{}/{}", text(c, "/namespace"), text(c, "/name")),
        None => String::new(),
    };
    let phase = if deleting(pv) {
        "Terminating"
    } else {
        str_or(pv, "/status/phase", "Pending")
    };
    let class = storage_class_annotation(pv).unwrap_or_else(|| text(pv, "/spec/storageClassName"));
    vec![
        name(pv).into(),
        quantity(pv, "/spec/capacity/storage").into(),
        access_modes(pv, "/spec/accessModes").into(),
        str_or(pv, "/spec/persistentVolumeReclaimPolicy", "Retain").into(),
        phase.into(),
        claim.into(),
        class.into(),
        ptr_str(pv, "/spec/volumeAttributesClassName", "<unset>").into(),
        text(pv, "/status/reason").into(),
        age(pv, now),
        str_or(pv, "/spec/volumeMode", "Filesystem").into(),
    ]
}

fn persistent_volume_claim_cells(pvc: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let phase = if deleting(pvc) {
        "Terminating"
    } else {
        str_or(pvc, "/status/phase", "Pending")
    };
    let volume = text(pvc, "/spec/volumeName");
    // Capacity and modes are only meaningful once bound.
    let (capacity, modes) = if volume.is_empty() {
        (String::new(), String::new())
    } else {
        (
            quantity(pvc, "/status/capacity/storage"),
            access_modes(pvc, "/status/accessModes"),
        )
    };
    let class =
        storage_class_annotation(pvc).unwrap_or_else(|| text(pvc, "/spec/storageClassName"));
    vec![
        name(pvc).into(),
        phase.into(),
        volume.into(),
        capacity.into(),
        modes.into(),
        class.into(),
        ptr_str(pvc, "/spec/volumeAttributesClassName", "<unset>").into(),
        age(pvc, now),
        str_or(pvc, "/spec/volumeMode", "Filesystem").into(),
    ]
}

fn resource_quota_cells(rq: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let used = string_map(rq, "/status/used");
    let mut requests: Vec<String> = Vec::new();
    let mut limits: Vec<String> = Vec::new();
    for (resource, hard) in string_map(rq, "/status/hard") {
        let used = used
            .get(&resource)
            .cloned()
            .unwrap_or_else(|| "0".to_string());
        let entry = format!("{resource}: {used}/{hard}");
        let mut pieces = resource.split('.');
        let is_limit = pieces.next() == Some("limits") && pieces.next().is_some();
        if is_limit {
            limits.push(entry);
        } else {
            requests.push(entry);
        }
    }
    vec![
        name(rq).into(),
        requests.join(", ").into(),
        limits.join(", ").into(),
        age(rq, now),
    ]
}

fn component_status_cells(cs: &Value) -> Vec<Value> {
    let (status, message, error) = match condition(items(cs, "/conditions"), "Healthy") {
        Some(c) => (
            if text(c, "/status") == "True" {
                "Healthy"
            } else {
                "Unhealthy"
            },
            text(c, "/message"),
            text(c, "/error"),
        ),
        None => ("Unknown", "", ""),
    };
    vec![name(cs).into(), status.into(), message.into(), error.into()]
}

// ---------------------------------------------------------------------------
// apps/v1

fn deployment_cells(d: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let desired = int_opt(d, "/spec/replicas").unwrap_or(1);
    let (names, images) = container_cells(get(d, "/spec/template/spec"));
    // Unlike the other workloads, upstream prints the raw selector string
    // here, without the "<none>" substitution.
    let selector =
        label_selector_string(get(d, "/spec/selector")).unwrap_or_else(|| "<invalid>".to_string());
    vec![
        name(d).into(),
        format!("{}/{desired}", int(d, "/status/readyReplicas")).into(),
        int(d, "/status/updatedReplicas").into(),
        int(d, "/status/availableReplicas").into(),
        age(d, now),
        names.into(),
        images.into(),
        selector.into(),
    ]
}

fn replica_set_cells(rs: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let (names, images) = container_cells(get(rs, "/spec/template/spec"));
    vec![
        name(rs).into(),
        int_opt(rs, "/spec/replicas").unwrap_or(1).into(),
        int(rs, "/status/replicas").into(),
        int(rs, "/status/readyReplicas").into(),
        age(rs, now),
        names.into(),
        images.into(),
        format_label_selector(get(rs, "/spec/selector")).into(),
    ]
}

fn statefulset_cells(ss: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let (names, images) = container_cells(get(ss, "/spec/template/spec"));
    vec![
        name(ss).into(),
        format!(
            "{}/{}",
            int(ss, "/status/readyReplicas"),
            int_opt(ss, "/spec/replicas").unwrap_or(1)
        )
        .into(),
        age(ss, now),
        names.into(),
        images.into(),
    ]
}

fn daemonset_cells(ds: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let (names, images) = container_cells(get(ds, "/spec/template/spec"));
    vec![
        name(ds).into(),
        int(ds, "/status/desiredNumberScheduled").into(),
        int(ds, "/status/currentNumberScheduled").into(),
        int(ds, "/status/numberReady").into(),
        int(ds, "/status/updatedNumberScheduled").into(),
        int(ds, "/status/numberAvailable").into(),
        format_labels(ds, "/spec/template/spec/nodeSelector").into(),
        age(ds, now),
        names.into(),
        images.into(),
        format_label_selector(get(ds, "/spec/selector")).into(),
    ]
}

fn controller_revision_cells(cr: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let controller = items(cr, "/metadata/ownerReferences")
        .iter()
        .find(|r| boolean(r, "/controller") == Some(true))
        .map(|r| {
            let group = match text(r, "/apiVersion").split_once('/') {
                Some((g, _)) => g,
                None => "",
            };
            let kind = text(r, "/kind");
            let ref_name = text(r, "/name");
            // formatResourceName: "kind.group/name", lower-cased, or just the
            // name when the kind is unknown.
            match (kind, group) {
                ("", "") => ref_name.to_string(),
                (k, "") => format!("{}/{ref_name}", k.to_lowercase()),
                (k, g) => format!("{}/{ref_name}", format!("{k}.{g}").to_lowercase()),
            }
        })
        .unwrap_or_else(|| "<none>".to_string());
    vec![
        name(cr).into(),
        controller.into(),
        int(cr, "/revision").into(),
        age(cr, now),
    ]
}

// ---------------------------------------------------------------------------
// batch/v1

fn job_cells(job: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let succeeded = int(job, "/status/succeeded");
    let completions = match int_opt(job, "/spec/completions") {
        Some(c) => format!("{succeeded}/{c}"),
        None => match int(job, "/spec/parallelism") {
            p if p > 1 => format!("{succeeded}/1 of {p}"),
            _ => format!("{succeeded}/1"),
        },
    };
    let duration = match (
        timestamp(job, "/status/startTime"),
        timestamp(job, "/status/completionTime"),
    ) {
        (None, _) => String::new(),
        (Some(start), None) => human_duration(now - start),
        (Some(start), Some(end)) => human_duration(end - start),
    };
    let conditions = items(job, "/status/conditions");
    let status = if condition_true(conditions, "Complete") {
        "Complete"
    } else if condition_true(conditions, "Failed") {
        "Failed"
    } else if deleting(job) {
        "Terminating"
    } else if condition_true(conditions, "Suspended") {
        "Suspended"
    } else if condition_true(conditions, "FailureTarget") {
        "FailureTarget"
    } else {
        "Running"
    };
    let (names, images) = container_cells(get(job, "/spec/template/spec"));
    vec![
        name(job).into(),
        status.into(),
        completions.into(),
        duration.into(),
        age(job, now),
        names.into(),
        images.into(),
        format_label_selector(get(job, "/spec/selector")).into(),
    ]
}

fn cronjob_cells(cj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let last_schedule = match timestamp(cj, "/status/lastScheduleTime") {
        Some(t) => since(Some(t), now),
        None => "<none>".to_string(),
    };
    let time_zone = ptr_str(cj, "/spec/timeZone", "<none>");
    let (names, images) = container_cells(get(cj, "/spec/jobTemplate/spec/template/spec"));
    vec![
        name(cj).into(),
        text(cj, "/spec/schedule").into(),
        time_zone.into(),
        print_bool(boolean(cj, "/spec/suspend").unwrap_or(false)).into(),
        len_of(cj, "/status/active").into(),
        last_schedule.into(),
        age(cj, now),
        names.into(),
        images.into(),
        format_label_selector(get(cj, "/spec/jobTemplate/spec/selector")).into(),
    ]
}

// ---------------------------------------------------------------------------
// autoscaling

/// One "current/target" entry per metric, as upstream's formatHPAMetrics.
/// Statuses are matched to specs by position, as upstream does.
fn format_hpa_metrics(specs: &[Value], statuses: &[Value]) -> String {
    if specs.is_empty() {
        return "<none>".to_string();
    }
    const MAX: usize = 2;
    let mut list: Vec<String> = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        let status = statuses.get(i);
        // Per-source status block, e.g. status.resource for a Resource metric.
        let current = |source: &str| status.and_then(|s| get(s, &format!("/{source}")));
        let entry = match text(spec, "/type") {
            t @ ("External" | "Object") => {
                let source = if t == "External" {
                    "external"
                } else {
                    "object"
                };
                let target = get(spec, &format!("/{source}/target")).unwrap_or(&Value::Null);
                if get(target, "/averageValue").is_some() {
                    let cur = current(source)
                        .and_then(|c| get(c, "/current/averageValue"))
                        .map(scalar_text)
                        .unwrap_or_else(|| "<unknown>".to_string());
                    format!("{cur}/{} (avg)", quantity_ptr(target, "/averageValue"))
                } else {
                    let cur = current(source)
                        .map(|c| quantity_ptr(c, "/current/value"))
                        .unwrap_or_else(|| "<unknown>".to_string());
                    format!("{cur}/{}", quantity_ptr(target, "/value"))
                }
            }
            "Pods" => {
                let cur = current("pods")
                    .map(|c| quantity_ptr(c, "/current/averageValue"))
                    .unwrap_or_else(|| "<unknown>".to_string());
                format!("{cur}/{}", quantity_ptr(spec, "/pods/target/averageValue"))
            }
            t @ ("Resource" | "ContainerResource") => {
                let source = if t == "Resource" {
                    "resource"
                } else {
                    "containerResource"
                };
                let block = get(spec, &format!("/{source}")).unwrap_or(&Value::Null);
                let resource = text(block, "/name");
                if get(block, "/target/averageValue").is_some() {
                    let cur = current(source)
                        .map(|c| quantity_ptr(c, "/current/averageValue"))
                        .unwrap_or_else(|| "<unknown>".to_string());
                    format!(
                        "{resource}: {cur}/{}",
                        quantity_ptr(block, "/target/averageValue")
                    )
                } else {
                    let cur = current(source)
                        .and_then(|c| int_opt(c, "/current/averageUtilization"))
                        .map(|u| format!("{u}%"))
                        .unwrap_or_else(|| "<unknown>".to_string());
                    let target = int_opt(block, "/target/averageUtilization")
                        .map(|u| format!("{u}%"))
                        .unwrap_or_else(|| "<auto>".to_string());
                    format!("{resource}: {cur}/{target}")
                }
            }
            _ => "<unknown type>".to_string(),
        };
        list.push(entry);
    }
    let count = list.len();
    if count > MAX {
        list.truncate(MAX);
        return format!("{} + {} more...", list.join(", "), count - MAX);
    }
    list.join(", ")
}

fn hpa_cells(hpa: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let reference = format!(
        "{}/{}",
        text(hpa, "/spec/scaleTargetRef/kind"),
        text(hpa, "/spec/scaleTargetRef/name")
    );
    // autoscaling/v1 objects carry a single CPU target; upstream converts it
    // to the equivalent Resource metric before printing.
    let (specs, statuses) = match int_opt(hpa, "/spec/targetCPUUtilizationPercentage") {
        Some(target) if get(hpa, "/spec/metrics").is_none() => {
            let spec = json!([{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": target}}}]);
            let status = match int_opt(hpa, "/status/currentCPUUtilizationPercentage") {
                Some(cur) => json!([{"type": "Resource", "resource": {"name": "cpu",
                    "current": {"averageUtilization": cur}}}]),
                None => json!([]),
            };
            (spec, status)
        }
        _ => (
            get(hpa, "/spec/metrics").cloned().unwrap_or(Value::Null),
            get(hpa, "/status/currentMetrics")
                .cloned()
                .unwrap_or(Value::Null),
        ),
    };
    let metrics = format_hpa_metrics(items(&specs, ""), items(&statuses, ""));
    let min_pods = int_opt(hpa, "/spec/minReplicas")
        .map(|m| m.to_string())
        .unwrap_or_else(|| "<unset>".to_string());
    vec![
        name(hpa).into(),
        reference.into(),
        metrics.into(),
        min_pods.into(),
        int(hpa, "/spec/maxReplicas").into(),
        int(hpa, "/status/currentReplicas").into(),
        age(hpa, now),
    ]
}

// ---------------------------------------------------------------------------
// networking.k8s.io, rbac, policy, storage and friends

fn ingress_cells(ing: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let class = ptr_str(ing, "/spec/ingressClassName", "<none>");
    const MAX: usize = 3;
    let rules = items(ing, "/spec/rules");
    let mut hosts: Vec<&str> = Vec::new();
    let mut more = false;
    for rule in rules {
        if hosts.len() == MAX {
            more = true;
        }
        let host = text(rule, "/host");
        if !more && !host.is_empty() {
            hosts.push(host);
        }
    }
    let hosts = if hosts.is_empty() {
        "*".to_string()
    } else if more {
        format!("{} + {} more...", hosts.join(","), rules.len() - MAX)
    } else {
        hosts.join(",")
    };
    let ports = if items(ing, "/spec/tls").is_empty() {
        "80"
    } else {
        "80, 443"
    };
    vec![
        name(ing).into(),
        class.into(),
        hosts.into(),
        load_balancer_ingress(ing, "/status/loadBalancer/ingress")
            .join(",")
            .into(),
        ports.into(),
        age(ing, now),
    ]
}

fn ingress_class_cells(ic: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let parameters = match get(ic, "/spec/parameters") {
        Some(p) => {
            let mut s = text(p, "/kind").to_string();
            if let Some(g) = get(p, "/apiGroup").and_then(Value::as_str) {
                s = format!("{s}.{g}");
            }
            format!("{s}/{}", text(p, "/name"))
        }
        None => "<none>".to_string(),
    };
    vec![
        name(ic).into(),
        text(ic, "/spec/controller").into(),
        parameters.into(),
        age(ic, now),
    ]
}

fn role_binding_cells(rb: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let mut users = Vec::new();
    let mut groups = Vec::new();
    let mut sas = Vec::new();
    for s in items(rb, "/subjects") {
        let subject = text(s, "/name");
        match text(s, "/kind") {
            "ServiceAccount" => sas.push(format!("{}/{subject}", text(s, "/namespace"))),
            "User" => users.push(subject.to_string()),
            "Group" => groups.push(subject.to_string()),
            _ => {}
        }
    }
    vec![
        name(rb).into(),
        format!(
            "{}/{}",
            text(rb, "/roleRef/kind"),
            text(rb, "/roleRef/name")
        )
        .into(),
        age(rb, now),
        users.join(", ").into(),
        groups.join(", ").into(),
        sas.join(", ").into(),
    ]
}

fn pdb_cells(pdb: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let int_or_string = |ptr: &str| {
        get(pdb, ptr)
            .map(scalar_text)
            .unwrap_or_else(|| "N/A".to_string())
    };
    vec![
        name(pdb).into(),
        int_or_string("/spec/minAvailable").into(),
        int_or_string("/spec/maxUnavailable").into(),
        int(pdb, "/status/disruptionsAllowed").into(),
        age(pdb, now),
    ]
}

fn storage_class_cells(sc: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let annotation = |key: &str| {
        text(
            sc,
            &format!("/metadata/annotations/{}", escape_pointer(key)),
        ) == "true"
    };
    let mut display = name(sc).to_string();
    if annotation("storageclass.kubernetes.io/is-default-class")
        || annotation("storageclass.beta.kubernetes.io/is-default-class")
    {
        display.push_str(" (default)");
    }
    vec![
        display.into(),
        text(sc, "/provisioner").into(),
        str_or(sc, "/reclaimPolicy", "Delete").into(),
        str_or(sc, "/volumeBindingMode", "Immediate").into(),
        boolean(sc, "/allowVolumeExpansion").unwrap_or(false).into(),
        age(sc, now),
    ]
}

fn csi_driver_cells(d: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let modes: Vec<String> = items(d, "/spec/volumeLifecycleModes")
        .iter()
        .map(scalar_text)
        .collect();
    let token_requests = match get(d, "/spec/tokenRequests") {
        Some(t) => items(t, "")
            .iter()
            .map(|r| text(r, "/audience"))
            .collect::<Vec<_>>()
            .join(","),
        None => "<unset>".to_string(),
    };
    vec![
        name(d).into(),
        boolean(d, "/spec/attachRequired").unwrap_or(true).into(),
        boolean(d, "/spec/podInfoOnMount").unwrap_or(false).into(),
        boolean(d, "/spec/storageCapacity").unwrap_or(false).into(),
        token_requests.into(),
        boolean(d, "/spec/requiresRepublish")
            .unwrap_or(false)
            .into(),
        or_none(modes.join(",")).into(),
        age(d, now),
    ]
}

fn endpoint_slice_cells(eps: &Value, now: DateTime<Utc>) -> Vec<Value> {
    const MAX: usize = 3;
    let ports: Vec<String> = items(eps, "/ports")
        .iter()
        .map(|p| match (int_opt(p, "/port"), get(p, "/name")) {
            (Some(port), _) => port.to_string(),
            (None, Some(n)) => scalar_text(n),
            (None, None) => "*".to_string(),
        })
        .collect();
    let port_count = ports.len();
    let ports_text = list_with_more(
        &ports[..port_count.min(MAX)],
        port_count > MAX,
        port_count,
        MAX,
    );
    let addresses: Vec<String> = items(eps, "/endpoints")
        .iter()
        .flat_map(|e| items(e, "/addresses").iter().map(scalar_text))
        .collect();
    let addr_count = addresses.len();
    let endpoints_text = list_with_more(
        &addresses[..addr_count.min(MAX)],
        addr_count > MAX,
        addr_count,
        MAX,
    );
    vec![
        name(eps).into(),
        text(eps, "/addressType").into(),
        ports_text.into(),
        endpoints_text.into(),
        age(eps, now),
    ]
}

fn csr_cells(csr: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let conditions = items(csr, "/status/conditions");
    let has = |t: &str| condition(conditions, t).is_some();
    // Denied outranks Approved, as upstream's extractCSRStatus.
    let mut status = if has("Denied") {
        "Denied".to_string()
    } else if has("Approved") {
        "Approved".to_string()
    } else {
        "Pending".to_string()
    };
    if has("Failed") {
        status.push_str(",Failed");
    }
    if !text(csr, "/status/certificate").is_empty() {
        status.push_str(",Issued");
    }
    let requested = int_opt(csr, "/spec/expirationSeconds")
        .and_then(TimeDelta::try_seconds)
        .map(human_duration)
        .unwrap_or_else(|| "<none>".to_string());
    vec![
        name(csr).into(),
        age(csr, now),
        str_or(csr, "/spec/signerName", "<none>").into(),
        text(csr, "/spec/username").into(),
        requested.into(),
        status.into(),
    ]
}

// ---------------------------------------------------------------------------
// Column descriptions, from the API field docs (the swagger docs upstream
// reads them from).

const D_NAME: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
const D_CREATED: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
const D_POD_IP: &str = "podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.";
const D_POD_NOMINATED: &str = "nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods. This field does not guarantee that the pod will be scheduled on this node. Scheduler may decide to place the pod elsewhere if other nodes become available sooner. Scheduler may also decide to give the resources on this node to a higher priority pod that is created after preemption. As a result, this field may be different than PodSpec.nodeName when the pod is scheduled.";
const D_POD_NODE: &str = "NodeName indicates in which node this pod is scheduled. If empty, this pod is a candidate for scheduling by the scheduler defined in schedulerName. Once this field is set, the kubelet for this node becomes responsible for the lifecycle of this pod. This field should not be used to express a desire for the pod to be scheduled on a specific node. https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#nodename";
const D_POD_READINESS_GATES: &str = "If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to \"True\" More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates";
const D_POD_NODE_SELECTOR: &str = "NodeSelector is a selector which must be true for the pod to fit on a node. Selector which must match a node's labels for the pod to be scheduled on that node. More info: https://kubernetes.io/docs/concepts/configuration/assign-pod-node/";
const D_RC_SPEC_REPLICAS: &str = "Replicas is the number of desired replicas. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller";
const D_RC_SPEC_SELECTOR: &str = "Selector is a label query over pods that should match the Replicas count. If Selector is empty, it is defaulted to the labels present on the Pod template. Label keys and values that must match in order to be controlled by this replication controller, if empty defaulted to labels on Pod template. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors";
const D_RC_STATUS_REPLICAS: &str = "Replicas is the most recently observed number of replicas. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller";
const D_RC_STATUS_READY: &str = "The number of ready replicas for this replication controller.";
const D_RS_SPEC_REPLICAS: &str = "Replicas is the number of desired pods. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicaset";
const D_RS_SPEC_SELECTOR: &str = "Selector is a label query over pods that should match the replica count. Label keys and values that must match in order to be controlled by this replica set. It must match the pod template's labels. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors";
const D_RS_STATUS_REPLICAS: &str = "Replicas is the most recently observed number of non-terminating pods. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicaset";
const D_RS_STATUS_READY: &str =
    "The number of non-terminating pods targeted by this ReplicaSet with a Ready Condition.";
const D_DS_DESIRED: &str = "The total number of nodes that should be running the daemon pod (including nodes correctly running the daemon pod). More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/";
const D_DS_CURRENT: &str = "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod. More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/";
const D_DS_READY: &str = "numberReady is the number of nodes that should be running the daemon pod and have one or more of the daemon pod running with a Ready Condition.";
const D_DS_UPDATED: &str = "The total number of nodes that are running updated daemon pod";
const D_DS_AVAILABLE: &str = "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)";
const D_DS_SELECTOR: &str = "A label query over pods that are managed by the daemon set. Must match in order to be controlled. It must match the pod template's labels. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors";
const D_JOB_SUCCEEDED: &str = "The number of pods which reached phase Succeeded. The value increases monotonically for a given spec. However, it may decrease in reaction to scale down of elastic indexed jobs.";
const D_JOB_SELECTOR: &str = "A label query over pods that should match the pod count. Normally, the system sets this field for you. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors";
const D_CJ_SCHEDULE: &str = "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.";
const D_CJ_TIMEZONE: &str = "The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones. If not specified, this will default to the time zone of the kube-controller-manager process. The set of valid time zone names and the time zone offset is loaded from the system-wide time zone database by the API server during CronJob validation and the controller manager during execution. If no system-wide time zone database can be found a bundled version of the database is used instead. If the time zone name becomes invalid during the lifetime of a CronJob or due to a change in host configuration, the controller will stop creating new new Jobs and will create a system event with the reason UnknownTimeZone. More information can be found in https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#time-zones";
const D_CJ_SUSPEND: &str = "This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.  Defaults to false.";
const D_CJ_ACTIVE: &str = "A list of pointers to currently running jobs.";
const D_CJ_LAST_SCHEDULE: &str =
    "Information when was the last time the job was successfully scheduled.";
const D_SVC_TYPE: &str = "type determines how the Service is exposed. Defaults to ClusterIP. Valid options are ExternalName, ClusterIP, NodePort, and LoadBalancer. \"ClusterIP\" allocates a cluster-internal IP address for load-balancing to endpoints. Endpoints are determined by the selector or if that is not specified, by manual construction of an Endpoints object or EndpointSlice objects. If clusterIP is \"None\", no virtual IP is allocated and the endpoints are published as a set of endpoints rather than a virtual IP. \"NodePort\" builds on ClusterIP and allocates a port on every node which routes to the same endpoints as the clusterIP. \"LoadBalancer\" builds on NodePort and creates an external load-balancer (if supported in the current cloud) which routes to the same endpoints as the clusterIP. \"ExternalName\" aliases this service to the specified externalName. Several other fields do not apply to ExternalName services. More info: https://kubernetes.io/docs/concepts/services-networking/service/#publishing-services-service-types";
const D_SVC_CLUSTER_IP: &str = "clusterIP is the IP address of the service and is usually assigned randomly. If an address is specified manually, is in-range (as per system configuration), and is not in use, it will be allocated to the service; otherwise creation of the service will fail. This field may not be changed through updates unless the type field is also being changed to ExternalName (which requires this field to be blank) or the type field is being changed from ExternalName (in which case this field may optionally be specified, as describe above).  Valid values are \"None\", empty string (\"\"), or a valid IP address. Setting this to \"None\" makes a \"headless service\" (no virtual IP), which is useful when direct endpoint connections are preferred and proxying is not required.  Only applies to types ClusterIP, NodePort, and LoadBalancer. If this field is specified when creating a Service of type ExternalName, creation will fail. This field will be wiped when updating a Service to type ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies";
const D_SVC_EXTERNAL_IPS: &str = "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.  These IPs are not managed by Kubernetes.  The user is responsible for ensuring that traffic arrives at a node with this IP.  A common example is external load-balancers that are not part of the Kubernetes system.";
const D_SVC_PORTS: &str = "The list of ports that are exposed by this service. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies";
const D_SVC_SELECTOR: &str = "Route service traffic to pods with label keys and values matching this selector. If empty or not present, the service is assumed to have an external process managing its endpoints, which Kubernetes will not modify. Only applies to types ClusterIP, NodePort, and LoadBalancer. Ignored if type is ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/";
const D_EP_SUBSETS: &str = "The set of all endpoints is the union of all subsets. Addresses are placed into subsets according to the IPs they share. A single address with multiple ports, some of which are ready and some of which are not (because they come from different containers) will result in the address being displayed in different subsets for the different ports. No address will appear in both Addresses and NotReadyAddresses in the same subset. Sets of addresses and ports that comprise a service.";
const D_NODE_KUBELET: &str = "Kubelet Version reported by the node.";
const D_NODE_OS_IMAGE: &str =
    "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).";
const D_NODE_KERNEL: &str =
    "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).";
const D_NODE_RUNTIME: &str = "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).";
const D_NODE_ADDRESSES: &str = "List of addresses reachable to the node. Queried from cloud provider, if available. More info: https://kubernetes.io/docs/reference/node/node-status/#addresses Note: This field is declared as mergeable, but the merge key is not sufficiently unique, which can cause data corruption when it is merged. Callers should instead use a full-replacement patch. See https://pr.k8s.io/79391 for an example. Consumers should assume that addresses can change during the lifetime of a Node. However, there are some exceptions where this may not be possible, such as Pods that inherit a Node's address in its own status or consumers of the downward API (status.hostIP).";
const D_EV_LAST: &str = "The time at which the most recent occurrence of this event was recorded.";
const D_EV_TYPE: &str =
    "Type of this event (Normal, Warning), new types could be added in the future";
const D_EV_REASON: &str = "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.";
const D_EV_OBJECT: &str = "The object that this event is about.";
const D_EV_SOURCE: &str =
    "The component reporting this event. Should be a short machine understandable string.";
const D_EV_MESSAGE: &str = "A human-readable description of the status of this operation.";
const D_EV_FIRST: &str =
    "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)";
const D_EV_COUNT: &str = "The number of times this event has occurred.";
const D_OBJREF_FIELD_PATH: &str = "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: \"spec.containers{name}\" (where \"name\" refers to the name of the container that triggered the event) or if no container name is specified \"spec.containers[2]\" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.";
const D_SECRET_TYPE: &str = "Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types";
const D_SECRET_DATA: &str = "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4";
const D_SA_SECRETS: &str = "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use. Pods are only limited to this list if this service account has a \"kubernetes.io/enforce-mountable-secrets\" annotation set to \"true\". The \"kubernetes.io/enforce-mountable-secrets\" annotation is deprecated since v1.32. Prefer separate namespaces to isolate access to mounted secrets. This field should not be used to find auto-generated service account token secrets for use outside of pods. Instead, tokens can be requested directly using the TokenRequest API, or service account token secrets can be manually created. More info: https://kubernetes.io/docs/concepts/configuration/secret";
const D_PV_CAPACITY: &str = "capacity is the description of the persistent volume's resources and capacity. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#capacity";
const D_PV_ACCESS: &str = "accessModes contains all ways the volume can be mounted. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes";
const D_PV_RECLAIM: &str = "persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim. Valid options are Retain (default for manually created PersistentVolumes), Delete (default for dynamically provisioned PersistentVolumes), and Recycle (deprecated). Recycle must be supported by the volume plugin underlying this PersistentVolume. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#reclaiming";
const D_PV_CLAIM: &str = "claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim. Expected to be non-nil when bound. claim.VolumeName is the authoritative bind between PV and PVC. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#binding";
const D_PV_VOLUME_MODE: &str = "volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state. Value of Filesystem is implied when not included in spec.";
const D_PV_PHASE: &str = "phase indicates if a volume is available, bound to a claim, or released by a claim. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#phase";
const D_PV_REASON: &str = "reason is a brief CamelCase string that describes any failure and is meant for machine parsing and tidy display in the CLI.";
const D_PVC_PHASE: &str = "phase represents the current phase of PersistentVolumeClaim.";
const D_PVC_CAPACITY: &str = "capacity represents the actual resources of the underlying volume.";
const D_PVC_ACCESS: &str = "accessModes contains the actual access modes the volume backing the PVC has. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes-1";
const D_PVC_VOLUME: &str =
    "volumeName is the binding reference to the PersistentVolume backing this claim.";
const D_PVC_VOLUME_MODE: &str = "volumeMode defines what type of volume is required by the claim. Value of Filesystem is implied when not included in claim spec.";
const D_DEPLOY_UPDATED: &str = "Total number of non-terminating pods targeted by this deployment that have the desired template spec.";
const D_DEPLOY_AVAILABLE: &str = "Total number of available non-terminating pods (ready for at least minReadySeconds) targeted by this deployment.";
const D_DEPLOY_SELECTOR: &str = "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment. It must match the pod template's labels.";
const D_HPA_REF: &str = "scaleTargetRef points to the target resource to scale, and is used to the pods for which metrics should be collected, as well as to actually change the replica count.";
const D_HPA_METRICS: &str = "metrics contains the specifications for which to use to calculate the desired replica count (the maximum replica count across all metrics will be used).  The desired replica count is calculated multiplying the ratio between the target value and the current value by the current number of pods.  Ergo, metrics used must decrease as the pod count is increased, and vice-versa.  See the individual metric source types for more information about how each type of metric must respond. If not set, the default metric will be set to 80% average CPU utilization.";
const D_HPA_MIN: &str = "minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.  It defaults to 1 pod.  minReplicas is allowed to be 0 if the alpha feature gate HPAScaleToZero is enabled and at least one Object or External metric is configured.  Scaling is active as long as at least one metric value is available.";
const D_HPA_MAX: &str = "maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up. It cannot be less that minReplicas.";
const D_HPA_CURRENT: &str = "currentReplicas is current number of replicas of pods managed by this autoscaler, as last seen by the autoscaler.";
const D_CM_DATA: &str = "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.";
const D_NETPOL_POD_SELECTOR: &str = "podSelector selects the pods to which this NetworkPolicy object applies. The array of ingress rules is applied to any pods selected by this field. Multiple network policies can select the same set of pods. In this case, the ingress rules for each are combined additively. This field is NOT optional and follows standard label selector semantics. An empty podSelector matches all pods in this namespace.";
const D_RB_ROLE_REF: &str = "RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error. This field is immutable.";
const D_CRB_ROLE_REF: &str = "RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error. This field is immutable.";
const D_CSR_SIGNER: &str = "signerName indicates the requested signer, and is a qualified name.\n\nList/watch requests for CertificateSigningRequests can filter on this field using a \"spec.signerName=NAME\" fieldSelector.\n\nWell-known Kubernetes signers are:\n1. \"kubernetes.io/kube-apiserver-client\": issues client certificates that can be used to authenticate to kube-apiserver.\nRequests for this signer are never auto-approved by kube-controller-manager, can be issued by the \"csrsigning\" controller in kube-controller-manager.\n2. \"kubernetes.io/kube-apiserver-client-kubelet\": issues client certificates that kubelets use to authenticate to kube-apiserver.\nRequests for this signer can be auto-approved by the \"csrapproving\" controller in kube-controller-manager, and can be issued by the \"csrsigning\" controller in kube-controller-manager.\n3. \"kubernetes.io/kubelet-serving\" issues serving certificates that kubelets use to serve TLS endpoints, which kube-apiserver can connect to securely.\nRequests for this signer are never auto-approved by kube-controller-manager, and can be issued by the \"csrsigning\" controller in kube-controller-manager.\n\nMore details are available at https://k8s.io/docs/reference/access-authn-authz/certificate-signing-requests/#kubernetes-signers\n\nCustom signerNames can also be specified. The signer defines:\n1. Trust distribution: how trust (CA bundles) are distributed.\n2. Permitted subjects: and behavior when a disallowed subject is requested.\n3. Required, permitted, or forbidden x509 extensions in the request (including whether subjectAltNames are allowed, which types, restrictions on allowed values) and behavior when a disallowed extension is requested.\n4. Required, permitted, or forbidden key usages / extended key usages.\n5. Expiration/certificate lifetime: whether it is fixed by the signer, configurable by the admin.\n6. Whether or not requests for CA certificates are allowed.";
const D_CSR_REQUEST: &str = "request contains an x509 certificate signing request encoded in a \"CERTIFICATE REQUEST\" PEM block. When serialized as JSON or YAML, the data is additionally base64-encoded.";
const D_CSR_EXPIRATION: &str = "expirationSeconds is the requested duration of validity of the issued certificate. The certificate signer may issue a certificate with a different validity duration so a client must check the delta between the notBefore and and notAfter fields in the issued certificate to determine the actual duration.\n\nThe v1.22+ in-tree implementations of the well-known Kubernetes signers will honor this field as long as the requested duration is not greater than the maximum duration they will honor per the --cluster-signing-duration CLI flag to the Kubernetes controller manager.\n\nCertificate signers may not honor this field for various reasons:\n\n1. Old signer that is unaware of the field (such as the in-tree\nimplementations prior to v1.22)\n2. Signer whose configured maximum is shorter than the requested duration\n3. Signer whose configured minimum is longer than the requested duration\n\nThe minimum valid value for expirationSeconds is 600, i.e. 10 minutes.";
const D_CSR_CONDITIONS: &str = "conditions applied to the request. Known conditions are \"Approved\", \"Denied\", and \"Failed\".";
const D_LEASE_HOLDER: &str = "holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field.";
const D_SC_PROVISIONER: &str = "provisioner indicates the type of the provisioner.";
const D_SC_RECLAIM: &str = "reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes of this storage class. Defaults to Delete.";
const D_SC_BINDING_MODE: &str = "volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound.  When unset, VolumeBindingImmediate is used. This field is only honored by servers that enable the VolumeScheduling feature.";
const D_SC_EXPANSION: &str =
    "allowVolumeExpansion shows whether the storage class allow volume expand.";
const D_CR_REVISION: &str = "Revision indicates the revision of the state represented by Data.";
const D_PC_VALUE: &str = "value represents the integer value of this priority class. This is the actual priority that pods receive when they have the name of this class in their pod spec.";
const D_PC_GLOBAL_DEFAULT: &str = "globalDefault specifies whether this PriorityClass should be considered as the default priority for pods that do not have any priority class. Only one PriorityClass can be marked as `globalDefault`. However, if more than one PriorityClasses exists with their `globalDefault` field set to true, the smallest value of such global default PriorityClasses will be used as the default priority.";
const D_PC_PREEMPTION: &str = "preemptionPolicy is the Policy for preempting pods with lower priority. One of Never, PreemptLowerPriority. Defaults to PreemptLowerPriority if unset.";
const D_VA_ATTACHER: &str = "attacher indicates the name of the volume driver that MUST handle this request. This is the name returned by GetPluginName().";
const D_VA_NODE: &str = "nodeName represents the node that the volume should be attached to.";
const D_VA_PV: &str =
    "persistentVolumeName represents the name of the persistent volume to attach.";
const D_VA_ATTACHED: &str = "attached indicates the volume is successfully attached. This field must only be set by the entity completing the attach operation, i.e. the external-attacher.";
const D_EPS_ADDRESS_TYPE: &str = "addressType specifies the type of address carried by this EndpointSlice. All addresses in this slice must be the same type. This field is immutable after creation. The following address types are currently supported: * IPv4: Represents an IPv4 Address. * IPv6: Represents an IPv6 Address. * FQDN: Represents a Fully Qualified Domain Name. (Deprecated) The EndpointSlice controller only generates, and kube-proxy only processes, slices of addressType \"IPv4\" and \"IPv6\". No semantics are defined for the \"FQDN\" type.";
const D_EPS_PORTS: &str = "ports specifies the list of network ports exposed by each endpoint in this slice. Each port must have a unique name. Each slice may include a maximum of 100 ports. Services always have at least 1 port, so EndpointSlices generated by the EndpointSlice controller will likewise always have at least 1 port. EndpointSlices used for other purposes may have an empty ports list.";
const D_EPS_ENDPOINTS: &str = "endpoints is a list of unique endpoints in this slice. Each slice may include a maximum of 1000 endpoints.";
const D_CSID_ATTACH: &str = "attachRequired indicates this CSI volume driver requires an attach operation (because it implements the CSI ControllerPublishVolume() method), and that the Kubernetes attach detach controller should call the attach volume interface which checks the volumeattachment status and waits until the volume is attached before proceeding to mounting. The CSI external-attacher coordinates with CSI volume driver and updates the volumeattachment status when the attach operation is complete. If the CSIDriverRegistry feature gate is enabled and the value is specified to false, the attach operation will be skipped. Otherwise the attach operation will be called.\n\nThis field is immutable.";
const D_CSID_POD_INFO: &str = "podInfoOnMount indicates this CSI volume driver requires additional pod information (like podName, podUID, etc.) during mount operations, if set to true. If set to false, pod information will not be passed on mount. Default is false.\n\nThe CSI driver specifies podInfoOnMount as part of driver deployment. If true, Kubelet will pass pod information as VolumeContext in the CSI NodePublishVolume() calls. The CSI driver is responsible for parsing and validating the information passed in as VolumeContext.\n\nThe following VolumeContext will be passed if podInfoOnMount is set to true. This list might grow, but the prefix will be used. \"csi.storage.k8s.io/pod.name\": pod.Name \"csi.storage.k8s.io/pod.namespace\": pod.Namespace \"csi.storage.k8s.io/pod.uid\": string(pod.UID) \"csi.storage.k8s.io/ephemeral\": \"true\" if the volume is an ephemeral inline volume\ndefined by a CSIVolumeSource, otherwise \"false\"\n\n\"csi.storage.k8s.io/ephemeral\" is a new feature in Kubernetes 1.16. It is only required for drivers which support both the \"Persistent\" and \"Ephemeral\" VolumeLifecycleMode. Other drivers can leave pod info disabled and/or ignore this field. As Kubernetes 1.15 doesn't support this field, drivers can only support one mode when deployed on such a cluster and the deployment determines which mode that is, for example via a command line parameter of the driver.\n\nThis field was immutable in Kubernetes < 1.29 and now is mutable.";
const D_CSID_CAPACITY: &str = "storageCapacity indicates that the CSI volume driver wants pod scheduling to consider the storage capacity that the driver deployment will report by creating CSIStorageCapacity objects with capacity information, if set to true.\n\nThe check can be enabled immediately when deploying a driver. In that case, provisioning new volumes with late binding will pause until the driver deployment has published some suitable CSIStorageCapacity object.\n\nAlternatively, the driver can be deployed with the field unset or false and it can be flipped later when storage capacity information has been published.\n\nThis field was immutable in Kubernetes <= 1.22 and now is mutable.";
const D_CSID_TOKEN: &str = "tokenRequests indicates the CSI driver needs pods' service account tokens it is mounting volume for to do necessary authentication. Kubelet will pass the tokens in VolumeContext in the CSI NodePublishVolume calls. The CSI driver should parse and validate the following VolumeContext: \"csi.storage.k8s.io/serviceAccount.tokens\": {\n\"<audience>\": {\n\"token\": <token>,\n\"expirationTimestamp\": <expiration timestamp in RFC3339>,\n},\n...\n}\n\nNote: Audience in each TokenRequest should be different and at most one token is empty string. To receive a new token after expiry, RequiresRepublish can be used to trigger NodePublishVolume periodically.";
const D_CSID_REPUBLISH: &str = "requiresRepublish indicates the CSI driver wants `NodePublishVolume` being periodically called to reflect any possible change in the mounted volume. This field defaults to false.\n\nNote: After a successful initial NodePublishVolume call, subsequent calls to NodePublishVolume should only update the contents of the volume. New mount points will not be seen by a running container.";
const D_CSID_MODES: &str = "volumeLifecycleModes defines what kind of volumes this CSI volume driver supports. The default if the list is empty is \"Persistent\", which is the usage defined by the CSI specification and implemented in Kubernetes via the usual PV/PVC mechanism.\n\nThe other mode is \"Ephemeral\". In this mode, volumes are defined inline inside the pod spec with CSIVolumeSource and their lifecycle is tied to the lifecycle of that pod. A driver has to be aware of this because it is only going to get a NodePublishVolume call for such a volume.\n\nFor more information about implementing this mode, see https://kubernetes-csi.github.io/docs/ephemeral-local-volumes.html A driver can support one or more of these modes and more modes may be added in the future.\n\nThis field is beta. This field is immutable.";

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2024-06-01T12:00:00Z")
            .map(|t| t.with_timezone(&Utc))
            .expect("valid test timestamp")
    }

    /// An RFC 3339 timestamp `secs` seconds before `now()`.
    fn ago(secs: i64) -> String {
        (now() - TimeDelta::seconds(secs)).to_rfc3339_opts(SecondsFormat::Secs, true)
    }

    /// The kind served as `group`'s `resource`, at its preferred version.
    fn kind_of(group: &str, resource: &str) -> std::sync::Arc<dyn crate::kinds::Kind> {
        crate::kinds::builtin_resources()
            .into_iter()
            .find(|r| r.group == group && r.resource == resource)
            .map(|r| r.kind_impl)
            .unwrap_or_else(|| std::sync::Arc::new(NoPrinter))
    }

    /// A kind that prints nothing of its own, as every custom resource
    /// without printer columns.
    struct NoPrinter;
    impl crate::kinds::Kind for NoPrinter {}

    fn cells(group: &str, resource: &str, obj: Value) -> Vec<Value> {
        kind_of(group, resource).table_cells(&obj, now())
    }

    fn table_columns(group: &str, resource: &str) -> Vec<TableColumn> {
        kind_of(group, resource).table_columns()
    }

    /// The cell under the column called `column`.
    fn cell(group: &str, resource: &str, obj: Value, column: &str) -> Value {
        let idx = table_columns(group, resource)
            .iter()
            .position(|c| c.name == column)
            .expect("column exists");
        cells(group, resource, obj).swap_remove(idx)
    }

    fn dur(secs: i64) -> String {
        human_duration(TimeDelta::seconds(secs))
    }

    #[test]
    fn human_duration_boundaries() {
        assert_eq!(dur(-5), "<invalid>");
        assert_eq!(dur(-2), "<invalid>");
        assert_eq!(human_duration(TimeDelta::milliseconds(-1500)), "0s");
        assert_eq!(dur(-1), "0s");
        assert_eq!(dur(0), "0s");
        assert_eq!(dur(5), "5s");
        assert_eq!(dur(119), "119s");
        assert_eq!(dur(120), "2m");
        assert_eq!(dur(200), "3m20s");
        assert_eq!(dur(599), "9m59s");
        assert_eq!(dur(600), "10m");
        assert_eq!(dur(179 * 60 + 59), "179m");
        assert_eq!(dur(3 * 3600), "3h");
        assert_eq!(dur(3 * 3600 + 5 * 60), "3h5m");
        assert_eq!(dur(8 * 3600 - 1), "7h59m");
        assert_eq!(dur(8 * 3600), "8h");
        assert_eq!(dur(47 * 3600 + 3599), "47h");
        assert_eq!(dur(48 * 3600), "2d");
        assert_eq!(dur(51 * 3600), "2d3h");
        assert_eq!(dur(8 * 86400 - 1), "7d23h");
        assert_eq!(dur(8 * 86400), "8d");
        assert_eq!(dur(45 * 86400), "45d");
        assert_eq!(dur(2 * 365 * 86400 - 1), "729d");
        assert_eq!(dur(2 * 365 * 86400), "2y");
        assert_eq!(dur((3 * 365 + 2) * 86400), "3y2d");
        assert_eq!(dur(8 * 365 * 86400), "8y");
        assert_eq!(dur((9 * 365 + 100) * 86400), "9y");
    }

    #[test]
    fn pod_running_ready() {
        let pod = json!({
            "metadata": {"name": "web", "creationTimestamp": ago(200)},
            "spec": {"nodeName": "n1", "containers": [{"name": "a"}, {"name": "b"}]},
            "status": {
                "phase": "Running",
                "podIP": "10.0.0.5",
                "conditions": [{"type": "Ready", "status": "True"}],
                "containerStatuses": [
                    {"name": "a", "ready": true, "restartCount": 0, "state": {"running": {}}},
                    {"name": "b", "ready": true, "restartCount": 0, "state": {"running": {}}}
                ]
            }
        });
        assert_eq!(
            cells("", "pods", pod),
            vec![
                json!("web"),
                json!("2/2"),
                json!("Running"),
                json!("0"),
                json!("3m20s"),
                json!("10.0.0.5"),
                json!("n1"),
                json!("<none>"),
                json!("<none>"),
            ]
        );
    }

    #[test]
    fn pod_pending_and_container_creating() {
        let bare = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a"}]}});
        assert_eq!(cell("", "pods", bare.clone(), "Status"), json!("Pending"));
        assert_eq!(cell("", "pods", bare.clone(), "Ready"), json!("0/1"));
        assert_eq!(cell("", "pods", bare, "Age"), json!("<unknown>"));

        let creating = json!({
            "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "a"}]},
            "status": {"phase": "Pending", "containerStatuses": [
                {"name": "a", "ready": false, "restartCount": 0,
                 "state": {"waiting": {"reason": "ContainerCreating"}}}
            ]}
        });
        assert_eq!(
            cell("", "pods", creating, "Status"),
            json!("ContainerCreating")
        );
    }

    #[test]
    fn pod_completed_crashloop_and_restarts() {
        let completed = json!({
            "metadata": {"name": "job-x"},
            "spec": {"containers": [{"name": "a"}]},
            "status": {"phase": "Succeeded", "containerStatuses": [
                {"name": "a", "restartCount": 0,
                 "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}
            ]}
        });
        assert_eq!(cell("", "pods", completed, "Status"), json!("Completed"));

        let crashing = json!({
            "metadata": {"name": "bad"},
            "spec": {"containers": [{"name": "a"}]},
            "status": {"phase": "Running", "containerStatuses": [
                {"name": "a", "ready": false, "restartCount": 4,
                 "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                 "lastState": {"terminated": {"exitCode": 1, "finishedAt": ago(300)}}}
            ]}
        });
        let row = cells("", "pods", crashing);
        assert_eq!(row[1], json!("0/1"));
        assert_eq!(row[2], json!("CrashLoopBackOff"));
        assert_eq!(row[3], json!("4 (5m ago)"));

        let no_reason = json!({
            "metadata": {"name": "sig"},
            "spec": {"containers": [{"name": "a"}]},
            "status": {"phase": "Failed", "containerStatuses": [
                {"name": "a", "state": {"terminated": {"exitCode": 137, "signal": 9}}}
            ]}
        });
        assert_eq!(cell("", "pods", no_reason, "Status"), json!("Signal:9"));
    }

    #[test]
    fn pod_terminating_and_node_lost() {
        let mut pod = json!({
            "metadata": {"name": "p", "deletionTimestamp": ago(1)},
            "spec": {"containers": [{"name": "a"}]},
            "status": {"phase": "Running", "containerStatuses": [
                {"name": "a", "ready": true, "state": {"running": {}}}
            ]}
        });
        assert_eq!(
            cell("", "pods", pod.clone(), "Status"),
            json!("Terminating")
        );
        pod["status"]["reason"] = json!("NodeLost");
        assert_eq!(cell("", "pods", pod.clone(), "Status"), json!("Unknown"));
        pod["status"]["reason"] = Value::Null;
        pod["status"]["phase"] = json!("Succeeded");
        pod["status"]["containerStatuses"] = json!([
            {"name": "a", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}
        ]);
        assert_eq!(cell("", "pods", pod, "Status"), json!("Completed"));
    }

    #[test]
    fn pod_init_containers_and_sidecars() {
        let init = json!({
            "metadata": {"name": "p"},
            "spec": {"initContainers": [{"name": "i1"}, {"name": "i2"}],
                     "containers": [{"name": "a"}]},
            "status": {"phase": "Pending", "initContainerStatuses": [
                {"name": "i1", "state": {"terminated": {"exitCode": 0}}},
                {"name": "i2", "state": {"running": {}}}
            ]}
        });
        assert_eq!(cell("", "pods", init, "Status"), json!("Init:1/2"));

        let init_failed = json!({
            "metadata": {"name": "p"},
            "spec": {"initContainers": [{"name": "i1"}], "containers": [{"name": "a"}]},
            "status": {"phase": "Pending", "initContainerStatuses": [
                {"name": "i1", "restartCount": 2,
                 "state": {"waiting": {"reason": "CrashLoopBackOff"}}}
            ]}
        });
        let row = cells("", "pods", init_failed);
        assert_eq!(row[2], json!("Init:CrashLoopBackOff"));
        assert_eq!(row[3], json!("2"));

        let sidecar = json!({
            "metadata": {"name": "p"},
            "spec": {"initContainers": [{"name": "proxy", "restartPolicy": "Always"}],
                     "containers": [{"name": "a"}]},
            "status": {
                "phase": "Running",
                "conditions": [{"type": "Initialized", "status": "True"},
                               {"type": "Ready", "status": "True"}],
                "initContainerStatuses": [
                    {"name": "proxy", "started": true, "ready": true, "restartCount": 1,
                     "state": {"running": {}}}
                ],
                "containerStatuses": [
                    {"name": "a", "ready": true, "restartCount": 0, "state": {"running": {}}}
                ]
            }
        });
        let row = cells("", "pods", sidecar);
        assert_eq!(row[1], json!("2/2"));
        assert_eq!(row[2], json!("Running"));
        assert_eq!(row[3], json!("1"));
    }

    #[test]
    fn pod_wide_columns() {
        let pod = json!({
            "metadata": {"name": "p"},
            "spec": {"containers": [], "readinessGates": [
                {"conditionType": "www.example.com/gate-1"},
                {"conditionType": "www.example.com/gate-2"}
            ]},
            "status": {
                "podIPs": [{"ip": "fd00::1"}, {"ip": "10.0.0.1"}],
                "nominatedNodeName": "n2",
                "conditions": [{"type": "www.example.com/gate-1", "status": "True"}]
            }
        });
        let row = cells("", "pods", pod);
        assert_eq!(row[5], json!("fd00::1"));
        assert_eq!(row[6], json!("<none>"));
        assert_eq!(row[7], json!("n2"));
        assert_eq!(row[8], json!("1/2"));
    }

    #[test]
    fn service_ports_and_external_ip() {
        let svc = json!({
            "metadata": {"name": "web", "creationTimestamp": ago(45 * 86400)},
            "spec": {
                "type": "NodePort",
                "clusterIP": "10.96.0.10",
                "clusterIPs": ["10.96.0.10"],
                "selector": {"app": "web", "tier": "fe"},
                "ports": [
                    {"port": 80, "nodePort": 30080, "protocol": "TCP"},
                    {"port": 53, "protocol": "UDP"},
                    {"port": 8080}
                ]
            }
        });
        assert_eq!(
            cells("", "services", svc),
            vec![
                json!("web"),
                json!("NodePort"),
                json!("10.96.0.10"),
                json!("<none>"),
                json!("80:30080/TCP,53/UDP,8080/TCP"),
                json!("45d"),
                json!("app=web,tier=fe"),
            ]
        );

        let bare = json!({"metadata": {"name": "x"}});
        let row = cells("", "services", bare);
        assert_eq!(row[1], json!("ClusterIP"));
        assert_eq!(row[2], json!("<none>"));
        assert_eq!(row[3], json!("<none>"));
        assert_eq!(row[4], json!("<none>"));
        assert_eq!(row[6], json!("<none>"));

        let external = json!({"metadata": {"name": "x"},
            "spec": {"type": "ClusterIP", "externalIPs": ["1.2.3.4", "5.6.7.8"]}});
        assert_eq!(
            cell("", "services", external, "External-IP"),
            json!("1.2.3.4,5.6.7.8")
        );

        let pending = json!({"metadata": {"name": "x"}, "spec": {"type": "LoadBalancer"}});
        assert_eq!(
            cell("", "services", pending, "External-IP"),
            json!("<pending>")
        );

        let lb = json!({"metadata": {"name": "x"},
        "spec": {"type": "LoadBalancer", "externalIPs": ["9.9.9.9"]},
        "status": {"loadBalancer": {"ingress": [
            {"ip": "203.0.113.7"}, {"hostname": "a-very-long-lb.example.com"}, {"ip": "203.0.113.7"}
        ]}}});
        assert_eq!(
            cell("", "services", lb, "External-IP"),
            json!("203.0.113.7,a-very-long-lb.example.com,9.9.9.9")
        );

        let ext_name = json!({"metadata": {"name": "x"},
            "spec": {"type": "ExternalName", "externalName": "db.example.com"}});
        assert_eq!(
            cell("", "services", ext_name, "External-IP"),
            json!("db.example.com")
        );
    }

    #[test]
    fn deployment_ready_ratio() {
        let d = json!({
            "metadata": {"name": "api", "creationTimestamp": ago(90)},
            "spec": {
                "replicas": 3,
                "selector": {"matchLabels": {"app": "api"},
                             "matchExpressions": [{"key": "env", "operator": "In", "values": ["prod", "canary"]}]},
                "template": {"spec": {"containers": [
                    {"name": "api", "image": "api:1"}, {"name": "log", "image": "fluent:2"}
                ]}}
            },
            "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}
        });
        assert_eq!(
            cells("apps", "deployments", d),
            vec![
                json!("api"),
                json!("2/3"),
                json!(3),
                json!(2),
                json!("90s"),
                json!("api,log"),
                json!("api:1,fluent:2"),
                json!("app=api,env in (canary,prod)"),
            ]
        );
        let bare = json!({"metadata": {"name": "d"}});
        let row = cells("apps", "deployments", bare);
        assert_eq!(row[1], json!("0/1"));
        assert_eq!(row[7], json!(""));
        let invalid = json!({"metadata": {"name": "d"},
            "spec": {"selector": {"matchExpressions": [{"key": "k", "operator": "Bogus"}]}}});
        assert_eq!(
            cell("apps", "deployments", invalid, "Selector"),
            json!("<invalid>")
        );
    }

    #[test]
    fn configmap_and_secret() {
        let cm = json!({"metadata": {"name": "cfg"},
            "data": {"a": "1", "b": "2"}, "binaryData": {"c": "AA=="}});
        assert_eq!(cell("", "configmaps", cm, "Data"), json!(3));
        assert_eq!(
            cell("", "configmaps", json!({"metadata": {"name": "e"}}), "Data"),
            json!(0)
        );

        let secret = json!({"metadata": {"name": "tls", "creationTimestamp": ago(5)},
            "type": "kubernetes.io/tls", "data": {"tls.crt": "", "tls.key": ""}});
        assert_eq!(
            cells("", "secrets", secret),
            vec![
                json!("tls"),
                json!("kubernetes.io/tls"),
                json!(2),
                json!("5s")
            ]
        );
        let bare = json!({"metadata": {"name": "s"}});
        assert_eq!(cell("", "secrets", bare, "Type"), json!("Opaque"));
    }

    #[test]
    fn namespace_status() {
        let ns = json!({"metadata": {"name": "dev"}, "status": {"phase": "Terminating"}});
        assert_eq!(
            cells("", "namespaces", ns),
            vec![json!("dev"), json!("Terminating"), json!("<unknown>")]
        );
        let active = json!({"metadata": {"name": "default"}, "status": {"phase": "Active"}});
        assert_eq!(cell("", "namespaces", active, "Status"), json!("Active"));
    }

    #[test]
    fn default_columns_for_unknown_resource() {
        let cols = table_columns("example.com", "widgets");
        let names: Vec<&str> = cols.iter().map(|c| c.name).collect();
        assert_eq!(names, vec!["Name", "Created At"]);
        assert_eq!(cols[0].format, "name");
        assert_eq!(cols[1].type_, "date");
        let obj = json!({"metadata": {"name": "w", "creationTimestamp": "2024-01-02T03:04:05Z"}});
        assert_eq!(
            cells("example.com", "widgets", obj),
            vec![json!("w"), json!("2024-01-02T03:04:05Z")]
        );
        assert_eq!(
            cells("example.com", "widgets", json!({})),
            vec![json!(""), json!("0001-01-01T00:00:00Z")]
        );
        // Resources upstream also leaves to the default convertor.
        for (g, r) in [
            ("", "limitranges"),
            ("rbac.authorization.k8s.io", "roles"),
            ("rbac.authorization.k8s.io", "clusterroles"),
        ] {
            assert_eq!(table_columns(g, r).len(), 2, "{g}/{r}");
        }
    }

    #[test]
    fn column_serialization() {
        let col = &table_columns("", "pods")[5];
        let v = serde_json::to_value(col).expect("serializes");
        assert_eq!(v["name"], json!("IP"));
        assert_eq!(v["type"], json!("string"));
        assert_eq!(v["format"], json!(""));
        assert_eq!(v["priority"], json!(1));
        assert!(v["description"].as_str().is_some_and(|d| !d.is_empty()));
    }

    #[test]
    fn endpoints_nodes_events() {
        let ep = json!({"metadata": {"name": "web"}, "subsets": [
            {"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}, {"ip": "fd00::3"}],
             "ports": [{"port": 80}, {"port": 443}]}
        ]});
        assert_eq!(
            cell("", "endpoints", ep, "Endpoints"),
            json!("10.0.0.1:80,10.0.0.2:80,[fd00::3]:80 + 3 more...")
        );
        assert_eq!(
            cell(
                "",
                "endpoints",
                json!({"metadata": {"name": "e"}}),
                "Endpoints"
            ),
            json!("<none>")
        );

        let node = json!({
            "metadata": {"name": "n1", "labels": {
                "node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "infra"}},
            "spec": {"unschedulable": true},
            "status": {
                "conditions": [{"type": "Ready", "status": "False"}],
                "addresses": [{"type": "InternalIP", "address": "192.168.1.10"}],
                "nodeInfo": {"kubeletVersion": "v1.33.0", "osImage": "Debian"}
            }
        });
        assert_eq!(
            cells("", "nodes", node),
            vec![
                json!("n1"),
                json!("NotReady,SchedulingDisabled"),
                json!("control-plane,infra"),
                json!("<unknown>"),
                json!("v1.33.0"),
                json!("192.168.1.10"),
                json!("<none>"),
                json!("Debian"),
                json!("<unknown>"),
                json!("<unknown>"),
            ]
        );

        let ev = json!({
            "metadata": {"name": "web.17a"},
            "involvedObject": {"kind": "Pod", "name": "web", "fieldPath": "spec.containers{a}"},
            "reason": "Pulled", "type": "Normal", "message": " pulled image \n",
            "source": {"component": "kubelet", "host": "n1"},
            "firstTimestamp": ago(600), "lastTimestamp": ago(30), "count": 4
        });
        assert_eq!(
            cells("", "events", ev),
            vec![
                json!("30s"),
                json!("Normal"),
                json!("Pulled"),
                json!("pod/web"),
                json!("spec.containers{a}"),
                json!("kubelet, n1"),
                json!("pulled image"),
                json!("10m"),
                json!(4),
                json!("web.17a"),
            ]
        );
        let new_api = json!({
            "metadata": {"name": "e"}, "regarding": {"kind": "Node", "name": "n1"},
            "note": "hi", "eventTime": "2024-06-01T11:59:00.000000Z",
            "reportingController": "ctrl", "type": "Warning", "reason": "R"
        });
        let row = cells("events.k8s.io", "events", new_api);
        assert_eq!(row[0], json!("60s"));
        assert_eq!(row[3], json!("node/n1"));
        assert_eq!(row[5], json!("ctrl"));
        assert_eq!(row[6], json!("hi"));
        assert_eq!(row[8], json!(1));
    }

    #[test]
    fn workloads_and_batch() {
        let job = json!({
            "metadata": {"name": "j"},
            "spec": {"completions": 3, "parallelism": 2},
            "status": {"succeeded": 3, "startTime": ago(100), "completionTime": ago(40),
                       "conditions": [{"type": "Complete", "status": "True"}]}
        });
        let row = cells("batch", "jobs", job);
        assert_eq!(row[1..4], [json!("Complete"), json!("3/3"), json!("60s")]);
        let running = json!({"metadata": {"name": "j"}, "spec": {"parallelism": 4},
            "status": {"startTime": ago(10)}});
        let row = cells("batch", "jobs", running);
        assert_eq!(
            row[1..4],
            [json!("Running"), json!("0/1 of 4"), json!("10s")]
        );

        let cj = json!({"metadata": {"name": "c"},
            "spec": {"schedule": "*/5 * * * *", "suspend": true},
            "status": {"active": [{"name": "c-1"}], "lastScheduleTime": ago(120)}});
        let row = cells("batch", "cronjobs", cj);
        assert_eq!(
            row[1..6],
            [
                json!("*/5 * * * *"),
                json!("<none>"),
                json!("True"),
                json!(1),
                json!("2m")
            ]
        );

        let sts = json!({"metadata": {"name": "db"}, "spec": {"replicas": 3},
            "status": {"readyReplicas": 1}});
        assert_eq!(cell("apps", "statefulsets", sts, "Ready"), json!("1/3"));

        let ds = json!({"metadata": {"name": "ds"}, "spec": {
            "selector": {"matchLabels": {"app": "ds"}},
            "template": {"spec": {"nodeSelector": {"kubernetes.io/os": "linux"}}}},
            "status": {"desiredNumberScheduled": 2, "numberReady": 1}});
        let row = cells("apps", "daemonsets", ds);
        assert_eq!(row[1], json!(2));
        assert_eq!(row[3], json!(1));
        assert_eq!(row[6], json!("kubernetes.io/os=linux"));
        assert_eq!(row[10], json!("app=ds"));

        let rs = json!({"metadata": {"name": "rs"}});
        let row = cells("apps", "replicasets", rs);
        assert_eq!(row[1], json!(1));
        assert_eq!(row[7], json!("<none>"));

        let cr = json!({"metadata": {"name": "web-6d4", "ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "controller": true}]},
            "revision": 2});
        assert_eq!(
            cells("apps", "controllerrevisions", cr)[1..3],
            [json!("statefulset.apps/web"), json!(2)]
        );
    }

    #[test]
    fn storage_and_quota() {
        let pv = json!({"metadata": {"name": "pv1"}, "spec": {
            "capacity": {"storage": "10Gi"},
            "accessModes": ["ReadWriteMany", "ReadWriteOnce", "ReadWriteOnce"],
            "claimRef": {"namespace": "ns", "name": "data"},
            "storageClassName": "fast"},
            "status": {"phase": "Bound"}});
        let row = cells("", "persistentvolumes", pv);
        assert_eq!(
            row[1..9],
            [
                json!("10Gi"),
                json!("RWO,RWX"),
                json!("Retain"),
                json!("Bound"),
                json!("ns/data"),
                json!("fast"),
                json!("<unset>"),
                json!("")
            ]
        );

        let pvc = json!({"metadata": {"name": "data"}, "spec": {"storageClassName": "fast"}});
        let row = cells("", "persistentvolumeclaims", pvc);
        assert_eq!(
            row[1..7],
            [
                json!("Pending"),
                json!(""),
                json!(""),
                json!(""),
                json!("fast"),
                json!("<unset>")
            ]
        );

        let rq = json!({"metadata": {"name": "q"}, "status": {
            "hard": {"pods": "10", "limits.cpu": "4", "requests.cpu": "2"},
            "used": {"pods": "3", "requests.cpu": "500m"}}});
        let row = cells("", "resourcequotas", rq);
        assert_eq!(row[1], json!("pods: 3/10, requests.cpu: 500m/2"));
        assert_eq!(row[2], json!("limits.cpu: 0/4"));

        let sa = json!({"metadata": {"name": "default"}, "secrets": [{"name": "t"}]});
        assert_eq!(cell("", "serviceaccounts", sa, "Secrets"), json!(1));
    }

    #[test]
    fn hpa_ingress_rbac() {
        let hpa = json!({"metadata": {"name": "h"}, "spec": {
            "scaleTargetRef": {"kind": "Deployment", "name": "api"},
            "minReplicas": 2, "maxReplicas": 10,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 80}}}]},
            "status": {"currentReplicas": 3, "currentMetrics": [{"type": "Resource",
                "resource": {"name": "cpu", "current": {"averageUtilization": 45}}}]}});
        let row = cells("autoscaling", "horizontalpodautoscalers", hpa);
        assert_eq!(
            row[1..6],
            [
                json!("Deployment/api"),
                json!("cpu: 45%/80%"),
                json!("2"),
                json!(10),
                json!(3)
            ]
        );
        let v1 = json!({"metadata": {"name": "h"}, "spec": {
            "scaleTargetRef": {"kind": "Deployment", "name": "api"},
            "maxReplicas": 5, "targetCPUUtilizationPercentage": 50}});
        let row = cells("autoscaling", "horizontalpodautoscalers", v1);
        assert_eq!(row[2..4], [json!("cpu: <unknown>/50%"), json!("<unset>")]);

        let ing = json!({"metadata": {"name": "i"}, "spec": {
            "ingressClassName": "nginx",
            "rules": [{"host": "a.example.com"}, {"host": "b.example.com"}],
            "tls": [{"hosts": ["a.example.com"]}]},
            "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}});
        let row = cells("networking.k8s.io", "ingresses", ing);
        assert_eq!(
            row[1..5],
            [
                json!("nginx"),
                json!("a.example.com,b.example.com"),
                json!("1.2.3.4"),
                json!("80, 443")
            ]
        );

        let rb = json!({"metadata": {"name": "rb"},
            "roleRef": {"kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "User", "name": "alice"}, {"kind": "Group", "name": "devs"},
                         {"kind": "ServiceAccount", "namespace": "ci", "name": "bot"},
                         {"kind": "User", "name": "bob"}]});
        let row = cells("rbac.authorization.k8s.io", "rolebindings", rb);
        assert_eq!(row[1], json!("ClusterRole/view"));
        assert_eq!(
            row[3..6],
            [json!("alice, bob"), json!("devs"), json!("ci/bot")]
        );
    }

    /// Every printer, fed an empty object, a bare one, and a kitchen-sink one,
    /// yields exactly one cell per column and never panics.
    #[test]
    fn every_row_matches_its_columns() {
        let resources: &[(&str, &str)] = &[
            ("", "pods"),
            ("", "podtemplates"),
            ("", "replicationcontrollers"),
            ("", "services"),
            ("", "endpoints"),
            ("", "nodes"),
            ("", "events"),
            ("events.k8s.io", "events"),
            ("", "namespaces"),
            ("", "secrets"),
            ("", "serviceaccounts"),
            ("", "configmaps"),
            ("", "persistentvolumes"),
            ("", "persistentvolumeclaims"),
            ("", "limitranges"),
            ("", "resourcequotas"),
            ("", "componentstatuses"),
            ("apps", "deployments"),
            ("apps", "replicasets"),
            ("apps", "statefulsets"),
            ("apps", "daemonsets"),
            ("apps", "controllerrevisions"),
            ("batch", "jobs"),
            ("batch", "cronjobs"),
            ("autoscaling", "horizontalpodautoscalers"),
            ("networking.k8s.io", "ingresses"),
            ("networking.k8s.io", "ingressclasses"),
            ("networking.k8s.io", "networkpolicies"),
            ("rbac.authorization.k8s.io", "roles"),
            ("rbac.authorization.k8s.io", "clusterroles"),
            ("rbac.authorization.k8s.io", "rolebindings"),
            ("rbac.authorization.k8s.io", "clusterrolebindings"),
            ("policy", "poddisruptionbudgets"),
            ("storage.k8s.io", "storageclasses"),
            ("storage.k8s.io", "csidrivers"),
            ("storage.k8s.io", "csinodes"),
            ("storage.k8s.io", "volumeattachments"),
            ("coordination.k8s.io", "leases"),
            ("scheduling.k8s.io", "priorityclasses"),
            ("node.k8s.io", "runtimeclasses"),
            ("discovery.k8s.io", "endpointslices"),
            (
                "admissionregistration.k8s.io",
                "mutatingwebhookconfigurations",
            ),
            (
                "admissionregistration.k8s.io",
                "validatingwebhookconfigurations",
            ),
            ("certificates.k8s.io", "certificatesigningrequests"),
            ("example.com", "widgets"),
        ];
        // Wrong types everywhere must degrade, not panic.
        let garbage = json!({
            "metadata": {"name": 7, "creationTimestamp": "yesterday", "labels": [1],
                         "ownerReferences": {"x": 1}, "deletionTimestamp": "x"},
            "spec": {"containers": "nope", "ports": [null, 3], "replicas": "3",
                     "selector": {"matchExpressions": [null]}, "metrics": [{"type": "Pods"}],
                     "rules": [1, 2, 3, 4, 5]},
            "status": {"containerStatuses": [{"state": {"terminated": 1}}],
                       "conditions": "x", "hard": {"cpu": 1}},
            "subsets": [{"addresses": [1], "ports": [{}]}],
            "endpoints": [{"addresses": ["a", "b", "c", "d"]}],
            "ports": [{"name": "http"}, {}, {"port": 1}, {"port": 2}]
        });
        let objects = [
            json!({}),
            json!(null),
            json!({"metadata": {"name": "x", "creationTimestamp": ago(10)}}),
            garbage,
        ];
        for (g, r) in resources {
            let cols = table_columns(g, r);
            assert!(!cols.is_empty(), "{g}/{r}");
            assert_eq!(
                cols.iter()
                    .filter(|c| c.format == "name" && c.name == "Name")
                    .count(),
                1,
                "{g}/{r}"
            );
            for obj in &objects {
                let row = cells(g, r, obj.clone());
                assert_eq!(row.len(), cols.len(), "{g}/{r} with {obj}");
            }
        }
    }
}
