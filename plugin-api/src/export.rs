//! Plugin side of the boundary: adapts a [`Driver`] to [`FfiDriver`], with
//! every call wrapped in `catch_unwind` so a panic becomes a typed
//! contained `internal_error` instead of aborting the host.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::{RNone, ROption, RResult, RSome, RStr, RString};
use devicerail_host_protocol::{ActionCall, CallId, DeviceId, ObservationId};
use serde::Serialize;

use crate::config::ConfigError;
use crate::context::CallContext;
use crate::driver::{
    Driver, DriverCode, DriverError, DriverObservation, LoadPurpose, ObserveRequest, PluginConfig,
    PluginIdentity,
};
use crate::ffi::{
    ABI_MAJOR, ABI_MINOR, FfiActionOutput, FfiCallContext, FfiDriver, FfiDriver_TO, FfiDriverBox,
    FfiError, FfiInit, FfiObservation, FfiResult, HOST_MEMBER, InitFailure,
};
use crate::manifest::PluginManifest;
use crate::wire::ObservationWire;

/// Converts a context from its FFI form.
pub(crate) fn context_from_ffi(ctx: &FfiCallContext) -> CallContext {
    let deadline = match ctx.budget_ns {
        u64::MAX => None,
        ns => Instant::now().checked_add(Duration::from_nanos(ns)),
    };
    let observation_id = ObservationId(ctx.observation_id.into());
    CallContext::from_parts(
        deadline,
        ctx.cancelled.clone(),
        observation_id,
        ctx.request_id.to_string(),
    )
}

impl From<DriverError> for FfiError {
    fn from(e: DriverError) -> Self {
        Self {
            code: e.code.as_str().into(),
            message: e.message.into(),
            retryable: e.retryable,
            details: if e.details.is_null() {
                RString::new()
            } else {
                e.details.to_string().into()
            },
        }
    }
}

impl From<FfiError> for DriverError {
    fn from(e: FfiError) -> Self {
        Self {
            code: DriverCode::from_wire(&e.code),
            message: e.message.into(),
            retryable: e.retryable,
            details: if e.details.is_empty() {
                serde_json::Value::Null
            } else {
                serde_json::from_str(&e.details)
                    .unwrap_or(serde_json::Value::String(e.details.into()))
            },
        }
    }
}

/// Text of a panic payload.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_owned()
    }
}

/// Runs `f`, turning a panic into a contained `internal_error`.
fn guarded<T>(op: &str, f: impl FnOnce() -> Result<T, DriverError>) -> FfiResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => RResult::ROk(v),
        Ok(Err(e)) => RResult::RErr(e.into()),
        Err(payload) => {
            let msg = panic_message(payload.as_ref());
            tracing::error!(operation = op, "driver panicked: {msg}");
            RResult::RErr(DriverError::panicked(op, &msg).into())
        }
    }
}

fn to_json<T: Serialize>(value: &T) -> Result<RString, DriverError> {
    serde_json::to_string(value)
        .map(RString::from)
        .map_err(|e| DriverError::failure(format!("could not serialize driver output: {e}")))
}

fn split_observation(
    obs: DriverObservation,
) -> (ObservationWire, ROption<abi_stable::std_types::RVec<u8>>) {
    let (wire, png) = ObservationWire::split(obs);
    let png = match png {
        Some(bytes) => RSome(bytes.into()),
        None => RNone,
    };
    (wire, png)
}

/// The adapter the export macro wraps around a driver.
pub struct DriverAdapter<D: Driver> {
    driver: D,
}

impl<D: Driver> DriverAdapter<D> {
    /// Wraps `driver`; the export macro does this with the value its
    /// constructor returns.
    pub fn new(driver: D) -> Self {
        Self { driver }
    }
}

impl<D: Driver> FfiDriver for DriverAdapter<D> {
    fn list_devices(&self, ctx: &FfiCallContext) -> FfiResult<RString> {
        guarded("list_devices", || {
            to_json(&self.driver.list_devices(&context_from_ffi(ctx))?)
        })
    }

    fn connect(&self, ctx: &FfiCallContext, device: RStr<'_>) -> FfiResult<RString> {
        guarded("connect", || {
            to_json(
                &self
                    .driver
                    .connect(&context_from_ffi(ctx), &DeviceId::new(device.as_str()))?,
            )
        })
    }

    fn disconnect(&self, ctx: &FfiCallContext, device: RStr<'_>) -> FfiResult<()> {
        guarded("disconnect", || {
            self.driver
                .disconnect(&context_from_ffi(ctx), &DeviceId::new(device.as_str()))
        })
    }

