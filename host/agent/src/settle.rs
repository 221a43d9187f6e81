//! When a screen has settled: the caller observes, feeds each observation
//! as a [`Sample`] to a [`Settler`], and is told to poll again after a
//! while, that the screen settled, or that it gave up at the bound.
//!
//! Settled means equivalent samples (same tree digest, and the same
//! pixels but for a few cells) spanning at least the quiet window, with
//! the driver's idle hint (when it gives one) reporting no requests in
//! flight and no animation running. A first sample whose hint says the
//! screen has not changed for the quiet window is settled at once.
//!
//! [`settle`] is the one observe-and-settle loop every tool runs: it asks
//! the caller's [`Eyes`] for looks and pauses, feeds them to a
//! [`Settler`], and answers the last look with how settling went.
//!
//! Sans I/O: time comes in with the samples (and the looks); it never
//! sleeps or reads a clock itself.

use std::future::Future;

use crate::pixels::{PixelChange, PixelDigest};
use crate::screen::Screen;

/// How long to wait for quiet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SettlePolicy {
    /// How long equivalent samples must span.
    pub quiet_ms: u32,
    /// When to give up, from the first sample.
    pub max_ms: u32,
    /// Shortest wait between samples.
    pub min_poll_ms: u32,
}

impl SettlePolicy {
    /// Quiet window for web documents.
    pub const WEB_QUIET_MS: u32 = 150;
    /// Quiet window for native screens.
    pub const NATIVE_QUIET_MS: u32 = 300;
    /// Bound of `act` and `observe` by default.
    pub const DEFAULT_MAX_MS: u32 = 3000;

    /// The policy for a web (`true`) or native screen, bounded by `max_ms`.
    pub fn for_screen(web: bool, max_ms: u32) -> Self {
        Self {
            quiet_ms: if web {
                Self::WEB_QUIET_MS
            } else {
                Self::NATIVE_QUIET_MS
            },
            max_ms,
            min_poll_ms: 50,
        }
    }
}

/// What a driver says about its own activity (observation metadata
/// `idle`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IdleHint {
    /// Network requests in flight.
    pub inflight_requests: Option<u32>,
    /// Animations running (or changes scheduled).
    pub running_animations: Option<u32>,
    /// Time since the screen last changed.
    pub ms_since_mutation: Option<u32>,
}

impl IdleHint {
    /// Reads the hint from observation metadata (`metadata.idle`).
    pub fn from_map(metadata: &serde_json::Map<String, serde_json::Value>) -> Option<Self> {
        let idle = metadata.get("idle")?;
        let field = |k: &str| {
            idle.get(k)
                .and_then(|v| v.as_u64())
                .map(|v| v.min(u64::from(u32::MAX)) as u32)
        };
        let hint = Self {
            inflight_requests: field("inflightRequests"),
            running_animations: field("runningAnimations"),
            ms_since_mutation: field("msSinceMutation"),
        };
        (hint != Self::default()).then_some(hint)
    }

    fn busy(&self) -> Option<&'static str> {
        if self.inflight_requests.is_some_and(|n| n > 0) {
            Some("network")
        } else if self.running_animations.is_some_and(|n| n > 0) {
            Some("animation")
        } else {
            None
        }
    }
}

/// One observation, as settling sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// When it was taken, in the caller's milliseconds.
    pub at_ms: u64,
    /// The tree's digest, when a tree was observed.
    pub tree: Option<u64>,
    /// The screenshot's digest, when one was observed.
    pub pixels: Option<PixelDigest>,
    /// The driver's idle hint, when it gave one.
    pub idle: Option<IdleHint>,
}

/// What to do next.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Observe again after this many milliseconds.
    PollAfter(u32),
    /// The screen settled.
    Settled(SettleReport),
    /// The bound passed first.
    GaveUp(SettleReport),
}

