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
    /// The caller-chosen stream id.
    pub id: MediaStreamId,
    /// Whether frames are screenshots or timed video frames.
    pub kind: MediaStreamKind,
    /// Chosen by the host from the device's producer.
    pub media_type: BoundedString<1, 255>,
    /// The device's screen when the stream started; absent when unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub viewport: Option<Viewport>,
}

/// One captured frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MediaFrame {
    /// The stream the frame belongs to.
    pub stream_id: MediaStreamId,
    /// One-based, without gaps.
    pub frame_index: EventSequence,
    /// `true` for a key frame; absent means `false`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub key_frame: bool,
    /// How long the frame is shown, in milliseconds; every `video` frame
    /// has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<SafeU64>,
    /// The frame's screenshot Evidence (stored PNG bytes).
    pub evidence: AssetRef,
}

/// Parameters of `media.stream.start`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MediaStreamStartParams {
    /// A new id, never used before in this daemon's lifetime.
    pub stream_id: MediaStreamId,
    /// The kind of frames to capture.
    pub kind: MediaStreamKind,
}

/// Result of `media.stream.start`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MediaStreamStartResult {
    /// The opened stream, with the media type the host chose.
    pub stream: MediaStreamInfo,
}

/// Parameters of `media.stream.capture`. Retrying the last accepted
/// `frameIndex` returns the same frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MediaStreamCaptureParams {
    /// The open stream to capture into.
    pub stream_id: MediaStreamId,
    /// One-based index of the frame: the next index, or the last accepted
    /// one to retry it.
    pub frame_index: EventSequence,
    /// Required (and positive) for `video` streams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<SafeU64>,
}

/// Result of `media.stream.capture`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MediaStreamCaptureResult {
    /// The captured frame (on a retry, the frame captured before).
    pub frame: MediaFrame,
}

/// Parameters of `media.stream.end`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MediaStreamEndParams {
    /// The open stream to close.
    pub stream_id: MediaStreamId,
}

/// Result of `media.stream.end`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MediaStreamEndResult {
    /// The closed stream.
    pub stream_id: MediaStreamId,
    /// How many frames the stream captured.
    pub frame_count: SafeU64,
}
