//! Custom resources driven by real Python clients against the real binary:
//! the `kubernetes` client's dynamic client (discovery, CRUD, patches, the
//! status subresource, watch, server-side apply and the schema's 422s), and
//! a kopf operator that reacts to a Widget's creation, update and deletion
//! (finalizers, status patches, posted events).

use crate::common;
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use crate::common::{describe_output, run_command, text, Streaming, TestServer};

const WIDGETS_CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    plural: widgets
    singular: widget
    kind: Widget
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, minimum: 0}
              color: {type: string, default: red}
          status:
            type: object
            properties:
              phase: {type: string}
              observedSize: {type: integer}
    subresources:
      status: {}
"#;

/// A server serving the Widget definition above.
fn with_widgets() -> TestServer {
    let server = TestServer::start();
    server.apply(WIDGETS_CRD);
    server.kubectl_ok(&[
        "wait",
        "--for=condition=Established",
        "crd/widgets.example.com",
        "--timeout=20s",
    ]);
    server
}

const DYNAMIC_SCRIPT: &str = r#"
import json, os, sys
from kubernetes import client, config
from kubernetes.client.rest import ApiException
from kubernetes.dynamic import DynamicClient

config.load_kube_config(config_file=sys.argv[1])
# Discovery is cached in a file; keep it next to this script rather than in
# /tmp, where a server that listened on the same port before left its own.
cache = os.path.join(os.path.dirname(os.path.abspath(__file__)), "discovery.json")
dyn = DynamicClient(client.ApiClient(), cache_file=cache)
ns = "pydynamic"
dyn.resources.get(api_version="v1", kind="Namespace").create(
    body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})

# The custom resource is found through discovery, with its subresource.
widgets = dyn.resources.get(api_version="example.com/v1", kind="Widget")
assert widgets.name == "widgets" and widgets.namespaced, widgets.to_dict()
assert widgets.group_version == "example.com/v1", widgets.group_version
assert widgets.status.name == "widgets/status", widgets.status.to_dict()

def invalid(body, message):
    try:
        widgets.create(namespace=ns, body=body)
    except ApiException as e:
        assert e.status == 422, (e.status, e.body)
        status = json.loads(e.body)
        assert status["kind"] == "Status" and status["reason"] == "Invalid", status
        assert status["message"] == message, status["message"]
    else:
        raise SystemExit(f"an invalid Widget was accepted: {body}")

# Create: the schema's default fills spec.color.
created = widgets.create(namespace=ns, body={
    "apiVersion": "example.com/v1", "kind": "Widget",
    "metadata": {"name": "w1", "labels": {"app": "py"}}, "spec": {"size": 3}})
assert created.metadata.name == "w1" and created.metadata.namespace == ns, created
assert created.spec.color == "red", created

# Get, and list in the namespace and across namespaces.
got = widgets.get(name="w1", namespace=ns)
assert got.spec.size == 3 and got.spec.color == "red", got
assert got.metadata.uid == created.metadata.uid, got
listed = widgets.get(namespace=ns)
assert listed.kind == "WidgetList" and listed.apiVersion == "example.com/v1", listed
assert [w.metadata.name for w in listed.items] == ["w1"], listed
everywhere = widgets.get(label_selector="app=py")
assert [(w.metadata.namespace, w.metadata.name) for w in everywhere.items] == [(ns, "w1")], everywhere

# A merge patch of the spec.
patched = widgets.patch(name="w1", namespace=ns, body={"spec": {"size": 5}},
                        content_type="application/merge-patch+json")
assert patched.spec.size == 5 and patched.spec.color == "red", patched
assert patched.metadata.generation == 2, patched.metadata

# The status subresource changes the status and nothing else...
status = widgets.status.patch(name="w1", namespace=ns,
                              body={"spec": {"size": 99}, "status": {"phase": "Ready"}},
                              content_type="application/merge-patch+json")
