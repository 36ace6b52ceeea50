//! ValidatingAdmissionPolicy through kubectl and REST: a policy with a
//! ConfigMap as its params, variables and a messageExpression; bindings
//! with Deny and Warn, a namespace selector, a missing param under
//! `parameterNotFoundAction: Deny`; a paramKind nothing serves under both
//! failure policies; the printed tables; upstream's validation messages.

use crate::common;
use std::time::Duration;

use crate::common::TestServer;
use serde_json::{json, Value};

const REPLICA_LIMIT: &str = r#"
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: replica-limit
spec:
  paramKind:
    apiVersion: v1
    kind: ConfigMap
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["deployments"]
  matchConditions:
  - name: not-exempt
    expression: "!has(object.metadata.labels) || !('exempt' in object.metadata.labels)"
  variables:
  - name: replicas
    expression: "object.spec.replicas"
  - name: limit
    expression: "int(params.data.maxReplicas)"
  validations:
  - expression: "variables.replicas <= variables.limit"
    messageExpression: "'at most ' + string(variables.limit) + ' replicas, asked for ' + string(variables.replicas)"
    reason: Forbidden
  - expression: "object.metadata.name.startsWith('ok-') || object.metadata.name.size() < 20"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: replica-limit-prod
spec:
  policyName: replica-limit
  validationActions: ["Deny"]
  paramRef:
    name: limits
    namespace: default
    parameterNotFoundAction: Deny
  matchResources:
    namespaceSelector:
      matchLabels:
        env: prod
"#;

const NEED_OWNER: &str = r#"
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: need-owner
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["configmaps"]
  validations:
  - expression: "has(object.metadata.labels) && 'owner' in object.metadata.labels"
    message: "every config map needs an owner label"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: need-owner-warn
spec:
  policyName: need-owner
  validationActions: ["Warn"]
  matchResources:
    namespaceSelector:
      matchLabels:
        env: prod
"#;

fn deployment(name: &str, replicas: i64, labels: Value) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                         "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
        }
    })
}

