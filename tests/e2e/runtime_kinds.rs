//! A kind added while the server runs, and removed again: the run-time
//! registry that custom resources and API services stand on. The kind is
//! defined here, outside the core, through the same `Kind` trait the
//! built-in kinds implement; the server runs in-process so the test can
//! change what it serves, and is driven through kubectl, curl and grpcurl
//! like any other.

use std::sync::Arc;
use std::time::Duration;

use crate::common::{item_names, table_rows, wait_until, TestServer};
use capstan_core::error::FieldError;
use capstan_core::kinds::Kind;
use capstan_core::printers::{Cell, TableColumn};
use capstan_core::registry::ResourceDef;
use capstan_core::ApiCore;
use serde_json::{json, Value};

const GROUP: &str = "test.capstan.dev";

/// Widgets have a size that may not be negative, and print it.
struct Widget;

impl Widget {
    fn validate(object: &Value) -> Vec<FieldError> {
        match object.pointer("/spec/size").and_then(Value::as_i64) {
            Some(size) if size < 0 => vec![FieldError::invalid(
                "spec.size",
                &size.to_string(),
                "must be greater than or equal to 0",
            )],
            _ => Vec::new(),
        }
    }
}

impl Kind for Widget {
    fn validate_create(&self, object: &Value) -> Vec<FieldError> {
        Self::validate(object)
    }

    fn validate_update(&self, object: &Value, _old: &Value) -> Vec<FieldError> {
        Self::validate(object)
    }

    fn table_columns(&self) -> Vec<TableColumn> {
        let column = |name: &'static str, type_: &'static str, format: &'static str| TableColumn {
            name: name.into(),
            type_: type_.into(),
            format: format.into(),
            description: "".into(),
            priority: 0,
        };
        vec![
            column("Name", "string", "name"),
            column("Size", "integer", ""),
        ]
    }

    fn table_cells(&self, object: &Value) -> Vec<Cell> {
        vec![
            object["metadata"]["name"].clone().into(),
            object
                .pointer("/spec/size")
                .cloned()
                .unwrap_or(json!(0))
                .into(),
        ]
    }
}

fn widgets() -> ResourceDef {
    ResourceDef::new(GROUP, "v1", "widgets", "Widget", true, Arc::new(Widget))
        .short_names(&["wd"])
        .definition("dev.capstan.test.v1.Widget")
}

fn widget_gvr() -> Vec<(String, String, String)> {
    vec![(GROUP.into(), "v1".into(), "widgets".into())]
}

/// The server, in this process, and the core to change what it serves.
fn start() -> (tokio::runtime::Runtime, Arc<ApiCore>, TestServer) {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let dir = tempfile::Builder::new()
        .prefix("capstan-runtime-")
        .tempdir()
        .expect("a temp dir");
    let port_file = dir.path().join("port");
    let args = capstan::ServeArgs::from_flags([
        "--data-dir".into(),
        dir.path().as_os_str().to_owned(),
        "--secure-port".into(),
        "0".into(),
        "--port-file".into(),
        port_file.as_os_str().to_owned(),
    ])
    .expect("serve flags");
    let (started, core) = std::sync::mpsc::channel();
    runtime.spawn(async move {
        let served = capstan::server::serve_with(args, move |core| {
            let _ = started.send(core);
        })
        .await;
        if let Err(e) = served {
            eprintln!("the in-process server stopped: {e}");
        }
    });
    let core = core
        .recv_timeout(Duration::from_secs(60))
        .expect("the server started");
    let port = wait_until(Duration::from_secs(30), "the port file", || {
        std::fs::read_to_string(&port_file)
            .ok()
            .and_then(|p| p.trim().parse::<u16>().ok())
    });
    (runtime, core, TestServer::attach(dir, port))
}

const AGGREGATED: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// The aggregated discovery document of /apis and its ETag.
fn aggregated_groups(s: &TestServer) -> (Value, String) {
    let out = s.curl("GET", "/apis", &[("Accept", AGGREGATED)], None);
    let etag = out.header("etag").expect("an ETag");
    (out.json(), etag)
}

