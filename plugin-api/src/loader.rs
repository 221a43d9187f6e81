//! Host side of the boundary: opens a plugin library, checks layout, ABI,
//! manifest and protocol range ([`open`]), initializes the driver for a
//! [`LoadPurpose`] with the settings chosen by its id
//! ([`OpenedPlugin::init`]), and wraps it in [`LoadedPlugin`], which
//! implements [`Driver`] with every JSON value validated against the
//! protocol types. A plugin built against ABI 1.0 gets its settings alone
//! and is initialized as for serving (see [`crate::ffi::ABI_MINOR`]).
//!
//! Each file is loaded through `lib_header_from_path` + `init_root_module`
//! (never `RootModule::load_from_file`, which keeps one module per type per
//! process). Libraries are never unloaded.

use std::path::{Path, PathBuf};
use std::time::Instant;

use abi_stable::library::{LibraryError, lib_header_from_path};
use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::{RResult, RStr, RString};
use devicerail_host_protocol::{
    ActionCall, ActionExecution, DeviceId, DeviceInfo, ErrorCode, ProtocolRange,
    SERVER_PROTOCOL_RANGES,
};
use serde::de::DeserializeOwned;

use crate::context::CallContext;
use crate::driver::{
    ActionOutput, DeviceCapabilities, DeviceHealth, DoctorCheck, Driver, DriverError,
    DriverObservation, DriverResult, LoadPurpose, ObserveRequest,
};
use crate::ffi::{
    ABI_MAJOR, FfiCallContext, FfiDriverBox, FfiHostLog, FfiHostLog_TO, FfiInit, FfiObservation,
    HOST_MEMBER, InitFailure, PluginModRef,
};
use crate::logging::u8_to_level;
use crate::manifest::{PluginManifest, valid_plugin_id};
use crate::wire::ObservationWire;

/// Why a plugin file was refused. Every variant reads as a reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// The file could not be opened as a shared library.
    #[error("not a loadable shared library: {0}")]
    NotALibrary(String),
    /// The library has no plugin root module.
    #[error("not a DeviceRail plugin: the library exports no plugin root module")]
    NotAPlugin,
    /// The plugin's types are laid out differently from the host's.
    #[error("incompatible plugin layout: {0}")]
    IncompatibleLayout(String),
    /// The plugin was built with an incompatible plugin-api version.
    #[error("incompatible plugin-api version: {0}")]
    IncompatibleVersion(String),
    /// The plugin's ABI major differs from the host's.
    #[error("plugin ABI major {plugin} does not match the host's ABI major {host}")]
    AbiMismatch {
        /// The plugin's ABI major.
        plugin: u32,
        /// The host's ABI major.
        host: u32,
    },
    /// The manifest does not parse or is not valid.
    #[error("invalid plugin manifest: {0}")]
    BadManifest(String),
    /// The plugin speaks no protocol version the host serves.
    #[error("plugin protocol {plugin} is not compatible with the host's {host}")]
    ProtocolMismatch {
        /// The plugin's protocol ranges.
        plugin: String,
        /// The host's protocol ranges.
        host: String,
    },
    /// The driver's constructor failed or panicked.
    #[error("plugin initialization failed: {0}")]
    InitFailed(String),
    /// The driver's constructor refused one of its settings (ABI 1.1).
    #[error("plugin initialization failed: {message}")]
    SettingRefused {
        /// The settings key at fault (`key`, `list[index].key`).
        setting: String,
        /// What is wrong, naming the setting.
        message: String,
    },
}

/// Opens, checks and initializes the plugin library at `path` to serve.
pub fn load(
    path: &Path,
    settings: &serde_json::Map<String, serde_json::Value>,
) -> Result<LoadedPlugin, LoadError> {
    open(path)?.init(settings, LoadPurpose::Serve)
}

/// A plugin library that passed every check before init: layout, ABI
/// major, manifest and protocol range. Settings can be chosen by its id
/// before [`OpenedPlugin::init`].
pub struct OpenedPlugin {
    manifest: PluginManifest,
    path: PathBuf,
    module: PluginModRef,
}

impl std::fmt::Debug for OpenedPlugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenedPlugin")
            .field("id", &self.manifest.id)
            .field("path", &self.path)
            .finish()
    }
}

