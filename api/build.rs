// Derives the Kubernetes protobuf wire schema from the `k8s-pb` crate's
// prost-generated sources, so the decoder in `src/protobuf/` knows field
// numbers and types without a copy of upstream's .proto files.
//
// Output: `$OUT_DIR/k8s_pb_schema.rs`, static tables included by
// `src/protobuf/schema.rs`. Anything unexpected in the sources becomes a
// `cargo:warning` and is skipped; a missing `k8s-pb` yields empty tables
// (decoding then reports every message as unknown) rather than a failed
// build.
//
// Also writes the built-in kinds' OpenAPI definitions as JSON
// (`build/openapi_definitions.rs`).

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "build/openapi_definitions.rs"]
mod openapi_definitions;

const OUTPUT_FILE: &str = "k8s_pb_schema.rs";
const SOURCE_CRATE: &str = "k8s-pb";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=build/openapi_definitions.rs");
    let Some(out_dir) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        println!("cargo:warning=OUT_DIR is not set; cannot write the protobuf schema");
        return;
    };
    openapi_definitions::write(&out_dir);
    let mut warnings = Vec::new();
    let schema = match locate_source(&mut warnings) {
        Some(source) => {
            let mut parsed = Parsed::default();
            parse_tree(&source.src_dir, &mut Vec::new(), &mut parsed, &mut warnings);
            Some(Schema::build(parsed, source.version, &mut warnings))
        }
        None => None,
    };
    let text = render(schema.as_ref(), &mut warnings);
    // Cargo shows only the first lines of a long warning list usefully; the
    // sources are generated, so more than a handful means a format change.
    for warning in warnings.iter().take(20) {
        println!("cargo:warning={warning}");
    }
    if warnings.len() > 20 {
        println!(
            "cargo:warning=... and {} more protobuf schema warnings",
            warnings.len() - 20
        );
    }
    let path = out_dir.join(OUTPUT_FILE);
    // Rewriting identical content would still bump the mtime; skip it so an
    // unchanged schema never looks new.
    if fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
        if let Err(error) = fs::write(&path, text) {
            println!("cargo:warning=cannot write {}: {error}", path.display());
        }
    }
}

struct Source {
    src_dir: PathBuf,
    version: String,
}

/// Asks cargo where `k8s-pb` lives: it must be somewhere in this package's
/// dependency graph (a dev-dependency is enough for `cargo metadata`).
fn locate_source(warnings: &mut Vec<String>) -> Option<Source> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from)?;
    let output = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--manifest-path"])
        .arg(manifest_dir.join("Cargo.toml"))
        .output();
    let output = match output {
        Ok(output) if output.status.success() => output,
        Ok(output) => {
            warnings.push(format!(
                "cargo metadata failed: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            ));
            return None;
        }
        Err(error) => {
            warnings.push(format!("cannot run cargo metadata: {error}"));
            return None;
        }
    };
    let metadata: serde_json::Value = match serde_json::from_slice(&output.stdout) {
        Ok(value) => value,
        Err(error) => {
            warnings.push(format!("cannot parse cargo metadata output: {error}"));
            return None;
        }
    };
    if let Some(root) = metadata.get("workspace_root").and_then(|v| v.as_str()) {
        // A different k8s-pb version shows up only as a lockfile change.
        println!(
            "cargo:rerun-if-changed={}",
            Path::new(root).join("Cargo.lock").display()
        );
    }
    let packages = metadata.get("packages").and_then(|v| v.as_array());
    let mut best: Option<(Vec<u64>, Source)> = None;
    for package in packages.into_iter().flatten() {
        if package.get("name").and_then(|v| v.as_str()) != Some(SOURCE_CRATE) {
            continue;
        }
        let version = package
            .get("version")
            .and_then(|v| v.as_str())
            .unwrap_or_default();
        let Some(manifest) = package.get("manifest_path").and_then(|v| v.as_str()) else {
            continue;
        };
        let Some(dir) = Path::new(manifest).parent() else {
            continue;
        };
        let key: Vec<u64> = version
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|part| part.parse().ok())
            .collect();
        // Several versions in one graph: the newest carries the newest API.
        if best.as_ref().is_none_or(|(current, _)| key > *current) {
            let source = Source {
                src_dir: dir.join("src"),
                version: version.to_owned(),
            };
            best = Some((key, source));
        }
    }
    if best.is_none() {
        warnings.push(format!(
            "{SOURCE_CRATE} is not in the dependency graph; protobuf decoding will know no messages"
        ));
    }
    best.map(|(_, source)| source)
}

