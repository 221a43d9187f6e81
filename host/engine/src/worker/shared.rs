//! What a [`super::RemoteDriver`] and its supervisor share: the live
//! worker (or why there is none), the devices to connect again after a
//! restart, and sending one call and waiting for its reply, forwarding
//! cancellation and killing a worker that stays silent past the deadline
//! (or the cancellation) plus grace. Blocking callers (executor threads)
//! use [`Shared::call`]; async callers (the serving runtime's tasks, no
//! thread hop) use [`Shared::start_async`] and [`AsyncCall`].

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use devicerail_host_plugin_api::{CallContext, DriverError, DriverResult};
use devicerail_host_protocol::DeviceId;
use serde_json::value::RawValue;

use tokio::sync::oneshot;

use super::frame::Kind;
use super::link::{Delivery, Link, Waiter, WorkerDown};
use super::message::{Call, Cancel, Method, Outcome};
use super::spec::WorkerSpec;

/// How often a waiting call checks its cancellation flag.
const POLL: Duration = Duration::from_millis(20);
/// How long a call waits for the supervisor to report a worker it killed.
const KILL_REPORT_WAIT: Duration = Duration::from_secs(5);
/// Deadline of the connects replayed on a restarted worker.
const RECONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// The longest a blocking call spins for its reply before it parks.
const SPIN_MAX: Duration = Duration::from_micros(50);
/// A method whose replies usually take longer than this is never spun for:
/// its caller parks at once (a park and wake costs about this much).
const SPIN_WORTH: Duration = Duration::from_micros(30);

/// When a blocking call spins for its reply before parking: only where the
/// reply is expected within microseconds (the method's recent replies were
/// that fast), the machine has a second core for the worker to answer on,
/// and no other call is waiting on the same worker. The spin then lasts at
/// most twice the method's usual reply time, and never past [`SPIN_MAX`].
/// Everything else parks at once (plain blocking).
pub(super) fn spin_budget(usual: Duration, cores: usize, in_flight: usize) -> Option<Duration> {
    (cores >= 2 && in_flight <= 1 && !usual.is_zero() && usual < SPIN_WORTH)
        .then(|| (usual * 2).min(SPIN_MAX))
}

/// Reply times per method, as an exponentially weighted moving average in
/// nanoseconds (0: none seen yet).
struct ReplyTimes([AtomicU64; Method::SLOTS]);

impl ReplyTimes {
    fn new() -> Self {
        Self(std::array::from_fn(|_| AtomicU64::new(0)))
    }

    fn usual(&self, slot: usize) -> Duration {
        Duration::from_nanos(self.0[slot].load(Ordering::Relaxed))
    }

