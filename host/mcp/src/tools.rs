//! The MCP tools `devicerail mcp` offers: names, descriptions, input and
//! output JSON Schemas, and the typed arguments each call is parsed into.
//!
//! Declarations only: nothing here talks to a host. Every structured
//! result a tool returns must validate against its output schema here
//! (the MCP suite checks it).

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde::Deserialize;
use serde_json::{Value, json};

use super::image::Format;

pub(crate) const DEVICES: &str = "devices";
pub(crate) const OBSERVE: &str = "observe";
pub(crate) const ACT: &str = "act";
pub(crate) const WAIT_FOR: &str = "wait_for";
pub(crate) const SESSION: &str = "session";

/// Longest wait a caller may ask for, in milliseconds.
pub(crate) const MAX_TIMEOUT_MS: u64 = 120_000;
/// Wait of `wait_for` when the caller gives none.
pub(crate) const DEFAULT_WAIT_MS: u64 = 10_000;

fn object(v: Value) -> Arc<JsonObject> {
    match v {
        Value::Object(m) => Arc::new(m),
        _ => Arc::new(JsonObject::new()),
    }
}

fn device_arg() -> Value {
    json!({ "type": "string", "minLength": 1, "description": "The device id, as `devices` lists it." })
}

fn selector_schema() -> Value {
    json!({
        "type": "object",
        "description": "Selects one element; every given field must match.",
        "properties": {
            "role": { "type": "string", "description": "Exact role, such as button or textField." },
            "name": { "type": "string", "description": "Exact accessible name (label)." },
            "text": { "type": "string", "description": "Case-insensitive substring of the visible text or name." },
            "value": { "type": "string", "description": "Exact current value." },
            "identifier": { "type": "string", "description": "Exact developer id (shown as #id in the outline)." },
            "css": { "type": "string", "description": "CSS selector (web pages only)." }
        },
        "additionalProperties": false,
        "minProperties": 1
    })
}

fn nullable(t: &str) -> Value {
    json!({ "type": [t, "null"] })
}

fn session_fields() -> Value {
    json!({
        "sessionId": { "type": "string", "description": "The recorded Session this call belongs to." },
        "device": { "type": "string" }
    })
}

fn merge(mut base: Value, extra: Value) -> Value {
    if let (Some(b), Value::Object(e)) = (base.as_object_mut(), extra) {
        b.extend(e);
    }
    base
}

