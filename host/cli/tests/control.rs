//! Request control: deadlines, cancellation, reserved ids, the in-flight
//! bound, and driver failures (errors and panics) that the host survives.
//! Deadlines, cancellation and failures go through the official Rust
//! client; reused ids and pipelining without reading stay raw (no client
//! sends them).

mod support;

use support::client::Launch as _;

use std::time::{Duration, Instant};

use devicerail_client::CallOptions;
use devicerail_client::methods::{DeviceExecute, DeviceObserve, NoParams, RpcMethod};
use devicerail_client::protocol::{RequestCancelStatus, RequestTimeoutMs};
use serde_json::{Value, json};
use support::client::{ClientHost, WAIT, action, hello, ready, remote};
use support::{Options, TestHost, error_code, rpc_code};

fn faulty_options() -> Options {
    Options {
        faults: true,
        ..Options::default()
    }
}

/// Raw: for the cases a client refuses to send (reused ids, thousands
/// pipelined without reading).
fn faulty() -> TestHost {
    let mut h = TestHost::with(faulty_options());
    h.ready_session();
    h
}

fn send_execute(h: &mut TestHost, id: Value, params: Value) {
    h.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "device.execute", "params": params }));
}

/// Through the official client: a connected device and a Session.
async fn faulty_client() -> ClientHost {
    let h = ClientHost::start(faulty_options(), hello())
        .await
        .expect("the host starts");
    ready(&h).await;
    h
}

fn timeout(ms: u64) -> CallOptions {
    CallOptions {
        timeout_ms: RequestTimeoutMs::new(ms),
    }
}

fn with_action_timeout(mut call: Value, ms: u64) -> Value {
    call["actionTimeoutMs"] = json!(ms);
    call
}

