//! The encoder, checked three ways: byte for byte against bodies Go's
//! marshallers wrote (kubectl's captured requests), by decoding its output
//! with the k8s-pb crate's prost types, and by round-tripping through the
//! crate's own decoder.

use k8s_pb::api::apps::v1 as apps;
use k8s_pb::api::core::v1 as core;
use k8s_pb::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiextensions;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_pb::apimachinery::pkg::runtime::Unknown;
use prost::Message as _;
use serde_json::{json, Value};

use super::encode::parse_go_duration;
use super::*;

fn encode(object: &Value) -> Vec<u8> {
    match encode_object(object) {
        Ok(body) => body,
        Err(error) => panic!("encode failed: {error}"),
    }
}

/// Splits an envelope the way client-go does and checks its type.
fn unwrap_envelope(body: &[u8], api_version: &str, kind: &str) -> Vec<u8> {
    let rest = body.strip_prefix(b"k8s\0").expect("prefix");
    let unknown = Unknown::decode(rest).expect("runtime.Unknown");
    let type_meta = unknown.type_meta.expect("typeMeta");
    assert_eq!(type_meta.api_version.as_deref(), Some(api_version));
    assert_eq!(type_meta.kind.as_deref(), Some(kind));
    assert_eq!(unknown.content_encoding.as_deref(), Some(""));
    assert_eq!(unknown.content_type.as_deref(), Some(""));
    unknown.raw.expect("raw")
}

fn typed<M: prost::Message + Default>(object: &Value) -> M {
    let api_version = object["apiVersion"].as_str().expect("apiVersion");
    let kind = object["kind"].as_str().expect("kind");
    let raw = unwrap_envelope(&encode(object), api_version, kind);
    M::decode(raw.as_slice()).expect("typed message")
}

fn decode_back(body: &[u8]) -> Value {
    match decode_envelope(body) {
        Ok(value) => value,
        Err(error) => panic!("decode failed: {error}"),
    }
}

/// kubectl's body for `kubectl create namespace demo`: Go wrote every
/// value field, so the JSON spells out the one zero the meta table does
/// not cover (`status.phase`).
#[test]
fn namespace_matches_kubectl_byte_for_byte() {
    let namespace = json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "demo"},
        "spec": {},
        "status": {"phase": ""},
    });
    assert_eq!(
        encode(&namespace),
        include_bytes!("testdata/kubectl-create-namespace.pb")
    );
}

/// `kubectl create service clusterip web --tcp=80:8080`: IntOrString with
/// all three fields, sorted map entries, ObjectMeta's zero-valued fields
/// and zero Time, each in field-number order.
#[test]
fn service_matches_kubectl_byte_for_byte() {
    let service = json!({
        "kind": "Service",
        "apiVersion": "v1",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {
            "ports": [{
                "name": "80-8080",
                "protocol": "TCP",
                "port": 80,
                "targetPort": 8080,
                "nodePort": 0,
            }],
            "selector": {"app": "web"},
            "clusterIP": "",
            "type": "ClusterIP",
            "sessionAffinity": "",
            "loadBalancerIP": "",
            "externalName": "",
            "externalTrafficPolicy": "",
            "healthCheckNodePort": 0,
            "publishNotReadyAddresses": false,
        },
        "status": {"loadBalancer": {}},
    });
    assert_eq!(
        encode(&service),
        include_bytes!("testdata/kubectl-create-service.pb")
    );
}

/// `kubectl create deployment web --image=nginx --replicas=0 --port=80`:
/// nested ObjectMeta, maps, empty messages and a deep pod template. The
/// JSON spells out the zeros Go wrote for value fields outside meta/v1.
#[test]
fn deployment_matches_kubectl_byte_for_byte() {
    let deployment = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [{
                        "name": "nginx",
                        "image": "nginx",
                        "workingDir": "",
                        "ports": [{
                            "name": "",
                            "hostPort": 0,
                            "containerPort": 80,
                            "protocol": "",
                            "hostIP": "",
                        }],
                        "resources": {},
                        "terminationMessagePath": "",
                        "terminationMessagePolicy": "",
                        "imagePullPolicy": "",
                        "stdin": false,
                        "stdinOnce": false,
                        "tty": false,
                    }],
                    "restartPolicy": "",
                    "dnsPolicy": "",
                    "serviceAccountName": "",
                    "serviceAccount": "",
                    "nodeName": "",
                    "hostNetwork": false,
                    "hostPID": false,
                    "hostIPC": false,
                    "hostname": "",
                    "subdomain": "",
                    "schedulerName": "",
                    "priorityClassName": "",
                },
            },
            "strategy": {"type": ""},
            "minReadySeconds": 0,
            "paused": false,
        },
        "status": {
            "observedGeneration": 0,
            "replicas": 0,
            "updatedReplicas": 0,
            "readyReplicas": 0,
            "availableReplicas": 0,
            "unavailableReplicas": 0,
        },
    });
    assert_eq!(
        encode(&deployment),
        include_bytes!("testdata/kubectl-create-deployment.pb")
    );
}