/// How settling went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettleReport {
    /// Whether the screen settled.
    pub settled: bool,
    /// From the first sample to the last.
    pub elapsed_ms: u64,
    /// Samples fed.
    pub samples: u32,
    /// What was still changing at the end: `tree`, `pixels`, `network`,
    /// `animation`.
    pub still_changing: Vec<&'static str>,
}

/// The settling state machine.
#[derive(Debug, Clone)]
pub struct Settler {
    policy: SettlePolicy,
    start_ms: Option<u64>,
    /// When the current run of equivalent samples began.
    window_ms: u64,
    last: Option<Sample>,
    samples: u32,
    changing: Vec<&'static str>,
}

/// How two samples differ.
fn differences(a: &Sample, b: &Sample) -> Vec<&'static str> {
    let mut out = Vec::new();
    if a.tree != b.tree {
        out.push("tree");
    }
    if let (Some(x), Some(y)) = (&a.pixels, &b.pixels) {
        let c: PixelChange = x.compare(y);
        if !c.equivalent() {
            out.push("pixels");
        }
    }
    out
}

impl Settler {
    /// A settler under `policy`.
    pub fn new(policy: SettlePolicy) -> Self {
        Self {
            policy,
            start_ms: None,
            window_ms: 0,
            last: None,
            samples: 0,
            changing: Vec::new(),
        }
    }

    fn report(&self, settled: bool, at_ms: u64) -> SettleReport {
        SettleReport {
            settled,
            elapsed_ms: at_ms.saturating_sub(self.start_ms.unwrap_or(at_ms)),
            samples: self.samples,
            still_changing: if settled {
                Vec::new()
            } else {
                self.changing.clone()
            },
        }
    }

    /// Feeds the next sample.
    pub fn feed(&mut self, s: Sample) -> Step {
        self.samples += 1;
        let start = *self.start_ms.get_or_insert(s.at_ms);
        let busy = s.idle.as_ref().and_then(IdleHint::busy);
        let quiet = u64::from(self.policy.quiet_ms);
        let quiet_for = s.idle.and_then(|h| h.ms_since_mutation).map(u64::from);
        match &self.last {
            None => {
                self.window_ms = s.at_ms;
                self.changing = busy.into_iter().collect();
                if busy.is_none() && quiet_for.is_some_and(|q| q >= quiet) {
                    self.last = Some(s.clone());
                    return Step::Settled(self.report(true, s.at_ms));
                }
            }
            Some(prev) => {
                let diff = differences(prev, &s);
                if diff.is_empty() {
                    let span = s.at_ms.saturating_sub(self.window_ms);
                    let hinted = quiet_for.is_some_and(|q| q >= quiet);
                    if busy.is_none() && (span >= quiet || hinted) {
                        self.last = Some(s.clone());
                        return Step::Settled(self.report(true, s.at_ms));
                    }
                    self.changing = busy.into_iter().collect();
                } else {
                    self.window_ms = s.at_ms;
                    self.changing = diff;
                    self.changing.extend(busy);
                }
            }
        }
        let at = s.at_ms;
        self.last = Some(s);
        if at.saturating_sub(start) >= u64::from(self.policy.max_ms) {
            return Step::GaveUp(self.report(false, at));
        }
        let waited = at.saturating_sub(self.window_ms);
        let mut wait = quiet.saturating_sub(waited);
        if let Some(q) = quiet_for {
            wait = wait.min(quiet.saturating_sub(q));
        }
        let left = (start + u64::from(self.policy.max_ms)).saturating_sub(at);
        let wait = wait
            .max(u64::from(self.policy.min_poll_ms))
            .min(left.max(1));
        Step::PollAfter(wait as u32)
    }
}

/// Where looks come from, for [`settle`]: a fresh look at the device
/// (stamped with the caller's clock), and a pause.
pub trait Eyes {
    /// Why a look failed.
    type Error;
    /// Observes the device now.
    fn look(&mut self) -> impl Future<Output = Result<Screen, Self::Error>> + Send;
    /// Waits `ms` milliseconds.
    fn pause(&mut self, ms: u32) -> impl Future<Output = ()> + Send;
}

