//! [`BrowserDriver`]: the `Driver` implementation. One device per
//! configured browser; each device's calls are serialized by its own lock,
//! and all DevTools I/O runs on the driver's private tokio runtime.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use devicerail_host_plugin_api::protocol::{ActionCall, DeviceId, DeviceInfo, Platform};
use devicerail_host_plugin_api::{
    ActionOutput, CallContext, DeviceCapabilities, DeviceHealth, DoctorCheck, Driver, DriverError,
    DriverObservation, DriverResult, LiveFrame, LiveRequest, ObserveRequest, PluginConfig,
    PluginInitError,
};

use crate::actions;
use crate::binary;
use crate::blocking::block_on_call;
use crate::config::{BrowserSpec, DriverConfig, Source};
use crate::connection::Connection;
use crate::endpoint;
use crate::errors::{budget, from_cdp};
use crate::launch::{self, LaunchError, LaunchOptions, Spawner};
use crate::web_semantic::WebBackend;
use devicerail_host_plugin_api::semantic;

/// Caps the `log` facade (which the plugin's log forwarding bridges to
/// the host) at `info`: the WebSocket library logs every frame, payload
/// included, at trace level, and frames carry typed text (`inputSecret`)
/// and DOM snapshots with form values. The driver's own records go through
/// `tracing` and are unaffected.
fn quiet_transport_logs() {
    use tracing_log::log;
    if log::max_level() > log::LevelFilter::Info {
        log::set_max_level(log::LevelFilter::Info);
    }
}

struct Device {
    spec: BrowserSpec,
    connected: AtomicBool,
    product: Mutex<Option<String>>,
    conn: Mutex<Option<Connection>>,
    /// The live screen a lab console watches (never an Observation).
    screencast: crate::screencast::Screencast,
}

impl Device {
    fn lock(&self) -> MutexGuard<'_, Option<Connection>> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn info(&self) -> DeviceInfo {
        DeviceInfo {
            id: DeviceId::new(&self.spec.id),
            name: self.spec.name.clone(),
            platform: Platform::Web,
            os_version: self
                .product
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
            connected: self.connected.load(Ordering::Acquire),
        }
    }
}

/// The browser driver.
pub struct BrowserDriver {
    runtime: tokio::runtime::Runtime,
    spawner: Spawner,
    devices: Vec<Device>,
}

impl BrowserDriver {
    /// A driver configured by host settings and `DEVICERAIL_BROWSER_*`.
    pub fn new(config: &PluginConfig) -> Result<Self, PluginInitError> {
        Self::with_config(DriverConfig::load(&config.settings)?)
    }

    /// A driver with an explicit configuration.
    pub fn with_config(config: DriverConfig) -> Result<Self, PluginInitError> {
        quiet_transport_logs();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("devicerail-browser-io")
            .enable_all()
            .build()
            .map_err(|e| PluginInitError::io("the I/O runtime", e))?;
        let spawner = Spawner::new().map_err(|e| PluginInitError::io("the spawner", e))?;
        let devices = config
            .browsers
            .into_iter()
            .map(|spec| Device {
                spec,
                connected: AtomicBool::new(false),
                product: Mutex::new(None),
                conn: Mutex::new(None),
                screencast: Default::default(),
            })
            .collect();
        Ok(Self {
            runtime,
            spawner,
            devices,
        })
    }

    fn device(&self, id: &DeviceId) -> DriverResult<&Device> {
        self.devices
            .iter()
            .find(|d| d.spec.id == id.as_str())
            .ok_or_else(|| DriverError::device_not_found(id))
    }

    /// Runs `fut` on the runtime, ending early on cancellation or deadline.
    fn block<T>(
        &self,
        ctx: &CallContext,
        fut: impl Future<Output = DriverResult<T>>,
    ) -> DriverResult<T> {
        block_on_call(&self.runtime, ctx, fut)
    }

    /// A live request: the newest frame of the page's screencast, started
    /// by the first request (the only one that waits for the page).
    fn live_frame(
        &self,
        device: &Device,
        id: &DeviceId,
        live: LiveRequest,
    ) -> DriverResult<DriverObservation> {
        if !device.screencast.running() {
            let guard = Self::live(device, id)?;
            let Some(conn) = guard.as_ref() else {
                return Err(DriverError::not_connected(id));
            };
            let page = conn.page.with_timeout(Some(Duration::from_secs(5)));
            device.screencast.start(self.runtime.handle(), page);
        } else if !device.connected.load(Ordering::Acquire) {
            return Err(DriverError::not_connected(id));
        }
        let frame = device.screencast.newest(live.after);
        let mut obs = DriverObservation::new(crate::connection::viewport_of(&device.spec));
        obs.png = frame.jpeg.map(|j| j.as_ref().clone());
        LiveFrame {
            seq: frame.seq,
            media_type: "image/jpeg".into(),
            captured_at_ms: frame.captured_at_ms,
        }
        .attach(&mut obs);
        Ok(obs)
    }

