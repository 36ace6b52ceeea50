//! What a CEL rule costs, in upstream's units (cel-go's cost model with
//! Kubernetes' library costs), so that a definition whose rules could run
//! too long is refused when it is written and a write whose rules would is
//! refused before they run.
//!
//! One estimator serves both moments; only what it knows of sizes differs:
//! at definition time a value's size is the schema's bound (`maxLength` × 4,
//! `maxItems`, `maxProperties`, else what fits in a 3 MiB request), as
//! upstream's static estimate; on a write it is the size of the values the
//! object actually holds. cel-rust cannot count steps while it evaluates (nor
//! stop an evaluation), so the run-time charge is this estimate for the data
//! at hand: an upper bound of upstream's actual cost, which credits nothing
//! for `exists` or `&&` stopping early. A rule may therefore run out of
//! budget on data where upstream's would not; never the reverse.
//!
//! Where the estimator cannot tell the size of a value (an unknown function,
//! a variable it does not bind), it takes it to be small: a definition
//! upstream would refuse for an exotic function may be accepted, while one
//! upstream accepts is never refused on a guess.

use kube_cel::cel::common::ast::{EntryExpr, Expr, LiteralValue};
use kube_cel::cel::IdedExpr;
use serde_json::Value;

use super::schema::Schema;

/// Cost units one evaluation of one rule may use (`celconfig.PerCallLimit`).
pub const PER_CALL_LIMIT: u64 = 1_000_000;
/// Cost units all rules may use on one object (`RuntimeCELCostBudget`).
pub const RUNTIME_BUDGET: u64 = 10_000_000;
/// The estimated cost one rule may have (`StaticEstimatedCostLimit`).
pub const RULE_LIMIT: u64 = 10_000_000;
/// The estimated cost all rules of one schema may have together.
pub const SCHEMA_LIMIT: u64 = 100_000_000;
/// Sizes nothing bounds are bounded by the largest request.
pub(super) const MAX_REQUEST: u64 = 3 * 1024 * 1024;
const UNBOUNDED_STRING: u64 = MAX_REQUEST - 2;
const STRING_TRAVERSAL: f64 = 0.1;
/// The longest text `string()` makes of a number, a bool, a duration or a
/// timestamp (RFC 3339 with nanoseconds and an offset).
const SCALAR_TEXT_LENGTH: u64 = 40;
const REGEX_LENGTH: f64 = 0.25;

/// A `{min, max}` pair of costs or sizes; arithmetic saturates as upstream's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Estimate {
    pub min: u64,
    pub max: u64,
}

impl Estimate {
    pub const ZERO: Estimate = Estimate { min: 0, max: 0 };
    const UNKNOWN: Estimate = Estimate {
        min: 0,
        max: u64::MAX,
    };

    pub const fn exact(n: u64) -> Estimate {
        Estimate { min: n, max: n }
    }

    fn add(self, other: Estimate) -> Estimate {
        Estimate {
            min: self.min.saturating_add(other.min),
            max: self.max.saturating_add(other.max),
        }
    }

    fn times(self, other: Estimate) -> Estimate {
        Estimate {
            min: self.min.saturating_mul(other.min),
            max: self.max.saturating_mul(other.max),
        }
    }

    /// cel-go's MultiplyByCostFactor: `ceil(x * factor)`, saturating.
    fn factor(self, factor: f64) -> Estimate {
        let scale = |x: u64| {
            let scaled = (x as f64 * factor).ceil();
            if scaled >= u64::MAX as f64 {
                u64::MAX
            } else {
                scaled as u64
            }
        };
        Estimate {
            min: scale(self.min),
            max: scale(self.max),
        }
    }

    fn union(self, other: Estimate) -> Estimate {
        Estimate {
            min: self.min.min(other.min),
            max: self.max.max(other.max),
        }
    }
}

/// What a CEL value is, as far as costs care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    String,
    Bytes,
    List,
    Map,
    Object,
    Scalar,
    Unknown,
}

