//! The Pod Security Standards' checks (pod-security-admission's policy
//! package, as of 1.32), each worded as upstream words its forbidden
//! reason and detail, and run in upstream's order: baseline's checks by
//! ID, then restricted's, restricted replacing three of baseline's.

use std::collections::BTreeSet;

use serde_json::Value;

/// A level of the standards.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Privileged,
    Baseline,
    Restricted,
}

impl Level {
    pub fn parse(text: &str) -> Option<Level> {
        match text {
            "privileged" => Some(Level::Privileged),
            "baseline" => Some(Level::Baseline),
            "restricted" => Some(Level::Restricted),
            _ => None,
        }
    }
}

/// One failed check: upstream's ForbiddenReason and ForbiddenDetail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub reason: String,
    pub detail: String,
}

/// One check: what it finds wrong with a pod, if anything.
type Check = fn(&Pod) -> Option<Violation>;

/// What a pod (its metadata and spec) violates at `level`, in report order.
pub fn evaluate(level: Level, metadata: &Value, spec: &Value) -> Vec<Violation> {
    let pod = Pod::new(metadata, spec);
    let baseline: [(&str, Check); 11] = [
        ("appArmorProfile", app_armor_profile),
        ("capabilities_baseline", capabilities_baseline),
        ("hostNamespaces", host_namespaces),
        ("hostPathVolumes", host_path_volumes),
        ("hostPorts", host_ports),
        ("privileged", privileged),
        ("procMount", proc_mount),
        ("seLinuxOptions", se_linux_options),
        ("seccompProfile_baseline", seccomp_baseline),
        ("sysctls", sysctls),
        ("windowsHostProcess", windows_host_process),
    ];
    let restricted: [Check; 6] = [
        allow_privilege_escalation,
        capabilities_restricted,
        restricted_volumes,
        run_as_non_root,
        run_as_user,
        seccomp_restricted,
    ];
    const REPLACED: [&str; 3] = [
        "capabilities_baseline",
        "hostPathVolumes",
        "seccompProfile_baseline",
    ];
    match level {
        Level::Privileged => Vec::new(),
        Level::Baseline => baseline
            .iter()
            .filter_map(|(_, check)| check(&pod))
            .collect(),
        Level::Restricted => baseline
            .iter()
            .filter(|(id, _)| !REPLACED.contains(id))
            .filter_map(|(_, check)| check(&pod))
            .chain(restricted.iter().filter_map(|check| check(&pod)))
            .collect(),
    }
}

