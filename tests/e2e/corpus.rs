//! Issue 5's manifest corpora, driven by the real kubectl.
//!
//! `tests/manifests/valid/<group>_<kind>[_<case>].yaml` is a manifest as users
//! write it; next to it, `<same>.expected.yaml` holds one partial object per
//! version to read it back at. Every field in a partial object must read back
//! with that value (`<any>`: present, `<absent>`: missing or null; lists must
//! have the same length, their items match field by field). That is how the
//! defaults kube-apiserver 1.32 fills in are asserted.
//!
//! `tests/manifests/invalid/<group>_<kind>_<case>.yaml` is a manifest upstream
//! rejects. Its header comments say how:
//!
//! ```text
//! # expect: 422 Invalid
//! # cause: FieldValueRequired spec.containers[0].image: Required value
//! # cause: FieldValueInvalid spec.schedule
//! ```
//!
//! one `cause` per `details.causes[]` entry (type, field and, when given,
//! the message; a message ending in `...` is a prefix). Each is sent twice:
//! with `kubectl apply`, whose error must name every cause, and as a raw JSON
//! POST, whose Status must carry exactly these causes. Afterwards the object
//! must not exist.
//!
//! Every mismatch is collected and printed together, so one failing manifest
//! does not hide the others.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::common::{text, TestServer};

/// Namespace the corpus' namespaced objects land in (the manifests carry none).
const NAMESPACE: &str = "default";

fn corpus_dir(kind: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/manifests")
        .join(kind)
}

fn yaml_documents(text: &str) -> Vec<Value> {
    serde_yaml::Deserializer::from_str(text)
        .map(|document| Value::deserialize(document).unwrap())
        .filter(|value| !value.is_null())
        .collect()
}

/// The corpus files of one directory (not the expectation sidecars), sorted.
fn manifests(kind: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(corpus_dir(kind))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            let name = path.file_name().unwrap().to_string_lossy();
            name.ends_with(".yaml") && !name.ends_with(".expected.yaml")
        })
        .collect();
    files.sort();
    files
}