/// What the estimator knows of the values a path reaches.
pub trait Shape: Clone {
    fn field(&self, name: &str) -> Option<Self>;
    /// A list's items or a map's values.
    fn element(&self) -> Option<Self>;
    /// A map's (or object's) keys.
    fn key(&self) -> Option<Self>;
    /// Runes of a string, bytes, items or entries.
    fn size(&self) -> Estimate;
    fn kind(&self) -> Kind;
}

/// The estimate of one expression: its cost and what its value is.
#[derive(Debug, Clone)]
struct Node<S> {
    cost: Estimate,
    size: Estimate,
    kind: Kind,
    shape: Option<S>,
    /// The items of a list the rule builds (a literal, `map`, `filter`).
    items: Option<Box<Node<S>>>,
    /// A string literal's text: the field an index like `self['a']` names.
    literal_key: Option<String>,
}

impl<S: Shape> Node<S> {
    fn value(kind: Kind, size: Estimate) -> Node<S> {
        Node {
            cost: Estimate::ZERO,
            size,
            kind,
            shape: None,
            items: None,
            literal_key: None,
        }
    }

    /// A value the estimator knows nothing of: taken to be small (see the
    /// module's note).
    fn small() -> Node<S> {
        Node::value(Kind::Unknown, Estimate::exact(1))
    }

    fn scalar() -> Node<S> {
        Node::value(Kind::Scalar, Estimate::exact(1))
    }

    fn at(shape: Option<S>) -> Node<S> {
        match shape {
            Some(shape) => Node {
                cost: Estimate::ZERO,
                size: shape.size(),
                kind: shape.kind(),
                shape: Some(shape),
                items: None,
                literal_key: None,
            },
            None => Node::small(),
        }
    }

    fn costing(mut self, cost: Estimate) -> Node<S> {
        self.cost = cost;
        self
    }

    fn is_text(&self) -> bool {
        matches!(self.kind, Kind::String | Kind::Bytes)
    }

    /// What one iteration of a comprehension over this value binds.
    fn iterated(&self) -> Node<S> {
        match (&self.shape, self.kind) {
            (Some(shape), Kind::Map | Kind::Object) => Node::at(shape.key()),
            (Some(shape), _) => Node::at(shape.element()),
            (None, _) => self
                .items
                .as_deref()
                .cloned()
                .map(|n| n.costing(Estimate::ZERO))
                .unwrap_or_else(Node::small),
        }
    }

    fn union(self, other: Node<S>) -> Node<S> {
        let kind = if self.kind == other.kind {
            self.kind
        } else {
            Kind::Unknown
        };
        Node {
            cost: self.cost.union(other.cost),
            size: self.size.union(other.size),
            kind,
            shape: self.shape.or(other.shape),
            items: self.items.or(other.items),
            literal_key: None,
        }
    }
}

struct Estimator<S> {
    /// Upstream prices a few functions differently when it evaluates them
    /// (the receiver's size rather than the argument's); the run-time
    /// estimate takes the larger of the two.
    at_runtime: bool,
    scopes: Vec<(String, Node<S>)>,
    /// Whether some value's size was guessed (an unknown function or
    /// variable, a field the schema does not describe).
    guessed: bool,
}

impl<S: Shape> Estimator<S> {
    fn lookup(&self, name: &str) -> Option<&Node<S>> {
        self.scopes
            .iter()
            .rev()
            .find(|(bound, _)| bound == name)
            .map(|(_, node)| node)
    }

    fn estimate(&mut self, expr: &IdedExpr) -> Node<S> {
        let node = self.estimate_node(expr);
        if node.kind == Kind::Unknown && node.size.max <= 1 {
            self.guessed = true;
        }
        node
    }

