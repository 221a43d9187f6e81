//! Sessions and the event log: lifecycle, listing, paging, export (legacy
//! and paged), deletion, UI snapshots and verdicts, through the official
//! Rust client (`support::client`: each call goes through the client's
//! typed method; assertions read the typed result serialized again). A
//! paged export without `session.export.page.v1` stays raw: the clients
//! refuse to send it.

mod support;

use support::client::Launch as _;

use devicerail_client::CallOptions;
use serde_json::{Value, json};
use support::client::{ClientHost, action, hello, ready};
use support::{Options, TestHost, error_code, rpc_code};

fn types(events: &Value) -> Vec<String> {
    events
        .as_array()
        .expect("events")
        .iter()
        .map(|e| e["payload"]["type"].as_str().unwrap_or("?").to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lifecycle_and_session_errors() {
    let h = ClientHost::start(Options::default(), hello())
        .await
        .expect("spawn");
    h.ok("device.connect", None).await;
    assert_eq!(h.err("session.current", None).await, "session_required");
    let r = h
        .call_json("device.observe", None, CallOptions::default())
        .await;
    assert_eq!(error_code(&r).as_deref(), Some("session_required"));
    assert_eq!(rpc_code(&r), -32005);
    assert_eq!(
        h.err(
            "device.execute",
            Some(action("tap", json!({ "x": 1, "y": 1 })))
        )
        .await,
        "session_required"
    );
    assert_eq!(h.err("session.end", None).await, "session_required");
    let s = h.ok("session.start", None).await;
    assert_eq!(s["state"], "active");
    assert_eq!(s["eventCount"], 1);
    assert_eq!(s["lastSequence"], 1);
    assert_eq!(s["endedAtMs"], Value::Null);
    assert_eq!(
        h.ok("session.current", None).await,
        json!({ "sessionId": s["id"] })
    );
    assert_eq!(h.err("session.start", None).await, "session_already_active");
    h.ok("device.observe", None).await;
    let ended = h
        .ok(
            "session.end",
            Some(json!({ "outcome": "failed", "reason": "checked" })),
        )
        .await;
    assert_eq!(ended["state"], "ended");
    assert_eq!(ended["lastSequence"], 3);
    assert!(ended["endedAtMs"].as_u64().is_some());
    let events = h
        .ok("events.list", Some(json!({ "sessionId": s["id"] })))
        .await;
    assert_eq!(
        types(&events),
        ["sessionStarted", "observationCaptured", "sessionEnded"]
    );
    let last = &events[2];
    assert_eq!(
        last["payload"],
        json!({ "type": "sessionEnded", "outcome": "failed", "reason": "checked" })
    );
    for (i, e) in events.as_array().expect("events").iter().enumerate() {
        assert_eq!(e["sequence"], i + 1);
        assert_eq!(e["sessionId"], s["id"]);
    }
    assert_eq!(events[1]["deviceId"], "mock-1");
    assert!(events[1]["requestId"].is_string(), "the client's string id");
    // After the end the connection has no active session again.
    assert_eq!(h.err("session.current", None).await, "session_required");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_end_waits_for_in_flight_actions() {
    let h = ClientHost::start(
        support::Options {
            faults: true,
            ..Default::default()
        },
        hello(),
    )
    .await
    .expect("spawn");
    ready(&h).await;
    let slow = h.request(
        "device.execute",
        Some(action("sleep", json!({ "ms": 400 }))),
        CallOptions::default(),
    );
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let r = h
        .call_json("session.end", None, CallOptions::default())
        .await;
    assert_eq!(error_code(&r).as_deref(), Some("session_busy"), "{r}");
    assert_eq!(rpc_code(&r), -32006);
    assert_eq!(r["error"]["data"]["retryable"], true);
    assert_eq!(r["error"]["data"]["details"]["inFlightActions"], 1, "{r}");
    assert!(h.response(slow).await.get("result").is_some());
    assert_eq!(h.ok("session.end", None).await["state"], "ended");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paging_and_export() {
    let h = ClientHost::start(Options::default(), hello())
        .await
        .expect("spawn");
    let id = ready(&h).await;
    for _ in 0..5 {
        h.ok("device.observe", None).await;
    }
    // events.list paging on the active session.
    let page = h
        .ok(
            "events.list",
            Some(json!({ "afterSequence": 2, "limit": 2 })),
        )
        .await;
    assert_eq!(
        page.as_array()
            .map(|p| p.iter().map(|e| e["sequence"].clone()).collect::<Vec<_>>()),
        Some(vec![json!(3), json!(4)])
    );
    assert_eq!(
        h.ok("events.list", Some(json!({ "afterSequence": 6 })))
            .await,
        json!([])
    );
    assert_eq!(
        h.ok("events.list", Some(json!({ "afterSequence": 7 })))
            .await,
        json!([]),
        "events.list past the end is an empty page"
    );
    // Paged export needs an ended session.
    assert_eq!(
        h.err("session.export", Some(json!({ "limit": 2 }))).await,
        "session_active"
    );
    let legacy_active = h.ok("session.export", None).await;
    assert_eq!(legacy_active["events"].as_array().map(Vec::len), Some(6));
    assert!(legacy_active.get("nextAfterSequence").is_none());
    h.ok("session.end", None).await;
    let full = h
        .ok("session.export", Some(json!({ "sessionId": id })))
        .await;
    assert_eq!(full["session"]["state"], "ended");
    let all = full["events"].as_array().expect("events").clone();
    assert_eq!(all.len(), 7);
    // Walk the pages with nextAfterSequence until it is omitted.
    let mut collected = Vec::new();
    let mut after: Option<u64> = None;
    loop {
        let mut params = json!({ "sessionId": id, "limit": 3 });
        if let Some(a) = after {
            params["afterSequence"] = json!(a);
        }
        let page = h.ok("session.export", Some(params)).await;
        collected.extend(page["events"].as_array().expect("events").iter().cloned());
        match page.get("nextAfterSequence") {
            Some(n) => {
                assert_eq!(Some(n), collected.last().map(|e| &e["sequence"]));
                after = n.as_u64();
            }
            None => break,
        }
    }
    assert_eq!(collected, all);
    assert_eq!(
        h.err(
            "session.export",
            Some(json!({ "sessionId": id, "limit": 2, "afterSequence": 8 }))
        )
        .await,
        "event_cursor_ahead"
    );
    assert_eq!(
        h.err(
            "session.export",
            Some(json!({ "sessionId": id, "afterSequence": 2 }))
        )
        .await,
        "invalid_params"
    );
    assert_eq!(
        h.err(
            "session.export",
            Some(json!({ "sessionId": "00000000-0000-4000-8000-000000000000" }))
        )
        .await,
        "session_not_found"
    );
}

#[test]
fn paged_export_needs_its_feature() {
    let mut h = TestHost::start();
    h.hello_with(
        json!([{ "major": 1, "minMinor": 0, "maxMinor": 5 }]),
        &[],
        &["events.snapshot.v1"],
    );
    h.ok("session.start", None);
    h.ok("session.end", None);
    let r = h.call("session.export", None);
    assert_eq!(
        error_code(&r).as_deref(),
        Some("session_required"),
        "no active session and no id: {r}"
    );
    assert_eq!(r["error"]["data"]["retryable"], true);
    assert_eq!(
        r["error"]["data"]["details"],
        json!({ "requiredMethod": "session.start" })
    );
    let id = h.ok("sessions.list", None)[0]["id"].clone();
    let r = h.call(
        "session.export",
        Some(json!({ "sessionId": id, "limit": 1 })),
    );
    // A paged export is a method of its own feature.
    assert_eq!(error_code(&r).as_deref(), Some("method_not_found"));
    assert_eq!(
        r["error"]["data"]["details"],
        json!({ "method": "session.export", "requiredFeature": "session.export.page.v1" })
    );
    assert_eq!(
        h.ok("session.export", Some(json!({ "sessionId": id })))["events"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_list_and_deletion() {
    let h = ClientHost::start(Options::default(), hello())
        .await
        .expect("spawn");
    let a = h.ok("session.start", None).await["id"].clone();
    assert_eq!(
        h.err("events.clear", Some(json!({ "sessionId": a }))).await,
        "session_active"
    );
    h.ok("session.end", None).await;
    let b = h.ok("session.start", None).await["id"].clone();
    let list = h.ok("sessions.list", None).await;
    assert_eq!(
        list.as_array()
            .map(|l| l.iter().map(|s| s["id"].clone()).collect::<Vec<_>>()),
        Some(vec![a.clone(), b.clone()])
    );
    assert_eq!(list[0]["state"], "ended");
    assert_eq!(list[1]["state"], "active");
    assert_eq!(
        h.ok("events.clear", Some(json!({ "sessionId": a }))).await,
        json!({ "deleted": true, "sessionId": a })
    );
    assert_eq!(
        h.err("events.clear", Some(json!({ "sessionId": a }))).await,
        "session_not_found"
    );
    assert_eq!(
        h.err("events.list", Some(json!({ "sessionId": a }))).await,
        "session_not_found"
    );
    assert_eq!(
        h.ok("sessions.list", None).await.as_array().map(Vec::len),
        Some(1)
    );
    assert_eq!(
        h.err("events.clear", None).await,
        "session_active",
        "defaults to the active session"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ui_snapshots_resolve_only_in_the_active_session() {
    let h = ClientHost::start(Options::default(), hello())
        .await
        .expect("spawn");
    ready(&h).await;
    let obs = h.ok("device.observe", None).await;
    let snap_ref = &obs["uiSnapshot"];
    assert_eq!(snap_ref["formatVersion"], 1);
    assert_eq!(
        snap_ref["evidence"]["mediaType"],
        "application/vnd.devicerail.ui-tree+json;version=1"
    );
    assert_eq!(snap_ref["context"]["contextKind"], "native");
    let snap = h
        .ok(
            "ui.snapshot.get",
            Some(json!({ "observationId": obs["id"] })),
        )
        .await;
    assert_eq!(snap["observationId"], obs["id"]);
    assert_eq!(
        snap["nodes"].as_array().map(Vec::len),
        snap_ref["nodeCount"].as_u64().map(|n| n as usize)
    );
    assert_eq!(snap["rootStableNodeIds"], json!(["app"]));
    let button = snap["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .find(|n| n["stableNodeId"] == "sign-in")
        .cloned();
    assert_eq!(button.expect("sign-in")["role"], "button");
    assert_eq!(
        h.err(
            "ui.snapshot.get",
            Some(json!({ "observationId": "00000000-0000-4000-8000-000000000000" }))
        )
        .await,
        "ui_snapshot_not_found"
    );
    h.ok("session.end", None).await;
    assert_eq!(
        h.err(
            "ui.snapshot.get",
            Some(json!({ "observationId": obs["id"] }))
        )
        .await,
        "session_required"
    );
    h.ok("session.start", None).await;
    assert_eq!(
        h.err(
            "ui.snapshot.get",
            Some(json!({ "observationId": obs["id"] }))
        )
        .await,
        "ui_snapshot_not_found",
        "another session"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verdicts_need_evidence_of_the_active_session() {
    let h = ClientHost::start(Options::default(), hello())
        .await
        .expect("spawn");
    ready(&h).await;
    let obs = h.ok("device.observe", None).await;
    let shot = obs["screenshot"].clone();
    let r = h.ok("verdict.record", Some(json!({ "verdict": { "status": "pass", "summary": "login form shown", "evidence": [shot] } }))).await;
    let event = &r["event"];
    assert_eq!(event["payload"]["type"], "verdictRecorded");
    assert_eq!(event["payload"]["verdict"]["status"], "pass");
    assert_eq!(event["payload"]["verdict"]["evidence"][0], shot);
    assert_eq!(event["sequence"], 3);
    assert_eq!(event["deviceId"], "mock-1");
    let mut forged = shot.clone();
    forged["id"] = json!("sha256:ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff");
    assert_eq!(
        h.err(
            "verdict.record",
            Some(json!({ "verdict": { "status": "fail", "summary": "x", "evidence": [forged] } }))
        )
        .await,
        "evidence_not_reachable"
    );
    let mut tampered = shot.clone();
    tampered["uri"] = json!("file:///etc/passwd");
    assert_eq!(
        h.err(
            "verdict.record",
            Some(
                json!({ "verdict": { "status": "fail", "summary": "x", "evidence": [tampered] } })
            )
        )
        .await,
        "evidence_not_reachable"
    );
    h.ok("session.end", None).await;
    h.ok("session.start", None).await;
    assert_eq!(
        h.err(
            "verdict.record",
            Some(json!({ "verdict": { "status": "pass", "summary": "x", "evidence": [shot] } }))
        )
        .await,
        "evidence_not_reachable",
        "evidence of an earlier session"
    );
    let r = h
        .ok(
            "verdict.record",
            Some(json!({ "verdict": { "status": "unknown", "summary": "no evidence" } })),
        )
        .await;
    assert_eq!(r["event"]["payload"]["verdict"]["evidence"], json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_over_one_frame_are_refused_but_pages_work() {
    let h = ClientHost::start(Options::default(), hello())
        .await
        .expect("spawn");
    let id = ready(&h).await;
    // About 1.3 KB per observation event (its UI snapshot reference
    // included): 1,000 of them exceed 1 MiB. (In batches of 200: the
    // client holds at most 240 calls pending.)
    for _ in 0..12 {
        let ids: Vec<_> = (0..200)
            .map(|_| h.request("device.observe", None, CallOptions::default()))
            .collect();
        for i in ids {
            assert!(h.response(i).await.get("result").is_some());
        }
    }
    h.ok("session.end", None).await;
    let r = h
        .call_json(
            "session.export",
            Some(json!({ "sessionId": id })),
            CallOptions::default(),
        )
        .await;
    assert_eq!(
        error_code(&r).as_deref(),
        Some("response_frame_too_large"),
        "{}",
        &r.to_string()[..200.min(r.to_string().len())]
    );
    assert_eq!(rpc_code(&r), -32012);
    let mut total = 0;
    let mut after = 0u64;
    loop {
        let mut params = json!({ "sessionId": id, "limit": 500 });
        if after > 0 {
            params["afterSequence"] = json!(after);
        }
        let page = h.ok("session.export", Some(params)).await;
        total += page["events"].as_array().map(Vec::len).unwrap_or(0);
        match page.get("nextAfterSequence").and_then(Value::as_u64) {
            Some(n) => after = n,
            None => break,
        }
    }
    assert_eq!(total, 2402);
    // A page of 1,000 would not fit one frame: pages end early, each under
    // the frame limit with `nextAfterSequence`, and the export completes
    // with every event once, in order.
    let mut sequences = Vec::new();
    let mut shortened = 0;
    let mut after = 0u64;
    loop {
        let mut params = json!({ "sessionId": id, "limit": 1000 });
        if after > 0 {
            params["afterSequence"] = json!(after);
        }
        let page = h.ok("session.export", Some(params)).await;
        assert!(page.to_string().len() < 1024 * 1024);
        let events = page["events"].as_array().expect("events");
        sequences.extend(events.iter().filter_map(|e| e["sequence"].as_u64()));
        match page.get("nextAfterSequence").and_then(Value::as_u64) {
            Some(n) => {
                assert_eq!(Some(n), sequences.last().copied());
                if events.len() < 1000 {
                    shortened += 1;
                }
                after = n;
            }
            None => break,
        }
    }
    assert_eq!(sequences, (1..=2402).collect::<Vec<u64>>());
    assert!(shortened >= 2, "pages ended early to fit: {shortened}");
}

/// A Session's start is one time: `session.start`, `sessions.list` and
/// `session.export` answer the `atMs` of its `sessionStarted` event.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_start_time_is_its_first_events_time() {
    let h = ClientHost::start(Options::default(), hello())
        .await
        .expect("spawn");
    h.ok("device.connect", None).await;
    let mut started = std::collections::HashMap::new();
    for _ in 0..300 {
        let info = h.ok("session.start", None).await;
        started.insert(
            info["id"].as_str().expect("id").to_owned(),
            info["startedAtMs"].clone(),
        );
        h.ok("session.end", None).await;
    }
    let listed = h.ok("sessions.list", None).await;
    let listed = listed.as_array().expect("sessions");
    assert_eq!(listed.len(), 300);
    for info in listed {
        let id = info["id"].as_str().expect("id");
        let export = h
            .ok("session.export", Some(json!({ "sessionId": id })))
            .await;
        let first = &export["events"][0];
        assert_eq!(first["payload"]["type"], "sessionStarted");
        assert_eq!(info["startedAtMs"], first["atMs"], "sessions.list");
        assert_eq!(started[id], first["atMs"], "session.start");
        assert_eq!(export["session"]["startedAtMs"], first["atMs"], "export");
        let last = export["events"]
            .as_array()
            .and_then(|e| e.last())
            .expect("last");
        assert_eq!(export["session"]["endedAtMs"], last["atMs"], "the end");
    }
}
