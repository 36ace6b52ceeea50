//! Field paths and sets of them, as structured-merge-diff models ownership,
//! with upstream's `FieldsV1` encoding (`f:`, `k:`, `v:`, `i:`, `.`) and its
//! human-readable path form (`.spec.containers[name="nginx"].image`).

use std::cmp::Ordering;
use std::fmt;

use serde_json::{Map, Value};

/// One step into a value: a struct field or map key, an associative-list item
/// by its key fields, a set item by its value, or an atomic-list index.
#[derive(Debug, Clone)]
pub enum PathElement {
    Field(String),
    /// Key fields sorted by name, as upstream's `value.FieldList`.
    Key(Vec<(String, Value)>),
    Value(Value),
    Index(usize),
}

impl PathElement {
    fn rank(&self) -> u8 {
        match self {
            Self::Field(_) => 0,
            Self::Key(_) => 1,
            Self::Value(_) => 2,
            Self::Index(_) => 3,
        }
    }

    /// The key used inside `fieldsV1`.
    pub fn serialize(&self) -> String {
        match self {
            Self::Field(name) => {
                let mut key = String::with_capacity(2 + name.len());
                key.push_str("f:");
                key.push_str(name);
                key
            }
            Self::Key(fields) => {
                let object: Map<String, Value> = fields.iter().cloned().collect();
                format!("k:{}", Value::Object(object))
            }
            Self::Value(value) => format!("v:{value}"),
            Self::Index(index) => format!("i:{index}"),
        }
    }

    /// Parses a `fieldsV1` key; `Ok(None)` for a prefix this version does not
    /// know, which upstream skips rather than rejects.
    pub fn deserialize(text: &str) -> Result<Option<Self>, String> {
        let Some((prefix, rest)) = text.split_once(':') else {
            return Err(format!("unable to parse path element {text:?}"));
        };
        let element = match prefix {
            "f" => Self::Field(rest.to_string()),
            "k" => {
                let parsed: Map<String, Value> = serde_json::from_str(rest)
                    .map_err(|err| format!("invalid key {rest:?}: {err}"))?;
                let mut fields: Vec<(String, Value)> = parsed.into_iter().collect();
                fields.sort_by(|a, b| a.0.cmp(&b.0));
                Self::Key(fields)
            }
            "v" => Self::Value(
                serde_json::from_str(rest)
                    .map_err(|err| format!("invalid value {rest:?}: {err}"))?,
            ),
            "i" => Self::Index(
                rest.parse()
                    .map_err(|err| format!("invalid index {rest:?}: {err}"))?,
            ),
            _ => return Ok(None),
        };
        Ok(Some(element))
    }
}

