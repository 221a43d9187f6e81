//! The stable-ABI boundary between the host and a plugin library.
//!
//! Everything that crosses is `abi_stable` data: a prefix-type root module
//! (so later versions can append fields), one `#[sabi_trait]` driver
//! object, JSON text for structured values and raw bytes for images. The
//! host validates every JSON value against `devicerail-host-protocol` types.
//!
//! Plugin authors never use this module directly; [`crate::export_plugin!`]
//! generates the plugin side and [`crate::loader`] wraps the host side.

// `#[sabi_trait]` expands to impls the non-local-definitions lint flags.
#![allow(non_local_definitions)]

use std::sync::atomic::AtomicBool;

use abi_stable::library::RootModule;
use abi_stable::sabi_trait;
use abi_stable::std_types::{RArc, RBox, ROption, RResult, RStr, RString, RVec};
use abi_stable::{
    StableAbi, declare_root_module_statics, package_version_strings, sabi_types::VersionStrings,
};

/// Major version of this ABI. A host refuses plugins with another major.
/// Bump it for any change that is not an append to a prefix type.
pub const ABI_MAJOR: u32 = 1;
/// Minor version: features added compatibly.
///
/// * 1.0: `PluginMod::init` with the settings as JSON text.
/// * 1.1: the load purpose and located init errors. To a plugin whose
///   manifest says `abiMinor` ≥ 1, the host adds the member
///   [`HOST_MEMBER`] to the settings object: `{"purpose": "serve" |
///   "inspect"}` ([`PURPOSE_SERVE`], [`PURPOSE_INSPECT`]). The plugin
///   removes it before its driver sees the settings, and then answers an
///   init failure with the JSON text of [`InitFailure`]. A 1.0 plugin gets
///   neither and is initialized as for serving. No type changes layout:
///   abi_stable refuses a root module with fewer fields than the host's
///   (a layout check, not a version check), so appending an `init` variant
///   to [`PluginMod`] would lock out every 1.0 plugin.
/// * 1.2: doctor checks may say `skip` ([`crate::CheckStatus::Skip`]) for a
///   check that cannot apply on this host. No layout changes.
pub const ABI_MINOR: u32 = 2;

/// The settings member through which the host talks to a 1.1 plugin's
/// export glue (the driver never sees it).
pub const HOST_MEMBER: &str = "$devicerail";
/// Load purpose (1.1): the host serves the protocol with the plugin.
pub const PURPOSE_SERVE: &str = "serve";
/// Load purpose (1.1): the host only inspects the plugin (`plugins
/// install`, `plugins list`, `doctor`); the driver must start no external
/// server or long-lived process. A plugin treats any purpose it does not
/// know as this one.
pub const PURPOSE_INSPECT: &str = "inspect";

/// An init failure as a 1.1 plugin reports it (JSON text of the `init`
/// error) when the host sent [`HOST_MEMBER`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct InitFailure {
    /// What went wrong, for people.
    pub message: String,
    /// The settings key at fault (`key`, `list[index].key`), when the
    /// failure is about one setting whose value came from the settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setting: Option<String>,
}

/// A UUID as two `u64`s (big-endian halves), passed by value.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq, Eq)]
pub struct FfiUuid {
    /// The first eight bytes.
    pub high: u64,
    /// The last eight bytes.
    pub low: u64,
}

impl From<uuid::Uuid> for FfiUuid {
    fn from(u: uuid::Uuid) -> Self {
        let (high, low) = u.as_u64_pair();
        Self { high, low }
    }
}

impl From<FfiUuid> for uuid::Uuid {
    fn from(u: FfiUuid) -> Self {
        uuid::Uuid::from_u64_pair(u.high, u.low)
    }
}

/// Per-call context as it crosses the boundary.
#[repr(C)]
#[derive(StableAbi)]
pub struct FfiCallContext {
    /// Nanoseconds left until the call's deadline; `u64::MAX` means none.
    pub budget_ns: u64,
    /// Set by the host on cancellation or deadline expiry.
    pub cancelled: RArc<AtomicBool>,
    /// The Observation id reserved for this call.
    pub observation_id: FfiUuid,
    /// The RPC request id, for log correlation (may be empty).
    pub request_id: RString,
}

/// A typed driver failure.
#[repr(C)]
#[derive(StableAbi, Debug, Clone)]
pub struct FfiError {
    /// The error code's text (a catalog code or a driver code).
    pub code: RString,
    /// What went wrong, for people.
    pub message: RString,
    /// Whether the same call may succeed if tried again.
    pub retryable: bool,
    /// JSON text of the details, or empty for `null`.
    pub details: RString,
}

