use serde_json::{json, Value};

use super::*;

const DEPLOYMENT: &str = "io.k8s.api.apps.v1.Deployment";
const T1: &str = "2026-11-22T05:00:00Z";
const T2: &str = "2026-11-22T05:01:00Z";

fn ctx<'a>(manager: &'a str, time: &'a str) -> ManagerContext<'a> {
    ManagerContext {
        manager,
        api_version: "apps/v1",
        subresource: None,
        time,
    }
}

fn nginx_config() -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "nginx-deployment", "labels": {"app": "nginx"}},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "nginx"}},
            "template": {
                "metadata": {"labels": {"app": "nginx"}},
                "spec": {"containers": [{
                    "name": "nginx",
                    "image": "nginx:1.14.2",
                    "ports": [{"containerPort": 80}]
                }]}
            }
        }
    })
}

fn minimal(replicas: i64) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "nginx-deployment"},
        "spec": {"replicas": replicas}
    })
}

fn entries(object: &Value) -> &Vec<Value> {
    object["metadata"]["managedFields"].as_array().unwrap()
}

fn entry<'a>(object: &'a Value, manager: &str) -> &'a Value {
    entries(object)
        .iter()
        .find(|e| e["manager"] == manager)
        .unwrap_or_else(|| panic!("no entry for {manager}"))
}

#[test]
fn server_side_apply_of_a_deployment_writes_upstreams_fields_v1() {
    let created = apply(
        None,
        &nginx_config(),
        DEPLOYMENT,
        &ctx("kubectl", T1),
        false,
    )
    .unwrap();
    assert_eq!(created["spec"]["replicas"], 3);
    assert_eq!(
        created["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx:1.14.2"
    );
    let managed = entries(&created);
    assert_eq!(managed.len(), 1);
    let kubectl = &managed[0];
    assert_eq!(kubectl["manager"], "kubectl");
    assert_eq!(kubectl["operation"], "Apply");
    assert_eq!(kubectl["apiVersion"], "apps/v1");
    assert_eq!(kubectl["time"], T1);
    assert_eq!(kubectl["fieldsType"], "FieldsV1");
    // As kube-apiserver stores it for `kubectl apply --server-side` of this
    // manifest: selector is an atomic struct, containers are keyed by name,
    // ports by containerPort and the defaulted protocol.
    let expected = r#"{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:replicas":{},"f:selector":{},"f:template":{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{".":{},"f:image":{},"f:name":{},"f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{}}}}}}}}}"#;
    assert_eq!(kubectl["fieldsV1"].to_string(), expected);
    let keys: Vec<&String> = kubectl.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "manager",
            "operation",
            "apiVersion",
            "time",
            "fieldsType",
            "fieldsV1"
        ]
    );
}

#[test]
fn fields_v1_round_trips_with_the_self_marker_first() {
    let text = r#"{"f:metadata":{"f:finalizers":{".":{},"v:\"a\"":{}},"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:ports":{"k:{\"port\":80,\"protocol\":\"TCP\"}":{".":{},"f:port":{}}}}}"#;
    let value: Value = serde_json::from_str(text).unwrap();
    let set = fieldpath::FieldSet::from_fields_v1(&value).unwrap();
    assert_eq!(set.to_fields_v1().to_string(), text);
    let paths: Vec<String> = set
        .paths()
        .iter()
        .map(|p| fieldpath::path_to_string(p))
        .collect();
    assert!(paths.contains(&".metadata.finalizers[=\"a\"]".to_string()));
    assert!(paths.contains(&".spec.ports[port=80,protocol=\"TCP\"]".to_string()));
}