async fn last_outcome(h: &ClientHost) -> Value {
    let events = h.ok("events.list", Some(json!({}))).await;
    let completed = events
        .as_array()
        .expect("events")
        .iter()
        .rev()
        .find(|e| e["payload"]["type"] == "actionCompleted")
        .cloned();
    completed.expect("actionCompleted")["payload"]["outcome"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_timeout_records_a_timed_out_action() {
    let h = faulty_client().await;
    let started = Instant::now();
    let r = h
        .call_json(
            "device.execute",
            Some(action("sleep", json!({ "ms": 10_000 }))),
            timeout(200),
        )
        .await;
    assert_eq!(error_code(&r).as_deref(), Some("request_timed_out"), "{r}");
    assert_eq!(rpc_code(&r), -32008);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the deadline must interrupt the driver"
    );
    let outcome = last_outcome(&h).await;
    assert_eq!(outcome["outcome"], "timedOut");
    assert_eq!(outcome["timeoutMs"], 200);
    assert_eq!(outcome["error"]["code"], "action_timeout");
    assert_eq!(outcome["error"]["retryable"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_earlier_deadline_wins() {
    let h = faulty_client().await;
    let p = with_action_timeout(action("sleep", json!({ "ms": 10_000 })), 150);
    let r = h.call_json("device.execute", Some(p), timeout(5_000)).await;
    assert_eq!(error_code(&r).as_deref(), Some("action_timed_out"), "{r}");
    assert_eq!(last_outcome(&h).await["timeoutMs"], 150);
    let p = with_action_timeout(action("sleep", json!({ "ms": 10_000 })), 5_000);
    let r = h.call_json("device.execute", Some(p), timeout(150)).await;
    assert_eq!(error_code(&r).as_deref(), Some("request_timed_out"), "{r}");
    assert_eq!(last_outcome(&h).await["timeoutMs"], 150);
    // Within budget: success.
    let p = with_action_timeout(action("sleep", json!({ "ms": 10 })), 5_000);
    let r = h.call_json("device.execute", Some(p), timeout(5_000)).await;
    assert!(r.get("result").is_some(), "{r}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellation_reaches_the_driver_and_is_recorded() {
    let h = faulty_client().await;
    let params: <DeviceExecute as RpcMethod>::Params =
        serde_json::from_value(action("sleep", json!({ "ms": 30_000 }))).expect("params");
    let victim = h
        .client
        .begin_call::<DeviceExecute>(params, CallOptions::default())
        .expect("begin");
    let victim_id = victim.id().clone();
    tokio::time::sleep(Duration::from_millis(150)).await;
    let started = Instant::now();
    let c = victim.cancel_remote().await.expect("request.cancel");
    assert_eq!(c.status, RequestCancelStatus::Requested, "{c:?}");
    let again = h.client.cancel(victim_id.clone()).await.expect("again");
    assert!(
        matches!(
            again.status,
            RequestCancelStatus::AlreadyRequested | RequestCancelStatus::NotFound
        ),
        "{again:?}"
    );
    let e = remote(
        tokio::time::timeout(WAIT, victim.result())
            .await
            .expect("in time"),
    );
    assert_eq!(e.data.code, "request_cancelled", "{e:?}");
    assert_eq!(e.code, -32007);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "the driver saw the cancellation flag"
    );
    let outcome = last_outcome(&h).await;
    assert_eq!(outcome["outcome"], "cancelled");
    assert_eq!(outcome["error"]["code"], "action_cancelled");
    let gone = h.client.cancel(victim_id).await.expect("once more");
    assert_eq!(gone.status, RequestCancelStatus::NotFound);
    assert_eq!(
        h.ok("request.cancel", Some(json!({ "requestId": 424242 })))
            .await["status"],
        "notFound"
    );
    // The session can end now that nothing is in flight.
    assert_eq!(h.ok("session.end", Some(json!({}))).await["state"], "ended");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn observe_honours_its_deadline_and_cancellation_targets_only_device_work() {
    let h = faulty_client().await;
    let observe = h
        .client
        .begin_call::<DeviceObserve>(NoParams, timeout(30_000))
        .expect("begin");
    let id = observe.id().clone();
    tokio::time::timeout(WAIT, observe.result())
        .await
        .expect("in time")
        .expect("observed");
    let r = h.client.cancel(id).await.expect("request.cancel");
    assert_eq!(r.status, RequestCancelStatus::NotFound);
}

#[test]
fn reserved_ids_are_refused() {
    let mut h = faulty();
    send_execute(
        &mut h,
        json!(7),
        TestHost::action("sleep", json!({ "ms": 500 })),
    );
    send_execute(
        &mut h,
        json!(7),
        TestHost::action("tap", json!({ "x": 1, "y": 1 })),
    );
    let first = h.recv();
    assert_eq!(
        error_code(&first).as_deref(),
        Some("request_id_in_use"),
        "{first}"
    );
    assert_eq!(rpc_code(&first), -32009);
    h.send(&json!({ "jsonrpc": "2.0", "id": 7, "method": "devices.list" }));
    let dup = h.recv();
    assert_eq!(
        error_code(&dup).as_deref(),
        Some("request_id_in_use"),
        "control methods check reserved ids too"
    );
    let done = h.recv();
    assert!(done.get("result").is_some(), "{done}");
    // Released once answered.
    h.send(&json!({ "jsonrpc": "2.0", "id": 7, "method": "devices.list" }));
    assert!(h.recv().get("result").is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn driver_failures_and_panics_are_contained() {
    let h = faulty_client().await;
    let r = h
        .answer("device.execute", Some(action("failAction", json!({}))))
        .await;
    assert_eq!(error_code(&r).as_deref(), Some("platform_error"));
    assert_eq!(
        r["error"]["data"]["details"]["platformCode"],
        "action_failed"
    );
    assert_eq!(rpc_code(&r), -32000);
    assert_eq!(last_outcome(&h).await["outcome"], "failed");
    for _ in 0..3 {
        let r = h
            .answer("device.execute", Some(action("panic", json!({}))))
            .await;
        // A contained panic is the driver's internal error (-32000, retryable).
        assert_eq!(error_code(&r).as_deref(), Some("internal_error"), "{r}");
        assert_eq!(rpc_code(&r), -32000);
        assert_eq!(r["error"]["data"]["retryable"], true);
        assert_eq!(r["error"]["data"]["details"]["cause"], "driverPanicked");
        let outcome = last_outcome(&h).await;
        assert_eq!(outcome["outcome"], "failed");
        assert_eq!(outcome["error"]["code"], "internal_error");
    }
    // The device and the host still work.
    assert!(h.ok("device.observe", None).await["screenshot"].is_object());
    assert!(
        h.ok(
            "device.execute",
            Some(action("tap", json!({ "x": 10, "y": 10 })))
        )
        .await
        .is_object()
    );
}

#[test]
fn ten_thousand_pipelined_requests_without_reading() {
    let mut h = faulty();
    // Write everything before reading anything: the host must apply
    // backpressure, answer too_many_requests past its bound, and survive.
    let total = 10_000;
    let mut batch = Vec::with_capacity(total * 160);
    for i in 0..total {
        let msg = json!({ "jsonrpc": "2.0", "id": format!("p{i}"), "method": "device.execute",
            "params": TestHost::action("sleep", json!({ "ms": 100 })) });
        batch.extend(serde_json::to_vec(&msg).expect("encode"));
        batch.push(b'\n');
    }
    // Write from a thread so this test can read concurrently afterwards.
    let bytes = batch;
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let mut pipe = h.take_stdin_pipe();
    let t = std::thread::spawn(move || {
        use std::io::Write;
        let r = pipe.write_all(&bytes).and_then(|_| pipe.flush());
        let _ = done_tx.send(());
        (r, pipe)
    });
    // Give the host time to fill its queues without anyone reading.
    std::thread::sleep(Duration::from_millis(1500));
    let mut ok = 0;
    let mut busy = 0;
    for _ in 0..total {
        let r = h.recv();
        match error_code(&r).as_deref() {
            None => ok += 1,
            Some("too_many_requests") => {
                assert_eq!(rpc_code(&r), -32010);
                busy += 1
            }
            Some(other) => panic!("unexpected error {other}: {r}"),
        }
    }
    let _ = done_rx.recv_timeout(Duration::from_secs(60));
    let (result, pipe) = t.join().expect("writer thread");
    result.expect("all requests written");
    h.put_stdin_pipe(pipe);
    assert_eq!(ok + busy, total);
    assert!(busy > 0, "the in-flight bound must have been reached");
    assert!(ok >= 1024, "at least the bound's worth succeeded ({ok})");
    println!("pipelined: {ok} succeeded, {busy} too_many_requests");
    assert!(h.ok("devices.list", None)["devices"].is_array());
}

/// The protocol frees a request's id once its response has entered the
/// output queue, so a client that reads a response and reuses its id at
/// once (a fixed id per call site is common) is never refused.
#[test]
fn an_id_is_free_again_as_soon_as_its_response_is_read() {
    let mut h = TestHost::start();
    h.ready_session();
    for i in 0..600 {
        let msg = match i % 3 {
            0 => json!({"jsonrpc":"2.0","id":"same","method":"device.observe"}),
            1 => json!({"jsonrpc":"2.0","id":"same","method":"device.capabilities"}),
            _ => json!({"jsonrpc":"2.0","id":"same","method":"device.execute",
                "params": TestHost::action("scroll", json!({"deltaX": 0, "deltaY": 10}))}),
        };
        h.send(&msg);
        let r = h.recv();
        assert_eq!(r["id"], "same");
        assert!(r.get("result").is_some(), "call {i} refused: {r}");
    }
}