    fn health(&self, ctx: &FfiCallContext, device: RStr<'_>) -> FfiResult<RString> {
        guarded("health", || {
            to_json(
                &self
                    .driver
                    .health(&context_from_ffi(ctx), &DeviceId::new(device.as_str()))?,
            )
        })
    }

    fn capabilities(&self, ctx: &FfiCallContext, device: RStr<'_>) -> FfiResult<RString> {
        guarded("capabilities", || {
            let caps = self
                .driver
                .capabilities(&context_from_ffi(ctx), &DeviceId::new(device.as_str()))?;
            // An unprotected `inputSecret` would be recorded in the clear:
            // refuse the whole action space rather than advertise it.
            crate::actions::check_protection(&caps.actions)
                .map_err(|e| DriverError::failure(e.to_string()))?;
            to_json(&caps)
        })
    }

    fn observe(
        &self,
        ctx: &FfiCallContext,
        device: RStr<'_>,
        request: RStr<'_>,
    ) -> FfiResult<FfiObservation> {
        guarded("observe", || {
            let request: ObserveRequest = serde_json::from_str(request.as_str())
                .map_err(|e| DriverError::failure(format!("bad observe request from host: {e}")))?;
            let obs = self.driver.observe(
                &context_from_ffi(ctx),
                &DeviceId::new(device.as_str()),
                &request,
            )?;
            let (wire, png) = split_observation(obs);
            Ok(FfiObservation {
                json: to_json(&wire)?,
                png,
            })
        })
    }

    fn execute(
        &self,
        ctx: &FfiCallContext,
        device: RStr<'_>,
        call_id: crate::ffi::FfiUuid,
        name: RStr<'_>,
        arguments: RStr<'_>,
    ) -> FfiResult<FfiActionOutput> {
        guarded("execute", || {
            let arguments = serde_json::from_str(arguments.as_str()).map_err(|e| {
                DriverError::failure(format!("bad action arguments from host: {e}"))
            })?;
            let call = ActionCall::new(CallId(call_id.into()), name.as_str(), arguments);
            let out = self.driver.execute(
                &context_from_ffi(ctx),
                &DeviceId::new(device.as_str()),
                &call,
            )?;
            let resolved = match out.resolved {
                Some(obs) => {
                    let (wire, png) = split_observation(obs);
                    RSome(FfiObservation {
                        json: to_json(&wire)?,
                        png,
                    })
                }
                None => RNone,
            };
            let execution = match &out.execution {
                Some(e) => to_json(e)?,
                None => RString::new(),
            };
            Ok(FfiActionOutput {
                output: to_json(&out.output)?,
                execution,
                resolved,
            })
        })
    }

    fn doctor(&self) -> RString {
        match guarded("doctor", || to_json(&self.driver.doctor())) {
            RResult::ROk(s) => s,
            RResult::RErr(e) => serde_json::json!([{
                "name": "driver doctor",
                "status": "fail",
                "detail": e.message.as_str(),
            }])
            .to_string()
            .into(),
        }
    }
}

/// Builds the manifest text (called by the generated `manifest` function).
#[doc(hidden)]
pub fn manifest_json(identity: PluginIdentity) -> RString {
    let manifest = PluginManifest::for_identity(identity);
    serde_json::to_string(&manifest).unwrap_or_default().into()
}

/// Why a driver's constructor refused to build it. The export glue turns
/// it into the text the host reports as the plugin's refusal reason.
#[derive(Debug, thiserror::Error)]
pub enum PluginInitError {
    /// A setting or environment variable cannot be used.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Starting something the driver needs failed.
    #[error("could not start {what}: {source}")]
    Io {
        /// What was being started.
        what: &'static str,
        /// The failure.
        #[source]
        source: std::io::Error,
    },
    /// Any other reason.
    #[error("{0}")]
    Other(String),
}

impl PluginInitError {
    /// Starting `what` failed with `source`.
    pub fn io(what: &'static str, source: std::io::Error) -> Self {
        Self::Io { what, source }
    }

    /// Any error, by its message.
    pub fn other(e: impl std::fmt::Display) -> Self {
        Self::Other(e.to_string())
    }

    /// The settings key this error is about, when the value came from the
    /// settings table (not from an environment variable).
    pub fn setting(&self) -> Option<&str> {
        match self {
            Self::Config(ConfigError {
                origin: crate::config::Origin::Setting { key },
                ..
            }) => Some(key),
            _ => None,
        }
    }
}

