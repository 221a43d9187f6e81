//! Recorded events: the append-only facts of a Session, and the results
//! that carry them (`session.export`, `verdict.record`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::action::{ActionOutcome, RecordedActionCall};
use crate::bounded::{EventSequence, SafeU64};
use crate::errors::ErrorInfo;
use crate::ids::{CallId, DeviceId, EventId, MediaStreamId, RpcId, SessionId};
use crate::media::{MediaFrame, MediaStreamInfo};
use crate::observation::Observation;
use crate::session::{SessionInfo, SessionOutcome};
use crate::verdict::Verdict;

/// One fact in a Session's log. `sequence` orders the log; `atMs` is
/// informational.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TestEvent {
    /// Globally unique id of this event.
    pub event_id: EventId,
    /// The Session whose log holds the event.
    pub session_id: SessionId,
    /// One-based position in the Session's log, without gaps; the authority
    /// for ordering and replay.
    pub sequence: EventSequence,
    /// The RPC request that produced the event, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<RpcId>,
    /// The device the event concerns, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_id: Option<DeviceId>,
    /// When the event was recorded, in Unix milliseconds; informational only
    /// (order by `sequence`).
    pub at_ms: SafeU64,
    /// What happened, tagged by `type`.
    pub payload: TestEventPayload,
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
// Wire DTO: variants are serialized in place; boxing buys nothing here.
#[allow(clippy::large_enum_variant)]
#[serde(tag = "type", rename_all = "camelCase", deny_unknown_fields)]
pub enum TestEventPayload {
    /// First event of every Session (sequence 1).
    SessionStarted,
    /// Last event of a Session; the log is sealed after it.
    SessionEnded {
        /// How the Session ended.
        outcome: SessionOutcome,
        /// The caller's free-text reason, or `null`.
        #[serde(default)]
        reason: Option<String>,
    },
    /// The host captured an Observation.
    ObservationCaptured {
        /// The Observation captured.
        observation: Observation,
    },
    /// An Action started executing on the device.
    ActionStarted {
        /// The call; arguments are redacted for protected and unknown Actions.
        call: RecordedActionCall,
    },
    /// An Action reached its terminal outcome.
    #[serde(rename_all = "camelCase")]
    ActionCompleted {
        /// The `id` of the call its `actionStarted` event recorded.
        call_id: CallId,
        /// How the Action ended.
        outcome: ActionOutcome,
    },
    /// A media stream was opened (protocol 1.4).
    MediaStreamStarted {
        /// The stream opened.
        stream: MediaStreamInfo,
    },
    /// One frame of an open media stream was captured (protocol 1.4).
    MediaFrameCaptured {
        /// The frame captured.
        frame: MediaFrame,
    },
    /// A media stream was closed (protocol 1.4).
    #[serde(rename_all = "camelCase")]
    MediaStreamEnded {
        /// The stream closed.
        stream_id: MediaStreamId,
        /// How many frames the stream holds.
        frame_count: SafeU64,
    },
    /// The caller recorded a verdict (protocol 1.5).
    VerdictRecorded {
        /// The verdict, exactly as recorded.
        verdict: Verdict,
    },
    /// A failure recorded in the log that belongs to no Action.
    Error {
        /// What failed.
        error: ErrorInfo,
    },
}

impl TestEventPayload {
    /// The wire `type` tag.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::SessionStarted => "sessionStarted",
            Self::SessionEnded { .. } => "sessionEnded",
            Self::ObservationCaptured { .. } => "observationCaptured",
            Self::ActionStarted { .. } => "actionStarted",
            Self::ActionCompleted { .. } => "actionCompleted",
            Self::MediaStreamStarted { .. } => "mediaStreamStarted",
            Self::MediaFrameCaptured { .. } => "mediaFrameCaptured",
            Self::MediaStreamEnded { .. } => "mediaStreamEnded",
            Self::VerdictRecorded { .. } => "verdictRecorded",
            Self::Error { .. } => "error",
        }
    }

    /// The first minor version of major 1 whose clients can read this
    /// event: media events need 1.4; verdicts, UI snapshot references and
    /// omissions, and semantic execution metadata need 1.5. A reader that
    /// negotiated less is refused the event rather than handed a shape it
    /// does not know.
    pub fn required_minor(&self) -> u16 {
        fn observation(o: &Observation) -> u16 {
            if o.ui_snapshot.is_some() || o.ui_snapshot_omission.is_some() {
                5
            } else {
                0
            }
        }
        match self {
            Self::MediaStreamStarted { .. }
            | Self::MediaFrameCaptured { .. }
            | Self::MediaStreamEnded { .. } => 4,
            Self::VerdictRecorded { .. } => 5,
            Self::ObservationCaptured { observation: o } => observation(o),
            Self::ActionCompleted {
                outcome: ActionOutcome::Succeeded { result },
                ..
            } => {
                let observed = [&result.before, &result.after]
                    .into_iter()
                    .flatten()
                    .map(observation)
                    .max()
                    .unwrap_or(0);
                if result.execution.is_some() {
                    5
                } else {
                    observed
                }
            }
            _ => 0,
        }
    }
}

/// Result of `session.export`. `nextAfterSequence` is present only on a
/// page that is not the last.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionExportResult {
    /// The Session's summary.
    pub session: SessionInfo,
    /// The whole log, or one page of it, in sequence order.
    pub events: Vec<TestEvent>,
    /// The `afterSequence` of the next page; absent on the last page and
    /// on complete exports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_after_sequence: Option<EventSequence>,
}

/// A complete Session document (the legacy export shape).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionExport {
    /// The Session's summary.
    pub session: SessionInfo,
    /// Every event of the Session, in sequence order.
    pub events: Vec<TestEvent>,
}

/// Result of `verdict.record`: the durable event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VerdictRecordResult {
    /// The `verdictRecorded` event appended to the active Session.
    pub event: TestEvent,
}
