use std::collections::BTreeMap;

use k8s_pb::api::apps::v1 as apps;
use k8s_pb::api::core::v1 as core;
use k8s_pb::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiextensions;
use k8s_pb::apimachinery::pkg::api::resource::Quantity;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_pb::apimachinery::pkg::runtime::{RawExtension, TypeMeta, Unknown};
use k8s_pb::apimachinery::pkg::util::intstr::IntOrString;
use prost::Message as _;
use serde_json::{json, Value};

use super::decode::go_duration;
use super::*;

/// What client-go's protobuf serializer sends: the prefix, then
/// runtime.Unknown with the type and the encoded object.
fn envelope(api_version: &str, kind: &str, object: &impl prost::Message) -> Vec<u8> {
    let unknown = Unknown {
        type_meta: Some(TypeMeta {
            api_version: Some(api_version.into()),
            kind: Some(kind.into()),
        }),
        raw: Some(object.encode_to_vec()),
        content_encoding: Some(String::new()),
        content_type: Some(String::new()),
    };
    let mut body = PREFIX.to_vec();
    body.extend(unknown.encode_to_vec());
    body
}

fn named(name: &str) -> Option<meta::ObjectMeta> {
    Some(meta::ObjectMeta {
        name: Some(name.into()),
        ..Default::default()
    })
}

fn strings(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).into(), (*v).into()))
        .collect()
}

fn decode(body: &[u8]) -> Value {
    match decode_envelope(body) {
        Ok(value) => value,
        Err(error) => panic!("decode failed: {error}"),
    }
}

#[test]
fn schema_is_generated_from_k8s_pb() {
    assert!(
        schema::MESSAGES.len() > 1000,
        "{} messages",
        schema::MESSAGES.len()
    );
    for name in [
        "k8s.io.api.core.v1.Namespace",
        "k8s.io.api.apps.v1.Deployment",
        "k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta",
        "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps",
        "k8s.io.kube_aggregator.pkg.apis.apiregistration.v1.APIService",
    ] {
        assert!(schema::find(name).is_some(), "{name}");
    }
    let sorted = schema::MESSAGES
        .windows(2)
        .all(|pair| pair[0].name.to_ascii_lowercase() < pair[1].name.to_ascii_lowercase());
    assert!(sorted, "messages must be sorted for binary search");
    for message in schema::MESSAGES {
        assert!(
            message
                .fields
                .windows(2)
                .all(|pair| pair[0].tag < pair[1].tag),
            "{}",
            message.name
        );
    }
}

#[test]
fn namespace() {
    let namespace = core::Namespace {
        metadata: named("demo"),
        spec: Some(core::NamespaceSpec::default()),
        status: Some(core::NamespaceStatus::default()),
    };
    let value = decode(&envelope("v1", "Namespace", &namespace));
    assert_eq!(
        value,
        json!({
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": "demo"},
            "spec": {},
            "status": {},
        })
    );
    let keys: Vec<&String> = value
        .as_object()
        .map(|o| o.keys().collect())
        .unwrap_or_default();
    assert_eq!(keys[..2], ["apiVersion", "kind"]);
}

#[test]
fn decode_message_without_envelope() {
    let namespace = core::Namespace {
        metadata: named("demo"),
        ..Default::default()
    };
    let value = decode_message("k8s.io.api.core.v1.Namespace", &namespace.encode_to_vec());
    assert_eq!(value.ok(), Some(json!({"metadata": {"name": "demo"}})));
    assert!(matches!(
        decode_message("k8s.io.api.core.v1.NoSuchThing", &[]),
        Err(ProtobufError::UnknownMessage(_))
    ));
}

#[test]
fn config_map_with_data_and_binary_data() {
    let config_map = core::ConfigMap {
        metadata: Some(meta::ObjectMeta {
            name: Some("settings".into()),
            namespace: Some("default".into()),
            ..Default::default()
        }),
        data: strings(&[("mode", "fast"), ("empty", "")]),
        binary_data: [("blob".to_owned(), vec![0u8, 1, 2, 255])].into(),
        immutable: None,
    };
    let value = decode(&envelope("v1", "ConfigMap", &config_map));
    assert_eq!(
        value,
        json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "settings", "namespace": "default"},
            // Map values are never dropped, even when empty.
            "data": {"empty": "", "mode": "fast"},
            "binaryData": {"blob": "AAEC/w=="},
        })
    );
}

