//! Server-side apply and managedFields tracking, after kube-apiserver's field
//! manager (k8s.io/apimachinery `util/managedfields`) and
//! structured-merge-diff v4: pure functions over JSON objects, no I/O.
//!
//! - [`apply`] merges an applied configuration (`PATCH` with
//!   `application/apply-patch+yaml`) into the live object, prunes what the
//!   manager applied before and no longer does, and detects conflicts with
//!   other managers.
//! - [`record_update`] records, for create/update/patch writes, the fields a
//!   write changed as owned by its manager (operation `Update`).
//!
//! Both leave the object's `metadata.managedFields` in upstream's form. The
//! merge semantics of each field come from [`schema`]; how `fieldsV1` is
//! written from [`fieldpath`].

pub mod fieldpath;
mod managed;
pub mod schema;
mod typed;

#[cfg(test)]
mod tests;

use serde_json::{Map, Value};

use crate::error::{ApiError, FieldError, StatusDetails, StatusReason};
use fieldpath::{path_to_string, FieldSet, PathElement};
use managed::{Entry, Managed, ManagerKey, APPLY, UPDATE};
pub use schema::CustomSchema;

/// The kind an apply or update is recorded for: its OpenAPI definition name
/// and, for a custom kind, the schema its definition declares.
#[derive(Debug, Clone, Copy)]
pub struct KindSchema<'a> {
    pub definition: &'a str,
    pub custom: Option<CustomSchema>,
}

impl<'a> From<&'a str> for KindSchema<'a> {
    fn from(definition: &'a str) -> Self {
        KindSchema {
            definition,
            custom: None,
        }
    }
}
use schema::{Node, Schema};

/// Who is writing, and how.
#[derive(Debug, Clone, Copy)]
pub struct ManagerContext<'a> {
    /// The request's fieldManager, already defaulted by the caller.
    pub manager: &'a str,
    /// The version the request used, e.g. "apps/v1".
    pub api_version: &'a str,
    /// "status", "scale" or None for the main resource.
    pub subresource: Option<&'a str>,
    /// RFC 3339 with seconds precision, e.g. "2026-11-22T05:00:00Z".
    pub time: &'a str,
}

/// One field another manager owns and the apply would change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// The owner as upstream names it: `"kubectl"` for an applier,
    /// `"kube-controller-manager" using apps/v1` for an updater.
    pub manager: String,
    /// The field in upstream's path form, e.g. `.spec.replicas` or
    /// `.spec.template.spec.containers[name="nginx"].image`.
    pub field: String,
    /// The owner's manager identifier, which orders conflicts as upstream does.
    identifier: String,
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum ApplyError {
    /// Fields owned by other managers would change (409 Conflict).
    #[error("{}", conflict_message(.0))]
    Conflicts(Vec<Conflict>),
    /// The applied configuration cannot be applied as sent (400 BadRequest).
    #[error("{0}")]
    BadRequest(String),
    /// An object does not fit its kind's schema (a missing list key,
    /// duplicate items) or carries undecodable managedFields. Upstream
    /// returns these as plain errors, so HTTP 500.
    #[error("{0}")]
    Invalid(String),
}

impl From<ApplyError> for ApiError {
    fn from(err: ApplyError) -> Self {
        match err {
            ApplyError::Conflicts(conflicts) => {
                let message = conflict_message(&conflicts);
                let causes = conflicts
                    .into_iter()
                    .map(|conflict| FieldError {
                        reason: "FieldManagerConflict",
                        message: format!("conflict with {}", conflict.manager),
                        field: conflict.field,
                    })
                    .collect();
                let mut api = ApiError::new(StatusReason::Conflict, message);
                api.details = Some(Box::new(StatusDetails {
                    causes,
                    ..Default::default()
                }));
                api
            }
            ApplyError::BadRequest(message) => ApiError::bad_request(message),
            // A plain Go error: 500 without a reason.
            ApplyError::Invalid(message) => ApiError::new(StatusReason::Unknown, message),
        }
    }
}

