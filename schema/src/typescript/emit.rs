//! JSON Schema → TypeScript type expressions.
//!
//! The emitter understands exactly the constructs the schema set uses (see
//! the module documentation of [`super`]) and returns an [`EmitError`] for
//! anything else, so a schema change can never degrade silently to a type
//! that accepts anything.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::{Map, Value};

use super::SourceDocument;

/// A schema construct the emitter does not handle, or an inconsistent input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmitError {
    /// Where: a type name and a JSON pointer into its schema, or a fixture.
    pub at: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for EmitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.at, self.message)
    }
}

impl std::error::Error for EmitError {}

pub(super) type Result<T> = std::result::Result<T, EmitError>;

pub(super) fn fail<T>(at: &str, message: impl Into<String>) -> Result<T> {
    Err(EmitError {
        at: at.to_owned(),
        message: message.into(),
    })
}

/// Keywords allowed on every schema: they only document the value.
const ANNOTATIONS: &[&str] = &["description", "default"];
/// Keywords allowed next to `"type": "string"`.
const STRING_KEYWORDS: &[&str] = &["minLength", "maxLength", "pattern", "format"];
/// Keywords allowed next to `"type": "integer"` or `"number"`.
const NUMBER_KEYWORDS: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "format",
];
/// Keywords allowed next to `"type": "array"`.
const ARRAY_KEYWORDS: &[&str] = &["items", "minItems", "maxItems", "uniqueItems"];
/// Keywords allowed next to `"type": "object"`.
const OBJECT_KEYWORDS: &[&str] = &["properties", "required", "additionalProperties"];
/// Constraints TypeScript cannot express; they become TSDoc tags, in this
/// order.
const DOC_TAGS: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "format",
    "default",
];

/// The note on object schemas that JSON Schema leaves open.
const OPEN_NOTE: &[&str] = &[
    "Open in the JSON Schema (no `additionalProperties: false`): readers must ignore",
    "unknown members. Typed closed here, so a literal with an unknown member is an error.",
];

/// One named type of the package.
#[derive(Debug, Clone)]
enum Def {
    /// A schema body (a document without its identity keywords, or a `$defs`
    /// entry).
    Body(Value),
    /// A document that is another document under a second name.
    Alias {
        target: String,
        description: Option<String>,
    },
}

/// Every named type: the documents and the `$defs` they share, in one
/// namespace.
#[derive(Debug)]
pub(super) struct Registry {
    defs: BTreeMap<String, Def>,
}

