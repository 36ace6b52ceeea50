//! Containers of a pod spec (containers, init and ephemeral containers):
//! ports, environment, security contexts, mounts, resources and probes.

use super::*;

/// The fields an ephemeral container may set (upstream's
/// allowedEphemeralContainerFields); the rest are forbidden there.
pub(super) const EPHEMERAL_CONTAINER_FIELDS: [&str; 17] = [
    "name",
    "image",
    "command",
    "args",
    "workingDir",
    "envFrom",
    "env",
    "volumeMounts",
    "volumeDevices",
    "terminationMessagePath",
    "terminationMessagePolicy",
    "imagePullPolicy",
    "securityContext",
    "stdin",
    "stdinOnce",
    "tty",
    "targetContainerName",
];
pub(super) const NOT_FOR_EPHEMERAL: &str = "cannot be set for an Ephemeral Container";

/// validateEphemeralContainers: each a valid container with a name unique
/// across the pod, a target that exists, none of the fields that would
/// make the workload rely on it, and no subPaths.
pub(super) fn ephemeral_containers(
    spec: &Value,
    volumes: &HashSet<String>,
    path: &str,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut names: HashSet<&str> = ["containers", "initContainers"]
        .iter()
        .flat_map(|list| list_of(spec, list))
        .map(|c| str_of(c, "name"))
        .collect();
    for (i, ctr) in list_of(spec, "ephemeralContainers").iter().enumerate() {
        let ctr_path = index(path, i);
        errs.extend(container_common(ctr, volumes, &ctr_path));
        let name = str_of(ctr, "name");
        if !names.insert(name) {
            errs.push(FieldError::duplicate(child(&ctr_path, "name"), name));
        }
        let target = str_of(ctr, "targetContainerName");
        if !target.is_empty() && !names.contains(target) {
            errs.push(FieldError::not_found(
                child(&ctr_path, "targetContainerName"),
                target,
            ));
        }
        for (key, value) in ctr.as_object().into_iter().flatten() {
            let set = !(value.is_null()
                || value.as_array().is_some_and(Vec::is_empty)
                || value.as_object().is_some_and(|m| m.is_empty())
                || value.as_str() == Some(""));
            if set && !EPHEMERAL_CONTAINER_FIELDS.contains(&key.as_str()) {
                errs.push(FieldError::forbidden(
                    child(&ctr_path, key),
                    NOT_FOR_EPHEMERAL,
                ));
            }
        }
        for (m, mount) in list_of(ctr, "volumeMounts").iter().enumerate() {
            for sub in ["subPath", "subPathExpr"] {
                if !str_of(mount, sub).is_empty() {
                    errs.push(FieldError::forbidden(
                        child(&index(&child(&ctr_path, "volumeMounts"), m), sub),
                        NOT_FOR_EPHEMERAL,
                    ));
                }
            }
        }
    }
    errs
}

pub(super) fn init_containers(
    spec: &Value,
    volumes: &HashSet<String>,
    path: &str,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut names: HashSet<&str> = list_of(spec, "containers")
        .iter()
        .map(|c| str_of(c, "name"))
        .collect();
    for (i, ctr) in list_of(spec, "initContainers").iter().enumerate() {
        let ctr_path = index(path, i);
        errs.extend(container_common(ctr, volumes, &ctr_path));
        let restart_always = match opt(ctr, "restartPolicy").and_then(Value::as_str) {
            Some("Always") => true,
            Some(other) => {
                errs.push(FieldError::not_supported(
                    child(&ctr_path, "restartPolicy"),
                    other,
                    &["Always"],
                ));
                false
            }
            None => false,
        };
        let name = str_of(ctr, "name");
        if names.contains(name) {
            errs.push(FieldError::duplicate(child(&ctr_path, "name"), name));
        } else if !name.is_empty() {
            names.insert(name);
        }
        errs.extend(host_port_conflicts(std::slice::from_ref(ctr), path));
        if restart_always {
            errs.extend(probes(ctr, &ctr_path));
        } else {
            for field_name in [
                "lifecycle",
                "livenessProbe",
                "readinessProbe",
                "startupProbe",
            ] {
                if opt(ctr, field_name).is_some() {
                    errs.push(FieldError::forbidden(
                        child(&ctr_path, field_name),
                        "may not be set for init containers without restartPolicy=Always",
                    ));
                }
            }
        }
    }
    errs
}

