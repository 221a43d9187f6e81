//! The `act` and `wait_for` tools: an agent's intent (tap this ref, type
//! into that field, wait for a selector) mapped onto the device's
//! DeviceRail Actions, semantic ones (`tapElement`, `setElementValue`,
//! `clearElement`, `waitForElement`) where a target is an element, and
//! run as `device.execute` in the device's Session.
//!
//! Protected input: `type` with `secret` types the value of a named secret
//! through the protected `inputSecret` Action. The value is never put in a
//! result, an error or a log line (results are scrubbed of it besides).

use std::time::Instant;

use devicerail_client::methods::{DeviceCapabilities, DeviceExecute};
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

use super::backend::{BackendError, call, call0};
use super::secrets::{self, Secret};
use super::sessions::ids;
use super::state::{State, ToolError};
use super::tools::{ActArgs, ActKind, DEFAULT_WAIT_MS, MAX_TIMEOUT_MS, WaitArgs};

/// Extra time a request gets over its Action's own deadline.
const REQUEST_SLACK_MS: u64 = 5_000;
/// Deadline of an Action when the caller gives none.
const DEFAULT_ACTION_MS: u64 = 30_000;

/// One DeviceRail Action to run.
struct Step {
    name: &'static str,
    arguments: Value,
    protected: bool,
}

fn step(name: &'static str, arguments: Value) -> Step {
    Step {
        name,
        arguments,
        protected: false,
    }
}

/// A coordinate as drivers take it: an integer when it is whole.
fn coord(v: f64) -> Value {
    if v.fract() == 0.0 && v >= 0.0 && v <= f64::from(u32::MAX) {
        json!(v as u64)
    } else {
        json!(v)
    }
}

fn need<T: Clone>(v: &Option<T>, what: &str, action: &str) -> Result<T, ToolError> {
    v.clone()
        .ok_or_else(|| ToolError::Args(format!("{action} needs {what}")))
}

/// The element target of `args` (`ref` or `selector`), if any.
fn target(state: &State, args: &ActArgs) -> Result<Option<Value>, ToolError> {
    match (&args.reference, &args.selector) {
        (Some(_), Some(_)) => Err(ToolError::Args("give ref or selector, not both".into())),
        (Some(r), None) => Ok(Some(state.refs().resolve(r, &args.device)?.target())),
        (None, Some(s)) if s.is_empty() => Err(ToolError::Args("the selector is empty".into())),
        (None, Some(s)) => Ok(Some(
            json!({ "kind": "selector", "selector": s.to_protocol() }),
        )),
        (None, None) => Ok(None),
    }
}

/// The Actions `args` stands for, with the secret they type (if any).
fn plan(state: &State, args: &ActArgs) -> Result<(Vec<Step>, Option<Secret>), ToolError> {
    let t = target(state, args)?;
    let point = match (args.x, args.y) {
        (Some(x), Some(y)) => Some((x, y)),
        (None, None) => None,
        _ => return Err(ToolError::Args("give both x and y".into())),
    };
    let element = |what: &str| {
        t.clone()
            .ok_or_else(|| ToolError::Args(format!("{what} needs ref or selector")))
    };
    let mut secret = None;
    let steps = match args.action {
        ActKind::Tap => match (&t, point) {
            (Some(t), None) => vec![step("tapElement", json!({ "target": t }))],
            (None, Some((x, y))) => vec![step("tap", json!({ "x": coord(x), "y": coord(y) }))],
            _ => {
                return Err(ToolError::Args(
                    "tap needs exactly one of ref, selector or x/y".into(),
                ));
            }
        },
        ActKind::Type => {
            let mut steps = Vec::new();
            if let Some(t) = &t {
                steps.push(step("tapElement", json!({ "target": t })));
            } else if let Some((x, y)) = point {
                steps.push(step("tap", json!({ "x": coord(x), "y": coord(y) })));
            }
            match (&args.text, &args.secret) {
                (Some(text), None) => steps.push(step("inputText", json!({ "text": text }))),
                (None, Some(name)) => {
                    let s = secrets::resolve(name)?;
                    steps.push(Step {
                        name: "inputSecret",
                        arguments: json!({ "text": s.expose() }),
                        protected: true,
                    });
                    secret = Some(s);
                }
                _ => {
                    return Err(ToolError::Args(
                        "type needs exactly one of text or secret (a secret's name)".into(),
                    ));
                }
            }
            steps
        }
        ActKind::Clear => vec![step("clearElement", json!({ "target": element("clear")? }))],
        ActKind::SetValue => {
            if args.secret.is_some() {
                return Err(ToolError::Args(
                    "setValue records its value; use action type with secret for protected input"
                        .into(),
                ));
            }
            let text = need(&args.text, "text", "setValue")?;
            vec![step(
                "setElementValue",
                json!({ "target": element("setValue")?, "value": text }),
            )]
        }
        ActKind::Swipe => {
            let (x, y) = point.ok_or_else(|| ToolError::Args("swipe needs x and y".into()))?;
            let to_x = need(&args.to_x, "toX", "swipe")?;
            let to_y = need(&args.to_y, "toY", "swipe")?;
            vec![step(
                "swipe",
                json!({ "fromX": coord(x), "fromY": coord(y), "toX": coord(to_x), "toY": coord(to_y) }),
            )]
        }
        ActKind::Scroll => vec![step(
            "scroll",
            json!({ "deltaX": args.delta_x.unwrap_or(0), "deltaY": args.delta_y.unwrap_or(0) }),
        )],
        ActKind::Key => vec![step(
            "pressKey",
            json!({ "key": need(&args.key, "key", "key")? }),
        )],
        ActKind::Navigate => vec![step(
            "navigate",
            json!({ "url": need(&args.url, "url", "navigate")? }),
        )],
        ActKind::LaunchApp => vec![step(
            "launchApp",
            json!({ "appId": need(&args.app_id, "appId", "launchApp")? }),
        )],
    };
    Ok((steps, secret))
}

