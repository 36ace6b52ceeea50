//! End-to-end RBAC: kubectl as other users (`--as`, impersonation), what
//! Roles and bindings grant them, upstream's escalation checks, and
//! bindings written through one replica honoured by another.

use crate::common;
use crate::common::TestServer;

/// `kubectl` arguments acting as `user` (and `groups`), through
/// impersonation; `line` is split at whitespace.
fn as_user(user: &str, groups: &[&str], line: &str) -> Vec<String> {
    let mut all: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    all.push(format!("--as={user}"));
    all.extend(groups.iter().map(|g| format!("--as-group={g}")));
    all
}

fn run_as(server: &TestServer, user: &str, groups: &[&str], line: &str) -> std::process::Output {
    let all = as_user(user, groups, line);
    let refs: Vec<&str> = all.iter().map(String::as_str).collect();
    server.kubectl(&refs)
}

fn ok_as(server: &TestServer, user: &str, groups: &[&str], line: &str) -> String {
    let out = run_as(server, user, groups, line);
    assert!(
        out.status.success(),
        "kubectl {line} as {user}: {}",
        common::text(&out.stderr)
    );
    common::text(&out.stdout)
}

fn err_as(server: &TestServer, user: &str, groups: &[&str], line: &str) -> String {
    let out = run_as(server, user, groups, line);
    assert!(!out.status.success(), "kubectl {line} as {user} succeeded");
    common::text(&out.stderr)
}

