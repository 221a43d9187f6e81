//! # devicerail-host-plugin-mock
//!
//! A deterministic driver with one device, `mock-1`: a login form whose UI
//! tree and rendered PNG change as Actions run. It serves DeviceRail Host
//! out of the box and is the reference driver of the conformance kit.
//!
//! Configuration (read at plugin init; host settings win over the
//! environment):
//! * `faults` / `DEVICERAIL_MOCK_FAULTS=1` adds fault injection Actions:
//!   `failAction`, `sleep {ms}` (polls cancellation and the deadline) and
//!   `panic`. Never enabled by default.
//! * `devices` / `DEVICERAIL_MOCK_DEVICES=N` (1–16, default 1) serves
//!   `mock-1` … `mock-N`, each with its own state, for multi-device
//!   routing.
//! * `feedRows` / `DEVICERAIL_MOCK_FEED_ROWS=N` (0–5000, default 0) adds a
//!   feed of N text rows below the home screen's fold, for large UI trees.
//!
//! `launchApp {appId}` opens the login screen or one of the screens built
//! for agents (`screens`): `table`, `article`, `moving`, `changes`.
//! Observations carry an idle hint (`metadata.idle`: `runningAnimations`,
//! `msSinceMutation`) so a caller can tell when the screen has settled.

mod model;
mod render;
mod screens;
mod ui;

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use devicerail_host_plugin_api::actions::{
    self, LaunchArgs, NoArgs, Points, ScrollArgs, TapArgs, TextArgs, parse_arguments,
};
use devicerail_host_plugin_api::protocol::{
    ActionCall, ActionDefinition, DeviceId, DeviceInfo, Platform, UiNode, Viewport,
};
use devicerail_host_plugin_api::semantic::{self, Mode, UiBackend};
use devicerail_host_plugin_api::{
    ActionOutput, CallContext, ConfigError, DeviceCapabilities, DeviceHealth, DoctorCheck, Driver,
    DriverError, DriverObservation, DriverResult, ObserveRequest, PluginConfig,
};
use serde::Deserialize;
use serde_json::json;

use crate::model::{APP_IDS, AppState, Field, HEIGHT, Kind, SCALE, WIDTH};

/// The id of the first (by default the only) mock device.
pub(crate) const DEVICE_ID: &str = "mock-1";
/// Setting that enables fault injection Actions.
pub(crate) const FAULTS_KEY: &str = "faults";
/// Environment variable that enables fault injection Actions (when the
/// setting is absent).
pub const FAULTS_ENV: &str = "DEVICERAIL_MOCK_FAULTS";
/// Setting with the number of mock devices (1–16).
pub(crate) const DEVICES_KEY: &str = "devices";
/// Environment variable with the number of mock devices (when the setting
/// is absent).
pub(crate) const DEVICES_ENV: &str = "DEVICERAIL_MOCK_DEVICES";
/// How many mock devices one driver may serve.
pub(crate) const DEVICES_RANGE: std::ops::RangeInclusive<usize> = 1..=16;
/// Setting with the number of feed rows on the home screen.
pub(crate) const FEED_ROWS_KEY: &str = "feedRows";
/// Environment variable with the number of feed rows (when the setting is
/// absent).
pub(crate) const FEED_ROWS_ENV: &str = "DEVICERAIL_MOCK_FEED_ROWS";
/// How many feed rows the home screen may have.
pub(crate) const FEED_ROWS_RANGE: std::ops::RangeInclusive<usize> = 0..=5000;
/// Longest text `inputText`/`inputSecret` advertise, in characters.
pub(crate) const MAX_TEXT: usize = 4096;
/// Largest scroll delta advertised, in pixels.
pub(crate) const MAX_DELTA: u32 = 100_000;

/// What the screen looks like (revision, animation stage).
type VisualKey = (u64, u64);

struct Device {
    state: AppState,
    connected: bool,
    /// PNG of `state.visual_key()`, re-rendered only after a visible
    /// change.
    png_cache: Option<(VisualKey, Arc<Vec<u8>>)>,
}

/// The mock driver.
pub struct MockDriver {
    devices: Vec<(DeviceId, Mutex<Device>)>,
    faults: bool,
}