#[test]
fn second_applier_changing_a_field_conflicts_and_force_takes_it() {
    let live = apply(None, &minimal(3), DEPLOYMENT, &ctx("manager-a", T1), false).unwrap();
    let err = apply(
        Some(&live),
        &minimal(5),
        DEPLOYMENT,
        &ctx("manager-b", T2),
        false,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Apply failed with 1 conflict: conflict with \"manager-a\": .spec.replicas"
    );

    let forced = apply(
        Some(&live),
        &minimal(5),
        DEPLOYMENT,
        &ctx("manager-b", T2),
        true,
    )
    .unwrap();
    assert_eq!(forced["spec"]["replicas"], 5);
    // manager-a owned nothing else, so its entry is gone.
    assert_eq!(entries(&forced).len(), 1);
    assert_eq!(
        entry(&forced, "manager-b")["fieldsV1"],
        json!({"f:spec": {"f:replicas": {}}})
    );
}

#[test]
fn applying_the_same_value_shares_ownership() {
    let live = apply(None, &minimal(3), DEPLOYMENT, &ctx("manager-a", T1), false).unwrap();
    let shared = apply(
        Some(&live),
        &minimal(3),
        DEPLOYMENT,
        &ctx("manager-b", T2),
        false,
    )
    .unwrap();
    let replicas = json!({"f:spec": {"f:replicas": {}}});
    assert_eq!(entry(&shared, "manager-a")["fieldsV1"], replicas);
    assert_eq!(entry(&shared, "manager-b")["fieldsV1"], replicas);
    // Nothing changed, so the new applier's entry carries no time.
    assert!(entry(&shared, "manager-b").get("time").is_none());
    assert_eq!(entry(&shared, "manager-a")["time"], T1);

    // Now a change needs both to agree: a third applier conflicts with both.
    let err = apply(
        Some(&shared),
        &minimal(4),
        DEPLOYMENT,
        &ctx("manager-c", T2),
        false,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Apply failed with 2 conflicts: conflicts with \"manager-a\":\n- .spec.replicas\nconflicts with \"manager-b\":\n- .spec.replicas"
    );
}

#[test]
fn fields_dropped_from_the_config_are_removed_unless_someone_else_owns_them() {
    let with_labels = |labels: Value| {
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "labels": labels},
            "spec": {"replicas": 2, "paused": true}
        })
    };
    let live = apply(
        None,
        &with_labels(json!({"app": "web", "tier": "front"})),
        DEPLOYMENT,
        &ctx("a", T1),
        false,
    )
    .unwrap();
    let dropped = apply(
        Some(&live),
        &json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {"replicas": 2}
        }),
        DEPLOYMENT,
        &ctx("a", T2),
        false,
    )
    .unwrap();
    assert_eq!(dropped["metadata"]["labels"], json!({"app": "web"}));
    assert!(dropped["spec"].get("paused").is_none());
    assert_eq!(
        entry(&dropped, "a")["fieldsV1"],
        json!({"f:metadata": {"f:labels": {"f:app": {}}}, "f:spec": {"f:replicas": {}}})
    );

    // Co-owned by another applier: kept, and only the other owns it now.
    let shared = apply(
        Some(&live),
        &json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"tier": "front"}}
        }),
        DEPLOYMENT,
        &ctx("b", T1),
        false,
    )
    .unwrap();
    let kept = apply(
        Some(&shared),
        &with_labels(json!({"app": "web"})),
        DEPLOYMENT,
        &ctx("a", T2),
        false,
    )
    .unwrap();
    assert_eq!(
        kept["metadata"]["labels"],
        json!({"app": "web", "tier": "front"})
    );
    assert_eq!(
        entry(&kept, "b")["fieldsV1"],
        json!({"f:metadata": {"f:labels": {"f:tier": {}}}})
    );
}

fn with_containers(containers: Value) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"template": {"spec": {"containers": containers}}}
    })
}