/// What the source files say, before names are resolved to indices.
#[derive(Default)]
struct Parsed {
    messages: Vec<RawMessage>,
    oneofs: HashMap<String, Vec<RawField>>,
    resources: Vec<RawResource>,
}

struct RawMessage {
    full_name: String,
    module: Vec<String>,
    fields: Vec<RawField>,
}

struct RawField {
    name: String,
    attr: String,
    ty: String,
}

struct RawResource {
    api_version: String,
    kind: String,
    message: String,
}

/// Walks `src/<module path>/mod.rs`; the directory path is the module path
/// and, prefixed with `k8s.io`, the proto package.
fn parse_tree(
    dir: &Path,
    module: &mut Vec<String>,
    parsed: &mut Parsed,
    warnings: &mut Vec<String>,
) {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) => {
            warnings.push(format!("cannot read {}: {error}", dir.display()));
            return;
        }
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|entry| entry.file_name());
    for entry in entries {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            module.push(name);
            parse_tree(&path, module, parsed, warnings);
            module.pop();
        } else if name == "mod.rs" && !module.is_empty() {
            match fs::read_to_string(&path) {
                Ok(text) => parse_file(&text, module, parsed, warnings),
                Err(error) => warnings.push(format!("cannot read {}: {error}", path.display())),
            }
        }
    }
}

enum Item {
    None,
    Message(RawMessage, i64),
    Oneof(String, Vec<RawField>, i64),
    Resource(String, Option<String>, Option<String>, i64),
}