#[test]
fn roles_grant_what_they_bind_and_nothing_more() {
    let server = TestServer::start();
    server.kubectl_line("create configmap settings --from-literal=a=b");
    server.kubectl_line("create namespace other");

    // Nothing bound: upstream's 403, word for word.
    let denied = err_as(&server, "alice", &[], "get configmaps");
    assert!(
        denied.contains(r#"Error from server (Forbidden): configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "default""#),
        "{denied}"
    );
    assert_eq!(
        run_as(&server, "alice", &[], "auth can-i list configmaps")
            .stdout
            .trim_ascii(),
        b"no"
    );

    // A Role bound in one namespace: readable there at once, nowhere else,
    // and only for the verbs it lists.
    server.kubectl_line("create role cm-reader --verb=get,list,watch --resource=configmaps");
    server.kubectl_line("create rolebinding alice-reads --role=cm-reader --user=alice");
    let listed = ok_as(&server, "alice", &[], "get configmaps -o name");
    assert!(listed.contains("configmap/settings"), "{listed}");
    let elsewhere = err_as(&server, "alice", &[], "get configmaps -n other");
    assert!(
        elsewhere.contains(r#"in the namespace "other""#),
        "{elsewhere}"
    );
    let write = err_as(&server, "alice", &[], "create configmap mine");
    assert!(
        write.contains(r#"User "alice" cannot create resource "configmaps""#),
        "{write}"
    );
    let can = ok_as(&server, "alice", &[], "auth can-i --list");
    assert!(
        can.lines()
            .any(|l| l.starts_with("configmaps ") && l.contains("[get list watch]")),
        "{can}"
    );
    // A review names the binding that allows.
    let review = r#"{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"resourceAttributes":{"namespace":"default","verb":"list","resource":"configmaps"}}}"#;
    let out = server.kubectl_stdin(
        &[
            "create",
            "-f",
            "-",
            "-o",
            "json",
            "--validate=false",
            "--as=alice",
        ],
        review,
    );
    assert!(out.status.success(), "{}", common::text(&out.stderr));
    let answered: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("a review as JSON");
    assert_eq!(
        answered["status"],
        serde_json::json!({"allowed": true, "reason": "RBAC: allowed by RoleBinding \"alice-reads/default\" of Role \"cm-reader\" to User \"alice\""})
    );

    // A ClusterRole bound to a group, everywhere; a subresource needs its
    // own grant.
    server.kubectl_line("create clusterrole deploy-reader --verb=get,list --resource=deployments");
    server.kubectl_line(
        "create clusterrolebinding devs-read-deployments --clusterrole=deploy-reader --group=devs",
    );
    server.kubectl_line("create deployment web --image=nginx -n other");
    ok_as(&server, "bob", &["devs"], "get deployments -A");
    let scale = err_as(
        &server,
        "bob",
        &["devs"],
        "scale deployment web -n other --replicas=2",
    );
    assert!(
        scale.contains(r#"cannot patch resource "deployments/scale" in API group "apps""#),
        "{scale}"
    );
    err_as(&server, "bob", &[], "get deployments -A");

    // A service account's binding, with the namespace left to the binding.
    server.kubectl_line("create serviceaccount robot");
    server.kubectl_line(
        "create rolebinding robot-reads --role=cm-reader --serviceaccount=default:robot",
    );
    ok_as(
        &server,
        "system:serviceaccount:default:robot",
        &[],
        "get configmap settings",
    );
    let me = server.kubectl_json(&[
        "auth",
        "whoami",
        "-o",
        "json",
        "--as=system:serviceaccount:default:robot",
    ]);
    assert_eq!(
        me["status"]["userInfo"]["groups"],
        serde_json::json!([
            "system:serviceaccounts",
            "system:serviceaccounts:default",
            "system:authenticated"
        ])
    );

    // Reviews about another user: cluster-wide, and local to a namespace
    // (where they must ask about that namespace).
    let sar = serde_json::json!({
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {"user": "alice", "resourceAttributes": {"verb": "list", "resource": "configmaps", "namespace": "default"}},
    });
    let resp = server.post_json("/apis/authorization.k8s.io/v1/subjectaccessreviews", &sar);
    assert_eq!(resp.status, 201, "{resp:#?}");
    assert_eq!(resp.json()["status"]["allowed"], true);
    let local = serde_json::json!({
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "LocalSubjectAccessReview",
        "spec": {"user": "alice", "resourceAttributes": {"verb": "list", "resource": "configmaps", "namespace": "other"}},
    });
    let resp = server.post_json(
        "/apis/authorization.k8s.io/v1/namespaces/other/localsubjectaccessreviews",
        &local,
    );
    assert_eq!(resp.status, 201, "{resp:#?}");
    assert_eq!(resp.json()["status"]["allowed"], false);
    assert_eq!(resp.json()["metadata"]["namespace"], "other");
    let resp = server.post_json(
        "/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews",
        &local,
    );
    resp.assert_status(422, "Invalid");

    // Deleting the binding takes the access away.
    server.kubectl_line("delete rolebinding alice-reads");
    err_as(&server, "alice", &[], "get configmaps");
}

#[test]
fn the_default_roles_view_edit_and_admin_aggregate_as_upstreams() {
    let server = TestServer::start();
    server.kubectl_line("create namespace team");
    server.kubectl_line("create secret generic token -n team");
    server.kubectl_line("create rolebinding erin-views --clusterrole=view --user=erin -n team");
    server.kubectl_line("create rolebinding frank-edits --clusterrole=edit --user=frank -n team");
    // view reads workloads but not secrets, and writes nothing.
    ok_as(
        &server,
        "erin",
        &[],
        "get pods,deployments,configmaps -n team",
    );
    let secret = err_as(&server, "erin", &[], "get secrets -n team");
    assert!(
        secret.contains(r#"cannot list resource "secrets""#),
        "{secret}"
    );
    err_as(&server, "erin", &[], "create configmap c -n team");
    // edit writes and reads secrets, but cannot grant anything.
    ok_as(&server, "frank", &[], "create configmap c -n team");
    ok_as(&server, "frank", &[], "get secret token -n team");
    let grant = err_as(
        &server,
        "frank",
        &[],
        "create rolebinding g --clusterrole=view --user=x -n team",
    );
    assert!(
        grant.contains(r#"cannot create resource "rolebindings""#),
        "{grant}"
    );

    // A role labelled for aggregation joins view, and through edit's label
    // edit and admin as well.
    server.kubectl_line("create clusterrole widgets --verb=get --resource=nodes");
    server
        .kubectl_line("label clusterrole widgets rbac.authorization.k8s.io/aggregate-to-view=true");
    for role in ["view", "edit", "admin"] {
        common::wait_until(
            std::time::Duration::from_secs(10),
            &format!("{role} to aggregate the nodes rule"),
            || {
                let rules = server.kubectl_json(&["get", "clusterrole", role, "-o", "json"]);
                rules["rules"]
                    .as_array()
                    .is_some_and(|rules| {
                        rules
                            .iter()
                            .any(|r| r["resources"] == serde_json::json!(["nodes"]))
                    })
                    .then_some(())
            },
        );
    }
}

#[test]
fn granting_needs_the_permissions_granted_or_escalate_and_bind() {
    let server = TestServer::start();
    // alice may manage Roles and RoleBindings in default, and read ConfigMaps.
    server.apply(
        r#"
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: rbac-manager, namespace: default}
rules:
- apiGroups: [rbac.authorization.k8s.io]
  resources: [roles, rolebindings]
  verbs: [create, update, patch, get, list]
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, list]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: alice-manages-rbac, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: rbac-manager}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: alice}
"#,
    );
    // What she holds she may grant, and bind.
    ok_as(
        &server,
        "alice",
        &[],
        "create role readers --verb=get --resource=configmaps",
    );
    ok_as(
        &server,
        "alice",
        &[],
        "create rolebinding carol-reads --role=readers --user=carol",
    );
    // What she does not hold she may not: upstream's message, listing the
    // missing rules compacted.
    let role = err_as(
        &server,
        "alice",
        &[],
        "create role deleters --verb=get,delete --resource=secrets,configmaps",
    );
    let expected = "roles.rbac.authorization.k8s.io \"deleters\" is forbidden: user \"alice\" (groups=[\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"configmaps\"], Verbs:[\"delete\"]}\n{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\" \"delete\"]}";
    assert!(role.contains(expected), "{role}");
    let bind = err_as(
        &server,
        "alice",
        &[],
        "create rolebinding alice-is-admin --clusterrole=cluster-admin --user=alice",
    );
    assert!(
        bind.contains("rolebindings.rbac.authorization.k8s.io \"alice-is-admin\" is forbidden: user \"alice\""),
        "{bind}"
    );
    // Nor may she widen a role she may update.
    let widened = err_as(
        &server,
        "alice",
        &[],
        r#"patch role readers --type=json -p=[{"op":"add","path":"/rules/0/verbs/-","value":"delete"}]"#,
    );
    assert!(
        widened.contains("is attempting to grant RBAC permissions not currently held"),
        "{widened}"
    );
    let readers = server.kubectl_json(&["get", "role", "readers", "-o", "json"]);
    assert_eq!(readers["rules"][0]["verbs"], serde_json::json!(["get"]));
    // A label changes no rules and needs no check.
    ok_as(&server, "alice", &[], "label role readers team=a");
    // nothing of the refused writes was stored
    assert!(!server
        .kubectl_ok(&["get", "roles,rolebindings", "-o", "name"])
        .contains("deleters"));
    assert!(!server
        .kubectl_ok(&["get", "rolebindings", "-o", "name"])
        .contains("alice-is-admin"));

    // `escalate` on roles and `bind` on one ClusterRole lift the checks.
    server.kubectl_line(
        "create role escalator --verb=escalate --resource=roles.rbac.authorization.k8s.io",
    );
    server.kubectl_line("create rolebinding alice-escalates --role=escalator --user=alice");
    ok_as(
        &server,
        "alice",
        &[],
        "create role deleters --verb=delete --resource=secrets",
    );
    server.kubectl_line("create clusterrole view-binder --verb=bind --resource=clusterroles.rbac.authorization.k8s.io --resource-name=deploy-viewer");
    server.kubectl_line("create clusterrole deploy-viewer --verb=get --resource=deployments.apps");
    server.kubectl_line(
        "create rolebinding alice-binds-viewer --clusterrole=view-binder --user=alice",
    );
    ok_as(
        &server,
        "alice",
        &[],
        "create rolebinding dave-views --clusterrole=deploy-viewer --user=dave",
    );
}

#[test]
fn binding_a_pod_is_authorized_as_the_pods_binding_subresource() {
    let server = TestServer::start();
    server.kubectl_line("run web --image=nginx");
    let path = "/api/v1/namespaces/default/pods/web/binding";
    let binding = br#"{"apiVersion":"v1","kind":"Binding","metadata":{"name":"web"},"target":{"kind":"Node","name":"node-1"}}"#;
    let as_scheduler = [
        ("Content-Type", "application/json"),
        ("Impersonate-User", "scheduler"),
    ];
    let denied = server.curl("POST", path, &as_scheduler, Some(binding));
    let status = denied.assert_status(403, "Forbidden");
    assert_eq!(
        status["message"],
        r#"pods "web" is forbidden: User "scheduler" cannot create resource "pods/binding" in API group "" in the namespace "default""#
    );
    server.kubectl_line("create role binder --verb=create --resource=pods/binding");
    server.kubectl_line("create rolebinding scheduler-binds --role=binder --user=scheduler");
    let bound = server.curl("POST", path, &as_scheduler, Some(binding));
    assert_eq!(bound.status, 201, "{bound:#?}");
    let pod = server.kubectl_json(&["get", "pod", "web", "-o", "json"]);
    assert_eq!(pod["spec"]["nodeName"], "node-1");
}

#[test]
fn system_components_get_upstreams_roles() {
    let server = TestServer::start();
    let can = |user: &str, line: &str| {
        let out = run_as(&server, user, &[], &format!("auth can-i {line}"));
        common::text(&out.stdout).trim().to_string()
    };
    // kube-scheduler binds pods; kube-proxy watches services and nodes;
    // kube-controller-manager lists everything and mints account tokens.
    assert_eq!(
        can("system:kube-scheduler", "create pods --subresource=binding"),
        "yes"
    );
    assert_eq!(can("system:kube-scheduler", "delete secrets"), "no");
    assert_eq!(
        can("system:kube-proxy", "watch endpointslices.discovery.k8s.io"),
        "yes"
    );
    assert_eq!(can("system:kube-proxy", "list services"), "yes");
    assert_eq!(can("system:kube-proxy", "create services"), "no");
    assert_eq!(
        can("system:kube-controller-manager", "list deployments.apps -A"),
        "yes"
    );
    assert_eq!(
        can(
            "system:kube-controller-manager",
            "create serviceaccounts/token -n kube-system"
        ),
        "yes"
    );
    assert_eq!(can("system:kube-controller-manager", "delete pods"), "no");
    let roles = server.kubectl_line("get clusterroles -o name");
    for role in ["system:node", "system:auth-delegator", "system:kube-dns"] {
        assert!(
            roles.contains(&format!("clusterrole.rbac.authorization.k8s.io/{role}")),
            "{roles}"
        );
    }
}

#[test]
fn impersonation_needs_the_impersonate_verb() {
    let server = TestServer::start();
    let json = [("Impersonate-User", "admin")];
    let denied = server
        .curl_anonymous("GET", "/api/v1/namespaces", &json, None)
        .assert_status(403, "Forbidden");
    assert_eq!(
        denied["message"],
        r#"users "admin" is forbidden: User "system:anonymous" cannot impersonate resource "users" in API group "" at the cluster scope"#
    );
    // Groups alone name nobody to act as.
    let resp = server.curl(
        "GET",
        "/api/v1/namespaces",
        &[("Impersonate-Group", "devs")],
        None,
    );
    let status = resp.assert_status(400, "BadRequest");
    assert_eq!(
        status["message"],
        "requested [{Group  devs    }] without impersonating a user"
    );
    // With the verb granted, a user may act as the one it names, and only as that.
    server.kubectl_line("create clusterrole impersonate-alice --verb=impersonate --resource=users --resource-name=alice");
    server.kubectl_line(
        "create clusterrolebinding bob-is-alice --clusterrole=impersonate-alice --user=bob",
    );
    let can = |target: &str| {
        let out = server.kubectl(&["auth", "can-i", "impersonate", target, "--as=bob"]);
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    assert_eq!(can("users/alice"), "yes");
    assert_eq!(can("users/carol"), "no");

    // gRPC calls name whom they act as in their metadata, as REST's headers.
    let list = r#"{"resource":{"version":"v1","resource":"secrets"},"namespace":"default"}"#;
    let out = server.grpcurl(
        &["-H", "impersonate-user: alice", "-d", list],
        &["capstan.v1.Resources/List"],
    );
    let stderr = common::text(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("Code: PermissionDenied")
            && stderr.contains(
                r#"Message: secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" in the namespace "default""#
            ),
        "{stderr}"
    );
    server.grpcurl_ok(&["-d", list], &["capstan.v1.Resources/List"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_binding_written_through_one_replica_authorizes_on_another() {
    let (_etcd, a, b) = common::two_replicas_on_etcd().await;
    err_as(&b, "alice", &[], "get secrets");
    a.kubectl_line("create role secret-reader --verb=list --resource=secrets");
    a.kubectl_line("create rolebinding alice-reads-secrets --role=secret-reader --user=alice");
    // At once: a denial is decided again once b's caches reach the store.
    ok_as(&b, "alice", &[], "get secrets");
    a.kubectl_line("delete rolebinding alice-reads-secrets");
    // A removal shows once b's cache has it; upstream's informers lag too.
    common::wait_until(
        std::time::Duration::from_secs(10),
        "b to see the binding gone",
        || (!run_as(&b, "alice", &[], "get secrets").status.success()).then_some(()),
    );
}