    /// Folds one reply time in (weight 1/8; racing updates may lose one
    /// sample, which an estimate tolerates).
    fn note(&self, slot: usize, took: Duration) {
        let took = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        let old = self.0[slot].load(Ordering::Relaxed);
        let new = if old == 0 {
            took
        } else {
            old - old / 8 + took / 8
        };
        self.0[slot].store(new, Ordering::Relaxed);
    }
}

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
    /// How long each method's replies usually take (blocking calls).
    reply_times: ReplyTimes,
    /// Cores this process may run on (a spin needs a second one).
    cores: usize,
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
            reply_times: ReplyTimes::new(),
            cores: std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
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
    /// Blocking: for executor threads.
    pub(super) fn call(
        &self,
        ctx: &CallContext,
        method: Method,
    ) -> DriverResult<(Box<RawValue>, Vec<Vec<u8>>)> {
        let plugin = self.spec.plugin_id.as_str();
        let device = method.device().cloned();
        let name = method.name();
        let link = self
            .current()
            .map_err(|reason| self.down(device.as_ref(), &reason.to_string()))?;
        ctx.check()?;
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::sync_channel::<Delivery>(1);
        if !link.register(id, Waiter::Sync(tx)) {
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
        let slot = header.method.slot();
        let sent = Instant::now();
        let grace = self.spec.grace;
        let mut kill_at = ctx.deadline().map(|d| d + grace);
        let mut cancel_sent = false;
        let spun = spin_budget(self.reply_times.usual(slot), self.cores, link.in_flight())
            .and_then(|budget| spin_for(&rx, sent + budget));
        let delivered = if let Some(d) = spun {
            d
        } else {
            loop {
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
            }
        };
        if delivered.is_ok() {
            self.reply_times.note(slot, sent.elapsed());
        }
        outcome(plugin, delivered)
    }

    /// Registers and sends one call for an async caller; the reply comes
    /// through the returned [`AsyncCall`].
    pub(super) async fn start_async(
        &self,
        ctx: &CallContext,
        method: Method,
    ) -> DriverResult<AsyncCall> {
        let device = method.device().cloned();
        let name = method.name();
        let link = self
            .current()
            .map_err(|reason| self.down(device.as_ref(), &reason.to_string()))?;
        ctx.check()?;
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        if !link.register(id, Waiter::Async(tx)) {
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
        if let Err(e) = link.send_async(Kind::Call, &header).await {
            link.unregister(id);
            let why = format!("the call could not be sent: {e}");
            link.kill(&why);
            return Err(DriverError::crashed(&self.spec.plugin_id, why));
        }
        Ok(AsyncCall {
            link,
            id,
            name,
            plugin: self.spec.plugin_id.clone(),
            grace: self.spec.grace,
            deadline: ctx.deadline(),
            rx: Some(rx),
        })
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

/// Polls `rx` until `until`; the delivery if it came (or the channel
/// closed), `None` to park instead.
fn spin_for(rx: &mpsc::Receiver<Delivery>, until: Instant) -> Option<Delivery> {
    loop {
        match rx.try_recv() {
            Ok(d) => return Some(d),
            Err(mpsc::TryRecvError::Disconnected) => return Some(Err(WorkerDown::ChannelClosed)),
            Err(mpsc::TryRecvError::Empty) => {}
        }
        if Instant::now() >= until {
            return None;
        }
        std::hint::spin_loop();
    }
}

/// A delivery as the driver's result (`plugin` names a crashed worker).
pub(crate) fn outcome(
    plugin: &str,
    delivered: Delivery,
) -> DriverResult<(Box<RawValue>, Vec<Vec<u8>>)> {
    match delivered {
        Ok((Outcome::Ok(v), parts)) => Ok((v, parts)),
        Ok((Outcome::Err(e), _)) => Err(e),
        Err(reason) => Err(DriverError::crashed(plugin, reason.to_string())),
    }
}

/// A call an async caller sent, waiting for its reply. If the caller
/// stops waiting ([`AsyncCall::interrupt`], or dropping it before the
/// reply), the worker is told to cancel and is killed if it stays silent
/// past the grace, as for blocking callers.
#[derive(Debug)]
pub(crate) struct AsyncCall {
    link: Arc<Link>,
    id: u64,
    name: &'static str,
    plugin: String,
    grace: Duration,
    deadline: Option<Instant>,
    rx: Option<oneshot::Receiver<Delivery>>,
}

impl AsyncCall {
    /// The plugin's id (for errors).
    pub(crate) fn plugin(&self) -> &str {
        &self.plugin
    }

    /// Waits for the reply (cancellation-safe: dropping this future keeps
    /// the call waiting).
    pub(crate) async fn reply(&mut self) -> Delivery {
        let Some(rx) = self.rx.as_mut() else {
            return Err(WorkerDown::ChannelClosed);
        };
        let delivered = rx.await.unwrap_or(Err(WorkerDown::ChannelClosed));
        self.rx = None;
        delivered
    }

    /// The caller stopped waiting: the worker is told to cancel the call
    /// and killed unless it answers within the grace. The eventual
    /// delivery (the reply, or why there is none) comes on the returned
    /// receiver.
    pub(crate) fn interrupt(mut self) -> oneshot::Receiver<Delivery> {
        let now = Instant::now();
        let by = now + self.grace;
        let kill_at = self.deadline.map_or(by, |d| (d + self.grace).min(by));
        self.watch(Some(kill_at), true)
    }

    fn watch(&mut self, kill_at: Option<Instant>, cancel: bool) -> oneshot::Receiver<Delivery> {
        let (tx, out) = oneshot::channel();
        let Some(mut rx) = self.rx.take() else {
            return out;
        };
        if cancel {
            // Best effort: the kill below does not depend on it.
            let _ = self.link.try_send(Kind::Cancel, &Cancel { id: self.id });
        }
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return out;
        };
        let (link, name, grace) = (self.link.clone(), self.name, self.grace);
        let plugin = self.plugin.clone();
        rt.spawn(async move {
            let delivered = match kill_at {
                None => (&mut rx).await.unwrap_or(Err(WorkerDown::ChannelClosed)),
                Some(at) => match tokio::time::timeout_at(at.into(), &mut rx).await {
                    Ok(d) => d.unwrap_or(Err(WorkerDown::ChannelClosed)),
                    Err(_) => {
                        let why = format!(
                            "{name} did not return within its deadline (or cancellation) plus {}ms",
                            grace.as_millis()
                        );
                        tracing::error!(plugin = %plugin, "{why}; killing the worker");
                        link.kill(&why);
                        match tokio::time::timeout(KILL_REPORT_WAIT, &mut rx).await {
                            Ok(d) => d.unwrap_or(Err(WorkerDown::Killed(why))),
                            Err(_) => Err(WorkerDown::Killed(why)),
                        }
                    }
                },
            };
            let _ = tx.send(delivered);
        });
        out
    }
}

impl Drop for AsyncCall {
    fn drop(&mut self) {
        if self.rx.is_none() {
            return;
        }
        match self.deadline {
            // Nobody waits: the worker may still not outlive its deadline
            // plus grace with this call.
            Some(d) => drop(self.watch(Some(d + self.grace), false)),
            None => self.link.unregister(self.id),
        }
    }
}

#[cfg(test)]
mod spin_tests {
    use super::*;

    #[test]
    fn spins_only_for_fast_methods_on_two_cores_with_nothing_else_waiting() {
        let fast = Duration::from_micros(12);
        assert_eq!(spin_budget(fast, 2, 1), Some(Duration::from_micros(24)));
        assert_eq!(
            spin_budget(fast, 1, 1),
            None,
            "one core: the worker needs it"
        );
        assert_eq!(spin_budget(fast, 2, 2), None, "another call waits too");
        assert_eq!(spin_budget(Duration::ZERO, 2, 1), None, "nothing known yet");
        assert_eq!(
            spin_budget(Duration::from_micros(400), 2, 1),
            None,
            "slow method"
        );
        assert_eq!(
            spin_budget(Duration::from_micros(29), 2, 0),
            Some(SPIN_MAX.min(Duration::from_micros(58)))
        );
    }

    #[test]
    fn reply_times_start_at_the_first_sample_and_move_by_an_eighth() {
        let t = ReplyTimes::new();
        assert_eq!(t.usual(3), Duration::ZERO);
        t.note(3, Duration::from_micros(80));
        assert_eq!(t.usual(3), Duration::from_micros(80));
        t.note(3, Duration::from_micros(0));
        assert_eq!(t.usual(3), Duration::from_micros(70));
        assert_eq!(t.usual(4), Duration::ZERO, "per method");
    }

    #[test]
    fn a_spin_returns_a_reply_that_is_there_and_gives_up_in_time() {
        let (tx, rx) = mpsc::sync_channel::<Delivery>(1);
        let start = Instant::now();
        assert!(spin_for(&rx, start + Duration::from_micros(50)).is_none());
        assert!(start.elapsed() < Duration::from_millis(50));
        tx.send(Err(WorkerDown::Starting)).expect("send");
        assert!(matches!(
            spin_for(&rx, Instant::now()),
            Some(Err(WorkerDown::Starting))
        ));
        drop(tx);
        assert!(matches!(
            spin_for(&rx, Instant::now()),
            Some(Err(WorkerDown::ChannelClosed))
        ));
    }
}