    fn estimate_node(&mut self, expr: &IdedExpr) -> Node<S> {
        match &expr.expr {
            Expr::Unspecified => Node::small(),
            Expr::Literal(literal) => literal_node(literal),
            Expr::Ident(name) => {
                let bound = self.lookup(name).cloned().unwrap_or_else(Node::small);
                bound.costing(Estimate::exact(1))
            }
            Expr::Select(select) => {
                let operand = self.estimate(&select.operand);
                if select.test {
                    // has(): upstream's presence tests cost nothing of their own.
                    return Node::scalar().costing(operand.cost);
                }
                let shape = operand.shape.as_ref().and_then(|s| s.field(&select.field));
                Node::at(shape).costing(operand.cost.add(Estimate::exact(1)))
            }
            Expr::List(list) => {
                let elements: Vec<Node<S>> =
                    list.elements.iter().map(|e| self.estimate(e)).collect();
                let mut cost = if elements.is_empty() {
                    Estimate::ZERO
                } else {
                    Estimate::exact(10)
                };
                let mut items: Option<Node<S>> = None;
                for element in elements {
                    cost = cost.add(element.cost);
                    items = Some(match items {
                        Some(seen) => seen.union(element),
                        None => element,
                    });
                }
                let mut node = Node::value(Kind::List, Estimate::exact(list.elements.len() as u64));
                node.items = items.map(Box::new);
                node.costing(cost)
            }
            Expr::Map(map) => {
                let cost = self.entries_cost(&map.entries, 30);
                Node::value(Kind::Map, Estimate::exact(map.entries.len() as u64)).costing(cost)
            }
            Expr::Struct(object) => {
                let cost = self.entries_cost(&object.entries, 40);
                Node::value(Kind::Object, Estimate::exact(object.entries.len() as u64))
                    .costing(cost)
            }
            Expr::Comprehension(comprehension) => {
                let range = self.estimate(&comprehension.iter_range);
                let mut element = range.iterated();
                element.cost = Estimate::ZERO;
                let bound = self.scopes.len();
                match &comprehension.iter_var2 {
                    Some(second) => {
                        self.scopes
                            .push((comprehension.iter_var.clone(), Node::scalar()));
                        self.scopes.push((second.clone(), element));
                    }
                    None => self.scopes.push((comprehension.iter_var.clone(), element)),
                }
                let init = self.estimate(&comprehension.accu_init);
                self.scopes.push((
                    comprehension.accu_var.clone(),
                    init.clone().costing(Estimate::ZERO),
                ));
                let condition = self.estimate(&comprehension.loop_cond);
                let step = self.estimate(&comprehension.loop_step);
                // What the accumulator holds after the loop: a list as long
                // as the range for map and filter, else what a step makes.
                let mut accumulated = step.clone().union(init.clone());
                accumulated.cost = Estimate::ZERO;
                if accumulated.kind == Kind::List {
                    accumulated.size = Estimate {
                        min: 0,
                        max: range.size.max,
                    };
                }
                if let Some((_, accumulator)) = self.scopes.last_mut() {
                    *accumulator = accumulated;
                }
                let result = self.estimate(&comprehension.result);
                self.scopes.truncate(bound);
                let per_item = condition.cost.add(step.cost);
                let cost = range
                    .cost
                    .add(init.cost)
                    .add(range.size.times(per_item))
                    .add(result.cost);
                result.costing(cost)
            }
            Expr::Call(call) => {
                let target = call.target.as_deref().map(|t| self.estimate(t));
                let args: Vec<Node<S>> = call.args.iter().map(|a| self.estimate(a)).collect();
                self.call(&call.func_name, target, args)
            }
        }
    }

    fn entries_cost(
        &mut self,
        entries: &[kube_cel::cel::common::ast::IdedEntryExpr],
        base: u64,
    ) -> Estimate {
        let mut cost = Estimate::exact(base);
        for entry in entries {
            match &entry.expr {
                EntryExpr::MapEntry(e) => {
                    cost = cost
                        .add(self.estimate(&e.key).cost)
                        .add(self.estimate(&e.value).cost);
                }
                EntryExpr::StructField(f) => cost = cost.add(self.estimate(&f.value).cost),
            }
        }
        cost
    }