#[test]
fn secret_bytes_are_base64() {
    let secret = core::Secret {
        metadata: named("creds"),
        data: [("password".to_owned(), b"hunter2".to_vec())].into(),
        string_data: strings(&[("user", "admin")]),
        r#type: Some("Opaque".into()),
        immutable: Some(false),
    };
    let value = decode(&envelope("v1", "Secret", &secret));
    assert_eq!(
        value,
        json!({
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "creds"},
            "immutable": false,
            "data": {"password": "aHVudGVyMg=="},
            "stringData": {"user": "admin"},
            "type": "Opaque",
        })
    );
}

fn deployment() -> apps::Deployment {
    let labels = strings(&[("app", "web")]);
    let container = core::Container {
        name: Some("nginx".into()),
        image: Some("nginx:1.27".into()),
        ports: vec![core::ContainerPort {
            container_port: Some(80),
            protocol: Some("TCP".into()),
            name: Some(String::new()),
            host_ip: Some(String::new()),
            host_port: None,
        }],
        env: vec![core::EnvVar {
            name: Some("MODE".into()),
            value: Some("prod".into()),
            value_from: None,
        }],
        resources: Some(core::ResourceRequirements {
            limits: [
                (
                    "cpu".to_owned(),
                    Quantity {
                        string: Some("500m".into()),
                    },
                ),
                (
                    "memory".to_owned(),
                    Quantity {
                        string: Some("128Mi".into()),
                    },
                ),
            ]
            .into(),
            ..Default::default()
        }),
        ..Default::default()
    };
    apps::Deployment {
        metadata: Some(meta::ObjectMeta {
            name: Some("web".into()),
            labels: labels.clone(),
            creation_timestamp: Some(meta::Time {
                seconds: Some(1_704_164_645),
                nanos: Some(0),
            }),
            ..Default::default()
        }),
        spec: Some(apps::DeploymentSpec {
            replicas: Some(0),
            selector: Some(meta::LabelSelector {
                match_labels: labels.clone(),
                match_expressions: Vec::new(),
            }),
            template: Some(core::PodTemplateSpec {
                metadata: Some(meta::ObjectMeta {
                    labels,
                    // A zero Time: Go sends an empty message.
                    creation_timestamp: Some(meta::Time::default()),
                    ..Default::default()
                }),
                spec: Some(core::PodSpec {
                    containers: vec![container],
                    ..Default::default()
                }),
            }),
            strategy: Some(apps::DeploymentStrategy {
                r#type: Some("RollingUpdate".into()),
                rolling_update: Some(apps::RollingUpdateDeployment {
                    max_surge: Some(IntOrString {
                        r#type: Some(1),
                        int_val: Some(0),
                        str_val: Some("25%".into()),
                    }),
                    max_unavailable: Some(IntOrString {
                        r#type: Some(0),
                        int_val: Some(1),
                        str_val: Some(String::new()),
                    }),
                }),
            }),
            ..Default::default()
        }),
        status: Some(apps::DeploymentStatus::default()),
    }
}

#[test]
fn deployment_with_template_resources_and_int_or_string() {
    let value = decode(&envelope("apps/v1", "Deployment", &deployment()));
    assert_eq!(
        value,
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {
                "name": "web",
                "creationTimestamp": "2024-01-02T03:04:05Z",
                "labels": {"app": "web"},
            },
            "spec": {
                "replicas": 0,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{
                        "name": "nginx",
                        "image": "nginx:1.27",
                        "ports": [{"containerPort": 80, "protocol": "TCP"}],
                        "env": [{"name": "MODE", "value": "prod"}],
                        "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}},
                    }]},
                },
                "strategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxUnavailable": 1, "maxSurge": "25%"},
                },
            },
            "status": {},
        })
    );
}

