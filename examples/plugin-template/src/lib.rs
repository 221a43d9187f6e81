//! # devicerail-plugin-hello
//!
//! A minimal but complete DeviceRail driver plugin, to make your own: one
//! simulated device, `hello-1`, whose screen is a coloured rectangle. Its
//! action space has `tap` (draws a marker), `setColor` and `greet`;
//! `observe` returns a PNG of exactly the viewport's size. Replace the
//! device state and the actions with your backend's, keep the shape.
//!
//! Configuration (read once at plugin init; host settings win over the
//! environment): `greeting` / `DEVICERAIL_HELLO_GREETING` (default `Hi`),
//! `size` / `DEVICERAIL_HELLO_SIZE` as `WIDTHxHEIGHT` pixels (default
//! `360x640`).
//!
//! What a driver must never do: print to stdout (it is the host's protocol
//! stream; log with `tracing`, which the host forwards), block forever
//! (honour the call context's deadline and cancellation), or panic on
//! input (validate every argument; the export layer does turn panics into
//! contained `internal_error`s, but that is a bug report, not a feature).

pub mod actions;
pub mod config;
pub mod render;

use std::sync::{Mutex, MutexGuard};

use devicerail_host_plugin_api::protocol::{ActionCall, DeviceId, DeviceInfo, Platform, Viewport};
use devicerail_host_plugin_api::{
    ActionOutput, CallContext, ConfigError, DeviceCapabilities, DeviceHealth, DoctorCheck, Driver,
    DriverError, DriverObservation, DriverResult, ObserveRequest, PluginConfig,
};
use serde_json::json;

use crate::actions::Action;
use crate::config::Config;

/// The id of the only device.
pub const DEVICE_ID: &str = "hello-1";
/// Pixels per logical point of the hello screen.
pub const SCALE: f64 = 1.0;
/// How many tap markers stay on screen.
const KEPT_TAPS: usize = 16;

/// Mutable state of the device.
#[derive(Debug)]
struct Device {
    connected: bool,
    background: [u8; 3],
    taps: Vec<(u32, u32)>,
    /// Bumped by every visible change.
    revision: u64,
}

/// The kind of device this driver drives (`devicerail plugins new
/// --platform` chooses it).
fn platform() -> Platform {
    Platform::Other {
        value: "hello".into(),
    }
}

/// The hello driver. Calls may come from several host threads at once;
/// the device state sits behind a mutex.
#[derive(Debug)]
pub struct HelloDriver {
    config: Config,
    device: Mutex<Device>,
}

impl HelloDriver {
    /// The constructor `export_plugin!` calls: reads host settings and the
    /// environment. An error here refuses the plugin with that reason.
    pub fn new(plugin: &PluginConfig) -> Result<Self, ConfigError> {
        let config = Config::load(&plugin.settings, |k| std::env::var(k).ok())?;
        Ok(Self::with_config(config))
    }

    /// A driver with an explicit configuration (tests, benches).
    pub fn with_config(config: Config) -> Self {
        Self {
            config,
            device: Mutex::new(Device {
                connected: false,
                background: [240, 244, 250],
                taps: Vec::new(),
                revision: 0,
            }),
        }
    }

    fn lock(&self, device: &DeviceId) -> DriverResult<MutexGuard<'_, Device>> {
        if device.as_str() != DEVICE_ID {
            return Err(DriverError::device_not_found(device));
        }
        // Every update leaves the state consistent, so a poisoned lock
        // (a panic elsewhere) is safe to keep using.
        Ok(self
            .device
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()))
    }

    fn connected(&self, device: &DeviceId) -> DriverResult<MutexGuard<'_, Device>> {
        let guard = self.lock(device)?;
        if guard.connected {
            Ok(guard)
        } else {
            Err(DriverError::not_connected(device))
        }
    }

    fn info(connected: bool) -> DeviceInfo {
        DeviceInfo {
            id: DeviceId::new(DEVICE_ID),
            name: "hello device".into(),
            platform: platform(),
            os_version: None,
            connected,
        }
    }

    fn viewport(&self) -> Viewport {
        Viewport {
            width: self.config.width,
            height: self.config.height,
            scale_factor: SCALE,
        }
    }
}

impl Driver for HelloDriver {
    fn list_devices(&self, _ctx: &CallContext) -> DriverResult<Vec<DeviceInfo>> {
        let connected = self.lock(&DeviceId::new(DEVICE_ID))?.connected;
        Ok(vec![Self::info(connected)])
    }

    fn connect(&self, ctx: &CallContext, device: &DeviceId) -> DriverResult<DeviceInfo> {
        ctx.check()?;
        let mut d = self.lock(device)?;
        if !d.connected {
            d.connected = true;
            tracing::info!(device = %device, "hello device connected");
        }
        Ok(Self::info(true))
    }

    fn disconnect(&self, _ctx: &CallContext, device: &DeviceId) -> DriverResult<()> {
        let mut d = self.lock(device)?;
        if d.connected {
            d.connected = false;
            tracing::info!(device = %device, "hello device disconnected");
        }
        Ok(())
    }

