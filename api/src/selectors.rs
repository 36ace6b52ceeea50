//! Label and field selectors, parsed once per request and matched per object.
//! Syntax and errors follow k8s.io/apimachinery/pkg/labels and pkg/fields.

use std::borrow::Cow;

use serde_json::Value;

use crate::error::ApiError;
use crate::registry::ResourceDef;
use crate::validate::object_meta;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    DoesNotExist(String),
}

/// A parsed label selector; the empty selector matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector {
    requirements: Vec<Requirement>,
}

struct Lexer<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Lexer<'_> {
    fn skip_ws(&mut self) {
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }
    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.s.get(self.pos).copied()
    }
    fn eat(&mut self, token: &str) -> bool {
        self.skip_ws();
        if self.s[self.pos..].starts_with(token.as_bytes()) {
            self.pos += token.len();
            true
        } else {
            false
        }
    }
    /// A key or value: everything up to a delimiter.
    fn word(&mut self) -> String {
        self.skip_ws();
        let start = self.pos;
        while self.pos < self.s.len() {
            let c = self.s[self.pos];
            if c.is_ascii_whitespace() || matches!(c, b',' | b'=' | b'!' | b'(' | b')') {
                break;
            }
            self.pos += 1;
        }
        String::from_utf8_lossy(&self.s[start..self.pos]).into_owned()
    }
}

fn invalid_selector(selector: &str, why: &str) -> ApiError {
    ApiError::bad_request(format!(
        "unable to parse requirement: {why} (in {selector:?})"
    ))
}

fn check_key(selector: &str, key: &str) -> Result<(), ApiError> {
    let problems = object_meta::qualified_name_problems(key);
    if let Some(p) = problems.first() {
        return Err(invalid_selector(
            selector,
            &format!("invalid label key \"{key}\": {p}"),
        ));
    }
    Ok(())
}

fn check_value(selector: &str, value: &str) -> Result<(), ApiError> {
    let problems = object_meta::label_value_problems(value);
    if let Some(p) = problems.first() {
        return Err(invalid_selector(
            selector,
            &format!("invalid label value: \"{value}\": at key: {p}"),
        ));
    }
    Ok(())
}

impl LabelSelector {
    pub fn parse(selector: &str) -> Result<Self, ApiError> {
        let mut lx = Lexer {
            s: selector.as_bytes(),
            pos: 0,
        };
        let mut requirements = Vec::new();
        if lx.peek().is_none() {
            return Ok(Self::default());
        }
        loop {
            let req = if lx.eat("!") {
                let key = lx.word();
                check_key(selector, &key)?;
                Requirement::DoesNotExist(key)
            } else {
                let key = lx.word();
                if key.is_empty() {
                    return Err(invalid_selector(selector, "found '', expected: identifier"));
                }
                check_key(selector, &key)?;
                if lx.eat("==") || lx.eat("=") {
                    let v = lx.word();
                    check_value(selector, &v)?;
                    Requirement::Equals(key, v)
                } else if lx.eat("!=") {
                    let v = lx.word();
                    check_value(selector, &v)?;
                    Requirement::NotEquals(key, v)
                } else {
                    let save = lx.pos;
                    let op = lx.word();
                    match op.as_str() {
                        "in" | "notin" => {
                            if !lx.eat("(") {
                                return Err(invalid_selector(selector, "found '', expected: '('"));
                            }
                            let mut values = Vec::new();
                            loop {
                                if lx.eat(")") {
                                    break;
                                }
                                let v = lx.word();
                                check_value(selector, &v)?;
                                values.push(v);
                                if lx.eat(")") {
                                    break;
                                }
                                if !lx.eat(",") {
                                    return Err(invalid_selector(selector, "expected ',' or ')'"));
                                }
                            }
                            if values.is_empty() {
                                return Err(invalid_selector(
                                    selector,
                                    "for 'in', 'notin' operators, values set can't be empty",
                                ));
                            }
                            if op == "in" {
                                Requirement::In(key, values)
                            } else {
                                Requirement::NotIn(key, values)
                            }
                        }
                        "" => {
                            lx.pos = save;
                            Requirement::Exists(key)
                        }
                        other => {
                            return Err(invalid_selector(
                                selector,
                                &format!("found '{other}', expected: in, notin, =, ==, !=, gt, lt"),
                            ))
                        }
                    }
                }
            };
            requirements.push(req);
            match lx.peek() {
                None => break,
                Some(b',') => {
                    lx.pos += 1;
                }
                Some(c) => {
                    return Err(invalid_selector(
                        selector,
                        &format!("found '{}', expected: ',' or 'end of string'", c as char),
                    ))
                }
            }
        }
        Ok(Self { requirements })
    }

    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// A `metav1.LabelSelector` object (matchLabels and matchExpressions),
    /// as upstream's LabelSelectorAsSelector: `{}` selects everything; None
    /// for an operator it does not know or values that do not fit it.
    pub fn from_object(selector: &Value) -> Option<Self> {
        let mut requirements = Vec::new();
        if let Some(labels) = selector.get("matchLabels").and_then(Value::as_object) {
            for (key, value) in labels {
                requirements.push(Requirement::Equals(
                    key.clone(),
                    value.as_str()?.to_string(),
                ));
            }
        }
        let expressions = selector.get("matchExpressions").and_then(Value::as_array);
        for expression in expressions.into_iter().flatten() {
            let key = expression.get("key")?.as_str()?.to_string();
            let values = crate::object::strings_at(expression, "values");
            let requirement = match expression.get("operator")?.as_str()? {
                "In" if !values.is_empty() => Requirement::In(key, values),
                "NotIn" if !values.is_empty() => Requirement::NotIn(key, values),
                "Exists" if values.is_empty() => Requirement::Exists(key),
                "DoesNotExist" if values.is_empty() => Requirement::DoesNotExist(key),
                _ => return None,
            };
            requirements.push(requirement);
        }
        Some(Self { requirements })
    }