/// Upstream's `getConflictMessage`: one conflict inline, several grouped by
/// manager (managers in identifier order).
fn conflict_message(conflicts: &[Conflict]) -> String {
    if let [only] = conflicts {
        return format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            only.manager, only.field
        );
    }
    let mut by_manager: Vec<(&str, &str, Vec<&str>)> = Vec::new();
    for conflict in conflicts {
        match by_manager
            .iter_mut()
            .find(|(id, _, _)| *id == conflict.identifier)
        {
            Some((_, _, fields)) => fields.push(&conflict.field),
            None => by_manager.push((
                &conflict.identifier,
                &conflict.manager,
                vec![&conflict.field],
            )),
        }
    }
    by_manager.sort_by(|a, b| a.0.cmp(b.0));
    let mut lines = Vec::new();
    for (_, manager, fields) in by_manager {
        lines.push(format!("conflicts with {manager}:"));
        lines.extend(fields.into_iter().map(|field| format!("- {field}")));
    }
    format!(
        "Apply failed with {} conflicts: {}",
        conflicts.len(),
        lines.join("\n")
    )
}

/// Server-side apply. `definition` is the kind's OpenAPI definition name
/// (e.g. "io.k8s.api.apps.v1.Deployment"; an unknown name treats every
/// field as granular maps and atomic lists), `live` the current object
/// (None when apply creates it), `config` the applied configuration (the
/// YAML body as JSON). Returns the new object with `metadata.managedFields`
/// updated; the caller still checks the name against the URL, defaults and
/// validates as for any write.
pub fn apply<'a>(
    live: Option<&Value>,
    config: &Value,
    kind: impl Into<KindSchema<'a>>,
    ctx: &ManagerContext,
    force: bool,
) -> Result<Value, ApplyError> {
    let KindSchema { definition, custom } = kind.into();
    check_applied_type(config, definition, ctx)?;
    let schema = Schema::for_kind(definition, custom);
    let key = ManagerKey::new(
        ctx.manager,
        APPLY,
        ctx.api_version,
        ctx.subresource.unwrap_or(""),
    );
    let (live_object, mut managed) = match live {
        Some(live) => {
            let managed = Managed::decode(managed_fields_of(live)).map_err(|err| {
                ApplyError::Invalid(format!("failed to decode managed fields: {err}"))
            })?;
            (without_managed_fields(live), managed)
        }
        None => (Value::Object(Map::new()), Managed::default()),
    };
    let typed_error = |err: typed::TypeError| {
        ApplyError::Invalid(format!(
            "failed to create typed patch object ({}): {}",
            describe_object(config, ctx.api_version),
            err.0
        ))
    };
    let ignored = ignored_fields(&schema, (definition, custom), ctx.subresource);

    typed::validate(&schema, config).map_err(typed_error)?;
    let merged = typed::merge(&schema, &live_object, config).map_err(typed_error)?;
    let applied = typed::to_field_set(&schema, config)
        .map_err(typed_error)?
        .recursive_difference(&ignored);
    let previous = managed.remove(&key);
    managed.put(Entry {
        key: key.clone(),
        api_version: ctx.api_version.to_string(),
        time: previous.as_ref().and_then(|p| p.time.clone()),
        fields: applied,
    });

    let new_object = match &previous {
        Some(last) if !last.fields.is_empty() => prune(&schema, &merged, &managed, &last.fields),
        _ => merged,
    };
    let comparison = compare_objects(&schema, live_object.clone(), &new_object, &ignored)
        .map_err(|err| ApplyError::Invalid(format!("failed to compare objects: {}", err.0)))?;
    take_from_others(&mut managed, &key, &comparison, force)?;

    let changed = new_object != live_object;
    if let Some(entry) = managed.entries.iter_mut().find(|e| e.key == key) {
        strip_meta(&mut entry.fields);
        if changed {
            entry.time = Some(ctx.time.to_string());
        }
    }
    // A no-op apply leaves the object exactly as it was; only ownership moves.
    let mut object = if changed { new_object } else { live_object };
    set_managed_fields(&mut object, managed.encode());
    Ok(object)
}

