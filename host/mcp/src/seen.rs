//! Taking an observation as the server keeps it (the agent crate's
//! [`Screen`], through the link's `Eyes`): `device.observe` (recorded),
//! reading one the host recorded after an Action, and settling: observing
//! until the screen is quiet, within a bound.
//!
//! Reads only: it sends `device.observe` and `ui.snapshot.get` on the
//! device's connection and reads screenshots from the data directory's
//! Evidence (checked against their sha256). It never acts on a device.

use std::sync::Arc;

use devicerail_host_agent::Screen;
use devicerail_host_agent::settle::{self as settling, SettlePolicy, SettleReport};
use devicerail_host_link::typed::observe;
use devicerail_host_link::{DeviceRailClient, Eyes};
use devicerail_host_protocol::Observation;
use serde_json::{Value, json};

use super::state::{State, ToolError};

/// How long one observation may take.
pub(crate) const OBSERVE_TIMEOUT_MS: u64 = 60_000;

/// Eyes on `client`'s device that read pixel digests from the data
/// directory.
fn eyes<'a>(state: &State, client: &'a DeviceRailClient) -> Eyes<'a> {
    Eyes::new(client, Some(OBSERVE_TIMEOUT_MS)).with_pixels(state.pixels.clone())
}

/// The screen of an Observation the host answered or recorded (`obs`).
pub(crate) async fn seen_of(
    state: &State,
    client: &DeviceRailClient,
    obs: Observation,
) -> Result<Arc<Screen>, ToolError> {
    Ok(Arc::new(eyes(state, client).screen(obs).await?))
}

/// Observes the device now (`device.observe`, recorded in its Session).
pub(crate) async fn observe_now(
    state: &State,
    client: &DeviceRailClient,
) -> Result<Arc<Screen>, ToolError> {
    let obs = observe(client, Some(OBSERVE_TIMEOUT_MS)).await?;
    seen_of(state, client, obs).await
}

/// The default bound of settling.
pub(crate) const DEFAULT_SETTLE_MAX_MS: u32 = SettlePolicy::DEFAULT_MAX_MS;

/// Settles from `first`: observes again until the screen is quiet or
/// `max_ms` passed (the agent crate's one settle loop). Returns the last
/// observation and how it went.
pub(crate) async fn settle(
    state: &State,
    client: &DeviceRailClient,
    first: Arc<Screen>,
    max_ms: u32,
) -> Result<(Arc<Screen>, SettleReport), ToolError> {
    let first = Arc::unwrap_or_clone(first);
    let (last, report) = settling::settle(&mut eyes(state, client), first, max_ms).await?;
    Ok((Arc::new(last), report))
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