#[test]
fn service_with_int_target_port() {
    let service = core::Service {
        metadata: named("web"),
        spec: Some(core::ServiceSpec {
            ports: vec![core::ServicePort {
                port: Some(80),
                target_port: Some(IntOrString {
                    r#type: Some(0),
                    int_val: Some(8080),
                    str_val: None,
                }),
                protocol: Some("TCP".into()),
                ..Default::default()
            }],
            selector: strings(&[("app", "web")]),
            r#type: Some("ClusterIP".into()),
            cluster_ip: Some(String::new()),
            ..Default::default()
        }),
        status: None,
    };
    let value = decode(&envelope("v1", "Service", &service));
    assert_eq!(
        value["spec"],
        json!({
            "ports": [{"protocol": "TCP", "port": 80, "targetPort": 8080}],
            "selector": {"app": "web"},
            "type": "ClusterIP",
        })
    );
}

#[test]
fn omitempty_drops_empty_strings_but_keeps_zeros_false_and_empty_objects() {
    let pod = core::Pod {
        metadata: Some(meta::ObjectMeta {
            name: Some("p".into()),
            namespace: Some(String::new()),
            generate_name: Some(String::new()),
            generation: Some(0),
            ..Default::default()
        }),
        spec: Some(core::PodSpec {
            containers: vec![core::Container {
                name: Some("c".into()),
                image: Some(String::new()),
                stdin: Some(false),
                working_dir: Some(String::new()),
                ..Default::default()
            }],
            volumes: vec![core::Volume {
                name: Some("cache".into()),
                volume_source: Some(core::VolumeSource {
                    empty_dir: Some(core::EmptyDirVolumeSource::default()),
                    ..Default::default()
                }),
            }],
            host_network: Some(false),
            termination_grace_period_seconds: Some(0),
            ..Default::default()
        }),
        status: None,
    };
    let value = decode(&envelope("v1", "Pod", &pod));
    assert_eq!(
        value,
        json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "generation": 0},
            "spec": {
                // VolumeSource is embedded inline in Go's Volume.
                "volumes": [{"name": "cache", "emptyDir": {}}],
                "containers": [{"name": "c", "stdin": false}],
                "terminationGracePeriodSeconds": 0,
                "hostNetwork": false,
            },
        })
    );
}

#[test]
fn json_names_follow_the_openapi_schema() {
    let volume = core::Volume {
        name: Some("ebs".into()),
        volume_source: Some(core::VolumeSource {
            aws_elastic_block_store: Some(core::AwsElasticBlockStoreVolumeSource {
                volume_id: Some("vol-1".into()),
                fs_type: Some("ext4".into()),
                ..Default::default()
            }),
            ..Default::default()
        }),
    };
    let value = decode_message("k8s.io.api.core.v1.Volume", &volume.encode_to_vec());
    assert_eq!(
        value.ok(),
        Some(
            json!({"name": "ebs", "awsElasticBlockStore": {"volumeID": "vol-1", "fsType": "ext4"}})
        )
    );

    let status = core::PodStatus {
        pod_ip: Some("10.0.0.1".into()),
        pod_ips: vec![core::PodIp {
            ip: Some("10.0.0.1".into()),
        }],
        host_ip: Some("192.0.2.1".into()),
        ..Default::default()
    };
    let value = decode_message("k8s.io.api.core.v1.PodStatus", &status.encode_to_vec());
    assert_eq!(
        value.ok(),
        Some(json!({"hostIP": "192.0.2.1", "podIP": "10.0.0.1", "podIPs": [{"ip": "10.0.0.1"}]}))
    );
}

#[test]
fn local_object_reference_is_inlined() {
    let selector = core::ConfigMapKeySelector {
        local_object_reference: Some(core::LocalObjectReference {
            name: Some("settings".into()),
        }),
        key: Some("mode".into()),
        optional: Some(true),
    };
    let value = decode_message(
        "k8s.io.api.core.v1.ConfigMapKeySelector",
        &selector.encode_to_vec(),
    );
    assert_eq!(
        value.ok(),
        Some(json!({"name": "settings", "key": "mode", "optional": true}))
    );
}

