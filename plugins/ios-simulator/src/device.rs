//! The state of one connected simulator: its WebDriverAgent client and
//! session, screen scale, last viewport, document epoch and the lock that
//! keeps its Actions from interleaving.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

use devicerail_host_plugin_api::CallContext;
use devicerail_host_plugin_api::protocol::{DeviceId, DeviceInfo, Viewport};

use crate::normalize::{EpochSource, EpochTracker};
use crate::pixels::{self, Derived, PixelScale};
use crate::wda::{Wda, WdaError, WdaSize};

/// Locks a mutex, recovering from poisoning: every value behind these
/// locks is consistent between statements.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Pixel viewport of a window of `size` points at `scale`.
pub(crate) fn viewport_of(size: WdaSize, scale: f64) -> Viewport {
    PixelScale::from(scale).viewport(size)
}

/// One connected simulator.
#[derive(Debug)]
pub struct Connection {
    pub(crate) id: DeviceId,
    pub(crate) info: DeviceInfo,
    /// The WebDriverAgent client of this simulator (its URL from
    /// `wdaUrls`, else `wdaUrl`).
    pub wda: Wda,
    /// Pixels per point, as WDA reports them (see [`pixels`] for the
    /// mapping actually used once a screenshot was taken).
    pub scale: f64,
    session: Mutex<String>,
    viewport: Mutex<Viewport>,
    /// The window size in points last read.
    window: Mutex<Option<WdaSize>>,
    /// The mapping the last screenshot defined.
    derived: Mutex<Option<Derived>>,
    /// Whether WDA serves `/wda/activeAppInfo` (cleared for this
    /// connection once it answers that it has no such endpoint).
    app_info: AtomicBool,
    epoch: Mutex<EpochTracker>,
    /// Held for the whole of an Action.
    pub(crate) ops: Mutex<()>,
}

impl Connection {
    /// A connection to the simulator `info` describes, over an open WDA
    /// `session`, with WDA's screen `scale` and the first `viewport`.
    pub(crate) fn new(
        info: DeviceInfo,
        wda: Wda,
        session: String,
        scale: f64,
        viewport: Viewport,
    ) -> Self {
        Self {
            id: info.id.clone(),
            info,
            wda,
            scale,
            session: Mutex::new(session),
            viewport: Mutex::new(viewport),
            window: Mutex::new(None),
            derived: Mutex::new(None),
            app_info: AtomicBool::new(true),
            epoch: Mutex::new(EpochTracker::default()),
            ops: Mutex::new(()),
        }
    }

    /// The simulator's UDID (its device id).
    pub(crate) fn udid(&self) -> &str {
        self.id.as_str()
    }

    /// The current WDA session id.
    pub(crate) fn session(&self) -> String {
        lock(&self.session).clone()
    }

    /// The last known viewport.
    pub(crate) fn viewport(&self) -> Viewport {
        *lock(&self.viewport)
    }

    /// Records a newly read viewport.
    pub(crate) fn set_viewport(&self, v: Viewport) {
        *lock(&self.viewport) = v;
    }

    /// The epoch of a tree of `bundle` with `signature`.
    pub(crate) fn epoch(&self, source: &EpochSource, bundle: &str, signature: u64) -> String {
        lock(&self.epoch).epoch(source, bundle, signature)
    }

    /// Runs a session-scoped request; when WDA has forgotten the session
    /// (it restarted), opens a new one, invalidates node references and
    /// retries once.
    pub(crate) fn with_session<T>(
        &self,
        ctx: &CallContext,
        f: impl Fn(&str) -> Result<T, WdaError>,
    ) -> Result<T, WdaError> {
        let session = self.session();
        match f(&session) {
            Err(e) if e.is_invalid_session() => {
                let fresh = self.wda.create_session(ctx)?;
                tracing::info!(
                    device = self.udid(),
                    "WebDriverAgent forgot the session; opened a new one"
                );
                *lock(&self.session) = fresh.clone();
                lock(&self.epoch).invalidate();
                f(&fresh)
            }
            other => other,
        }
    }

    /// Fetches the window size and updates the cached viewport.
    pub(crate) fn refresh_viewport(&self, ctx: &CallContext) -> Result<Viewport, WdaError> {
        self.refresh_window(ctx).map(|(_, v)| v)
    }

    /// Fetches the window size; answers it with the viewport it makes
    /// (in the last screenshot's pixels while the window is unchanged).
    pub(crate) fn refresh_window(
        &self,
        ctx: &CallContext,
    ) -> Result<(WdaSize, Viewport), WdaError> {
        let size = self.with_session(ctx, |s| self.wda.window_size(ctx, s))?;
        *lock(&self.window) = Some(size);
        let v = pixels::mapping(*lock(&self.derived), size, self.scale).viewport(size);
        self.set_viewport(v);
        Ok((size, v))
    }

    /// Makes a screenshot of `png` pixels, taken of a window of `window`
    /// points, the pixel space: answers the viewport (exactly the
    /// screenshot's size).
    pub(crate) fn adopt_screenshot(&self, window: WdaSize, png: (u32, u32)) -> Viewport {
        let scale = PixelScale::of_screenshot(window, png).unwrap_or(PixelScale::from(self.scale));
        *lock(&self.derived) = Some(Derived { window, scale });
        let v = Viewport {
            width: png.0,
            height: png.1,
            scale_factor: scale.x,
        };
        self.set_viewport(v);
        v
    }

    /// The mapping from points to pixels now.
    pub(crate) fn pixel_scale(&self) -> PixelScale {
        match *lock(&self.window) {
            Some(size) => pixels::mapping(*lock(&self.derived), size, self.scale),
            None => PixelScale::from(self.scale),
        }
    }

    /// Whether `/wda/activeAppInfo` is worth asking.
    pub(crate) fn app_info_supported(&self) -> bool {
        self.app_info.load(Ordering::Relaxed)
    }

    /// WDA has no `/wda/activeAppInfo`: stop asking on this connection.
    pub(crate) fn app_info_unsupported(&self) {
        self.app_info.store(false, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn viewports_are_pixels() {
        let v = viewport_of(
            WdaSize {
                width: 375.0,
                height: 667.0,
            },
            2.0,
        );
        assert_eq!((v.width, v.height), (750, 1334));
        let v = viewport_of(
            WdaSize {
                width: 393.0,
                height: 852.0,
            },
            3.0,
        );
        assert_eq!((v.width, v.height), (1179, 2556));
    }
}
