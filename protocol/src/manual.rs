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
    Captured { value: serde_json::Value },
    /// A protected Action: only an opaque reference the replay host
    /// resolves to the real arguments at execution time.
    #[serde(rename_all = "camelCase")]
    Protected { secret_ref: BoundedString<1, 128> },
}

/// One step of a recording.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ManualActionStep {
    pub sequence: EventSequence,
    pub captured_at_ms: SafeU64,
    pub call_id: CallId,
    pub name: BoundedString<1, 128>,
    pub arguments: ManualActionArguments,
}

/// A driver-neutral recording of human-selected Actions, tied to the
/// digest of the action space it was made against.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ManualRecording {
    pub format_version: u16,
    pub recording_id: RecordingId,
    pub source_device_id: DeviceId,
    /// Hex SHA-256 of the canonical action space.
    pub action_space_sha256: BoundedString<64, 64>,
    pub started_at_ms: SafeU64,
    pub ended_at_ms: SafeU64,
    pub steps: BoundedVec<ManualActionStep, 0, 10000>,
}
