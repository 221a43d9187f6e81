//! Throughput of the real `devicerail serve` over pipes with the mock
//! plugin (release build): pipelined `devices.list`, durable
//! `device.observe` with a captured screenshot, with and without a UI
//! snapshot, one at a time and 16 in flight, a 1,000-node tree, host CPU
//! per request, and peak RSS after 100,000 recorded events.
//!
//! Run: `cargo bench -p devicerail-host --bench serve` (add `-- quick` for
//! a shorter run). Host CPU is the host process's user + system time, so
//! it includes the in-process mock driver's rendering and tree building.

mod support;

use serde_json::json;
use support::Host;

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

/// One measured run of pipelined observations.
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
    let cpu0 = h.cpu_seconds();
    let t = h.pipeline(
        n,
        window,
        |i| json!({"jsonrpc":"2.0","id":format!("{tag}{i}"),"method":"device.observe"}),
    );
    let cpu = h.cpu_seconds() - cpu0;
    ObserveRun {
        per_second: n as f64 / t.as_secs_f64(),
        cpu_us: cpu * 1e6 / n as f64,
        wall_us: t.as_secs_f64() * 1e6 / n as f64,
    }
}

fn report(label: &str, n: usize, r: &ObserveRun) {
    println!(
        "{label}: {n} in {:.0} us each = {:.0} obs/s; host CPU {:.0} us/observe",
        r.wall_us, r.per_second, r.cpu_us
    );
}

fn cheap_requests(scale: usize) {
    let mut h = Host::start(&BASE_FEATURES);
    let list = |i| json!({"jsonrpc":"2.0","id":i,"method":"devices.list"});
    h.pipeline(10_000 / scale, 4096, list);
    for window in [64, 8192] {
        let n = 200_000 / scale;
        let cpu0 = h.cpu_seconds();
        let t = h.pipeline(n, window, list);
        let cpu = h.cpu_seconds() - cpu0;
        println!(
            "devices.list pipelined {window} deep: {n} requests in {:.3}s = {:.0} req/s; host CPU {:.2} us/request",
            t.as_secs_f64(),
            n as f64 / t.as_secs_f64(),
            cpu * 1e6 / n as f64
        );
    }
    println!("  peak RSS after devices.list: {:.1} MB", h.peak_rss_mb());
}

fn observations(scale: usize) {
    for (label, features) in [
        ("screenshot", &BASE_FEATURES[..]),
        ("screenshot + UI snapshot", &UI_FEATURES[..]),
    ] {
        let mut h = Host::start(features);
        h.call(json!({"jsonrpc":"2.0","id":"c","method":"device.connect"}));
        h.call(json!({"jsonrpc":"2.0","id":"s","method":"session.start"}));
        for window in [1, 16] {
            let n = if window == 1 { 5_000 } else { 20_000 } / scale;
            let r = observe(&mut h, n, window, &format!("{window}-"));
            report(
                &format!("device.observe ({label}, durable), {window} in flight"),
                n,
                &r,
            );
        }
        drop(h.stdin);
        let _ = h.child.wait();
    }
}

fn large_tree(scale: usize) {
    let n = 2_000 / scale;
    let mut runs = Vec::new();
    for rows in ["0", "1000"] {
        let mut h = Host::start_with_env(&UI_FEATURES, &[("DEVICERAIL_MOCK_FEED_ROWS", rows)]);
        h.call(json!({"jsonrpc":"2.0","id":"c","method":"device.connect"}));
        h.call(json!({"jsonrpc":"2.0","id":"s","method":"session.start"}));
        h.sign_in();
        let r = observe(&mut h, n, 1, "t");
        report(
            &format!("device.observe (UI snapshot, home screen + {rows} feed rows), 1 in flight"),
            n,
            &r,
        );
        runs.push(r);
        drop(h.stdin);
        let _ = h.child.wait();
    }
    println!(
        "  1,000 more nodes add {:.2} ms per observation ({:.2} ms host CPU, mock included)",
        (runs[1].wall_us - runs[0].wall_us) / 1000.0,
        (runs[1].cpu_us - runs[0].cpu_us) / 1000.0
    );
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

fn main() {
    let quick = std::env::args().any(|a| a == "quick");
    let scale = if quick { 10 } else { 1 };
    cheap_requests(scale);
    observations(scale);
    large_tree(scale);
    recorded_events(scale);
}