/// Line-oriented reader for prost-build output: items start at a known
/// nesting depth, fields are an attribute line followed by a declaration
/// that may wrap over several lines.
fn parse_file(text: &str, file_module: &[String], parsed: &mut Parsed, warnings: &mut Vec<String>) {
    let mut depth: i64 = 0;
    let mut inline_modules: Vec<(String, i64)> = Vec::new();
    let mut pending_derive: Option<&'static str> = None;
    let mut pending_attr: Option<String> = None;
    let mut declaration: Option<(String, String)> = None;
    let mut item = Item::None;

    for raw_line in text.lines() {
        let line = raw_line.trim();
        if line.starts_with("//") || line.starts_with("#[doc") || line.is_empty() {
            continue;
        }
        let module = || -> Vec<String> {
            let mut path = file_module.to_vec();
            path.extend(inline_modules.iter().map(|(name, _)| name.clone()));
            path
        };

        if let Some((attr, mut text)) = declaration.take() {
            text.push_str(line);
            if declaration_complete(&text) {
                push_field(&mut item, attr, &text, warnings);
            } else {
                declaration = Some((attr, text));
            }
            continue;
        }

        if let Some(rest) = line.strip_prefix("#[derive(") {
            pending_derive = if rest.contains("::prost::Message") {
                Some("message")
            } else if rest.contains("::prost::Oneof") {
                Some("oneof")
            } else {
                None
            };
        } else if let Some(rest) = line.strip_prefix("#[prost(") {
            match rest.strip_suffix(")]") {
                Some(attr) => pending_attr = Some(attr.to_owned()),
                None => warnings.push(format!("unreadable attribute `{line}`")),
            }
        } else if let Some(rest) = line.strip_prefix("pub struct ") {
            if pending_derive.take() == Some("message") {
                let name = identifier_prefix(rest);
                let mut path = module();
                path.push(name.to_owned());
                let message = RawMessage {
                    full_name: format!("k8s.io.{}", path.join(".")),
                    module: module(),
                    fields: Vec::new(),
                };
                if rest.trim_end().ends_with("{}") {
                    parsed.messages.push(message);
                } else {
                    item = Item::Message(message, depth);
                }
            }
        } else if let Some(rest) = line.strip_prefix("pub enum ") {
            if pending_derive.take() == Some("oneof") {
                let mut path = module();
                path.push(identifier_prefix(rest).to_owned());
                item = Item::Oneof(format!("k8s.io.{}", path.join(".")), Vec::new(), depth);
            }
        } else if let Some(rest) = line.strip_prefix("impl crate::Resource for ") {
            let mut path = module();
            path.push(identifier_prefix(rest).to_owned());
            item = Item::Resource(format!("k8s.io.{}", path.join(".")), None, None, depth);
        } else if let Some(rest) = line.strip_prefix("pub mod ") {
            if line.ends_with('{') {
                inline_modules.push((identifier_prefix(rest).to_owned(), depth));
            }
        } else if let Some(attr) = pending_attr.take() {
            // A field (`pub name: Type,`) or a oneof variant (`Name(Type),`).
            let text = line.strip_prefix("pub ").unwrap_or(line).to_owned();
            if matches!(item, Item::Message(..) | Item::Oneof(..)) {
                if declaration_complete(&text) {
                    push_field(&mut item, attr, &text, warnings);
                } else {
                    declaration = Some((attr, text));
                }
            }
        } else if let Item::Resource(_, api_version, kind, _) = &mut item {
            if let Some(value) = const_value(line, "API_VERSION") {
                *api_version = Some(value);
            } else if let Some(value) = const_value(line, "KIND") {
                *kind = Some(value);
            }
        }

        depth += brace_delta(line);
        let item_closed = match &item {
            Item::Message(_, start) | Item::Oneof(_, _, start) | Item::Resource(_, _, _, start) => {
                depth <= *start
            }
            Item::None => false,
        };
        if item_closed {
            match std::mem::replace(&mut item, Item::None) {
                Item::Message(message, _) => parsed.messages.push(message),
                Item::Oneof(name, variants, _) => {
                    parsed.oneofs.insert(name, variants);
                }
                Item::Resource(message, Some(api_version), Some(kind), _) => {
                    parsed.resources.push(RawResource {
                        api_version,
                        kind,
                        message,
                    });
                }
                Item::Resource(message, ..) => {
                    warnings.push(format!("{message}: Resource impl without API_VERSION/KIND"));
                }
                Item::None => {}
            }
        }
        while inline_modules
            .last()
            .is_some_and(|(_, start)| depth <= *start)
        {
            inline_modules.pop();
        }
    }
}