    fn call(&self, name: &str, target: Option<Node<S>>, args: Vec<Node<S>>) -> Node<S> {
        let operands: Vec<Node<S>> = target.into_iter().chain(args).collect();
        let operand_cost = operands
            .iter()
            .fold(Estimate::ZERO, |sum, n| sum.add(n.cost));
        let first = operands.first();
        let second = operands.get(1);
        let size = |n: Option<&Node<S>>| n.map(|n| n.size).unwrap_or(Estimate::exact(1));
        let traversal = |n: Option<&Node<S>>| size(n).factor(STRING_TRAVERSAL);
        let (own, result): (Estimate, Node<S>) = match name {
            "_&&_" | "_||_" => {
                // Both operands may run but neither is charged twice; the
                // operator itself is free.
                let left = first.map(|n| n.cost).unwrap_or(Estimate::ZERO);
                let right = second.map(|n| n.cost).unwrap_or(Estimate::ZERO);
                let cost = Estimate {
                    min: left.min,
                    max: left.max.saturating_add(right.max),
                };
                return Node::scalar().costing(cost);
            }
            "_?_:_" => {
                let (Some(condition), Some(yes), Some(no)) = (first, second, operands.get(2))
                else {
                    return Node::small().costing(operand_cost);
                };
                let cost = condition.cost.add(yes.cost.union(no.cost));
                return yes.clone().union(no.clone()).costing(cost);
            }
            "_==_" | "_!=_" => {
                let smallest = size(first).max.min(size(second).max);
                let cost = Estimate {
                    min: u64::from(smallest > 0),
                    max: Estimate::exact(smallest).factor(STRING_TRAVERSAL).max,
                };
                (cost, Node::scalar())
            }
            "_<_" | "_<=_" | "_>_" | "_>=_" => {
                let cost = if first.is_some_and(Node::is_text) || second.is_some_and(Node::is_text)
                {
                    let smallest = size(first).max.min(size(second).max);
                    Estimate::exact(smallest).factor(STRING_TRAVERSAL)
                } else {
                    Estimate::exact(1)
                };
                (cost, Node::scalar())
            }
            "_+_" => match (first, second) {
                (Some(left), Some(right))
                    if left.kind == Kind::List || right.kind == Kind::List =>
                {
                    let mut node = Node::value(Kind::List, left.size.add(right.size));
                    node.items = match (&left.items, &right.items) {
                        (Some(l), Some(r)) => Some(Box::new((**l).clone().union((**r).clone()))),
                        (l, r) => l.clone().or_else(|| r.clone()),
                    };
                    node.shape = left.shape.clone().or_else(|| right.shape.clone());
                    (Estimate::exact(1), node)
                }
                (Some(left), Some(right)) if left.is_text() || right.is_text() => {
                    let joined = left.size.add(right.size);
                    (
                        joined.factor(STRING_TRAVERSAL),
                        Node::value(left.kind, joined),
                    )
                }
                _ => (Estimate::exact(1), Node::scalar()),
            },
            "@in" => {
                let cost = match second {
                    Some(container) if matches!(container.kind, Kind::Map | Kind::Object) => {
                        Estimate::exact(1)
                    }
                    Some(container) => container.size,
                    None => Estimate::exact(1),
                };
                (cost, Node::scalar())
            }
            "_[_]" | "_[?_]" => {
                let container = first.and_then(|c| c.shape.as_ref());
                let key = second.and_then(|k| k.literal_key.as_deref());
                let shape = match (container, first.map(|c| c.kind)) {
                    (Some(shape), Some(Kind::Object)) => key.and_then(|k| shape.field(k)),
                    (Some(shape), _) => shape.element(),
                    (None, _) => None,
                };
                let node = match (shape, first.and_then(|c| c.items.as_deref())) {
                    (Some(shape), _) => Node::at(Some(shape)),
                    (None, Some(items)) => items.clone(),
                    (None, None) => Node::small(),
                };
                (Estimate::exact(1), node)
            }
            "_?._" => (Estimate::exact(1), Node::small()),
            "matches" | "find" | "findAll" => {
                let text = size(first).add(Estimate::exact(1)).factor(STRING_TRAVERSAL);
                let pattern = size(second).factor(REGEX_LENGTH);
                let result = if name == "find" {
                    Node::value(Kind::String, size(first))
                } else {
                    Node::scalar()
                };
                (text.times(pattern), result)
            }
            "contains" if first.is_some_and(Node::is_text) => {
                (traversal(first).times(traversal(second)), Node::scalar())
            }
            "startsWith" | "endsWith" => {
                let prefix = traversal(second);
                let cost = if self.at_runtime {
                    prefix.union(traversal(first))
                } else {
                    prefix
                };
                (cost, Node::scalar())
            }
            "lowerAscii"
            | "upperAscii"
            | "trim"
            | "substring"
            | "url"
            | "jsonpatch.escapeKey"
            | "strings.quote"
            | "format"
            | "reverse" => (traversal(first), Node::value(Kind::String, size(first))),
            "quantity" | "isQuantity" | "semver" | "isSemver" | "ip" | "cidr" | "isIP"
            | "isCIDR" => (traversal(first), Node::scalar()),
            "isCanonical" => (size(first).factor(2.0 * STRING_TRAVERSAL), Node::scalar()),
            "replace" | "split" => {
                let result = if name == "split" {
                    let mut list = Node::value(Kind::List, size(first));
                    list.items = Some(Box::new(Node::value(Kind::String, size(first))));
                    list
                } else {
                    Node::value(Kind::String, size(first))
                };
                (size(first).factor(2.0 * STRING_TRAVERSAL), result)
            }
            "join" => {
                let items = first
                    .map(|list| list.iterated().size)
                    .unwrap_or(Estimate::ZERO);
                let joined = size(first).times(items);
                let factor = if self.at_runtime {
                    2.0 * STRING_TRAVERSAL
                } else {
                    STRING_TRAVERSAL
                };
                (joined.factor(factor), Node::value(Kind::String, joined))
            }
            "indexOf" | "lastIndexOf" if first.is_some_and(Node::is_text) => {
                (traversal(first), Node::scalar())
            }
            "isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf"
                if first.is_some_and(|n| n.kind == Kind::List) =>
            {
                let item = first.map(Node::iterated);
                let per_item = match &item {
                    Some(item) if item.is_text() => {
                        Estimate::exact(1).add(item.size.factor(STRING_TRAVERSAL))
                    }
                    _ => Estimate::exact(1),
                };
                let result = if name == "isSorted" || name.ends_with("ndexOf") {
                    Node::scalar()
                } else {
                    item.unwrap_or_else(Node::small)
                };
                (size(first).times(per_item), result)
            }
            "string" | "bytes" => {
                // A number's or a timestamp's text has no size upstream can
                // know; anything downstream that depends on it saturates.
                let kind = if name == "string" {
                    Kind::String
                } else {
                    Kind::Bytes
                };
                match first {
                    Some(arg) if arg.is_text() => (traversal(first), Node::value(kind, arg.size)),
                    // At run time the argument is a value in hand: a
                    // number's or timestamp's text is at most this long.
                    _ if self.at_runtime => (
                        Estimate::exact(1),
                        Node::value(kind, Estimate::exact(SCALAR_TEXT_LENGTH)),
                    ),
                    _ => (Estimate::exact(1), Node::value(kind, Estimate::UNKNOWN)),
                }
            }
            "dyn" => (
                Estimate::exact(1),
                first.cloned().unwrap_or_else(Node::small),
            ),
            "sets.contains" | "sets.intersects" | "sets.equivalent" => (
                Estimate::exact(1).add(size(first).times(size(second))),
                Node::scalar(),
            ),
            // Operators and functions whose result is a number, a bool, a
            // duration or a timestamp: one unit, a scalar.
            "!_"
            | "-_"
            | "_-_"
            | "_*_"
            | "_/_"
            | "_%_"
            | "@not_strictly_false"
            | "size"
            | "int"
            | "uint"
            | "double"
            | "bool"
            | "duration"
            | "timestamp"
            | "getFullYear"
            | "getMonth"
            | "getDayOfYear"
            | "getDayOfMonth"
            | "getDate"
            | "getDayOfWeek"
            | "getHours"
            | "getMinutes"
            | "getSeconds"
            | "getMilliseconds"
            | "isURL"
            | "charAt"
            | "sign"
            | "asInteger"
            | "isInteger"
            | "asApproximateFloat"
            | "isGreaterThan"
            | "isLessThan"
            | "compareTo"
            | "major"
            | "minor"
            | "patch" => (Estimate::exact(1), Node::scalar()),
            _ => (Estimate::exact(1), Node::small()),
        };
        result.costing(operand_cost.add(own))
    }
}

