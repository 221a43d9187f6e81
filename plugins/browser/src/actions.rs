//! The action space: definitions with JSON Schemas, argument types, and the
//! non-semantic Actions (navigation, pointer, keyboard, scrolling).
//!
//! Coordinates in arguments are screenshot pixels; they are divided by the
//! device scale factor before they reach DevTools (CSS pixels).

use std::time::Duration;

use devicerail_host_plugin_api::actions::{
    self, KeyArgs, KeyNames, NoArgs, Points, ScrollArgs, TapArgs, TextArgs, UrlArgs, UrlRules,
};
use devicerail_host_plugin_api::protocol::{ActionCall, ActionDefinition, DeviceId};
use devicerail_host_plugin_api::{ActionOutput, CallContext, DriverError, DriverResult};
use devicerail_host_plugin_api::{semantic, typing};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::cdp::{CdpError, CdpSession};
use crate::connection::{Connection, NAVIGATION_GRACE};
use crate::errors::{budget, from_cdp};
use crate::keys;
use crate::scripts;

/// Longest text `inputText`/`inputSecret` accept, in characters.
pub(crate) const MAX_TEXT: usize = 65_536;
/// The URLs `navigate` accepts: up to 8192 characters with a scheme
/// (`about:`, `data:` and URLs with spaces included; the page encodes them).
pub(crate) const URLS: UrlRules = UrlRules::new(8_192)
    .allowing_whitespace()
    .allowing_empty_rest()
    .with_schema_pattern();
/// Largest scroll delta, in screenshot pixels.
pub(crate) const MAX_DELTA: u32 = 100_000;
/// Longest key name `pressKey` advertises.
const MAX_KEY_LEN: usize = 16;
/// The search of the live page.
pub(crate) const QUERY_ELEMENTS: &str = "queryElements";

/// Parses arguments; a non-object (or missing) value is refused.
fn args<T: serde::de::DeserializeOwned>(call: &ActionCall) -> DriverResult<T> {
    match &call.arguments {
        Value::Object(_) | Value::Null => actions::parse_arguments(call),
        other => Err(DriverError::invalid_arguments(
            &call.name,
            format!("arguments must be an object, not {other}"),
        )),
    }
}

/// Every Action of a browser device with viewport `width` x `height`
/// screenshot pixels.
pub fn definitions(width: u32, height: u32) -> Vec<ActionDefinition> {
    let mut keys_doc = keys::named_keys().join(", ");
    keys_doc.push_str(", or one character");
    let mut defs = vec![
        actions::navigate(
            "Load a URL in the page and wait until it has loaded.",
            &URLS,
        ),
        actions::definition(
            "back",
            "Go one step back in the page's history.",
            NoArgs::schema(),
        ),
        actions::definition(
            "forward",
            "Go one step forward in the page's history.",
            NoArgs::schema(),
        ),
        actions::definition(
            "reload",
            "Reload the page and wait until it has loaded.",
            NoArgs::schema(),
        ),
        actions::tap(
            "Click a point of the viewport, in screenshot pixels.",
            Points::fractional(width, height),
        ),
        // `inputText` also takes a `target` element (focused first):
        // typing by element is one Action.
        typing::definition(MAX_TEXT),
        actions::input_secret(
            "Type a secret into the focused editable element; never recorded or logged.",
            MAX_TEXT,
        ),
        actions::press_key(
            &format!("Press and release one key: {keys_doc}."),
            KeyNames::Any {
                max_len: MAX_KEY_LEN,
            },
        ),
        actions::scroll(
            "Scroll with the mouse wheel at the viewport center by a delta in screenshot pixels.",
            MAX_DELTA,
        ),
    ];
    defs.extend(semantic::definitions());
    defs.push(actions::definition(
        QUERY_ELEMENTS,
        "Search the live page, every frame and the nodes a bounded UI snapshot leaves out included, for the nodes matching a selector (or every node under `within`); answers up to `limit` of them with how many matched in all. The observation it resolved against holds them with their ancestors.",
        query_elements_schema(),
    ));
    defs
}

/// The input schema of `queryElements`, with an example: the schema
/// requires no member, yet a call needs a selector or `within`, so the
/// example is what a caller (and the conformance suite) sends.
fn query_elements_schema() -> Value {
    let mut schema = serde_json::to_value(schemars::schema_for!(
        crate::web_semantic::QueryElementsArguments
    ))
    .unwrap_or(Value::Bool(true));
    if let Value::Object(o) = &mut schema {
        o.insert(
            "examples".to_owned(),
            json!([{ "selector": { "role": "button" } }]),
        );
    }
    schema
}

