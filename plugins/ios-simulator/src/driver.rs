//! [`IosSimulatorDriver`]: the [`Driver`] over `xcrun simctl` and
//! WebDriverAgent.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use devicerail_host_plugin_api::actions::{
    BundleLaunchArgs, KeyArgs, NoArgs, SwipeArgs, TapArgs, TextArgs, UrlArgs, parse_arguments,
};
use devicerail_host_plugin_api::protocol::{ActionCall, DeviceId, DeviceInfo, Platform, Viewport};
use devicerail_host_plugin_api::semantic;
use devicerail_host_plugin_api::{
    ActionOutput, CallContext, ConfigError, DeviceCapabilities, DeviceHealth, DoctorCheck, Driver,
    DriverError, DriverObservation, DriverResult, ObserveRequest, PluginConfig, UiTree,
};
use serde_json::json;

use crate::actions::{self, Key, KeyPress};
use crate::config::{Config, ScreenshotSource};
use crate::device::{Connection, lock, viewport_of};
use crate::errors;
use crate::normalize::{self, EpochSource, WdaElement};
use crate::semantic_backend::{Backend, Observer};
use crate::simctl::{SimDevice, SimState, Simctl, SimctlError};
use crate::wda::{Wda, WdaError};

/// Bound of the best-effort requests of `disconnect` and `doctor`.
const SHORT_REQUEST: Duration = Duration::from_secs(3);
/// Pause between WebDriverAgent readiness probes.
const READY_POLL: Duration = Duration::from_millis(200);

/// Lowers the `log` crate's global level to at most DEBUG (never raises it).
pub(crate) fn cap_log_level() {
    log::set_max_level(log::max_level().min(log::LevelFilter::Debug));
}

/// Why WebDriverAgent cannot serve a simulator now.
#[derive(Debug, thiserror::Error)]
enum WdaNotReady {
    /// It answers, but says it is not ready.
    #[error("WebDriverAgent at {base} is not ready: {message}")]
    NotReady { base: String, message: String },
    /// Asking failed.
    #[error(transparent)]
    Failed(WdaError),
}

/// The iOS Simulator driver.
pub struct IosSimulatorDriver {
    config: Config,
    simctl: Simctl,
    connections: Mutex<HashMap<String, Arc<Connection>>>,
    epochs: EpochSource,
}

/// A UI tree with what it was built from.
pub struct TreeCapture {
    /// The normalized tree, with its context and epoch.
    pub tree: UiTree,
    /// The app in front, when WDA says (`/wda/activeAppInfo`).
    pub bundle_id: Option<String>,
    /// The name of the tree's root (the app's display name).
    pub app_name: Option<String>,
    /// Whether nodes were dropped to fit the snapshot bounds.
    pub truncated: bool,
}

/// WDA's tree of the app in front, before normalization.
pub(crate) struct RawTree {
    pub(crate) bundle_id: Option<String>,
    pub(crate) root: WdaElement,
}

impl IosSimulatorDriver {
    /// The plugin's constructor: a driver configured from
    /// `PluginConfig.settings` and the environment.
    ///
    /// It also caps this library's `log` records at DEBUG: at TRACE the
    /// HTTP stack dumps raw request bytes, which would put typed text
    /// (including `inputSecret`) into the host's logs.
    pub fn new(config: &PluginConfig) -> Result<Self, ConfigError> {
        cap_log_level();
        Ok(Self::with_config(Config::from_sources(&config.settings)?))
    }

    /// A driver with an explicit configuration.
    pub fn with_config(config: Config) -> Self {
        let tag = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        Self {
            simctl: Simctl::new(config.xcrun.clone()),
            config,
            connections: Mutex::new(HashMap::new()),
            epochs: EpochSource::new(format!("{:x}", tag & 0xffff_ffff_ffff)),
        }
    }

