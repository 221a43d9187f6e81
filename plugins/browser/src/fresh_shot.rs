//! The screenshot an Observation keeps: the screen as it is once the page
//! has drawn everything it did before the capture began, in about one
//! frame instead of two.
//!
//! `Page.captureScreenshot` forces a redraw, waits until that frame is
//! presented, and then copies the next frame drawn: two frames (about
//! 33 ms on the 2-core machine of docs/PERFORMANCE.md, 45 ms right after
//! an input). Here, one animation frame is waited for in the page (every
//! change the page made before it goes into the frame it starts), then a
//! screencast is started on a DevTools session of its own and its first
//! frame, drawn after that animation frame, is the screenshot.
//!
//! The order is what makes the frame current: the screencast is asked for
//! only once the animation frame has run (its frame's rendering begun with
//! every earlier change in it), so the first frame drawn for the capture
//! is that frame or a later one. Started together with the animation-frame
//! wait instead, the first frame showed the screen from before a click in
//! 10 of 100 tries with a CPU-bound process beside it (none in 300 tries
//! in this order; docs/PERFORMANCE.md). The swap-time check below only
//! backs the order up.
//!
//! Under an emulated scale factor other than 1 the screencast's frames
//! come at the window's own scale: `Page.captureScreenshot` there, always.
//!
//! Anything else gives way to `Page.captureScreenshot`: a first frame
//! swapped before the animation frame, a frame of another size than the
//! viewport, no frame within [`FRESH_WAIT`], or any error.
//!
//! Must never: return a frame swapped before the animation frame it
//! waited for; share its session with the lab console's screencast (that
//! one is a view, never Evidence); leave its screencast running.

use std::time::Duration;

use base64::Engine as _;
use serde::Deserialize;
use serde_json::json;
use tokio::sync::broadcast::error::RecvError;

use crate::cdp::{CdpError, CdpSession};
use crate::screencast::FrameEvent;

/// How long the animation frame and the screencast's first frame may take
/// together before `Page.captureScreenshot` is used instead (a page that
/// never draws, or one that replaced `requestAnimationFrame`).
pub(crate) const FRESH_WAIT: Duration = Duration::from_millis(250);

/// Waits for the page's next animation frame; answers its time in Unix
/// milliseconds (the time origin plus the frame's timestamp).
const AFTER_NEXT_FRAME: &str =
    "new Promise(r => requestAnimationFrame(t => r(performance.timeOrigin + t)))";

/// Where a fresh screenshot is taken: the page (for its animation frame
/// and the fallback capture) and the session the screencast runs on.
#[derive(Clone)]
pub(crate) struct ShotTarget {
    /// The page's own session.
    pub(crate) page: CdpSession,
    /// A second session to the same page, used for nothing else.
    pub(crate) shots: CdpSession,
    /// The driver's isolated world in the main frame, when it has one:
    /// the animation frame is waited for there, out of the page scripts'
    /// reach (a page that replaced `requestAnimationFrame` or
    /// `performance` in its own world changes nothing).
    pub(crate) world: Option<i64>,
    /// Whether the screencast can give the screenshot: not under an
    /// emulated scale factor other than 1, where its frames come at the
    /// window's own scale (`Page.captureScreenshot` renders the emulated
    /// one).
    pub(crate) screencast: bool,
    /// The viewport in screenshot pixels.
    pub(crate) width: u32,
    /// See `width`.
    pub(crate) height: u32,
}

/// Why the screencast's frame was not taken.
#[derive(Debug, thiserror::Error)]
enum Refused {
    #[error(transparent)]
    Cdp(#[from] CdpError),
    #[error("the first frame was swapped {0:.1} ms before the animation frame")]
    Older(f64),
    #[error("the first frame carries no time")]
    Untimed,
    #[error("the first frame is not a PNG of the viewport")]
    OtherSize,
    #[error("the frame is not base64")]
    Undecodable,
    #[error("the DevTools connection closed")]
    Closed,
}

/// A screencast possibly started: stopped when the capture is dropped
/// before it stopped it (its time ran out, or the task was aborted).
struct Running(Option<CdpSession>);

impl Drop for Running {
    fn drop(&mut self) {
        let Some(shots) = self.0.take() else { return };
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                let _ = shots.run("Page.stopScreencast", json!({})).await;
            });
        }
    }
}

impl ShotTarget {
    /// The screenshot: a screencast's first frame after the next animation
    /// frame, or `Page.captureScreenshot` when that cannot be had.
    pub(crate) async fn png(&self) -> Result<Vec<u8>, CdpError> {
        if !self.screencast {
            return self.page.capture_screenshot_png().await;
        }
        let started = std::time::Instant::now();
        match tokio::time::timeout(FRESH_WAIT, self.first_frame()).await {
            Ok(Ok(png)) => {
                tracing::debug!(
                    "screenshot: the screencast's first frame after an animation frame, in {:?}",
                    started.elapsed()
                );
                return Ok(png);
            }
            Ok(Err(e)) => tracing::debug!("screenshot by capture instead: {e}"),
            Err(_) => tracing::debug!("screenshot by capture instead: no frame in {FRESH_WAIT:?}"),
        }
        self.page.capture_screenshot_png().await
    }

    async fn first_frame(&self) -> Result<Vec<u8>, Refused> {
        let frame_ms: f64 = match self.world {
            Some(world) => match self.page.evaluate_in(world, AFTER_NEXT_FRAME).await {
                // The world went with its document: the page's own.
                Err(e) if crate::world::context_gone(&e) => {
                    self.page.evaluate(AFTER_NEXT_FRAME).await?
                }
                answer => answer?,
            },
            None => self.page.evaluate(AFTER_NEXT_FRAME).await?,
        };
        let mut events = self.shots.client().subscribe();
        let mut running = Running(Some(self.shots.clone()));
        self.shots
            .run("Page.startScreencast", json!({ "format": "png" }))
            .await?;
        let frame = loop {
            let event = match events.recv().await {
                Ok(e) => e,
                Err(RecvError::Lagged(_)) => continue,
                Err(RecvError::Closed) => return Err(Refused::Closed),
            };
            if event.method != "Page.screencastFrame"
                || event.session_id.as_deref() != self.shots.session_id()
            {
                continue;
            }
            if let Ok(frame) = FrameEvent::deserialize(&event.params) {
                break frame;
            }
        };
        running.0 = None;
        self.shots.run("Page.stopScreencast", json!({})).await?;
        let swapped_ms = frame.metadata.timestamp.ok_or(Refused::Untimed)? * 1000.0;
        // The browser's and the page's clocks are the same wall clock, the
        // page's coarsened; a millisecond is allowed for that.
        if swapped_ms + 1.0 < frame_ms {
            return Err(Refused::Older(frame_ms - swapped_ms));
        }
        let png = base64::engine::general_purpose::STANDARD
            .decode(frame.data.as_bytes())
            .map_err(|_| Refused::Undecodable)?;
        match crate::connection::png_size(&png) {
            Some((w, h)) if w.abs_diff(self.width) <= 1 && h.abs_diff(self.height) <= 1 => Ok(png),
            _ => Err(Refused::OtherSize),
        }
    }
}
