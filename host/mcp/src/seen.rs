//! Taking an observation as the server keeps it ([`Seen`], in `looks`):
//! `device.observe` (recorded), reading one the host recorded after an
//! Action, and settling: observing until the screen is quiet, within a
//! bound.
//!
//! Reads only: it sends `device.observe` and `ui.snapshot.get` on the
//! device's connection and reads screenshots from the data directory's
//! Evidence (checked against their sha256). It never acts on a device.

use std::sync::Arc;
use std::time::Instant;

use devicerail_host_agent::TreeView;
use devicerail_host_agent::identity::identify;
use devicerail_host_agent::pixels::PixelDigest;
use devicerail_host_agent::settle::{IdleHint, SettlePolicy, SettleReport, Settler, Step};
use devicerail_host_link::DeviceRailClient;
use devicerail_host_link::methods::{DeviceObserve, UiSnapshotGet};
use devicerail_host_protocol::UiSnapshot;
use devicerail_host_store::event_store::ReadOnlyStore;
use serde_json::{Value, json};

use super::backend::{call, call0};
pub(crate) use super::looks::Seen;
use super::state::{State, ToolError};

/// How long one observation may take.
pub(crate) const OBSERVE_TIMEOUT_MS: u64 = 60_000;

/// Why a screenshot's bytes could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ShotError {
    #[error("{0}")]
    Store(#[from] devicerail_host_store::event_store::StoreError),
    #[error("the screenshot {0} is not in the data directory's Evidence")]
    Missing(String),
    #[error("the stored screenshot does not match its sha256")]
    Digest,
    #[error("reading it failed: {0}")]
    Join(#[from] tokio::task::JoinError),
}

/// The bytes of screenshot `sha` from the data directory.
pub(crate) async fn screenshot_bytes(state: &State, sha: &str) -> Result<Vec<u8>, ShotError> {
    let data_dir = state.data_dir.clone();
    let sha = sha.to_owned();
    tokio::task::spawn_blocking(move || {
        let store = ReadOnlyStore::open(&data_dir)?;
        let bytes = store
            .blob(&sha)?
            .ok_or_else(|| ShotError::Missing(sha.clone()))?;
        if devicerail_host_store::evidence::sha256_hex(&bytes) != sha {
            return Err(ShotError::Digest);
        }
        Ok(bytes)
    })
    .await?
}

async fn pixels_of(state: &State, sha: &str) -> Option<PixelDigest> {
    if let Some(d) = state.digests().get(sha) {
        return Some(d);
    }
    let bytes = match screenshot_bytes(state, sha).await {
        Ok(b) => b,
        Err(e) => {
            tracing::warn!("no pixel digest for screenshot {sha}: {e}");
            return None;
        }
    };
    let digest = tokio::task::spawn_blocking(move || PixelDigest::from_image(&bytes))
        .await
        .ok()?
        .inspect_err(|e| tracing::warn!("no pixel digest for screenshot {sha}: {e}"))
        .ok()?;
    state.digests().put(digest.clone());
    Some(digest)
}

/// Reads an Observation the host answered or recorded (`obs`): its tree
/// through `ui.snapshot.get`, its screenshot's digest from the Evidence.
pub(crate) async fn seen_of(
    state: &State,
    client: &DeviceRailClient,
    obs: Value,
) -> Result<Arc<Seen>, ToolError> {
    let observation_id = obs["id"].as_str().unwrap_or_default().to_owned();
    let (keyed, no_tree) = if obs["uiSnapshot"].is_object() {
        let snap = call::<UiSnapshotGet>(
            client,
            json!({ "observationId": observation_id }),
            Some(OBSERVE_TIMEOUT_MS),
        )
        .await?;
        let snapshot: UiSnapshot = serde_json::from_value(snap)?;
        let viewport = (
            obs["viewport"]["width"].as_f64().unwrap_or(0.0),
            obs["viewport"]["height"].as_f64().unwrap_or(0.0),
        );
        let url = obs["metadata"]["url"].as_str().map(str::to_owned);
        let keyed = tokio::task::spawn_blocking(move || {
            let mut view = TreeView::from_snapshot(snapshot).with_url(url);
            if viewport.0 > 0.0 && viewport.1 > 0.0 {
                view = view.with_viewport(viewport.0, viewport.1);
            }
            identify(view)
        })
        .await
        .map_err(|e| ToolError::Args(format!("identifying the tree failed: {e}")))?;
        (Some(keyed), None)
    } else {
        let why = obs["uiSnapshotOmission"]
            .as_str()
            .unwrap_or("the device gave none")
            .to_owned();
        (None, Some(why))
    };
    let screenshot = obs["screenshot"]["sha256"].as_str().map(str::to_owned);
    let no_screenshot = screenshot.is_none().then(|| {
        obs["screenshotOmission"]
            .as_str()
            .unwrap_or("the device gave none")
            .to_owned()
    });
    let pixels = match &screenshot {
        Some(sha) => pixels_of(state, sha).await,
        None => None,
    };
    let idle = IdleHint::from_metadata(&obs["metadata"]);
    Ok(Arc::new(Seen {
        observation_id,
        keyed,
        no_tree,
        screenshot,
        no_screenshot,
        pixels,
        idle,
        at: Instant::now(),
    }))
}

/// Observes the device now (`device.observe`, recorded in its Session).
pub(crate) async fn observe_now(
    state: &State,
    client: &DeviceRailClient,
) -> Result<Arc<Seen>, ToolError> {
    let obs = call0::<DeviceObserve>(client, Some(OBSERVE_TIMEOUT_MS)).await?;
    seen_of(state, client, obs).await
}

/// The default bound of settling.
pub(crate) const DEFAULT_SETTLE_MAX_MS: u32 = SettlePolicy::DEFAULT_MAX_MS;

/// Settles from `first`: observes again until the screen is quiet or
/// `max_ms` passed. Returns the last observation and how it went.
pub(crate) async fn settle(
    state: &State,
    client: &DeviceRailClient,
    first: Arc<Seen>,
    max_ms: u32,
) -> Result<(Arc<Seen>, SettleReport), ToolError> {
    let t0 = first.at;
    let mut settler = Settler::new(SettlePolicy::for_screen(first.web(), max_ms));
    let mut last = first;
    loop {
        match settler.feed(last.sample(t0)) {
            Step::Settled(r) | Step::GaveUp(r) => return Ok((last, r)),
            Step::PollAfter(ms) => {
                tokio::time::sleep(std::time::Duration::from_millis(u64::from(ms))).await;
                last = observe_now(state, client).await?;
            }
        }
    }
}

/// A report for a screen that was not settled on purpose.
pub(crate) fn unsettled() -> SettleReport {
    SettleReport {
        settled: false,
        elapsed_ms: 0,
        samples: 1,
        still_changing: Vec::new(),
    }
}

/// The structured form of a settle report.
pub(crate) fn settle_json(r: &SettleReport, asked: bool) -> Value {
    json!({
        "asked": asked,
        "settled": r.settled,
        "ms": r.elapsed_ms,
        "samples": r.samples,
        "stillChanging": r.still_changing,
    })
}

/// `settled in 310 ms`, `not settled after 3000 ms (tree still changing)`.
pub(crate) fn settle_text(r: &SettleReport, asked: bool) -> String {
    if !asked {
        "not settled (settle=false)".into()
    } else if r.settled {
        format!("settled in {} ms", r.elapsed_ms)
    } else if r.still_changing.is_empty() {
        format!("not settled after {} ms", r.elapsed_ms)
    } else {
        format!(
            "not settled after {} ms ({} still changing)",
            r.elapsed_ms,
            r.still_changing.join(", ")
        )
    }
}