/// What a schema node is, after its keywords were checked.
enum Node<'a> {
    /// No type constraint: any JSON value.
    Any,
    Ref(&'a str),
    /// `const` or `enum`: one or more literal values.
    Literals(Vec<&'a Value>),
    Union(&'a [Value]),
    Typed(Vec<&'a str>),
}

fn is_identifier(key: &str) -> bool {
    let mut chars = key.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

/// A property key as TypeScript source.
fn property_key(key: &str) -> String {
    if is_identifier(key) {
        key.to_owned()
    } else {
        literal(&Value::String(key.to_owned()))
    }
}

/// A JSON primitive as a TypeScript literal type (JSON literal syntax is
/// valid TypeScript).
fn literal(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_else(|e| unreachable!("a Value serializes: {e}"))
}

fn pad(indent: usize) -> String {
    " ".repeat(indent)
}

/// Wraps a type in parentheses when it is not a single term.
fn paren(ty: &str) -> String {
    if ty.contains(" | ") || ty.contains(" & ") || ty.starts_with('\n') {
        format!("({ty})")
    } else {
        ty.to_owned()
    }
}

/// `key: ty;` or, for a type that begins on its own line, `key:\n ty;`.
fn after_colon(ty: &str) -> String {
    if ty.starts_with('\n') {
        ty.to_owned()
    } else {
        format!(" {ty}")
    }
}

/// A TSDoc block for `lines` (none when empty), each line indented.
pub(super) fn render_doc(lines: &[String], indent: usize) -> String {
    if lines.is_empty() {
        return String::new();
    }
    let p = pad(indent);
    if lines.len() == 1 && !lines[0].is_empty() {
        return format!("{p}/** {} */\n", lines[0]);
    }
    let mut out = format!("{p}/**\n");
    for line in lines {
        if line.is_empty() {
            out.push_str(&format!("{p} *\n"));
        } else {
            out.push_str(&format!("{p} * {line}\n"));
        }
    }
    out.push_str(&format!("{p} */\n"));
    out
}

/// Text that is safe inside a `/** */` block.
fn doc_text(text: &str) -> String {
    text.replace("*/", "*\\/")
}

fn obj<'a>(schema: &'a Value, at: &str) -> Result<&'a Map<String, Value>> {
    match schema {
        Value::Object(map) => Ok(map),
        other => fail(at, format!("expected a schema object, found {other}")),
    }
}

impl Registry {
    /// Merges every document and every `$defs` entry into one namespace;
    /// the same name must always have the same definition.
    pub(super) fn build(documents: &[SourceDocument]) -> Result<Self> {
        let mut defs = BTreeMap::new();
        let names: BTreeSet<&str> = documents.iter().map(|d| d.name.as_str()).collect();
        for doc in documents {
            let map = obj(&doc.schema, &doc.name)?;
            let def = match &doc.alias_of {
                Some(target) => {
                    if !names.contains(target.as_str()) || target == &doc.name {
                        return fail(&doc.name, format!("alias of unknown document {target}"));
                    }
                    Def::Alias {
                        target: target.clone(),
                        description: map
                            .get("description")
                            .and_then(Value::as_str)
                            .map(str::to_owned),
                    }
                }
                None => {
                    let body: Map<String, Value> = map
                        .iter()
                        .filter(|(k, _)| {
                            !matches!(k.as_str(), "$id" | "$schema" | "title" | "$defs")
                        })
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect();
                    Def::Body(Value::Object(body))
                }
            };
            if defs.insert(doc.name.clone(), def).is_some() {
                return fail(&doc.name, "two documents have this name");
            }
        }
        for doc in documents {
            let Some(entries) = obj(&doc.schema, &doc.name)?.get("$defs") else {
                continue;
            };
            let at = format!("{}#/$defs", doc.name);
            for (name, body) in obj(entries, &at)? {
                let at = format!("{at}/{name}");
                if !is_identifier(name) {
                    return fail(&at, "a $defs name must be a TypeScript identifier");
                }
                match defs.get(name) {
                    None => {
                        defs.insert(name.clone(), Def::Body(body.clone()));
                    }
                    Some(Def::Body(existing)) => {
                        // A document may carry its own description (aliases
                        // and identifiers); everything else must agree.
                        if without_description(existing) != without_description(body) {
                            return fail(&at, format!("differs from another definition of {name}"));
                        }
                    }
                    Some(Def::Alias { .. }) => {
                        return fail(
                            &at,
                            format!("{name} is both an alias document and a $defs entry"),
                        );
                    }
                }
            }
        }
        for (name, def) in &defs {
            if let Def::Alias { target, .. } = def
                && !matches!(defs.get(target), Some(Def::Body(_)))
            {
                return fail(name, format!("alias target {target} is itself an alias"));
            }
        }
        Ok(Self { defs })
    }

    /// How many named types the package exports (besides `Methods`).
    pub(super) fn len(&self) -> usize {
        self.defs.len()
    }

    pub(super) fn contains(&self, name: &str) -> bool {
        self.defs.contains_key(name)
    }

    /// The schema body behind a name (following an alias).
    pub(super) fn body(&self, name: &str) -> Option<&Value> {
        match self.defs.get(name)? {
            Def::Body(body) => Some(body),
            Def::Alias { target, .. } => self.body(target),
        }
    }

    /// `export type Name = …;` for every named type, sorted by name.
    pub(super) fn declarations(&self) -> Result<String> {
        let mut out = String::new();
        for (name, def) in &self.defs {
            out.push('\n');
            match def {
                Def::Alias {
                    target,
                    description,
                } => {
                    let lines: Vec<String> = description
                        .iter()
                        .flat_map(|d| d.lines().map(|l| doc_text(l.trim_end())))
                        .collect();
                    out.push_str(&render_doc(&lines, 0));
                    out.push_str(&format!("export type {name} = {target};\n"));
                }
                Def::Body(body) => {
                    out.push_str(&render_doc(&doc_lines(body), 0));
                    let ty = self.ty(body, name, 0)?;
                    out.push_str(&format!("export type {name} ={};\n", after_colon(&ty)));
                }
            }
        }
        Ok(out)
    }

    /// Checks a node's keywords and says what it is.
    fn node<'a>(&self, schema: &'a Value, at: &str) -> Result<Node<'a>> {
        let map = match schema {
            Value::Bool(true) => return Ok(Node::Any),
            Value::Bool(false) => {
                return fail(at, "the `false` schema (no value) is not supported");
            }
            Value::Object(map) => map,
            other => return fail(at, format!("expected a schema, found {other}")),
        };
        let allow = |extra: &[&str]| -> Result<()> {
            for key in map.keys() {
                if !ANNOTATIONS.contains(&key.as_str()) && !extra.contains(&key.as_str()) {
                    return fail(at, format!("unsupported keyword `{key}` here"));
                }
            }
            Ok(())
        };
        if let Some(reference) = map.get("$ref") {
            allow(&["$ref"])?;
            let name = reference
                .as_str()
                .and_then(|r| r.strip_prefix("#/$defs/"))
                .filter(|n| !n.contains('/'));
            return match name {
                Some(name) if self.defs.contains_key(name) => Ok(Node::Ref(name)),
                Some(name) => fail(at, format!("$ref to unknown definition {name}")),
                None => fail(
                    at,
                    format!("unsupported $ref {reference} (only #/$defs/Name)"),
                ),
            };
        }
        if map.contains_key("const") || map.contains_key("enum") {
            allow(&["const", "enum", "type"])?;
            let values: Vec<&Value> = match (map.get("const"), map.get("enum")) {
                (Some(v), None) => vec![v],
                (None, Some(Value::Array(values))) if !values.is_empty() => values.iter().collect(),
                (None, Some(_)) => return fail(at, "`enum` must be a non-empty array"),
                _ => return fail(at, "both `const` and `enum`"),
            };
            let types = match map.get("type") {
                None => None,
                Some(t) => Some(self.types(t, at)?),
            };
            for value in &values {
                let kind = match value {
                    Value::String(_) => "string",
                    Value::Bool(_) => "boolean",
                    Value::Null => "null",
                    Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
                    Value::Number(_) => "number",
                    _ => return fail(at, format!("literal {value} is not a JSON primitive")),
                };
                if let Some(types) = &types
                    && !types
                        .iter()
                        .any(|t| *t == kind || (*t == "number" && kind == "integer"))
                {
                    return fail(at, format!("literal {value} does not match `type`"));
                }
            }
            return Ok(Node::Literals(values));
        }
        match (map.get("oneOf"), map.get("anyOf")) {
            (Some(_), Some(_)) => return fail(at, "both `oneOf` and `anyOf`"),
            (Some(members), None) | (None, Some(members)) => {
                allow(&["oneOf", "anyOf"])?;
                return match members {
                    Value::Array(members) if !members.is_empty() => Ok(Node::Union(members)),
                    _ => fail(at, "a union needs a non-empty array of schemas"),
                };
            }
            (None, None) => {}
        }
        if let Some(t) = map.get("type") {
            let types = self.types(t, at)?;
            let mut extra = vec!["type"];
            for t in &types {
                extra.extend_from_slice(match *t {
                    "string" => STRING_KEYWORDS,
                    "integer" | "number" => NUMBER_KEYWORDS,
                    "array" => ARRAY_KEYWORDS,
                    "object" => OBJECT_KEYWORDS,
                    _ => &[],
                });
            }
            allow(&extra)?;
            return Ok(Node::Typed(types));
        }
        allow(&[])?;
        Ok(Node::Any)
    }

    /// The `type` keyword as a list: one type, or several scalar types.
    fn types<'a>(&self, t: &'a Value, at: &str) -> Result<Vec<&'a str>> {
        const SIMPLE: &[&str] = &[
            "string", "integer", "number", "boolean", "null", "array", "object",
        ];
        let types: Vec<&str> = match t {
            Value::String(s) => vec![s.as_str()],
            Value::Array(items) => items
                .iter()
                .map(|v| v.as_str().ok_or(()))
                .collect::<std::result::Result<_, _>>()
                .or_else(|()| fail(at, "`type` array of non-strings"))?,
            _ => return fail(at, "`type` must be a string or an array of strings"),
        };
        let distinct: BTreeSet<&str> = types.iter().copied().collect();
        if types.is_empty() || distinct.len() != types.len() {
            return fail(at, "`type` must list distinct types");
        }
        for t in &types {
            if !SIMPLE.contains(t) {
                return fail(at, format!("unknown type `{t}`"));
            }
            if types.len() > 1 && matches!(*t, "array" | "object") {
                return fail(at, format!("`{t}` in a `type` array is not supported"));
            }
        }
        Ok(types)
    }

    /// The TypeScript type of `schema`. A multi-line type (a union whose
    /// members carry docs) starts with a newline; `indent` is the column
    /// of the line that holds the type.
    pub(super) fn ty(&self, schema: &Value, at: &str, indent: usize) -> Result<String> {
        match self.node(schema, at)? {
            Node::Any => Ok("unknown".into()),
            Node::Ref(name) => Ok(name.to_owned()),
            Node::Literals(values) => Ok(dedup(values.into_iter().map(literal)).join(" | ")),
            Node::Union(members) => self.union(members, at, indent),
            Node::Typed(types) => {
                let mut parts = Vec::new();
                for t in types {
                    parts.push(match t {
                        "string" => "string".to_owned(),
                        "integer" | "number" => "number".to_owned(),
                        "boolean" => "boolean".to_owned(),
                        "null" => "null".to_owned(),
                        "array" => self.array(obj(schema, at)?, at, indent)?,
                        "object" => self.object(obj(schema, at)?, at, indent, None, &[])?,
                        other => unreachable!("types() rejects {other}"),
                    });
                }
                Ok(dedup(parts).join(" | "))
            }
        }
    }

    fn array(&self, map: &Map<String, Value>, at: &str, indent: usize) -> Result<String> {
        if map.get("maxItems").and_then(Value::as_u64) == Some(0) {
            return Ok("[]".into());
        }
        let item = match map.get("items") {
            None => "unknown".to_owned(),
            Some(items) => self.ty(items, &format!("{at}/items"), indent)?,
        };
        Ok(format!("{}[]", paren(&item)))
    }

    /// An object type. `first` is emitted before the other properties (a
    /// union's tag); `never` adds `key?: never` for keys of sibling union
    /// members, so a value cannot mix two members.
    fn object(
        &self,
        map: &Map<String, Value>,
        at: &str,
        indent: usize,
        first: Option<&str>,
        never: &[&str],
    ) -> Result<String> {
        let properties = match map.get("properties") {
            None => None,
            Some(Value::Object(p)) if p.is_empty() => None,
            Some(Value::Object(p)) => Some(p),
            Some(_) => return fail(at, "`properties` must be an object"),
        };
        let open = match map.get("additionalProperties") {
            None => None,
            Some(Value::Bool(b)) => Some(*b),
            Some(_) => {
                return fail(
                    &format!("{at}/additionalProperties"),
                    "a schema for additional properties is not supported",
                );
            }
        };
        let required: BTreeSet<&str> = match map.get("required") {
            None => BTreeSet::new(),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| v.as_str().ok_or(()))
                .collect::<std::result::Result<_, _>>()
                .or_else(|()| fail(at, "`required` must list strings"))?,
            Some(_) => return fail(at, "`required` must be an array"),
        };
        let Some(properties) = properties else {
            if !required.is_empty() {
                return fail(at, "`required` without `properties`");
            }
            return match open {
                Some(false) => Ok("{ [key: string]: never }".into()),
                Some(true) => Ok("{ [key: string]: unknown }".into()),
                None => fail(
                    at,
                    "an object without properties must say `additionalProperties: true` or `false`",
                ),
            };
        };
        if open == Some(true) {
            return fail(
                at,
                "properties with `additionalProperties: true` are not supported (objects are typed closed)",
            );
        }
        if let Some(missing) = required.iter().find(|k| !properties.contains_key(**k)) {
            return fail(at, format!("required property {missing} is not declared"));
        }
        let inner = indent + 2;
        let p = pad(inner);
        let mut out = String::from("{\n");
        let keys = first.into_iter().chain(
            properties
                .keys()
                .map(String::as_str)
                .filter(|k| Some(*k) != first),
        );
        for key in keys {
            let schema = &properties[key];
            let at = format!("{at}/properties/{key}");
            out.push_str(&render_doc(&doc_lines(schema), inner));
            let ty = self.ty(schema, &at, inner)?;
            let optional = if required.contains(key) { "" } else { "?" };
            out.push_str(&format!(
                "{p}{}{optional}:{};\n",
                property_key(key),
                after_colon(&ty)
            ));
        }
        for key in never {
            if !properties.contains_key(*key) {
                out.push_str(&format!("{p}{}?: never;\n", property_key(key)));
            }
        }
        out.push_str(&pad(indent));
        out.push('}');
        Ok(out)
    }

    /// The object schema behind a union member (inline or by `$ref`), if it
    /// is an object with properties.
    fn member_object<'a>(&'a self, member: &'a Value) -> Option<&'a Map<String, Value>> {
        let map = member.as_object()?;
        let map = match map.get("$ref").and_then(Value::as_str) {
            Some(r) => self.body(r.strip_prefix("#/$defs/")?)?.as_object()?,
            None => map,
        };
        let has_properties = map
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|p| !p.is_empty());
        (map.get("type").and_then(Value::as_str) == Some("object") && has_properties).then_some(map)
    }

    /// A property every member requires with a distinct constant string.
    fn tag(members: &[&Map<String, Value>]) -> Option<String> {
        let first = members.first()?.get("properties")?.as_object()?;
        'candidates: for key in first.keys() {
            let mut seen = BTreeSet::new();
            for member in members {
                let required = member
                    .get("required")
                    .and_then(Value::as_array)
                    .is_some_and(|r| r.iter().any(|v| v.as_str() == Some(key)));
                let value = member
                    .get("properties")
                    .and_then(|p| p.get(key))
                    .and_then(|p| {
                        p.get("const").or_else(|| match p.get("enum")? {
                            Value::Array(v) if v.len() == 1 => v.first(),
                            _ => None,
                        })
                    })
                    .and_then(Value::as_str);
                match value {
                    Some(v) if required && seen.insert(v) => {}
                    _ => continue 'candidates,
                }
            }
            return Some(key.clone());
        }
        None
    }

    fn union(&self, members: &[Value], at: &str, indent: usize) -> Result<String> {
        let key = |i: usize| format!("{at}/{i}");
        // Every member validated first, so no keyword is skipped below.
        let nodes = members
            .iter()
            .enumerate()
            .map(|(i, m)| self.node(m, &key(i)))
            .collect::<Result<Vec<_>>>()?;
        // Literals: a (possibly documented) union of values.
        if nodes.iter().all(|n| matches!(n, Node::Literals(_))) {
            let mut items = Vec::new();
            for (member, node) in members.iter().zip(&nodes) {
                let Node::Literals(values) = node else {
                    unreachable!()
                };
                let doc = doc_lines(member);
                for value in values {
                    items.push((doc.clone(), literal(value)));
                }
            }
            if items.iter().all(|(doc, _)| doc.is_empty()) {
                return Ok(dedup(items.into_iter().map(|(_, t)| t)).join(" | "));
            }
            return Ok(multiline(items, indent));
        }
        // Objects: tagged (discriminated) or made mutually exclusive.
        let objects: Vec<&Map<String, Value>> = members
            .iter()
            .filter_map(|m| self.member_object(m))
            .collect();
        if members.len() > 1 && objects.len() == members.len() {
            let tag = Self::tag(&objects);
            let keys: Vec<BTreeSet<&str>> = objects
                .iter()
                .map(|o| {
                    o.get("properties")
                        .and_then(Value::as_object)
                        .map(|p| p.keys().map(String::as_str).collect())
                        .unwrap_or_default()
                })
                .collect();
            let hoisted = all_open_objects(members);
            let mut items = Vec::new();
            for (i, member) in members.iter().enumerate() {
                let at = key(i);
                // With a tag, TypeScript narrows by it; without one, keys of
                // the other members are `never`, so `result` and `error`
                // cannot both appear in a response.
                let never: Vec<&str> = if tag.is_some() {
                    Vec::new()
                } else {
                    let others: BTreeSet<&str> = keys
                        .iter()
                        .enumerate()
                        .filter(|(j, _)| *j != i)
                        .flat_map(|(_, k)| k.iter().copied())
                        .collect();
                    others.difference(&keys[i]).copied().collect()
                };
                let mut doc = doc_lines(member);
                if hoisted {
                    doc.retain(|l| !OPEN_NOTE.contains(&l.as_str()));
                    while doc.last().is_some_and(String::is_empty) {
                        doc.pop();
                    }
                }
                let ty = match &nodes[i] {
                    Node::Ref(name) if never.is_empty() => (*name).to_owned(),
                    Node::Ref(name) => {
                        let fields: Vec<String> = never
                            .iter()
                            .map(|k| format!("{}?: never", property_key(k)))
                            .collect();
                        format!("({name} & {{ {} }})", fields.join("; "))
                    }
                    _ => self.object(objects[i], &at, indent + 4, tag.as_deref(), &never)?,
                };
                items.push((doc, ty));
            }
            return Ok(multiline(items, indent));
        }
        let mut parts = Vec::new();
        for (i, member) in members.iter().enumerate() {
            let ty = self.ty(member, &key(i), indent)?;
            parts.push(if ty.contains(" & ") { paren(&ty) } else { ty });
        }
        Ok(dedup(parts).join(" | "))
    }
}

