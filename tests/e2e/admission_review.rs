//! `capstan.v1.Admission/Review` through grpcurl: what the admission chain
//! would do with a write, without storing it — the mutated object, the
//! warnings, or the refusal with what refused it (a plugin, a policy), as
//! the caller or a user it may impersonate.

use crate::common;
use std::time::Duration;

use crate::common::TestServer;
use serde_json::{json, Value};

const REVIEW: &str = "capstan.v1.Admission/Review";

fn pods() -> Value {
    json!({"group": "", "version": "v1", "resource": "pods"})
}

fn pod(name: &str, spec: Value) -> Value {
    let mut spec = spec;
    spec["containers"] = json!([{"name": "c", "image": "nginx"}]);
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec})
}

#[test]
fn review_answers_what_admission_would_do_and_stores_nothing() {
    let server = TestServer::start();
    let services = server.grpcurl_ok(&[], &["list"]);
    assert!(
        services.lines().any(|l| l == "capstan.v1.Admission"),
        "{services}"
    );

    // Allowed: the object as the plugins made it; nothing stored.
    let answer = server.grpc_ok(
        REVIEW,
        &json!({"resource": pods(), "namespace": "default", "operation": "CREATE",
                "object": pod("web", json!({}))}),
    );
    assert_eq!(answer["allowed"], true, "{answer}");
    let body = &answer["object"]["body"];
    assert_eq!(body["spec"]["serviceAccountName"], "default");
    assert!(body["spec"]["volumes"][0]["name"]
        .as_str()
        .is_some_and(|n| n.starts_with("kube-api-access-")));
    assert_eq!(
        server.get("/api/v1/namespaces/default/pods/web").status,
        404
    );

    // Refused by a plugin: the Status and the plugin's name.
    let answer = server.grpc_ok(
        REVIEW,
        &json!({"resource": pods(), "namespace": "default", "operation": "CREATE",
                "object": pod("classy", json!({"priorityClassName": "nope"}))}),
    );
    assert!(
        answer.get("allowed").is_none(),
        "proto3 leaves false out: {answer}"
    );
    assert_eq!(answer["deniedBy"], "Priority");
    assert_eq!(answer["status"]["code"].as_f64(), Some(403.0));
    assert_eq!(
        answer["status"]["message"],
        "pods \"classy\" is forbidden: no PriorityClass with name nope was found"
    );

    // Refused by a policy, named with its binding.
    server.apply(
        r#"{"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": "no-latest"},
            "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                       "operations": ["CREATE"], "resources": ["pods"]}]},
                     "validations": [{"expression": "object.spec.containers.all(c, c.image.contains(':'))",
                                      "message": "images need a tag"}]}}"#,
    );
    server.apply(
        r#"{"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": "no-latest-everywhere"},
            "spec": {"policyName": "no-latest", "validationActions": ["Deny"]}}"#,
    );
    let answer = common::wait_until(Duration::from_secs(5), "the policy in effect", || {
        let answer = server.grpc_ok(
            REVIEW,
            &json!({"resource": pods(), "namespace": "default", "operation": "CREATE",
                    "object": pod("untagged", json!({}))}),
        );
        answer.get("allowed").is_none().then_some(answer)
    });
    assert_eq!(
        answer["deniedBy"],
        "ValidatingAdmissionPolicy 'no-latest' with binding 'no-latest-everywhere'"
    );
    assert_eq!(answer["status"]["reason"], "Invalid");

    // Not admission's refusal: invalid objects answer their 422, with no
    // denier.
    let answer = server.grpc_ok(
        REVIEW,
        &json!({"resource": {"group": "", "version": "v1", "resource": "configmaps"},
                "namespace": "default", "operation": "CREATE",
                "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Bad_Name"}}}),
    );
    assert!(answer.get("allowed").is_none(), "{answer}");
    assert_eq!(answer["status"]["code"].as_f64(), Some(422.0));
    assert!(answer.get("deniedBy").is_none(), "{answer}");

    // An update by patch, as a user the admin may impersonate: that user
    // has no right to it.
    server.kubectl_line("create configmap settings --from-literal=a=b");
    let answer = server.grpc_ok(
        REVIEW,
        &json!({"resource": {"group": "", "version": "v1", "resource": "configmaps"},
                "namespace": "default", "operation": "UPDATE", "name": "settings",
                "patchType": "MERGE_PATCH", "patch": {"data": {"a": "c"}},
                "user": {"username": "mallory"}}),
    );
    assert!(
        answer.get("allowed").is_none(),
        "proto3 leaves false out: {answer}"
    );
    assert_eq!(answer["status"]["code"].as_f64(), Some(403.0));
    let answer = server.grpc_ok(
        REVIEW,
        &json!({"resource": {"group": "", "version": "v1", "resource": "configmaps"},
                "namespace": "default", "operation": "UPDATE", "name": "settings",
                "patchType": "MERGE_PATCH", "patch": {"data": {"a": "c"}}}),
    );
    assert_eq!(answer["allowed"], true, "{answer}");
    assert_eq!(answer["object"]["body"]["data"]["a"], "c");
    let stored = server.get_json("/api/v1/namespaces/default/configmaps/settings");
    assert_eq!(stored["data"]["a"], "b", "a review stores nothing");
}
