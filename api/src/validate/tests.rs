//! Per-kind cases: invalid variants with upstream's exact field, reason and
//! message; a valid object with no errors; immutability on update.

use serde_json::{json, Value};

/// What the pipeline checks beyond the generic metadata for a new object:
/// the finalizer names and the kind's own rules.
fn validate_create(group: &str, kind: &str, object: &Value) -> Vec<FieldError> {
    let mut errs = super::meta::finalizers(object);
    errs.extend(crate::kinds::builtin(group, kind).validate_create(object));
    errs
}

fn validate_update(group: &str, kind: &str, object: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = super::meta::finalizers(object);
    errs.extend(crate::kinds::builtin(group, kind).validate_update(object, old));
    errs
}

fn validate_status_update(group: &str, kind: &str, object: &Value, old: &Value) -> Vec<FieldError> {
    crate::kinds::builtin(group, kind).validate_status_update(object, old)
}
use crate::error::FieldError;

const REQUIRED: &str = "FieldValueRequired";
const INVALID: &str = "FieldValueInvalid";
const NOT_SUPPORTED: &str = "FieldValueNotSupported";
const DUPLICATE: &str = "FieldValueDuplicate";
const FORBIDDEN: &str = "FieldValueForbidden";
const NOT_FOUND: &str = "FieldValueNotFound";

fn with(base: &Value, change: impl FnOnce(&mut Value)) -> Value {
    let mut v = base.clone();
    change(&mut v);
    v
}

#[track_caller]
fn expect(errs: Vec<FieldError>, want: &[(&str, &str, &str)]) {
    let got: Vec<(&str, &str, &str)> = errs
        .iter()
        .map(|e| (e.reason, e.field.as_str(), e.message.as_str()))
        .collect();
    assert_eq!(got, want);
}

#[track_caller]
fn create(group: &str, kind: &str, object: &Value, want: &[(&str, &str, &str)]) {
    expect(validate_create(group, kind, object), want);
}

fn pod() -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "namespace": "d"},
        "spec": {
            "containers": [{
                "name": "web", "image": "nginx:1.27",
                "ports": [{"name": "http", "containerPort": 80, "protocol": "TCP", "hostPort": 0}],
                "env": [{"name": "MODE", "value": "prod"}],
                "resources": {
                    "requests": {"cpu": "100m", "memory": "64Mi"},
                    "limits": {"cpu": "1", "memory": "128Mi"}
                },
                "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                "livenessProbe": {"httpGet": {"path": "/", "port": 80}, "successThreshold": 1},
                "imagePullPolicy": "IfNotPresent",
                "terminationMessagePolicy": "File"
            }],
            "volumes": [{"name": "data", "emptyDir": {}}],
            "restartPolicy": "Always",
            "dnsPolicy": "ClusterFirst",
            "terminationGracePeriodSeconds": 30,
            "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}]
        }
    })
}

#[test]
fn valid_pod_has_no_errors() {
    create("", "Pod", &pod(), &[]);
}

#[test]
fn pod_requires_containers_names_and_images() {
    create(
        "",
        "Pod",
        &with(&pod(), |p| p["spec"]["containers"] = json!([])),
        &[(REQUIRED, "spec.containers", "Required value")],
    );
    create(
        "",
        "Pod",
        &with(&pod(), |p| p["spec"]["containers"][0]["name"] = json!("")),
        &[(REQUIRED, "spec.containers[0].name", "Required value")],
    );
    create(
        "",
        "Pod",
        &with(&pod(), |p| p["spec"]["containers"][0]["image"] = json!("")),
        &[(REQUIRED, "spec.containers[0].image", "Required value")],
    );
}

#[test]
fn pod_container_names_are_dns_labels_and_unique() {
    create("", "Pod", &with(&pod(), |p| p["spec"]["containers"][0]["name"] = json!("Web_1")),
        &[(INVALID, "spec.containers[0].name", "Invalid value: \"Web_1\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")]);
    let twice = with(&pod(), |p| {
        let c = p["spec"]["containers"][0].clone();
        p["spec"]["containers"] = json!([c.clone(), c]);
        p["spec"]["containers"][1]["ports"] = json!([]);
    });
    create(
        "",
        "Pod",
        &twice,
        &[(
            DUPLICATE,
            "spec.containers[1].name",
            "Duplicate value: \"web\"",
        )],
    );
}

#[test]
fn pod_ports_range_names_and_protocols() {
    create(
        "",
        "Pod",
        &with(&pod(), |p| {
            p["spec"]["containers"][0]["ports"][0]["containerPort"] = json!(70000)
        }),
        &[(
            INVALID,
            "spec.containers[0].ports[0].containerPort",
            "Invalid value: 70000: must be between 1 and 65535, inclusive",
        )],
    );
    create(
        "",
        "Pod",
        &with(&pod(), |p| {
            p["spec"]["containers"][0]["ports"][0]["hostPort"] = json!(-1)
        }),
        &[(
            INVALID,
            "spec.containers[0].ports[0].hostPort",
            "Invalid value: -1: must be between 1 and 65535, inclusive",
        )],
    );
    create("", "Pod", &with(&pod(), |p| p["spec"]["containers"][0]["ports"][0]["name"] = json!("HTTP")),
        &[
            (INVALID, "spec.containers[0].ports[0].name", "Invalid value: \"HTTP\": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"),
            (INVALID, "spec.containers[0].ports[0].name", "Invalid value: \"HTTP\": must contain at least one letter (a-z)"),
        ]);
    create(
        "",
        "Pod",
        &with(&pod(), |p| {
            p["spec"]["containers"][0]["ports"][0]["protocol"] = json!("HTTP")
        }),
        &[(
            NOT_SUPPORTED,
            "spec.containers[0].ports[0].protocol",
            "Unsupported value: \"HTTP\": supported values: \"SCTP\", \"TCP\", \"UDP\"",
        )],
    );
    create(
        "",
        "Pod",
        &with(&pod(), |p| {
            p["spec"]["containers"][0]["ports"][0]["containerPort"] = json!(0)
        }),
        &[(
            REQUIRED,
            "spec.containers[0].ports[0].containerPort",
            "Required value",
        )],
    );
}

#[test]
fn pod_enums_list_upstreams_values() {
    create("", "Pod", &with(&pod(), |p| p["spec"]["restartPolicy"] = json!("Sometimes")),
        &[(NOT_SUPPORTED, "spec.restartPolicy", "Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnFailure\", \"Never\"")]);
    create("", "Pod", &with(&pod(), |p| p["spec"]["containers"][0]["imagePullPolicy"] = json!("Sometimes")),
        &[(NOT_SUPPORTED, "spec.containers[0].imagePullPolicy", "Unsupported value: \"Sometimes\": supported values: \"Always\", \"IfNotPresent\", \"Never\"")]);
    create("", "Pod", &with(&pod(), |p| p["spec"]["dnsPolicy"] = json!("Google")),
        &[(NOT_SUPPORTED, "spec.dnsPolicy", "Unsupported value: \"Google\": supported values: \"ClusterFirstWithHostNet\", \"ClusterFirst\", \"Default\", \"None\"")]);
}

#[test]
fn pod_requests_may_not_exceed_limits() {
    create(
        "",
        "Pod",
        &with(&pod(), |p| {
            p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = json!("1500m")
        }),
        &[(
            INVALID,
            "spec.containers[0].resources.requests",
            "Invalid value: \"1500m\": must be less than or equal to cpu limit of 1",
        )],
    );
    create(
        "",
        "Pod",
        &with(&pod(), |p| {
            p["spec"]["containers"][0]["resources"]["limits"]["memory"] = json!("-1Gi")
        }),
        &[(
            INVALID,
            "spec.containers[0].resources.limits[memory]",
            "Invalid value: \"-1Gi\": must be greater than or equal to 0",
        )],
    );
    create(
        "",
        "Pod",
        &with(&pod(), |p| {
            p["spec"]["containers"][0]["resources"]["limits"]["gpu"] = json!("1")
        }),
        &[
            (
                INVALID,
                "spec.containers[0].resources.limits[gpu]",
                "Invalid value: \"gpu\": must be a standard resource type or fully qualified",
            ),
            (
                INVALID,
                "spec.containers[0].resources.limits[gpu]",
                "Invalid value: \"gpu\": must be a standard resource for containers",
            ),
        ],
    );
    // Equal after canonicalisation is fine.
    create(
        "",
        "Pod",
        &with(&pod(), |p| {
            p["spec"]["containers"][0]["resources"]["requests"]["memory"] = json!("134217728")
        }),
        &[],
    );
}

#[test]
fn pod_volumes_and_mounts() {
    create(
        "",
        "Pod",
        &with(&pod(), |p| {
            p["spec"]["containers"][0]["volumeMounts"][0]["name"] = json!("missing")
        }),
        &[(
            NOT_FOUND,
            "spec.containers[0].volumeMounts[0].name",
            "Not found: \"missing\"",
        )],
    );
    create(
        "",
        "Pod",
        &with(&pod(), |p| {
            p["spec"]["volumes"][0] = json!({"name": "data"})
        }),
        &[
            (
                REQUIRED,
                "spec.volumes[0]",
                "Required value: must specify a volume type",
            ),
            (
                NOT_FOUND,
                "spec.containers[0].volumeMounts[0].name",
                "Not found: \"data\"",
            ),
        ],
    );
    create(
        "",
        "Pod",
        &with(&pod(), |p| {
            p["spec"]["volumes"][0]["hostPath"] = json!({"path": "/x"})
        }),
        &[
            (
                FORBIDDEN,
                "spec.volumes[0].hostPath",
                "Forbidden: may not specify more than 1 volume type",
            ),
            (
                NOT_FOUND,
                "spec.containers[0].volumeMounts[0].name",
                "Not found: \"data\"",
            ),
        ],
    );
}

