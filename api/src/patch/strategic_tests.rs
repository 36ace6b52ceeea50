use serde_json::json;

use super::*;

const DEPLOYMENT: &str = "io.k8s.api.apps.v1.Deployment";
const POD: &str = "io.k8s.api.core.v1.Pod";
const SERVICE: &str = "io.k8s.api.core.v1.Service";

fn apply(original: Value, patch: Value, root: &str) -> Value {
    match apply_strategic_merge_patch(&original, &patch, root) {
        Ok(result) => result,
        Err(err) => panic!("patch failed: {err}"),
    }
}

fn apply_err(original: Value, patch: Value, root: &str) -> StrategicMergeError {
    match apply_strategic_merge_patch(&original, &patch, root) {
        Ok(result) => panic!("patch unexpectedly succeeded: {result}"),
        Err(err) => err,
    }
}

fn deployment(containers: Value) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web", "tier": "front"}},
        "spec": {
            "replicas": 2,
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}
            },
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": containers}
            }
        }
    })
}

fn containers_of(object: &Value) -> &Value {
    &object["spec"]["template"]["spec"]["containers"]
}

fn names(list: &Value) -> Vec<&str> {
    list.as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|item| item["name"].as_str())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn merges_containers_by_name() {
    let original = deployment(json!([
        {"name": "app", "image": "app:1", "args": ["--a"]},
        {"name": "sidecar", "image": "proxy:1"}
    ]));
    let patch = json!({"spec": {"template": {"spec": {"containers": [
        {"name": "sidecar", "image": "proxy:2"}
    ]}}}});
    let result = apply(original, patch, DEPLOYMENT);
    assert_eq!(
        containers_of(&result),
        &json!([
            {"name": "app", "image": "app:1", "args": ["--a"]},
            {"name": "sidecar", "image": "proxy:2"}
        ])
    );
    assert_eq!(result["spec"]["replicas"], json!(2));
}

#[test]
fn new_container_goes_before_server_only_ones() {
    let original = deployment(json!([{"name": "app", "image": "app:1"}]));
    let patch = json!({"spec": {"template": {"spec": {"containers": [
        {"name": "debug", "image": "busybox"}
    ]}}}});
    let result = apply(original, patch, DEPLOYMENT);
    assert_eq!(names(containers_of(&result)), ["debug", "app"]);
}

#[test]
fn merges_env_by_name_inside_container() {
    let original = deployment(json!([{
        "name": "app",
        "image": "app:1",
        "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    }]));
    let patch = json!({"spec": {"template": {"spec": {"containers": [{
        "name": "app",
        "env": [{"name": "B", "value": "20"}, {"name": "C", "value": "3"}]
    }]}}}});
    let result = apply(original, patch, DEPLOYMENT);
    assert_eq!(
        containers_of(&result)[0]["env"],
        json!([
            {"name": "A", "value": "1"},
            {"name": "B", "value": "20"},
            {"name": "C", "value": "3"}
        ])
    );
}

#[test]
fn deletes_container_with_patch_delete() {
    let original = deployment(json!([
        {"name": "app", "image": "app:1"},
        {"name": "sidecar", "image": "proxy:1"},
        {"name": "logger", "image": "log:1"}
    ]));
    let patch = json!({"spec": {"template": {"spec": {"containers": [
        {"name": "sidecar", "$patch": "delete"}
    ]}}}});
    let result = apply(original, patch, DEPLOYMENT);
    assert_eq!(names(containers_of(&result)), ["app", "logger"]);
}

#[test]
fn replaces_merge_list_with_patch_replace() {
    let original = deployment(json!([
        {"name": "app", "image": "app:1"},
        {"name": "sidecar", "image": "proxy:1"}
    ]));
    let patch = json!({"spec": {"template": {"spec": {"containers": [
        {"$patch": "replace"},
        {"name": "only", "image": "only:1"}
    ]}}}});
    let result = apply(original, patch, DEPLOYMENT);
    assert_eq!(
        containers_of(&result),
        &json!([{"name": "only", "image": "only:1"}])
    );
}

#[test]
fn replaces_atomic_list_args() {
    let original = deployment(json!([
        {"name": "app", "image": "app:1", "args": ["--a", "--b"]}
    ]));
    let patch = json!({"spec": {"template": {"spec": {"containers": [
        {"name": "app", "args": ["--c"]}
    ]}}}});
    let result = apply(original, patch, DEPLOYMENT);
    assert_eq!(containers_of(&result)[0]["args"], json!(["--c"]));
}

#[test]
fn finalizers_union_puts_new_first() {
    let original = json!({"metadata": {"name": "p", "finalizers": ["a", "b"]}});
    let patch = json!({"metadata": {"finalizers": ["b", "c"]}});
    let result = apply(original, patch, POD);
    assert_eq!(result["metadata"]["finalizers"], json!(["a", "b", "c"]));

    let original = json!({"metadata": {"name": "p", "finalizers": ["a", "b"]}});
    let patch = json!({"metadata": {"finalizers": ["c"]}});
    let result = apply(original, patch, POD);
    assert_eq!(result["metadata"]["finalizers"], json!(["c", "a", "b"]));
}

#[test]
fn delete_from_primitive_list() {
    let original = json!({"metadata": {"name": "p", "finalizers": ["a", "b", "c"]}});
    let patch = json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["b"]}});
    let result = apply(original, patch, POD);
    assert_eq!(result["metadata"]["finalizers"], json!(["a", "c"]));

    // Deleting from a list the object does not have changes nothing.
    let original = json!({"metadata": {"name": "p"}});
    let patch = json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["b"]}});
    let result = apply(original, patch, POD);
    assert_eq!(result, json!({"metadata": {"name": "p"}}));
}

