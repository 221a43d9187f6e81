//! The schemas and the Rust types agree on what is valid: every
//! single-member mutation of every project fixture (a member removed, an
//! unknown member added, a value replaced by another of a different shape)
//! is either accepted by both or refused by both.

mod common;

use std::collections::HashMap;

use devicerail_host_fixtures::{self as fixtures, round_trip};
use serde_json::{Value, json};

/// Every mutation of `value` one step away from it, with a label.
fn mutations(value: &Value) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    walk(value, &mut Vec::new(), value, &mut out);
    out
}

fn set(root: &Value, path: &[String], new: Option<Value>) -> Value {
    let mut root = root.clone();
    let (last, parents) = match path.split_last() {
        Some(split) => split,
        None => return new.unwrap_or(Value::Null),
    };
    let mut cur = &mut root;
    for p in parents {
        cur = match cur {
            Value::Object(m) => m.get_mut(p).unwrap_or_else(|| unreachable!()),
            Value::Array(a) => a
                .get_mut(p.parse::<usize>().unwrap_or_default())
                .unwrap_or_else(|| unreachable!()),
            _ => unreachable!(),
        };
    }
    match (cur, new) {
        (Value::Object(m), None) => {
            m.remove(last);
        }
        (Value::Object(m), Some(v)) => {
            m.insert(last.clone(), v);
        }
        (Value::Array(a), Some(v)) => {
            let i = last.parse::<usize>().unwrap_or_default();
            a[i] = v;
        }
        (Value::Array(a), None) => {
            a.remove(last.parse::<usize>().unwrap_or_default());
        }
        _ => unreachable!(),
    }
    root
}

fn walk(root: &Value, path: &mut Vec<String>, here: &Value, out: &mut Vec<(String, Value)>) {
    let at = format!("/{}", path.join("/"));
    // Free-form JSON (Action arguments, metadata, details, schemas) is
    // deliberately unconstrained; do not descend into it.
    if let Some(last) = path.last()
        && matches!(
            last.as_str(),
            "arguments" | "metadata" | "details" | "inputSchema" | "output" | "value"
        )
        && !matches!(here, Value::String(_))
    {
        return;
    }
    match here {
        Value::Object(map) => {
            let mut with_unknown = path.clone();
            with_unknown.push("unexpectedMember".into());
            out.push((
                format!("{at}: add unexpectedMember"),
                set(root, &with_unknown, Some(json!(1))),
            ));
            for (k, v) in map {
                path.push(k.clone());
                out.push((format!("{at}: remove {k}"), set(root, path, None)));
                walk(root, path, v, out);
                path.pop();
            }
        }
        Value::Array(items) => {
            out.push((
                format!("{at}: empty list"),
                set(root, path, Some(json!([]))),
            ));
            if let Some(first) = items.first() {
                let mut doubled = items.clone();
                doubled.push(first.clone());
                out.push((
                    format!("{at}: repeat first item"),
                    set(root, path, Some(Value::Array(doubled))),
                ));
            }
            for (i, v) in items.iter().enumerate() {
                path.push(i.to_string());
                walk(root, path, v, out);
                path.pop();
            }
        }
        _ => {}
    }
    if !path.is_empty() {
        let replacements: &[(&str, Value)] = &[
            ("null", Value::Null),
            ("0", json!(0)),
            ("-1", json!(-1)),
            ("1.5", json!(1.5)),
            ("2^53", json!(9_007_199_254_740_992_u64)),
            ("\"\"", json!("")),
            ("\"x\"", json!("x")),
            ("true", json!(true)),
            ("{}", json!({})),
        ];
        for (label, v) in replacements {
            if v != here {
                out.push((
                    format!("{at}: set {label}"),
                    set(root, path, Some(v.clone())),
                ));
            }
        }
    }
}

/// Members that carry the tag of an internally tagged enum.
const TAGS: &[&str] = &["type", "kind", "mode", "outcome", "reason"];