#[test]
fn pod_probes_tolerations_and_env() {
    create(
        "",
        "Pod",
        &with(&pod(), |p| {
            p["spec"]["containers"][0]["livenessProbe"] = json!({"periodSeconds": 5})
        }),
        &[(
            REQUIRED,
            "spec.containers[0].livenessProbe",
            "Required value: must specify a handler type",
        )],
    );
    create(
        "",
        "Pod",
        &with(&pod(), |p| {
            p["spec"]["containers"][0]["livenessProbe"]["successThreshold"] = json!(2)
        }),
        &[(
            INVALID,
            "spec.containers[0].livenessProbe.successThreshold",
            "Invalid value: 2: must be 1",
        )],
    );
    create(
        "",
        "Pod",
        &with(&pod(), |p| {
            p["spec"]["tolerations"][0]["operator"] = json!("Maybe")
        }),
        &[(
            NOT_SUPPORTED,
            "spec.tolerations[0].operator",
            "Unsupported value: \"Maybe\": supported values: \"Equal\", \"Exists\"",
        )],
    );
    create("", "Pod", &with(&pod(), |p| p["spec"]["containers"][0]["env"][0]["name"] = json!("A=B")),
        &[(INVALID, "spec.containers[0].env[0].name", "Invalid value: \"A=B\": a valid environment variable name must consist only of printable ASCII characters other than '='")]);
}

#[test]
fn protobuf_zero_values_read_as_unset() {
    // hostPort 0, empty enums and false flags are what a protobuf body
    // carries for fields the client never set.
    let zeroed = with(&pod(), |p| {
        p["spec"]["containers"][0]["imagePullPolicy"] = json!("");
        p["spec"]["containers"][0]["terminationMessagePolicy"] = json!("");
        p["spec"]["restartPolicy"] = json!("");
        p["spec"]["dnsPolicy"] = json!("");
        p["spec"]["hostNetwork"] = json!(false);
    });
    create("", "Pod", &zeroed, &[]);
}

#[test]
fn pod_updates_only_change_images_and_friends() {
    let old = pod();
    let image = with(&old, |p| {
        p["spec"]["containers"][0]["image"] = json!("nginx:1.28")
    });
    expect(validate_update("", "Pod", &image, &old), &[]);
    let restart = with(&old, |p| p["spec"]["restartPolicy"] = json!("Never"));
    let errs = validate_update("", "Pod", &restart, &old);
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0].field, "spec");
    assert_eq!(errs[0].reason, FORBIDDEN);
    assert!(errs[0].message.starts_with("Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n"), "{}", errs[0].message);
    let added = with(&old, |p| {
        let c = p["spec"]["containers"][0].clone();
        p["spec"]["containers"] = json!([
            c.clone(),
            with(&c, |c| {
                c["name"] = json!("b");
                c["ports"] = json!([]);
            })
        ]);
    });
    expect(
        validate_update("", "Pod", &added, &old),
        &[(
            FORBIDDEN,
            "spec.containers",
            "Forbidden: pod updates may not add or remove containers",
        )],
    );
    let removed_toleration = with(&old, |p| p["spec"]["tolerations"] = json!([]));
    expect(
        validate_update("", "Pod", &removed_toleration, &old),
        &[(
            FORBIDDEN,
            "spec.tolerations",
            "Forbidden: existing toleration can not be modified except its tolerationSeconds",
        )],
    );
    let deadline_old = with(&old, |p| p["spec"]["activeDeadlineSeconds"] = json!(10));
    let deadline_new = with(&old, |p| p["spec"]["activeDeadlineSeconds"] = json!(20));
    expect(
        validate_update("", "Pod", &deadline_new, &deadline_old),
        &[(
            INVALID,
            "spec.activeDeadlineSeconds",
            "Invalid value: 20: must be less than or equal to previous value",
        )],
    );
}

fn template() -> Value {
    json!({
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "web", "image": "nginx"}], "restartPolicy": "Always"}
    })
}

fn deployment() -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "d"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": template(),
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600
        }
    })
}