#[test]
fn set_element_order_reorders_merged_list() {
    let original = deployment(json!([
        {"name": "a", "image": "a:1"},
        {"name": "b", "image": "b:1"},
        {"name": "c", "image": "c:1"}
    ]));
    let patch = json!({"spec": {"template": {"spec": {
        "$setElementOrder/containers": [{"name": "c"}, {"name": "a"}, {"name": "b"}],
        "containers": [{"name": "a", "image": "a:2"}]
    }}}});
    let result = apply(original, patch, DEPLOYMENT);
    assert_eq!(
        containers_of(&result),
        &json!([
            {"name": "c", "image": "c:1"},
            {"name": "a", "image": "a:2"},
            {"name": "b", "image": "b:1"}
        ])
    );
}

#[test]
fn set_element_order_keeps_unlisted_server_items_in_place() {
    let original = deployment(json!([
        {"name": "a", "image": "a:1"},
        {"name": "b", "image": "b:1"},
        {"name": "c", "image": "c:1"}
    ]));
    let patch = json!({"spec": {"template": {"spec": {
        "$setElementOrder/containers": [{"name": "c"}, {"name": "a"}],
        "containers": [{"name": "a", "image": "a:2"}]
    }}}});
    let result = apply(original, patch, DEPLOYMENT);
    assert_eq!(names(containers_of(&result)), ["b", "c", "a"]);
}

#[test]
fn set_element_order_for_primitive_list() {
    let original = json!({"metadata": {"name": "p", "finalizers": ["a", "b"]}});
    let patch = json!({"metadata": {
        "$setElementOrder/finalizers": ["b", "c", "a"],
        "finalizers": ["c"]
    }});
    let result = apply(original, patch, POD);
    assert_eq!(result["metadata"]["finalizers"], json!(["b", "c", "a"]));
}

#[test]
fn set_element_order_rejects_patch_items_out_of_order() {
    let original = deployment(json!([
        {"name": "a", "image": "a:1"},
        {"name": "b", "image": "b:1"}
    ]));
    let patch = json!({"spec": {"template": {"spec": {
        "$setElementOrder/containers": [{"name": "a"}, {"name": "b"}],
        "containers": [{"name": "b", "image": "b:2"}, {"name": "a", "image": "a:2"}]
    }}}});
    let err = apply_err(original, patch, DEPLOYMENT);
    assert!(matches!(
        err,
        StrategicMergeError::SetElementOrderMismatch { .. }
    ));
    assert_eq!(err.status_code(), 400);
}

