//! `devicerail export`: a recorded Session as a runnable script for an
//! official client — Python (`devicerail-client`), Rust
//! (`devicerail-client`), or TypeScript speaking NDJSON over the host's
//! stdio with the host's type declarations — or, for a browser Session, a
//! Playwright script ([`crate::playwright`]). The script starts a host
//! (`$DEVICERAIL_BIN serve`, default `devicerail`), runs the same steps in
//! a Session and ends by recording a verdict.
//!
//! Steps are written the way replay aims them: a tap on a point or on a
//! node of the recorded tree becomes a `tapElement` on a selector derived
//! from the element's identity (its identifier first, else role and
//! label, else its text), preceded by a `waitForElement` on the same
//! selector (the recording saw the element before acting on it); only
//! where nothing identifies the element are coordinates kept, with a
//! comment saying so. A protected step's secret is read by name from the
//! script's environment.
//!
//! Pure: it renders text from a recording it is given.

use devicerail_host_agent::Keyed;
use devicerail_host_agent::identity::Tier;
use devicerail_host_agent::render::describe;
use devicerail_host_report::bundle::SessionData;
use devicerail_host_report::report::{self, Source};
use serde_json::{Map, Value, json};

use crate::aim::element_at;
use crate::plan::{self, Aiming, PlanError, RecordedStep, Recording};
use crate::secrets;

/// A script's language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    /// Python with the official `devicerail-client`.
    Python,
    /// TypeScript over stdio with the host's types package.
    TypeScript,
    /// Rust with the official `devicerail-client` crate.
    Rust,
    /// A Node script for `playwright-core` (browser Sessions).
    Playwright,
}

/// Why no script could be written.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The recording cannot be read.
    #[error(transparent)]
    Load(#[from] report::ReportError),
    /// An event of the recording is not JSON.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// A protected step other than inputSecret.
    #[error(
        "step {step} ({action}) is protected and its arguments are not recorded; only inputSecret can take a secret from the environment"
    )]
    Protected {
        /// The step.
        step: usize,
        /// Its Action.
        action: String,
    },
}

/// One call of a script.
#[derive(Debug, Clone, PartialEq)]
pub enum ScriptStep {
    /// `device.execute` of `name` with `arguments`.
    Execute {
        /// The recorded step.
        number: usize,
        /// The Action.
        name: String,
        /// Its arguments.
        arguments: Value,
        /// What the script says about it.
        comment: String,
    },
    /// `waitForElement` on `selector` before acting on it.
    Wait {
        /// The selector.
        selector: Value,
    },
    /// `inputSecret` with the value of environment variable `variable`.
    Secret {
        /// The recorded step.
        number: usize,
        /// The variables tried, in order.
        variables: Vec<String>,
    },
}

/// The selector that identifies node `i` of `k`, if one does.
pub(crate) fn selector_of(k: &Keyed, i: usize) -> Option<Value> {
    let id = k.identity(i)?;
    if k.weak(i) || !matches!(id.tier, Tier::Id | Tier::Label | Tier::Text) {
        return None;
    }
    let own = id.to_chain().pop()?;
    let v = serde_json::to_value(own).ok()?;
    // Nulls are left out: a selector names only what it matches on.
    let Value::Object(m) = v else { return None };
    let m: Map<String, Value> = m.into_iter().filter(|(_, v)| !v.is_null()).collect();
    (!m.is_empty()).then_some(Value::Object(m))
}

pub(crate) fn tree_for(data: &SessionData, rec: &Recording, step: &RecordedStep) -> Option<Keyed> {
    match &step.aiming {
        Aiming::Node { observation_id, .. } => rec
            .observations
            .get(observation_id)
            .and_then(|o| plan::recorded_tree(data, o)),
        _ => step
            .before
            .as_ref()
            .and_then(|o| plan::recorded_tree(data, o)),
    }
}