    fn connection(&self, ctx: &CallContext, device: &DeviceId) -> DriverResult<Arc<Connection>> {
        if let Some(c) = lock(&self.connections).get(device.as_str()) {
            return Ok(c.clone());
        }
        // Error path only: tell an unknown device from a known one.
        match self.find_simulator(ctx, device) {
            Ok(_) => Err(DriverError::not_connected(device)),
            Err(e) => Err(e),
        }
    }

    /// The connected device, for benches and tests of the rlib.
    pub fn connected(&self, device: &DeviceId) -> Option<Arc<Connection>> {
        lock(&self.connections).get(device.as_str()).cloned()
    }

    fn simulators(&self, ctx: &CallContext) -> DriverResult<Vec<SimDevice>> {
        self.simctl
            .list(ctx)
            .map_err(|e| errors::simctl(ctx, None, e))
    }

    fn find_simulator(&self, ctx: &CallContext, device: &DeviceId) -> DriverResult<SimDevice> {
        self.simulators(ctx)?
            .into_iter()
            .find(|s| s.udid == device.as_str() && s.is_ios())
            .ok_or_else(|| DriverError::device_not_found(device))
    }

    fn info(sim: &SimDevice, connected: bool) -> DeviceInfo {
        DeviceInfo {
            id: DeviceId::new(sim.udid.clone()),
            name: sim.name.clone(),
            platform: Platform::Ios,
            os_version: sim.os_version.clone(),
            connected,
        }
    }

    /// Whether a simulator in this state is offered at all.
    fn listable(&self, sim: &SimDevice) -> bool {
        sim.is_ios()
            && sim.available
            && match sim.state {
                SimState::Booted => true,
                SimState::Shutdown | SimState::Booting => self.config.boot,
                _ => false,
            }
    }

    fn ensure_booted(&self, ctx: &CallContext, sim: &SimDevice) -> DriverResult<()> {
        let device = DeviceId::new(sim.udid.clone());
        match sim.state {
            SimState::Booted => return Ok(()),
            SimState::Shutdown | SimState::Booting if self.config.boot => {}
            ref state => {
                return Err(DriverError::device_in_state(
                    &device,
                    &state.reason(),
                    &format!(
                        "boot it (xcrun simctl boot {}) or enable boot on connect (DEVICERAIL_IOS_BOOT=1)",
                        sim.udid
                    ),
                ));
            }
        }
        let cap = self.config.boot_timeout;
        let started = Instant::now();
        tracing::info!(device = %sim.udid, name = %sim.name, "booting the simulator");
        let booted = if sim.state == SimState::Shutdown {
            self.simctl.boot(ctx, &sim.udid, cap)
        } else {
            Ok(())
        }
        .and_then(|()| self.simctl.wait_booted(ctx, &sim.udid, cap));
        booted.map_err(|e| match e {
            // A refused boot leaves the device unusable, not an Action failed.
            SimctlError::Failed { .. } => {
                DriverError::device_unavailable(&device, format!("the simulator did not boot: {e}"))
            }
            e => errors::simctl(ctx, Some(&device), e),
        })?;
        tracing::info!(
            device = %sim.udid,
            elapsed_ms = started.elapsed().as_millis() as u64,
            "the simulator has booted"
        );
        Ok(())
    }

