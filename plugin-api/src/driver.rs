//! The idiomatic interface a driver author implements. Nothing here is an
//! FFI type: [`crate::export_plugin!`] adapts a [`Driver`] to the stable ABI.

use devicerail_protocol::{
    ActionCall, ActionDefinition, ActionExecution, DeviceId, DeviceInfo, ErrorCode, ErrorInfo,
    UiContextRef, UiNode, Viewport,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::config::ConfigReader;
use crate::context::CallContext;

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

    /// The code text.
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

    /// The wire form.
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

/// What the host wants from one observation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObserveRequest {
    /// Capture PNG screenshot bytes.
    pub screenshot: bool,
    /// Build the normalized UI tree (only drivers that advertise UI
    /// snapshots are asked).
    pub ui_tree: bool,
}

/// A normalized UI tree as a driver builds it; the host adds the
/// Observation id and stores it as UI snapshot Evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UiTree {
    /// The UI context (and its document epoch) the tree belongs to.
    pub context: UiContextRef,
    /// Stable ids of the top-level nodes, in order.
    pub root_stable_node_ids: Vec<String>,
    /// Preorder, each parent before its contiguous descendants.
    pub nodes: Vec<UiNode>,
}

/// What a driver saw.
#[derive(Debug, Clone, PartialEq)]
pub struct DriverObservation {
    /// Size and scale of the screen, in screenshot pixels.
    pub viewport: Viewport,
    /// PNG bytes, when a screenshot was requested.
    pub png: Option<Vec<u8>>,
    /// The normalized UI tree, when one was requested.
    pub ui_tree: Option<UiTree>,
    /// Driver-specific facts about the device state (JSON members).
    pub metadata: Map<String, Value>,
}

impl DriverObservation {
    /// An observation of `viewport` with nothing else yet.
    pub fn new(viewport: Viewport) -> Self {
        Self {
            viewport,
            png: None,
            ui_tree: None,
            metadata: Map::new(),
        }
    }
}

/// The result of one Action.
#[derive(Debug, Clone, PartialEq)]
pub struct ActionOutput {
    /// The Action's output JSON (semantic Actions: their result types).
    pub output: Value,
    /// How a semantic Action was carried out.
    pub execution: Option<ActionExecution>,
    /// The UI state a semantic Action resolved its target against. The host
    /// stores it as the result's `before` Observation, under the id
    /// [`CallContext::observation_id`]; node references in `output` must
    /// use that id.
    pub resolved: Option<DriverObservation>,
}

impl ActionOutput {
    /// A plain result with `output` and no execution metadata.
    pub fn new(output: Value) -> Self {
        Self {
            output,
            execution: None,
            resolved: None,
        }
    }
}

/// A device's action space and observation abilities.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeviceCapabilities {
    /// The action space, every Action with its input schema.
    pub actions: Vec<ActionDefinition>,
    /// Whether `observe` builds normalized UI trees.
    pub ui_tree: bool,
}

/// Health of one device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceHealth {
    /// Whether the device is usable right now.
    pub healthy: bool,
    /// Why, in a few words.
    pub detail: String,
}

/// Outcome of one `doctor` check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum CheckStatus {
    /// The check passed.
    Ok,
    /// Something is off but the driver can work.
    Warn,
    /// The driver cannot work until this is fixed.
    Fail,
}

/// One environment check reported by `devicerail doctor`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DoctorCheck {
    /// What was checked.
    pub name: String,
    /// The outcome.
    pub status: CheckStatus,
    /// What was found, or how to fix it.
    pub detail: String,
}

impl DoctorCheck {
    /// A passed check.
    pub fn ok(name: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            status: CheckStatus::Ok,
            detail: detail.into(),
        }
    }

    /// A check with a warning.
    pub fn warn(name: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            status: CheckStatus::Warn,
            detail: detail.into(),
        }
    }

    /// A failed check.
    pub fn fail(name: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            status: CheckStatus::Fail,
            detail: detail.into(),
        }
    }
}

/// Static facts about a plugin, declared in [`crate::export_plugin!`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginIdentity {
    /// Lower-case id, `[a-z0-9-]+`; the library is `devicerail_plugin_<id>`
    /// with dashes as underscores.
    pub id: String,
    /// The plugin crate's version.
    pub version: String,
    /// One line saying what the plugin drives.
    pub description: String,
}

/// Configuration handed to a driver's constructor.
#[derive(Debug, Clone, Default)]
pub struct PluginConfig {
    /// Host-provided settings (JSON object); drivers also read their
    /// documented environment variables.
    pub settings: Map<String, Value>,
}

impl PluginConfig {
    /// A reader of the settings with the process environment as fallback
    /// (see [`crate::config`]).
    pub fn reader(&self) -> ConfigReader<'_> {
        ConfigReader::new(&self.settings)
    }
}

/// A device backend. Calls are blocking and may arrive concurrently from
/// several host threads; implementations synchronize internally. A driver
/// may run its own async runtime inside.
///
/// Every call receives a [`CallContext`] carrying the absolute deadline and
/// a cancellation flag; long-running work should poll it.
pub trait Driver: Send + Sync + 'static {
    /// Lists the devices this driver can reach, connected or not. Called
    /// again whenever the host refreshes its registry.
    fn list_devices(&self, ctx: &CallContext) -> DriverResult<Vec<DeviceInfo>>;

    /// Connects (leases) a device and returns its fresh info.
    fn connect(&self, ctx: &CallContext, device: &DeviceId) -> DriverResult<DeviceInfo>;

    /// Releases a device. Disconnecting a device that is not connected is
    /// not an error.
    fn disconnect(&self, ctx: &CallContext, device: &DeviceId) -> DriverResult<()>;

    /// Reports whether a device is usable right now.
    fn health(&self, ctx: &CallContext, device: &DeviceId) -> DriverResult<DeviceHealth> {
        let _ = (ctx, device);
        Ok(DeviceHealth {
            healthy: true,
            detail: "no health probe".into(),
        })
    }

    /// The device's action space, and whether `observe` can build UI trees
    /// for it. Semantic Actions may appear only when it can.
    fn capabilities(
        &self,
        ctx: &CallContext,
        device: &DeviceId,
    ) -> DriverResult<DeviceCapabilities>;

    /// Observes the device.
    fn observe(
        &self,
        ctx: &CallContext,
        device: &DeviceId,
        request: &ObserveRequest,
    ) -> DriverResult<DriverObservation>;

    /// Executes one Action of the action space.
    fn execute(
        &self,
        ctx: &CallContext,
        device: &DeviceId,
        call: &ActionCall,
    ) -> DriverResult<ActionOutput>;

    /// Environment checks for `devicerail doctor`.
    fn doctor(&self) -> Vec<DoctorCheck> {
        Vec::new()
    }
}
