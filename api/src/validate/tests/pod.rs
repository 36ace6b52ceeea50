//! Pods: containers, volumes, probes, resources, and what an update may change.

use serde_json::json;

use super::*;

#[test]
fn valid_pod_has_no_errors() {
    create("", "Pod", &pod(), &[]);
}

#[test]
fn pod_requires_containers_names_and_images() {
    create(
        "",
        "Pod",
        &with(&pod(), |p| p["spec"]["containers"] = json!([])),
        &[(REQUIRED, "spec.containers", "Required value")],
    );
    create(
        "",
        "Pod",
        &with(&pod(), |p| p["spec"]["containers"][0]["name"] = json!("")),
        &[(REQUIRED, "spec.containers[0].name", "Required value")],
    );
    create(
        "",
        "Pod",
        &with(&pod(), |p| p["spec"]["containers"][0]["image"] = json!("")),
        &[(REQUIRED, "spec.containers[0].image", "Required value")],
    );
}

#[test]
fn pod_container_names_are_dns_labels_and_unique() {
    create("", "Pod", &with(&pod(), |p| p["spec"]["containers"][0]["name"] = json!("Web_1")),
        &[(INVALID, "spec.containers[0].name", "Invalid value: \"Web_1\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")]);
    let twice = with(&pod(), |p| {
        let c = p["spec"]["containers"][0].clone();
        p["spec"]["containers"] = json!([c.clone(), c]);
        p["spec"]["containers"][1]["ports"] = json!([]);
    });
    create(
        "",
        "Pod",
        &twice,
        &[(
            DUPLICATE,
            "spec.containers[1].name",
            "Duplicate value: \"web\"",
        )],
    );
}

#[test]
fn pod_ports_range_names_and_protocols() {
    create(
        "",
        "Pod",
        &with(&pod(), |p| {
            p["spec"]["containers"][0]["ports"][0]["containerPort"] = json!(70000)
        }),
        &[(
            INVALID,
            "spec.containers[0].ports[0].containerPort",
            "Invalid value: 70000: must be between 1 and 65535, inclusive",
        )],
    );
    create(
        "",
        "Pod",
        &with(&pod(), |p| {
            p["spec"]["containers"][0]["ports"][0]["hostPort"] = json!(-1)
        }),
        &[(
            INVALID,
            "spec.containers[0].ports[0].hostPort",
            "Invalid value: -1: must be between 1 and 65535, inclusive",
        )],
    );
    create("", "Pod", &with(&pod(), |p| p["spec"]["containers"][0]["ports"][0]["name"] = json!("HTTP")),
        &[
            (INVALID, "spec.containers[0].ports[0].name", "Invalid value: \"HTTP\": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"),
            (INVALID, "spec.containers[0].ports[0].name", "Invalid value: \"HTTP\": must contain at least one letter (a-z)"),
        ]);
    create(
        "",
        "Pod",
        &with(&pod(), |p| {
            p["spec"]["containers"][0]["ports"][0]["protocol"] = json!("HTTP")
        }),
        &[(
            NOT_SUPPORTED,
            "spec.containers[0].ports[0].protocol",
            "Unsupported value: \"HTTP\": supported values: \"SCTP\", \"TCP\", \"UDP\"",
        )],
    );
    create(
        "",
        "Pod",
        &with(&pod(), |p| {
            p["spec"]["containers"][0]["ports"][0]["containerPort"] = json!(0)
        }),
        &[(
            REQUIRED,
            "spec.containers[0].ports[0].containerPort",
            "Required value",
        )],
    );
}

#[test]
fn pod_enums_list_upstreams_values() {
    create("", "Pod", &with(&pod(), |p| p["spec"]["restartPolicy"] = json!("Sometimes")),
        &[(NOT_SUPPORTED, "spec.restartPolicy", "Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnFailure\", \"Never\"")]);
    create("", "Pod", &with(&pod(), |p| p["spec"]["containers"][0]["imagePullPolicy"] = json!("Sometimes")),
        &[(NOT_SUPPORTED, "spec.containers[0].imagePullPolicy", "Unsupported value: \"Sometimes\": supported values: \"Always\", \"IfNotPresent\", \"Never\"")]);
    create("", "Pod", &with(&pod(), |p| p["spec"]["dnsPolicy"] = json!("Google")),
        &[(NOT_SUPPORTED, "spec.dnsPolicy", "Unsupported value: \"Google\": supported values: \"ClusterFirstWithHostNet\", \"ClusterFirst\", \"Default\", \"None\"")]);
}