#[test]
fn custom_resource_definition_schema_types() {
    let props = |ty: &str| apiextensions::JsonSchemaProps {
        r#type: Some(ty.into()),
        ..Default::default()
    };
    let mut spec_props = props("object");
    spec_props.x_kubernetes_preserve_unknown_fields = Some(true);
    spec_props.r#ref = Some("#/definitions/x".into());
    spec_props.default = Some(apiextensions::Json {
        raw: Some(br#"{"size":3}"#.to_vec()),
    });
    spec_props.additional_properties = Some(Box::new(apiextensions::JsonSchemaPropsOrBool {
        allows: Some(false),
        schema: None,
    }));
    spec_props.items = Some(Box::new(apiextensions::JsonSchemaPropsOrArray {
        schema: Some(Box::new(props("string"))),
        j_son_schemas: Vec::new(),
    }));
    let value = decode_message(
        "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps",
        &spec_props.encode_to_vec(),
    );
    assert_eq!(
        value.ok(),
        Some(json!({
            "$ref": "#/definitions/x",
            "type": "object",
            "default": {"size": 3},
            "items": {"type": "string"},
            "additionalProperties": false,
            "x-kubernetes-preserve-unknown-fields": true,
        }))
    );
}

#[test]
fn special_types() {
    let time = meta::Time {
        seconds: Some(1_704_164_645),
        nanos: Some(123_456_789),
    };
    let micro = decode_message(
        "k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime",
        &time.encode_to_vec(),
    );
    assert_eq!(micro.ok(), Some(json!("2024-01-02T03:04:05.123456Z")));
    let seconds = decode_message(
        "k8s.io.apimachinery.pkg.apis.meta.v1.Time",
        &time.encode_to_vec(),
    );
    assert_eq!(seconds.ok(), Some(json!("2024-01-02T03:04:05Z")));
    let zero = decode_message("k8s.io.apimachinery.pkg.apis.meta.v1.Time", &[]);
    assert_eq!(zero.ok(), Some(Value::Null));

    let duration = meta::Duration {
        duration: Some(3_723_000_000_000),
    };
    let value = decode_message(
        "k8s.io.apimachinery.pkg.apis.meta.v1.Duration",
        &duration.encode_to_vec(),
    );
    assert_eq!(value.ok(), Some(json!("1h2m3s")));

    let raw = RawExtension {
        raw: Some(br#"{"a":[1,true]}"#.to_vec()),
    };
    let value = decode_message(
        "k8s.io.apimachinery.pkg.runtime.RawExtension",
        &raw.encode_to_vec(),
    );
    assert_eq!(value.ok(), Some(json!({"a": [1, true]})));

    let fields = meta::FieldsV1 {
        raw: Some(br#"{"f:metadata":{}}"#.to_vec()),
    };
    let value = decode_message(
        "k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1",
        &fields.encode_to_vec(),
    );
    assert_eq!(value.ok(), Some(json!({"f:metadata": {}})));

    let bad = RawExtension {
        raw: Some(b"{not json".to_vec()),
    };
    assert!(matches!(
        decode_message(
            "k8s.io.apimachinery.pkg.runtime.RawExtension",
            &bad.encode_to_vec()
        ),
        Err(ProtobufError::InvalidValue { .. })
    ));
}

#[test]
fn go_duration_strings() {
    let cases = [
        (0, "0s"),
        (1, "1ns"),
        (1_500, "1.5\u{b5}s"),
        (500_000_000, "500ms"),
        (1_500_000_000, "1.5s"),
        (60_000_000_000, "1m0s"),
        (3_600_000_000_000, "1h0m0s"),
        (3_723_000_000_000, "1h2m3s"),
        (-90_000_000_000, "-1m30s"),
        (i64::MIN, "-2562047h47m16.854775808s"),
    ];
    for (nanos, expected) in cases {
        assert_eq!(go_duration(nanos), expected, "{nanos}");
    }
}

#[test]
fn controller_revision_embeds_json_and_nested_envelopes() {
    let revision = apps::ControllerRevision {
        metadata: named("rev"),
        data: Some(RawExtension {
            raw: Some(br#"{"spec":{"x":1}}"#.to_vec()),
        }),
        revision: Some(2),
    };
    let value = decode(&envelope("apps/v1", "ControllerRevision", &revision));
    assert_eq!(value["data"], json!({"spec": {"x": 1}}));

    let nested = apps::ControllerRevision {
        data: Some(RawExtension {
            raw: Some(envelope(
                "v1",
                "Namespace",
                &core::Namespace {
                    metadata: named("inner"),
                    ..Default::default()
                },
            )),
        }),
        ..Default::default()
    };
    let value = decode(&envelope("apps/v1", "ControllerRevision", &nested));
    assert_eq!(
        value["data"],
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "inner"}})
    );
}

#[test]
fn type_meta_selects_the_package() {
    let options = meta::DeleteOptions {
        grace_period_seconds: Some(0),
        propagation_policy: Some("Foreground".into()),
        ..Default::default()
    };
    for api_version in ["meta.k8s.io/v1", "v1", "apps/v1"] {
        let value = decode(&envelope(api_version, "DeleteOptions", &options));
        assert_eq!(
            value,
            json!({
                "apiVersion": api_version,
                "kind": "DeleteOptions",
                "gracePeriodSeconds": 0,
                "propagationPolicy": "Foreground",
            })
        );
    }
    let list = core::ConfigMapList {
        metadata: None,
        items: vec![core::ConfigMap {
            metadata: named("a"),
            ..Default::default()
        }],
    };
    let value = decode(&envelope("v1", "ConfigMapList", &list));
    assert_eq!(value["items"], json!([{"metadata": {"name": "a"}}]));

    for (api_version, kind) in [
        ("v1", "Namespace"),
        ("apps/v1", "Deployment"),
        ("batch/v1", "Job"),
        ("batch/v1", "CronJob"),
        ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
        ("networking.k8s.io/v1", "Ingress"),
        ("policy/v1", "PodDisruptionBudget"),
        ("policy/v1", "Eviction"),
        ("autoscaling/v2", "HorizontalPodAutoscaler"),
        ("autoscaling/v1", "Scale"),
        ("scheduling.k8s.io/v1", "PriorityClass"),
        ("storage.k8s.io/v1", "StorageClass"),
        ("coordination.k8s.io/v1", "Lease"),
        ("discovery.k8s.io/v1", "EndpointSlice"),
        ("events.k8s.io/v1", "Event"),
        ("node.k8s.io/v1", "RuntimeClass"),
        ("certificates.k8s.io/v1", "CertificateSigningRequest"),
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
        ("apiregistration.k8s.io/v1", "APIService"),
        ("authentication.k8s.io/v1", "TokenRequest"),
        ("flowcontrol.apiserver.k8s.io/v1", "FlowSchema"),
        ("internal.apiserver.k8s.io/v1alpha1", "StorageVersion"),
    ] {
        let body = envelope(api_version, kind, &core::Namespace::default());
        let value = decode_envelope(&body);
        assert!(value.is_ok(), "{api_version} {kind}: {value:?}");
    }

    let body = envelope("example.com/v1", "Widget", &core::Namespace::default());
    assert!(matches!(
        decode_envelope(&body),
        Err(ProtobufError::UnknownKind { .. })
    ));
    let body = envelope("", "", &core::Namespace::default());
    assert!(matches!(
        decode_envelope(&body),
        Err(ProtobufError::MissingTypeMeta)
    ));
}

#[test]
fn unknown_fields_are_skipped_and_both_repeated_encodings_accepted() {
    let mut raw = core::Namespace {
        metadata: named("demo"),
        ..Default::default()
    }
    .encode_to_vec();
    // Field 999 as a varint, a length-delimited chunk and a fixed32.
    raw.extend([
        0xb8, 0x3e, 0x05, 0xba, 0x3e, 0x02, b'h', b'i', 0xbd, 0x3e, 1, 2, 3, 4,
    ]);
    let value = decode_message("k8s.io.api.core.v1.Namespace", &raw);
    assert_eq!(value.ok(), Some(json!({"metadata": {"name": "demo"}})));

    // PodSecurityContext.supplementalGroups: k8s-pb writes it unpacked;
    // a packed encoding must decode the same.
    let context = core::PodSecurityContext {
        supplemental_groups: vec![1, 2, 300],
        ..Default::default()
    };
    let unpacked = context.encode_to_vec();
    let index = schema::find("k8s.io.api.core.v1.PodSecurityContext").and_then(schema::message);
    let tag = index
        .and_then(|m| m.fields.iter().find(|f| f.name == "supplemental_groups"))
        .map(|f| f.tag);
    let Some(tag) = tag else {
        panic!("supplemental_groups not in the schema");
    };
    let mut packed = Vec::new();
    push_varint(&mut packed, u64::from(tag << 3 | 2));
    packed.extend([4, 1, 2, 0xac, 0x02]);
    let expected = json!({"supplementalGroups": [1, 2, 300]});
    for raw in [unpacked, packed] {
        let value = decode_message("k8s.io.api.core.v1.PodSecurityContext", &raw);
        assert_eq!(value.ok(), Some(expected.clone()));
    }
}

#[test]
fn envelope_errors() {
    assert!(matches!(
        decode_envelope(b"{\"kind\":\"Namespace\"}"),
        Err(ProtobufError::MissingPrefix)
    ));
    assert!(matches!(
        decode_envelope(b"k8s"),
        Err(ProtobufError::MissingPrefix)
    ));
    // A truncated length-delimited field.
    assert!(matches!(
        decode_envelope(b"k8s\0\x0a\x10ab"),
        Err(ProtobufError::MalformedEnvelope(_))
    ));

    let mut body = envelope("v1", "Namespace", &core::Namespace::default());
    let unknown = Unknown {
        type_meta: Some(TypeMeta {
            api_version: Some("v1".into()),
            kind: Some("Namespace".into()),
        }),
        raw: Some(Vec::new()),
        content_encoding: Some("gzip".into()),
        content_type: None,
    };
    body.truncate(4);
    body.extend(unknown.encode_to_vec());
    assert!(matches!(
        decode_envelope(&body),
        Err(ProtobufError::UnsupportedContentEncoding(_))
    ));

    // The object's bytes are truncated mid-field.
    let mut raw = core::Namespace {
        metadata: named("demo"),
        ..Default::default()
    }
    .encode_to_vec();
    raw.pop();
    let value = decode_message("k8s.io.api.core.v1.Namespace", &raw);
    assert!(
        matches!(value, Err(ProtobufError::Malformed { .. })),
        "{value:?}"
    );

    // Wrong wire type for a known field: metadata (1) as a varint.
    let value = decode_message("k8s.io.api.core.v1.Namespace", &[0x08, 0x01]);
    assert!(
        matches!(value, Err(ProtobufError::Malformed { .. })),
        "{value:?}"
    );
}

#[test]
fn deep_nesting_is_refused() {
    // JSONSchemaProps.not (a message field) nested far past the limit.
    let Some(message) =
        schema::find("k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps")
            .and_then(schema::message)
    else {
        panic!("JSONSchemaProps missing");
    };
    let Some(not) = message.fields.iter().find(|f| f.name == "not") else {
        panic!("JSONSchemaProps.not missing");
    };
    let mut raw: Vec<u8> = Vec::new();
    for _ in 0..200 {
        let mut outer = Vec::new();
        push_varint(&mut outer, u64::from(not.tag << 3 | 2));
        push_varint(&mut outer, raw.len() as u64);
        outer.extend(raw);
        raw = outer;
    }
    let value = decode_message(
        "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps",
        &raw,
    );
    assert!(matches!(value, Err(ProtobufError::TooDeep(_))), "{value:?}");
}

fn push_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// xorshift: deterministic, dependency-free noise for the fuzz tests.
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

#[test]
fn garbage_never_panics() {
    let mut noise = Noise(0x9e37_79b9_7f4a_7c15);
    let valid = envelope("apps/v1", "Deployment", &deployment());
    let targets = [
        "k8s.io.api.apps.v1.Deployment",
        "k8s.io.api.core.v1.Pod",
        "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition",
        "k8s.io.apimachinery.pkg.apis.meta.v1.Time",
        "k8s.io.apimachinery.pkg.util.intstr.IntOrString",
    ];
    let mut errors = 0;
    for round in 0..3000 {
        let body: Vec<u8> = match round % 3 {
            // Pure noise, with and without the prefix.
            0 => {
                let len = noise.below(200);
                let mut body: Vec<u8> = (0..len).map(|_| noise.next() as u8).collect();
                if round % 2 == 0 {
                    body.splice(0..0, PREFIX);
                }
                body
            }
            // A valid body with a few bytes flipped.
            1 => {
                let mut body = valid.clone();
                for _ in 0..1 + noise.below(4) {
                    let at = noise.below(body.len());
                    body[at] ^= 1 << noise.below(8);
                }
                body
            }
            // A valid body cut short.
            _ => valid[..noise.below(valid.len())].to_vec(),
        };
        errors += usize::from(decode_envelope(&body).is_err());
        let raw = body.get(4..).unwrap_or_default();
        for target in targets {
            errors += usize::from(decode_message(target, raw).is_err());
        }
    }
    assert!(errors > 0, "noise should produce errors");
}

#[test]
fn fields_of_described_messages_take_their_names_from_the_schema() {
    // A guessed name in a message that has an OpenAPI definition means a
    // field the definition lacks: fine for fields newer than k8s-openapi's
    // Kubernetes version, a naming bug otherwise.
    let mut guessed = Vec::new();
    let mut from_definition = 0;
    for (index, message) in schema::MESSAGES.iter().enumerate() {
        let Some(layout) = u32::try_from(index).ok().and_then(names::layout) else {
            continue;
        };
        if !layout.has_definition {
            continue;
        }
        for (field, name) in message.fields.iter().zip(&layout.fields) {
            match name.source {
                names::NameSource::Definition => from_definition += 1,
                _ if name.inline => from_definition += 1,
                _ => guessed.push(format!("{}.{} → {}", message.name, field.name, name.json)),
            }
        }
    }
    println!("{from_definition} from definitions; guessed: {guessed:#?}");
    assert!(from_definition > 3000, "{from_definition} from definitions");
    assert!(guessed.len() * 10 < from_definition, "{guessed:#?}");
}

/// Bodies captured from kubectl 1.32's typed commands against a stub
/// server. Go writes every non-pointer field, so zeros and `false` of
/// fields the client never set arrive too (`generation: 0`, `stdin:
/// false`); they are kept, as a zero may be meaningful (`replicas: 0`).
#[test]
fn kubectl_request_bodies() {
    let namespace = decode(include_bytes!("testdata/kubectl-create-namespace.pb"));
    assert_eq!(
        namespace,
        json!({
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": "demo", "generation": 0},
            "spec": {},
            "status": {},
        })
    );

    // kubectl create deployment web --image=nginx --replicas=0 --port=80
    let deployment = decode(include_bytes!("testdata/kubectl-create-deployment.pb"));
    assert_eq!(deployment["metadata"]["labels"], json!({"app": "web"}));
    assert_eq!(deployment["spec"]["replicas"], json!(0));
    assert_eq!(
        deployment["spec"]["selector"],
        json!({"matchLabels": {"app": "web"}})
    );
    assert_eq!(deployment["spec"]["strategy"], json!({}));
    assert_eq!(
        deployment["spec"]["template"]["spec"]["containers"],
        json!([{
            "name": "nginx",
            "image": "nginx",
            "ports": [{"hostPort": 0, "containerPort": 80}],
            "resources": {},
            "stdin": false,
            "stdinOnce": false,
            "tty": false,
        }])
    );

    // kubectl create service clusterip web --tcp=80:8080
    let service = decode(include_bytes!("testdata/kubectl-create-service.pb"));
    assert_eq!(
        service["spec"]["ports"],
        json!([{
            "name": "80-8080",
            "protocol": "TCP",
            "port": 80,
            "targetPort": 8080,
            "nodePort": 0,
        }])
    );
    assert_eq!(service["spec"]["type"], json!("ClusterIP"));
    assert_eq!(service["status"], json!({"loadBalancer": {}}));

    // kubectl create ingress ing --rule=foo.com/bar=svc1:8080
    let ingress = decode(include_bytes!("testdata/kubectl-create-ingress.pb"));
    assert_eq!(
        ingress["spec"]["rules"],
        json!([{
            "host": "foo.com",
            "http": {"paths": [{
                "path": "/bar",
                "backend": {"service": {"name": "svc1", "port": {"number": 8080}}},
                "pathType": "Exact",
            }]},
        }])
    );

    // kubectl create poddisruptionbudget pdb --selector=app=x --min-available=50%
    let pdb = decode(include_bytes!("testdata/kubectl-create-pdb.pb"));
    assert_eq!(pdb["apiVersion"], json!("policy/v1"));
    assert_eq!(
        pdb["spec"],
        json!({"minAvailable": "50%", "selector": {"matchLabels": {"app": "x"}}})
    );
}