#[test]
fn associative_lists_merge_by_key() {
    let live = apply(
        None,
        &with_containers(json!([{
            "name": "app",
            "image": "app:1",
            "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
        }])),
        DEPLOYMENT,
        &ctx("a", T1),
        false,
    )
    .unwrap();
    // Another applier adds a sidecar and an env var to the app container.
    let both = apply(
        Some(&live),
        &with_containers(json!([
            {"name": "app", "env": [{"name": "C", "value": "3"}]},
            {"name": "sidecar", "image": "proxy:1"}
        ])),
        DEPLOYMENT,
        &ctx("b", T2),
        false,
    )
    .unwrap();
    let containers = &both["spec"]["template"]["spec"]["containers"];
    assert_eq!(containers.as_array().unwrap().len(), 2);
    assert_eq!(containers[0]["name"], "app");
    assert_eq!(containers[0]["image"], "app:1");
    assert_eq!(
        containers[0]["env"],
        json!([{"name": "A", "value": "1"}, {"name": "B", "value": "2"}, {"name": "C", "value": "3"}])
    );
    assert_eq!(
        containers[1],
        json!({"name": "sidecar", "image": "proxy:1"})
    );
    assert_eq!(
        entry(&both, "b")["fieldsV1"].to_string(),
        r#"{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:env":{"k:{\"name\":\"C\"}":{".":{},"f:name":{},"f:value":{}}},"f:name":{}},"k:{\"name\":\"sidecar\"}":{".":{},"f:image":{},"f:name":{}}}}}}}"#
    );

    // The first applier drops env B: removed; C (owned by b) and the sidecar stay.
    let pruned = apply(
        Some(&both),
        &with_containers(json!([{
            "name": "app",
            "image": "app:1",
            "env": [{"name": "A", "value": "1"}]
        }])),
        DEPLOYMENT,
        &ctx("a", T2),
        false,
    )
    .unwrap();
    let containers = &pruned["spec"]["template"]["spec"]["containers"];
    assert_eq!(
        containers[0]["env"],
        json!([{"name": "A", "value": "1"}, {"name": "C", "value": "3"}])
    );
    assert_eq!(containers[1]["name"], "sidecar");

    // Changing b's env value from a's side is a conflict naming the item.
    let err = apply(
        Some(&pruned),
        &with_containers(json!([{"name": "app", "env": [{"name": "C", "value": "4"}]}])),
        DEPLOYMENT,
        &ctx("a", T2),
        false,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Apply failed with 1 conflict: conflict with \"b\": .spec.template.spec.containers[name=\"app\"].env[name=\"C\"].value"
    );
}

#[test]
fn record_update_takes_ownership_of_what_a_write_changed() {
    let mut created = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "uid": "u1", "labels": {"app": "web"}},
        "spec": {
            "replicas": 1,
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%"}},
            "template": {"spec": {"containers": [{"name": "app", "image": "app:1"}]}}
        }
    });
    record_update(None, &mut created, DEPLOYMENT, &ctx("kubectl-create", T1)).unwrap();
    let create = entry(&created, "kubectl-create");
    assert_eq!(create["operation"], "Update");
    assert_eq!(create["apiVersion"], "apps/v1");
    assert_eq!(
        create["fieldsV1"].to_string(),
        r#"{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:replicas":{},"f:strategy":{"f:rollingUpdate":{".":{},"f:maxSurge":{}},"f:type":{}},"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:image":{},"f:name":{}}}}}}}"#
    );

    // An applier changing a field an updater set conflicts with it.
    let err = apply(
        Some(&created),
        &minimal_named("web", 3),
        DEPLOYMENT,
        &ctx("manager-a", T2),
        false,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Apply failed with 1 conflict: conflict with \"kubectl-create\" using apps/v1: .spec.replicas"
    );

    // A later update by a controller takes the field from the creator.
    let mut scaled = created.clone();
    scaled["spec"]["replicas"] = json!(4);
    record_update(
        Some(&created),
        &mut scaled,
        DEPLOYMENT,
        &ctx("autoscaler", T2),
    )
    .unwrap();
    assert_eq!(
        entry(&scaled, "autoscaler")["fieldsV1"],
        json!({"f:spec": {"f:replicas": {}}})
    );
    assert!(!entry(&scaled, "kubectl-create")["fieldsV1"]["f:spec"]
        .as_object()
        .unwrap()
        .contains_key("f:replicas"));
    // Entries sort by operation, then time.
    let order: Vec<&Value> = entries(&scaled).iter().map(|e| &e["manager"]).collect();
    assert_eq!(order, [&json!("kubectl-create"), &json!("autoscaler")]);

    // A write that changes nothing leaves the entries untouched.
    let mut same = scaled.clone();
    record_update(
        Some(&scaled),
        &mut same,
        DEPLOYMENT,
        &ctx("autoscaler", "2030-01-01T00:00:00Z"),
    )
    .unwrap();
    assert_eq!(same, scaled);
}

