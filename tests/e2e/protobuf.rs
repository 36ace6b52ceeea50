//! Kubernetes protobuf responses, decoded with the k8s-pb crate's types
//! (generated from upstream's published .proto files): objects, lists,
//! partial metadata and watch frames, as client-go's protobuf clients ask.

use crate::common;
use crate::common::TestServer;
use k8s_pb::api::apps::v1 as apps;
use k8s_pb::api::core::v1 as core;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_pb::apimachinery::pkg::runtime::Unknown;
use prost::Message;

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// The `k8s\0` + runtime.Unknown envelope: (apiVersion, kind, raw message).
fn envelope(bytes: &[u8]) -> (String, String, Vec<u8>) {
    let body = bytes
        .strip_prefix(b"k8s\0")
        .unwrap_or_else(|| panic!("no protobuf magic: {:?}", &bytes[..bytes.len().min(16)]));
    let unknown = Unknown::decode(body).expect("runtime.Unknown");
    let type_meta = unknown.type_meta.unwrap_or_default();
    (
        type_meta.api_version.unwrap_or_default(),
        type_meta.kind.unwrap_or_default(),
        unknown.raw.unwrap_or_default(),
    )
}

fn get_protobuf(server: &TestServer, path: &str, accept: &str) -> common::HttpResponse {
    let resp = server.curl("GET", path, &[("Accept", accept)], None);
    assert_eq!(resp.status, 200, "{}", resp.body);
    resp
}

#[test]
fn objects_and_lists_decode_with_the_upstream_definitions() {
    let server = TestServer::start();
    server.kubectl_ok(&[
        "create",
        "deployment",
        "web",
        "--image=nginx:1.27",
        "--replicas=2",
    ]);
    let resp = get_protobuf(
        &server,
        "/apis/apps/v1/namespaces/default/deployments/web",
        PROTOBUF,
    );
    assert!(
        resp.header("content-type").is_some_and(|ct| ct == PROTOBUF),
        "{}",
        resp.headers
    );
    let (api_version, kind, raw) = envelope(&resp.raw);
    assert_eq!(
        (api_version.as_str(), kind.as_str()),
        ("apps/v1", "Deployment")
    );
    let deployment = apps::Deployment::decode(raw.as_slice()).expect("Deployment");
    let metadata = deployment.metadata.unwrap_or_default();
    assert_eq!(metadata.name.as_deref(), Some("web"));
    assert!(metadata
        .creation_timestamp
        .is_some_and(|t| t.seconds.unwrap_or(0) > 0));
    let spec = deployment.spec.unwrap_or_default();
    assert_eq!(spec.replicas, Some(2));
    let containers = spec
        .template
        .unwrap_or_default()
        .spec
        .unwrap_or_default()
        .containers;
    assert_eq!(containers[0].image.as_deref(), Some("nginx:1.27"));
    // Defaults made it into the encoding too.
    assert_eq!(
        spec.strategy.unwrap_or_default().r#type.as_deref(),
        Some("RollingUpdate")
    );

    server.kubectl_ok(&["create", "configmap", "a", "--from-literal=k=v"]);
    server.kubectl_ok(&["create", "configmap", "b"]);
    let resp = get_protobuf(&server, "/api/v1/namespaces/default/configmaps", PROTOBUF);
    let (_, kind, raw) = envelope(&resp.raw);
    assert_eq!(kind, "ConfigMapList");
    let list = core::ConfigMapList::decode(raw.as_slice()).expect("ConfigMapList");
    let names: Vec<_> = list
        .items
        .iter()
        .filter_map(|cm| cm.metadata.as_ref().and_then(|m| m.name.clone()))
        .collect();
    assert!(
        names.contains(&"a".to_string()) && names.contains(&"b".to_string()),
        "{names:?}"
    );
    assert!(list.metadata.unwrap_or_default().resource_version.is_some());

    // client-go's metadata client in protobuf.
    let resp = get_protobuf(
        &server,
        "/api/v1/namespaces/default/configmaps",
        "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
    );
    let (api_version, kind, raw) = envelope(&resp.raw);
    assert_eq!(
        (api_version.as_str(), kind.as_str()),
        ("meta.k8s.io/v1", "PartialObjectMetadataList")
    );
    let partial = meta::PartialObjectMetadataList::decode(raw.as_slice()).expect("partial list");
    assert_eq!(partial.items.len(), names.len());

    // Errors still say what went wrong (JSON Status, which protobuf clients read too).
    let missing = server.curl(
        "GET",
        "/api/v1/namespaces/default/configmaps/missing",
        &[("Accept", PROTOBUF)],
        None,
    );
    missing.assert_status(404, "NotFound");
}

#[test]
fn watch_frames_carry_enveloped_objects() {
    let server = TestServer::start();
    server.kubectl_ok(&["create", "configmap", "watched", "--from-literal=k=v"]);
    let resp = get_protobuf(
        &server,
        "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1",
        PROTOBUF,
    );
    assert!(
        resp.header("content-type")
            .is_some_and(|ct| ct == "application/vnd.kubernetes.protobuf;stream=watch"),
        "{}",
        resp.headers
    );
    // Length-prefixed frames, each a WatchEvent whose object is an envelope.
    let mut rest = resp.raw.as_slice();
    let mut seen = Vec::new();
    while rest.len() >= 4 {
        let len = u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
        let frame = &rest[4..4 + len];
        rest = &rest[4 + len..];
        let event = meta::WatchEvent::decode(frame).expect("WatchEvent");
        let raw = event.object.and_then(|o| o.raw).unwrap_or_default();
        let (_, kind, object) = envelope(&raw);
        assert_eq!(kind, "ConfigMap");
        let cm = core::ConfigMap::decode(object.as_slice()).expect("ConfigMap");
        seen.push((
            event.r#type.unwrap_or_default(),
            cm.metadata.and_then(|m| m.name).unwrap_or_default(),
            cm.data.get("k").cloned(),
        ));
    }
    assert!(rest.is_empty(), "trailing bytes: {rest:?}");
    assert_eq!(
        seen,
        [(
            "ADDED".to_string(),
            "watched".to_string(),
            Some("v".to_string())
        )]
    );
}
