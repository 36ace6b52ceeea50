//! The foundation flows, driven by the real kubectl against the real binary.

use crate::common;
use crate::common::{rv, table_rows, write_file, TestServer};
use serde_json::{json, Value};

const NAMESPACE_DEMO: &str = "\
apiVersion: v1
kind: Namespace
metadata:
  name: demo
";

/// The application of the foundation issue: a Deployment, a Service, a
/// ConfigMap and a Secret given with stringData.
const APP_V1: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: demo
  labels:
    app: web
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: nginx:1.25
        env:
        - name: MODE
          value: blue
        ports:
        - containerPort: 80
      - name: sidecar
        image: busybox:1.36
        command: [\"sleep\", \"infinity\"]
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: demo
spec:
  selector:
    app: web
  ports:
  - port: 80
    targetPort: 80
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
  namespace: demo
data:
  greeting: hello
---
apiVersion: v1
kind: Secret
metadata:
  name: web-secret
  namespace: demo
stringData:
  password: s3cret
";

/// The edit: new image, more replicas, changed and added env, the web
/// container's ports dropped; Service, ConfigMap and Secret as before.
const APP_V2: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: demo
  labels:
    app: web
spec:
  replicas: 3
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: nginx:1.27
        env:
        - name: MODE
          value: green
        - name: LOG_LEVEL
          value: debug
      - name: sidecar
        image: busybox:1.36
        command: [\"sleep\", \"infinity\"]
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: demo
spec:
  selector:
    app: web
  ports:
  - port: 80
    targetPort: 80
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
  namespace: demo
data:
  greeting: hello
---
apiVersion: v1
kind: Secret
metadata:
  name: web-secret
  namespace: demo
stringData:
  password: s3cret
";

fn with_demo_app(s: &TestServer) {
    s.apply(NAMESPACE_DEMO);
    s.apply(APP_V1);
}

fn configmap(name: &str, ns: &str, data: Value) -> String {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns}, "data": data})
        .to_string()
}

fn sorted_lines(s: &str) -> Vec<String> {
    let mut v: Vec<String> = s.lines().map(str::to_string).collect();
    v.sort();
    v
}

fn containers(deploy: &Value) -> Vec<Value> {
    deploy["spec"]["template"]["spec"]["containers"]
        .as_array()
        .expect("containers")
        .clone()
}