#[test]
fn policies_with_params_deny_warn_and_answer_as_upstream() {
    let server = TestServer::start();
    server.kubectl_line("create namespace prod");
    server.kubectl_line("label namespace prod env=prod");
    server.kubectl_line("create namespace dev");
    server.kubectl_line("create configmap limits -n default --from-literal=maxReplicas=3");
    server.apply(REPLICA_LIMIT);
    server.apply(NEED_OWNER);

    // Policies are read from their watch caches: wait until one counts.
    let prod = "/apis/apps/v1/namespaces/prod/deployments";
    let mut probes = 0;
    let denied = common::wait_until(Duration::from_secs(5), "the policy in effect", || {
        probes += 1;
        let answer = server.post_json(
            &format!("{prod}?dryRun=All"),
            &deployment(&format!("probe{probes}"), 5, json!({})),
        );
        (answer.status == 403).then_some(answer)
    });

    // Upstream's Status: a Forbidden whose reason and code are the
    // validation's, and the message as the one cause.
    let status = denied.assert_status(403, "Forbidden");
    let message = format!(
        "deployments.apps \"probe{probes}\" is forbidden: ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit-prod' denied request: at most 3 replicas, asked for 5"
    );
    assert_eq!(status["message"], message.as_str());
    assert_eq!(
        status["details"],
        json!({"name": format!("probe{probes}"), "group": "apps", "kind": "deployments",
               "causes": [{"message": message.split_once("is forbidden: ").map(|(_, m)| m).unwrap_or_default()}]})
    );

    // kubectl sees it; nothing is stored.
    let err = server.kubectl_err(&[
        "create",
        "deployment",
        "web",
        "-n",
        "prod",
        "--image=nginx",
        "--replicas=5",
    ]);
    assert!(
        err.contains("ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit-prod' denied request: at most 3 replicas, asked for 5"),
        "{err}"
    );
    assert_eq!(
        server.get(&format!("{prod}/web")).status,
        404,
        "a denied create stores nothing"
    );

    // Within the limit, outside the binding's namespaces, or excluded by
    // the policy's matchConditions: allowed.
    server.kubectl_line("create deployment web -n prod --image=nginx --replicas=2");
    server.kubectl_line("create deployment web -n dev --image=nginx --replicas=9");
    let exempt = server.post_json(prod, &deployment("big", 9, json!({"exempt": "yes"})));
    assert_eq!(exempt.status, 201, "{exempt:?}");

    // An update is validated too (not the scale subresource, which the
    // rule does not name); a validation without a message says
    // which expression failed, with reason Invalid (422).
    let to_four = [
        "patch",
        "deployment",
        "web",
        "-n",
        "prod",
        "-p",
        r#"{"spec":{"replicas":4}}"#,
    ];
    let err = server.kubectl_err(&to_four);
    assert!(err.contains("at most 3 replicas, asked for 4"), "{err}");
    let long = server.post_json(
        prod,
        &deployment("a-name-far-longer-than-twenty", 1, json!({})),
    );
    let status = long.assert_status(422, "Invalid");
    assert!(
        status["message"].as_str().unwrap_or_default().ends_with(
            "denied request: failed expression: object.metadata.name.startsWith('ok-') || object.metadata.name.size() < 20"
        ),
        "{status}"
    );

    // The param changes: the policy follows.
    server.kubectl_line("patch configmap limits -n default -p {\"data\":{\"maxReplicas\":\"10\"}}");
    common::wait_until(Duration::from_secs(5), "the new limit", || {
        server.kubectl(&to_four).status.success().then_some(())
    });

    // The param is gone: parameterNotFoundAction Deny refuses.
    server.kubectl_line("delete configmap limits -n default");
    let gone = common::wait_until(Duration::from_secs(5), "the param gone", || {
        let answer = server.post_json(
            &format!("{prod}?dryRun=All"),
            &deployment("small", 1, json!({})),
        );
        (answer.status != 201).then_some(answer)
    });
    let status = gone.assert_status(422, "Invalid");
    assert_eq!(
        status["message"],
        "deployments.apps \"small\" is forbidden: ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit-prod' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"
    );

    // Warn: the request goes through with upstream's warning.
    let out = server.kubectl(&["create", "configmap", "unowned", "-n", "prod"]);
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Warning: Validation failed for ValidatingAdmissionPolicy 'need-owner' with binding 'need-owner-warn': every config map needs an owner label"),
        "{stderr}"
    );
    let out = server.kubectl(&["create", "configmap", "unowned", "-n", "dev"]);
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("Warning"),
        "{out:?}"
    );

    // kubectl get prints upstream's columns.
    let policies = server.kubectl_ok(&["get", "validatingadmissionpolicies"]);
    let rows = common::table_rows(&policies);
    assert_eq!(rows[0], ["NAME", "VALIDATIONS", "PARAMKIND", "AGE"]);
    assert_eq!(rows[1][..3], ["need-owner", "1", "<unset>"]);
    assert_eq!(rows[2][..3], ["replica-limit", "2", "v1/ConfigMap"]);
    let bindings = server.kubectl_ok(&["get", "validatingadmissionpolicybindings"]);
    let rows = common::table_rows(&bindings);
    assert_eq!(rows[0], ["NAME", "POLICYNAME", "PARAMREF", "AGE"]);
    assert_eq!(rows[1][..3], ["need-owner-warn", "need-owner", "<unset>"]);
    assert_eq!(
        rows[2][..3],
        ["replica-limit-prod", "replica-limit", "default/limits"]
    );

    // Defaults and generation as upstream's.
    let policy = server.kubectl_json(&["get", "validatingadmissionpolicy", "replica-limit"]);
    assert_eq!(policy["spec"]["failurePolicy"], "Fail");
    assert_eq!(
        policy["spec"]["matchConstraints"]["matchPolicy"],
        "Equivalent"
    );
    assert_eq!(
        policy["spec"]["matchConstraints"]["namespaceSelector"],
        json!({})
    );
    assert_eq!(
        policy["spec"]["matchConstraints"]["resourceRules"][0]["scope"],
        "*"
    );
    assert_eq!(policy["metadata"]["generation"], 1);
}