fn literal_node<S: Shape>(literal: &LiteralValue) -> Node<S> {
    match literal {
        LiteralValue::String(text) => {
            let mut node = Node::value(
                Kind::String,
                Estimate::exact(text.inner().chars().count() as u64),
            );
            node.literal_key = Some(text.inner().to_string());
            node
        }
        LiteralValue::Bytes(bytes) => {
            Node::value(Kind::Bytes, Estimate::exact(bytes.inner().len() as u64))
        }
        _ => Node::scalar(),
    }
}

/// Sizes as a schema bounds them (upstream's `SchemaDeclType` MaxElements).
#[derive(Debug, Clone, Copy)]
pub enum Bounds<'s> {
    Node(&'s Schema),
    /// A map's keys: upstream's plain string type, which bounds nothing and
    /// so counts as size 0.
    Key,
}

impl<'s> Shape for Bounds<'s> {
    fn field(&self, name: &str) -> Option<Self> {
        let Bounds::Node(schema) = self else {
            return None;
        };
        schema
            .properties
            .get(name)
            .map(|p| &**p)
            .or(schema.additional_properties.as_deref())
            .map(Bounds::Node)
    }

    fn element(&self) -> Option<Self> {
        let Bounds::Node(schema) = self else {
            return None;
        };
        schema
            .items
            .as_deref()
            .or(schema.additional_properties.as_deref())
            .map(Bounds::Node)
    }

