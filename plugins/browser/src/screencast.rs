//! A page's live screen for a lab console: Chromium's own screencast
//! (`Page.startScreencast`), JPEG frames the browser pushes whenever the
//! page painted something new, each acknowledged so the next one comes.
//! Only the newest frame is kept, with its number; the driver answers a
//! live request from it without touching the page, so a viewer never waits
//! behind an Action.
//!
//! The screencast starts at the first live request and stops when nobody
//! asked for [`IDLE`] (or the device disconnects). It must never feed an
//! Observation: its frames are a view, not Evidence.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde::Deserialize;
use serde_json::json;
use tokio::sync::broadcast::error::RecvError;
use tokio::task::JoinHandle;

use crate::cdp::CdpSession;

/// A screencast nobody asked about for this long stops.
const IDLE: Duration = Duration::from_secs(10);
/// JPEG quality of the frames (Chromium's scale, 0–100).
const QUALITY: u8 = 70;

/// The newest frame.
#[derive(Default)]
struct Newest {
    seq: u64,
    jpeg: Arc<Vec<u8>>,
    captured_at_ms: u64,
}

#[derive(Default)]
struct Shared {
    newest: Mutex<Newest>,
    asked: Mutex<Option<Instant>>,
}

/// One device's screencast: running or not, and its newest frame.
#[derive(Default)]
pub(crate) struct Screencast {
    shared: Arc<Shared>,
    task: Mutex<Option<JoinHandle<()>>>,
}

/// A frame as the driver answers it.
pub(crate) struct Frame {
    /// Its number (grows with every frame the browser sent).
    pub(crate) seq: u64,
    /// The JPEG, when newer than what the viewer has.
    pub(crate) jpeg: Option<Arc<Vec<u8>>>,
    /// When Chromium produced it, in Unix milliseconds.
    pub(crate) captured_at_ms: u64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FrameEvent {
    data: String,
    session_id: u64,
    #[serde(default)]
    metadata: FrameMetadata,
}

#[derive(Deserialize, Default)]
struct FrameMetadata {
    /// Seconds since the epoch, when the frame was swapped.
    #[serde(default)]
    timestamp: Option<f64>,
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Screencast {
    /// Whether frames are coming in.
    pub(crate) fn running(&self) -> bool {
        lock(&self.task).as_ref().is_some_and(|t| !t.is_finished())
    }

    /// The newest frame, its bytes only when its number is above `after`.
    pub(crate) fn newest(&self, after: u64) -> Frame {
        *lock(&self.shared.asked) = Some(Instant::now());
        let n = lock(&self.shared.newest);
        Frame {
            seq: n.seq,
            jpeg: (n.seq > after).then(|| n.jpeg.clone()),
            captured_at_ms: n.captured_at_ms,
        }
    }

    /// Starts the screencast of `page` on `runtime` (its first frame comes
    /// within a paint) unless it runs.
    pub(crate) fn start(&self, runtime: &tokio::runtime::Handle, page: CdpSession) {
        let mut task = lock(&self.task);
        if task.as_ref().is_some_and(|t| !t.is_finished()) {
            return;
        }
        *lock(&self.shared.asked) = Some(Instant::now());
        let shared = self.shared.clone();
        *task = Some(runtime.spawn(async move {
            if let Err(e) = run(&shared, &page).await {
                tracing::debug!("the screencast ended: {e}");
            }
            let _ = page.run("Page.stopScreencast", json!({})).await;
        }));
    }

    /// Stops it (the device disconnected).
    pub(crate) fn stop(&self) {
        if let Some(t) = lock(&self.task).take() {
            t.abort();
        }
    }
}

impl Drop for Screencast {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Receives frames until nobody asks for them or the page goes away.
async fn run(shared: &Shared, page: &CdpSession) -> Result<(), crate::cdp::CdpError> {
    let mut events = page.client().subscribe();
    page.run(
        "Page.startScreencast",
        json!({ "format": "jpeg", "quality": QUALITY, "everyNthFrame": 1 }),
    )
    .await?;
    let mut idle = tokio::time::interval(Duration::from_secs(1));
    loop {
        tokio::select! {
            event = events.recv() => {
                let event = match event {
                    Ok(e) => e,
                    Err(RecvError::Lagged(_)) => continue,
                    Err(RecvError::Closed) => return Ok(()),
                };
                if event.method != "Page.screencastFrame"
                    || event.session_id.as_deref() != page.session_id()
                {
                    continue;
                }
                let Ok(frame) = FrameEvent::deserialize(&event.params) else {
                    continue;
                };
                page.run("Page.screencastFrameAck", json!({ "sessionId": frame.session_id }))
                    .await?;
                let Ok(jpeg) = base64::engine::general_purpose::STANDARD.decode(frame.data) else {
                    continue;
                };
                let captured_at_ms = frame
                    .metadata
                    .timestamp
                    .filter(|t| t.is_finite() && *t > 0.0)
                    .map_or_else(now_ms, |t| (t * 1000.0) as u64);
                let mut n = lock(&shared.newest);
                n.seq += 1;
                n.jpeg = Arc::new(jpeg);
                n.captured_at_ms = captured_at_ms;
            }
            _ = idle.tick() => {
                let asked = *lock(&shared.asked);
                if asked.is_none_or(|a| a.elapsed() > IDLE) {
                    return Ok(());
                }
            }
        }
    }
}
