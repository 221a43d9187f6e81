//! Shared test rig: fake simulators + a fake WebDriverAgent + the real
//! plugin cdylib loaded with settings pointing at them, and a capture of
//! every log line the plugin emits.

#![allow(dead_code)]

use std::io::Write;
use std::path::PathBuf;
use std::sync::{Mutex, Once, OnceLock};
use std::time::{Duration, Instant};

use devicerail_host_plugin_api::loader::{self, LoadedPlugin};
use devicerail_host_plugin_api::protocol::DeviceId;
use devicerail_host_plugin_api::{
    ActionOutput, CallContext, Driver, DriverObservation, DriverResult, ObserveRequest,
};
use devicerail_host_testing::{build_workspace_plugin, call};
use devicerail_ios_simulator_fakes::sim_state::SE_UDID;
use devicerail_ios_simulator_fakes::{FakeSimulators, FakeWda, FakeWdaOptions};
use serde_json::{Map, Value, json};

pub(crate) const PACKAGE: &str = "devicerail-host-plugin-ios-simulator";
pub(crate) const PLUGIN_ID: &str = "ios-simulator";

static LOGS: Mutex<Vec<u8>> = Mutex::new(Vec::new());

struct Capture;

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        LOGS.lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Installs a TRACE-level subscriber capturing everything (the host side
/// of the plugin's log forwarding) before any plugin is loaded.
pub(crate) fn init_logging() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(|| Capture)
            .try_init();
    });
}

/// Everything logged so far in this test process.
pub(crate) fn logs() -> String {
    String::from_utf8_lossy(&LOGS.lock().unwrap_or_else(|p| p.into_inner())).into_owned()
}

/// The plugin library, built once per test process.
pub(crate) fn plugin_path() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| build_workspace_plugin(PACKAGE, PLUGIN_ID))
        .clone()
}

/// Loads a fresh driver instance from the real cdylib.
pub(crate) fn load(settings: Value) -> LoadedPlugin {
    init_logging();
    let settings: Map<String, Value> = match settings {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    loader::load(&plugin_path(), &settings)
        .unwrap_or_else(|e| panic!("the plugin did not load: {e}"))
}

/// Fake simulators, a fake WDA attached to the iPhone SE, and the plugin.
pub(crate) struct Rig {
    pub(crate) sims: FakeSimulators,
    pub(crate) wda: FakeWda,
    pub(crate) plugin: LoadedPlugin,
}

impl Rig {
    pub(crate) fn new() -> Self {
        Self::with(FakeWdaOptions::default(), json!({}))
    }

    /// `extra` settings are merged over the rig's own.
    pub(crate) fn with(opts: FakeWdaOptions, extra: Value) -> Self {
        init_logging();
        let sims = FakeSimulators::new().expect("fake simulators");
        let wda = sims.wda(SE_UDID, opts).expect("fake WDA");
        let mut settings = json!({
            "xcrun": sims.xcrun().display().to_string(),
            "wdaUrl": wda.url(),
        });
        if let (Some(base), Value::Object(more)) = (settings.as_object_mut(), extra) {
            base.extend(more);
        }
        let plugin = load(settings);
        Self { sims, wda, plugin }
    }

    pub(crate) fn se() -> DeviceId {
        DeviceId::new(SE_UDID)
    }

    /// Connects the iPhone SE.
    pub(crate) fn connected() -> Self {
        let rig = Self::new();
        rig.connect();
        rig
    }

    pub(crate) fn connect(&self) {
        self.plugin
            .connect(&CallContext::unbounded(), &Self::se())
            .expect("the iPhone SE connects");
    }

    pub(crate) fn exec(&self, name: &str, arguments: Value) -> DriverResult<ActionOutput> {
        self.exec_ctx(&CallContext::unbounded(), name, arguments)
    }

    pub(crate) fn exec_ctx(
        &self,
        ctx: &CallContext,
        name: &str,
        arguments: Value,
    ) -> DriverResult<ActionOutput> {
        self.plugin
            .execute(ctx, &Self::se(), &call(name, arguments))
    }

    pub(crate) fn ok(&self, name: &str, arguments: Value) -> ActionOutput {
        self.exec(name, arguments.clone())
            .unwrap_or_else(|e| panic!("{name} {arguments} failed: {e}"))
    }

    pub(crate) fn observe(&self, screenshot: bool, ui_tree: bool) -> DriverObservation {
        self.plugin
            .observe(
                &CallContext::unbounded(),
                &Self::se(),
                &ObserveRequest {
                    screenshot,
                    ui_tree,
                    live: None,
                },
            )
            .unwrap_or_else(|e| panic!("observe failed: {e}"))
    }
}

/// A context whose deadline is `ms` from now.
pub(crate) fn within(ms: u64) -> CallContext {
    CallContext::new(Some(Instant::now() + Duration::from_millis(ms)))
}
