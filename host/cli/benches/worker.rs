//! What process isolation adds to a driver call: the same calls on the
//! same release cdylibs loaded in process (`inline`, `LoadedPlugin`) and
//! served by a worker process (`process`, `RemoteDriver`): an idle
//! `disconnect` and `execute tap` on the mock, and, in the form the host
//! stores observations (`Backend::observe`: the UI tree encoded as snapshot
//! bytes where the driver runs), an `observe` with
//! screenshot and UI tree on the mock (its login screen, and its home
//! screen with 1,000 feed rows), and an `observe` returning a 1080×2400 PNG
//! from the hostile test plugin (its `screen` setting). Each row also
//! prints the CPU per call of this process plus the worker. Also the time a
//! crashed worker takes to answer again (first back-off step included).
//!
//! ```text
//! cargo bench -p devicerail-host --bench worker
//! ```

use std::cell::Cell;
use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_main};
use devicerail_host_engine::registry::Backend;
use devicerail_host_engine::worker::{Backoff, RemoteDriver, WorkerSpec};
use devicerail_host_plugin_api::driver::ObserveRequest;
use devicerail_host_plugin_api::loader;
use devicerail_host_plugin_api::protocol::DeviceId;
use devicerail_host_plugin_api::{CallContext, Driver};
use devicerail_host_testing::{build_workspace_plugin, call};
use serde_json::{Map, Value, json};

fn settings(pairs: &[(&str, &str)]) -> Map<String, Value> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), Value::String((*v).to_owned())))
        .collect()
}

fn inline(file: &Path, settings: &Map<String, Value>) -> Backend {
    Backend::Inline(Arc::new(
        loader::load(file, settings).expect("load in process"),
    ))
}

fn process(file: &Path, id: &str, settings: &Map<String, Value>) -> Arc<RemoteDriver> {
    Arc::new(
        RemoteDriver::start(WorkerSpec {
            exe: env!("CARGO_BIN_EXE_devicerail").into(),
            plugin_file: file.to_path_buf(),
            plugin_id: id.to_owned(),
            settings: settings.clone(),
            env: Vec::new(),
            log_filter: "warn".into(),
            backoff: Backoff::default(),
            grace: Duration::from_secs(2),
            runtime: None,
        })
        .expect("start the worker"),
    )
}

fn ticks_per_second() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 { t as f64 } else { 100.0 }
}

/// CPU seconds (user + system, every thread) of process `pid`.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    let utime: f64 = fields.get(11).and_then(|s| s.parse().ok()).unwrap_or(0.0);
    let stime: f64 = fields.get(12).and_then(|s| s.parse().ok()).unwrap_or(0.0);
    (utime + stime) / ticks_per_second()
}

/// CPU of this process plus `worker` (if any), summed over the measured
/// iterations of one row.
#[derive(Default)]
struct CpuMeter {
    seconds: Cell<f64>,
    iterations: Cell<u64>,
}

impl CpuMeter {
    /// Runs `iters` calls of `f`, timing them and counting their CPU.
    fn measure(&self, worker: Option<u32>, iters: u64, mut f: impl FnMut()) -> Duration {
        let cpu = || cpu_seconds(std::process::id()) + worker.map_or(0.0, cpu_seconds);
        let c0 = cpu();
        let t = Instant::now();
        for _ in 0..iters {
            f();
        }
        let elapsed = t.elapsed();
        self.seconds.set(self.seconds.get() + cpu() - c0);
        self.iterations.set(self.iterations.get() + iters);
        elapsed
    }

    fn report(&self, row: &str) {
        let n = self.iterations.get().max(1);
        println!(
            "worker bench: {row}: {:.1} us CPU per call (this process + worker, {n} calls)",
            self.seconds.get() * 1e6 / n as f64
        );
    }
}

/// One bench row with its CPU per call.
fn row(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    worker: Option<u32>,
    mut f: impl FnMut(),
) {
    let meter = CpuMeter::default();
    group.bench_function(name, |b| {
        b.iter_custom(|iters| meter.measure(worker, iters, &mut f))
    });
    meter.report(name);
}

/// Signs in on the mock's login screen (its home screen has the feed).
fn sign_in(d: &dyn Driver, ctx: &CallContext, device: &DeviceId) {
    for (name, args) in [
        ("tap", json!({"x": 100, "y": 300})),
        ("inputText", json!({"text": "ada"})),
        ("tap", json!({"x": 100, "y": 440})),
        ("inputText", json!({"text": "pw"})),
        ("tap", json!({"x": 100, "y": 600})),
    ] {
        d.execute(ctx, device, &call(name, args)).expect("sign in");
    }
}