assert status.status.phase == "Ready", status
assert status.spec.size == 5 and status.metadata.generation == 2, status
# ...and the main resource ignores a status.
again = widgets.patch(name="w1", namespace=ns, body={"status": {"phase": "Gone"}},
                      content_type="application/merge-patch+json")
assert again.status.phase == "Ready", again
assert widgets.get(name="w1", namespace=ns).status.phase == "Ready"

# A replace with a stale resourceVersion conflicts.
stale = got.to_dict()
stale["spec"]["size"] = 7
try:
    widgets.replace(namespace=ns, body=stale)
    raise SystemExit("a stale replace was accepted")
except ApiException as e:
    assert e.status == 409, (e.status, e.body)
    assert json.loads(e.body)["reason"] == "Conflict", e.body

# A watch bounded by the server's timeout starts with the widget.
events = [(e["type"], e["object"].metadata.name, e["object"].spec.size)
          for e in widgets.watch(namespace=ns, timeout=5)]
assert events == [("ADDED", "w1", 5)], events

# Values the schema rejects: upstream's 422s and messages, nothing stored.
invalid({"apiVersion": "example.com/v1", "kind": "Widget",
         "metadata": {"name": "bad"}, "spec": {"size": "big"}},
        'Widget.example.com "bad" is invalid: spec.size: Invalid value: "string": '
        'spec.size in body must be of type integer: "string"')
invalid({"apiVersion": "example.com/v1", "kind": "Widget",
         "metadata": {"name": "neg"}, "spec": {"size": -1}},
        'Widget.example.com "neg" is invalid: spec.size: Invalid value: -1: '
        'spec.size in body should be greater than or equal to 0')
assert [w.metadata.name for w in widgets.get(namespace=ns).items] == ["w1"]

# Server-side apply creates, then updates, under the client's field manager.
def apply(spec):
    return widgets.server_side_apply(namespace=ns, field_manager="py", body={
        "apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w2"}, "spec": spec})
applied = apply({"size": 2})
assert applied.spec.size == 2 and applied.spec.color == "red", applied
assert [m.manager for m in applied.metadata.managedFields] == ["py"], applied.metadata
applied = apply({"size": 4, "color": "blue"})
assert applied.spec.size == 4 and applied.spec.color == "blue", applied

# Delete.
widgets.delete(name="w1", namespace=ns)
widgets.delete(name="w2", namespace=ns)
assert widgets.get(namespace=ns).items == []
print("ok")
"#;

#[test]
fn the_python_dynamic_client_drives_custom_resources() {
    let server = with_widgets();
    let script = server.scratch("dynamic.py");
    std::fs::write(&script, DYNAMIC_SCRIPT).expect("write the script");
    let mut cmd = Command::new("python3");
    cmd.arg(&script).arg(server.kubeconfig());
    let out = run_command(&mut cmd, None, common::COMMAND_TIMEOUT);
    assert!(
        out.status.success(),
        "{}\n{}",
        describe_output("python3 dynamic.py", &out),
        server.log_tail()
    );
    assert_eq!(text(&out.stdout).trim(), "ok");
}

const OPERATOR: &str = r#"
import kopf


@kopf.on.create('example.com', 'v1', 'widgets')
def created(body, spec, patch, **_):
    patch.status['phase'] = 'Ready'
    kopf.info(body, reason='Created', message=f"a widget of size {spec.get('size')}")


@kopf.on.update('example.com', 'v1', 'widgets', field='spec.size')
def resized(new, patch, **_):
    patch.status['observedSize'] = new


@kopf.on.delete('example.com', 'v1', 'widgets')
def deleted(name, namespace, **_):
    print(f"deleted widget {namespace}/{name}", flush=True)
"#;

const WIDGET: &str = r#"
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w1
  namespace: ops
spec:
  size: 1
"#;

