use super::*;

fn rule(v: Value) -> PolicyRule {
    PolicyRule::from_json(&v)
}

fn attrs<'a>(
    verb: &'a str,
    group: &'a str,
    resource: &'a str,
    subresource: Option<&'a str>,
    name: Option<&'a str>,
) -> ResourceAttributes<'a> {
    ResourceAttributes {
        verb,
        group,
        resource,
        subresource,
        namespace: Some("default"),
        name,
    }
}

#[test]
fn rules_match_as_upstreams_rule_allows() {
    let pods = rule(json!({"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}));
    let get = attrs("get", "", "pods", None, Some("p"));
    assert!(pods.allows(&AccessRequest::Resource(&get)));
    let delete = attrs("delete", "", "pods", None, Some("p"));
    assert!(!pods.allows(&AccessRequest::Resource(&delete)));
    // A subresource needs its own grant, or */<subresource>.
    let log = attrs("get", "", "pods", Some("log"), Some("p"));
    assert!(!pods.allows(&AccessRequest::Resource(&log)));
    let any_log = rule(json!({"verbs": ["get"], "apiGroups": [""], "resources": ["*/log"]}));
    assert!(any_log.allows(&AccessRequest::Resource(&log)));
    let exact = rule(json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods/log"]}));
    assert!(exact.allows(&AccessRequest::Resource(&log)));
    // Names restrict; a list has no name to match.
    let named = rule(
        json!({"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["p"]}),
    );
    assert!(named.allows(&AccessRequest::Resource(&get)));
    let list = attrs("list", "", "pods", None, None);
    assert!(!named.allows(&AccessRequest::Resource(&list)));
    let other_group = attrs("get", "apps", "pods", None, Some("p"));
    assert!(!pods.allows(&AccessRequest::Resource(&other_group)));
    let urls = rule(json!({"verbs": ["get"], "nonResourceURLs": ["/healthz", "/apis/*"]}));
    let path = |p| AccessRequest::Path {
        verb: "get",
        path: p,
    };
    assert!(urls.allows(&path("/healthz")));
    assert!(!urls.allows(&path("/healthz/etcd")));
    assert!(urls.allows(&path("/apis/apps/v1")));
    assert!(!urls.allows(&AccessRequest::Path {
        verb: "post",
        path: "/healthz"
    }));
}

#[test]
fn coverage_and_the_escalation_message_follow_upstream() {
    let owner = [
        rule(
            json!({"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods", "*/status"]}),
        ),
        rule(json!({"verbs": ["*"], "nonResourceURLs": ["/logs/*"]})),
    ];
    let covered = |wanted: Value| {
        rule(wanted)
            .breakdown()
            .iter()
            .all(|w| owner.iter().any(|o| o.covers(w)))
    };
    assert!(covered(
        json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]})
    ));
    assert!(covered(
        json!({"verbs": ["list"], "apiGroups": [""], "resources": ["deployments/status"]})
    ));
    assert!(covered(
        json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"]})
    ));
    assert!(covered(
        json!({"verbs": ["post"], "nonResourceURLs": ["/logs/x"]})
    ));
    assert!(!covered(
        json!({"verbs": ["*"], "apiGroups": [""], "resources": ["pods"]})
    ));
    assert!(!covered(
        json!({"verbs": ["get"], "apiGroups": ["*"], "resources": ["pods"]})
    ));
    assert!(!covered(
        json!({"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"]})
    ));

    let missing = compact_rules(
        rule(json!({"verbs": ["get", "delete"], "apiGroups": [""], "resources": ["secrets"]}))
            .breakdown(),
    );
    let described: Vec<String> = missing.iter().map(PolicyRule::compact_string).collect();
    assert_eq!(
        described,
        [r#"{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete"]}"#]
    );
    let url = rule(json!({"verbs": ["get"], "nonResourceURLs": ["/metrics"]}));
    assert_eq!(
        url.compact_string(),
        r#"{NonResourceURLs:["/metrics"], Verbs:["get"]}"#
    );
}

#[tokio::test]
async fn a_denial_is_decided_again_from_a_consistent_read() {
    let lag = std::time::Duration::from_millis(300);
    let prefix = "/registry/rolebindings/";
    // Stores whose watches report progress (the cache catches up) and
    // old etcd, whose do not (the read goes to storage).
    let (_one, with_progress) = crate::testing::core_lagging_behind(prefix, lag).await;
    let (_two, without_progress) = crate::testing::core_lagging_without_progress(prefix, lag).await;
    for core in [&with_progress, &without_progress] {
        let create = |resource: &'static str, object: Value| async move {
            let def = core
                .resolve(RBAC_GROUP, "v1", resource)
                .expect("an RBAC resource");
            core.create(
                &UserInfo::system(),
                &def,
                Some("default"),
                object,
                &crate::verbs::WriteOptions::default(),
            )
            .await
            .expect("created");
        };
        create(
            "roles",
            json!({"metadata": {"name": "reader"}, "rules": [{"verbs": ["list"], "apiGroups": [""], "resources": ["configmaps"]}]}),
        )
        .await;
        create(
            "rolebindings",
            json!({"metadata": {"name": "alice-reads"}, "roleRef": {"apiGroup": RBAC_GROUP, "kind": "Role", "name": "reader"}, "subjects": [{"kind": "User", "name": "alice"}]}),
        )
        .await;
        let alice = UserInfo::authenticated("alice", vec![]);
        let list = attrs("list", "", "configmaps", None, None);
        let request = AccessRequest::Resource(&list);
        // The binding's cache has not seen it yet...
        assert!(!core.decide(&alice, &request).allowed);
        // ...but the denial is decided again from what is stored.
        core.authorize_request(&alice, &request)
            .await
            .expect("allowed by the stored binding");
        let bob = UserInfo::authenticated("bob", vec![]);
        let denied = core.authorize_request(&bob, &request).await.unwrap_err();
        assert_eq!(denied.code(), 403);
    }
}

#[test]
fn bootstrap_objects_are_reconciled_as_upstream_does() {
    let expected = json!({
        "metadata": {"name": "r", "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
                     "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}},
        "rules": [
            {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]},
            {"verbs": ["get"], "apiGroups": [""], "resources": ["nodes"]},
        ],
    });
    // A stored role missing one rule and holding an extra one: the rule
    // is added, the extra kept, the label restored.
    let stored = json!({
        "metadata": {"name": "r", "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}},
        "rules": [
            {"verbs": ["*"], "apiGroups": [""], "resources": ["pods"]},
            {"verbs": ["get"], "apiGroups": ["apps"], "resources": ["deployments"]},
        ],
    });
    let merged = reconciled(&stored, &expected);
    assert_eq!(
        merged["rules"],
        json!([
            {"verbs": ["*"], "apiGroups": [""], "resources": ["pods"]},
            {"verbs": ["get"], "apiGroups": ["apps"], "resources": ["deployments"]},
            {"verbs": ["get"], "apiGroups": [""], "resources": ["nodes"]},
        ])
    );
    assert_eq!(
        merged["metadata"]["labels"]["kubernetes.io/bootstrapping"],
        "rbac-defaults"
    );
    assert_eq!(
        reconciled(&merged, &expected),
        merged,
        "reconciled twice is once"
    );
    // An operator's "false" is respected.
    let pinned = json!({"metadata": {"name": "r", "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "false"}}, "rules": []});
    assert_eq!(reconciled(&pinned, &expected), pinned);
    // Bindings gain missing subjects; aggregated roles missing selectors.
    let binding = json!({"metadata": {"name": "b"}, "subjects": [{"kind": "Group", "name": "a"}]});
    let wanted = json!({"metadata": {"name": "b"}, "subjects": [{"kind": "Group", "name": "a"}, {"kind": "Group", "name": "b"}]});
    assert_eq!(
        reconciled(&binding, &wanted)["subjects"],
        wanted["subjects"]
    );
    let view = json!({"metadata": {"name": "view"}, "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"x": "true"}}]}, "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]});
    let wanted = json!({"metadata": {"name": "view"}, "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"y": "true"}}]}, "rules": []});
    let merged = reconciled(&view, &wanted);
    assert_eq!(
        merged["aggregationRule"]["clusterRoleSelectors"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );
    assert_eq!(
        merged["rules"], view["rules"],
        "aggregated rules are the controller's"
    );
}

#[tokio::test]
async fn a_start_restores_what_the_bootstrap_policy_grants() {
    let (_dir, core) = crate::testing::core_unshaped().await;
    let def = core
        .resolve(RBAC_GROUP, "v1", "clusterroles")
        .expect("clusterroles");
    let system = UserInfo::system();
    let strip = |annotation: &'static str| {
        let (core, def, system) = (&core, def.clone(), system.clone());
        async move {
            core.update_internal(
                &system,
                &def,
                None,
                "system:basic-user",
                &crate::verbs::WriteOptions::default(),
                crate::verbs::View::Main,
                |current| {
                    let mut edited = current.clone();
                    edited["rules"] = json!([]);
                    edited["metadata"]["annotations"]
                        ["rbac.authorization.kubernetes.io/autoupdate"] = json!(annotation);
                    Ok(edited)
                },
            )
            .await
            .expect("edited");
        }
    };
    let rules = || {
        let (core, def, system) = (&core, def.clone(), system.clone());
        async move {
            core.get(&system, &def, None, "system:basic-user", "")
                .await
                .expect("the role")["rules"]
                .as_array()
                .map(Vec::len)
        }
    };
    strip("true").await;
    core.bootstrap().await.expect("a second start");
    assert_eq!(rules().await, Some(2), "the self-review rules are back");
    strip("false").await;
    core.bootstrap().await.expect("a third start");
    assert_eq!(rules().await, Some(0), "an operator's opt-out holds");
}

#[test]
fn the_default_roles_parse() {
    let roles: Vec<Value> = serde_json::from_str(DEFAULT_ROLES).expect("the default roles as JSON");
    let names: Vec<&str> = roles.iter().map(object::name).collect();
    assert_eq!(
        names,
        [
            "admin",
            "edit",
            "view",
            "system:aggregate-to-admin",
            "system:aggregate-to-edit",
            "system:aggregate-to-view",
            "system:monitoring"
        ]
    );
    let system: Value = serde_json::from_str(SYSTEM_ROLES).expect("the system roles as JSON");
    let count = |key: &str| system[key].as_array().map(Vec::len).unwrap_or(0);
    assert_eq!(
        (count("clusterRoles"), count("clusterRoleBindings")),
        (19, 6)
    );
    assert_eq!(
        bootstrap_policy().len(),
        4 + 4 + roles.len() + 1 + 19 + 6 + 2 + 2
    );
    // Every binding names a role the policy creates.
    let policy = bootstrap_policy();
    let roles: Vec<&str> = policy
        .iter()
        .filter(|(resource, _)| *resource == "clusterroles")
        .map(|(_, role)| object::name(role))
        .collect();
    for (_, binding) in policy.iter().filter(|(r, _)| *r == "clusterrolebindings") {
        let wanted = binding["roleRef"]["name"].as_str().unwrap_or("");
        assert!(roles.contains(&wanted), "{wanted}");
    }
    // And every namespaced binding a Role of its namespace.
    for (_, binding) in policy.iter().filter(|(r, _)| *r == "rolebindings") {
        let namespace = object::namespace(binding);
        let wanted = binding["roleRef"]["name"].as_str().unwrap_or("");
        assert!(
            policy.iter().any(|(r, role)| *r == "roles"
                && object::name(role) == wanted
                && object::namespace(role) == namespace),
            "{namespace}/{wanted}"
        );
    }
}

#[test]
fn subjects_apply_as_upstreams_applies_to_user() {
    let sa = UserInfo::authenticated("system:serviceaccount:team:robot", vec![]);
    let subject = json!({"kind": "ServiceAccount", "name": "robot"});
    assert!(applies_to(&subject, &sa, "team"));
    assert!(!applies_to(&subject, &sa, "other"));
    assert!(!applies_to(&subject, &sa, ""));
    let qualified = json!({"kind": "ServiceAccount", "name": "robot", "namespace": "team"});
    assert!(applies_to(&qualified, &sa, ""));
    assert_eq!(
        describe_subject(&qualified, ""),
        r#"ServiceAccount "robot/team""#
    );
    let alice = UserInfo::authenticated("alice", vec!["devs".into()]);
    assert!(applies_to(
        &json!({"kind": "User", "name": "alice"}),
        &alice,
        ""
    ));
    assert!(applies_to(
        &json!({"kind": "Group", "name": "devs"}),
        &alice,
        ""
    ));
    assert!(applies_to(
        &json!({"kind": "Group", "name": "system:authenticated"}),
        &alice,
        ""
    ));
    assert!(!applies_to(
        &json!({"kind": "User", "name": "bob"}),
        &alice,
        ""
    ));
}