/// The script steps of `rec` (of `data`).
pub fn steps(data: &SessionData, rec: &Recording) -> Result<Vec<ScriptStep>, ExportError> {
    let mut out = Vec::new();
    // The field the last aimed step hit (for secret names).
    let mut field: Option<(Keyed, usize)> = None;
    for s in &rec.steps {
        if !s.succeeded() {
            continue;
        }
        if s.redacted {
            if s.name != "inputSecret" {
                return Err(ExportError::Protected {
                    step: s.number,
                    action: s.name.clone(),
                });
            }
            let names = secrets::names_for(s.number, field.as_ref().map(|(k, i)| (k, *i)));
            out.push(ScriptStep::Secret {
                number: s.number,
                variables: names.iter().map(|n| secrets::variable(n)).collect(),
            });
            continue;
        }
        let tree = tree_for(data, rec, s);
        let node = tree.as_ref().and_then(|k| match &s.aiming {
            Aiming::Point { x, y } => element_at(k, *x, *y),
            Aiming::Node { stable_node_id, .. } => {
                (0..k.len()).find(|&i| k.view.nodes[i].stable_node_id.as_str() == stable_node_id)
            }
            _ => None,
        });
        let selector = tree.as_ref().zip(node).and_then(|(k, i)| selector_of(k, i));
        let what = tree.as_ref().zip(node).map(|(k, i)| describe(k, i, 60));
        match (&s.aiming, selector) {
            (Aiming::Point { .. }, Some(sel)) if s.name == "tap" => {
                out.push(ScriptStep::Wait {
                    selector: sel.clone(),
                });
                out.push(ScriptStep::Execute {
                    number: s.number,
                    name: "tapElement".into(),
                    arguments: json!({ "target": { "kind": "selector", "selector": sel } }),
                    comment: format!("tap on {} (recorded at a point)", what.unwrap_or_default()),
                });
            }
            (Aiming::Point { x, y }, _) => out.push(ScriptStep::Execute {
                number: s.number,
                name: s.name.clone(),
                arguments: s.arguments.clone(),
                comment: format!(
                    "coordinates ({x}, {y}): nothing in the recorded tree identifies {}",
                    what.unwrap_or_else(|| "the element there".into())
                ),
            }),
            (Aiming::Node { .. }, Some(sel)) => {
                let mut arguments = s.arguments.clone();
                arguments["target"] = json!({ "kind": "selector", "selector": sel });
                out.push(ScriptStep::Wait {
                    selector: sel.clone(),
                });
                out.push(ScriptStep::Execute {
                    number: s.number,
                    name: s.name.clone(),
                    arguments,
                    comment: format!(
                        "{} on {} (recorded as a node reference)",
                        s.name,
                        what.unwrap_or_default()
                    ),
                });
            }
            _ => out.push(ScriptStep::Execute {
                number: s.number,
                name: s.name.clone(),
                arguments: s.arguments.clone(),
                comment: s.name.clone(),
            }),
        }
        if let (Some(k), Some(i)) = (tree, node) {
            field = Some((k, i));
        }
    }
    Ok(out)
}

/// The script of `source` in `language`.
pub fn export_source(source: &Source, language: Language) -> Result<String, ExportError> {
    let data = report::load(source)?;
    let events = plan::events_of(&data)?;
    let rec = plan::plan(&data, &events);
    Ok(match language {
        Language::Playwright => crate::playwright::script(&data, &rec)?,
        Language::Python => python(&rec.session, &steps(&data, &rec)?),
        Language::TypeScript => typescript(&rec.session, &steps(&data, &rec)?),
        Language::Rust => rust(&rec.session, &steps(&data, &rec)?),
    })
}

