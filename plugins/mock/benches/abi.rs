//! ABI overhead of one `execute` round trip with small JSON: the mock's
//! `scroll` and `tap` through the loaded release cdylib (`LoadedPlugin` as
//! a `Driver`, i.e. JSON text and `abi_stable` types across the boundary)
//! against a direct call on `MockDriver` (the same crate as an rlib).
//!
//! `no-JSON call` is the floor under every call: an idle `disconnect`
//! crosses the boundary without any JSON. The `abi parts now` group times,
//! in isolation, the work the boundary adds per `execute`, mirroring
//! `loader::LoadedPlugin::execute` and the export adapter: encoding the
//! `ActionCall` (host), building the FFI context (host) and converting it
//! back (plugin), decoding the call (plugin), encoding the result wire JSON
//! (plugin) and decoding it (host). `abi parts proposed` times the same
//! steps with binary ids, a borrowed request id and separate JSON texts for
//! the arguments and the output.
//!
//! The `observe` group states the driver's own share of an observation
//! (screenshot + UI tree): direct, and through the loaded library as a
//! worker and as an inline host call it.
//!
//! ```text
//! cargo bench -p devicerail-host-plugin-mock --bench abi
//! ```

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Bencher, Criterion, criterion_main};
use devicerail_host_plugin_api::driver::ObserveRequest;
use devicerail_host_plugin_api::ffi::FfiCallContext;
use devicerail_host_plugin_api::protocol::{ActionCall, CallId, DeviceId, ObservationId};
use devicerail_host_plugin_api::{CallContext, Driver};
use devicerail_host_testing::load_workspace_plugin;
use devicerail_plugin_mock::MockDriver;
use serde_json::{Value, json};

use devicerail_host_testing::call;

/// The calls under test. The tap point hits no element, so repeated taps
/// leave the mock's state alone; scrolling back and forth keeps it bounded.
fn calls() -> [(&'static str, ActionCall); 2] {
    [
        (
            "scroll",
            call("scroll", json!({ "deltaX": 0, "deltaY": 1 })),
        ),
        ("tap", call("tap", json!({ "x": 5, "y": 5 }))),
    ]
}

fn round_trips(c: &mut Criterion) {
    let loaded = load_workspace_plugin("devicerail-host-plugin-mock", "mock");
    let direct = MockDriver::with_faults(false);
    let device = DeviceId::new("mock-1");
    let ctx = CallContext::unbounded();
    let with_deadline =
        CallContext::new(Some(std::time::Instant::now() + Duration::from_secs(3600)));
    loaded.connect(&ctx, &device).expect("connect loaded");
    direct.connect(&ctx, &device).expect("connect direct");

    let mut group = c.benchmark_group("execute");
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    for (name, call) in calls() {
        group.bench_function(format!("{name}/direct"), |b| {
            b.iter(|| {
                direct
                    .execute(black_box(&ctx), &device, black_box(&call))
                    .expect("direct call")
            })
        });
        group.bench_function(format!("{name}/loaded"), |b| {
            b.iter(|| {
                loaded
                    .execute(black_box(&ctx), &device, black_box(&call))
                    .expect("loaded call")
            })
        });
    }
    let (_, scroll) = &calls()[0];
    group.bench_function("scroll/loaded-with-deadline", |b| {
        b.iter(|| {
            loaded
                .execute(black_box(&with_deadline), &device, black_box(scroll))
                .expect("loaded call")
        })
    });
    group.finish();

    // A call without JSON: disconnecting a device that is not connected
    // (a no-op). Through the boundary it still pays the context conversion,
    // the dispatch through the sabi_trait vtable, catch_unwind and the
    // plugin-side DeviceId allocation: the floor under every call.
    let idle_loaded = load_workspace_plugin("devicerail-host-plugin-mock", "mock");
    let idle_direct = MockDriver::with_faults(false);
    let mut group = c.benchmark_group("no-JSON call (idle disconnect)");
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    group.bench_function("direct", |b| {
        b.iter(|| {
            idle_direct
                .disconnect(black_box(&ctx), &device)
                .expect("disconnect")
        })
    });
    group.bench_function("loaded", |b| {
        b.iter(|| {
            idle_loaded
                .disconnect(black_box(&ctx), &device)
                .expect("disconnect")
        })
    });
    group.finish();

    // The overhead itself, measured paired: blocks of loaded and direct
    // calls alternate and only the difference is reported, so load on a
    // shared machine hits both sides alike.
    let mut group = c.benchmark_group("abi overhead per call (paired)");
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    for (name, call) in calls() {
        group.bench_function(format!("execute {name}"), |b| {
            paired(
                b,
                || {
                    direct
                        .execute(black_box(&ctx), &device, black_box(&call))
                        .expect("direct call");
                },
                || {
                    loaded
                        .execute(black_box(&ctx), &device, black_box(&call))
                        .expect("loaded call");
                },
            )
        });
    }
    group.bench_function("idle disconnect (no JSON)", |b| {
        paired(
            b,
            || {
                idle_direct
                    .disconnect(black_box(&ctx), &device)
                    .expect("disconnect");
            },
            || {
                idle_loaded
                    .disconnect(black_box(&ctx), &device)
                    .expect("disconnect");
            },
        )
    });
    group.finish();
}

/// Times `loaded` minus `direct`: blocks of calls alternate, and each
/// sample reports the median per-call difference over its blocks (robust
/// to a block being preempted), times the iteration count.
fn paired(b: &mut Bencher<'_>, mut direct: impl FnMut(), mut loaded: impl FnMut()) {
    const BLOCK: u64 = 32;
    b.iter_custom(|iters| {
        let mut per_call_ns: Vec<f64> = Vec::with_capacity((iters / BLOCK + 1) as usize);
        let mut done = 0;
        while done < iters {
            let n = BLOCK.min(iters - done);
            let start = Instant::now();
            for _ in 0..n {
                loaded();
            }
            let l = start.elapsed();
            let start = Instant::now();
            for _ in 0..n {
                direct();
            }
            let d = start.elapsed();
            per_call_ns.push((l.as_secs_f64() - d.as_secs_f64()) * 1e9 / n as f64);
            done += n;
        }
        per_call_ns.sort_by(f64::total_cmp);
        let median = per_call_ns[per_call_ns.len() / 2];
        // A negative median would mean the boundary is free; report the
        // smallest measurable time instead of an impossible zero.
        Duration::from_secs_f64((median.max(0.001) * iters as f64) / 1e9)
    });
}

fn abi_parts(c: &mut Criterion) {
    let (_, scroll) = &calls()[0];
    let ctx = CallContext::unbounded();
    let arguments_json = serde_json::to_string(&scroll.arguments).expect("encode");
    let output = json!({ "accepted": true, "deltaX": 0, "scrollY": 1 });
    let output_json = serde_json::to_string(&output).expect("encode");
    let ffi_ctx = FfiCallContext {
        budget_ns: u64::MAX,
        cancelled: ctx.cancel_flag().clone(),
        observation_id: (*ctx.observation_id().as_uuid()).into(),
        request_id: ctx.request_id().into(),
    };

    // What the boundary does per execute call: ids as two u64s, only the
    // arguments and the output cross as JSON text.
    let mut group = c.benchmark_group("abi parts (scroll)");
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2));
    group.bench_function("host: encode arguments", |b| {
        b.iter(|| serde_json::to_string(black_box(&scroll.arguments)).expect("encode"))
    });
    group.bench_function("host: build FfiCallContext", |b| {
        b.iter(|| {
            let ctx = black_box(&ctx);
            FfiCallContext {
                budget_ns: u64::MAX,
                cancelled: ctx.cancel_flag().clone(),
                observation_id: (*ctx.observation_id().as_uuid()).into(),
                request_id: ctx.request_id().into(),
            }
        })
    });
    group.bench_function("plugin: CallContext from FFI", |b| {
        b.iter(|| {
            let f = black_box(&ffi_ctx);
            CallContext::from_parts(
                None,
                f.cancelled.clone(),
                ObservationId(f.observation_id.into()),
                f.request_id.to_string(),
            )
        })
    });
    group.bench_function("plugin: decode arguments", |b| {
        b.iter(|| {
            let arguments: Value =
                serde_json::from_str(black_box(&arguments_json)).expect("decode");
            ActionCall::new(
                CallId::from(uuid::Uuid::from_u128(black_box(7))),
                black_box("scroll"),
                arguments,
            )
        })
    });
    group.bench_function("plugin: encode output", |b| {
        b.iter(|| serde_json::to_string(black_box(&output)).expect("encode"))
    });
    group.bench_function("host: decode output", |b| {
        b.iter(|| serde_json::from_str::<Value>(black_box(&output_json)).expect("decode"))
    });
    group.finish();
}