fn identifier_prefix(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// `const KIND: &'static str = "Namespace";` → `Namespace`.
fn const_value(line: &str, name: &str) -> Option<String> {
    let rest = line.strip_prefix("const ")?.strip_prefix(name)?;
    if !rest.starts_with(':') {
        return None;
    }
    let (_, value) = rest.split_once('=')?;
    let value = value.trim().strip_suffix(';')?.trim();
    Some(value.strip_prefix('"')?.strip_suffix('"')?.to_owned())
}

fn brace_delta(line: &str) -> i64 {
    let mut delta = 0;
    let mut in_string = false;
    let mut previous = '\0';
    for c in line.chars() {
        match c {
            '"' if previous != '\\' => in_string = !in_string,
            '{' if !in_string => delta += 1,
            '}' if !in_string => delta -= 1,
            _ => {}
        }
        previous = c;
    }
    delta
}

/// A declaration ends with a comma outside any generic or tuple brackets.
fn declaration_complete(text: &str) -> bool {
    let mut depth = 0i64;
    for c in text.chars() {
        match c {
            '<' | '(' => depth += 1,
            '>' | ')' => depth -= 1,
            _ => {}
        }
    }
    depth == 0 && text.trim_end().ends_with(',')
}

fn push_field(item: &mut Item, attr: String, text: &str, warnings: &mut Vec<String>) {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let compact = compact.strip_suffix(',').unwrap_or(&compact);
    match item {
        Item::Message(message, _) => match compact.split_once(':') {
            Some((name, ty)) => message.fields.push(RawField {
                name: name.trim_start_matches("r#").to_owned(),
                attr,
                ty: ty.to_owned(),
            }),
            None => warnings.push(format!("{}: unreadable field `{text}`", message.full_name)),
        },
        Item::Oneof(name, variants, _) => {
            match compact
                .split_once('(')
                .and_then(|(variant, rest)| Some((variant, rest.strip_suffix(')')?)))
            {
                Some((variant, ty)) => variants.push(RawField {
                    name: snake_case(variant),
                    attr,
                    ty: ty.to_owned(),
                }),
                None => warnings.push(format!("{name}: unreadable oneof variant `{text}`")),
            }
        }
        _ => {}
    }
}

fn snake_case(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Wire-level kinds; the names match the `Kind` variants in schema.rs.
const SCALARS: [&str; 15] = [
    "double", "float", "int32", "int64", "uint32", "uint64", "sint32", "sint64", "fixed32",
    "fixed64", "sfixed32", "sfixed64", "bool", "string", "bytes",
];

#[derive(Clone)]
enum Kind {
    Scalar(&'static str),
    Enum,
    Message(String),
}

enum Label {
    Single,
    Repeated,
    Map(&'static str),
}

struct Field {
    name: String,
    tag: u32,
    label: Label,
    kind: Kind,
    /// Position in prost's struct: the .proto declaration order, which
    /// go-to-protobuf writes in Go struct order (tags need not follow it:
    /// PodSpec's initContainers is tag 20, declared before containers).
    declared: u16,
}

struct Schema {
    version: String,
    /// Sorted by lowercased name, the order the runtime binary-searches.
    messages: Vec<(String, Vec<Field>)>,
    resources: Vec<RawResource>,
}

impl Schema {
    fn build(parsed: Parsed, version: String, warnings: &mut Vec<String>) -> Schema {
        let mut messages = Vec::new();
        for message in &parsed.messages {
            let mut fields = Vec::new();
            for field in &message.fields {
                match field_entries(field, &message.module, &parsed.oneofs) {
                    Ok(entries) => {
                        for mut entry in entries {
                            entry.declared = u16::try_from(fields.len()).unwrap_or(u16::MAX);
                            fields.push(entry);
                        }
                    }
                    Err(reason) => warnings.push(format!(
                        "{}.{}: {reason}; field skipped",
                        message.full_name, field.name
                    )),
                }
            }
            fields.sort_by_key(|field| field.tag);
            fields.dedup_by(|a, b| {
                let duplicate = a.tag == b.tag;
                if duplicate {
                    warnings.push(format!("{}: duplicate tag {}", message.full_name, a.tag));
                }
                duplicate
            });
            messages.push((message.full_name.clone(), fields));
        }
        messages.sort_by_key(|(name, _)| name.to_ascii_lowercase());
        messages.dedup_by(|a, b| {
            let duplicate = a.0.eq_ignore_ascii_case(&b.0);
            if duplicate {
                warnings.push(format!("{} is defined twice (ignoring case)", a.0));
            }
            duplicate
        });
        Schema {
            version,
            messages,
            resources: parsed.resources,
        }
    }
}

/// One field, or one entry per variant for a prost oneof.
fn field_entries(
    field: &RawField,
    module: &[String],
    oneofs: &HashMap<String, Vec<RawField>>,
) -> Result<Vec<Field>, String> {
    let attr = parse_attr(&field.attr);
    if let Some(oneof) = attr.get("oneof").cloned().flatten() {
        let name =
            resolve_path(&oneof, module).ok_or_else(|| format!("unresolvable oneof {oneof}"))?;
        let variants = oneofs
            .get(&name)
            .ok_or_else(|| format!("oneof {name} not found"))?;
        // Variant types are written relative to the module holding the enum.
        let mut variant_module: Vec<String> = name
            .strip_prefix("k8s.io.")
            .unwrap_or_default()
            .split('.')
            .map(str::to_owned)
            .collect();
        variant_module.pop();
        return variants
            .iter()
            .map(|variant| single_field(variant, &parse_attr(&variant.attr), &variant_module))
            .collect();
    }
    Ok(vec![single_field(field, &attr, module)?])
}

fn single_field(
    field: &RawField,
    attr: &BTreeMap<String, Option<String>>,
    module: &[String],
) -> Result<Field, String> {
    let tag = attr
        .get("tag")
        .and_then(|tag| tag.as_deref())
        .and_then(|tag| tag.parse::<u32>().ok())
        .filter(|tag| *tag > 0)
        .ok_or("missing or invalid tag")?;
    let map = ["map", "btree_map", "hash_map"]
        .iter()
        .find_map(|key| attr.get(*key).cloned().flatten());
    let message_type = || -> Result<Kind, String> {
        let path =
            innermost_type(&field.ty).ok_or_else(|| format!("unreadable type {}", field.ty))?;
        resolve_path(path, module)
            .map(Kind::Message)
            .ok_or_else(|| format!("unresolvable type {path}"))
    };
    if let Some(spec) = map {
        let (key, value) = spec.split_once(',').ok_or("unreadable map attribute")?;
        let key = scalar(key.trim()).ok_or_else(|| format!("unsupported map key {key}"))?;
        let value = value.trim();
        let kind = if value == "message" {
            message_type()?
        } else if value.starts_with("enumeration") {
            Kind::Enum
        } else {
            Kind::Scalar(scalar(value).ok_or_else(|| format!("unsupported map value {value}"))?)
        };
        return Ok(Field {
            name: field.name.clone(),
            tag,
            label: Label::Map(key),
            kind,
            declared: 0,
        });
    }
    let kind = if attr.contains_key("message") {
        message_type()?
    } else if attr.contains_key("enumeration") {
        Kind::Enum
    } else if let Some(name) = SCALARS.iter().find(|name| attr.contains_key(**name)) {
        Kind::Scalar(name)
    } else {
        return Err(format!("no supported type in #[prost({})]", field.attr));
    };
    let label = if attr.contains_key("repeated") {
        Label::Repeated
    } else {
        Label::Single
    };
    Ok(Field {
        name: field.name.clone(),
        tag,
        label,
        kind,
        declared: 0,
    })
}

fn scalar(name: &str) -> Option<&'static str> {
    SCALARS.iter().copied().find(|scalar| *scalar == name)
}

/// `string, optional, tag = "1"` → {string, optional, tag: 1}; commas inside
/// quotes (`btree_map = "string, string"`) belong to the value.
fn parse_attr(attr: &str) -> BTreeMap<String, Option<String>> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut in_quotes = false;
    for c in attr.chars() {
        match c {
            '"' => {
                in_quotes = !in_quotes;
                current.push(c);
            }
            ',' if !in_quotes => parts.push(std::mem::take(&mut current)),
            _ => current.push(c),
        }
    }
    parts.push(current);
    parts
        .iter()
        .filter(|part| !part.trim().is_empty())
        .map(|part| match part.split_once('=') {
            Some((key, value)) => (
                key.trim().to_owned(),
                Some(value.trim().trim_matches('"').to_owned()),
            ),
            None => (part.trim().to_owned(), None),
        })
        .collect()
}

/// Strips `Option<…>`, `Vec<…>`, `Box<…>` and takes a map's value type:
/// what remains is the message's Rust path.
fn innermost_type(ty: &str) -> Option<&str> {
    let mut ty = ty;
    loop {
        let Some(open) = ty.find('<') else {
            return Some(ty);
        };
        // Wrapped generics keep rustfmt's trailing comma: `Map<K, V,>`.
        let inner = ty.get(open + 1..)?.strip_suffix('>')?.trim_end_matches(',');
        let outer = ty.get(..open)?;
        ty = match outer.rsplit("::").next()? {
            "Option" | "Vec" | "Box" => inner,
            "BTreeMap" | "HashMap" => split_top_level(inner)?.1,
            _ => return None,
        };
    }
}

fn split_top_level(text: &str) -> Option<(&str, &str)> {
    let mut depth = 0i64;
    for (i, c) in text.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            ',' if depth == 0 => return Some((text.get(..i)?, text.get(i + 1..)?)),
            _ => {}
        }
    }
    None
}

