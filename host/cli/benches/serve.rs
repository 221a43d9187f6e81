//! Throughput of the real `devicerail serve` over pipes (release build):
//! pipelined `devices.list`; durable `device.observe` with a captured
//! screenshot, with and without a UI snapshot, one at a time and 16 in
//! flight; a 1,000-node tree; a 1080×2400 PNG; CPU per request; and peak
//! RSS after 100,000 recorded events.
//!
//! Every observation scenario runs twice in the same run, side by side:
//! the plugin loaded in the host (`isolation = "inline"`) and in its
//! supervised worker process (`isolation = "process"`, the default). CPU
//! is the host's plus its workers' (user + system), so both modes count
//! the plugin's own work. With `rounds=N` each scenario is repeated N times
//! alternating the modes, and the best round of each mode is kept (the
//! machine is shared; the best round is the least disturbed one).
//!
//! With `against=PATH`, the two sides are this build and the daemon at
//! PATH, alternating: another build of `devicerail` (started with the
//! same `serve` flags and process isolation), or the published reference
//! daemon (recognized by its `--version`; started bare with its built-in
//! mock device, its data in a temporary home; it records no UI snapshot,
//! so the UI rows compare our screenshot + snapshot with its screenshot
//! alone, as the table says). The ratios are this build's over that
//! one's; `against=reference` takes the path from
//! `DEVICERAIL_REFERENCE_DAEMON` and skips the pairing, saying so, when
//! it is unset or missing.
//!
//! Run: `cargo bench -p devicerail-host --bench serve` (add `-- quick` for
//! a shorter run, `-- quick rounds=3` to repeat, `against=PATH` to compare
//! with another daemon).

mod support;

use serde_json::json;
use support::{Host, Setup};

const BASE_FEATURES: [&str; 3] = [
    "events.snapshot.v1",
    "request.control.v1",
    "device.routing.v1",
];

const UI_FEATURES: [&str; 4] = [
    "events.snapshot.v1",
    "request.control.v1",
    "device.routing.v1",
    "observation.uiSnapshot.v1",
];

/// The observation workloads: their row labels and the features they ask
/// for (the UI snapshot is a feature).
const SCREENSHOT: (&str, &[&str]) = ("screenshot", &BASE_FEATURES);
const WITH_UI: (&str, &[&str]) = ("screenshot + UI snapshot", &UI_FEATURES);

const HOSTILE: (&str, &str) = ("devicerail-host-test-plugin-hostile", "test-hostile");

/// One side of the comparison: a daemon and the isolation its plugins
/// run with.
#[derive(Debug, Clone)]
struct Side {
    label: String,
    binary: Option<std::path::PathBuf>,
    /// Started without flags (the reference daemon).
    bare: bool,
    isolation: &'static str,
}

/// The two sides, in the order each round runs them: inline and process
/// isolation of this build, or (`against=PATH`) this build and another
/// daemon.
fn sides(against: Option<&str>) -> [Side; 2] {
    match against {
        None => [
            Side {
                label: "inline".into(),
                binary: None,
                bare: false,
                isolation: "inline",
            },
            Side {
                label: "process".into(),
                binary: None,
                bare: false,
                isolation: "process",
            },
        ],
        Some(path) => [
            Side {
                label: if support::takes_no_flags(path.as_ref()) {
                    "reference".into()
                } else {
                    "against".into()
                },
                bare: support::takes_no_flags(path.as_ref()),
                binary: Some(path.into()),
                isolation: "process",
            },
            Side {
                label: "this".into(),
                binary: None,
                bare: false,
                isolation: "process",
            },
        ],
    }
}

/// One measured run of pipelined observations.
#[derive(Debug, Clone, Copy)]
struct ObserveRun {
    per_second: f64,
    cpu_us: f64,
    wall_us: f64,
}

fn observe(h: &mut Host, n: usize, window: usize, tag: &str) -> ObserveRun {
    // Warm up (page cache, SQLite statements, blob caches).
    h.pipeline(
        n / 10 + 1,
        window,
        |i| json!({"jsonrpc":"2.0","id":format!("w{tag}{i}"),"method":"device.observe"}),
    );
    let cpu0 = h.cpu_seconds_with_workers();
    let t = h.pipeline(
        n,
        window,
        |i| json!({"jsonrpc":"2.0","id":format!("{tag}{i}"),"method":"device.observe"}),
    );
    let cpu = h.cpu_seconds_with_workers() - cpu0;
    ObserveRun {
        per_second: n as f64 / t.as_secs_f64(),
        cpu_us: cpu * 1e6 / n as f64,
        wall_us: t.as_secs_f64() * 1e6 / n as f64,
    }
}

