//! The `observe` tool: a DeviceRail Observation in the device's Session,
//! settled by default (more observations until the UI tree and the
//! screenshot are quiet, within a bound), then for the agent:
//!
//! * the first look in a Session, `full`, `filter` or `subtree`: the
//!   outline of the UI tree within `maxChars`, interactive elements first,
//!   with what was left out;
//! * later looks: the changes since the last one (or `since`), or the
//!   whole outline headed `new screen` when little of the last one is left;
//! * the screenshot, downscaled, when it changed visibly since the last
//!   image sent (`auto`), always, or never.
//!
//! Refs come from the server's book: the same element keeps its ref across
//! looks. The outline is never repeated in the structured result. It never
//! fails an observation because the image could not be read (a note says
//! why instead).

use std::sync::Arc;

use devicerail_host_agent::budget::{self, Budget};
use devicerail_host_agent::diff::{diff, is_new_screen};
use devicerail_host_agent::matching::match_trees;
use devicerail_host_agent::refs::RefBook;
use devicerail_host_agent::render;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

use super::present::{
    self, diff_text, image_block, image_json, image_of, outline, stale_error, wants_image,
};
use super::search::{self, Searched};
use super::seen::{self, DEFAULT_SETTLE_MAX_MS, observe_now, settle_json, settle_text};
use super::sessions::ids;
use super::state::{State, ToolError};
use super::tools::{ObserveArgs, ShotMode};
use devicerail_host_agent::Screen;
use devicerail_host_agent::identity::Keyed;

/// A rendered diff longer than this share of the outline is shown as a
/// new screen instead.
const DIFF_OVER_OUTLINE: f64 = 0.8;

/// What the text of an observation holds.
struct Body {
    mode: &'static str,
    text: String,
    counts: Value,
    nodes: usize,
    shown: usize,
    omitted: (usize, usize, usize),
    summary: String,
    /// The outline is the live search's (matches beyond the tree).
    live: bool,
}

/// Runs `observe`.
pub(crate) async fn observe(state: &State, args: ObserveArgs) -> Result<CallToolResult, ToolError> {
    let max_chars = args
        .max_chars
        .unwrap_or(budget::DEFAULT_MAX_CHARS)
        .clamp(budget::MIN_MAX_CHARS, 100_000);
    let settle_asked = args.settle.unwrap_or(true);
    let settle_max = args
        .settle_max_ms
        .unwrap_or(DEFAULT_SETTLE_MAX_MS)
        .min(30_000);
    let slot = state.slots.get(&args.device);
    let mut slot = slot.lock().await;
    let (client, session) = slot
        .ensure(&state.backend, &state.leases, &args.device)
        .await?;
    state.views().device(&args.device, &session);
    let first = observe_now(state, client).await?;
    let (cur, settled) = if settle_asked {
        seen::settle(state, client, first, settle_max).await?
    } else {
        (first, seen::unsettled())
    };
    // A filter nothing in the tree matches is looked up on the live page
    // (where the device can).
    let searched = match (args.filter.as_deref(), &cur.tree) {
        (Some(f), Some(k))
            if !f.trim().is_empty() && args.subtree.is_none() && !matches_in(k, f) =>
        {
            search::live(state, client, f.trim()).await
        }
        _ => None,
    };
    drop(slot);

    let mut notes = Vec::new();
    if let Some(why) = &cur.no_tree {
        notes.push(format!("no UI tree: {why}"));
    }
    let (body, since, image_wanted) = {
        let mut views = state.views();
        let views = &mut *views;
        let dv = views.device(&args.device, &session);
        let last = dv.last.clone();
        let since = match &args.since {
            Some(id) => Some(dv.recent(id).ok_or_else(|| {
                ToolError::Args(format!(
                    "since: {id} is not one of this device's last {} observations in this Session",
                    super::state::KEPT_OBSERVATIONS
                ))
            })?),
            None => None,
        };
        let image_wanted = wants_image(
            args.screenshot.unwrap_or(ShotMode::Auto),
            &cur,
            dv.last_image.as_ref(),
        );
        let body = body(
            &mut views.book,
            &args,
            (&cur, searched.as_ref()),
            last,
            since.clone(),
            max_chars,
        )?;
        (body, since, image_wanted)
    };

    let mut image = None;
    if image_wanted {
        match image_of(state, &cur, args.format, args.max_side).await {
            Ok(e) => image = Some(e),
            Err(why) => notes.push(why.to_string()),
        }
    }
    {
        let mut views = state.views();
        let dv = views.device(&args.device, &session);
        if image.is_some() {
            dv.last_image = cur.pixels.clone();
        }
        dv.saw(cur.clone());
        dv.searched = searched.filter(|_| body.live).map(|s| s.screen);
    }

    let note = (!notes.is_empty()).then(|| notes.join("; "));
    let mut structured = ids(&args.device, &session);
    if let Some(m) = structured.as_object_mut() {
        m.insert("observationId".into(), json!(cur.observation_id));
        m.insert("mode".into(), json!(body.mode));
        m.insert(
            "since".into(),
            json!(since.as_ref().map(|s| s.observation_id.clone())),
        );
        m.insert("counts".into(), body.counts.clone());
        m.insert("nodes".into(), json!(body.nodes));
        m.insert("shown".into(), json!(body.shown));
        m.insert(
            "truncated".into(),
            json!(body.omitted.0 + body.omitted.1 + body.omitted.2 > 0),
        );
        m.insert(
            "omitted".into(),
            json!({ "interactive": body.omitted.0, "text": body.omitted.1, "other": body.omitted.2 }),
        );
        m.insert("settle".into(), settle_json(&settled, settle_asked));
        m.insert("image".into(), image_json(image.as_ref()));
        m.insert("note".into(), json!(note));
    }
    let mut header = format!(
        "{} {}: {} · {}",
        args.device,
        cur.observation_id,
        body.summary,
        settle_text(&settled, settle_asked)
    );
    if let Some(n) = &note {
        header.push_str(&format!("; {n}"));
    }
    let mut content = vec![ContentBlock::text(format!("{header}\n{}", body.text))];
    if let Some(e) = &image {
        content.push(image_block(e));
    }
    let mut result = CallToolResult::structured(structured);
    result.content = content;
    Ok(result)
}