fn file_name(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

fn split_api_version(api_version: &str) -> (&str, &str) {
    api_version.split_once('/').unwrap_or(("", api_version))
}

/// Where one served kind lives, from discovery.
#[derive(Clone, Debug)]
struct Resource {
    plural: String,
    namespaced: bool,
    verbs: Vec<String>,
}

/// Discovery of every served group version: (apiVersion, kind) → resource.
fn discover(server: &TestServer) -> BTreeMap<(String, String), Resource> {
    let mut group_versions = vec!["v1".to_string()];
    let groups = server.get_json("/apis");
    for group in groups["groups"].as_array().unwrap() {
        for version in group["versions"].as_array().unwrap() {
            group_versions.push(version["groupVersion"].as_str().unwrap().to_string());
        }
    }
    let mut resources = BTreeMap::new();
    for group_version in group_versions {
        let path = if group_version == "v1" {
            "/api/v1".to_string()
        } else {
            format!("/apis/{group_version}")
        };
        let list = server.get_json(&path);
        for resource in list["resources"].as_array().unwrap() {
            let plural = resource["name"].as_str().unwrap();
            if plural.contains('/') {
                continue;
            }
            let verbs = resource["verbs"]
                .as_array()
                .map(|verbs| {
                    verbs
                        .iter()
                        .filter_map(|verb| verb.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            resources.insert(
                (
                    group_version.clone(),
                    resource["kind"].as_str().unwrap().to_string(),
                ),
                Resource {
                    plural: plural.to_string(),
                    namespaced: resource["namespaced"].as_bool().unwrap(),
                    verbs,
                },
            );
        }
    }
    resources
}

/// The kubectl resource argument that names exactly this group version.
fn kubectl_resource(api_version: &str, resource: &Resource) -> String {
    match split_api_version(api_version) {
        ("", _) => resource.plural.clone(),
        (group, version) => format!("{}.{version}.{group}", resource.plural),
    }
}

fn collection_path(api_version: &str, resource: &Resource) -> String {
    let prefix = if api_version == "v1" {
        "/api/v1".to_string()
    } else {
        format!("/apis/{api_version}")
    };
    if resource.namespaced {
        format!("{prefix}/namespaces/{NAMESPACE}/{}", resource.plural)
    } else {
        format!("{prefix}/{}", resource.plural)
    }
}

/// Compares `expected` (a partial object) with what the server returned,
/// recording every difference with its path.
fn match_partial(expected: &Value, actual: Option<&Value>, path: &str, diffs: &mut Vec<String>) {
    let actual_shown = actual.map_or("<absent>".to_string(), Value::to_string);
    match expected {
        Value::String(s) if s == "<any>" => {
            if actual.is_none_or(Value::is_null) {
                diffs.push(format!("{path}: expected a value, got <absent>"));
            }
        }
        Value::String(s) if s == "<absent>" => {
            if !actual.is_none_or(Value::is_null) {
                diffs.push(format!("{path}: expected <absent>, got {actual_shown}"));
            }
        }
        Value::Object(fields) => match actual {
            Some(Value::Object(actual_fields)) => {
                for (key, value) in fields {
                    match_partial(
                        value,
                        actual_fields.get(key),
                        &format!("{path}.{key}"),
                        diffs,
                    );
                }
            }
            _ => diffs.push(format!("{path}: expected {expected}, got {actual_shown}")),
        },
        Value::Array(items) => match actual {
            Some(Value::Array(actual_items)) if actual_items.len() == items.len() => {
                for (index, (item, actual_item)) in items.iter().zip(actual_items).enumerate() {
                    match_partial(item, Some(actual_item), &format!("{path}[{index}]"), diffs);
                }
            }
            _ => diffs.push(format!("{path}: expected {expected}, got {actual_shown}")),
        },
        scalar => {
            if actual != Some(scalar) {
                diffs.push(format!("{path}: expected {scalar}, got {actual_shown}"));
            }
        }
    }
}

fn report(corpus: &str, checked: usize, failures: &[String]) {
    if failures.is_empty() {
        eprintln!("{corpus} corpus: all {checked} manifests behave as upstream");
        return;
    }
    panic!(
        "{corpus} corpus: {} of {checked} manifests differ from upstream:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// Kinds discovery lists that are not stored objects a manifest could create
/// and read back.
const NOT_MANIFEST_KINDS: &[&str] = &[
    "Binding",
    "ComponentStatus",
    "TokenReview",
    "SelfSubjectReview",
    "SubjectAccessReview",
    "SelfSubjectAccessReview",
    "SelfSubjectRulesReview",
    "LocalSubjectAccessReview",
];

#[test]
fn valid_manifests_apply_and_read_back_with_upstream_defaults() {
    let server = TestServer::start();
    let resources = discover(&server);
    let mut files = manifests("valid");
    // Namespaces first, as `kubectl apply -f dir` would not guarantee.
    files.sort_by_key(|path| !file_name(path).starts_with("core_namespace"));

    let mut failures = Vec::new();
    let mut covered = std::collections::BTreeSet::new();
    for file in &files {
        let name = file_name(file);
        let manifest = yaml_documents(&fs::read_to_string(file).unwrap());
        let [manifest] = manifest.as_slice() else {
            failures.push(format!("{name}: must hold exactly one object"));
            continue;
        };
        let (api_version, kind) = (
            manifest["apiVersion"].as_str().unwrap(),
            manifest["kind"].as_str().unwrap(),
        );
        let object_name = manifest["metadata"]["name"].as_str().unwrap();
        covered.insert((
            split_api_version(api_version).0.to_string(),
            kind.to_string(),
        ));

        let applied = server.kubectl(&["apply", "-f", &file.to_string_lossy()]);
        if !applied.status.success() {
            failures.push(format!(
                "{name}: kubectl apply failed:\n{}",
                text(&applied.stderr).trim_end()
            ));
            continue;
        }

        let expected_path = file.with_extension("expected.yaml");
        let expectations = fs::read_to_string(&expected_path)
            .map(|text| yaml_documents(&text))
            .unwrap_or_else(|_| {
                failures.push(format!("{name}: no {}", file_name(&expected_path)));
                Vec::new()
            });
        for expected in expectations {
            let read_as = expected["apiVersion"].as_str().unwrap_or(api_version);
            let Some(resource) = resources.get(&(read_as.to_string(), kind.to_string())) else {
                failures.push(format!("{name}: {kind} is not served at {read_as}"));
                continue;
            };
            let out = server.kubectl(&[
                "get",
                &kubectl_resource(read_as, resource),
                object_name,
                "-n",
                NAMESPACE,
                "-o",
                "json",
            ]);
            if !out.status.success() {
                failures.push(format!(
                    "{name}: kubectl get at {read_as} failed:\n{}",
                    text(&out.stderr).trim_end()
                ));
                continue;
            }
            let actual: Value = serde_json::from_slice(&out.stdout).unwrap();
            let mut diffs = Vec::new();
            if actual["apiVersion"] != read_as || actual["metadata"]["name"] != object_name {
                diffs.push(format!(
                    "read back {} {} {}",
                    actual["apiVersion"], actual["kind"], actual["metadata"]["name"]
                ));
            }
            let mut expected = expected.clone();
            if let Some(fields) = expected.as_object_mut() {
                fields.remove("apiVersion");
                fields.remove("kind");
            }
            match_partial(&expected, Some(&actual), "", &mut diffs);
            if !diffs.is_empty() {
                failures.push(format!(
                    "{name} read at {read_as}:\n  {}\n  object: {}",
                    diffs.join("\n  "),
                    actual
                ));
            }
        }
    }

    // Every kind a manifest could create must be in the corpus.
    for ((group_version, kind), resource) in &resources {
        let group = split_api_version(group_version).0.to_string();
        let creatable = ["create", "get"]
            .iter()
            .all(|verb| resource.verbs.iter().any(|v| v == verb));
        if creatable
            && !NOT_MANIFEST_KINDS.contains(&kind.as_str())
            && !covered.contains(&(group.clone(), kind.clone()))
        {
            failures.push(format!(
                "{group_version} {kind}: served, but no manifest under tests/manifests/valid"
            ));
            covered.insert((group, kind.clone()));
        }
    }
    report("valid", files.len(), &failures);
}

/// One expected `details.causes[]` entry.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Cause {
    reason: String,
    field: String,
    message: Option<String>,
}

impl Cause {
    fn parse(line: &str) -> Self {
        let (reason, rest) = line.split_once(' ').unwrap();
        let (field, message) = match rest.split_once(": ") {
            Some((field, message)) => (field, Some(message.to_string())),
            None => (rest, None),
        };
        Self {
            reason: reason.to_string(),
            field: field.to_string(),
            message,
        }
    }

    fn matches(&self, actual: &Cause) -> bool {
        self.reason == actual.reason
            && self.field == actual.field
            && match (&self.message, &actual.message) {
                (None, _) => true,
                (Some(expected), Some(got)) => match expected.strip_suffix("...") {
                    Some(prefix) => got.starts_with(prefix),
                    None => got == expected,
                },
                (Some(_), None) => false,
            }
    }

    fn shown(&self) -> String {
        match &self.message {
            Some(message) => format!("{} {}: {message}", self.reason, self.field),
            None => format!("{} {}", self.reason, self.field),
        }
    }
}

/// What an invalid manifest's header says upstream answers.
struct Expectation {
    code: u16,
    reason: String,
    causes: Vec<Cause>,
}

fn parse_expectation(text: &str) -> Result<Expectation, String> {
    let mut status = None;
    let mut causes = Vec::new();
    for line in text.lines().map_while(|line| line.strip_prefix("# ")) {
        if let Some(rest) = line.strip_prefix("expect: ") {
            let (code, reason) = rest.split_once(' ').ok_or("bad `expect:` line")?;
            status = Some((code.parse().map_err(|_| "bad code")?, reason.to_string()));
        } else if let Some(rest) = line.strip_prefix("cause: ") {
            causes.push(Cause::parse(rest));
        }
    }
    let (code, reason) = status.ok_or("no `# expect:` header")?;
    Ok(Expectation {
        code,
        reason,
        causes,
    })
}

/// Pairs each expected cause with one actual cause; what is left over on
/// either side is a difference.
fn unmatched_causes(expected: &[Cause], actual: &[Cause]) -> (Vec<Cause>, Vec<Cause>) {
    let mut remaining: Vec<Cause> = actual.to_vec();
    let mut missing = Vec::new();
    // Causes with messages first, so a field-only expectation does not take
    // the cause a more specific one needs.
    let mut ordered: Vec<&Cause> = expected.iter().collect();
    ordered.sort_by_key(|cause| cause.message.is_none());
    for cause in ordered {
        match remaining.iter().position(|got| cause.matches(got)) {
            Some(index) => {
                remaining.remove(index);
            }
            None => missing.push(cause.clone()),
        }
    }
    (missing, remaining)
}

/// Deletes an object the server should never have stored.
fn delete_object(server: &TestServer, api_version: &str, resource: &Resource, name: &str) {
    let _ = server.kubectl(&[
        "delete",
        &kubectl_resource(api_version, resource),
        name,
        "-n",
        NAMESPACE,
        "--wait=true",
        "--timeout=15s",
    ]);
}

#[test]
fn invalid_manifests_are_rejected_with_upstreams_field_paths() {
    let server = TestServer::start();
    let resources = discover(&server);
    let files = manifests("invalid");
    let mut failures = Vec::new();
    let mut per_kind: BTreeMap<String, usize> = BTreeMap::new();
    for file in &files {
        let name = file_name(file);
        let source = fs::read_to_string(file).unwrap();
        let expectation = match parse_expectation(&source) {
            Ok(expectation) => expectation,
            Err(problem) => {
                failures.push(format!("{name}: {problem}"));
                continue;
            }
        };
        let documents = yaml_documents(&source);
        let [manifest] = documents.as_slice() else {
            failures.push(format!("{name}: must hold exactly one object"));
            continue;
        };
        let (api_version, kind) = (
            manifest["apiVersion"].as_str().unwrap(),
            manifest["kind"].as_str().unwrap(),
        );
        *per_kind.entry(kind.to_string()).or_default() += 1;
        let object_name = manifest["metadata"]["name"].as_str().unwrap_or_default();
        let Some(resource) = resources.get(&(api_version.to_string(), kind.to_string())) else {
            failures.push(format!("{name}: {kind} is not served at {api_version}"));
            continue;
        };
        let mut problems = Vec::new();

        // kubectl's own rendering of the rejection must name every cause.
        let applied = server.kubectl(&["apply", "-f", &file.to_string_lossy()]);
        let stderr = text(&applied.stderr);
        if applied.status.success() {
            problems.push(format!(
                "kubectl apply succeeded: {}",
                text(&applied.stdout).trim_end()
            ));
            // Remove it again so the raw POST below gets its own answer.
            delete_object(&server, api_version, resource, object_name);
        } else {
            for cause in &expectation.causes {
                let needle = match &cause.message {
                    Some(message) => {
                        format!("{}: {}", cause.field, message.trim_end_matches("..."))
                    }
                    None => format!("{}: ", cause.field),
                };
                if !stderr.contains(&needle) {
                    problems.push(format!("kubectl apply output lacks `{needle}`"));
                }
            }
        }

        // The raw Status must carry exactly upstream's causes.
        let response = server.post_json(&collection_path(api_version, resource), manifest);
        let status: Value = serde_json::from_str(&response.body).unwrap_or(Value::Null);
        if response.status != expectation.code || status["reason"] != expectation.reason.as_str() {
            problems.push(format!(
                "expected {} {}, got {} {}",
                expectation.code, expectation.reason, response.status, status["reason"]
            ));
        }
        let actual_causes: Vec<Cause> = status["details"]["causes"]
            .as_array()
            .map(|causes| {
                causes
                    .iter()
                    .map(|cause| Cause {
                        reason: cause["reason"].as_str().unwrap_or_default().to_string(),
                        field: cause["field"].as_str().unwrap_or_default().to_string(),
                        message: cause["message"].as_str().map(str::to_string),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let (missing, unexpected) = unmatched_causes(&expectation.causes, &actual_causes);
        for cause in missing {
            problems.push(format!("expected cause missing: {}", cause.shown()));
        }
        for cause in unexpected {
            problems.push(format!("unexpected cause: {}", cause.shown()));
        }

        // Nothing may have been stored by either attempt.
        if !object_name.is_empty() {
            let get = server.kubectl(&[
                "get",
                &kubectl_resource(api_version, resource),
                object_name,
                "-n",
                NAMESPACE,
                "-o",
                "name",
            ]);
            if get.status.success() || !text(&get.stderr).contains("NotFound") {
                problems.push(format!(
                    "object is readable after the rejection: {}{}",
                    text(&get.stdout).trim_end(),
                    text(&get.stderr).trim_end()
                ));
                // Clean up so later manifests reusing the name are unaffected.
                delete_object(&server, api_version, resource, object_name);
            }
        }
        if !problems.is_empty() {
            failures.push(format!(
                "{name}:\n  {}\n  kubectl: {}\n  status: {}",
                problems.join("\n  "),
                stderr.trim_end(),
                response.body.trim_end()
            ));
        }
    }
    for (kind, count) in &per_kind {
        eprintln!("invalid corpus: {kind}: {count} manifests");
    }
    report("invalid", files.len(), &failures);
}
