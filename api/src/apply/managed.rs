//! `metadata.managedFields` decoded into per-manager field sets and encoded
//! back, with upstream's manager identifiers and entry order.

use chrono::DateTime;
use serde_json::{json, Map, Value};

use super::fieldpath::FieldSet;

pub const APPLY: &str = "Apply";
pub const UPDATE: &str = "Update";

/// One managedFields entry without its fields: what identifies a manager.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManagerKey {
    pub manager: String,
    pub operation: String,
    /// Empty for Apply entries: an applier keeps its entry across versions.
    pub api_version: String,
    pub subresource: String,
}

impl ManagerKey {
    pub fn new(manager: &str, operation: &str, api_version: &str, subresource: &str) -> Self {
        Self {
            manager: if manager.is_empty() {
                "unknown"
            } else {
                manager
            }
            .to_string(),
            operation: operation.to_string(),
            api_version: if operation == APPLY {
                String::new()
            } else {
                api_version.to_string()
            },
            subresource: subresource.to_string(),
        }
    }

    /// Upstream's `BuildManagerIdentifier`: the entry marshalled without
    /// fields, fieldsType and time (and without apiVersion for appliers).
    pub fn identifier(&self) -> String {
        let mut entry = Map::new();
        entry.insert("manager".into(), self.manager.clone().into());
        entry.insert("operation".into(), self.operation.clone().into());
        if !self.api_version.is_empty() {
            entry.insert("apiVersion".into(), self.api_version.clone().into());
        }
        if !self.subresource.is_empty() {
            entry.insert("subresource".into(), self.subresource.clone().into());
        }
        Value::Object(entry).to_string()
    }

    /// Upstream's `printManager`, as conflict messages name a manager.
    pub fn describe(&self) -> String {
        let mut text = Value::String(self.manager.clone()).to_string();
        if !self.subresource.is_empty() {
            text = format!(
                "{text} with subresource {}",
                Value::String(self.subresource.clone())
            );
        }
        if self.operation == UPDATE {
            text = format!("{text} using {}", self.api_version);
        }
        text
    }
}

/// A manager's entry: what it owns, at which version, and when it last
/// changed something.
#[derive(Debug, Clone)]
pub struct Entry {
    pub key: ManagerKey,
    pub api_version: String,
    pub time: Option<String>,
    pub fields: FieldSet,
}

/// All entries of an object; at most one per manager key.
#[derive(Debug, Clone, Default)]
pub struct Managed {
    pub entries: Vec<Entry>,
}

impl Managed {
    /// Decodes `metadata.managedFields`, with upstream's validation messages.
    pub fn decode(value: Option<&Value>) -> Result<Managed, String> {
        let mut managed = Managed::default();
        let entries = match value {
            None | Some(Value::Null) => return Ok(managed),
            Some(Value::Array(entries)) => entries,
            Some(_) => return Err("managedFields must be a list".to_string()),
        };
        for (index, raw) in entries.iter().enumerate() {
            let text = |name: &str| raw.get(name).and_then(Value::as_str).unwrap_or("");
            let operation = text("operation");
            if operation != APPLY && operation != UPDATE {
                return Err("operation must be `Apply` or `Update`".to_string());
            }
            if text("apiVersion").is_empty() {
                return Err("apiVersion must not be empty".to_string());
            }
            match text("fieldsType") {
                "FieldsV1" => {}
                "" => {
                    return Err(format!(
                        "missing fieldsType in managed fields entry {index}"
                    ))
                }
                other => {
                    return Err(format!(
                        "invalid fieldsType {other:?} in managed fields entry {index}"
                    ))
                }
            }
            let fields = match raw.get("fieldsV1") {
                None | Some(Value::Null) => FieldSet::new(),
                Some(fields) => FieldSet::from_fields_v1(fields)
                    .map_err(|err| format!("error decoding versioned set: {err}"))?,
            };
            let key = ManagerKey::new(
                text("manager"),
                operation,
                text("apiVersion"),
                text("subresource"),
            );
            let entry = Entry {
                key: key.clone(),
                api_version: text("apiVersion").to_string(),
                time: raw.get("time").and_then(Value::as_str).map(str::to_string),
                fields,
            };
            // Upstream keys entries by identifier, so a later duplicate wins.
            managed.entries.retain(|e| e.key != key);
            managed.entries.push(entry);
        }
        Ok(managed)
    }

    pub fn remove(&mut self, key: &ManagerKey) -> Option<Entry> {
        let index = self.entries.iter().position(|e| &e.key == key)?;
        Some(self.entries.remove(index))
    }