/// Whatever the decoder made of kubectl's bodies encodes back to bodies
/// that decode the same: nothing is lost on the way out.
#[test]
fn kubectl_bodies_survive_decode_encode_decode() {
    for body in [
        &include_bytes!("testdata/kubectl-create-namespace.pb")[..],
        include_bytes!("testdata/kubectl-create-deployment.pb"),
        include_bytes!("testdata/kubectl-create-service.pb"),
        include_bytes!("testdata/kubectl-create-ingress.pb"),
        include_bytes!("testdata/kubectl-create-pdb.pb"),
    ] {
        let decoded = decode_back(body);
        assert_eq!(decode_back(&encode(&decoded)), decoded);
    }
}

fn deployment() -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "namespace": "default",
            "uid": "6f1c7a52-58a4-4a8e-9a7e-3c1f0e7f7a11",
            "resourceVersion": "4711",
            "generation": 3,
            "creationTimestamp": "2024-05-01T10:00:00Z",
            "labels": {"app": "web", "tier": "frontend"},
            "annotations": {"deployment.kubernetes.io/revision": "2"},
            "managedFields": [{
                "manager": "kubectl",
                "operation": "Apply",
                "apiVersion": "apps/v1",
                "time": "2024-05-01T10:00:00Z",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:spec": {"f:replicas": {}}},
            }],
        },
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": 1},
            },
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [{
                        "name": "nginx",
                        "image": "nginx:1.27",
                        "ports": [{"containerPort": 80, "protocol": "TCP"}],
                        "env": [
                            {"name": "MODE", "value": "prod"},
                            {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
                        ],
                        "resources": {
                            "limits": {"cpu": "500m", "memory": "128Mi"},
                            "requests": {"cpu": 0.25},
                        },
                        "readinessProbe": {
                            "httpGet": {"path": "/healthz", "port": "http", "scheme": "HTTP"},
                            "periodSeconds": 10,
                        },
                        "livenessProbe": {
                            "exec": {"command": ["cat", "/tmp/ok"]},
                            "initialDelaySeconds": 5,
                        },
                        "securityContext": {"runAsUser": -1, "privileged": false},
                        "volumeMounts": [{"name": "cache", "mountPath": "/cache"}],
                    }],
                    "volumes": [{"name": "cache", "emptyDir": {}}],
                    "securityContext": {"supplementalGroups": [1000, -2, 3000000000_i64]},
                    "terminationGracePeriodSeconds": 30,
                },
            },
        },
        "status": {
            "observedGeneration": 3,
            "replicas": 2,
            "conditions": [{
                "type": "Available",
                "status": "True",
                "lastUpdateTime": "2024-05-01T10:00:05Z",
                "lastTransitionTime": "2024-05-01T10:00:05Z",
                "reason": "MinimumReplicasAvailable",
            }],
        },
    })
}

