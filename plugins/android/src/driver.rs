//! `AndroidDriver`: the `Driver` over the adb server.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use devicerail_host_plugin_api::actions::{
    KeyArgs, LaunchArgs, LongPressArgs, NoArgs, SwipeArgs, TapArgs, TextArgs, UrlArgs,
    parse_arguments,
};
use devicerail_host_plugin_api::protocol::{
    ActionCall, DeviceId, DeviceInfo, IdString, Platform, UiContextKind, UiContextRef, UiNode,
    Viewport,
};
use devicerail_host_plugin_api::semantic::{self, Mode, UiBackend};
use devicerail_host_plugin_api::{
    ActionOutput, CallContext, ConfigError, DeviceCapabilities, DeviceHealth, DoctorCheck, Driver,
    DriverError, DriverObservation, DriverResult, ObserveRequest, PluginConfig, UiTree,
};
use serde_json::{Value, json};

use crate::actions::{self, LONG_PRESS, MAX_TEXT, SWIPE, URLS};
use crate::adb::{Adb, AdbError, ListedDevice, ShellOutput, ShellSession};
use crate::config::{Config, InputMethod, ScreenshotMode, ScreenshotPreference};
use crate::device_state::{USABLE, state_error, state_reason};
use crate::observe::{self, Screenshot};
use crate::screen::Display;
use crate::text::{self, KEYCODE_DEL, KEYCODE_MOVE_END, SECRET_LOOP};
use crate::touch;
use crate::uitree;

/// Budget of reading a new device's properties while listing.
const PROBE_BUDGET: Duration = Duration::from_secs(5);
/// Least time between two such attempts for one device.
const PROBE_RETRY: Duration = Duration::from_secs(30);

/// What the driver remembers about one serial.
#[derive(Debug, Default)]
struct DeviceEntry {
    connected: bool,
    /// Changes on every connect; part of the document epoch.
    connection: u64,
    model: Option<String>,
    release: Option<String>,
    display: Option<Display>,
    /// Quarter turns, from the last dump or screenshot.
    rotation: u32,
    /// Last cost of each screenshot method (`[raw, png]`); `Duration::MAX`
    /// once a method produced unusable output on this device.
    shot_cost: [Option<Duration>; 2],
    /// Whether the device speaks shell protocol v2.
    shell_v2: bool,
    /// Serializes `uiautomator dump` (one dump file per device).
    dump_gate: Arc<Mutex<()>>,
    /// When listing last tried to read the properties.
    probed_at: Option<Instant>,
    /// How gestures reach this device, and its shell session for touch
    /// events (found on the first gesture after connect).
    input: Arc<Mutex<InputPath>>,
    /// The last raw frame and its PNG (an unchanged screen is not encoded
    /// again).
    last_frame: Option<observe::LastFrame>,
    /// The last UI tree with the frame and focus it was dumped on.
    last_ui: Option<Arc<LastUi>>,
    /// Whether an Action ran since [`DeviceEntry::last_ui`] (then it is
    /// never reused).
    acted: bool,
}

/// How gestures reach one device.
#[derive(Debug, Default)]
enum InputPath {
    /// Not probed yet.
    #[default]
    Unknown,
    /// `input tap` / `input swipe`.
    Input,
    /// Touch events on `touchscreen`, through `session` (opened on use).
    Touch {
        touchscreen: touch::Touchscreen,
        session: Option<ShellSession>,
    },
}

/// A UI tree and what it was dumped on.
#[derive(Debug)]
struct LastUi {
    snapshot: Snapshot,
    /// [`observe::Screenshot::frame`] of the screenshot taken with it,
    /// and how that screenshot was taken (frames of different methods are
    /// never compared).
    frame: (ScreenshotMode, u64),
    at: Instant,
}

/// A UI tree with what it was built from.
#[derive(Debug, Clone)]
struct Snapshot {
    tree: UiTree,
    parsed: uitree::Parsed,
    /// `(component, package)` of the focused window.
    focus: Option<(String, String)>,
}

/// A copy of what one call needs.
#[derive(Debug, Clone)]
struct Session {
    connection: u64,
    display: Option<Display>,
    rotation: u32,
    screenshot: ScreenshotMode,
    shell_v2: bool,
    dump_gate: Arc<Mutex<()>>,
    input: Arc<Mutex<InputPath>>,
    last_frame: Option<observe::LastFrame>,
    /// The last UI tree when it may answer this call (no Action since,
    /// young enough).
    reusable_ui: Option<Arc<LastUi>>,
}