#[test]
fn pod_requests_may_not_exceed_limits() {
    create(
        "",
        "Pod",
        &with(&pod(), |p| {
            p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = json!("1500m")
        }),
        &[(
            INVALID,
            "spec.containers[0].resources.requests",
            "Invalid value: \"1500m\": must be less than or equal to cpu limit of 1",
        )],
    );
    create(
        "",
        "Pod",
        &with(&pod(), |p| {
            p["spec"]["containers"][0]["resources"]["limits"]["memory"] = json!("-1Gi")
        }),
        &[(
            INVALID,
            "spec.containers[0].resources.limits[memory]",
            "Invalid value: \"-1Gi\": must be greater than or equal to 0",
        )],
    );
    create(
        "",
        "Pod",
        &with(&pod(), |p| {
            p["spec"]["containers"][0]["resources"]["limits"]["gpu"] = json!("1")
        }),
        &[
            (
                INVALID,
                "spec.containers[0].resources.limits[gpu]",
                "Invalid value: \"gpu\": must be a standard resource type or fully qualified",
            ),
            (
                INVALID,
                "spec.containers[0].resources.limits[gpu]",
                "Invalid value: \"gpu\": must be a standard resource for containers",
            ),
        ],
    );
    // Equal after canonicalisation is fine.
    create(
        "",
        "Pod",
        &with(&pod(), |p| {
            p["spec"]["containers"][0]["resources"]["requests"]["memory"] = json!("134217728")
        }),
        &[],
    );
}

#[test]
fn pod_volumes_and_mounts() {
    create(
        "",
        "Pod",
        &with(&pod(), |p| {
            p["spec"]["containers"][0]["volumeMounts"][0]["name"] = json!("missing")
        }),
        &[(
            NOT_FOUND,
            "spec.containers[0].volumeMounts[0].name",
            "Not found: \"missing\"",
        )],
    );
    create(
        "",
        "Pod",
        &with(&pod(), |p| {
            p["spec"]["volumes"][0] = json!({"name": "data"})
        }),
        &[
            (
                REQUIRED,
                "spec.volumes[0]",
                "Required value: must specify a volume type",
            ),
            (
                NOT_FOUND,
                "spec.containers[0].volumeMounts[0].name",
                "Not found: \"data\"",
            ),
        ],
    );
    create(
        "",
        "Pod",
        &with(&pod(), |p| {
            p["spec"]["volumes"][0]["hostPath"] = json!({"path": "/x"})
        }),
        &[
            (
                FORBIDDEN,
                "spec.volumes[0].hostPath",
                "Forbidden: may not specify more than 1 volume type",
            ),
            (
                NOT_FOUND,
                "spec.containers[0].volumeMounts[0].name",
                "Not found: \"data\"",
            ),
        ],
    );
}

#[test]
fn pod_probes_tolerations_and_env() {
    create(
        "",
        "Pod",
        &with(&pod(), |p| {
            p["spec"]["containers"][0]["livenessProbe"] = json!({"periodSeconds": 5})
        }),
        &[(
            REQUIRED,
            "spec.containers[0].livenessProbe",
            "Required value: must specify a handler type",
        )],
    );
    create(
        "",
        "Pod",
        &with(&pod(), |p| {
            p["spec"]["containers"][0]["livenessProbe"]["successThreshold"] = json!(2)
        }),
        &[(
            INVALID,
            "spec.containers[0].livenessProbe.successThreshold",
            "Invalid value: 2: must be 1",
        )],
    );
    create(
        "",
        "Pod",
        &with(&pod(), |p| {
            p["spec"]["tolerations"][0]["operator"] = json!("Maybe")
        }),
        &[(
            NOT_SUPPORTED,
            "spec.tolerations[0].operator",
            "Unsupported value: \"Maybe\": supported values: \"Equal\", \"Exists\"",
        )],
    );
    create("", "Pod", &with(&pod(), |p| p["spec"]["containers"][0]["env"][0]["name"] = json!("A=B")),
        &[(INVALID, "spec.containers[0].env[0].name", "Invalid value: \"A=B\": a valid environment variable name must consist only of printable ASCII characters other than '='")]);
}

