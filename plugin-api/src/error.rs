//! A driver's typed failure: [`DriverError`] and its [`DriverCode`], a
//! code of the protocol's catalog or one the driver invents. This module
//! holds only the error type; it never depends on the driver interface.

use devicerail_host_protocol::{DeviceId, ErrorCode, ErrorInfo};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A driver's result type.
pub type DriverResult<T> = Result<T, DriverError>;

/// `code` when it is a valid driver-specific code (`[a-z0-9_.-]{1,64}`).
fn valid_custom_code(code: &str) -> bool {
    (1..=64).contains(&code.len())
        && code
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_.-".contains(&b))
}

/// A code that is not a valid driver code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a driver error code ([a-z0-9_.-]{{1,64}})")]
pub struct InvalidCode(pub String);

/// A driver-specific error code: 1 to 64 of `[a-z0-9_.-]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CustomCode(String);

impl CustomCode {
    /// The code used for driver codes that are not valid.
    pub const UNKNOWN: &'static str = "unknown";

    /// `code`, when it is valid.
    pub fn new(code: &str) -> Result<Self, InvalidCode> {
        if valid_custom_code(code) {
            Ok(Self(code.to_owned()))
        } else {
            Err(InvalidCode(code.to_owned()))
        }
    }

    /// The code text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The code of a [`DriverError`]: a code of the protocol's error catalog or
/// a driver-specific one. On the wire (and across the plugin ABI) it is
/// its text.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum DriverCode {
    /// A code of the error catalog.
    Known(ErrorCode),
    /// A driver-specific code (the host reports it as `platform_error`).
    Custom(CustomCode),
}

impl DriverCode {
    /// The code with this text: a catalog code when the catalog has it,
    /// else a valid custom code.
    pub fn parse(code: &str) -> Result<Self, InvalidCode> {
        match ErrorCode::from_code(code) {
            Some(known) => Ok(Self::Known(known)),
            None => CustomCode::new(code).map(Self::Custom),
        }
    }

    /// The code with this text as it arrives from another component:
    /// like [`DriverCode::parse`], with invalid text becoming the custom
    /// code `unknown`.
    pub fn from_wire(code: &str) -> Self {
        Self::parse(code).unwrap_or_else(|_| Self::Custom(CustomCode(CustomCode::UNKNOWN.into())))
    }

    /// The code text.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Known(code) => code.as_str(),
            Self::Custom(code) => code.as_str(),
        }
    }

    /// The catalog code, if it is one.
    pub fn known(&self) -> Option<ErrorCode> {
        match self {
            Self::Known(code) => Some(*code),
            Self::Custom(_) => None,
        }
    }
}

impl From<ErrorCode> for DriverCode {
    fn from(code: ErrorCode) -> Self {
        Self::Known(code)
    }
}

impl From<DriverCode> for String {
    fn from(code: DriverCode) -> Self {
        code.as_str().to_owned()
    }
}

impl std::fmt::Display for DriverCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for DriverCode {
    type Err = InvalidCode;

    fn from_str(code: &str) -> Result<Self, InvalidCode> {
        Self::parse(code)
    }
}

impl PartialEq<ErrorCode> for DriverCode {
    fn eq(&self, other: &ErrorCode) -> bool {
        self.known() == Some(*other)
    }
}

impl PartialEq<str> for DriverCode {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for DriverCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for DriverCode {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Serialize for DriverCode {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for DriverCode {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// A typed failure reported by a driver.
#[derive(Debug, Clone, PartialEq, thiserror::Error, Serialize, Deserialize)]
#[error("{code}: {message}")]
pub struct DriverError {
    /// A catalog code, or a driver-specific one.
    pub code: DriverCode,
    /// What went wrong, for people.
    pub message: String,
    /// Whether the same call may succeed if tried again.
    pub retryable: bool,
    /// Structured facts about the failure (`null` for none).
    #[serde(default)]
    pub details: Value,
}

impl DriverError {
    /// An error with a catalog code.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code: DriverCode::Known(code),
            message: message.into(),
            retryable: code.retryable(),
            details: Value::Null,
        }
    }

    /// An error with a driver-specific code (`[a-z0-9_.-]{1,64}`; catalog
    /// codes are recognized, anything invalid becomes `unknown`).
    pub fn custom(code: &str, message: impl Into<String>, retryable: bool) -> Self {
        Self {
            code: DriverCode::from_wire(code),
            message: message.into(),
            retryable,
            details: Value::Null,
        }
    }

    /// The code as it goes on the wire (`device_unavailable`, or the
    /// driver's own code).
    pub fn code_str(&self) -> &str {
        self.code.as_str()
    }

    /// Adds `details` (object members are merged into existing ones, so a
    /// `platformCode` survives; anything else replaces them).
    #[must_use]
    pub fn with_details(mut self, details: Value) -> Self {
        match (&mut self.details, details) {
            (Value::Object(existing), Value::Object(more)) => existing.extend(more),
            (slot, details) => *slot = details,
        }
        self
    }

    /// The device's action space has no Action `name` (`unknown_action`).
    pub fn unknown_action(name: &str) -> Self {
        Self::new(ErrorCode::UnknownAction, format!("unknown action {name:?}"))
            .with_details(serde_json::json!({ "action": name }))
    }

    /// The arguments of `action` are refused (`invalid_arguments`).
    pub fn invalid_arguments(action: &str, reason: impl std::fmt::Display) -> Self {
        Self::new(
            ErrorCode::InvalidArguments,
            format!("{action} arguments are invalid: {reason}"),
        )
        .with_details(serde_json::json!({ "action": action, "reason": reason.to_string() }))
    }