#[test]
fn deployment_decodes_with_prost() {
    let deployment: apps::Deployment = typed(&deployment());
    let metadata = deployment.metadata.expect("metadata");
    assert_eq!(metadata.name.as_deref(), Some("web"));
    assert_eq!(metadata.generation, Some(3));
    assert_eq!(
        metadata.creation_timestamp.and_then(|t| t.seconds),
        Some(1_714_557_600)
    );
    // Go's value fields come out even when the JSON lacks them.
    assert_eq!(metadata.generate_name.as_deref(), Some(""));
    assert_eq!(metadata.deletion_timestamp, None);
    assert_eq!(metadata.labels.len(), 2);
    let managed = &metadata.managed_fields[0];
    assert_eq!(managed.subresource.as_deref(), Some(""));
    let fields_v1 = managed.fields_v1.as_ref().and_then(|f| f.raw.clone());
    assert_eq!(
        fields_v1.as_deref(),
        Some(&br#"{"f:spec":{"f:replicas":{}}}"#[..])
    );

    let spec = deployment.spec.expect("spec");
    assert_eq!(spec.replicas, Some(0), "a present zero is written");
    let rolling = spec
        .strategy
        .and_then(|s| s.rolling_update)
        .expect("rollingUpdate");
    let max_unavailable = rolling.max_unavailable.expect("maxUnavailable");
    assert_eq!(
        (
            max_unavailable.r#type,
            max_unavailable.int_val,
            max_unavailable.str_val.as_deref()
        ),
        (Some(1), Some(0), Some("25%"))
    );
    let max_surge = rolling.max_surge.expect("maxSurge");
    assert_eq!(
        (
            max_surge.r#type,
            max_surge.int_val,
            max_surge.str_val.as_deref()
        ),
        (Some(0), Some(1), Some(""))
    );

    let pod = spec.template.and_then(|t| t.spec).expect("pod spec");
    assert_eq!(pod.termination_grace_period_seconds, Some(30));
    assert_eq!(
        pod.security_context.map(|s| s.supplemental_groups),
        Some(vec![1000, -2, 3_000_000_000])
    );
    let volume = &pod.volumes[0];
    assert!(
        volume
            .volume_source
            .as_ref()
            .and_then(|s| s.empty_dir.as_ref())
            .is_some(),
        "emptyDir: {{}} is inlined into VolumeSource and kept although empty"
    );
    let container = &pod.containers[0];
    assert_eq!(container.ports[0].container_port, Some(80));
    assert_eq!(container.ports[0].host_port, None);
    assert_eq!(container.env[0].value.as_deref(), Some("prod"));
    assert_eq!(
        container.env[1]
            .value_from
            .as_ref()
            .and_then(|v| v.field_ref.as_ref())
            .and_then(|f| f.field_path.as_deref()),
        Some("status.podIP")
    );
    let resources = container.resources.as_ref().expect("resources");
    assert_eq!(resources.limits["cpu"].string.as_deref(), Some("500m"));
    assert_eq!(resources.limits["memory"].string.as_deref(), Some("128Mi"));
    assert_eq!(resources.requests["cpu"].string.as_deref(), Some("0.25"));
    let readiness = container.readiness_probe.as_ref().expect("readinessProbe");
    assert_eq!(readiness.period_seconds, Some(10));
    let http_get = readiness
        .handler
        .as_ref()
        .and_then(|h| h.http_get.as_ref())
        .expect("httpGet, inlined through ProbeHandler");
    assert_eq!(
        http_get.port.as_ref().and_then(|p| p.str_val.as_deref()),
        Some("http")
    );
    let liveness = container.liveness_probe.as_ref().expect("livenessProbe");
    assert_eq!(
        liveness
            .handler
            .as_ref()
            .and_then(|h| h.exec.as_ref())
            .map(|e| e.command.clone()),
        Some(vec!["cat".to_owned(), "/tmp/ok".to_owned()])
    );
    let security = container
        .security_context
        .as_ref()
        .expect("securityContext");
    assert_eq!(security.run_as_user, Some(-1));
    assert_eq!(security.privileged, Some(false));

    let status = deployment.status.expect("status");
    assert_eq!(status.replicas, Some(2));
    assert_eq!(
        status.conditions[0]
            .last_transition_time
            .as_ref()
            .and_then(|t| t.seconds),
        Some(1_714_557_605)
    );
}

#[test]
fn deployment_round_trips_through_the_decoder() {
    let mut expected = deployment();
    // The decoder prints numbers as JSON would; a quantity given as a
    // number comes back as its string.
    expected["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] =
        json!("0.25");
    // ObjectMeta's value fields are written as Go writes them; `generation`
    // is the one the decoder keeps (a zero number may be meaningful).
    expected["spec"]["template"]["metadata"]["generation"] = json!(0);
    assert_eq!(decode_back(&encode(&deployment())), expected);
}

/// The same object, built as prost structs with every Go value field set,
/// encodes to the same bytes: field order, unpacked repeats, sign-extended
/// negatives and nested lengths all agree with a second implementation.
#[test]
fn secret_bytes_equal_prost_encoding() {
    let secret = json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "creds",
            "namespace": "prod",
            "resourceVersion": "12",
            "creationTimestamp": "2024-05-01T10:00:00Z",
            "deletionTimestamp": "2024-05-02T10:00:00Z",
            "deletionGracePeriodSeconds": 0,
            "finalizers": ["a", "b"],
            "ownerReferences": [{
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "name": "builder",
                "uid": "u-1",
                "controller": true,
            }],
        },
        "immutable": true,
        "data": {"password": "aHVudGVyMg==", "raw": "AAEC/w"},
        "type": "Opaque",
    });
    let meta_zero = |name: &str| Some(name.to_owned());
    let expected = core::Secret {
        metadata: Some(meta::ObjectMeta {
            name: meta_zero("creds"),
            generate_name: meta_zero(""),
            namespace: meta_zero("prod"),
            self_link: meta_zero(""),
            uid: meta_zero(""),
            resource_version: meta_zero("12"),
            generation: Some(0),
            creation_timestamp: Some(meta::Time {
                seconds: Some(1_714_557_600),
                nanos: Some(0),
            }),
            deletion_timestamp: Some(meta::Time {
                seconds: Some(1_714_644_000),
                nanos: Some(0),
            }),
            deletion_grace_period_seconds: Some(0),
            finalizers: vec!["a".into(), "b".into()],
            owner_references: vec![meta::OwnerReference {
                api_version: meta_zero("v1"),
                kind: meta_zero("ServiceAccount"),
                name: meta_zero("builder"),
                uid: meta_zero("u-1"),
                controller: Some(true),
                block_owner_deletion: None,
            }],
            ..Default::default()
        }),
        immutable: Some(true),
        data: [
            ("password".to_owned(), b"hunter2".to_vec()),
            ("raw".to_owned(), vec![0, 1, 2, 255]),
        ]
        .into(),
        string_data: Default::default(),
        r#type: Some("Opaque".into()),
    };
    let raw = unwrap_envelope(&encode(&secret), "v1", "Secret");
    assert_eq!(raw, expected.encode_to_vec());
}