#[test]
fn kubectl_apply_patch_with_nested_element_orders() {
    let original = deployment(json!([{
        "name": "app",
        "image": "app:1",
        "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    }]));
    // What `kubectl apply` sends when the image changes, B is dropped and C added.
    let patch = json!({
        "metadata": {"annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}},
        "spec": {"template": {"spec": {
            "$setElementOrder/containers": [{"name": "app"}],
            "containers": [{
                "$setElementOrder/env": [{"name": "C"}, {"name": "A"}],
                "env": [{"name": "C", "value": "3"}, {"name": "B", "$patch": "delete"}],
                "image": "app:2",
                "name": "app"
            }]
        }}}
    });
    let result = apply(original, patch, DEPLOYMENT);
    assert_eq!(
        containers_of(&result),
        &json!([{
            "name": "app",
            "image": "app:2",
            "env": [{"name": "C", "value": "3"}, {"name": "A", "value": "1"}]
        }])
    );
    assert_eq!(
        result["metadata"]["annotations"],
        json!({"kubectl.kubernetes.io/last-applied-configuration": "{}"})
    );
}

#[test]
fn retain_keys_switches_rolling_update_to_recreate() {
    let original = deployment(json!([{"name": "app", "image": "app:1"}]));
    let patch = json!({"spec": {"strategy": {
        "$retainKeys": ["type"],
        "type": "Recreate"
    }}});
    let result = apply(original, patch, DEPLOYMENT);
    assert_eq!(result["spec"]["strategy"], json!({"type": "Recreate"}));
}

#[test]
fn retain_keys_rejects_unlisted_patch_key() {
    let original = deployment(json!([{"name": "app", "image": "app:1"}]));
    let patch = json!({"spec": {"strategy": {
        "$retainKeys": ["type"],
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": 2}
    }}});
    let err = apply_err(original, patch, DEPLOYMENT);
    assert_eq!(err, StrategicMergeError::BadPatchFormatForRetainKeys);
    assert_eq!(err.status_code(), 400);
}

#[test]
fn retain_keys_on_volume_switches_source() {
    let original = json!({"metadata": {"name": "p"}, "spec": {
        "containers": [{"name": "app", "image": "app:1"}],
        "volumes": [
            {"name": "data", "emptyDir": {}},
            {"name": "cfg", "configMap": {"name": "old"}}
        ]
    }});
    let patch = json!({"spec": {"volumes": [{
        "name": "data",
        "$retainKeys": ["name", "persistentVolumeClaim"],
        "persistentVolumeClaim": {"claimName": "pvc"}
    }]}});
    let result = apply(original, patch, POD);
    assert_eq!(
        result["spec"]["volumes"],
        json!([
            {"name": "data", "persistentVolumeClaim": {"claimName": "pvc"}},
            {"name": "cfg", "configMap": {"name": "old"}}
        ])
    );
}

#[test]
fn service_ports_merge_by_port() {
    let original = json!({"metadata": {"name": "s"}, "spec": {"ports": [
        {"name": "http", "port": 80, "targetPort": 8080},
        {"name": "https", "port": 443, "targetPort": 8443}
    ]}});
    let patch = json!({"spec": {"ports": [{"port": 443, "targetPort": 9443}]}});
    let result = apply(original, patch, SERVICE);
    assert_eq!(
        result["spec"]["ports"],
        json!([
            {"name": "http", "port": 80, "targetPort": 8080},
            {"name": "https", "port": 443, "targetPort": 9443}
        ])
    );
}

#[test]
fn null_deletes_a_label() {
    let original = deployment(json!([{"name": "app", "image": "app:1"}]));
    let patch = json!({"metadata": {"labels": {"tier": null, "new": "yes"}}});
    let result = apply(original, patch, DEPLOYMENT);
    assert_eq!(
        result["metadata"]["labels"],
        json!({"app": "web", "new": "yes"})
    );
}

#[test]
fn map_directives_replace_and_delete() {
    let original = deployment(json!([{"name": "app", "image": "app:1"}]));
    let patch = json!({"metadata": {"labels": {"$patch": "replace", "only": "this"}}});
    let result = apply(original.clone(), patch, DEPLOYMENT);
    assert_eq!(result["metadata"]["labels"], json!({"only": "this"}));

    let patch = json!({"metadata": {"labels": {"$patch": "delete"}}});
    let result = apply(original, patch, DEPLOYMENT);
    assert_eq!(result["metadata"]["labels"], json!({}));
}

#[test]
fn invalid_directives_are_errors() {
    let original = deployment(json!([{"name": "app", "image": "app:1"}]));
    let err = apply_err(
        original.clone(),
        json!({"metadata": {"labels": {"$patch": "merge"}}}),
        DEPLOYMENT,
    );
    assert!(matches!(err, StrategicMergeError::BadPatchType { .. }));

    let err = apply_err(
        original.clone(),
        json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "$patch": "merge"}]}}}}),
        DEPLOYMENT,
    );
    assert_eq!(err, StrategicMergeError::MergeDirectiveInList);

    let err = apply_err(
        original.clone(),
        json!({"spec": {"strategy": {"$retainKeys": "type"}}}),
        DEPLOYMENT,
    );
    assert_eq!(err, StrategicMergeError::BadPatchFormatForRetainKeys);

    let err = apply_err(
        original.clone(),
        json!({"spec": {"template": {"spec": {"$setElementOrder/containers": {"name": "app"}}}}}),
        DEPLOYMENT,
    );
    assert_eq!(
        err,
        StrategicMergeError::BadPatchFormatForSetElementOrderList
    );

    let err = apply_err(
        original.clone(),
        json!({"metadata": {"$deleteFromPrimitiveList": ["a"]}}),
        DEPLOYMENT,
    );
    assert_eq!(err, StrategicMergeError::BadPatchFormatForPrimitiveList);

    let err = apply_err(
        original,
        json!({"spec": {"template": {"spec": {"containers": [{"image": "nameless"}]}}}}),
        DEPLOYMENT,
    );
    assert!(matches!(err, StrategicMergeError::NoMergeKey { .. }));
}

