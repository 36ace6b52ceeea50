//! The other kinds: configuration, namespaces, nodes, storage, RBAC, networking, coordination, scheduling, autoscaling and policy.

use serde_json::json;

use super::*;

#[test]
fn config_map_rules() {
    let cm = json!({"data": {"a.conf": "x"}, "binaryData": {"b.bin": "AAE="}});
    create("", "ConfigMap", &cm, &[]);
    create("", "ConfigMap", &with(&cm, |c| c["data"]["bad key"] = json!("v")),
        &[(INVALID, "data[bad key]", "Invalid value: \"bad key\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')")]);
    create(
        "",
        "ConfigMap",
        &with(&cm, |c| c["data"]["b.bin"] = json!("v")),
        &[(
            INVALID,
            "data[b.bin]",
            "Invalid value: \"b.bin\": duplicate of key present in binaryData",
        )],
    );
    create(
        "",
        "ConfigMap",
        &with(&cm, |c| c["data"][".."] = json!("v")),
        &[(
            INVALID,
            "data[..]",
            "Invalid value: \"..\": must not be '..'",
        )],
    );
    create(
        "",
        "ConfigMap",
        &with(&cm, |c| c["data"]["big"] = json!("x".repeat(1024 * 1024))),
        &[(
            "FieldValueTooLong",
            "",
            "Too long: may not be more than 1048576 bytes",
        )],
    );
    let old = with(&cm, |c| c["immutable"] = json!(true));
    let changed = with(&old, |c| c["data"]["a.conf"] = json!("y"));
    expect(
        validate_update("", "ConfigMap", &changed, &old),
        &[(
            FORBIDDEN,
            "data",
            "Forbidden: field is immutable when `immutable` is set",
        )],
    );
    let unset = with(&old, |c| c["immutable"] = json!(false));
    expect(
        validate_update("", "ConfigMap", &unset, &old),
        &[(
            FORBIDDEN,
            "immutable",
            "Forbidden: field is immutable when `immutable` is set",
        )],
    );
    expect(validate_update("", "ConfigMap", &changed, &cm), &[]);
}

#[test]
fn secret_rules() {
    let opaque = json!({"type": "Opaque", "data": {"k": "dg=="}});
    create("", "Secret", &opaque, &[]);
    create(
        "",
        "Secret",
        &json!({"type": "kubernetes.io/tls", "data": {"tls.crt": "eA=="}}),
        &[(REQUIRED, "data[tls.key]", "Required value")],
    );
    create("", "Secret", &json!({"type": "kubernetes.io/dockerconfigjson", "data": {".dockerconfigjson": "W10="}}),
        &[(INVALID, "data[.dockerconfigjson]", "Invalid value: \"<secret contents redacted>\": json: cannot unmarshal array into Go value of type map[string]interface {}")]);
    create(
        "",
        "Secret",
        &json!({"type": "kubernetes.io/service-account-token", "metadata": {"name": "t"}}),
        &[(
            REQUIRED,
            "metadata.annotations[kubernetes.io/service-account.name]",
            "Required value",
        )],
    );
    create(
        "",
        "Secret",
        &json!({"type": "kubernetes.io/basic-auth", "data": {}}),
        &[
            (REQUIRED, "data[username]", "Required value"),
            (REQUIRED, "data[password]", "Required value"),
        ],
    );
    let retyped = with(&opaque, |s| s["type"] = json!("example.com/custom"));
    expect(
        validate_update("", "Secret", &retyped, &opaque),
        &[(
            INVALID,
            "type",
            "Invalid value: \"example.com/custom\": field is immutable",
        )],
    );
    let frozen = with(&opaque, |s| s["immutable"] = json!(true));
    let changed = with(&frozen, |s| s["data"]["k"] = json!("dw=="));
    expect(
        validate_update("", "Secret", &changed, &frozen),
        &[(
            FORBIDDEN,
            "data",
            "Forbidden: field is immutable when `immutable` is set",
        )],
    );
}