    fn key(&self) -> Option<Self> {
        Some(Bounds::Key)
    }

    fn size(&self) -> Estimate {
        match self {
            Bounds::Node(schema) => Estimate {
                min: 0,
                max: max_elements(schema),
            },
            Bounds::Key => Estimate::ZERO,
        }
    }

    fn kind(&self) -> Kind {
        let Bounds::Node(schema) = self else {
            return Kind::String;
        };
        if schema.int_or_string {
            return Kind::Unknown;
        }
        match (schema.type_.as_str(), schema.format.as_str()) {
            ("string", "byte") => Kind::Bytes,
            ("string", "duration" | "date" | "date-time") => Kind::Scalar,
            ("string", _) => Kind::String,
            ("array", _) => Kind::List,
            ("object", _) if schema.additional_properties.is_some() => Kind::Map,
            ("object", _) => Kind::Object,
            ("", _) => Kind::Unknown,
            _ => Kind::Scalar,
        }
    }
}

/// Sizes no value a schema admits exceeds, as run time counts them
/// (scalars 1, objects their keys, map keys and untyped values as large as
/// a request): what [`ceiling`] prices.
#[derive(Debug, Clone, Copy)]
pub struct Ceiling<'s>(Bounds<'s>);

impl Shape for Ceiling<'_> {
    fn field(&self, name: &str) -> Option<Self> {
        self.0.field(name).map(Ceiling)
    }

    fn element(&self) -> Option<Self> {
        self.0.element().map(Ceiling)
    }

    fn key(&self) -> Option<Self> {
        self.0.key().map(Ceiling)
    }

    fn size(&self) -> Estimate {
        let Bounds::Node(schema) = self.0 else {
            return Estimate {
                min: 0,
                max: UNBOUNDED_STRING,
            };
        };
        let dated = matches!(schema.format.as_str(), "date" | "date-time" | "duration");
        let max = match self.0.kind() {
            Kind::Scalar if dated => schema
                .validation
                .max_length
                .map_or(UNBOUNDED_STRING, |l| l.saturating_mul(4)),
            Kind::Scalar => 1,
            Kind::Object if schema.preserve_unknown_fields => UNBOUNDED_STRING,
            Kind::Object => schema.properties.len() as u64,
            Kind::Unknown => max_elements(schema).max(1).max(if schema.int_or_string {
                0
            } else {
                UNBOUNDED_STRING
            }),
            _ => max_elements(schema),
        };
        Estimate { min: 0, max }
    }

    fn kind(&self) -> Kind {
        self.0.kind()
    }
}

