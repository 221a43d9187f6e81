//! `devicerail export --script playwright`: a recorded browser Session as
//! a Node script for `playwright-core` on a Chromium the user names
//! (`CHROME_PATH`, else `chromium` on the `PATH`) — for a team that keeps
//! its tests in Playwright, or to run a recording where no host is.
//!
//! Each step becomes what Playwright does for it: `navigate` a `goto`,
//! typing `keyboard.type`, a key `keyboard.press`, a scroll a wheel turn,
//! and a tap or a semantic Action on an element a locator built from the
//! element's identity (its identifier, else ARIA role and accessible name,
//! else its text), inside the `<iframe>` that holds it, so Playwright's own
//! waiting and actionability checks apply. Where nothing identifies the
//! element the recorded point is clicked, with a comment saying so. A
//! protected step's secret is read by name from the environment.
//!
//! Pure: it renders text from a recording it is given.

use devicerail_host_agent::Keyed;
use devicerail_host_agent::render::describe;
use devicerail_host_report::bundle::SessionData;
use serde_json::{Value, json};

use crate::aim::element_at;
use crate::export::{ExportError, selector_of, tree_for};
use crate::plan::{Aiming, Recording};
use crate::secrets;

/// The identity-built locator of node `i` of `k`, as JavaScript on
/// `page`: in its frame, by identifier, role and name, or text.
fn locator(k: &Keyed, i: usize) -> Option<String> {
    let sel = selector_of(k, i)?;
    let js = |v: &str| Value::String(v.to_owned()).to_string();
    let own = if let Some(id) = sel.get("identifier").and_then(Value::as_str) {
        format!(
            "locator({})",
            js(&format!("[data-testid={}], [id={}]", js(id), js(id)))
        )
    } else if let (Some(role), Some(name)) = (
        sel.get("role").and_then(Value::as_str),
        sel.get("name").and_then(Value::as_str),
    ) {
        format!(
            "getByRole({}, {{ name: {}, exact: true }})",
            js(role),
            js(name)
        )
    } else if let Some(text) = sel.pointer("/text/value").and_then(Value::as_str) {
        format!("getByText({}, {{ exact: true }})", js(text))
    } else {
        return None;
    };
    // The `<iframe>`s around it, outermost first.
    let mut frames = Vec::new();
    let mut at = k.view.parent[i];
    while let Some(p) = at {
        if k.view.role[p] == "iframe" {
            let n = &k.view.nodes[p];
            let css = match (n.identifier.as_deref(), n.name.as_deref()) {
                (Some(id), _) if !id.trim().is_empty() => format!("iframe[id={}]", js(id)),
                (_, Some(title)) if !title.trim().is_empty() => {
                    format!("iframe[title={}]", js(title))
                }
                _ => "iframe".to_owned(),
            };
            frames.push(css);
        }
        at = k.view.parent[p];
    }
    frames.reverse();
    let mut out = "page".to_owned();
    for f in frames {
        out.push_str(&format!(".frameLocator({})", js(&f)));
    }
    out.push('.');
    out.push_str(&own);
    Some(out)
}

/// `v` as a JavaScript literal.
fn js(v: &Value) -> String {
    v.to_string()
}

/// A step's element: its tree and node, locator and description.
struct Aimed {
    at: Option<(Keyed, usize)>,
    locator: Option<String>,
    what: String,
}

fn aimed(data: &SessionData, rec: &Recording, s: &crate::plan::RecordedStep) -> Aimed {
    let tree = tree_for(data, rec, s);
    let node = tree.as_ref().and_then(|k| match &s.aiming {
        Aiming::Point { x, y } => element_at(k, *x, *y),
        Aiming::Node { stable_node_id, .. } => {
            (0..k.len()).find(|&i| k.view.nodes[i].stable_node_id.as_str() == stable_node_id)
        }
        _ => None,
    });
    Aimed {
        locator: tree.as_ref().zip(node).and_then(|(k, i)| locator(k, i)),
        what: tree
            .as_ref()
            .zip(node)
            .map(|(k, i)| describe(k, i, 60))
            .unwrap_or_else(|| "the element there".into()),
        at: tree.zip(node),
    }
}

/// The device pixels per CSS pixel the recording ran with.
fn scale_of(rec: &Recording) -> f64 {
    rec.observations
        .values()
        .next()
        .map(|o| o.viewport.scale_factor)
        .filter(|s| *s > 0.0)
        .unwrap_or(1.0)
}

/// The viewport (CSS pixels) the recording ran with.
fn viewport_of(rec: &Recording, scale: f64) -> (u32, u32) {
    rec.observations
        .values()
        .next()
        .map(|o| {
            (
                (f64::from(o.viewport.width) / scale).round() as u32,
                (f64::from(o.viewport.height) / scale).round() as u32,
            )
        })
        .unwrap_or((1280, 800))
}

