//! Running one blocking driver call off the async workers, bounded by the
//! request's deadline, its cancellation and host shutdown. The plugin sees
//! all three through its `CallContext` cancellation flag.

use std::time::Duration;

use devicerail_plugin_api::{CallContext, Driver, DriverError, DriverResult};

use crate::registry::Route;
use tokio::task::JoinHandle;
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
    pub deadline: Option<Instant>,
    pub cancel: CancellationToken,
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

/// A call that was interrupted; the driver may still be running.
pub struct Interrupted<T> {
    pub why: Interrupt,
    pub handle: JoinHandle<DriverResult<T>>,
}

impl<T> Interrupted<T> {
    /// Waits up to `grace` for the driver to return (bounded cleanup).
    pub async fn settle(self, grace: Duration) -> Option<DriverResult<T>> {
        match tokio::time::timeout(grace, self.handle).await {
            Ok(Ok(r)) => Some(r),
            _ => None,
        }
    }
}

fn interrupted_before_start<T: Send + 'static>(
    why: Interrupt,
    ctx: &CallContext,
) -> Interrupted<T> {
    ctx.cancel();
    let handle = tokio::spawn(async { Err(DriverError::cancelled()) });
    Interrupted { why, handle }
}

/// Runs `f` on the blocking pool. The driver's cancellation flag is set on
/// any interrupt; an interrupted call returns its handle so the caller can
/// wait for a bounded cleanup. (Concurrency per plugin is bounded by the
/// caller holding one of the route's permits for the whole request.)
pub async fn run<T: Send + 'static>(
    route: &Route,
    ctx: CallContext,
    stop: &Stop,
    f: impl FnOnce(&dyn Driver, &CallContext) -> DriverResult<T> + Send + 'static,
) -> Result<DriverResult<T>, Interrupted<T>> {
    if let Some(why) = stop.fired() {
        return Err(interrupted_before_start(why, &ctx));
    }
    let flag = ctx.clone();
    let driver = route.driver.clone();
    let mut handle = tokio::task::spawn_blocking(move || f(driver.as_ref(), &ctx));
    tokio::select! {
        r = &mut handle => Ok(r.unwrap_or_else(|e| Err(DriverError::panicked(
            "a host-side call",
            &e.to_string(),
        )))),
        why = stop.wait() => {
            flag.cancel();
            Err(Interrupted { why, handle })
        }
    }
}
