//! The live search behind `observe`'s `filter`: where the device offers
//! `queryElements` (the browser driver), the filter is looked up on the
//! live page, not only in the observed UI tree, which a large page
//! outgrows (the snapshot is fitted to the protocol's bounds, so row 999
//! of a table or a footer's last link may not be in it). When nothing in
//! the snapshot matches, the search's partial tree (the matches with their
//! ancestors, recorded by the host as the Action's resolved observation)
//! is what the outline shows, and a ref shown from it is acted on in it.
//!
//! It only reads: `queryElements` changes nothing on the device. A device
//! without it, or a search that fails, leaves the filter to the snapshot.

use std::sync::Arc;

use devicerail_host_agent::Screen;
use devicerail_host_link::methods::{DeviceCapabilities, DeviceExecute};
use devicerail_host_link::typed::{call_as, call0_as};
use devicerail_host_protocol::{ActionDefinition, ActionResult};
use serde_json::json;

use super::backend::DeviceRailClient;
use super::seen::seen_of;
use super::state::State;

/// The Action that searches the live page.
const QUERY_ELEMENTS: &str = "queryElements";
/// Most elements one search returns (the driver's own bound is 200).
const LIMIT: u32 = 100;
/// How long the search may take, and the slack on its request.
const SEARCH_MS: u64 = 10_000;
const SLACK_MS: u64 = 5_000;

/// What a filter found on the live page.
pub(crate) struct Searched {
    /// The matches with their ancestors, as a screen of their own.
    pub(crate) screen: Arc<Screen>,
    /// How many elements matched on the whole page.
    pub(crate) total: u64,
}

/// Searches the live page for the elements whose name or text contains
/// `filter` (case-insensitive); `None` where the device cannot, or the
/// search failed (logged).
pub(crate) async fn live(
    state: &State,
    client: &DeviceRailClient,
    filter: &str,
) -> Option<Searched> {
    let caps: Vec<ActionDefinition> =
        match call0_as::<DeviceCapabilities, _>(client, Some(SEARCH_MS)).await {
            Ok(c) => c,
            Err(e) => {
                tracing::debug!("no live search: the capabilities did not come: {e}");
                return None;
            }
        };
    if !caps.iter().any(|a| a.name == QUERY_ELEMENTS) {
        return None;
    }
    let params = json!({
        "id": uuid::Uuid::new_v4().to_string(),
        "name": QUERY_ELEMENTS,
        "arguments": {
            "selector": { "text": { "value": filter, "mode": "contains" } },
            "limit": LIMIT,
        },
        "actionTimeoutMs": SEARCH_MS,
    });
    let result =
        match call_as::<DeviceExecute, ActionResult>(client, params, Some(SEARCH_MS + SLACK_MS))
            .await
        {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!("the live search for the filter failed: {e}");
                return None;
            }
        };
    let total = result.output.get("total").and_then(|t| t.as_u64())?;
    let before = result.before?;
    match seen_of(state, client, before).await {
        Ok(screen) if screen.tree.is_some() => Some(Searched { screen, total }),
        Ok(_) => None,
        Err(e) => {
            tracing::warn!("the live search's tree could not be read: {e}");
            None
        }
    }
}
