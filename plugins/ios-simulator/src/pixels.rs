//! The pixel space every coordinate of the plugin is in: the screenshot's.
//!
//! WebDriverAgent speaks points; observations speak pixels. The mapping is
//! WDA's screen scale until a screenshot is taken; from then on it is the
//! screenshot's size over the window's size in points, per axis, so the
//! viewport is exactly the screenshot's size and UI bounds and taps are in
//! the same pixels as the image, even when the image is not window size ×
//! scale (a downscaled capture, a scale WDA reports wrong). The mapping is
//! kept for the window size it was derived from; another window size
//! (rotation) falls back to the scale until the next screenshot.

use devicerail_host_plugin_api::protocol::{UiRect, Viewport};

/// The size of the current window, in points (as WebDriverAgent reports it).
#[derive(Debug, Clone, Copy, PartialEq, serde::Deserialize)]
pub(crate) struct WdaSize {
    /// Width in points.
    pub(crate) width: f64,
    /// Height in points.
    pub(crate) height: f64,
}

/// Pixels per point, per axis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PixelScale {
    /// Horizontal pixels per point.
    pub x: f64,
    /// Vertical pixels per point.
    pub y: f64,
}

impl From<f64> for PixelScale {
    fn from(scale: f64) -> Self {
        Self { x: scale, y: scale }
    }
}

/// Rounds a pixel length to a whole, positive `u32`.
fn whole(v: f64) -> u32 {
    let v = v.round();
    if v.is_finite() && v >= 1.0 {
        v.min(f64::from(u32::MAX)) as u32
    } else {
        1
    }
}

impl PixelScale {
    /// The mapping that makes a `png` (width, height) cover a window of
    /// `window` points; `None` for degenerate sizes.
    pub(crate) fn of_screenshot(window: WdaSize, png: (u32, u32)) -> Option<Self> {
        let valid = |v: f64| v.is_finite() && v > 0.0;
        let (x, y) = (
            f64::from(png.0) / window.width,
            f64::from(png.1) / window.height,
        );
        (valid(x) && valid(y)).then_some(Self { x, y })
    }

    /// The viewport of a window of `size` points.
    pub(crate) fn viewport(self, size: WdaSize) -> Viewport {
        Viewport {
            width: whole(size.width * self.x),
            height: whole(size.height * self.y),
            scale_factor: self.x,
        }
    }

    /// A rectangle in points, in pixels.
    pub(crate) fn rect_to_pixels(self, x: f64, y: f64, width: f64, height: f64) -> UiRect {
        UiRect::new(x * self.x, y * self.y, width * self.x, height * self.y)
    }

    /// A rectangle in pixels, in points: `(x, y, width, height)`.
    pub(crate) fn rect_to_points(self, r: &UiRect) -> (f64, f64, f64, f64) {
        (
            r.x / self.x,
            r.y / self.y,
            r.width.get() / self.x,
            r.height.get() / self.y,
        )
    }

    /// A point in pixels, in points.
    pub(crate) fn point_to_points(self, x: f64, y: f64) -> (f64, f64) {
        (x / self.x, y / self.y)
    }
}

/// The mapping derived from a screenshot, with the window it covered.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Derived {
    pub(crate) window: WdaSize,
    pub(crate) scale: PixelScale,
}

/// The mapping for a window of `size` points: the derived one while the
/// window is the one it was derived for, else WDA's `scale`.
pub(crate) fn mapping(derived: Option<Derived>, size: WdaSize, scale: f64) -> PixelScale {
    match derived {
        Some(d) if d.window == size => d.scale,
        _ => PixelScale::from(scale),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WINDOW: WdaSize = WdaSize {
        width: 375.0,
        height: 667.0,
    };

    #[test]
    fn a_downscaled_screenshot_defines_the_pixels() {
        let s = PixelScale::of_screenshot(WINDOW, (563, 1001)).expect("valid");
        let v = s.viewport(WINDOW);
        assert_eq!((v.width, v.height), (563, 1001));
        let r = s.rect_to_pixels(0.0, 333.5, 375.0, 44.0);
        assert!((r.x + r.width.get() - 563.0).abs() < 1e-9);
        let (px, py) = s.point_to_points(563.0, 1001.0);
        assert!((px - 375.0).abs() < 1e-9 && (py - 667.0).abs() < 1e-9);
        assert!(
            PixelScale::of_screenshot(
                WdaSize {
                    width: 0.0,
                    height: 1.0
                },
                (1, 1)
            )
            .is_none()
        );
    }

    #[test]
    fn another_window_falls_back_to_the_scale() {
        let derived = Some(Derived {
            window: WINDOW,
            scale: PixelScale { x: 1.5, y: 1.5 },
        });
        assert_eq!(mapping(derived, WINDOW, 2.0), PixelScale { x: 1.5, y: 1.5 });
        let rotated = WdaSize {
            width: 667.0,
            height: 375.0,
        };
        assert_eq!(mapping(derived, rotated, 2.0), PixelScale::from(2.0));
    }
}