fn report(label: &str, mode: &str, n: usize, r: &ObserveRun) {
    println!(
        "{label} [{mode}]: {n} in {:.0} us each = {:.0} obs/s; host+worker CPU {:.0} us/observe",
        r.wall_us, r.per_second, r.cpu_us
    );
}

/// The configuration text for `plugin` in `mode`, plus `extra` lines of
/// its table.
fn config(plugin: &str, mode: &str, extra: &str) -> String {
    format!("[plugins.{plugin}]\nisolation = \"{mode}\"\n{extra}")
}

/// A row of the side-by-side table: the best run of each side (the
/// second side's over the first's in the ratios).
struct Row {
    label: String,
    first: ObserveRun,
    second: ObserveRun,
}

impl Row {
    fn print(&self) {
        let (i, p) = (&self.first, &self.second);
        println!(
            "| {} | {:.0}/s, {:.0} us, {:.0} us CPU | {:.0}/s, {:.0} us, {:.0} us CPU | {:.0} % | {:.2}x |",
            self.label,
            i.per_second,
            i.wall_us,
            i.cpu_us,
            p.per_second,
            p.wall_us,
            p.cpu_us,
            100.0 * p.per_second / i.per_second,
            p.cpu_us / i.cpu_us
        );
    }
}

/// Keeps the better of two runs (higher throughput).
fn best(a: Option<ObserveRun>, b: ObserveRun) -> Option<ObserveRun> {
    Some(match a {
        Some(a) if a.per_second >= b.per_second => a,
        _ => b,
    })
}

fn cheap_requests(scale: usize, rounds: usize, sides: &[Side; 2]) {
    let list = |i| json!({"jsonrpc":"2.0","id":i,"method":"devices.list"});
    for window in [64, 8192] {
        if window > 64 && sides[0].bare {
            // The reference daemon drops a client that leaves this many
            // answers unread ("response queue is full").
            println!("skipped against the reference daemon: devices.list {window} deep");
            continue;
        }
        let mut best_rate = [0f64; 2];
        for _ in 0..rounds {
            for (k, side) in sides.iter().enumerate() {
                let text = config("mock", side.isolation, "");
                let mut h = Host::start_with(&Setup {
                    features: &BASE_FEATURES,
                    config: &text,
                    binary: side.binary.as_deref(),
                    bare: side.bare,
                    ..Setup::default()
                });
                // Warm up at the measured depth (the reference daemon drops a
                // client that leaves thousands of answers unread).
                h.pipeline(10_000 / scale, window, list);
                let n = 200_000 / scale;
                let (cpu0, own0) = (h.cpu_seconds(), support::own_cpu_seconds());
                let t = h.pipeline(n, window, list);
                let cpu = h.cpu_seconds() - cpu0;
                let own = support::own_cpu_seconds() - own0;
                let rate = n as f64 / t.as_secs_f64();
                println!(
                    "devices.list pipelined {window} deep [{}]: {n} requests in {:.3}s = {rate:.0} req/s; host CPU {:.2} us/request (load generator {:.2}); peak RSS {:.1} MB",
                    side.label,
                    t.as_secs_f64(),
                    cpu * 1e6 / n as f64,
                    own * 1e6 / n as f64,
                    h.peak_rss_mb()
                );
                best_rate[k] = best_rate[k].max(rate);
                drop(h.stdin);
                let _ = h.child.wait();
            }
        }
        println!(
            "devices.list {window} deep: {} / {} = {:.2}x (best of {rounds})",
            sides[1].label,
            sides[0].label,
            best_rate[1] / best_rate[0]
        );
    }
}

/// Screenshot, and screenshot + UI snapshot, 1 and 16 in flight, both
/// modes.
fn observations(scale: usize, rounds: usize, sides: &[Side; 2], rows: &mut Vec<Row>) {
    for (label, features) in [SCREENSHOT, WITH_UI] {
        for window in [1, 16] {
            let n = if window == 1 { 10_000 } else { 40_000 } / scale;
            let mut got: [Option<ObserveRun>; 2] = [None, None];
            for _ in 0..rounds {
                for (m, side) in sides.iter().enumerate() {
                    let mode = side.label.as_str();
                    let text = config("mock", side.isolation, "");
                    let mut h = Host::start_with(&Setup {
                        features,
                        config: &text,
                        binary: side.binary.as_deref(),
                        bare: side.bare,
                        ..Setup::default()
                    });
                    h.call(json!({"jsonrpc":"2.0","id":"c","method":"device.connect"}));
                    h.call(json!({"jsonrpc":"2.0","id":"s","method":"session.start"}));
                    let r = observe(&mut h, n, window, &format!("{window}-"));
                    report(
                        &format!("device.observe ({label}, durable), {window} in flight"),
                        mode,
                        n,
                        &r,
                    );
                    got[m] = best(got[m], r);
                    drop(h.stdin);
                    let _ = h.child.wait();
                }
            }
            if let [Some(first), Some(second)] = got {
                rows.push(Row {
                    label: format!("{label}, {window} in flight"),
                    first,
                    second,
                });
            }
        }
    }
}