#[test]
fn protobuf_zero_values_read_as_unset() {
    // hostPort 0, empty enums and false flags are what a protobuf body
    // carries for fields the client never set.
    let zeroed = with(&pod(), |p| {
        p["spec"]["containers"][0]["imagePullPolicy"] = json!("");
        p["spec"]["containers"][0]["terminationMessagePolicy"] = json!("");
        p["spec"]["restartPolicy"] = json!("");
        p["spec"]["dnsPolicy"] = json!("");
        p["spec"]["hostNetwork"] = json!(false);
    });
    create("", "Pod", &zeroed, &[]);
}

#[test]
fn pod_updates_only_change_images_and_friends() {
    let old = pod();
    let image = with(&old, |p| {
        p["spec"]["containers"][0]["image"] = json!("nginx:1.28")
    });
    expect(validate_update("", "Pod", &image, &old), &[]);
    let restart = with(&old, |p| p["spec"]["restartPolicy"] = json!("Never"));
    let errs = validate_update("", "Pod", &restart, &old);
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0].field, "spec");
    assert_eq!(errs[0].reason, FORBIDDEN);
    assert!(errs[0].message.starts_with("Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n"), "{}", errs[0].message);
    let added = with(&old, |p| {
        let c = p["spec"]["containers"][0].clone();
        p["spec"]["containers"] = json!([
            c.clone(),
            with(&c, |c| {
                c["name"] = json!("b");
                c["ports"] = json!([]);
            })
        ]);
    });
    expect(
        validate_update("", "Pod", &added, &old),
        &[(
            FORBIDDEN,
            "spec.containers",
            "Forbidden: pod updates may not add or remove containers",
        )],
    );
    let removed_toleration = with(&old, |p| p["spec"]["tolerations"] = json!([]));
    expect(
        validate_update("", "Pod", &removed_toleration, &old),
        &[(
            FORBIDDEN,
            "spec.tolerations",
            "Forbidden: existing toleration can not be modified except its tolerationSeconds",
        )],
    );
    let deadline_old = with(&old, |p| p["spec"]["activeDeadlineSeconds"] = json!(10));
    let deadline_new = with(&old, |p| p["spec"]["activeDeadlineSeconds"] = json!(20));
    expect(
        validate_update("", "Pod", &deadline_new, &deadline_old),
        &[(
            INVALID,
            "spec.activeDeadlineSeconds",
            "Invalid value: 20: must be less than or equal to previous value",
        )],
    );
}