/// Runs a non-semantic Action; `None` when `call` names none.
pub(crate) async fn execute(
    conn: &mut Connection,
    ctx: &CallContext,
    device: &DeviceId,
    call: &ActionCall,
) -> Option<DriverResult<ActionOutput>> {
    let cdp = |e| from_cdp(ctx, device, e);
    let result = match call.name.as_str() {
        "navigate" => navigate(conn, ctx, device, call).await,
        "back" | "forward" => history(conn, ctx, device, call).await,
        "reload" => match args::<NoArgs>(call) {
            Err(e) => Err(e),
            Ok(NoArgs {}) => {
                let mut events = conn.subscribe();
                match conn.page(budget(ctx)).reload().await {
                    Err(e) => Err(cdp(e)),
                    Ok(()) => finish_navigation(conn, ctx, device, &mut events, None).await,
                }
            }
        },
        "tap" => tap(conn, ctx, device, call).await,
        "inputText" | "inputSecret" => input_text(conn, ctx, device, call).await,
        "pressKey" => match args::<KeyArgs>(call) {
            Err(e) => Err(e),
            Ok(a) => match keys::stroke(&a.key) {
                None => Err(DriverError::invalid_arguments(
                    &call.name,
                    format!(
                        "unsupported key {:?}; use {} or one character",
                        a.key,
                        keys::named_keys().join(", ")
                    ),
                )),
                Some(stroke) => conn
                    .input(
                        budget(ctx),
                        // Enter submits the focused form.
                        if a.key == "Enter" {
                            NAVIGATION_GRACE
                        } else {
                            Duration::ZERO
                        },
                        conn.page(budget(ctx)).press_key(&stroke),
                    )
                    .await
                    .map(|()| ActionOutput::new(json!({ "accepted": true, "key": a.key })))
                    .map_err(cdp),
            },
        },
        "scroll" => scroll(conn, ctx, device, call).await,
        _ => return None,
    };
    Some(result)
}

async fn navigate(
    conn: &mut Connection,
    ctx: &CallContext,
    device: &DeviceId,
    call: &ActionCall,
) -> DriverResult<ActionOutput> {
    let a: UrlArgs = args(call)?;
    if URLS.check(&a.url).is_err() {
        return Err(DriverError::invalid_arguments(
            &call.name,
            "url must be an absolute URL with a scheme (http://, https://, file:, data:, about:)",
        ));
    }
    let mut events = conn.subscribe();
    let nav = conn
        .page(budget(ctx))
        .navigate(&a.url)
        .await
        .map_err(|e| from_cdp(ctx, device, e))?;
    conn.epoch.invalidate();
    if let Some(error) = nav.error_text.filter(|t| !t.is_empty()) {
        return Err(
            DriverError::action_failed(format!("navigation to {} failed: {error}", a.url))
                .with_details(json!({ "url": a.url, "errorText": error })),
        );
    }
    match nav.loader_id {
        // Same-document navigation: nothing to load.
        None => {
            let (url, title) = conn
                .location(budget(ctx))
                .await
                .map_err(|e| from_cdp(ctx, device, e))?;
            Ok(ActionOutput::new(json!({ "url": url, "title": title })))
        }
        Some(loader) => finish_navigation(conn, ctx, device, &mut events, Some(&loader)).await,
    }
}

async fn history(
    conn: &mut Connection,
    ctx: &CallContext,
    device: &DeviceId,
    call: &ActionCall,
) -> DriverResult<ActionOutput> {
    let NoArgs {} = args(call)?;
    let page = conn.page(budget(ctx));
    let h = page
        .navigation_history()
        .await
        .map_err(|e| from_cdp(ctx, device, e))?;
    let step = if call.name == "back" { -1 } else { 1 };
    let target = usize::try_from(h.current_index + step)
        .ok()
        .and_then(|i| h.entries.get(i));
    let Some(entry) = target else {
        return Err(DriverError::action_failed(format!(
            "there is no {} page in the history",
            if step < 0 { "previous" } else { "next" }
        )));
    };
    let mut events = conn.subscribe();
    page.navigate_to_history_entry(entry.id)
        .await
        .map_err(|e| from_cdp(ctx, device, e))?;
    finish_navigation(conn, ctx, device, &mut events, None).await
}

/// Waits for the commit and the load, then reports where the page is.
async fn finish_navigation(
    conn: &mut Connection,
    ctx: &CallContext,
    device: &DeviceId,
    events: &mut tokio::sync::broadcast::Receiver<std::sync::Arc<crate::cdp::CdpEvent>>,
    loader: Option<&str>,
) -> DriverResult<ActionOutput> {
    let b = budget(ctx);
    let waited = conn.wait_arrived(events, loader, b).await;
    conn.epoch.invalidate();
    match waited {
        None if ctx.is_expired() => return Err(DriverError::deadline_exceeded()),
        None => {
            return Err(DriverError::action_failed(format!(
                "the page did not finish loading within {b:?}"
            )));
        }
        Some(Err(e)) => return Err(from_cdp(ctx, device, e)),
        Some(Ok(())) => {}
    }
    let (url, title) = conn
        .location(budget(ctx))
        .await
        .map_err(|e| from_cdp(ctx, device, e))?;
    Ok(ActionOutput::new(json!({ "url": url, "title": title })))
}