/// What 1,000 more UI nodes add to one observation, both modes.
fn large_tree(scale: usize, rounds: usize, sides: &[Side; 2], rows: &mut Vec<Row>) {
    let n = 2_000 / scale;
    let mut added: [Option<(f64, f64)>; 2] = [None, None];
    let mut big: [Option<ObserveRun>; 2] = [None, None];
    for _ in 0..rounds {
        for (m, side) in sides.iter().enumerate() {
            let mode = side.label.as_str();
            let mut runs = Vec::new();
            for rows in ["0", "1000"] {
                let text = config("mock", side.isolation, "");
                let mut h = Host::start_with(&Setup {
                    features: &UI_FEATURES,
                    env: &[("DEVICERAIL_MOCK_FEED_ROWS", rows)],
                    config: &text,
                    binary: side.binary.as_deref(),
                    bare: side.bare,
                    ..Setup::default()
                });
                h.call(json!({"jsonrpc":"2.0","id":"c","method":"device.connect"}));
                h.call(json!({"jsonrpc":"2.0","id":"s","method":"session.start"}));
                h.sign_in();
                let r = observe(&mut h, n, 1, "t");
                report(
                    &format!(
                        "device.observe (UI snapshot, home screen + {rows} feed rows), 1 in flight"
                    ),
                    mode,
                    n,
                    &r,
                );
                runs.push(r);
                drop(h.stdin);
                let _ = h.child.wait();
            }
            let wall = (runs[1].wall_us - runs[0].wall_us) / 1000.0;
            let cpu = (runs[1].cpu_us - runs[0].cpu_us) / 1000.0;
            println!(
                "  [{mode}] 1,000 more nodes add {wall:.2} ms per observation ({cpu:.2} ms host+worker CPU, mock included)"
            );
            if added[m].is_none_or(|(w, _)| wall < w) {
                added[m] = Some((wall, cpu));
            }
            big[m] = best(big[m], runs[1]);
        }
    }
    if let [Some(first), Some(second)] = big {
        rows.push(Row {
            label: "screenshot + 1,000-node UI snapshot, 1 in flight".into(),
            first,
            second,
        });
    }
    if let [Some((wi, ci)), Some((wp, cp))] = added {
        let (a, b) = (&sides[0].label, &sides[1].label);
        println!(
            "1,000 more nodes: {a} +{wi:.2} ms ({ci:.2} ms CPU), {b} +{wp:.2} ms ({cp:.2} ms CPU); {b} - {a} = {:.2} ms",
            wp - wi
        );
    }
}

/// A 1080×2400 screenshot (3.7 MB PNG, the hostile plugin's `screen`
/// setting) per observation, 1 in flight, both modes.
fn large_png(scale: usize, rounds: usize, sides: &[Side; 2], rows: &mut Vec<Row>) {
    let n = 1_000 / scale;
    let mut got: [Option<ObserveRun>; 2] = [None, None];
    for _ in 0..rounds {
        for (m, side) in sides.iter().enumerate() {
            let mode = side.label.as_str();
            let text = config("test-hostile", side.isolation, "screen = \"1080x2400\"\n");
            let mut h = Host::start_with(&Setup {
                features: &BASE_FEATURES,
                plugins: &[HOSTILE],
                config: &text,
                binary: side.binary.as_deref(),
                bare: side.bare,
                ..Setup::default()
            });
            h.call(json!({"jsonrpc":"2.0","id":"c","method":"device.connect"}));
            h.call(json!({"jsonrpc":"2.0","id":"s","method":"session.start"}));
            let r = observe(&mut h, n, 1, "png");
            report(
                "device.observe (1080x2400 PNG, durable), 1 in flight",
                mode,
                n,
                &r,
            );
            got[m] = best(got[m], r);
            drop(h.stdin);
            let _ = h.child.wait();
        }
    }
    if let [Some(first), Some(second)] = got {
        rows.push(Row {
            label: "1080x2400 PNG (3.7 MB), 1 in flight".into(),
            first,
            second,
        });
    }
}

