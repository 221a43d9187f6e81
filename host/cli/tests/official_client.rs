//! Every method and the event stream through the protocol authors'
//! official Rust client (`devicerail-client` from crates.io), as a Rust
//! user of the host would call them: each result decoded into the client's
//! own types (any frame the client finds invalid fails the connection, so
//! a passing call is a conformance check), concurrent calls on clones of
//! one client, cancellation by dropping a call, `timeoutMs` and
//! `actionTimeoutMs`, paged events and export, and the confirmed,
//! resumable event stream to its `sessionEnded` terminal.
//!
//! The catalog's error codes are walked in `catalog.rs`; the frames no
//! client would send stay raw in `bad_input.rs` and `handshake.rs`.

mod support;

use support::client::Launch as _;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use devicerail_client::methods::{
    DeviceCapabilities, DeviceConnect, DeviceDisconnect, DeviceExecute, DeviceObserve,
    DeviceSelect, DevicesList, EventsClear, EventsList, EventsStreamOpen, MediaStreamCapture,
    MediaStreamEnd, MediaStreamStart, RequestCancel, SessionCurrent, SessionEnd, SessionExport,
    SessionStart, SessionsList, SystemDescribe, UiSnapshotGet, VerdictRecord,
};
use devicerail_client::protocol::{
    ActionOutcome, EventSequence, EventsStreamTermination, EventsSubscribeParams,
    RequestCancelStatus, RequestTimeoutMs, SessionOutcome, SessionState, TestEvent,
    TestEventPayload, feature,
};
use devicerail_client::{CallOptions, ClientState, EventStreamError, EventStreamOptions};
use serde_json::{Value, json};
use support::Options;
use support::client::{ClientHost, WAIT, action, expect_error, hello};

fn seq(n: u64) -> EventSequence {
    serde_json::from_value(json!(n)).expect("a sequence")
}

fn timeout(ms: u64) -> CallOptions {
    CallOptions {
        timeout_ms: RequestTimeoutMs::new(ms),
    }
}

fn faulty() -> Options {
    Options {
        faults: true,
        ..Options::default()
    }
}

fn kinds(events: &[TestEvent]) -> Vec<&'static str> {
    events
        .iter()
        .map(|e| match &e.payload {
            TestEventPayload::SessionStarted => "sessionStarted",
            TestEventPayload::SessionEnded { .. } => "sessionEnded",
            TestEventPayload::ObservationCaptured { .. } => "observationCaptured",
            TestEventPayload::ActionStarted { .. } => "actionStarted",
            TestEventPayload::ActionCompleted { .. } => "actionCompleted",
            TestEventPayload::MediaStreamStarted { .. } => "mediaStreamStarted",
            TestEventPayload::MediaFrameCaptured { .. } => "mediaFrameCaptured",
            TestEventPayload::MediaStreamEnded { .. } => "mediaStreamEnded",
            TestEventPayload::VerdictRecorded { .. } => "verdictRecorded",
            TestEventPayload::Error { .. } => "error",
        })
        .collect()
}

