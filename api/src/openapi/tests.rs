use std::time::Instant;

use serde_json::{json, Value};
use sha2::{Digest, Sha512};

use super::*;

const ALL_VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

fn resource(
    group: &str,
    version: &str,
    kind: &str,
    plural: &str,
    namespaced: bool,
    definition: &str,
) -> OpenApiResource {
    OpenApiResource {
        group: group.into(),
        version: version.into(),
        kind: kind.into(),
        resource: plural.into(),
        namespaced,
        verbs: ALL_VERBS.iter().map(|v| (*v).to_owned()).collect(),
        definition: definition.into(),
        schema: None,
    }
}

fn served() -> Vec<OpenApiResource> {
    vec![
        resource(
            "",
            "v1",
            "ConfigMap",
            "configmaps",
            true,
            "io.k8s.api.core.v1.ConfigMap",
        ),
        resource(
            "",
            "v1",
            "Secret",
            "secrets",
            true,
            "io.k8s.api.core.v1.Secret",
        ),
        resource("", "v1", "Pod", "pods", true, "io.k8s.api.core.v1.Pod"),
        resource(
            "",
            "v1",
            "Service",
            "services",
            true,
            "io.k8s.api.core.v1.Service",
        ),
        resource(
            "",
            "v1",
            "Namespace",
            "namespaces",
            false,
            "io.k8s.api.core.v1.Namespace",
        ),
        resource("", "v1", "Node", "nodes", false, "io.k8s.api.core.v1.Node"),
        resource(
            "",
            "v1",
            "Event",
            "events",
            true,
            "io.k8s.api.core.v1.Event",
        ),
        resource(
            "",
            "v1",
            "ServiceAccount",
            "serviceaccounts",
            true,
            "io.k8s.api.core.v1.ServiceAccount",
        ),
        resource(
            "",
            "v1",
            "PersistentVolumeClaim",
            "persistentvolumeclaims",
            true,
            "io.k8s.api.core.v1.PersistentVolumeClaim",
        ),
        resource(
            "apps",
            "v1",
            "Deployment",
            "deployments",
            true,
            "io.k8s.api.apps.v1.Deployment",
        ),
        resource(
            "apps",
            "v1",
            "ReplicaSet",
            "replicasets",
            true,
            "io.k8s.api.apps.v1.ReplicaSet",
        ),
        resource(
            "apps",
            "v1",
            "StatefulSet",
            "statefulsets",
            true,
            "io.k8s.api.apps.v1.StatefulSet",
        ),
        resource(
            "apps",
            "v1",
            "DaemonSet",
            "daemonsets",
            true,
            "io.k8s.api.apps.v1.DaemonSet",
        ),
        resource(
            "batch",
            "v1",
            "Job",
            "jobs",
            true,
            "io.k8s.api.batch.v1.Job",
        ),
        resource(
            "rbac.authorization.k8s.io",
            "v1",
            "ClusterRole",
            "clusterroles",
            false,
            "io.k8s.api.rbac.v1.ClusterRole",
        ),
        resource(
            "coordination.k8s.io",
            "v1",
            "Lease",
            "leases",
            true,
            "io.k8s.api.coordination.v1.Lease",
        ),
        resource(
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
            "customresourcedefinitions",
            false,
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition",
        ),
    ]
}

fn documents() -> OpenApiDocuments {
    match OpenApiDocuments::build(&served()) {
        Ok(docs) => docs,
        Err(err) => panic!("build failed: {err}"),
    }
}

fn parse(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).expect("document is JSON")
}

/// A group-version document, inflated if it is not held.
fn group_version(docs: &OpenApiDocuments, path: &str) -> Option<Arc<[u8]>> {
    docs.v3_group_version(path).expect("document builds")
}

fn v3(docs: &OpenApiDocuments, path: &str) -> Value {
    parse(&group_version(docs, path).expect("group-version document"))
}

fn gvk(group: &str, version: &str, kind: &str) -> Value {
    json!({"group": group, "kind": kind, "version": version})
}

