//! Minimal objects against what kube-apiserver 1.32 stores for them after
//! defaulting, plus idempotence.

use serde_json::{json, Value};

use crate::kinds::batch::job::generate_job_selector;

/// The kind's defaulting at `version`.
fn apply_defaults(group: &str, version: &str, kind: &str, object: &mut Value) {
    let map = object.as_object_mut().expect("an object");
    crate::kinds::builtin(group, kind).apply_defaults(version, map);
}

fn defaulted(api_version: &str, kind: &str, mut object: Value) -> Value {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    apply_defaults(group, version, kind, &mut object);
    let mut again = object.clone();
    apply_defaults(group, version, kind, &mut again);
    assert_eq!(again, object, "defaulting {kind} twice changed it");
    object
}

/// The pod spec `kubectl create deployment web --image=nginx` ends up with.
fn defaulted_nginx_pod_spec() -> Value {
    json!({
        "containers": [{
            "name": "nginx",
            "image": "nginx",
            "imagePullPolicy": "Always",
            "resources": {},
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File"
        }],
        "dnsPolicy": "ClusterFirst",
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "terminationGracePeriodSeconds": 30
    })
}

fn nginx_template(labels: Value) -> Value {
    json!({
        "metadata": {"labels": labels},
        "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}
    })
}

fn defaulted_nginx_template(labels: Value) -> Value {
    json!({
        "metadata": {"creationTimestamp": null, "labels": labels},
        "spec": defaulted_nginx_pod_spec()
    })
}

#[test]
fn deployment_gets_upstream_defaults() {
    let got = defaulted(
        "apps/v1",
        "Deployment",
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {
                "selector": {"matchLabels": {"app": "web"}},
                "template": nginx_template(json!({"app": "web"}))
            }
        }),
    );
    assert_eq!(
        got,
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {
                "progressDeadlineSeconds": 600,
                "replicas": 1,
                "revisionHistoryLimit": 10,
                "selector": {"matchLabels": {"app": "web"}},
                "strategy": {
                    "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
                    "type": "RollingUpdate"
                },
                "template": defaulted_nginx_template(json!({"app": "web"}))
            }
        })
    );
}

#[test]
fn deployment_keeps_sent_values_and_recreate_gets_no_rolling_update() {
    let got = defaulted(
        "apps/v1",
        "Deployment",
        json!({"spec": {"replicas": 0, "strategy": {"type": "Recreate"}, "revisionHistoryLimit": 0}}),
    );
    assert_eq!(got["spec"]["replicas"], 0);
    assert_eq!(got["spec"]["revisionHistoryLimit"], 0);
    assert_eq!(got["spec"]["strategy"], json!({"type": "Recreate"}));
}