#[test]
fn pod_env_sources_security_and_host_ports() {
    create("", "Pod", &with(&pod(), |p| p["spec"]["containers"][0]["env"][0] = json!({"name": "A", "valueFrom": {}})),
        &[(INVALID, "spec.containers[0].env[0].valueFrom", "Invalid value: \"\": must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`")]);
    create(
        "",
        "Pod",
        &with(
            &pod(),
            |p| p["spec"]["containers"][0]["env"][0] = json!({"name": "A", "value": "x", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}),
        ),
        &[(
            INVALID,
            "spec.containers[0].env[0].valueFrom",
            "Invalid value: \"\": may not be specified when `value` is not empty",
        )],
    );
    create(
        "",
        "Pod",
        &with(&pod(), |p| {
            p["spec"]["containers"][0]["envFrom"] = json!([{}])
        }),
        &[(
            INVALID,
            "spec.containers[0].envFrom",
            "Invalid value: \"\": must specify one of: `configMapRef` or `secretRef`",
        )],
    );
    create(
        "",
        "Pod",
        &with(&pod(), |p| {
            p["spec"]["containers"][0]["securityContext"] = json!({"runAsUser": -1})
        }),
        &[(
            INVALID,
            "spec.containers[0].securityContext.runAsUser",
            "Invalid value: -1: must be between 0 and 2147483647, inclusive",
        )],
    );
    create("", "Pod", &with(&pod(), |p| p["spec"]["containers"][0]["securityContext"] = json!({"privileged": true, "allowPrivilegeEscalation": false})),
        &[(INVALID, "spec.containers[0].securityContext", "Invalid value: &core.SecurityContext{...}: cannot set `allowPrivilegeEscalation` to false and `privileged` to true")]);
    let two_ports = with(&pod(), |p| {
        p["spec"]["containers"][0]["ports"] = json!([{"containerPort": 80, "hostPort": 8080}, {"containerPort": 81, "hostPort": 8080}]);
    });
    create(
        "",
        "Pod",
        &two_ports,
        &[(
            DUPLICATE,
            "spec.containers[0].ports[1].hostPort",
            "Duplicate value: \"TCP//8080\"",
        )],
    );
    create(
        "",
        "Pod",
        &with(&pod(), |p| {
            p["spec"]["containers"][0]["volumeMounts"][0]["subPath"] = json!("../etc")
        }),
        &[(
            INVALID,
            "spec.containers[0].volumeMounts.subPath",
            "Invalid value: \"../etc\": must not contain '..'",
        )],
    );
    create(
        "",
        "Pod",
        &with(
            &pod(),
            |p| {
                p["spec"]["containers"][0]["readinessProbe"] =
                    json!({"exec": {"command": ["true"]}, "terminationGracePeriodSeconds": 5})
            },
        ),
        &[(
            INVALID,
            "spec.containers[0].readinessProbe.terminationGracePeriodSeconds",
            "Invalid value: 5: must not be set for readinessProbes",
        )],
    );
}

#[test]
fn pod_create_only_rules_do_not_apply_on_update() {
    let debugged = with(
        &pod(),
        |p| p["spec"]["ephemeralContainers"] = json!([{"name": "dbg", "image": "busybox", "terminationMessagePolicy": "File", "imagePullPolicy": "Always"}]),
    );
    create(
        "",
        "Pod",
        &debugged,
        &[(
            FORBIDDEN,
            "spec.ephemeralContainers",
            "Forbidden: cannot be set on create",
        )],
    );
    expect(validate_update("", "Pod", &debugged, &debugged), &[]);
    let gated = with(&pod(), |p| {
        p["spec"]["schedulingGates"] = json!([{"name": "example.com/wait"}]);
        p["spec"]["nodeName"] = json!("n1");
    });
    create(
        "",
        "Pod",
        &gated,
        &[(
            FORBIDDEN,
            "spec.nodeName",
            "Forbidden: cannot be set until all schedulingGates have been cleared",
        )],
    );
    let long = with(&cron_job(), |c| {
        c["metadata"]["name"] = json!("a".repeat(53))
    });
    let errs = validate_create("batch", "CronJob", &long);
    assert_eq!(errs.len(), 1);
    assert_eq!(
        errs[0].message,
        format!(
            "Invalid value: \"{}\": must be no more than 52 characters",
            "a".repeat(53)
        )
    );
    expect(validate_update("batch", "CronJob", &long, &long), &[]);
}

#[test]
fn zero_values_do_not_count_as_changes_on_update() {
    let stored = pod();
    let from_protobuf = with(&stored, |p| {
        p["spec"]["hostNetwork"] = json!(false);
        p["spec"]["nodeSelector"] = json!({});
        p["spec"]["containers"][0]["stdin"] = json!(false);
        p["spec"]["containers"][0]["workingDir"] = json!("");
        p["spec"]["containers"][0]["image"] = json!("nginx:1.28");
    });
    expect(validate_update("", "Pod", &from_protobuf, &stored), &[]);
    let ss = json!({"spec": {"serviceName": "web", "selector": {"matchLabels": {"app": "web"}}, "template": template()}});
    let ss_zeroed = with(&ss, |s| s["spec"]["volumeClaimTemplates"] = json!([]));
    expect(validate_update("apps", "StatefulSet", &ss_zeroed, &ss), &[]);
}