/// What kubectl's v3 query-param verifier concludes for `gvk`: the first PATCH
/// operation of that GVK decides, and Go iterates paths in random order, so
/// every such operation has to agree.
fn v3_patch_supports(doc: &Value, gvk: &Value, param: &str) -> Option<bool> {
    let mut verdicts = doc["paths"]
        .as_object()?
        .values()
        .filter_map(|item| item.get("patch"))
        .filter(|op| &op["x-kubernetes-group-version-kind"] == gvk)
        .map(|op| {
            op["parameters"]
                .as_array()
                .is_some_and(|ps| ps.iter().any(|p| p["name"] == param))
        });
    let first = verdicts.next()?;
    assert!(verdicts.all(|v| v == first), "PATCH operations disagree");
    Some(first)
}

/// Follows `$ref` and single `allOf` the way kubectl explain does.
fn resolve<'a>(doc: &'a Value, mut schema: &'a Value, prefix: &str) -> &'a Value {
    loop {
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            let name = reference
                .strip_prefix(prefix)
                .expect("ref has the flavour's prefix");
            let defs = if prefix.starts_with("#/components") {
                &doc["components"]["schemas"]
            } else {
                &doc["definitions"]
            };
            schema = defs
                .get(name)
                .unwrap_or_else(|| panic!("dangling ref {reference}"));
        } else if let Some([only]) = schema
            .get("allOf")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
        {
            schema = only;
        } else {
            return schema;
        }
    }
}

fn all_refs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                match (k.as_str(), v) {
                    ("$ref", Value::String(reference)) => out.push(reference.clone()),
                    _ => all_refs(v, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| all_refs(v, out)),
        _ => {}
    }
}

#[test]
fn v3_index_lists_group_versions_with_their_hashes() {
    let docs = documents();
    let index = parse(docs.v3_index());
    let paths = index["paths"].as_object().expect("paths");
    for gv in [
        "api/v1",
        "apis/apps/v1",
        "apis/batch/v1",
        "apis/rbac.authorization.k8s.io/v1",
    ] {
        let url = paths[gv]["serverRelativeURL"]
            .as_str()
            .expect("serverRelativeURL");
        let hash = docs.v3_hash(gv).expect("hash");
        assert_eq!(url, format!("/openapi/v3/{gv}?hash={hash}"));
        let bytes = group_version(&docs, gv).expect("document");
        let expected: String = Sha512::digest(bytes)
            .iter()
            .map(|b| format!("{b:02X}"))
            .collect();
        assert_eq!(hash, expected);
        assert_eq!(hash.len(), 128);
    }
    assert_eq!(
        group_version(&docs, "/api/v1"),
        group_version(&docs, "api/v1")
    );
    assert!(group_version(&docs, "apis/nope/v1").is_none());
}

#[test]
fn apps_v1_patch_takes_field_validation() {
    let docs = documents();
    let apps = v3(&docs, "apis/apps/v1");
    let deployment = gvk("apps", "v1", "Deployment");
    assert_eq!(
        v3_patch_supports(&apps, &deployment, "fieldValidation"),
        Some(true)
    );
    assert_eq!(
        v3_patch_supports(&apps, &deployment, "noSuchParam"),
        Some(false)
    );
    let op = &apps["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"];
    assert_eq!(op["operationId"], "patchAppsV1NamespacedDeployment");
    assert_eq!(op["x-kubernetes-action"], "patch");
    let content = op["requestBody"]["content"].as_object().expect("content");
    for media_type in [
        "application/json-patch+json",
        "application/merge-patch+json",
        "application/strategic-merge-patch+json",
        "application/apply-patch+yaml",
    ] {
        assert!(content.contains_key(media_type), "{media_type}");
    }
    let params: Vec<&str> = op["parameters"]
        .as_array()
        .expect("parameters")
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    for name in ["dryRun", "fieldManager", "fieldValidation", "force"] {
        assert!(params.contains(&name), "{name}");
    }

    let core = v3(&docs, "api/v1");
    assert_eq!(
        v3_patch_supports(&core, &gvk("", "v1", "ConfigMap"), "fieldValidation"),
        Some(true)
    );
    // The Namespace answer is what kubectl uses for custom resources.
    assert_eq!(
        v3_patch_supports(&core, &gvk("", "v1", "Namespace"), "fieldValidation"),
        Some(true)
    );
}

