//! CustomResourceDefinitions, from stored object to served resources, as
//! apiextensions-apiserver's controllers do it:
//!
//! - naming: grants each definition the names no other definition of its
//!   group holds (`status.acceptedNames`, NamesAccepted) and establishes it;
//! - serving: every replica serves, from its own registry, the resources of
//!   every definition whose names are granted, and stops serving those of
//!   definitions that are gone;
//! - cleanup: a deleted definition's custom resources are deleted, then its
//!   cleanup finalizer is released, which completes the delete.
//!
//! The names and conditions are decided from stored objects and written
//! with compare-and-swap, so replicas running this at once agree.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use serde_json::{json, Value};

use crate::auth::UserInfo;
use crate::kinds::apiextensions::{condition, is_true, set_condition, CLEANUP_FINALIZER};
use crate::object;
use crate::verbs::{ApiCore, ListOptions, View, WriteOptions};
use crate::watch::cached::{CachedObject, LazyObject};

const GROUP: &str = "apiextensions.k8s.io";
const FIELD_MANAGER: &str = "kube-apiserver";

/// How often definitions are looked at again between events (deletes
/// waiting on custom resources with finalizers).
const RESYNC: Duration = Duration::from_secs(2);

/// The resources this replica serves for each definition, and a digest of
/// what they were built from: a definition is served anew only when that
/// changes. A digest, not a copy: a copy of every definition's spec with
/// its schemas was a large part of what a definition held here.
struct Served {
    by_definition: HashMap<String, (BasisDigest, Vec<GroupVersionResource>)>,
    read: ReadDefinitions,
    /// How this replica calls conversion webhooks.
    webhooks: Arc<crate::webhooks::Webhooks>,
}

type GroupVersionResource = (String, String, String);

type BasisDigest = [u8; 32];

/// SHA-256 of what a definition's served resources are built from: its
/// spec (by its digest), its accepted names and whether it is terminating.
fn basis_digest(spec_digest: &[u8; 32], granted: &Value) -> BasisDigest {
    use sha2::Digest;
    let basis = (
        spec_digest,
        granted.pointer("/status/acceptedNames"),
        is_true(granted, "Terminating"),
    );
    sha2::Sha256::digest(serde_json::to_vec(&basis).unwrap_or_default()).into()
}

/// What the controller read of one stored version of a definition.
struct Read {
    /// The cached object it was read from: while the list hands out the
    /// same one, the definition is unchanged and is not parsed again (every
    /// event and every resync lists all definitions).
    object: Arc<CachedObject>,
    /// The definition without its versions (their schemas), conversion and
    /// managed fields: all that naming, conditions and clean-up read.
    slim: Arc<Value>,
    /// SHA-256 of its whole spec.
    spec_digest: [u8; 32],
}

/// The definitions as last read, by the address of the cached object each
/// was read from (held in its [`Read`], so the address names that object).
#[derive(Default)]
struct ReadDefinitions(HashMap<usize, Read>);

impl ReadDefinitions {
    /// The slim form and spec digest of each listed definition; only those
    /// not listed (from the same cached object) last time are parsed.
    fn read_all(&mut self, items: &[LazyObject]) -> Vec<(Arc<Value>, [u8; 32])> {
        let mut read = HashMap::with_capacity(items.len());
        let reads = items
            .iter()
            .map(|item| {
                let Some(cached) = item.cached_object() else {
                    return read_definition(item);
                };
                let address = Arc::as_ptr(cached) as usize;
                let known = self
                    .0
                    .remove(&address)
                    .filter(|known| Arc::ptr_eq(&known.object, cached));
                let (slim, spec_digest) = match known {
                    Some(known) => (known.slim, known.spec_digest),
                    None => read_definition(item),
                };
                read.insert(
                    address,
                    Read {
                        object: cached.clone(),
                        slim: slim.clone(),
                        spec_digest,
                    },
                );
                (slim, spec_digest)
            })
            .collect();
        self.0 = read;
        reads
    }
}

