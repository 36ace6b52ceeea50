//! PartialObjectMetadata responses, as client-go's metadata client asks for them.

use crate::common::TestServer;

const META: &str = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
const META_LIST: &str = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";

#[test]
fn get_list_and_watch_as_partial_object_metadata() {
    let server = TestServer::start();
    server.kubectl_ok(&[
        "create",
        "configmap",
        "web",
        "--from-literal=secret-ish=value",
    ]);
    let got = server.curl(
        "GET",
        "/api/v1/namespaces/default/configmaps/web",
        &[("Accept", META)],
        None,
    );
    assert_eq!(got.status, 200);
    let object = got.json();
    assert_eq!(object["kind"], "PartialObjectMetadata");
    assert_eq!(object["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(object["metadata"]["name"], "web");
    assert!(object.get("data").is_none(), "metadata only: {object}");

    let listed = server.curl(
        "GET",
        "/api/v1/namespaces/default/configmaps",
        &[("Accept", META_LIST)],
        None,
    );
    let list = listed.json();
    assert_eq!(list["kind"], "PartialObjectMetadataList");
    assert!(list["metadata"]["resourceVersion"]
        .as_str()
        .is_some_and(|rv| !rv.is_empty()));
    let items = list["items"].as_array().expect("items");
    assert!(items.iter().any(|i| i["metadata"]["name"] == "web"));
    assert!(items
        .iter()
        .all(|i| i["kind"] == "PartialObjectMetadata" && i.get("data").is_none()));

    let watched = server.curl(
        "GET",
        "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1",
        &[("Accept", META)],
        None,
    );
    let first: serde_json::Value =
        serde_json::from_str(watched.body.lines().next().unwrap_or("{}")).expect("an event");
    assert_eq!(first["type"], "ADDED");
    assert_eq!(first["object"]["kind"], "PartialObjectMetadata");
    assert!(first["object"].get("data").is_none());
}