/// Every tool, in the order they are listed.
pub(crate) fn all() -> Vec<Tool> {
    let read_only = ToolAnnotations::new()
        .read_only(true)
        .destructive(false)
        .open_world(false);
    vec![
        Tool::new(
            DEVICES,
            "List the devices the host can drive: id, platform, name, state, and whether one is leased (in use by another client or agent). Call first; every other tool takes one of these ids.",
            object(json!({ "type": "object", "properties": {}, "additionalProperties": false })),
        )
        .with_raw_output_schema(object(json!({
            "type": "object",
            "properties": {
                "devices": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": { "type": "string" },
                            "platform": { "type": "string" },
                            "name": { "type": "string" },
                            "state": { "type": "string", "enum": ["available", "connected"] },
                            "leased": { "type": "boolean" },
                            "leaseHolder": { "type": ["string", "null"], "enum": ["thisServer", "anotherClient", null] },
                            "sessionId": nullable("string")
                        },
                        "required": ["id", "platform", "name", "state", "leased", "leaseHolder", "sessionId"]
                    }
                },
                "mode": { "type": "string", "enum": ["shared", "in-process"] }
            },
            "required": ["devices", "mode"]
        })))
        .with_annotations(read_only.clone()),
        Tool::new(
            OBSERVE,
            "Look at a device: a screenshot (JPEG by default, long side at most maxSide) and a compact outline of the UI tree, one line per element: `e12 button \"Sign in\" #id`. Use the refs (e12) with `act`, or `subtree` to expand one element; refs stay valid for this observation. A long outline ends with `… truncated: N more nodes; narrow with filter or subtree`.",
            object(json!({
                "type": "object",
                "properties": {
                    "device": device_arg(),
                    "filter": { "type": "string", "description": "Only elements whose role, name, text, value or id contains this (case-insensitive), with their ancestors." },
                    "subtree": { "type": "string", "pattern": "^e[0-9]+$", "description": "Only the subtree under this ref of an earlier observation." },
                    "maxNodes": { "type": "integer", "minimum": 1, "maximum": 2000, "default": 200 },
                    "maxChars": { "type": "integer", "minimum": 200, "maximum": 100000, "default": 8000 },
                    "screenshot": { "type": "boolean", "default": true, "description": "Include the screenshot." },
                    "format": { "type": "string", "enum": ["jpeg", "png"], "default": "jpeg" },
                    "maxSide": { "type": "integer", "minimum": 64, "maximum": 4096, "default": 1280, "description": "Long side of the image, in pixels." }
                },
                "required": ["device"],
                "additionalProperties": false
            })),
        )
        .with_raw_output_schema(object(json!({
            "type": "object",
            "properties": merge(session_fields(), json!({
                "observationId": { "type": "string" },
                "outline": { "type": "string" },
                "nodes": { "type": "integer", "minimum": 0, "description": "Elements in scope (after filter/subtree)." },
                "shown": { "type": "integer", "minimum": 0 },
                "truncated": { "type": "boolean" },
                "image": {
                    "type": ["object", "null"],
                    "properties": {
                        "mimeType": { "type": "string", "enum": ["image/jpeg", "image/png"] },
                        "width": { "type": "integer", "minimum": 1 },
                        "height": { "type": "integer", "minimum": 1 },
                        "bytes": { "type": "integer", "minimum": 1 },
                        "sourceWidth": { "type": "integer", "minimum": 1 },
                        "sourceHeight": { "type": "integer", "minimum": 1 }
                    },
                    "required": ["mimeType", "width", "height", "bytes", "sourceWidth", "sourceHeight"]
                },
                "note": nullable("string")
            })),
            "required": ["sessionId", "device", "observationId", "outline", "nodes", "shown", "truncated", "image", "note"]
        }))),
        Tool::new(
            ACT,
            "Do one thing on a device. Targets: `ref` (from observe), `selector`, or `x`/`y` in screenshot pixels. Actions: tap, type (text, or `secret`: the NAME of a secret the server reads from DEVICERAIL_SECRET_<NAME>; never pass a secret value), clear, setValue, swipe (x,y → toX,toY), scroll (deltaX/deltaY), key, navigate (url), launchApp (appId). Every call is recorded in the device's Session.",
            object(json!({
                "type": "object",
                "properties": {
                    "device": device_arg(),
                    "action": { "type": "string", "enum": ["tap", "type", "clear", "setValue", "swipe", "scroll", "key", "navigate", "launchApp"] },
                    "ref": { "type": "string", "pattern": "^e[0-9]+$" },
                    "selector": selector_schema(),
                    "x": { "type": "number", "minimum": 0 },
                    "y": { "type": "number", "minimum": 0 },
                    "toX": { "type": "number", "minimum": 0 },
                    "toY": { "type": "number", "minimum": 0 },
                    "deltaX": { "type": "integer" },
                    "deltaY": { "type": "integer" },
                    "text": { "type": "string", "description": "For type and setValue." },
                    "secret": { "type": "string", "pattern": "^[A-Za-z0-9_]{1,64}$", "description": "For type: the name of a secret (DEVICERAIL_SECRET_<NAME>); its value is typed as protected input and never recorded." },
                    "key": { "type": "string" },
                    "url": { "type": "string" },
                    "appId": { "type": "string" },
                    "timeoutMs": { "type": "integer", "minimum": 100, "maximum": MAX_TIMEOUT_MS }
                },
                "required": ["device", "action"],
                "additionalProperties": false
            })),
        )
        .with_raw_output_schema(object(json!({
            "type": "object",
            "properties": merge(session_fields(), json!({
                "action": { "type": "string" },
                "steps": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": { "type": "string", "description": "The DeviceRail Action run." },
                            "callId": { "type": "string" },
                            "protected": { "type": "boolean" },
                            "output": {}
                        },
                        "required": ["name", "callId", "protected"]
                    }
                }
            })),
            "required": ["sessionId", "device", "action", "steps"]
        }))),
        Tool::new(
            WAIT_FOR,
            "Wait until an element matching a selector is present, visible, enabled or absent, for at most timeoutMs (default 10000). Answers matched=false on timeout.",
            object(json!({
                "type": "object",
                "properties": {
                    "device": device_arg(),
                    "selector": selector_schema(),
                    "condition": { "type": "string", "enum": ["present", "visible", "enabled", "absent"], "default": "present" },
                    "timeoutMs": { "type": "integer", "minimum": 100, "maximum": MAX_TIMEOUT_MS, "default": DEFAULT_WAIT_MS }
                },
                "required": ["device", "selector"],
                "additionalProperties": false
            })),
        )
        .with_raw_output_schema(object(json!({
            "type": "object",
            "properties": merge(session_fields(), json!({
                "matched": { "type": "boolean" },
                "condition": { "type": "string" },
                "elapsedMs": { "type": "integer", "minimum": 0 }
            })),
            "required": ["sessionId", "device", "matched", "condition", "elapsedMs"]
        }))),
        Tool::new(
            SESSION,
            "The recorded Session of a device. Every tool call on a device runs in its Session, started on first use (or here with op=start). op=end records your verdict (pass/fail/unknown with a summary), ends the Session and frees the device. op=info says where the record is and how to render its report.",
            object(json!({
                "type": "object",
                "properties": {
                    "device": device_arg(),
                    "op": { "type": "string", "enum": ["start", "end", "info"] },
                    "verdict": { "type": "string", "enum": ["pass", "fail", "unknown"] },
                    "summary": { "type": "string", "minLength": 1, "maxLength": 16384 }
                },
                "required": ["device", "op"],
                "additionalProperties": false
            })),
        )
        .with_raw_output_schema(object(json!({
            "type": "object",
            "properties": {
                "device": { "type": "string" },
                "sessionId": nullable("string"),
                "state": { "type": "string", "enum": ["active", "ended", "none"] },
                "verdict": nullable("string"),
                "dataDir": { "type": "string" },
                "reportCommand": nullable("string"),
                "bundleCommand": nullable("string")
            },
            "required": ["device", "sessionId", "state", "verdict", "dataDir", "reportCommand", "bundleCommand"]
        }))),
    ]
}

