//! Media streams: Session-scoped sequences of screenshot Evidence.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::bounded::presence::is_false;
use crate::bounded::{BoundedString, EventSequence, SafeU64};
use crate::ids::MediaStreamId;
use crate::observation::{AssetRef, Viewport};

/// What a stream's frames are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum MediaStreamKind {
    /// Independent screenshots.
    Screenshot,
    /// A timed sequence of independent PNG key frames (not a container).
    Video,
}

/// One media stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MediaStreamInfo {
    pub id: MediaStreamId,
    pub kind: MediaStreamKind,
    /// Chosen by the host from the device's producer.
    pub media_type: BoundedString<1, 255>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub viewport: Option<Viewport>,
}

/// One captured frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MediaFrame {
    pub stream_id: MediaStreamId,
    /// One-based, without gaps.
    pub frame_index: EventSequence,
    #[serde(default, skip_serializing_if = "is_false")]
    pub key_frame: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<SafeU64>,
    pub evidence: AssetRef,
}

/// Parameters of `media.stream.start`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MediaStreamStartParams {
    pub stream_id: MediaStreamId,
    pub kind: MediaStreamKind,
}

/// Result of `media.stream.start`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MediaStreamStartResult {
    pub stream: MediaStreamInfo,
}

/// Parameters of `media.stream.capture`. Retrying the last accepted
/// `frameIndex` returns the same frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MediaStreamCaptureParams {
    pub stream_id: MediaStreamId,
    pub frame_index: EventSequence,
    /// Required (and positive) for `video` streams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<SafeU64>,
}

/// Result of `media.stream.capture`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MediaStreamCaptureResult {
    pub frame: MediaFrame,
}

/// Parameters of `media.stream.end`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MediaStreamEndParams {
    pub stream_id: MediaStreamId,
}

/// Result of `media.stream.end`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MediaStreamEndResult {
    pub stream_id: MediaStreamId,
    pub frame_count: SafeU64,
}
