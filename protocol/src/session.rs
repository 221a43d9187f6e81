//! Sessions, the event log and its read paths.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::bounded::{EventSequence, PageLimit, SafeU64};
use crate::event::TestEvent;
use crate::ids::SessionId;

/// Whether a Session still accepts events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum SessionState {
    Active,
    Ended,
}

/// How a Session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum SessionOutcome {
    Completed,
    Failed,
    Cancelled,
    /// The host shut down (or crashed) while the Session was active.
    Shutdown,
}

/// Summary of one Session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionInfo {
    pub id: SessionId,
    pub state: SessionState,
    pub started_at_ms: SafeU64,
    #[serde(default)]
    pub ended_at_ms: Option<SafeU64>,
    pub event_count: EventSequence,
    pub last_sequence: EventSequence,
}

/// Parameters of `session.end`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionEndParams {
    /// Defaults to `completed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<SessionOutcome>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Result of `session.current`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionCurrentResult {
    pub session_id: SessionId,
}

/// Parameters of `events.list`. Without `sessionId` the active Session is
/// read; without `limit` the whole suffix after `afterSequence`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EventsListParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<SessionId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_sequence: Option<EventSequence>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<PageLimit>,
}

/// Parameters of `session.export`. Neither cursor field: the legacy
/// complete export. `limit` (with optional `afterSequence`): one page of an
/// ended Session, which needs `session.export.page.v1`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionExportParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<SessionId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_sequence: Option<EventSequence>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<PageLimit>,
}

/// Result of `session.export`. `nextAfterSequence` is present only on a
/// page that is not the last.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionExportResult {
    pub session: SessionInfo,
    pub events: Vec<TestEvent>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_after_sequence: Option<EventSequence>,
}

/// A complete Session document (the legacy export shape).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionExport {
    pub session: SessionInfo,
    pub events: Vec<TestEvent>,
}

/// Parameters of `events.clear` (Session deletion).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionTargetParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<SessionId>,
}

/// Result of `events.clear`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EventsClearResult {
    pub deleted: bool,
    pub session_id: SessionId,
}