    /// The driver has no device `device` (`device_not_found`).
    pub fn device_not_found(device: &DeviceId) -> Self {
        Self::new(ErrorCode::DeviceNotFound, format!("no device {device}"))
            .with_details(serde_json::json!({ "deviceId": device }))
    }

    /// The device exists but cannot be used now (`device_unavailable`).
    pub fn device_unavailable(device: &DeviceId, reason: impl Into<String>) -> Self {
        let reason = reason.into();
        Self::new(
            ErrorCode::DeviceUnavailable,
            format!("device {device} is unavailable: {reason}"),
        )
        .with_details(serde_json::json!({ "deviceId": device, "reason": reason }))
    }

    /// The device is in a state it cannot be used in (`device_unavailable`):
    /// `details.reason` is the state itself (`offline`, `unauthorized`,
    /// `shutdown`, `booting`, ...), for clients to branch on; the message
    /// adds what to do about it. Drivers report states here, never in
    /// `DeviceInfo.name`.
    pub fn device_in_state(device: &DeviceId, state: &str, hint: &str) -> Self {
        Self::new(
            ErrorCode::DeviceUnavailable,
            format!("device {device} is unavailable: it is {state}: {hint}"),
        )
        .with_details(serde_json::json!({ "deviceId": device, "reason": state }))
    }

    /// The device must be connected first (`device_not_connected`).
    pub fn not_connected(device: &DeviceId) -> Self {
        Self::new(
            ErrorCode::DeviceNotConnected,
            format!("device {device} is not connected"),
        )
        .with_details(serde_json::json!({ "deviceId": device }))
    }

    /// The platform refused or failed the Action: `platform_error` with
    /// `platformCode: "action_failed"`.
    pub fn action_failed(message: impl Into<String>) -> Self {
        Self::platform("action_failed", message, false)
    }

    /// A platform adapter failure with the driver's own code
    /// (`[a-z0-9_.-]{1,64}`; anything else is reported as `unknown`).
    pub fn platform(code: &str, message: impl Into<String>, retryable: bool) -> Self {
        let mut e = Self::new(ErrorCode::PlatformError, message)
            .with_details(serde_json::json!({ "platformCode": platform_code(code) }));
        e.retryable = retryable;
        e
    }

    /// The driver failed internally (`internal_error`; retryable, as in the
    /// reference catalog).
    pub fn failure(message: impl Into<String>) -> Self {
        let mut e = Self::new(ErrorCode::InternalError, message);
        e.retryable = true;
        e
    }

    /// The driver panicked in `operation`; the panic was contained
    /// (`internal_error` with `cause: "driverPanicked"`).
    pub fn panicked(operation: &str, message: &str) -> Self {
        Self::failure(format!("the driver panicked in {operation}: {message}"))
            .with_details(serde_json::json!({ "cause": "driverPanicked" }))
    }

    /// The plugin worker process serving the call died, or was killed for
    /// not answering (`driver_crashed`, retryable: the host restarts it).
    pub fn crashed(plugin: &str, reason: impl Into<String>) -> Self {
        let reason = reason.into();
        Self::new(
            ErrorCode::DriverCrashed,
            format!("the worker process of plugin {plugin} crashed: {reason}"),
        )
        .with_details(serde_json::json!({ "plugin": plugin, "reason": reason }))
    }

    /// The call observed cancellation.
    pub fn cancelled() -> Self {
        Self::new(ErrorCode::RequestCancelled, "the call was cancelled")
    }

    /// The call's deadline passed.
    pub fn deadline_exceeded() -> Self {
        Self::new(ErrorCode::RequestTimedOut, "the call's deadline passed")
    }

    /// Whether the call stopped because it was cancelled.
    pub fn is_cancellation(&self) -> bool {
        self.code == ErrorCode::RequestCancelled
    }

    /// Whether the call stopped because its deadline passed.
    pub fn is_deadline(&self) -> bool {
        self.code == ErrorCode::RequestTimedOut
    }

    /// The protocol's error object (code, message, `retryable`, details):
    /// what a failure carries as `error.data`, or nests in an event.
    pub fn into_info(self) -> ErrorInfo {
        ErrorInfo {
            code: self.code.into(),
            message: self.message,
            retryable: self.retryable,
            details: self.details,
        }
    }
}

/// `code` when it is a valid platform code (`[a-z0-9_.-]{1,64}`), else
/// `unknown`.
pub fn platform_code<C: AsRef<str> + ?Sized>(code: &C) -> &str {
    let code = code.as_ref();
    if valid_custom_code(code) {
        code
    } else {
        CustomCode::UNKNOWN
    }
}

impl AsRef<str> for DriverCode {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl From<ErrorInfo> for DriverError {
    fn from(e: ErrorInfo) -> Self {
        Self {
            code: DriverCode::from_wire(&e.code),
            message: e.message,
            retryable: e.retryable,
            details: e.details,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_state_is_the_reason_and_the_hint_is_in_the_message() {
        let e = DriverError::device_in_state(
            &DeviceId::new("emulator-5554"),
            "unauthorized",
            "accept the USB debugging prompt",
        );
        assert_eq!(e.code, ErrorCode::DeviceUnavailable);
        assert!(e.retryable);
        assert_eq!(
            e.details,
            serde_json::json!({ "deviceId": "emulator-5554", "reason": "unauthorized" })
        );
        assert!(e.message.contains("USB debugging prompt"), "{}", e.message);
        // Every key survives the host's filter for this code.
        assert_eq!(
            ErrorCode::DeviceUnavailable.filtered_details(e.details.clone()),
            e.details
        );
    }
}
