//! The state of one connected simulator: its WebDriverAgent client and
//! session, screen scale, last viewport, document epoch and the lock that
//! keeps its Actions from interleaving.

use std::sync::{Mutex, MutexGuard};

use devicerail_plugin_api::CallContext;
use devicerail_plugin_api::protocol::{DeviceId, DeviceInfo, Viewport};

use crate::normalize::{EpochSource, EpochTracker};
use crate::wda::{Wda, WdaError, WdaSize};

/// Locks a mutex, recovering from poisoning: every value behind these
/// locks is consistent between statements.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Pixel viewport of a window of `size` points at `scale`.
pub fn viewport_of(size: WdaSize, scale: f64) -> Viewport {
    let px = |points: f64| {
        let v = (points * scale).round();
        if v.is_finite() && v >= 1.0 {
            v.min(f64::from(u32::MAX)) as u32
        } else {
            1
        }
    };
    Viewport {
        width: px(size.width),
        height: px(size.height),
        scale_factor: scale,
    }
}

/// One connected simulator.
#[derive(Debug)]
pub struct Connection {
    pub id: DeviceId,
    pub info: DeviceInfo,
    pub wda: Wda,
    /// Pixels per point.
    pub scale: f64,
    session: Mutex<String>,
    viewport: Mutex<Viewport>,
    epoch: Mutex<EpochTracker>,
    /// Held for the whole of an Action.
    pub ops: Mutex<()>,
}

impl Connection {
    pub fn new(
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
            epoch: Mutex::new(EpochTracker::default()),
            ops: Mutex::new(()),
        }
    }

    pub fn udid(&self) -> &str {
        self.id.as_str()
    }

    pub fn session(&self) -> String {
        lock(&self.session).clone()
    }

    /// The last known viewport.
    pub fn viewport(&self) -> Viewport {
        *lock(&self.viewport)
    }

    pub fn set_viewport(&self, v: Viewport) {
        *lock(&self.viewport) = v;
    }

    /// The epoch of a tree of `bundle` with `signature`.
    pub fn epoch(&self, source: &EpochSource, bundle: &str, signature: u64) -> String {
        lock(&self.epoch).epoch(source, bundle, signature)
    }

    /// Runs a session-scoped request; when WDA has forgotten the session
    /// (it restarted), opens a new one, invalidates node references and
    /// retries once.
    pub fn with_session<T>(
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
    pub fn refresh_viewport(&self, ctx: &CallContext) -> Result<Viewport, WdaError> {
        let size = self.with_session(ctx, |s| self.wda.window_size(ctx, s))?;
        let v = viewport_of(size, self.scale);
        self.set_viewport(v);
        Ok(v)
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