/// The Android driver.
#[derive(Debug)]
pub struct AndroidDriver {
    adb: Adb,
    devices: Mutex<HashMap<String, DeviceEntry>>,
    connections: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn server_error(e: AdbError) -> DriverError {
    match e {
        AdbError::Cancelled => DriverError::cancelled(),
        AdbError::Deadline => DriverError::deadline_exceeded(),
        other => DriverError::custom("adb_server_unavailable", other.to_string(), true),
    }
}

fn observe_error(device: &DeviceId, e: observe::ObserveError) -> DriverError {
    match e {
        observe::ObserveError::Adb(a) => a.into_driver(device),
        observe::ObserveError::NotIdle(message) => not_idle(&message, 1),
        other => DriverError::action_failed(other.to_string()),
    }
}

/// The platform code of a UI dump that failed because the screen would
/// not settle: retryable, since the next attempt may find it idle.
pub(crate) const UI_NOT_IDLE: &str = "ui_not_idle";

/// `uiautomator dump` gave up `attempts` times in a row.
fn not_idle(message: &str, attempts: u32) -> DriverError {
    DriverError::platform(
        UI_NOT_IDLE,
        format!(
            "the UI could not be read: uiautomator reported \"{message}\" on {attempts} attempt{} (the screen keeps changing, e.g. an animation); try again, or stop the animation",
            if attempts == 1 { "" } else { "s" }
        ),
        true,
    )
    .with_details(json!({ "attempts": attempts }))
}

fn id(s: &str) -> DriverResult<IdString> {
    IdString::truncating(s).ok_or_else(|| DriverError::failure(format!("empty identifier {s:?}")))
}

impl AndroidDriver {
    /// A driver configured from settings and the environment. Loaded only
    /// to be inspected, it never starts an adb server (`startServer` is
    /// off), so `plugins install`/`list` and `doctor` leave no process.
    pub fn new(config: &PluginConfig) -> Result<Self, ConfigError> {
        let mut resolved = Config::load(&config.settings)?;
        if !config.purpose.may_start_servers() {
            resolved.start_server = false;
        }
        Ok(Self::with_config(resolved))
    }

    /// A driver with an explicit configuration.
    pub fn with_config(config: Config) -> Self {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        Self {
            adb: Adb::new(config),
            devices: Mutex::new(HashMap::new()),
            // Epochs differ across daemon lifetimes too.
            connections: AtomicU64::new((seed & 0xffff_ffff) << 16),
        }
    }

    /// The adb access this driver uses.
    pub fn adb(&self) -> &Adb {
        &self.adb
    }

    fn listed(&self, ctx: &CallContext) -> DriverResult<Vec<ListedDevice>> {
        self.adb.devices(ctx).map_err(server_error)
    }

    fn session(&self, device: &DeviceId) -> DriverResult<Session> {
        let map = lock(&self.devices);
        match map.get(device.as_str()) {
            Some(e) if e.connected => Ok(Session {
                connection: e.connection,
                display: e.display,
                rotation: e.rotation,
                screenshot: choose_screenshot(
                    self.adb.config().screenshot_for(device.as_str()),
                    e.shot_cost,
                ),
                shell_v2: e.shell_v2,
                dump_gate: e.dump_gate.clone(),
                input: e.input.clone(),
                last_frame: e.last_frame.clone(),
                reusable_ui: e
                    .last_ui
                    .clone()
                    .filter(|u| !e.acted && u.at.elapsed() < self.adb.config().ui_tree_reuse),
            }),
            Some(_) => Err(DriverError::not_connected(device)),
            None => Err(DriverError::not_connected(device)),
        }
    }

    fn update(&self, device: &DeviceId, f: impl FnOnce(&mut DeviceEntry)) {
        if let Some(e) = lock(&self.devices).get_mut(device.as_str()) {
            f(e);
        }
    }

    /// Runs a command line and requires status 0.
    fn run(
        &self,
        ctx: &CallContext,
        device: &DeviceId,
        command: &str,
        what: &str,
    ) -> DriverResult<ShellOutput> {
        tracing::debug!(device = %device, command, "adb shell");
        self.adb
            .shell(ctx, device.as_str(), command)
            .and_then(|o| o.success(what))
            .map_err(|e| e.into_driver(device))
    }

    fn info(&self, listed: &ListedDevice) -> DeviceInfo {
        let map = lock(&self.devices);
        let entry = map.get(&listed.serial);
        let model = entry
            .and_then(|e| e.model.clone())
            .or_else(|| listed.model.clone());
        let usable = listed.state == USABLE;
        DeviceInfo {
            id: DeviceId::new(listed.serial.clone()),
            // The state is not part of the name: using the device answers
            // `device_unavailable` with the state as its reason.
            name: model.unwrap_or_else(|| listed.serial.clone()),
            platform: Platform::Android,
            os_version: entry.and_then(|e| e.release.clone()),
            connected: usable && entry.is_some_and(|e| e.connected),
        }
    }