#[test]
fn misconfigured_policies_follow_their_failure_policy() {
    let server = TestServer::start();
    let policy = |name: &str, failure_policy: &str| {
        format!(
            r#"
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: {name}
spec:
  failurePolicy: {failure_policy}
  paramKind:
    apiVersion: example.com/v1
    kind: Nope
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["secrets"]
  validations:
  - expression: "true"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: {name}
spec:
  policyName: {name}
  validationActions: ["Deny"]
  paramRef:
    name: anything
    parameterNotFoundAction: Allow
"#
        )
    };
    server.apply(&policy("open", "Ignore"));
    server.apply(&policy("closed", "Fail"));
    let mut probes = 0;
    let refused = common::wait_until(Duration::from_secs(5), "the policies in effect", || {
        probes += 1;
        let answer = server.post_json(
            "/api/v1/namespaces/default/secrets",
            &json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": format!("s{probes}")}}),
        );
        (answer.status != 201).then_some(answer)
    });
    let status = refused.assert_status(422, "Invalid");
    assert_eq!(
        status["message"],
        format!("secrets \"s{probes}\" is forbidden: ValidatingAdmissionPolicy 'closed' denied request: failed to configure policy: failed to find resource referenced by paramKind: 'example.com/v1, Kind=Nope'")
    );
    // Once the failing-closed one is gone, the other lets requests through.
    server.kubectl_line("delete validatingadmissionpolicy closed");
    common::wait_until(Duration::from_secs(5), "the open policy alone", || {
        let answer = server.post_json(
            "/api/v1/namespaces/default/secrets",
            &json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"generateName": "s-"}}),
        );
        (answer.status == 201).then_some(())
    });
}

#[test]
fn invalid_policies_and_bindings_get_upstreams_messages() {
    let server = TestServer::start();
    let out = server.kubectl_stdin(
        &["apply", "-f", "-"],
        r#"
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: broken
spec:
  failurePolicy: Sometimes
  matchConstraints:
    resourceRules: []
  validations:
  - expression: "object.spec.replicas <"
    reason: Unauthorized
"#,
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    for expected in [
        r#"The ValidatingAdmissionPolicy "broken" is invalid:"#,
        r#"spec.failurePolicy: Unsupported value: "Sometimes": supported values: "Fail", "Ignore""#,
        "spec.matchConstraints.resourceRules: Required value",
        r#"spec.validations[0].expression: Invalid value: "object.spec.replicas <": compilation failed: "#,
        r#"spec.validations[0].reason: Unsupported value: "Unauthorized": supported values: "Forbidden", "Invalid", "RequestEntityTooLarge""#,
    ] {
        assert!(stderr.contains(expected), "{expected}\n---\n{stderr}");
    }
    let out = server.kubectl_stdin(
        &["apply", "-f", "-"],
        r#"
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: broken
spec:
  policyName: broken
  validationActions: ["Deny", "Warn"]
  paramRef:
    name: x
"#,
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    for expected in [
        "spec.paramRef.parameterNotFoundAction: Required value",
        r#"spec.validationActions: Invalid value: []admissionregistration.ValidationAction{"Deny", "Warn"}: must not contain both Deny and Warn"#,
    ] {
        assert!(stderr.contains(expected), "{expected}\n---\n{stderr}");
    }
}

#[test]
fn policies_are_type_checked_against_the_kinds_they_match() {
    let server = TestServer::start();
    server.apply(
        r#"{"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": "typo"},
            "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
                       "operations": ["CREATE"], "resources": ["deployments"]}]},
                     "validations": [{"expression": "object.spec.replicaz > 1"},
                                     {"expression": "object.spec.replicas > 1", "messageExpression": "'only ' + string(object.spec.replicas)"}]}}"#,
    );
    let status = common::wait_until(Duration::from_secs(10), "the policy type-checked", || {
        let policy = server
            .get_json("/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/typo");
        (policy["status"]["observedGeneration"] == 1).then(|| policy["status"].clone())
    });
    assert_eq!(
        status["typeChecking"],
        json!({"expressionWarnings": [{
            "fieldRef": "spec.validations[0].expression",
            "warning": "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicaz'\n | object.spec.replicaz > 1\n | ...........^\n"
        }]})
    );
    // A new generation is checked again.
    server.kubectl_line(
        "patch validatingadmissionpolicy typo --type=json -p [{\"op\":\"remove\",\"path\":\"/spec/validations/0\"}]",
    );
    let status = common::wait_until(
        Duration::from_secs(10),
        "the new generation checked",
        || {
            let policy = server
                .get_json("/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/typo");
            (policy["status"]["observedGeneration"] == 2).then(|| policy["status"].clone())
        },
    );
    assert_eq!(status["typeChecking"], json!({}));
}