/// Opens and checks the plugin library at `path` without initializing it.
pub fn open(path: &Path) -> Result<OpenedPlugin, LoadError> {
    let header = lib_header_from_path(path).map_err(classify)?;
    let module: PluginModRef = header
        .init_root_module::<PluginModRef>()
        .map_err(classify)?;
    let abi_major = module.abi_major();
    if abi_major != ABI_MAJOR {
        return Err(LoadError::AbiMismatch {
            plugin: abi_major,
            host: ABI_MAJOR,
        });
    }
    let manifest_text = (module.manifest())();
    let manifest: PluginManifest =
        serde_json::from_str(&manifest_text).map_err(|e| LoadError::BadManifest(e.to_string()))?;
    if manifest.abi_major != ABI_MAJOR {
        return Err(LoadError::AbiMismatch {
            plugin: manifest.abi_major,
            host: ABI_MAJOR,
        });
    }
    if !valid_plugin_id(&manifest.id) {
        return Err(LoadError::BadManifest(format!(
            "plugin id {:?} is not [a-z0-9-]{{1,64}}",
            manifest.id
        )));
    }
    check_protocol(&manifest.protocol)?;
    Ok(OpenedPlugin {
        manifest,
        path: path.to_path_buf(),
        module,
    })
}

impl OpenedPlugin {
    /// The manifest the library reported.
    pub fn manifest(&self) -> &PluginManifest {
        &self.manifest
    }

    /// Whether the library knows load purposes (ABI 1.1 and later). A 1.0
    /// plugin is initialized to serve whatever the purpose.
    pub fn knows_purposes(&self) -> bool {
        self.manifest.abi_minor >= 1
    }

    /// Initializes the driver with `settings` for `purpose`.
    pub fn init(
        self,
        settings: &serde_json::Map<String, serde_json::Value>,
        purpose: LoadPurpose,
    ) -> Result<LoadedPlugin, LoadError> {
        let mut settings = settings.clone();
        let v1_1 = self.knows_purposes();
        if v1_1 {
            settings.insert(
                HOST_MEMBER.to_owned(),
                serde_json::json!({ "purpose": purpose.to_ffi() }),
            );
        }
        let init = FfiInit {
            log: FfiHostLog_TO::from_value(
                HostLog {
                    plugin: self.manifest.id.clone(),
                },
                TD_Opaque,
            ),
            max_level: host_max_level(),
            settings: serde_json::Value::Object(settings).to_string().into(),
        };
        let driver = match (self.module.init())(init) {
            RResult::ROk(d) => d,
            RResult::RErr(text) => {
                let failure = v1_1
                    .then(|| serde_json::from_str::<InitFailure>(&text).ok())
                    .flatten();
                return Err(match failure {
                    Some(InitFailure {
                        message,
                        setting: Some(setting),
                    }) => LoadError::SettingRefused { setting, message },
                    Some(InitFailure { message, .. }) => LoadError::InitFailed(message),
                    None => LoadError::InitFailed(text.into()),
                });
            }
        };
        Ok(LoadedPlugin {
            manifest: self.manifest,
            path: self.path,
            driver,
        })
    }
}

fn classify(e: LibraryError) -> LoadError {
    match e {
        LibraryError::OpenError { err, .. } => LoadError::NotALibrary(err.to_string()),
        LibraryError::GetSymbolError { .. } => LoadError::NotAPlugin,
        LibraryError::AbiInstability(e) => {
            LoadError::IncompatibleLayout(layout_gist(&e.to_string()))
        }
        LibraryError::IncompatibleVersionNumber {
            library_name,
            expected_version,
            actual_version,
        } => LoadError::IncompatibleVersion(format!(
            "{library_name}: host expects {expected_version}, plugin has {actual_version}"
        )),
        LibraryError::ParseVersionError(e) => LoadError::IncompatibleVersion(e.to_string()),
        LibraryError::RootModule { err, .. } => LoadError::InitFailed(err.to_string()),
        other => LoadError::NotALibrary(other.to_string()),
    }
}

/// Layout errors from abi_stable are long, and what differs comes at the
/// end (`Error: ...` and its details); keep that part.
fn layout_gist(s: &str) -> String {
    let lines: Vec<&str> = s.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let gist: Vec<&str> = match lines.iter().position(|l| l.starts_with("Error:")) {
        Some(at) => lines[at..].iter().take(5).copied().collect(),
        None => lines.iter().take(6).copied().collect(),
    };
    gist.join(" ")
}

fn check_protocol(plugin: &[ProtocolRange]) -> Result<(), LoadError> {
    let host = SERVER_PROTOCOL_RANGES;
    let fmt = |r: &[ProtocolRange]| {
        r.iter()
            .map(|r| format!("{}.{}-{}.{}", r.major, r.min_minor, r.major, r.max_minor))
            .collect::<Vec<_>>()
            .join(",")
    };
    // The plugin must produce DTOs of a major the host serves, and must not
    // require a minor newer than the host understands.
    let ok = plugin.iter().any(|p| {
        p.min_minor <= p.max_minor
            && host
                .iter()
                .any(|h| h.major == p.major && p.min_minor <= h.max_minor)
    });
    if ok {
        Ok(())
    } else {
        Err(LoadError::ProtocolMismatch {
            plugin: fmt(plugin),
            host: fmt(host),
        })
    }
}

