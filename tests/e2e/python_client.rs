//! The Python `kubernetes` client's typed API against the real binary: the
//! answers its models decode (a deleted Service, not a Status), field
//! selectors on absent fields, upstream's decode errors for a mistyped
//! body, and an APIService installed with `create_from_yaml`.

use crate::common;
use crate::common::TestServer;

const SCRIPT: &str = r#"
import json, sys
from kubernetes import client, config
from kubernetes.client.rest import ApiException

config.load_kube_config(config_file=sys.argv[1])
core = client.CoreV1Api()
apps = client.AppsV1Api()
ns = "pyclient"
core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=ns)))

# A typed delete of a Service decodes the deleted Service (upstream's
# ReturnDeletedObject); a Status here fails the model's deserialization.
core.create_namespaced_service(ns, client.V1Service(
    metadata=client.V1ObjectMeta(name="web"),
    spec=client.V1ServiceSpec(ports=[client.V1ServicePort(port=80)], selector={"app": "web"})))
deleted = core.delete_namespaced_service("web", ns)
assert isinstance(deleted, client.V1Service), type(deleted)
assert deleted.metadata.name == "web"

# A node without spec.unschedulable is selected by spec.unschedulable=false.
core.create_node(client.V1Node(metadata=client.V1ObjectMeta(name="py-node")))
names = [n.metadata.name for n in core.list_node(field_selector="spec.unschedulable=false").items]
assert names == ["py-node"], names

# A mistyped body: upstream's 400 and message, and nothing stored.
body = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "bad"},
        "spec": {"replicas": "three", "selector": {"matchLabels": {"app": "bad"}},
                 "template": {"metadata": {"labels": {"app": "bad"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
# The typed API checks types itself; the dynamic client sends the body
# as it is, as kubectl and other untyped clients do.
from kubernetes.dynamic import DynamicClient
deployments = DynamicClient(client.ApiClient()).resources.get(api_version="apps/v1", kind="Deployment")
try:
    deployments.create(body=body, namespace=ns)
    raise SystemExit("a mistyped Deployment was accepted")
except ApiException as e:
    assert e.status == 400, e.status
    status = json.loads(e.body)
    assert status["reason"] == "BadRequest", status
    assert status["message"] == ('Deployment in version "v1" cannot be handled as a Deployment: '
        'json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32'), status["message"]
assert apps.list_namespaced_deployment(ns).items == []

# An APIService from YAML, as `create_from_yaml` installs an extension
# API server's registration: stored, defaulted and checked as upstream.
import os, tempfile
from kubernetes import utils
manifest = os.path.join(tempfile.mkdtemp(), "apiservice.yaml")
with open(manifest, "w") as f:
    f.write("""apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1beta1.metrics.k8s.io}
spec:
  group: metrics.k8s.io
  version: v1beta1
  service: {namespace: kube-system, name: metrics-server}
  insecureSkipTLSVerify: true
  groupPriorityMinimum: 100
  versionPriority: 100
""")
utils.create_from_yaml(client.ApiClient(), manifest)
registration = client.ApiregistrationV1Api()
import time
for _ in range(100):
    created = registration.read_api_service("v1beta1.metrics.k8s.io")
    conditions = created.status.conditions or []
    if conditions:
        break
    time.sleep(0.1)
assert created.spec.service.port == 443, created.spec.service
available = conditions[0]
assert (available.type, available.status, available.reason) == ("Available", "False", "ServiceNotFound"), available
assert available.message == 'service/metrics-server in "kube-system" is not present', available.message
print("ok")
"#;

#[test]
fn the_python_clients_typed_api_decodes_upstreams_answers() {
    let server = TestServer::start();
    let script = server.scratch("client.py");
    std::fs::write(&script, SCRIPT).expect("write the script");
    let mut cmd = std::process::Command::new("python3");
    cmd.arg(&script).arg(server.kubeconfig());
    let out = common::run_command(&mut cmd, None, common::COMMAND_TIMEOUT);
    assert!(
        out.status.success(),
        "{}",
        common::describe_output("python3 client.py", &out)
    );
    assert_eq!(common::text(&out.stdout).trim(), "ok");
}