fn recorded_events(scale: usize) {
    let mut h = Host::start(&BASE_FEATURES);
    h.call(json!({"jsonrpc":"2.0","id":"c","method":"device.connect"}));
    h.call(json!({"jsonrpc":"2.0","id":"s","method":"session.start"}));
    let target = 100_000 / scale;
    let t = h.pipeline(
        target - 1,
        512,
        |i| json!({"jsonrpc":"2.0","id":format!("r{i}"),"method":"device.observe"}),
    );
    println!(
        "recorded {target} events in {:.1}s; peak RSS {:.1} MB ({} threads)",
        t.as_secs_f64(),
        h.peak_rss_mb(),
        h.threads()
    );
    drop(h.stdin);
    let _ = h.child.wait();
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

/// `profile=N`: N observations (screenshot + UI snapshot) and nothing
/// else, for a profiler to watch; prints the host's and its worker's pids
/// first. `isolation=inline` loads the plugin in the host (default
/// `process`), `window=W` keeps W in flight (default 1), `ui=off` asks
/// for the screenshot alone.
fn profile(n: usize, isolation: &str, window: usize, ui: bool) {
    let text = config("mock", isolation, "");
    let (label, features) = if ui { WITH_UI } else { SCREENSHOT };
    let mut h = Host::start_with(&Setup {
        features,
        config: &text,
        ..Setup::default()
    });
    h.call(json!({"jsonrpc":"2.0","id":"c","method":"device.connect"}));
    h.call(json!({"jsonrpc":"2.0","id":"s","method":"session.start"}));
    println!("host pid {}, worker pids {:?}", h.child.id(), h.children());
    let r = observe(&mut h, n, window, "p");
    report(
        &format!("device.observe ({label}, durable), {window} in flight"),
        isolation,
        n,
        &r,
    );
    drop(h.stdin);
    let _ = h.child.wait();
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(n) = args
        .iter()
        .find_map(|a| a.strip_prefix("profile=")?.parse().ok())
    {
        let isolation = match args.iter().find_map(|a| a.strip_prefix("isolation=")) {
            Some("inline") => "inline",
            Some("process") | None => "process",
            Some(other) => panic!("isolation={other}: inline or process"),
        };
        let window = args
            .iter()
            .find_map(|a| a.strip_prefix("window=")?.parse().ok())
            .unwrap_or(1usize)
            .max(1);
        let ui = !args.iter().any(|a| a == "ui=off");
        profile(n, isolation, window, ui);
        return;
    }
    let quick = args.iter().any(|a| a == "quick");
    let rounds = args
        .iter()
        .find_map(|a| a.strip_prefix("rounds=")?.parse().ok())
        .unwrap_or(1usize)
        .max(1);
    // Only the named scenarios, if any are named (`only=observe,tree`).
    let only: Option<Vec<String>> = args
        .iter()
        .find_map(|a| a.strip_prefix("only="))
        .map(|s| s.split(',').map(str::to_owned).collect());
    let wanted = |name: &str| only.as_ref().is_none_or(|o| o.iter().any(|x| x == name));
    let reference = std::env::var("DEVICERAIL_REFERENCE_DAEMON").ok();
    let against = match args.iter().find_map(|a| a.strip_prefix("against=")) {
        Some("reference") => match reference.as_deref() {
            Some(p) if std::path::Path::new(p).is_file() => Some(p),
            _ => {
                println!(
                    "skipped: against=reference, but DEVICERAIL_REFERENCE_DAEMON does not name the reference daemon"
                );
                return;
            }
        },
        other => other,
    };
    let sides = sides(against);
    let scale = if quick { 10 } else { 1 };
    println!("load average at start: {}", load_average());
    let mut rows = Vec::new();
    if wanted("list") {
        cheap_requests(scale, rounds, &sides);
    }
    if wanted("observe") {
        observations(scale, rounds, &sides, &mut rows);
    }
    // The reference daemon's mock has no feed to grow and cannot load our
    // test plugins.
    let ours_only = sides[0].bare;
    if ours_only && (wanted("tree") || wanted("png")) {
        println!("skipped against the reference daemon: tree and png (its mock has neither)");
    }
    if wanted("tree") && !ours_only {
        large_tree(scale, rounds, &sides, &mut rows);
    }
    if wanted("png") && !ours_only {
        large_png(scale, rounds, &sides, &mut rows);
    }
    if wanted("rss") {
        recorded_events(scale);
    }
    println!("load average at end: {}", load_average());
    if !rows.is_empty() {
        println!();
        let (a, b) = (&sides[0].label, &sides[1].label);
        println!(
            "| observe, durable (best of {rounds}) | {a} | {b} | {b}/{a} throughput | CPU {b}/{a} |"
        );
        println!("| --- | --- | --- | --- | --- |");
        for row in &rows {
            row.print();
        }
    }
}
