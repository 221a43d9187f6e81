//! How long the fake device takes to answer: [`Latency::Instant`] (no
//! wait: what tests of behaviour want) or [`Latency::phone_like`], a model
//! of a real phone over USB built from published measurements of the
//! commands the driver runs (sources in `plugins/android/README.md`,
//! "Latency model of the fake device"):
//!
//! | what | min | p50 | max |
//! | --- | --- | --- | --- |
//! | opening an adb stream (`shell:`, `exec:`) | 8 ms | 15 ms | 30 ms |
//! | a native command (`getprop`, `cat`, `rm`, `echo`, `grep`, `getevent`) | 3 ms | 6 ms | 15 ms |
//! | `dumpsys window` | 80 ms | 130 ms | 250 ms |
//! | a Java command (`wm`, `am`, `monkey`) | 150 ms | 220 ms | 350 ms |
//! | `input tap/swipe/text/keyevent` (a Java VM per command) | 200 ms | 250 ms | 300 ms |
//! | `screencap` raw (capture + transfer, per pixel) | 0.055 µs | 0.095 µs | 0.14 µs (+ 40 ms) |
//! | `screencap -p` (PNG encoded on the device, per pixel) | 0.35 µs | 0.445 µs | 0.55 µs (+ 100 ms) |
//! | `uiautomator dump` | 1,000 ms | 2,000 ms | 3,000 ms |
//! | a write of touch events to `/dev/input/eventN` (`printf`) | 4 ms | 8 ms | 20 ms |
//!
//! Each cost is drawn around its median (half the draws below, half
//! above, uniformly up to the bounds) from a seeded generator, so runs
//! repeat. `scale` multiplies every cost (0.1 keeps a test's phone-like
//! run short while keeping the ratios). The model also makes the screen
//! animate for 300 ms (scaled) after a tap changes it; `uiautomator dump`
//! fails with "could not get idle state" while it animates, and each
//! screenshot meanwhile shows another frame.

use std::time::Duration;

/// The environment variable that selects the model for fakes a test or
/// bench starts with the default configuration: `instant`, `phone` or
/// `phone:SCALE` (e.g. `phone:0.1`).
pub const LATENCY_ENV: &str = "DEVICERAIL_FAKE_ADB_LATENCY";

/// What the fake spends time on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cost {
    /// Opening an adb stream.
    Stream,
    /// A native command.
    Native,
    /// `dumpsys window`.
    Dumpsys,
    /// A command that starts a Java VM (`wm`, `am`, `monkey`).
    Java,
    /// `input ...`.
    Input,
    /// Raw `screencap` of this many pixels.
    ScreencapRaw(u64),
    /// `screencap -p` of this many pixels.
    ScreencapPng(u64),
    /// `uiautomator dump`.
    Dump,
    /// One write of touch events.
    TouchWrite,
}

/// `(min, p50, max)` in microseconds, and a fixed part for per-pixel
/// costs.
fn figures(c: Cost) -> ((f64, f64, f64), f64) {
    match c {
        Cost::Stream => ((8e3, 15e3, 30e3), 0.0),
        Cost::Native => ((3e3, 6e3, 15e3), 0.0),
        Cost::Dumpsys => ((80e3, 130e3, 250e3), 0.0),
        Cost::Java => ((150e3, 220e3, 350e3), 0.0),
        Cost::Input => ((200e3, 250e3, 300e3), 0.0),
        Cost::ScreencapRaw(_) => ((0.055, 0.095, 0.14), 40e3),
        Cost::ScreencapPng(_) => ((0.35, 0.445, 0.55), 100e3),
        Cost::Dump => ((1_000e3, 2_000e3, 3_000e3), 0.0),
        Cost::TouchWrite => ((4e3, 8e3, 20e3), 0.0),
    }
}

/// How long the fake device takes.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Latency {
    /// Everything at once (the default).
    #[default]
    Instant,
    /// A phone over USB (see the module's table), every cost multiplied by
    /// `scale`.
    PhoneLike {
        /// Multiplies every cost.
        scale: f64,
        /// The generator's state.
        seed: u64,
    },
}