    /// Reads model, release and display in one round trip.
    fn probe(
        &self,
        ctx: &CallContext,
        device: &DeviceId,
    ) -> DriverResult<(Option<String>, Option<String>, Option<Display>)> {
        let out = self.run(
            ctx,
            device,
            "getprop ro.product.model; getprop ro.build.version.release; wm size; wm density",
            "reading device properties",
        )?;
        let text = out.text();
        let mut lines = text.lines();
        let some = |s: Option<&str>| {
            s.map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        let model = some(lines.next());
        let release = some(lines.next());
        Ok((model, release, observe::parse_display(&text)))
    }

    fn ensure_display(
        &self,
        ctx: &CallContext,
        device: &DeviceId,
        session: &Session,
    ) -> DriverResult<Display> {
        if let Some(d) = session.display {
            return Ok(d);
        }
        let d = observe::display(&self.adb, ctx, device.as_str())
            .map_err(|e| e.into_driver(device))?
            .ok_or_else(|| DriverError::failure("`wm size` reported no display size"))?;
        self.update(device, |e| e.display = Some(d));
        Ok(d)
    }

    /// The UI tree now.
    fn ui_tree(
        &self,
        ctx: &CallContext,
        device: &DeviceId,
        session: &Session,
    ) -> DriverResult<Snapshot> {
        let dump = {
            let _gate = lock(&session.dump_gate);
            let still = observe::Still {
                shell_v2: session.shell_v2,
                mode: session.screenshot,
            };
            match observe::dump_settled(&self.adb, ctx, device.as_str(), still) {
                Ok((dump, attempts)) => {
                    if attempts > 1 {
                        tracing::debug!(device = %device, attempts, "the UI settled after retries");
                    }
                    dump
                }
                Err((observe::ObserveError::NotIdle(message), attempts)) => {
                    return Err(not_idle(&message, attempts));
                }
                Err((e, _)) => return Err(observe_error(device, e)),
            }
        };
        let parsed =
            observe::parse(&dump).map_err(|e| DriverError::action_failed(e.to_string()))?;
        let focus_pkg = dump.focus.as_ref().map(|(_, p)| p.as_str());
        let package = uitree::context_package(&parsed, focus_pkg).to_owned();
        let epoch = uitree::document_epoch(
            session.connection,
            dump.focus.as_ref().map(|(c, _)| c.as_str()),
            parsed.structure,
        );
        let tree = UiTree {
            context: UiContextRef {
                context_kind: UiContextKind::Native,
                context_id: id(&package)?,
                document_epoch: id(&epoch)?,
            },
            root_stable_node_ids: parsed.roots.clone(),
            nodes: parsed.nodes.clone(),
        };
        Ok(Snapshot {
            tree,
            parsed,
            focus: dump.focus,
        })
    }

    fn observe_connected(
        &self,
        ctx: &CallContext,
        device: &DeviceId,
        request: &ObserveRequest,
    ) -> DriverResult<DriverObservation> {
        let session = self.session(device)?;
        let serial = device.as_str();
        // A method whose output was unusable is remembered at once, even
        // when the rest of the observation fails (a flaky UI dump), so it
        // is not tried again before every capture until reconnect.
        let shot = |ctx: &CallContext| {
            let tried = session.screenshot;
            let attempt = observe::screenshot(
                &self.adb,
                ctx,
                serial,
                tried,
                session.shell_v2,
                session.last_frame.as_ref(),
            );
            self.update(device, |e| {
                if let Some(broken) = attempt.broken {
                    e.shot_cost[slot(broken)] = Some(Duration::MAX);
                }
                if let Ok(p) = &attempt.result {
                    e.shot_cost[slot(p.mode)] = Some(p.elapsed);
                    if p.mode == ScreenshotMode::Raw {
                        e.last_frame = Some(observe::LastFrame {
                            frame: p.frame,
                            png: Arc::new(p.png.clone()),
                            size: (p.width, p.height),
                        });
                    }
                }
            });
            attempt.result.map_err(|e| observe_error(device, e))
        };
        // How old the tree that answers is, when it is not dumped now.
        let mut reused_ms: Option<u64> = None;
        let (png, ui): (Option<Screenshot>, Option<_>) = match (request.screenshot, request.ui_tree)
        {
            (true, true) => match &session.reusable_ui {
                // No Action since the last dump: the frame and the focused
                // window tell whether the screen changed by itself, for
                // the cost of a screenshot and a `dumpsys`.
                Some(last) => {
                    let (png, focus) = std::thread::scope(|s| {
                        let handle = s.spawn(|| observe::focus(&self.adb, ctx, serial));
                        let png = shot(ctx);
                        let focus = handle.join().unwrap_or_else(|_| {
                            Err(crate::adb::AdbError::Protocol(
                                "the focus thread panicked".into(),
                            ))
                        });
                        (png, focus)
                    });
                    let png = png?;
                    let focus = focus.map_err(|e| e.into_driver(device))?;
                    let ui = if (png.mode, png.frame) == last.frame && focus == last.snapshot.focus
                    {
                        reused_ms = Some(last.at.elapsed().as_millis() as u64);
                        last.snapshot.clone()
                    } else {
                        self.ui_tree(ctx, device, &session)?
                    };
                    (Some(png), Some(ui))
                }
                // Screenshot and dump are independent streams: run them
                // together. The dump (small buffers) gets the helper
                // thread; the calling thread keeps the frame's large
                // buffers in its warm allocator.
                None => {
                    let (png, ui) = std::thread::scope(|s| {
                        let session = &session;
                        let handle = s.spawn(move || self.ui_tree(ctx, device, session));
                        let png = shot(ctx);
                        let ui = handle.join().unwrap_or_else(|_| {
                            Err(DriverError::failure("the UI dump thread panicked"))
                        });
                        (png, ui)
                    });
                    (Some(png?), Some(ui?))
                }
            },
            (true, false) => (Some(shot(ctx)?), None),
            (false, true) => (None, Some(self.ui_tree(ctx, device, &session)?)),
            (false, false) => (None, None),
        };
        if let (Some(p), Some(snap), None) = (&png, &ui, reused_ms) {
            let last = Arc::new(LastUi {
                snapshot: snap.clone(),
                frame: (p.mode, p.frame),
                at: Instant::now(),
            });
            self.update(device, |e| {
                e.last_ui = Some(last);
                e.acted = false;
            });
        }
        let display = match (&png, session.display) {
            (_, Some(d)) => d,
            (Some(p), None) => Display {
                width: p.width,
                height: p.height,
                density: 160,
            },
            (None, None) => self.ensure_display(ctx, device, &session)?,
        };
        let mut rotation = session.rotation;
        if let Some(snap) = &ui {
            rotation = snap.parsed.rotation % 4;
        }
        let (width, height) = match &png {
            Some(p) => {
                if (p.width, p.height) == display.rotated(0) {
                    rotation &= !1;
                } else if (p.width, p.height) == display.rotated(1) {
                    rotation |= 1;
                } else {
                    // `wm size` changed since it was read: the frame wins.
                    let resized = Display {
                        width: p.width,
                        height: p.height,
                        density: display.density,
                    };
                    rotation = 0;
                    self.update(device, |e| e.display = Some(resized));
                }
                (p.width, p.height)
            }
            None => display.rotated(rotation),
        };
        if rotation != session.rotation {
            self.update(device, |e| e.rotation = rotation);
        }
        let mut obs = DriverObservation::new(Viewport {
            width,
            height,
            scale_factor: display.scale_factor(),
        });
        obs.metadata.insert("serial".into(), json!(serial));
        obs.metadata.insert("rotation".into(), json!(rotation));
        obs.metadata.insert(
            "orientation".into(),
            json!(if rotation % 2 == 1 {
                "landscape"
            } else {
                "portrait"
            }),
        );
        if let Some(p) = png {
            obs.metadata
                .insert("screenshotSource".into(), json!(p.mode.as_str()));
            obs.png = Some(p.png);
        }
        if let Some(Snapshot {
            tree,
            parsed,
            focus,
        }) = ui
        {
            obs.metadata
                .insert("package".into(), json!(tree.context.context_id.as_str()));
            if let Some((component, _)) = focus {
                obs.metadata
                    .insert("focusedWindow".into(), json!(component));
            }
            if parsed.truncated {
                obs.metadata.insert("uiTreeTruncated".into(), json!(true));
            }
            if let Some(ms) = reused_ms {
                // Same frame, same focused window, no Action since: the
                // last dump's tree, said so.
                obs.metadata.insert("uiTreeReused".into(), json!(true));
                obs.metadata.insert("uiTreeAgeMs".into(), json!(ms));
            }
            obs.ui_tree = Some(tree);
        }
        Ok(obs)
    }

    /// The current viewport size, when known without a round trip.
    fn known_size(&self, device: &DeviceId) -> Option<(u32, u32)> {
        let map = lock(&self.devices);
        let e = map.get(device.as_str())?;
        e.display.map(|d| d.rotated(e.rotation))
    }

    fn check_point(
        &self,
        call: &ActionCall,
        device: &DeviceId,
        points: &[(u32, u32)],
    ) -> DriverResult<()> {
        if let Some((w, h)) = self.known_size(device)
            && let Some((x, y)) = points.iter().find(|(x, y)| *x >= w || *y >= h)
        {
            return Err(DriverError::invalid_arguments(
                &call.name,
                format!("point ({x}, {y}) is outside the {w}x{h} screen"),
            ));
        }
        Ok(())
    }

    fn type_text(
        &self,
        ctx: &CallContext,
        device: &DeviceId,
        call: &ActionCall,
    ) -> DriverResult<Value> {
        let a = TextArgs::parse(call)?;
        a.check_length(call, MAX_TEXT)?;
        let steps =
            text::plan(&a.text).map_err(|e| DriverError::invalid_arguments(&call.name, e))?;
        let lines = text::command_lines(&steps);
        for line in &lines {
            ctx.check()?;
            self.run(ctx, device, line, "input text")?;
        }
        Ok(json!({ "typedChars": a.chars(), "commands": lines.len() }))
    }

    fn type_secret(
        &self,
        ctx: &CallContext,
        device: &DeviceId,
        call: &ActionCall,
    ) -> DriverResult<Value> {
        // Argument errors never quote the secret (`TextArgs::parse`).
        let a = TextArgs::parse(call)?;
        a.check_length(call, MAX_TEXT)?;
        let steps = text::plan(&a.text).map_err(|e| {
            DriverError::invalid_arguments(
                &call.name,
                format!(
                    "the character at position {} cannot be typed with `input text`: only printable ASCII, newline and tab can",
                    e.index
                ),
            )
        })?;
        let stdin = text::stdin_script(&steps);
        tracing::debug!(device = %device, steps = steps.len(), "typing a secret through exec: stdin");
        let out = self
            .adb
            .exec_with_stdin(ctx, device.as_str(), SECRET_LOOP, stdin)
            .map_err(|e| e.into_driver(device))?;
        if out.status != 0 {
            return Err(DriverError::action_failed(format!(
                "typing the secret failed: input exited with status {}",
                out.status
            )));
        }
        Ok(json!({ "typedChars": a.chars() }))
    }

    /// Performs `g`: as touch events where the device lets the shell write
    /// them (`inputMethod` auto or touch, natural orientation), else with
    /// `input`. Answers which way it went.
    fn gesture(
        &self,
        ctx: &CallContext,
        device: &DeviceId,
        g: touch::Gesture,
    ) -> DriverResult<&'static str> {
        let method = self.adb.config().input_for(device.as_str());
        let session = self.session(device)?;
        if method != InputMethod::Input {
            if session.rotation % 4 == 0 {
                if self.touch(ctx, device, &session, g, method)? {
                    return Ok("touchEvents");
                }
            } else if method == InputMethod::Touch {
                return Err(DriverError::action_failed(
                    "touch events are written in the display's natural orientation only; rotate it back or set inputMethod = \"auto\"",
                ));
            }
        }
        let (command, what) = match g {
            touch::Gesture::Tap { x, y } => (actions::tap_command(x, y), "input tap"),
            touch::Gesture::Press { x, y, ms } => (
                actions::swipe_command(x, y, x, y, u32::try_from(ms).unwrap_or(u32::MAX)),
                "input swipe",
            ),
            touch::Gesture::Swipe { from, to, ms } => (
                actions::swipe_command(
                    from.0,
                    from.1,
                    to.0,
                    to.1,
                    u32::try_from(ms).unwrap_or(u32::MAX),
                ),
                "input swipe",
            ),
        };
        self.run(ctx, device, &command, what)?;
        Ok("input")
    }

