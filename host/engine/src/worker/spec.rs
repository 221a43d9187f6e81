//! What a plugin worker is started with ([`WorkerSpec`], [`Backoff`]) and
//! why a start fails ([`StartError`]). Plain data; no processes here.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Map, Value};

/// How restarts are spaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// The first delay.
    pub first: Duration,
    /// The longest delay.
    pub max: Duration,
    /// A worker that ran this long resets the delay to `first`.
    pub stable: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Self {
            first: Duration::from_millis(100),
            max: Duration::from_secs(5),
            stable: Duration::from_secs(60),
        }
    }
}

impl Backoff {
    /// The delay after `current`.
    pub fn next(&self, current: Duration) -> Duration {
        (current * 2).min(self.max)
    }
}

/// What a worker is started with.
#[derive(Debug, Clone)]
pub struct WorkerSpec {
    /// The `devicerail` binary.
    pub exe: PathBuf,
    /// The plugin library (already checked by the host).
    pub plugin_file: PathBuf,
    /// The id its manifest declares.
    pub plugin_id: String,
    /// The plugin's own settings, nothing else.
    pub settings: Map<String, Value>,
    /// Variables the plugin's `env` table adds to its worker's
    /// environment (already checked: no credential among them).
    pub env: Vec<(String, String)>,
    /// The worker's log filter.
    pub log_filter: String,
    /// Spacing of restarts.
    pub backoff: Backoff,
    /// How long past a call's deadline (or cancellation) the worker may
    /// stay silent before it is killed.
    pub grace: Duration,
    /// The host's runtime: replies are read by a task on it (woken by its
    /// reactor) instead of a thread, and async callers wait on it. `None`:
    /// a reader thread, blocking callers only.
    pub runtime: Option<tokio::runtime::Handle>,
}

/// Why a worker could not be started.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StartError {
    /// The process or its channel could not be created; the text says
    /// which system call failed.
    #[error("cannot start the worker process: {0}")]
    Spawn(String),
    /// The loader refused the library (its reason, as the loader says it).
    #[error("{0}")]
    Refused(String),
    /// The worker died while opening the library (its load-time code
    /// crashed): how it ended, with its last output lines.
    #[error("the plugin crashed while loading; its worker ended: {0}")]
    Crashed(String),
    /// The worker did not report the manifest in time (and was killed).
    #[error("the plugin did not load within {secs} s (its worker was killed)")]
    OpenTimeout {
        /// The limit it missed, in seconds.
        secs: u64,
    },
    /// The worker process failed before it was ready (how it ended).
    #[error("the worker process failed before it was ready: {0}")]
    Died(String),
    /// The driver's constructor refused (`setting`: the key at fault).
    #[error("{message}")]
    Init {
        /// The constructor's error message.
        message: String,
        /// The settings key it refused, when it named one.
        setting: Option<String>,
    },
}
