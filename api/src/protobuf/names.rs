//! How each message maps to JSON: field names recovered from the OpenAPI
//! definitions (prost only keeps snake_case names), fields that Go embeds
//! inline, and the types whose Go JSON form is not an object.

use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

use serde_json::Value;

use super::schema::{self, Kind, Label, MESSAGES};

/// The JSON form of a message, where Go gives the type its own
/// MarshalJSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    Object,
    /// meta/v1 Time: RFC 3339, whole seconds.
    Time,
    /// meta/v1 MicroTime: RFC 3339 with six fraction digits.
    MicroTime,
    /// meta/v1 Duration: Go's duration string.
    Duration,
    IntOrString,
    Quantity,
    /// Embedded JSON bytes (RawExtension, FieldsV1, apiextensions JSON).
    RawJson,
    /// A Go `[]string` type wrapped in a message (`Verbs`, `ExtraValue`).
    StringList,
    PropsOrArray,
    PropsOrBool,
    PropsOrStringArray,
}

#[derive(Debug)]
pub(super) struct FieldName {
    pub(super) json: Box<str>,
    /// A Go struct embedded with `json:",inline"`: its fields belong to the
    /// parent object; `json` is used only if the value is not an object.
    pub(super) inline: bool,
    /// Diagnostics: the tests check how names were found.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(super) source: NameSource,
}

/// Where a JSON name came from, best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NameSource {
    /// The message's own OpenAPI definition.
    Definition,
    /// The only spelling of that name across all definitions.
    OtherDefinition,
    /// lowerCamelCase of prost's snake_case name.
    Guess,
}

pub(super) struct MessageLayout {
    pub(super) shape: Shape,
    /// Parallel to the message's `fields`.
    pub(super) fields: Vec<FieldName>,
    /// Whether an OpenAPI definition describes this message (diagnostics).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(super) has_definition: bool,
}

/// Built on first use: it needs the OpenAPI definitions, which are
/// themselves generated once per process.
pub(super) fn layout(index: u32) -> Option<&'static MessageLayout> {
    static LAYOUT: OnceLock<Vec<MessageLayout>> = OnceLock::new();
    LAYOUT
        .get_or_init(|| {
            let mut definitions = crate::openapi::definitions::builtin().parse_all();
            // The discovery documents (`/api`, `/apis`, `/apis/<group>/<version>`)
            // are served as protobuf too; their JSON names
            // (`serverAddressByClientCIDRs`) cannot be guessed from prost's.
            for (name, definition) in crate::openapi::definitions::discovery() {
                definitions.entry(name).or_insert(definition);
            }
            build(&definitions)
        })
        .get(usize::try_from(index).ok()?)
}

const META_V1: &str = "k8s.io.apimachinery.pkg.apis.meta.v1.";
const APIEXTENSIONS: &str = "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.";

fn shape_of(name: &str) -> Shape {
    let lower = name.to_ascii_lowercase();
    let meta = lower.strip_prefix(META_V1);
    let apiextensions = lower
        .strip_prefix(APIEXTENSIONS)
        .and_then(|rest| rest.split_once('.'))
        .map(|(_, message)| message);
    match (meta, apiextensions, lower.as_str()) {
        (Some("time"), ..) => Shape::Time,
        (Some("microtime"), ..) => Shape::MicroTime,
        (Some("duration"), ..) => Shape::Duration,
        (Some("fieldsv1"), ..) => Shape::RawJson,
        (Some("verbs"), ..) => Shape::StringList,
        (_, Some("json"), _) => Shape::RawJson,
        (_, Some("jsonschemapropsorarray"), _) => Shape::PropsOrArray,
        (_, Some("jsonschemapropsorbool"), _) => Shape::PropsOrBool,
        (_, Some("jsonschemapropsorstringarray"), _) => Shape::PropsOrStringArray,
        (_, _, "k8s.io.apimachinery.pkg.util.intstr.intorstring") => Shape::IntOrString,
        (_, _, "k8s.io.apimachinery.pkg.api.resource.quantity")
        | (_, _, "k8s.io.apimachinery.pkg.api.resource.quantityvalue") => Shape::Quantity,
        (_, _, "k8s.io.apimachinery.pkg.runtime.rawextension") => Shape::RawJson,
        (_, _, other) if other.ends_with(".extravalue") => Shape::StringList,
        _ => Shape::Object,
    }
}