impl MockDriver {
    /// A driver configured by the `devices` and `faults` settings, else
    /// `DEVICERAIL_MOCK_DEVICES` and `DEVICERAIL_MOCK_FAULTS`.
    pub fn new(config: &PluginConfig) -> Result<Self, ConfigError> {
        let read = config.reader();
        read.deny_unknown(&[DEVICES_KEY, FAULTS_KEY, FEED_ROWS_KEY])?;
        let count = read
            .get(DEVICES_KEY)
            .env(DEVICES_ENV)
            .integer(DEVICES_RANGE)?
            .unwrap_or(1);
        let faults = read.get(FAULTS_KEY).env(FAULTS_ENV).bool()?;
        let feed_rows = read
            .get(FEED_ROWS_KEY)
            .env(FEED_ROWS_ENV)
            .integer(FEED_ROWS_RANGE)?
            .unwrap_or(0);
        let mut driver = Self::with_devices(count, faults.unwrap_or(false));
        for (_, device) in &mut driver.devices {
            if let Ok(d) = device.get_mut() {
                d.state.feed_rows = feed_rows;
            }
        }
        Ok(driver)
    }

    /// One device, `mock-1`.
    pub fn with_faults(faults: bool) -> Self {
        Self::with_devices(1, faults)
    }

    /// `count` devices, `mock-1` … `mock-<count>`.
    pub(crate) fn with_devices(count: usize, faults: bool) -> Self {
        let devices = (1..=count.max(1))
            .map(|i| {
                let device = Device {
                    state: AppState::default(),
                    connected: false,
                    png_cache: None,
                };
                (DeviceId::new(format!("mock-{i}")), Mutex::new(device))
            })
            .collect();
        Self { devices, faults }
    }

    fn lock(&self, device: &DeviceId) -> DriverResult<MutexGuard<'_, Device>> {
        let slot = self
            .devices
            .iter()
            .find(|(id, _)| id == device)
            .map(|(_, d)| d)
            .ok_or_else(|| DriverError::device_not_found(device))?;
        // A panic while holding the lock (fault injection) must not wedge
        // the device: the state is always left consistent between steps.
        Ok(slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner()))
    }

    fn connected(&self, device: &DeviceId) -> DriverResult<MutexGuard<'_, Device>> {
        let guard = self.lock(device)?;
        if guard.connected {
            Ok(guard)
        } else {
            Err(DriverError::not_connected(device))
        }
    }

    fn info(id: &DeviceId, connected: bool) -> DeviceInfo {
        let name = if id.as_str() == DEVICE_ID {
            "Mock Device".to_owned()
        } else {
            format!("Mock Device {id}")
        };
        DeviceInfo {
            id: id.clone(),
            name,
            platform: Platform::Mock,
            os_version: Some("1.0".into()),
            connected,
        }
    }

    fn viewport() -> Viewport {
        Viewport {
            width: WIDTH,
            height: HEIGHT,
            scale_factor: SCALE,
        }
    }

    fn png(device: &mut Device) -> DriverResult<Arc<Vec<u8>>> {
        let revision = device.state.visual_key();
        if let Some((rev, png)) = &device.png_cache
            && *rev == revision
        {
            return Ok(png.clone());
        }
        let png = render::encode_png(&render::render(&device.state))
            .map_err(|e| DriverError::failure(format!("PNG encoding failed: {e}")))?;
        let png = Arc::new(png);
        device.png_cache = Some((revision, png.clone()));
        Ok(png)
    }

    fn observation(
        device: &mut Device,
        request: &ObserveRequest,
    ) -> DriverResult<DriverObservation> {
        let mut obs = DriverObservation::new(Self::viewport());
        obs.metadata.insert(
            "screen".into(),
            json!(format!("{:?}", device.state.screen).to_lowercase()),
        );
        obs.metadata.insert("orientation".into(), json!("portrait"));
        obs.metadata
            .insert("revision".into(), json!(device.state.revision));
        let quiet_ms = device.state.last_change().elapsed().as_millis() as u64;
        obs.metadata.insert(
            "idle".into(),
            json!({
                "runningAnimations": u32::from(device.state.animating()),
                "msSinceMutation": quiet_ms,
            }),
        );
        if request.screenshot {
            obs.png = Some(Self::png(device)?.as_ref().clone());
        }
        if request.ui_tree {
            obs.ui_tree = Some(device.state.ui_tree());
        }
        Ok(obs)
    }

    fn definitions(&self) -> Vec<ActionDefinition> {
        let mut defs = vec![
            actions::tap(
                "Tap a point in screenshot pixels.",
                Points::within(WIDTH, HEIGHT),
            ),
            actions::input_text("Type text into the focused field.", MAX_TEXT),
            actions::scroll("Scroll the content by a pixel delta.", MAX_DELTA),
            actions::input_secret(
                "Type a secret into the focused field; never recorded.",
                MAX_TEXT,
            ),
        ];
        defs.extend(semantic::definitions());
        defs.push(actions::definition(
            actions::LAUNCH_APP,
            "Open one of the mock's apps: login, table (1,000 rows with an edit dialog), article (long, with 70 links), moving (a button that slides into place), changes (buttons that change the screen).",
            json!({
                "type": "object",
                "properties": { "appId": { "type": "string", "enum": APP_IDS } },
                "required": ["appId"],
                "additionalProperties": false
            }),
        ));
        if self.faults {
            defs.push(actions::definition(
                "failAction",
                "Fault injection: always fails with action_failed.",
                NoArgs::schema(),
            ));
            defs.push(actions::definition(
                "sleep",
                "Fault injection: sleeps, polling cancellation and the deadline.",
                json!({
                    "type": "object",
                    "properties": { "ms": { "type": "integer", "minimum": 0, "maximum": 600000 } },
                    "required": ["ms"],
                    "additionalProperties": false
                }),
            ));
            defs.push(actions::definition(
                "panic",
                "Fault injection: panics inside the driver.",
                NoArgs::schema(),
            ));
        }
        defs
    }
}