/// The most runes, bytes, items or entries a value of `schema` can hold.
fn max_elements(schema: &Schema) -> u64 {
    let checks = &schema.validation;
    if schema.int_or_string {
        return checks
            .max_length
            .map_or(UNBOUNDED_STRING, |l| l.saturating_mul(4));
    }
    match (schema.type_.as_str(), schema.format.as_str()) {
        ("string", "byte") => checks.max_length.unwrap_or(UNBOUNDED_STRING),
        ("string", "duration" | "date-time") => 32,
        ("string", "date") => 12,
        ("string", _) => {
            if let Some(length) = checks.max_length {
                // maxLength counts runes; a rune is up to four bytes.
                length.saturating_mul(4)
            } else if !checks.enum_.is_empty() {
                checks
                    .enum_
                    .iter()
                    .filter_map(Value::as_str)
                    .map(|v| v.chars().count() as u64)
                    .max()
                    .unwrap_or(0)
            } else {
                UNBOUNDED_STRING
            }
        }
        ("array", _) => checks.max_items.unwrap_or_else(|| {
            let item = schema.items.as_deref().map_or(1, min_serialized_size);
            UNBOUNDED_STRING / (item + 1)
        }),
        ("object", _) => match schema.additional_properties.as_deref() {
            Some(values) => checks
                .max_properties
                .unwrap_or_else(|| UNBOUNDED_STRING / (min_serialized_size(values) + 6)),
            None => 0,
        },
        _ => 0,
    }
}

/// The fewest bytes a value of `schema` takes in JSON.
pub(super) fn min_serialized_size(schema: &Schema) -> u64 {
    if schema.int_or_string {
        return 1;
    }
    match (schema.type_.as_str(), schema.format.as_str()) {
        ("string", "duration") => 3,
        ("string", "date") => 12,
        ("string", "date-time") => 21,
        ("string", _) => 2,
        ("boolean", _) => 4,
        ("integer" | "number", _) => 1,
        ("object", _) if schema.additional_properties.is_none() => schema
            .validation
            .required
            .iter()
            .filter_map(|name| schema.properties.get(name).map(|p| (name, p)))
            .filter(|(_, p)| p.default.is_none())
            .fold(2, |sum, (name, p)| {
                sum + name.len() as u64 + min_serialized_size(p) + 4
            }),
        ("", _) => 1,
        _ => 2,
    }
}

/// Sizes as the object being written has them.
#[derive(Debug, Clone)]
pub enum Held<'v> {
    Values(Vec<&'v Value>),
    Keys(Estimate),
}

