//! Media streams end to end: lifecycle events, frame indexes, retries and
//! every media error.

mod support;

use serde_json::{Value, json};
use support::{Options, TestHost, error_code};

fn id() -> String {
    uuid::Uuid::new_v4().to_string()
}

fn capture(h: &mut TestHost, stream: &str, index: u64, duration: Option<u64>) -> Value {
    let mut params = json!({ "streamId": stream, "frameIndex": index });
    if let Some(d) = duration {
        params["durationMs"] = json!(d);
    }
    h.call("media.stream.capture", Some(params))
}

#[test]
fn screenshot_stream_lifecycle() {
    let mut h = TestHost::start();
    h.ready_session();
    let s = id();
    let started = h.ok(
        "media.stream.start",
        Some(json!({ "streamId": s, "kind": "screenshot" })),
    );
    assert_eq!(
        started["stream"],
        json!({ "id": s, "kind": "screenshot", "mediaType": "image/png" })
    );
    let f1 = capture(&mut h, &s, 1, None);
    let frame = &f1["result"]["frame"];
    assert_eq!(frame["streamId"], s);
    assert_eq!(frame["frameIndex"], 1);
    assert_eq!(frame["keyFrame"], true);
    assert_eq!(frame["evidence"]["mediaType"], "image/png");
    assert!(
        frame["evidence"]["id"]
            .as_str()
            .is_some_and(|i| i.starts_with("sha256:"))
    );
    // Exact retry returns the same frame, without a new event.
    let again = capture(&mut h, &s, 1, None);
    assert_eq!(again["result"], f1["result"]);
    h.ok(
        "device.execute",
        Some(TestHost::action("tap", json!({ "x": 100, "y": 300 }))),
    );
    let f2 = capture(&mut h, &s, 2, None);
    assert_ne!(
        f2["result"]["frame"]["evidence"], frame["evidence"],
        "the focused field changed the screen"
    );
    assert_eq!(
        error_code(&capture(&mut h, &s, 4, None)).as_deref(),
        Some("media_frame_out_of_order")
    );
    assert_eq!(
        error_code(&capture(&mut h, &s, 1, None)).as_deref(),
        Some("media_frame_out_of_order")
    );
    // durationMs belongs to video frames only.
    let r = capture(&mut h, &s, 3, Some(10));
    assert_eq!(error_code(&r).as_deref(), Some("invalid_media_frame"));
    assert_eq!(r["error"]["code"], -32016);
    assert_eq!(r["error"]["data"]["details"], json!({ "streamId": s }));
    // A frame is Evidence of the session.
    let verdict = h.ok(
        "verdict.record",
        Some(json!({ "verdict": { "status": "pass", "summary": "field focused", "evidence": [f2["result"]["frame"]["evidence"]] } })),
    );
    assert_eq!(verdict["event"]["payload"]["type"], "verdictRecorded");
    // A protected action cannot run while the stream records the screen.
    let r = h.call(
        "device.execute",
        Some(TestHost::action("inputSecret", json!({ "text": "pw" }))),
    );
    assert_eq!(
        error_code(&r).as_deref(),
        Some("media_stream_protected_action_blocked"),
        "{r}"
    );
    assert_eq!(r["error"]["data"]["retryable"], true);
    let ended = h.ok("media.stream.end", Some(json!({ "streamId": s })));
    assert_eq!(ended, json!({ "streamId": s, "frameCount": 2 }));
    // Ending again answers the same; a capture after the end is refused;
    // a retry of the last frame still returns it.
    assert_eq!(
        h.ok("media.stream.end", Some(json!({ "streamId": s }))),
        ended
    );
    assert_eq!(
        error_code(&capture(&mut h, &s, 3, None)).as_deref(),
        Some("media_stream_ended")
    );
    assert_eq!(
        capture(&mut h, &s, 2, None)["result"],
        f2["result"],
        "an exact retry of the last frame is answered after the end"
    );
    // An identical start returns the original stream and records nothing;
    // another kind conflicts.
    assert_eq!(
        h.ok(
            "media.stream.start",
            Some(json!({ "streamId": s, "kind": "screenshot" }))
        ),
        started
    );
    let r = h.call(
        "media.stream.start",
        Some(json!({ "streamId": s, "kind": "video" })),
    );
    assert_eq!(error_code(&r).as_deref(), Some("media_stream_conflict"));
    assert_eq!(r["error"]["data"]["details"], json!({ "streamId": s }));
    let events = h.ok("events.list", None);
    let kinds: Vec<&str> = events
        .as_array()
        .expect("events")
        .iter()
        .filter_map(|e| e["payload"]["type"].as_str())
        .collect();
    assert_eq!(
        kinds,
        [
            "sessionStarted",
            "mediaStreamStarted",
            "mediaFrameCaptured",
            "actionStarted",
            "actionCompleted",
            "mediaFrameCaptured",
            "verdictRecorded",
            "mediaStreamEnded"
        ]
    );
    let last = events
        .as_array()
        .and_then(|e| e.last().cloned())
        .expect("event");
    assert_eq!(
        last["payload"],
        json!({ "type": "mediaStreamEnded", "streamId": s, "frameCount": 2 })
    );
    assert_eq!(last["deviceId"], "mock-1");
    assert_eq!(h.ok("session.end", None)["state"], "ended");
}