    /// The live connection of `device`, or the typed reason there is none.
    fn live<'d>(
        device: &'d Device,
        id: &DeviceId,
    ) -> DriverResult<MutexGuard<'d, Option<Connection>>> {
        let guard = device.lock();
        match guard.as_ref() {
            None => Err(DriverError::not_connected(id)),
            Some(conn) => match conn.client.closed() {
                Some(reason) => Err(DriverError::device_unavailable(
                    id,
                    format!("the browser connection closed: {reason}"),
                )),
                None => Ok(guard),
            },
        }
    }

    fn open(&self, ctx: &CallContext, device: &Device, id: &DeviceId) -> DriverResult<Connection> {
        let spec = device.spec.clone();
        match &spec.source {
            Source::Launch {
                binary,
                headless,
                args,
            } => {
                let binary = binary::find(binary.as_deref())
                    .map_err(|e| DriverError::device_unavailable(id, e.to_string()))?;
                let opts = LaunchOptions {
                    binary,
                    headless: *headless,
                    window: (spec.width, spec.height),
                    extra_args: args.clone(),
                };
                let mut deadline = Instant::now() + spec.launch_timeout;
                if let Some(d) = ctx.deadline() {
                    deadline = deadline.min(d);
                }
                let launched =
                    launch::launch(&self.spawner, &opts, deadline, &|| ctx.is_cancelled())
                        .map_err(|e| match e {
                            LaunchError::Cancelled => DriverError::cancelled(),
                            LaunchError::Timeout(_) if ctx.is_expired() => {
                                DriverError::deadline_exceeded()
                            }
                            e => DriverError::device_unavailable(id, e.to_string()),
                        })?;
                let ws_url = launched.ws_url().to_owned();
                self.block(ctx, async {
                    Connection::open(spec, Some(launched), &ws_url, budget(ctx))
                        .await
                        .map_err(|e| from_cdp(ctx, id, e))
                })
            }
            Source::Attach { endpoint } => {
                let endpoint = endpoint.clone();
                self.block(ctx, async {
                    let ws_url = endpoint::resolve(&endpoint, budget(ctx))
                        .await
                        .map_err(|e| from_cdp(ctx, id, e))?;
                    Connection::open(spec, None, &ws_url, budget(ctx))
                        .await
                        .map_err(|e| from_cdp(ctx, id, e))
                })
            }
        }
    }

    fn close(&self, ctx: &CallContext, mut conn: Connection) {
        let _ = self.block(ctx, async {
            conn.close(budget(ctx)).await;
            Ok(())
        });
        tracing::info!(device = %conn.spec.id, "browser device disconnected");
        // Dropping stops a launched browser and removes its profile.
        drop(conn);
    }
}

impl Driver for BrowserDriver {
    fn list_devices(&self, _ctx: &CallContext) -> DriverResult<Vec<DeviceInfo>> {
        Ok(self.devices.iter().map(Device::info).collect())
    }

    fn connect(&self, ctx: &CallContext, id: &DeviceId) -> DriverResult<DeviceInfo> {
        ctx.check()?;
        let device = self.device(id)?;
        let mut guard = device.lock();
        if let Some(conn) = guard.as_ref() {
            if conn.client.closed().is_none() {
                return Ok(device.info());
            }
            tracing::warn!(device = %id, "the browser connection was lost; reconnecting");
            if let Some(old) = guard.take() {
                self.close(ctx, old);
            }
            device.connected.store(false, Ordering::Release);
        }
        let conn = self.open(ctx, device, id)?;
        *device.product.lock().unwrap_or_else(|p| p.into_inner()) = Some(conn.product.clone());
        *guard = Some(conn);
        device.connected.store(true, Ordering::Release);
        drop(guard);
        Ok(device.info())
    }

    fn disconnect(&self, ctx: &CallContext, id: &DeviceId) -> DriverResult<()> {
        let device = self.device(id)?;
        let mut guard = device.lock();
        device.connected.store(false, Ordering::Release);
        device.screencast.stop();
        if let Some(conn) = guard.take() {
            // Closing must not be skipped because the call was cancelled.
            self.close(&CallContext::new(ctx.deadline()), conn);
        }
        Ok(())
    }

    fn health(&self, ctx: &CallContext, id: &DeviceId) -> DriverResult<DeviceHealth> {
        let device = self.device(id)?;
        let guard = match Self::live(device, id) {
            Ok(g) => g,
            Err(e) => {
                return Ok(DeviceHealth {
                    healthy: false,
                    detail: e.message,
                });
            }
        };
        let Some(conn) = guard.as_ref() else {
            return Err(DriverError::not_connected(id));
        };
        let probe = self.block(ctx, async {
            conn.browser
                .with_timeout(Some(budget(ctx).min(Duration::from_secs(5))))
                .browser_version()
                .await
                .map_err(|e| from_cdp(ctx, id, e))
        });
        Ok(match probe {
            Ok(v) => DeviceHealth {
                healthy: true,
                detail: format!("{} answers on DevTools", v.product),
            },
            Err(e) => DeviceHealth {
                healthy: false,
                detail: e.message,
            },
        })
    }