impl<'v> Shape for Held<'v> {
    fn field(&self, name: &str) -> Option<Self> {
        let Held::Values(values) = self else {
            return None;
        };
        Some(Held::Values(
            values.iter().filter_map(|v| v.get(name)).collect(),
        ))
    }

    fn element(&self) -> Option<Self> {
        let Held::Values(values) = self else {
            return None;
        };
        let mut items = Vec::new();
        for value in values {
            match value {
                Value::Array(list) => items.extend(list.iter()),
                Value::Object(map) => items.extend(map.values()),
                _ => {}
            }
        }
        Some(Held::Values(items))
    }

    fn key(&self) -> Option<Self> {
        let Held::Values(values) = self else {
            return None;
        };
        let sizes = values
            .iter()
            .filter_map(|v| v.as_object())
            .flat_map(|map| map.keys())
            .map(|k| Estimate::exact(k.chars().count() as u64))
            .reduce(Estimate::union);
        Some(Held::Keys(sizes.unwrap_or(Estimate::ZERO)))
    }

    fn size(&self) -> Estimate {
        match self {
            Held::Values(values) => values
                .iter()
                .map(|value| {
                    Estimate::exact(match value {
                        Value::String(text) => text.chars().count() as u64,
                        Value::Array(list) => list.len() as u64,
                        Value::Object(map) => map.len() as u64,
                        _ => 1,
                    })
                })
                .reduce(Estimate::union)
                .unwrap_or(Estimate::ZERO),
            Held::Keys(sizes) => *sizes,
        }
    }

    fn kind(&self) -> Kind {
        match self {
            Held::Values(values) => match values.first() {
                Some(Value::String(_)) => Kind::String,
                Some(Value::Array(_)) => Kind::List,
                Some(Value::Object(_)) => Kind::Map,
                Some(_) => Kind::Scalar,
                None => Kind::Unknown,
            },
            Held::Keys(_) => Kind::String,
        }
    }
}

/// An estimator for a rule on a node shaped as `shape` (`self`, and
/// `oldSelf` alike).
fn on_node<S: Shape>(shape: S, at_runtime: bool) -> Estimator<S> {
    let node = Node::at(Some(shape));
    Estimator {
        at_runtime,
        scopes: vec![
            ("self".to_string(), node.clone()),
            ("oldSelf".to_string(), node),
        ],
        guessed: false,
    }
}

/// The cost upstream estimates for `expr` declared on a node of `schema`
/// (before the node's cardinality multiplies it).
pub fn estimated(expr: &IdedExpr, schema: &Schema) -> Estimate {
    on_node(Bounds::Node(schema), false).estimate(expr).cost
}

/// The most `expr` declared on a node of `schema` can cost on any object
/// the schema admits, priced as at run time; None when the estimator had
/// to guess a size, so no bound is known.
pub fn ceiling(expr: &IdedExpr, schema: &Schema) -> Option<u64> {
    let mut estimator = on_node(Ceiling(Bounds::Node(schema)), true);
    let cost = estimator.estimate(expr).cost.max;
    (!estimator.guessed).then_some(cost)
}

/// The most `expr` can cost evaluated on `value` (`old` as `oldSelf`).
pub fn charged(expr: &IdedExpr, value: &Value, old: Option<&Value>) -> u64 {
    charged_with(expr, &[("self", Some(value)), ("oldSelf", old)])
}

/// The most `expr` can cost with each variable bound to its value (None:
/// unset or null).
pub fn charged_with(expr: &IdedExpr, variables: &[(&str, Option<&Value>)]) -> u64 {
    let mut estimator = Estimator {
        at_runtime: true,
        scopes: variables
            .iter()
            .map(|(name, value)| {
                let held = Held::Values(value.iter().copied().collect());
                (name.to_string(), Node::at(Some(held)))
            })
            .collect(),
        guessed: false,
    };
    estimator.estimate(expr).cost.max
}

#[cfg(test)]
#[path = "cost_tests.rs"]
mod tests;