#[test]
fn pod_gets_spec_container_and_pod_only_defaults() {
    let got = defaulted(
        "v1",
        "Pod",
        json!({
            "metadata": {"name": "p"},
            "spec": {
                "hostNetwork": true,
                "containers": [{
                    "name": "app",
                    "image": "registry.local:5000/app:1.0",
                    "ports": [{"containerPort": 8080, "hostPort": 0}],
                    "env": [{"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
                    "resources": {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "500m"}},
                    "livenessProbe": {"httpGet": {"port": 8080}},
                    "readinessProbe": {"grpc": {"port": 9000}, "periodSeconds": 5},
                    "lifecycle": {"preStop": {"httpGet": {"port": 8080, "path": "/stop"}}}
                }],
                "ephemeralContainers": [{"name": "debug", "image": "busybox:latest"}],
                "volumes": [
                    {"name": "scratch"},
                    {"name": "cfg", "configMap": {"name": "c"}},
                    {"name": "sec", "secret": {"secretName": "s", "defaultMode": 256}},
                    {"name": "host", "hostPath": {"path": "/var"}},
                    {"name": "info", "downwardAPI": {"items": [{"path": "n", "fieldRef": {"fieldPath": "metadata.name"}}]}},
                    {"name": "proj", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}},
                    {"name": "eph", "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"]}}}}
                ]
            }
        }),
    );
    let spec = &got["spec"];
    assert_eq!(spec["enableServiceLinks"], true);
    assert_eq!(spec["dnsPolicy"], "ClusterFirst");
    let container = &spec["containers"][0];
    assert_eq!(container["imagePullPolicy"], "IfNotPresent");
    assert_eq!(
        container["ports"][0],
        json!({"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"})
    );
    assert_eq!(
        container["env"][0]["valueFrom"]["fieldRef"]["apiVersion"],
        "v1"
    );
    assert_eq!(
        container["resources"]["requests"],
        json!({"cpu": "500m", "memory": "1Gi"})
    );
    assert_eq!(
        container["livenessProbe"],
        json!({
            "httpGet": {"port": 8080, "path": "/", "scheme": "HTTP"},
            "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3
        })
    );
    assert_eq!(
        container["readinessProbe"]["grpc"],
        json!({"port": 9000, "service": ""})
    );
    assert_eq!(container["readinessProbe"]["periodSeconds"], 5);
    assert_eq!(
        container["lifecycle"]["preStop"]["httpGet"],
        json!({"port": 8080, "path": "/stop", "scheme": "HTTP"})
    );
    assert_eq!(spec["ephemeralContainers"][0]["imagePullPolicy"], "Always");
    assert_eq!(
        spec["volumes"],
        json!([
            {"name": "scratch", "emptyDir": {}},
            {"name": "cfg", "configMap": {"name": "c", "defaultMode": 420}},
            {"name": "sec", "secret": {"secretName": "s", "defaultMode": 256}},
            {"name": "host", "hostPath": {"path": "/var", "type": ""}},
            {"name": "info", "downwardAPI": {"defaultMode": 420, "items": [
                {"path": "n", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}
            ]}},
            {"name": "proj", "projected": {"defaultMode": 420, "sources": [
                {"serviceAccountToken": {"path": "t", "expirationSeconds": 3600}}
            ]}},
            {"name": "eph", "ephemeral": {"volumeClaimTemplate": {"spec": {
                "accessModes": ["ReadWriteOnce"], "volumeMode": "Filesystem"
            }}}}
        ])
    );
}

#[test]
fn templates_get_no_pod_only_defaults() {
    let got = defaulted(
        "v1",
        "PodTemplate",
        json!({"template": {"spec": {"hostNetwork": true, "containers": [{
            "name": "c", "image": "i", "ports": [{"containerPort": 80}],
            "resources": {"limits": {"cpu": "1"}}
        }]}}}),
    );
    let spec = &got["template"]["spec"];
    assert!(spec.get("enableServiceLinks").is_none());
    assert!(spec["containers"][0]["ports"][0].get("hostPort").is_none());
    assert!(spec["containers"][0]["resources"].get("requests").is_none());
    assert_eq!(
        got["template"]["metadata"],
        json!({"creationTimestamp": null})
    );
}

#[test]
fn protobuf_zero_values_count_as_unset() {
    // What a protobuf body decodes to: non-pointer fields carry "" and 0.
    let got = defaulted(
        "v1",
        "Pod",
        json!({"spec": {
            "dnsPolicy": "", "restartPolicy": "", "schedulerName": "",
            "containers": [{
                "name": "c", "image": "nginx:1.27", "imagePullPolicy": "",
                "terminationMessagePath": "", "terminationMessagePolicy": "",
                "ports": [{"containerPort": 80, "hostPort": 0, "protocol": ""}],
                "readinessProbe": {"tcpSocket": {"port": 80}, "timeoutSeconds": 0,
                    "periodSeconds": 0, "successThreshold": 0, "failureThreshold": 0,
                    "initialDelaySeconds": 0}
            }]
        }}),
    );
    let spec = &got["spec"];
    assert_eq!(spec["dnsPolicy"], "ClusterFirst");
    assert_eq!(spec["restartPolicy"], "Always");
    assert_eq!(spec["schedulerName"], "default-scheduler");
    let container = &spec["containers"][0];
    assert_eq!(container["imagePullPolicy"], "IfNotPresent");
    assert_eq!(container["terminationMessagePolicy"], "File");
    assert_eq!(container["ports"][0]["protocol"], "TCP");
    assert_eq!(container["ports"][0]["hostPort"], 0);
    assert_eq!(container["readinessProbe"]["timeoutSeconds"], 1);
    assert_eq!(container["readinessProbe"]["failureThreshold"], 3);
    assert_eq!(container["readinessProbe"]["initialDelaySeconds"], 0);
}

