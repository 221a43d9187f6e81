//! Arguments an action's input schema accepts, built from the schema, so
//! the suite can call every action: the schema's own `examples` first,
//! else a minimal instance (required members only, the lowest allowed
//! numbers, the shortest strings). Only schemas this can satisfy for sure
//! get arguments; the result is always validated against the schema.

use serde_json::{Map, Value, json};

/// How deep `$ref`s and nested schemas are followed.
const MAX_DEPTH: u8 = 12;

/// Arguments `schema` accepts: its first `examples` entry it validates,
/// else a minimal instance built from it. `None` when the schema does not
/// compile, or says too little to build one (a string with a `pattern` or
/// `format` and no `examples`).
pub fn sample_arguments(schema: &Value) -> Option<Value> {
    let validator = jsonschema::validator_for(schema).ok()?;
    if let Some(example) = schema
        .get("examples")
        .and_then(Value::as_array)
        .and_then(|examples| examples.iter().find(|e| validator.is_valid(e)))
    {
        return Some(example.clone());
    }
    let value = minimal(schema, schema, 0)?;
    validator.is_valid(&value).then_some(value)
}

/// A value of another JSON type than `ty`, for calls the schema refuses.
pub(crate) fn wrong_type_for(ty: &str) -> Option<Value> {
    Some(match ty {
        "string" => json!(12345),
        "integer" | "number" => json!("not a number"),
        "boolean" => json!("not a boolean"),
        "object" => json!(7),
        "array" => json!("not an array"),
        _ => return None,
    })
}

/// The schema a local `$ref` (`#/$defs/X`, `#/definitions/X`) points at.
fn resolve<'s>(root: &'s Value, reference: &str) -> Option<&'s Value> {
    root.pointer(reference.strip_prefix('#')?)
}

fn minimal(schema: &Value, root: &Value, depth: u8) -> Option<Value> {
    if depth > MAX_DEPTH {
        return None;
    }
    let o = match schema {
        Value::Bool(true) => return Some(Value::Null),
        Value::Object(o) => o,
        _ => return None,
    };
    if let Some(c) = o.get("const") {
        return Some(c.clone());
    }
    for key in ["enum", "examples"] {
        if let Some(first) = o.get(key).and_then(Value::as_array).and_then(|a| a.first()) {
            return Some(first.clone());
        }
    }
    if let Some(d) = o.get("default") {
        return Some(d.clone());
    }
    if let Some(r) = o.get("$ref").and_then(Value::as_str) {
        return minimal(resolve(root, r)?, root, depth + 1);
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(branches) = o.get(key).and_then(Value::as_array) {
            return branches.iter().find_map(|b| minimal(b, root, depth + 1));
        }
    }
    let ty = match o.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")?,
        _ if o.contains_key("properties") => "object",
        _ => return None,
    };
    let number = |key: &str| o.get(key).and_then(Value::as_f64);
    match ty {
        "object" => {
            let properties = o.get("properties").and_then(Value::as_object);
            let mut out = Map::new();
            for name in o
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                let member = properties
                    .and_then(|p| p.get(name))
                    .unwrap_or(&Value::Bool(true));
                out.insert(name.to_owned(), minimal(member, root, depth + 1)?);
            }
            Some(Value::Object(out))
        }
        "integer" | "number" => {
            let low = number("minimum").or_else(|| number("exclusiveMinimum").map(|m| m + 1.0));
            let high = number("maximum").or_else(|| number("exclusiveMaximum").map(|m| m - 1.0));
            let pick = match (low, high) {
                (Some(low), _) => low.ceil(),
                (None, Some(high)) if high < 0.0 => high.floor(),
                _ => 0.0,
            };
            // Whole numbers within i64 print without a fraction.
            if pick.fract() == 0.0 && pick.abs() < 9.0e15 {
                Some(json!(pick as i64))
            } else {
                None
            }
        }
        "string" => {
            if o.contains_key("pattern") || o.contains_key("format") {
                return None;
            }
            let min = o
                .get("minLength")
                .and_then(Value::as_u64)
                .unwrap_or(1)
                .max(1);
            let max = o
                .get("maxLength")
                .and_then(Value::as_u64)
                .unwrap_or(u64::MAX);
            let len = usize::try_from(min.min(max)).ok()?;
            Some(Value::String("a".repeat(len)))
        }
        "boolean" => Some(Value::Bool(false)),
        "null" => Some(Value::Null),
        "array" => {
            let count = o.get("minItems").and_then(Value::as_u64).unwrap_or(0);
            if count == 0 {
                return Some(json!([]));
            }
            let item = minimal(o.get("items")?, root, depth + 1)?;
            let count = usize::try_from(count.min(64)).ok()?;
            Some(Value::Array(vec![item; count]))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examples_come_first() {
        let schema = json!({
            "type": "object",
            "properties": { "color": { "type": "string", "pattern": "^#[0-9a-f]{6}$" } },
            "required": ["color"],
            "examples": [{ "color": "red" }, { "color": "#00ff00" }]
        });
        assert_eq!(
            sample_arguments(&schema),
            Some(json!({ "color": "#00ff00" }))
        );
    }

    #[test]
    fn minimal_instances_satisfy_bounds() {
        let schema = json!({
            "type": "object",
            "properties": {
                "x": { "type": "integer", "minimum": 3, "maximum": 9 },
                "y": { "type": "integer", "maximum": -2 },
                "name": { "type": "string", "minLength": 2, "maxLength": 4 },
                "mode": { "enum": ["fast", "slow"] },
                "flag": { "type": "boolean" },
                "list": { "type": "array", "items": { "type": "number" }, "minItems": 2 },
                "optional": { "type": "string", "pattern": "^x$" }
            },
            "required": ["x", "y", "name", "mode", "flag", "list"],
            "additionalProperties": false
        });
        assert_eq!(
            sample_arguments(&schema),
            Some(
                json!({ "x": 3, "y": -2, "name": "aa", "mode": "fast", "flag": false, "list": [0, 0] })
            )
        );
    }

    #[test]
    fn references_and_alternatives_are_followed() {
        let schema = json!({
            "type": "object",
            "properties": { "target": { "$ref": "#/$defs/Target" } },
            "required": ["target"],
            "$defs": {
                "Target": { "oneOf": [
                    { "type": "string", "format": "uri" },
                    { "type": "object", "properties": { "id": { "type": "string" } }, "required": ["id"] }
                ] }
            }
        });
        assert_eq!(
            sample_arguments(&schema),
            Some(json!({ "target": { "id": "a" } }))
        );
    }

    #[test]
    fn schemas_that_say_too_little_get_nothing() {
        let pattern = json!({
            "type": "object",
            "properties": { "url": { "type": "string", "format": "uri" } },
            "required": ["url"]
        });
        assert_eq!(sample_arguments(&pattern), None);
        assert_eq!(sample_arguments(&json!({ "type": 12 })), None);
        // Optional members are left out, so this one is fine.
        let optional = json!({ "type": "object", "properties": { "url": { "type": "string", "format": "uri" } } });
        assert_eq!(sample_arguments(&optional), Some(json!({})));
    }
}