/// Arguments of the `sleep` fault.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SleepArgs {
    ms: u64,
}

/// `semantic::UiBackend` over one device.
struct Backend<'a> {
    driver: &'a MockDriver,
    device: &'a DeviceId,
}

impl Backend<'_> {
    fn field_of(node: &UiNode, state: &AppState) -> DriverResult<Field> {
        let id = node.stable_node_id.as_str();
        state
            .elements()
            .into_iter()
            .find(|e| e.id == id)
            .and_then(|e| match e.kind {
                Kind::Input(f) => Some(f),
                _ => None,
            })
            .ok_or_else(|| DriverError::action_failed(format!("element {id} is not editable")))
    }
}

impl UiBackend for Backend<'_> {
    fn snapshot(&self, _ctx: &CallContext) -> DriverResult<DriverObservation> {
        let mut device = self.driver.lock(self.device)?;
        MockDriver::observation(
            &mut device,
            &ObserveRequest {
                screenshot: false,
                ui_tree: true,
                live: None,
            },
        )
    }

    fn tap_node(&self, _ctx: &CallContext, node: &UiNode) -> DriverResult<Mode> {
        let mut device = self.driver.lock(self.device)?;
        let state = &mut device.state;
        // Scrolled into view first, then tapped where it is now.
        state.scroll_into_view(node.stable_node_id.as_str());
        let now = state
            .elements()
            .into_iter()
            .find(|e| e.id == node.stable_node_id.as_str())
            .map(|e| model::rect_of(&e));
        let (x, y) = now.or(node.bounds).map(|b| b.center()).unwrap_or_default();
        state.tap(x, y);
        Ok(Mode::NativeSemantic)
    }

    fn scrolls_into_view(&self) -> bool {
        true
    }

    fn clear_node(&self, _ctx: &CallContext, node: &UiNode) -> DriverResult<Mode> {
        let mut device = self.driver.lock(self.device)?;
        let field = Self::field_of(node, &device.state)?;
        device.state.field_mut(field).clear();
        device.state.focus = Some(field);
        device.state.touch();
        Ok(Mode::NativeSemantic)
    }

    fn set_node_value(&self, _ctx: &CallContext, node: &UiNode, value: &str) -> DriverResult<Mode> {
        let mut device = self.driver.lock(self.device)?;
        let field = Self::field_of(node, &device.state)?;
        *device.state.field_mut(field) = value.to_owned();
        device.state.focus = Some(field);
        device.state.touch();
        Ok(Mode::NativeSemantic)
    }
}

impl Driver for MockDriver {
    fn list_devices(&self, _ctx: &CallContext) -> DriverResult<Vec<DeviceInfo>> {
        self.devices
            .iter()
            .map(|(id, _)| Ok(Self::info(id, self.lock(id)?.connected)))
            .collect()
    }

    fn connect(&self, _ctx: &CallContext, device: &DeviceId) -> DriverResult<DeviceInfo> {
        let mut d = self.lock(device)?;
        if !d.connected {
            d.connected = true;
            tracing::info!(device = %device, "mock device connected");
        }
        Ok(Self::info(device, true))
    }

    fn disconnect(&self, _ctx: &CallContext, device: &DeviceId) -> DriverResult<()> {
        let mut d = self.lock(device)?;
        if d.connected {
            d.connected = false;
            tracing::info!(device = %device, "mock device disconnected");
        }
        Ok(())
    }

    fn health(&self, _ctx: &CallContext, device: &DeviceId) -> DriverResult<DeviceHealth> {
        drop(self.lock(device)?);
        Ok(DeviceHealth {
            healthy: true,
            detail: "the mock device is always healthy".into(),
        })
    }

    fn capabilities(
        &self,
        _ctx: &CallContext,
        device: &DeviceId,
    ) -> DriverResult<DeviceCapabilities> {
        drop(self.lock(device)?);
        Ok(DeviceCapabilities {
            actions: self.definitions(),
            ui_tree: true,
        })
    }