/// Two places where serde's derived deserializers accept more than the
/// schema states; the schema is the stricter (intended) contract, so these
/// are counted but not treated as failures:
///
/// - an internally tagged enum's tag given as an integer is read as a
///   variant index (`{"type": 0}` is the first variant);
/// - a unit variant of an internally tagged enum ignores unknown members
///   even under `deny_unknown_fields` (`{"type": "sessionStarted", "x": 1}`).
fn serde_leniency(label: &str, original: &Value, by_type: bool, by_schema: bool) -> bool {
    if !by_type || by_schema {
        return false;
    }
    let Some((at, change)) = label.split_once(": ") else {
        return false;
    };
    let segments: Vec<&str> = at.split('/').filter(|s| !s.is_empty()).collect();
    if change == "set 0" {
        return segments.last().is_some_and(|last| TAGS.contains(last));
    }
    if change == "add unexpectedMember" {
        let mut here = original;
        for s in &segments {
            here = match here {
                Value::Array(items) => &items[s.parse::<usize>().unwrap_or_default()],
                other => &other[*s],
            };
        }
        return here
            .as_object()
            .is_some_and(|m| m.len() == 1 && m.keys().all(|k| TAGS.contains(&k.as_str())));
    }
    false
}

/// Mutates every document and compares the two verdicts; returns the
/// number of mutations, the disagreements and the tolerated leniencies.
fn compare(
    documents: &[(String, String, Value)],
    validator_for: &mut dyn FnMut(&str) -> jsonschema::Validator,
) -> (usize, Vec<String>, usize) {
    let mut validators: HashMap<String, jsonschema::Validator> = HashMap::new();
    let mut total = 0;
    let mut lenient = 0;
    let mut disagreements = Vec::new();
    for (path, kind, schema, original) in documents.iter().map(|(path, kind_schema, v)| {
        let (kind, schema) = kind_schema.split_once(' ').unwrap_or_default();
        (path, kind, schema, v)
    }) {
        let validator = validators
            .entry(schema.to_owned())
            .or_insert_with(|| validator_for(schema));
        for (label, mutated) in mutations(original) {
            total += 1;
            let by_type = round_trip(kind, &mutated).is_ok();
            let by_schema = validator.is_valid(&mutated);
            if by_type == by_schema {
                continue;
            }
            if serde_leniency(&label, original, by_type, by_schema) {
                lenient += 1;
                continue;
            }
            disagreements.push(format!(
                "{path} {label}: type {}, schema {}",
                if by_type { "accepts" } else { "refuses" },
                if by_schema { "accepts" } else { "refuses" },
            ));
        }
    }
    disagreements.sort();
    disagreements.dedup();
    (total, disagreements, lenient)
}

fn project_validator(schema: &str) -> jsonschema::Validator {
    common::validator(&common::project_schema(schema)).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn schemas_and_types_agree_on_project_fixture_mutations() {
    let all = fixtures::all().unwrap_or_else(|e| panic!("{e}"));
    let documents: Vec<(String, String, Value)> = all
        .iter()
        .map(|f| {
            let value = serde_json::from_str(f.json).unwrap_or_else(|e| panic!("{e}"));
            (
                f.entry.path.clone(),
                format!("{} {}", f.entry.kind, f.entry.schema),
                value,
            )
        })
        .collect();
    let (total, disagreements, lenient) = compare(&documents, &mut project_validator);
    println!(
        "schema/type agreement: {}/{total} mutations of {} project fixtures agree, {lenient} known serde leniencies",
        total - disagreements.len() - lenient,
        documents.len()
    );
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}

#[test]
fn schemas_and_types_agree_on_reference_fixture_mutations() {
    let Some(dir) = common::reference_dir("schema/type agreement on reference fixtures") else {
        return;
    };
    let fixtures_dir = dir.join("fixtures");
    let manifest = common::read_json(&fixtures_dir.join("manifest.json"));
    let documents: Vec<(String, String, Value)> = manifest["fixtures"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            let path = e["path"].as_str().unwrap_or_default();
            let schema = format!(
                "schema/v1/{}",
                common::schema_file_name(e["schema"].as_str().unwrap_or_default())
            );
            (
                path.to_owned(),
                format!("{} {schema}", e["kind"].as_str().unwrap_or_default()),
                common::read_json(&fixtures_dir.join(path)),
            )
        })
        .collect();
    let (total, disagreements, lenient) = compare(&documents, &mut project_validator);
    println!(
        "schema/type agreement: {}/{total} mutations of {} reference fixtures agree, {lenient} known serde leniencies",
        total - disagreements.len() - lenient,
        documents.len()
    );
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}
