//! Throughput of the real `devicerail serve` over pipes with the mock
//! plugin (release build): pipelined `devices.list`, `device.observe` with
//! captured screenshots under the durability promise, host CPU per cheap
//! request, and peak RSS after 100,000 recorded events.
//!
//! Run: `cargo bench -p devicerail-host --bench serve` (add `-- quick` for
//! a shorter run).

mod support;

use serde_json::json;
use support::Host;

fn main() {
    let quick = std::env::args().any(|a| a == "quick");
    let scale = if quick { 10 } else { 1 };
    let mut h = Host::start(&[
        "events.snapshot.v1",
        "request.control.v1",
        "device.routing.v1",
    ]);

    let n = 200_000 / scale;
    h.pipeline(
        10_000 / scale,
        4096,
        |i| json!({"jsonrpc":"2.0","id":i,"method":"devices.list"}),
    );
    let cpu0 = h.cpu_seconds();
    let t = h.pipeline(
        n,
        8192,
        |i| json!({"jsonrpc":"2.0","id":i,"method":"devices.list"}),
    );
    let cpu = h.cpu_seconds() - cpu0;
    println!(
        "devices.list pipelined: {n} requests in {:.3}s = {:.0} req/s; host CPU {:.2} us/request",
        t.as_secs_f64(),
        n as f64 / t.as_secs_f64(),
        cpu * 1e6 / n as f64
    );
    println!("  peak RSS after devices.list: {:.1} MB", h.peak_rss_mb());

    h.call(json!({"jsonrpc":"2.0","id":"c","method":"device.connect"}));
    h.call(json!({"jsonrpc":"2.0","id":"s","method":"session.start"}));
    let n = 20_000 / scale;
    let cpu0 = h.cpu_seconds();
    let t = h.pipeline(
        n,
        512,
        |i| json!({"jsonrpc":"2.0","id":i,"method":"device.observe"}),
    );
    let cpu = h.cpu_seconds() - cpu0;
    println!(
        "device.observe (screenshot captured, durable): {n} in {:.3}s = {:.0} obs/s; host CPU {:.1} us/observe",
        t.as_secs_f64(),
        n as f64 / t.as_secs_f64(),
        cpu * 1e6 / n as f64
    );
    println!(
        "  peak RSS after observe: {:.1} MB ({} threads)",
        h.peak_rss_mb(),
        h.threads()
    );

    let target = 100_000 / scale;
    let remaining = target.saturating_sub(n + 1);
    let t = h.pipeline(
        remaining,
        512,
        |i| json!({"jsonrpc":"2.0","id":format!("r{i}"),"method":"device.observe"}),
    );
    println!(
        "recorded {} events in total ({remaining} more in {:.1}s); peak RSS {:.1} MB",
        target,
        t.as_secs_f64(),
        h.peak_rss_mb()
    );
    drop(h.stdin);
    let _ = h.child.wait();
}