    /// Waits until WDA reports ready, launching the configured runner once.
    fn wait_for_wda(&self, ctx: &CallContext, sim: &SimDevice, wda: &Wda) -> DriverResult<()> {
        let device = DeviceId::new(sim.udid.clone());
        let wait_end = Instant::now() + self.config.effective_wda_wait();
        let mut launched = false;
        loop {
            let last = match wda.status(ctx) {
                Ok(s) if s.ready => return Ok(()),
                Ok(s) => format!(
                    "WebDriverAgent at {} is not ready: {}",
                    wda.base(),
                    s.message.unwrap_or_default()
                ),
                Err(WdaError::Cancelled) => return Err(DriverError::cancelled()),
                Err(WdaError::DeadlinePassed) => return Err(DriverError::deadline_exceeded()),
                Err(e) => e.to_string(),
            };
            if !launched && let Some(bundle) = &self.config.wda_bundle_id {
                launched = true;
                tracing::info!(device = %sim.udid, bundle = %bundle, "launching WebDriverAgent");
                if let Err(e) = self.simctl.launch(ctx, &sim.udid, bundle) {
                    let e = errors::simctl(ctx, Some(&device), e);
                    if errors::is_terminal(&e) {
                        return Err(e);
                    }
                    tracing::warn!(device = %sim.udid, "could not launch WebDriverAgent: {e}");
                }
            }
            let now = Instant::now();
            let end = ctx.deadline().map_or(wait_end, |d| d.min(wait_end));
            if now >= end {
                return Err(
                    DriverError::device_unavailable(&device, last.clone()).with_details(
                        json!({ "deviceId": device, "reason": last, "wdaUrl": wda.base() }),
                    ),
                );
            }
            ctx.sleep(READY_POLL.min(end - now))?;
        }
    }

    fn scale_of(&self, ctx: &CallContext, wda: &Wda, session: &str, width_pt: f64) -> f64 {
        match wda.screen_scale(ctx, session) {
            Ok(Some(scale)) => scale,
            other => {
                // Derive it from a screenshot: pixels over points.
                let derived = wda
                    .screenshot(ctx)
                    .ok()
                    .and_then(|png| crate::png::dimensions(&png))
                    .map(|(w, _)| (f64::from(w) / width_pt).round())
                    .filter(|s| s.is_finite() && *s >= 1.0)
                    .unwrap_or(1.0);
                tracing::warn!(
                    "WebDriverAgent did not report the screen scale ({other:?}); using {derived}"
                );
                derived
            }
        }
    }

    /// Diagnoses an unreachable WDA: a simulator that is no longer booted
    /// (or gone) is the more useful reason.
    fn unavailable(&self, ctx: &CallContext, conn: &Connection, e: WdaError) -> DriverError {
        if !e.is_transport() {
            return errors::wda(ctx, &conn.id, e);
        }
        let probe = CallContext::new(Some(Instant::now() + SHORT_REQUEST));
        match self.simctl.list(&probe) {
            Ok(sims) => match sims.iter().find(|s| s.udid == conn.udid()) {
                None => DriverError::device_unavailable(&conn.id, "the simulator no longer exists"),
                Some(s) if s.state != SimState::Booted => DriverError::device_in_state(
                    &conn.id,
                    &s.state.reason(),
                    &format!("WebDriverAgent went away with it ({e})"),
                ),
                Some(_) => errors::wda(ctx, &conn.id, e),
            },
            Err(_) => errors::wda(ctx, &conn.id, e),
        }
    }

    /// Maps a WDA error of an operation on `conn`.
    pub(crate) fn wda_err(&self, ctx: &CallContext, conn: &Connection, e: WdaError) -> DriverError {
        self.unavailable(ctx, conn, e)
    }

    /// A PNG from one source, checked to be a PNG.
    pub fn screenshot_from(
        &self,
        ctx: &CallContext,
        conn: &Connection,
        source: ScreenshotSource,
    ) -> DriverResult<Vec<u8>> {
        let png = match source {
            ScreenshotSource::Wda => conn
                .wda
                .screenshot(ctx)
                .map_err(|e| self.wda_err(ctx, conn, e))?,
            ScreenshotSource::Simctl => self
                .simctl
                .screenshot(ctx, conn.udid())
                .map_err(|e| errors::simctl(ctx, Some(&conn.id), e))?,
        };
        if crate::png::dimensions(&png).is_none() {
            return Err(DriverError::failure(format!(
                "the {} screenshot is not a PNG",
                source.as_str()
            )));
        }
        Ok(png)
    }

