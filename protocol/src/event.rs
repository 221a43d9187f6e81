//! Recorded events: the append-only facts of a Session.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::action::{ActionOutcome, RecordedActionCall};
use crate::bounded::{EventSequence, SafeU64};
use crate::errors::ErrorInfo;
use crate::ids::{CallId, DeviceId, EventId, MediaStreamId, RpcId, SessionId};
use crate::media::{MediaFrame, MediaStreamInfo};
use crate::observation::Observation;
use crate::session::SessionOutcome;
use crate::verdict::Verdict;

/// One fact in a Session's log. `sequence` orders the log; `atMs` is
/// informational.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TestEvent {
    pub event_id: EventId,
    pub session_id: SessionId,
    pub sequence: EventSequence,
    /// The RPC request that produced the event, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<RpcId>,
    /// The device the event concerns, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_id: Option<DeviceId>,
    pub at_ms: SafeU64,
    pub payload: TestEventPayload,
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
// Wire DTO: variants are serialized in place; boxing buys nothing here.
#[allow(clippy::large_enum_variant)]
#[serde(tag = "type", rename_all = "camelCase", deny_unknown_fields)]
pub enum TestEventPayload {
    SessionStarted,
    SessionEnded {
        outcome: SessionOutcome,
        #[serde(default)]
        reason: Option<String>,
    },
    ObservationCaptured {
        observation: Observation,
    },
    ActionStarted {
        call: RecordedActionCall,
    },
    #[serde(rename_all = "camelCase")]
    ActionCompleted {
        call_id: CallId,
        outcome: ActionOutcome,
    },
    MediaStreamStarted {
        stream: MediaStreamInfo,
    },
    MediaFrameCaptured {
        frame: MediaFrame,
    },
    #[serde(rename_all = "camelCase")]
    MediaStreamEnded {
        stream_id: MediaStreamId,
        frame_count: SafeU64,
    },
    VerdictRecorded {
        verdict: Verdict,
    },
    Error {
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