/// The driver's own share of one observation (screenshot + UI tree, the
/// serve bench's workload): `MockDriver::observe` called directly, and
/// through the loaded `cdylib` as a plugin's worker calls it
/// (`observe_encoded`: the plugin's encoding of the tree as JSON and the
/// boundary, nothing decoded) and as an inline plugin's host does
/// (`observe`: decoded against the protocol's types).
fn observe(c: &mut Criterion) {
    let loaded = load_workspace_plugin("devicerail-host-plugin-mock", "mock");
    let direct = MockDriver::with_faults(false);
    let device = DeviceId::new("mock-1");
    let ctx = CallContext::unbounded();
    loaded.connect(&ctx, &device).expect("connect loaded");
    direct.connect(&ctx, &device).expect("connect direct");
    let request = ObserveRequest {
        screenshot: true,
        ui_tree: true,
        live: None,
    };
    let mut group = c.benchmark_group("observe");
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    group.bench_function("direct", |b| {
        b.iter(|| {
            direct
                .observe(black_box(&ctx), &device, &request)
                .expect("direct")
        })
    });
    group.bench_function("loaded, encoded (a worker)", |b| {
        b.iter(|| {
            loaded
                .observe_encoded(black_box(&ctx), &device, &request)
                .expect("encoded")
        })
    });
    group.bench_function("loaded, decoded (inline)", |b| {
        b.iter(|| {
            loaded
                .observe(black_box(&ctx), &device, &request)
                .expect("decoded")
        })
    });
    group.finish();
}

// criterion_group! generates a `pub fn benches` that cannot carry a doc
// comment, and rustc ignores `#[allow]` on a macro call, so the generated
// function lives in a module of its own with the lint allowed there only.
#[allow(missing_docs)]
mod group {
    criterion::criterion_group!(
        benches,
        super::round_trips,
        super::abi_parts,
        super::observe
    );
}
criterion_main!(group::benches);
