//! Media streams (`media.stream.v1`): Session-scoped sequences of
//! screenshot Evidence captured by the host from the stream's device.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use devicerail_protocol::{MediaFrame, MediaStreamId, MediaStreamInfo, SessionId};

use crate::registry::Route;

/// Mutable state of one stream; captures hold its lock, so frames of one
/// stream are taken one at a time and in order.
#[derive(Debug, Default)]
pub struct Progress {
    /// The last captured frame, kept for exact retries.
    pub last: Option<MediaFrame>,
    pub frame_count: u64,
    pub ended: bool,
}

/// One stream.
pub struct MediaStream {
    pub info: MediaStreamInfo,
    pub session: SessionId,
    /// The device bound at start; captures always use it.
    pub route: Route,
    pub progress: tokio::sync::Mutex<Progress>,
}

/// Every stream of this daemon lifetime (ids are never reused).
#[derive(Default)]
pub struct MediaStreams {
    streams: Mutex<HashMap<MediaStreamId, Arc<MediaStream>>>,
}

impl MediaStreams {
    /// Registers a new stream; `false` if the id was ever used.
    pub fn insert(&self, stream: MediaStream) -> bool {
        let mut m = self.streams.lock().unwrap_or_else(|p| p.into_inner());
        if m.contains_key(&stream.info.id) {
            return false;
        }
        m.insert(stream.info.id, Arc::new(stream));
        true
    }

    pub fn get(&self, id: &MediaStreamId) -> Option<Arc<MediaStream>> {
        self.streams
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .cloned()
    }
}