    /// `g` as touch events on the device's persistent shell: `false` when
    /// the device has no touchscreen the shell may write (found on the
    /// first gesture) and `method` lets `input` do it instead.
    fn touch(
        &self,
        ctx: &CallContext,
        device: &DeviceId,
        session: &Session,
        g: touch::Gesture,
        method: InputMethod,
    ) -> DriverResult<bool> {
        let mut path = lock(&session.input);
        if matches!(*path, InputPath::Unknown) {
            let found = self
                .adb
                .shell(ctx, device.as_str(), touch::PROBE)
                .map_err(|e| e.into_driver(device))
                .map(|o| touch::parse_probe(&o.text()))?;
            tracing::debug!(device = %device, touchscreen = ?found, "input path probed");
            *path = match found {
                Some(touchscreen) => InputPath::Touch {
                    touchscreen,
                    session: None,
                },
                None => InputPath::Input,
            };
        }
        let InputPath::Touch {
            touchscreen,
            session: shell,
        } = &mut *path
        else {
            return match method {
                InputMethod::Touch => Err(DriverError::action_failed(
                    "the device lists no touchscreen (getevent -lp shows no INPUT_PROP_DIRECT device with multi-touch axes); set inputMethod = \"input\"",
                )),
                _ => Ok(false),
            };
        };
        let screen = match self.known_size(device) {
            Some(s) => s,
            None => self.ensure_display(ctx, device, session)?.rotated(0),
        };
        let line = touchscreen.command(g, screen);
        let timeout = self.adb.config().command_timeout;
        let extra = match g {
            touch::Gesture::Tap { .. } => 0,
            touch::Gesture::Press { ms, .. } | touch::Gesture::Swipe { ms, .. } => ms,
        };
        let budget = ctx.remaining().unwrap_or(timeout).min(timeout) + Duration::from_millis(extra);
        for attempt in 0..2 {
            if shell.is_none() {
                *shell = Some(
                    ShellSession::open(self.adb.config().server, device.as_str(), budget)
                        .map_err(|e| e.into_driver(device))?,
                );
            }
            let Some(open) = shell.as_mut() else {
                continue;
            };
            match open.run(&line, budget) {
                Ok(out) if out.status == 0 => return Ok(true),
                Ok(out) => {
                    let why = crate::adb::excerpt(&out.stdout);
                    if method == InputMethod::Auto {
                        tracing::info!(device = %device, "touch events refused ({why}); using input from now on");
                        *path = InputPath::Input;
                        return Ok(false);
                    }
                    return Err(DriverError::action_failed(format!(
                        "writing touch events to {} failed: {why}",
                        touchscreen.path
                    )));
                }
                Err(e) => {
                    // A broken session is opened again once.
                    *shell = None;
                    if attempt == 1 {
                        return Err(e.into_driver(device));
                    }
                    tracing::debug!(device = %device, "the shell session broke ({e}); opening it again");
                }
            }
        }
        Ok(false)
    }

