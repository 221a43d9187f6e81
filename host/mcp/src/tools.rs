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

fn screenshot_arg(default: &str, auto: &str) -> Value {
    json!({
        "type": ["string", "boolean"],
        "enum": ["auto", "always", "never", true, false],
        "default": default,
        "description": format!("Include the screenshot: always, never, or {auto} true means always, false never.")
    })
}

fn image_schema() -> Value {
    json!({
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
    })
}

fn settle_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "asked": { "type": "boolean" },
            "settled": { "type": "boolean" },
            "ms": { "type": "integer", "minimum": 0, "description": "Time spent settling." },
            "samples": { "type": "integer", "minimum": 0 },
            "stillChanging": { "type": "array", "items": { "type": "string" } }
        },
        "required": ["asked", "settled", "ms", "samples", "stillChanging"]
    })
}

fn omitted_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "interactive": { "type": "integer", "minimum": 0 },
            "text": { "type": "integer", "minimum": 0 },
            "other": { "type": "integer", "minimum": 0 }
        },
        "required": ["interactive", "text", "other"]
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
            "Look at a device. The first look in a Session is a full outline of the UI tree, one line per element (`e12 button \"Sign in\" #id`, links as `→ /path`) and a screenshot; later looks return only what changed since the last one (`~` changed, `+` added, `-` removed, `↕` moved, `=` unchanged regions), or the whole outline when the screen is new (`full`: true asks for it). Refs (e12) name elements, not positions: the same element keeps its ref, so pass them to `act`. The outline is filled within maxChars, interactive elements first, and ends with what it left out; ask for that with `subtree` (a ref) or `filter`. It waits for the screen to settle first (`settle`). The image comes when the screen changed visibly (screenshot: auto).",
            object(json!({
                "type": "object",
                "properties": {
                    "device": device_arg(),
                    "full": { "type": "boolean", "default": false, "description": "The whole outline instead of the changes since the last look." },
                    "since": { "type": "string", "description": "Changes since this earlier observation (one of the last 8 of this device)." },
                    "filter": { "type": "string", "description": "Only elements whose role, name, text, value or id contains this (case-insensitive), with their ancestors and contents." },
                    "subtree": { "type": "string", "pattern": "^e[0-9]+$", "description": "Only the subtree of this ref." },
                    "maxChars": { "type": "integer", "minimum": 200, "maximum": 100000, "default": 6000, "description": "Budget of the outline or diff, in characters." },
                    "screenshot": screenshot_arg("auto", "auto: only when the screen changed visibly since the last image (or there is no UI tree)."),
                    "format": { "type": "string", "enum": ["jpeg", "png"], "default": "jpeg" },
                    "maxSide": { "type": "integer", "minimum": 64, "maximum": 4096, "default": 1280, "description": "Long side of the image, in pixels." },
                    "settle": { "type": "boolean", "default": true, "description": "Wait until the UI tree and the screenshot are quiet first." },
                    "settleMaxMs": { "type": "integer", "minimum": 0, "maximum": 30000, "default": 3000 }
                },
                "required": ["device"],
                "additionalProperties": false
            })),
        )
        .with_raw_output_schema(object(json!({
            "type": "object",
            "properties": merge(session_fields(), json!({
                "observationId": { "type": "string" },
                "mode": { "type": "string", "enum": ["full", "diff", "newScreen"], "description": "What the text holds: the whole outline, the changes since `since`, or the whole outline of a new screen." },
                "since": nullable("string"),
                "counts": {
                    "type": ["object", "null"],
                    "properties": {
                        "added": { "type": "integer", "minimum": 0 },
                        "removed": { "type": "integer", "minimum": 0 },
                        "changed": { "type": "integer", "minimum": 0 },
                        "moved": { "type": "integer", "minimum": 0 },
                        "unchanged": { "type": "integer", "minimum": 0 }
                    },
                    "required": ["added", "removed", "changed", "moved", "unchanged"]
                },
                "nodes": { "type": "integer", "minimum": 0, "description": "Elements in scope (after filter/subtree)." },
                "shown": { "type": "integer", "minimum": 0 },
                "truncated": { "type": "boolean" },
                "omitted": omitted_schema(),
                "settle": settle_schema(),
                "image": image_schema(),
                "note": nullable("string")
            })),
            "required": ["sessionId", "device", "observationId", "mode", "since", "counts", "nodes", "shown", "truncated", "omitted", "settle", "image", "note"]
        }))),
        Tool::new(
            ACT,
            "Do one thing on a device and see what it changed. Targets: `ref` (from observe or an earlier effect), `selector`, or `x`/`y` in screenshot pixels. A ref is re-found in a fresh UI tree first; if its element is gone or no longer unique the call fails with `stale_ref` and candidates, and nothing is done. Actions: tap, type (text, or `secret`: the NAME of a secret the server reads from DEVICERAIL_SECRET_<NAME>; never pass a secret value), clear, setValue, swipe (x,y → toX,toY), scroll (deltaX/deltaY), key, navigate (url), launchApp (appId). The answer is the effect once the screen settled: the changes (as observe's diff), or the new screen's outline, or `⚠ no visible change`. Every call is recorded in the device's Session.",
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
                    "timeoutMs": { "type": "integer", "minimum": 100, "maximum": MAX_TIMEOUT_MS },
                    "settle": { "type": "boolean", "default": true, "description": "Wait until the screen is quiet before reading the effect." },
                    "settleMaxMs": { "type": "integer", "minimum": 0, "maximum": 30000, "default": 3000 },
                    "screenshot": screenshot_arg("never", "auto: when only the pixels changed."),
                    "format": { "type": "string", "enum": ["jpeg", "png"], "default": "jpeg" },
                    "maxSide": { "type": "integer", "minimum": 64, "maximum": 4096, "default": 1280 },
                    "maxChars": { "type": "integer", "minimum": 200, "maximum": 100000, "default": 2000, "description": "Budget of the effect's text, in characters (a new screen shows its outline within it; observe for more)." }
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
                },
                "target": {
                    "type": ["object", "null"],
                    "properties": {
                        "ref": { "type": "string" },
                        "identity": { "type": "string" },
                        "movedFrom": { "type": ["array", "null"], "items": { "type": "number" } }
                    },
                    "required": ["ref", "identity", "movedFrom"]
                },
                "effect": {
                    "type": "object",
                    "properties": {
                        "verdict": { "type": "string", "enum": ["changed", "treeOnly", "pixelsOnly", "noVisibleChange", "unknown"] },
                        "newScreen": { "type": "boolean" },
                        "added": { "type": "integer", "minimum": 0 },
                        "removed": { "type": "integer", "minimum": 0 },
                        "changed": { "type": "integer", "minimum": 0 },
                        "moved": { "type": "integer", "minimum": 0 },
                        "pixelsChanged": { "type": ["number", "null"], "description": "Share of the screen whose pixels changed (0–1)." },
                        "navigated": {
                            "type": ["object", "null"],
                            "properties": { "from": { "type": "string" }, "to": { "type": "string" } },
                            "required": ["from", "to"]
                        },
                        "before": nullable("string"),
                        "after": nullable("string")
                    },
                    "required": ["verdict", "newScreen", "added", "removed", "changed", "moved", "pixelsChanged", "navigated", "before", "after"]
                },
                "settle": settle_schema(),
                "image": image_schema()
            })),
            "required": ["sessionId", "device", "action", "steps", "target", "effect", "settle", "image"]
        }))),
        Tool::new(
            WAIT_FOR,
            "Wait until an element matching a selector is present, visible, enabled or absent, or (condition settled, no selector) until the screen is quiet: UI tree and screenshot unchanged for a short window. At most timeoutMs (default 10000); answers matched=false on timeout.",
            object(json!({
                "type": "object",
                "properties": {
                    "device": device_arg(),
                    "selector": selector_schema(),
                    "condition": { "type": "string", "enum": ["present", "visible", "enabled", "absent", "settled"], "default": "present" },
                    "timeoutMs": { "type": "integer", "minimum": 100, "maximum": MAX_TIMEOUT_MS, "default": DEFAULT_WAIT_MS }
                },
                "required": ["device"],
                "additionalProperties": false
            })),
        )
        .with_raw_output_schema(object(json!({
            "type": "object",
            "properties": merge(session_fields(), json!({
                "matched": { "type": "boolean" },
                "condition": { "type": "string" },
                "elapsedMs": { "type": "integer", "minimum": 0 },
                "samples": { "type": "integer", "minimum": 1, "description": "Observations taken (settled)." },
                "stillChanging": { "type": "array", "items": { "type": "string" }, "description": "What kept changing (settled, not matched)." }
            })),
            "required": ["sessionId", "device", "matched", "condition", "elapsedMs"]
        }))),
        Tool::new(
            SESSION,
            "The recorded Session of a device. Every tool call on a device runs in its Session, started on first use (or here with op=start). op=end records your verdict (pass/fail/unknown with a summary), ends the Session and frees the device. op=info says where the record is and how to render its report. op=replay runs a recorded Session (`source`: its id, or a bundle file) again on this device as a new Session: each step is re-aimed where its element is now and compared with the recording; the answer is the verdict (pass when every step matched or healed) and each step's outcome (matched, healed with both positions, or diverged with candidates; a diverged step never taps elsewhere). End an active Session first.",
            object(json!({
                "type": "object",
                "properties": {
                    "device": device_arg(),
                    "op": { "type": "string", "enum": ["start", "end", "info", "replay"] },
                    "verdict": { "type": "string", "enum": ["pass", "fail", "unknown"] },
                    "summary": { "type": "string", "minLength": 1, "maxLength": 16384 },
                    "source": { "type": "string", "minLength": 1, "maxLength": 4096, "description": "op=replay: the recorded Session's id, or the path of a bundle file." },
                    "strict": { "type": "boolean", "default": false, "description": "op=replay: stop at the first divergence." }
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
                "bundleCommand": nullable("string"),
                "replay": {
                    "type": "object",
                    "description": "op=replay: the outcome of each step.",
                    "properties": {
                        "replays": { "type": "string" },
                        "matched": { "type": "integer", "minimum": 0 },
                        "healed": { "type": "integer", "minimum": 0 },
                        "diverged": { "type": "integer", "minimum": 0 },
                        "stopped": { "type": "string" },
                        "steps": { "type": "array", "items": { "type": "object" } }
                    },
                    "required": ["replays", "matched", "healed", "diverged", "steps"]
                }
            },
            "required": ["device", "sessionId", "state", "verdict", "dataDir", "reportCommand", "bundleCommand"]
        }))),
    ]
}