/// Builds the driver (called by the generated `init` function): installs
/// the log forwarder, reads settings (taking out the host's
/// [`HOST_MEMBER`], which carries the load purpose), runs the constructor
/// under `catch_unwind` and boxes the adapter. A host that sent the member
/// gets an init failure as JSON [`InitFailure`] text; any other host, as
/// plain text.
#[doc(hidden)]
pub fn init_driver<D: Driver, E: Into<PluginInitError>>(
    plugin_id: &'static str,
    init: FfiInit,
    ctor: impl FnOnce(&PluginConfig) -> Result<D, E>,
) -> RResult<FfiDriverBox, RString> {
    let FfiInit {
        log,
        max_level,
        settings,
    } = init;
    crate::logging::install(plugin_id, log, max_level);
    // This library has its own copy of std, so its own panic hook: route
    // panic reports through the forwarded log instead of raw stderr.
    std::panic::set_hook(Box::new(|info| tracing::error!("driver panic: {info}")));
    let mut settings = match serde_json::from_str::<serde_json::Value>(&settings) {
        Ok(serde_json::Value::Object(map)) => map,
        Ok(_) | Err(_) => serde_json::Map::new(),
    };
    let host = settings.remove(HOST_MEMBER);
    let purpose = match &host {
        None => LoadPurpose::Serve,
        Some(member) => LoadPurpose::from_ffi(
            member
                .get("purpose")
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default(),
        ),
    };
    let config = PluginConfig::new(settings).with_purpose(purpose);
    let failure = |message: String, setting: Option<&str>| -> RString {
        if host.is_none() {
            return message.into();
        }
        let failure = InitFailure {
            message,
            setting: setting.map(str::to_owned),
        };
        serde_json::to_string(&failure)
            .unwrap_or(failure.message)
            .into()
    };
    match catch_unwind(AssertUnwindSafe(|| ctor(&config))) {
        Ok(Ok(driver)) => RResult::ROk(FfiDriver_TO::from_value(
            DriverAdapter::new(driver),
            TD_Opaque,
        )),
        Ok(Err(e)) => {
            let e: PluginInitError = e.into();
            RResult::RErr(failure(
                format!("the driver failed to initialize: {e}"),
                e.setting(),
            ))
        }
        Err(payload) => RResult::RErr(failure(
            format!(
                "the driver panicked during init: {}",
                panic_message(payload.as_ref())
            ),
            None,
        )),
    }
}

/// The ABI version pair the export macro writes into the root module.
#[doc(hidden)]
pub const fn abi_version() -> (u32, u32) {
    (ABI_MAJOR, ABI_MINOR)
}