    fn execute_connected(
        &self,
        ctx: &CallContext,
        device: &DeviceId,
        call: &ActionCall,
    ) -> DriverResult<ActionOutput> {
        // Whatever the Action does, the last UI tree no longer answers.
        self.update(device, |e| e.acted = true);
        if semantic::is_semantic(&call.name) {
            let backend = Backend {
                driver: self,
                device,
            };
            return semantic::execute(&backend, ctx, call)
                .unwrap_or_else(|| Err(DriverError::unknown_action(&call.name)));
        }
        let output = match call.name.as_str() {
            "tap" => {
                let a: TapArgs = parse_arguments(call)?;
                self.check_point(call, device, &[(a.x, a.y)])?;
                self.gesture(ctx, device, touch::Gesture::Tap { x: a.x, y: a.y })?;
                json!({ "x": a.x, "y": a.y })
            }
            "longPress" => {
                let a: LongPressArgs = parse_arguments(call)?;
                let ms = LONG_PRESS.resolve(call, a.duration_ms)?;
                self.check_point(call, device, &[(a.x, a.y)])?;
                let g = touch::Gesture::Press {
                    x: a.x,
                    y: a.y,
                    ms: u64::from(ms),
                };
                self.gesture(ctx, device, g)?;
                json!({ "x": a.x, "y": a.y, "durationMs": ms })
            }
            "swipe" => {
                let a: SwipeArgs = parse_arguments(call)?;
                let ms = SWIPE.resolve(call, a.duration_ms)?;
                self.check_point(call, device, &[(a.from_x, a.from_y), (a.to_x, a.to_y)])?;
                let g = touch::Gesture::Swipe {
                    from: (a.from_x, a.from_y),
                    to: (a.to_x, a.to_y),
                    ms: u64::from(ms),
                };
                self.gesture(ctx, device, g)?;
                json!({ "durationMs": ms })
            }
            "inputText" => self.type_text(ctx, device, call)?,
            "inputSecret" => self.type_secret(ctx, device, call)?,
            "pressKey" => {
                let a: KeyArgs = parse_arguments(call)?;
                let code = crate::keys::keycode(&a.key).ok_or_else(|| {
                    DriverError::invalid_arguments(
                        &call.name,
                        format!(
                            "unknown key {:?}; known: {}",
                            a.key,
                            crate::keys::names().collect::<Vec<_>>().join(", ")
                        ),
                    )
                })?;
                self.run(
                    ctx,
                    device,
                    &actions::key_command(&[code]),
                    "input keyevent",
                )?;
                json!({ "key": a.key, "keyCode": code })
            }
            "back" | "home" => {
                let _: NoArgs = parse_arguments(call)?;
                let code = if call.name == "back" { 4 } else { 3 };
                self.run(
                    ctx,
                    device,
                    &actions::key_command(&[code]),
                    "input keyevent",
                )?;
                json!({ "keyCode": code })
            }
            "launchApp" => {
                let a: LaunchArgs = parse_arguments(call)?;
                if !actions::valid_package(&a.app_id) {
                    return Err(DriverError::invalid_arguments(
                        &call.name,
                        format!(
                            "{:?} is not a package name such as com.example.app",
                            a.app_id
                        ),
                    ));
                }
                let out = self
                    .adb
                    .shell(ctx, device.as_str(), &actions::launch_command(&a.app_id))
                    .map_err(|e| e.into_driver(device))?;
                let text = out.text();
                if text.contains("No activities found") || out.status != 0 {
                    return Err(DriverError::action_failed(format!(
                        "{} has no launchable activity (is it installed?)",
                        a.app_id
                    ))
                    .with_details(json!({ "appId": a.app_id, "status": out.status })));
                }
                json!({ "appId": a.app_id })
            }
            "openUrl" => {
                let a: UrlArgs = parse_arguments(call)?;
                a.check(call, &URLS)?;
                let out = self.run(ctx, device, &actions::open_url_command(&a.url), "am start")?;
                let text = out.text();
                if let Some(line) = text.lines().find(|l| l.starts_with("Error")) {
                    return Err(DriverError::action_failed(format!(
                        "am start could not open the URL: {}",
                        line.trim()
                    )));
                }
                json!({ "url": a.url })
            }
            _ => return Err(DriverError::unknown_action(&call.name)),
        };
        Ok(ActionOutput::new(output))
    }
}

/// Index of a method in `DeviceEntry::shot_cost`.
fn slot(mode: ScreenshotMode) -> usize {
    match mode {
        ScreenshotMode::Raw => 0,
        ScreenshotMode::Png => 1,
    }
}

/// The screenshot method for the next capture on a device.
pub(crate) fn choose_screenshot(
    preference: ScreenshotPreference,
    cost: [Option<Duration>; 2],
) -> ScreenshotMode {
    let failed = |m: ScreenshotMode| cost[slot(m)] == Some(Duration::MAX);
    match preference {
        ScreenshotPreference::Fixed(m) => {
            let other = match m {
                ScreenshotMode::Raw => ScreenshotMode::Png,
                ScreenshotMode::Png => ScreenshotMode::Raw,
            };
            if failed(m) && !failed(other) {
                other
            } else {
                m
            }
        }
        ScreenshotPreference::Auto => match cost {
            [None, _] => ScreenshotMode::Raw,
            [Some(_), None] => ScreenshotMode::Png,
            [Some(raw), Some(png)] if png < raw => ScreenshotMode::Png,
            _ => ScreenshotMode::Raw,
        },
    }
}

/// The semantic Actions' view of one connected device. Interactions are
/// input events at the node (Android's accessibility actions need an
/// on-device service), so they report `coordinateFallback`.
struct Backend<'a> {
    driver: &'a AndroidDriver,
    device: &'a DeviceId,
}