fn names(list: &[Value]) -> Vec<String> {
    list.iter()
        .map(|c| c["name"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn system_namespaces_exist() {
    let s = TestServer::start();
    let out = s.kubectl_ok(&["get", "namespaces"]);
    let rows = table_rows(&out);
    assert_eq!(rows[0], ["NAME", "STATUS", "AGE"], "{out}");
    for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        let row = rows
            .iter()
            .find(|r| r[0] == ns)
            .unwrap_or_else(|| panic!("namespace {ns} missing from:\n{out}"));
        assert_eq!(row[1], "Active", "{out}");
        let obj = s.kubectl_json(&["get", "namespace", ns]);
        assert_eq!(obj["metadata"]["name"], ns);
        assert_eq!(obj["status"]["phase"], "Active");
        assert!(!obj["metadata"]["uid"].as_str().unwrap_or("").is_empty());
    }
}

#[test]
fn create_namespace_with_apply() {
    let s = TestServer::start();
    assert_eq!(s.apply(NAMESPACE_DEMO), "namespace/demo created\n");
    let ns = s.kubectl_json(&["get", "namespace", "demo"]);
    assert_eq!(ns["kind"], "Namespace");
    assert_eq!(ns["metadata"]["name"], "demo");
    assert_eq!(ns["status"]["phase"], "Active");
    assert_eq!(
        ns["metadata"]["labels"]["kubernetes.io/metadata.name"],
        "demo"
    );
    assert_eq!(s.apply(NAMESPACE_DEMO), "namespace/demo unchanged\n");
    // The namespace is usable.
    assert_eq!(
        s.apply(&configmap("probe", "demo", json!({"k": "v"}))),
        "configmap/probe created\n"
    );
}

/// `kubectl create namespace` sends its body as protobuf
/// (application/vnd.kubernetes.protobuf).
#[test]
fn create_namespace_imperatively() {
    let s = TestServer::start();
    assert_eq!(
        s.kubectl_ok(&["create", "namespace", "imperative"]),
        "namespace/imperative created\n"
    );
    let ns = s.kubectl_json(&["get", "namespace", "imperative"]);
    assert_eq!(ns["metadata"]["name"], "imperative");
    assert_eq!(ns["status"]["phase"], "Active");
    let err = s.kubectl_err(&["create", "namespace", "imperative"]);
    assert!(
        err.contains("Error from server (AlreadyExists): namespaces \"imperative\" already exists"),
        "{err}"
    );
}

#[test]
fn apply_app_then_edit_and_apply_again() {
    let s = TestServer::start();
    s.apply(NAMESPACE_DEMO);
    let out = s.apply(APP_V1);
    assert_eq!(
        out,
        "deployment.apps/web created\nservice/web created\nconfigmap/web-config created\nsecret/web-secret created\n"
    );

    let deploy = s.kubectl_json(&["get", "deployment", "web", "-n", "demo"]);
    assert_eq!(deploy["metadata"]["generation"], 1);
    assert_eq!(deploy["spec"]["replicas"], 2);
    assert_eq!(names(&containers(&deploy)), ["web", "sidecar"]);
    assert!(
        deploy["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
            .is_string()
    );

    // stringData is write-only: stored base64-encoded under data.
    let secret = s.kubectl_json(&["get", "secret", "web-secret", "-n", "demo"]);
    assert_eq!(secret["data"]["password"], "czNjcmV0", "{secret:#}");
    assert!(secret.get("stringData").is_none(), "{secret:#}");
    assert_eq!(secret["type"], "Opaque", "{secret:#}");

    // Someone else adds a container the manifest does not know about.
    assert_eq!(
        s.kubectl_ok(&[
            "patch", "deployment", "web", "-n", "demo", "--type=strategic", "-p",
            r#"{"spec":{"template":{"spec":{"containers":[{"name":"logger","image":"fluent-bit:3"}]}}}}"#,
        ]),
        "deployment.apps/web patched\n"
    );
    let deploy = s.kubectl_json(&["get", "deployment", "web", "-n", "demo"]);
    assert_eq!(deploy["metadata"]["generation"], 2);
    // Upstream's strategic merge puts new patch items before server-only ones.
    assert_eq!(names(&containers(&deploy)), ["logger", "web", "sidecar"]);
    let rv_before = rv(&deploy["metadata"]["resourceVersion"]);
    let service_rv = s.kubectl_json(&["get", "service", "web", "-n", "demo"])["metadata"]
        ["resourceVersion"]
        .clone();
    let config_rv = s.kubectl_json(&["get", "configmap", "web-config", "-n", "demo"])["metadata"]
        ["resourceVersion"]
        .clone();

    let out = s.apply(APP_V2);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "deployment.apps/web configured", "{out}");
    assert_eq!(lines[1], "service/web unchanged", "{out}");
    assert_eq!(lines[2], "configmap/web-config unchanged", "{out}");
    // kubectl always patches a Secret given with stringData (the live object
    // only has data), so upstream reports it "configured" too.
    assert_eq!(lines[3], "secret/web-secret configured", "{out}");
    assert_eq!(lines.len(), 4, "{out}");

    let deploy = s.kubectl_json(&["get", "deployment", "web", "-n", "demo"]);
    assert_eq!(deploy["spec"]["replicas"], 3);
    assert_eq!(deploy["metadata"]["generation"], 3);
    assert!(rv(&deploy["metadata"]["resourceVersion"]) > rv_before);
    let list = containers(&deploy);
    // Merged by name: the out-of-band container survives, order as upstream.
    assert_eq!(names(&list), ["logger", "web", "sidecar"], "{deploy:#}");
    let web = &list[1];
    assert_eq!(web["image"], "nginx:1.27");
    assert_eq!(
        web["env"],
        json!([{"name": "MODE", "value": "green"}, {"name": "LOG_LEVEL", "value": "debug"}])
    );
    assert!(
        web.get("ports").is_none(),
        "ports removed from the manifest must be removed: {web:#}"
    );
    assert_eq!(list[0]["image"], "fluent-bit:3");
    assert_eq!(list[2]["image"], "busybox:1.36");
    assert_eq!(list[2]["command"], json!(["sleep", "infinity"]));

    // Unchanged objects were not written.
    assert_eq!(
        s.kubectl_json(&["get", "service", "web", "-n", "demo"])["metadata"]["resourceVersion"],
        service_rv
    );
    assert_eq!(
        s.kubectl_json(&["get", "configmap", "web-config", "-n", "demo"])["metadata"]
            ["resourceVersion"],
        config_rv
    );
    let secret = s.kubectl_json(&["get", "secret", "web-secret", "-n", "demo"]);
    assert_eq!(secret["data"]["password"], "czNjcmV0");

    // A third apply of the same manifest changes nothing. (kubectl still sends
    // the Deployment a patch holding only $setElementOrder/containers, because
    // the live list has the extra container, and so prints "configured".)
    let out = s.apply(APP_V2);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[1..3],
        ["service/web unchanged", "configmap/web-config unchanged"],
        "{out}"
    );
    let again = s.kubectl_json(&["get", "deployment", "web", "-n", "demo"]);
    assert_eq!(again["spec"], deploy["spec"]);
    assert_eq!(again["metadata"]["generation"], 3);
}

#[test]
fn get_all_shows_deployment_and_service() {
    let s = TestServer::start();
    with_demo_app(&s);
    let out = s.kubectl_ok(&["get", "all", "-n", "demo"]);
    let rows = table_rows(&out);
    let header = |first: &str| {
        rows.iter()
            .position(|r| r[0] == "NAME" && r.get(1).map(String::as_str) == Some(first))
            .unwrap_or_else(|| panic!("no table with column {first}:\n{out}"))
    };

    let svc = header("TYPE");
    assert_eq!(
        rows[svc],
        [
            "NAME",
            "TYPE",
            "CLUSTER-IP",
            "EXTERNAL-IP",
            "PORT(S)",
            "AGE"
        ],
        "{out}"
    );
    let row = &rows[svc + 1];
    assert_eq!(row[0], "service/web", "{out}");
    assert_eq!(row[1], "ClusterIP", "{out}");
    assert_eq!(row[4], "80/TCP", "{out}");

    let dep = header("READY");
    assert_eq!(
        rows[dep],
        ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"],
        "{out}"
    );
    let row = &rows[dep + 1];
    assert_eq!(row[0], "deployment.apps/web", "{out}");
    assert_eq!(&row[1..4], ["0/2", "0", "0"], "{out}");
    assert!(
        row[4].ends_with('s') || row[4].ends_with('m'),
        "AGE column: {out}"
    );

    // Only the two kinds exist; nothing else is listed.
    let objects: Vec<&String> = rows
        .iter()
        .filter(|r| r[0] != "NAME")
        .map(|r| &r[0])
        .collect();
    assert_eq!(objects, ["service/web", "deployment.apps/web"], "{out}");

    // -o wide adds the usual extra columns.
    let wide = s.kubectl_ok(&["get", "deployments", "-n", "demo", "-o", "wide"]);
    let rows = table_rows(&wide);
    assert_eq!(
        rows[0],
        [
            "NAME",
            "READY",
            "UP-TO-DATE",
            "AVAILABLE",
            "AGE",
            "CONTAINERS",
            "IMAGES",
            "SELECTOR"
        ],
        "{wide}"
    );
    assert_eq!(
        &rows[1][5..],
        ["web,sidecar", "nginx:1.25,busybox:1.36", "app=web"],
        "{wide}"
    );
}

/// `kubectl get`'s Tables: a row is kept with the object after its first
/// Table, yet each answer shows the AGE as of its own time, and a changed
/// object is printed afresh.
#[test]
fn a_tables_rows_show_each_answers_age_and_the_current_object() {
    let s = TestServer::start();
    s.create_namespace("tables");
    s.apply(&configmap("aged", "tables", json!({"a": "1"})));
    let seconds = |age: &str| -> i64 {
        age.strip_suffix('s')
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("an age in seconds: {age}"))
    };
    let row = || {
        let out = s.kubectl_ok(&["get", "cm", "aged", "-n", "tables", "--no-headers"]);
        let list = s.kubectl_ok(&["get", "cm", "-n", "tables", "--no-headers"]);
        let rows = table_rows(&list);
        assert_eq!(rows.len(), 1, "{list}");
        assert_eq!(table_rows(&out)[0][..2], rows[0][..2]);
        rows[0].clone()
    };
    let first = row();
    assert_eq!(first[..2], ["aged", "1"]);
    std::thread::sleep(std::time::Duration::from_millis(2500));
    let second = row();
    let waited = seconds(&second[2]) - seconds(&first[2]);
    assert!((2..=4).contains(&waited), "{first:?} then {second:?}");

    s.apply(&configmap("aged", "tables", json!({"a": "1", "b": "2"})));
    assert_eq!(row()[..2], ["aged", "2"]);
}