/// A Rust path (`super::super::meta::v1::ObjectMeta`, `crate::api::…`,
/// `LocalObjectReference`) seen from `module` → proto full name.
fn resolve_path(path: &str, module: &[String]) -> Option<String> {
    let path = path.trim_start_matches("::");
    let mut segments: Vec<&str> = path.split("::").collect();
    let name = segments.pop()?;
    let mut base: Vec<String> = module.to_vec();
    for (i, segment) in segments.iter().enumerate() {
        match *segment {
            "crate" if i == 0 => base.clear(),
            "super" => {
                base.pop()?;
            }
            "self" => {}
            other => base.push(other.to_owned()),
        }
    }
    if name.is_empty() || base.is_empty() {
        return None;
    }
    Some(format!("k8s.io.{}.{name}", base.join(".")))
}

fn kind_variant(name: &str) -> String {
    let mut chars = name.chars();
    match chars.next() {
        Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
        None => String::new(),
    }
}

fn render(schema: Option<&Schema>, warnings: &mut Vec<String>) -> String {
    let mut out = String::new();
    let empty = Schema {
        version: String::new(),
        messages: Vec::new(),
        resources: Vec::new(),
    };
    let schema = schema.unwrap_or(&empty);
    let index: HashMap<String, usize> = schema
        .messages
        .iter()
        .enumerate()
        .map(|(i, (name, _))| (name.to_ascii_lowercase(), i))
        .collect();
    let _ = writeln!(
        out,
        "// @generated by core/build.rs from {SOURCE_CRATE} {}; do not edit.",
        schema.version
    );
    let _ = writeln!(out, "pub(super) static MESSAGES: &[Message] = &[");
    for (name, fields) in &schema.messages {
        let _ = writeln!(out, "Message {{ name: {name:?}, fields: &[");
        for field in fields {
            let kind = match &field.kind {
                Kind::Scalar(scalar) => format!("Kind::{}", kind_variant(scalar)),
                Kind::Enum => "Kind::Enum".to_owned(),
                Kind::Message(target) => match index.get(&target.to_ascii_lowercase()) {
                    Some(i) => format!("Kind::Message({i})"),
                    // Dropping the field makes the decoder skip it as an
                    // unknown tag instead of misreading its bytes.
                    None => {
                        warnings.push(format!("{name}.{}: message {target} not found", field.name));
                        continue;
                    }
                },
            };
            let label = match field.label {
                Label::Single => "Label::Single".to_owned(),
                Label::Repeated => "Label::Repeated".to_owned(),
                Label::Map(key) => format!("Label::Map(Kind::{})", kind_variant(key)),
            };
            let _ = writeln!(
                out,
                "  Field {{ name: {:?}, tag: {}, label: {label}, kind: {kind}, declared: {} }},",
                field.name, field.tag, field.declared
            );
        }
        let _ = writeln!(out, "] }},");
    }
    let _ = writeln!(out, "];");
    let _ = writeln!(out, "pub(super) static RESOURCES: &[Resource] = &[");
    let mut resources: Vec<_> = schema
        .resources
        .iter()
        .filter_map(|resource| {
            let message = index.get(&resource.message.to_ascii_lowercase())?;
            Some((
                resource.api_version.as_str(),
                resource.kind.as_str(),
                *message,
            ))
        })
        .collect();
    resources.sort();
    resources.dedup();
    for (api_version, kind, message) in resources {
        let _ = writeln!(
            out,
            "  Resource {{ api_version: {api_version:?}, kind: {kind:?}, message: {message} }},"
        );
    }
    let _ = writeln!(out, "];");
    out
}
