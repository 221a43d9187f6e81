//! What a device's adb state means for its user. States are reported in
//! `device_unavailable` errors (`details.reason` is the state), never in
//! the device's name.

use devicerail_host_plugin_api::DriverError;
use devicerail_host_plugin_api::protocol::DeviceId;

/// The state adb reports for a usable device.
pub(crate) const USABLE: &str = "device";

/// What to do about a non-`device` state.
pub(crate) fn state_hint(state: &str) -> &'static str {
    match state {
        "offline" => "adb cannot talk to it; reconnect it or restart adbd",
        "unauthorized" => "accept the USB debugging prompt on the device",
        "authorizing" => "it is still deciding whether to trust this computer",
        "connecting" => "adb is still connecting to it",
        "bootloader" | "recovery" | "sideload" | "rescue" => "it is not running Android",
        s if s.starts_with("no permissions") || s == "noperm" => {
            "adb may not open the USB device; check the udev rules"
        }
        "host" => "the entry is another adb host, not a device",
        _ => "adb cannot use it in this state",
    }
}

/// Why a non-`device` state cannot be used, for people.
pub(crate) fn state_reason(state: &str) -> String {
    format!("the device is {state}: {}", state_hint(state))
}

/// The error for using a device in `state`: `device_unavailable` whose
/// `details.reason` is the state.
pub(crate) fn state_error(device: &DeviceId, state: &str) -> DriverError {
    DriverError::device_in_state(device, state, state_hint(state))
}

/// The state named in an adb server's refusal (`device offline`,
/// `device unauthorized. ...`), if it names one.
pub(crate) fn state_in_message(message: &str) -> Option<&'static str> {
    let lower = message.to_ascii_lowercase();
    [
        ("unauthorized", "unauthorized"),
        ("authorizing", "authorizing"),
        ("offline", "offline"),
        ("connecting", "connecting"),
        ("no permissions", "no permissions"),
    ]
    .into_iter()
    .find(|(needle, _)| lower.contains(needle))
    .map(|(_, state)| state)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_texts() {
        assert!(state_reason("unauthorized").contains("USB debugging prompt"));
        assert!(state_hint("no permissions (udev)").contains("udev"));
        assert!(state_reason("recovery").contains("not running Android"));
        assert_eq!(state_in_message("device offline"), Some("offline"));
        assert_eq!(
            state_in_message("device unauthorized.\nThis adb server's $ADB_VENDOR_KEYS is not set"),
            Some("unauthorized")
        );
        assert_eq!(state_in_message("device 'x' not found"), None);
    }

    #[test]
    fn the_state_is_the_reason() {
        let e = state_error(&DeviceId::new("127.0.0.1:5"), "offline");
        assert_eq!(e.details["reason"], "offline");
        assert!(e.message.contains("reconnect"), "{}", e.message);
    }
}