/// Whether anything in `k` matches `filter` (as the outline's filter
/// does).
fn matches_in(k: &Keyed, filter: &str) -> bool {
    let b = Budget {
        filter: Some(filter.to_owned()),
        ..Budget::default()
    };
    budget::scope(k, &b).contains(&true)
}

/// The text of an observation: outline or diff (`cur` with what a live
/// search for the filter found).
fn body(
    book: &mut RefBook,
    args: &ObserveArgs,
    (cur, searched): (&Arc<Screen>, Option<&Searched>),
    last: Option<Arc<Screen>>,
    since: Option<Arc<Screen>>,
    max_chars: usize,
) -> Result<Body, ToolError> {
    let device = args.device.as_str();
    let Some(k) = cur.tree.as_ref() else {
        return Ok(Body {
            mode: "full",
            text: String::new(),
            counts: Value::Null,
            nodes: 0,
            shown: 0,
            omitted: (0, 0, 0),
            summary: "no UI tree".into(),
            live: false,
        });
    };
    // Refs follow elements from what the agent saw last.
    let last_k = last.as_ref().and_then(|l| l.tree.as_ref());
    let m_last = last_k.map(|lk| match_trees(lk, k));
    book.seen(device, k, last_k.zip(m_last.as_ref()));
    let subtree = match &args.subtree {
        Some(r) => {
            let rec = book.record(r, device)?.clone();
            match RefBook::refind(&rec, k) {
                Ok((i, _)) => Some(i),
                Err(stale) => return Err(stale_error(book, device, r, &rec, &stale, k)),
            }
        }
        None => None,
    };
    let budget = Budget {
        max_chars,
        filter: args.filter.clone().filter(|f| !f.trim().is_empty()),
        subtree,
    };
    // A filter nothing in the tree matches, which the live page does: the
    // search's partial tree (the matches and their ancestors) is outlined
    // instead.
    let live = searched
        .filter(|s| s.total > 0)
        .and_then(|s| s.screen.tree.as_ref().map(|pk| (pk, s.total)));
    let full = |book: &mut RefBook, mode: &'static str, summary: String| {
        let (k, summary) = match live {
            Some((pk, total)) => (
                pk,
                format!("{summary}searched the live page: {total} matching, "),
            ),
            None => (k, summary),
        };
        let o = outline(book, device, k, &budget);
        let om = &o.selection.omitted;
        let what = format!(
            "{}{} of {} elements",
            summary,
            o.shown(),
            o.selection.in_scope
        );
        Body {
            mode,
            counts: Value::Null,
            nodes: o.selection.in_scope,
            shown: o.shown(),
            omitted: (om.interactive, om.labelled, om.other),
            summary: what,
            text: o.text,
            live: live.is_some(),
        }
    };
    let base = since.or_else(|| last.clone());
    let base_k = base.as_ref().and_then(|b| b.tree.as_ref());
    let prev = match base_k {
        Some(p) if !args.full && budget.filter.is_none() && subtree.is_none() => p,
        _ => return Ok(full(book, "full", String::new())),
    };
    let m = match (&m_last, last_k) {
        (Some(m), Some(lk)) if std::ptr::eq(lk, prev) => m.clone(),
        _ => match_trees(prev, k),
    };
    if is_new_screen(prev, k, &m) {
        return Ok(full(book, "newScreen", "new screen, ".into()));
    }
    let d = diff(prev, k, &m);
    let text = diff_text(book, device, prev, k, &d, max_chars);
    if text.chars().count() > 1000 {
        let o = present::outline(book, device, k, &budget);
        if text.chars().count() as f64 > DIFF_OVER_OUTLINE * o.text.chars().count() as f64 {
            return Ok(full(book, "newScreen", "new screen, ".into()));
        }
    }
    let counts = json!({
        "added": d.added.len(),
        "removed": d.removed.len(),
        "changed": d.changed_elements(),
        "moved": d.moved.len(),
        "unchanged": d.unchanged,
    });
    let since_what = match &args.since {
        Some(id) => format!("since {id}"),
        None => "since the last look".into(),
    };
    Ok(Body {
        mode: "diff",
        counts,
        nodes: (0..k.len()).filter(|&i| k.view.shown(i)).count(),
        shown: d.added.len() + d.changed_elements() + d.moved.len(),
        omitted: (0, 0, 0),
        summary: format!("{since_what}: {}", render::diff_counts(&d)),
        text,
        live: false,
    })
}