async fn tap(
    conn: &mut Connection,
    ctx: &CallContext,
    device: &DeviceId,
    call: &ActionCall,
) -> DriverResult<ActionOutput> {
    let a: TapArgs<f64> = args(call)?;
    let vp = conn.viewport();
    let inside = |v: f64, max: u32| v.is_finite() && v >= 0.0 && v < f64::from(max);
    if !inside(a.x, vp.width) || !inside(a.y, vp.height) {
        return Err(DriverError::invalid_arguments(
            &call.name,
            format!(
                "({}, {}) is outside the {}x{} viewport",
                a.x, a.y, vp.width, vp.height
            ),
        ));
    }
    let s = conn.spec.scale;
    let page = conn.page(budget(ctx));
    conn.input(budget(ctx), Duration::ZERO, page.click(a.x / s, a.y / s))
        .await
        .map_err(|e| from_cdp(ctx, device, e))?;
    Ok(ActionOutput::new(json!({ "accepted": true })))
}

async fn input_text(
    conn: &mut Connection,
    ctx: &CallContext,
    device: &DeviceId,
    call: &ActionCall,
) -> DriverResult<ActionOutput> {
    let a: TextArgs = match &call.arguments {
        Value::Object(_) | Value::Null => TextArgs::parse(call)?,
        _ => args(call)?,
    };
    let typed = a.chars();
    a.check_length(call, MAX_TEXT)?;
    let page = conn.page(budget(ctx));
    let editable = focus_is_editable(conn, &page)
        .await
        .map_err(|e| from_cdp(ctx, device, e))?;
    if !editable {
        return Err(DriverError::action_failed(
            "no editable element has focus; tap one first",
        ));
    }
    page.insert_text(&a.text)
        .await
        .map_err(|e| from_cdp(ctx, device, e))?;
    // The count only: the text itself is never echoed (it may be secret).
    Ok(ActionOutput::new(
        json!({ "accepted": true, "typedChars": typed }),
    ))
}

/// Whether typed text has somewhere to go: an editable element has focus
/// in the page or in a same-origin frame; or focus is in a cross-origin
/// frame, where the frame that says it has focus decides. When none of
/// the frames this driver knows says so (a frame not observed yet, or one
/// whose process does not report focus), the text is sent anyway:
/// Chromium delivers it to the focused frame, wherever the tap put focus.
async fn focus_is_editable(conn: &Connection, page: &CdpSession) -> Result<bool, CdpError> {
    let state: String = page.evaluate(scripts::FOCUS_IS_EDITABLE).await?;
    if state != "frame" {
        return Ok(state == "editable");
    }
    for entry in conn.frames.table().iter().filter(|f| f.out_of_process) {
        let session = crate::frame_reader::session_for(page, entry);
        let asked: Result<(bool, String), CdpError> = async {
            let focused: bool = session.evaluate("document.hasFocus()").await?;
            let state: String = session.evaluate(scripts::FOCUS_IS_EDITABLE).await?;
            Ok((focused, state))
        }
        .await;
        match asked {
            Ok((true, state)) if state != "frame" => return Ok(state == "editable"),
            Ok(_) => {}
            // The frame went away since it was observed.
            Err(CdpError::Protocol { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    tracing::debug!("focus is in a frame no known session reports; typing into it");
    Ok(true)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ScrollPosition {
    scroll_x: f64,
    scroll_y: f64,
}

async fn scroll(
    conn: &mut Connection,
    ctx: &CallContext,
    device: &DeviceId,
    call: &ActionCall,
) -> DriverResult<ActionOutput> {
    let a: ScrollArgs<i64> = args(call)?;
    a.check_limit(call, MAX_DELTA)?;
    let s = conn.spec.scale;
    let (cx, cy) = (
        f64::from(conn.spec.width) / 2.0,
        f64::from(conn.spec.height) / 2.0,
    );
    let page = conn.page(budget(ctx));
    page.wheel(cx, cy, a.delta_x as f64 / s, a.delta_y as f64 / s)
        .await
        .map_err(|e| from_cdp(ctx, device, e))?;
    let pos: ScrollPosition = page
        .evaluate(&scripts::settle_scroll())
        .await
        .map_err(|e| from_cdp(ctx, device, e))?;
    Ok(ActionOutput::new(json!({
        "accepted": true,
        "deltaX": a.delta_x,
        "deltaY": a.delta_y,
        "scrollX": pos.scroll_x * s,
        "scrollY": pos.scroll_y * s,
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemes() {
        for ok in [
            "http://x",
            "https://a.b/c",
            "about:blank",
            "data:text/html,x",
            "file:///tmp/x",
        ] {
            assert!(URLS.check(ok).is_ok(), "{ok}");
        }
        for bad in ["", "example.com", "/path", "1http://x", "://x"] {
            assert!(URLS.check(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn definitions_are_unique_and_secret_is_protected() {
        let defs = definitions(1280, 800);
        let mut names: Vec<&str> = defs.iter().map(|d| d.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), defs.len());
        assert!(
            defs.iter()
                .any(|d| d.name == "inputSecret" && d.is_protected())
        );
        assert!(defs.iter().any(|d| d.name == "waitForElement"));
    }
}