/// validateContainerCommon.
pub(super) fn container_common(
    ctr: &Value,
    volumes: &HashSet<String>,
    path: &str,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name_path = child(path, "name");
    let name = str_of(ctr, "name");
    if name.is_empty() {
        errs.push(FieldError::required(name_path, ""));
    } else {
        errs.extend(meta::name(NameRule::Label, name, &name_path));
    }
    if str_of(ctr, "image").is_empty() {
        errs.push(FieldError::required(child(path, "image"), ""));
    }
    match str_of(ctr, "terminationMessagePolicy") {
        "" | "File" | "FallbackToLogsOnError" => {}
        other => errs.push(FieldError::not_supported(
            child(path, "terminationMessagePolicy"),
            other,
            &["File", "FallbackToLogsOnError"],
        )),
    }
    errs.extend(container_ports(
        list_of(ctr, "ports"),
        &child(path, "ports"),
    ));
    errs.extend(env(list_of(ctr, "env"), &child(path, "env")));
    errs.extend(env_from(list_of(ctr, "envFrom"), &child(path, "envFrom")));
    errs.extend(volume_mounts(
        list_of(ctr, "volumeMounts"),
        volumes,
        &child(path, "volumeMounts"),
    ));
    match str_of(ctr, "imagePullPolicy") {
        "" | "Always" | "IfNotPresent" | "Never" => {}
        other => errs.push(FieldError::not_supported(
            child(path, "imagePullPolicy"),
            other,
            &["Always", "IfNotPresent", "Never"],
        )),
    }
    errs.extend(resources(
        field(ctr, "resources"),
        &child(path, "resources"),
    ));
    if let Some(context) = opt(ctr, "securityContext") {
        errs.extend(security_context(context, &child(path, "securityContext")));
    }
    errs
}

pub(super) fn container_ports(ports: &[Value], path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut names = HashSet::new();
    for (i, port) in ports.iter().enumerate() {
        let port_path = index(path, i);
        let name = str_of(port, "name");
        if !name.is_empty() {
            let problems = meta::port_name(name, &child(&port_path, "name"));
            if !problems.is_empty() {
                errs.extend(problems);
            } else if !names.insert(name) {
                errs.push(FieldError::duplicate(child(&port_path, "name"), name));
            }
        }
        let container_port = int_of(port, "containerPort").unwrap_or(0);
        if container_port == 0 {
            errs.push(FieldError::required(child(&port_path, "containerPort"), ""));
        } else {
            errs.extend(meta::port_number(
                container_port,
                &child(&port_path, "containerPort"),
            ));
        }
        // hostPort 0 is Go's zero value: unset.
        let host_port = int_of(port, "hostPort").unwrap_or(0);
        if host_port != 0 {
            errs.extend(meta::port_number(host_port, &child(&port_path, "hostPort")));
        }
        match str_of(port, "protocol") {
            "" | "TCP" | "UDP" | "SCTP" => {}
            other => errs.push(FieldError::not_supported(
                child(&port_path, "protocol"),
                other,
                &["SCTP", "TCP", "UDP"],
            )),
        }
    }
    errs
}

/// AccumulateUniqueHostPorts over one set of containers.
pub(super) fn host_port_conflicts(containers: &[Value], path: &str) -> Vec<FieldError> {
    let mut seen = HashSet::new();
    let mut errs = Vec::new();
    for (ci, ctr) in containers.iter().enumerate() {
        for (pi, port) in list_of(ctr, "ports").iter().enumerate() {
            let host_port = int_of(port, "hostPort").unwrap_or(0);
            if host_port == 0 {
                continue;
            }
            let protocol = match str_of(port, "protocol") {
                "" => "TCP",
                p => p,
            };
            let id = format!("{protocol}/{}/{host_port}", str_of(port, "hostIP"));
            if !seen.insert(id.clone()) {
                let port_path = index(&child(&index(path, ci), "ports"), pi);
                errs.push(FieldError::duplicate(child(&port_path, "hostPort"), &id));
            }
        }
    }
    errs
}