    /// A PNG from the preferred source, or from the other one when that fails.
    pub(crate) fn screenshot(
        &self,
        ctx: &CallContext,
        conn: &Connection,
    ) -> DriverResult<(Vec<u8>, ScreenshotSource)> {
        let first = self.config.screenshot;
        match self.screenshot_from(ctx, conn, first) {
            Ok(png) => Ok((png, first)),
            Err(e) if errors::is_terminal(&e) => Err(e),
            Err(e1) => {
                tracing::debug!(
                    device = conn.udid(),
                    "{} screenshot failed ({e1}); trying {}",
                    first.as_str(),
                    first.other().as_str()
                );
                match self.screenshot_from(ctx, conn, first.other()) {
                    Ok(png) => Ok((png, first.other())),
                    Err(e2) if errors::is_terminal(&e2) => Err(e2),
                    Err(e2) => Err(if e1.code == "device_unavailable" {
                        e1
                    } else {
                        e2
                    }),
                }
            }
        }
    }

    /// The app in front and WDA's tree of it, not yet normalized. Without
    /// `/wda/activeAppInfo` (older or trimmed WDA builds) the app is named
    /// by the tree's root instead, and the endpoint is not asked again on
    /// this connection.
    pub(crate) fn fetch_tree(&self, ctx: &CallContext, conn: &Connection) -> DriverResult<RawTree> {
        let bundle_id = if conn.app_info_supported() {
            match conn.wda.active_bundle_id(ctx) {
                Ok(b) => b,
                Err(e) if e.is_unknown_command() => {
                    tracing::info!(
                        device = conn.udid(),
                        "WebDriverAgent has no /wda/activeAppInfo ({e}); naming the app by its tree"
                    );
                    conn.app_info_unsupported();
                    None
                }
                Err(e) => return Err(self.wda_err(ctx, conn, e)),
            }
        } else {
            None
        };
        let root = conn
            .wda
            .source(ctx)
            .map_err(|e| self.wda_err(ctx, conn, e))?;
        Ok(RawTree { bundle_id, root })
    }

    /// A fetched tree normalized into the connection's pixel space.
    pub(crate) fn build_tree(&self, conn: &Connection, raw: RawTree) -> TreeCapture {
        let normalized = normalize::normalize(&raw.root, conn.pixel_scale());
        let app_name = normalize::name_of(&raw.root).map(str::to_owned);
        let context_id = raw
            .bundle_id
            .clone()
            .or_else(|| app_name.clone())
            .unwrap_or_else(|| "unknown".to_owned());
        let epoch = conn.epoch(&self.epochs, &context_id, normalized.signature);
        TreeCapture {
            tree: UiTree {
                context: normalize::context(&context_id, &epoch),
                root_stable_node_ids: normalized.root_stable_node_ids,
                nodes: normalized.nodes,
            },
            bundle_id: raw.bundle_id,
            app_name,
            truncated: normalized.truncated,
        }
    }

    /// The normalized UI tree of the app in front.
    pub fn ui_tree(&self, ctx: &CallContext, conn: &Connection) -> DriverResult<TreeCapture> {
        let raw = self.fetch_tree(ctx, conn)?;
        Ok(self.build_tree(conn, raw))
    }