/// The TSDoc lines of a node: its description, a note when JSON Schema
/// leaves the object open, then its constraints as tags (including
/// those of a nullable or mixed union's members and of array items).
pub(super) fn doc_lines(schema: &Value) -> Vec<String> {
    let Some(map) = schema.as_object() else {
        return Vec::new();
    };
    let mut lines: Vec<String> = map
        .get("description")
        .and_then(Value::as_str)
        .map(|d| d.lines().map(|l| doc_text(l.trim_end())).collect())
        .unwrap_or_default();
    let members = map
        .get("anyOf")
        .or_else(|| map.get("oneOf"))
        .and_then(Value::as_array);
    if is_open_object(map) || members.is_some_and(|m| all_open_objects(m)) {
        if !lines.is_empty() {
            lines.push(String::new());
        }
        lines.extend(OPEN_NOTE.iter().map(|l| (*l).to_owned()));
    }
    let mut found = tags(map, None);
    if let Some(members) = members {
        let scalars: Vec<&Map<String, Value>> = members
            .iter()
            .filter_map(Value::as_object)
            .filter(|m| {
                !m.contains_key("$ref")
                    && matches!(
                        m.get("type").and_then(Value::as_str),
                        Some("string" | "integer" | "number" | "boolean")
                    )
            })
            .collect();
        let non_null = members
            .iter()
            .filter(|m| m.get("type").and_then(Value::as_str) != Some("null"))
            .count();
        for member in scalars {
            let which = member
                .get("type")
                .and_then(Value::as_str)
                .filter(|_| non_null > 1);
            found.extend(tags(member, which));
        }
    }
    if let Some(items) = map.get("items").and_then(Value::as_object)
        && !items.contains_key("$ref")
    {
        found.extend(tags(items, Some("items")));
    }
    if !found.is_empty() && !lines.is_empty() {
        lines.push(String::new());
    }
    lines.extend(found);
    lines
}