const FALLBACK: Mode = Mode::CoordinateFallback(
    devicerail_host_plugin_api::protocol::CoordinateFallbackReason::SemanticInteractionUnavailable,
);

impl Backend<'_> {
    /// The centre of the node's on-screen part, in pixels.
    fn point(&self, node: &UiNode) -> DriverResult<(u32, u32)> {
        let b = node
            .bounds
            .ok_or_else(|| DriverError::action_failed("the element has no bounds"))?;
        let (w, h) = self
            .driver
            .known_size(self.device)
            .map(|(w, h)| (f64::from(w), f64::from(h)))
            .unwrap_or((f64::MAX, f64::MAX));
        let (x1, y1) = (b.x.max(0.0), b.y.max(0.0));
        let (x2, y2) = ((b.x + b.width.get()).min(w), (b.y + b.height.get()).min(h));
        if x2 <= x1 || y2 <= y1 {
            return Err(DriverError::action_failed("the element is off screen"));
        }
        Ok((((x1 + x2) / 2.0) as u32, ((y1 + y2) / 2.0) as u32))
    }

    /// Focus the field and delete its current value.
    fn clear_steps(&self, node: &UiNode) -> DriverResult<Vec<String>> {
        let (x, y) = self.point(node)?;
        let mut cmds = vec![actions::tap_command(x, y)];
        let len = node
            .value
            .as_deref()
            .or(node.text.as_deref())
            .map_or(0, |v| v.chars().count());
        if len > 0 {
            cmds.push(actions::key_command(&[KEYCODE_MOVE_END]));
            for chunk in vec![KEYCODE_DEL; len].chunks(64) {
                cmds.push(actions::key_command(chunk));
            }
        }
        Ok(cmds)
    }

    fn run_all(&self, ctx: &CallContext, cmds: &[String], what: &str) -> DriverResult<()> {
        let mut line = String::new();
        for cmd in cmds {
            if !line.is_empty() && line.len() + cmd.len() > text::MAX_LINE {
                self.driver.run(ctx, self.device, &line, what)?;
                line.clear();
            }
            if !line.is_empty() {
                line.push_str(" && ");
            }
            line.push_str(cmd);
        }
        if !line.is_empty() {
            self.driver.run(ctx, self.device, &line, what)?;
        }
        Ok(())
    }
}

