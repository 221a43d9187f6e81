//! What process isolation adds to a driver call: the same calls on the
//! same release cdylibs loaded in process (`inline`, `LoadedPlugin`) and
//! served by a worker process (`process`, `RemoteDriver` over the
//! socketpair): an idle `disconnect` and `execute tap` on the mock, and an
//! `observe` returning a 1080×2400 PNG from the hostile test plugin (its
//! `screen` setting). Also the time a crashed worker takes to answer again
//! (first back-off step included).
//!
//! ```text
//! cargo bench -p devicerail-host --bench worker
//! ```

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_main};
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

fn inline(file: &Path, settings: &Map<String, Value>) -> Arc<dyn Driver> {
    Arc::new(loader::load(file, settings).expect("load in process"))
}

fn process(file: &Path, id: &str, settings: &Map<String, Value>) -> Arc<RemoteDriver> {
    Arc::new(
        RemoteDriver::start(WorkerSpec {
            exe: env!("CARGO_BIN_EXE_devicerail").into(),
            plugin_file: file.to_path_buf(),
            plugin_id: id.to_owned(),
            settings: settings.clone(),
            log_filter: "warn".into(),
            backoff: Backoff::default(),
            grace: Duration::from_secs(2),
        })
        .expect("start the worker"),
    )
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
    };
    let mocks: [(&str, Arc<dyn Driver>); 2] = [
        ("inline", inline(&mock, &none)),
        ("process", process(&mock, "mock", &none)),
    ];
    let screens: [(&str, Arc<dyn Driver>); 2] = [
        ("inline", inline(&hostile, &screen)),
        ("process", process(&hostile, "test-hostile", &screen)),
    ];
    let png_bytes = screens[0]
        .1
        .observe(&ctx, &hostile_device, &shot)
        .expect("observe")
        .png
        .map_or(0, |p| p.len());
    println!("worker bench: the 1080x2400 PNG is {png_bytes} bytes");
    let mut group = c.benchmark_group("worker");
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
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
    for (mode, d) in &mocks {
        d.connect(&ctx, &mock_device).expect("connect");
        group.bench_function(format!("disconnect/{mode}"), |b| {
            b.iter(|| {
                d.disconnect(black_box(&ctx), &mock_device)
                    .expect("disconnect")
            })
        });
        d.connect(&ctx, &mock_device).expect("connect");
        group.bench_function(format!("execute tap/{mode}"), |b| {
            b.iter(|| {
                d.execute(black_box(&ctx), &mock_device, black_box(&tap))
                    .expect("tap")
            })
        });
    }
    for (mode, d) in &screens {
        group.bench_function(format!("observe 1080x2400 png/{mode}"), |b| {
            b.iter(|| {
                d.observe(black_box(&ctx), &hostile_device, &shot)
                    .expect("observe")
            })
        });
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