#[test]
fn v2_patch_takes_field_validation_and_strategic_merge() {
    let docs = documents();
    let v2 = parse(docs.v2().expect("v2"));
    assert_eq!(v2["swagger"], "2.0");
    assert_eq!(v2["info"]["title"], "Kubernetes");
    let op = &v2["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"];
    assert_eq!(
        op["x-kubernetes-group-version-kind"],
        gvk("apps", "v1", "Deployment")
    );
    let params = op["parameters"].as_array().expect("parameters");
    assert!(params
        .iter()
        .any(|p| p["name"] == "fieldValidation" && p["in"] == "query" && p["type"] == "string"));
    assert!(params.iter().any(|p| p["in"] == "body"
        && p["schema"]["$ref"] == "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"));
    let consumes = op["consumes"].as_array().expect("consumes");
    assert!(consumes.contains(&json!("application/strategic-merge-patch+json")));
}

#[test]
fn operation_ids_and_paths_follow_upstream() {
    let docs = documents();
    let core = v3(&docs, "api/v1");
    let paths = &core["paths"];
    let configmap = &paths["/api/v1/namespaces/{namespace}/configmaps/{name}"];
    assert_eq!(
        configmap["get"]["operationId"],
        "readCoreV1NamespacedConfigMap"
    );
    assert_eq!(
        configmap["put"]["operationId"],
        "replaceCoreV1NamespacedConfigMap"
    );
    assert_eq!(
        configmap["delete"]["operationId"],
        "deleteCoreV1NamespacedConfigMap"
    );
    let collection = &paths["/api/v1/namespaces/{namespace}/configmaps"];
    assert_eq!(
        collection["get"]["operationId"],
        "listCoreV1NamespacedConfigMap"
    );
    assert_eq!(
        collection["post"]["operationId"],
        "createCoreV1NamespacedConfigMap"
    );
    assert_eq!(
        collection["delete"]["operationId"],
        "deleteCoreV1CollectionNamespacedConfigMap"
    );
    let list_params: Vec<&str> = collection["get"]["parameters"]
        .as_array()
        .expect("parameters")
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    for name in [
        "labelSelector",
        "fieldSelector",
        "limit",
        "continue",
        "resourceVersion",
        "watch",
    ] {
        assert!(list_params.contains(&name), "{name}");
    }
    assert_eq!(
        paths["/api/v1/configmaps"]["get"]["operationId"],
        "listCoreV1ConfigMapForAllNamespaces"
    );
    assert_eq!(
        paths["/api/v1/namespaces/{name}"]["get"]["operationId"],
        "readCoreV1Namespace"
    );
    assert!(paths
        .get("/api/v1/namespaces/{namespace}/namespaces")
        .is_none());
    let path_params = configmap["parameters"].as_array().expect("path parameters");
    assert!(path_params
        .iter()
        .any(|p| p["name"] == "namespace" && p["required"] == true));
    assert!(path_params.iter().any(|p| p["name"] == "pretty"));

    let rbac = v3(&docs, "apis/rbac.authorization.k8s.io/v1");
    assert_eq!(
        rbac["paths"]["/apis/rbac.authorization.k8s.io/v1/clusterroles/{name}"]["get"]
            ["operationId"],
        "readRbacAuthorizationV1ClusterRole"
    );
    assert_eq!(
        rbac["paths"]["/apis/rbac.authorization.k8s.io/v1/clusterroles"]["get"]["tags"],
        json!(["rbacAuthorization_v1"])
    );
    assert_eq!(configmap["get"]["tags"], json!(["core_v1"]));
    assert_eq!(rbac["openapi"], "3.0.0");
    assert_eq!(rbac["info"]["title"], "Kubernetes");
}

