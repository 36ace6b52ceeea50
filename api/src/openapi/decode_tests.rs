use super::*;
use serde_json::json;

/// The memo is invisible: every schema of every built-in definition and of
/// its properties has, the first time and from the memo, the shape
/// resolving it gives.
#[test]
fn memoized_shapes_are_the_resolved_ones() {
    let definitions = definitions::builtin();
    let walker = Walker::new(definitions);
    let same = |a: Option<&'static Value>, b: Option<&'static Value>| match (a, b) {
        (Some(a), Some(b)) => std::ptr::eq(a, b),
        (None, None) => true,
        _ => false,
    };
    let mut schemas = 0;
    for root in definitions.keys().filter_map(|name| definitions.get(name)) {
        let properties = root.get("properties").and_then(Value::as_object);
        for schema in std::iter::once(root).chain(properties.into_iter().flat_map(|p| p.values())) {
            let resolved = walker.resolve(schema);
            for _ in 0..2 {
                let shape = walker.shape(schema);
                assert_eq!(shape.is_some(), resolved.is_some());
                let (Some(shape), Some(map)) = (shape, resolved) else {
                    continue;
                };
                assert!(std::ptr::eq(
                    shape
                        .properties
                        .map_or(std::ptr::null(), std::ptr::from_ref),
                    map.get("properties")
                        .and_then(Value::as_object)
                        .map_or(std::ptr::null(), std::ptr::from_ref)
                ));
                assert!(same(
                    shape.additional,
                    map.get("additionalProperties").filter(|a| a.is_object())
                ));
                assert!(same(
                    shape.items,
                    map.get("items").filter(|i| i.is_object())
                ));
            }
            schemas += 1;
        }
    }
    assert!(schemas > 1000, "only {schemas} schemas checked");
}

#[test]
fn strip_removes_what_it_reports_and_keeps_known_fields() {
    let mut deployment = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"any-key": "kept"}},
        "spec": {
            "replica": 2,
            "replicas": 3,
            "template": {"spec": {"containers": [{"name": "c", "image": "i", "imagee": "typo"}]}}
        }
    });
    let found = strip_unknown_fields("io.k8s.api.apps.v1.Deployment", &mut deployment);
    assert_eq!(
        found,
        vec!["spec.replica", "spec.template.spec.containers[0].imagee"]
    );
    assert!(deployment["spec"].get("replica").is_none());
    assert!(deployment["spec"]["template"]["spec"]["containers"][0]
        .get("imagee")
        .is_none());
    assert_eq!(deployment["spec"]["replicas"], 3);
    assert_eq!(deployment["metadata"]["labels"]["any-key"], "kept");
}

fn deployment_with(spec_patch: Value) -> Value {
    let mut deployment = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}
            }
        }
    });
    json_patch::merge(&mut deployment["spec"], &spec_patch);
    deployment
}

fn decode_error(definition: &str, mut object: Value) -> TypeMismatch {
    decode_typed(definition, &mut object).expect_err("a type error")
}

const DEPLOYMENT: &str = "io.k8s.api.apps.v1.Deployment";

