//! The idiomatic interface a driver author implements. Nothing here is an
//! FFI type: [`crate::export_plugin!`] adapts a [`Driver`] to the stable ABI.

use devicerail_protocol::{
    ActionCall, ActionDefinition, ActionExecution, DeviceId, DeviceInfo, ErrorCode, ErrorInfo,
    UiContextRef, UiNode, Viewport,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::context::CallContext;

/// A driver's result type.
pub type DriverResult<T> = Result<T, DriverError>;

/// A typed failure reported by a driver. `code` is a stable string: one of
/// the driver codes of [`ErrorCode`] or a driver-specific code.
#[derive(Debug, Clone, PartialEq, thiserror::Error, Serialize, Deserialize)]
#[error("{code}: {message}")]
pub struct DriverError {
    pub code: String,
    pub message: String,
    pub retryable: bool,
    #[serde(default)]
    pub details: Value,
}

impl DriverError {
    /// An error with a catalog code.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code: code.as_str().to_owned(),
            message: message.into(),
            retryable: code.retryable(),
            details: Value::Null,
        }
    }

    /// An error with a driver-specific code.
    pub fn custom(code: impl Into<String>, message: impl Into<String>, retryable: bool) -> Self {
        Self {
            code: code.into(),
            message: message.into(),
            retryable,
            details: Value::Null,
        }
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

    pub fn unknown_action(name: &str) -> Self {
        Self::new(ErrorCode::UnknownAction, format!("unknown action {name:?}"))
            .with_details(serde_json::json!({ "action": name }))
    }

    pub fn invalid_arguments(action: &str, reason: impl std::fmt::Display) -> Self {
        Self::new(
            ErrorCode::InvalidArguments,
            format!("{action} arguments are invalid: {reason}"),
        )
        .with_details(serde_json::json!({ "action": action, "reason": reason.to_string() }))
    }

    pub fn device_not_found(device: &DeviceId) -> Self {
        Self::new(ErrorCode::DeviceNotFound, format!("no device {device}"))
            .with_details(serde_json::json!({ "deviceId": device }))
    }

    pub fn device_unavailable(device: &DeviceId, reason: impl Into<String>) -> Self {
        let reason = reason.into();
        Self::new(
            ErrorCode::DeviceUnavailable,
            format!("device {device} is unavailable: {reason}"),
        )
        .with_details(serde_json::json!({ "deviceId": device, "reason": reason }))
    }

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

    pub fn is_cancellation(&self) -> bool {
        self.code == ErrorCode::RequestCancelled.as_str()
    }

    pub fn is_deadline(&self) -> bool {
        self.code == ErrorCode::RequestTimedOut.as_str()
    }

    /// The wire form.
    pub fn into_info(self) -> ErrorInfo {
        ErrorInfo {
            code: self.code,
            message: self.message,
            retryable: self.retryable,
            details: self.details,
        }
    }
}

/// `code` when it is a valid platform code (`[a-z0-9_.-]{1,64}`), else
/// `unknown`.
pub fn platform_code(code: &str) -> &str {
    let valid = (1..=64).contains(&code.len())
        && code
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_.-".contains(&b));
    if valid { code } else { "unknown" }
}

impl From<ErrorInfo> for DriverError {
    fn from(e: ErrorInfo) -> Self {
        Self {
            code: e.code,
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
    pub context: UiContextRef,
    pub root_stable_node_ids: Vec<String>,
    /// Preorder, each parent before its contiguous descendants.
    pub nodes: Vec<UiNode>,
}

/// What a driver saw.
#[derive(Debug, Clone, PartialEq)]
pub struct DriverObservation {
    pub viewport: Viewport,
    /// PNG bytes, when a screenshot was requested.
    pub png: Option<Vec<u8>>,
    pub ui_tree: Option<UiTree>,
    pub metadata: Map<String, Value>,
}

impl DriverObservation {
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
    pub actions: Vec<ActionDefinition>,
    /// Whether `observe` builds normalized UI trees.
    pub ui_tree: bool,
}

/// Health of one device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceHealth {
    pub healthy: bool,
    pub detail: String,
}

/// Outcome of one `doctor` check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum CheckStatus {
    Ok,
    Warn,
    Fail,
}

/// One environment check reported by `devicerail doctor`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DoctorCheck {
    pub name: String,
    pub status: CheckStatus,
    pub detail: String,
}

impl DoctorCheck {
    pub fn ok(name: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            status: CheckStatus::Ok,
            detail: detail.into(),
        }
    }
    pub fn warn(name: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            status: CheckStatus::Warn,
            detail: detail.into(),
        }
    }
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
    pub version: String,
    pub description: String,
}

/// Configuration handed to a driver's constructor.
#[derive(Debug, Clone, Default)]
pub struct PluginConfig {
    /// Host-provided settings (JSON object); drivers also read their
    /// documented environment variables.
    pub settings: Map<String, Value>,
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