/// An object schema with properties that JSON Schema leaves open.
fn is_open_object(map: &Map<String, Value>) -> bool {
    map.get("type").and_then(Value::as_str) == Some("object")
        && map
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|p| !p.is_empty())
        && !map.contains_key("additionalProperties")
}

/// Union members that are all inline open objects share one note.
fn all_open_objects(members: &[Value]) -> bool {
    members
        .iter()
        .all(|m| m.as_object().is_some_and(is_open_object))
}

/// The TSDoc tags of one schema node; `which` names the union member or
/// the array items they belong to.
fn tags(map: &Map<String, Value>, which: Option<&str>) -> Vec<String> {
    let suffix = which.map(|w| format!(" ({w})")).unwrap_or_default();
    DOC_TAGS
        .iter()
        .filter_map(|tag| {
            let value = map.get(*tag)?;
            let text = match (*tag, value) {
                ("uniqueItems", Value::Bool(true)) => return Some(format!("@uniqueItems{suffix}")),
                ("uniqueItems", _) => return None,
                (_, Value::String(s)) if *tag != "default" => doc_text(s),
                _ => doc_text(&literal(value)),
            };
            Some(format!("@{tag} {text}{suffix}"))
        })
        .collect()
}

fn without_description(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| k.as_str() != "description")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn dedup(items: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// A union with one member per line, each after its own doc.
fn multiline(items: Vec<(Vec<String>, String)>, indent: usize) -> String {
    let inner = indent + 2;
    let mut out = String::new();
    for (doc, ty) in items {
        out.push('\n');
        out.push_str(&render_doc(&doc, inner));
        out.push_str(&format!("{}| {ty}", pad(inner)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(name: &str, schema: Value) -> SourceDocument {
        SourceDocument {
            name: name.into(),
            schema,
            alias_of: None,
        }
    }

    /// The declarations generated for one document named `T`.
    fn emit(schema: Value) -> Result<String> {
        Registry::build(&[doc("T", schema)])?.declarations()
    }

    fn emitted(schema: Value) -> String {
        emit(schema).unwrap_or_else(|e| panic!("{e}"))
    }

    fn error(schema: Value) -> String {
        match emit(schema) {
            Ok(out) => panic!("expected an error, got:\n{out}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn scalars_nullables_and_untyped() {
        let out = emitted(json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["a", "my-key"],
            "properties": {
                "a": {"type": ["integer", "null"], "minimum": 1, "maximum": 10, "format": "uint16"},
                "b": {"anyOf": [{"$ref": "#/$defs/U"}, {"type": "null"}], "default": null},
                "c": {"description": "anything"},
                "d": true,
                "e": {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "boolean"}]}},
                "my-key": {"type": "array", "maxItems": 0}
            },
            "$defs": {"U": {"type": "string", "format": "uuid"}}
        }));
        assert!(out.contains(
            "  /**\n   * @minimum 1\n   * @maximum 10\n   * @format uint16\n   */\n  a: number | null;\n"
        ));
        assert!(out.contains("  /** @default null */\n  b?: U | null;\n"));
        assert!(out.contains("  /** anything */\n  c?: unknown;\n"));
        assert!(out.contains("  d?: unknown;\n"));
        assert!(out.contains("  e?: (string | boolean)[];\n"));
        assert!(out.contains("  \"my-key\": [];\n"));
        assert!(out.contains("/** @format uuid */\nexport type U = string;\n"));
    }

    #[test]
    fn empty_objects() {
        assert!(
            emitted(json!({"type": "object", "additionalProperties": false}))
                .contains("export type T = { [key: string]: never };")
        );
        assert!(
            emitted(json!({"type": "object", "additionalProperties": true}))
                .contains("export type T = { [key: string]: unknown };")
        );
    }

    #[test]
    fn documented_literals() {
        let out = emitted(json!({
            "description": "Kinds.",
            "oneOf": [
                {"enum": ["a", "b"], "type": "string"},
                {"const": "c", "type": "string", "description": "The last one."}
            ]
        }));
        assert!(
            out.contains(
                "export type T =\n  | \"a\"\n  | \"b\"\n  /** The last one. */\n  | \"c\";\n"
            ),
            "{out}"
        );
        assert!(
            emitted(json!({"enum": ["x", "y"], "type": "string"}))
                .contains("export type T = \"x\" | \"y\";")
        );
    }

    #[test]
    fn tagged_unions_put_the_tag_first() {
        let out = emitted(json!({
            "oneOf": [
                {"type": "object", "additionalProperties": false, "required": ["type", "a"],
                 "properties": {"a": {"type": "string"}, "type": {"const": "one", "type": "string"}}},
                {"type": "object", "required": ["type"], "description": "Two.",
                 "properties": {"type": {"const": "two", "type": "string"}}}
            ]
        }));
        assert!(
            out.contains("  | {\n      type: \"one\";\n      a: string;\n    }\n"),
            "{out}"
        );
        assert!(
            out.contains("  /**\n   * Two.\n   *\n   * Open in the JSON Schema"),
            "{out}"
        );
        assert!(
            !out.contains("?: never"),
            "tagged members need no exclusion: {out}"
        );
    }

    #[test]
    fn untagged_object_unions_are_exclusive() {
        let object = |key: &str| {
            json!({"type": "object", "additionalProperties": false, "required": [key, "id"],
                   "properties": {"id": {"type": "integer"}, key: {"type": "string"}}})
        };
        let out = emitted(json!({
            "anyOf": [{"$ref": "#/$defs/Ok"}, {"$ref": "#/$defs/Err"}],
            "$defs": {"Ok": object("result"), "Err": object("error")}
        }));
        assert!(
            out.contains(
                "export type T =\n  | (Ok & { error?: never })\n  | (Err & { result?: never });"
            ),
            "{out}"
        );
        let inline = emitted(json!({"anyOf": [object("result"), object("error")]}));
        assert!(inline.contains("      error?: never;\n"), "{inline}");
        assert!(inline.contains("      result?: never;\n"), "{inline}");
    }

    #[test]
    fn aliases_and_shared_definitions() {
        let info = json!({"type": "object", "additionalProperties": false,
                          "properties": {"id": {"type": "string"}}, "required": ["id"]});
        let docs = [
            doc("Info", info.clone()),
            SourceDocument {
                name: "InfoResult".into(),
                schema: json!({"description": "The same.", "type": "object"}),
                alias_of: Some("Info".into()),
            },
            doc(
                "Holder",
                json!({"type": "object", "additionalProperties": false,
                                 "properties": {"info": {"$ref": "#/$defs/Info"}},
                                 "$defs": {"Info": info}}),
            ),
        ];
        let out = Registry::build(&docs)
            .and_then(|r| r.declarations())
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            out.contains("/** The same. */\nexport type InfoResult = Info;\n"),
            "{out}"
        );
        assert_eq!(out.matches("export type Info =").count(), 1);

        let conflicting = [
            doc("Info", json!({"type": "string"})),
            doc(
                "Holder",
                json!({"$ref": "#/$defs/Info", "$defs": {"Info": {"type": "integer"}}}),
            ),
        ];
        let e = match Registry::build(&conflicting) {
            Ok(_) => panic!("conflicting definitions are accepted"),
            Err(e) => e.to_string(),
        };
        assert!(e.contains("differs from another definition of Info"), "{e}");
    }

    #[test]
    fn descriptions_cannot_close_the_comment() {
        assert!(emitted(json!({"type": "string", "description": "a */ b"})).contains("a *\\/ b"));
    }

    #[test]
    fn unsupported_constructs_are_errors() {
        let cases = [
            (
                json!({"allOf": [{"type": "string"}]}),
                "unsupported keyword `allOf`",
            ),
            (
                json!({"type": "object", "patternProperties": {}}),
                "unsupported keyword `patternProperties`",
            ),
            (
                json!({"type": "array", "prefixItems": []}),
                "unsupported keyword `prefixItems`",
            ),
            (
                json!({"type": "string", "not": {}}),
                "unsupported keyword `not`",
            ),
            (json!({"if": {}, "then": {}}), "unsupported keyword `if`"),
            (
                json!({"type": "integer", "minLength": 1}),
                "unsupported keyword `minLength`",
            ),
            (
                json!({"type": "object", "additionalProperties": {"type": "string"}}),
                "additional properties",
            ),
            (
                json!({"type": "object", "additionalProperties": true, "properties": {"a": {"type": "string"}}}),
                "`additionalProperties: true`",
            ),
            (json!({"type": "object"}), "without properties"),
            (json!({"$ref": "other.json#/$defs/X"}), "unsupported $ref"),
            (
                json!({"$ref": "#/$defs/Nowhere"}),
                "unknown definition Nowhere",
            ),
            (
                json!({"$ref": "#/$defs/X", "$defs": {"X": {"type": "string"}}, "format": "uuid"}),
                "`format`",
            ),
            (json!({"type": ["object", "null"]}), "in a `type` array"),
            (json!({"type": "text"}), "unknown type"),
            (json!({"const": {"a": 1}}), "not a JSON primitive"),
            (
                json!({"const": 1, "type": "string"}),
                "does not match `type`",
            ),
            (
                json!({"oneOf": [{"type": "string"}], "anyOf": [{"type": "string"}]}),
                "both",
            ),
            (json!({"anyOf": []}), "non-empty"),
            (
                json!({"anyOf": [{"type": "string"}, false]}),
                "the `false` schema",
            ),
            (
                json!({"anyOf": [{"type": "string"}, {"oneOf": [{"uniqueItems": true}]}]}),
                "`uniqueItems`",
            ),
            (
                json!({"type": "object", "additionalProperties": false, "required": ["b"],
                       "properties": {"a": {"type": "string"}}}),
                "required property b",
            ),
            (
                json!({"type": "object", "additionalProperties": false,
                       "properties": {"a": {"type": "string", "contentEncoding": "base64"}}}),
                "T/properties/a: unsupported keyword `contentEncoding`",
            ),
        ];
        for (schema, expected) in cases {
            let e = error(schema.clone());
            assert!(e.contains(expected), "{schema}: {e:?} lacks {expected:?}");
        }
    }
}
