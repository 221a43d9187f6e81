//! Devices and routing DTOs.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::bounded::presence::tristate;
use crate::ids::DeviceId;

/// The platform family of a device.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Platform {
    Web,
    Android,
    Ios,
    HarmonyOs,
    MacOs,
    Windows,
    Linux,
    Rdp,
    Mock,
    /// A platform outside the list, named by `value`.
    Other {
        value: String,
    },
}

/// One device a driver can reach.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeviceInfo {
    pub id: DeviceId,
    pub name: String,
    pub platform: Platform,
    /// The OS version when the driver knows it.
    #[serde(default)]
    pub os_version: Option<String>,
    /// Whether the device is connected (leased) right now.
    pub connected: bool,
}

/// Result of `devices.list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DevicesListResult {
    pub devices: Vec<DeviceInfo>,
    /// Present only when `device.routing.v1` was negotiated; then the
    /// connection's selection, or `null` when nothing is selected.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "tristate")]
    #[schemars(with = "Option<DeviceId>")]
    pub selected_device_id: Option<Option<DeviceId>>,
}

/// Parameters of `device.select`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeviceSelectParams {
    pub device_id: DeviceId,
}

/// Result of `device.select`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeviceSelectResult {
    pub device: DeviceInfo,
}

/// Result of `device.disconnect`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeviceDisconnectResult {
    pub disconnected: bool,
}