/// The slim form and spec digest of a definition (see [`Read`]).
fn read_definition(crd: &Value) -> (Arc<Value>, [u8; 32]) {
    use sha2::Digest;
    let spec_digest =
        sha2::Sha256::digest(serde_json::to_vec(&crd.get("spec")).unwrap_or_default()).into();
    let without = |map: &serde_json::Map<String, Value>, left_out: &[&str]| {
        Value::Object(
            map.iter()
                .filter(|(k, _)| !left_out.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        )
    };
    let mut slim = serde_json::Map::new();
    for (key, value) in crd.as_object().into_iter().flatten() {
        let value = match (key.as_str(), value) {
            ("spec", Value::Object(spec)) => without(spec, &["versions", "conversion"]),
            ("metadata", Value::Object(meta)) => without(meta, &["managedFields"]),
            _ => value.clone(),
        };
        slim.insert(key.clone(), value);
    }
    (Arc::new(Value::Object(slim)), spec_digest)
}

pub async fn run(core: Arc<ApiCore>) {
    let system = UserInfo::system();
    let mut served = Served {
        by_definition: HashMap::new(),
        read: ReadDefinitions::default(),
        webhooks: crate::webhooks::Webhooks::new(&core),
    };
    loop {
        let Ok(definitions) = core.resolve(GROUP, "v1", "customresourcedefinitions") else {
            return;
        };
        let rv = loop {
            match reconcile_all(&core, &mut served).await {
                Ok(rv) => break rv,
                Err(e) => {
                    tracing::warn!(error = %e, "customresourcedefinition resync failed");
                    tokio::time::sleep(RESYNC).await;
                }
            }
        };
        let mut events = match core
            .watch(&system, &definitions, None, None, &super::watch_from(rv))
            .await
        {
            Ok(events) => events,
            Err(e) => {
                super::watch_failed("customresourcedefinitions", &e).await;
                continue;
            }
        };
        loop {
            let watching = tokio::select! {
                event = events.next() => event.is_some(),
                _ = tokio::time::sleep(RESYNC) => true,
            };
            if !watching {
                break;
            }
            if let Err(e) = reconcile_all(&core, &mut served).await {
                tracing::warn!(error = %e, "customresourcedefinition reconcile failed");
            }
        }
    }
}

async fn reconcile_all(core: &ApiCore, served: &mut Served) -> crate::ApiResult<String> {
    let def = core.resolve(GROUP, "v1", "customresourcedefinitions")?;
    let list = core
        .list(&UserInfo::system(), &def, None, &ListOptions::default())
        .await?;
    let reads = served.read.read_all(&list.items);
    let definitions: Vec<&Value> = reads.iter().map(|(slim, _)| &**slim).collect();
    // Each definition as it should be named. They are served first and
    // then written, so a client that sees Established finds the resource
    // served (on this replica).
    let granted: Vec<Value> = definitions
        .iter()
        .map(|crd| {
            if deleting(crd) {
                (*crd).clone()
            } else {
                with_granted_names(crd, &definitions)
            }
        })
        .collect();
    let to_serve: Vec<Definition> = list
        .items
        .iter()
        .zip(&reads)
        .zip(&granted)
        .map(|((stored, (_, spec_digest)), granted)| Definition {
            stored,
            spec_digest,
            granted,
        })
        .collect();
    serve(core, served, &to_serve);
    for (crd, wanted) in definitions.iter().zip(&granted) {
        let name = object::name(crd).to_string();
        let result = if deleting(crd) {
            clean_up(core, crd).await
        } else {
            grant_names(core, crd, wanted, &definitions).await
        };
        if let Err(e) = result {
            tracing::warn!(definition = name, error = %e, "customresourcedefinition not reconciled");
        }
    }
    Ok(list.resource_version)
}

fn deleting(crd: &Value) -> bool {
    object::meta(crd).is_some_and(|m| m.contains_key("deletionTimestamp"))
}

/// The names a definition asks for that no other definition of its group
/// holds, and the NamesAccepted condition saying so (upstream's naming
/// controller: a conflicting name keeps the previously accepted one).
pub(crate) fn accepted_names(
    crd: &Value,
    definitions: &[&Value],
) -> (Value, (&'static str, &'static str, String)) {
    let group = crd
        .pointer("/spec/group")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut resources: Vec<String> = Vec::new();
    let mut kinds: Vec<String> = Vec::new();
    for other in definitions.iter().filter(|d| {
        d.pointer("/spec/group").and_then(Value::as_str) == Some(group)
            && object::name(d) != object::name(crd)
    }) {
        let Some(names) = other.pointer("/status/acceptedNames") else {
            continue;
        };
        let text = |key: &str| {
            names
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        resources.push(text("plural"));
        resources.push(text("singular"));
        resources.extend(object::strings_at(names, "shortNames"));
        kinds.push(text("kind"));
        kinds.push(text("listKind"));
    }
    let empty = json!({});
    let requested = crd.pointer("/spec/names").unwrap_or(&empty);
    let accepted = crd.pointer("/status/acceptedNames").unwrap_or(&empty);
    let text = |names: &Value, key: &str| {
        names
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let mut names = serde_json::Map::new();
    let mut condition = ("True", "NoConflicts", "no conflicts found".to_string());
    let fresh = |wanted: &str, was: &str, used: &[String]| -> Result<(), String> {
        if wanted == was || !used.iter().any(|u| u == wanted) {
            Ok(())
        } else {
            Err(format!("\"{wanted}\" is already in use"))
        }
    };
    for (key, used, reason) in [
        ("plural", &resources, "PluralConflict"),
        ("singular", &resources, "SingularConflict"),
    ] {
        match fresh(&text(requested, key), &text(accepted, key), used) {
            Ok(()) => names.insert(key.into(), json!(text(requested, key))),
            Err(message) => {
                condition = ("False", reason, message);
                names.insert(key.into(), json!(text(accepted, key)))
            }
        };
    }
    let wanted_short = object::strings_at(requested, "shortNames");
    let accepted_short = object::strings_at(accepted, "shortNames");
    let short_errors: Vec<String> = if wanted_short == accepted_short {
        Vec::new()
    } else {
        wanted_short
            .iter()
            .filter(|s| !accepted_short.contains(s))
            .filter_map(|s| fresh(s, "", &resources).err())
            .collect()
    };
    if short_errors.is_empty() {
        if !wanted_short.is_empty() {
            names.insert("shortNames".into(), json!(wanted_short));
        }
    } else {
        let message = if short_errors.len() == 1 {
            short_errors[0].clone()
        } else {
            format!("[{}]", short_errors.join(", "))
        };
        condition = ("False", "ShortNamesConflict", message);
        if !accepted_short.is_empty() {
            names.insert("shortNames".into(), json!(accepted_short));
        }
    }
    for (key, reason) in [("kind", "KindConflict"), ("listKind", "ListKindConflict")] {
        match fresh(&text(requested, key), &text(accepted, key), &kinds) {
            Ok(()) => names.insert(key.into(), json!(text(requested, key))),
            Err(message) => {
                condition = ("False", reason, message);
                names.insert(key.into(), json!(text(accepted, key)))
            }
        };
    }
    let categories = object::strings_at(requested, "categories");
    if !categories.is_empty() {
        names.insert("categories".into(), json!(categories));
    }
    for key in ["singular", "listKind"] {
        if names.get(key).and_then(Value::as_str) == Some("") {
            names.remove(key);
        }
    }
    (Value::Object(names), condition)
}

/// The definition with the names and conditions it should have.
fn with_granted_names(crd: &Value, definitions: &[&Value]) -> Value {
    let (names, (status, reason, message)) = accepted_names(crd, definitions);
    let mut wanted = crd.clone();
    apply_names(
        &mut wanted,
        &names,
        status,
        reason,
        &message,
        &object::now_timestamp(),
    );
    wanted
}

/// Writes the names and conditions a definition should have (`wanted`),
/// if they differ from what it has.
async fn grant_names(
    core: &ApiCore,
    crd: &Value,
    wanted: &Value,
    definitions: &[&Value],
) -> crate::ApiResult<()> {
    if wanted.get("status") == crd.get("status") {
        return Ok(());
    }
    let (names, (status, reason, message)) = accepted_names(crd, definitions);
    let now = object::now_timestamp();
    update_definition(core, object::name(crd), View::Status, |updated| {
        apply_names(updated, &names, status, reason, &message, &now)
    })
    .await
}

/// Sets accepted names with the NamesAccepted condition, and Established
/// as the naming and establishing controllers leave it together.
fn apply_names(
    crd: &mut Value,
    names: &Value,
    status: &str,
    reason: &str,
    message: &str,
    now: &str,
) {
    if let Some(crd_status) = crd.get_mut("status").and_then(Value::as_object_mut) {
        crd_status.insert("acceptedNames".into(), names.clone());
    }
    set_condition(crd, "NamesAccepted", status, reason, message, now);
    if is_true(crd, "Established") {
        return;
    }
    if status == "True" {
        set_condition(
            crd,
            "Established",
            "True",
            "InitialNamesAccepted",
            "the initial names have been accepted",
            now,
        );
    } else if condition(crd, "Established").is_none() {
        set_condition(
            crd,
            "Established",
            "False",
            "NotAccepted",
            "not all names are accepted",
            now,
        );
    }
}

/// A definition as stored, with the names and conditions it should have.
struct Definition<'a> {
    stored: &'a LazyObject,
    spec_digest: &'a [u8; 32],
    /// Its slim form (see [`Read`]) with the granted names and conditions.
    granted: &'a Value,
}

/// Serves what each granted definition describes; stops serving what
/// definitions no longer describe.
fn serve(core: &ApiCore, served: &mut Served, definitions: &[Definition<'_>]) {
    let mut still: Vec<String> = Vec::new();
    for definition in definitions {
        let granted = definition.granted;
        if !is_true(granted, "NamesAccepted") && !is_true(granted, "Established") {
            continue;
        }
        let name = object::name(granted).to_string();
        still.push(name.clone());
        let basis = basis_digest(definition.spec_digest, granted);
        if served
            .by_definition
            .get(&name)
            .is_some_and(|(was, _)| *was == basis)
        {
            continue;
        }
        // The whole definition (its schemas) only now that it is served anew.
        let mut crd = (**definition.stored).clone();
        if let (Some(whole), Some(status)) = (crd.as_object_mut(), granted.get("status")) {
            whole.insert("status".into(), status.clone());
        }
        let transport: Arc<dyn crate::custom::conversion::ConversionTransport> =
            served.webhooks.clone();
        let resources = match crate::custom::resources_for(&crd, Some(transport)) {
            Ok(resources) => resources,
            Err(e) => {
                tracing::warn!(definition = name, error = %e, "customresourcedefinition not served");
                continue;
            }
        };
        let now: Vec<GroupVersionResource> = resources
            .iter()
            .map(|r| (r.group.clone(), r.version.clone(), r.resource.clone()))
            .collect();
        if let Some((_, before)) = served.by_definition.get(&name) {
            let gone: Vec<_> = before
                .iter()
                .filter(|gvr| !now.contains(gvr))
                .cloned()
                .collect();
            if !gone.is_empty() {
                core.remove_resources(&gone);
            }
        }
        core.add_resources(resources);
        tracing::info!(definition = name, "serving custom resources");
        served.by_definition.insert(name, (basis, now));
    }
    let removed: Vec<String> = served
        .by_definition
        .keys()
        .filter(|name| !still.contains(name))
        .cloned()
        .collect();
    for name in removed {
        if let Some((_, gvrs)) = served.by_definition.remove(&name) {
            core.remove_resources(&gvrs);
            tracing::info!(definition = name, "stopped serving custom resources");
        }
    }
}

/// A deleted definition: its custom resources are deleted, then the
/// cleanup finalizer is released, which completes the delete.
async fn clean_up(core: &ApiCore, crd: &Value) -> crate::ApiResult<()> {
    if !object::finalizers(crd)
        .iter()
        .any(|f| f == CLEANUP_FINALIZER)
    {
        return Ok(());
    }
    let name = object::name(crd).to_string();
    set_status_condition(
        core,
        &name,
        (
            "Terminating",
            "True",
            "InstanceDeletionInProgress",
            "CustomResource deletion is in progress",
        ),
    )
    .await?;
    let storage_def = storage_resource(core, crd);
    match storage_def {
        Some(def) if is_true(crd, "Established") => {
            let remaining = super::delete_all(core, &def, None).await?;
            if remaining {
                // Custom resources with finalizers of their own: a later
                // resync finishes the delete.
                return Ok(());
            }
            set_status_condition(
                core,
                &name,
                (
                    "Terminating",
                    "False",
                    "InstanceDeletionCompleted",
                    "removed all instances",
                ),
            )
            .await?;
        }
        _ => {
            set_status_condition(
                core,
                &name,
                (
                    "Terminating",
                    "False",
                    "NeverEstablished",
                    "resource was never established",
                ),
            )
            .await?;
        }
    }
    update_definition(core, &name, View::Main, |updated| {
        let finalizers: Vec<String> = object::finalizers(updated)
            .into_iter()
            .filter(|f| f != CLEANUP_FINALIZER)
            .collect();
        object::set_meta(updated, "finalizers", json!(finalizers));
    })
    .await?;
    tracing::info!(definition = name, "customresourcedefinition deleted");
    Ok(())
}

/// The served resource at the definition's storage version, through which
/// its custom resources are deleted.
fn storage_resource(core: &ApiCore, crd: &Value) -> Option<Arc<crate::registry::ResourceDef>> {
    let group = crd.pointer("/spec/group").and_then(Value::as_str)?;
    let plural = crd
        .pointer("/status/acceptedNames/plural")
        .and_then(Value::as_str)?;
    let snapshot = core.registry.snapshot();
    snapshot
        .resources()
        .iter()
        .find(|r| r.group == group && r.resource == plural && !r.converts_for_storage())
        .cloned()
}

async fn set_status_condition(
    core: &ApiCore,
    name: &str,
    (type_, status, reason, message): (&str, &str, &str, &str),
) -> crate::ApiResult<()> {
    let now = object::now_timestamp();
    update_definition(core, name, View::Status, |updated| {
        set_condition(updated, type_, status, reason, message, &now);
    })
    .await
}

/// Writes `edit` of the stored definition through `view`, as the system,
/// with compare-and-swap (retried on conflict by the core).
async fn update_definition(
    core: &ApiCore,
    name: &str,
    view: View,
    edit: impl Fn(&mut Value),
) -> crate::ApiResult<()> {
    let def = core.resolve(GROUP, "v1", "customresourcedefinitions")?;
    let opts = WriteOptions {
        field_manager: FIELD_MANAGER.to_string(),
        ..Default::default()
    };
    let system = UserInfo::system();
    core.update_internal(&system, &def, None, name, &opts, view, |current| {
        let mut updated = current.clone();
        edit(&mut updated);
        Ok(updated)
    })
    .await
    .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_definition_listed_from_the_same_cached_object_is_not_read_again() {
        let cached = |crd: &Value| LazyObject::cached(Arc::new(CachedObject::encode(crd)));
        let mut widget_definition = crd("widgets.example.com", "widgets", "Widget", &[], true);
        widget_definition["spec"]["versions"] =
            json!([{"name": "v1", "served": true, "storage": true}]);
        let widgets = cached(&widget_definition);
        let gadgets = cached(&crd("gadgets.example.com", "gadgets", "Gadget", &[], true));
        let mut read = ReadDefinitions::default();
        let first = read.read_all(&[widgets.clone(), gadgets]);
        assert!(first[0].0.pointer("/spec/versions").is_none());
        assert_eq!(
            first[0].0.pointer("/spec/names/kind"),
            Some(&json!("Widget"))
        );
        let changed = cached(&crd(
            "gadgets.example.com",
            "gadgets",
            "Gadget",
            &["g"],
            true,
        ));
        let second = read.read_all(&[widgets, changed]);
        assert!(Arc::ptr_eq(&first[0].0, &second[0].0));
        assert!(!Arc::ptr_eq(&first[1].0, &second[1].0));
        assert_ne!(first[1].1, second[1].1);
        assert_eq!(read.0.len(), 2);
    }

    fn crd(name: &str, plural: &str, kind: &str, short: &[&str], accepted: bool) -> Value {
        let names = json!({"plural": plural, "singular": plural.trim_end_matches('s'), "kind": kind,
                           "listKind": format!("{kind}List"), "shortNames": short});
        json!({
            "metadata": {"name": name},
            "spec": {"group": "example.com", "names": names},
            "status": if accepted { json!({"acceptedNames": names}) } else { json!({}) }
        })
    }

    /// The slim form keeps what naming, conditions and clean-up read and
    /// drops the schemas; the spec digest still covers them, so a schema
    /// change serves the definition anew.
    #[test]
    fn a_read_keeps_names_and_status_and_digests_the_schemas() {
        let mut widgets = crd("widgets.example.com", "widgets", "Widget", &[], true);
        widgets["metadata"]["managedFields"] = json!([{"manager": "kubectl"}]);
        widgets["metadata"]["finalizers"] = json!([CLEANUP_FINALIZER]);
        widgets["spec"]["versions"] = json!([{"name": "v1", "served": true, "storage": true,
            "schema": {"openAPIV3Schema": {"type": "object"}}}]);
        widgets["spec"]["conversion"] = json!({"strategy": "None"});
        let (slim, digest) = read_definition(&widgets);
        assert!(slim["spec"].get("versions").is_none());
        assert!(slim["spec"].get("conversion").is_none());
        assert!(slim["metadata"].get("managedFields").is_none());
        assert_eq!(slim["spec"]["names"], widgets["spec"]["names"]);
        assert_eq!(slim["status"], widgets["status"]);
        assert_eq!(object::finalizers(&slim), [CLEANUP_FINALIZER]);
        assert_eq!(object::name(&slim), "widgets.example.com");

        let mut changed = widgets.clone();
        changed["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["type"] = json!("string");
        let (_, changed_digest) = read_definition(&changed);
        assert_ne!(digest, changed_digest);
        assert_ne!(
            basis_digest(&digest, &slim),
            basis_digest(&changed_digest, &slim)
        );
        let mut renamed = (*slim).clone();
        renamed["status"]["acceptedNames"]["plural"] = json!("gadgets");
        assert_ne!(
            basis_digest(&digest, &slim),
            basis_digest(&digest, &renamed)
        );
        assert_eq!(
            basis_digest(&digest, &slim),
            basis_digest(&digest, &slim.clone())
        );
    }

    #[test]
    fn fresh_names_are_accepted() {
        let widgets = crd("widgets.example.com", "widgets", "Widget", &["wd"], false);
        let (names, condition) = accepted_names(&widgets, &[&widgets]);
        assert_eq!(names["plural"], "widgets");
        assert_eq!(names["shortNames"], json!(["wd"]));
        assert_eq!(
            condition,
            ("True", "NoConflicts", "no conflicts found".to_string())
        );
    }

    #[test]
    fn names_another_definition_holds_conflict() {
        let widgets = crd("widgets.example.com", "widgets", "Widget", &["wd"], true);
        let copy = crd("widgets2.example.com", "widgets2", "Widget", &["wd"], false);
        let (names, condition) = accepted_names(&copy, &[&widgets, &copy]);
        assert_eq!(names["plural"], "widgets2");
        assert!(names.get("shortNames").is_none());
        assert!(names.get("kind").is_none() || names["kind"] == "");
        assert_eq!(
            condition,
            (
                "False",
                "ListKindConflict",
                "\"WidgetList\" is already in use".to_string()
            )
        );
    }

    #[test]
    fn names_and_establishment_are_written_together() {
        let mut widgets = crd("widgets.example.com", "widgets", "Widget", &[], false);
        let (names, (status, reason, message)) = accepted_names(&widgets, &[]);
        apply_names(&mut widgets, &names, status, reason, &message, "now");
        assert!(is_true(&widgets, "NamesAccepted"));
        assert_eq!(
            condition(&widgets, "Established").unwrap()["reason"],
            "InitialNamesAccepted"
        );
    }
}