    /// One observation of a connected device. A screenshot is taken on a
    /// second thread while the tree is fetched; the tree is normalized
    /// afterwards, in the pixels of that screenshot.
    pub(crate) fn observe_connection(
        &self,
        ctx: &CallContext,
        conn: &Connection,
        request: &ObserveRequest,
    ) -> DriverResult<DriverObservation> {
        std::thread::scope(|scope| {
            let shot = request
                .screenshot
                .then(|| scope.spawn(|| self.screenshot(ctx, conn)));
            let window = conn
                .refresh_window(ctx)
                .map_err(|e| self.wda_err(ctx, conn, e));
            let raw = if request.ui_tree && window.is_ok() {
                Some(self.fetch_tree(ctx, conn))
            } else {
                None
            };
            let shot = shot.map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|_| Err(DriverError::failure("the screenshot thread panicked")))
            });
            let (window, mut viewport) = window?;
            let mut obs_meta = serde_json::Map::new();
            obs_meta.insert("udid".into(), json!(conn.udid()));
            let mut png_out = None;
            if let Some(shot) = shot {
                let (png, source) = shot?;
                if let Some(size) = crate::png::dimensions(&png) {
                    if size != (viewport.width, viewport.height) {
                        tracing::debug!(
                            device = conn.udid(),
                            "screenshot is {}x{}, window x scale is {}x{}; the screenshot defines the pixels",
                            size.0,
                            size.1,
                            viewport.width,
                            viewport.height
                        );
                    }
                    viewport = conn.adopt_screenshot(window, size);
                }
                obs_meta.insert("screenshotSource".into(), json!(source.as_str()));
                png_out = Some(png);
            }
            let mut obs = DriverObservation::new(viewport);
            obs.png = png_out;
            if let Some(raw) = raw {
                let capture = self.build_tree(conn, raw?);
                match &capture.bundle_id {
                    Some(b) => obs_meta.insert("bundleId".into(), json!(b)),
                    None => obs_meta.insert("appName".into(), json!(capture.app_name)),
                };
                if capture.truncated {
                    obs_meta.insert("uiTreeTruncated".into(), json!(true));
                }
                obs.ui_tree = Some(capture.tree);
            }
            obs.metadata = obs_meta;
            Ok(obs)
        })
    }

    /// Points in screenshot pixels, checked against the viewport, in
    /// points. The viewport is the last screenshot's size (or window size
    /// × scale before any screenshot); a point outside it is refused with
    /// `invalid_arguments` even when the window, at WDA's scale, would be
    /// larger.
    fn to_points(
        &self,
        ctx: &CallContext,
        conn: &Connection,
        action: &str,
        points: &[(u32, u32)],
    ) -> DriverResult<Vec<(f64, f64)>> {
        let inside = |v: &Viewport| points.iter().all(|(x, y)| *x < v.width && *y < v.height);
        if !inside(&conn.viewport()) {
            // The window may have rotated since the last observation.
            let v = conn
                .refresh_viewport(ctx)
                .map_err(|e| self.wda_err(ctx, conn, e))?;
            if !inside(&v) {
                return Err(DriverError::invalid_arguments(
                    action,
                    format!("the point is outside the {}x{} viewport", v.width, v.height),
                ));
            }
        }
        let scale = conn.pixel_scale();
        Ok(points
            .iter()
            .map(|(x, y)| scale.point_to_points(f64::from(*x), f64::from(*y)))
            .collect())
    }

    fn run_action(
        &self,
        ctx: &CallContext,
        conn: &Connection,
        call: &ActionCall,
    ) -> DriverResult<ActionOutput> {
        let name = call.name.as_str();
        let wda = &conn.wda;
        let wda_err = |e| self.wda_err(ctx, conn, e);
        match name {
            "tap" => {
                let a: TapArgs = parse_arguments(call)?;
                let p = self.to_points(ctx, conn, name, &[(a.x, a.y)])?[0];
                conn.with_session(ctx, |s| wda.tap(ctx, s, p.0, p.1))
                    .map_err(wda_err)?;
                Ok(ActionOutput::new(
                    json!({ "accepted": true, "pointX": p.0, "pointY": p.1 }),
                ))
            }
            "swipe" => {
                let a: SwipeArgs = parse_arguments(call)?;
                let ms = u64::from(actions::SWIPE.resolve(call, a.duration_ms)?);
                let p =
                    self.to_points(ctx, conn, name, &[(a.from_x, a.from_y), (a.to_x, a.to_y)])?;
                conn.with_session(ctx, |s| wda.swipe(ctx, s, p[0], p[1], ms))
                    .map_err(wda_err)?;
                Ok(ActionOutput::new(
                    json!({ "accepted": true, "durationMs": ms }),
                ))
            }
            "inputText" | "inputSecret" => {
                let a = TextArgs::parse(call)?;
                let secret = name == "inputSecret";
                let chars = a.chars();
                a.check_length(call, actions::MAX_TEXT_CHARS)?;
                if chars > 0 {
                    conn.with_session(ctx, |s| wda.keys(ctx, s, &a.text))
                        .map_err(|e| {
                            if secret {
                                errors::wda_secret(ctx, &conn.id, e)
                            } else {
                                wda_err(e)
                            }
                        })?;
                }
                Ok(ActionOutput::new(if secret {
                    json!({ "accepted": true })
                } else {
                    json!({ "accepted": true, "typedChars": chars })
                }))
            }
            "pressKey" => {
                let a: KeyArgs<Key> = parse_arguments(call)?;
                match a.key.press() {
                    KeyPress::Typed(k) => conn.with_session(ctx, |s| wda.keys(ctx, s, k)),
                    KeyPress::Button(b) => conn.with_session(ctx, |s| wda.press_button(ctx, s, b)),
                }
                .map_err(wda_err)?;
                Ok(ActionOutput::new(json!({ "accepted": true })))
            }
            "home" => {
                let _: NoArgs = parse_arguments(call)?;
                wda.homescreen(ctx).map_err(wda_err)?;
                Ok(ActionOutput::new(json!({ "accepted": true })))
            }
            "launchApp" => {
                let a: BundleLaunchArgs = parse_arguments(call)?;
                if !actions::valid_bundle_id(&a.bundle_id) {
                    return Err(DriverError::invalid_arguments(
                        name,
                        "bundleId is not a bundle identifier",
                    ));
                }
                let pid = self
                    .simctl
                    .launch(ctx, conn.udid(), &a.bundle_id)
                    .map_err(|e| errors::simctl(ctx, Some(&conn.id), e))?;
                Ok(ActionOutput::new(
                    json!({ "launched": true, "bundleId": a.bundle_id, "pid": pid }),
                ))
            }
            "openUrl" => {
                let a: UrlArgs = parse_arguments(call)?;
                a.check(call, &actions::URLS)?;
                self.simctl
                    .open_url(ctx, conn.udid(), &a.url)
                    .map_err(|e| errors::simctl(ctx, Some(&conn.id), e))?;
                Ok(ActionOutput::new(json!({ "opened": true })))
            }
            _ => Err(DriverError::unknown_action(name)),
        }
    }

    fn check_wda(&self, ctx: &CallContext, wda: &Wda) -> Result<(), WdaNotReady> {
        match wda.status(ctx) {
            Ok(s) if s.ready => Ok(()),
            Ok(s) => Err(WdaNotReady::NotReady {
                base: wda.base().to_owned(),
                message: s.message.unwrap_or_default(),
            }),
            Err(e) => Err(WdaNotReady::Failed(e)),
        }
    }
}

