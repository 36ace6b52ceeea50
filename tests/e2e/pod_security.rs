//! PodSecurity through kubectl: namespace labels choose the level; pods
//! that violate the enforce level are refused with upstream's message,
//! warn-level violations reach kubectl as warnings, workloads are only
//! warned about, invalid labels are refused, and tightening a namespace
//! warns about the pods already in it; an admission configuration file sets
//! the levels of unlabelled namespaces and exempts users, namespaces and
//! runtime classes.

use crate::common;
use std::time::Duration;

use crate::common::TestServer;
use serde_json::json;

const RESTRICTED_DETAIL: &str = r#"allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")"#;

fn plain_pod(name: &str) -> serde_json::Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
           "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
}

#[test]
fn namespace_labels_enforce_and_warn_the_standards() {
    let server = TestServer::start();
    server.kubectl_line("create namespace locked");
    server.kubectl_line("label namespace locked pod-security.kubernetes.io/enforce=restricted");
    let pods = "/api/v1/namespaces/locked/pods";
    let refused = common::wait_until(Duration::from_secs(5), "the label in effect", || {
        let answer = server.post_json(pods, &plain_pod("plain"));
        (answer.status == 403).then_some(answer)
    });
    let status = refused.assert_status(403, "Forbidden");
    assert_eq!(
        status["message"],
        format!("pods \"plain\" is forbidden: violates PodSecurity \"restricted:latest\": {RESTRICTED_DETAIL}")
    );
    // kubectl shows the same.
    let err = server.kubectl_err(&["run", "web", "-n", "locked", "--image=nginx"]);
    assert!(
        err.contains(
            "violates PodSecurity \"restricted:latest\": allowPrivilegeEscalation != false"
        ),
        "{err}"
    );

    // A pod that conforms is admitted.
    let conforming = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "good"},
        "spec": {"securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
                 "containers": [{"name": "c", "image": "nginx", "securityContext": {
                     "allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}}}]}});
    let admitted = server.post_json(pods, &conforming);
    assert_eq!(admitted.status, 201, "{admitted:?}");

    // Warn mode: admitted, with upstream's warning; workloads are warned
    // about even where pods would be refused.
    server.kubectl_line("create namespace watched");
    server.kubectl_line("label namespace watched pod-security.kubernetes.io/warn=baseline pod-security.kubernetes.io/warn-version=v1.32");
    let privileged = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "root"},
        "spec": {"hostNetwork": true, "containers": [{"name": "c", "image": "nginx", "securityContext": {"privileged": true}}]}});
    let out = common::wait_until(Duration::from_secs(5), "the warn label in effect", || {
        let out = server.kubectl_stdin(
            &["apply", "-n", "watched", "-f", "-"],
            &privileged.to_string(),
        );
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        stderr.contains("would violate").then_some((out, stderr))
    });
    assert!(out.0.status.success());
    assert!(
        out.1.contains(r#"Warning: would violate PodSecurity "baseline:v1.32": host namespaces (hostNetwork=true), privileged (container "c" must not set securityContext.privileged=true)"#),
        "{}",
        out.1
    );
    // (Upstream warns about workloads at the warn level only: with no warn
    // label, a workload in an enforcing namespace gets no warning.)
    let deployment = server.kubectl(&[
        "create",
        "deployment",
        "web",
        "-n",
        "locked",
        "--image=nginx",
    ]);
    assert!(deployment.status.success(), "{deployment:?}");
    assert!(
        !String::from_utf8_lossy(&deployment.stderr).contains("Warning"),
        "{deployment:?}"
    );
    server.kubectl_line("label namespace locked pod-security.kubernetes.io/warn=restricted");
    let deployment = server.kubectl(&[
        "create",
        "deployment",
        "api",
        "-n",
        "locked",
        "--image=nginx",
    ]);
    assert!(deployment.status.success(), "{deployment:?}");
    let stderr = String::from_utf8_lossy(&deployment.stderr);
    assert!(
        stderr.contains(r#"Warning: would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "nginx" must set securityContext.allowPrivilegeEscalation=false)"#),
        "{stderr}"
    );

    // Invalid labels are refused.
    let err = server.kubectl_err(&[
        "label",
        "namespace",
        "watched",
        "pod-security.kubernetes.io/enforce=strict",
    ]);
    assert!(
        err.contains(r#"metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted"#),
        "{err}"
    );

    // Tightening a namespace warns about the pods already there.
    let out = server.kubectl(&[
        "label",
        "namespace",
        "watched",
        "pod-security.kubernetes.io/enforce=baseline",
    ]);
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(r#"Warning: existing pods in namespace "watched" violate the new PodSecurity enforce level "baseline:latest""#)
            && stderr.contains("Warning: root: host namespaces, privileged"),
        "{stderr}"
    );
}

/// `--admission-control-config-file`: PodSecurity's defaults apply to
/// namespaces without labels; exempt users, namespaces and runtime classes
/// pass; an invalid file stops the server from starting.
#[test]
fn the_admission_configuration_file_sets_defaults_and_exemptions() {
    let dir = tempfile::tempdir().expect("a directory");
    let file = dir.path().join("admission.yaml");
    std::fs::write(
        &file,
        r#"apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  configuration:
    apiVersion: pod-security.admission.config.k8s.io/v1
    kind: PodSecurityConfiguration
    defaults:
      enforce: baseline
    exemptions:
      usernames: [ci-bot]
      namespaces: [exempt]
      runtimeClasses: [kata]
"#,
    )
    .expect("the file");
    let flag = format!("--admission-control-config-file={}", file.display());
    let server = TestServer::start_with(&[flag.as_str()]);
    let privileged = |name: &str| {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
               "spec": {"containers": [{"name": "c", "image": "nginx", "securityContext": {"privileged": true}}]}})
    };
    let refused = server.post_json("/api/v1/namespaces/default/pods", &privileged("root"));
    let status = refused.assert_status(403, "Forbidden");
    assert_eq!(
        status["message"],
        r#"pods "root" is forbidden: violates PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)"#
    );
    // A label still overrides the default.
    server.kubectl_line("create namespace open");
    server.kubectl_line("label namespace open pod-security.kubernetes.io/enforce=privileged");
    let open = common::wait_until(Duration::from_secs(5), "the label in effect", || {
        let answer = server.post_json("/api/v1/namespaces/open/pods", &privileged("root"));
        (answer.status == 201).then_some(answer)
    });
    assert_eq!(open.status, 201);

    server.kubectl_line("create namespace exempt");
    let exempt = server.post_json("/api/v1/namespaces/exempt/pods", &privileged("root"));
    assert_eq!(exempt.status, 201, "{exempt:?}");
    let out = server.kubectl_stdin(
        &[
            "create",
            "-f",
            "-",
            "--as=ci-bot",
            "--as-group=system:masters",
        ],
        &privileged("by-ci").to_string(),
    );
    assert!(out.status.success(), "{out:?}");
    server.apply(r#"{"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "kata"}, "handler": "kata"}"#);
    let mut sandboxed = privileged("sandboxed");
    sandboxed["spec"]["runtimeClassName"] = json!("kata");
    let sandboxed = server.post_json("/api/v1/namespaces/default/pods", &sandboxed);
    assert_eq!(sandboxed.status, 201, "{sandboxed:?}");
    drop(server);

    std::fs::write(
        &file,
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  configuration:\n    apiVersion: pod-security.admission.config.k8s.io/v1\n    kind: PodSecurityConfiguration\n    defaults:\n      enforce: strict\n",
    )
    .expect("the file");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_capstan"))
        .args(["serve", "--secure-port=0", flag.as_str()])
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .output()
        .expect("run capstan");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(r#"admission plugin \"PodSecurity\": defaults.enforce: Invalid value: \"strict\": must be one of privileged, baseline, restricted"#)
            || stderr.contains(r#"admission plugin "PodSecurity": defaults.enforce: Invalid value: "strict": must be one of privileged, baseline, restricted"#),
        "{stderr}"
    );
}
