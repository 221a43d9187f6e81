//! The idiomatic interface a driver author implements. Nothing here is an
//! FFI type: [`crate::export_plugin!`] adapts a [`Driver`] to the stable ABI.

use devicerail_host_protocol::{
    ActionCall, ActionDefinition, ActionExecution, DeviceId, DeviceInfo, UiContextRef, UiNode,
    Viewport,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::config::ConfigReader;
use crate::context::CallContext;
pub use crate::error::{
    CustomCode, DriverCode, DriverError, DriverResult, InvalidCode, platform_code,
};

/// What the host wants from one observation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObserveRequest {
    /// Capture PNG screenshot bytes.
    pub screenshot: bool,
    /// Build the normalized UI tree (only drivers that advertise UI
    /// snapshots are asked).
    pub ui_tree: bool,
    /// A live view's frame, never recorded (the lab console): see
    /// [`LiveRequest`]. A driver that ignores it answers an ordinary
    /// observation and the host compares screenshots itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live: Option<LiveRequest>,
}

/// A request for a device's live screen. A driver that keeps a stream of
/// its screen (the browser's screencast) answers from it: `png` holds the
/// newest frame (in the media type [`LiveFrame`] names) when its number is
/// above `after`, else nothing, and [`LiveFrame::attach`] describes it in
/// the observation's metadata. Answer quickly: the host polls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LiveRequest {
    /// The newest frame number the viewer has (0: none).
    pub after: u64,
}

/// What a driver answering a [`LiveRequest`] says about its frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LiveFrame {
    /// The frame's number, growing whenever the screen changed.
    pub seq: u64,
    /// `image/png` or `image/jpeg`.
    pub media_type: String,
    /// When the frame was captured, in Unix milliseconds.
    pub captured_at_ms: u64,
}

impl LiveFrame {
    /// The metadata member that carries it.
    pub const KEY: &'static str = "liveFrame";

    /// Describes `obs` as this live frame.
    pub fn attach(&self, obs: &mut DriverObservation) {
        if let Ok(v) = serde_json::to_value(self) {
            obs.metadata.insert(Self::KEY.to_owned(), v);
        }
    }

    /// The live frame `obs` describes, if its driver answered one.
    pub fn of(obs: &DriverObservation) -> Option<Self> {
        obs.metadata
            .get(Self::KEY)
            .and_then(|v| serde_json::from_value(v.clone()).ok())
    }
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
    /// Not checked, because it cannot apply here (the iOS Simulator on a
    /// host that is not macOS, say); `detail` says why. Never a failure.
    /// Added in plugin ABI 1.2: hosts before it read a plugin's checks as
    /// unreadable when one is skipped.
    Skip,
}

/// One environment check reported by `devicerail doctor`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DoctorCheck {
    /// What was checked, in a few words (`adb server`, `xcrun`).
    pub name: String,
    /// Whether it passed, passed with a warning, or failed.
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

    /// A check that does not apply here, with why.
    pub fn skip(name: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            status: CheckStatus::Skip,
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

/// Why the host loads a plugin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LoadPurpose {
    /// The host serves the protocol with this driver: it may start what it
    /// needs (an adb server, a browser) when it needs it.
    #[default]
    Serve,
    /// The host only inspects the plugin (`plugins install`, `plugins
    /// list`, `doctor`): the driver must start no external server or
    /// long-lived process. Listing devices and doctor checks still run,
    /// against what is already there.
    Inspect,
}

impl LoadPurpose {
    /// Whether the driver may start external servers or processes.
    pub fn may_start_servers(self) -> bool {
        self == Self::Serve
    }

    /// The purpose as it crosses the ABI.
    pub fn to_ffi(self) -> &'static str {
        match self {
            Self::Serve => crate::ffi::PURPOSE_SERVE,
            Self::Inspect => crate::ffi::PURPOSE_INSPECT,
        }
    }

    /// The purpose from the ABI; an unknown value is the cautious
    /// [`LoadPurpose::Inspect`].
    pub fn from_ffi(value: &str) -> Self {
        if value == crate::ffi::PURPOSE_SERVE {
            Self::Serve
        } else {
            Self::Inspect
        }
    }

    /// `serve` or `inspect`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Serve => "serve",
            Self::Inspect => "inspect",
        }
    }
}

/// Configuration handed to a driver's constructor.
#[derive(Debug, Clone, Default)]
pub struct PluginConfig {
    /// Host-provided settings (JSON object: the plugin's table of the
    /// host's configuration file); drivers also read their documented
    /// environment variables.
    pub settings: Map<String, Value>,
    /// Why the plugin is loaded. A driver loaded to
    /// [`LoadPurpose::Inspect`] starts no external server.
    pub purpose: LoadPurpose,
}

impl PluginConfig {
    /// `settings` for serving.
    pub fn new(settings: Map<String, Value>) -> Self {
        Self {
            settings,
            purpose: LoadPurpose::Serve,
        }
    }

    /// The same settings for `purpose`.
    #[must_use]
    pub fn with_purpose(mut self, purpose: LoadPurpose) -> Self {
        self.purpose = purpose;
        self
    }

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