impl Driver for IosSimulatorDriver {
    fn list_devices(&self, ctx: &CallContext) -> DriverResult<Vec<DeviceInfo>> {
        ctx.check()?;
        let sims = match self.simctl.list(ctx) {
            Ok(s) => s,
            Err(e) if e.is_not_found() && !self.config.xcrun_explicit => {
                tracing::debug!("no xcrun on this machine: no iOS Simulators");
                return Ok(Vec::new());
            }
            Err(e) => return Err(errors::simctl(ctx, None, e)),
        };
        let connections = lock(&self.connections);
        Ok(sims
            .iter()
            .filter(|s| {
                let connected = connections.contains_key(&s.udid);
                connected || self.listable(s)
            })
            .map(|s| Self::info(s, connections.contains_key(&s.udid)))
            .collect())
    }

    fn connect(&self, ctx: &CallContext, device: &DeviceId) -> DriverResult<DeviceInfo> {
        ctx.check()?;
        if let Some(c) = self.connected(device) {
            return Ok(c.info.clone());
        }
        let sim = self.find_simulator(ctx, device)?;
        if !sim.available {
            return Err(DriverError::device_in_state(
                device,
                "unavailable",
                sim.availability_error
                    .as_deref()
                    .unwrap_or("simctl gives no reason"),
            ));
        }
        self.ensure_booted(ctx, &sim)?;
        let wda = Wda::new(self.config.wda_url_for(&sim.udid), self.config.http_timeout);
        self.wait_for_wda(ctx, &sim, &wda)?;
        let wda_fail = |e| errors::wda(ctx, device, e);
        let session = wda.create_session(ctx).map_err(wda_fail)?;
        let size = wda.window_size(ctx, &session).map_err(wda_fail)?;
        let scale = self.scale_of(ctx, &wda, &session, size.width.max(1.0));
        let viewport = viewport_of(size, scale);
        let info = Self::info(&sim, true);
        let conn = Arc::new(Connection::new(
            info.clone(),
            wda,
            session.clone(),
            scale,
            viewport,
        ));
        let winner = {
            let mut map = lock(&self.connections);
            map.entry(sim.udid.clone())
                .or_insert_with(|| conn.clone())
                .clone()
        };
        if !Arc::ptr_eq(&winner, &conn) {
            // Another call connected first; drop our session.
            let _ = conn.wda.delete_session(ctx, &session);
            return Ok(winner.info.clone());
        }
        tracing::info!(
            device = %sim.udid,
            name = %sim.name,
            wda = conn.wda.base(),
            scale,
            "connected"
        );
        Ok(info)
    }