#[test]
fn explain_walks_deployment_spec_strategy() {
    let docs = documents();
    let apps = v3(&docs, "apis/apps/v1");
    let prefix = "#/components/schemas/";
    // kubectl explain takes the GVK from the resource's list path...
    let list_gvk = &apps["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments"]["get"]
        ["x-kubernetes-group-version-kind"];
    assert_eq!(list_gvk, &gvk("apps", "v1", "Deployment"));
    // ...then the schema whose GVK list contains it.
    let schemas = apps["components"]["schemas"].as_object().expect("schemas");
    let found: Vec<&String> = schemas
        .iter()
        .filter(|(_, s)| {
            s["x-kubernetes-group-version-kind"]
                .as_array()
                .is_some_and(|l| l.contains(list_gvk))
        })
        .map(|(name, _)| name)
        .collect();
    assert_eq!(found, ["io.k8s.api.apps.v1.Deployment"]);
    let deployment = &schemas["io.k8s.api.apps.v1.Deployment"];
    assert!(deployment["description"]
        .as_str()
        .is_some_and(|d| !d.is_empty()));

    let spec_field = &deployment["properties"]["spec"];
    assert!(spec_field["description"]
        .as_str()
        .is_some_and(|d| !d.is_empty()));
    // OpenAPI 3.0 ignores `$ref` siblings, so described refs are wrapped.
    assert!(spec_field.get("$ref").is_none());
    let spec = resolve(&apps, spec_field, prefix);
    let strategy_field = &spec["properties"]["strategy"];
    assert!(strategy_field["description"]
        .as_str()
        .is_some_and(|d| !d.is_empty()));
    let strategy = resolve(&apps, strategy_field, prefix);
    assert!(strategy["description"]
        .as_str()
        .is_some_and(|d| d.contains("replace existing pods")));
    assert!(strategy["properties"]["rollingUpdate"].is_object());
    assert!(strategy["properties"]["type"].is_object());

    let list = &schemas["io.k8s.api.apps.v1.DeploymentList"];
    assert_eq!(
        list["x-kubernetes-group-version-kind"],
        json!([gvk("apps", "v1", "DeploymentList")])
    );
    assert_eq!(
        resolve(&apps, &list["properties"]["items"]["items"], prefix)["description"],
        deployment["description"]
    );
}

#[test]
fn explain_walks_pod_containers_resources() {
    let docs = documents();
    let core = v3(&docs, "api/v1");
    let prefix = "#/components/schemas/";
    let pod = &core["components"]["schemas"]["io.k8s.api.core.v1.Pod"];
    assert_eq!(
        pod["x-kubernetes-group-version-kind"],
        json!([gvk("", "v1", "Pod")])
    );
    let spec = resolve(&core, &pod["properties"]["spec"], prefix);
    let containers = &spec["properties"]["containers"];
    assert_eq!(containers["type"], "array");
    let container = resolve(&core, &containers["items"], prefix);
    let resources = resolve(&core, &container["properties"]["resources"], prefix);
    assert!(resources["description"]
        .as_str()
        .is_some_and(|d| !d.is_empty()));
    let limits = &resources["properties"]["limits"];
    let quantity = resolve(&core, &limits["additionalProperties"], prefix);
    assert_eq!(quantity["x-kubernetes-int-or-string"], true);
}

