//! The per-call context a driver receives: deadline, cancellation and the
//! ids the host assigned to the call.

use std::sync::atomic::{AtomicBool, Ordering};

use abi_stable::std_types::RArc;
use std::time::{Duration, Instant};

use devicerail_host_protocol::ObservationId;

use crate::error::{DriverError, DriverResult};

/// Longest single sleep between cancellation checks.
const POLL_SLICE: Duration = Duration::from_millis(10);

/// Deadline, cancellation flag and correlation ids of one driver call.
#[derive(Debug, Clone)]
pub struct CallContext {
    deadline: Option<Instant>,
    cancelled: RArc<AtomicBool>,
    observation_id: ObservationId,
    request_id: String,
}

impl CallContext {
    /// A context with an optional deadline and a fresh cancellation flag.
    pub fn new(deadline: Option<Instant>) -> Self {
        Self {
            deadline,
            cancelled: RArc::new(AtomicBool::new(false)),
            observation_id: ObservationId::new_v7(),
            request_id: String::new(),
        }
    }

    /// A context for a call the host already named: its deadline, the
    /// Observation id and the request id it carries (no id is generated,
    /// as [`Self::new`] does).
    pub fn for_call(
        deadline: Option<Instant>,
        observation_id: ObservationId,
        request_id: String,
    ) -> Self {
        Self {
            deadline,
            cancelled: RArc::new(AtomicBool::new(false)),
            observation_id,
            request_id,
        }
    }

    /// A context without deadline, for tests and tools.
    pub fn unbounded() -> Self {
        Self::new(None)
    }

    /// Builds a context around an existing flag (used by the FFI layer).
    pub fn from_parts(
        deadline: Option<Instant>,
        cancelled: RArc<AtomicBool>,
        observation_id: ObservationId,
        request_id: String,
    ) -> Self {
        Self {
            deadline,
            cancelled,
            observation_id,
            request_id,
        }
    }

    /// The absolute deadline, if any.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// Time left before the deadline (`None`: unbounded).
    pub fn remaining(&self) -> Option<Duration> {
        self.deadline
            .map(|d| d.saturating_duration_since(Instant::now()))
    }

    /// Whether cancellation was requested.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Acquire)
    }

    /// Whether the deadline has passed.
    pub fn is_expired(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// Fails with a typed error once the call is cancelled or past its
    /// deadline. Drivers call this between steps.
    pub fn check(&self) -> DriverResult<()> {
        if self.is_cancelled() {
            Err(DriverError::cancelled())
        } else if self.is_expired() {
            Err(DriverError::deadline_exceeded())
        } else {
            Ok(())
        }
    }

    /// Sleeps up to `duration` in short slices, returning early with an
    /// error on cancellation or deadline.
    pub fn sleep(&self, duration: Duration) -> DriverResult<()> {
        let end = Instant::now() + duration;
        loop {
            self.check()?;
            let now = Instant::now();
            if now >= end {
                return Ok(());
            }
            let mut slice = (end - now).min(POLL_SLICE);
            if let Some(left) = self.remaining() {
                slice = slice.min(left.max(Duration::from_millis(1)));
            }
            std::thread::sleep(slice);
        }
    }

    /// Requests cancellation (the host does this; tests may too).
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Release);
    }

    /// The cancellation flag itself, shared with every clone of this
    /// context (and across the plugin ABI): a worker thread can hold it and
    /// poll it without the context.
    pub fn cancel_flag(&self) -> &RArc<AtomicBool> {
        &self.cancelled
    }

    /// The Observation id the host reserved for this call: observations
    /// and the UI state a semantic Action resolves against use it, and node
    /// references a driver returns must carry it.
    pub fn observation_id(&self) -> ObservationId {
        self.observation_id
    }

    /// The RPC request id, for log correlation (may be empty).
    pub fn request_id(&self) -> &str {
        &self.request_id
    }

    /// A copy with another observation id (host-side helper).
    #[must_use]
    pub fn with_observation_id(mut self, id: ObservationId) -> Self {
        self.observation_id = id;
        self
    }

    /// A copy tagged with the request id (host-side helper).
    #[must_use]
    pub fn with_request_id(mut self, id: impl Into<String>) -> Self {
        self.request_id = id.into();
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleep_wakes_on_cancel() {
        let ctx = CallContext::unbounded();
        let c2 = ctx.clone();
        let t = std::thread::spawn(move || c2.sleep(Duration::from_secs(10)));
        std::thread::sleep(Duration::from_millis(30));
        ctx.cancel();
        let r = t.join().expect("thread");
        assert!(r.is_err_and(|e| e.is_cancellation()));
    }

    #[test]
    fn sleep_stops_at_deadline() {
        let ctx = CallContext::new(Some(Instant::now() + Duration::from_millis(20)));
        let r = ctx.sleep(Duration::from_secs(10));
        assert!(r.is_err_and(|e| e.is_deadline()));
    }
}