fn calls(c: &mut Criterion) {
    let mock = build_workspace_plugin("devicerail-host-plugin-mock", "mock");
    let hostile = build_workspace_plugin("devicerail-host-test-plugin-hostile", "test-hostile");
    let screen = settings(&[("screen", "1080x2400")]);
    let none = Map::new();
    let mock_device = DeviceId::new("mock-1");
    let hostile_device = DeviceId::new("hostile-1");
    let ctx = CallContext::new(Some(Instant::now() + Duration::from_secs(3600)));
    let tap = call("tap", json!({ "x": 5, "y": 5 }));
    let shot = ObserveRequest {
        screenshot: true,
        ui_tree: false,
        live: None,
    };
    let both = ObserveRequest {
        screenshot: true,
        ui_tree: true,
        live: None,
    };
    let feed = {
        let mut m = Map::new();
        m.insert("feedRows".into(), json!(1000));
        m
    };
    let remote_mock = process(&mock, "mock", &none);
    let remote_feed = process(&mock, "mock", &feed);
    let remote_screen = process(&hostile, "test-hostile", &screen);
    let worker = |r: &Arc<RemoteDriver>| (Backend::Worker(r.clone()), r.worker_pid());
    let mocks: [(&str, (Backend, Option<u32>)); 2] = [
        ("inline", (inline(&mock, &none), None)),
        ("process", worker(&remote_mock)),
    ];
    let feeds: [(&str, (Backend, Option<u32>)); 2] = [
        ("inline", (inline(&mock, &feed), None)),
        ("process", worker(&remote_feed)),
    ];
    let screens: [(&str, (Backend, Option<u32>)); 2] = [
        ("inline", (inline(&hostile, &screen), None)),
        ("process", worker(&remote_screen)),
    ];
    let png_bytes = screens[0]
        .1
        .0
        .observe(&ctx, &hostile_device, &shot)
        .expect("observe")
        .png
        .map_or(0, |p| p.len());
    println!("worker bench: the 1080x2400 PNG is {png_bytes} bytes");
    let mut group = c.benchmark_group("worker");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    // The floor under any worker call on this machine: one byte there and
    // back over a socketpair to another thread (two wake-ups).
    {
        use std::io::{Read, Write};
        let (mut here, mut there) = std::os::unix::net::UnixStream::pair().expect("pair");
        std::thread::spawn(move || {
            let mut b = [0u8; 1];
            while there.read_exact(&mut b).is_ok() {
                if there.write_all(&b).is_err() {
                    return;
                }
            }
        });
        group.bench_function("socketpair round trip (floor)", |b| {
            let mut byte = [7u8; 1];
            b.iter(|| {
                here.write_all(&byte).expect("write");
                here.read_exact(&mut byte).expect("read");
            })
        });
    }
    for (mode, (b, worker)) in &mocks {
        let d = b.driver();
        d.connect(&ctx, &mock_device).expect("connect");
        row(&mut group, &format!("disconnect/{mode}"), *worker, || {
            d.disconnect(black_box(&ctx), &mock_device)
                .expect("disconnect")
        });
        d.connect(&ctx, &mock_device).expect("connect");
        row(&mut group, &format!("execute tap/{mode}"), *worker, || {
            black_box(
                d.execute(black_box(&ctx), &mock_device, black_box(&tap))
                    .expect("tap"),
            );
        });
        row(
            &mut group,
            &format!("observe screenshot + UI (mock)/{mode}"),
            *worker,
            || {
                black_box(
                    b.observe(black_box(&ctx), &mock_device, &both)
                        .expect("observe"),
                );
            },
        );
    }
    for (mode, (b, worker)) in &feeds {
        let d = b.driver();
        d.connect(&ctx, &mock_device).expect("connect");
        sign_in(d.as_ref(), &ctx, &mock_device);
        let nodes = b
            .observe(&ctx, &mock_device, &both)
            .expect("observe")
            .ui
            .and_then(Result::ok)
            .map_or(0, |t| t.node_count);
        println!("worker bench: the mock's home screen with its feed has {nodes} nodes");
        row(
            &mut group,
            &format!("observe 1,000-node tree (mock)/{mode}"),
            *worker,
            || {
                black_box(
                    b.observe(black_box(&ctx), &mock_device, &both)
                        .expect("observe"),
                );
            },
        );
    }
    for (mode, (b, worker)) in &screens {
        row(
            &mut group,
            &format!("observe 1080x2400 png/{mode}"),
            *worker,
            || {
                black_box(
                    b.observe(black_box(&ctx), &hostile_device, &shot)
                        .expect("observe"),
                );
            },
        );
    }
    group.finish();

    // Restart: a worker that aborts answers again after reap, report, the
    // first back-off step (100 ms) and a new handshake.
    let remote = process(&hostile, "test-hostile", &none);
    let abort = call("abort", json!({}));
    let echo = call("echo", json!({ "text": "x" }));
    for round in 0..3 {
        let t = Instant::now();
        let e = remote
            .execute(&ctx, &hostile_device, &abort)
            .expect_err("the worker crashes");
        assert_eq!(e.code_str(), "driver_crashed");
        let crashed = t.elapsed();
        while remote.execute(&ctx, &hostile_device, &echo).is_err() {
            std::thread::sleep(Duration::from_millis(1));
        }
        println!(
            "worker bench: restart {round}: crash reported after {crashed:?}, answering again after {:?}",
            t.elapsed()
        );
    }
}

/// The Criterion group `main` runs: every benchmark of this file.
pub mod group {
    // `criterion_group!` expands to a `pub fn benches()` and gives no way
    // to attach a doc comment to it; this module holds only that function.
    #![allow(missing_docs)]
    criterion::criterion_group!(benches, super::calls);
}

criterion_main!(group::benches);