#[test]
fn namespace_and_finalizer_names() {
    create(
        "",
        "Namespace",
        &json!({"spec": {"finalizers": ["kubernetes"]}}),
        &[],
    );
    create("", "Namespace", &json!({"spec": {"finalizers": ["custom"]}}),
        &[(INVALID, "spec.finalizers", "Invalid value: \"custom\": name is neither a standard finalizer name nor is it fully qualified")]);
    create("", "Namespace", &json!({"spec": {"finalizers": ["example.com/bad/x"]}}),
        &[(INVALID, "spec.finalizers", "Invalid value: \"example.com/bad/x\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")]);
    create("", "Namespace", &json!({"metadata": {"finalizers": ["orphan", "wrong"]}}),
        &[(INVALID, "metadata.finalizers[1]", "Invalid value: \"wrong\": name is neither a standard finalizer name nor is it fully qualified")]);
}

#[test]
fn service_account_checks_only_metadata() {
    create(
        "",
        "ServiceAccount",
        &json!({"metadata": {"name": "sa"}, "secrets": [{"name": "s"}]}),
        &[],
    );
    create("", "ServiceAccount", &json!({"metadata": {"finalizers": ["mine"]}}),
        &[(INVALID, "metadata.finalizers[0]", "Invalid value: \"mine\": name is neither a standard finalizer name nor is it fully qualified")]);
    create("", "ServiceAccount", &json!({"metadata": {"finalizers": ["example.com/"]}}),
        &[
            (INVALID, "metadata.finalizers[0]", "Invalid value: \"example.com/\": name part must be non-empty"),
            (INVALID, "metadata.finalizers[0]", "Invalid value: \"example.com/\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"),
        ]);
    create(
        "",
        "ServiceAccount",
        &json!({"metadata": {"finalizers": ["/x"]}}),
        &[(
            INVALID,
            "metadata.finalizers[0]",
            "Invalid value: \"/x\": prefix part must be non-empty",
        )],
    );
}