#[test]
fn patch_extensions_are_published_in_v2_and_v3() {
    let docs = documents();
    let v2 = parse(docs.v2().expect("v2"));
    let containers = &v2["definitions"]["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"];
    assert_eq!(containers["x-kubernetes-patch-merge-key"], "name");
    assert_eq!(containers["x-kubernetes-patch-strategy"], "merge");
    assert_eq!(
        containers["items"]["$ref"],
        "#/definitions/io.k8s.api.core.v1.Container"
    );
    // v2 keeps described refs as siblings, like upstream.
    let strategy =
        &v2["definitions"]["io.k8s.api.apps.v1.DeploymentSpec"]["properties"]["strategy"];
    assert_eq!(
        strategy["$ref"],
        "#/definitions/io.k8s.api.apps.v1.DeploymentStrategy"
    );
    assert_eq!(strategy["x-kubernetes-patch-strategy"], "retainKeys");

    let core = v3(&docs, "api/v1");
    let containers =
        &core["components"]["schemas"]["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"];
    assert_eq!(containers["x-kubernetes-patch-merge-key"], "name");
    let apps = v3(&docs, "apis/apps/v1");
    let strategy = &apps["components"]["schemas"]["io.k8s.api.apps.v1.DeploymentSpec"]
        ["properties"]["strategy"];
    assert_eq!(strategy["x-kubernetes-patch-strategy"], "retainKeys");
    assert_eq!(
        strategy["allOf"][0]["$ref"],
        "#/components/schemas/io.k8s.api.apps.v1.DeploymentStrategy"
    );
}

#[test]
fn every_reference_resolves_in_its_own_document() {
    let docs = documents();
    let v2 = parse(docs.v2().expect("v2"));
    let mut refs = Vec::new();
    all_refs(&v2, &mut refs);
    for reference in &refs {
        let name = reference
            .strip_prefix("#/definitions/")
            .unwrap_or_else(|| panic!("v2 ref {reference}"));
        assert!(
            v2["definitions"].get(name).is_some(),
            "v2 dangling {reference}"
        );
    }
    // Swagger 2.0 has no unions: the schema is left with its description.
    let union = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray";
    assert!(v2["definitions"][union].get("oneOf").is_none());
    assert!(v2["definitions"][union]["description"].is_string());

    for gv in docs.v3_group_versions() {
        let doc = v3(&docs, gv);
        refs.clear();
        all_refs(&doc, &mut refs);
        assert!(!refs.is_empty());
        for reference in &refs {
            let name = reference
                .strip_prefix("#/components/schemas/")
                .unwrap_or_else(|| panic!("v3 ref {reference}"));
            assert!(
                doc["components"]["schemas"].get(name).is_some(),
                "{gv}: dangling {reference}"
            );
        }
        for name in definitions::OPERATION_DEFINITIONS {
            assert!(
                doc["components"]["schemas"].get(name).is_some(),
                "{gv}: {name}"
            );
        }
    }
}

#[test]
fn group_version_documents_carry_only_their_kinds() {
    let docs = documents();
    let apps = v3(&docs, "apis/apps/v1");
    let schemas = apps["components"]["schemas"].as_object().expect("schemas");
    assert!(schemas.contains_key("io.k8s.api.core.v1.PodTemplateSpec"));
    assert!(!schemas.contains_key("io.k8s.api.core.v1.ConfigMap"));
    assert!(apps["paths"]
        .as_object()
        .expect("paths")
        .keys()
        .all(|p| p.starts_with("/apis/apps/v1/")));
}

#[test]
fn unknown_kinds_are_published_as_open_objects() {
    let mut resources = served();
    resources.push(resource(
        "example.com",
        "v1",
        "Widget",
        "widgets",
        true,
        "com.example.v1.Widget",
    ));
    let docs = OpenApiDocuments::build(&resources).expect("build");
    let doc = v3(&docs, "apis/example.com/v1");
    assert_eq!(
        v3_patch_supports(&doc, &gvk("example.com", "v1", "Widget"), "fieldValidation"),
        Some(true)
    );
    let widget = &doc["components"]["schemas"]["com.example.v1.Widget"];
    assert_eq!(widget["x-kubernetes-preserve-unknown-fields"], true);
    assert_eq!(
        doc["paths"]["/apis/example.com/v1/namespaces/{namespace}/widgets/{name}"]["get"]
            ["operationId"],
        "readExampleComV1NamespacedWidget"
    );
    assert!(unknown_fields("com.example.v1.Widget", &json!({"spec": {"x": 1}})).is_empty());
}