#[test]
fn mistyped_values_get_gos_unmarshal_errors() {
    let cases = [
        (
            json!({"replicas": "three"}),
            "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32",
            "cannot convert string to int32",
        ),
        // Go quotes the literal as sent; a parsed f64 keeps no literal, so
        // it is written the way serde_json writes it.
        (
            json!({"replicas": 1e20}),
            "json: cannot unmarshal number 1e+20 into Go struct field DeploymentSpec.spec.replicas of type int32",
            "cannot convert float64 to int32",
        ),
        (
            json!({"replicas": 3_000_000_000_i64}),
            "json: cannot unmarshal number 3000000000 into Go struct field DeploymentSpec.spec.replicas of type int32",
            "cannot convert int64 to int32",
        ),
        (
            json!({"replicas": 1.5}),
            "json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32",
            "cannot convert float64 to int32",
        ),
        (
            json!({"paused": "yes"}),
            "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.paused of type bool",
            "cannot convert string to bool",
        ),
        (
            json!({"template": "none"}),
            "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.template of type v1.PodTemplateSpec",
            "cannot restore struct from: string",
        ),
        (
            json!({"template": {"spec": {"containers": {"name": "c"}}}}),
            "json: cannot unmarshal object into Go struct field PodSpec.spec.template.spec.containers of type []v1.Container",
            "cannot restore slice from map",
        ),
    ];
    for (spec, json_message, unstructured) in cases {
        let error = decode_error(DEPLOYMENT, deployment_with(spec.clone()));
        assert_eq!(error.json, json_message, "{spec}");
        assert_eq!(error.unstructured, unstructured, "{spec}");
    }
    // Inside list items the path names struct fields only, no indices.
    let mut deployment = deployment_with(json!({}));
    deployment["spec"]["template"]["spec"]["containers"][0]["args"] = json!({"a": 1});
    assert_eq!(
        decode_error(DEPLOYMENT, deployment.clone()).json,
        "json: cannot unmarshal object into Go struct field Container.spec.template.spec.containers.args of type []string"
    );
    deployment["spec"]["template"]["spec"]["containers"][0]["args"] = json!(null);
    deployment["spec"]["template"]["spec"]["containers"][0]["ports"] =
        json!([{"containerPort": "eighty"}]);
    assert_eq!(
        decode_error(DEPLOYMENT, deployment).json,
        "json: cannot unmarshal string into Go struct field ContainerPort.spec.template.spec.containers.ports.containerPort of type int32"
    );
}

#[test]
fn map_values_and_the_top_level_are_named_as_go_names_them() {
    let configmap = "io.k8s.api.core.v1.ConfigMap";
    assert_eq!(
        decode_error(configmap, json!({"data": {"a": 5}})).json,
        "json: cannot unmarshal number into Go struct field ConfigMap.data of type string"
    );
    assert_eq!(
        decode_error(configmap, json!({"data": [1, 2]})).json,
        "json: cannot unmarshal array into Go struct field ConfigMap.data of type map[string]string"
    );
    assert_eq!(
        decode_error(configmap, json!({"metadata": {"labels": {"a": true}}})).json,
        "json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.labels of type string"
    );
    assert_eq!(
        decode_error(configmap, json!([])).json,
        "json: cannot unmarshal array into Go value of type v1.ConfigMap"
    );
    assert_eq!(
        decode_error(configmap, json!({"binaryData": {"b": "not base64!"}})).json,
        "illegal base64 data at input byte 3"
    );
}

#[test]
fn custom_unmarshallers_answer_in_their_own_words() {
    let pod = "io.k8s.api.core.v1.Pod";
    let with_cpu = |cpu: Value| json!({"spec": {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"cpu": cpu}}}]}});
    assert_eq!(
        decode_error(pod, with_cpu(json!("lots"))).json,
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    );
    assert_eq!(
        decode_error(pod, json!({"metadata": {"creationTimestamp": "today"}})).json,
        r#"parsing time "today" as "2006-01-02T15:04:05Z07:00": cannot parse "today" as "2006""#
    );
    assert_eq!(
        decode_error(pod, json!({"metadata": {"creationTimestamp": 5}})).json,
        "json: cannot unmarshal number into Go value of type string"
    );
    let service = "io.k8s.api.core.v1.Service";
    assert_eq!(
        decode_error(
            service,
            json!({"spec": {"ports": [{"port": 80, "targetPort": 1.5}]}})
        )
        .json,
        "json: cannot unmarshal number 1.5 into Go value of type int32"
    );
    assert_eq!(
        decode_error(
            service,
            json!({"spec": {"ports": [{"port": 80, "targetPort": true}]}})
        )
        .json,
        "json: cannot unmarshal bool into Go value of type int32"
    );
    // A custom unmarshaller's error is returned at once, ahead of a type
    // error Go saved earlier.
    let error = decode_error(
        pod,
        json!({"spec": {"hostname": 1, "containers": [{"name": "c", "resources": {"limits": {"cpu": "x"}}}]}}),
    );
    assert!(error.json.starts_with("quantities must match"), "{error:?}");
}