    fn disconnect(&self, ctx: &CallContext, device: &DeviceId) -> DriverResult<()> {
        let removed = lock(&self.connections).remove(device.as_str());
        if let Some(conn) = removed {
            // Wait for a running Action, then end the session (best effort).
            drop(lock(&conn.ops));
            let bounded = CallContext::new(Some(
                ctx.deadline()
                    .unwrap_or_else(|| Instant::now() + SHORT_REQUEST)
                    .min(Instant::now() + SHORT_REQUEST),
            ));
            if let Err(e) = conn.wda.delete_session(&bounded, &conn.session()) {
                tracing::debug!(device = %device, "could not end the WebDriverAgent session: {e}");
            }
            tracing::info!(device = %device, "disconnected");
        }
        Ok(())
    }

    fn health(&self, ctx: &CallContext, device: &DeviceId) -> DriverResult<DeviceHealth> {
        ctx.check()?;
        let sim = self.find_simulator(ctx, device)?;
        if sim.state != SimState::Booted {
            return Ok(DeviceHealth {
                healthy: false,
                detail: format!("the simulator is {}", sim.state.as_str()),
            });
        }
        let wda = match self.connected(device) {
            Some(c) => c.wda.clone(),
            None => Wda::new(self.config.wda_url_for(&sim.udid), self.config.http_timeout),
        };
        Ok(match self.check_wda(ctx, &wda) {
            Ok(()) => DeviceHealth {
                healthy: true,
                detail: format!("booted; WebDriverAgent ready at {}", wda.base()),
            },
            Err(reason) => DeviceHealth {
                healthy: false,
                detail: format!("booted; {reason}"),
            },
        })
    }

    fn capabilities(
        &self,
        ctx: &CallContext,
        device: &DeviceId,
    ) -> DriverResult<DeviceCapabilities> {
        if self.connected(device).is_none() {
            self.find_simulator(ctx, device)?;
        }
        Ok(DeviceCapabilities {
            actions: actions::definitions(),
            ui_tree: true,
        })
    }

    fn observe(
        &self,
        ctx: &CallContext,
        device: &DeviceId,
        request: &ObserveRequest,
    ) -> DriverResult<DriverObservation> {
        ctx.check()?;
        let conn = self.connection(ctx, device)?;
        self.observe_connection(ctx, &conn, request)
    }