impl Latency {
    /// The phone-like model at full scale.
    pub fn phone_like() -> Self {
        Self::PhoneLike {
            scale: 1.0,
            seed: 0x9e37_79b9_7f4a_7c15,
        }
    }

    /// This model with every cost multiplied by `scale`.
    #[must_use]
    pub fn scaled(self, scale: f64) -> Self {
        match self {
            Self::Instant => Self::Instant,
            Self::PhoneLike { seed, .. } => Self::PhoneLike {
                scale: scale.max(0.0),
                seed,
            },
        }
    }

    /// The model `text` names (`instant`, `phone`, `phone:SCALE`).
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim().split_once(':') {
            None if text.trim() == "instant" => Some(Self::Instant),
            None if text.trim() == "phone" => Some(Self::phone_like()),
            Some(("phone", scale)) => scale
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|s| s.is_finite() && *s >= 0.0)
                .map(|s| Self::phone_like().scaled(s)),
            _ => None,
        }
    }

    /// The model [`LATENCY_ENV`] names, else [`Latency::Instant`].
    pub fn from_env() -> Self {
        std::env::var(LATENCY_ENV)
            .ok()
            .and_then(|v| Self::parse(&v))
            .unwrap_or_default()
    }

    /// Whether time passes at all.
    pub fn is_instant(&self) -> bool {
        matches!(self, Self::Instant)
            || matches!(self, Self::PhoneLike { scale, .. } if *scale == 0.0)
    }

    /// `d` scaled by the model (zero for the instant model).
    pub(crate) fn scale(&self, d: Duration) -> Duration {
        match self {
            Self::Instant => Duration::ZERO,
            Self::PhoneLike { scale, .. } => d.mul_f64(*scale),
        }
    }

    /// A draw of what `c` costs.
    pub(crate) fn cost(&mut self, c: Cost) -> Duration {
        let Self::PhoneLike { scale, seed } = self else {
            return Duration::ZERO;
        };
        // xorshift64*
        *seed ^= *seed >> 12;
        *seed ^= *seed << 25;
        *seed ^= *seed >> 27;
        let r = seed.wrapping_mul(0x2545_f491_4f6c_dd1d);
        let u = (r >> 11) as f64 / (1u64 << 53) as f64;
        let ((min, p50, max), fixed) = figures(c);
        let per = if u < 0.5 {
            min + (p50 - min) * 2.0 * u
        } else {
            p50 + (max - p50) * (2.0 * u - 1.0)
        };
        let us = match c {
            Cost::ScreencapRaw(px) | Cost::ScreencapPng(px) => fixed + per * px as f64,
            _ => per,
        };
        Duration::from_secs_f64(us * 1e-6 * *scale)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_parse_and_draw_around_their_medians() {
        assert_eq!(Latency::parse("instant"), Some(Latency::Instant));
        assert!(matches!(
            Latency::parse("phone:0.1"),
            Some(Latency::PhoneLike { scale, .. }) if scale == 0.1
        ));
        assert_eq!(Latency::parse("fast"), None);
        assert_eq!(Latency::Instant.clone().cost(Cost::Dump), Duration::ZERO);
        let mut m = Latency::phone_like();
        let mut dumps: Vec<Duration> = (0..401).map(|_| m.cost(Cost::Dump)).collect();
        dumps.sort();
        let p50 = dumps[200].as_millis();
        assert!((1_850..=2_150).contains(&p50), "{p50}");
        assert!(dumps[0].as_millis() >= 1_000 && dumps[400].as_millis() <= 3_000);
        // A 1440x3120 PNG takes about 2.1 s; its raw frame about 0.47 s.
        let px = 1440 * 3120;
        let mut pngs: Vec<u128> = (0..101)
            .map(|_| m.cost(Cost::ScreencapPng(px)).as_millis())
            .collect();
        pngs.sort_unstable();
        assert!((1_900..=2_300).contains(&pngs[50]), "{}", pngs[50]);
        let mut m = Latency::phone_like().scaled(0.1);
        assert!(m.cost(Cost::Dump) <= Duration::from_millis(300));
    }
}