fn minimal_named(name: &str, replicas: i64) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {"replicas": replicas}
    })
}

#[test]
fn record_update_honours_managed_fields_the_client_sent() {
    let live = apply(None, &minimal(3), DEPLOYMENT, &ctx("a", T1), false).unwrap();

    // No managedFields in the body: the stored ones are kept.
    let mut kept = live.clone();
    kept["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("managedFields");
    kept["spec"]["paused"] = json!(true);
    record_update(Some(&live), &mut kept, DEPLOYMENT, &ctx("editor", T2)).unwrap();
    assert_eq!(entries(&kept).len(), 2);
    assert_eq!(
        entry(&kept, "editor")["fieldsV1"],
        json!({"f:spec": {"f:paused": {}}})
    );

    // `managedFields: []` resets: only this write's fields remain.
    let mut reset = live.clone();
    reset["metadata"]["managedFields"] = json!([]);
    reset["spec"]["paused"] = json!(true);
    record_update(Some(&live), &mut reset, DEPLOYMENT, &ctx("editor", T2)).unwrap();
    assert_eq!(entries(&reset).len(), 1);
    assert_eq!(entries(&reset)[0]["manager"], "editor");

    // A reset with no change leaves no managedFields at all.
    let mut cleared = live.clone();
    cleared["metadata"]["managedFields"] = json!([{}]);
    record_update(Some(&live), &mut cleared, DEPLOYMENT, &ctx("editor", T2)).unwrap();
    assert!(cleared["metadata"].get("managedFields").is_none());
}

#[test]
fn status_belongs_to_the_status_subresource() {
    let mut created = minimal(1);
    record_update(None, &mut created, DEPLOYMENT, &ctx("creator", T1)).unwrap();
    let mut with_status = created.clone();
    with_status["status"] = json!({"replicas": 1});
    // Through the main resource, status is not tracked.
    let mut main = with_status.clone();
    record_update(Some(&created), &mut main, DEPLOYMENT, &ctx("other", T2)).unwrap();
    assert!(entries(&main).iter().all(|e| e["manager"] != "other"));
    // Through /status it is, with the subresource in the entry.
    let status_ctx = ManagerContext {
        subresource: Some("status"),
        ..ctx("kube-controller-manager", T2)
    };
    let mut status = with_status.clone();
    record_update(Some(&created), &mut status, DEPLOYMENT, &status_ctx).unwrap();
    let controller = entry(&status, "kube-controller-manager");
    assert_eq!(controller["subresource"], "status");
    assert_eq!(
        controller["fieldsV1"],
        json!({"f:status": {"f:replicas": {}}})
    );
}

#[test]
fn conflict_status_matches_kube_apiserver() {
    let mut created = minimal(1);
    record_update(None, &mut created, DEPLOYMENT, &ctx("manager-a", T1)).unwrap();
    let err = apply(
        Some(&created),
        &minimal(2),
        DEPLOYMENT,
        &ctx("kubectl", T2),
        false,
    )
    .unwrap_err();
    let status = ApiError::from(err).to_status();
    assert_eq!(
        status,
        json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": "Apply failed with 1 conflict: conflict with \"manager-a\" using apps/v1: .spec.replicas",
            "reason": "Conflict",
            "code": 409,
            "details": {"causes": [{
                "reason": "FieldManagerConflict",
                "message": "conflict with \"manager-a\" using apps/v1",
                "field": ".spec.replicas"
            }]}
        })
    );
}

