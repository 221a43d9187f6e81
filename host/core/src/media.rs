//! Media streams (`media.stream.v1`): Session-scoped sequences of
//! screenshot Evidence captured by the host from the stream's device.
//!
//! A stream belongs to the Session (and so the connection) that started
//! it; its id is forgotten when that Session ends. Admission is bounded as
//! the error catalog says (the constants below): a client cannot open
//! streams or capture frames without limit.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use devicerail_host_protocol::{MediaFrame, MediaStreamInfo};

use devicerail_host_engine::registry::Route;

/// Un-ended streams a Session may hold at once (`media_stream_active_limit`).
pub(crate) const MAX_ACTIVE_STREAMS: usize = 2;
/// Streams a Session may start in all, ended ones included
/// (`media_stream_session_limit`).
pub(crate) const MAX_SESSION_STREAMS: usize = 8;
/// Frames one stream may hold (`media_stream_frame_limit`).
pub(crate) const MAX_FRAMES_PER_STREAM: u64 = 1000;
/// The least time between two admitted captures of one stream
/// (`media_capture_rate_limited`); a capture admitted and then failed
/// counts.
pub(crate) const MIN_CAPTURE_INTERVAL: Duration = Duration::from_millis(50);

/// Mutable state of one stream; captures hold its lock, so frames of one
/// stream are taken one at a time and in order.
#[derive(Debug, Default)]
pub(crate) struct Progress {
    /// The last committed frame, kept for exact retries.
    pub last: Option<MediaFrame>,
    pub frame_count: u64,
    /// When the last capture was admitted (for the rate limit).
    pub last_admitted: Option<Instant>,
}

impl Progress {
    /// Admits a capture at `now`, or answers how many milliseconds remain
    /// until one may be (at least 1).
    pub(crate) fn admit(&mut self, now: Instant) -> Result<(), u64> {
        if let Some(at) = self.last_admitted {
            let since = now.saturating_duration_since(at);
            if since < MIN_CAPTURE_INTERVAL {
                let left = MIN_CAPTURE_INTERVAL - since;
                return Err(u64::try_from(left.as_millis()).unwrap_or(u64::MAX).max(1));
            }
        }
        self.last_admitted = Some(now);
        Ok(())
    }
}

/// One stream.
#[derive(Debug)]
pub(crate) struct MediaStream {
    pub info: MediaStreamInfo,
    /// The device bound at start; captures always use it.
    pub route: Route,
    pub progress: tokio::sync::Mutex<Progress>,
    ended: AtomicBool,
}

impl MediaStream {
    pub(crate) fn new(info: MediaStreamInfo, route: Route) -> Self {
        Self {
            info,
            route,
            progress: tokio::sync::Mutex::default(),
            ended: AtomicBool::new(false),
        }
    }

    /// Whether `media.stream.end` (or `session.end`) ended the stream.
    pub(crate) fn is_ended(&self) -> bool {
        self.ended.load(Ordering::Acquire)
    }

    /// Marks the stream ended (its `mediaStreamEnded` is durable).
    pub(crate) fn mark_ended(&self) {
        self.ended.store(true, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_are_admitted_at_most_every_interval() {
        let mut p = Progress::default();
        let t0 = Instant::now();
        assert_eq!(p.admit(t0), Ok(()));
        assert_eq!(p.admit(t0), Err(50));
        assert_eq!(p.admit(t0 + Duration::from_millis(13)), Err(37));
        // A refused capture does not move the clock; the remainder is at
        // least 1 ms even when less than one is left.
        assert_eq!(p.admit(t0 + Duration::from_micros(49_900)), Err(1));
        assert_eq!(p.admit(t0 + MIN_CAPTURE_INTERVAL), Ok(()));
        assert_eq!(
            p.admit(t0 + MIN_CAPTURE_INTERVAL + Duration::from_millis(1)),
            Err(49)
        );
    }
}