fn action_name(kind: ActKind) -> &'static str {
    match kind {
        ActKind::Tap => "tap",
        ActKind::Type => "type",
        ActKind::Clear => "clear",
        ActKind::SetValue => "setValue",
        ActKind::Swipe => "swipe",
        ActKind::Scroll => "scroll",
        ActKind::Key => "key",
        ActKind::Navigate => "navigate",
        ActKind::LaunchApp => "launchApp",
    }
}

/// Fits the platform-specific Actions of `steps` to what the device
/// offers (`caps`, its `device.capabilities`): `launchApp` names the app by
/// `bundleId` on Apple platforms, and a device without `navigate` may open
/// URLs with `openUrl`.
fn fit_to_device(steps: &mut [Step], caps: &Value) {
    let def = |name: &str| {
        caps.as_array()
            .into_iter()
            .flatten()
            .find(|d| d["name"] == name)
    };
    for s in steps.iter_mut() {
        match s.name {
            "launchApp" => {
                let takes_bundle = def("launchApp")
                    .is_some_and(|d| d["inputSchema"]["properties"]["bundleId"].is_object());
                if takes_bundle && let Some(id) = s.arguments.get("appId").cloned() {
                    s.arguments = json!({ "bundleId": id });
                }
            }
            "navigate" if def("navigate").is_none() && def("openUrl").is_some() => {
                s.name = "openUrl";
            }
            _ => {}
        }
    }
}

/// Runs `act`.
pub(crate) async fn act(state: &State, args: ActArgs) -> Result<CallToolResult, ToolError> {
    let (mut steps, secret) = plan(state, &args)?;
    let scrub_with: Vec<Secret> = secret.into_iter().collect();
    let timeout = args
        .timeout_ms
        .unwrap_or(DEFAULT_ACTION_MS)
        .clamp(100, MAX_TIMEOUT_MS);
    let slot = state.slots.get(&args.device);
    let mut slot = slot.lock().await;
    let (client, session) = slot
        .ensure(&state.backend, &state.leases, &args.device)
        .await?;
    if steps
        .iter()
        .any(|s| matches!(s.name, "launchApp" | "navigate"))
    {
        let caps = call0::<DeviceCapabilities>(client, Some(DEFAULT_ACTION_MS)).await?;
        fit_to_device(&mut steps, &caps);
    }
    let mut done = Vec::new();
    for s in steps {
        let call_id = uuid::Uuid::new_v4().to_string();
        let params = json!({
            "id": call_id,
            "name": s.name,
            "arguments": s.arguments,
            "actionTimeoutMs": timeout,
        });
        let result = call::<DeviceExecute>(client, params, Some(timeout + REQUEST_SLACK_MS))
            .await
            .map_err(|e| ToolError::Step {
                step: s.name,
                done: done.len(),
                code: e.code().map(str::to_owned),
                message: secrets::scrub(&e.to_string(), &scrub_with),
            })?;
        let output = if s.protected {
            Value::Null
        } else {
            result["output"].clone()
        };
        done.push(json!({ "name": s.name, "callId": call_id, "protected": s.protected, "output": output }));
    }
    let mut structured = ids(&args.device, &session);
    if let Some(m) = structured.as_object_mut() {
        m.insert("action".into(), json!(action_name(args.action)));
        m.insert("steps".into(), json!(done));
    }
    let text = secrets::scrub(&structured.to_string(), &scrub_with);
    let structured: Value = serde_json::from_str(&text)?;
    let names: Vec<&str> = structured["steps"]
        .as_array()
        .map(|a| a.iter().filter_map(|s| s["name"].as_str()).collect())
        .unwrap_or_default();
    let mut result = CallToolResult::structured(structured.clone());
    result.content = vec![ContentBlock::text(format!(
        "{} on {}: done ({}); observe to see the effect",
        action_name(args.action),
        args.device,
        names.join(" → ")
    ))];
    Ok(result)
}