/// When a result carries the screenshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ShotMode {
    Auto,
    Always,
    Never,
}

impl<'de> Deserialize<'de> for ShotMode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Bool(bool),
            Word(String),
        }
        match Raw::deserialize(d)? {
            Raw::Bool(true) => Ok(ShotMode::Always),
            Raw::Bool(false) => Ok(ShotMode::Never),
            Raw::Word(w) => match w.as_str() {
                "auto" => Ok(ShotMode::Auto),
                "always" => Ok(ShotMode::Always),
                "never" => Ok(ShotMode::Never),
                other => Err(serde::de::Error::custom(format!(
                    "screenshot must be auto, always, never, true or false, not {other:?}"
                ))),
            },
        }
    }
}

/// Arguments of `observe`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ObserveArgs {
    pub(crate) device: String,
    #[serde(default)]
    pub(crate) full: bool,
    #[serde(default)]
    pub(crate) since: Option<String>,
    #[serde(default)]
    pub(crate) filter: Option<String>,
    #[serde(default)]
    pub(crate) subtree: Option<String>,
    #[serde(default)]
    pub(crate) max_chars: Option<usize>,
    #[serde(default)]
    pub(crate) screenshot: Option<ShotMode>,
    #[serde(default)]
    pub(crate) format: Format,
    #[serde(default)]
    pub(crate) max_side: Option<u32>,
    #[serde(default)]
    pub(crate) settle: Option<bool>,
    #[serde(default)]
    pub(crate) settle_max_ms: Option<u32>,
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
    pub(crate) role: Option<String>,
    pub(crate) name: Option<String>,
    pub(crate) text: Option<String>,
    pub(crate) value: Option<String>,
    pub(crate) identifier: Option<String>,
    pub(crate) css: Option<String>,
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
    pub(crate) device: String,
    pub(crate) action: ActKind,
    #[serde(default, rename = "ref")]
    pub(crate) reference: Option<String>,
    #[serde(default)]
    pub(crate) selector: Option<Selector>,
    #[serde(default)]
    pub(crate) x: Option<f64>,
    #[serde(default)]
    pub(crate) y: Option<f64>,
    #[serde(default)]
    pub(crate) to_x: Option<f64>,
    #[serde(default)]
    pub(crate) to_y: Option<f64>,
    #[serde(default)]
    pub(crate) delta_x: Option<i64>,
    #[serde(default)]
    pub(crate) delta_y: Option<i64>,
    #[serde(default)]
    pub(crate) text: Option<String>,
    #[serde(default)]
    pub(crate) secret: Option<String>,
    #[serde(default)]
    pub(crate) key: Option<String>,
    #[serde(default)]
    pub(crate) url: Option<String>,
    #[serde(default)]
    pub(crate) app_id: Option<String>,
    #[serde(default)]
    pub(crate) timeout_ms: Option<u64>,
    #[serde(default)]
    pub(crate) settle: Option<bool>,
    #[serde(default)]
    pub(crate) settle_max_ms: Option<u32>,
    #[serde(default)]
    pub(crate) screenshot: Option<ShotMode>,
    #[serde(default)]
    pub(crate) format: Format,
    #[serde(default)]
    pub(crate) max_side: Option<u32>,
    #[serde(default)]
    pub(crate) max_chars: Option<usize>,
}

/// Arguments of `wait_for`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct WaitArgs {
    pub(crate) device: String,
    #[serde(default)]
    pub(crate) selector: Option<Selector>,
    #[serde(default)]
    pub(crate) condition: Option<String>,
    #[serde(default)]
    pub(crate) timeout_ms: Option<u64>,
}

/// What `session` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum SessionOp {
    Start,
    End,
    Info,
    Replay,
}

/// Arguments of `session`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct SessionArgs {
    pub(crate) device: String,
    pub(crate) op: SessionOp,
    #[serde(default)]
    pub(crate) verdict: Option<String>,
    #[serde(default)]
    pub(crate) summary: Option<String>,
    /// op=replay: a Session id or a bundle file.
    #[serde(default)]
    pub(crate) source: Option<String>,
    /// op=replay: stop at the first divergence.
    #[serde(default)]
    pub(crate) strict: Option<bool>,
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