#[test]
fn pod_status_times_and_micro_times() {
    let pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "creationTimestamp": null},
        "spec": {"containers": [{"name": "c", "image": "busybox"}], "nodeName": "n1"},
        "status": {
            "phase": "Running",
            "podIP": "10.0.0.7",
            "podIPs": [{"ip": "10.0.0.7"}],
            // Fractions of a second are dropped on the wire, as upstream's
            // ProtoTime does.
            "startTime": "2024-05-01T10:00:00.75Z",
            "conditions": [{"type": "Ready", "status": "True", "lastProbeTime": null}],
            "containerStatuses": [{
                "name": "c",
                "ready": true,
                "restartCount": 0,
                "image": "busybox",
                "imageID": "",
                "state": {"running": {"startedAt": "2024-05-01T10:00:01+02:00"}},
            }],
        },
    });
    let decoded: core::Pod = typed(&pod);
    let metadata = decoded.metadata.expect("metadata");
    // A value Time that is null is Go's zero time: an empty message.
    assert_eq!(
        metadata.creation_timestamp,
        Some(meta::Time {
            seconds: None,
            nanos: None
        })
    );
    let status = decoded.status.expect("status");
    assert_eq!(
        status.start_time,
        Some(meta::Time {
            seconds: Some(1_714_557_600),
            nanos: Some(0)
        })
    );
    assert_eq!(status.conditions[0].last_probe_time, None);
    let container = &status.container_statuses[0];
    assert_eq!(container.ready, Some(true));
    assert_eq!(container.restart_count, Some(0));
    assert_eq!(
        container
            .state
            .as_ref()
            .and_then(|s| s.running.as_ref())
            .and_then(|r| r.started_at.as_ref())
            .and_then(|t| t.seconds),
        Some(1_714_550_401)
    );

    let event = json!({
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "e"},
        "eventTime": "2024-05-01T10:00:00.123456Z",
        "reportingController": "capstan",
        "reportingInstance": "capstan-0",
        "action": "Scheduled",
        "reason": "Scheduled",
        "type": "Normal",
    });
    let decoded: k8s_pb::api::events::v1::Event = typed(&event);
    assert_eq!(
        decoded.event_time,
        Some(meta::MicroTime {
            seconds: Some(1_714_557_600),
            nanos: Some(123_456_000)
        })
    );
    assert_eq!(
        decode_back(&encode(&event))["eventTime"],
        event["eventTime"]
    );
}

#[test]
fn service_with_named_target_port() {
    let service = json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web"},
        "spec": {"ports": [{"port": 443, "targetPort": "https"}], "type": "NodePort"},
    });
    let decoded: core::Service = typed(&service);
    let port = &decoded.spec.expect("spec").ports[0];
    assert_eq!(port.port, Some(443));
    let target = port.target_port.as_ref().expect("targetPort");
    assert_eq!(
        (target.r#type, target.int_val, target.str_val.as_deref()),
        (Some(1), Some(0), Some("https"))
    );
}

