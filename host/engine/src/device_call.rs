//! Running one blocking driver call on its plugin's executor (never on the
//! async workers), bounded by the request's deadline, its cancellation and
//! host shutdown. The plugin sees all three through its `CallContext`
//! cancellation flag.

use std::time::Duration;

use devicerail_host_plugin_api::{CallContext, Driver, DriverError, DriverResult, ObserveRequest};
use devicerail_host_protocol::{ActionCall, ObservationId};
use serde_json::value::RawValue;

use crate::executor::Ticket;
use crate::observation::{HostActionOutput, HostObservation};
use crate::registry::{Backend, Route};
use crate::worker::message::Method;
use crate::worker::{RemoteDriver, remote, shared};
use tokio::sync::oneshot;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Why a call stopped before the driver answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interrupt {
    /// The deadline passed.
    TimedOut,
    /// `request.cancel` targeted the request.
    Cancelled,
    /// The host is shutting down.
    Shutdown,
}

/// What stops a request: its deadline, its own token, host shutdown.
#[derive(Debug, Clone)]
pub struct Stop {
    /// When the request times out (`None`: it has no deadline).
    pub deadline: Option<Instant>,
    /// The request's own token (`request.cancel` cancels it).
    pub cancel: CancellationToken,
    /// The host's token, cancelled when the host shuts down.
    pub shutdown: CancellationToken,
}

impl Stop {
    /// Which interrupt, if any, has already happened.
    pub fn fired(&self) -> Option<Interrupt> {
        if self.shutdown.is_cancelled() {
            Some(Interrupt::Shutdown)
        } else if self.cancel.is_cancelled() {
            Some(Interrupt::Cancelled)
        } else if self.deadline.is_some_and(|d| Instant::now() >= d) {
            Some(Interrupt::TimedOut)
        } else {
            None
        }
    }

    /// Resolves when any interrupt happens.
    pub async fn wait(&self) -> Interrupt {
        let deadline = async {
            match self.deadline {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            _ = self.shutdown.cancelled() => Interrupt::Shutdown,
            _ = self.cancel.cancelled() => Interrupt::Cancelled,
            _ = deadline => Interrupt::TimedOut,
        }
    }

    /// A copy with an earlier deadline, if `other` is earlier.
    #[must_use]
    pub fn tightened(&self, other: Option<Instant>) -> Self {
        let deadline = match (self.deadline, other) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        Self {
            deadline,
            ..self.clone()
        }
    }

    /// A driver context carrying this stop's deadline.
    pub fn context(&self) -> CallContext {
        CallContext::new(self.deadline.map(Instant::into_std))
    }
}

/// How long an interrupted driver call may take to return before it is
/// written off (and, for Actions, before the terminal event is recorded
/// anyway).
pub const CLEANUP_GRACE: Duration = Duration::from_secs(2);

/// A call that was interrupted; the driver may still be running.
pub struct Interrupted<T: Send + 'static> {
    /// What stopped the call.
    pub why: Interrupt,
    rx: Option<oneshot::Receiver<DriverResult<T>>>,
    ticket: Option<Ticket>,
}

impl<T: Send + 'static> Interrupted<T> {
    /// Waits up to `grace` for the driver to return (bounded cleanup); a
    /// call still running after that is abandoned: its thread no longer
    /// counts against the plugin's capacity.
    pub async fn settle(mut self, grace: Duration) -> Option<DriverResult<T>> {
        let rx = self.rx.take()?;
        let ticket = self.ticket.take();
        match tokio::time::timeout(grace, rx).await {
            Ok(Ok(r)) => Some(r),
            Ok(Err(_)) => None,
            Err(_) => {
                if let Some(t) = ticket {
                    t.abandon();
                }
                None
            }
        }
    }
}

impl<T: Send + 'static> Drop for Interrupted<T> {
    fn drop(&mut self) {
        // Nobody waits for the result: write the call off unless it returns
        // within the grace period.
        if let (Some(rx), Some(ticket)) = (self.rx.take(), self.ticket.take()) {
            match tokio::runtime::Handle::try_current() {
                Ok(rt) => {
                    rt.spawn(async move {
                        if tokio::time::timeout(CLEANUP_GRACE, rx).await.is_err() {
                            ticket.abandon();
                        }
                    });
                }
                Err(_) => ticket.abandon(),
            }
        }
    }
}