#[test]
fn stateful_set_and_claim_templates() {
    let got = defaulted(
        "apps/v1",
        "StatefulSet",
        json!({"spec": {
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "template": nginx_template(json!({"app": "db"})),
            "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}
            }}]
        }}),
    );
    assert_eq!(
        got["spec"],
        json!({
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
            "podManagementPolicy": "OrderedReady",
            "replicas": 1,
            "revisionHistoryLimit": 10,
            "selector": {"matchLabels": {"app": "db"}},
            "serviceName": "db",
            "template": defaulted_nginx_template(json!({"app": "db"})),
            "updateStrategy": {"rollingUpdate": {"partition": 0}, "type": "RollingUpdate"},
            "volumeClaimTemplates": [{
                "metadata": {"name": "data"},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": "1Gi"}},
                    "volumeMode": "Filesystem"
                },
                "status": {"phase": "Pending"}
            }]
        })
    );
    let explicit = defaulted(
        "apps/v1",
        "StatefulSet",
        json!({"spec": {"updateStrategy": {"type": "RollingUpdate"}}}),
    );
    assert_eq!(
        explicit["spec"]["updateStrategy"],
        json!({"type": "RollingUpdate"})
    );
}

#[test]
fn daemon_set_and_replica_set() {
    let ds = defaulted("apps/v1", "DaemonSet", json!({"spec": {}}));
    assert_eq!(
        ds["spec"]["updateStrategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}})
    );
    assert_eq!(ds["spec"]["revisionHistoryLimit"], 10);
    assert!(ds["spec"].get("replicas").is_none());
    let rs = defaulted("apps/v1", "ReplicaSet", json!({"spec": {}}));
    assert_eq!(rs["spec"]["replicas"], 1);
    assert_eq!(rs["spec"]["template"]["spec"]["restartPolicy"], "Always");
}

#[test]
fn replication_controller_takes_selector_and_labels_from_template() {
    let got = defaulted(
        "v1",
        "ReplicationController",
        json!({"metadata": {"name": "rc"}, "spec": {"template": nginx_template(json!({"app": "rc"}))}}),
    );
    assert_eq!(
        got,
        json!({
            "metadata": {"name": "rc", "labels": {"app": "rc"}},
            "spec": {
                "replicas": 1,
                "selector": {"app": "rc"},
                "template": defaulted_nginx_template(json!({"app": "rc"}))
            }
        })
    );
}

#[test]
fn job_defaults_and_generated_selector() {
    let mut job = defaulted(
        "batch/v1",
        "Job",
        json!({
            "metadata": {"name": "pi"},
            "spec": {"template": {"spec": {"restartPolicy": "Never",
                "containers": [{"name": "pi", "image": "perl:5.34.0"}]}}}
        }),
    );
    generate_job_selector(&mut job, "uid-1");
    let mut twice = job.clone();
    generate_job_selector(&mut twice, "uid-1");
    assert_eq!(twice, job);
    assert_eq!(
        job,
        json!({
            "metadata": {"name": "pi"},
            "spec": {
                "backoffLimit": 6,
                "completionMode": "NonIndexed",
                "completions": 1,
                "manualSelector": false,
                "parallelism": 1,
                "podReplacementPolicy": "TerminatingOrFailed",
                "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "uid-1"}},
                "suspend": false,
                "template": {
                    "metadata": {"creationTimestamp": null, "labels": {
                        "batch.kubernetes.io/controller-uid": "uid-1",
                        "batch.kubernetes.io/job-name": "pi",
                        "controller-uid": "uid-1",
                        "job-name": "pi"
                    }},
                    "spec": {
                        "containers": [{
                            "name": "pi", "image": "perl:5.34.0",
                            "imagePullPolicy": "IfNotPresent", "resources": {},
                            "terminationMessagePath": "/dev/termination-log",
                            "terminationMessagePolicy": "File"
                        }],
                        "dnsPolicy": "ClusterFirst",
                        "restartPolicy": "Never",
                        "schedulerName": "default-scheduler",
                        "securityContext": {},
                        "terminationGracePeriodSeconds": 30
                    }
                }
            }
        })
    );
}

#[test]
fn job_redefaulted_after_selector_generation_takes_template_labels() {
    let mut job = defaulted(
        "batch/v1",
        "Job",
        json!({"metadata": {"name": "pi"}, "spec": {}}),
    );
    assert!(job["metadata"].get("labels").is_none());
    generate_job_selector(&mut job, "u");
    let job = defaulted("batch/v1", "Job", job);
    assert_eq!(
        job["metadata"]["labels"],
        json!({
            "batch.kubernetes.io/controller-uid": "u",
            "batch.kubernetes.io/job-name": "pi",
            "controller-uid": "u",
            "job-name": "pi"
        })
    );
}

#[test]
fn job_variants() {
    let parallel = defaulted(
        "batch/v1",
        "Job",
        json!({"metadata": {}, "spec": {"parallelism": 3, "backoffLimitPerIndex": 1,
            "podFailurePolicy": {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]},
            "template": {"metadata": {"labels": {"a": "b"}}}}}),
    );
    assert!(parallel["spec"].get("completions").is_none());
    assert_eq!(parallel["spec"]["backoffLimit"], i32::MAX);
    assert_eq!(parallel["spec"]["podReplacementPolicy"], "Failed");
    assert_eq!(
        parallel["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"][0]["status"],
        "True"
    );
    assert_eq!(parallel["metadata"]["labels"], json!({"a": "b"}));

    let mut manual = json!({"metadata": {"name": "m"}, "spec": {"manualSelector": true,
        "selector": {"matchLabels": {"x": "y"}}}});
    generate_job_selector(&mut manual, "uid");
    assert_eq!(
        manual["spec"]["selector"],
        json!({"matchLabels": {"x": "y"}})
    );
}