    pub fn put(&mut self, entry: Entry) {
        match self.entries.iter_mut().find(|e| e.key == entry.key) {
            Some(existing) => *existing = entry,
            None => self.entries.push(entry),
        }
    }

    /// `managedFields` as upstream writes it: sorted by operation, time,
    /// manager, apiVersion and subresource; no entry owns nothing.
    pub fn encode(&self) -> Option<Value> {
        let mut entries: Vec<&Entry> = self
            .entries
            .iter()
            .filter(|e| !e.fields.is_empty())
            .collect();
        if entries.is_empty() {
            return None;
        }
        entries.sort_by(|p, q| {
            p.key
                .operation
                .cmp(&q.key.operation)
                .then_with(|| seconds(&p.time).cmp(&seconds(&q.time)))
                .then_with(|| p.key.manager.cmp(&q.key.manager))
                .then_with(|| p.api_version.cmp(&q.api_version))
                .then_with(|| p.key.subresource.cmp(&q.key.subresource))
        });
        let encoded = entries
            .into_iter()
            .map(|entry| {
                let mut out = Map::new();
                out.insert("manager".into(), entry.key.manager.clone().into());
                out.insert("operation".into(), entry.key.operation.clone().into());
                out.insert("apiVersion".into(), entry.api_version.clone().into());
                if let Some(time) = &entry.time {
                    out.insert("time".into(), time.clone().into());
                }
                out.insert("fieldsType".into(), json!("FieldsV1"));
                out.insert("fieldsV1".into(), entry.fields.to_fields_v1());
                if !entry.key.subresource.is_empty() {
                    out.insert("subresource".into(), entry.key.subresource.clone().into());
                }
                Value::Object(out)
            })
            .collect();
        Some(Value::Array(encoded))
    }
}

/// Update entries kept before the oldest are merged (upstream's
/// `DefaultMaxUpdateManagers`).
const MAX_UPDATE_MANAGERS: usize = 10;

/// The manager name of the merged buckets.
const OLD_UPDATES_MANAGER: &str = "ancient-changes";

impl Managed {
    /// Upstream's `capUpdateManagers`: past ten Update entries, the oldest
    /// are merged into one "ancient-changes" entry per apiVersion.
    pub fn cap_update_managers(&mut self) {
        let is_update = |e: &&Entry| e.key.operation == UPDATE;
        // Every write calls this, and almost every object is under the cap.
        if self.entries.iter().filter(is_update).count() <= MAX_UPDATE_MANAGERS {
            return;
        }
        let mut updaters: Vec<(i64, String, ManagerKey)> = self
            .entries
            .iter()
            .filter(is_update)
            .map(|e| (seconds(&e.time), e.key.identifier(), e.key.clone()))
            .collect();
        updaters.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
        let mut remaining = updaters.len();
        let mut first_by_version: Vec<(String, ManagerKey)> = Vec::new();
        for (_, _, key) in updaters {
            if remaining <= MAX_UPDATE_MANAGERS {
                break;
            }
            let Some(entry) = self.entries.iter().find(|e| e.key == key).cloned() else {
                continue;
            };
            let version = entry.api_version.clone();
            let Some((_, first)) = first_by_version.iter().find(|(v, _)| *v == version) else {
                first_by_version.push((version, key));
                continue;
            };
            let bucket = ManagerKey::new(OLD_UPDATES_MANAGER, UPDATE, &version, "");
            let mut merged = match self.remove(&bucket) {
                Some(existing) => existing,
                None => match self.remove(first) {
                    Some(first_entry) => Entry {
                        key: bucket.clone(),
                        ..first_entry
                    },
                    None => continue,
                },
            };
            self.remove(&key);
            merged.fields = entry.fields.union(&merged.fields);
            merged.api_version = version;
            // The bucket takes the newer time of the update merged into it.
            merged.time = entry.time;
            self.put(merged);
            remaining -= 1;
        }
    }
}

fn seconds(time: &Option<String>) -> i64 {
    time.as_deref()
        .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
        .map(|t| t.timestamp())
        .unwrap_or(0)
}

/// Whether a client asked to reset managedFields: an empty list, or a list
/// of one empty entry.
pub fn is_reset(value: Option<&Value>) -> bool {
    match value {
        Some(Value::Array(entries)) => match entries.as_slice() {
            [] => true,
            [only] => only.as_object().is_some_and(Map::is_empty),
            _ => false,
        },
        _ => false,
    }
}
