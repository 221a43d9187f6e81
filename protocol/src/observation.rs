//! Observations and Evidence references.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::bounded::SafeU64;
use crate::ids::{DeviceId, ObservationId};
use crate::ui::UiSnapshotRef;

pub use crate::asset::AssetRef;

/// Media type of screenshot Evidence.
pub const PNG_MEDIA_TYPE: &str = "image/png";
/// Media type of UI snapshot Evidence.
pub const UI_TREE_MEDIA_TYPE: &str = "application/vnd.devicerail.ui-tree+json;version=1";

/// The device's logical screen.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Viewport {
    /// Width in physical pixels.
    // schemars states only `minimum` for `u32`; the upper bound is part of
    // the contract too.
    #[schemars(range(max = u32::MAX))]
    pub width: u32,
    /// Height in physical pixels.
    #[schemars(range(max = u32::MAX))]
    pub height: u32,
    /// Physical pixels per logical point.
    pub scale_factor: f64,
}

/// Why an Observation or Action carries no screenshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ScreenshotOmissionReason {
    /// The host's screenshot policy is `omit`.
    Policy,
    /// The Observation belongs to a protected or unknown Action.
    ProtectedAction,
}

/// Why an Observation carries no UI snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum UiSnapshotOmissionReason {
    /// The driver cannot produce UI trees.
    DriverUnsupported,
    /// Policy disabled UI capture.
    Policy,
    /// The Observation belongs to a protected or unknown Action.
    ProtectedAction,
}

/// What the host saw on a device at one instant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Observation {
    /// Unique id of the Observation; `ui.snapshot.get` takes it.
    pub id: ObservationId,
    /// The device observed.
    pub device_id: DeviceId,
    /// When the Observation was captured, in Unix milliseconds.
    pub captured_at_ms: SafeU64,
    /// The screen's size and scale at capture time.
    pub viewport: Viewport,
    /// The screenshot Evidence, or `null`.
    #[serde(default)]
    pub screenshot: Option<AssetRef>,
    /// Set exactly when `screenshot` was deliberately omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshot_omission: Option<ScreenshotOmissionReason>,
    /// The UI snapshot reference, when one was captured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ui_snapshot: Option<UiSnapshotRef>,
    /// Set when a UI snapshot was wanted but omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ui_snapshot_omission: Option<UiSnapshotOmissionReason>,
    /// Driver metadata (orientation, URL, title, ...).
    #[serde(default)]
    pub metadata: serde_json::Map<String, serde_json::Value>,
}