#[test]
fn applied_configuration_is_checked_like_upstream() {
    let wrong_kind =
        json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "x"}});
    let err = apply(None, &wrong_kind, DEPLOYMENT, &ctx("a", T1), false).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid object type: apps/v1, Kind=ReplicaSet"
    );
    assert_eq!(ApiError::from(err).code(), 400);

    let no_type = json!({"metadata": {"name": "x"}});
    let err = apply(None, &no_type, DEPLOYMENT, &ctx("a", T1), false).unwrap_err();
    assert_eq!(err.to_string(), "invalid object type: /, Kind=");

    let mut managed = minimal(1);
    managed["metadata"]["managedFields"] = json!([]);
    let err = apply(None, &managed, DEPLOYMENT, &ctx("a", T1), false).unwrap_err();
    assert_eq!(err.to_string(), "metadata.managedFields must be nil");

    let nameless_container = with_containers(json!([{"image": "x"}]));
    let err = apply(None, &nameless_container, DEPLOYMENT, &ctx("a", T1), false).unwrap_err();
    assert_eq!(
        err.to_string(),
        "failed to create typed patch object (/web; apps/v1, Kind=Deployment): .spec.template.spec.containers: element 0: associative list with keys has an element that omits key field \"name\" (and doesn't have default value)"
    );
    assert_eq!(ApiError::from(err).code(), 500);
}

#[test]
fn unknown_kinds_merge_maps_granularly_and_lists_atomically() {
    let widget = |spec: Value| json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "labels": {"app": "w"}}, "spec": spec});
    let ctx = |manager| ManagerContext {
        manager,
        api_version: "example.com/v1",
        subresource: None,
        time: T1,
    };
    let live = apply(
        None,
        &widget(json!({"a": 1, "list": [1, 2]})),
        "com.example.v1.Widget",
        &ctx("x"),
        false,
    )
    .unwrap();
    assert_eq!(
        entry(&live, "x")["fieldsV1"],
        json!({"f:metadata": {"f:labels": {"f:app": {}}}, "f:spec": {".": {}, "f:a": {}, "f:list": {}}})
    );
    let merged = apply(
        Some(&live),
        &widget(json!({"b": 2, "list": [3]})),
        "com.example.v1.Widget",
        &ctx("y"),
        true,
    )
    .unwrap();
    assert_eq!(merged["spec"], json!({"a": 1, "list": [3], "b": 2}));
}

#[test]
fn sets_and_service_ports_use_their_list_keys() {
    let service = |ports: Value, finalizers: Value| {
        json!({
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "s", "finalizers": finalizers},
            "spec": {"selector": {"app": "s"}, "ports": ports}
        })
    };
    let core = |manager| ManagerContext {
        manager,
        api_version: "v1",
        subresource: None,
        time: T1,
    };
    let live = apply(
        None,
        &service(json!([{"port": 80}]), json!(["a"])),
        "io.k8s.api.core.v1.Service",
        &core("x"),
        false,
    )
    .unwrap();
    assert_eq!(
        entry(&live, "x")["fieldsV1"].to_string(),
        r#"{"f:metadata":{"f:finalizers":{"v:\"a\"":{}}},"f:spec":{"f:ports":{"k:{\"port\":80,\"protocol\":\"TCP\"}":{".":{},"f:port":{}}},"f:selector":{}}}"#
    );
    let merged = apply(
        Some(&live),
        &service(json!([{"port": 443}]), json!(["b"])),
        "io.k8s.api.core.v1.Service",
        &core("y"),
        false,
    )
    .unwrap();
    assert_eq!(merged["metadata"]["finalizers"], json!(["a", "b"]));
    assert_eq!(
        merged["spec"]["ports"],
        json!([{"port": 80}, {"port": 443}])
    );
}