/// Arguments of `observe`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ObserveArgs {
    pub device: String,
    #[serde(default)]
    pub filter: Option<String>,
    #[serde(default)]
    pub subtree: Option<String>,
    #[serde(default)]
    pub max_nodes: Option<usize>,
    #[serde(default)]
    pub max_chars: Option<usize>,
    #[serde(default)]
    pub screenshot: Option<bool>,
    #[serde(default)]
    pub format: Format,
    #[serde(default)]
    pub max_side: Option<u32>,
}

/// What `act` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum ActKind {
    Tap,
    Type,
    Clear,
    SetValue,
    Swipe,
    Scroll,
    Key,
    Navigate,
    LaunchApp,
}

/// A selector as tools take it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Selector {
    pub role: Option<String>,
    pub name: Option<String>,
    pub text: Option<String>,
    pub value: Option<String>,
    pub identifier: Option<String>,
    pub css: Option<String>,
}

impl Selector {
    /// The protocol's `ElementSelector`.
    pub(crate) fn to_protocol(&self) -> Value {
        let mut m = serde_json::Map::new();
        let mut put = |k: &str, v: &Option<String>| {
            if let Some(v) = v {
                m.insert(k.into(), json!(v));
            }
        };
        put("role", &self.role);
        put("name", &self.name);
        put("value", &self.value);
        put("identifier", &self.identifier);
        put("css", &self.css);
        if let Some(t) = &self.text {
            m.insert("text".into(), json!({ "value": t, "mode": "contains" }));
        }
        Value::Object(m)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.to_protocol().as_object().is_none_or(|m| m.is_empty())
    }
}

/// Arguments of `act`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ActArgs {
    pub device: String,
    pub action: ActKind,
    #[serde(default, rename = "ref")]
    pub reference: Option<String>,
    #[serde(default)]
    pub selector: Option<Selector>,
    #[serde(default)]
    pub x: Option<f64>,
    #[serde(default)]
    pub y: Option<f64>,
    #[serde(default)]
    pub to_x: Option<f64>,
    #[serde(default)]
    pub to_y: Option<f64>,
    #[serde(default)]
    pub delta_x: Option<i64>,
    #[serde(default)]
    pub delta_y: Option<i64>,
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub secret: Option<String>,
    #[serde(default)]
    pub key: Option<String>,
    #[serde(default)]
    pub url: Option<String>,
    #[serde(default)]
    pub app_id: Option<String>,
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

/// Arguments of `wait_for`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct WaitArgs {
    pub device: String,
    pub selector: Selector,
    #[serde(default)]
    pub condition: Option<String>,
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

/// What `session` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum SessionOp {
    Start,
    End,
    Info,
}

/// Arguments of `session`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct SessionArgs {
    pub device: String,
    pub op: SessionOp,
    #[serde(default)]
    pub verdict: Option<String>,
    #[serde(default)]
    pub summary: Option<String>,
}

/// Arguments of `devices`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DevicesArgs {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_an_object_input_and_output_schema() {
        let tools = all();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, [DEVICES, OBSERVE, ACT, WAIT_FOR, SESSION]);
        for t in &tools {
            assert_eq!(t.input_schema["type"], "object", "{}", t.name);
            let out = t.output_schema.as_ref().expect("output schema");
            assert_eq!(out["type"], "object", "{}", t.name);
        }
    }

    #[test]
    fn selectors_map_text_to_a_contains_match() {
        let s = Selector {
            role: Some("button".into()),
            text: Some("sign".into()),
            ..Selector::default()
        };
        assert_eq!(
            s.to_protocol(),
            json!({ "role": "button", "text": { "value": "sign", "mode": "contains" } })
        );
        assert!(Selector::default().is_empty());
    }
}