/// Looks again from `first` until the screen is quiet or `max_ms` passed
/// (the policy for its kind of screen): the last look and how it went.
pub async fn settle<E: Eyes + Send>(
    eyes: &mut E,
    first: Screen,
    max_ms: u32,
) -> Result<(Screen, SettleReport), E::Error> {
    let t0 = first.at_ms;
    let mut settler = Settler::new(SettlePolicy::for_screen(first.web(), max_ms));
    let mut last = first;
    loop {
        match settler.feed(last.sample(t0)) {
            Step::Settled(r) | Step::GaveUp(r) => return Ok((last, r)),
            Step::PollAfter(ms) => {
                eyes.pause(ms).await;
                last = eyes.look().await?;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(at_ms: u64, tree: u64, idle: Option<IdleHint>) -> Sample {
        Sample {
            at_ms,
            tree: Some(tree),
            pixels: None,
            idle,
        }
    }

    fn policy() -> SettlePolicy {
        SettlePolicy {
            quiet_ms: 300,
            max_ms: 3000,
            min_poll_ms: 50,
        }
    }

    #[test]
    fn equal_samples_spanning_the_quiet_window_settle() {
        let mut s = Settler::new(policy());
        assert_eq!(s.feed(sample(0, 1, None)), Step::PollAfter(300));
        match s.feed(sample(310, 1, None)) {
            Step::Settled(r) => assert_eq!((r.elapsed_ms, r.samples), (310, 2)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_change_restarts_the_window_and_the_bound_gives_up() {
        let mut s = Settler::new(policy());
        s.feed(sample(0, 1, None));
        assert_eq!(s.feed(sample(300, 2, None)), Step::PollAfter(300));
        let mut t = 600;
        let mut tree = 3;
        loop {
            match s.feed(sample(t, tree, None)) {
                Step::PollAfter(_) => {}
                Step::GaveUp(r) => {
                    assert!(!r.settled);
                    assert_eq!(r.still_changing, vec!["tree"]);
                    assert!(r.elapsed_ms >= 3000);
                    break;
                }
                Step::Settled(r) => panic!("settled while changing: {r:?}"),
            }
            t += 300;
            tree += 1;
        }
    }

    #[test]
    fn idle_hints_settle_at_once_or_hold_while_animating() {
        let idle = IdleHint {
            inflight_requests: Some(0),
            running_animations: Some(0),
            ms_since_mutation: Some(5000),
        };
        let mut s = Settler::new(policy());
        assert!(matches!(s.feed(sample(0, 1, Some(idle))), Step::Settled(_)));
        let moving = IdleHint {
            running_animations: Some(1),
            ms_since_mutation: Some(0),
            ..idle
        };
        let mut s = Settler::new(policy());
        assert_eq!(s.feed(sample(0, 1, Some(moving))), Step::PollAfter(300));
        // Equal trees, but the driver says it is still animating.
        assert!(matches!(
            s.feed(sample(400, 1, Some(moving))),
            Step::PollAfter(_)
        ));
        let calm = IdleHint {
            ms_since_mutation: Some(100),
            ..idle
        };
        // A quiet hint shortens the next wait.
        assert_eq!(s.feed(sample(500, 2, Some(calm))), Step::PollAfter(200));
        assert!(matches!(
            s.feed(sample(
                700,
                2,
                Some(IdleHint {
                    ms_since_mutation: Some(300),
                    ..idle
                })
            )),
            Step::Settled(_)
        ));
    }

    #[test]
    fn metadata_hints_are_read() {
        let m = serde_json::json!({ "idle": { "runningAnimations": 1, "msSinceMutation": 20 } });
        let h = IdleHint::from_map(m.as_object().expect("object")).expect("hint");
        assert_eq!(
            (
                h.running_animations,
                h.ms_since_mutation,
                h.inflight_requests
            ),
            (Some(1), Some(20), None)
        );
        assert_eq!(IdleHint::from_map(&serde_json::Map::new()), None);
    }
}