#[test]
fn update_entries_past_ten_merge_into_ancient_changes() {
    let mut object = minimal(0);
    let mut previous: Option<Value> = None;
    for n in 0..12 {
        let mut next = object.clone();
        next["metadata"]["annotations"] = json!({ format!("a{n}"): "x" });
        let mut annotations = previous
            .as_ref()
            .and_then(|p| p["metadata"].get("annotations").cloned())
            .unwrap_or(json!({}));
        annotations[format!("a{n}")] = json!("x");
        next["metadata"]["annotations"] = annotations;
        let time = format!("2026-11-22T05:{n:02}:00Z");
        let manager = format!("m{n:02}");
        record_update(
            previous.as_ref(),
            &mut next,
            DEPLOYMENT,
            &ctx(&manager, &time),
        )
        .unwrap();
        previous = Some(next.clone());
        object = next;
    }
    let managers: Vec<&str> = entries(&object)
        .iter()
        .map(|e| e["manager"].as_str().unwrap())
        .collect();
    assert_eq!(managers.len(), 10);
    let ancient = entry(&object, "ancient-changes");
    // m00..m02 merged; the bucket keeps the time of the newest merged entry.
    assert_eq!(ancient["time"], "2026-11-22T05:02:00Z");
    assert_eq!(
        ancient["fieldsV1"]["f:metadata"]["f:annotations"]
            .as_object()
            .unwrap()
            .len(),
        4
    );
    assert!(!managers.contains(&"m00") && !managers.contains(&"m02"));
    assert!(managers.contains(&"m11"));
}

/// A create compares against an empty object without copying the new one;
/// that must give exactly the two-way fill's comparison.
#[test]
fn create_comparison_matches_the_two_way_fill() {
    let pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {"a": "b"}},
        "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80}]}]},
        "status": {}
    });
    for (definition, object) in [
        (DEPLOYMENT, nginx_config()),
        (DEPLOYMENT, minimal(2)),
        ("io.k8s.api.core.v1.Pod", pod),
        (
            "io.k8s.api.core.v1.ConfigMap",
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "v"}}),
        ),
    ] {
        let schema = Schema::for_definition(definition);
        let ignored = ignored_fields(&schema, (definition, None), None);
        let fast = compare_objects(&schema, json!({}), &object, &ignored).unwrap();
        let mut old = json!({});
        let mut filled = object.clone();
        let fields = filled.as_object_mut().unwrap();
        fill_zero_values(&schema, &schema.root(), &mut old, NewSide::Fill(fields), 0);
        let mut both = typed::compare(&schema, &old, &filled).unwrap();
        both.exclude(&ignored);
        assert!(!fast.added.is_empty(), "{definition}");
        for (a, b) in [
            (&fast.added, &both.added),
            (&fast.modified, &both.modified),
            (&fast.removed, &both.removed),
        ] {
            assert_eq!(a.paths(), b.paths(), "{definition}");
        }
    }
}

#[test]
fn fields_v1_lists_members_and_children_in_one_sorted_order() {
    let field = |name: &str| PathElement::Field(name.to_string());
    let mut set = FieldSet::new();
    for member in ["a", "c", "e"] {
        set.insert(&[field(member)]);
    }
    for (parent, child) in [("b", "x"), ("c", "y"), ("d", "z")] {
        set.insert(&[field(parent), field(child)]);
    }
    assert_eq!(
        set.to_fields_v1().to_string(),
        r#"{"f:a":{},"f:b":{"f:x":{}},"f:c":{".":{},"f:y":{}},"f:d":{"f:z":{}},"f:e":{}}"#
    );
}

