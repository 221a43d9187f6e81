//! Manual recordings: ordered, human-selected Action templates.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::bounded::{BoundedString, BoundedVec, EventSequence, SafeU64};
use crate::ids::{CallId, DeviceId, RecordingId};

/// The arguments of one recorded step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "camelCase", deny_unknown_fields)]
pub enum ManualActionArguments {
    /// Arguments safe to store.
    Captured {
        /// The arguments, exactly as the Action was called with them.
        value: serde_json::Value,
    },
    /// A protected Action: only an opaque reference the replay host
    /// resolves to the real arguments at execution time.
    #[serde(rename_all = "camelCase")]
    Protected {
        /// Opaque handle of 1 to 128 characters that the replay host
        /// resolves; never the secret itself.
        secret_ref: BoundedString<1, 128>,
    },
}

/// One step of a recording.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ManualActionStep {
    /// One-based position of the step in the recording.
    pub sequence: EventSequence,
    /// When the step was recorded, in Unix milliseconds.
    pub captured_at_ms: SafeU64,
    /// The id of the original Action call.
    pub call_id: CallId,
    /// The Action's name (1 to 128 characters).
    pub name: BoundedString<1, 128>,
    /// The step's arguments: stored, or a reference for protected Actions.
    pub arguments: ManualActionArguments,
}

/// A driver-neutral recording of human-selected Actions, tied to the
/// digest of the action space it was made against.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ManualRecording {
    /// Version of this document format; currently 1.
    pub format_version: u16,
    /// Unique id of the recording.
    pub recording_id: RecordingId,
    /// The device the steps were recorded on.
    pub source_device_id: DeviceId,
    /// Hex SHA-256 of the canonical action space.
    pub action_space_sha256: BoundedString<64, 64>,
    /// When recording started, in Unix milliseconds.
    pub started_at_ms: SafeU64,
    /// When recording ended, in Unix milliseconds.
    pub ended_at_ms: SafeU64,
    /// The steps in replay order; at most 10,000.
    pub steps: BoundedVec<ManualActionStep, 0, 10000>,
}
