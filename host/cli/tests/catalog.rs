//! A whole Session through the official Rust client, provoking on the way
//! every error the reference catalog names for each step (hello → select →
//! connect → session → observe → execute → event stream resume → media →
//! export), each checked by `data.code`, numeric code and `retryable`.
//! Requests the client refuses to send (malformed frames, calls before
//! hello, features it checks itself) go over the raw pipe at the end.

mod support;

use support::client::Launch as _;

use devicerail_client::methods::{
    DeviceCapabilities, DeviceConnect, DeviceExecute, DeviceObserve, DeviceSelect, DevicesList,
    EventsClear, EventsList, MediaStreamCapture, MediaStreamEnd, MediaStreamStart, SessionCurrent,
    SessionEnd, SessionExport, SessionStart, UiSnapshotGet, VerdictRecord,
};
use devicerail_client::protocol::{
    EventStreamCursor, EventStreamEpoch, EventsSubscribeParams, RequestTimeoutMs,
};
use devicerail_client::{CallOptions, EventStreamError, EventStreamOptions};
use serde_json::{Value, json};
use support::client::{ClientHost, action, expect_error, hello, hello_with};
use support::{Options, TestHost, error_code};

fn faulty_pair() -> Options {
    Options {
        devices: Some(2),
        faults: true,
        // After-Action observations without a UI tree, so the walk meets
        // `ui_snapshot_unavailable` (with the default, they record one).
        config: Some("[host]\nafterActionTree = false\n".into()),
        ..Options::default()
    }
}