#[test]
fn config_map_list() {
    let list = json!({
        "apiVersion": "v1",
        "kind": "ConfigMapList",
        "metadata": {"resourceVersion": "99", "continue": "token", "remainingItemCount": 5},
        "items": [
            {"metadata": {"name": "a", "namespace": "default"}, "data": {"k": "v", "empty": ""}},
            {"metadata": {"name": "b", "namespace": "default"}, "binaryData": {"blob": "AAEC/w=="}},
        ],
    });
    let decoded: core::ConfigMapList = typed(&list);
    let metadata = decoded.metadata.expect("metadata");
    assert_eq!(metadata.resource_version.as_deref(), Some("99"));
    assert_eq!(metadata.r#continue.as_deref(), Some("token"));
    assert_eq!(metadata.remaining_item_count, Some(5));
    assert_eq!(metadata.self_link.as_deref(), Some(""));
    assert_eq!(decoded.items.len(), 2);
    assert_eq!(decoded.items[0].data["empty"], "");
    assert_eq!(decoded.items[1].binary_data["blob"], vec![0, 1, 2, 255]);

    // Map entries always carry both key and value, even an empty value.
    let raw = unwrap_envelope(&encode(&list), "v1", "ConfigMapList");
    let entry = [
        0x12, 0x09, 0x0a, 0x05, b'e', b'm', b'p', b't', b'y', 0x12, 0x00,
    ];
    assert!(raw.windows(entry.len()).any(|w| w == entry));

    // Back through the decoder: the written zeros reappear only where the
    // decoder keeps zeros (numbers), here ObjectMeta.generation.
    let mut expected = list.clone();
    for item in expected["items"].as_array_mut().into_iter().flatten() {
        item["metadata"]["generation"] = json!(0);
    }
    assert_eq!(decode_back(&encode(&list)), expected);
}

#[test]
fn status_failure_with_details_and_causes() {
    let status = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "Deployment.apps \"web\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0",
        "reason": "Invalid",
        "details": {
            "name": "web",
            "group": "apps",
            "kind": "Deployment",
            "causes": [{
                "reason": "FieldValueInvalid",
                "message": "Invalid value: -1: must be greater than or equal to 0",
                "field": "spec.replicas",
            }],
        },
        "code": 422,
    });
    let body = encode(&status);
    let raw = unwrap_envelope(&body, "v1", "Status");
    let decoded = meta::Status::decode(raw.as_slice()).expect("Status");
    assert_eq!(decoded.status.as_deref(), Some("Failure"));
    assert_eq!(decoded.reason.as_deref(), Some("Invalid"));
    assert_eq!(decoded.code, Some(422));
    let details = decoded.details.expect("details");
    assert_eq!(details.kind.as_deref(), Some("Deployment"));
    assert_eq!(details.retry_after_seconds, Some(0));
    assert_eq!(details.uid.as_deref(), Some(""));
    assert_eq!(details.causes[0].field.as_deref(), Some("spec.replicas"));
    assert_eq!(
        details.causes[0].reason.as_deref(),
        Some("FieldValueInvalid")
    );

    // Every Go field of these types is known, so prost (which writes each
    // Some) must agree byte for byte.
    let expected = meta::Status {
        metadata: Some(meta::ListMeta {
            self_link: Some(String::new()),
            resource_version: Some(String::new()),
            r#continue: Some(String::new()),
            remaining_item_count: None,
        }),
        status: Some("Failure".into()),
        message: status["message"].as_str().map(str::to_owned),
        reason: Some("Invalid".into()),
        details: Some(meta::StatusDetails {
            name: Some("web".into()),
            group: Some("apps".into()),
            kind: Some("Deployment".into()),
            uid: Some(String::new()),
            causes: vec![meta::StatusCause {
                reason: Some("FieldValueInvalid".into()),
                message: Some("Invalid value: -1: must be greater than or equal to 0".into()),
                field: Some("spec.replicas".into()),
            }],
            retry_after_seconds: Some(0),
        }),
        code: Some(422),
    };
    assert_eq!(raw, expected.encode_to_vec());

    // apiVersion meta.k8s.io/v1 selects the same message.
    let mut meta_status = status.clone();
    meta_status["apiVersion"] = json!("meta.k8s.io/v1");
    let raw_meta = unwrap_envelope(&encode(&meta_status), "meta.k8s.io/v1", "Status");
    assert_eq!(raw_meta, raw);
}