/// validatePodHostNetworkDeps: with hostNetwork, hostPort must equal
/// containerPort (templates may leave it 0).
pub(super) fn host_network_deps(spec: &Value, path: &str, is_pod: bool) -> Vec<FieldError> {
    if !bool_of(spec, "hostNetwork") {
        return Vec::new();
    }
    let mut errs = Vec::new();
    let containers_path = child(path, "containers");
    for (ci, ctr) in list_of(spec, "containers").iter().enumerate() {
        for (pi, port) in list_of(ctr, "ports").iter().enumerate() {
            let host = int_of(port, "hostPort").unwrap_or(0);
            let container = int_of(port, "containerPort").unwrap_or(0);
            if (is_pod || host != 0) && host != container {
                let port_path = index(&child(&index(&containers_path, ci), "ports"), pi);
                errs.push(FieldError::invalid_rendered(
                    child(&port_path, "hostPort"),
                    &host.to_string(),
                    "must match `containerPort` when `hostNetwork` is true",
                ));
            }
        }
    }
    errs
}

pub(super) const RELAXED_ENV_NAME_MSG: &str =
    "a valid environment variable name must consist only of printable ASCII characters other than '='";

pub(super) fn env_name_ok(name: &str) -> bool {
    !name
        .chars()
        .any(|c| !c.is_ascii() || c.is_ascii_control() || c == '=')
}

/// ValidateEnv, with 1.32's relaxed variable-name rule (on by default).
pub(super) fn env(vars: &[Value], path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, var) in vars.iter().enumerate() {
        let var_path = index(path, i);
        let name_path = child(&var_path, "name");
        let name = str_of(var, "name");
        if name.is_empty() {
            errs.push(FieldError::required(name_path, ""));
        } else if !env_name_ok(name) {
            errs.push(FieldError::invalid(name_path, name, RELAXED_ENV_NAME_MSG));
        }
        if let Some(from) = opt(var, "valueFrom") {
            errs.extend(env_value_from(
                from,
                !str_of(var, "value").is_empty(),
                &child(&var_path, "valueFrom"),
            ));
        }
    }
    errs
}

/// validateEnvVarValueFrom: exactly one source, and no literal value too.
pub(super) fn env_value_from(from: &Value, has_value: bool, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut sources = 0;
    for name in [
        "fieldRef",
        "resourceFieldRef",
        "configMapKeyRef",
        "secretKeyRef",
    ] {
        let Some(source) = opt(from, name) else {
            continue;
        };
        sources += 1;
        let source_path = child(path, name);
        match name {
            "fieldRef" => {
                if str_of(source, "fieldPath").is_empty() {
                    errs.push(FieldError::required(child(&source_path, "fieldPath"), ""));
                }
            }
            "resourceFieldRef" => {
                if str_of(source, "resource").is_empty() {
                    errs.push(FieldError::required(child(&source_path, "resource"), ""));
                }
            }
            _ => errs.extend(key_selector(source, &source_path)),
        }
    }
    if sources == 0 {
        errs.push(FieldError::invalid(
            path,
            "",
            "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`",
        ));
    } else if has_value {
        errs.push(FieldError::invalid(
            path,
            "",
            "may not be specified when `value` is not empty",
        ));
    } else if sources > 1 {
        errs.push(FieldError::invalid(
            path,
            "",
            "may not have more than one field specified at a time",
        ));
    }
    errs
}

/// validateConfigMapKeySelector / validateSecretKeySelector.
pub(super) fn key_selector(selector: &Value, path: &str) -> Vec<FieldError> {
    let name = str_of(selector, "name");
    let mut errs: Vec<FieldError> =
        crate::validate::object_meta::name_problems(NameRule::Subdomain, name, false)
            .iter()
            .map(|msg| FieldError::invalid(child(path, "name"), name, msg))
            .collect();
    let key_name = str_of(selector, "key");
    if key_name.is_empty() {
        errs.push(FieldError::required(child(path, "key"), ""));
    } else {
        errs.extend(crate::validate::object_meta::config_map_key(
            &child(path, "key"),
            key_name,
        ));
    }
    errs
}

