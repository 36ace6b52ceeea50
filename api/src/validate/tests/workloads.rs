//! Workloads: Deployments, ReplicaSets, DaemonSets, StatefulSets, ReplicationControllers, PodTemplates, Jobs and CronJobs.

use serde_json::json;

use super::*;

#[test]
fn valid_workloads_have_no_errors() {
    create("apps", "Deployment", &deployment(), &[]);
    let rs = with(&deployment(), |d| {
        d["kind"] = json!("ReplicaSet");
        d["spec"].as_object_mut().unwrap().remove("strategy");
    });
    create("apps", "ReplicaSet", &rs, &[]);
    create(
        "apps",
        "DaemonSet",
        &json!({"spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template(), "updateStrategy": {"type": "RollingUpdate"}}}),
        &[],
    );
    create(
        "apps",
        "StatefulSet",
        &json!({"spec": {"serviceName": "web", "selector": {"matchLabels": {"app": "web"}}, "template": template(), "podManagementPolicy": "OrderedReady", "updateStrategy": {"type": "RollingUpdate"}}}),
        &[],
    );
    create(
        "",
        "ReplicationController",
        &json!({"spec": {"replicas": 1, "selector": {"app": "web"}, "template": template()}}),
        &[],
    );
    create("", "PodTemplate", &json!({"template": template()}), &[]);
}

#[test]
fn deployment_rejections() {
    create(
        "apps",
        "Deployment",
        &with(&deployment(), |d| d["spec"]["replicas"] = json!(-1)),
        &[(
            INVALID,
            "spec.replicas",
            "Invalid value: -1: must be greater than or equal to 0",
        )],
    );
    create("apps", "Deployment", &with(&deployment(), |d| d["spec"]["template"]["metadata"]["labels"] = json!({"app": "x"})),
        &[(INVALID, "spec.template.metadata.labels", "Invalid value: map[string]string{\"app\":\"x\"}: `selector` does not match template `labels`")]);
    create("apps", "Deployment", &with(&deployment(), |d| d["spec"]["selector"] = json!({})),
        &[(INVALID, "spec.selector", "Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment")]);
    create(
        "apps",
        "Deployment",
        &with(&deployment(), |d| {
            d["spec"]["template"]["spec"]["containers"][0]["image"] = json!("")
        }),
        &[(
            REQUIRED,
            "spec.template.spec.containers[0].image",
            "Required value",
        )],
    );
    create(
        "apps",
        "Deployment",
        &with(&deployment(), |d| {
            d["spec"]["template"]["spec"]["restartPolicy"] = json!("Never")
        }),
        &[(
            NOT_SUPPORTED,
            "spec.template.spec.restartPolicy",
            "Unsupported value: \"Never\": supported values: \"Always\"",
        )],
    );
    create("apps", "Deployment", &with(&deployment(), |d| d["spec"]["strategy"]["rollingUpdate"] = json!({"maxUnavailable": 0, "maxSurge": 0})),
        &[(INVALID, "spec.strategy.rollingUpdate.maxUnavailable", "Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}: may not be 0 when `maxSurge` is 0")]);
    create("apps", "Deployment", &with(&deployment(), |d| d["spec"]["selector"]["matchExpressions"] = json!([{"key": "tier", "operator": "In"}])),
        &[
            (REQUIRED, "spec.selector.matchExpressions[0].values", "Required value: must be specified when `operator` is 'In' or 'NotIn'"),
            (INVALID, "spec.template.metadata.labels", "Invalid value: map[string]string{\"app\":\"web\"}: `selector` does not match template `labels`"),
        ]);
    create("apps", "Deployment", &with(&deployment(), |d| d["spec"]["template"]["metadata"]["labels"]["bad key"] = json!("v")),
        &[(INVALID, "spec.template.labels", "Invalid value: \"bad key\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")]);
}

#[test]
fn selectors_are_immutable() {
    let old = deployment();
    let new = with(&old, |d| {
        d["spec"]["selector"] = json!({"matchLabels": {"app": "web2"}});
        d["spec"]["template"]["metadata"]["labels"] = json!({"app": "web2"});
    });
    expect(validate_update("apps", "Deployment", &new, &old),
        &[(INVALID, "spec.selector", "Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"web2\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable")]);
    let scaled = with(&old, |d| d["spec"]["replicas"] = json!(5));
    expect(validate_update("apps", "Deployment", &scaled, &old), &[]);
    let rs_old = with(&old, |d| d["kind"] = json!("ReplicaSet"));
    expect(validate_update("apps", "ReplicaSet", &with(&new, |d| { d["spec"].as_object_mut().unwrap().remove("strategy"); }), &rs_old).into_iter().filter(|e| e.field == "spec.selector").collect(),
        &[(INVALID, "spec.selector", "Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"web2\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable")]);
}

#[test]
fn replica_set_and_daemon_set_rejections() {
    let rs = json!({"spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}}, "template": template()}});
    create("apps", "ReplicaSet", &with(&rs, |r| r["spec"]["selector"] = json!({"matchLabels": {}})),
        &[(INVALID, "spec.selector", "Invalid value: v1.LabelSelector{MatchLabels:map[string]string{}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment")]);
    create(
        "apps",
        "ReplicaSet",
        &with(&rs, |r| r["spec"]["minReadySeconds"] = json!(-5)),
        &[(
            INVALID,
            "spec.minReadySeconds",
            "Invalid value: -5: must be greater than or equal to 0",
        )],
    );
    create(
        "apps",
        "ReplicaSet",
        &with(&rs, |r| {
            r["spec"].as_object_mut().unwrap().remove("selector");
        }),
        // A nil selector matches nothing, so the template check fails too.
        &[
            (REQUIRED, "spec.selector", "Required value"),
            (
                INVALID,
                "spec.template.metadata.labels",
                "Invalid value: map[string]string{\"app\":\"web\"}: `selector` does not match template `labels`",
            ),
        ],
    );
    let ds = json!({"spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template()}});
    create("apps", "DaemonSet", &with(&ds, |d| d["spec"]["template"]["metadata"]["labels"] = json!({"app": "other"})),
        &[(INVALID, "spec.template.metadata.labels", "Invalid value: map[string]string{\"app\":\"other\"}: `selector` does not match template `labels`")]);
    create("apps", "DaemonSet", &with(&ds, |d| d["spec"]["selector"] = json!({})),
        &[(INVALID, "spec.selector", "Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for daemonset")]);
    create(
        "apps",
        "DaemonSet",
        &with(&ds, |d| {
            d["spec"]["updateStrategy"] = json!({"type": "Whenever"})
        }),
        &[(
            NOT_SUPPORTED,
            "spec.updateStrategy",
            "Unsupported value: apps.DaemonSetUpdateStrategy{Type:\"Whenever\", RollingUpdate:(*apps.RollingUpdateDaemonSet)(nil)}: supported values: \"RollingUpdate\", \"OnDelete\"",
        )],
    );
    create(
        "apps",
        "DaemonSet",
        &with(
            &ds,
            |d| {
                d["spec"]["updateStrategy"] =
                    json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0}})
            },
        ),
        &[(
            REQUIRED,
            "spec.updateStrategy.rollingUpdate.maxUnavailable",
            "Required value: cannot be 0 when maxSurge is 0",
        )],
    );
    create("apps", "DaemonSet", &with(&ds, |d| { d["spec"].as_object_mut().unwrap().remove("selector"); }),
        &[(INVALID, "spec.template.metadata.labels", "Invalid value: map[string]string{\"app\":\"web\"}: `selector` does not match template `labels`")]);
    let ds_new = with(&ds, |d| {
        d["spec"]["selector"]["matchLabels"]["tier"] = json!("x")
    });
    let errs = validate_update("apps", "DaemonSet", &ds_new, &ds);
    assert!(errs
        .iter()
        .any(|e| e.field == "spec.selector" && e.message.ends_with("field is immutable")));
}

#[test]
fn stateful_set_rejections_and_update_rule() {
    let ss = json!({"spec": {"serviceName": "web", "replicas": 1, "selector": {"matchLabels": {"app": "web"}}, "template": template()}});
    create(
        "apps",
        "StatefulSet",
        &with(&ss, |s| s["spec"]["podManagementPolicy"] = json!("Random")),
        &[(
            INVALID,
            "spec.podManagementPolicy",
            "Invalid value: \"Random\": must be 'OrderedReady' or 'Parallel'",
        )],
    );
    create("apps", "StatefulSet", &with(&ss, |s| s["spec"]["selector"] = json!({})),
        &[(INVALID, "spec.selector", "Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for statefulset")]);
    create(
        "apps",
        "StatefulSet",
        &with(&ss, |s| {
            s["spec"]["template"]["spec"]["activeDeadlineSeconds"] = json!(5)
        }),
        &[(
            FORBIDDEN,
            "spec.template.spec.activeDeadlineSeconds",
            "Forbidden: activeDeadlineSeconds in StatefulSet is not Supported",
        )],
    );
    // 1.32 does not validate a StatefulSet's pod spec, only template metadata.
    create(
        "apps",
        "StatefulSet",
        &with(&ss, |s| {
            s["spec"]["template"]["spec"]["containers"][0]["image"] = json!("")
        }),
        &[],
    );
    create("apps", "StatefulSet", &with(&ss, |s| s["spec"]["template"]["metadata"]["labels"]["-bad"] = json!("x")),
        &[(INVALID, "spec.template.labels", "Invalid value: \"-bad\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")]);
    // 1.32 does not validate a StatefulSet's pod spec, only template metadata.
    create(
        "apps",
        "StatefulSet",
        &with(&ss, |s| {
            s["spec"]["template"]["spec"]["containers"][0]["image"] = json!("")
        }),
        &[],
    );
    create("apps", "StatefulSet", &with(&ss, |s| s["spec"]["template"]["metadata"]["labels"]["-bad"] = json!("x")),
        &[(INVALID, "spec.template.labels", "Invalid value: \"-bad\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")]);
    let renamed = with(&ss, |s| s["spec"]["serviceName"] = json!("other"));
    expect(validate_update("apps", "StatefulSet", &renamed, &ss),
        &[(FORBIDDEN, "spec", "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden")]);
    let scaled = with(&ss, |s| {
        s["spec"]["replicas"] = json!(3);
        s["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:2");
    });
    expect(validate_update("apps", "StatefulSet", &scaled, &ss), &[]);
}

#[test]
fn replication_controller_and_pod_template_rejections() {
    let rc = json!({"spec": {"replicas": 1, "selector": {"app": "web"}, "template": template()}});
    create("", "ReplicationController", &with(&rc, |r| r["spec"]["selector"] = json!({"app": "db"})),
        &[(INVALID, "spec.template.metadata.labels", "Invalid value: map[string]string{\"app\":\"web\"}: `selector` does not match template `labels`")]);
    create(
        "",
        "ReplicationController",
        &with(&rc, |r| {
            r["spec"]["template"]["spec"]["restartPolicy"] = json!("OnFailure")
        }),
        &[(
            NOT_SUPPORTED,
            "spec.template.spec.restartPolicy",
            "Unsupported value: \"OnFailure\": supported values: \"Always\"",
        )],
    );
    create(
        "",
        "ReplicationController",
        &with(&rc, |r| r["spec"]["replicas"] = json!(-2)),
        &[(
            INVALID,
            "spec.replicas",
            "Invalid value: -2: must be greater than or equal to 0",
        )],
    );
    let pt = json!({"template": template()});
    create(
        "",
        "PodTemplate",
        &with(&pt, |t| {
            t["template"]["spec"]["containers"][0]["name"] = json!("")
        }),
        &[(
            REQUIRED,
            "template.spec.containers[0].name",
            "Required value",
        )],
    );
    create(
        "",
        "PodTemplate",
        &with(&pt, |t| {
            t["template"]["spec"]["ephemeralContainers"] =
                json!([{"name": "dbg", "image": "busybox"}])
        }),
        &[(
            FORBIDDEN,
            "template.spec.ephemeralContainers",
            "Forbidden: ephemeral containers not allowed in pod template",
        )],
    );
    create(
        "",
        "PodTemplate",
        &with(
            &pt,
            |t| {
                t["template"]["spec"]["containers"][0]["ports"] =
                    json!([{"containerPort": 80, "name": "a"}, {"containerPort": 81, "name": "a"}])
            },
        ),
        &[(
            DUPLICATE,
            "template.spec.containers[0].ports[1].name",
            "Duplicate value: \"a\"",
        )],
    );
}

#[test]
fn job_rejections() {
    create("batch", "Job", &job(), &[]);
    create(
        "batch",
        "Job",
        &with(&job(), |j| {
            j["spec"]["template"]["spec"]["restartPolicy"] = json!("Always")
        }),
        &[(
            REQUIRED,
            "spec.template.spec.restartPolicy",
            "Required value: valid values: \"OnFailure\", \"Never\"",
        )],
    );
    create(
        "batch",
        "Job",
        &with(&job(), |j| j["spec"]["backoffLimit"] = json!(-1)),
        &[(
            INVALID,
            "spec.backoffLimit",
            "Invalid value: -1: must be greater than or equal to 0",
        )],
    );
    create(
        "batch",
        "Job",
        &with(&job(), |j| j["spec"]["completionMode"] = json!("Sorted")),
        &[(
            NOT_SUPPORTED,
            "spec.completionMode",
            "Unsupported value: \"Sorted\": supported values: \"NonIndexed\", \"Indexed\"",
        )],
    );
    create("batch", "Job", &with(&job(), |j| j["spec"]["selector"] = json!({"matchLabels": {"job": "y"}})),
        &[(INVALID, "spec.template.metadata.labels", "Invalid value: map[string]string{\"job\":\"x\"}: `selector` does not match template `labels`")]);
}

#[test]
fn job_template_and_selector_are_immutable() {
    let old = with(&job(), |j| {
        j["spec"]["selector"] = json!({"matchLabels": {"job": "x"}});
        j["status"] = json!({"startTime": "2024-01-01T00:00:00Z"});
    });
    let image = with(&old, |j| {
        j["spec"]["template"]["spec"]["containers"][0]["image"] = json!("alpine")
    });
    let errs = validate_update("batch", "Job", &image, &old);
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0].field, "spec.template");
    assert!(errs[0].message.ends_with(": field is immutable"));
    let completions = with(&old, |j| j["spec"]["completions"] = json!(3));
    expect(
        validate_update("batch", "Job", &completions, &old),
        &[(
            INVALID,
            "spec.completions",
            "Invalid value: 3: field is immutable",
        )],
    );
    let parallel = with(&old, |j| j["spec"]["parallelism"] = json!(4));
    expect(validate_update("batch", "Job", &parallel, &old), &[]);
    // A suspended job that never started may move its pods.
    let suspended_old = with(&job(), |j| j["spec"]["suspend"] = json!(true));
    let moved = with(&suspended_old, |j| {
        j["spec"]["template"]["spec"]["nodeSelector"] = json!({"zone": "a"})
    });
    expect(validate_update("batch", "Job", &moved, &suspended_old), &[]);
}

#[test]
fn cron_job_rejections() {
    create("batch", "CronJob", &cron_job(), &[]);
    for ok in [
        "@hourly",
        "0 0 * * MON-FRI",
        "15,45 */2 1-15 jan,jul *",
        "@every 1h30m",
    ] {
        create(
            "batch",
            "CronJob",
            &with(&cron_job(), |c| c["spec"]["schedule"] = json!(ok)),
            &[],
        );
    }
    create(
        "batch",
        "CronJob",
        &with(&cron_job(), |c| c["spec"]["schedule"] = json!("* * *")),
        &[(
            INVALID,
            "spec.schedule",
            "Invalid value: \"* * *\": expected exactly 5 fields, found 3: [* * *]",
        )],
    );
    create(
        "batch",
        "CronJob",
        &with(&cron_job(), |c| c["spec"]["schedule"] = json!("61 * * * *")),
        &[(
            INVALID,
            "spec.schedule",
            "Invalid value: \"61 * * * *\": end of range (61) above maximum (59): 61",
        )],
    );
    create(
        "batch",
        "CronJob",
        &with(&cron_job(), |c| c["spec"]["schedule"] = json!("@sometimes")),
        &[(
            INVALID,
            "spec.schedule",
            "Invalid value: \"@sometimes\": unrecognized descriptor: @sometimes",
        )],
    );
    create("batch", "CronJob", &with(&cron_job(), |c| c["spec"]["schedule"] = json!("x * * * *")),
        &[(INVALID, "spec.schedule", "Invalid value: \"x * * * *\": failed to parse int from x: strconv.Atoi: parsing \"x\": invalid syntax")]);
    create("batch", "CronJob", &with(&cron_job(), |c| c["spec"]["schedule"] = json!("TZ=UTC 0 * * * *")),
        &[(INVALID, "spec.schedule", "Invalid value: \"TZ=UTC 0 * * * *\": cannot use TZ or CRON_TZ in schedule, use timeZone field instead")]);
    create("batch", "CronJob", &with(&cron_job(), |c| c["spec"]["concurrencyPolicy"] = json!("Sometimes")),
        &[(NOT_SUPPORTED, "spec.concurrencyPolicy", "Unsupported value: \"Sometimes\": supported values: \"Allow\", \"Forbid\", \"Replace\"")]);
    create(
        "batch",
        "CronJob",
        &with(&cron_job(), |c| {
            c["spec"]["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"] = json!("Always")
        }),
        &[(
            REQUIRED,
            "spec.jobTemplate.spec.template.spec.restartPolicy",
            "Required value: valid values: \"OnFailure\", \"Never\"",
        )],
    );
}