#[test]
fn cron_job_defaults_leave_job_spec_alone() {
    let got = defaulted(
        "batch/v1",
        "CronJob",
        json!({"spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {"spec": {
            "restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "busybox"}]
        }}}}}}),
    );
    let spec = &got["spec"];
    assert_eq!(spec["concurrencyPolicy"], "Allow");
    assert_eq!(spec["suspend"], false);
    assert_eq!(spec["successfulJobsHistoryLimit"], 3);
    assert_eq!(spec["failedJobsHistoryLimit"], 1);
    assert_eq!(
        spec["jobTemplate"]["metadata"],
        json!({"creationTimestamp": null})
    );
    let job_spec = spec["jobTemplate"]["spec"].as_object().unwrap();
    assert_eq!(job_spec.keys().collect::<Vec<_>>(), vec!["template"]);
    assert_eq!(
        job_spec["template"]["spec"]["containers"][0]["imagePullPolicy"],
        "Always"
    );
}

#[test]
fn core_storage_and_misc_kinds() {
    let pv = defaulted(
        "v1",
        "PersistentVolume",
        json!({"spec": {"capacity": {"storage": "1Gi"}, "hostPath": {"path": "/d"}}}),
    );
    assert_eq!(
        pv,
        json!({
            "spec": {
                "capacity": {"storage": "1Gi"},
                "hostPath": {"path": "/d", "type": ""},
                "persistentVolumeReclaimPolicy": "Retain",
                "volumeMode": "Filesystem"
            },
            "status": {"phase": "Pending"}
        })
    );
    let pvc = defaulted("v1", "PersistentVolumeClaim", json!({"spec": {}}));
    assert_eq!(
        pvc,
        json!({"spec": {"volumeMode": "Filesystem"}, "status": {"phase": "Pending"}})
    );
    let secret = defaulted("v1", "Secret", json!({"data": {}}));
    assert_eq!(secret["type"], "Opaque");
    let endpoints = defaulted(
        "v1",
        "Endpoints",
        json!({"subsets": [{"ports": [{"port": 80}]}]}),
    );
    assert_eq!(endpoints["subsets"][0]["ports"][0]["protocol"], "TCP");
    let node = defaulted("v1", "Node", json!({"status": {"capacity": {"cpu": "4"}}}));
    assert_eq!(node["status"]["allocatable"], json!({"cpu": "4"}));
    let limit_range = defaulted(
        "v1",
        "LimitRange",
        json!({"spec": {"limits": [
            {"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "64Mi"}},
            {"type": "Pod", "max": {"cpu": "4"}}
        ]}}),
    );
    assert_eq!(
        limit_range["spec"]["limits"],
        json!([
            {"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "64Mi"},
             "default": {"cpu": "2"}, "defaultRequest": {"cpu": "2", "memory": "64Mi"}},
            {"type": "Pod", "max": {"cpu": "4"}}
        ])
    );
    let untouched = defaulted("v1", "ConfigMap", json!({"data": {"a": "b"}}));
    assert_eq!(untouched, json!({"data": {"a": "b"}}));
}

#[test]
fn horizontal_pod_autoscalers() {
    let v1 = defaulted(
        "autoscaling/v1",
        "HorizontalPodAutoscaler",
        json!({"spec": {"maxReplicas": 5}}),
    );
    assert_eq!(v1["spec"], json!({"maxReplicas": 5, "minReplicas": 1}));
    let v2 = defaulted(
        "autoscaling/v2",
        "HorizontalPodAutoscaler",
        json!({"spec": {"maxReplicas": 5, "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}}}}),
    );
    assert_eq!(
        v2["spec"],
        json!({
            "maxReplicas": 5,
            "minReplicas": 1,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 80}}}],
            "behavior": {
                "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
                    {"type": "Pods", "value": 4, "periodSeconds": 15},
                    {"type": "Percent", "value": 100, "periodSeconds": 15}
                ]},
                "scaleDown": {"stabilizationWindowSeconds": 60, "selectPolicy": "Max", "policies": [
                    {"type": "Percent", "value": 100, "periodSeconds": 15}
                ]}
            }
        })
    );
    let no_behavior = defaulted(
        "autoscaling/v2",
        "HorizontalPodAutoscaler",
        json!({"spec": {"metrics": [{"type": "Pods"}]}}),
    );
    assert!(no_behavior["spec"].get("behavior").is_none());
    assert_eq!(no_behavior["spec"]["metrics"], json!([{"type": "Pods"}]));
}