#[test]
fn get_yaml_round_trip() {
    let s = TestServer::start();
    with_demo_app(&s);
    let yaml = s.kubectl_ok(&["get", "deploy", "web", "-n", "demo", "-o", "yaml"]);
    let from_yaml: Value = serde_yaml::from_str(&yaml).expect("kubectl printed YAML");
    let from_json = s.kubectl_json(&["get", "deploy", "web", "-n", "demo"]);
    assert_eq!(from_yaml, from_json);
    assert_eq!(from_yaml["apiVersion"], "apps/v1");
    assert_eq!(from_yaml["kind"], "Deployment");
    for field in ["uid", "resourceVersion", "creationTimestamp"] {
        assert!(
            from_yaml["metadata"][field].is_string(),
            "metadata.{field}: {yaml}"
        );
    }

    // Sending back what we read is accepted and changes no spec. (kubectl
    // replace refreshes last-applied-configuration, so the object is written.)
    let file = s.scratch("web.yaml");
    write_file(&file, &yaml);
    let file_arg = file.to_str().unwrap();
    assert_eq!(
        s.kubectl_ok(&["replace", "-f", file_arg]),
        "deployment.apps/web replaced\n"
    );
    let after = s.kubectl_json(&["get", "deploy", "web", "-n", "demo"]);
    assert_eq!(after["spec"], from_json["spec"]);
    assert_eq!(after["metadata"]["generation"], 1);
    assert_eq!(after["metadata"]["uid"], from_json["metadata"]["uid"]);
    assert_eq!(
        after["metadata"]["creationTimestamp"],
        from_json["metadata"]["creationTimestamp"]
    );

    // An edited copy replaces the object.
    let edited_file = s.scratch("web-edited.yaml");
    let current = s.kubectl_ok(&["get", "deploy", "web", "-n", "demo", "-o", "yaml"]);
    let edited = current.replace("replicas: 2", "replicas: 5");
    assert_ne!(edited, current);
    write_file(&edited_file, &edited);
    assert_eq!(
        s.kubectl_ok(&["replace", "-f", edited_file.to_str().unwrap()]),
        "deployment.apps/web replaced\n"
    );
    let replaced = s.kubectl_json(&["get", "deploy", "web", "-n", "demo"]);
    assert_eq!(replaced["spec"]["replicas"], 5);
    assert_eq!(replaced["metadata"]["generation"], 2);
    assert_eq!(replaced["metadata"]["uid"], from_json["metadata"]["uid"]);
    assert!(
        rv(&replaced["metadata"]["resourceVersion"])
            > rv(&from_json["metadata"]["resourceVersion"])
    );

    // The stale copy is now refused with upstream's conflict message.
    let err = s.kubectl_err(&["replace", "-f", file_arg]);
    assert!(
        err.contains("Error from server (Conflict)")
            && err.contains("Operation cannot be fulfilled on deployments.apps \"web\": the object has been modified; please apply your changes to the latest version and try again"),
        "{err}"
    );
}

