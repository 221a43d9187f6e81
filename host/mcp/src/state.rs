//! What every tool shares (the backend, leases seen, per-device slots,
//! refs and what each device's agent last saw, the data directory) and how
//! a tool call fails ([`ToolError`], shown to the agent as the tool's
//! error text; a stale ref also as structured content).
//!
//! State only: it never talks to a host itself.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use devicerail_host_agent::pixels::PixelDigest;
use devicerail_host_agent::refs::{RefBook, RefError};
use devicerail_host_link::DeviceRailClient;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::json;

use super::backend::{Backend, BackendError, LeaseView};
use super::secrets::SecretError;
use super::sessions::Slots;
use devicerail_host_agent::Screen;
use devicerail_host_link::Pixels;

/// Observations per device that `observe since=…` can name.
pub(crate) const KEPT_OBSERVATIONS: usize = 8;

/// A stale ref's candidate: its ref and outline line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Candidate {
    pub(crate) reference: String,
    pub(crate) line: String,
}

/// Why a tool call failed; shown to the agent as the tool's error text.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ToolError {
    #[error("invalid arguments: {0}")]
    Args(String),
    #[error(transparent)]
    Backend(#[from] BackendError),
    #[error(transparent)]
    Ref(#[from] RefError),
    #[error("{text}")]
    StaleRef {
        reference: String,
        /// `gone` or `ambiguous`.
        reason: &'static str,
        identity: String,
        candidates: Vec<Candidate>,
        /// The whole explanation, candidates included.
        text: String,
    },
    #[error(transparent)]
    Secret(#[from] SecretError),
    #[error("unexpected data: {0}")]
    Json(#[from] serde_json::Error),
    #[error("{step} failed after {done} earlier step(s) succeeded: {message}")]
    Step {
        step: &'static str,
        done: usize,
        code: Option<String>,
        message: String,
    },
}

impl ToolError {
    pub(crate) fn code(&self) -> Option<&str> {
        match self {
            ToolError::Backend(e) => e.code(),
            ToolError::Step { code, .. } => code.as_deref(),
            ToolError::StaleRef { .. } => Some("stale_ref"),
            _ => None,
        }
    }

    pub(crate) fn into_result(self) -> CallToolResult {
        let hint = match self.code() {
            Some(c) if c == "device_in_use" || c.contains("lease") => {
                " (another client or agent holds this device; pick another one from `devices` or wait)"
            }
            Some("stale_ref") => "",
            Some(c) if c.contains("stale") => " (the screen changed; observe again for fresh refs)",
            _ => "",
        };
        let text = match self.code() {
            Some(code) => format!("error {code}: {self}{hint}"),
            None => format!("error: {self}{hint}"),
        };
        let structured = match &self {
            ToolError::StaleRef {
                reference,
                reason,
                identity,
                candidates,
                ..
            } => Some(json!({
                "error": {
                    "code": "stale_ref",
                    "reason": reason,
                    "ref": reference,
                    "identity": identity,
                    "candidates": candidates
                        .iter()
                        .map(|c| json!({ "ref": c.reference, "line": c.line }))
                        .collect::<Vec<_>>(),
                }
            })),
            _ => None,
        };
        let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
        result.structured_content = structured;
        result
    }
}

/// What one device's agent has seen in its current Session.
#[derive(Debug, Default)]
pub(crate) struct DeviceView {
    /// The Session these views belong to.
    pub(crate) session: Option<String>,
    /// What the agent saw last (an observe, or an act's effect).
    pub(crate) last: Option<Arc<Screen>>,
    /// Recent observations, for `since`.
    pub(crate) recent: VecDeque<Arc<Screen>>,
    /// The screenshot last sent as an image.
    pub(crate) last_image: Option<PixelDigest>,
    /// The live search the last observe outlined (its matches beyond the
    /// tree), where `act` re-finds a ref the fresh tree does not hold.
    pub(crate) searched: Option<Arc<Screen>>,
}

impl DeviceView {
    /// Starts over when the device's Session changed.
    pub(crate) fn enter(&mut self, session: &str) {
        if self.session.as_deref() != Some(session) {
            *self = DeviceView {
                session: Some(session.to_owned()),
                ..DeviceView::default()
            };
        }
    }

    /// Records that the agent now sees `seen`.
    pub(crate) fn saw(&mut self, seen: Arc<Screen>) {
        if !self
            .recent
            .iter()
            .any(|s| s.observation_id == seen.observation_id)
        {
            self.recent.push_back(seen.clone());
        }
        while self.recent.len() > KEPT_OBSERVATIONS {
            self.recent.pop_front();
        }
        self.last = Some(seen);
    }

    /// A recent observation by id.
    pub(crate) fn recent(&self, id: &str) -> Option<Arc<Screen>> {
        self.recent.iter().find(|s| s.observation_id == id).cloned()
    }
}

/// Refs and views of every device.
#[derive(Debug, Default)]
pub(crate) struct Views {
    pub(crate) book: RefBook,
    pub(crate) devices: HashMap<String, DeviceView>,
}

impl Views {
    /// The view of `device` in `session` (reset when the Session changed).
    pub(crate) fn device(&mut self, device: &str, session: &str) -> &mut DeviceView {
        let v = self.devices.entry(device.to_owned()).or_default();
        v.enter(session);
        v
    }
}

/// What every tool shares.
pub(crate) struct State {
    pub(crate) backend: Backend,
    pub(crate) leases: LeaseView,
    pub(crate) slots: Slots,
    pub(crate) data_dir: PathBuf,
    views: Mutex<Views>,
    /// Where screenshots are read for pixel digests, and those computed.
    pub(crate) pixels: Pixels,
    /// A connection for `devices` (it never selects a device).
    pub(crate) lobby: tokio::sync::Mutex<Option<DeviceRailClient>>,
    /// What `devices` says when the host serves no device: why, and the
    /// command that fixes it.
    pub(crate) no_devices: String,
}

impl State {
    pub(crate) fn new(backend: Backend, data_dir: PathBuf) -> Self {
        Self {
            backend,
            leases: LeaseView::default(),
            slots: Slots::default(),
            pixels: Pixels {
                data_dir: data_dir.clone(),
                cache: Arc::default(),
            },
            data_dir,
            views: Mutex::new(Views::default()),
            lobby: tokio::sync::Mutex::new(None),
            no_devices: "no devices".to_owned(),
        }
    }

    /// Refs and views (never held across an await).
    pub(crate) fn views(&self) -> MutexGuard<'_, Views> {
        self.views
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stale_ref_is_a_typed_error_with_candidates() {
        let e = ToolError::StaleRef {
            reference: "e4".into(),
            reason: "gone",
            identity: "button \"Save\"".into(),
            candidates: vec![Candidate {
                reference: "e9".into(),
                line: "button \"Discard\"".into(),
            }],
            text: "e4 (button \"Save\") is gone from the screen; nothing was done.".into(),
        };
        assert_eq!(e.code(), Some("stale_ref"));
        let r = e.into_result();
        assert_eq!(r.is_error, Some(true));
        let s = r.structured_content.expect("structured");
        assert_eq!(s["error"]["code"], "stale_ref");
        assert_eq!(s["error"]["candidates"][0]["ref"], "e9");
    }
}