    fn capabilities(&self, _ctx: &CallContext, id: &DeviceId) -> DriverResult<DeviceCapabilities> {
        let device = self.device(id)?;
        let s = &device.spec;
        Ok(DeviceCapabilities {
            actions: actions::definitions(
                crate::connection::px(s.width, s.scale),
                crate::connection::px(s.height, s.scale),
            ),
            ui_tree: true,
        })
    }

    fn observe(
        &self,
        ctx: &CallContext,
        id: &DeviceId,
        request: &ObserveRequest,
    ) -> DriverResult<DriverObservation> {
        ctx.check()?;
        let device = self.device(id)?;
        if let Some(live) = request.live {
            return self.live_frame(device, id, live);
        }
        let mut guard = Self::live(device, id)?;
        let Some(conn) = guard.as_mut() else {
            return Err(DriverError::not_connected(id));
        };
        // Only the host's observations say whether screenshots are taken
        // (its screenshot policy); the driver's own snapshots never do.
        conn.screenshots_wanted = request.screenshot;
        self.block(ctx, async {
            let mut attempt = 0;
            loop {
                let captured = conn
                    .capture(budget(ctx), request.screenshot, request.ui_tree)
                    .await
                    .map_err(|e| from_cdp(ctx, id, e))?;
                match conn.observation(captured) {
                    Ok(obs) => return Ok(obs),
                    // A renderer swap can drop the viewport override once.
                    Err(e) if attempt == 0 => {
                        tracing::debug!("re-applying the viewport after: {e}");
                        conn.reapply_viewport(budget(ctx))
                            .await
                            .map_err(|e| from_cdp(ctx, id, e))?;
                        attempt += 1;
                    }
                    Err(e) => return Err(from_cdp(ctx, id, e)),
                }
            }
        })
    }

    fn execute(
        &self,
        ctx: &CallContext,
        id: &DeviceId,
        call: &ActionCall,
    ) -> DriverResult<ActionOutput> {
        ctx.check()?;
        let device = self.device(id)?;
        let mut guard = Self::live(device, id)?;
        let Some(conn) = guard.as_mut() else {
            return Err(DriverError::not_connected(id));
        };
        // Never log arguments: protected Actions carry secrets.
        tracing::debug!(device = %id, action = %call.name, call_id = %call.id, "executing");
        // A screenshot still being taken after an earlier input no longer
        // shows the screen after this Action: it is waited for and
        // dropped, so no input reaches Chromium while it captures (input
        // sent then can miss a cross-process frame and land in the page).
        if let Some(pending) = conn.pending_shot.take() {
            self.block(ctx, async {
                pending.settle(budget(ctx)).await;
                Ok(())
            })?;
        }
        if call.name == actions::QUERY_ELEMENTS {
            return WebBackend::new(conn, id, &self.runtime).query_elements(ctx, call);
        }
        if semantic::is_semantic(&call.name) {
            return WebBackend::new(conn, id, &self.runtime)
                .execute(ctx, call)
                .unwrap_or_else(|| Err(DriverError::unknown_action(&call.name)));
        }
        if let Some(r) = WebBackend::new(conn, id, &self.runtime).type_into(ctx, call) {
            return r;
        }
        self.block(ctx, async {
            if let Some(r) = actions::execute(conn, ctx, id, call).await {
                return r;
            }
            Err(DriverError::unknown_action(&call.name))
        })
    }

    fn doctor(&self) -> Vec<DoctorCheck> {
        let mut checks = Vec::new();
        for device in &self.devices {
            let name = format!("browser {}", device.spec.id);
            match &device.spec.source {
                Source::Launch { binary, .. } => match binary::find(binary.as_deref()) {
                    Err(e) => checks.push(DoctorCheck::fail(name, e.to_string())),
                    Ok(path) => match binary::version(&path) {
                        Ok(v) => {
                            checks.push(DoctorCheck::ok(name, format!("{}: {v}", path.display())))
                        }
                        Err(e) => checks.push(DoctorCheck::fail(name, e.to_string())),
                    },
                },
                Source::Attach { endpoint } => {
                    let resolved = self
                        .runtime
                        .block_on(endpoint::resolve(endpoint, Duration::from_secs(3)));
                    checks.push(match resolved {
                        Ok(ws) => DoctorCheck::ok(name, format!("{endpoint} answers: {ws}")),
                        Err(e) => DoctorCheck::warn(name, e.to_string()),
                    });
                }
            }
        }
        checks.push(DoctorCheck::ok(
            "browser sandbox",
            if launch::running_as_root() {
                "running as root: launched browsers get --no-sandbox"
            } else {
                "launched browsers keep their sandbox"
            },
        ));
        checks
    }
}