impl UiBackend for Backend<'_> {
    fn snapshot(&self, ctx: &CallContext) -> DriverResult<DriverObservation> {
        self.driver.observe_connected(
            ctx,
            self.device,
            &ObserveRequest {
                screenshot: false,
                ui_tree: true,
                live: None,
            },
        )
    }

    fn tap_node(&self, ctx: &CallContext, node: &UiNode) -> DriverResult<Mode> {
        let (x, y) = self.point(node)?;
        self.driver
            .gesture(ctx, self.device, crate::touch::Gesture::Tap { x, y })?;
        Ok(FALLBACK)
    }

    /// Taps inside `node` (which lies inside `ancestor`): Android hands
    /// the touch to the innermost clickable view under the finger, the
    /// ancestor, and the point stays on what the caller pointed at rather
    /// than on whatever sits at the ancestor's centre.
    fn tap_within(
        &self,
        ctx: &CallContext,
        node: &UiNode,
        ancestor: &UiNode,
    ) -> DriverResult<Mode> {
        tracing::debug!(
            node = %node.stable_node_id,
            ancestor = %ancestor.stable_node_id,
            "tapping a non-clickable node for its clickable ancestor"
        );
        self.tap_node(ctx, node)
    }

    fn clear_node(&self, ctx: &CallContext, node: &UiNode) -> DriverResult<Mode> {
        let cmds = self.clear_steps(node)?;
        self.run_all(ctx, &cmds, "clearing the field")?;
        Ok(FALLBACK)
    }

    fn set_node_value(&self, ctx: &CallContext, node: &UiNode, value: &str) -> DriverResult<Mode> {
        let steps =
            text::plan(value).map_err(|e| DriverError::invalid_arguments("setElementValue", e))?;
        let mut cmds = self.clear_steps(node)?;
        cmds.extend(steps.iter().map(text::step_command));
        self.run_all(ctx, &cmds, "setting the field")?;
        Ok(FALLBACK)
    }
}

impl Driver for AndroidDriver {
    fn list_devices(&self, ctx: &CallContext) -> DriverResult<Vec<DeviceInfo>> {
        let listed = self.listed(ctx)?;
        for d in listed.iter().filter(|d| d.state == USABLE) {
            {
                let mut map = lock(&self.devices);
                let e = map.entry(d.serial.clone()).or_default();
                let recently = e.probed_at.is_some_and(|t| t.elapsed() < PROBE_RETRY);
                if e.model.is_some() || recently {
                    continue;
                }
                e.probed_at = Some(Instant::now());
            }
            let device = DeviceId::new(d.serial.clone());
            // A hung device must not hold every listing for the full
            // command timeout.
            let probe_ctx = CallContext::from_parts(
                Some(ctx.deadline().map_or(Instant::now() + PROBE_BUDGET, |d| {
                    d.min(Instant::now() + PROBE_BUDGET)
                })),
                ctx.cancel_flag().clone(),
                ctx.observation_id(),
                ctx.request_id().to_owned(),
            );
            match self.probe(&probe_ctx, &device) {
                Ok((model, release, display)) => {
                    let mut map = lock(&self.devices);
                    let e = map.entry(d.serial.clone()).or_default();
                    e.model = model;
                    e.release = release;
                    if e.display.is_none() {
                        e.display = display;
                    }
                }
                Err(e) if e.is_cancellation() => return Err(e),
                Err(e) if e.is_deadline() && ctx.is_expired() => return Err(e),
                Err(e) => {
                    tracing::warn!(serial = %d.serial, error = %e, "could not read device properties")
                }
            }
        }
        Ok(listed.iter().map(|d| self.info(d)).collect())
    }

    fn connect(&self, ctx: &CallContext, device: &DeviceId) -> DriverResult<DeviceInfo> {
        ctx.check()?;
        let listed = self.listed(ctx)?;
        let Some(d) = listed.into_iter().find(|d| d.serial == device.as_str()) else {
            return Err(DriverError::device_not_found(device));
        };
        if d.state != USABLE {
            return Err(state_error(device, &d.state));
        }
        let (model, release, display) = self.probe(ctx, device)?;
        let shell_v2 = self
            .adb
            .shell_v2(ctx, device.as_str())
            .map_err(|e| e.into_driver(device))?;
        let connection = self.connections.fetch_add(1, Ordering::Relaxed) + 1;
        {
            let mut map = lock(&self.devices);
            let e = map.entry(d.serial.clone()).or_default();
            e.connected = true;
            e.connection = connection;
            e.model = model;
            e.release = release;
            e.display = display;
            e.rotation = 0;
            e.shot_cost = [None, None];
            e.shell_v2 = shell_v2;
            // A new connection measures and probes again.
            e.input = Arc::default();
            e.last_frame = None;
            e.last_ui = None;
            e.acted = false;
        }
        tracing::info!(device = %device, "android device connected");
        Ok(self.info(&ListedDevice {
            state: USABLE.into(),
            ..d
        }))
    }