fn host_max_level() -> u8 {
    use tracing::level_filters::LevelFilter;
    match LevelFilter::current() {
        LevelFilter::OFF => 0,
        LevelFilter::ERROR => 1,
        LevelFilter::WARN => 2,
        LevelFilter::INFO => 3,
        LevelFilter::DEBUG => 4,
        _ => 5,
    }
}

/// Re-emits plugin log records on the host's subscriber.
struct HostLog {
    plugin: String,
}

impl FfiHostLog for HostLog {
    fn log(&self, level: u8, target: RStr<'_>, message: RStr<'_>) {
        let (plugin, target, message) = (self.plugin.as_str(), target.as_str(), message.as_str());
        match u8_to_level(level) {
            Some(tracing::Level::ERROR) => {
                tracing::error!(plugin, plugin_target = target, "{message}")
            }
            Some(tracing::Level::WARN) => {
                tracing::warn!(plugin, plugin_target = target, "{message}")
            }
            Some(tracing::Level::INFO) => {
                tracing::info!(plugin, plugin_target = target, "{message}")
            }
            Some(tracing::Level::DEBUG) => {
                tracing::debug!(plugin, plugin_target = target, "{message}")
            }
            _ => tracing::trace!(plugin, plugin_target = target, "{message}"),
        }
    }
}

/// An initialized plugin. Implements [`Driver`]; every value it returns has
/// been validated against the protocol types.
pub struct LoadedPlugin {
    manifest: PluginManifest,
    path: PathBuf,
    driver: FfiDriverBox,
}

impl std::fmt::Debug for LoadedPlugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedPlugin")
            .field("id", &self.manifest.id)
            .field("path", &self.path)
            .finish()
    }
}

fn ffi_context(ctx: &CallContext) -> FfiCallContext {
    let budget_ns = match ctx.deadline() {
        None => u64::MAX,
        Some(d) => u64::try_from(d.saturating_duration_since(Instant::now()).as_nanos())
            .unwrap_or(u64::MAX - 1),
    };
    FfiCallContext {
        budget_ns,
        cancelled: ctx.cancel_flag().clone(),
        observation_id: (*ctx.observation_id().as_uuid()).into(),
        request_id: ctx.request_id().into(),
    }
}

fn violation(what: &str, e: impl std::fmt::Display) -> DriverError {
    DriverError::new(
        ErrorCode::ProtocolError,
        format!("the driver returned an invalid {what}: {e}"),
    )
}

fn decode<T: DeserializeOwned>(what: &str, text: &RString) -> DriverResult<T> {
    serde_json::from_str(text.as_str()).map_err(|e| violation(what, e))
}

fn lift<T>(r: RResult<T, crate::ffi::FfiError>) -> DriverResult<T> {
    r.into_result().map_err(DriverError::from)
}

impl LoadedPlugin {
    /// The manifest the library reported.
    pub fn manifest(&self) -> &PluginManifest {
        &self.manifest
    }

    /// The plugin id from its manifest (`android`, `ios-simulator`).
    pub fn id(&self) -> &str {
        &self.manifest.id
    }

    /// The file the plugin was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// An Action's result with its resolved observation as the driver encoded
/// it (see [`LoadedPlugin::execute_encoded`]).
#[derive(Debug)]
pub struct EncodedActionOutput {
    /// The Action's output JSON.
    pub output: serde_json::Value,
    /// How a semantic Action was carried out.
    pub execution: Option<ActionExecution>,
    /// The UI state a semantic Action resolved against, undecoded.
    pub resolved: Option<EncodedObservation>,
}

/// An observation as the driver encoded it (see
/// [`LoadedPlugin::observe_encoded`]): its JSON text (viewport, metadata,
/// UI tree) and its PNG, in the buffers the driver filled.
pub struct EncodedObservation(FfiObservation);

impl std::fmt::Debug for EncodedObservation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EncodedObservation")
            .field("json_bytes", &self.json().len())
            .field("png_bytes", &self.png().map(<[u8]>::len))
            .finish()
    }
}

impl EncodedObservation {
    /// An observation as a driver would return it (for fakes and tests).
    pub fn new(json: &str, png: Option<Vec<u8>>) -> Self {
        Self(FfiObservation {
            json: RString::from(json),
            png: png.map(abi_stable::std_types::RVec::from).into(),
        })
    }

    /// The observation's JSON as the driver wrote it (unchecked).
    pub fn json(&self) -> &str {
        self.0.json.as_str()
    }

    /// The screenshot's PNG bytes, when the driver returned one.
    pub fn png(&self) -> Option<&[u8]> {
        self.0.png.as_ref().into_option().map(|v| v.as_slice())
    }
}