#[test]
fn watch_event_frame() {
    let object = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "settings", "namespace": "default", "resourceVersion": "7"},
        "data": {"mode": "fast"},
    });
    let frame = match encode_watch_event("ADDED", &object) {
        Ok(frame) => frame,
        Err(error) => panic!("{error}"),
    };
    let (length, event) = frame.split_at(4);
    let length = u32::from_be_bytes(length.try_into().expect("4 bytes"));
    assert_eq!(length as usize, event.len());
    let event = meta::WatchEvent::decode(event).expect("WatchEvent");
    assert_eq!(event.r#type.as_deref(), Some("ADDED"));
    let embedded = event.object.and_then(|o| o.raw).expect("object.raw");
    // The embedded object is the full envelope, exactly as a GET returns it.
    assert_eq!(embedded, encode(&object));
    assert_eq!(decode_back(&embedded)["data"], json!({"mode": "fast"}));

    // Two frames back to back split cleanly on their length prefixes.
    let bookmark = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"resourceVersion": "8", "annotations": {"k8s.io/initial-events-end": "true"}},
    });
    let mut stream = frame.clone();
    stream.extend(encode_watch_event("BOOKMARK", &bookmark).expect("bookmark"));
    let second = &stream[frame.len()..];
    let second_length = u32::from_be_bytes(second[..4].try_into().expect("4 bytes"));
    assert_eq!(second_length as usize, second.len() - 4);
    let event = meta::WatchEvent::decode(&second[4..]).expect("WatchEvent");
    assert_eq!(event.r#type.as_deref(), Some("BOOKMARK"));
}

#[test]
fn partial_object_metadata_scale_and_discovery() {
    let partial = json!({
        "apiVersion": "meta.k8s.io/v1",
        "kind": "PartialObjectMetadataList",
        "metadata": {"resourceVersion": "5"},
        "items": [{
            "apiVersion": "meta.k8s.io/v1",
            "kind": "PartialObjectMetadata",
            "metadata": {"name": "a", "generation": 1},
        }],
    });
    let decoded: meta::PartialObjectMetadataList = typed(&partial);
    assert_eq!(
        decoded.items[0]
            .metadata
            .as_ref()
            .and_then(|m| m.name.as_deref()),
        Some("a")
    );
    // PartialObjectMetadata has no TypeMeta on the wire, so items lose
    // theirs, as they do coming from upstream.
    let mut expected = partial.clone();
    expected["items"][0] = json!({"metadata": {"name": "a", "generation": 1}});
    assert_eq!(decode_back(&encode(&partial)), expected);

    let scale = json!({
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": {"name": "web", "namespace": "default", "generation": 2},
        "spec": {"replicas": 3},
        "status": {"replicas": 2, "selector": "app=web"},
    });
    let decoded: k8s_pb::api::autoscaling::v1::Scale = typed(&scale);
    assert_eq!(decoded.spec.and_then(|s| s.replicas), Some(3));
    assert_eq!(decode_back(&encode(&scale)), scale);

    let resources = json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": "apps/v1",
        "resources": [{
            "name": "deployments",
            "singularName": "deployment",
            "namespaced": true,
            "kind": "Deployment",
            "verbs": ["create", "get", "list"],
            "shortNames": ["deploy"],
            "categories": ["all"],
        }],
    });
    let decoded: meta::APIResourceList = typed(&resources);
    let resource = &decoded.resources[0];
    assert_eq!(
        resource.verbs.as_ref().map(|v| v.items.clone()),
        Some(vec![
            "create".to_owned(),
            "get".to_owned(),
            "list".to_owned()
        ])
    );
    assert_eq!(resource.namespaced, Some(true));
    assert_eq!(resource.group.as_deref(), Some(""));

    for (kind, object) in [
        (
            "APIGroupList",
            json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": [{
                "name": "apps",
                "versions": [{"groupVersion": "apps/v1", "version": "v1"}],
                "preferredVersion": {"groupVersion": "apps/v1", "version": "v1"},
            }]}),
        ),
        (
            "APIVersions",
            json!({"kind": "APIVersions", "apiVersion": "v1", "versions": ["v1"],
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "10.0.0.1:6443"}]}),
        ),
    ] {
        let back = decode_back(&encode(&object));
        assert_eq!(back, object, "{kind}");
    }
}