impl Ord for PathElement {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Self::Field(a), Self::Field(b)) => a.cmp(b),
            (Self::Key(a), Self::Key(b)) => compare_field_lists(a, b),
            (Self::Value(a), Self::Value(b)) => compare_values(a, b),
            (Self::Index(a), Self::Index(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for PathElement {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for PathElement {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for PathElement {}

/// Upstream's `PathElement.String()`: `.name`, `[k=v,k2="s"]`, `[="v"]`, `[0]`.
impl fmt::Display for PathElement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Field(name) => write!(f, ".{name}"),
            Self::Key(fields) => {
                let parts: Vec<String> = fields
                    .iter()
                    .map(|(name, value)| format!("{name}={}", value_to_string(value)))
                    .collect();
                write!(f, "[{}]", parts.join(","))
            }
            Self::Value(value) => write!(f, "[={}]", value_to_string(value)),
            Self::Index(index) => write!(f, "[{index}]"),
        }
    }
}

/// Upstream's `value.ToString`: strings quoted, everything else plain.
fn value_to_string(value: &Value) -> String {
    match value {
        Value::Null => "null".to_string(),
        Value::String(text) => Value::String(text.clone()).to_string(),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(value_to_string).collect();
            format!("[{}]", parts.join(", "))
        }
        Value::Object(fields) => {
            let parts: Vec<String> = fields
                .iter()
                .map(|(key, value)| format!("{key}={}", value_to_string(value)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        other => other.to_string(),
    }
}

fn compare_field_lists(a: &[(String, Value)], b: &[(String, Value)]) -> Ordering {
    for ((name_a, value_a), (name_b, value_b)) in a.iter().zip(b) {
        let by_field = name_a
            .cmp(name_b)
            .then_with(|| compare_values(value_a, value_b));
        if by_field != Ordering::Equal {
            return by_field;
        }
    }
    a.len().cmp(&b.len())
}

/// A total order over JSON values, for sorting set items and keys.
pub fn compare_values(a: &Value, b: &Value) -> Ordering {
    fn rank(value: &Value) -> u8 {
        match value {
            Value::Number(_) => 0,
            Value::String(_) => 1,
            Value::Bool(_) => 2,
            Value::Array(_) => 3,
            Value::Object(_) => 4,
            Value::Null => 5,
        }
    }
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x.cmp(&y),
            _ => {
                let (x, y) = (x.as_f64().unwrap_or(0.0), y.as_f64().unwrap_or(0.0));
                x.partial_cmp(&y).unwrap_or(Ordering::Equal)
            }
        },
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (p, q) in x.iter().zip(y) {
                let order = compare_values(p, q);
                if order != Ordering::Equal {
                    return order;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Object(x), Value::Object(y)) => {
            let mut xs: Vec<_> = x.iter().collect();
            let mut ys: Vec<_> = y.iter().collect();
            xs.sort_by(|p, q| p.0.cmp(q.0));
            ys.sort_by(|p, q| p.0.cmp(q.0));
            for ((kx, vx), (ky, vy)) in xs.iter().zip(&ys) {
                let order = kx.cmp(ky).then_with(|| compare_values(vx, vy));
                if order != Ordering::Equal {
                    return order;
                }
            }
            xs.len().cmp(&ys.len())
        }
        _ => rank(a).cmp(&rank(b)),
    }
}

/// A path from the object's root.
pub type Path = Vec<PathElement>;

/// Upstream's `Path.String()`: the elements' strings concatenated.
pub fn path_to_string(path: &[PathElement]) -> String {
    path.iter().map(ToString::to_string).collect()
}

/// A set of paths, stored as a tree: `members` end here, `children` go deeper.
/// Kept normalized: no child set is empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSet {
    members: Members,
    children: Children,
}

/// One level's members, sorted and distinct. A level holds a handful of
/// elements: a sorted vector allocates once where a B-tree allocates per
/// node, and every write records managedFields through these.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Members(Vec<PathElement>);

impl Members {
    fn contains(&self, element: &PathElement) -> bool {
        self.0.binary_search(element).is_ok()
    }

    fn insert(&mut self, element: PathElement) {
        if let Err(at) = self.0.binary_search(&element) {
            self.0.insert(at, element);
        }
    }

    /// Inserts a copy of `element` unless it is there already.
    fn insert_copy(&mut self, element: &PathElement) {
        if let Err(at) = self.0.binary_search(element) {
            self.0.insert(at, element.clone());
        }
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn iter(&self) -> std::slice::Iter<'_, PathElement> {
        self.0.iter()
    }

    fn retain(&mut self, keep: impl FnMut(&PathElement) -> bool) {
        self.0.retain(keep);
    }
}

/// One level's children by element, sorted and distinct.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Children(Vec<(PathElement, FieldSet)>);

impl Children {
    fn find(&self, element: &PathElement) -> Result<usize, usize> {
        self.0.binary_search_by(|(e, _)| e.cmp(element))
    }

    fn get(&self, element: &PathElement) -> Option<&FieldSet> {
        self.find(element).ok().map(|at| &self.0[at].1)
    }

    fn get_mut(&mut self, element: &PathElement) -> Option<&mut FieldSet> {
        self.find(element).ok().map(|at| &mut self.0[at].1)
    }

    fn insert(&mut self, element: PathElement, child: FieldSet) {
        match self.find(&element) {
            Ok(at) => self.0[at].1 = child,
            Err(at) => self.0.insert(at, (element, child)),
        }
    }

    fn remove(&mut self, element: &PathElement) {
        if let Ok(at) = self.find(element) {
            self.0.remove(at);
        }
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn iter(&self) -> impl Iterator<Item = (&PathElement, &FieldSet)> {
        self.0.iter().map(|(element, child)| (element, child))
    }

    fn retain(&mut self, mut keep: impl FnMut(&PathElement, &mut FieldSet) -> bool) {
        self.0.retain_mut(|(element, child)| keep(element, child));
    }
}

impl FieldSet {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.is_empty()
    }

    pub fn insert(&mut self, path: &[PathElement]) {
        match path {
            [] => {}
            [last] => self.members.insert_copy(last),
            [first, rest @ ..] => match self.children.get_mut(first) {
                Some(child) => child.insert(rest),
                None => {
                    let mut child = FieldSet::new();
                    child.insert(rest);
                    self.children.insert(first.clone(), child);
                }
            },
        }
    }

    pub fn has(&self, path: &[PathElement]) -> bool {
        match path {
            [] => false,
            [last] => self.members.contains(last),
            [first, rest @ ..] => self.children.get(first).is_some_and(|c| c.has(rest)),
        }
    }

    pub fn is_member(&self, element: &PathElement) -> bool {
        self.members.contains(element)
    }

    /// The paths below `element`, relative to it.
    pub fn child(&self, element: &PathElement) -> Option<&FieldSet> {
        self.children.get(element)
    }

    pub fn union(&self, other: &FieldSet) -> FieldSet {
        let mut out = self.clone();
        out.absorb(other.clone());
        out
    }

    /// Adds every path of `other` (an in-place union).
    pub fn absorb(&mut self, other: FieldSet) {
        for member in other.members.0 {
            self.members.insert(member);
        }
        for (element, child) in other.children.0 {
            match self.children.get_mut(&element) {
                Some(mine) => mine.absorb(child),
                None => {
                    self.children.insert(element, child);
                }
            }
        }
    }

    pub fn intersection(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet::new();
        out.members = Members(
            self.members
                .iter()
                .filter(|member| other.members.contains(member))
                .cloned()
                .collect(),
        );
        for (element, child) in self.children.iter() {
            if let Some(theirs) = other.children.get(element) {
                let both = child.intersection(theirs);
                if !both.is_empty() {
                    out.children.insert(element.clone(), both);
                }
            }
        }
        out
    }

    /// Paths in `self` not in `other`; a member of `other` does not remove
    /// the paths below it.
    pub fn difference(&self, other: &FieldSet) -> FieldSet {
        let mut out = self.clone();
        out.remove(other, false);
        out
    }

    /// Like `difference`, but a member of `other` also removes everything
    /// below it.
    pub fn recursive_difference(&self, other: &FieldSet) -> FieldSet {
        let mut out = self.clone();
        out.remove(other, true);
        out
    }

    /// Removes the paths of `other` in place (`difference`, or with
    /// `recursive` `recursive_difference`), without copying what stays.
    pub fn remove(&mut self, other: &FieldSet, recursive: bool) {
        if other.is_empty() {
            return;
        }
        self.members
            .retain(|member| !other.members.contains(member));
        self.children.retain(|element, child| {
            if recursive && other.members.contains(element) {
                return false;
            }
            if let Some(theirs) = other.children.get(element) {
                child.remove(theirs, recursive);
            }
            !child.is_empty()
        });
    }

    /// Every path, members of a level before its children, in sorted order
    /// (upstream's `Set.Iterate`).
    pub fn paths(&self) -> Vec<Path> {
        let mut out = Vec::new();
        self.collect_paths(&mut Vec::new(), &mut out);
        out
    }

    fn collect_paths(&self, prefix: &mut Path, out: &mut Vec<Path>) {
        for member in self.members.iter() {
            let mut path = prefix.clone();
            path.push(member.clone());
            out.push(path);
        }
        for (element, child) in self.children.iter() {
            prefix.push(element.clone());
            child.collect_paths(prefix, out);
            prefix.pop();
        }
    }

    pub(crate) fn members(&self) -> impl Iterator<Item = &PathElement> {
        self.members.iter()
    }

    pub(crate) fn children(&self) -> impl Iterator<Item = (&PathElement, &FieldSet)> {
        self.children.iter()
    }

    pub(crate) fn add_member(&mut self, element: PathElement) {
        self.members.insert(element);
    }

    pub(crate) fn set_child(&mut self, element: PathElement, child: FieldSet) {
        if child.is_empty() {
            self.children.remove(&element);
        } else {
            self.children.insert(element, child);
        }
    }

    /// The `fieldsV1` JSON: elements in path-element order, and `"."` first
    /// inside an element that is both a member and has children.
    pub fn to_fields_v1(&self) -> Value {
        Value::Object(self.emit(false))
    }

    fn emit(&self, include_self: bool) -> Map<String, Value> {
        // Sized once: every write records its fields through here, and a
        // map grown key by key rehashes its index at each doubling.
        let mut out = Map::with_capacity(
            usize::from(include_self) + self.members.0.len() + self.children.0.len(),
        );
        if include_self && !self.is_empty() {
            out.insert(".".into(), Value::Object(Map::new()));
        }
        // Members and children in one sorted pass, as a merge of the two.
        let mut members = self.members.iter().peekable();
        let mut children = self.children.iter().peekable();
        loop {
            let member = members.peek().copied();
            let child = children.peek().copied();
            let (element, content) = match (member, child) {
                (None, None) => break,
                (Some(member), Some((element, _))) if member < element => {
                    members.next();
                    (member, Map::new())
                }
                (Some(member), Some((element, child))) => {
                    let is_member = member == element;
                    if is_member {
                        members.next();
                    }
                    children.next();
                    (element, child.emit(is_member))
                }
                (Some(member), None) => {
                    members.next();
                    (member, Map::new())
                }
                (None, Some((element, child))) => {
                    children.next();
                    (element, child.emit(false))
                }
            };
            out.insert(element.serialize(), Value::Object(content));
        }
        out
    }

    /// Parses `fieldsV1`.
    pub fn from_fields_v1(value: &Value) -> Result<FieldSet, String> {
        let Value::Object(fields) = value else {
            return Err("fieldsV1 must be a JSON object".to_string());
        };
        let (set, _) = Self::read(fields)?;
        Ok(set)
    }

    /// Returns the set below this level and whether the level itself is a
    /// member of its parent.
    fn read(fields: &Map<String, Value>) -> Result<(FieldSet, bool), String> {
        let mut set = FieldSet::new();
        let mut is_member = fields.is_empty();
        for (key, value) in fields {
            if key == "." {
                is_member = true;
                continue;
            }
            let Some(element) = PathElement::deserialize(key)? else {
                continue;
            };
            let Value::Object(inner) = value else {
                return Err(format!("expected an object under {key:?}"));
            };
            let (child, child_is_member) = Self::read(inner)?;
            if child_is_member {
                set.members.insert(element.clone());
            }
            set.set_child(element, child);
        }
        Ok((set, is_member))
    }
}