/// A custom kind's list types come from its definition's schema: managers
/// share a set and a map-keyed list item by item, as upstream merges them.
#[test]
fn custom_kinds_merge_lists_by_their_declared_types() {
    let schema = json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {
            "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
            "ports": {"type": "array", "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "properties": {
                    "name": {"type": "string"}, "port": {"type": "integer"}}}},
            "hosts": {"type": "array", "items": {"type": "string"}}
        }}
    }});
    let kind = KindSchema {
        definition: "com.example.v1.Widget",
        custom: Some(CustomSchema::new(&schema, false)),
    };
    let ctx = |manager| ManagerContext {
        manager,
        api_version: "example.com/v1",
        subresource: None,
        time: T1,
    };
    let widget = |spec: Value| {
        json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w1"}, "spec": spec})
    };
    let first = apply(
        None,
        &widget(json!({"tags": ["a"], "ports": [{"name": "http", "port": 80}], "hosts": ["x"]})),
        kind,
        &ctx("one"),
        false,
    )
    .unwrap();
    let both = apply(
        Some(&first),
        &widget(json!({"tags": ["b"], "ports": [{"name": "https", "port": 443}]})),
        kind,
        &ctx("two"),
        false,
    )
    .unwrap();
    assert_eq!(both["spec"]["tags"], json!(["a", "b"]));
    assert_eq!(
        both["spec"]["ports"],
        json!([{"name": "http", "port": 80}, {"name": "https", "port": 443}])
    );
    assert_eq!(
        entry(&both, "two")["fieldsV1"]["f:spec"]["f:ports"],
        json!({"k:{\"name\":\"https\"}": {".": {}, "f:name": {}, "f:port": {}}})
    );
    // A list without a type stays atomic: a second manager's hosts conflict.
    let err = apply(
        Some(&both),
        &widget(json!({"hosts": ["y"]})),
        kind,
        &ctx("three"),
        false,
    )
    .unwrap_err();
    assert!(err.to_string().contains(".spec.hosts"), "{err}");
}

#[test]
fn a_mistyped_configuration_is_refused_in_structured_merge_diffs_words() {
    let refused = |config: Value| match apply(None, &config, DEPLOYMENT, &ctx("kubectl", T1), false)
    {
        Err(ApplyError::Invalid(message)) => message,
        other => panic!("expected a typed patch error, got {other:?}"),
    };
    let prefix =
        "failed to create typed patch object (/nginx-deployment; apps/v1, Kind=Deployment): ";
    let mut replicas = nginx_config();
    replicas["spec"]["replicas"] = json!("three");
    assert_eq!(
        refused(replicas),
        format!("{prefix}.spec.replicas: expected numeric (int or float), got string")
    );
    let mut image = nginx_config();
    image["spec"]["template"]["spec"]["containers"][0]["image"] = json!(5);
    assert_eq!(
        refused(image),
        format!(
            r#"{prefix}.spec.template.spec.containers[name="nginx"].image: expected string, got &value.valueUnstructured{{Value:5}}"#
        )
    );
    let mut several = nginx_config();
    several["spec"]["paused"] = json!("yes");
    several["spec"]["selector"] = json!(["a"]);
    several["spec"]["template"]["spec"]["containers"] = json!({"name": "nginx", "image": "nginx"});
    several["spec"]["color"] = json!("blue");
    assert_eq!(
        refused(several),
        format!("{prefix}errors:\n  .spec.selector: expected map, got &{{[a]}}\n  .spec.template.spec.containers: expected list, got &{{map[image:nginx name:nginx]}}\n  .spec.paused: expected boolean, got &{{yes}}\n  .spec.color: field not declared in schema"),
    );
    // Numbers of any size and quantities' strings are scalars here; their
    // range and syntax are the decoder's to judge.
    let mut fine = nginx_config();
    fine["spec"]["replicas"] = json!(1.5);
    fine["spec"]["template"]["spec"]["containers"][0]["resources"] = json!({"limits": {"cpu": 1}});
    assert!(apply(None, &fine, DEPLOYMENT, &ctx("kubectl", T1), false).is_ok());
}