#[test]
fn rbac_networking_storage_scheduling_discovery() {
    let binding = defaulted(
        "rbac.authorization.k8s.io/v1",
        "ClusterRoleBinding",
        json!({"roleRef": {"kind": "ClusterRole", "name": "view"}, "subjects": [
            {"kind": "User", "name": "u"}, {"kind": "Group", "name": "g"},
            {"kind": "ServiceAccount", "name": "s", "namespace": "n"}
        ]}),
    );
    assert_eq!(binding["roleRef"]["apiGroup"], "rbac.authorization.k8s.io");
    assert_eq!(
        binding["subjects"][0]["apiGroup"],
        "rbac.authorization.k8s.io"
    );
    assert_eq!(
        binding["subjects"][1]["apiGroup"],
        "rbac.authorization.k8s.io"
    );
    assert!(binding["subjects"][2].get("apiGroup").is_none());

    let policy = defaulted(
        "networking.k8s.io/v1",
        "NetworkPolicy",
        json!({"spec": {"podSelector": {}, "egress": [{"ports": [{"port": 53}]}]}}),
    );
    assert_eq!(policy["spec"]["policyTypes"], json!(["Ingress", "Egress"]));
    assert_eq!(policy["spec"]["egress"][0]["ports"][0]["protocol"], "TCP");
    let ingress_only = defaulted(
        "networking.k8s.io/v1",
        "NetworkPolicy",
        json!({"spec": {"podSelector": {}}}),
    );
    assert_eq!(ingress_only["spec"]["policyTypes"], json!(["Ingress"]));
    let class = defaulted(
        "networking.k8s.io/v1",
        "IngressClass",
        json!({"spec": {"controller": "x/y", "parameters": {"kind": "K", "name": "n"}}}),
    );
    assert_eq!(class["spec"]["parameters"]["scope"], "Cluster");

    let storage_class = defaulted(
        "storage.k8s.io/v1",
        "StorageClass",
        json!({"provisioner": "p"}),
    );
    assert_eq!(
        storage_class,
        json!({"provisioner": "p", "reclaimPolicy": "Delete", "volumeBindingMode": "Immediate"})
    );
    let driver = defaulted("storage.k8s.io/v1", "CSIDriver", json!({"spec": {}}));
    assert_eq!(
        driver["spec"],
        json!({
            "attachRequired": true, "fsGroupPolicy": "ReadWriteOnceWithFSType",
            "podInfoOnMount": false, "requiresRepublish": false, "seLinuxMount": false,
            "storageCapacity": false, "volumeLifecycleModes": ["Persistent"]
        })
    );
    let priority = defaulted(
        "scheduling.k8s.io/v1",
        "PriorityClass",
        json!({"value": 10}),
    );
    assert_eq!(priority["preemptionPolicy"], "PreemptLowerPriority");
    let slice = defaulted(
        "discovery.k8s.io/v1",
        "EndpointSlice",
        json!({"addressType": "IPv4", "ports": [{"port": 80}]}),
    );
    assert_eq!(
        slice["ports"][0],
        json!({"port": 80, "name": "", "protocol": "TCP"})
    );
}