#[test]
fn video_frames_need_a_duration() {
    let mut h = TestHost::start();
    h.ready_session();
    let s = id();
    h.ok(
        "media.stream.start",
        Some(json!({ "streamId": s, "kind": "video" })),
    );
    assert_eq!(
        error_code(&capture(&mut h, &s, 1, None)).as_deref(),
        Some("invalid_media_frame")
    );
    assert_eq!(
        error_code(&capture(&mut h, &s, 1, Some(0))).as_deref(),
        Some("invalid_media_frame")
    );
    let r = capture(&mut h, &s, 1, Some(100));
    assert_eq!(r["result"]["frame"]["durationMs"], 100);
    // timeoutMs is accepted on captures.
    let idv = json!("timed");
    h.send(
        &json!({ "jsonrpc": "2.0", "id": idv, "method": "media.stream.capture", "timeoutMs": 30000,
        "params": { "streamId": s, "frameIndex": 2, "durationMs": 100 } }),
    );
    assert_eq!(h.response(&idv)["result"]["frame"]["frameIndex"], 2);
    assert_eq!(
        h.ok("media.stream.end", Some(json!({ "streamId": s })))["frameCount"],
        2
    );
}

#[test]
fn streams_belong_to_their_session_and_device() {
    let mut h = TestHost::with(Options {
        devices: Some(2),
        ..Options::default()
    });
    h.hello();
    h.ok("device.select", Some(json!({ "deviceId": "mock-2" })));
    h.ok("device.connect", None);
    assert_eq!(
        h.err(
            "media.stream.start",
            Some(json!({ "streamId": id(), "kind": "screenshot" }))
        ),
        "session_required"
    );
    h.ok("session.start", None);
    let s = id();
    h.ok(
        "media.stream.start",
        Some(json!({ "streamId": s, "kind": "screenshot" })),
    );
    // The session holds its device: the selection cannot move.
    let r = h.call("device.select", Some(json!({ "deviceId": "mock-1" })));
    assert_eq!(error_code(&r).as_deref(), Some("device_lease_active"));
    assert_eq!(r["error"]["code"], -32014);
    let r = capture(&mut h, &s, 1, None);
    assert!(
        r.get("result").is_some(),
        "captures use the stream's device: {r}"
    );
    assert_eq!(
        error_code(&capture(&mut h, &id(), 1, None)).as_deref(),
        Some("media_stream_not_found")
    );
    h.ok("media.stream.end", Some(json!({ "streamId": s })));
    h.ok("session.end", None);
    h.ok("session.start", None);
    assert_eq!(
        error_code(&capture(&mut h, &s, 2, None)).as_deref(),
        Some("media_stream_not_found"),
        "stream ids are forgotten with their session"
    );
}

#[test]
fn omit_policy_forbids_media_capture() {
    let mut h = TestHost::with(Options {
        screenshot_policy: Some("omit"),
        ..Options::default()
    });
    h.ready_session();
    assert_eq!(
        h.err(
            "media.stream.start",
            Some(json!({ "streamId": id(), "kind": "screenshot" }))
        ),
        "method_not_found",
        "screenshot capture, which media streams need, is switched off"
    );
}

#[test]
fn open_streams_end_at_shutdown() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut h = TestHost::with(Options {
        root: Some(tmp.path().to_path_buf()),
        ..Options::default()
    });
    let session = h.ready_session();
    let s = id();
    h.ok(
        "media.stream.start",
        Some(json!({ "streamId": s, "kind": "screenshot" })),
    );
    assert!(capture(&mut h, &s, 1, None).get("result").is_some());
    assert!(h.finish().success());
    let mut h = TestHost::with(Options {
        root: Some(tmp.path().to_path_buf()),
        ..Options::default()
    });
    h.hello();
    let export = h.ok("session.export", Some(json!({ "sessionId": session })));
    let events = export["events"].as_array().expect("events");
    let n = events.len();
    assert_eq!(
        events[n - 2]["payload"],
        json!({ "type": "mediaStreamEnded", "streamId": s, "frameCount": 1 })
    );
    assert_eq!(events[n - 1]["payload"]["outcome"], "shutdown");
}