/// Records a create/update/patch write by `ctx.manager` (operation
/// "Update"): the fields the write changed become its own and stop being
/// anyone else's. `old` is None on create; `new` is the object about to be
/// stored, whose `metadata.managedFields` is rewritten. managedFields the
/// client sent are honoured as upstream does: `[]` (or `[{}]`) resets them,
/// a missing or empty list keeps the stored ones, and a subresource write
/// always keeps the stored ones.
pub fn record_update<'a>(
    old: Option<&Value>,
    new: &mut Value,
    kind: impl Into<KindSchema<'a>>,
    ctx: &ManagerContext,
) -> Result<(), ApplyError> {
    let KindSchema { definition, custom } = kind.into();
    let schema = Schema::for_kind(definition, custom);
    let key = ManagerKey::new(
        ctx.manager,
        UPDATE,
        ctx.api_version,
        ctx.subresource.unwrap_or(""),
    );
    let stored = || Managed::decode(old.and_then(managed_fields_of)).unwrap_or_default();
    let sent = managed_fields_of(new);
    let mut managed = if ctx.subresource.is_some() {
        stored()
    } else if managed::is_reset(sent) {
        Managed::default()
    } else {
        match Managed::decode(sent) {
            Ok(managed) if !managed.entries.is_empty() => managed,
            _ => stored(),
        }
    };
    set_managed_fields(new, None);
    let old_object = match old {
        Some(old) => without_managed_fields(old),
        None => Value::Object(Map::new()),
    };
    let ignored = ignored_fields(&schema, (definition, custom), ctx.subresource);
    let comparison = compare_objects(&schema, old_object, new, &ignored).map_err(|err| {
        ApplyError::Invalid(format!(
            "failed to update ManagedFields ({}): {}",
            describe_object(new, ctx.api_version),
            err.0
        ))
    })?;

    // Upstream records the write under a placeholder manager first, so the
    // writer's own earlier entry loses what this write removed or changed.
    let placeholder = ManagerKey::new("current-operation", UPDATE, ctx.api_version, "");
    take_from_others(&mut managed, &placeholder, &comparison, true)?;
    let typed::Comparison {
        added,
        modified: mut owned,
        removed,
    } = comparison;
    owned.absorb(added);
    owned.remove(&removed, false);
    owned.remove(&ignored, true);
    strip_meta(&mut owned);
    if !owned.is_empty() {
        let fields = match managed.remove(&key) {
            Some(previous) => {
                owned.absorb(previous.fields);
                owned
            }
            None => owned,
        };
        managed.put(Entry {
            key,
            api_version: ctx.api_version.to_string(),
            time: Some(ctx.time.to_string()),
            fields,
        });
    }
    managed.cap_update_managers();
    set_managed_fields(new, managed.encode());
    Ok(())
}

/// Upstream's version check: the applied object must be of the requested
/// group, version and kind, and must not carry managedFields.
fn check_applied_type(
    config: &Value,
    definition: &str,
    ctx: &ManagerContext,
) -> Result<(), ApplyError> {
    let Value::Object(fields) = config else {
        return Err(ApplyError::BadRequest(
            "error decoding YAML: the applied configuration must be an object".to_string(),
        ));
    };
    let api_version = fields
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let kind = fields.get("kind").and_then(Value::as_str).unwrap_or("");
    let expected_kind = crate::openapi::definitions::builtin()
        .contains_key(definition)
        .then(|| definition.rsplit('.').next())
        .flatten();
    let kind_matches = match expected_kind {
        Some(expected) => kind == expected,
        None => !kind.is_empty(),
    };
    if api_version != ctx.api_version || !kind_matches {
        return Err(ApplyError::BadRequest(format!(
            "invalid object type: {}",
            group_version_kind(api_version, kind)
        )));
    }
    match config.pointer("/metadata/managedFields") {
        None | Some(Value::Null) => Ok(()),
        Some(_) => Err(ApplyError::BadRequest(
            "metadata.managedFields must be nil".to_string(),
        )),
    }
}

/// Go's `schema.GroupVersionKind.String()`: `apps/v1, Kind=Deployment`,
/// `/v1, Kind=Pod`.
fn group_version_kind(api_version: &str, kind: &str) -> String {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    format!("{group}/{version}, Kind={kind}")
}