/// `kubectl get -o yaml > f; kubectl apply -f f` records resourceVersion, uid,
/// ... in last-applied-configuration; applying the original manifest later
/// sends a strategic merge patch that sets those to null. Upstream treats a
/// patch that removes resourceVersion as unconditional and succeeds.
#[test]
fn apply_original_manifest_after_applying_exported_yaml() {
    let s = TestServer::start();
    with_demo_app(&s);
    let yaml = s.kubectl_ok(&["get", "deploy", "web", "-n", "demo", "-o", "yaml"]);
    let file = s.scratch("exported.yaml");
    write_file(&file, &yaml);
    assert_eq!(
        s.kubectl_ok(&["apply", "-f", file.to_str().unwrap()]),
        "deployment.apps/web configured\n"
    );
    let out = s.apply(APP_V2);
    assert!(out.starts_with("deployment.apps/web configured\n"), "{out}");
    let deploy = s.kubectl_json(&["get", "deploy", "web", "-n", "demo"]);
    assert_eq!(deploy["spec"]["replicas"], 3);
    assert_eq!(containers(&deploy)[0]["image"], "nginx:1.27");
    // Identity and server-owned metadata survive the nulls in the patch.
    for field in ["uid", "creationTimestamp"] {
        assert!(deploy["metadata"][field].is_string(), "{deploy:#}");
    }
    assert_eq!(deploy["metadata"]["generation"], 2, "{deploy:#}");
}

/// Upstream's storage skips a write whose result equals the stored object, so
/// the resourceVersion stays (and no watch event is sent).
#[test]
fn no_op_patch_keeps_the_resource_version() {
    let s = TestServer::start();
    with_demo_app(&s);
    let before = s.kubectl_json(&["get", "deploy", "web", "-n", "demo"]);

    // A merge patch that sets what is already there: kubectl reports
    // "(no change)" when the object it gets back is the one it had.
    assert_eq!(
        s.kubectl_ok(&[
            "patch",
            "deploy",
            "web",
            "-n",
            "demo",
            "--type=merge",
            "-p",
            r#"{"spec":{"replicas":2}}"#
        ]),
        "deployment.apps/web patched (no change)\n"
    );
    assert_eq!(
        s.kubectl_json(&["get", "deploy", "web", "-n", "demo"]),
        before
    );
}

#[test]
fn no_op_put_keeps_the_resource_version() {
    let s = TestServer::start();
    with_demo_app(&s);
    // A PUT of exactly what GET returned.
    let path = "/apis/apps/v1/namespaces/demo/deployments/web";
    let current = s.get_json(path);
    let resp = s.curl(
        "PUT",
        path,
        &[("Content-Type", "application/json")],
        Some(current.to_string().as_bytes()),
    );
    assert_eq!(resp.status, 200, "{resp:#?}");
    assert_eq!(
        resp.json()["metadata"]["resourceVersion"],
        current["metadata"]["resourceVersion"]
    );
    assert_eq!(s.get_json(path), current);
}