fn served_groups(discovery: &Value) -> Vec<&str> {
    discovery["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|g| g["metadata"]["name"].as_str())
        .collect()
}

#[test]
fn a_kind_added_at_run_time_is_served_everywhere_until_removed() {
    let (runtime, core, s) = start();
    let path = format!("/apis/{GROUP}/v1/namespaces/default/widgets");
    s.get(&path).assert_status(404, "NotFound");
    let (before, before_etag) = aggregated_groups(&s);
    assert!(!served_groups(&before).contains(&GROUP));

    {
        let _in_runtime = runtime.enter();
        core.add_resources(vec![widgets()]);
    }

    // Discovery: a new document and ETag; a client holding it gets a 304.
    let (after, etag) = aggregated_groups(&s);
    assert!(served_groups(&after).contains(&GROUP), "{after:#}");
    assert_ne!(etag, before_etag);
    let revalidated = s.curl(
        "GET",
        "/apis",
        &[("Accept", AGGREGATED), ("If-None-Match", &etag)],
        None,
    );
    assert_eq!(revalidated.status, 304, "{}", revalidated.body);
    let resources = s.kubectl_ok(&["api-resources", "--api-group", GROUP, "-o", "name"]);
    assert_eq!(resources.trim(), format!("widgets.{GROUP}"));
    let list = s.get_json(&format!("/apis/{GROUP}/v1"));
    assert_eq!(list["resources"][0]["shortNames"], json!(["wd"]));

    // OpenAPI v2 and v3 describe it.
    let v3 = s.get_json("/openapi/v3");
    assert!(
        v3["paths"][format!("apis/{GROUP}/v1")].is_object(),
        "{v3:#}"
    );
    let group_version = s.get_json(&format!("/openapi/v3/apis/{GROUP}/v1"));
    assert!(
        group_version["paths"][&format!("/apis/{GROUP}/v1/namespaces/{{namespace}}/widgets")]
            .is_object()
    );
    let v2 = s.get_json("/openapi/v2");
    assert!(
        v2["paths"][&format!("/apis/{GROUP}/v1/namespaces/{{namespace}}/widgets/{{name}}")]
            .is_object()
    );

    // Watches over REST and gRPC see what is written.
    let mut rest_watch = s.curl_stream(&format!("{path}?watch=true"), 120);
    let gvr = json!({"group": GROUP, "version": "v1", "resource": "widgets"});
    let mut grpc_watch = s.grpc_stream(
        "capstan.v1.Resources/Watch",
        &json!({"resource": gvr, "namespace": "default"}),
        120,
    );
    s.apply(&format!(
        "apiVersion: {GROUP}/v1\nkind: Widget\nmetadata: {{name: small, namespace: default}}\nspec: {{size: 3}}\n"
    ));
    rest_watch.wait_for("the REST watch's ADDED", |out| {
        out.contains("\"small\"").then_some(())
    });
    grpc_watch.wait_for("the gRPC watch's ADDED", |out| {
        out.contains("small").then_some(())
    });

    // Its own validation and printer.
    let bad = s.send(
        "POST",
        &path,
        "application/json",
        &json!({"apiVersion": format!("{GROUP}/v1"), "kind": "Widget",
            "metadata": {"name": "negative"}, "spec": {"size": -1}})
        .to_string(),
    );
    let status = bad.assert_status(422, "Invalid");
    assert_eq!(
        status["message"],
        format!("Widget.{GROUP} \"negative\" is invalid: spec.size: Invalid value: \"-1\": must be greater than or equal to 0")
    );
    let rows = table_rows(&s.kubectl_ok(&["get", "widgets"]));
    assert_eq!(rows[0], ["NAME", "SIZE"]);
    assert_eq!(rows[1], ["small", "3"]);
    let listed = s.grpc_ok(
        "capstan.v1.Resources/List",
        &json!({"resource": gvr, "namespace": "default"}),
    );
    assert_eq!(item_names(&listed), ["small"]);

    // RBAC resolves it as any resource: alice may read widgets once a role says so.
    let denied = s.kubectl_err(&["get", "widgets", "--as=alice"]);
    assert!(
        denied.contains(&format!("widgets.{GROUP} is forbidden: User \"alice\" cannot list resource \"widgets\" in API group \"{GROUP}\"")),
        "{denied}"
    );
    s.kubectl_ok(&[
        "create",
        "role",
        "widget-reader",
        "--verb=get,list",
        &format!("--resource=widgets.{GROUP}"),
    ]);
    s.kubectl_ok(&[
        "create",
        "rolebinding",
        "alice-reads",
        "--role=widget-reader",
        "--user=alice",
    ]);
    wait_until(Duration::from_secs(10), "alice may list widgets", || {
        s.kubectl(&["get", "widgets", "--as=alice", "-o", "name"])
            .status
            .success()
            .then_some(())
    });
    let deleting = s.kubectl_err(&["delete", "widget", "small", "--as=alice"]);
    assert!(deleting.contains("cannot delete resource"), "{deleting}");

    {
        let _in_runtime = runtime.enter();
        core.remove_resources(&widget_gvr());
    }

    // Gone everywhere, and its watchers closed.
    assert!(
        rest_watch.exits_within(Duration::from_secs(10)),
        "the REST watch ended"
    );
    assert!(
        grpc_watch.exits_within(Duration::from_secs(10)),
        "the gRPC watch ended"
    );
    s.get(&path).assert_status(404, "NotFound");
    let err = s.grpc_err(
        "capstan.v1.Resources/List",
        &json!({"resource": gvr, "namespace": "default"}),
    );
    assert_eq!(err.code, "NotFound", "{err:?}");
    let (removed, removed_etag) = aggregated_groups(&s);
    assert!(!served_groups(&removed).contains(&GROUP));
    assert_eq!(removed_etag, before_etag);
    s.get(&format!("/apis/{GROUP}/v1"))
        .assert_status(404, "NotFound");
    s.get(&format!("/openapi/v3/apis/{GROUP}/v1"))
        .assert_status(404, "NotFound");
    let v2 = s.get_json("/openapi/v2");
    assert!(
        v2["paths"][&format!("/apis/{GROUP}/v1/namespaces/{{namespace}}/widgets/{{name}}")]
            .is_null()
    );
    // kubectl still has the kind in its discovery cache and is told it is gone.
    let missing = s.kubectl_err(&["get", "widgets"]);
    assert!(
        missing.contains("the server could not find the requested resource"),
        "{missing}"
    );
}
