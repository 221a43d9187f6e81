//! The device-lab extension of this host (not part of DeviceRail 1.5): what
//! a lab console shows a person, read without taking anything. Every
//! device with its plugin, its worker's health and who holds it; a
//! device's live screen, never recorded; and any Session's events as
//! they are committed, whoever runs it.
//!
//! A connection that offers [`LAB_FEATURE`] in `system.hello` (the host
//! then lists it in `features.enabled`) may call the three methods below.
//! They only read: no lease is taken, nothing is recorded, and a device
//! someone else holds can still be watched. Any client of the control
//! socket (which only its owner can open) may use them; a client that does
//! not offer the feature sees no difference.
//!
//! What it must never carry: a reservation's token or the arguments of a
//! protected Action (events come as the log recorded them, redacted).

use crate::bounded::SafeU64;
use crate::device::DeviceInfo;
use crate::event::TestEvent;
use crate::handshake::PeerInfo;
use crate::ids::{DeviceId, SessionId};
use serde::{Deserialize, Serialize};

/// The feature a client offers to use the lab methods.
pub const LAB_FEATURE: &str = "devicerailHost.lab.v1";
/// `devicerailHost.lab.status`: every device, its plugin, health and holder.
pub const LAB_STATUS: &str = "devicerailHost.lab.status";
/// `devicerailHost.lab.frame`: a device's live screen, when it changed.
pub const LAB_FRAME: &str = "devicerailHost.lab.frame";
/// `devicerailHost.lab.events`: a Session's events after a sequence.
pub const LAB_EVENTS: &str = "devicerailHost.lab.events";
/// The lab methods.
pub const LAB_METHODS: &[&str] = &[LAB_STATUS, LAB_FRAME, LAB_EVENTS];

/// Longest a [`LAB_FRAME`] or [`LAB_EVENTS`] call waits for something new.
pub const LAB_WAIT_MAX_MS: u32 = 5_000;
/// Most events one [`LAB_EVENTS`] answer carries.
pub const LAB_EVENTS_MAX: u32 = 200;

/// Whether the plugin serving a device can serve it now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum WorkerHealth {
    /// Its worker (or the inline plugin) is serving.
    Up,
    /// Its worker is starting or being restarted by the supervisor.
    Restarting,
    /// Its worker died and was not (or could not be) restarted yet.
    Crashed,
    /// The host is shutting down.
    Stopping,
}

/// A connection's lease, as the lab sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LabLease {
    /// The holding client, as its hello named it.
    #[serde(default)]
    pub client: Option<PeerInfo>,
    /// When the lease was taken, in Unix milliseconds.
    pub since_ms: SafeU64,
    /// Whether it was taken with the device's reservation token.
    pub by_reservation: bool,
}

/// A device's reservation, as the lab sees it (the label, never the token).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LabReservation {
    /// Who it is for.
    pub label: String,
    /// When it was made, in Unix milliseconds.
    pub since_ms: SafeU64,
}

/// One device of [`LAB_STATUS`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LabDevice {
    /// The device as `devices.list` describes it.
    pub device: DeviceInfo,
    /// The plugin that serves it.
    pub plugin: String,
    /// Its plugin's health.
    pub health: WorkerHealth,
    /// Why it cannot be used now, in a few words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The connection holding it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<LabLease>,
    /// Its reservation, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reservation: Option<LabReservation>,
    /// What the plugin's `doctor` checks say is wrong, when the device is
    /// not usable (empty otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub doctor: Vec<String>,
}

/// Result of [`LAB_STATUS`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LabStatusResult {
    /// Every registered device, in `devices.list` order.
    pub devices: Vec<LabDevice>,
}

/// Params of [`LAB_FRAME`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LabFrameParams {
    /// The device to watch.
    pub device_id: DeviceId,
    /// The last frame the caller has (0: none yet).
    #[serde(default)]
    pub after_seq: u64,
    /// How long to wait for a newer frame (at most [`LAB_WAIT_MAX_MS`]).
    #[serde(default)]
    pub wait_ms: u32,
}

/// Result of [`LAB_FRAME`]: the newest frame, or only its number when the
/// caller has it already (nothing changed within the wait).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LabFrameResult {
    /// The frame's number; grows whenever the screen changed.
    pub seq: u64,
    /// The frame, when newer than `afterSeq`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame: Option<LabFrame>,
}

/// One live frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LabFrame {
    /// `image/png` or `image/jpeg`.
    pub media_type: String,
    /// Width in screenshot pixels.
    pub width: u32,
    /// Height in screenshot pixels.
    pub height: u32,
    /// When the driver captured it, in Unix milliseconds.
    pub captured_at_ms: u64,
    /// The image, base64.
    pub data: String,
}

/// Params of [`LAB_EVENTS`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LabEventsParams {
    /// The Session, running or ended.
    pub session_id: SessionId,
    /// Events after this sequence (0: from the start).
    #[serde(default)]
    pub after_sequence: u64,
    /// How many at most (default and maximum [`LAB_EVENTS_MAX`]).
    #[serde(default)]
    pub limit: Option<u32>,
    /// How long to wait when there is nothing new yet (at most
    /// [`LAB_WAIT_MAX_MS`]).
    #[serde(default)]
    pub wait_ms: u32,
}

/// Result of [`LAB_EVENTS`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LabEventsResult {
    /// The events, in sequence order, as `events.list` shows them.
    pub events: Vec<TestEvent>,
    /// Whether the Session has ended (and every event of it was sent).
    pub ended: bool,
}