/// ValidateEnvFrom: one of configMapRef and secretRef per entry.
pub(super) fn env_from(sources: &[Value], path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, source) in sources.iter().enumerate() {
        let source_path = index(path, i);
        let prefix = str_of(source, "prefix");
        if !prefix.is_empty() && !env_name_ok(prefix) {
            errs.push(FieldError::invalid(
                child(&source_path, "prefix"),
                prefix,
                RELAXED_ENV_NAME_MSG,
            ));
        }
        let mut count = 0;
        for name in ["configMapRef", "secretRef"] {
            let Some(reference) = opt(source, name) else {
                continue;
            };
            count += 1;
            let ref_name = str_of(reference, "name");
            let name_path = child(&child(&source_path, name), "name");
            if ref_name.is_empty() {
                errs.push(FieldError::required(name_path, ""));
            } else {
                for msg in
                    crate::validate::object_meta::name_problems(NameRule::Subdomain, ref_name, true)
                {
                    errs.push(FieldError::invalid(&name_path, ref_name, &msg));
                }
            }
        }
        // Upstream reports these on the list path.
        if count == 0 {
            errs.push(FieldError::invalid(
                path,
                "",
                "must specify one of: `configMapRef` or `secretRef`",
            ));
        } else if count > 1 {
            errs.push(FieldError::invalid(
                path,
                "",
                "may not have more than one field specified at a time",
            ));
        }
    }
    errs
}

/// IsValidUserID / IsValidGroupID.
pub(super) fn id_range(value: Option<i64>, path: &str) -> Option<FieldError> {
    let value = value?;
    (!(0..=MAX_INT32).contains(&value)).then(|| {
        FieldError::invalid_rendered(
            path,
            &value.to_string(),
            "must be between 0 and 2147483647, inclusive",
        )
    })
}

/// validatePodSpecSecurityContext's id ranges.
pub(super) fn pod_security_context(context: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for name in ["fsGroup", "runAsUser", "runAsGroup"] {
        errs.extend(id_range(int_of(context, name), &child(path, name)));
    }
    for (i, gid) in list_of(context, "supplementalGroups").iter().enumerate() {
        errs.extend(id_range(
            gid.as_i64(),
            &index(&child(path, "supplementalGroups"), i),
        ));
    }
    errs
}

/// ValidateSecurityContext: id ranges and privilege-escalation conflicts.
pub(super) fn security_context(context: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for name in ["runAsUser", "runAsGroup"] {
        errs.extend(id_range(int_of(context, name), &child(path, name)));
    }
    let no_escalation =
        opt(context, "allowPrivilegeEscalation").and_then(Value::as_bool) == Some(false);
    if no_escalation {
        // The bad value is the whole context; Go prints its pointers as
        // addresses, so only its shape is kept.
        let rendered = "&core.SecurityContext{...}";
        if opt(context, "privileged").and_then(Value::as_bool) == Some(true) {
            errs.push(FieldError::invalid_rendered(
                path,
                rendered,
                "cannot set `allowPrivilegeEscalation` to false and `privileged` to true",
            ));
        }
        let capabilities = field(context, "capabilities");
        for cap in list_of(capabilities, "add") {
            if cap.as_str() == Some("CAP_SYS_ADMIN") {
                errs.push(FieldError::invalid_rendered(
                    path,
                    rendered,
                    "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN",
                ));
            }
        }
    }
    errs
}

pub(super) fn volume_mounts(
    mounts: &[Value],
    volumes: &HashSet<String>,
    path: &str,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut mount_points = HashSet::new();
    for (i, mount) in mounts.iter().enumerate() {
        let mount_path = index(path, i);
        let name = str_of(mount, "name");
        if name.is_empty() {
            errs.push(FieldError::required(child(&mount_path, "name"), ""));
        }
        if !volumes.contains(name) {
            errs.push(FieldError::not_found(child(&mount_path, "name"), name));
        }
        let target = str_of(mount, "mountPath");
        if target.is_empty() {
            errs.push(FieldError::required(child(&mount_path, "mountPath"), ""));
        }
        if !mount_points.insert(target) {
            errs.push(FieldError::invalid(
                child(&mount_path, "mountPath"),
                target,
                "must be unique",
            ));
        }
        // Upstream reports subPath problems on the list path, not the item.
        let sub_path = str_of(mount, "subPath");
        if !sub_path.is_empty() {
            errs.extend(local_descending_path(sub_path, &child(path, "subPath")));
        }
    }
    errs
}