/// An observation: JSON (viewport, metadata, UI tree) plus PNG bytes.
#[repr(C)]
#[derive(StableAbi)]
pub struct FfiObservation {
    /// JSON of the viewport, metadata and UI tree.
    pub json: RString,
    /// PNG bytes of the screenshot, when one was requested.
    pub png: ROption<RVec<u8>>,
}

/// An Action result, each part as its own JSON text so the host decodes
/// only what is there.
#[repr(C)]
#[derive(StableAbi)]
pub struct FfiActionOutput {
    /// JSON of the Action's output.
    pub output: RString,
    /// JSON `ActionExecution`, or empty for none.
    pub execution: RString,
    /// The UI state a semantic Action resolved against.
    pub resolved: ROption<FfiObservation>,
}

/// Result type of FFI calls.
pub type FfiResult<T> = RResult<T, FfiError>;

/// The driver object a plugin's `init` returns. Methods may only be
/// appended (after the last prefix field) in later minor versions.
#[sabi_trait]
pub trait FfiDriver: Send + Sync {
    /// JSON `Vec<DeviceInfo>`.
    fn list_devices(&self, ctx: &FfiCallContext) -> FfiResult<RString>;
    /// JSON `DeviceInfo`.
    fn connect(&self, ctx: &FfiCallContext, device: RStr<'_>) -> FfiResult<RString>;
    /// Releases the device.
    fn disconnect(&self, ctx: &FfiCallContext, device: RStr<'_>) -> FfiResult<()>;
    /// JSON `DeviceHealth`.
    fn health(&self, ctx: &FfiCallContext, device: RStr<'_>) -> FfiResult<RString>;
    /// JSON `DeviceCapabilities`.
    fn capabilities(&self, ctx: &FfiCallContext, device: RStr<'_>) -> FfiResult<RString>;
    /// `request` is JSON `ObserveRequest`.
    fn observe(
        &self,
        ctx: &FfiCallContext,
        device: RStr<'_>,
        request: RStr<'_>,
    ) -> FfiResult<FfiObservation>;
    /// One Action: its call id, name, and the JSON text of its arguments.
    fn execute(
        &self,
        ctx: &FfiCallContext,
        device: RStr<'_>,
        call_id: FfiUuid,
        name: RStr<'_>,
        arguments: RStr<'_>,
    ) -> FfiResult<FfiActionOutput>;
    /// JSON `Vec<DoctorCheck>`.
    #[sabi(last_prefix_field)]
    fn doctor(&self) -> RString;
}

/// The boxed driver object.
pub type FfiDriverBox = FfiDriver_TO<'static, RBox<()>>;

/// The host's log sink, handed to the plugin at init.
#[sabi_trait]
pub trait FfiHostLog: Send + Sync {
    /// `level`: 1 = error ... 5 = trace.
    #[sabi(last_prefix_field)]
    fn log(&self, level: u8, target: RStr<'_>, message: RStr<'_>);
}

/// The boxed log sink.
pub type FfiHostLogBox = FfiHostLog_TO<'static, RBox<()>>;

/// What the host hands a plugin at init.
#[repr(C)]
#[derive(StableAbi)]
pub struct FfiInit {
    /// Where the plugin's log records go.
    pub log: FfiHostLogBox,
    /// Most verbose level the host records (0 = off ... 5 = trace).
    pub max_level: u8,
    /// JSON object of host-provided settings.
    pub settings: RString,
}

/// The root module every plugin library exports.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = PluginModRef)))]
#[sabi(missing_field(panic))]
pub struct PluginMod {
    /// [`ABI_MAJOR`] the plugin was built against.
    pub abi_major: u32,
    /// [`ABI_MINOR`] the plugin was built against.
    pub abi_minor: u32,
    /// JSON [`crate::PluginManifest`].
    pub manifest: extern "C" fn() -> RString,
    /// Builds the driver. Errors and panics come back as text.
    #[sabi(last_prefix_field)]
    pub init: extern "C" fn(init: FfiInit) -> RResult<FfiDriverBox, RString>,
}

impl RootModule for PluginModRef {
    declare_root_module_statics! {PluginModRef}
    const BASE_NAME: &'static str = "devicerail_plugin";
    const NAME: &'static str = "devicerail_plugin";
    const VERSION_STRINGS: VersionStrings = package_version_strings!();
}

/// The exported symbol name of a plugin's library header. Tested against
/// `abi_stable::library::ROOT_MODULE_LOADER_NAME`.
#[macro_export]
#[doc(hidden)]
macro_rules! __root_module_loader_name {
    () => {
        "_1as_0lib_1header_0root_bmodule_bloader"
    };
}