    fn observe(
        &self,
        _ctx: &CallContext,
        device: &DeviceId,
        request: &ObserveRequest,
    ) -> DriverResult<DriverObservation> {
        let mut d = self.connected(device)?;
        Self::observation(&mut d, request)
    }

    fn execute(
        &self,
        ctx: &CallContext,
        device: &DeviceId,
        call: &ActionCall,
    ) -> DriverResult<ActionOutput> {
        drop(self.connected(device)?);
        ctx.check()?;
        if semantic::is_semantic(&call.name) {
            let backend = Backend {
                driver: self,
                device,
            };
            return semantic::execute(&backend, ctx, call)
                .unwrap_or_else(|| Err(DriverError::unknown_action(&call.name)));
        }
        match call.name.as_str() {
            "tap" => {
                let a: TapArgs = parse_arguments(call)?;
                if a.x >= WIDTH || a.y >= HEIGHT {
                    return Err(DriverError::invalid_arguments(
                        &call.name,
                        "the point is outside the viewport",
                    ));
                }
                let hit = self.lock(device)?.state.tap(f64::from(a.x), f64::from(a.y));
                Ok(ActionOutput::new(json!({ "accepted": true, "hit": hit })))
            }
            "inputText" | "inputSecret" => {
                let a = TextArgs::parse(call)?;
                let mut d = self.lock(device)?;
                let Some(field) = d.state.focus else {
                    return Err(DriverError::action_failed(
                        "no text field has focus; tap one first",
                    ));
                };
                d.state.field_mut(field).push_str(&a.text);
                d.state.touch();
                let typed = a.chars();
                Ok(ActionOutput::new(
                    json!({ "accepted": true, "typedChars": typed }),
                ))
            }
            "launchApp" => {
                let a: LaunchArgs = parse_arguments(call)?;
                if !self.lock(device)?.state.launch(&a.app_id) {
                    return Err(DriverError::invalid_arguments(
                        &call.name,
                        format!(
                            "unknown app {:?}; the mock has {}",
                            a.app_id,
                            APP_IDS.join(", ")
                        ),
                    ));
                }
                Ok(ActionOutput::new(json!({ "launched": a.app_id })))
            }
            "scroll" => {
                let a: ScrollArgs<i32> = parse_arguments(call)?;
                let mut d = self.lock(device)?;
                let max = d.state.max_scroll();
                d.state.scroll_y = (d.state.scroll_y + i64::from(a.delta_y)).clamp(0, max);
                d.state.touch();
                Ok(ActionOutput::new(
                    json!({ "accepted": true, "deltaX": a.delta_x, "scrollY": d.state.scroll_y }),
                ))
            }
            "failAction" if self.faults => {
                let _: NoArgs = parse_arguments(call)?;
                Err(DriverError::action_failed("failAction always fails")
                    .with_details(json!({ "fault": "fail" })))
            }
            "sleep" if self.faults => {
                let a: SleepArgs = parse_arguments(call)?;
                ctx.sleep(Duration::from_millis(a.ms))?;
                Ok(ActionOutput::new(json!({ "sleptMs": a.ms })))
            }
            "panic" if self.faults => {
                let _: NoArgs = parse_arguments(call)?;
                panic!("fault injection: the panic action was executed");
            }
            _ => Err(DriverError::unknown_action(&call.name)),
        }
    }

    fn doctor(&self) -> Vec<DoctorCheck> {
        let faults = if self.faults { "on" } else { "off" };
        let count = self.devices.len();
        vec![DoctorCheck::ok(
            "mock devices",
            format!("{count} device(s) ready (faults {faults})"),
        )]
    }
}

devicerail_host_plugin_api::export_plugin! {
    id: "mock",
    description: "Deterministic mock device with a stateful login form",
    driver: MockDriver::new,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_settings(settings: serde_json::Value) -> Result<MockDriver, ConfigError> {
        MockDriver::new(&PluginConfig::new(
            settings.as_object().cloned().unwrap_or_default(),
        ))
    }

    #[test]
    fn settings_configure_devices_and_faults() {
        let driver = with_settings(json!({ "devices": 3, "faults": true })).expect("valid");
        assert_eq!(driver.devices.len(), 3);
        assert!(driver.faults);
        let driver = with_settings(json!({ "devices": "2", "faults": "0" })).expect("valid");
        assert_eq!(driver.devices.len(), 2);
        assert!(!driver.faults);
    }

    #[test]
    fn bad_settings_are_refused_by_name() {
        let e = with_settings(json!({ "devices": 17 }))
            .err()
            .expect("refused");
        assert_eq!(e.key(), Some(DEVICES_KEY));
        let e = with_settings(json!({ "faults": "sometimes" }))
            .err()
            .expect("refused");
        assert_eq!(e.key(), Some(FAULTS_KEY));
    }
}