    /// Matches against `metadata.labels` of a Kubernetes object.
    pub fn matches(&self, object: &Value) -> bool {
        let labels = object.pointer("/metadata/labels");
        let get = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
        self.requirements.iter().all(|r| match r {
            Requirement::Equals(k, v) => get(k) == Some(v.as_str()),
            Requirement::NotEquals(k, v) => get(k) != Some(v.as_str()),
            Requirement::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            Requirement::NotIn(k, vs) => get(k).is_none_or(|x| !vs.iter().any(|v| v == x)),
            Requirement::Exists(k) => get(k).is_some(),
            Requirement::DoesNotExist(k) => get(k).is_none(),
        })
    }
}

/// A parsed field selector: `field=value`, `field==value`, `field!=value`, comma-separated.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector {
    terms: Vec<FieldTerm>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct FieldTerm {
    field: String,
    equal: bool,
    value: String,
    /// What the field reads as when the object leaves it out.
    absent: &'static str,
}

impl FieldSelector {
    /// Parses and checks every field against the kind's selectable fields
    /// (upstream answers 400 for any other field). `absent` is how the kind
    /// renders a field an object leaves out: its Go zero value.
    pub fn parse(
        selector: &str,
        selectable: &[&str],
        absent: &dyn Fn(&str) -> &'static str,
    ) -> Result<Self, ApiError> {
        let mut terms = Vec::new();
        for part in selector.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (field, equal, value) = if let Some((f, v)) = part.split_once("!=") {
                (f, false, v)
            } else if let Some((f, v)) = part.split_once("==") {
                (f, true, v)
            } else if let Some((f, v)) = part.split_once('=') {
                (f, true, v)
            } else {
                return Err(ApiError::bad_request(format!(
                    "invalid selector: '{part}'; can't understand '{part}'"
                )));
            };
            let field = field.trim();
            if !selectable.contains(&field) {
                return Err(ApiError::bad_request(format!(
                    "field label not supported: {field}"
                )));
            }
            terms.push(FieldTerm {
                field: field.to_string(),
                equal,
                value: value.trim().to_string(),
                absent: absent(field),
            });
        }
        Ok(Self { terms })
    }

    /// A field selector on objects of `def`: metadata.name, for namespaced
    /// resources metadata.namespace, and the resource's own selectable
    /// fields, an absent one reading as the kind's Go zero value.
    pub fn for_resource(selector: &str, def: &ResourceDef) -> Result<Self, ApiError> {
        let mut fields = vec!["metadata.name"];
        if def.namespaced {
            fields.push("metadata.namespace");
        }
        fields.extend(def.selectable_fields.iter().map(String::as_str));
        Self::parse(selector, &fields, &|field| {
            def.kind_impl.absent_field_value(field)
        })
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// Matches by reading each field's dotted path from the object.
    pub fn matches(&self, object: &Value) -> bool {
        self.terms
            .iter()
            .all(|term| (field_value(object, &term.field, term.absent) == term.value) == term.equal)
    }

    /// Whether an object named `name` in `namespace` matches, when every
    /// term is on one of those two fields (None: other fields decide), so
    /// a watcher can tell from a storage key alone.
    pub fn matches_name(&self, name: &str, namespace: &str) -> Option<bool> {
        self.terms
            .iter()
            .map(|term| {
                let value = match term.field.as_str() {
                    "metadata.name" => name,
                    "metadata.namespace" => namespace,
                    _ => return None,
                };
                Some((value == term.value) == term.equal)
            })
            .try_fold(true, |all, term| Some(all && term?))
    }

    /// The `field=value` terms, which an index on the field can answer.
    pub fn equalities(&self) -> impl Iterator<Item = (&str, &str)> {
        self.terms
            .iter()
            .filter(|term| term.equal)
            .map(|term| (term.field.as_str(), term.value.as_str()))
    }
}

