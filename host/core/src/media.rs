//! Media streams (`media.stream.v1`): Session-scoped sequences of
//! screenshot Evidence captured by the host from the stream's device.
//!
//! A stream belongs to the Session (and so the connection) that started
//! it; its id is forgotten when that Session ends.

use std::sync::atomic::{AtomicBool, Ordering};

use devicerail_host_protocol::{MediaFrame, MediaStreamInfo};

use devicerail_host_engine::registry::Route;

/// Mutable state of one stream; captures hold its lock, so frames of one
/// stream are taken one at a time and in order.
#[derive(Debug, Default)]
pub(crate) struct Progress {
    /// The last committed frame, kept for exact retries.
    pub last: Option<MediaFrame>,
    pub frame_count: u64,
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
