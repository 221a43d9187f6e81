//! What a [`super::RemoteDriver`] and its supervisor share: the live
//! worker (or why there is none), the devices to connect again after a
//! restart, and sending one call and waiting for its reply, forwarding
//! cancellation and killing a worker that stays silent past the deadline
//! (or the cancellation) plus grace. Callers are executor threads, never
//! async workers.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use devicerail_host_plugin_api::{CallContext, DriverError, DriverResult};
use devicerail_host_protocol::DeviceId;
use serde_json::Value;

use super::frame::Kind;
use super::link::{Delivery, Link, WorkerDown};
use super::message::{Call, Cancel, Method, Outcome};
use super::spec::WorkerSpec;

/// How often a waiting call checks its cancellation flag.
const POLL: Duration = Duration::from_millis(20);
/// How long a call waits for the supervisor to report a worker it killed.
const KILL_REPORT_WAIT: Duration = Duration::from_secs(5);
/// Deadline of the connects replayed on a restarted worker.
const RECONNECT_TIMEOUT: Duration = Duration::from_secs(15);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// What a [`RemoteDriver`] and its supervisor share.
pub(super) struct Shared {
    spec: WorkerSpec,
    /// The live worker, or why there is none.
    link: Mutex<Result<Arc<Link>, WorkerDown>>,
    next_id: AtomicU64,
    /// Devices connected through this driver, connected again on a
    /// restarted worker.
    connected: Mutex<BTreeSet<DeviceId>>,
    stopping: AtomicBool,
    restarts: AtomicU64,
}

impl Shared {
    /// State for `spec`'s worker, not started yet.
    pub(super) fn new(spec: WorkerSpec) -> Self {
        Self {
            spec,
            link: Mutex::new(Err(WorkerDown::Starting)),
            next_id: AtomicU64::new(1),
            connected: Mutex::new(BTreeSet::new()),
            stopping: AtomicBool::new(false),
            restarts: AtomicU64::new(0),
        }
    }

    /// How often the worker was restarted.
    pub(super) fn restarts(&self) -> u64 {
        self.restarts.load(Ordering::Acquire)
    }

    /// The host no longer needs the worker.
    pub(super) fn stop(&self) {
        self.stopping.store(true, Ordering::Release);
        if let Ok(link) = self.current() {
            link.kill("the host is stopping");
        }
    }

    /// A device was connected (`true`) or disconnected through the driver.
    pub(super) fn note_connected(&self, device: &DeviceId, connected: bool) {
        let mut set = lock(&self.connected);
        if connected {
            set.insert(device.clone());
        } else {
            set.remove(device);
        }
    }

    pub(super) fn spec(&self) -> &WorkerSpec {
        &self.spec
    }

    pub(super) fn stopping(&self) -> bool {
        self.stopping.load(Ordering::Acquire)
    }

    pub(super) fn set_up(&self, link: Arc<Link>) {
        *lock(&self.link) = Ok(link);
    }

    pub(super) fn set_down(&self, reason: WorkerDown) {
        *lock(&self.link) = Err(reason);
    }

    /// The live worker, or why there is none.
    pub(super) fn current(&self) -> Result<Arc<Link>, WorkerDown> {
        lock(&self.link).clone()
    }

    fn down(&self, device: Option<&DeviceId>, reason: &str) -> DriverError {
        let plugin = &self.spec.plugin_id;
        match device {
            Some(d) => DriverError::device_unavailable(d, format!("plugin {plugin}: {reason}")),
            None => DriverError::crashed(plugin, reason),
        }
    }

    /// Sends one call and waits for its reply (see the module docs).
    pub(super) fn call(&self, ctx: &CallContext, method: Method) -> DriverResult<(Value, Vec<u8>)> {
        let plugin = self.spec.plugin_id.as_str();
        let device = match &method {
            Method::Connect { device }
            | Method::Disconnect { device }
            | Method::Health { device }
            | Method::Capabilities { device }
            | Method::Observe { device, .. }
            | Method::Execute { device, .. } => Some(device.clone()),
            Method::ListDevices | Method::Doctor => None,
        };
        let name = method.name();
        let link = self
            .current()
            .map_err(|reason| self.down(device.as_ref(), &reason.to_string()))?;
        ctx.check()?;
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::sync_channel::<Delivery>(1);
        if !link.register(id, tx) {
            return Err(self.down(device.as_ref(), "its worker is restarting"));
        }
        let header = Call {
            id,
            budget_us: ctx
                .remaining()
                .map(|d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX)),
            observation_id: ctx.observation_id(),
            request_id: ctx.request_id().to_owned(),
            method,
        };
        if let Err(e) = link.send(Kind::Call, &header) {
            link.unregister(id);
            // A frame may be half written: the channel is unusable.
            let why = format!("the call could not be sent: {e}");
            link.kill(&why);
            return Err(DriverError::crashed(plugin, why));
        }
        let grace = self.spec.grace;
        let mut kill_at = ctx.deadline().map(|d| d + grace);
        let mut cancel_sent = false;
        let delivered = loop {
            let wait = kill_at.map_or(POLL, |k| {
                k.saturating_duration_since(Instant::now()).min(POLL)
            });
            match rx.recv_timeout(wait) {
                Ok(d) => break d,
                Err(RecvTimeoutError::Disconnected) => {
                    break Err(WorkerDown::ChannelClosed);
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
            if !cancel_sent && ctx.is_cancelled() {
                cancel_sent = true;
                let _ = link.send(Kind::Cancel, &Cancel { id });
                let by = Instant::now() + grace;
                kill_at = Some(kill_at.map_or(by, |k| k.min(by)));
            }
            if kill_at.is_some_and(|k| Instant::now() >= k) {
                let why = format!(
                    "{name} did not return within its deadline (or cancellation) plus {}ms",
                    grace.as_millis()
                );
                tracing::error!(plugin, "{why}; killing the worker");
                link.kill(&why);
                break match rx.recv_timeout(KILL_REPORT_WAIT) {
                    Ok(d) => d,
                    Err(_) => Err(WorkerDown::Killed(why)),
                };
            }
        };
        match delivered {
            Ok((Outcome::Ok(v), bytes)) => Ok((v, bytes)),
            Ok((Outcome::Err(e), _)) => Err(e),
            Err(reason) => Err(DriverError::crashed(plugin, reason.to_string())),
        }
    }

    /// A restarted worker is up: count it and connect again, in the
    /// background, the devices that were connected.
    pub(super) fn after_restart(self: &Arc<Self>) {
        self.restarts.fetch_add(1, Ordering::AcqRel);
        let devices: Vec<DeviceId> = lock(&self.connected).iter().cloned().collect();
        if devices.is_empty() {
            return;
        }
        let shared = self.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("worker-reconnect-{}", self.spec.plugin_id))
            .spawn(move || {
                for device in devices {
                    let ctx = CallContext::new(Some(Instant::now() + RECONNECT_TIMEOUT));
                    match shared.call(&ctx, Method::Connect { device: device.clone() }) {
                        Ok(_) => tracing::info!(plugin = %shared.spec.plugin_id, device = %device, "device connected again on the restarted worker"),
                        Err(e) => tracing::warn!(plugin = %shared.spec.plugin_id, device = %device, "connecting the device again failed: {e}"),
                    }
                }
            });
        if let Err(e) = spawned {
            tracing::warn!("cannot reconnect devices after a worker restart: {e}");
        }
    }
}
