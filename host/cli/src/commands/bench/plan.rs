//! What `devicerail bench` measures on a device and what it concludes:
//! the variants (plugin settings, screenshot policy, whether the UI tree
//! is asked for, the operation), the rows they give, the faster methods
//! and the configuration that keeps them. Pure: no host, no I/O.

use std::time::Duration;

use devicerail_host_config::ScreenshotPolicy;
use serde::Serialize;
use serde_json::{Map, Value, json};

/// The plugin whose methods the bench knows how to vary.
pub(crate) const ANDROID: &str = "android";

/// What a variant does, once as a warm-up and then once per sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    /// `device.observe`.
    Observe,
    /// `device.execute` of `tap` at this point.
    Tap(u32, u32),
}

/// A setting the bench chooses between.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum Choice {
    /// `screenshotMode`.
    ScreenshotMode,
    /// `inputMethod`.
    InputMethod,
}

impl Choice {
    /// The setting's key.
    pub(crate) fn key(self) -> &'static str {
        match self {
            Self::ScreenshotMode => "screenshotMode",
            Self::InputMethod => "inputMethod",
        }
    }
}

/// One way of doing one thing, measured on a host of its own.
#[derive(Debug, Clone)]
pub(crate) struct Variant {
    /// What is measured ("screenshot", "tap", ...).
    pub(crate) what: &'static str,
    /// How.
    pub(crate) method: String,
    /// Plugin settings laid over the configuration file's.
    pub(crate) settings: Map<String, Value>,
    /// The host's screenshot policy.
    pub(crate) policy: ScreenshotPolicy,
    /// Whether the connection asks for UI snapshots.
    pub(crate) ui_tree: bool,
    /// The operation.
    pub(crate) op: Op,
    /// The setting and value this variant stands for, when it is one of
    /// the alternatives the bench picks from.
    pub(crate) choice: Option<(Choice, &'static str)>,
    /// The observation's `metadata.screenshotSource` that proves the
    /// method ran (not its fallback).
    pub(crate) expect_source: Option<&'static str>,
}

fn settings(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

fn variant(what: &'static str, method: &str, s: Value, policy: ScreenshotPolicy) -> Variant {
    Variant {
        what,
        method: method.to_owned(),
        settings: settings(s),
        policy,
        ui_tree: false,
        op: Op::Observe,
        choice: None,
        expect_source: None,
    }
}

/// The screenshot variants of `plugin`'s driver.
pub(crate) fn screenshots(plugin: &str) -> Vec<Variant> {
    if plugin != ANDROID {
        return vec![variant(
            "screenshot",
            "the driver's",
            json!({}),
            ScreenshotPolicy::Capture,
        )];
    }
    [
        ("raw", "screencap (raw, encoded here)"),
        ("png", "screencap -p"),
    ]
    .into_iter()
    .map(|(mode, method)| Variant {
        choice: Some((Choice::ScreenshotMode, mode)),
        expect_source: Some(mode),
        ..variant(
            "screenshot",
            method,
            json!({ "screenshotMode": mode }),
            ScreenshotPolicy::Capture,
        )
    })
    .collect()
}

/// The other variants of `plugin`'s driver, screenshots taken with
/// `screenshot_mode` (the faster one, when known); taps at `tap` unless
/// it is `None`.
pub(crate) fn rest(
    plugin: &str,
    screenshot_mode: Option<&str>,
    tap: Option<(u32, u32)>,
) -> Vec<Variant> {
    let android = plugin == ANDROID;
    let mut base = Map::new();
    if let (true, Some(mode)) = (android, screenshot_mode) {
        base.insert("screenshotMode".into(), json!(mode));
    }
    let fresh = |mut s: Map<String, Value>| {
        if android {
            s.insert("uiTreeReuseMs".into(), json!(0));
        }
        Value::Object(s)
    };
    let mut out = vec![
        Variant {
            ui_tree: true,
            ..variant(
                "UI tree",
                if android {
                    "uiautomator dump"
                } else {
                    "the driver's"
                },
                fresh(Map::new()),
                ScreenshotPolicy::Omit,
            )
        },
        Variant {
            ui_tree: true,
            ..variant(
                "observe (screenshot + UI tree)",
                "both at once",
                fresh(base.clone()),
                ScreenshotPolicy::Capture,
            )
        },
    ];
    if android {
        out.push(Variant {
            ui_tree: true,
            ..variant(
                "observe, unchanged screen",
                "the last tree, checked",
                Value::Object(base),
                ScreenshotPolicy::Capture,
            )
        });
    }
    let Some((x, y)) = tap else {
        return out;
    };
    if android {
        for (method, label) in [("input", "input tap"), ("touch", "touch events")] {
            out.push(Variant {
                op: Op::Tap(x, y),
                choice: Some((Choice::InputMethod, method)),
                ..variant(
                    "tap",
                    label,
                    json!({ "inputMethod": method }),
                    ScreenshotPolicy::Omit,
                )
            });
        }
    } else {
        out.push(Variant {
            op: Op::Tap(x, y),
            ..variant("tap", "the driver's", json!({}), ScreenshotPolicy::Omit)
        });
    }
    out
}

/// p50 and p95 of a variant's samples, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Stats {
    /// Median.
    pub(crate) p50_ms: f64,
    /// 95th percentile (nearest rank).
    pub(crate) p95_ms: f64,
    /// Samples.
    pub(crate) n: usize,
}

impl Stats {
    /// The statistics of `samples`; `None` without any.
    pub(crate) fn of(mut samples: Vec<Duration>) -> Option<Self> {
        if samples.is_empty() {
            return None;
        }
        samples.sort();
        let at = |q: f64| {
            let i = ((samples.len() as f64 - 1.0) * q).round() as usize;
            samples[i.min(samples.len() - 1)].as_secs_f64() * 1e3
        };
        Some(Self {
            p50_ms: at(0.5),
            p95_ms: at(0.95),
            n: samples.len(),
        })
    }
}

/// One measured variant.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Row {
    /// What was measured.
    pub(crate) what: &'static str,
    /// How.
    pub(crate) method: String,
    /// The timings, when the variant worked.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub(crate) stats: Option<Stats>,
    /// Why it did not, when it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
    /// The setting value it stands for.
    #[serde(skip)]
    pub(crate) choice: Option<(Choice, &'static str)>,
    /// Whether it is the faster of its alternatives.
    pub(crate) chosen: bool,
}

/// Marks the faster working alternative of each choice in `rows` and
/// answers the chosen values, in row order.
pub(crate) fn choose(rows: &mut [Row]) -> Vec<(Choice, &'static str)> {
    let mut chosen: Vec<(Choice, &'static str)> = Vec::new();
    for kind in [Choice::ScreenshotMode, Choice::InputMethod] {
        let best = rows
            .iter()
            .enumerate()
            .filter_map(|(i, r)| match (r.choice, r.stats) {
                (Some((c, _)), Some(s)) if c == kind => Some((i, s.p50_ms)),
                _ => None,
            })
            .min_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((i, _)) = best
            && let Some(choice) = rows[i].choice
        {
            rows[i].chosen = true;
            chosen.push(choice);
        }
    }
    chosen
}

/// The configuration that keeps `chosen` for device `serial` of
/// `plugin`: a `[[plugins.<id>.devices]]` table with a comment saying
/// where it came from and what it beat. `None` when nothing was chosen.
pub(crate) fn snippet(
    plugin: &str,
    serial: &str,
    chosen: &[(Choice, &'static str)],
    rows: &[Row],
) -> Option<String> {
    if chosen.is_empty() {
        return None;
    }
    let quote = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into());
    let mut why = Vec::new();
    for r in rows.iter().filter(|r| r.choice.is_some()) {
        if let Some(s) = r.stats {
            why.push(format!("{} {} {:.0} ms", r.what, r.method, s.p50_ms));
        }
    }
    // The comment stays on one line whatever a method's name holds.
    let why = why.join(", ").replace(['\n', '\r'], " ");
    let mut out = format!(
        "\n# Measured by `devicerail bench {}` (p50: {why}).\n[[plugins.{plugin}.devices]]\nserial = {}\n",
        serial.escape_debug(),
        quote(serial)
    );
    for (c, v) in chosen {
        out.push_str(&format!("{} = {}\n", c.key(), quote(v)));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(what: &'static str, choice: Option<(Choice, &'static str)>, p50: Option<f64>) -> Row {
        Row {
            what,
            method: choice.map(|c| c.1).unwrap_or("x").to_owned(),
            stats: p50.map(|p| Stats {
                p50_ms: p,
                p95_ms: p,
                n: 3,
            }),
            error: p50.is_none().then(|| "refused".to_owned()),
            choice,
            chosen: false,
        }
    }

    #[test]
    fn statistics_are_nearest_rank() {
        let ms = |v: &[u64]| v.iter().map(|m| Duration::from_millis(*m)).collect();
        let s = Stats::of(ms(&[30, 10, 20, 40, 1000])).expect("samples");
        assert_eq!((s.p50_ms, s.p95_ms, s.n), (30.0, 1000.0, 5));
        assert_eq!(Stats::of(Vec::new()), None);
    }

    #[test]
    fn the_faster_working_alternative_is_chosen_and_kept() {
        let raw = Some((Choice::ScreenshotMode, "raw"));
        let png = Some((Choice::ScreenshotMode, "png"));
        let input = Some((Choice::InputMethod, "input"));
        let touch = Some((Choice::InputMethod, "touch"));
        let mut rows = vec![
            row("screenshot", raw, Some(600.0)),
            row("screenshot", png, Some(2400.0)),
            row("UI tree", None, Some(1.0)),
            row("tap", input, Some(300.0)),
            row("tap", touch, None),
        ];
        let chosen = choose(&mut rows);
        assert_eq!(
            chosen,
            vec![
                (Choice::ScreenshotMode, "raw"),
                (Choice::InputMethod, "input")
            ]
        );
        let marks: Vec<bool> = rows.iter().map(|r| r.chosen).collect();
        assert_eq!(marks, [true, false, false, true, false]);
        let text = snippet(ANDROID, "emu\"1", &chosen, &rows).expect("a table");
        let doc: toml::Table = toml::from_str(&text).expect("valid TOML");
        let entry = &doc["plugins"]["android"]["devices"][0];
        assert_eq!(entry["serial"].as_str(), Some("emu\"1"));
        assert_eq!(entry["screenshotMode"].as_str(), Some("raw"));
        assert_eq!(entry["inputMethod"].as_str(), Some("input"));
        assert!(text.contains("screenshot raw 600 ms, screenshot png 2400 ms"));
        assert_eq!(snippet(ANDROID, "x", &[], &rows), None);
    }

    #[test]
    fn only_the_android_driver_has_alternatives() {
        assert_eq!(screenshots("mock").len(), 1);
        let shots = screenshots(ANDROID);
        assert_eq!(shots.len(), 2);
        assert_eq!(shots[0].settings["screenshotMode"], "raw");
        let rest_android = rest(ANDROID, Some("raw"), Some((1, 1)));
        let taps: Vec<&str> = rest_android
            .iter()
            .filter(|v| v.op == Op::Tap(1, 1))
            .map(|v| v.settings["inputMethod"].as_str().unwrap_or(""))
            .collect();
        assert_eq!(taps, ["input", "touch"]);
        // The fresh rows dump every time; the unchanged row may reuse.
        assert_eq!(rest_android[0].settings["uiTreeReuseMs"], 0);
        assert!(!rest_android[2].settings.contains_key("uiTreeReuseMs"));
        assert_eq!(rest_android[2].settings["screenshotMode"], "raw");
        assert!(
            rest("mock", None, None)
                .iter()
                .all(|v| v.settings.is_empty())
        );
        assert!(rest("mock", None, None).iter().all(|v| v.op == Op::Observe));
    }
}
