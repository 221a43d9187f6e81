//! Media streams end to end: lifecycle events, frame indexes, retries and
//! every media error, through the official Rust client.

mod support;

use support::client::Launch as _;

use devicerail_client::CallOptions;
use devicerail_client::protocol::RequestTimeoutMs;
use serde_json::{Value, json};
use support::client::{ClientHost, action, hello, ready};
use support::{Options, error_code};

fn id() -> String {
    uuid::Uuid::new_v4().to_string()
}

async fn capture(h: &ClientHost, stream: &str, index: u64, duration: Option<u64>) -> Value {
    let mut params = json!({ "streamId": stream, "frameIndex": index });
    if let Some(d) = duration {
        params["durationMs"] = json!(d);
    }
    h.call_json("media.stream.capture", Some(params), CallOptions::default())
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn screenshot_stream_lifecycle() {
    let h = ClientHost::start(Options::default(), hello())
        .await
        .expect("spawn");
    ready(&h).await;
    let s = id();
    let started = h
        .ok(
            "media.stream.start",
            Some(json!({ "streamId": s, "kind": "screenshot" })),
        )
        .await;
    assert_eq!(
        started["stream"],
        json!({ "id": s, "kind": "screenshot", "mediaType": "image/png" })
    );
    let f1 = capture(&h, &s, 1, None).await;
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
    let again = capture(&h, &s, 1, None).await;
    assert_eq!(again["result"], f1["result"]);
    h.ok(
        "device.execute",
        Some(action("tap", json!({ "x": 100, "y": 300 }))),
    )
    .await;
    let f2 = capture(&h, &s, 2, None).await;
    assert_ne!(
        f2["result"]["frame"]["evidence"], frame["evidence"],
        "the focused field changed the screen"
    );
    assert_eq!(
        error_code(&capture(&h, &s, 4, None).await).as_deref(),
        Some("media_frame_out_of_order")
    );
    assert_eq!(
        error_code(&capture(&h, &s, 1, None).await).as_deref(),
        Some("media_frame_out_of_order")
    );
    // durationMs belongs to video frames only.
    let r = capture(&h, &s, 3, Some(10)).await;
    assert_eq!(error_code(&r).as_deref(), Some("invalid_media_frame"));
    assert_eq!(r["error"]["code"], -32016);
    assert_eq!(r["error"]["data"]["details"], json!({ "streamId": s }));
    // A frame is Evidence of the session.
    let verdict = h.ok(
        "verdict.record",
        Some(json!({ "verdict": { "status": "pass", "summary": "field focused", "evidence": [f2["result"]["frame"]["evidence"]] } })),
    ).await;
    assert_eq!(verdict["event"]["payload"]["type"], "verdictRecorded");
    // A protected action cannot run while the stream records the screen.
    let r = h
        .call_json(
            "device.execute",
            Some(action("inputSecret", json!({ "text": "pw" }))),
            CallOptions::default(),
        )
        .await;
    assert_eq!(
        error_code(&r).as_deref(),
        Some("media_stream_protected_action_blocked"),
        "{r}"
    );
    assert_eq!(r["error"]["data"]["retryable"], true);
    let ended = h
        .ok("media.stream.end", Some(json!({ "streamId": s })))
        .await;
    assert_eq!(ended, json!({ "streamId": s, "frameCount": 2 }));
    // Ending again answers the same; a capture after the end is refused;
    // a retry of the last frame still returns it.
    assert_eq!(
        h.ok("media.stream.end", Some(json!({ "streamId": s })))
            .await,
        ended
    );
    assert_eq!(
        error_code(&capture(&h, &s, 3, None).await).as_deref(),
        Some("media_stream_ended")
    );
    assert_eq!(
        capture(&h, &s, 2, None).await["result"],
        f2["result"],
        "an exact retry of the last frame is answered after the end"
    );
    // An identical start returns the original stream and records nothing;
    // another kind conflicts.
    assert_eq!(
        h.ok(
            "media.stream.start",
            Some(json!({ "streamId": s, "kind": "screenshot" }))
        )
        .await,
        started
    );
    let r = h
        .call_json(
            "media.stream.start",
            Some(json!({ "streamId": s, "kind": "video" })),
            CallOptions::default(),
        )
        .await;
    assert_eq!(error_code(&r).as_deref(), Some("media_stream_conflict"));
    assert_eq!(r["error"]["data"]["details"], json!({ "streamId": s }));
    let events = h.ok("events.list", None).await;
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
    assert_eq!(h.ok("session.end", None).await["state"], "ended");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn video_frames_need_a_duration() {
    let h = ClientHost::start(Options::default(), hello())
        .await
        .expect("spawn");
    ready(&h).await;
    let s = id();
    h.ok(
        "media.stream.start",
        Some(json!({ "streamId": s, "kind": "video" })),
    )
    .await;
    assert_eq!(
        error_code(&capture(&h, &s, 1, None).await).as_deref(),
        Some("invalid_media_frame")
    );
    assert_eq!(
        error_code(&capture(&h, &s, 1, Some(0)).await).as_deref(),
        Some("invalid_media_frame")
    );
    let r = capture(&h, &s, 1, Some(100)).await;
    assert_eq!(r["result"]["frame"]["durationMs"], 100);
    // timeoutMs is accepted on captures.
    let timed = h
        .call_json(
            "media.stream.capture",
            Some(json!({ "streamId": s, "frameIndex": 2, "durationMs": 100 })),
            CallOptions {
                timeout_ms: RequestTimeoutMs::new(30_000),
            },
        )
        .await;
    assert_eq!(timed["result"]["frame"]["frameIndex"], 2);
    assert_eq!(
        h.ok("media.stream.end", Some(json!({ "streamId": s })))
            .await["frameCount"],
        2
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_belong_to_their_session_and_device() {
    let h = ClientHost::start(
        Options {
            devices: Some(2),
            ..Options::default()
        },
        hello(),
    )
    .await
    .expect("spawn");
    h.ok("device.select", Some(json!({ "deviceId": "mock-2" })))
        .await;
    h.ok("device.connect", None).await;
    assert_eq!(
        h.err(
            "media.stream.start",
            Some(json!({ "streamId": id(), "kind": "screenshot" }))
        )
        .await,
        "session_required"
    );
    h.ok("session.start", None).await;
    let s = id();
    h.ok(
        "media.stream.start",
        Some(json!({ "streamId": s, "kind": "screenshot" })),
    )
    .await;
    // The session holds its device: the selection cannot move.
    let r = h
        .call_json(
            "device.select",
            Some(json!({ "deviceId": "mock-1" })),
            CallOptions::default(),
        )
        .await;
    assert_eq!(error_code(&r).as_deref(), Some("device_lease_active"));
    assert_eq!(r["error"]["code"], -32014);
    let r = capture(&h, &s, 1, None).await;
    assert!(
        r.get("result").is_some(),
        "captures use the stream's device: {r}"
    );
    assert_eq!(
        error_code(&capture(&h, &id(), 1, None).await).as_deref(),
        Some("media_stream_not_found")
    );
    h.ok("media.stream.end", Some(json!({ "streamId": s })))
        .await;
    h.ok("session.end", None).await;
    h.ok("session.start", None).await;
    assert_eq!(
        error_code(&capture(&h, &s, 2, None).await).as_deref(),
        Some("media_stream_not_found"),
        "stream ids are forgotten with their session"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn omit_policy_forbids_media_capture() {
    let h = ClientHost::start(
        Options {
            screenshot_policy: Some("omit"),
            ..Options::default()
        },
        hello(),
    )
    .await
    .expect("spawn");
    ready(&h).await;
    assert_eq!(
        h.err(
            "media.stream.start",
            Some(json!({ "streamId": id(), "kind": "screenshot" }))
        )
        .await,
        "method_not_found",
        "screenshot capture, which media streams need, is switched off"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_streams_end_at_shutdown() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let h = ClientHost::start(
        Options {
            root: Some(tmp.path().to_path_buf()),
            ..Options::default()
        },
        hello(),
    )
    .await
    .expect("spawn");
    let session = ready(&h).await;
    let s = id();
    h.ok(
        "media.stream.start",
        Some(json!({ "streamId": s, "kind": "screenshot" })),
    )
    .await;
    assert!(capture(&h, &s, 1, None).await.get("result").is_some());
    h.close().await;
    let h = ClientHost::start(
        Options {
            root: Some(tmp.path().to_path_buf()),
            ..Options::default()
        },
        hello(),
    )
    .await
    .expect("spawn");
    let export = h
        .ok("session.export", Some(json!({ "sessionId": session })))
        .await;
    let events = export["events"].as_array().expect("events");
    let n = events.len();
    assert_eq!(
        events[n - 2]["payload"],
        json!({ "type": "mediaStreamEnded", "streamId": s, "frameCount": 1 })
    );
    assert_eq!(events[n - 1]["payload"]["outcome"], "shutdown");
}
