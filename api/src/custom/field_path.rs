//! A rule's `fieldPath`: a JSON path of field (`.name`, `['name']`) and map
//! key accessors, checked against the schema node that declares the rule and
//! rewritten as upstream's field.Path prints it (`spec.ports[http]`), which is
//! where a failed rule is reported (apiextensions' `cel.ValidFieldPath`).

use super::schema::Schema;

/// Why a fieldPath names no field; upstream's CRD validation only says the
/// path is not valid, so these stay internal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldPathError {
    UnexpectedEnd,
    NotQuoted,
    BadEscape,
    NotClosed,
    NoSuchField,
    UnexpectedToken,
}

/// `json_path` as a field path relative to the node `schema` describes.
pub fn normalized(json_path: &str, schema: &Schema) -> Result<String, FieldPathError> {
    let mut tokens = Tokens { rest: json_path };
    let mut schema = schema;
    let mut path = String::new();
    while let Some(token) = tokens.next() {
        let name = match token {
            "[" => {
                let quoted = tokens.next().ok_or(FieldPathError::UnexpectedEnd)?;
                let inner = quoted
                    .strip_prefix('\'')
                    .and_then(|q| q.strip_suffix('\''))
                    .filter(|_| quoted.len() >= 2)
                    .ok_or(FieldPathError::NotQuoted)?;
                let name = unescape(inner)?;
                schema = step(schema, &name, &mut path)?;
                match tokens.next() {
                    Some("]") => continue,
                    Some(_) => return Err(FieldPathError::NotClosed),
                    None => return Err(FieldPathError::UnexpectedEnd),
                }
            }
            // Whatever follows a dot is a name, even another delimiter.
            "." => tokens.next().ok_or(FieldPathError::UnexpectedEnd)?,
            _ => return Err(FieldPathError::UnexpectedToken),
        };
        schema = step(schema, name, &mut path)?;
    }
    Ok(path)
}

/// Moves to `name` under `schema`: a declared property, or any key of a map.
fn step<'s>(
    schema: &'s Schema,
    name: &str,
    path: &mut String,
) -> Result<&'s Schema, FieldPathError> {
    if !schema.properties.is_empty() {
        let child = schema
            .properties
            .get(name)
            .ok_or(FieldPathError::NoSuchField)?;
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(name);
        Ok(child)
    } else if let Some(values) = &schema.additional_properties {
        path.push('[');
        path.push_str(name);
        path.push(']');
        Ok(values)
    } else {
        Err(FieldPathError::NoSuchField)
    }
}

/// The escapes a quoted name may use; a backslash before anything else
/// makes the path invalid (a backslash before a line break is kept as is).
fn unescape(quoted: &str) -> Result<String, FieldPathError> {
    let mut out = String::with_capacity(quoted.len());
    let mut chars = quoted.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            None => out.push('\\'),
            Some('\n') => out.push_str("\\\n"),
            Some(directive) => out.push(match directive {
                'a' => '\u{7}',
                'b' => '\u{8}',
                'f' => '\u{c}',
                'n' => '\n',
                'r' => '\r',
                't' => '\t',
                'v' => '\u{b}',
                '\'' => '\'',
                '\\' => '\\',
                _ => return Err(FieldPathError::BadEscape),
            }),
        }
    }
    Ok(out)
}

/// The path's tokens: each of `.`, `[`, `]` alone, a single-quoted string
/// (to its closing unescaped quote, or to the end), or the text between
/// delimiters.
struct Tokens<'a> {
    rest: &'a str,
}

impl<'a> Iterator for Tokens<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let bytes = self.rest.as_bytes();
        let first = *bytes.first()?;
        let end = if first == b'\'' {
            (1..bytes.len())
                .find(|&i| bytes[i] == b'\'' && bytes[i - 1] != b'\\')
                .map_or(bytes.len(), |i| i + 1)
        } else if matches!(first, b'.' | b'[' | b']') {
            1
        } else {
            bytes
                .iter()
                .position(|b| matches!(b, b'.' | b'[' | b']'))
                .unwrap_or(bytes.len())
        };
        // Every end is after an ASCII byte or at the end: a char boundary.
        let (token, rest) = self.rest.split_at(end);
        self.rest = rest;
        Some(token)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema() -> Schema {
        Schema::parse(&json!({
            "type": "object",
            "properties": {
                "min": {"type": "integer"},
                "foo.34$": {"type": "string"},
                "ports": {"type": "object", "additionalProperties": {
                    "type": "object", "properties": {"port": {"type": "integer"}}}},
                "list": {"type": "array", "items": {"type": "string"}}
            }
        }))
        .expect("schema parses")
    }

    #[test]
    fn paths_are_checked_against_the_schema_and_printed_as_field_paths() {
        let schema = schema();
        let cases: &[(&str, Result<&str, FieldPathError>)] = &[
            (".min", Ok("min")),
            ("['min']", Ok("min")),
            (".ports.http", Ok("ports[http]")),
            (".ports['http'].port", Ok("ports[http].port")),
            (".['foo.34$']", Err(FieldPathError::NoSuchField)),
            ("['foo.34$']", Ok("foo.34$")),
            (".list", Ok("list")),
            (".list[0]", Err(FieldPathError::NotQuoted)),
            (".list.x", Err(FieldPathError::NoSuchField)),
            (".max", Err(FieldPathError::NoSuchField)),
            ("min", Err(FieldPathError::UnexpectedToken)),
            (".", Err(FieldPathError::UnexpectedEnd)),
            ("['min'", Err(FieldPathError::UnexpectedEnd)),
            ("['min'.", Err(FieldPathError::NotClosed)),
            ("['m\\in']", Err(FieldPathError::BadEscape)),
            ("['mi\\n']", Err(FieldPathError::NoSuchField)),
            ("", Ok("")),
        ];
        for (path, want) in cases {
            assert_eq!(
                normalized(path, &schema),
                want.map(str::to_string),
                "{path}"
            );
        }
    }
}