#[test]
fn special_shapes_round_trip() {
    let revision = json!({
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {"name": "web-1", "generation": 0},
        "data": {"spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}},
        "revision": 1,
    });
    let decoded: apps::ControllerRevision = typed(&revision);
    assert_eq!(
        decoded.data.and_then(|d| d.raw).as_deref(),
        Some(&br#"{"spec":{"template":{"spec":{"containers":[{"name":"c"}]}}}}"#[..])
    );
    assert_eq!(decode_back(&encode(&revision)), revision);

    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com", "generation": 1},
        "spec": {
            "group": "example.com",
            "names": {"plural": "widgets", "kind": "Widget"},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1",
                "served": true,
                "storage": true,
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "size": {"type": "number", "maximum": 1.5, "minimum": -2.25},
                        "tags": {"type": "array", "items": {"type": "string"}},
                        "extra": {"type": "object", "additionalProperties": false},
                        "any": {"type": "object", "additionalProperties": {"type": "integer"}},
                        "mode": {"type": "string", "enum": ["a", "b"], "default": "a"},
                        "deps": {"type": "object", "dependencies": {"x": ["y"]}},
                    },
                    "required": ["size"],
                }},
            }],
        },
    });
    let decoded: apiextensions::CustomResourceDefinition = typed(&crd);
    let schema = decoded
        .spec
        .and_then(|s| s.versions.into_iter().next())
        .and_then(|v| v.schema)
        .and_then(|s| s.open_apiv3_schema)
        .expect("schema");
    let size = &schema.properties["size"];
    assert_eq!((size.maximum, size.minimum), (Some(1.5), Some(-2.25)));
    assert_eq!(
        schema.properties["extra"]
            .additional_properties
            .as_ref()
            .map(|p| (p.allows, p.schema.is_some())),
        Some((Some(false), false))
    );
    assert_eq!(
        schema.properties["any"]
            .additional_properties
            .as_ref()
            .map(|p| (p.allows, p.schema.is_some())),
        Some((Some(true), true))
    );
    assert_eq!(
        schema.properties["mode"]
            .default
            .as_ref()
            .and_then(|d| d.raw.as_deref()),
        Some(&b"\"a\""[..])
    );
    assert_eq!(decode_back(&encode(&crd)), crd);
}

#[test]
fn errors_name_the_problem() {
    assert!(matches!(
        encode_object(&json!({"apiVersion": "example.com/v1", "kind": "Widget"})),
        Err(ProtobufError::UnknownKind { .. })
    ));
    assert!(matches!(
        encode_object(&json!({"metadata": {"name": "x"}})),
        Err(ProtobufError::MissingTypeMeta)
    ));
    assert!(matches!(
        encode_object(&json!(["not", "an", "object"])),
        Err(ProtobufError::NotAnObject)
    ));
    let bad = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "spec": {"template": {"spec": {"containers": [{"name": "c", "ports": [{"containerPort": "80"}]}]}}},
    });
    match encode_object(&bad) {
        Err(ProtobufError::InvalidValue { message, reason }) => {
            assert_eq!(message, "k8s.io.api.apps.v1.Deployment");
            assert_eq!(
                reason,
                "spec.template.spec.containers[0].ports[0].containerPort: \
                 expected an integer, got a string"
            );
        }
        other => panic!("{other:?}"),
    }
    let overflow = json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"replicas": 4_294_967_296_i64}});
    assert!(matches!(
        encode_object(&overflow),
        Err(ProtobufError::InvalidValue { reason, .. }) if reason.starts_with("spec.replicas: ")
    ));
    let bad_time =
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"creationTimestamp": "yesterday"}});
    assert!(matches!(
        encode_object(&bad_time),
        Err(ProtobufError::InvalidValue { reason, .. }) if reason.starts_with("metadata.creationTimestamp: ")
    ));
    let bad_bytes = json!({"apiVersion": "v1", "kind": "Secret", "data": {"k": "not base64!"}});
    assert!(matches!(
        encode_object(&bad_bytes),
        Err(ProtobufError::InvalidValue { reason, .. }) if reason.starts_with("data[k]: ")
    ));
}

/// Keys the schema does not know are dropped, as upstream's typed decoding
/// drops them before it could ever respond with them.
#[test]
fn unknown_json_fields_are_skipped() {
    let with_extra = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "a", "futureField": {"x": 1}},
        "data": {"k": "v"},
        "notInTheSchema": [1, 2, 3],
    });
    let without = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "a"},
        "data": {"k": "v"},
    });
    assert_eq!(encode(&with_extra), encode(&without));
}