#[test]
fn quantities_are_stored_canonical_and_nulls_as_go_leaves_them() {
    let mut pod = json!({
        "metadata": {"name": "p", "creationTimestamp": null, "labels": {"a": null}},
        "spec": {
            "nodeName": null,
            "containers": [{"name": "c", "image": "i", "args": ["x", null],
                "resources": {"limits": {"cpu": 0.5, "memory": "1024Mi"}}}]
        }
    });
    assert_eq!(decode_typed("io.k8s.api.core.v1.Pod", &mut pod), Ok(vec![]));
    assert_eq!(
        pod,
        json!({
            "metadata": {"name": "p", "labels": {"a": ""}},
            "spec": {
                "containers": [{"name": "c", "image": "i", "args": ["x", ""],
                    "resources": {"limits": {"cpu": "500m", "memory": "1Gi"}}}]
            }
        })
    );
}

#[test]
fn keys_come_out_in_go_struct_order() {
    let mut service = json!({
        "status": {},
        "spec": {"type": "ClusterIP", "ports": [{"targetPort": 80, "port": 80, "name": "http"}], "selector": {"z": "1", "a": "2"}},
        "metadata": {"namespace": "default", "labels": {"b": "1", "a": "2"}, "name": "web"},
        "apiVersion": "v1",
        "kind": "Service",
    });
    decode_typed("io.k8s.api.core.v1.Service", &mut service).expect("decodes");
    put_in_go_order("io.k8s.api.core.v1.Service", &mut service);
    assert_eq!(
        serde_json::to_string(&service).expect("encodes"),
        r#"{"kind":"Service","apiVersion":"v1","metadata":{"name":"web","namespace":"default","labels":{"a":"2","b":"1"}},"spec":{"ports":[{"name":"http","port":80,"targetPort":80}],"selector":{"a":"2","z":"1"},"type":"ClusterIP"},"status":{}}"#
    );
    // Declaration order, not tag order: PodSpec's initContainers (tag 20)
    // comes before containers (tag 2).
    let mut spec = json!({"containers": [], "initContainers": [], "volumes": []});
    put_in_go_order("io.k8s.api.core.v1.PodSpec", &mut spec);
    let keys: Vec<&String> = spec.as_object().expect("object").keys().collect();
    assert_eq!(keys, ["volumes", "initContainers", "containers"]);
}

/// Times are stored as Go encodes the parsed value: UTC, whole seconds for
/// metav1.Time, six fraction digits for MicroTime (kopf writes offsets and
/// microseconds into Event timestamps).
#[test]
fn times_are_stored_as_go_encodes_them() {
    let mut event = json!({
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"},
        "involvedObject": {},
        "firstTimestamp": "2026-11-26T06:29:10.776914+02:00",
        "lastTimestamp": "2026-11-26T06:29:10Z",
        "eventTime": "2026-11-26T06:31:13.729655+00:00"
    });
    decode_typed("io.k8s.api.core.v1.Event", &mut event).unwrap();
    assert_eq!(event["firstTimestamp"], "2026-11-26T04:29:10Z");
    assert_eq!(event["lastTimestamp"], "2026-11-26T06:29:10Z");
    assert_eq!(event["eventTime"], "2026-11-26T06:31:13.729655Z");
    let mut lease = json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"},
        "spec": {"acquireTime": "2026-11-26T06:29:10.000000+02:00"}});
    decode_typed("io.k8s.api.coordination.v1.Lease", &mut lease).unwrap();
    assert_eq!(lease["spec"]["acquireTime"], "2026-11-26T04:29:10.000000Z");
}

#[test]
fn bytes_are_stored_as_go_writes_them_back() {
    let secret = "io.k8s.api.core.v1.Secret";
    // Go skips line breaks and ignores nonzero trailing bits; it writes
    // the decoded bytes back in standard padded base64.
    let mut object =
        json!({"data": {"wrapped": "YWJj\r\nZA==", "bits": "YWJjZB==", "plain": "YWJjZA=="}});
    decode_typed(secret, &mut object).expect("decodes");
    assert_eq!(
        object["data"],
        json!({"wrapped": "YWJjZA==", "bits": "YWJjZA==", "plain": "YWJjZA=="})
    );
}
