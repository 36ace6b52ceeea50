//! CSIDriver (storage.k8s.io/v1): a CSI volume driver and how to call it.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::defaults::{default_pointer, default_zero, ensure_child, Object};
use crate::kinds::Kind;
use crate::printers::values::{age, boolean, get, items, name, or_none, scalar_text, text};
use crate::printers::{age_col, col, name_col, Cell, TableColumn};
use crate::registry::ResourceDef;

pub struct CSIDriver;

pub fn resources() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "storage.k8s.io",
        "v1",
        "csidrivers",
        "CSIDriver",
        false,
        Arc::new(CSIDriver),
    )]
}

impl Kind for CSIDriver {
    fn apply_defaults(&self, _version: &str, object: &mut Map<String, Value>) {
        set_defaults(object);
    }

    fn table_columns(&self) -> Vec<TableColumn> {
        vec![
            name_col(),
            col("AttachRequired", "boolean", D_CSID_ATTACH),
            col("PodInfoOnMount", "boolean", D_CSID_POD_INFO),
            col("StorageCapacity", "boolean", D_CSID_CAPACITY),
            col("TokenRequests", "string", D_CSID_TOKEN),
            col("RequiresRepublish", "boolean", D_CSID_REPUBLISH),
            col("Modes", "string", D_CSID_MODES),
            age_col(),
        ]
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        cells(object)
    }
}

/// storage/v1 `SetDefaults_CSIDriver` (SELinuxMountReadWriteOncePod is on by
/// default in 1.32, so seLinuxMount is defaulted too).
fn set_defaults(driver: &mut Object) {
    let Some(spec) = ensure_child(driver, "spec") else {
        return;
    };
    default_pointer(spec, "attachRequired", json!(true));
    default_pointer(spec, "podInfoOnMount", json!(false));
    default_pointer(spec, "storageCapacity", json!(false));
    default_pointer(spec, "fsGroupPolicy", json!("ReadWriteOnceWithFSType"));
    default_zero(spec, "volumeLifecycleModes", json!(["Persistent"]));
    default_pointer(spec, "requiresRepublish", json!(false));
    default_pointer(spec, "seLinuxMount", json!(false));
}

const D_CSID_ATTACH: &str = "attachRequired indicates this CSI volume driver requires an attach operation (because it implements the CSI ControllerPublishVolume() method), and that the Kubernetes attach detach controller should call the attach volume interface which checks the volumeattachment status and waits until the volume is attached before proceeding to mounting. The CSI external-attacher coordinates with CSI volume driver and updates the volumeattachment status when the attach operation is complete. If the CSIDriverRegistry feature gate is enabled and the value is specified to false, the attach operation will be skipped. Otherwise the attach operation will be called.\n\nThis field is immutable.";
const D_CSID_POD_INFO: &str = "podInfoOnMount indicates this CSI volume driver requires additional pod information (like podName, podUID, etc.) during mount operations, if set to true. If set to false, pod information will not be passed on mount. Default is false.\n\nThe CSI driver specifies podInfoOnMount as part of driver deployment. If true, Kubelet will pass pod information as VolumeContext in the CSI NodePublishVolume() calls. The CSI driver is responsible for parsing and validating the information passed in as VolumeContext.\n\nThe following VolumeContext will be passed if podInfoOnMount is set to true. This list might grow, but the prefix will be used. \"csi.storage.k8s.io/pod.name\": pod.Name \"csi.storage.k8s.io/pod.namespace\": pod.Namespace \"csi.storage.k8s.io/pod.uid\": string(pod.UID) \"csi.storage.k8s.io/ephemeral\": \"true\" if the volume is an ephemeral inline volume\ndefined by a CSIVolumeSource, otherwise \"false\"\n\n\"csi.storage.k8s.io/ephemeral\" is a new feature in Kubernetes 1.16. It is only required for drivers which support both the \"Persistent\" and \"Ephemeral\" VolumeLifecycleMode. Other drivers can leave pod info disabled and/or ignore this field. As Kubernetes 1.15 doesn't support this field, drivers can only support one mode when deployed on such a cluster and the deployment determines which mode that is, for example via a command line parameter of the driver.\n\nThis field was immutable in Kubernetes < 1.29 and now is mutable.";
const D_CSID_CAPACITY: &str = "storageCapacity indicates that the CSI volume driver wants pod scheduling to consider the storage capacity that the driver deployment will report by creating CSIStorageCapacity objects with capacity information, if set to true.\n\nThe check can be enabled immediately when deploying a driver. In that case, provisioning new volumes with late binding will pause until the driver deployment has published some suitable CSIStorageCapacity object.\n\nAlternatively, the driver can be deployed with the field unset or false and it can be flipped later when storage capacity information has been published.\n\nThis field was immutable in Kubernetes <= 1.22 and now is mutable.";
const D_CSID_TOKEN: &str = "tokenRequests indicates the CSI driver needs pods' service account tokens it is mounting volume for to do necessary authentication. Kubelet will pass the tokens in VolumeContext in the CSI NodePublishVolume calls. The CSI driver should parse and validate the following VolumeContext: \"csi.storage.k8s.io/serviceAccount.tokens\": {\n\"<audience>\": {\n\"token\": <token>,\n\"expirationTimestamp\": <expiration timestamp in RFC3339>,\n},\n...\n}\n\nNote: Audience in each TokenRequest should be different and at most one token is empty string. To receive a new token after expiry, RequiresRepublish can be used to trigger NodePublishVolume periodically.";
const D_CSID_REPUBLISH: &str = "requiresRepublish indicates the CSI driver wants `NodePublishVolume` being periodically called to reflect any possible change in the mounted volume. This field defaults to false.\n\nNote: After a successful initial NodePublishVolume call, subsequent calls to NodePublishVolume should only update the contents of the volume. New mount points will not be seen by a running container.";
const D_CSID_MODES: &str = "volumeLifecycleModes defines what kind of volumes this CSI volume driver supports. The default if the list is empty is \"Persistent\", which is the usage defined by the CSI specification and implemented in Kubernetes via the usual PV/PVC mechanism.\n\nThe other mode is \"Ephemeral\". In this mode, volumes are defined inline inside the pod spec with CSIVolumeSource and their lifecycle is tied to the lifecycle of that pod. A driver has to be aware of this because it is only going to get a NodePublishVolume call for such a volume.\n\nFor more information about implementing this mode, see https://kubernetes-csi.github.io/docs/ephemeral-local-volumes.html A driver can support one or more of these modes and more modes may be added in the future.\n\nThis field is beta. This field is immutable.";

fn cells(d: &Value) -> Vec<Cell> {
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
        age(d),
    ]
}