#[test]
fn directives_in_new_values_are_carried_out() {
    let original = json!({"metadata": {"name": "p"}, "spec": {}});
    let patch = json!({"spec": {"containers": [
        {"name": "gone", "$patch": "delete"},
        {"name": "app", "image": "app:1", "env": [{"name": "A", "value": null}]}
    ]}});
    let result = apply(original, patch, POD);
    assert_eq!(
        result["spec"]["containers"],
        json!([{"name": "app", "image": "app:1", "env": [{"name": "A"}]}])
    );
}

#[test]
fn owner_references_merge_by_uid() {
    let original = json!({"metadata": {"name": "p", "ownerReferences": [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "1"}
    ]}});
    let patch = json!({"metadata": {"ownerReferences": [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "1", "controller": true}
    ]}});
    let result = apply(original, patch, POD);
    assert_eq!(
        result["metadata"]["ownerReferences"],
        json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "1", "controller": true}])
    );
}

#[test]
fn pod_status_conditions_merge_by_type() {
    let original = json!({"metadata": {"name": "p"}, "status": {"conditions": [
        {"type": "Ready", "status": "False"},
        {"type": "PodScheduled", "status": "True"}
    ]}});
    let patch = json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}});
    let result = apply(original, patch, POD);
    assert_eq!(
        result["status"]["conditions"],
        json!([
            {"type": "Ready", "status": "True"},
            {"type": "PodScheduled", "status": "True"}
        ])
    );
}

#[test]
fn config_map_data_merges_as_map() {
    let original = json!({"metadata": {"name": "c"}, "data": {"a": "1", "b": "2"}});
    let patch = json!({"data": {"b": null, "c": "3"}});
    let result = apply(original, patch, "io.k8s.api.core.v1.ConfigMap");
    assert_eq!(result["data"], json!({"a": "1", "c": "3"}));
}

#[test]
fn type_change_replaces_value() {
    let original = deployment(json!([{"name": "app", "image": "app:1"}]));
    let patch = json!({"spec": {"strategy": {"rollingUpdate": {"maxSurge": "25%"}}}});
    let result = apply(original, patch, DEPLOYMENT);
    assert_eq!(
        result["spec"]["strategy"]["rollingUpdate"],
        json!({"maxSurge": "25%", "maxUnavailable": 0})
    );
}

#[test]
fn unknown_kind_is_unsupported() {
    let err = apply_err(json!({}), json!({}), "com.example.v1.Widget");
    assert_eq!(
        err,
        StrategicMergeError::UnsupportedKind("com.example.v1.Widget".to_owned())
    );
    assert_eq!(err.status_code(), 415);
    // A nested definition is not a kind either.
    let err = apply_err(json!({}), json!({}), "io.k8s.api.core.v1.PodSpec");
    assert_eq!(err.status_code(), 415);
}

#[test]
fn non_object_documents_are_rejected() {
    let err = apply_err(json!({}), json!([1]), POD);
    assert_eq!(err, StrategicMergeError::BadJsonDoc);
    let err = apply_err(json!("x"), json!({}), POD);
    assert_eq!(err, StrategicMergeError::BadJsonDoc);
}

#[test]
fn every_registered_kind_has_a_schema() {
    let schemas = schemas();
    assert!(schemas.roots.len() >= 50);
    for root in &schemas.roots {
        assert!(schemas.root(root).is_some(), "{root} has no definition");
    }
    // Types reached only through `$ref`s are resolvable too.
    let pod = schemas.root(POD);
    let spec = schemas.field(pod, "spec");
    assert_eq!(
        spec.and_then(|node| node.definition),
        Some("io.k8s.api.core.v1.PodSpec")
    );
    let container = schemas.items(schemas.field(spec, "containers"));
    assert_eq!(
        container.and_then(|node| node.definition),
        Some("io.k8s.api.core.v1.Container")
    );
}

#[test]
fn lists_of_lists_are_unprocessable() {
    let original = json!({"metadata": {"name": "p", "finalizers": ["a"]}});
    let patch = json!({"metadata": {"finalizers": [["b"]]}});
    let err = apply_err(original, patch, POD);
    assert_eq!(err, StrategicMergeError::NoListOfLists);
    assert_eq!(err.status_code(), 422);
}