#[test]
fn encode_message_without_envelope() {
    let time = encode_message(
        "k8s.io.apimachinery.pkg.apis.meta.v1.Time",
        &json!("1970-01-01T00:00:01Z"),
    );
    assert_eq!(time.ok(), Some(vec![0x08, 0x01, 0x10, 0x00]));
    // Go's zero time and null both give an empty message.
    for zero in [json!("0001-01-01T00:00:00Z"), Value::Null] {
        let empty = encode_message("k8s.io.apimachinery.pkg.apis.meta.v1.Time", &zero);
        assert_eq!(empty.ok(), Some(vec![]));
    }
    let duration = encode_message(
        "k8s.io.apimachinery.pkg.apis.meta.v1.Duration",
        &json!("1m30s"),
    );
    let expected = meta::Duration {
        duration: Some(90_000_000_000),
    };
    assert_eq!(duration.ok(), Some(expected.encode_to_vec()));
    assert!(matches!(
        encode_message("k8s.io.api.core.v1.NoSuchThing", &json!({})),
        Err(ProtobufError::UnknownMessage(_))
    ));
}

#[test]
fn go_duration_parsing() {
    for (text, nanos) in [
        ("0", 0),
        ("0s", 0),
        ("1h2m3s", 3_723_000_000_000),
        ("1.5s", 1_500_000_000),
        ("500ms", 500_000_000),
        ("2\u{b5}s", 2_000),
        ("3us", 3_000),
        ("-1m", -60_000_000_000),
        ("+7ns", 7),
        (".5h", 1_800_000_000_000),
    ] {
        assert_eq!(parse_go_duration(text), Some(nanos), "{text}");
        assert_eq!(
            parse_go_duration(&super::decode::go_duration(nanos)),
            Some(nanos),
            "{text} through Go's printing"
        );
    }
    for bad in ["", "1", "s", "1x", "1.s.", "-", "99999999999999999999h"] {
        assert_eq!(parse_go_duration(bad), None, "{bad}");
    }
}

#[test]
fn deep_nesting_is_refused() {
    let mut schema = json!({"type": "string"});
    for _ in 0..120 {
        schema = json!({"type": "object", "properties": {"x": schema}});
    }
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "spec": {"versions": [{"name": "v1", "schema": {"openAPIV3Schema": schema}}]},
    });
    assert!(matches!(
        encode_object(&crd),
        Err(ProtobufError::TooDeep(_))
    ));
}

/// A list put together from its items' envelopes is the list encoded
/// whole, byte for byte; items of another type are refused.
#[test]
fn a_list_from_item_envelopes_is_the_list_encoded_whole() {
    let pod = |name: &str, node: &str| {
        json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "resourceVersion": "12",
                "labels": {"app": "web"}, "creationTimestamp": "2026-11-27T05:00:00Z"},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "nginx",
                "resources": {"limits": {"cpu": "500m"}}, "ports": [{"containerPort": 80}]}]},
            "status": {"phase": "Running"}})
    };
    let items = [pod("a", "n1"), pod("b", "n2"), pod("c", "")];
    for (metadata, items) in [
        (
            json!({"resourceVersion": "40", "continue": "abc", "remainingItemCount": 2}),
            &items[..],
        ),
        (json!({"resourceVersion": "40"}), &items[..0]),
    ] {
        let head = json!({"apiVersion": "v1", "kind": "PodList", "metadata": metadata});
        let mut whole = head.clone();
        whole["items"] = Value::Array(items.to_vec());
        let envelopes: Vec<Vec<u8>> = items.iter().map(encode).collect();
        let assembled = encode_list(&head, envelopes.iter().map(Vec::as_slice)).expect("a list");
        assert_eq!(assembled, encode(&whole));
        let list = core::PodList::decode(unwrap_envelope(&assembled, "v1", "PodList").as_slice())
            .expect("a PodList");
        assert_eq!(list.items.len(), items.len());
    }
    let head = json!({"apiVersion": "v1", "kind": "PodList", "metadata": {}});
    let namespace =
        encode(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}}));
    assert!(encode_list(&head, [namespace.as_slice()]).is_err());
    let pods = [encode(&items[0]), namespace];
    assert!(encode_list(&head, pods.iter().map(Vec::as_slice)).is_err());
    let not_a_list = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {}});
    assert!(encode_list(&not_a_list, []).is_err());
}