/// Runs `wait_for`.
pub(crate) async fn wait_for(state: &State, args: WaitArgs) -> Result<CallToolResult, ToolError> {
    if args.selector.is_empty() {
        return Err(ToolError::Args("the selector is empty".into()));
    }
    let condition = args.condition.clone().unwrap_or_else(|| "present".into());
    if !["present", "visible", "enabled", "absent"].contains(&condition.as_str()) {
        return Err(ToolError::Args(format!("unknown condition {condition:?}")));
    }
    let timeout = args
        .timeout_ms
        .unwrap_or(DEFAULT_WAIT_MS)
        .clamp(100, MAX_TIMEOUT_MS);
    let slot = state.slots.get(&args.device);
    let mut slot = slot.lock().await;
    let (client, session) = slot
        .ensure(&state.backend, &state.leases, &args.device)
        .await?;
    let started = Instant::now();
    let params = json!({
        "id": uuid::Uuid::new_v4().to_string(),
        "name": "waitForElement",
        "arguments": { "selector": args.selector.to_protocol(), "condition": condition },
        "actionTimeoutMs": timeout,
    });
    let matched =
        match call::<DeviceExecute>(client, params, Some(timeout + REQUEST_SLACK_MS)).await {
            Ok(r) => r["output"]["matched"].as_bool().unwrap_or(false),
            Err(e @ BackendError::Remote { .. })
                if matches!(e.code(), Some("action_timed_out" | "request_timed_out")) =>
            {
                false
            }
            Err(e) => return Err(e.into()),
        };
    let elapsed = started.elapsed().as_millis() as u64;
    let mut structured = ids(&args.device, &session);
    if let Some(m) = structured.as_object_mut() {
        m.insert("matched".into(), json!(matched));
        m.insert("condition".into(), json!(condition));
        m.insert("elapsedMs".into(), json!(elapsed));
    }
    let mut result = CallToolResult::structured(structured);
    result.content = vec![ContentBlock::text(if matched {
        format!("{condition}: matched after {elapsed} ms")
    } else {
        format!("{condition}: not matched within {timeout} ms")
    })];
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_and_navigate_fit_the_device() {
        let ios = json!([
            { "name": "launchApp", "inputSchema": { "properties": { "bundleId": { "type": "string" } } } },
            { "name": "openUrl", "inputSchema": {} }
        ]);
        let mut steps = vec![
            step("launchApp", json!({ "appId": "com.example.app" })),
            step("navigate", json!({ "url": "https://example.com" })),
        ];
        fit_to_device(&mut steps, &ios);
        assert_eq!(steps[0].arguments, json!({ "bundleId": "com.example.app" }));
        assert_eq!(steps[1].name, "openUrl");
        let android =
            json!([{ "name": "launchApp", "inputSchema": { "properties": { "appId": {} } } }]);
        let mut steps = vec![step("launchApp", json!({ "appId": "com.example" }))];
        fit_to_device(&mut steps, &android);
        assert_eq!(steps[0].arguments, json!({ "appId": "com.example" }));
    }

    #[test]
    fn whole_coordinates_are_integers() {
        assert_eq!(coord(12.0), json!(12));
        assert_eq!(coord(12.5), json!(12.5));
    }
}