    fn execute(
        &self,
        ctx: &CallContext,
        device: &DeviceId,
        call: &ActionCall,
    ) -> DriverResult<ActionOutput> {
        ctx.check()?;
        let conn = self.connection(ctx, device)?;
        let _ops = lock(&conn.ops);
        ctx.check()?;
        if semantic::is_semantic(&call.name) {
            let backend = Backend::new(self, &conn);
            return semantic::execute(&backend, ctx, call)
                .unwrap_or_else(|| Err(DriverError::unknown_action(&call.name)));
        }
        let started = Instant::now();
        let result = self.run_action(ctx, &conn, call);
        tracing::debug!(
            device = %device,
            action = %call.name,
            ok = result.is_ok(),
            elapsed_us = started.elapsed().as_micros() as u64,
            "action finished"
        );
        result
    }

    fn doctor(&self) -> Vec<DoctorCheck> {
        let ctx = CallContext::new(Some(Instant::now() + Duration::from_secs(10)));
        let mut checks = Vec::new();
        let sims = self.simctl.list(&ctx);
        if !cfg!(target_os = "macos") {
            if matches!(&sims, Err(e @ SimctlError::Process(_)) if e.is_not_found()) {
                // Nothing to check here: no simulator can run on this host,
                // and that is no failure of this host.
                return vec![DoctorCheck::skip(
                    "platform",
                    format!(
                        "the iOS Simulator runs only on macOS with Xcode (this host runs {}); nothing to check",
                        std::env::consts::OS
                    ),
                )];
            }
            checks.push(DoctorCheck::warn(
                "platform",
                "iOS Simulators run only on macOS with Xcode; this machine reaches them only through the configured xcrun",
            ));
        }
        checks.push(match &sims {
            Ok(list) => {
                let ios: Vec<_> = list.iter().filter(|s| s.is_ios() && s.available).collect();
                let booted = ios.iter().filter(|s| s.state == SimState::Booted).count();
                DoctorCheck::ok(
                    "xcrun simctl",
                    format!(
                        "{} ({}): {} available iOS simulators, {booted} booted",
                        self.simctl.xcrun().display(),
                        if self.config.boot {
                            "boot on connect"
                        } else {
                            "booted only"
                        },
                        ios.len()
                    ),
                )
            }
            Err(e @ SimctlError::Process(_)) if e.is_not_found() => DoctorCheck::fail(
                "xcrun simctl",
                format!("{e}; install Xcode or set DEVICERAIL_XCRUN"),
            ),
            Err(e) => DoctorCheck::fail("xcrun simctl", e.to_string()),
        });
        let wda_ctx = CallContext::new(Some(Instant::now() + SHORT_REQUEST));
        let wda = Wda::new(&self.config.wda_url, SHORT_REQUEST);
        checks.push(match self.check_wda(&wda_ctx, &wda) {
            Ok(()) => DoctorCheck::ok("WebDriverAgent", format!("ready at {}", wda.base())),
            Err(reason) => DoctorCheck::warn(
                "WebDriverAgent",
                format!(
                    "{reason}; start WebDriverAgent on the simulator or set DEVICERAIL_IOS_WDA_URL"
                ),
            ),
        });
        checks.push(DoctorCheck::ok(
            "screenshots",
            format!(
                "{} first, {} as fallback",
                self.config.screenshot.as_str(),
                self.config.screenshot.other().as_str()
            ),
        ));
        checks
    }
}

impl Observer for IosSimulatorDriver {
    fn wda_err(&self, ctx: &CallContext, conn: &Connection, e: WdaError) -> DriverError {
        IosSimulatorDriver::wda_err(self, ctx, conn, e)
    }

    fn observe_connection(
        &self,
        ctx: &CallContext,
        conn: &Connection,
        request: &ObserveRequest,
    ) -> DriverResult<DriverObservation> {
        IosSimulatorDriver::observe_connection(self, ctx, conn, request)
    }
}