/// Upstream's `objectGVKNN`: `namespace/name; group/version, Kind=kind`.
fn describe_object(object: &Value, api_version: &str) -> String {
    let text = |pointer: &str| {
        object
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    format!(
        "{}/{}; {}",
        text("/metadata/namespace"),
        text("/metadata/name"),
        group_version_kind(api_version, text("/kind"))
    )
}

/// Fields a write through this (sub)resource can never own: the strategy
/// resets them. The main resource cannot set status; the status subresource
/// cannot set spec (nor, for apps workloads, labels).
fn ignored_fields(
    schema: &Schema,
    (definition, custom): (&str, Option<CustomSchema>),
    subresource: Option<&str>,
) -> FieldSet {
    let mut ignored = FieldSet::new();
    // A custom kind's status is its own only with the status subresource.
    let split = custom.is_none_or(|c| c.status_subresource);
    let declares = |field: &str| {
        split
            && matches!(schema.root(), Node::Struct { properties, .. } if properties.contains_key(field))
    };
    let field = |name: &str| PathElement::Field(name.to_string());
    match subresource {
        None if declares("status") && declares("spec") => ignored.insert(&[field("status")]),
        Some("status") => {
            if declares("spec") {
                ignored.insert(&[field("spec")]);
            }
            if definition.starts_with("io.k8s.api.apps.v1.") {
                ignored.insert(&[field("metadata"), field("labels")]);
            }
        }
        _ => {}
    }
    ignored
}

/// Removes the fields no manager ever owns (upstream's strip set).
fn strip_meta(fields: &mut FieldSet) {
    // Built once: this runs on every write.
    static STRIP: std::sync::OnceLock<FieldSet> = std::sync::OnceLock::new();
    let strip = STRIP.get_or_init(|| {
        let mut strip = FieldSet::new();
        let field = |name: &str| PathElement::Field(name.to_string());
        strip.insert(&[field("apiVersion")]);
        strip.insert(&[field("kind")]);
        strip.insert(&[field("metadata")]);
        for name in [
            "name",
            "namespace",
            "creationTimestamp",
            "selfLink",
            "uid",
            "clusterName",
            "generation",
            "managedFields",
            "resourceVersion",
        ] {
            strip.insert(&[field("metadata"), field(name)]);
        }
        strip
    });
    fields.remove(strip, false);
}

/// Drops from the merged object what the applier applied last time and
/// neither applies now nor anyone else owns (upstream's prune with its
/// add-back passes).
fn prune(schema: &Schema, merged: &Value, managed: &Managed, last: &FieldSet) -> Value {
    let owned = managed
        .entries
        .iter()
        .fold(FieldSet::new(), |all, entry| all.union(&entry.fields));
    let owned = typed::ensure_named_fields(schema, &owned);
    let last = typed::ensure_named_fields(schema, last);
    let to_remove = last.difference(&owned);
    if to_remove.is_empty() {
        return merged.clone();
    }
    typed::remove_items(schema, merged, &to_remove)
}

/// Compares old and new as upstream's typed objects would be: Go's zero
/// values are there even where the JSON omits them.
/// `old` is taken by value: callers build it for the comparison anyway, so
/// only `new` is copied (to be zero-filled).
fn compare_objects(
    schema: &Schema,
    mut old: Value,
    new: &Value,
    ignored: &FieldSet,
) -> Result<typed::Comparison, typed::TypeError> {
    let mut filled;
    let new = match new.as_object() {
        // A create: an empty old object has nothing for new to take, so
        // new is compared as it is, without a copy.
        Some(fields) if old.as_object().is_some_and(Map::is_empty) => {
            fill_zero_values(schema, &schema.root(), &mut old, NewSide::Read(fields), 0);
            new
        }
        _ => {
            filled = new.clone();
            if let Some(fields) = filled.as_object_mut() {
                fill_zero_values(schema, &schema.root(), &mut old, NewSide::Fill(fields), 0);
            }
            &filled
        }
    };
    let mut comparison = typed::compare(schema, &old, new)?;
    comparison.exclude(ignored);
    Ok(comparison)
}

/// Struct fields that are values, not pointers, in upstream's Go types, so
/// an object always has them (as `{}`) whatever its JSON said.
const ZERO_STRUCT_FIELDS: &[&str] = &[
    "metadata",
    "spec",
    "status",
    "template",
    "strategy",
    "updateStrategy",
    "jobTemplate",
];

/// The new side of a zero-value fill: filled like old, or only read when
/// old starts empty (a create), since then old has nothing to give it.
enum NewSide<'a> {
    Fill(&'a mut Map<String, Value>),
    Read(&'a Map<String, Value>),
}

impl NewSide<'_> {
    fn fields(&self) -> &Map<String, Value> {
        match self {
            Self::Fill(fields) => fields,
            Self::Read(fields) => fields,
        }
    }

    fn insert(&mut self, name: &str, value: Value) {
        if let Self::Fill(fields) = self {
            fields.insert(name.to_string(), value);
        }
    }

    fn child(&mut self, name: &str) -> Option<NewSide<'_>> {
        match self {
            Self::Fill(fields) => fields
                .get_mut(name)
                .and_then(Value::as_object_mut)
                .map(NewSide::Fill),
            Self::Read(fields) => fields
                .get(name)
                .and_then(Value::as_object)
                .map(NewSide::Read),
        }
    }
}

