//! Observe latency against the fakes, split into its parts: screenshot
//! (WDA `GET /screenshot` vs `simctl io screenshot`), source (`GET
//! /source?format=json` fetched and parsed), normalization, and whole
//! observations — for the small login screen and a 500-row table.
//!
//! `cargo bench -p devicerail-host-plugin-ios-simulator --bench observe`

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_main};
use devicerail_host_plugin_api::protocol::DeviceId;
use devicerail_host_plugin_api::{CallContext, Driver, ObserveRequest};
use devicerail_ios_simulator_fakes::sim_state::SE_UDID;
use devicerail_ios_simulator_fakes::{FakeSimulators, FakeWda, FakeWdaOptions};
use devicerail_plugin_ios_simulator::normalize::normalize;
use devicerail_plugin_ios_simulator::{Config, IosSimulatorDriver, ScreenshotSource};

struct Setup {
    _sims: FakeSimulators,
    _wda: FakeWda,
    driver: IosSimulatorDriver,
    nodes: usize,
}

fn setup(extra_rows: usize) -> Setup {
    let sims = FakeSimulators::new().expect("fake simulators");
    let wda = sims
        .wda(
            SE_UDID,
            FakeWdaOptions {
                extra_rows,
                ..Default::default()
            },
        )
        .expect("fake WDA");
    let driver = IosSimulatorDriver::with_config(Config {
        xcrun: sims.xcrun().to_path_buf(),
        xcrun_explicit: true,
        wda_url: wda.url(),
        ..Config::default()
    });
    let ctx = CallContext::unbounded();
    driver
        .connect(&ctx, &DeviceId::new(SE_UDID))
        .expect("connects");
    let conn = driver
        .connected(&DeviceId::new(SE_UDID))
        .expect("connected");
    let nodes = normalize(&conn.wda.source(&ctx).expect("source"), conn.scale)
        .nodes
        .len();
    Setup {
        _sims: sims,
        _wda: wda,
        driver,
        nodes,
    }
}

fn observe(c: &mut Criterion) {
    let device = DeviceId::new(SE_UDID);
    let ctx = CallContext::unbounded();
    let small = setup(0);
    let large = setup(500);
    eprintln!(
        "tree sizes: login {} nodes, login + 500 rows {} nodes",
        small.nodes, large.nodes
    );

    let mut g = c.benchmark_group("screenshot");
    let conn = small.driver.connected(&device).expect("connected");
    for source in [ScreenshotSource::Wda, ScreenshotSource::Simctl] {
        g.bench_function(source.as_str(), |b| {
            b.iter(|| {
                small
                    .driver
                    .screenshot_from(&ctx, &conn, source)
                    .expect("a screenshot")
            })
        });
    }
    g.finish();

    for (label, s) in [("login", &small), ("rows500", &large)] {
        let conn = s.driver.connected(&device).expect("connected");
        let mut g = c.benchmark_group(format!("tree/{label}"));
        g.bench_function("source", |b| {
            b.iter(|| conn.wda.source(&ctx).expect("source"))
        });
        let root = conn.wda.source(&ctx).expect("source");
        g.bench_function("normalize", |b| b.iter(|| normalize(&root, conn.scale)));
        g.bench_function("ui_tree", |b| {
            b.iter(|| s.driver.ui_tree(&ctx, &conn).expect("tree"))
        });
        g.finish();
    }

    let mut g = c.benchmark_group("observe");
    for (label, s) in [("login", &small), ("rows500", &large)] {
        for (what, request) in [
            (
                "viewport",
                ObserveRequest {
                    screenshot: false,
                    ui_tree: false,
                    live: None,
                },
            ),
            (
                "tree",
                ObserveRequest {
                    screenshot: false,
                    ui_tree: true,
                    live: None,
                },
            ),
            (
                "screenshot+tree",
                ObserveRequest {
                    screenshot: true,
                    ui_tree: true,
                    live: None,
                },
            ),
        ] {
            g.bench_with_input(BenchmarkId::new(what, label), &request, |b, r| {
                b.iter(|| s.driver.observe(&ctx, &device, r).expect("observes"))
            });
        }
    }
    g.finish();
}

// criterion_group! generates a `pub fn benches` that cannot carry a doc
// comment, and rustc ignores `#[allow]` on a macro call, so the generated
// function lives in a module of its own with the lint allowed there only.
#[allow(missing_docs)]
mod group {
    use super::*;

    criterion::criterion_group! {
        name = benches;
        config = Criterion::default()
            .sample_size(30)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2));
        targets = observe
    }
}
criterion_main!(group::benches);