    fn health(&self, _ctx: &CallContext, device: &DeviceId) -> DriverResult<DeviceHealth> {
        drop(self.lock(device)?);
        Ok(DeviceHealth {
            healthy: true,
            detail: "the hello device is simulated and always healthy".into(),
        })
    }

    fn capabilities(
        &self,
        _ctx: &CallContext,
        device: &DeviceId,
    ) -> DriverResult<DeviceCapabilities> {
        drop(self.lock(device)?);
        Ok(DeviceCapabilities {
            actions: actions::definitions(self.config.width, self.config.height),
            // No normalized UI tree, hence no semantic Actions.
            ui_tree: false,
        })
    }

    fn observe(
        &self,
        ctx: &CallContext,
        device: &DeviceId,
        request: &ObserveRequest,
    ) -> DriverResult<DriverObservation> {
        ctx.check()?;
        let (background, taps, revision) = {
            let d = self.connected(device)?;
            (d.background, d.taps.clone(), d.revision)
        };
        let mut obs = DriverObservation::new(self.viewport());
        obs.metadata.insert(
            "background".into(),
            json!(actions::format_color(background)),
        );
        obs.metadata.insert("taps".into(), json!(taps.len()));
        obs.metadata.insert("revision".into(), json!(revision));
        if request.screenshot {
            let img = render::render(self.config.width, self.config.height, background, &taps);
            let png = render::encode_png(&img)
                .map_err(|e| DriverError::failure(format!("PNG encoding failed: {e}")))?;
            obs.png = Some(png);
        }
        Ok(obs)
    }

    fn execute(
        &self,
        ctx: &CallContext,
        device: &DeviceId,
        call: &ActionCall,
    ) -> DriverResult<ActionOutput> {
        ctx.check()?;
        let mut d = self.connected(device)?;
        let output = match actions::parse(call, self.config.width, self.config.height)? {
            Action::Tap { x, y } => {
                if d.taps.len() == KEPT_TAPS {
                    d.taps.remove(0);
                }
                d.taps.push((x, y));
                d.revision += 1;
                json!({ "accepted": true, "x": x, "y": y })
            }
            Action::SetColor { rgb } => {
                d.background = rgb;
                d.revision += 1;
                json!({ "accepted": true, "color": actions::format_color(rgb) })
            }
            Action::Greet { name } => {
                json!({ "greeting": format!("{}, {name}!", self.config.greeting) })
            }
        };
        Ok(ActionOutput::new(output))
    }

    fn doctor(&self) -> Vec<DoctorCheck> {
        vec![
            DoctorCheck::ok(
                "hello device",
                format!(
                    "{DEVICE_ID} ready, {}x{} pixels",
                    self.config.width, self.config.height
                ),
            ),
            DoctorCheck::ok(
                "hello configuration",
                format!("greeting {:?}", self.config.greeting),
            ),
        ]
    }
}

// Exactly once per plugin crate. The id must match the lib name:
// `devicerail_plugin_<id with - as _>`.
devicerail_host_plugin_api::export_plugin! {
    id: "hello",
    description: "hello: a simulated device (replace it with your backend)",
    driver: HelloDriver::new,
}

#[cfg(test)]
mod tests {
    use super::*;
    use devicerail_host_plugin_api::protocol::{CallId, ErrorCode};

    fn call(name: &str, arguments: serde_json::Value) -> ActionCall {
        ActionCall::new(CallId::new_v4(), name, arguments)
    }

    #[test]
    fn taps_are_drawn_and_greetings_said() {
        let driver = HelloDriver::with_config(Config::default());
        let ctx = CallContext::unbounded();
        let device = DeviceId::new(DEVICE_ID);
        driver.connect(&ctx, &device).expect("connect");
        let shot = ObserveRequest {
            screenshot: true,
            ui_tree: false,
            live: None,
        };
        let before = driver.observe(&ctx, &device, &shot).expect("observe");
        let out = driver
            .execute(&ctx, &device, &call("tap", json!({ "x": 10, "y": 20 })))
            .expect("tap");
        assert_eq!(out.output, json!({ "accepted": true, "x": 10, "y": 20 }));
        let after = driver.observe(&ctx, &device, &shot).expect("observe");
        assert_ne!(before.png, after.png, "the tap marker is not drawn");
        assert_eq!(after.metadata["taps"], 1);

        let out = driver
            .execute(&ctx, &device, &call("greet", json!({ "name": "Ada" })))
            .expect("greet");
        assert_eq!(out.output, json!({ "greeting": "Hi, Ada!" }));

        let outside = driver.execute(&ctx, &device, &call("tap", json!({ "x": 100000, "y": 0 })));
        assert_eq!(
            outside.map_err(|e| e.code),
            Err(ErrorCode::InvalidArguments.into())
        );
        driver.disconnect(&ctx, &device).expect("disconnect");
        let gone = driver.observe(&ctx, &device, &shot);
        assert_eq!(
            gone.map_err(|e| e.code),
            Err(ErrorCode::DeviceNotConnected.into())
        );
    }
}