/// Lowercase letters and digits only: `volumeID`, `volume_id` and
/// `x-kubernetes-list-type` / `x_kubernetes_list_type` compare equal.
pub(super) fn normalize(name: &str) -> String {
    name.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// `io.k8s.api.core.v1.Pod` for `k8s.io.api.core.v1.Pod`, lowercased; Go
/// module names use dashes where proto packages use underscores.
fn definition_key(message: &str) -> Option<String> {
    let rest = message.strip_prefix("k8s.io.")?;
    Some(format!("io.k8s.{}", rest.replace('_', "-")).to_ascii_lowercase())
}

/// `io.k8s.api.core.v1.pod` → `io.k8s.api.core.pod`.
fn unversioned_key(key: &str) -> Option<String> {
    let (package, name) = key.rsplit_once('.')?;
    let (group, _version) = package.rsplit_once('.')?;
    Some(format!("{group}.{name}"))
}

fn lower_camel(snake: &str) -> String {
    let mut out = String::with_capacity(snake.len());
    for (i, part) in snake.split('_').enumerate() {
        let mut chars = part.chars();
        match chars.next() {
            Some(first) if i > 0 => {
                out.push(first.to_ascii_uppercase());
                out.push_str(chars.as_str());
            }
            _ => out.push_str(part),
        }
    }
    out
}

/// normalized → JSON name for one definition's properties.
type Properties = HashMap<String, String>;

fn build(definitions: &BTreeMap<String, Value>) -> Vec<MessageLayout> {
    let mut by_key: HashMap<String, Properties> = HashMap::new();
    // The same kind in every version of its group, merged: k8s-pb may know
    // a version (resource.k8s.io/v1) the OpenAPI definitions predate, and
    // JSON names do not change between versions.
    let mut by_unversioned: HashMap<String, Properties> = HashMap::new();
    // Across all definitions; `None` once two spellings disagree.
    let mut global: HashMap<String, Option<String>> = HashMap::new();
    for (name, definition) in definitions {
        let Some(properties) = definition.get("properties").and_then(Value::as_object) else {
            continue;
        };
        let mut normalized = Properties::new();
        for json_name in properties.keys() {
            let key = normalize(json_name);
            global
                .entry(key.clone())
                .and_modify(|seen| {
                    if seen.as_deref() != Some(json_name.as_str()) {
                        *seen = None;
                    }
                })
                .or_insert_with(|| Some(json_name.clone()));
            normalized.insert(key, json_name.clone());
        }
        if let Some(unversioned) = unversioned_key(&name.to_ascii_lowercase()) {
            by_unversioned
                .entry(unversioned)
                .or_default()
                .extend(normalized.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        by_key.insert(name.to_ascii_lowercase(), normalized);
    }

    let shapes: Vec<Shape> = MESSAGES.iter().map(|m| shape_of(m.name)).collect();
    MESSAGES
        .iter()
        .map(|message| {
            let key = definition_key(message.name);
            let exact = key.as_ref().and_then(|key| by_key.get(key));
            let merged = key
                .as_ref()
                .and_then(|key| by_unversioned.get(&unversioned_key(key)?));
            let properties = exact.or(merged);
            let fields = message
                .fields
                .iter()
                .map(|field| {
                    let key = normalize(field.name);
                    if let Some(json_name) = properties.and_then(|p| p.get(&key)) {
                        return FieldName {
                            json: json_name.as_str().into(),
                            inline: false,
                            source: NameSource::Definition,
                        };
                    }
                    let (json, source) = match global.get(&key) {
                        Some(Some(json_name)) => {
                            (json_name.as_str().into(), NameSource::OtherDefinition)
                        }
                        _ => (lower_camel(field.name).into(), NameSource::Guess),
                    };
                    // Another version's schema may differ in shape (an
                    // alpha `spec` that v1 flattened), so it must account
                    // for every nested field before a field counts as inline.
                    let inline = match (exact, merged) {
                        (Some(p), _) => is_inline(field, p, &shapes, false),
                        (None, Some(p)) => is_inline(field, p, &shapes, true),
                        (None, None) => false,
                    };
                    FieldName {
                        json,
                        inline,
                        source,
                    }
                })
                .collect();
            MessageLayout {
                shape: shape_of(message.name),
                fields,
                has_definition: properties.is_some(),
            }
        })
        .collect()
}

/// A singular message field absent from the parent's JSON schema whose own
/// fields mostly appear there: Go embedded it inline (Volume.volumeSource,
/// Probe.handler, ConfigMapKeySelector.localObjectReference). "Mostly",
/// because k8s-pb may know fields newer than the OpenAPI definitions.
fn is_inline(field: &schema::Field, parent: &Properties, shapes: &[Shape], strict: bool) -> bool {
    let (Label::Single, Kind::Message(index)) = (field.label, field.kind) else {
        return false;
    };
    let (covered, total) = coverage(index, parent, shapes, 0);
    total > 0
        && if strict {
            covered == total
        } else {
            covered * 2 > total
        }
}

/// How many of a message's fields the parent's properties hold, counting
/// through embedded structs that are themselves inline
/// (NamedRuleWithOperations → RuleWithOperations → Rule).
fn coverage(index: u32, parent: &Properties, shapes: &[Shape], depth: usize) -> (usize, usize) {
    let object = usize::try_from(index)
        .ok()
        .and_then(|i| shapes.get(i))
        .is_some_and(|shape| *shape == Shape::Object);
    let Some(message) = schema::message(index).filter(|_| object && depth < 4) else {
        return (0, 0);
    };
    let mut covered = 0;
    let mut total = 0;
    for field in message.fields {
        if parent.contains_key(&normalize(field.name)) {
            covered += 1;
            total += 1;
            continue;
        }
        match (field.label, field.kind) {
            (Label::Single, Kind::Message(nested)) => {
                let (c, t) = coverage(nested, parent, shapes, depth + 1);
                if t > 0 && c * 2 > t {
                    covered += c;
                    total += t;
                } else {
                    total += 1;
                }
            }
            _ => total += 1,
        }
    }
    (covered, total)
}

/// The JSON keys of one Go struct in the order Go writes them: the struct's
/// fields as declared, with inline-embedded structs' fields in their place,
/// after `kind` and `apiVersion` for a type that embeds TypeMeta.
#[derive(Debug)]
pub(crate) struct FieldOrder {
    /// foldhash: looked up for every key of every struct a write stores.
    rank: HashMap<Box<str>, u16, foldhash::fast::FixedState>,
}

impl FieldOrder {
    /// Where `key` goes; a key Go does not know sorts last.
    pub(crate) fn rank(&self, key: &str) -> u16 {
        self.rank.get(key).copied().unwrap_or(u16::MAX)
    }
}

/// The Go field order of the struct the OpenAPI definition `definition`
/// (`io.k8s.api.apps.v1.DeploymentSpec`) describes, when a protobuf message
/// describes it too.
pub(crate) fn field_order(definition: &str) -> Option<&'static FieldOrder> {
    static ORDERS: OnceLock<HashMap<String, FieldOrder>> = OnceLock::new();
    ORDERS
        .get_or_init(build_field_orders)
        .get(&definition.to_ascii_lowercase())
}

/// ObjectMeta's order, looked up once: setting a metadata field on a write
/// and splicing each stored object's resourceVersion ask for it, and a
/// lookup lowercases and hashes the definition's name.
pub(crate) fn object_meta_order() -> Option<&'static FieldOrder> {
    static ORDER: OnceLock<Option<&'static FieldOrder>> = OnceLock::new();
    *ORDER.get_or_init(|| field_order("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"))
}

fn build_field_orders() -> HashMap<String, FieldOrder> {
    let definitions = crate::openapi::definitions::builtin().parse_all();
    let lowered: HashMap<String, &Value> = definitions
        .iter()
        .map(|(name, definition)| (name.to_ascii_lowercase(), definition))
        .collect();
    let mut orders = HashMap::new();
    for (index, message) in MESSAGES.iter().enumerate() {
        let Some(key) = definition_key(message.name) else {
            continue;
        };
        let Some(definition) = lowered.get(&key) else {
            continue;
        };
        let properties = definition.get("properties").and_then(Value::as_object);
        let mut names: Vec<Box<str>> = Vec::new();
        let type_meta =
            properties.is_some_and(|p| p.contains_key("kind") && p.contains_key("apiVersion"));
        let index = u32::try_from(index).unwrap_or(u32::MAX);
        push_declared(index, &mut names, 0);
        if type_meta && !names.iter().any(|name| &**name == "kind") {
            names.splice(0..0, ["kind".into(), "apiVersion".into()]);
        }
        let rank = names
            .into_iter()
            .enumerate()
            .map(|(position, name)| (name, u16::try_from(position).unwrap_or(u16::MAX)))
            .collect();
        orders.insert(key, FieldOrder { rank });
    }
    orders
}

/// Appends the JSON names of message `index` in declaration order, inline
/// embedded messages expanded where they are declared.
fn push_declared(index: u32, names: &mut Vec<Box<str>>, depth: usize) {
    let (Some(message), Some(layout)) = (schema::message(index), layout(index)) else {
        return;
    };
    let mut fields: Vec<(u16, usize)> = message
        .fields
        .iter()
        .enumerate()
        .map(|(position, field)| (field.declared, position))
        .collect();
    fields.sort_unstable();
    for (_, position) in fields {
        let (field, name) = (&message.fields[position], &layout.fields[position]);
        match field.kind {
            Kind::Message(nested) if name.inline && depth < 4 => {
                push_declared(nested, names, depth + 1)
            }
            _ => names.push(name.json.clone()),
        }
    }
}
