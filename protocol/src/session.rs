//! Sessions, the event log and its read paths.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::bounded::{EventSequence, PageLimit, SafeU64};
use crate::ids::SessionId;

/// Whether a Session still accepts events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum SessionState {
    /// Still recording: accepts new events.
    Active,
    /// Sealed by its `sessionEnded` event; read-only.
    Ended,
}

/// How a Session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum SessionOutcome {
    /// Ended normally (what `session.end` uses by default).
    Completed,
    /// The caller reports that the run failed.
    Failed,
    /// The caller abandoned the run.
    Cancelled,
    /// The host shut down (or crashed) while the Session was active.
    Shutdown,
}

/// Summary of one Session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionInfo {
    /// The Session's id.
    pub id: SessionId,
    /// Whether the Session still accepts events.
    pub state: SessionState,
    /// When the Session started, in Unix milliseconds.
    pub started_at_ms: SafeU64,
    /// When the Session ended, in Unix milliseconds; `null` while active.
    #[serde(default)]
    pub ended_at_ms: Option<SafeU64>,
    /// How many events the log holds; at least 1 (`sessionStarted`).
    pub event_count: EventSequence,
    /// Sequence of the newest event. Logs have no gaps, so this equals
    /// `eventCount`.
    pub last_sequence: EventSequence,
}

/// Parameters of `session.end`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionEndParams {
    /// Defaults to `completed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<SessionOutcome>,
    /// Free text stored in the `sessionEnded` event; absent for none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Result of `session.current`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionCurrentResult {
    /// The connection's active Session.
    pub session_id: SessionId,
}

/// Parameters of `events.list`. Without `sessionId` the active Session is
/// read; without `limit` the whole suffix after `afterSequence`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EventsListParams {
    /// The Session to read; absent reads the active Session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<SessionId>,
    /// Return only events after this sequence; absent starts at the first
    /// event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_sequence: Option<EventSequence>,
    /// Return at most this many events (1 to 1000); absent returns the
    /// whole rest of the log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<PageLimit>,
}

/// Parameters of `session.export`. Neither cursor field: the legacy
/// complete export. `limit` (with optional `afterSequence`): one page of an
/// ended Session, which needs `session.export.page.v1`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionExportParams {
    /// The Session to export; absent exports the active Session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<SessionId>,
    /// Page start: only events after this sequence. Valid only together
    /// with `limit`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_sequence: Option<EventSequence>,
    /// Page size (1 to 1000). Asks for a page, which needs
    /// `session.export.page.v1` and an ended Session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<PageLimit>,
}

/// Parameters of `events.clear` (Session deletion).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionTargetParams {
    /// The Session to delete; absent means the active Session, which is
    /// refused (only ended Sessions can be deleted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<SessionId>,
}

/// Result of `events.clear`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EventsClearResult {
    /// `true`: the Session and all its events are gone.
    pub deleted: bool,
    /// The Session deleted.
    pub session_id: SessionId,
}