#[test]
fn valid_workloads_have_no_errors() {
    create("apps", "Deployment", &deployment(), &[]);
    let rs = with(&deployment(), |d| {
        d["kind"] = json!("ReplicaSet");
        d["spec"].as_object_mut().unwrap().remove("strategy");
    });
    create("apps", "ReplicaSet", &rs, &[]);
    create(
        "apps",
        "DaemonSet",
        &json!({"spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template(), "updateStrategy": {"type": "RollingUpdate"}}}),
        &[],
    );
    create(
        "apps",
        "StatefulSet",
        &json!({"spec": {"serviceName": "web", "selector": {"matchLabels": {"app": "web"}}, "template": template(), "podManagementPolicy": "OrderedReady", "updateStrategy": {"type": "RollingUpdate"}}}),
        &[],
    );
    create(
        "",
        "ReplicationController",
        &json!({"spec": {"replicas": 1, "selector": {"app": "web"}, "template": template()}}),
        &[],
    );
    create("", "PodTemplate", &json!({"template": template()}), &[]);
}

#[test]
fn deployment_rejections() {
    create(
        "apps",
        "Deployment",
        &with(&deployment(), |d| d["spec"]["replicas"] = json!(-1)),
        &[(
            INVALID,
            "spec.replicas",
            "Invalid value: -1: must be greater than or equal to 0",
        )],
    );
    create("apps", "Deployment", &with(&deployment(), |d| d["spec"]["template"]["metadata"]["labels"] = json!({"app": "x"})),
        &[(INVALID, "spec.template.metadata.labels", "Invalid value: map[string]string{\"app\":\"x\"}: `selector` does not match template `labels`")]);
    create("apps", "Deployment", &with(&deployment(), |d| d["spec"]["selector"] = json!({})),
        &[(INVALID, "spec.selector", "Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment")]);
    create(
        "apps",
        "Deployment",
        &with(&deployment(), |d| {
            d["spec"]["template"]["spec"]["containers"][0]["image"] = json!("")
        }),
        &[(
            REQUIRED,
            "spec.template.spec.containers[0].image",
            "Required value",
        )],
    );
    create(
        "apps",
        "Deployment",
        &with(&deployment(), |d| {
            d["spec"]["template"]["spec"]["restartPolicy"] = json!("Never")
        }),
        &[(
            NOT_SUPPORTED,
            "spec.template.spec.restartPolicy",
            "Unsupported value: \"Never\": supported values: \"Always\"",
        )],
    );
    create("apps", "Deployment", &with(&deployment(), |d| d["spec"]["strategy"]["rollingUpdate"] = json!({"maxUnavailable": 0, "maxSurge": 0})),
        &[(INVALID, "spec.strategy.rollingUpdate.maxUnavailable", "Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}: may not be 0 when `maxSurge` is 0")]);
    create("apps", "Deployment", &with(&deployment(), |d| d["spec"]["selector"]["matchExpressions"] = json!([{"key": "tier", "operator": "In"}])),
        &[
            (REQUIRED, "spec.selector.matchExpressions[0].values", "Required value: must be specified when `operator` is 'In' or 'NotIn'"),
            (INVALID, "spec.template.metadata.labels", "Invalid value: map[string]string{\"app\":\"web\"}: `selector` does not match template `labels`"),
        ]);
    create("apps", "Deployment", &with(&deployment(), |d| d["spec"]["template"]["metadata"]["labels"]["bad key"] = json!("v")),
        &[(INVALID, "spec.template.labels", "Invalid value: \"bad key\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")]);
}

#[test]
fn selectors_are_immutable() {
    let old = deployment();
    let new = with(&old, |d| {
        d["spec"]["selector"] = json!({"matchLabels": {"app": "web2"}});
        d["spec"]["template"]["metadata"]["labels"] = json!({"app": "web2"});
    });
    expect(validate_update("apps", "Deployment", &new, &old),
        &[(INVALID, "spec.selector", "Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"web2\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable")]);
    let scaled = with(&old, |d| d["spec"]["replicas"] = json!(5));
    expect(validate_update("apps", "Deployment", &scaled, &old), &[]);
    let rs_old = with(&old, |d| d["kind"] = json!("ReplicaSet"));
    expect(validate_update("apps", "ReplicaSet", &with(&new, |d| { d["spec"].as_object_mut().unwrap().remove("strategy"); }), &rs_old).into_iter().filter(|e| e.field == "spec.selector").collect(),
        &[(INVALID, "spec.selector", "Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"web2\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable")]);
}

#[test]
fn replica_set_and_daemon_set_rejections() {
    let rs = json!({"spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}}, "template": template()}});
    create("apps", "ReplicaSet", &with(&rs, |r| r["spec"]["selector"] = json!({"matchLabels": {}})),
        &[(INVALID, "spec.selector", "Invalid value: v1.LabelSelector{MatchLabels:map[string]string{}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment")]);
    create(
        "apps",
        "ReplicaSet",
        &with(&rs, |r| r["spec"]["minReadySeconds"] = json!(-5)),
        &[(
            INVALID,
            "spec.minReadySeconds",
            "Invalid value: -5: must be greater than or equal to 0",
        )],
    );
    create(
        "apps",
        "ReplicaSet",
        &with(&rs, |r| {
            r["spec"].as_object_mut().unwrap().remove("selector");
        }),
        // A nil selector matches nothing, so the template check fails too.
        &[
            (REQUIRED, "spec.selector", "Required value"),
            (
                INVALID,
                "spec.template.metadata.labels",
                "Invalid value: map[string]string{\"app\":\"web\"}: `selector` does not match template `labels`",
            ),
        ],
    );
    let ds = json!({"spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template()}});
    create("apps", "DaemonSet", &with(&ds, |d| d["spec"]["template"]["metadata"]["labels"] = json!({"app": "other"})),
        &[(INVALID, "spec.template.metadata.labels", "Invalid value: map[string]string{\"app\":\"other\"}: `selector` does not match template `labels`")]);
    create("apps", "DaemonSet", &with(&ds, |d| d["spec"]["selector"] = json!({})),
        &[(INVALID, "spec.selector", "Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for daemonset")]);
    create(
        "apps",
        "DaemonSet",
        &with(&ds, |d| {
            d["spec"]["updateStrategy"] = json!({"type": "Whenever"})
        }),
        &[(
            NOT_SUPPORTED,
            "spec.updateStrategy",
            "Unsupported value: apps.DaemonSetUpdateStrategy{Type:\"Whenever\", RollingUpdate:(*apps.RollingUpdateDaemonSet)(nil)}: supported values: \"RollingUpdate\", \"OnDelete\"",
        )],
    );
    create(
        "apps",
        "DaemonSet",
        &with(
            &ds,
            |d| {
                d["spec"]["updateStrategy"] =
                    json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0}})
            },
        ),
        &[(
            REQUIRED,
            "spec.updateStrategy.rollingUpdate.maxUnavailable",
            "Required value: cannot be 0 when maxSurge is 0",
        )],
    );
    create("apps", "DaemonSet", &with(&ds, |d| { d["spec"].as_object_mut().unwrap().remove("selector"); }),
        &[(INVALID, "spec.template.metadata.labels", "Invalid value: map[string]string{\"app\":\"web\"}: `selector` does not match template `labels`")]);
    let ds_new = with(&ds, |d| {
        d["spec"]["selector"]["matchLabels"]["tier"] = json!("x")
    });
    let errs = validate_update("apps", "DaemonSet", &ds_new, &ds);
    assert!(errs
        .iter()
        .any(|e| e.field == "spec.selector" && e.message.ends_with("field is immutable")));
}

#[test]
fn stateful_set_rejections_and_update_rule() {
    let ss = json!({"spec": {"serviceName": "web", "replicas": 1, "selector": {"matchLabels": {"app": "web"}}, "template": template()}});
    create(
        "apps",
        "StatefulSet",
        &with(&ss, |s| s["spec"]["podManagementPolicy"] = json!("Random")),
        &[(
            INVALID,
            "spec.podManagementPolicy",
            "Invalid value: \"Random\": must be 'OrderedReady' or 'Parallel'",
        )],
    );
    create("apps", "StatefulSet", &with(&ss, |s| s["spec"]["selector"] = json!({})),
        &[(INVALID, "spec.selector", "Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for statefulset")]);
    create(
        "apps",
        "StatefulSet",
        &with(&ss, |s| {
            s["spec"]["template"]["spec"]["activeDeadlineSeconds"] = json!(5)
        }),
        &[(
            FORBIDDEN,
            "spec.template.spec.activeDeadlineSeconds",
            "Forbidden: activeDeadlineSeconds in StatefulSet is not Supported",
        )],
    );
    // 1.32 does not validate a StatefulSet's pod spec, only template metadata.
    create(
        "apps",
        "StatefulSet",
        &with(&ss, |s| {
            s["spec"]["template"]["spec"]["containers"][0]["image"] = json!("")
        }),
        &[],
    );
    create("apps", "StatefulSet", &with(&ss, |s| s["spec"]["template"]["metadata"]["labels"]["-bad"] = json!("x")),
        &[(INVALID, "spec.template.labels", "Invalid value: \"-bad\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")]);
    // 1.32 does not validate a StatefulSet's pod spec, only template metadata.
    create(
        "apps",
        "StatefulSet",
        &with(&ss, |s| {
            s["spec"]["template"]["spec"]["containers"][0]["image"] = json!("")
        }),
        &[],
    );
    create("apps", "StatefulSet", &with(&ss, |s| s["spec"]["template"]["metadata"]["labels"]["-bad"] = json!("x")),
        &[(INVALID, "spec.template.labels", "Invalid value: \"-bad\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")]);
    let renamed = with(&ss, |s| s["spec"]["serviceName"] = json!("other"));
    expect(validate_update("apps", "StatefulSet", &renamed, &ss),
        &[(FORBIDDEN, "spec", "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden")]);
    let scaled = with(&ss, |s| {
        s["spec"]["replicas"] = json!(3);
        s["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:2");
    });
    expect(validate_update("apps", "StatefulSet", &scaled, &ss), &[]);
}

#[test]
fn replication_controller_and_pod_template_rejections() {
    let rc = json!({"spec": {"replicas": 1, "selector": {"app": "web"}, "template": template()}});
    create("", "ReplicationController", &with(&rc, |r| r["spec"]["selector"] = json!({"app": "db"})),
        &[(INVALID, "spec.template.metadata.labels", "Invalid value: map[string]string{\"app\":\"web\"}: `selector` does not match template `labels`")]);
    create(
        "",
        "ReplicationController",
        &with(&rc, |r| {
            r["spec"]["template"]["spec"]["restartPolicy"] = json!("OnFailure")
        }),
        &[(
            NOT_SUPPORTED,
            "spec.template.spec.restartPolicy",
            "Unsupported value: \"OnFailure\": supported values: \"Always\"",
        )],
    );
    create(
        "",
        "ReplicationController",
        &with(&rc, |r| r["spec"]["replicas"] = json!(-2)),
        &[(
            INVALID,
            "spec.replicas",
            "Invalid value: -2: must be greater than or equal to 0",
        )],
    );
    let pt = json!({"template": template()});
    create(
        "",
        "PodTemplate",
        &with(&pt, |t| {
            t["template"]["spec"]["containers"][0]["name"] = json!("")
        }),
        &[(
            REQUIRED,
            "template.spec.containers[0].name",
            "Required value",
        )],
    );
    create(
        "",
        "PodTemplate",
        &with(&pt, |t| {
            t["template"]["spec"]["ephemeralContainers"] =
                json!([{"name": "dbg", "image": "busybox"}])
        }),
        &[(
            FORBIDDEN,
            "template.spec.ephemeralContainers",
            "Forbidden: ephemeral containers not allowed in pod template",
        )],
    );
    create(
        "",
        "PodTemplate",
        &with(
            &pt,
            |t| {
                t["template"]["spec"]["containers"][0]["ports"] =
                    json!([{"containerPort": 80, "name": "a"}, {"containerPort": 81, "name": "a"}])
            },
        ),
        &[(
            DUPLICATE,
            "template.spec.containers[0].ports[1].name",
            "Duplicate value: \"a\"",
        )],
    );
}

fn job() -> Value {
    json!({"spec": {"backoffLimit": 6, "completions": 1, "parallelism": 1, "template": {
        "metadata": {"labels": {"job": "x"}},
        "spec": {"containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "Never"}}}})
}

#[test]
fn job_rejections() {
    create("batch", "Job", &job(), &[]);
    create(
        "batch",
        "Job",
        &with(&job(), |j| {
            j["spec"]["template"]["spec"]["restartPolicy"] = json!("Always")
        }),
        &[(
            REQUIRED,
            "spec.template.spec.restartPolicy",
            "Required value: valid values: \"OnFailure\", \"Never\"",
        )],
    );
    create(
        "batch",
        "Job",
        &with(&job(), |j| j["spec"]["backoffLimit"] = json!(-1)),
        &[(
            INVALID,
            "spec.backoffLimit",
            "Invalid value: -1: must be greater than or equal to 0",
        )],
    );
    create(
        "batch",
        "Job",
        &with(&job(), |j| j["spec"]["completionMode"] = json!("Sorted")),
        &[(
            NOT_SUPPORTED,
            "spec.completionMode",
            "Unsupported value: \"Sorted\": supported values: \"NonIndexed\", \"Indexed\"",
        )],
    );
    create("batch", "Job", &with(&job(), |j| j["spec"]["selector"] = json!({"matchLabels": {"job": "y"}})),
        &[(INVALID, "spec.template.metadata.labels", "Invalid value: map[string]string{\"job\":\"x\"}: `selector` does not match template `labels`")]);
}

#[test]
fn job_template_and_selector_are_immutable() {
    let old = with(&job(), |j| {
        j["spec"]["selector"] = json!({"matchLabels": {"job": "x"}});
        j["status"] = json!({"startTime": "2024-01-01T00:00:00Z"});
    });
    let image = with(&old, |j| {
        j["spec"]["template"]["spec"]["containers"][0]["image"] = json!("alpine")
    });
    let errs = validate_update("batch", "Job", &image, &old);
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0].field, "spec.template");
    assert!(errs[0].message.ends_with(": field is immutable"));
    let completions = with(&old, |j| j["spec"]["completions"] = json!(3));
    expect(
        validate_update("batch", "Job", &completions, &old),
        &[(
            INVALID,
            "spec.completions",
            "Invalid value: 3: field is immutable",
        )],
    );
    let parallel = with(&old, |j| j["spec"]["parallelism"] = json!(4));
    expect(validate_update("batch", "Job", &parallel, &old), &[]);
    // A suspended job that never started may move its pods.
    let suspended_old = with(&job(), |j| j["spec"]["suspend"] = json!(true));
    let moved = with(&suspended_old, |j| {
        j["spec"]["template"]["spec"]["nodeSelector"] = json!({"zone": "a"})
    });
    expect(validate_update("batch", "Job", &moved, &suspended_old), &[]);
}

fn cron_job() -> Value {
    json!({"metadata": {"name": "nightly"}, "spec": {"schedule": "*/5 * * * *", "concurrencyPolicy": "Allow",
        "jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "OnFailure"}}}}}})
}

#[test]
fn cron_job_rejections() {
    create("batch", "CronJob", &cron_job(), &[]);
    for ok in [
        "@hourly",
        "0 0 * * MON-FRI",
        "15,45 */2 1-15 jan,jul *",
        "@every 1h30m",
    ] {
        create(
            "batch",
            "CronJob",
            &with(&cron_job(), |c| c["spec"]["schedule"] = json!(ok)),
            &[],
        );
    }
    create(
        "batch",
        "CronJob",
        &with(&cron_job(), |c| c["spec"]["schedule"] = json!("* * *")),
        &[(
            INVALID,
            "spec.schedule",
            "Invalid value: \"* * *\": expected exactly 5 fields, found 3: [* * *]",
        )],
    );
    create(
        "batch",
        "CronJob",
        &with(&cron_job(), |c| c["spec"]["schedule"] = json!("61 * * * *")),
        &[(
            INVALID,
            "spec.schedule",
            "Invalid value: \"61 * * * *\": end of range (61) above maximum (59): 61",
        )],
    );
    create(
        "batch",
        "CronJob",
        &with(&cron_job(), |c| c["spec"]["schedule"] = json!("@sometimes")),
        &[(
            INVALID,
            "spec.schedule",
            "Invalid value: \"@sometimes\": unrecognized descriptor: @sometimes",
        )],
    );
    create("batch", "CronJob", &with(&cron_job(), |c| c["spec"]["schedule"] = json!("x * * * *")),
        &[(INVALID, "spec.schedule", "Invalid value: \"x * * * *\": failed to parse int from x: strconv.Atoi: parsing \"x\": invalid syntax")]);
    create("batch", "CronJob", &with(&cron_job(), |c| c["spec"]["schedule"] = json!("TZ=UTC 0 * * * *")),
        &[(INVALID, "spec.schedule", "Invalid value: \"TZ=UTC 0 * * * *\": cannot use TZ or CRON_TZ in schedule, use timeZone field instead")]);
    create("batch", "CronJob", &with(&cron_job(), |c| c["spec"]["concurrencyPolicy"] = json!("Sometimes")),
        &[(NOT_SUPPORTED, "spec.concurrencyPolicy", "Unsupported value: \"Sometimes\": supported values: \"Allow\", \"Forbid\", \"Replace\"")]);
    create(
        "batch",
        "CronJob",
        &with(&cron_job(), |c| {
            c["spec"]["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"] = json!("Always")
        }),
        &[(
            REQUIRED,
            "spec.jobTemplate.spec.template.spec.restartPolicy",
            "Required value: valid values: \"OnFailure\", \"Never\"",
        )],
    );
}

#[test]
fn config_map_rules() {
    let cm = json!({"data": {"a.conf": "x"}, "binaryData": {"b.bin": "AAE="}});
    create("", "ConfigMap", &cm, &[]);
    create("", "ConfigMap", &with(&cm, |c| c["data"]["bad key"] = json!("v")),
        &[(INVALID, "data[bad key]", "Invalid value: \"bad key\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')")]);
    create(
        "",
        "ConfigMap",
        &with(&cm, |c| c["data"]["b.bin"] = json!("v")),
        &[(
            INVALID,
            "data[b.bin]",
            "Invalid value: \"b.bin\": duplicate of key present in binaryData",
        )],
    );
    create(
        "",
        "ConfigMap",
        &with(&cm, |c| c["data"][".."] = json!("v")),
        &[(
            INVALID,
            "data[..]",
            "Invalid value: \"..\": must not be '..'",
        )],
    );
    create(
        "",
        "ConfigMap",
        &with(&cm, |c| c["data"]["big"] = json!("x".repeat(1024 * 1024))),
        &[(
            "FieldValueTooLong",
            "",
            "Too long: may not be more than 1048576 bytes",
        )],
    );
    let old = with(&cm, |c| c["immutable"] = json!(true));
    let changed = with(&old, |c| c["data"]["a.conf"] = json!("y"));
    expect(
        validate_update("", "ConfigMap", &changed, &old),
        &[(
            FORBIDDEN,
            "data",
            "Forbidden: field is immutable when `immutable` is set",
        )],
    );
    let unset = with(&old, |c| c["immutable"] = json!(false));
    expect(
        validate_update("", "ConfigMap", &unset, &old),
        &[(
            FORBIDDEN,
            "immutable",
            "Forbidden: field is immutable when `immutable` is set",
        )],
    );
    expect(validate_update("", "ConfigMap", &changed, &cm), &[]);
}

#[test]
fn secret_rules() {
    let opaque = json!({"type": "Opaque", "data": {"k": "dg=="}});
    create("", "Secret", &opaque, &[]);
    create(
        "",
        "Secret",
        &json!({"type": "kubernetes.io/tls", "data": {"tls.crt": "eA=="}}),
        &[(REQUIRED, "data[tls.key]", "Required value")],
    );
    create("", "Secret", &json!({"type": "kubernetes.io/dockerconfigjson", "data": {".dockerconfigjson": "W10="}}),
        &[(INVALID, "data[.dockerconfigjson]", "Invalid value: \"<secret contents redacted>\": json: cannot unmarshal array into Go value of type map[string]interface {}")]);
    create(
        "",
        "Secret",
        &json!({"type": "kubernetes.io/service-account-token", "metadata": {"name": "t"}}),
        &[(
            REQUIRED,
            "metadata.annotations[kubernetes.io/service-account.name]",
            "Required value",
        )],
    );
    create(
        "",
        "Secret",
        &json!({"type": "kubernetes.io/basic-auth", "data": {}}),
        &[
            (REQUIRED, "data[username]", "Required value"),
            (REQUIRED, "data[password]", "Required value"),
        ],
    );
    let retyped = with(&opaque, |s| s["type"] = json!("example.com/custom"));
    expect(
        validate_update("", "Secret", &retyped, &opaque),
        &[(
            INVALID,
            "type",
            "Invalid value: \"example.com/custom\": field is immutable",
        )],
    );
    let frozen = with(&opaque, |s| s["immutable"] = json!(true));
    let changed = with(&frozen, |s| s["data"]["k"] = json!("dw=="));
    expect(
        validate_update("", "Secret", &changed, &frozen),
        &[(
            FORBIDDEN,
            "data",
            "Forbidden: field is immutable when `immutable` is set",
        )],
    );
}

#[test]
fn namespace_and_finalizer_names() {
    create(
        "",
        "Namespace",
        &json!({"spec": {"finalizers": ["kubernetes"]}}),
        &[],
    );
    create("", "Namespace", &json!({"spec": {"finalizers": ["custom"]}}),
        &[(INVALID, "spec.finalizers", "Invalid value: \"custom\": name is neither a standard finalizer name nor is it fully qualified")]);
    create("", "Namespace", &json!({"spec": {"finalizers": ["example.com/bad/x"]}}),
        &[(INVALID, "spec.finalizers", "Invalid value: \"example.com/bad/x\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")]);
    create("", "Namespace", &json!({"metadata": {"finalizers": ["orphan", "wrong"]}}),
        &[(INVALID, "metadata.finalizers[1]", "Invalid value: \"wrong\": name is neither a standard finalizer name nor is it fully qualified")]);
}

#[test]
fn service_account_checks_only_metadata() {
    create(
        "",
        "ServiceAccount",
        &json!({"metadata": {"name": "sa"}, "secrets": [{"name": "s"}]}),
        &[],
    );
    create("", "ServiceAccount", &json!({"metadata": {"finalizers": ["mine"]}}),
        &[(INVALID, "metadata.finalizers[0]", "Invalid value: \"mine\": name is neither a standard finalizer name nor is it fully qualified")]);
    create("", "ServiceAccount", &json!({"metadata": {"finalizers": ["example.com/"]}}),
        &[
            (INVALID, "metadata.finalizers[0]", "Invalid value: \"example.com/\": name part must be non-empty"),
            (INVALID, "metadata.finalizers[0]", "Invalid value: \"example.com/\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"),
        ]);
    create(
        "",
        "ServiceAccount",
        &json!({"metadata": {"finalizers": ["/x"]}}),
        &[(
            INVALID,
            "metadata.finalizers[0]",
            "Invalid value: \"/x\": prefix part must be non-empty",
        )],
    );
}

#[test]
fn node_rules() {
    let node = json!({"spec": {"podCIDRs": ["10.244.0.0/24", "fd00::/64"], "taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]}});
    create("", "Node", &node, &[]);
    create("", "Node", &with(&node, |n| n["spec"]["taints"][0]["effect"] = json!("Sometimes")),
        &[(NOT_SUPPORTED, "metadata.taints[0].effect", "Unsupported value: \"Sometimes\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"")]);
    create(
        "",
        "Node",
        &with(&node, |n| n["spec"]["taints"][0]["effect"] = json!("")),
        &[(REQUIRED, "metadata.taints[0].effect", "Required value")],
    );
    create("", "Node", &with(&node, |n| n["spec"]["podCIDRs"] = json!(["10.244.0.0/33"])),
        &[(INVALID, "spec.podCIDRs[0]", "Invalid value: \"10.244.0.0/33\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)")]);
    create("", "Node", &with(&node, |n| n["spec"]["taints"] = json!([{"key": "a", "effect": "NoSchedule"}, {"key": "a", "effect": "NoSchedule"}])),
        &[(DUPLICATE, "metadata.taints[1]", "Duplicate value: core.Taint{Key:\"a\", Value:\"\", Effect:\"NoSchedule\", TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and effect pair")]);
    create("", "Node", &with(&node, |n| n["spec"]["podCIDRs"] = json!(["10.1.0.0/24", "10.2.0.0/24"])),
        &[(INVALID, "spec.podCIDRs", "Invalid value: []string{\"10.1.0.0/24\", \"10.2.0.0/24\"}: may specify no more than one CIDR for each IP family")]);
    let moved = with(&node, |n| {
        n["spec"]["podCIDRs"] = json!(["10.9.0.0/24", "fd00::/64"])
    });
    expect(
        validate_update("", "Node", &moved, &node),
        &[(
            FORBIDDEN,
            "spec.podCIDRs",
            "Forbidden: node updates may not change podCIDR except from \"\" to valid",
        )],
    );
    let fresh = json!({"spec": {}});
    expect(validate_update("", "Node", &node, &fresh), &[]);
}

#[test]
fn persistent_volume_rules() {
    let pv = json!({"spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"], "persistentVolumeReclaimPolicy": "Retain", "hostPath": {"path": "/data"}}});
    create("", "PersistentVolume", &pv, &[]);
    create(
        "",
        "PersistentVolume",
        &with(&pv, |p| p["spec"]["accessModes"] = json!([])),
        &[(REQUIRED, "spec.accessModes", "Required value")],
    );
    create(
        "",
        "PersistentVolume",
        &with(&pv, |p| {
            p["spec"].as_object_mut().unwrap().remove("capacity");
        }),
        &[
            (REQUIRED, "spec.capacity", "Required value"),
            (
                NOT_SUPPORTED,
                "spec.capacity",
                "Unsupported value: core.ResourceList(nil): supported values: \"storage\"",
            ),
        ],
    );
    create(
        "",
        "PersistentVolume",
        &with(&pv, |p| {
            p["spec"]["nfs"] = json!({"server": "s", "path": "/x"})
        }),
        &[(
            FORBIDDEN,
            "spec.nfs",
            "Forbidden: may not specify more than 1 volume type",
        )],
    );
    create(
        "",
        "PersistentVolume",
        &with(&pv, |p| {
            p["spec"].as_object_mut().unwrap().remove("hostPath");
        }),
        &[(
            REQUIRED,
            "spec",
            "Required value: must specify a volume type",
        )],
    );
    create("", "PersistentVolume", &with(&pv, |p| p["spec"]["accessModes"] = json!(["ReadWriteSometimes"])),
        &[(NOT_SUPPORTED, "spec.accessModes", "Unsupported value: \"ReadWriteSometimes\": supported values: \"ReadOnlyMany\", \"ReadWriteMany\", \"ReadWriteOnce\", \"ReadWriteOncePod\"")]);
    create(
        "",
        "PersistentVolume",
        &with(&pv, |p| p["spec"]["capacity"]["storage"] = json!("0")),
        &[(
            INVALID,
            "spec.capacity[storage]",
            "Invalid value: \"0\": must be greater than zero",
        )],
    );
    let moved = with(&pv, |p| p["spec"]["hostPath"]["path"] = json!("/other"));
    let errs = validate_update("", "PersistentVolume", &moved, &pv);
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0].field, "spec.persistentvolumesource");
    assert!(errs[0]
        .message
        .starts_with("Forbidden: spec.persistentvolumesource is immutable after creation\n"));
}

#[test]
fn persistent_volume_claim_rules() {
    let pvc = json!({"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, "volumeMode": "Filesystem"}});
    create("", "PersistentVolumeClaim", &pvc, &[]);
    create(
        "",
        "PersistentVolumeClaim",
        &with(&pvc, |p| p["spec"]["accessModes"] = json!([])),
        &[(
            REQUIRED,
            "spec.accessModes",
            "Required value: at least 1 access mode is required",
        )],
    );
    create(
        "",
        "PersistentVolumeClaim",
        &with(&pvc, |p| p["spec"]["resources"] = json!({})),
        &[(REQUIRED, "spec.resources[storage]", "Required value")],
    );
    create(
        "",
        "PersistentVolumeClaim",
        &with(&pvc, |p| p["spec"]["volumeMode"] = json!("Raw")),
        &[(
            NOT_SUPPORTED,
            "spec.volumeMode",
            "Unsupported value: \"Raw\": supported values: \"Block\", \"Filesystem\"",
        )],
    );
    create(
        "",
        "PersistentVolumeClaim",
        &with(&pvc, |p| {
            p["spec"]["accessModes"] = json!(["ReadWriteOncePod", "ReadOnlyMany"])
        }),
        &[(
            FORBIDDEN,
            "spec.accessModes",
            "Forbidden: may not use ReadWriteOncePod with other access modes",
        )],
    );
    // Unbound claims cannot change their spec; bound ones may grow.
    let grown = with(&pvc, |p| {
        p["spec"]["resources"]["requests"]["storage"] = json!("2Gi")
    });
    let errs = validate_update("", "PersistentVolumeClaim", &grown, &pvc);
    assert_eq!(errs.len(), 1);
    assert!(errs[0].message.starts_with("Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n"));
    let bound = with(&pvc, |p| {
        p["spec"]["volumeName"] = json!("pv1");
        p["status"] = json!({"phase": "Bound", "capacity": {"storage": "1Gi"}});
    });
    let bound_grown = with(&bound, |p| {
        p["spec"]["resources"]["requests"]["storage"] = json!("2Gi")
    });
    expect(
        validate_update("", "PersistentVolumeClaim", &bound_grown, &bound),
        &[],
    );
    let bound_shrunk = with(&bound, |p| {
        p["spec"]["resources"]["requests"]["storage"] = json!("512Mi")
    });
    expect(
        validate_update("", "PersistentVolumeClaim", &bound_shrunk, &bound),
        &[(
            FORBIDDEN,
            "spec.resources.requests.storage",
            "Forbidden: field can not be less than status.capacity",
        )],
    );
    let classed = with(&bound, |p| p["spec"]["storageClassName"] = json!("fast"));
    assert_eq!(
        validate_update("", "PersistentVolumeClaim", &classed, &bound)[0].field,
        "spec"
    );
    // The binder may set volumeName once.
    let named = with(&pvc, |p| p["spec"]["volumeName"] = json!("pv1"));
    expect(
        validate_update("", "PersistentVolumeClaim", &named, &pvc),
        &[],
    );
}

const RBAC: &str = "rbac.authorization.k8s.io";

#[test]
fn role_rules() {
    let role = json!({"rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]});
    create(RBAC, "Role", &role, &[]);
    create(
        RBAC,
        "Role",
        &with(&role, |r| r["rules"][0]["verbs"] = json!([])),
        &[(
            REQUIRED,
            "rules[0].verbs",
            "Required value: verbs must contain at least one value",
        )],
    );
    create(
        RBAC,
        "Role",
        &with(&role, |r| {
            r["rules"][0].as_object_mut().unwrap().remove("apiGroups");
        }),
        &[(
            REQUIRED,
            "rules[0].apiGroups",
            "Required value: resource rules must supply at least one api group",
        )],
    );
    create(RBAC, "Role", &json!({"rules": [{"nonResourceURLs": ["/healthz"], "verbs": ["get"]}]}),
        &[(INVALID, "rules[0].nonResourceURLs", "Invalid value: []string{\"/healthz\"}: namespaced rules cannot apply to non-resource URLs")]);
    create(
        RBAC,
        "ClusterRole",
        &json!({"rules": [{"nonResourceURLs": ["/healthz"], "verbs": ["get"]}]}),
        &[],
    );
    create(RBAC, "ClusterRole", &json!({"rules": [{"nonResourceURLs": ["/x"], "resources": ["pods"], "verbs": ["get"]}]}),
        &[(INVALID, "rules[0].nonResourceURLs", "Invalid value: []string{\"/x\"}: rules cannot apply to both regular resources and non-resource URLs")]);
    create(RBAC, "ClusterRole", &json!({"aggregationRule": {"clusterRoleSelectors": []}}),
        &[(REQUIRED, "aggregationRule.clusterRoleSelectors", "Required value: at least one clusterRoleSelector required if aggregationRule is non-nil")]);
    create(
        RBAC,
        "ClusterRole",
        &json!({"rules": [{"apiGroups": ["apps"], "verbs": ["list"]}]}),
        &[(
            REQUIRED,
            "rules[0].resources",
            "Required value: resource rules must supply at least one resource",
        )],
    );
}

#[test]
fn binding_rules_and_role_ref_immutability() {
    let binding = json!({"roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "reader"},
        "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": "d"}, {"kind": "User", "name": "jane", "apiGroup": RBAC}]});
    create(RBAC, "RoleBinding", &binding, &[]);
    create(
        RBAC,
        "RoleBinding",
        &with(&binding, |b| b["roleRef"]["kind"] = json!("Pod")),
        &[(
            NOT_SUPPORTED,
            "roleRef.kind",
            "Unsupported value: \"Pod\": supported values: \"Role\", \"ClusterRole\"",
        )],
    );
    create(
        RBAC,
        "RoleBinding",
        &with(&binding, |b| b["roleRef"]["name"] = json!("")),
        &[(REQUIRED, "roleRef.name", "Required value")],
    );
    create(RBAC, "RoleBinding", &with(&binding, |b| b["subjects"][0]["kind"] = json!("Robot")),
        &[(NOT_SUPPORTED, "subjects[0].kind", "Unsupported value: \"Robot\": supported values: \"ServiceAccount\", \"User\", \"Group\"")]);
    create(
        RBAC,
        "ClusterRoleBinding",
        &with(&binding, |b| b["roleRef"]["kind"] = json!("ClusterRole")),
        &[],
    );
    create(
        RBAC,
        "ClusterRoleBinding",
        &binding,
        &[(
            NOT_SUPPORTED,
            "roleRef.kind",
            "Unsupported value: \"Role\": supported values: \"ClusterRole\"",
        )],
    );
    create(
        RBAC,
        "ClusterRoleBinding",
        &with(&binding, |b| {
            b["roleRef"]["kind"] = json!("ClusterRole");
            b["subjects"][0]
                .as_object_mut()
                .unwrap()
                .remove("namespace");
        }),
        &[(REQUIRED, "subjects[0].namespace", "Required value")],
    );
    let moved = with(&binding, |b| b["roleRef"]["name"] = json!("writer"));
    expect(validate_update(RBAC, "RoleBinding", &moved, &binding),
        &[(INVALID, "roleRef", "Invalid value: rbac.RoleRef{APIGroup:\"rbac.authorization.k8s.io\", Kind:\"Role\", Name:\"writer\"}: cannot change roleRef")]);
    let more_subjects = with(&binding, |b| b["subjects"][1]["name"] = json!("joe"));
    expect(
        validate_update(RBAC, "RoleBinding", &more_subjects, &binding),
        &[],
    );
}

const NET: &str = "networking.k8s.io";

#[test]
fn ingress_rules() {
    let ing = json!({"spec": {"rules": [{"host": "example.com", "http": {"paths": [
        {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}});
    create(NET, "Ingress", &ing, &[]);
    create(NET, "Ingress", &json!({"spec": {}}),
        &[(INVALID, "spec", "Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified")]);
    create(
        NET,
        "Ingress",
        &with(&ing, |i| {
            i["spec"]["rules"][0]["http"]["paths"][0]
                .as_object_mut()
                .unwrap()
                .remove("pathType");
        }),
        &[(
            REQUIRED,
            "spec.rules[0].http.paths[0].pathType",
            "Required value: pathType must be specified",
        )],
    );
    create(NET, "Ingress", &with(&ing, |i| i["spec"]["rules"][0]["http"]["paths"][0]["pathType"] = json!("Regex")),
        &[(NOT_SUPPORTED, "spec.rules[0].http.paths[0].pathType", "Unsupported value: \"Regex\": supported values: \"Exact\", \"ImplementationSpecific\", \"Prefix\"")]);
    create(
        NET,
        "Ingress",
        &with(&ing, |i| {
            i["spec"]["rules"][0]["http"]["paths"][0]["path"] = json!("api")
        }),
        &[(
            INVALID,
            "spec.rules[0].http.paths[0].path",
            "Invalid value: \"api\": must be an absolute path",
        )],
    );
    create(
        NET,
        "Ingress",
        &with(&ing, |i| {
            i["spec"]["rules"][0]["http"]["paths"][0]["backend"] = json!({})
        }),
        &[(
            INVALID,
            "spec.rules[0].http.paths[0].backend",
            "Invalid value: \"\": resource or service backend is required",
        )],
    );
    create(
        NET,
        "Ingress",
        &with(&ing, |i| {
            i["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["port"] = json!({})
        }),
        &[(
            REQUIRED,
            "spec.rules[0].http.paths[0].backend",
            "Required value: port name or number is required",
        )],
    );
    create(
        NET,
        "Ingress",
        &with(&ing, |i| i["spec"]["rules"][0]["host"] = json!("10.0.0.1")),
        &[(
            INVALID,
            "spec.rules[0].host",
            "Invalid value: \"10.0.0.1\": must be a DNS name, not an IP address",
        )],
    );
    create(
        NET,
        "Ingress",
        &with(&ing, |i| {
            i["spec"]["rules"][0]["host"] = json!("*.example.com")
        }),
        &[],
    );
}

#[test]
fn network_policy_rules() {
    let np = json!({"spec": {"podSelector": {"matchLabels": {"app": "db"}}, "policyTypes": ["Ingress"],
        "ingress": [{"from": [{"podSelector": {"matchLabels": {"app": "web"}}}, {"ipBlock": {"cidr": "10.0.0.0/16", "except": ["10.0.1.0/24"]}}],
            "ports": [{"protocol": "TCP", "port": 5432}, {"port": "metrics"}]}]}});
    create(NET, "NetworkPolicy", &np, &[]);
    create(
        NET,
        "NetworkPolicy",
        &with(&np, |n| {
            n["spec"]["ingress"][0]["ports"][0]["protocol"] = json!("ICMP")
        }),
        &[(
            NOT_SUPPORTED,
            "spec.ingress[0].ports[0].protocol",
            "Unsupported value: \"ICMP\": supported values: \"TCP\", \"UDP\", \"SCTP\"",
        )],
    );
    create(
        NET,
        "NetworkPolicy",
        &with(&np, |n| {
            n["spec"]["ingress"][0]["ports"][0]["port"] = json!(0)
        }),
        &[(
            INVALID,
            "spec.ingress[0].ports[0].port",
            "Invalid value: 0: must be between 1 and 65535, inclusive",
        )],
    );
    create(
        NET,
        "NetworkPolicy",
        &with(&np, |n| n["spec"]["ingress"][0]["from"][0] = json!({})),
        &[(
            REQUIRED,
            "spec.ingress[0].from[0]",
            "Required value: must specify a peer",
        )],
    );
    create(
        NET,
        "NetworkPolicy",
        &with(&np, |n| {
            n["spec"]["ingress"][0]["from"][1]["ipBlock"]["except"] = json!(["192.168.0.0/24"])
        }),
        &[(
            INVALID,
            "spec.ingress[0].from[1].ipBlock.except[0]",
            "Invalid value: \"192.168.0.0/24\": must be a strict subset of `cidr`",
        )],
    );
    create(
        NET,
        "NetworkPolicy",
        &with(&np, |n| n["spec"]["policyTypes"] = json!(["Sideways"])),
        &[(
            NOT_SUPPORTED,
            "spec.policyTypes[0]",
            "Unsupported value: \"Sideways\": supported values: \"Ingress\", \"Egress\"",
        )],
    );
    create(
        NET,
        "NetworkPolicy",
        &with(&np, |n| {
            n["spec"]["ingress"][0]["ports"][0]["endPort"] = json!(5000)
        }),
        &[(
            INVALID,
            "spec.ingress[0].ports[0].endPort",
            "Invalid value: 5432: must be greater than or equal to `port`",
        )],
    );
}

const STORAGE: &str = "storage.k8s.io";

#[test]
fn storage_class_rules() {
    let sc = json!({"provisioner": "ebs.csi.aws.com", "parameters": {"type": "gp3"}, "reclaimPolicy": "Delete", "volumeBindingMode": "WaitForFirstConsumer"});
    create(STORAGE, "StorageClass", &sc, &[]);
    create(
        STORAGE,
        "StorageClass",
        &with(&sc, |s| s["provisioner"] = json!("")),
        &[(REQUIRED, "provisioner", "Required value")],
    );
    create(
        STORAGE,
        "StorageClass",
        &with(&sc, |s| s["reclaimPolicy"] = json!("Recycle")),
        &[(
            NOT_SUPPORTED,
            "reclaimPolicy",
            "Unsupported value: \"Recycle\": supported values: \"Delete\", \"Retain\"",
        )],
    );
    create(STORAGE, "StorageClass", &with(&sc, |s| s["volumeBindingMode"] = json!("Later")),
        &[(NOT_SUPPORTED, "volumeBindingMode", "Unsupported value: \"Later\": supported values: \"Immediate\", \"WaitForFirstConsumer\"")]);
    create(STORAGE, "StorageClass", &with(&sc, |s| s["provisioner"] = json!("bad provisioner")),
        &[(INVALID, "provisioner", "Invalid value: \"bad provisioner\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")]);
    let changed = with(&sc, |s| {
        s["parameters"]["type"] = json!("io2");
        s["provisioner"] = json!("x.example.com");
        s["reclaimPolicy"] = json!("Retain");
        s["volumeBindingMode"] = json!("Immediate");
    });
    expect(
        validate_update(STORAGE, "StorageClass", &changed, &sc),
        &[
            (
                FORBIDDEN,
                "parameters",
                "Forbidden: updates to parameters are forbidden.",
            ),
            (
                FORBIDDEN,
                "provisioner",
                "Forbidden: updates to provisioner are forbidden.",
            ),
            (
                FORBIDDEN,
                "reclaimPolicy",
                "Forbidden: updates to reclaimPolicy are forbidden.",
            ),
            (
                INVALID,
                "volumeBindingMode",
                "Invalid value: \"Immediate\": field is immutable",
            ),
        ],
    );
    let relabelled = with(&sc, |s| s["allowVolumeExpansion"] = json!(true));
    expect(
        validate_update(STORAGE, "StorageClass", &relabelled, &sc),
        &[],
    );
}

#[test]
fn lease_rules() {
    let lease = json!({"spec": {"holderIdentity": "node-1", "leaseDurationSeconds": 40, "leaseTransitions": 2}});
    create("coordination.k8s.io", "Lease", &lease, &[]);
    create(
        "coordination.k8s.io",
        "Lease",
        &with(&lease, |l| l["spec"]["leaseDurationSeconds"] = json!(0)),
        &[(
            INVALID,
            "spec.leaseDurationSeconds",
            "Invalid value: 0: must be greater than 0",
        )],
    );
    create(
        "coordination.k8s.io",
        "Lease",
        &with(&lease, |l| l["spec"]["leaseTransitions"] = json!(-1)),
        &[(
            INVALID,
            "spec.leaseTransitions",
            "Invalid value: -1: must be greater than or equal to 0",
        )],
    );
    create(
        "coordination.k8s.io",
        "Lease",
        &with(&lease, |l| l["spec"]["preferredHolder"] = json!("node-2")),
        &[(
            FORBIDDEN,
            "spec.preferredHolder",
            "Forbidden: may only be specified if `strategy` is defined",
        )],
    );
    create(
        "coordination.k8s.io",
        "Lease",
        &with(&lease, |l| l["spec"]["strategy"] = json!("Newest")),
        &[(
            NOT_SUPPORTED,
            "spec.strategy",
            "Unsupported value: \"Newest\": supported values: \"OldestEmulationVersion\"",
        )],
    );
}

#[test]
fn priority_class_rules() {
    let pc = json!({"metadata": {"name": "high"}, "value": 1000, "preemptionPolicy": "PreemptLowerPriority"});
    create("scheduling.k8s.io", "PriorityClass", &pc, &[]);
    create(
        "scheduling.k8s.io",
        "PriorityClass",
        &with(&pc, |p| p["value"] = json!(2_000_000_000)),
        &[(
            FORBIDDEN,
            "value",
            "Forbidden: maximum allowed value of a user defined priority is 1000000000",
        )],
    );
    create("scheduling.k8s.io", "PriorityClass", &with(&pc, |p| p["metadata"]["name"] = json!("system-custom")),
        &[(FORBIDDEN, "metadata.name", "Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-custom is not a known system priority class")]);
    create(
        "scheduling.k8s.io",
        "PriorityClass",
        &with(&pc, |p| p["preemptionPolicy"] = json!("Always")),
        &[(
            NOT_SUPPORTED,
            "preemptionPolicy",
            "Unsupported value: \"Always\": supported values: \"PreemptLowerPriority\", \"Never\"",
        )],
    );
    create(
        "scheduling.k8s.io",
        "PriorityClass",
        &json!({"metadata": {"name": "system-node-critical"}, "value": 2_000_001_000}),
        &[],
    );
    let raised = with(&pc, |p| p["value"] = json!(2000));
    expect(
        validate_update("scheduling.k8s.io", "PriorityClass", &raised, &pc),
        &[(
            FORBIDDEN,
            "value",
            "Forbidden: may not be changed in an update.",
        )],
    );
    let never = with(&pc, |p| p["preemptionPolicy"] = json!("Never"));
    expect(
        validate_update("scheduling.k8s.io", "PriorityClass", &never, &pc),
        &[(
            INVALID,
            "preemptionPolicy",
            "Invalid value: \"Never\": field is immutable",
        )],
    );
    let described = with(&pc, |p| p["description"] = json!("important"));
    expect(
        validate_update("scheduling.k8s.io", "PriorityClass", &described, &pc),
        &[],
    );
}

#[test]
fn horizontal_pod_autoscaler_rules() {
    let hpa = json!({"spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "minReplicas": 1, "maxReplicas": 5,
        "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]}});
    create("autoscaling", "HorizontalPodAutoscaler", &hpa, &[]);
    create(
        "autoscaling",
        "HorizontalPodAutoscaler",
        &with(&hpa, |h| h["spec"]["minReplicas"] = json!(0)),
        &[(
            INVALID,
            "spec.minReplicas",
            "Invalid value: 0: must be greater than or equal to 1",
        )],
    );
    create(
        "autoscaling",
        "HorizontalPodAutoscaler",
        &with(&hpa, |h| h["spec"]["maxReplicas"] = json!(0)),
        &[
            (
                INVALID,
                "spec.maxReplicas",
                "Invalid value: 0: must be greater than 0",
            ),
            (
                INVALID,
                "spec.maxReplicas",
                "Invalid value: 0: must be greater than or equal to `minReplicas`",
            ),
        ],
    );
    create(
        "autoscaling",
        "HorizontalPodAutoscaler",
        &with(&hpa, |h| h["spec"]["scaleTargetRef"]["name"] = json!("")),
        &[(REQUIRED, "spec.scaleTargetRef.name", "Required value")],
    );
}

#[test]
fn pod_disruption_budget_rules() {
    let pdb = json!({"spec": {"minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}}}});
    create("policy", "PodDisruptionBudget", &pdb, &[]);
    create("policy", "PodDisruptionBudget", &with(&pdb, |p| p["spec"]["minAvailable"] = json!("150%")),
        &[(INVALID, "spec.minAvailable", "Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"150%\"}: must not be greater than 100%")]);
    create(
        "policy",
        "PodDisruptionBudget",
        &with(&pdb, |p| p["spec"]["minAvailable"] = json!(-1)),
        &[(
            INVALID,
            "spec.minAvailable",
            "Invalid value: -1: must be greater than or equal to 0",
        )],
    );
    create("policy", "PodDisruptionBudget", &json!({"spec": {"maxUnavailable": "half"}}),
        &[(INVALID, "spec.maxUnavailable", "Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"half\"}: a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')")]);
    let both = validate_create(
        "policy",
        "PodDisruptionBudget",
        &with(&pdb, |p| p["spec"]["maxUnavailable"] = json!(1)),
    );
    assert_eq!(both.len(), 1);
    assert_eq!(both[0].field, "spec");
    assert!(both[0]
        .message
        .ends_with(": minAvailable and maxUnavailable cannot be both set"));
    create(
        "policy",
        "PodDisruptionBudget",
        &with(&pdb, |p| {
            p["spec"]["unhealthyPodEvictionPolicy"] = json!("Never")
        }),
        &[(
            NOT_SUPPORTED,
            "spec.unhealthyPodEvictionPolicy",
            "Unsupported value: \"Never\": supported values: \"AlwaysAllow\", \"IfHealthyBudget\"",
        )],
    );
}

#[test]
fn kinds_without_rules_of_their_own_are_not_validated() {
    create(
        "apps",
        "ControllerRevision",
        &json!({"data": {"anything": true}}),
        &[],
    );
    create("", "Endpoints", &json!({"subsets": []}), &[]);
}

#[test]
fn pod_env_sources_security_and_host_ports() {
    create("", "Pod", &with(&pod(), |p| p["spec"]["containers"][0]["env"][0] = json!({"name": "A", "valueFrom": {}})),
        &[(INVALID, "spec.containers[0].env[0].valueFrom", "Invalid value: \"\": must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`")]);
    create(
        "",
        "Pod",
        &with(
            &pod(),
            |p| p["spec"]["containers"][0]["env"][0] = json!({"name": "A", "value": "x", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}),
        ),
        &[(
            INVALID,
            "spec.containers[0].env[0].valueFrom",
            "Invalid value: \"\": may not be specified when `value` is not empty",
        )],
    );
    create(
        "",
        "Pod",
        &with(&pod(), |p| {
            p["spec"]["containers"][0]["envFrom"] = json!([{}])
        }),
        &[(
            INVALID,
            "spec.containers[0].envFrom",
            "Invalid value: \"\": must specify one of: `configMapRef` or `secretRef`",
        )],
    );
    create(
        "",
        "Pod",
        &with(&pod(), |p| {
            p["spec"]["containers"][0]["securityContext"] = json!({"runAsUser": -1})
        }),
        &[(
            INVALID,
            "spec.containers[0].securityContext.runAsUser",
            "Invalid value: -1: must be between 0 and 2147483647, inclusive",
        )],
    );
    create("", "Pod", &with(&pod(), |p| p["spec"]["containers"][0]["securityContext"] = json!({"privileged": true, "allowPrivilegeEscalation": false})),
        &[(INVALID, "spec.containers[0].securityContext", "Invalid value: &core.SecurityContext{...}: cannot set `allowPrivilegeEscalation` to false and `privileged` to true")]);
    let two_ports = with(&pod(), |p| {
        p["spec"]["containers"][0]["ports"] = json!([{"containerPort": 80, "hostPort": 8080}, {"containerPort": 81, "hostPort": 8080}]);
    });
    create(
        "",
        "Pod",
        &two_ports,
        &[(
            DUPLICATE,
            "spec.containers[0].ports[1].hostPort",
            "Duplicate value: \"TCP//8080\"",
        )],
    );
    create(
        "",
        "Pod",
        &with(&pod(), |p| {
            p["spec"]["containers"][0]["volumeMounts"][0]["subPath"] = json!("../etc")
        }),
        &[(
            INVALID,
            "spec.containers[0].volumeMounts.subPath",
            "Invalid value: \"../etc\": must not contain '..'",
        )],
    );
    create(
        "",
        "Pod",
        &with(
            &pod(),
            |p| {
                p["spec"]["containers"][0]["readinessProbe"] =
                    json!({"exec": {"command": ["true"]}, "terminationGracePeriodSeconds": 5})
            },
        ),
        &[(
            INVALID,
            "spec.containers[0].readinessProbe.terminationGracePeriodSeconds",
            "Invalid value: 5: must not be set for readinessProbes",
        )],
    );
}

#[test]
fn pod_create_only_rules_do_not_apply_on_update() {
    let debugged = with(
        &pod(),
        |p| p["spec"]["ephemeralContainers"] = json!([{"name": "dbg", "image": "busybox", "terminationMessagePolicy": "File", "imagePullPolicy": "Always"}]),
    );
    create(
        "",
        "Pod",
        &debugged,
        &[(
            FORBIDDEN,
            "spec.ephemeralContainers",
            "Forbidden: cannot be set on create",
        )],
    );
    expect(validate_update("", "Pod", &debugged, &debugged), &[]);
    let gated = with(&pod(), |p| {
        p["spec"]["schedulingGates"] = json!([{"name": "example.com/wait"}]);
        p["spec"]["nodeName"] = json!("n1");
    });
    create(
        "",
        "Pod",
        &gated,
        &[(
            FORBIDDEN,
            "spec.nodeName",
            "Forbidden: cannot be set until all schedulingGates have been cleared",
        )],
    );
    let long = with(&cron_job(), |c| {
        c["metadata"]["name"] = json!("a".repeat(53))
    });
    let errs = validate_create("batch", "CronJob", &long);
    assert_eq!(errs.len(), 1);
    assert_eq!(
        errs[0].message,
        format!(
            "Invalid value: \"{}\": must be no more than 52 characters",
            "a".repeat(53)
        )
    );
    expect(validate_update("batch", "CronJob", &long, &long), &[]);
}

#[test]
fn horizontal_pod_autoscaler_metric_rules() {
    let hpa = json!({"spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 3, "metrics": [{"type": "Memory"}]}});
    create("autoscaling", "HorizontalPodAutoscaler", &hpa,
        &[(NOT_SUPPORTED, "spec.metrics[0].type", "Unsupported value: \"Memory\": supported values: \"Object\", \"Pods\", \"Resource\", \"External\", \"ContainerResource\"")]);
    create(
        "autoscaling",
        "HorizontalPodAutoscaler",
        &with(&hpa, |h| {
            h["spec"]["metrics"][0] = json!({"type": "Resource"})
        }),
        &[(
            REQUIRED,
            "spec.metrics[0].resource",
            "Required value: must populate information for the given metric source",
        )],
    );
}

#[test]
fn zero_values_do_not_count_as_changes_on_update() {
    let stored = pod();
    let from_protobuf = with(&stored, |p| {
        p["spec"]["hostNetwork"] = json!(false);
        p["spec"]["nodeSelector"] = json!({});
        p["spec"]["containers"][0]["stdin"] = json!(false);
        p["spec"]["containers"][0]["workingDir"] = json!("");
        p["spec"]["containers"][0]["image"] = json!("nginx:1.28");
    });
    expect(validate_update("", "Pod", &from_protobuf, &stored), &[]);
    let ss = json!({"spec": {"serviceName": "web", "selector": {"matchLabels": {"app": "web"}}, "template": template()}});
    let ss_zeroed = with(&ss, |s| s["spec"]["volumeClaimTemplates"] = json!([]));
    expect(validate_update("apps", "StatefulSet", &ss_zeroed, &ss), &[]);
}

#[track_caller]
fn status_update(kind: &str, object: &Value, old: &Value, want: &[(&str, &str, &str)]) {
    expect(validate_status_update("apps", kind, object, old), want);
}

fn with_status(status: Value) -> Value {
    with(&deployment(), |d| d["status"] = status)
}

#[test]
fn deployment_status_rejections() {
    let old = with_status(json!({"replicas": 3, "collisionCount": 2}));
    status_update(
        "Deployment",
        &with_status(json!({
            "replicas": 3, "readyReplicas": 3, "availableReplicas": 2,
            "updatedReplicas": 3, "collisionCount": 2, "observedGeneration": 1
        })),
        &old,
        &[],
    );
    status_update(
        "Deployment",
        &with_status(json!({
            "replicas": 2, "updatedReplicas": 4, "readyReplicas": 1,
            "availableReplicas": 3, "unavailableReplicas": -1,
            "observedGeneration": -1, "collisionCount": 1
        })),
        &old,
        &[
            (
                INVALID,
                "status.observedGeneration",
                "Invalid value: -1: must be greater than or equal to 0",
            ),
            (
                INVALID,
                "status.unavailableReplicas",
                "Invalid value: -1: must be greater than or equal to 0",
            ),
            (
                INVALID,
                "status.updatedReplicas",
                "Invalid value: 4: cannot be greater than status.replicas",
            ),
            (
                INVALID,
                "status.availableReplicas",
                "Invalid value: 3: cannot be greater than status.replicas",
            ),
            (
                INVALID,
                "status.availableReplicas",
                "Invalid value: 3: cannot be greater than readyReplicas",
            ),
            (
                INVALID,
                "status.collisionCount",
                "Invalid value: 1: cannot be decremented",
            ),
        ],
    );
    // Dropping a collisionCount once set is decrementing it, to 0.
    status_update(
        "Deployment",
        &with_status(json!({"replicas": 3})),
        &old,
        &[(
            INVALID,
            "status.collisionCount",
            "Invalid value: 0: cannot be decremented",
        )],
    );
}

#[test]
fn replica_set_stateful_set_and_daemon_set_status_rejections() {
    let none = json!({});
    status_update(
        "ReplicaSet",
        &json!({"status": {"replicas": 1, "fullyLabeledReplicas": 2, "readyReplicas": -1}}),
        &none,
        &[
            (
                INVALID,
                "status.readyReplicas",
                "Invalid value: -1: must be greater than or equal to 0",
            ),
            (
                INVALID,
                "status.fullyLabeledReplicas",
                "Invalid value: 2: cannot be greater than status.replicas",
            ),
            // Go compares the counts as they are: 0 available exceeds -1 ready.
            (
                INVALID,
                "status.availableReplicas",
                "Invalid value: 0: cannot be greater than readyReplicas",
            ),
        ],
    );
    status_update(
        "StatefulSet",
        &json!({"status": {"replicas": 2, "readyReplicas": 1, "availableReplicas": 2, "currentReplicas": 3}}),
        &none,
        &[
            (
                INVALID,
                "status.currentReplicas",
                "Invalid value: 3: cannot be greater than status.replicas",
            ),
            (
                INVALID,
                "status.availableReplicas",
                "Invalid value: 2: cannot be greater than status.readyReplicas",
            ),
        ],
    );
    status_update(
        "DaemonSet",
        &json!({"status": {"numberReady": -2, "collisionCount": -1}}),
        &none,
        &[
            (
                INVALID,
                "status.numberReady",
                "Invalid value: -2: must be greater than or equal to 0",
            ),
            (
                INVALID,
                "status.collisionCount",
                "Invalid value: -1: must be greater than or equal to 0",
            ),
        ],
    );
    // A ReplicationController's status is checked as a ReplicaSet's.
    expect(
        validate_status_update(
            "",
            "ReplicationController",
            &json!({"status": {"replicas": 1, "readyReplicas": 2, "availableReplicas": 1}}),
            &none,
        ),
        &[(
            INVALID,
            "status.readyReplicas",
            "Invalid value: 2: cannot be greater than status.replicas",
        )],
    );
    // Upstream's path for desiredReplicas carries a typo; clients see it.
    expect(
        validate_status_update(
            "autoscaling",
            "HorizontalPodAutoscaler",
            &json!({"status": {"currentReplicas": -1, "desiredReplicas": -2}}),
            &none,
        ),
        &[
            (
                INVALID,
                "status.currentReplicas",
                "Invalid value: -1: must be greater than or equal to 0",
            ),
            (
                INVALID,
                "status.desiredReplicasa",
                "Invalid value: -2: must be greater than or equal to 0",
            ),
        ],
    );
    // A PodDisruptionBudget's conditions are metav1 Conditions.
    let condition = json!({"type": "DisruptionAllowed", "status": "True", "reason": "SufficientPods", "lastTransitionTime": "2026-11-22T10:00:00Z"});
    expect(
        validate_status_update(
            "policy",
            "PodDisruptionBudget",
            &json!({"status": {"conditions": [condition.clone()], "expectedPods": 1}}),
            &none,
        ),
        &[],
    );
    expect(
        validate_status_update(
            "policy",
            "PodDisruptionBudget",
            &json!({"status": {
                "conditions": [
                    condition,
                    {"type": "DisruptionAllowed", "status": "Maybe", "reason": "1bad", "observedGeneration": -1}
                ],
                "currentHealthy": -1
            }}),
            &none,
        ),
        &[
            (DUPLICATE, "status.conditions[1].type", "Duplicate value: \"DisruptionAllowed\""),
            (NOT_SUPPORTED, "status.conditions[1].status", "Unsupported value: \"Maybe\": supported values: \"False\", \"True\", \"Unknown\""),
            (INVALID, "status.conditions[1].observedGeneration", "Invalid value: -1: must be greater than or equal to zero"),
            (REQUIRED, "status.conditions[1].lastTransitionTime", "Required value: must be set"),
            (INVALID, "status.conditions[1].reason", "Invalid value: \"1bad\": a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')"),
            (INVALID, "status.currentHealthy", "Invalid value: -1: must be greater than or equal to 0"),
        ],
    );
    // A namespace's phase follows its deletion timestamp.
    let namespace = |phase: &str, deleting: bool| {
        let mut ns = json!({"metadata": {"name": "n"}, "status": {"phase": phase}});
        if deleting {
            ns["metadata"]["deletionTimestamp"] = json!("2026-11-22T10:00:00Z");
        }
        validate_status_update("", "Namespace", &ns, &none)
    };
    expect(namespace("Active", false), &[]);
    expect(namespace("Terminating", true), &[]);
    expect(
        namespace("Terminating", false),
        &[(
            INVALID,
            "status.Phase",
            "Invalid value: \"Terminating\": may only be 'Active' if `deletionTimestamp` is empty",
        )],
    );
    expect(
        namespace("Active", true),
        &[(
            INVALID,
            "status.Phase",
            "Invalid value: \"Active\": may only be 'Terminating' if `deletionTimestamp` is not empty",
        )],
    );
    // Kinds without status rules accept any status.
    expect(
        validate_status_update("", "Pod", &json!({"status": {"x": -1}}), &none),
        &[],
    );
}