/// Runs `f` on the route's plugin executor. The driver's cancellation flag
/// is set on any interrupt; an interrupted call is returned so the caller
/// can wait for a bounded cleanup. A plugin whose threads are all taken by
/// calls that never returned refuses with `device_unavailable`.
pub async fn run<T: Send + 'static>(
    route: &Route,
    ctx: CallContext,
    stop: &Stop,
    f: impl FnOnce(&dyn Driver, &CallContext) -> DriverResult<T> + Send + 'static,
) -> Result<DriverResult<T>, Interrupted<T>> {
    if let Some(why) = stop.fired() {
        ctx.cancel();
        return Err(Interrupted {
            why,
            rx: None,
            ticket: None,
        });
    }
    let flag = ctx.clone();
    let driver = route.driver.clone();
    let (ticket, mut rx) = match route.executor.submit(move || f(driver.as_ref(), &ctx)) {
        Ok(submitted) => submitted,
        Err(e) => {
            return Ok(Err(DriverError::device_unavailable(
                &route.device,
                format!("plugin {} cannot take the call: {e}", route.plugin),
            )));
        }
    };
    tokio::select! {
        r = &mut rx => Ok(r.unwrap_or_else(|_| Err(DriverError::panicked(
            "a host-side call",
            "the call ended without a result",
        )))),
        why = stop.wait() => {
            flag.cancel();
            Err(Interrupted { why, rx: Some(rx), ticket: Some(ticket) })
        }
    }
}

/// Observes the route's device, in the form the host stores observations
/// (see [`crate::observation`]): on the plugin's executor for an inline
/// plugin, straight from this task for a worker (no thread of the host
/// involved), bounded by `stop` as [`run`] is.
pub async fn observe(
    route: &Route,
    ctx: CallContext,
    stop: &Stop,
    request: ObserveRequest,
) -> Result<DriverResult<HostObservation>, Interrupted<HostObservation>> {
    let device = route.device.clone();
    match &route.backend {
        Backend::Worker(r) => {
            let method = Method::Observe { device, request };
            let ui_tree = request.ui_tree;
            let decode = move |v: &RawValue, parts, id| remote::observation(v, parts, id, ui_tree);
            on_worker(r, ctx, stop, method, decode).await
        }
        Backend::Inline(_) => {
            let backend = route.backend.clone();
            run(route, ctx, stop, move |_, ctx| {
                backend.observe(ctx, &device, &request)
            })
            .await
        }
    }
}

/// Executes one Action on the route's device, its resolved observation in
/// the form the host stores it, as [`observe`] does.
pub async fn execute(
    route: &Route,
    ctx: CallContext,
    stop: &Stop,
    call: ActionCall,
) -> Result<DriverResult<HostActionOutput>, Interrupted<HostActionOutput>> {
    let device = route.device.clone();
    match &route.backend {
        Backend::Worker(r) => {
            let method = Method::Execute { device, call };
            on_worker(r, ctx, stop, method, remote::action_output).await
        }
        Backend::Inline(_) => {
            let backend = route.backend.clone();
            run(route, ctx, stop, move |_, ctx| {
                backend.execute(ctx, &device, &call)
            })
            .await
        }
    }
}

/// One call to a worker from this task: sent on the channel, its reply
/// awaited here (the reply reader completes it), bounded by `stop`. On an
/// interrupt the worker is told to cancel and killed if it stays silent
/// past the grace; the interrupted call can still be settled.
async fn on_worker<T: Send + 'static>(
    remote: &RemoteDriver,
    ctx: CallContext,
    stop: &Stop,
    method: Method,
    decode: impl Fn(&RawValue, Vec<Vec<u8>>, ObservationId) -> DriverResult<T> + Copy + Send + 'static,
) -> Result<DriverResult<T>, Interrupted<T>> {
    let id = ctx.observation_id();
    if let Some(why) = stop.fired() {
        ctx.cancel();
        return Err(Interrupted {
            why,
            rx: None,
            ticket: None,
        });
    }
    let mut call = match remote.start_async(&ctx, method).await {
        Ok(c) => c,
        Err(e) => return Ok(Err(e)),
    };
    let plugin = call.plugin().to_owned();
    tokio::select! {
        delivered = call.reply() => {
            Ok(shared::outcome(&plugin, delivered).and_then(|(v, parts)| decode(&v, parts, id)))
        }
        why = stop.wait() => {
            ctx.cancel();
            let eventual = call.interrupt();
            let (tx, rx) = oneshot::channel();
            tokio::spawn(async move {
                if let Ok(delivered) = eventual.await {
                    let _ = tx.send(
                        shared::outcome(&plugin, delivered).and_then(|(v, parts)| decode(&v, parts, id)),
                    );
                }
            });
            Err(Interrupted { why, rx: Some(rx), ticket: None })
        }
    }
}