/// Gives each side what the other has and Go would have on both: value
/// structs as `{}` and fields without `omitempty` (the schema's required
/// ones) as `null`. Compared that way, a write that sets a struct's first
/// field owns the field, not the struct (no `"."`), as upstream records it.
fn fill_zero_values(
    schema: &Schema,
    node: &Node,
    old: &mut Value,
    mut new: NewSide<'_>,
    depth: usize,
) {
    let Value::Object(old) = old else {
        return;
    };
    let Node::Struct {
        properties,
        required,
        ..
    } = node
    else {
        return;
    };
    if depth > 8 {
        return;
    }
    for name in required.iter().filter_map(Value::as_str) {
        let in_new = new.fields().contains_key(name);
        if in_new && !old.contains_key(name) {
            old.insert(name.to_string(), Value::Null);
        } else if old.contains_key(name) && !in_new {
            new.insert(name, Value::Null);
        }
    }
    for name in ZERO_STRUCT_FIELDS
        .iter()
        .filter(|n| properties.contains_key(**n))
    {
        let in_old = matches!(old.get(*name), Some(Value::Object(_)));
        let in_new = matches!(new.fields().get(*name), Some(Value::Object(_)));
        if in_old && !in_new {
            new.insert(name, Value::Object(Map::new()));
        } else if in_new && !in_old {
            old.insert((*name).to_string(), Value::Object(Map::new()));
        }
        if let (Some(o), Some(n)) = (old.get_mut(*name), new.child(name)) {
            fill_zero_values(schema, &schema.field(node, name), o, n, depth + 1);
        }
    }
}

/// Upstream's `Updater.update`: fields the write changed leave every other
/// manager (a conflict unless forced), fields it removed leave everyone.
fn take_from_others(
    managed: &mut Managed,
    writer: &ManagerKey,
    comparison: &typed::Comparison,
    force: bool,
) -> Result<(), ApplyError> {
    if managed.entries.iter().all(|e| &e.key == writer) {
        // Nobody else owns anything (every create, most first writes).
        return Ok(());
    }
    let changed = comparison.changed();
    if !force {
        let mut conflicts = Vec::new();
        for entry in managed.entries.iter().filter(|e| &e.key != writer) {
            for path in entry.fields.intersection(&changed).paths() {
                conflicts.push(Conflict {
                    manager: entry.key.describe(),
                    field: path_to_string(&path),
                    identifier: entry.key.identifier(),
                });
            }
        }
        if !conflicts.is_empty() {
            conflicts.sort_by(|a, b| a.identifier.cmp(&b.identifier));
            return Err(ApplyError::Conflicts(conflicts));
        }
    }
    for entry in managed.entries.iter_mut().filter(|e| &e.key != writer) {
        entry.fields.remove(&changed, false);
        entry.fields.remove(&comparison.removed, false);
    }
    managed.entries.retain(|e| !e.fields.is_empty());
    Ok(())
}

// Field by field, not `Value::pointer`, which allocates for every token;
// this runs on every write.
fn managed_fields_of(object: &Value) -> Option<&Value> {
    crate::object::meta(object).and_then(|meta| meta.get("managedFields"))
}

fn without_managed_fields(object: &Value) -> Value {
    let mut copy = object.clone();
    set_managed_fields(&mut copy, None);
    copy
}

fn set_managed_fields(object: &mut Value, encoded: Option<Value>) {
    let Some(fields) = object.as_object_mut() else {
        return;
    };
    match encoded {
        Some(encoded) => {
            let metadata = fields
                .entry("metadata")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Some(metadata) = metadata.as_object_mut() {
                metadata.insert("managedFields".into(), encoded);
            }
        }
        None => {
            if let Some(metadata) = fields.get_mut("metadata").and_then(Value::as_object_mut) {
                metadata.remove("managedFields");
            }
        }
    }
}