#[test]
fn watch_configmaps_with_kubectl() {
    let s = TestServer::start();
    s.apply(NAMESPACE_DEMO);
    s.apply(&configmap("first", "demo", json!({"a": "1"})));
    let mut watch = s.kubectl_spawn(&["get", "configmaps", "-n", "demo", "-w"]);
    // The initial list is printed first; the watch continues from its resourceVersion.
    watch.wait_for("the initial listing", |out| {
        let rows = table_rows(out);
        (rows.len() >= 2 && rows[0] == ["NAME", "DATA", "AGE"] && rows[1][0] == "first")
            .then_some(())
    });

    s.apply(&configmap("second", "demo", json!({"a": "1"})));
    watch.wait_for("second with 1 key", |out| {
        table_rows(out)
            .iter()
            .any(|r| r[0] == "second" && r[1] == "1")
            .then_some(())
    });
    s.kubectl_ok(&[
        "patch",
        "configmap",
        "second",
        "-n",
        "demo",
        "--type=merge",
        "-p",
        r#"{"data":{"b":"2"}}"#,
    ]);
    watch.wait_for("second with 2 keys", |out| {
        table_rows(out)
            .iter()
            .any(|r| r[0] == "second" && r[1] == "2")
            .then_some(())
    });
    let out = watch.stop();
    let rows = table_rows(&out);
    let second: Vec<&Vec<String>> = rows.iter().filter(|r| r[0] == "second").collect();
    assert_eq!(second.len(), 2, "one row per event for second:\n{out}");
    assert_eq!(second[0][1], "1", "{out}");
    assert_eq!(second[1][1], "2", "{out}");
    assert_eq!(rows.iter().filter(|r| r[0] == "NAME").count(), 1, "{out}");
}

#[test]
fn label_annotate_and_select() {
    let s = TestServer::start();
    s.apply(NAMESPACE_DEMO);
    s.apply(&configmap("front", "demo", json!({})));
    s.apply(&configmap("back", "demo", json!({})));

    assert_eq!(
        s.kubectl_ok(&["label", "configmap", "front", "-n", "demo", "tier=front"]),
        "configmap/front labeled\n"
    );
    assert_eq!(
        s.kubectl_ok(&["label", "configmap", "back", "-n", "demo", "tier=back"]),
        "configmap/back labeled\n"
    );
    assert_eq!(
        s.kubectl_ok(&[
            "annotate",
            "configmap",
            "front",
            "-n",
            "demo",
            "owner=team-a"
        ]),
        "configmap/front annotated\n"
    );
    let front = s.kubectl_json(&["get", "cm", "front", "-n", "demo"]);
    assert_eq!(front["metadata"]["labels"]["tier"], "front");
    assert_eq!(front["metadata"]["annotations"]["owner"], "team-a");

    assert_eq!(
        s.kubectl_ok(&["get", "cm", "-n", "demo", "-l", "tier=front", "-o", "name"]),
        "configmap/front\n"
    );
    let out = s.kubectl_ok(&["get", "cm", "-n", "demo", "-l", "tier=front"]);
    let rows = table_rows(&out);
    assert_eq!(rows.len(), 2, "{out}");
    assert_eq!(rows[1][0], "front", "{out}");
    assert_eq!(
        s.kubectl_ok(&["get", "cm", "-n", "demo", "-l", "tier!=front", "-o", "name"]),
        "configmap/back\n"
    );
    assert_eq!(
        sorted_lines(&s.kubectl_ok(&[
            "get",
            "cm",
            "-n",
            "demo",
            "-l",
            "tier in (front,back)",
            "-o",
            "name"
        ])),
        ["configmap/back", "configmap/front"]
    );
    let none = s.kubectl(&["get", "cm", "-n", "demo", "-l", "tier=middle"]);
    assert!(none.status.success());
    assert_eq!(common::text(&none.stdout), "");
    assert!(common::text(&none.stderr).contains("No resources found in demo namespace."));

    // Overwrite and remove.
    assert!(!s
        .kubectl(&["label", "cm", "front", "-n", "demo", "tier=back"])
        .status
        .success());
    assert_eq!(
        s.kubectl_ok(&[
            "label",
            "cm",
            "front",
            "-n",
            "demo",
            "tier=back",
            "--overwrite"
        ]),
        "configmap/front labeled\n"
    );
    assert_eq!(
        sorted_lines(&s.kubectl_ok(&["get", "cm", "-n", "demo", "-l", "tier=back", "-o", "name"])),
        ["configmap/back", "configmap/front"]
    );
    assert_eq!(
        s.kubectl_ok(&["label", "cm", "front", "-n", "demo", "tier-"]),
        "configmap/front unlabeled\n"
    );
    assert_eq!(
        s.kubectl_ok(&["annotate", "cm", "front", "-n", "demo", "owner-"]),
        "configmap/front annotated\n"
    );
    let front = s.kubectl_json(&["get", "cm", "front", "-n", "demo"]);
    assert!(
        front["metadata"]["labels"].get("tier").is_none(),
        "{front:#}"
    );
    assert!(
        front["metadata"]["annotations"].get("owner").is_none(),
        "{front:#}"
    );
}