    fn disconnect(&self, _ctx: &CallContext, device: &DeviceId) -> DriverResult<()> {
        if let Some(e) = lock(&self.devices).get_mut(device.as_str())
            && e.connected
        {
            e.connected = false;
            e.input = Arc::default();
            e.last_frame = None;
            e.last_ui = None;
            tracing::info!(device = %device, "android device disconnected");
        }
        Ok(())
    }

    fn health(&self, ctx: &CallContext, device: &DeviceId) -> DriverResult<DeviceHealth> {
        let listed = self.listed(ctx)?;
        let Some(d) = listed.iter().find(|d| d.serial == device.as_str()) else {
            return Ok(DeviceHealth {
                healthy: false,
                detail: "the adb server does not list the device".into(),
            });
        };
        if d.state != USABLE {
            return Ok(DeviceHealth {
                healthy: false,
                detail: state_reason(&d.state),
            });
        }
        let started = Instant::now();
        Ok(match self.adb.shell(ctx, device.as_str(), "true") {
            Ok(_) => DeviceHealth {
                healthy: true,
                detail: format!("the shell answers in {} ms", started.elapsed().as_millis()),
            },
            Err(AdbError::Cancelled) => return Err(DriverError::cancelled()),
            Err(AdbError::Deadline) => return Err(DriverError::deadline_exceeded()),
            Err(e) => DeviceHealth {
                healthy: false,
                detail: e.to_string(),
            },
        })
    }

    fn capabilities(
        &self,
        ctx: &CallContext,
        device: &DeviceId,
    ) -> DriverResult<DeviceCapabilities> {
        let known = lock(&self.devices).contains_key(device.as_str());
        if !known
            && !self
                .listed(ctx)?
                .iter()
                .any(|d| d.serial == device.as_str())
        {
            return Err(DriverError::device_not_found(device));
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
        self.observe_connected(ctx, device, request)
    }

    fn execute(
        &self,
        ctx: &CallContext,
        device: &DeviceId,
        call: &ActionCall,
    ) -> DriverResult<ActionOutput> {
        ctx.check()?;
        self.session(device)?;
        self.execute_connected(ctx, device, call)
    }

    fn doctor(&self) -> Vec<DoctorCheck> {
        let ctx = CallContext::new(Some(Instant::now() + Duration::from_secs(5)));
        let config = self.adb.config();
        let mut checks = Vec::new();
        match self.adb.server_version(&ctx) {
            Ok(v) => checks.push(DoctorCheck::ok(
                "adb server",
                format!("reachable at {} (protocol version {v})", config.server),
            )),
            Err(e) => checks.push(DoctorCheck::fail(
                "adb server",
                format!(
                    "{e}; start it with `adb -P {} start-server`{}",
                    config.server.port(),
                    if config.start_server {
                        " (the plugin tries this itself for loopback addresses)"
                    } else {
                        ""
                    }
                ),
            )),
        }
        match self.adb.devices(&ctx) {
            Ok(list) if list.is_empty() => checks.push(DoctorCheck::warn(
                "android devices",
                "no devices: connect one by USB or with `adb connect HOST:PORT`",
            )),
            Ok(list) => {
                let mut by_state: Vec<String> = list
                    .iter()
                    .map(|d| format!("{} ({})", d.serial, d.state))
                    .collect();
                by_state.sort();
                let usable = list.iter().filter(|d| d.state == USABLE).count();
                let line = format!("{usable} of {} usable: {}", list.len(), by_state.join(", "));
                checks.push(if usable > 0 {
                    DoctorCheck::ok("android devices", line)
                } else {
                    DoctorCheck::warn("android devices", line)
                });
            }
            Err(_) => {}
        }
        checks.push(DoctorCheck::ok(
            "android screenshots",
            match config.screenshot {
                ScreenshotPreference::Auto => {
                    "auto: each device tries raw and png once, then keeps the faster".to_owned()
                }
                ScreenshotPreference::Fixed(m) => {
                    format!("{} first, the other method as fallback", m.as_str())
                }
            },
        ));
        checks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RAW: ScreenshotMode = ScreenshotMode::Raw;
    const PNG: ScreenshotMode = ScreenshotMode::Png;

    fn ms(n: u64) -> Option<Duration> {
        Some(Duration::from_millis(n))
    }

    #[test]
    fn auto_tries_both_then_keeps_the_faster() {
        let auto = ScreenshotPreference::Auto;
        assert_eq!(choose_screenshot(auto, [None, None]), RAW);
        assert_eq!(choose_screenshot(auto, [ms(80), None]), PNG);
        assert_eq!(choose_screenshot(auto, [ms(80), ms(30)]), PNG);
        assert_eq!(choose_screenshot(auto, [ms(20), ms(30)]), RAW);
        assert_eq!(choose_screenshot(auto, [Some(Duration::MAX), ms(30)]), PNG);
    }

    #[test]
    fn fixed_modes_fall_back_only_after_a_failure() {
        let raw = ScreenshotPreference::Fixed(RAW);
        assert_eq!(choose_screenshot(raw, [ms(900), ms(10)]), RAW);
        assert_eq!(choose_screenshot(raw, [Some(Duration::MAX), None]), PNG);
        let png = ScreenshotPreference::Fixed(PNG);
        assert_eq!(choose_screenshot(png, [None, Some(Duration::MAX)]), RAW);
        assert_eq!(
            choose_screenshot(png, [Some(Duration::MAX), Some(Duration::MAX)]),
            PNG
        );
    }
}