#[test]
fn verbs_select_operations() {
    let mut event = resource(
        "",
        "v1",
        "Binding",
        "bindings",
        true,
        "io.k8s.api.core.v1.Binding",
    );
    event.verbs = vec!["create".into()];
    let docs = OpenApiDocuments::build(&[event]).expect("build");
    let core = v3(&docs, "api/v1");
    let paths = core["paths"].as_object().expect("paths");
    assert_eq!(
        paths.keys().collect::<Vec<_>>(),
        ["/api/v1/namespaces/{namespace}/bindings"]
    );
    let item = &paths["/api/v1/namespaces/{namespace}/bindings"];
    assert!(item.get("post").is_some() && item.get("get").is_none());
    assert!(core["components"]["schemas"]
        .get("io.k8s.api.core.v1.BindingList")
        .is_none());
}

#[test]
fn invalid_and_duplicate_resources_are_rejected() {
    let mut resources = served();
    resources.push(served()[0].clone());
    assert!(matches!(
        OpenApiDocuments::build(&resources),
        Err(OpenApiError::DuplicateResource { .. })
    ));
    let mut bad = served()[0].clone();
    bad.resource = "config/maps".into();
    assert!(matches!(
        OpenApiDocuments::build(&[bad]),
        Err(OpenApiError::InvalidResource { .. })
    ));
    let mut bad = served()[0].clone();
    bad.version.clear();
    assert!(matches!(
        OpenApiDocuments::build(&[bad]),
        Err(OpenApiError::InvalidResource { .. })
    ));
}

#[test]
fn build_is_deterministic_and_timed() {
    // Warm the shared definitions so the timings below separate parsing
    // them from document building.
    let start = Instant::now();
    let _ = definitions::builtin();
    let generated = start.elapsed();
    let start = Instant::now();
    let first = documents();
    let built = start.elapsed();
    let mut reversed = served();
    reversed.reverse();
    let second = OpenApiDocuments::build(&reversed).expect("build");
    assert_eq!(first.v2().expect("v2"), second.v2().expect("v2"));
    assert_eq!(first.v3_index(), second.v3_index());
    println!(
        "definitions: {} parsed in {generated:?}; documents built in {built:?}; \
         v2 {} bytes, api/v1 {} bytes, apis/apps/v1 {} bytes",
        definitions::builtin().len(),
        first.v2().expect("v2").len(),
        group_version(&first, "api/v1").map_or(0, |d| d.len()),
        group_version(&first, "apis/apps/v1").map_or(0, |d| d.len()),
    );
}