/// The Playwright script of `rec` (of `data`).
pub fn script(data: &SessionData, rec: &Recording) -> Result<String, ExportError> {
    let scale = scale_of(rec);
    let (width, height) = viewport_of(rec, scale);
    let mut body = String::new();
    // The field the last aimed step hit (for secret names).
    let mut field: Option<(Keyed, usize)> = None;
    let mut push = |number: usize, comment: &str, code: String| {
        body.push_str(&format!(
            "  // step {number}: {}\n  {code}\n",
            comment.replace(['\n', '\r'], " ")
        ));
    };
    for s in &rec.steps {
        if !s.succeeded() {
            continue;
        }
        let a = &s.arguments;
        let text = |k: &str| a.get(k).cloned().unwrap_or(Value::Null);
        if s.redacted {
            if s.name != "inputSecret" {
                return Err(ExportError::Protected {
                    step: s.number,
                    action: s.name.clone(),
                });
            }
            let names = secrets::names_for(s.number, field.as_ref().map(|(k, i)| (k, *i)));
            let vars: Vec<String> = names.iter().map(|n| secrets::variable(n)).collect();
            push(
                s.number,
                "a secret, read from the environment (never recorded)",
                format!("await page.keyboard.type(secret({}));", js(&json!(vars))),
            );
            continue;
        }
        match s.name.as_str() {
            "navigate" => push(
                s.number,
                "navigate",
                format!(
                    "await page.goto({}, {{ waitUntil: \"load\" }});",
                    js(&text("url"))
                ),
            ),
            "back" => push(s.number, "back", "await page.goBack();".into()),
            "forward" => push(s.number, "forward", "await page.goForward();".into()),
            "reload" => push(s.number, "reload", "await page.reload();".into()),
            "inputText" if a.get("target").is_none() => push(
                s.number,
                "type into the focused element",
                format!("await page.keyboard.type({});", js(&text("text"))),
            ),
            "pressKey" => push(
                s.number,
                "press a key",
                format!("await page.keyboard.press({});", js(&text("key"))),
            ),
            "scroll" => push(
                s.number,
                "scroll",
                format!(
                    "await page.mouse.wheel({}, {});",
                    a["deltaX"].as_f64().unwrap_or(0.0) / scale,
                    a["deltaY"].as_f64().unwrap_or(0.0) / scale
                ),
            ),
            "tap" | "tapElement" | "clearElement" | "setElementValue" | "waitForElement"
            | "inputText" => {
                let mut el = aimed(data, rec, s);
                if let Some(at) = el.at.take() {
                    field = Some(at);
                }
                let code = match (&el.locator, s.name.as_str()) {
                    (Some(l), "tap" | "tapElement") => format!("await {l}.click();"),
                    (Some(l), "clearElement") => format!("await {l}.fill(\"\");"),
                    // Typed into the element: focused, then keystrokes.
                    (Some(l), "inputText") => {
                        format!("await {l}.pressSequentially({});", js(&text("text")))
                    }
                    (Some(l), "setElementValue") => {
                        format!("await setValue({l}, {});", js(&text("value")))
                    }
                    (Some(l), _) => format!("await {l}.waitFor({{ state: \"visible\" }});"),
                    (None, "tap") => {
                        let (x, y) = match s.aiming {
                            Aiming::Point { x, y } => (x / scale, y / scale),
                            _ => (0.0, 0.0),
                        };
                        push(
                            s.number,
                            &format!(
                                "coordinates: nothing in the recorded tree identifies {}",
                                el.what
                            ),
                            format!("await page.mouse.click({x}, {y});"),
                        );
                        continue;
                    }
                    (None, _) => {
                        push(
                            s.number,
                            &format!("{}: nothing identifies {}; skipped", s.name, el.what),
                            "/* skipped */".into(),
                        );
                        continue;
                    }
                };
                push(s.number, &format!("{} on {}", s.name, el.what), code);
            }
            other => push(
                s.number,
                &format!("{other}: no Playwright counterpart; skipped"),
                "/* skipped */".into(),
            ),
        }
    }
    let session = &rec.session;
    Ok(format!(
        r#"// Replays Session {session}, exported by `devicerail export --script playwright`.
//
// Runs the recorded steps with playwright-core (`npm install playwright-core`)
// on Chromium ($CHROME_PATH, else `chromium` on the PATH), headless unless
// HEADED is set; elements are found by what they are (identifier, role and
// name, text), so Playwright waits for each and checks it can be acted on.
// Secrets are read from DEVICERAIL_SECRET_* variables.
import {{ chromium }} from "playwright-core";

function secret(names) {{
  for (const name of names) {{
    const value = process.env[name];
    if (value) return value;
  }}
  throw new Error(`set ${{names.join(" or ")}} in the environment: the recording holds no secret`);
}}

async function setValue(locator, value) {{
  const tag = await locator.evaluate((el) => el.tagName.toLowerCase());
  if (tag === "select") await locator.selectOption(value);
  else await locator.fill(value);
}}

const browser = await chromium.launch({{
  executablePath: process.env.CHROME_PATH || "chromium",
  headless: !process.env.HEADED,
  args: ["--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
}});
try {{
  const page = await browser.newPage({{ viewport: {{ width: {width}, height: {height} }}, deviceScaleFactor: {scale} }});
{body}
  console.log(JSON.stringify({{ replays: "{session}", url: page.url() }}));
}} finally {{
  await browser.close();
}}
"#
    ))
}