fn timeout(ms: u64) -> CallOptions {
    CallOptions {
        timeout_ms: RequestTimeoutMs::new(ms),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_session_meets_every_catalog_error_on_the_way() {
    // Hello: a required feature the host lacks, a dependency left out.
    let mut h = hello();
    h.features.required.insert("no.such.feature.v1".into());
    let d = expect_error(
        ClientHost::start(faulty_pair(), h).await.map(|_| ()),
        "required_feature_unsupported",
        -32004,
        true,
    );
    assert_eq!(d["unsupportedRequired"], json!(["no.such.feature.v1"]));
    let d = expect_error(
        ClientHost::start(faulty_pair(), hello_with(&["device.semanticActions.v1"]))
            .await
            .map(|_| ()),
        "feature_dependency_unsatisfied",
        -32004,
        false,
    );
    assert_eq!(
        d,
        json!({ "feature": "device.semanticActions.v1", "requiredFeature": "observation.uiSnapshot.v1" })
    );

    let host = ClientHost::start(faulty_pair(), hello())
        .await
        .expect("hello");

    // Select: two devices, none selected.
    let d = expect_error(
        host.call0::<DeviceConnect>().await,
        "device_selection_required",
        -32011,
        true,
    );
    assert_eq!(d["deviceCount"], 2);
    assert_eq!(d["availableDeviceIds"], json!(["mock-1", "mock-2"]));
    assert_eq!(d["requiredMethod"], "device.select");
    assert_eq!(d["requiredFeature"], "device.routing.v1");
    let d = expect_error(
        host.call::<DeviceSelect>(json!({ "deviceId": "mock-9" }))
            .await,
        "device_not_found",
        -32011,
        false,
    );
    assert_eq!(d, json!({ "deviceId": "mock-9" }));
    host.call::<DeviceSelect>(json!({ "deviceId": "mock-1" }))
        .await
        .expect("select");

    // Session.
    let d = expect_error(
        host.call0::<SessionCurrent>().await,
        "session_required",
        -32005,
        true,
    );
    assert_eq!(d, json!({ "requiredMethod": "session.start" }));
    let session = host.call0::<SessionStart>().await.expect("session.start");
    let sid = serde_json::to_value(&session.id).expect("id");
    let d = expect_error(
        host.call0::<SessionStart>().await,
        "session_already_active",
        -32006,
        false,
    );
    assert_eq!(d, json!({ "sessionId": sid }));
    let d = expect_error(
        host.call::<DeviceSelect>(json!({ "deviceId": "mock-2" }))
            .await,
        "device_lease_active",
        -32014,
        false,
    );
    assert_eq!(d, json!({ "sessionId": sid }));
    let listed = host.call0::<DevicesList>().await.expect("devices.list");
    assert_eq!(
        listed.selected_device_id.map(|d| d.0),
        Some("mock-1".to_owned()),
        "the selection is kept"
    );

    // Observe before connect.
    let d = expect_error(
        host.call0::<DeviceObserve>().await,
        "device_not_connected",
        -32000,
        true,
    );
    assert_eq!(d, json!({ "deviceId": "mock-1" }));
    host.call0::<DeviceConnect>().await.expect("connect");
    let observation = host.call0::<DeviceObserve>().await.expect("observe");
    let d = expect_error(
        host.call::<UiSnapshotGet>(json!({ "observationId": uuid::Uuid::new_v4() }))
            .await,
        "ui_snapshot_not_found",
        -32017,
        false,
    );
    assert!(d["observationId"].is_string());
    host.call::<UiSnapshotGet>(json!({ "observationId": observation.id }))
        .await
        .expect("the observation's UI snapshot");

    // Execute.
    let d = expect_error(
        host.call::<DeviceExecute>(action("fly", json!({}))).await,
        "unknown_action",
        -32000,
        false,
    );
    assert_eq!(d, json!({ "action": "fly" }));
    let d = expect_error(
        host.call::<DeviceExecute>(action("tap", json!({ "x": "left" })))
            .await,
        "invalid_arguments",
        -32000,
        false,
    );
    assert_eq!(d, json!({ "action": "tap" }));
    let tap = action("tap", json!({ "x": 10, "y": 10 }));
    let tapped = host.call::<DeviceExecute>(tap.clone()).await.expect("tap");
    let d = expect_error(
        host.call::<DeviceExecute>(tap.clone()).await,
        "duplicate_action_call",
        -32006,
        false,
    );
    assert_eq!(d, json!({ "callId": tap["id"] }));
    // The after-Action observation has no UI tree (afterActionTree off).
    let after = tapped.after.expect("after observation");
    let d = expect_error(
        host.call::<UiSnapshotGet>(json!({ "observationId": after.id }))
            .await,
        "ui_snapshot_unavailable",
        -32017,
        false,
    );
    assert_eq!(d["omissionReason"], Value::Null);
    let mut sleepy = action("sleep", json!({ "ms": 5000 }));
    sleepy["actionTimeoutMs"] = json!(50);
    let d = expect_error(
        host.call::<DeviceExecute>(sleepy).await,
        "action_timed_out",
        -32008,
        true,
    );
    assert_eq!(d, json!({ "scope": "action", "timeoutMs": 50 }));
    let d = expect_error(
        host.call_with::<DeviceExecute>(action("sleep", json!({ "ms": 5000 })), timeout(60))
            .await,
        "request_timed_out",
        -32008,
        true,
    );
    assert_eq!(d, json!({ "scope": "request", "timeoutMs": 60 }));
    // Cancel a running Action; meanwhile the Session cannot end.
    let params = serde_json::from_value(action("sleep", json!({ "ms": 10000 }))).expect("params");
    let running = host
        .client
        .begin_call::<DeviceExecute>(params, CallOptions::default())
        .expect("begin");
    tokio::time::sleep(std::time::Duration::from_millis(150)).await;
    let d = expect_error(
        host.call::<SessionEnd>(Value::Null).await,
        "session_busy",
        -32006,
        true,
    );
    assert_eq!(d, json!({ "sessionId": sid, "inFlightActions": 1 }));
    host.client
        .cancel(running.id().clone())
        .await
        .expect("request.cancel");
    let d = expect_error(running.result().await, "request_cancelled", -32007, false);
    assert_eq!(d, json!({ "reason": "requested" }));
    // Semantic targets.
    expect_error(
        host.call::<DeviceExecute>(action(
            "findElement",
            json!({ "selector": { "identifier": "nope" } }),
        ))
        .await,
        "element_not_found",
        -32000,
        false,
    );
    expect_error(
        host.call::<DeviceExecute>(action(
            "findElement",
            json!({ "selector": { "role": "button" } }),
        ))
        .await,
        "element_ambiguous",
        -32000,
        false,
    );
    expect_error(
        host.call::<DeviceExecute>(action(
            "tapElement",
            json!({ "target": { "kind": "selector", "selector": { "identifier": "help" } } }),
        ))
        .await,
        "element_not_interactable",
        -32000,
        false,
    );
    let found = host
        .call::<DeviceExecute>(action(
            "findElement",
            json!({ "selector": { "identifier": "username" } }),
        ))
        .await
        .expect("findElement");
    assert!(
        found.execution.is_some(),
        "findElement reports how it was carried out"
    );
    let d = expect_error(
        host.call::<DeviceExecute>(action("failAction", json!({})))
            .await,
        "platform_error",
        -32000,
        false,
    );
    assert_eq!(d, json!({ "platformCode": "action_failed" }));
    let d = expect_error(
        host.call::<DeviceExecute>(action("panic", json!({}))).await,
        "internal_error",
        -32000,
        true,
    );
    assert_eq!(d, json!({ "cause": "driverPanicked" }));

    // Verdicts cite only this Session's Evidence, each once.
    let shot =
        serde_json::to_value(observation.screenshot.as_ref().expect("screenshot")).expect("asset");
    let mut forged = shot.clone();
    forged["id"] = json!(format!("sha256:{}", "f".repeat(64)));
    let d = expect_error(
        host.call::<VerdictRecord>(
            json!({ "verdict": { "status": "fail", "summary": "x", "evidence": [forged] } }),
        )
        .await,
        "evidence_not_reachable",
        -32602,
        false,
    );
    assert_eq!(d["digest"], forged["id"]);
    let d = expect_error(
        host.call::<VerdictRecord>(
            json!({ "verdict": { "status": "pass", "summary": "x", "evidence": [shot, shot] } }),
        )
        .await,
        "duplicate_evidence_reference",
        -32602,
        false,
    );
    assert_eq!(d["digest"], shot["id"]);

    // The event stream: read, confirm, drop, resume from the confirmed
    // cursor with no gap or repeat.
    let subscribe = EventsSubscribeParams {
        session_id: session.id.clone(),
        after_cursor: None,
    };
    let mut stream = host
        .client
        .open_event_stream(subscribe.clone(), EventStreamOptions::default())
        .await
        .expect("open the event stream");
    let mut seen = Vec::new();
    for _ in 0..3 {
        let item = stream.next().await.expect("event").expect("not ended");
        stream.confirm(&item.cursor).expect("confirm");
        seen.push(item.cursor.sequence.get());
    }
    stream.cancel().await;
    let confirmed = stream.confirmed_cursor().expect("a confirmed cursor");
    let mut resumed = stream
        .resume(EventStreamOptions::default())
        .await
        .expect("resume");
    let item = resumed.next().await.expect("event").expect("not ended");
    assert_eq!(item.cursor.sequence.get(), 4, "no gap, no repeat");
    seen.push(item.cursor.sequence.get());
    assert_eq!(seen, [1, 2, 3, 4]);
    drop(resumed);
    // A cursor of another daemon lifetime, and one beyond the log.
    let foreign = EventStreamCursor {
        stream_epoch: EventStreamEpoch(uuid::Uuid::new_v4()),
        ..confirmed.clone()
    };
    match host
        .client
        .open_event_stream(
            EventsSubscribeParams {
                session_id: session.id.clone(),
                after_cursor: Some(foreign),
            },
            EventStreamOptions::default(),
        )
        .await
    {
        Err(EventStreamError::Cursor(_)) => {}
        other => panic!("stream_cursor_epoch_mismatch expected: {:?}", other.err()),
    }
    let mut ahead = confirmed.clone();
    ahead.sequence = serde_json::from_value(json!(9999)).expect("sequence");
    match host
        .client
        .open_event_stream(
            EventsSubscribeParams {
                session_id: session.id.clone(),
                after_cursor: Some(ahead),
            },
            EventStreamOptions::default(),
        )
        .await
    {
        Err(EventStreamError::Client(e)) => {
            expect_error::<()>(Err(e), "stream_cursor_ahead", -32013, false);
        }
        other => panic!("stream_cursor_ahead expected: {:?}", other.err()),
    }

    // Media frames.
    let stream_id = uuid::Uuid::new_v4();
    let started = host
        .call::<MediaStreamStart>(json!({ "streamId": stream_id, "kind": "screenshot" }))
        .await
        .expect("media.stream.start");
    let again = host
        .call::<MediaStreamStart>(json!({ "streamId": stream_id, "kind": "screenshot" }))
        .await
        .expect("an identical start");
    assert_eq!(again, started);
    let d = expect_error(
        host.call::<MediaStreamStart>(json!({ "streamId": stream_id, "kind": "video" }))
            .await,
        "media_stream_conflict",
        -32016,
        false,
    );
    assert_eq!(d, json!({ "streamId": stream_id }));
    host.call_with::<MediaStreamCapture>(
        json!({ "streamId": stream_id, "frameIndex": 1 }),
        timeout(30_000),
    )
    .await
    .expect("frame 1");
    let d = expect_error(
        host.call::<MediaStreamCapture>(json!({ "streamId": stream_id, "frameIndex": 3 }))
            .await,
        "media_frame_out_of_order",
        -32016,
        false,
    );
    assert_eq!(
        d,
        json!({ "streamId": stream_id, "frameIndex": 3, "expectedFrameIndex": 2 })
    );
    expect_error(
        host.call::<MediaStreamCapture>(
            json!({ "streamId": stream_id, "frameIndex": 2, "durationMs": 40 }),
        )
        .await,
        "invalid_media_frame",
        -32016,
        false,
    );
    expect_error(
        host.call::<MediaStreamCapture>(
            json!({ "streamId": uuid::Uuid::new_v4(), "frameIndex": 1 }),
        )
        .await,
        "media_stream_not_found",
        -32016,
        false,
    );
    let d = expect_error(
        host.call::<DeviceExecute>(action("inputSecret", json!({ "text": "pw" })))
            .await,
        "media_stream_protected_action_blocked",
        -32016,
        true,
    );
    assert_eq!(d, Value::Null);
    let ended = host
        .call::<MediaStreamEnd>(json!({ "streamId": stream_id }))
        .await
        .expect("end");
    assert_eq!(ended.frame_count, 1);
    expect_error(
        host.call::<MediaStreamCapture>(json!({ "streamId": stream_id, "frameIndex": 2 }))
            .await,
        "media_stream_ended",
        -32016,
        false,
    );

    // Export.
    let d = expect_error(
        host.call::<SessionExport>(json!({ "limit": 10 })).await,
        "session_active",
        -32006,
        false,
    );
    assert_eq!(d, json!({ "sessionId": sid }));
    expect_error(
        host.call::<EventsClear>(json!({ "sessionId": sid })).await,
        "session_active",
        -32006,
        false,
    );
    let info = host
        .call::<SessionEnd>(json!({ "outcome": "completed" }))
        .await
        .expect("session.end");
    let last = info.last_sequence.get();
    let d = expect_error(
        host.call::<SessionExport>(
            json!({ "sessionId": sid, "limit": 10, "afterSequence": last + 5 }),
        )
        .await,
        "event_cursor_ahead",
        -32006,
        false,
    );
    assert_eq!(
        d,
        json!({ "sessionId": sid, "afterSequence": last + 5, "lastSequence": last })
    );
    let past = host
        .call::<EventsList>(json!({ "sessionId": sid, "afterSequence": last + 5 }))
        .await
        .expect("events.list past the end");
    assert!(past.is_empty(), "events.list past the end is an empty page");
    let unknown = uuid::Uuid::new_v4();
    let d = expect_error(
        host.call::<SessionExport>(json!({ "sessionId": unknown }))
            .await,
        "session_not_found",
        -32006,
        false,
    );
    assert_eq!(d, json!({ "sessionId": unknown }));
    let export = host
        .call::<SessionExport>(json!({ "sessionId": sid }))
        .await
        .expect("export");
    assert_eq!(export.events.len() as u64, last);
    host.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protected_actions_need_their_feature() {
    let mut features = hello().features.optional;
    features.remove("action.protected.v1");
    let names: Vec<&str> = features.iter().map(String::as_str).collect();
    let host = ClientHost::start(Options::default(), hello_with(&names))
        .await
        .expect("hello");
    let caps = host
        .call0::<DeviceCapabilities>()
        .await
        .expect("capabilities");
    assert!(
        caps.iter().all(|a| a.name != "inputSecret"),
        "protected actions are hidden"
    );
    host.call0::<DeviceConnect>().await.expect("connect");
    // Checked after routing and before the Session.
    let d = expect_error(
        host.call::<DeviceExecute>(action("inputSecret", json!({ "text": "pw" })))
            .await,
        "protected_action_not_negotiated",
        -32601,
        false,
    );
    assert_eq!(
        d,
        json!({ "action": "inputSecret", "requiredFeature": "action.protected.v1" })
    );
    host.close().await;
}

/// What the official clients refuse to send, over the raw pipe.
#[test]
fn requests_a_client_would_not_send() {
    let mut h = TestHost::with(Options {
        faults: true,
        ..Options::default()
    });
    let raw = |h: &mut TestHost, line: &str| {
        h.send_raw(format!("{line}\n").as_bytes());
        h.recv()
    };
    // Before hello: every method, unknown ones too.
    let r = raw(
        &mut h,
        r#"{"jsonrpc":"2.0","id":1,"method":"no.such.method"}"#,
    );
    assert_eq!(error_code(&r).as_deref(), Some("handshake_required"));
    assert_eq!(r["error"]["code"], -32001);
    assert_eq!(r["error"]["data"]["retryable"], true);
    assert_eq!(
        r["error"]["data"]["details"],
        json!({ "requiredMethod": "system.hello" })
    );
    // Hello errors leave the connection awaiting hello.
    let r = raw(
        &mut h,
        r#"{"jsonrpc":"2.0","id":2,"method":"system.hello","params":{"client":{"name":"x","version":"1"},"protocol":{"ranges":[{"major":0,"minMinor":1,"maxMinor":9}]}}}"#,
    );
    assert_eq!(
        error_code(&r).as_deref(),
        Some("protocol_version_incompatible")
    );
    assert_eq!(r["error"]["code"], -32003);
    assert_eq!(r["error"]["data"]["details"]["reason"], "clientTooOld");
    let r = raw(
        &mut h,
        r#"{"jsonrpc":"2.0","id":3,"method":"system.hello","params":{"client":{"name":"x","version":"1"},"protocol":{"ranges":[]}}}"#,
    );
    assert_eq!(error_code(&r).as_deref(), Some("invalid_params"));
    assert_eq!(
        r["error"]["data"]["retryable"], true,
        "hello params are retryable"
    );
    assert_eq!(
        r["error"]["data"]["details"],
        json!({ "reason": "emptyProtocolOffer" })
    );
    let r = raw(
        &mut h,
        r#"{"jsonrpc":"2.0","id":4,"method":"system.hello","params":{"client":{"name":"x","version":"1"},"protocol":{"ranges":[{"major":1,"minMinor":3,"maxMinor":2}]}}}"#,
    );
    assert_eq!(
        r["error"]["data"]["details"]["reason"],
        "invalidProtocolRange"
    );
    h.hello();
    let r = raw(
        &mut h,
        r#"{"jsonrpc":"2.0","id":5,"method":"system.hello","params":{}}"#,
    );
    assert_eq!(
        error_code(&r).as_deref(),
        Some("handshake_already_completed")
    );
    assert_eq!(r["error"]["code"], -32002);
    assert_eq!(r["error"]["data"]["details"], Value::Null);
    // Envelopes: null id, details null.
    let r = raw(
        &mut h,
        r#"{"jsonrpc":"2.0","id":6,"method":"devices.list","params":null}"#,
    );
    assert_eq!(error_code(&r).as_deref(), Some("invalid_request"));
    assert_eq!(r["id"], Value::Null);
    assert_eq!(r["error"]["data"]["details"], Value::Null);
    let r = raw(&mut h, r#"{"jsonrpc":"2.0","id":7,"method":"#);
    assert_eq!(error_code(&r).as_deref(), Some("parse_error"));
    assert_eq!(r["id"], Value::Null);
    assert!(r["error"]["data"]["details"]["line"].is_number());
    // No-param methods refuse params.
    let r = raw(
        &mut h,
        r#"{"jsonrpc":"2.0","id":8,"method":"devices.list","params":{"x":1}}"#,
    );
    assert_eq!(error_code(&r).as_deref(), Some("invalid_params"));
    assert_eq!(
        r["error"]["data"]["details"],
        json!({ "method": "devices.list" })
    );
    // A semantic action on a connection without the feature.
    let mut g = TestHost::start();
    g.hello_with(
        json!([{ "major": 1, "minMinor": 0, "maxMinor": 5 }]),
        &[],
        &["events.snapshot.v1", "request.control.v1"],
    );
    let r = g.call(
        "device.execute",
        Some(TestHost::action(
            "tapElement",
            json!({ "target": { "kind": "selector", "selector": { "identifier": "username" } } }),
        )),
    );
    assert_eq!(
        error_code(&r).as_deref(),
        Some("semantic_action_not_negotiated")
    );
    assert_eq!(r["error"]["code"], -32601);
    assert_eq!(
        r["error"]["data"]["details"],
        json!({ "action": "tapElement", "requiredFeature": "device.semanticActions.v1" })
    );
    // Gated methods name their feature.
    let r = g.call(
        "ui.snapshot.get",
        Some(json!({ "observationId": uuid::Uuid::new_v4() })),
    );
    assert_eq!(error_code(&r).as_deref(), Some("method_not_found"));
    assert_eq!(
        r["error"]["data"]["details"],
        json!({ "method": "ui.snapshot.get", "requiredFeature": "observation.uiSnapshot.v1" })
    );
    // A reused id while the first request runs.
    h.ok("device.connect", None);
    h.ok("session.start", None);
    let slow = json!({ "jsonrpc": "2.0", "id": "same", "method": "device.execute", "params": TestHost::action("sleep", json!({ "ms": 400 })) });
    h.send(&slow);
    h.send(&json!({ "jsonrpc": "2.0", "id": "same", "method": "devices.list" }));
    let r = h.recv();
    assert_eq!(error_code(&r).as_deref(), Some("request_id_in_use"), "{r}");
    assert_eq!(r["error"]["code"], -32009);
    assert_eq!(
        r["error"]["data"]["details"],
        json!({ "requestId": "same" })
    );
    assert!(h.recv().get("result").is_some());
}