/// A change of one group-version rebuilds that document alone (the others
/// keep theirs and are not made again), and every document reads as a
/// build from scratch would make it, also when inflated on request.
#[test]
fn a_cached_build_remakes_only_the_changed_group_version() {
    let cache = Arc::new(OpenApiCache::default());
    let before = OpenApiDocuments::build_cached(&served(), &cache).expect("build");
    let kept = before.v3_group_versions().count();
    assert_eq!(cache.len(), kept);
    let recent_before = cache.recent_group_versions();
    assert!(
        recent_before.is_empty(),
        "the first build keeps no document inflated: {recent_before:?}"
    );

    let mut changed = served();
    let mut widgets = resource(
        "example.com",
        "v1",
        "Widget",
        "widgets",
        true,
        "com.example.v1.Widget",
    );
    widgets.schema = Some(Arc::new(
        json!({"type": "object", "properties": {"spec": {"type": "object"}}}),
    ));
    changed.push(widgets.clone());
    let after = OpenApiDocuments::build_cached(&changed, &cache).expect("build");
    assert_eq!(cache.len(), kept + 1);
    let recent_after = cache.recent_group_versions();
    let (newest, older) = recent_after.split_last().expect("one made");
    assert_eq!(newest, "apis/example.com/v1");
    assert!(
        older.is_empty(),
        "only apis/example.com/v1 was made: {recent_after:?}"
    );
    for group_version in before.v3_group_versions() {
        assert_eq!(before.v3_hash(group_version), after.v3_hash(group_version));
    }
    let scratch = OpenApiDocuments::build(&changed).expect("build");
    assert_eq!(after.v3_index(), scratch.v3_index());
    cache.forget_recent();
    for gv in scratch.v3_group_versions() {
        let made_again = group_version(&after, gv).expect("document");
        assert_eq!(Some(&made_again), group_version(&scratch, gv).as_ref());
        let hash: String = Sha512::digest(&made_again)
            .iter()
            .map(|b| format!("{b:02X}"))
            .collect();
        assert_eq!(after.v3_hash(gv), Some(hash.as_str()));
    }

    // Its schema changed: that document alone is made again.
    widgets.schema = Some(Arc::new(
        json!({"type": "object", "properties": {"size": {"type": "integer"}}}),
    ));
    *changed.last_mut().expect("widgets") = widgets;
    let again = OpenApiDocuments::build_cached(&changed, &cache).expect("build");
    assert_ne!(
        again.v3_hash("apis/example.com/v1"),
        after.v3_hash("apis/example.com/v1")
    );
    assert_eq!(again.v3_hash("api/v1"), after.v3_hash("api/v1"));

    // A group-version no longer served leaves the cache.
    let removed = OpenApiDocuments::build_cached(&served(), &cache).expect("build");
    assert_eq!(cache.len(), kept);
    assert!(group_version(&removed, "apis/example.com/v1").is_none());
}

/// The recently made documents stay within their budget, the newest kept
/// whatever its size, and a document put again replaces its older bytes.
#[test]
fn recent_documents_keep_to_their_budget() {
    let mut recent = RecentDocuments::default();
    let doc = |n: usize| -> Arc<[u8]> { vec![b'x'; n].into() };
    recent.put("a", [1; 32], doc(RECENT_DOCUMENT_BYTES / 2));
    recent.put("b", [2; 32], doc(RECENT_DOCUMENT_BYTES / 2));
    assert!(recent.get("a", &[1; 32]).is_some());
    assert!(
        recent.get("a", &[9; 32]).is_none(),
        "made of something else"
    );
    recent.put("c", [3; 32], doc(10));
    // "b" was the least recent: it went.
    assert!(recent.get("b", &[2; 32]).is_none());
    assert!(recent.get("c", &[3; 32]).is_some());
    recent.put("c", [4; 32], doc(20));
    assert!(recent.get("c", &[3; 32]).is_none());
    assert_eq!(recent.bytes, RECENT_DOCUMENT_BYTES / 2 + 20);
    recent.put("huge", [5; 32], doc(RECENT_DOCUMENT_BYTES * 2));
    assert_eq!(recent.documents.len(), 1);
    assert!(recent.get("huge", &[5; 32]).is_some());
}

/// A document served is had again from the recent ones, the same bytes.
#[test]
fn a_served_document_is_had_again_without_inflating() {
    let docs = documents();
    let served = group_version(&docs, "apis/apps/v1").expect("apps/v1");
    let again = docs
        .recent_v3_group_version("apis/apps/v1")
        .expect("recent");
    assert!(Arc::ptr_eq(&served, &again));
    assert!(docs
        .recent_v3_group_version("apis/nothing.example.com/v1")
        .is_none());
}

/// v2 is built on its first request, from the resources of its build.
#[test]
fn v2_is_built_when_first_asked_for() {
    let docs = documents();
    assert!(!docs.v2_is_built());
    let v2: Value = serde_json::from_slice(docs.v2().expect("v2")).expect("JSON");
    assert!(docs.v2_is_built());
    assert!(v2["paths"]
        .as_object()
        .expect("paths")
        .contains_key("/api/v1/namespaces/{namespace}/configmaps"));
    let again = documents();
    assert_eq!(
        again.v2_protobuf().expect("protobuf"),
        docs.v2_protobuf().expect("protobuf")
    );
}