/// `reason (detail), reason (detail)`, as upstream's ForbiddenDetail.
pub fn described(violations: &[Violation]) -> String {
    violations
        .iter()
        .map(|v| {
            if v.detail.is_empty() {
                v.reason.clone()
            } else {
                format!("{} ({})", v.reason, v.detail)
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `reason, reason`, as upstream's ForbiddenReason.
pub fn reasons(violations: &[Violation]) -> String {
    violations
        .iter()
        .map(|v| v.reason.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

struct Pod<'a> {
    metadata: &'a Value,
    spec: &'a Value,
    /// Init containers, containers, then ephemeral containers.
    containers: Vec<&'a Value>,
}

impl<'a> Pod<'a> {
    fn new(metadata: &'a Value, spec: &'a Value) -> Self {
        let containers = ["initContainers", "containers", "ephemeralContainers"]
            .iter()
            .flat_map(|key| {
                spec.get(*key)
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
            })
            .collect();
        Pod {
            metadata,
            spec,
            containers,
        }
    }

    fn security(&self, pointer: &str) -> Option<&'a Value> {
        self.spec
            .pointer(&format!("/securityContext{pointer}"))
            .filter(|v| !v.is_null())
    }

    fn is_windows(&self) -> bool {
        self.spec.pointer("/os/name").and_then(Value::as_str) == Some("windows")
    }

    /// The containers whose `securityContext<pointer>` satisfies `bad`.
    fn containers_where(&self, pointer: &str, bad: impl Fn(Option<&Value>) -> bool) -> Vec<String> {
        self.containers
            .iter()
            .filter(|c| {
                bad(c
                    .pointer(&format!("/securityContext{pointer}"))
                    .filter(|v| !v.is_null()))
            })
            .map(|c| name(c))
            .collect()
    }
}

fn name(container: &Value) -> String {
    container
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

fn join_quote(items: &[String]) -> String {
    if items.is_empty() {
        return String::new();
    }
    format!("\"{}\"", items.join("\", \""))
}

fn pluralize<'s>(singular: &'s str, plural: &'s str, count: usize) -> &'s str {
    if count == 1 {
        singular
    } else {
        plural
    }
}

/// `container "a"` or `containers "a", "b"`.
fn containers(names: &[String]) -> String {
    format!(
        "{} {}",
        pluralize("container", "containers", names.len()),
        join_quote(names)
    )
}

fn violation(reason: &str, detail: String) -> Option<Violation> {
    Some(Violation {
        reason: reason.to_string(),
        detail,
    })
}

fn text(value: Option<&Value>) -> &str {
    value.and_then(Value::as_str).unwrap_or("")
}

fn app_armor_profile(pod: &Pod) -> Option<Violation> {
    let allowed = |t: &str| t == "RuntimeDefault" || t == "Localhost";
    let mut setters = Vec::new();
    let mut values = BTreeSet::new();
    if let Some(t) = pod
        .security("/appArmorProfile/type")
        .and_then(Value::as_str)
    {
        if !allowed(t) {
            setters.push("pod".to_string());
            values.insert(t.to_string());
        }
    }
    let bad_containers: Vec<String> = pod
        .containers
        .iter()
        .filter(|c| {
            let t = text(c.pointer("/securityContext/appArmorProfile/type"));
            if !t.is_empty() && !allowed(t) {
                values.insert(t.to_string());
                true
            } else {
                false
            }
        })
        .map(|c| name(c))
        .collect();
    if !bad_containers.is_empty() {
        setters.push(containers(&bad_containers));
    }
    let mut annotations = BTreeSet::new();
    if let Some(map) = pod.metadata.get("annotations").and_then(Value::as_object) {
        for (key, value) in map {
            if !key.starts_with("container.apparmor.security.beta.kubernetes.io/") {
                continue;
            }
            let value = value.as_str().unwrap_or("");
            if !(value.is_empty() || value == "runtime/default" || value.starts_with("localhost/"))
            {
                annotations.insert(format!("{key}=\"{value}\""));
            }
        }
    }
    if !annotations.is_empty() {
        setters.push(pluralize("annotation", "annotations", annotations.len()).to_string());
    }
    if setters.is_empty() {
        return None;
    }
    let listed: Vec<String> = values.into_iter().chain(annotations).collect();
    violation(
        pluralize(
            "forbidden AppArmor profile",
            "forbidden AppArmor profiles",
            listed.len(),
        ),
        format!(
            "{} must not set AppArmor profile type to {}",
            setters.join(" and "),
            join_quote(&listed)
        ),
    )
}

const BASELINE_CAPABILITIES: [&str; 13] = [
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
];

fn added_capabilities(container: &Value) -> Vec<String> {
    crate::object::strings_at(
        container
            .pointer("/securityContext/capabilities")
            .unwrap_or(&Value::Null),
        "add",
    )
}

fn capabilities_baseline(pod: &Pod) -> Option<Violation> {
    let mut names = Vec::new();
    let mut caps = BTreeSet::new();
    for container in &pod.containers {
        let bad: Vec<String> = added_capabilities(container)
            .into_iter()
            .filter(|c| !BASELINE_CAPABILITIES.contains(&c.as_str()))
            .collect();
        if !bad.is_empty() {
            names.push(name(container));
            caps.extend(bad);
        }
    }
    if names.is_empty() {
        return None;
    }
    violation(
        "non-default capabilities",
        format!(
            "{} must not include {} in securityContext.capabilities.add",
            containers(&names),
            join_quote(&caps.into_iter().collect::<Vec<_>>())
        ),
    )
}

fn host_namespaces(pod: &Pod) -> Option<Violation> {
    let on: Vec<String> = ["hostNetwork", "hostPID", "hostIPC"]
        .iter()
        .filter(|key| pod.spec.get(**key).and_then(Value::as_bool) == Some(true))
        .map(|key| format!("{key}=true"))
        .collect();
    (!on.is_empty()).then(|| Violation {
        reason: "host namespaces".into(),
        detail: on.join(", "),
    })
}

fn volumes<'a>(pod: &Pod<'a>) -> impl Iterator<Item = &'a Value> {
    pod.spec
        .get("volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn host_path_volumes(pod: &Pod) -> Option<Violation> {
    let names: Vec<String> = volumes(pod)
        .filter(|v| v.get("hostPath").is_some_and(|h| !h.is_null()))
        .map(name)
        .collect();
    (!names.is_empty()).then(|| Violation {
        reason: "hostPath volumes".into(),
        detail: format!(
            "{} {}",
            pluralize("volume", "volumes", names.len()),
            join_quote(&names)
        ),
    })
}

fn host_ports(pod: &Pod) -> Option<Violation> {
    let mut names = Vec::new();
    let mut ports = BTreeSet::new();
    for container in &pod.containers {
        let used: Vec<String> = container
            .get("ports")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|p| p.get("hostPort").and_then(Value::as_i64))
            .filter(|p| *p != 0)
            .map(|p| p.to_string())
            .collect();
        if !used.is_empty() {
            names.push(name(container));
            ports.extend(used);
        }
    }
    if names.is_empty() {
        return None;
    }
    let ports: Vec<String> = ports.into_iter().collect();
    violation(
        "hostPort",
        format!(
            "{} {} {} {} {}",
            pluralize("container", "containers", names.len()),
            join_quote(&names),
            pluralize("uses", "use", names.len()),
            pluralize("hostPort", "hostPorts", ports.len()),
            ports.join(", ")
        ),
    )
}

fn privileged(pod: &Pod) -> Option<Violation> {
    let names = pod.containers_where("/privileged", |v| v.and_then(Value::as_bool) == Some(true));
    (!names.is_empty()).then(|| Violation {
        reason: "privileged".into(),
        detail: format!(
            "{} must not set securityContext.privileged=true",
            containers(&names)
        ),
    })
}

fn proc_mount(pod: &Pod) -> Option<Violation> {
    let mut names = Vec::new();
    let mut types = BTreeSet::new();
    for container in &pod.containers {
        let mount = text(container.pointer("/securityContext/procMount"));
        if !mount.is_empty() && mount != "Default" {
            names.push(name(container));
            types.insert(mount.to_string());
        }
    }
    if names.is_empty() {
        return None;
    }
    violation(
        "procMount",
        format!(
            "{} must not set securityContext.procMount to {}",
            containers(&names),
            join_quote(&types.into_iter().collect::<Vec<_>>())
        ),
    )
}

fn se_linux_options(pod: &Pod) -> Option<Violation> {
    const TYPES: [&str; 5] = [
        "",
        "container_t",
        "container_init_t",
        "container_kvm_t",
        "container_engine_t",
    ];
    let mut types = BTreeSet::new();
    let (mut user, mut role) = (false, false);
    let mut inspect = |options: Option<&Value>| -> bool {
        let Some(options) = options.filter(|o| !o.is_null()) else {
            return false;
        };
        let mut bad = false;
        let t = text(options.get("type"));
        if !TYPES.contains(&t) {
            types.insert(t.to_string());
            bad = true;
        }
        if !text(options.get("user")).is_empty() {
            user = true;
            bad = true;
        }
        if !text(options.get("role")).is_empty() {
            role = true;
            bad = true;
        }
        bad
    };
    let mut setters = Vec::new();
    if inspect(pod.security("/seLinuxOptions")) {
        setters.push("pod".to_string());
    }
    let names: Vec<String> = pod
        .containers
        .iter()
        .filter(|c| inspect(c.pointer("/securityContext/seLinuxOptions")))
        .map(|c| name(c))
        .collect();
    if !names.is_empty() {
        setters.push(containers(&names));
    }
    if setters.is_empty() {
        return None;
    }
    let mut data = Vec::new();
    if !types.is_empty() {
        let types: Vec<String> = types.into_iter().collect();
        data.push(format!(
            "{} {}",
            pluralize("type", "types", types.len()),
            join_quote(&types)
        ));
    }
    if user {
        data.push("user may not be set".to_string());
    }
    if role {
        data.push("role may not be set".to_string());
    }
    violation(
        "seLinuxOptions",
        format!(
            "{} set forbidden securityContext.seLinuxOptions: {}",
            setters.join(" and "),
            data.join("; ")
        ),
    )
}

fn seccomp_allowed(t: &str) -> bool {
    t == "RuntimeDefault" || t == "Localhost"
}

fn seccomp_baseline(pod: &Pod) -> Option<Violation> {
    let mut setters = Vec::new();
    let mut values = BTreeSet::new();
    let pod_type = text(pod.security("/seccompProfile/type"));
    if !pod_type.is_empty() && !seccomp_allowed(pod_type) {
        setters.push("pod".to_string());
        values.insert(pod_type.to_string());
    }
    let mut names = Vec::new();
    for container in &pod.containers {
        let t = text(container.pointer("/securityContext/seccompProfile/type"));
        if !t.is_empty() && !seccomp_allowed(t) {
            names.push(name(container));
            values.insert(t.to_string());
        }
    }
    if !names.is_empty() {
        setters.push(containers(&names));
    }
    if setters.is_empty() {
        return None;
    }
    violation(
        "seccompProfile",
        format!(
            "{} must not set securityContext.seccompProfile.type to {}",
            setters.join(" and "),
            join_quote(&values.into_iter().collect::<Vec<_>>())
        ),
    )
}

const SAFE_SYSCTLS: [&str; 12] = [
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
];

fn sysctls(pod: &Pod) -> Option<Violation> {
    let forbidden: Vec<String> = pod
        .security("/sysctls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|s| text(s.get("name")).to_string())
        .filter(|n| !SAFE_SYSCTLS.contains(&n.as_str()))
        .collect();
    (!forbidden.is_empty()).then(|| Violation {
        reason: "forbidden sysctls".into(),
        detail: forbidden.join(", "),
    })
}

fn windows_host_process(pod: &Pod) -> Option<Violation> {
    let mut setters = Vec::new();
    if pod
        .security("/windowsOptions/hostProcess")
        .and_then(Value::as_bool)
        == Some(true)
    {
        setters.push("pod".to_string());
    }
    let names = pod.containers_where("/windowsOptions/hostProcess", |v| {
        v.and_then(Value::as_bool) == Some(true)
    });
    if !names.is_empty() {
        setters.push(containers(&names));
    }
    (!setters.is_empty()).then(|| Violation {
        reason: "hostProcess".into(),
        detail: format!(
            "{} must not set securityContext.windowsOptions.hostProcess=true",
            setters.join(" and ")
        ),
    })
}

fn allow_privilege_escalation(pod: &Pod) -> Option<Violation> {
    if pod.is_windows() {
        return None;
    }
    let names = pod.containers_where("/allowPrivilegeEscalation", |v| {
        v.and_then(Value::as_bool) != Some(false)
    });
    (!names.is_empty()).then(|| Violation {
        reason: "allowPrivilegeEscalation != false".into(),
        detail: format!(
            "{} must set securityContext.allowPrivilegeEscalation=false",
            containers(&names)
        ),
    })
}

fn capabilities_restricted(pod: &Pod) -> Option<Violation> {
    if pod.is_windows() {
        return None;
    }
    let mut not_dropping = Vec::new();
    let mut adding = Vec::new();
    let mut caps = BTreeSet::new();
    for container in &pod.containers {
        let drops = crate::object::strings_at(
            container
                .pointer("/securityContext/capabilities")
                .unwrap_or(&Value::Null),
            "drop",
        );
        if !drops.iter().any(|d| d == "ALL") {
            not_dropping.push(name(container));
        }
        let bad: Vec<String> = added_capabilities(container)
            .into_iter()
            .filter(|c| c != "NET_BIND_SERVICE")
            .collect();
        if !bad.is_empty() {
            adding.push(name(container));
            caps.extend(bad);
        }
    }
    let mut parts = Vec::new();
    if !not_dropping.is_empty() {
        parts.push(format!(
            "{} must set securityContext.capabilities.drop=[\"ALL\"]",
            containers(&not_dropping)
        ));
    }
    if !adding.is_empty() {
        parts.push(format!(
            "{} must not include {} in securityContext.capabilities.add",
            containers(&adding),
            join_quote(&caps.into_iter().collect::<Vec<_>>())
        ));
    }
    (!parts.is_empty()).then(|| Violation {
        reason: "unrestricted capabilities".into(),
        detail: parts.join("; "),
    })
}

const RESTRICTED_VOLUME_TYPES: [&str; 21] = [
    "hostPath",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "nfs",
    "iscsi",
    "glusterfs",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "fc",
    "azureFile",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "portworxVolume",
    "scaleIO",
    "storageos",
];
const ALLOWED_VOLUME_TYPES: [&str; 8] = [
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
];

fn restricted_volumes(pod: &Pod) -> Option<Violation> {
    let mut names = Vec::new();
    let mut types = BTreeSet::new();
    for volume in volumes(pod) {
        let sources: Vec<&String> = volume
            .as_object()
            .into_iter()
            .flat_map(|v| v.iter())
            .filter(|(k, v)| *k != "name" && !v.is_null())
            .map(|(k, _)| k)
            .collect();
        if sources
            .iter()
            .any(|s| ALLOWED_VOLUME_TYPES.contains(&s.as_str()))
        {
            continue;
        }
        names.push(name(volume));
        let kind = sources
            .iter()
            .find(|s| RESTRICTED_VOLUME_TYPES.contains(&s.as_str()))
            .map_or("unknown".to_string(), |s| s.to_string());
        types.insert(kind);
    }
    if names.is_empty() {
        return None;
    }
    let types: Vec<String> = types.into_iter().collect();
    violation(
        "restricted volume types",
        format!(
            "{} {} {} {} {}",
            pluralize("volume", "volumes", names.len()),
            join_quote(&names),
            pluralize("uses", "use", names.len()),
            pluralize(
                "restricted volume type",
                "restricted volume types",
                types.len()
            ),
            join_quote(&types)
        ),
    )
}

fn run_as_non_root(pod: &Pod) -> Option<Violation> {
    let pod_setting = pod.security("/runAsNonRoot").and_then(Value::as_bool);
    let mut setters = Vec::new();
    if pod_setting == Some(false) {
        setters.push("pod".to_string());
    }
    let explicit = pod.containers_where("/runAsNonRoot", |v| {
        v.and_then(Value::as_bool) == Some(false)
    });
    let implicit = if pod_setting == Some(true) {
        Vec::new()
    } else {
        pod.containers_where("/runAsNonRoot", |v| v.and_then(Value::as_bool).is_none())
    };
    if !explicit.is_empty() {
        setters.push(containers(&explicit));
    }
    let detail = if !setters.is_empty() {
        format!(
            "{} must not set securityContext.runAsNonRoot=false",
            setters.join(" and ")
        )
    } else if !implicit.is_empty() {
        format!(
            "pod or {} must set securityContext.runAsNonRoot=true",
            containers(&implicit)
        )
    } else {
        return None;
    };
    violation("runAsNonRoot != true", detail)
}

fn run_as_user(pod: &Pod) -> Option<Violation> {
    let mut setters = Vec::new();
    if pod.security("/runAsUser").and_then(Value::as_i64) == Some(0) {
        setters.push("pod".to_string());
    }
    let names = pod.containers_where("/runAsUser", |v| v.and_then(Value::as_i64) == Some(0));
    if !names.is_empty() {
        setters.push(containers(&names));
    }
    (!setters.is_empty()).then(|| Violation {
        reason: "runAsUser=0".into(),
        detail: format!("{} must not set runAsUser=0", setters.join(" and ")),
    })
}

fn seccomp_restricted(pod: &Pod) -> Option<Violation> {
    if pod.is_windows() {
        return None;
    }
    let pod_type = text(pod.security("/seccompProfile/type"));
    let pod_allowed = seccomp_allowed(pod_type);
    let mut setters = Vec::new();
    let mut values = BTreeSet::new();
    if !pod_type.is_empty() && !pod_allowed {
        setters.push("pod".to_string());
        values.insert(pod_type.to_string());
    }
    let mut explicit = Vec::new();
    let mut implicit = Vec::new();
    for container in &pod.containers {
        let t = text(container.pointer("/securityContext/seccompProfile/type"));
        if t.is_empty() {
            if !pod_allowed {
                implicit.push(name(container));
            }
        } else if !seccomp_allowed(t) {
            explicit.push(name(container));
            values.insert(t.to_string());
        }
    }
    if !explicit.is_empty() {
        setters.push(containers(&explicit));
    }
    let detail = if !setters.is_empty() {
        format!(
            "{} must not set securityContext.seccompProfile.type to {}",
            setters.join(" and "),
            join_quote(&values.into_iter().collect::<Vec<_>>())
        )
    } else if !implicit.is_empty() {
        format!(
            "pod or {} must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\"",
            containers(&implicit)
        )
    } else {
        return None;
    };
    violation("seccompProfile", detail)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_plain_pod_reads_as_upstreams_restricted_message() {
        let spec = json!({"containers": [{"name": "my-pod", "image": "nginx"}],
            "securityContext": {"sysctls": [{"name": "net.core.somaxconn", "value": "1"}, {"name": "kernel.msgmax", "value": "1"}],
                                "seLinuxOptions": {"user": "u", "role": "r"}}});
        assert_eq!(
            described(&evaluate(Level::Restricted, &json!({}), &spec)),
            r#"seLinuxOptions (pod set forbidden securityContext.seLinuxOptions: user may not be set; role may not be set), forbidden sysctls (net.core.somaxconn, kernel.msgmax), allowPrivilegeEscalation != false (container "my-pod" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "my-pod" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "my-pod" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "my-pod" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")"#
        );
    }

    #[test]
    fn baseline_checks_name_containers_ports_and_volumes() {
        let spec = json!({
        "hostNetwork": true, "hostIPC": true,
        "volumes": [{"name": "h", "hostPath": {"path": "/"}}, {"name": "ok", "emptyDir": {}}],
        "containers": [
            {"name": "a", "securityContext": {"privileged": true, "capabilities": {"add": ["SYS_ADMIN", "NET_RAW", "CHOWN"]}},
             "ports": [{"containerPort": 80, "hostPort": 8080}, {"containerPort": 81, "hostPort": 80}]},
            {"name": "b", "securityContext": {"capabilities": {"add": ["NET_RAW"]}, "procMount": "Unmasked"}}
        ]});
        assert_eq!(
            described(&evaluate(Level::Baseline, &json!({}), &spec)),
            r#"non-default capabilities (containers "a", "b" must not include "NET_RAW", "SYS_ADMIN" in securityContext.capabilities.add), host namespaces (hostNetwork=true, hostIPC=true), hostPath volumes (volume "h"), hostPort (container "a" uses hostPorts 80, 8080), privileged (container "a" must not set securityContext.privileged=true), procMount (container "b" must not set securityContext.procMount to "Unmasked")"#
        );
        let restricted = evaluate(Level::Restricted, &json!({}), &spec);
        assert!(restricted
            .iter()
            .any(|v| v.detail == r#"volume "h" uses restricted volume type "hostPath""#));
    }

    #[test]
    fn a_conforming_pod_passes_restricted() {
        let spec = json!({
            "securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
            "volumes": [{"name": "token", "projected": {"sources": []}}],
            "containers": [{"name": "c", "securityContext": {"allowPrivilegeEscalation": false,
                "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}}}]
        });
        assert_eq!(evaluate(Level::Restricted, &json!({}), &spec), Vec::new());
        let explicit = json!({"securityContext": {"runAsNonRoot": false, "runAsUser": 0},
            "containers": [{"name": "c", "securityContext": {"allowPrivilegeEscalation": false,
                "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "Unconfined"}}}]});
        assert_eq!(
            described(&evaluate(Level::Restricted, &json!({}), &explicit)),
            r#"runAsNonRoot != true (pod must not set securityContext.runAsNonRoot=false), runAsUser=0 (pod must not set runAsUser=0), seccompProfile (container "c" must not set securityContext.seccompProfile.type to "Unconfined")"#
        );
    }
}