/// validateLocalDescendingPath.
pub(super) fn local_descending_path(target: &str, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if target.starts_with('/') {
        errs.push(FieldError::invalid(path, target, "must be a relative path"));
    }
    if target.split('/').any(|part| part == "..") {
        errs.push(FieldError::invalid(path, target, "must not contain '..'"));
    }
    errs
}

/// Resource names a container may request without a domain prefix.
pub(super) fn standard_container_resource(name: &str) -> bool {
    matches!(name, "cpu" | "memory" | "ephemeral-storage") || name.starts_with("hugepages-")
}

/// Whether requests may be below limits (native, non-hugepage resources).
pub(super) fn overcommit_allowed(name: &str) -> bool {
    let native = !name.contains('/') || name.contains("kubernetes.io/");
    native && !name.starts_with("hugepages-")
}

/// ValidateContainerResourceRequirements: names, quantities, requests ≤ limits.
pub fn resources(res: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let limits_path = child(path, "limits");
    let requests_path = child(path, "requests");
    let mut limits = std::collections::HashMap::new();
    for (name, raw) in map_of(res, "limits").into_iter().flatten() {
        let key_path = key(&limits_path, name);
        errs.extend(resource_name(name, &key_path));
        if let Some(q) = resource_quantity(raw, &key_path, &mut errs) {
            limits.insert(name.as_str(), q);
        }
    }
    for (name, raw) in map_of(res, "requests").into_iter().flatten() {
        let key_path = key(&requests_path, name);
        errs.extend(resource_name(name, &key_path));
        let Some(request) = resource_quantity(raw, &key_path, &mut errs) else {
            continue;
        };
        match limits.get(name.as_str()) {
            Some(limit) if request != *limit && !overcommit_allowed(name) => {
                errs.push(FieldError::invalid(
                    &requests_path,
                    &request.canonical(),
                    &format!("must be equal to {name} limit of {}", limit.canonical()),
                ))
            }
            Some(limit) if request > *limit => errs.push(FieldError::invalid(
                &requests_path,
                &request.canonical(),
                &format!(
                    "must be less than or equal to {name} limit of {}",
                    limit.canonical()
                ),
            )),
            Some(_) => {}
            None if !overcommit_allowed(name) => errs.push(FieldError::required(
                &limits_path,
                "Limit must be set for non overcommitable resources",
            )),
            None => {}
        }
    }
    errs
}

/// Unprefixed resource names upstream knows (IsStandardResourceName).
pub(super) fn standard_resource(name: &str) -> bool {
    matches!(
        name,
        "cpu"
            | "memory"
            | "ephemeral-storage"
            | "requests.cpu"
            | "requests.memory"
            | "requests.ephemeral-storage"
            | "limits.cpu"
            | "limits.memory"
            | "limits.ephemeral-storage"
            | "pods"
            | "services"
            | "replicationcontrollers"
            | "resourcequotas"
            | "secrets"
            | "persistentvolumeclaims"
            | "configmaps"
            | "services.nodeports"
            | "services.loadbalancers"
            | "storage"
            | "requests.storage"
    ) || name.starts_with("hugepages-")
        || name.starts_with("requests.hugepages-")
}

/// validateContainerResourceName.
pub(super) fn resource_name(name: &str, path: &str) -> Vec<FieldError> {
    let mut errs: Vec<FieldError> = meta::qualified_name_problems(name)
        .iter()
        .map(|msg| FieldError::invalid(path, name, msg))
        .collect();
    let unprefixed = !name.contains('/');
    if errs.is_empty() && unprefixed && !standard_resource(name) {
        errs.push(FieldError::invalid(
            path,
            name,
            "must be a standard resource type or fully qualified",
        ));
    }
    if unprefixed && !standard_container_resource(name) {
        errs.push(FieldError::invalid(
            path,
            name,
            "must be a standard resource for containers",
        ));
    }
    errs
}

