//! What observations become for an agent, shared by `observe` and `act`:
//! outlines and diffs with refs from the server's [`RefBook`], stale-ref
//! errors with candidates, and the screenshot as a bounded image when it
//! is worth sending.
//!
//! It never sends more text than the budget it is given, and never an
//! image the caller did not ask for (`always`) or that did not change
//! visibly since the last one sent (`auto`).

use base64::Engine;
use devicerail_host_agent::Keyed;
use devicerail_host_agent::budget::Budget;
use devicerail_host_agent::diff::TreeDiff;
use devicerail_host_agent::pixels::PixelDigest;
use devicerail_host_agent::refs::{RefBook, RefRecord, StaleRef};
use devicerail_host_agent::render::{self, Outline};
use rmcp::model::ContentBlock;
use serde_json::{Value, json};

use super::image::{self, Encoded, Format};
use super::state::{Candidate, State, ToolError};
use super::tools::ShotMode;
use devicerail_host_agent::Screen;
use devicerail_host_link::eyes::{ShotError, screenshot_bytes};

/// An image is sent again (`auto`) when more than this share of the
/// screen changed since the last one sent.
pub(crate) const IMAGE_CHANGE_SHARE: f64 = 0.02;

/// The outline of `k` within `budget`, refs interned for `device`.
pub(crate) fn outline(book: &mut RefBook, device: &str, k: &Keyed, budget: &Budget) -> Outline {
    let mut refs = |i: usize| format!("e{}", book.reference(device, k, i).unwrap_or(0));
    render::render_outline(k, budget, &mut refs)
}

/// The lines of `d` (from `prev` to `cur`), refs interned for `device`.
pub(crate) fn diff_text(
    book: &mut RefBook,
    device: &str,
    prev: &Keyed,
    cur: &Keyed,
    d: &TreeDiff,
    max_chars: usize,
) -> String {
    let prev_refs: std::collections::HashMap<usize, u32> = d
        .removed
        .iter()
        .filter_map(|&p| book.existing(device, prev, p).map(|n| (p, n)))
        .collect();
    let mut refs = |i: usize| format!("e{}", book.reference(device, cur, i).unwrap_or(0));
    render::render_diff(
        prev,
        cur,
        d,
        &mut refs,
        &|p| prev_refs.get(&p).map(|n| format!("e{n}")),
        max_chars,
    )
}

/// The `stale_ref` error of `reference` (record `rec`) against `fresh`.
pub(crate) fn stale_error(
    book: &mut RefBook,
    device: &str,
    reference: &str,
    rec: &RefRecord,
    stale: &StaleRef,
    fresh: &Keyed,
) -> ToolError {
    let identity = rec.identity.describe();
    let mut candidates = Vec::new();
    for &i in &stale.candidates {
        if let Some(n) = book.reference(device, fresh, i) {
            candidates.push(Candidate {
                reference: format!("e{n}"),
                line: render::describe(fresh, i, 80),
            });
        }
    }
    let mut refs = |i: usize| format!("e{}", book.reference(device, fresh, i).unwrap_or(0));
    let text = render::render_stale(reference, &identity, stale, fresh, &mut refs);
    ToolError::StaleRef {
        reference: reference.to_owned(),
        reason: stale.reason.code(),
        identity,
        candidates,
        text,
    }
}

/// Whether `seen`'s screenshot goes to the agent under `mode`, given the
/// last image sent.
pub(crate) fn wants_image(mode: ShotMode, seen: &Screen, last_image: Option<&PixelDigest>) -> bool {
    if seen.screenshot.is_none() {
        return false;
    }
    match mode {
        ShotMode::Always => true,
        ShotMode::Never => false,
        ShotMode::Auto => {
            if seen.tree.is_none() {
                return true;
            }
            match (last_image, &seen.pixels) {
                (None, _) => true,
                (Some(last), Some(now)) => last.compare(now).beyond(IMAGE_CHANGE_SHARE),
                (Some(_), None) => true,
            }
        }
    }
}

/// Why an observation comes without its image (the text is the note the
/// agent reads).
#[derive(Debug, thiserror::Error)]
pub(crate) enum NoImage {
    /// The observation has no screenshot.
    #[error("no screenshot: {0}")]
    NoScreenshot(String),
    /// Its bytes could not be read.
    #[error("no image: {0}")]
    Unreadable(#[from] ShotError),
    /// They could not be decoded or encoded.
    #[error("no image: {0}")]
    Encoding(#[from] image::ImageError),
    /// The encoding task failed.
    #[error("no image: {0}")]
    Task(#[from] tokio::task::JoinError),
}

/// The screenshot of `seen`, bounded and encoded; why not when it cannot
/// be read.
pub(crate) async fn image_of(
    state: &State,
    seen: &Screen,
    format: Format,
    max_side: Option<u32>,
) -> Result<Encoded, NoImage> {
    let Some(sha) = &seen.screenshot else {
        return Err(NoImage::NoScreenshot(
            seen.no_screenshot
                .as_deref()
                .unwrap_or("the device gave none")
                .to_owned(),
        ));
    };
    let bytes = screenshot_bytes(&state.data_dir, sha).await?;
    let max_side = max_side.unwrap_or(image::DEFAULT_MAX_SIDE);
    Ok(tokio::task::spawn_blocking(move || image::prepare(&bytes, format, max_side)).await??)
}

/// The structured description of an image.
pub(crate) fn image_json(e: Option<&Encoded>) -> Value {
    e.map_or(Value::Null, |e| {
        json!({
            "mimeType": e.format.mime_type(),
            "width": e.width,
            "height": e.height,
            "bytes": e.bytes.len(),
            "sourceWidth": e.source_width,
            "sourceHeight": e.source_height,
        })
    })
}

/// The image content block.
pub(crate) fn image_block(e: &Encoded) -> ContentBlock {
    let data = base64::engine::general_purpose::STANDARD.encode(&e.bytes);
    ContentBlock::image(data, e.format.mime_type())
}
