//! Devices and routing DTOs.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::bounded::SafeU64;
use crate::bounded::presence::tristate;
use crate::ids::DeviceId;

/// The platform family of a device.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Platform {
    /// A page in a web browser.
    Web,
    /// An Android phone, tablet or emulator.
    Android,
    /// An iPhone or iPad, or an iOS simulator.
    Ios,
    /// A HarmonyOS device.
    HarmonyOs,
    /// A macOS desktop.
    MacOs,
    /// A Windows desktop.
    Windows,
    /// A Linux desktop.
    Linux,
    /// A remote desktop reached over RDP.
    Rdp,
    /// A simulated device for tests and demos.
    Mock,
    /// A platform outside the list, named by `value`.
    Other {
        /// The platform's name as the driver reports it.
        value: String,
    },
}

impl Platform {
    /// The platform's wire name (`web`, `android`, `harmonyOs`, …; a
    /// platform outside the list by its own name).
    #[must_use]
    pub fn name(&self) -> &str {
        match self {
            Self::Web => "web",
            Self::Android => "android",
            Self::Ios => "ios",
            Self::HarmonyOs => "harmonyOs",
            Self::MacOs => "macOs",
            Self::Windows => "windows",
            Self::Linux => "linux",
            Self::Rdp => "rdp",
            Self::Mock => "mock",
            Self::Other { value } => value,
        }
    }
}

/// One device a driver can reach.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeviceInfo {
    /// Driver-assigned id; `device.select` takes it.
    pub id: DeviceId,
    /// Human-readable name for display only.
    pub name: String,
    /// The platform family.
    pub platform: Platform,
    /// The OS version when the driver knows it.
    #[serde(default)]
    pub os_version: Option<String>,
    /// Whether the device is connected (leased) right now.
    pub connected: bool,
}

/// Which connection holds a device's lease, as seen by the asking one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum LeaseHolder {
    /// The connection that asked.
    ThisConnection,
    /// Another connection of the same host; it must disconnect (or close)
    /// before this one can connect the device or start a Session on it.
    AnotherConnection,
    /// No connection, but a reservation of the host's device pool holds
    /// it: only a connection presenting the reservation's token may take
    /// it (see [`crate::pool`]).
    Reservation,
}

/// A device's lease: a device connected (or used by a Session) through one
/// connection belongs to that connection until it disconnects the device
/// or closes. A reserved device no connection holds shows the reservation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeviceLease {
    /// Who holds it.
    pub holder: LeaseHolder,
    /// When the lease (or the reservation) was taken, in Unix
    /// milliseconds.
    pub since_ms: SafeU64,
}

/// One entry of `devices.list`: the device, and its lease when one is held.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListedDevice {
    /// The device as its driver describes it.
    #[serde(flatten)]
    pub device: DeviceInfo,
    /// Present while a connection or a reservation holds the device. (An
    /// extension of this host: clients that do not know it ignore it.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<DeviceLease>,
}

impl From<DeviceInfo> for ListedDevice {
    fn from(device: DeviceInfo) -> Self {
        Self {
            device,
            lease: None,
        }
    }
}

/// Result of `devices.list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DevicesListResult {
    /// Every registered device, in a stable order.
    pub devices: Vec<ListedDevice>,
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
    /// The device this connection's later device requests go to; must be a
    /// registered device.
    pub device_id: DeviceId,
}

/// Result of `device.select`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeviceSelectResult {
    /// The device now selected.
    pub device: DeviceInfo,
}

/// Result of `device.disconnect`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeviceDisconnectResult {
    /// `true` once the device has been released.
    pub disconnected: bool,
}

#[cfg(test)]
mod tests {
    use super::Platform;

    #[test]
    fn a_platforms_name_is_its_wire_kind() {
        let all = [
            Platform::Web,
            Platform::Android,
            Platform::Ios,
            Platform::HarmonyOs,
            Platform::MacOs,
            Platform::Windows,
            Platform::Linux,
            Platform::Rdp,
            Platform::Mock,
        ];
        for p in all {
            let wire = serde_json::to_value(&p).expect("encode");
            assert_eq!(wire["kind"], p.name(), "{wire}");
        }
        let other = Platform::Other {
            value: "tizen".into(),
        };
        assert_eq!(other.name(), "tizen");
    }
}