/// Polls `probe` for up to 30 s; on a timeout the failure shows what kopf
/// printed.
fn wait_with<T>(operator: &Streaming, what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(v) = probe() {
            return v;
        }
        if Instant::now() >= deadline {
            panic!(
                "timed out waiting for {what}\n--- kopf stdout ---\n{}\n--- kopf stderr ---\n{}",
                operator.stdout(),
                operator.stderr()
            );
        }
        thread::sleep(Duration::from_millis(100));
    }
}

/// Waits until `kubectl get widget w1 -n ops -o jsonpath=<path>` prints `want`.
fn wait_for_widget(server: &TestServer, operator: &Streaming, path: &str, want: &str) {
    let jsonpath = format!("jsonpath={{{path}}}");
    let what = format!("{path} of widget w1 to be {want:?}");
    wait_with(operator, &what, || {
        let got = server.kubectl_ok(&["get", "widget", "w1", "-n", "ops", "-o", &jsonpath]);
        (got == want).then_some(())
    });
}

#[test]
fn a_kopf_operator_reacts_to_custom_resources() {
    let server = with_widgets();
    server.kubectl_ok(&["create", "namespace", "ops"]);
    let operator_py = server.scratch("operator.py");
    std::fs::write(&operator_py, OPERATOR).expect("write the operator");

    // kopf's defaults, but for peering (which needs kopf's own CRDs).
    let mut cmd = Command::new("python3");
    cmd.args([
        "-m",
        "kopf",
        "run",
        "--standalone",
        "--all-namespaces",
        "--verbose",
    ])
    .arg(&operator_py)
    .env("KUBECONFIG", server.kubeconfig())
    .env("PYTHONUNBUFFERED", "1");
    let mut operator = Streaming::spawn(cmd);

    // Created: the handler's status patch, the finalizer kopf adds, the
    // event it posts.
    server.apply(WIDGET);
    wait_for_widget(&server, &operator, ".status.phase", "Ready");
    let widget = server.kubectl_json(&["get", "widget", "w1", "-n", "ops"]);
    assert_eq!(widget["spec"]["color"], "red", "{widget:#}");
    assert_eq!(
        widget["metadata"]["finalizers"],
        serde_json::json!(["kopf.zalando.org/KopfFinalizerMarker"]),
        "{widget:#}"
    );
    let event = wait_with(&operator, "kopf's event", || {
        let out = server.kubectl_ok(&[
            "get",
            "events",
            "-n",
            "ops",
            "--field-selector",
            "involvedObject.kind=Widget,involvedObject.name=w1",
            "-o",
            r#"jsonpath={range .items[*]}{.source.component} {.reason}: {.message}{"\n"}{end}"#,
        ]);
        (!out.trim().is_empty()).then_some(out)
    });
    assert_eq!(event.trim(), "kopf Created: a widget of size 1");

    // Updated: the handler of spec.size sees the new size.
    server.kubectl_ok(&[
        "patch",
        "widget",
        "w1",
        "-n",
        "ops",
        "--type=merge",
        "-p",
        r#"{"spec":{"size":4}}"#,
    ]);
    wait_for_widget(&server, &operator, ".status.observedSize", "4");
    wait_for_widget(&server, &operator, ".status.phase", "Ready");

    // Deleted: kubectl waits until the handler ran and kopf removed its
    // finalizer.
    server.kubectl_ok(&["delete", "widget", "w1", "-n", "ops", "--timeout=20s"]);
    operator.wait_for("the delete handler", |out| {
        out.contains("deleted widget ops/w1").then_some(())
    });
    let left = server.kubectl_ok(&["get", "widgets", "-A", "-o", "name"]);
    assert_eq!(left.trim(), "", "widgets left after the delete");

    let stderr = operator.stderr();
    operator.stop();
    for line in stderr.lines() {
        assert!(
            !line.contains("[WARNING ]") && !line.contains("[ERROR   ]"),
            "kopf complained: {line}\n--- kopf stderr ---\n{stderr}"
        );
    }
}