/// The outcome recorded for the Action with `call_id`.
fn outcome_of(events: &[TestEvent], call_id: &Value) -> ActionOutcome {
    events
        .iter()
        .find_map(|e| match &e.payload {
            TestEventPayload::ActionCompleted {
                call_id: id,
                outcome,
            } if json!(id) == *call_id => Some(outcome.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no actionCompleted for {call_id}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_method_decodes_into_the_clients_types() {
    let host = ClientHost::start(Options::default(), hello())
        .await
        .expect("spawn and hello");
    let client = &host.client;
    assert_eq!(client.state(), ClientState::Ready);

    // system.hello (done by spawn; the client validated the result).
    let negotiated = client.negotiated_hello().expect("negotiated hello");
    assert_eq!(negotiated.protocol.selected.major, 1);
    assert_eq!(negotiated.protocol.selected.minor, 5);
    let all: BTreeSet<String> = hello().features.optional;
    assert_eq!(client.enabled_features(), all, "every offered feature");

    // system.describe.
    let described = host.call0::<SystemDescribe>().await.expect("describe");
    assert_eq!(described.connection, negotiated);
    assert_eq!(described.client.name, "e2e-official-client");
    assert_eq!(described.active_session_id, None);

    // devices.list, device.select.
    let listed = host.call0::<DevicesList>().await.expect("devices.list");
    assert_eq!(listed.devices.len(), 1);
    let device = listed.devices[0].clone();
    assert_eq!(device.id.0, "mock-1");
    let selected = host
        .call::<DeviceSelect>(json!({ "deviceId": "mock-1" }))
        .await
        .expect("select");
    assert_eq!(selected.device.id, device.id);

    // device.connect, device.capabilities.
    let connected = host
        .call0_with::<DeviceConnect>(timeout(30_000))
        .await
        .expect("connect");
    assert!(connected.connected);
    let caps = host
        .call0_with::<DeviceCapabilities>(timeout(30_000))
        .await
        .expect("capabilities");
    let names: BTreeSet<&str> = caps.iter().map(|c| c.name.as_str()).collect();
    for name in ["tap", "setElementValue", "tapElement", "waitForElement"] {
        assert!(names.contains(name), "{name} in {names:?}");
    }

    // session.start, session.current.
    let session = host.call0::<SessionStart>().await.expect("session.start");
    assert_eq!(session.state, SessionState::Active);
    assert_eq!(session.event_count, seq(1));
    let current = host.call0::<SessionCurrent>().await.expect("current");
    assert_eq!(current.session_id, session.id);

    // device.observe, ui.snapshot.get.
    let observation = host
        .call0_with::<DeviceObserve>(timeout(30_000))
        .await
        .expect("observe");
    assert_eq!(observation.device_id, device.id);
    assert!(observation.screenshot.is_some());
    let ui = observation.ui_snapshot.as_ref().expect("a UI snapshot");
    let tree = host
        .call::<UiSnapshotGet>(json!({ "observationId": observation.id }))
        .await
        .expect("ui.snapshot.get");
    assert_eq!(tree.observation_id, observation.id);
    assert_eq!(tree.nodes.len() as u64, u64::from(ui.node_count));

    // device.execute: coordinates, then semantic Actions with their typed
    // outputs.
    let tapped = host
        .call_with::<DeviceExecute>(action("tap", json!({ "x": 5, "y": 5 })), timeout(30_000))
        .await
        .expect("tap");
    assert!(tapped.finished_at_ms >= tapped.started_at_ms);
    for (name, arguments) in [
        (
            "setElementValue",
            json!({ "target": { "kind": "selector", "selector": { "identifier": "username" } }, "value": "ada" }),
        ),
        (
            "setElementValue",
            json!({ "target": { "kind": "selector", "selector": { "identifier": "password" } }, "value": "pw" }),
        ),
        (
            "tapElement",
            json!({ "target": { "kind": "selector", "selector": { "role": "button", "name": "Sign in" } } }),
        ),
    ] {
        let mut params = action(name, arguments);
        params["actionTimeoutMs"] = json!(20_000);
        let done = host
            .call_with::<DeviceExecute>(params, timeout(30_000))
            .await
            .unwrap_or_else(|e| panic!("{name}: {e:?}"));
        assert!(done.execution.is_some(), "{name} reports its execution");
        if name == "setElementValue" {
            let typed: devicerail_client::protocol::SetElementValueResult =
                serde_json::from_value(done.output).expect("a SetElementValueResult");
            assert!(!typed.element.stable_node_id.is_empty());
        }
    }
    let waited = host
        .call::<DeviceExecute>(action(
            "waitForElement",
            json!({ "selector": { "identifier": "sign-out" }, "condition": "visible" }),
        ))
        .await
        .expect("waitForElement");
    let typed: devicerail_client::protocol::WaitForElementResult =
        serde_json::from_value(waited.output).expect("a WaitForElementResult");
    assert!(typed.matched);

    // request.cancel for an id nobody uses.
    let cancel = host
        .call::<RequestCancel>(json!({ "requestId": "nobody:1" }))
        .await
        .expect("request.cancel");
    assert_eq!(cancel.status, RequestCancelStatus::NotFound);

    // media.stream.*.
    let stream_id = uuid::Uuid::new_v4();
    let started = host
        .call::<MediaStreamStart>(json!({ "streamId": stream_id, "kind": "screenshot" }))
        .await
        .expect("media.stream.start");
    assert_eq!(json!(started.stream.id), json!(stream_id));
    let frame = host
        .call_with::<MediaStreamCapture>(
            json!({ "streamId": stream_id, "frameIndex": 1 }),
            timeout(30_000),
        )
        .await
        .expect("capture");
    assert_eq!(frame.frame.frame_index, seq(1));
    let ended_stream = host
        .call::<MediaStreamEnd>(json!({ "streamId": stream_id }))
        .await
        .expect("media.stream.end");
    assert_eq!(ended_stream.frame_count, 1);

    // verdict.record citing the observation's evidence.
    let evidence = json!([observation.screenshot.clone().expect("screenshot")]);
    let verdict = host
        .call::<VerdictRecord>(
            json!({ "verdict": { "status": "pass", "summary": "signed in", "evidence": evidence } }),
        )
        .await
        .expect("verdict.record");
    assert!(matches!(
        verdict.event.payload,
        TestEventPayload::VerdictRecorded { .. }
    ));

    // events.stream.open (the socket itself: the stream tests below).
    let opened = host
        .call::<EventsStreamOpen>(
            json!({ "sessionId": session.id, "originPolicy": { "kind": "absent" } }),
        )
        .await
        .expect("events.stream.open");
    assert!(
        json!(opened.endpoint)
            .as_str()
            .is_some_and(|e| e.starts_with("ws://127.0.0.1:"))
    );

    // events.list while active.
    let events = host
        .call::<EventsList>(json!({ "sessionId": session.id }))
        .await
        .expect("events.list");
    assert_eq!(events.first().map(|e| e.sequence), Some(seq(1)));

    // session.end, sessions.list, session.export (whole).
    let ended = host
        .call::<SessionEnd>(json!({ "outcome": "completed", "reason": "done" }))
        .await
        .expect("session.end");
    assert_eq!(ended.state, SessionState::Ended);
    assert!(ended.ended_at_ms.is_some());
    let sessions = host.call0::<SessionsList>().await.expect("sessions.list");
    assert!(sessions.iter().any(|s| s.id == session.id));
    let export = host
        .call::<SessionExport>(json!({ "sessionId": session.id }))
        .await
        .expect("session.export");
    assert_eq!(export.session, ended);
    assert_eq!(export.next_after_sequence, None);
    assert_eq!(export.events.len() as u64, ended.event_count.get());
    let k = kinds(&export.events);
    assert_eq!(k.first(), Some(&"sessionStarted"));
    assert_eq!(k.last(), Some(&"sessionEnded"));
    for kind in [
        "observationCaptured",
        "actionStarted",
        "actionCompleted",
        "mediaStreamStarted",
        "mediaFrameCaptured",
        "mediaStreamEnded",
        "verdictRecorded",
    ] {
        assert!(k.contains(&kind), "{kind} in {k:?}");
    }

    // events.clear, then the session is gone.
    let cleared = host
        .call::<EventsClear>(json!({ "sessionId": session.id }))
        .await
        .expect("events.clear");
    assert!(cleared.deleted);
    assert_eq!(cleared.session_id, session.id);

    // device.disconnect.
    let disconnected = host
        .call0_with::<DeviceDisconnect>(timeout(30_000))
        .await
        .expect("disconnect");
    assert!(disconnected.disconnected);

    host.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paged_events_and_export_cover_the_log_without_gaps() {
    let host = ClientHost::start(Options::default(), hello())
        .await
        .expect("spawn");
    host.call0::<DeviceConnect>().await.expect("connect");
    let session = host.call0::<SessionStart>().await.expect("start");
    for i in 0..4 {
        host.call::<DeviceExecute>(action("tap", json!({ "x": i, "y": i })))
            .await
            .expect("tap");
    }
    // events.list pages while the Session is active.
    let mut after: Option<u64> = None;
    let mut listed = Vec::new();
    loop {
        let mut params = json!({ "sessionId": session.id, "limit": 3 });
        if let Some(a) = after {
            params["afterSequence"] = json!(a);
        }
        let page = host.call::<EventsList>(params).await.expect("events.list");
        assert!(page.len() <= 3);
        let Some(last) = page.last() else { break };
        after = Some(last.sequence.get());
        listed.extend(page);
    }
    let sequences: Vec<u64> = listed.iter().map(|e| e.sequence.get()).collect();
    assert_eq!(sequences, (1..=sequences.len() as u64).collect::<Vec<_>>());
    assert_eq!(sequences.len(), 9, "started + 4 × (started, completed)");

    // Paged export of an active Session is refused; of an ended one, pages.
    expect_error(
        host.call::<SessionExport>(json!({ "sessionId": session.id, "limit": 2 }))
            .await,
        "session_active",
        -32006,
        false,
    );
    host.call::<SessionEnd>(Value::Null).await.expect("end");
    let mut after: Option<u64> = None;
    let mut exported = Vec::new();
    let mut pages = 0;
    loop {
        let mut params = json!({ "sessionId": session.id, "limit": 4 });
        if let Some(a) = after {
            params["afterSequence"] = json!(a);
        }
        let page = host
            .call::<SessionExport>(params)
            .await
            .expect("export page");
        pages += 1;
        assert!(page.events.len() <= 4);
        exported.extend(page.events);
        match page.next_after_sequence {
            Some(next) => after = Some(next.get()),
            None => break,
        }
    }
    assert_eq!(pages, 3, "10 events in pages of 4");
    let whole = host
        .call::<SessionExport>(json!({ "sessionId": session.id }))
        .await
        .expect("whole export");
    assert_eq!(exported, whole.events);
    host.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_on_clones_of_one_client() {
    let host = ClientHost::start(faulty(), hello()).await.expect("spawn");
    host.call0::<DeviceConnect>().await.expect("connect");
    host.call0::<SessionStart>().await.expect("start");
    let begun = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..8u64 {
        let client = host.client.clone();
        tasks.spawn(async move {
            let params =
                serde_json::from_value(action("sleep", json!({ "ms": 300 }))).expect("params");
            let slept = client
                .call::<DeviceExecute>(params, CallOptions::default())
                .await;
            let described = client
                .call::<SystemDescribe>(Default::default(), CallOptions::default())
                .await;
            let observed = client
                .call::<DeviceObserve>(Default::default(), CallOptions::default())
                .await;
            (i, slept.is_ok(), described.is_ok(), observed.is_ok())
        });
    }
    let mut done = 0;
    while let Some(joined) = tokio::time::timeout(WAIT, tasks.join_next())
        .await
        .expect("the calls finish")
    {
        let (i, slept, described, observed) = joined.expect("task");
        assert!(slept && described && observed, "task {i}");
        done += 1;
    }
    assert_eq!(done, 8);
    // Actions of one device run one at a time, but nothing else waited for
    // them (8 × 300 ms serialised is the floor, not far above it).
    assert!(begun.elapsed() < Duration::from_secs(20));
    assert_eq!(host.client.pending_requests(), 0);
    host.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_a_call_cancels_it_and_deadlines_are_recorded() {
    let host = ClientHost::start(faulty(), hello()).await.expect("spawn");
    host.call0::<DeviceConnect>().await.expect("connect");
    let session = host.call0::<SessionStart>().await.expect("start");

    // Drop a running Action's future: the client sends request.cancel, the
    // driver stops, the host records a cancelled outcome.
    let long = action("sleep", json!({ "ms": 20_000 }));
    let params = serde_json::from_value(long.clone()).expect("params");
    let begun = Instant::now();
    let dropped = tokio::time::timeout(
        Duration::from_millis(300),
        host.client
            .call::<DeviceExecute>(params, CallOptions::default()),
    )
    .await;
    assert!(dropped.is_err(), "the sleep was still running");
    // The Session can end as soon as the cancellation landed.
    let ended = loop {
        match host.call::<SessionEnd>(Value::Null).await {
            Ok(ended) => break ended,
            Err(e) => {
                expect_error::<()>(Err(e), "session_busy", -32006, true);
                assert!(begun.elapsed() < Duration::from_secs(10), "cancel landed");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    assert!(begun.elapsed() < Duration::from_secs(10));
    let events = host
        .call::<EventsList>(json!({ "sessionId": session.id }))
        .await
        .expect("events");
    match outcome_of(&events, &long["id"]) {
        // The recorded outcome has its own nested code (PROTOCOL.md, errors).
        ActionOutcome::Cancelled { error } => assert_eq!(error.code, "action_cancelled"),
        other => panic!("cancelled expected: {other:?}"),
    }
    assert_eq!(ended.state, SessionState::Ended);

    // timeoutMs and actionTimeoutMs end the Action with their own scope.
    host.call0::<SessionStart>().await.expect("second session");
    let by_request = action("sleep", json!({ "ms": 20_000 }));
    expect_error(
        host.call_with::<DeviceExecute>(by_request.clone(), timeout(100))
            .await,
        "request_timed_out",
        -32008,
        true,
    );
    let mut by_action = action("sleep", json!({ "ms": 20_000 }));
    by_action["actionTimeoutMs"] = json!(80);
    expect_error(
        host.call_with::<DeviceExecute>(by_action.clone(), timeout(30_000))
            .await,
        "action_timed_out",
        -32008,
        true,
    );
    // An earlier timeoutMs wins over a later actionTimeoutMs.
    let mut both = action("sleep", json!({ "ms": 20_000 }));
    both["actionTimeoutMs"] = json!(10_000);
    let d = expect_error(
        host.call_with::<DeviceExecute>(both.clone(), timeout(90))
            .await,
        "request_timed_out",
        -32008,
        true,
    );
    assert_eq!(d, json!({ "scope": "request", "timeoutMs": 90 }));
    let events = host.call::<EventsList>(Value::Null).await.expect("events");
    for (call, ms) in [(&by_request, 100), (&by_action, 80), (&both, 90)] {
        match outcome_of(&events, &call["id"]) {
            ActionOutcome::TimedOut { timeout_ms, error } => {
                assert_eq!(timeout_ms, ms);
                assert_eq!(error.code, "action_timeout");
            }
            other => panic!("timedOut expected: {other:?}"),
        }
    }
    // A timeout on a quick observe does not fire.
    host.call0_with::<DeviceObserve>(timeout(30_000))
        .await
        .expect("observe within its deadline");
    // Cancelling a finished request is notFound; the connection is fine.
    let h = host
        .client
        .begin_call::<SystemDescribe>(Default::default(), CallOptions::default())
        .expect("begin");
    let id = h.id().clone();
    h.result().await.expect("describe");
    let status = host.client.cancel(id).await.expect("cancel");
    assert_eq!(status.status, RequestCancelStatus::NotFound);
    assert_eq!(host.client.state(), ClientState::Ready);
    host.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_event_stream_follows_a_session_to_its_end_across_a_resume() {
    let host = ClientHost::start(Options::default(), hello())
        .await
        .expect("spawn");
    host.call0::<DeviceConnect>().await.expect("connect");
    let session = host.call0::<SessionStart>().await.expect("start");
    let subscribe = EventsSubscribeParams {
        session_id: session.id.clone(),
        after_cursor: None,
    };
    let mut stream = host
        .client
        .open_event_stream(subscribe, EventStreamOptions::default())
        .await
        .expect("open");
    // Live events: an observation and an Action while subscribed.
    host.call0::<DeviceObserve>().await.expect("observe");
    host.call::<DeviceExecute>(action("tap", json!({ "x": 1, "y": 1 })))
        .await
        .expect("tap");
    let mut got = Vec::new();
    for _ in 0..4 {
        let item = tokio::time::timeout(WAIT, stream.next())
            .await
            .expect("an event in time")
            .expect("event")
            .expect("not ended");
        stream.confirm(&item.cursor).expect("confirm");
        got.push(item.event);
    }
    assert_eq!(
        kinds(&got),
        [
            "sessionStarted",
            "observationCaptured",
            "actionStarted",
            "actionCompleted"
        ]
    );
    // Drop the socket, act meanwhile, resume from the confirmed cursor.
    stream.cancel().await;
    assert!(matches!(
        stream.next().await,
        Err(EventStreamError::Cancelled)
    ));
    host.call::<DeviceExecute>(action("tap", json!({ "x": 2, "y": 2 })))
        .await
        .expect("tap while away");
    let mut resumed = stream
        .resume(EventStreamOptions::default())
        .await
        .expect("resume");
    host.call::<SessionEnd>(json!({ "outcome": "completed" }))
        .await
        .expect("end");
    let mut after = Vec::new();
    while let Some(item) = tokio::time::timeout(WAIT, resumed.next())
        .await
        .expect("stream in time")
        .expect("clean stream")
    {
        resumed.confirm(&item.cursor).expect("confirm");
        after.push(item.event);
    }
    assert_eq!(
        kinds(&after),
        ["actionStarted", "actionCompleted", "sessionEnded"]
    );
    assert_eq!(after[0].sequence, seq(5), "no gap, no repeat");
    let terminal = resumed.terminal().expect("a terminal");
    assert!(matches!(
        terminal.termination,
        EventsStreamTermination::SessionEnded
    ));
    match &after[2].payload {
        TestEventPayload::SessionEnded { outcome, .. } => {
            assert_eq!(*outcome, SessionOutcome::Completed)
        }
        other => panic!("{other:?}"),
    }

    // Resuming an ended Session from its last cursor: nothing to replay,
    // a clean end at once.
    let mut tail = resumed
        .resume(EventStreamOptions::default())
        .await
        .expect("resume at the end");
    assert!(
        tokio::time::timeout(WAIT, tail.next())
            .await
            .expect("in time")
            .expect("clean end")
            .is_none()
    );
    // A fresh subscription replays the whole ended Session.
    let mut replay = host
        .client
        .open_event_stream(
            EventsSubscribeParams {
                session_id: session.id.clone(),
                after_cursor: None,
            },
            EventStreamOptions::default(),
        )
        .await
        .expect("replay");
    let mut n = 0;
    while let Some(item) = tokio::time::timeout(WAIT, replay.next())
        .await
        .expect("in time")
        .expect("clean")
    {
        replay.confirm(&item.cursor).expect("confirm");
        n += 1;
    }
    assert_eq!(n, 7, "started, observed, 2 × (started, completed), ended");
    host.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn features_not_negotiated_are_refused_by_the_host_or_the_client() {
    // Protocol 1.0 with nothing optional: the host's hello, the client's
    // local checks, and what the host answers to extension methods.
    let mut h = hello();
    h.protocol.ranges =
        serde_json::from_value(json!([{ "major": 1, "minMinor": 0, "maxMinor": 0 }]))
            .expect("ranges");
    h.features.optional.clear();
    let host = ClientHost::start(Options::default(), h)
        .await
        .expect("spawn");
    let negotiated = host.client.negotiated_hello().expect("hello");
    assert_eq!(negotiated.protocol.selected.minor, 0);
    assert!(negotiated.features.enabled.is_empty());
    assert!(matches!(
        host.call0::<DevicesList>().await,
        Err(devicerail_client::ClientError::FeatureNotNegotiated { .. })
    ));
    assert!(
        host.call0_with::<DeviceObserve>(timeout(1000))
            .await
            .is_err(),
        "timeoutMs needs request.control.v1"
    );
    host.call0::<DeviceConnect>().await.expect("connect at 1.0");
    host.call0::<SessionStart>().await.expect("session at 1.0");
    let observed = host.call0::<DeviceObserve>().await.expect("observe at 1.0");
    assert!(
        observed.ui_snapshot.is_none() && observed.ui_snapshot_omission.is_none(),
        "no 1.5 fields at 1.0"
    );
    let enabled = host.client.enabled_features();
    assert!(!enabled.contains(feature::EVENTS_SNAPSHOT_V1));
    host.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_older_minor_gets_events_it_can_represent() {
    // Protocol 1.3 has the event stream but no UI snapshots or execution
    // metadata: the client refuses a streamed event newer than the
    // negotiated minor.
    let mut h = hello();
    h.protocol.ranges =
        serde_json::from_value(json!([{ "major": 1, "minMinor": 0, "maxMinor": 3 }]))
            .expect("ranges");
    h.features.optional = [
        feature::EVENTS_SNAPSHOT_V1,
        feature::EVENTS_STREAM_V1,
        feature::REQUEST_CONTROL_V1,
        feature::DEVICE_ROUTING_V1,
    ]
    .iter()
    .map(|f| (*f).to_owned())
    .collect();
    let host = ClientHost::start(Options::default(), h)
        .await
        .expect("spawn");
    assert_eq!(
        host.client
            .negotiated_hello()
            .expect("hello")
            .protocol
            .selected
            .minor,
        3
    );
    host.call0::<DeviceConnect>().await.expect("connect");
    let session = host.call0::<SessionStart>().await.expect("start");
    let mut stream = host
        .client
        .open_event_stream(
            EventsSubscribeParams {
                session_id: session.id.clone(),
                after_cursor: None,
            },
            EventStreamOptions::default(),
        )
        .await
        .expect("open");
    host.call0::<DeviceObserve>().await.expect("observe");
    host.call::<DeviceExecute>(action("tap", json!({ "x": 3, "y": 3 })))
        .await
        .expect("tap");
    host.call::<SessionEnd>(Value::Null).await.expect("end");
    let mut streamed = Vec::new();
    while let Some(item) = tokio::time::timeout(WAIT, stream.next())
        .await
        .expect("in time")
        .expect("a stream the 1.3 client accepts")
    {
        stream.confirm(&item.cursor).expect("confirm");
        streamed.push(item.event);
    }
    assert_eq!(streamed.len(), 5);
    for e in &streamed {
        assert!(e.payload.required_protocol_minor() <= 3, "{e:?}");
    }
    let listed = host
        .call::<EventsList>(json!({ "sessionId": session.id }))
        .await
        .expect("events.list");
    assert_eq!(listed, streamed, "the snapshot and the stream agree");
    host.close().await;
}