/// `v` as a Python literal.
fn py(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => Value::String(s.clone()).to_string(),
        Value::Array(a) => format!("[{}]", a.iter().map(py).collect::<Vec<_>>().join(", ")),
        Value::Object(m) => format!(
            "{{{}}}",
            m.iter()
                .map(|(k, v)| format!("{}: {}", Value::String(k.clone()), py(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A one-line comment's text (no line breaks).
fn line(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}

fn python(session: &str, steps: &[ScriptStep]) -> String {
    let mut body = String::new();
    for s in steps {
        match s {
            ScriptStep::Wait { selector } => body.push_str(&format!(
                "        await wait_for({})\n",
                py(selector)
            )),
            ScriptStep::Execute {
                number,
                name,
                arguments,
                comment,
            } => body.push_str(&format!(
                "        # step {number}: {}\n        await act({}, {})\n",
                line(comment),
                py(&json!(name)),
                py(arguments)
            )),
            ScriptStep::Secret { number, variables } => body.push_str(&format!(
                "        # step {number}: a secret, read from the environment (never recorded)\n        await act(\"inputSecret\", {{\"text\": secret({})}})\n",
                py(&json!(variables))
            )),
        }
    }
    format!(
        r#"#!/usr/bin/env python3
"""Replays Session {session}, exported by `devicerail export`.

Runs the recorded steps in a new Session through the official Python client
(`pip install devicerail-client`) and ends by recording a verdict. The host
is `$DEVICERAIL_BIN serve` (default `devicerail`), with its usual
environment (DEVICERAIL_PLUGINS_DIR, DEVICERAIL_DATA_DIR). Secrets are read
from DEVICERAIL_SECRET_* variables.
"""
from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid

from devicerail import DeviceRailClient

HELLO = {{
    "client": {{"name": "devicerail-export", "version": "1.0.0"}},
    "protocol": {{"ranges": [{{"major": 1, "minMinor": 0, "maxMinor": 5}}]}},
    "features": {{"required": [], "optional": [
        "action.protected.v1", "device.semanticActions.v1", "observation.uiSnapshot.v1",
        "request.control.v1", "verdict.record.v1"]}},
}}


def secret(names: list[str]) -> str:
    for name in names:
        value = os.environ.get(name)
        if value:
            return value
    sys.exit(f"set {{' or '.join(names)}} in the environment: the recording holds no secret")


async def main() -> None:
    client = await DeviceRailClient.spawn(
        os.environ.get("DEVICERAIL_BIN", "devicerail"), "serve", hello=HELLO, close_grace_seconds=5.0
    )
    async with client:
        await client.call("device.connect", timeout_ms=30_000)
        session = await client.call("session.start")

        async def act(name: str, arguments: dict) -> dict:
            call = {{"id": str(uuid.uuid4()), "name": name, "arguments": arguments}}
            return await client.call("device.execute", call, timeout_ms=30_000)

        async def wait_for(selector: dict) -> None:
            result = await act("waitForElement", {{"selector": selector}})
            if result["output"].get("matched") is False:
                raise SystemExit(f"never appeared: {{json.dumps(selector)}}")

{body}
        await client.call("verdict.record", {{"verdict": {{
            "status": "pass", "summary": "exported replay of Session {session}: every step ran"}}}})
        await client.call("session.end", {{"outcome": "completed"}})
        print(json.dumps({{"session": session["id"], "replays": "{session}"}}))


if __name__ == "__main__":
    asyncio.run(main())
"#
    )
}

/// `v` as a JSON string literal in TypeScript or Rust source.
fn js(v: &Value) -> String {
    v.to_string()
}

fn typescript(session: &str, steps: &[ScriptStep]) -> String {
    let mut body = String::new();
    for s in steps {
        match s {
            ScriptStep::Wait { selector } => {
                body.push_str(&format!("  await waitFor({});\n", js(selector)));
            }
            ScriptStep::Execute {
                number,
                name,
                arguments,
                comment,
            } => body.push_str(&format!(
                "  // step {number}: {}\n  await act({}, {});\n",
                line(comment),
                js(&json!(name)),
                js(arguments)
            )),
            ScriptStep::Secret { number, variables } => body.push_str(&format!(
                "  // step {number}: a secret, read from the environment (never recorded)\n  await act(\"inputSecret\", {{ text: secret({}) }});\n",
                js(&json!(variables))
            )),
        }
    }
    format!(
        r#"// Replays Session {session}, exported by `devicerail export`.
//
// Speaks NDJSON JSON-RPC to `$DEVICERAIL_BIN serve` (default `devicerail`)
// over its stdio, typed with the host's declarations package
// (@devicerail-host/protocol), runs the recorded steps in a new Session and
// ends by recording a verdict. Secrets are read from DEVICERAIL_SECRET_*.
import {{ spawn }} from "node:child_process";
import {{ randomUUID }} from "node:crypto";
import {{ createInterface }} from "node:readline";
import type {{ HelloParams, DeviceExecuteParams, ActionResult }} from "@devicerail-host/protocol";

const host = spawn(process.env.DEVICERAIL_BIN ?? "devicerail", ["serve"], {{
  stdio: ["pipe", "pipe", "inherit"],
}});
const pending = new Map<string, {{ resolve: (v: unknown) => void; reject: (e: Error) => void }}>();
createInterface({{ input: host.stdout! }}).on("line", (text) => {{
  const frame = JSON.parse(text);
  const waiter = frame.id === undefined ? undefined : pending.get(String(frame.id));
  if (!waiter) return;
  pending.delete(String(frame.id));
  if (frame.error) waiter.reject(new Error(`${{frame.error.message}} (${{JSON.stringify(frame.error.data)}})`));
  else waiter.resolve(frame.result);
}});
let next = 0;
function call<T>(method: string, params?: unknown): Promise<T> {{
  const id = String(++next);
  const frame = params === undefined ? {{ jsonrpc: "2.0", id, method }} : {{ jsonrpc: "2.0", id, method, params }};
  return new Promise<T>((resolve, reject) => {{
    pending.set(id, {{ resolve: resolve as (v: unknown) => void, reject }});
    host.stdin!.write(JSON.stringify(frame) + "\n");
  }});
}}
function secret(names: string[]): string {{
  for (const name of names) {{
    const value = process.env[name];
    if (value) return value;
  }}
  throw new Error(`set ${{names.join(" or ")}} in the environment: the recording holds no secret`);
}}
function act(name: string, args: unknown): Promise<ActionResult> {{
  const params: DeviceExecuteParams = {{ id: randomUUID(), name, arguments: args }} as DeviceExecuteParams;
  return call<ActionResult>("device.execute", params);
}}
async function waitFor(selector: unknown): Promise<void> {{
  const result = await act("waitForElement", {{ selector }});
  if ((result.output as {{ matched?: boolean }}).matched === false) {{
    throw new Error(`never appeared: ${{JSON.stringify(selector)}}`);
  }}
}}

async function main(): Promise<void> {{
  const hello: HelloParams = {{
    client: {{ name: "devicerail-export", version: "1.0.0" }},
    protocol: {{ ranges: [{{ major: 1, minMinor: 0, maxMinor: 5 }}] }},
    features: {{
      required: [],
      optional: ["action.protected.v1", "device.semanticActions.v1", "observation.uiSnapshot.v1", "verdict.record.v1"],
    }},
  }} as HelloParams;
  await call("system.hello", hello);
  await call("device.connect");
  const session = await call<{{ id: string }}>("session.start");
{body}
  await call("verdict.record", {{
    verdict: {{ status: "pass", summary: "exported replay of Session {session}: every step ran" }},
  }});
  await call("session.end", {{ outcome: "completed" }});
  console.log(JSON.stringify({{ session: session.id, replays: "{session}" }}));
  host.stdin!.end();
}}

main().catch((e: unknown) => {{
  console.error(e instanceof Error ? e.message : e);
  host.kill();
  process.exit(1);
}});
"#
    )
}

fn rust(session: &str, steps: &[ScriptStep]) -> String {
    let mut body = String::new();
    for s in steps {
        match s {
            ScriptStep::Wait { selector } => body.push_str(&format!(
                "    wait_for(&client, json!({})).await?;\n",
                js(selector)
            )),
            ScriptStep::Execute {
                number,
                name,
                arguments,
                comment,
            } => body.push_str(&format!(
                "    // step {number}: {}\n    act(&client, {}, json!({})).await?;\n",
                line(comment),
                js(&json!(name)),
                js(arguments)
            )),
            ScriptStep::Secret { number, variables } => body.push_str(&format!(
                "    // step {number}: a secret, read from the environment (never recorded)\n    act(&client, \"inputSecret\", json!({{ \"text\": secret(&{})? }})).await?;\n",
                js(&json!(variables))
            )),
        }
    }
    format!(
        r#"//! Replays Session {session}, exported by `devicerail export`: runs the
//! recorded steps in a new Session through the official Rust client
//! (`devicerail-client`) and ends by recording a verdict. The host is
//! `$DEVICERAIL_BIN serve` (default `devicerail`); secrets are read from
//! DEVICERAIL_SECRET_* variables.
//!
//! Dependencies: devicerail-client = "=0.3.8", serde_json = "1",
//! tokio = {{ version = "1", features = ["macros", "rt"] }}, uuid = {{ version = "1", features = ["v4"] }}.

use devicerail_client::methods::{{DeviceConnect, DeviceExecute, NoParams, SessionEnd, SessionStart, VerdictRecord}};
use devicerail_client::{{CallOptions, DeviceRailClient, SpawnConfig, default_hello}};
use serde_json::{{Value, json}};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

fn secret(names: &[&str]) -> Result<String, BoxError> {{
    names
        .iter()
        .find_map(|n| std::env::var(n).ok().filter(|v| !v.is_empty()))
        .ok_or_else(|| format!("set {{}} in the environment: the recording holds no secret", names.join(" or ")).into())
}}

async fn act(client: &DeviceRailClient, name: &str, arguments: Value) -> Result<Value, BoxError> {{
    let params = serde_json::from_value(json!({{
        "id": uuid::Uuid::new_v4().to_string(), "name": name, "arguments": arguments
    }}))?;
    let result = client.call::<DeviceExecute>(params, CallOptions::default()).await?;
    Ok(serde_json::to_value(result)?)
}}

async fn wait_for(client: &DeviceRailClient, selector: Value) -> Result<(), BoxError> {{
    let result = act(client, "waitForElement", json!({{ "selector": selector }})).await?;
    if result["output"]["matched"] == json!(false) {{
        return Err(format!("never appeared: {{selector}}").into());
    }}
    Ok(())
}}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), BoxError> {{
    let bin = std::env::var("DEVICERAIL_BIN").unwrap_or_else(|_| "devicerail".into());
    let client = DeviceRailClient::spawn(SpawnConfig::new(bin, default_hello()).arg("serve")).await?;
    client.call::<DeviceConnect>(NoParams, CallOptions::default()).await?;
    let session = client.call::<SessionStart>(NoParams, CallOptions::default()).await?;
{body}
    let verdict = serde_json::from_value(json!({{ "verdict": {{
        "status": "pass", "summary": "exported replay of Session {session}: every step ran" }} }}))?;
    client.call::<VerdictRecord>(verdict, CallOptions::default()).await?;
    let end = serde_json::from_value(json!({{ "outcome": "completed" }}))?;
    client.call::<SessionEnd>(Some(end), CallOptions::default()).await?;
    println!("{{}}", json!({{ "session": session.id.to_string(), "replays": "{session}" }}));
    client.close().await?;
    Ok(())
}}
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_literals_are_python() {
        assert_eq!(
            py(&json!({ "a": [true, false, null, 1.5, "x\"y"] })),
            r#"{"a": [True, False, None, 1.5, "x\"y"]}"#
        );
    }

    #[test]
    fn selectors_prefer_identifiers_and_drop_nulls() {
        let k = crate::testing::tree(vec![
            crate::testing::button("signIn", "Sign in", 60.0, 600.0),
            crate::testing::button("", "Help", 60.0, 800.0),
        ]);
        assert_eq!(selector_of(&k, 1), Some(json!({ "identifier": "signIn" })));
        let sel = selector_of(&k, 2).expect("label selector");
        assert_eq!(sel["role"], "button");
        // The protocol's `name` is an exact string.
        assert_eq!(sel["name"], "Help", "{sel}");
        assert!(sel.get("identifier").is_none(), "no nulls: {sel}");
    }
}