fn valid_deployment() -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "namespace": "default",
            "labels": {"app": "web", "any.label/key": "v"},
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"},
            "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {"f:replicas": {}}}}],
        },
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [{
                        "name": "web",
                        "image": "nginx",
                        "ports": [{"containerPort": 80}],
                        "env": [{"name": "A", "value": "b"}],
                        "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}, "requests": {"cpu": 1}},
                        "readinessProbe": {"httpGet": {"path": "/", "port": "http"}},
                        "livenessProbe": {"tcpSocket": {"port": 80}},
                    }],
                    "nodeSelector": {"disk": "ssd"},
                    "volumes": [{"name": "cfg", "configMap": {"name": "cfg", "items": [{"key": "a", "path": "a"}]}}],
                },
            },
        },
        "status": {"replicas": 2, "conditions": [{"type": "Available", "status": "True"}]},
    })
}

#[test]
fn unknown_fields_accepts_a_valid_deployment() {
    assert_eq!(
        unknown_fields("io.k8s.api.apps.v1.Deployment", &valid_deployment()),
        Vec::<String>::new()
    );
}

#[test]
fn unknown_fields_reports_paths_like_strict_decoding() {
    let mut deployment = valid_deployment();
    deployment["spec"]["replica"] = json!(3);
    deployment["spec"]["template"]["spec"]["containers"][0]["imagee"] = json!("nginx");
    deployment["spec"]["template"]["spec"]["containers"]
        .as_array_mut()
        .expect("containers")
        .push(json!({"name": "side", "image": "busybox", "resources": {"limitz": {}}}));
    deployment["metadata"]["nam"] = json!("x");
    deployment["extra"] = json!(true);
    let mut found = unknown_fields("io.k8s.api.apps.v1.Deployment", &deployment);
    found.sort();
    assert_eq!(
        found,
        [
            "extra",
            "metadata.nam",
            "spec.replica",
            "spec.template.spec.containers[0].imagee",
            "spec.template.spec.containers[1].resources.limitz",
        ]
    );
}

#[test]
fn unknown_fields_treats_maps_and_scalars_unions_right() {
    let configmap = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c"},
        "data": {"anything": "goes", "nested.key": "v"},
        "binaryData": {"b": "AAAA"},
    });
    assert!(unknown_fields("io.k8s.api.core.v1.ConfigMap", &configmap).is_empty());

    let service = json!({
        "spec": {
            "ports": [
                {"port": 80, "targetPort": 8080},
                {"port": 443, "targetPort": "https", "protocoll": "TCP"},
            ],
            "selector": {"app": "web"},
        },
    });
    assert_eq!(
        unknown_fields("io.k8s.api.core.v1.Service", &service),
        ["spec.ports[1].protocoll"]
    );

    // A map whose values are structs: map keys join the path with dots.
    let crd = json!({
        "spec": {
            "group": "example.com",
            "names": {"kind": "Widget", "plural": "widgets"},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1",
                "served": true,
                "storage": true,
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "x-kubernetes-preserve-unknown-fields": true,
                    "properties": {
                        "spec": {"type": "object", "typo": 1, "default": {"free": "form"}},
                    },
                    "items": {"type": "string"},
                }},
            }],
        },
    });
    assert_eq!(
        unknown_fields(
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition",
            &crd
        ),
        ["spec.versions[0].schema.openAPIV3Schema.properties.spec.typo"]
    );

    // Nested definitions can be checked directly, and null is not a field.
    assert!(unknown_fields("io.k8s.api.core.v1.PodSpec", &json!({"containers": null})).is_empty());
    assert_eq!(
        unknown_fields("io.k8s.api.core.v1.PodSpec", &json!({"containerz": []})),
        ["containerz"]
    );
}