#[test]
fn patch_types() {
    let s = TestServer::start();
    with_demo_app(&s);
    let get = || s.kubectl_json(&["get", "deploy", "web", "-n", "demo"]);
    let patch = |kind: &str, body: &str| {
        s.kubectl_ok(&[
            "patch",
            "deployment",
            "web",
            "-n",
            "demo",
            &format!("--type={kind}"),
            "-p",
            body,
        ])
    };

    // Strategic merge: containers merge by name, the rest of the container stays.
    assert_eq!(
        patch(
            "strategic",
            r#"{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.26"}]}}}}"#
        ),
        "deployment.apps/web patched\n"
    );
    let d = get();
    let list = containers(&d);
    assert_eq!(names(&list), ["web", "sidecar"]);
    assert_eq!(list[0]["image"], "nginx:1.26");
    assert_eq!(list[0]["env"], json!([{"name": "MODE", "value": "blue"}]));
    // Port protocol is upstream's default.
    assert_eq!(
        list[0]["ports"],
        json!([{"containerPort": 80, "protocol": "TCP"}])
    );
    assert_eq!(d["metadata"]["generation"], 2);
    // Strategic $patch: delete removes one list element by key.
    patch(
        "strategic",
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","$patch":"delete"}]}}}}"#,
    );
    assert_eq!(names(&containers(&get())), ["web"]);

    // JSON merge patch: maps merge, lists are replaced wholesale.
    assert_eq!(
        patch(
            "merge",
            r#"{"metadata":{"labels":{"patched":"merge"}},"spec":{"replicas":4,"template":{"spec":{"containers":[{"name":"only","image":"alpine:3"}]}}}}"#
        ),
        "deployment.apps/web patched\n"
    );
    let d = get();
    assert_eq!(d["spec"]["replicas"], 4);
    assert_eq!(
        d["metadata"]["labels"],
        json!({"app": "web", "patched": "merge"})
    );
    // The list is replaced whole, then defaulted as upstream does.
    assert_eq!(
        containers(&d),
        vec![json!({
            "name": "only",
            "image": "alpine:3",
            "imagePullPolicy": "IfNotPresent",
            "resources": {},
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
        })]
    );
    let generation = d["metadata"]["generation"].as_i64().unwrap();

    // A label-only change does not bump the generation.
    patch("merge", r#"{"metadata":{"labels":{"patched":null}}}"#);
    let d = get();
    assert_eq!(d["metadata"]["labels"], json!({"app": "web"}));
    assert_eq!(d["metadata"]["generation"], generation);

    // JSON patch (RFC 6902).
    assert_eq!(
        patch(
            "json",
            r#"[{"op":"replace","path":"/spec/replicas","value":5},{"op":"add","path":"/metadata/labels/patched","value":"json"}]"#
        ),
        "deployment.apps/web patched\n"
    );
    let d = get();
    assert_eq!(d["spec"]["replicas"], 5);
    assert_eq!(d["metadata"]["labels"]["patched"], "json");
    assert_eq!(d["metadata"]["generation"], generation + 1);

    // A failing test operation rejects the whole patch and stores nothing.
    // (Upstream answers 422 with a generic message; kubectl words it "The request is invalid".)
    let err = s.kubectl_err(&[
        "patch", "deployment", "web", "-n", "demo", "--type=json", "-p",
        r#"[{"op":"replace","path":"/spec/replicas","value":9},{"op":"test","path":"/spec/replicas","value":1}]"#,
    ]);
    assert!(err.contains("The request is invalid"), "{err}");
    assert_eq!(get(), d);
}

#[test]
fn replace_and_delete() {
    let s = TestServer::start();
    with_demo_app(&s);
    let cm = s.kubectl_json(&["get", "cm", "web-config", "-n", "demo"]);
    let mut edited = cm.clone();
    edited["data"] = json!({"greeting": "bonjour", "extra": "yes"});
    assert_eq!(
        s.kubectl_with_manifest(&["replace"], &edited.to_string()),
        "configmap/web-config replaced\n"
    );
    let replaced = s.kubectl_json(&["get", "cm", "web-config", "-n", "demo"]);
    assert_eq!(
        replaced["data"],
        json!({"greeting": "bonjour", "extra": "yes"})
    );
    assert_eq!(replaced["metadata"]["uid"], cm["metadata"]["uid"]);

    // kubectl delete waits until the object is gone, then returns.
    let started = std::time::Instant::now();
    assert_eq!(
        s.kubectl_ok(&["delete", "configmap", "web-config", "-n", "demo"]),
        "configmap \"web-config\" deleted\n"
    );
    assert_eq!(
        s.kubectl_ok(&["delete", "deployment", "web", "-n", "demo"]),
        "deployment.apps \"web\" deleted\n"
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "deletes took {:?}",
        started.elapsed()
    );
    let err = s.kubectl_err(&["get", "configmap", "web-config", "-n", "demo"]);
    assert!(
        err.contains("Error from server (NotFound): configmaps \"web-config\" not found"),
        "{err}"
    );
    let err = s.kubectl_err(&["get", "deployment", "web", "-n", "demo"]);
    assert!(
        err.contains("Error from server (NotFound): deployments.apps \"web\" not found"),
        "{err}"
    );
    let err = s.kubectl_err(&["delete", "configmap", "web-config", "-n", "demo"]);
    assert!(
        err.contains("Error from server (NotFound): configmaps \"web-config\" not found"),
        "{err}"
    );
    // The rest of the app is untouched.
    assert_eq!(
        sorted_lines(&s.kubectl_ok(&["get", "service,secret", "-n", "demo", "-o", "name"])),
        ["secret/web-secret", "service/web"]
    );

    // Delete by file.
    let out = s.kubectl_with_manifest(&["delete", "--ignore-not-found"], APP_V1);
    assert!(
        out.contains("service \"web\" deleted") && out.contains("secret \"web-secret\" deleted"),
        "{out}"
    );
    let out = s.kubectl(&["get", "all", "-n", "demo"]);
    assert!(out.status.success());
    assert_eq!(common::text(&out.stdout), "");
}

#[test]
fn api_resources_versions_version_and_explain() {
    let s = TestServer::start();
    let out = s.kubectl_ok(&["api-resources"]);
    let rows = table_rows(&out);
    assert_eq!(
        rows[0],
        ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"],
        "{out}"
    );
    for expected in [
        ["deployments", "deploy", "apps/v1", "true", "Deployment"],
        ["pods", "po", "v1", "true", "Pod"],
        ["configmaps", "cm", "v1", "true", "ConfigMap"],
        ["namespaces", "ns", "v1", "false", "Namespace"],
        ["services", "svc", "v1", "true", "Service"],
    ] {
        assert!(
            rows.iter().any(|r| r == &expected),
            "no row {expected:?} in:\n{out}"
        );
    }
    assert!(
        rows.iter()
            .any(|r| r == &["secrets", "v1", "true", "Secret"]),
        "{out}"
    );

    let versions: Vec<String> = s
        .kubectl_ok(&["api-versions"])
        .lines()
        .map(str::to_string)
        .collect();
    assert!(versions.contains(&"v1".to_string()), "{versions:?}");
    assert!(versions.contains(&"apps/v1".to_string()), "{versions:?}");

    let out = s.kubectl_ok(&["version"]);
    let server = out
        .lines()
        .find_map(|l| l.strip_prefix("Server Version: "))
        .unwrap_or_else(|| panic!("no Server Version in:\n{out}"));
    assert!(server.starts_with("v1."), "{out}");

    let out = s.kubectl_ok(&["explain", "deployment.spec.strategy"]);
    for expected in [
        "GROUP:      apps",
        "KIND:       Deployment",
        "VERSION:    v1",
        "FIELD: strategy <DeploymentStrategy>",
        "DESCRIPTION:",
        "rollingUpdate",
        "type\t<string>",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in:\n{out}");
    }
    let out = s.kubectl_ok(&["explain", "pods.spec.containers.resources"]);
    for expected in [
        "KIND:       Pod",
        "FIELD: resources <ResourceRequirements>",
        "limits\t<map[string]Quantity>",
        "requests\t<map[string]Quantity>",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in:\n{out}");
    }
    // Every served group explains, e.g. networking and autoscaling/v1.
    let out = s.kubectl_ok(&["explain", "ingress.spec.rules"]);
    assert!(out.contains("GROUP:      networking.k8s.io"), "{out}");
    let out = s.kubectl_ok(&["explain", "hpa.spec", "--api-version=autoscaling/v1"]);
    assert!(out.contains("targetCPUUtilizationPercentage"), "{out}");
}

#[test]
fn create_in_missing_namespace_is_not_found() {
    let s = TestServer::start();
    let out = s.kubectl_stdin(
        &["create", "-f", "-"],
        &configmap("orphan", "nope", json!({})),
    );
    assert!(!out.status.success());
    let err = common::text(&out.stderr);
    assert!(
        err.contains("Error from server (NotFound)")
            && err.contains("namespaces \"nope\" not found"),
        "{err}"
    );
    let out = s.kubectl_stdin(
        &["apply", "-f", "-"],
        &configmap("orphan", "nope", json!({})),
    );
    assert!(!out.status.success());
    let err = common::text(&out.stderr);
    assert!(err.contains("namespaces \"nope\" not found"), "{err}");
    // kubectl 1.33 follows a NotFound with a GET of the namespace and reports
    // that; the server's own answer names the object.
    let err = s.kubectl_err(&["get", "cm", "orphan", "-n", "nope"]);
    assert!(err.contains("Error from server (NotFound)"), "{err}");
    s.get("/api/v1/namespaces/nope/configmaps/orphan")
        .assert_status(404, "NotFound");
    let status = s.get("/api/v1/namespaces/nope/configmaps/orphan").json();
    assert_eq!(status["message"], "configmaps \"orphan\" not found");
}

#[test]
fn generate_name_gets_a_name_with_the_prefix() {
    let s = TestServer::start();
    s.apply(NAMESPACE_DEMO);
    let manifest = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":"gen-","namespace":"demo"},"data":{"k":"v"}}"#;
    let mut seen = Vec::new();
    for _ in 0..2 {
        let out = s.kubectl_with_manifest(&["create"], manifest);
        let name = out
            .strip_prefix("configmap/")
            .and_then(|r| r.strip_suffix(" created\n"))
            .unwrap_or_else(|| panic!("unexpected output: {out}"))
            .to_string();
        assert!(
            name.starts_with("gen-") && name.len() == "gen-".len() + 5,
            "{name}"
        );
        let obj = s.kubectl_json(&["get", "cm", &name, "-n", "demo"]);
        assert_eq!(obj["metadata"]["generateName"], "gen-");
        assert_eq!(obj["data"]["k"], "v");
        seen.push(name);
    }
    assert_ne!(seen[0], seen[1]);
}

#[test]
fn resource_versions_increase_across_writes() {
    let s = TestServer::start();
    s.apply(NAMESPACE_DEMO);
    let mut last = 0;
    let mut check = |obj: Value, what: &str| {
        let v = rv(&obj["metadata"]["resourceVersion"]);
        assert!(v > last, "{what}: resourceVersion {v} not above {last}");
        last = v;
    };
    let created: Value = serde_json::from_str(&s.kubectl_with_manifest(
        &["create", "-o", "json"],
        &configmap("counter", "demo", json!({"n": "0"})),
    ))
    .unwrap();
    check(created, "create");
    for n in 1..=3 {
        let patched = s.kubectl_json(&[
            "patch",
            "cm",
            "counter",
            "-n",
            "demo",
            "--type=merge",
            "-p",
            &format!(r#"{{"data":{{"n":"{n}"}}}}"#),
        ]);
        check(patched, "patch");
    }
    // (kubectl label -o json prints the object it read, not the server's
    // answer, so read it back.)
    s.kubectl_ok(&["label", "cm", "counter", "-n", "demo", "x=y"]);
    check(
        s.kubectl_json(&["get", "cm", "counter", "-n", "demo"]),
        "label",
    );
    let other: Value = serde_json::from_str(&s.kubectl_with_manifest(
        &["create", "-o", "json"],
        &configmap("other", "demo", json!({})),
    ))
    .unwrap();
    check(other, "create other");
    // The list's resourceVersion is the store's: at least the newest object's.
    // (kubectl -o json wraps lists in a List without one, so ask REST.)
    let list = s.get_json("/api/v1/namespaces/demo/configmaps");
    let list_rv = rv(&list["metadata"]["resourceVersion"]);
    assert!(list_rv >= last, "list rv {list_rv} < {last}");
    s.kubectl_ok(&["delete", "cm", "other", "-n", "demo"]);
    let list = s.get_json("/api/v1/namespaces/demo/configmaps");
    assert!(
        rv(&list["metadata"]["resourceVersion"]) > list_rv,
        "a delete advances the store revision"
    );
}

/// `kubectl get -o yaml` of several objects prints a `kind: List`; applying
/// such a file is everyday kubectl use. kubectl validates a List on the client
/// with the OpenAPI v2 document, which it asks for as protobuf only
/// (`Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf`).
#[test]
fn apply_a_list_manifest() {
    let s = TestServer::start();
    s.apply(NAMESPACE_DEMO);
    s.apply(&configmap("one", "demo", json!({"count": "1"})));
    s.apply(&configmap("two", "demo", json!({"count": "2"})));
    let yaml = s.kubectl_ok(&["get", "configmaps", "-n", "demo", "-o", "yaml"]);
    assert!(yaml.contains("kind: List"), "{yaml}");
    let edited = yaml.replace("count: \"1\"", "count: \"10\"");
    assert_ne!(edited, yaml);
    let file = s.scratch("list.yaml");
    write_file(&file, &edited);
    let out = s.kubectl_ok(&["apply", "-f", file.to_str().unwrap()]);
    assert_eq!(
        sorted_lines(&out),
        ["configmap/one configured", "configmap/two configured"],
        "{out}"
    );
    assert_eq!(
        s.kubectl_json(&["get", "cm", "one", "-n", "demo"])["data"]["count"],
        "10"
    );

    let list = json!({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "three", "namespace": "demo"}},
    ]});
    assert_eq!(
        s.kubectl_with_manifest(&["create"], &list.to_string()),
        "configmap/three created\n"
    );
}
