//! What every tool shares (the backend, leases seen, per-device slots,
//! refs, the data directory) and how a tool call fails ([`ToolError`],
//! shown to the agent as the tool's error text).
//!
//! State only: it never talks to a host itself.

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

use devicerail_client::DeviceRailClient;
use rmcp::model::{CallToolResult, ContentBlock};

use super::backend::{Backend, BackendError, LeaseView};
use super::outline::OutlineError;
use super::refs::{RefError, RefTable};
use super::secrets::SecretError;
use super::sessions::Slots;

/// Why a tool call failed; shown to the agent as the tool's error text.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ToolError {
    #[error("invalid arguments: {0}")]
    Args(String),
    #[error(transparent)]
    Backend(#[from] BackendError),
    #[error(transparent)]
    Ref(#[from] RefError),
    #[error(transparent)]
    Secret(#[from] SecretError),
    #[error(transparent)]
    Outline(#[from] OutlineError),
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
            _ => None,
        }
    }

    pub(crate) fn into_result(self) -> CallToolResult {
        let hint = match self.code() {
            Some(c) if c == "device_in_use" || c.contains("lease") => {
                " (another client or agent holds this device; pick another one from `devices` or wait)"
            }
            Some(c) if c.contains("stale") => " (the screen changed; observe again for fresh refs)",
            _ => "",
        };
        let text = match self.code() {
            Some(code) => format!("error {code}: {self}{hint}"),
            None => format!("error: {self}{hint}"),
        };
        CallToolResult::error(vec![ContentBlock::text(text)])
    }
}

/// What every tool shares.
pub(crate) struct State {
    pub backend: Backend,
    pub leases: LeaseView,
    pub slots: Slots,
    pub data_dir: PathBuf,
    refs: Mutex<RefTable>,
    /// A connection for `devices` (it never selects a device).
    pub lobby: tokio::sync::Mutex<Option<DeviceRailClient>>,
    /// What `devices` says when the host serves no device: why, and the
    /// command that fixes it.
    pub no_devices: String,
}

impl State {
    pub(crate) fn new(backend: Backend, data_dir: PathBuf) -> Self {
        Self {
            backend,
            leases: LeaseView::default(),
            slots: Slots::default(),
            data_dir,
            refs: Mutex::new(RefTable::new()),
            lobby: tokio::sync::Mutex::new(None),
            no_devices: "no devices".to_owned(),
        }
    }

    pub(crate) fn refs(&self) -> MutexGuard<'_, RefTable> {
        self.refs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