/// A quantity that parses and is not negative; errors otherwise.
pub(super) fn resource_quantity(
    raw: &Value,
    path: &str,
    errs: &mut Vec<FieldError>,
) -> Option<quantity::Quantity> {
    match quantity::from_json(raw) {
        Err(_) => {
            let text = raw.as_str().map_or_else(|| raw.to_string(), str::to_string);
            errs.push(FieldError::invalid(path, &text, QUANTITY_FORMAT_MSG));
            None
        }
        Ok(q) if q.is_negative() => {
            errs.push(FieldError::invalid(path, &q.canonical(), NEGATIVE_MSG));
            None
        }
        Ok(q) => Some(q),
    }
}

/// Lifecycle hooks and probes (regular and restartable init containers).
pub(super) fn probes(ctr: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(lifecycle) = opt(ctr, "lifecycle") {
        for hook in ["postStart", "preStop"] {
            if let Some(action) = opt(lifecycle, hook) {
                errs.extend(handler(action, &child(&child(path, "lifecycle"), hook)));
            }
        }
    }
    for (name, needs_one_success) in [
        ("livenessProbe", true),
        ("readinessProbe", false),
        ("startupProbe", true),
    ] {
        let Some(probe) = opt(ctr, name) else {
            continue;
        };
        let probe_path = child(path, name);
        errs.extend(probe_fields(probe, &probe_path));
        if name == "readinessProbe" {
            if let Some(grace) = int_of(probe, "terminationGracePeriodSeconds") {
                errs.push(FieldError::invalid_rendered(
                    child(&probe_path, "terminationGracePeriodSeconds"),
                    &grace.to_string(),
                    "must not be set for readinessProbes",
                ));
            }
        }
        if needs_one_success {
            if let Some(threshold) =
                int_of(probe, "successThreshold").filter(|t| *t != 1 && *t != 0)
            {
                errs.push(FieldError::invalid_rendered(
                    child(&probe_path, "successThreshold"),
                    &threshold.to_string(),
                    "must be 1",
                ));
            }
        }
    }
    errs
}

pub(super) fn probe_fields(probe: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = handler(probe, path);
    for name in [
        "initialDelaySeconds",
        "timeoutSeconds",
        "periodSeconds",
        "successThreshold",
        "failureThreshold",
    ] {
        if let Some(value) = int_of(probe, name) {
            errs.extend(meta::nonnegative(value, &child(path, name)));
        }
    }
    if let Some(grace) = int_of(probe, "terminationGracePeriodSeconds").filter(|g| *g <= 0) {
        errs.push(FieldError::invalid_rendered(
            child(path, "terminationGracePeriodSeconds"),
            &grace.to_string(),
            "must be greater than 0",
        ));
    }
    errs
}

/// validateHandler: exactly one probe/lifecycle action.
pub(super) fn handler(action: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut count = 0;
    for name in ["exec", "httpGet", "tcpSocket", "grpc", "sleep"] {
        let Some(body) = opt(action, name) else {
            continue;
        };
        let body_path = child(path, name);
        if count > 0 {
            errs.push(FieldError::forbidden(
                body_path,
                "may not specify more than 1 handler type",
            ));
            continue;
        }
        count += 1;
        match name {
            "exec" if list_of(body, "command").is_empty() => {
                errs.push(FieldError::required(child(&body_path, "command"), ""));
            }
            "httpGet" | "tcpSocket" => {
                errs.extend(port_num_or_name(
                    field(body, "port"),
                    &child(&body_path, "port"),
                ));
                if name == "httpGet" {
                    match str_of(body, "scheme") {
                        "" | "HTTP" | "HTTPS" => {}
                        other => errs.push(FieldError::not_supported(
                            child(&body_path, "scheme"),
                            other,
                            &["HTTP", "HTTPS"],
                        )),
                    }
                }
            }
            _ => {}
        }
    }
    if count == 0 {
        errs.push(FieldError::required(path, "must specify a handler type"));
    }
    errs
}

/// ValidatePortNumOrName over an IntOrString.
pub(super) fn port_num_or_name(port: &Value, path: &str) -> Vec<FieldError> {
    match port {
        Value::String(name) => meta::port_name(name, path),
        other => meta::port_number(other.as_i64().unwrap_or(0), path)
            .into_iter()
            .collect(),
    }
}
