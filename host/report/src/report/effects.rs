//! The effect of each succeeded Action, for the report: its before and
//! after observations found by `devicerail-host-agent`'s rule over the
//! recorded events, their UI trees and screenshots read from the Session's
//! blobs, compared with the same code `devicerail mcp` uses. A tap that
//! changed nothing shows as `no visible change` here too.
//!
//! Reads only the [`SessionData`] it is given; elements are named by their
//! stable node ids (refs are an MCP server's, not the record's).

use std::collections::HashMap;

use devicerail_host_agent::effect::effect;
use devicerail_host_agent::log::effect_inputs;
use devicerail_host_agent::pixels::PixelDigest;
use devicerail_host_agent::render;
use devicerail_host_agent::{Keyed, screen};
use devicerail_host_protocol::{
    Observation, PNG_MEDIA_TYPE, TestEvent, UI_TREE_MEDIA_TYPE, UiSnapshot,
};
use serde_json::{Map, Value, json};

use crate::bundle::SessionData;

/// Characters of one Action's diff lines in the report.
const LINES_CHARS: usize = 4000;

/// Keyed trees and pixel digests, each computed once.
struct Cache<'a> {
    data: &'a SessionData,
    trees: HashMap<String, Option<Keyed>>,
    pixels: HashMap<String, Option<PixelDigest>>,
}

impl<'a> Cache<'a> {
    fn tree(&mut self, obs: &Observation) -> Option<&Keyed> {
        let sha = obs.ui_snapshot.as_ref()?.evidence.sha256.clone()?;
        let data = self.data;
        self.trees
            .entry(sha.clone())
            .or_insert_with(|| {
                let blob = data.blobs.get(&sha)?;
                if blob.media_type != UI_TREE_MEDIA_TYPE {
                    return None;
                }
                let snap: UiSnapshot = serde_json::from_slice(&blob.bytes)
                    .inspect_err(|e| tracing::warn!("UI snapshot {sha} is not readable: {e}"))
                    .ok()?;
                Some(screen::keyed(obs, snap))
            })
            .as_ref()
    }

    fn pixels(&mut self, obs: &Observation) -> Option<PixelDigest> {
        let sha = screen::shot_of(obs)?;
        let data = self.data;
        self.pixels
            .entry(sha.clone())
            .or_insert_with(|| {
                let blob = data.blobs.get(&sha)?;
                if blob.media_type != PNG_MEDIA_TYPE {
                    return None;
                }
                PixelDigest::from_image(&blob.bytes)
                    .inspect_err(|e| tracing::warn!("screenshot {sha}: {e}"))
                    .ok()
            })
            .clone()
    }
}

/// The effect of every succeeded Action of `events`, by call id.
pub fn effects(data: &SessionData, events: &[TestEvent]) -> Map<String, Value> {
    let mut cache = Cache {
        data,
        trees: HashMap::new(),
        pixels: HashMap::new(),
    };
    let mut out = Map::new();
    for inputs in effect_inputs(events) {
        let before_px = inputs.before_shot.and_then(|o| cache.pixels(o));
        let after_px = inputs.after_shot.and_then(|o| cache.pixels(o));
        let pixels = match (&before_px, &after_px) {
            (Some(a), Some(b)) => Some(a.compare(b)),
            _ => None,
        };
        // Both trees are cached first; then borrowed together.
        if let Some(o) = inputs.before {
            cache.tree(o);
        }
        if let Some(o) = inputs.after {
            cache.tree(o);
        }
        let key = |o: Option<&Observation>| {
            o.and_then(|o| o.ui_snapshot.as_ref())
                .and_then(|u| u.evidence.sha256.clone())
        };
        let before = key(inputs.before)
            .and_then(|k| cache.trees.get(&k))
            .and_then(Option::as_ref);
        let after = key(inputs.after)
            .and_then(|k| cache.trees.get(&k))
            .and_then(Option::as_ref);
        let e = effect(before, after, pixels);
        let lines = match (&e.diff, before, after) {
            (Some(d), Some(b), Some(a)) if !d.is_empty() && !e.new_screen => {
                let mut refs = |i: usize| a.view.nodes[i].stable_node_id.to_string();
                render::render_diff(
                    b,
                    a,
                    d,
                    &mut refs,
                    &|i| Some(b.view.nodes[i].stable_node_id.to_string()),
                    LINES_CHARS,
                )
            }
            _ => String::new(),
        };
        let d = e.diff.as_ref();
        let id = |o: Option<&Observation>| o.map(|o| o.id.to_string());
        out.insert(
            inputs.call_id.clone(),
            json!({
                "verdict": e.verdict.as_str(),
                "summary": render::effect_summary(&e),
                "lines": lines,
                "newScreen": e.new_screen,
                "added": d.map_or(0, |d| d.added.len()),
                "removed": d.map_or(0, |d| d.removed.len()),
                "changed": d.map_or(0, |d| d.changed_elements()),
                "moved": d.map_or(0, |d| d.moved.len()),
                "pixelsChanged": e.pixels.map(|p| if p.identical { 0.0 } else { p.share() }),
                "before": id(inputs.before),
                "after": id(inputs.after),
            }),
        );
    }
    out
}
