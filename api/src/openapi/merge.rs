//! The OpenAPI v2 document with extension API servers' documents merged
//! in, as kube-aggregator merges them: each backend's paths under its own
//! `/apis/<group>/<version>/` (with the definitions only its dropped paths
//! used dropped too), a path the document already has left as it is, and
//! a definition of the same name but other content renamed `<name>_v2`
//! (`_v3`, …) with the backend's references to it.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::{gnostic, OpenApiError, INFO};

const DEFINITION_PREFIX: &str = "#/definitions/";

/// One extension API server's `/openapi/v2`, for the group/version its
/// APIService routes to it.
pub struct BackendDocument<'a> {
    pub group: &'a str,
    pub version: &'a str,
    pub document: &'a [u8],
}

/// The merged document as JSON and as gnostic protobuf. A backend document
/// that does not parse is left out, as upstream leaves out a spec it
/// could not download.
pub fn merge_v2(
    local: &[u8],
    backends: &[BackendDocument<'_>],
) -> Result<(Vec<u8>, Vec<u8>), OpenApiError> {
    let local: Value = serde_json::from_slice(local)?;
    let mut paths: BTreeMap<String, Value> = entries(&local, "paths");
    let mut definitions: BTreeMap<String, Value> = entries(&local, "definitions");
    for backend in backends {
        let Ok(document) = serde_json::from_slice::<Value>(backend.document) else {
            continue;
        };
        let prefix = format!("/apis/{}/{}/", backend.group, backend.version);
        let (backend_paths, backend_definitions) = filtered(&document, |path| {
            path.starts_with(&prefix) && !paths.contains_key(path)
        });
        let renamed = renames(&backend_definitions, &definitions);
        for (path, item) in backend_paths {
            paths.insert(path, renamed_refs(item, &renamed));
        }
        for (name, schema) in backend_definitions {
            let name = renamed.get(&name).cloned().unwrap_or(name);
            definitions
                .entry(name)
                .or_insert_with(|| renamed_refs(schema, &renamed));
        }
    }
    let swagger = local
        .get("swagger")
        .and_then(Value::as_str)
        .unwrap_or("2.0");
    let paths: Map<String, Value> = paths.into_iter().collect();
    let json = serde_json::to_vec(&serde_json::json!({
        "swagger": swagger,
        "info": {"title": INFO.title, "version": INFO.version},
        "paths": paths,
        "definitions": definitions,
    }))?;
    let by_name: BTreeMap<&str, &Value> =
        definitions.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let protobuf = gnostic::document(swagger, &INFO, &paths, &by_name);
    Ok((json, protobuf))
}

fn entries(document: &Value, key: &str) -> BTreeMap<String, Value> {
    document
        .get(key)
        .and_then(Value::as_object)
        .map(|map| map.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default()
}

/// Every definition a `$ref` anywhere in `value` names.
fn referenced(value: &Value, into: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                match (key.as_str(), child) {
                    ("$ref", Value::String(reference)) => {
                        if let Some(name) = reference.strip_prefix(DEFINITION_PREFIX) {
                            into.insert(name.to_string());
                        }
                    }
                    _ => referenced(child, into),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| referenced(item, into)),
        _ => {}
    }
}

/// upstream's FilterSpecByPathsWithoutSideEffects: the kept paths, and
/// every definition but those only the dropped paths used.
fn filtered(
    document: &Value,
    keep: impl Fn(&str) -> bool,
) -> (BTreeMap<String, Value>, BTreeMap<String, Value>) {
    let all_paths = entries(document, "paths");
    let definitions = entries(document, "definitions");
    let mut used_before = BTreeSet::new();
    referenced(document, &mut used_before);
    let kept: BTreeMap<String, Value> = all_paths
        .into_iter()
        .filter(|(path, _)| keep(path))
        .collect();
    let mut used_after = BTreeSet::new();
    kept.values()
        .for_each(|item| referenced(item, &mut used_after));
    definitions
        .values()
        .for_each(|schema| referenced(schema, &mut used_after));
    let definitions = definitions
        .into_iter()
        .filter(|(name, _)| !used_before.contains(name) || used_after.contains(name))
        .collect();
    (kept, definitions)
}

/// New names for the backend's definitions that clash with different
/// ones already merged: `<name>_v2`, `<name>_v3`, … whichever is free.
fn renames(
    incoming: &BTreeMap<String, Value>,
    existing: &BTreeMap<String, Value>,
) -> BTreeMap<String, String> {
    let mut renamed = BTreeMap::new();
    for (name, schema) in incoming {
        match existing.get(name) {
            Some(current) if current != schema => {
                let free = (2..)
                    .map(|i| format!("{name}_v{i}"))
                    .find(|candidate| {
                        !existing.contains_key(candidate) && !incoming.contains_key(candidate)
                    })
                    .unwrap_or_else(|| name.clone());
                renamed.insert(name.clone(), free);
            }
            _ => {}
        }
    }
    renamed
}

fn renamed_refs(mut value: Value, renamed: &BTreeMap<String, String>) -> Value {
    if renamed.is_empty() {
        return value;
    }
    fn walk(value: &mut Value, renamed: &BTreeMap<String, String>) {
        match value {
            Value::Object(map) => {
                for (key, child) in map.iter_mut() {
                    if let ("$ref", Value::String(reference)) = (key.as_str(), &mut *child) {
                        let name = reference.strip_prefix(DEFINITION_PREFIX);
                        if let Some(new) = name.and_then(|n| renamed.get(n)) {
                            *reference = format!("{DEFINITION_PREFIX}{new}");
                        }
                    } else {
                        walk(child, renamed);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|item| walk(item, renamed)),
            _ => {}
        }
    }
    walk(&mut value, renamed);
    value
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_backends_paths_and_definitions_join_the_document() {
        let local = json!({
            "swagger": "2.0",
            "info": {"title": "Kubernetes", "version": "v1.33.0"},
            "paths": {"/api/v1/pods": {"get": {"responses": {"200": {"schema": {"$ref": "#/definitions/io.k8s.api.core.v1.PodList"}}}}}},
            "definitions": {"io.k8s.api.core.v1.PodList": {"type": "object"}, "shared.Status": {"type": "object"}},
        });
        let backend = json!({
            "swagger": "2.0",
            "paths": {
                "/apis/wardle.example.com/v1alpha1/flunders": {"get": {"responses": {"200": {"schema": {"$ref": "#/definitions/wardle.FlunderList"}}}}},
                "/apis/other.example.com/v1/things": {"get": {"responses": {"200": {"schema": {"$ref": "#/definitions/other.Only"}}}}},
                "/api/v1/pods": {"get": {}},
            },
            "definitions": {
                "wardle.FlunderList": {"type": "object", "properties": {"status": {"$ref": "#/definitions/shared.Status"}}},
                "shared.Status": {"type": "object", "description": "the backend's own"},
                "other.Only": {"type": "object"},
                "unused.Anywhere": {"type": "string"},
            },
        });
        let bytes = serde_json::to_vec(&backend).unwrap();
        let (merged, protobuf) = merge_v2(
            &serde_json::to_vec(&local).unwrap(),
            &[BackendDocument {
                group: "wardle.example.com",
                version: "v1alpha1",
                document: &bytes,
            }],
        )
        .unwrap();
        assert!(!protobuf.is_empty());
        let merged: Value = serde_json::from_slice(&merged).unwrap();
        let paths: Vec<&str> = merged["paths"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            paths,
            ["/api/v1/pods", "/apis/wardle.example.com/v1alpha1/flunders"]
        );
        // The local path stays as it was.
        assert!(merged["paths"]["/api/v1/pods"]["get"]["responses"].is_object());
        let definitions: Vec<&str> = merged["definitions"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            definitions,
            [
                "io.k8s.api.core.v1.PodList",
                "shared.Status",
                "shared.Status_v2",
                "unused.Anywhere",
                "wardle.FlunderList"
            ]
        );
        assert_eq!(
            merged["definitions"]["wardle.FlunderList"]["properties"]["status"]["$ref"],
            "#/definitions/shared.Status_v2"
        );
    }
}