/// Exports a [`Driver`] as a DeviceRail plugin. Invoke it once, in the
/// plugin crate's `lib.rs` (crate type `cdylib`):
///
/// ```ignore
/// devicerail_host_plugin_api::export_plugin! {
///     id: "mock",
///     description: "Deterministic mock device",
///     driver: |config| MockDriver::new(config),
/// }
/// ```
///
/// `driver` is a constructor `FnOnce(&PluginConfig) -> Result<D, E>` whose
/// error converts into [`PluginInitError`] (a [`ConfigError`] does; wrap
/// anything else with [`PluginInitError::other`]). The version is the
/// crate's `CARGO_PKG_VERSION`. [`PluginConfig::purpose`] tells the
/// constructor whether the host serves with the driver or only inspects it.
#[macro_export]
macro_rules! export_plugin {
    (id: $id:expr, description: $desc:expr, driver: $ctor:expr $(,)?) => {
        $crate::export_plugin!(@with_abi $crate::export::abi_version(), id: $id, description: $desc, driver: $ctor);
    };
    (@with_abi $abi:expr, id: $id:expr, description: $desc:expr, driver: $ctor:expr $(,)?) => {
        const _: () = {
            use $crate::__private::abi_stable;
            use abi_stable::std_types::{RResult, RString};
            use abi_stable::prefix_type::PrefixTypeTrait as _;

            extern "C" fn __devicerail_manifest() -> RString {
                $crate::export::manifest_json($crate::PluginIdentity {
                    id: ::std::string::String::from($id),
                    version: ::std::string::String::from(env!("CARGO_PKG_VERSION")),
                    description: ::std::string::String::from($desc),
                })
            }

            extern "C" fn __devicerail_init(
                init: $crate::ffi::FfiInit,
            ) -> RResult<$crate::ffi::FfiDriverBox, RString> {
                $crate::export::init_driver($id, init, $ctor)
            }

            fn __devicerail_root_module() -> $crate::ffi::PluginModRef {
                let (abi_major, abi_minor) = $abi;
                $crate::ffi::PluginMod {
                    abi_major,
                    abi_minor,
                    manifest: __devicerail_manifest,
                    init: __devicerail_init,
                }
                .leak_into_prefix()
            }

            extern "C" fn __devicerail_erased_module() -> abi_stable::library::RootModuleResult {
                abi_stable::library::__call_root_module_loader(__devicerail_root_module)
            }

            #[unsafe(export_name = $crate::__root_module_loader_name!())]
            static __DEVICERAIL_LIB_HEADER: abi_stable::library::LibHeader = unsafe {
                abi_stable::library::LibHeader::from_constructor::<$crate::ffi::PluginModRef>(
                    __devicerail_erased_module,
                    abi_stable::library::CheckTypeLayout::Yes,
                )
            };
        };
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ffi::{FfiHostLog, FfiHostLog_TO};
    use devicerail_host_protocol::DeviceInfo;
    use std::sync::Mutex;

    struct Quiet;
    impl FfiHostLog for Quiet {
        fn log(&self, _level: u8, _target: RStr<'_>, _message: RStr<'_>) {}
    }

    /// A driver that refuses unknown settings and records its config.
    struct Probe;
    static SEEN: Mutex<Vec<(Vec<String>, LoadPurpose)>> = Mutex::new(Vec::new());

    impl Driver for Probe {
        fn list_devices(&self, _ctx: &CallContext) -> crate::DriverResult<Vec<DeviceInfo>> {
            Ok(Vec::new())
        }
        fn connect(&self, _ctx: &CallContext, d: &DeviceId) -> crate::DriverResult<DeviceInfo> {
            Err(DriverError::failure(format!("no {d}")))
        }
        fn disconnect(&self, _ctx: &CallContext, _d: &DeviceId) -> crate::DriverResult<()> {
            Ok(())
        }
        fn capabilities(
            &self,
            _ctx: &CallContext,
            d: &DeviceId,
        ) -> crate::DriverResult<crate::DeviceCapabilities> {
            Err(DriverError::failure(format!("no {d}")))
        }
        fn observe(
            &self,
            _ctx: &CallContext,
            d: &DeviceId,
            _r: &ObserveRequest,
        ) -> crate::DriverResult<DriverObservation> {
            Err(DriverError::failure(format!("no {d}")))
        }
        fn execute(
            &self,
            _ctx: &CallContext,
            d: &DeviceId,
            _c: &ActionCall,
        ) -> crate::DriverResult<crate::ActionOutput> {
            Err(DriverError::failure(format!("no {d}")))
        }
    }

    fn probe(config: &PluginConfig) -> Result<Probe, ConfigError> {
        let read = config.reader();
        SEEN.lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((read.keys().map(str::to_owned).collect(), config.purpose));
        read.deny_unknown(&["ok"])?;
        Ok(Probe)
    }

    fn init(settings: serde_json::Value) -> RResult<FfiDriverBox, RString> {
        init_driver(
            "probe",
            FfiInit {
                log: FfiHostLog_TO::from_value(Quiet, TD_Opaque),
                max_level: 0,
                settings: settings.to_string().into(),
            },
            probe,
        )
    }

    #[test]
    fn the_host_member_sets_the_purpose_and_asks_for_located_errors() {
        let seen = || SEEN.lock().unwrap_or_else(|p| p.into_inner()).pop();
        // A 1.1 host: the member is taken out before the driver sees it.
        let r = init(serde_json::json!({ "ok": 1, HOST_MEMBER: { "purpose": "inspect" } }));
        assert!(r.is_ok());
        assert_eq!(seen(), Some((vec!["ok".to_owned()], LoadPurpose::Inspect)));
        let r = init(serde_json::json!({ "bad": 1, HOST_MEMBER: { "purpose": "serve" } }));
        let RResult::RErr(text) = r else {
            panic!("an unknown setting is refused");
        };
        let failure: InitFailure = serde_json::from_str(&text).expect("JSON failure");
        assert_eq!(failure.setting.as_deref(), Some("bad"));
        assert!(failure.message.contains("is not a known setting"), "{text}");
        assert_eq!(seen().map(|s| s.1), Some(LoadPurpose::Serve));
        // An unknown purpose is the cautious one.
        assert!(init(serde_json::json!({ HOST_MEMBER: { "purpose": "later" } })).is_ok());
        assert_eq!(seen().map(|s| s.1), Some(LoadPurpose::Inspect));
        // A 1.0 host: serve, and errors as plain text.
        let r = init(serde_json::json!({ "bad": 1 }));
        let RResult::RErr(text) = r else {
            panic!("refused");
        };
        assert!(
            text.starts_with("the driver failed to initialize: setting \"bad\""),
            "{text}"
        );
        assert_eq!(seen().map(|s| s.1), Some(LoadPurpose::Serve));
    }
}