/// What a field selector compares for `field` (a dotted path) of `object`:
/// a string as it is, other values as JSON, and `absent` when the object
/// leaves the field out or holds null.
pub fn field_value<'a>(object: &'a Value, field: &str, absent: &'static str) -> Cow<'a, str> {
    let pointer = format!("/{}", field.replace('.', "/"));
    match object.pointer(&pointer) {
        Some(Value::String(s)) => Cow::Borrowed(s),
        Some(Value::Null) | None => Cow::Borrowed(absent),
        Some(other) => Cow::Owned(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn absent_fields_select_as_their_go_zero_values() {
        let node = json!({"metadata": {"name": "n"}, "spec": {}});
        let resource = |group: &str, resource: &str| {
            crate::kinds::builtin_resources()
                .into_iter()
                .find(|r| r.group == group && r.resource == resource)
                .expect("a built-in resource")
        };
        let nodes = resource("", "nodes");
        let select = |s: &str| FieldSelector::for_resource(s, &nodes).expect("parses");
        assert!(select("spec.unschedulable==false").matches(&node));
        assert!(!select("spec.unschedulable==true").matches(&node));
        assert!(select("spec.unschedulable!=true").matches(&node));
        let cordoned = json!({"spec": {"unschedulable": true}});
        assert!(select("spec.unschedulable=true").matches(&cordoned));
        let job = json!({"status": {}});
        let successful =
            FieldSelector::for_resource("status.successful=0", &resource("batch", "jobs"));
        assert!(successful.expect("parses").matches(&job));
    }

    fn obj(labels: Value) -> Value {
        json!({"metadata": {"name": "a", "namespace": "d", "labels": labels}})
    }

    #[test]
    fn label_selector_operators() {
        let o = obj(json!({"app": "web", "tier": "front"}));
        for (sel, want) in [
            ("", true),
            ("app=web", true),
            ("app==web", true),
            ("app!=web", false),
            ("app in (web, api)", true),
            ("app notin (web)", false),
            ("tier", true),
            ("!tier", false),
            ("!missing", true),
            ("app=web,tier=back", false),
            ("missing notin (x)", true),
        ] {
            assert_eq!(
                LabelSelector::parse(sel).unwrap().matches(&o),
                want,
                "{sel}"
            );
        }
    }

    #[test]
    fn label_selector_objects_as_upstreams_label_selector_as_selector() {
        let selector = |v: Value| LabelSelector::from_object(&v);
        let sel = selector(json!({
            "matchLabels": {"app": "web"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["a", "b"]},
                {"key": "legacy", "operator": "DoesNotExist"}
            ]
        }))
        .expect("a selector");
        assert!(sel.matches(&obj(json!({"app": "web", "tier": "b"}))));
        assert!(!sel.matches(&obj(json!({"app": "web", "tier": "c"}))));
        assert!(!sel.matches(&obj(json!({"app": "web", "tier": "a", "legacy": ""}))));
        // {} selects everything; a bad operator or values select nothing.
        assert!(selector(json!({})).expect("empty").matches(&obj(json!({}))));
        assert!(
            selector(json!({"matchExpressions": [{"key": "k", "operator": "Bogus"}]})).is_none()
        );
        assert!(selector(json!({"matchExpressions": [{"key": "k", "operator": "In"}]})).is_none());
        assert!(selector(
            json!({"matchExpressions": [{"key": "k", "operator": "Exists", "values": ["x"]}]})
        )
        .is_none());
    }

    #[test]
    fn label_selector_rejects_garbage() {
        assert!(LabelSelector::parse("app=web=x").is_err());
        assert!(LabelSelector::parse("app in web").is_err());
        assert!(LabelSelector::parse("bad key=1").is_err());
    }

    #[test]
    fn field_selector_checks_supported_fields() {
        let empty = |_: &str| "";
        let fields = ["metadata.name", "metadata.namespace"];
        let fs = FieldSelector::parse("metadata.name=a", &fields, &empty).unwrap();
        assert!(fs.matches(&obj(json!({}))));
        let fs = FieldSelector::parse("metadata.namespace!=d", &fields, &empty).unwrap();
        assert!(!fs.matches(&obj(json!({}))));
        let err = FieldSelector::parse("spec.foo=1", &fields, &empty).unwrap_err();
        assert_eq!(err.code(), 400);
    }
}