#[test]
fn admission_flowcontrol_and_extension_kinds() {
    let webhooks = defaulted(
        "admissionregistration.k8s.io/v1",
        "MutatingWebhookConfiguration",
        json!({"webhooks": [{"name": "w.example.com", "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
            "clientConfig": {"service": {"namespace": "n", "name": "s"}},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}]}]}),
    );
    let webhook = &webhooks["webhooks"][0];
    assert_eq!(webhook["failurePolicy"], "Fail");
    assert_eq!(webhook["matchPolicy"], "Equivalent");
    assert_eq!(webhook["namespaceSelector"], json!({}));
    assert_eq!(webhook["objectSelector"], json!({}));
    assert_eq!(webhook["timeoutSeconds"], 10);
    assert_eq!(webhook["reinvocationPolicy"], "Never");
    assert_eq!(webhook["rules"][0]["scope"], "*");
    assert_eq!(webhook["clientConfig"]["service"]["port"], 443);

    let policy = defaulted(
        "admissionregistration.k8s.io/v1",
        "ValidatingAdmissionPolicy",
        json!({"spec": {"matchConstraints": {"resourceRules": [{"operations": ["*"]}]}}}),
    );
    assert_eq!(policy["spec"]["failurePolicy"], "Fail");
    assert_eq!(
        policy["spec"]["matchConstraints"]["matchPolicy"],
        "Equivalent"
    );
    assert_eq!(
        policy["spec"]["matchConstraints"]["resourceRules"][0]["scope"],
        "*"
    );

    let level = defaulted(
        "flowcontrol.apiserver.k8s.io/v1",
        "PriorityLevelConfiguration",
        json!({"spec": {"type": "Limited", "limited": {"limitResponse": {"type": "Queue", "queuing": {}}}}}),
    );
    assert_eq!(
        level["spec"]["limited"],
        json!({"nominalConcurrencyShares": 30, "lendablePercent": 0,
            "limitResponse": {"type": "Queue", "queuing": {"handSize": 8, "queues": 64, "queueLengthLimit": 50}}})
    );
    let schema = defaulted(
        "flowcontrol.apiserver.k8s.io/v1",
        "FlowSchema",
        json!({"spec": {}}),
    );
    assert_eq!(schema["spec"]["matchingPrecedence"], 1000);

    let crd = defaulted(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        json!({"spec": {"group": "g.io", "names": {"kind": "Widget", "plural": "widgets"}}}),
    );
    assert_eq!(crd["spec"]["names"]["singular"], "widget");
    assert_eq!(crd["spec"]["names"]["listKind"], "WidgetList");
    assert_eq!(crd["spec"]["conversion"], json!({"strategy": "None"}));
}

#[test]
fn namespace_phase_defaults_to_active() {
    let bare = defaulted("v1", "Namespace", json!({"metadata": {"name": "n"}}));
    assert_eq!(bare["status"], json!({"phase": "Active"}));
    let terminating = defaulted(
        "v1",
        "Namespace",
        json!({"metadata": {"name": "n"}, "status": {"phase": "Terminating"}}),
    );
    assert_eq!(terminating["status"]["phase"], "Terminating");
}
