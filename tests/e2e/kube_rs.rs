//! kube-rs against custom resources, as an operator written with it runs:
//! a `#[derive(CustomResource)]` type's definition installed by server-side
//! apply and awaited until Established, then create, get, list, a status
//! patch and a watcher that sees the changes.

use std::time::Duration;

use crate::common::TestServer;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::{conditions, wait::await_condition, watcher, WatchStreamExt};
use kube::{Client, Config, CustomResource, CustomResourceExt, ResourceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// A widget, as an operator's crate would declare it.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(
    group = "kube.example.com",
    version = "v1",
    kind = "Gadget",
    namespaced,
    status = "GadgetStatus",
    shortname = "gdg",
    printcolumn = r#"{"name":"Size","type":"integer","jsonPath":".spec.size"}"#
)]
struct GadgetSpec {
    size: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    color: Option<String>,
}

#[derive(Deserialize, Serialize, Clone, Debug, Default, JsonSchema)]
struct GadgetStatus {
    phase: String,
}

pub(crate) async fn client(server: &TestServer) -> Client {
    let kubeconfig = Kubeconfig::read_from(server.kubeconfig()).expect("the kubeconfig");
    let config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .expect("a client config");
    Client::try_from(config).expect("a client")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_kube_rs_operator_installs_and_drives_its_custom_resource() {
    let server = TestServer::start();
    let client = client(&server).await;

    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd = Gadget::crd();
    let name = crd.name_any();
    crds.patch(
        &name,
        &PatchParams::apply("gadget-operator").force(),
        &Patch::Apply(&crd),
    )
    .await
    .expect("the definition applied");
    tokio::time::timeout(
        Duration::from_secs(10),
        await_condition(crds.clone(), &name, conditions::is_crd_established()),
    )
    .await
    .expect("established in time")
    .expect("the wait");

    let gadgets: Api<Gadget> = Api::namespaced(client.clone(), "default");
    // The watcher starts before the writes it should see.
    let seen = tokio::spawn({
        let gadgets = gadgets.clone();
        async move {
            watcher(gadgets, watcher::Config::default())
                .applied_objects()
                .try_filter(|g| {
                    let ready = g.status.as_ref().is_some_and(|s| s.phase == "Ready");
                    async move { ready }
                })
                .boxed()
                .try_next()
                .await
        }
    });

    let created = gadgets
        .create(
            &PostParams::default(),
            &Gadget::new(
                "g1",
                GadgetSpec {
                    size: 3,
                    color: None,
                },
            ),
        )
        .await
        .expect("created");
    assert_eq!(created.metadata.generation, Some(1));
    assert!(created.status.is_none());

    let got = gadgets.get("g1").await.expect("got");
    assert_eq!(got.spec.size, 3);
    let listed = gadgets.list(&ListParams::default()).await.expect("listed");
    assert_eq!(listed.items.len(), 1);

    let patched = gadgets
        .patch_status(
            "g1",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Ready"}})),
        )
        .await
        .expect("status patched");
    assert_eq!(
        patched.status.as_ref().map(|s| s.phase.as_str()),
        Some("Ready")
    );
    assert_eq!(patched.metadata.generation, Some(1));

    let ready = tokio::time::timeout(Duration::from_secs(10), seen)
        .await
        .expect("the watcher saw it in time")
        .expect("the watcher task")
        .expect("the watch")
        .expect("an object");
    assert_eq!(ready.name_any(), "g1");

    // A wrong type, sent untyped, is refused with upstream's answer.
    let untyped: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        "default",
        &ApiResource::erase::<Gadget>(&()),
    );
    let wrong: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "kube.example.com/v1", "kind": "Gadget",
        "metadata": {"name": "g2"}, "spec": {"size": "big"}
    }))
    .expect("a gadget");
    match untyped.create(&PostParams::default(), &wrong).await {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 422);
            assert_eq!(status.reason, "Invalid");
            assert_eq!(
                status.message,
                r#"Gadget.kube.example.com "g2" is invalid: spec.size: Invalid value: "string": spec.size in body must be of type integer: "string""#
            );
        }
        other => panic!("a mistyped gadget was not refused: {other:?}"),
    }

    gadgets
        .delete("g1", &Default::default())
        .await
        .expect("deleted");
    let names: Vec<String> = gadgets
        .list(&ListParams::default())
        .await
        .expect("listed")
        .items
        .iter()
        .map(|g| g.name_any())
        .collect();
    assert!(names.is_empty(), "{names:?}");
}