/// `obs` decoded and checked against the protocol types: what
/// [`Driver::observe`] returns.
fn decode_observation(what: &str, obs: EncodedObservation) -> DriverResult<DriverObservation> {
    let obs = obs.0;
    let wire: ObservationWire = decode(what, &obs.json)?;
    Ok(wire.into_observation(obs.png.into_option().map(Vec::from)))
}

impl LoadedPlugin {
    /// Observes `device` and returns the observation as the driver encoded
    /// it: its JSON text and its PNG, neither decoded nor copied. For a
    /// caller that forwards the bytes to where they are decoded once (a
    /// plugin's worker hands them to the host, which checks them as
    /// [`Driver::observe`] would).
    pub fn observe_encoded(
        &self,
        ctx: &CallContext,
        device: &DeviceId,
        request: &ObserveRequest,
    ) -> DriverResult<EncodedObservation> {
        let request_json =
            serde_json::to_string(request).map_err(|e| DriverError::failure(e.to_string()))?;
        lift(self.driver.observe(
            &ffi_context(ctx),
            RStr::from_str(device.as_str()),
            RStr::from_str(&request_json),
        ))
        .map(EncodedObservation)
    }

    /// Executes one Action: its output and execution decoded, its resolved
    /// observation as the driver encoded it (see
    /// [`LoadedPlugin::observe_encoded`]).
    pub fn execute_encoded(
        &self,
        ctx: &CallContext,
        device: &DeviceId,
        call: &ActionCall,
    ) -> DriverResult<EncodedActionOutput> {
        let arguments = serde_json::to_string(&call.arguments)
            .map_err(|e| DriverError::failure(e.to_string()))?;
        let out = lift(self.driver.execute(
            &ffi_context(ctx),
            RStr::from_str(device.as_str()),
            (*call.id.as_uuid()).into(),
            RStr::from_str(&call.name),
            RStr::from_str(&arguments),
        ))?;
        let output = decode("action output", &out.output)?;
        let execution = if out.execution.is_empty() {
            None
        } else {
            Some(decode("action execution", &out.execution)?)
        };
        Ok(EncodedActionOutput {
            output,
            execution,
            resolved: out.resolved.into_option().map(EncodedObservation),
        })
    }
}

impl Driver for LoadedPlugin {
    fn list_devices(&self, ctx: &CallContext) -> DriverResult<Vec<DeviceInfo>> {
        let text = lift(self.driver.list_devices(&ffi_context(ctx)))?;
        decode("device list", &text)
    }

    fn connect(&self, ctx: &CallContext, device: &DeviceId) -> DriverResult<DeviceInfo> {
        let text = lift(
            self.driver
                .connect(&ffi_context(ctx), RStr::from_str(device.as_str())),
        )?;
        let info: DeviceInfo = decode("device info", &text)?;
        if &info.id != device {
            return Err(violation(
                "device info",
                format!("connect({device}) returned device {}", info.id),
            ));
        }
        Ok(info)
    }

    fn disconnect(&self, ctx: &CallContext, device: &DeviceId) -> DriverResult<()> {
        lift(
            self.driver
                .disconnect(&ffi_context(ctx), RStr::from_str(device.as_str())),
        )
    }

    fn health(&self, ctx: &CallContext, device: &DeviceId) -> DriverResult<DeviceHealth> {
        let text = lift(
            self.driver
                .health(&ffi_context(ctx), RStr::from_str(device.as_str())),
        )?;
        decode("health report", &text)
    }

    fn capabilities(
        &self,
        ctx: &CallContext,
        device: &DeviceId,
    ) -> DriverResult<DeviceCapabilities> {
        let text = lift(
            self.driver
                .capabilities(&ffi_context(ctx), RStr::from_str(device.as_str())),
        )?;
        decode("capabilities", &text)
    }

    fn observe(
        &self,
        ctx: &CallContext,
        device: &DeviceId,
        request: &ObserveRequest,
    ) -> DriverResult<DriverObservation> {
        decode_observation("observation", self.observe_encoded(ctx, device, request)?)
    }

    fn execute(
        &self,
        ctx: &CallContext,
        device: &DeviceId,
        call: &ActionCall,
    ) -> DriverResult<ActionOutput> {
        let out = self.execute_encoded(ctx, device, call)?;
        Ok(ActionOutput {
            output: out.output,
            execution: out.execution,
            resolved: out
                .resolved
                .map(|obs| decode_observation("resolved observation", obs))
                .transpose()?,
        })
    }

    fn doctor(&self) -> Vec<DoctorCheck> {
        let text = self.driver.doctor();
        decode::<Vec<DoctorCheck>>("doctor report", &text).unwrap_or_else(|e| {
            vec![DoctorCheck::fail(
                format!("{} doctor", self.manifest.id),
                e.message,
            )]
        })
    }
}