#[test]
fn node_rules() {
    let node = json!({"spec": {"podCIDRs": ["10.244.0.0/24", "fd00::/64"], "taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]}});
    create("", "Node", &node, &[]);
    create("", "Node", &with(&node, |n| n["spec"]["taints"][0]["effect"] = json!("Sometimes")),
        &[(NOT_SUPPORTED, "metadata.taints[0].effect", "Unsupported value: \"Sometimes\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"")]);
    create(
        "",
        "Node",
        &with(&node, |n| n["spec"]["taints"][0]["effect"] = json!("")),
        &[(REQUIRED, "metadata.taints[0].effect", "Required value")],
    );
    create("", "Node", &with(&node, |n| n["spec"]["podCIDRs"] = json!(["10.244.0.0/33"])),
        &[(INVALID, "spec.podCIDRs[0]", "Invalid value: \"10.244.0.0/33\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)")]);
    create("", "Node", &with(&node, |n| n["spec"]["taints"] = json!([{"key": "a", "effect": "NoSchedule"}, {"key": "a", "effect": "NoSchedule"}])),
        &[(DUPLICATE, "metadata.taints[1]", "Duplicate value: core.Taint{Key:\"a\", Value:\"\", Effect:\"NoSchedule\", TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and effect pair")]);
    create("", "Node", &with(&node, |n| n["spec"]["podCIDRs"] = json!(["10.1.0.0/24", "10.2.0.0/24"])),
        &[(INVALID, "spec.podCIDRs", "Invalid value: []string{\"10.1.0.0/24\", \"10.2.0.0/24\"}: may specify no more than one CIDR for each IP family")]);
    let moved = with(&node, |n| {
        n["spec"]["podCIDRs"] = json!(["10.9.0.0/24", "fd00::/64"])
    });
    expect(
        validate_update("", "Node", &moved, &node),
        &[(
            FORBIDDEN,
            "spec.podCIDRs",
            "Forbidden: node updates may not change podCIDR except from \"\" to valid",
        )],
    );
    let fresh = json!({"spec": {}});
    expect(validate_update("", "Node", &node, &fresh), &[]);
}

#[test]
fn persistent_volume_rules() {
    let pv = json!({"spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"], "persistentVolumeReclaimPolicy": "Retain", "hostPath": {"path": "/data"}}});
    create("", "PersistentVolume", &pv, &[]);
    create(
        "",
        "PersistentVolume",
        &with(&pv, |p| p["spec"]["accessModes"] = json!([])),
        &[(REQUIRED, "spec.accessModes", "Required value")],
    );
    create(
        "",
        "PersistentVolume",
        &with(&pv, |p| {
            p["spec"].as_object_mut().unwrap().remove("capacity");
        }),
        &[
            (REQUIRED, "spec.capacity", "Required value"),
            (
                NOT_SUPPORTED,
                "spec.capacity",
                "Unsupported value: core.ResourceList(nil): supported values: \"storage\"",
            ),
        ],
    );
    create(
        "",
        "PersistentVolume",
        &with(&pv, |p| {
            p["spec"]["nfs"] = json!({"server": "s", "path": "/x"})
        }),
        &[(
            FORBIDDEN,
            "spec.nfs",
            "Forbidden: may not specify more than 1 volume type",
        )],
    );
    create(
        "",
        "PersistentVolume",
        &with(&pv, |p| {
            p["spec"].as_object_mut().unwrap().remove("hostPath");
        }),
        &[(
            REQUIRED,
            "spec",
            "Required value: must specify a volume type",
        )],
    );
    create("", "PersistentVolume", &with(&pv, |p| p["spec"]["accessModes"] = json!(["ReadWriteSometimes"])),
        &[(NOT_SUPPORTED, "spec.accessModes", "Unsupported value: \"ReadWriteSometimes\": supported values: \"ReadOnlyMany\", \"ReadWriteMany\", \"ReadWriteOnce\", \"ReadWriteOncePod\"")]);
    create(
        "",
        "PersistentVolume",
        &with(&pv, |p| p["spec"]["capacity"]["storage"] = json!("0")),
        &[(
            INVALID,
            "spec.capacity[storage]",
            "Invalid value: \"0\": must be greater than zero",
        )],
    );
    let moved = with(&pv, |p| p["spec"]["hostPath"]["path"] = json!("/other"));
    let errs = validate_update("", "PersistentVolume", &moved, &pv);
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0].field, "spec.persistentvolumesource");
    assert!(errs[0]
        .message
        .starts_with("Forbidden: spec.persistentvolumesource is immutable after creation\n"));
}

#[test]
fn persistent_volume_claim_rules() {
    let pvc = json!({"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, "volumeMode": "Filesystem"}});
    create("", "PersistentVolumeClaim", &pvc, &[]);
    create(
        "",
        "PersistentVolumeClaim",
        &with(&pvc, |p| p["spec"]["accessModes"] = json!([])),
        &[(
            REQUIRED,
            "spec.accessModes",
            "Required value: at least 1 access mode is required",
        )],
    );
    create(
        "",
        "PersistentVolumeClaim",
        &with(&pvc, |p| p["spec"]["resources"] = json!({})),
        &[(REQUIRED, "spec.resources[storage]", "Required value")],
    );
    create(
        "",
        "PersistentVolumeClaim",
        &with(&pvc, |p| p["spec"]["volumeMode"] = json!("Raw")),
        &[(
            NOT_SUPPORTED,
            "spec.volumeMode",
            "Unsupported value: \"Raw\": supported values: \"Block\", \"Filesystem\"",
        )],
    );
    create(
        "",
        "PersistentVolumeClaim",
        &with(&pvc, |p| {
            p["spec"]["accessModes"] = json!(["ReadWriteOncePod", "ReadOnlyMany"])
        }),
        &[(
            FORBIDDEN,
            "spec.accessModes",
            "Forbidden: may not use ReadWriteOncePod with other access modes",
        )],
    );
    // Unbound claims cannot change their spec; bound ones may grow.
    let grown = with(&pvc, |p| {
        p["spec"]["resources"]["requests"]["storage"] = json!("2Gi")
    });
    let errs = validate_update("", "PersistentVolumeClaim", &grown, &pvc);
    assert_eq!(errs.len(), 1);
    assert!(errs[0].message.starts_with("Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n"));
    let bound = with(&pvc, |p| {
        p["spec"]["volumeName"] = json!("pv1");
        p["status"] = json!({"phase": "Bound", "capacity": {"storage": "1Gi"}});
    });
    let bound_grown = with(&bound, |p| {
        p["spec"]["resources"]["requests"]["storage"] = json!("2Gi")
    });
    expect(
        validate_update("", "PersistentVolumeClaim", &bound_grown, &bound),
        &[],
    );
    let bound_shrunk = with(&bound, |p| {
        p["spec"]["resources"]["requests"]["storage"] = json!("512Mi")
    });
    expect(
        validate_update("", "PersistentVolumeClaim", &bound_shrunk, &bound),
        &[(
            FORBIDDEN,
            "spec.resources.requests.storage",
            "Forbidden: field can not be less than status.capacity",
        )],
    );
    let classed = with(&bound, |p| p["spec"]["storageClassName"] = json!("fast"));
    assert_eq!(
        validate_update("", "PersistentVolumeClaim", &classed, &bound)[0].field,
        "spec"
    );
    // The binder may set volumeName once.
    let named = with(&pvc, |p| p["spec"]["volumeName"] = json!("pv1"));
    expect(
        validate_update("", "PersistentVolumeClaim", &named, &pvc),
        &[],
    );
}

const RBAC: &str = "rbac.authorization.k8s.io";

#[test]
fn role_rules() {
    let role = json!({"rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]});
    create(RBAC, "Role", &role, &[]);
    create(
        RBAC,
        "Role",
        &with(&role, |r| r["rules"][0]["verbs"] = json!([])),
        &[(
            REQUIRED,
            "rules[0].verbs",
            "Required value: verbs must contain at least one value",
        )],
    );
    create(
        RBAC,
        "Role",
        &with(&role, |r| {
            r["rules"][0].as_object_mut().unwrap().remove("apiGroups");
        }),
        &[(
            REQUIRED,
            "rules[0].apiGroups",
            "Required value: resource rules must supply at least one api group",
        )],
    );
    create(RBAC, "Role", &json!({"rules": [{"nonResourceURLs": ["/healthz"], "verbs": ["get"]}]}),
        &[(INVALID, "rules[0].nonResourceURLs", "Invalid value: []string{\"/healthz\"}: namespaced rules cannot apply to non-resource URLs")]);
    create(
        RBAC,
        "ClusterRole",
        &json!({"rules": [{"nonResourceURLs": ["/healthz"], "verbs": ["get"]}]}),
        &[],
    );
    create(RBAC, "ClusterRole", &json!({"rules": [{"nonResourceURLs": ["/x"], "resources": ["pods"], "verbs": ["get"]}]}),
        &[(INVALID, "rules[0].nonResourceURLs", "Invalid value: []string{\"/x\"}: rules cannot apply to both regular resources and non-resource URLs")]);
    create(RBAC, "ClusterRole", &json!({"aggregationRule": {"clusterRoleSelectors": []}}),
        &[(REQUIRED, "aggregationRule.clusterRoleSelectors", "Required value: at least one clusterRoleSelector required if aggregationRule is non-nil")]);
    create(
        RBAC,
        "ClusterRole",
        &json!({"rules": [{"apiGroups": ["apps"], "verbs": ["list"]}]}),
        &[(
            REQUIRED,
            "rules[0].resources",
            "Required value: resource rules must supply at least one resource",
        )],
    );
}

#[test]
fn binding_rules_and_role_ref_immutability() {
    let binding = json!({"roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "reader"},
        "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": "d"}, {"kind": "User", "name": "jane", "apiGroup": RBAC}]});
    create(RBAC, "RoleBinding", &binding, &[]);
    create(
        RBAC,
        "RoleBinding",
        &with(&binding, |b| b["roleRef"]["kind"] = json!("Pod")),
        &[(
            NOT_SUPPORTED,
            "roleRef.kind",
            "Unsupported value: \"Pod\": supported values: \"Role\", \"ClusterRole\"",
        )],
    );
    create(
        RBAC,
        "RoleBinding",
        &with(&binding, |b| b["roleRef"]["name"] = json!("")),
        &[(REQUIRED, "roleRef.name", "Required value")],
    );
    create(RBAC, "RoleBinding", &with(&binding, |b| b["subjects"][0]["kind"] = json!("Robot")),
        &[(NOT_SUPPORTED, "subjects[0].kind", "Unsupported value: \"Robot\": supported values: \"ServiceAccount\", \"User\", \"Group\"")]);
    create(
        RBAC,
        "ClusterRoleBinding",
        &with(&binding, |b| b["roleRef"]["kind"] = json!("ClusterRole")),
        &[],
    );
    create(
        RBAC,
        "ClusterRoleBinding",
        &binding,
        &[(
            NOT_SUPPORTED,
            "roleRef.kind",
            "Unsupported value: \"Role\": supported values: \"ClusterRole\"",
        )],
    );
    create(
        RBAC,
        "ClusterRoleBinding",
        &with(&binding, |b| {
            b["roleRef"]["kind"] = json!("ClusterRole");
            b["subjects"][0]
                .as_object_mut()
                .unwrap()
                .remove("namespace");
        }),
        &[(REQUIRED, "subjects[0].namespace", "Required value")],
    );
    let moved = with(&binding, |b| b["roleRef"]["name"] = json!("writer"));
    expect(validate_update(RBAC, "RoleBinding", &moved, &binding),
        &[(INVALID, "roleRef", "Invalid value: rbac.RoleRef{APIGroup:\"rbac.authorization.k8s.io\", Kind:\"Role\", Name:\"writer\"}: cannot change roleRef")]);
    let more_subjects = with(&binding, |b| b["subjects"][1]["name"] = json!("joe"));
    expect(
        validate_update(RBAC, "RoleBinding", &more_subjects, &binding),
        &[],
    );
}

const NET: &str = "networking.k8s.io";

#[test]
fn ingress_rules() {
    let ing = json!({"spec": {"rules": [{"host": "example.com", "http": {"paths": [
        {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}});
    create(NET, "Ingress", &ing, &[]);
    create(NET, "Ingress", &json!({"spec": {}}),
        &[(INVALID, "spec", "Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified")]);
    create(
        NET,
        "Ingress",
        &with(&ing, |i| {
            i["spec"]["rules"][0]["http"]["paths"][0]
                .as_object_mut()
                .unwrap()
                .remove("pathType");
        }),
        &[(
            REQUIRED,
            "spec.rules[0].http.paths[0].pathType",
            "Required value: pathType must be specified",
        )],
    );
    create(NET, "Ingress", &with(&ing, |i| i["spec"]["rules"][0]["http"]["paths"][0]["pathType"] = json!("Regex")),
        &[(NOT_SUPPORTED, "spec.rules[0].http.paths[0].pathType", "Unsupported value: \"Regex\": supported values: \"Exact\", \"ImplementationSpecific\", \"Prefix\"")]);
    create(
        NET,
        "Ingress",
        &with(&ing, |i| {
            i["spec"]["rules"][0]["http"]["paths"][0]["path"] = json!("api")
        }),
        &[(
            INVALID,
            "spec.rules[0].http.paths[0].path",
            "Invalid value: \"api\": must be an absolute path",
        )],
    );
    create(
        NET,
        "Ingress",
        &with(&ing, |i| {
            i["spec"]["rules"][0]["http"]["paths"][0]["backend"] = json!({})
        }),
        &[(
            INVALID,
            "spec.rules[0].http.paths[0].backend",
            "Invalid value: \"\": resource or service backend is required",
        )],
    );
    create(
        NET,
        "Ingress",
        &with(&ing, |i| {
            i["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["port"] = json!({})
        }),
        &[(
            REQUIRED,
            "spec.rules[0].http.paths[0].backend",
            "Required value: port name or number is required",
        )],
    );
    create(
        NET,
        "Ingress",
        &with(&ing, |i| i["spec"]["rules"][0]["host"] = json!("10.0.0.1")),
        &[(
            INVALID,
            "spec.rules[0].host",
            "Invalid value: \"10.0.0.1\": must be a DNS name, not an IP address",
        )],
    );
    create(
        NET,
        "Ingress",
        &with(&ing, |i| {
            i["spec"]["rules"][0]["host"] = json!("*.example.com")
        }),
        &[],
    );
}

#[test]
fn network_policy_rules() {
    let np = json!({"spec": {"podSelector": {"matchLabels": {"app": "db"}}, "policyTypes": ["Ingress"],
        "ingress": [{"from": [{"podSelector": {"matchLabels": {"app": "web"}}}, {"ipBlock": {"cidr": "10.0.0.0/16", "except": ["10.0.1.0/24"]}}],
            "ports": [{"protocol": "TCP", "port": 5432}, {"port": "metrics"}]}]}});
    create(NET, "NetworkPolicy", &np, &[]);
    create(
        NET,
        "NetworkPolicy",
        &with(&np, |n| {
            n["spec"]["ingress"][0]["ports"][0]["protocol"] = json!("ICMP")
        }),
        &[(
            NOT_SUPPORTED,
            "spec.ingress[0].ports[0].protocol",
            "Unsupported value: \"ICMP\": supported values: \"TCP\", \"UDP\", \"SCTP\"",
        )],
    );
    create(
        NET,
        "NetworkPolicy",
        &with(&np, |n| {
            n["spec"]["ingress"][0]["ports"][0]["port"] = json!(0)
        }),
        &[(
            INVALID,
            "spec.ingress[0].ports[0].port",
            "Invalid value: 0: must be between 1 and 65535, inclusive",
        )],
    );
    create(
        NET,
        "NetworkPolicy",
        &with(&np, |n| n["spec"]["ingress"][0]["from"][0] = json!({})),
        &[(
            REQUIRED,
            "spec.ingress[0].from[0]",
            "Required value: must specify a peer",
        )],
    );
    create(
        NET,
        "NetworkPolicy",
        &with(&np, |n| {
            n["spec"]["ingress"][0]["from"][1]["ipBlock"]["except"] = json!(["192.168.0.0/24"])
        }),
        &[(
            INVALID,
            "spec.ingress[0].from[1].ipBlock.except[0]",
            "Invalid value: \"192.168.0.0/24\": must be a strict subset of `cidr`",
        )],
    );
    create(
        NET,
        "NetworkPolicy",
        &with(&np, |n| n["spec"]["policyTypes"] = json!(["Sideways"])),
        &[(
            NOT_SUPPORTED,
            "spec.policyTypes[0]",
            "Unsupported value: \"Sideways\": supported values: \"Ingress\", \"Egress\"",
        )],
    );
    create(
        NET,
        "NetworkPolicy",
        &with(&np, |n| {
            n["spec"]["ingress"][0]["ports"][0]["endPort"] = json!(5000)
        }),
        &[(
            INVALID,
            "spec.ingress[0].ports[0].endPort",
            "Invalid value: 5432: must be greater than or equal to `port`",
        )],
    );
}

const STORAGE: &str = "storage.k8s.io";

#[test]
fn storage_class_rules() {
    let sc = json!({"provisioner": "ebs.csi.aws.com", "parameters": {"type": "gp3"}, "reclaimPolicy": "Delete", "volumeBindingMode": "WaitForFirstConsumer"});
    create(STORAGE, "StorageClass", &sc, &[]);
    create(
        STORAGE,
        "StorageClass",
        &with(&sc, |s| s["provisioner"] = json!("")),
        &[(REQUIRED, "provisioner", "Required value")],
    );
    create(
        STORAGE,
        "StorageClass",
        &with(&sc, |s| s["reclaimPolicy"] = json!("Recycle")),
        &[(
            NOT_SUPPORTED,
            "reclaimPolicy",
            "Unsupported value: \"Recycle\": supported values: \"Delete\", \"Retain\"",
        )],
    );
    create(STORAGE, "StorageClass", &with(&sc, |s| s["volumeBindingMode"] = json!("Later")),
        &[(NOT_SUPPORTED, "volumeBindingMode", "Unsupported value: \"Later\": supported values: \"Immediate\", \"WaitForFirstConsumer\"")]);
    create(STORAGE, "StorageClass", &with(&sc, |s| s["provisioner"] = json!("bad provisioner")),
        &[(INVALID, "provisioner", "Invalid value: \"bad provisioner\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")]);
    let changed = with(&sc, |s| {
        s["parameters"]["type"] = json!("io2");
        s["provisioner"] = json!("x.example.com");
        s["reclaimPolicy"] = json!("Retain");
        s["volumeBindingMode"] = json!("Immediate");
    });
    expect(
        validate_update(STORAGE, "StorageClass", &changed, &sc),
        &[
            (
                FORBIDDEN,
                "parameters",
                "Forbidden: updates to parameters are forbidden.",
            ),
            (
                FORBIDDEN,
                "provisioner",
                "Forbidden: updates to provisioner are forbidden.",
            ),
            (
                FORBIDDEN,
                "reclaimPolicy",
                "Forbidden: updates to reclaimPolicy are forbidden.",
            ),
            (
                INVALID,
                "volumeBindingMode",
                "Invalid value: \"Immediate\": field is immutable",
            ),
        ],
    );
    let relabelled = with(&sc, |s| s["allowVolumeExpansion"] = json!(true));
    expect(
        validate_update(STORAGE, "StorageClass", &relabelled, &sc),
        &[],
    );
}

#[test]
fn lease_rules() {
    let lease = json!({"spec": {"holderIdentity": "node-1", "leaseDurationSeconds": 40, "leaseTransitions": 2}});
    create("coordination.k8s.io", "Lease", &lease, &[]);
    create(
        "coordination.k8s.io",
        "Lease",
        &with(&lease, |l| l["spec"]["leaseDurationSeconds"] = json!(0)),
        &[(
            INVALID,
            "spec.leaseDurationSeconds",
            "Invalid value: 0: must be greater than 0",
        )],
    );
    create(
        "coordination.k8s.io",
        "Lease",
        &with(&lease, |l| l["spec"]["leaseTransitions"] = json!(-1)),
        &[(
            INVALID,
            "spec.leaseTransitions",
            "Invalid value: -1: must be greater than or equal to 0",
        )],
    );
    create(
        "coordination.k8s.io",
        "Lease",
        &with(&lease, |l| l["spec"]["preferredHolder"] = json!("node-2")),
        &[(
            FORBIDDEN,
            "spec.preferredHolder",
            "Forbidden: may only be specified if `strategy` is defined",
        )],
    );
    create(
        "coordination.k8s.io",
        "Lease",
        &with(&lease, |l| l["spec"]["strategy"] = json!("Newest")),
        &[(
            NOT_SUPPORTED,
            "spec.strategy",
            "Unsupported value: \"Newest\": supported values: \"OldestEmulationVersion\"",
        )],
    );
}

#[test]
fn priority_class_rules() {
    let pc = json!({"metadata": {"name": "high"}, "value": 1000, "preemptionPolicy": "PreemptLowerPriority"});
    create("scheduling.k8s.io", "PriorityClass", &pc, &[]);
    create(
        "scheduling.k8s.io",
        "PriorityClass",
        &with(&pc, |p| p["value"] = json!(2_000_000_000)),
        &[(
            FORBIDDEN,
            "value",
            "Forbidden: maximum allowed value of a user defined priority is 1000000000",
        )],
    );
    create("scheduling.k8s.io", "PriorityClass", &with(&pc, |p| p["metadata"]["name"] = json!("system-custom")),
        &[(FORBIDDEN, "metadata.name", "Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-custom is not a known system priority class")]);
    create(
        "scheduling.k8s.io",
        "PriorityClass",
        &with(&pc, |p| p["preemptionPolicy"] = json!("Always")),
        &[(
            NOT_SUPPORTED,
            "preemptionPolicy",
            "Unsupported value: \"Always\": supported values: \"PreemptLowerPriority\", \"Never\"",
        )],
    );
    create(
        "scheduling.k8s.io",
        "PriorityClass",
        &json!({"metadata": {"name": "system-node-critical"}, "value": 2_000_001_000}),
        &[],
    );
    let raised = with(&pc, |p| p["value"] = json!(2000));
    expect(
        validate_update("scheduling.k8s.io", "PriorityClass", &raised, &pc),
        &[(
            FORBIDDEN,
            "value",
            "Forbidden: may not be changed in an update.",
        )],
    );
    let never = with(&pc, |p| p["preemptionPolicy"] = json!("Never"));
    expect(
        validate_update("scheduling.k8s.io", "PriorityClass", &never, &pc),
        &[(
            INVALID,
            "preemptionPolicy",
            "Invalid value: \"Never\": field is immutable",
        )],
    );
    let described = with(&pc, |p| p["description"] = json!("important"));
    expect(
        validate_update("scheduling.k8s.io", "PriorityClass", &described, &pc),
        &[],
    );
}

#[test]
fn horizontal_pod_autoscaler_rules() {
    let hpa = json!({"spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "minReplicas": 1, "maxReplicas": 5,
        "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]}});
    create("autoscaling", "HorizontalPodAutoscaler", &hpa, &[]);
    create(
        "autoscaling",
        "HorizontalPodAutoscaler",
        &with(&hpa, |h| h["spec"]["minReplicas"] = json!(0)),
        &[(
            INVALID,
            "spec.minReplicas",
            "Invalid value: 0: must be greater than or equal to 1",
        )],
    );
    create(
        "autoscaling",
        "HorizontalPodAutoscaler",
        &with(&hpa, |h| h["spec"]["maxReplicas"] = json!(0)),
        &[
            (
                INVALID,
                "spec.maxReplicas",
                "Invalid value: 0: must be greater than 0",
            ),
            (
                INVALID,
                "spec.maxReplicas",
                "Invalid value: 0: must be greater than or equal to `minReplicas`",
            ),
        ],
    );
    create(
        "autoscaling",
        "HorizontalPodAutoscaler",
        &with(&hpa, |h| h["spec"]["scaleTargetRef"]["name"] = json!("")),
        &[(REQUIRED, "spec.scaleTargetRef.name", "Required value")],
    );
}

#[test]
fn pod_disruption_budget_rules() {
    let pdb = json!({"spec": {"minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}}}});
    create("policy", "PodDisruptionBudget", &pdb, &[]);
    create("policy", "PodDisruptionBudget", &with(&pdb, |p| p["spec"]["minAvailable"] = json!("150%")),
        &[(INVALID, "spec.minAvailable", "Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"150%\"}: must not be greater than 100%")]);
    create(
        "policy",
        "PodDisruptionBudget",
        &with(&pdb, |p| p["spec"]["minAvailable"] = json!(-1)),
        &[(
            INVALID,
            "spec.minAvailable",
            "Invalid value: -1: must be greater than or equal to 0",
        )],
    );
    create("policy", "PodDisruptionBudget", &json!({"spec": {"maxUnavailable": "half"}}),
        &[(INVALID, "spec.maxUnavailable", "Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"half\"}: a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')")]);
    let both = validate_create(
        "policy",
        "PodDisruptionBudget",
        &with(&pdb, |p| p["spec"]["maxUnavailable"] = json!(1)),
    );
    assert_eq!(both.len(), 1);
    assert_eq!(both[0].field, "spec");
    assert!(both[0]
        .message
        .ends_with(": minAvailable and maxUnavailable cannot be both set"));
    create(
        "policy",
        "PodDisruptionBudget",
        &with(&pdb, |p| {
            p["spec"]["unhealthyPodEvictionPolicy"] = json!("Never")
        }),
        &[(
            NOT_SUPPORTED,
            "spec.unhealthyPodEvictionPolicy",
            "Unsupported value: \"Never\": supported values: \"AlwaysAllow\", \"IfHealthyBudget\"",
        )],
    );
}

#[test]
fn kinds_without_rules_of_their_own_are_not_validated() {
    create(
        "apps",
        "ControllerRevision",
        &json!({"data": {"anything": true}}),
        &[],
    );
    create("", "Endpoints", &json!({"subsets": []}), &[]);
}

#[test]
fn horizontal_pod_autoscaler_metric_rules() {
    let hpa = json!({"spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 3, "metrics": [{"type": "Memory"}]}});
    create("autoscaling", "HorizontalPodAutoscaler", &hpa,
        &[(NOT_SUPPORTED, "spec.metrics[0].type", "Unsupported value: \"Memory\": supported values: \"Object\", \"Pods\", \"Resource\", \"External\", \"ContainerResource\"")]);
    create(
        "autoscaling",
        "HorizontalPodAutoscaler",
        &with(&hpa, |h| {
            h["spec"]["metrics"][0] = json!({"type": "Resource"})
        }),
        &[(
            REQUIRED,
            "spec.metrics[0].resource",
            "Required value: must populate information for the given metric source",
        )],
    );
}
