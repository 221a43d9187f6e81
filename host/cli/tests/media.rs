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

/// One capture as a client paces them: refused for the rate limit, it
/// waits the `retryAfterMs` it was told and tries again.
async fn capture(h: &ClientHost, stream: &str, index: u64, duration: Option<u64>) -> Value {
    loop {
        let r = capture_once(h, stream, index, duration).await;
        match r["error"]["data"]["details"]["retryAfterMs"].as_u64() {
            Some(ms) if error_code(&r).as_deref() == Some("media_capture_rate_limited") => {
                tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
            }
            _ => return r,
        }
    }
}

/// One `media.stream.capture` call, answered as it comes.
async fn capture_once(h: &ClientHost, stream: &str, index: u64, duration: Option<u64>) -> Value {
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
            "observationCaptured",
            "mediaFrameCaptured",
            "actionStarted",
            "actionCompleted",
            "observationCaptured",
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
    // timeoutMs is accepted on captures (after the rate limit's interval).
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
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

/// Checks an answer is the media error `code` with its catalog flags and
/// exactly `details`.
#[track_caller]
fn assert_media_error(r: &Value, code: &str, retryable: bool, details: &Value) {
    assert_eq!(error_code(r).as_deref(), Some(code), "{r}");
    assert_eq!(r["error"]["code"], -32016, "{r}");
    assert_eq!(r["error"]["data"]["retryable"], retryable, "{r}");
    assert_eq!(&r["error"]["data"]["details"], details, "{r}");
}

/// The payload types of the active Session's events, in order.
async fn event_types(h: &ClientHost) -> Vec<String> {
    h.ok("events.list", None)
        .await
        .as_array()
        .expect("events")
        .iter()
        .filter_map(|e| e["payload"]["type"].as_str().map(str::to_owned))
        .collect()
}

/// As on the reference daemon: a capture takes its frame through the
/// device's normal observation path, so the log holds the Observation (with
/// the UI tree the connection negotiated) right before the frame that names
/// its screenshot; an exact retry appends nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_capture_records_its_observation_before_its_frame() {
    let h = ClientHost::start(Options::default(), hello())
        .await
        .expect("spawn");
    ready(&h).await;
    let s = id();
    h.ok(
        "media.stream.start",
        Some(json!({ "streamId": s, "kind": "screenshot" })),
    )
    .await;
    let first = capture(&h, &s, 1, None).await;
    assert_eq!(capture(&h, &s, 1, None).await, first, "an exact retry");
    h.ok("media.stream.end", Some(json!({ "streamId": s })))
        .await;
    assert_eq!(
        event_types(&h).await,
        [
            "sessionStarted",
            "mediaStreamStarted",
            "observationCaptured",
            "mediaFrameCaptured",
            "mediaStreamEnded"
        ]
    );
    let events = h.ok("events.list", None).await;
    let (observed, framed) = (&events[2], &events[3]);
    let observation = &observed["payload"]["observation"];
    assert_eq!(
        observation["screenshot"], first["result"]["frame"]["evidence"],
        "the frame is the Observation's screenshot"
    );
    assert_eq!(framed["payload"]["frame"], first["result"]["frame"]);
    assert_eq!(observed["requestId"], framed["requestId"]);
    assert_eq!(observed["deviceId"], "mock-1");
    // The UI tree was negotiated, so the Observation carries one, readable
    // like any other.
    let tree = h
        .ok(
            "ui.snapshot.get",
            Some(json!({ "observationId": observation["id"] })),
        )
        .await;
    assert_eq!(
        tree["nodes"].as_array().map(Vec::len),
        observation["uiSnapshot"]["nodeCount"]
            .as_u64()
            .map(|n| n as usize)
    );
}

/// The catalog's stream limits: two open streams, eight in a Session, and
/// one capture a stream every 50 ms, each with its code, flag and details.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_limits_answer_the_catalogs_errors() {
    let h = ClientHost::start(Options::default(), hello())
        .await
        .expect("spawn");
    ready(&h).await;
    let start = |s: &str| {
        h.call_json(
            "media.stream.start",
            Some(json!({ "streamId": s, "kind": "screenshot" })),
            CallOptions::default(),
        )
    };
    let (a, b) = (id(), id());
    assert!(start(&a).await.get("result").is_some());
    assert!(start(&b).await.get("result").is_some());
    assert_media_error(
        &start(&id()).await,
        "media_stream_active_limit",
        true,
        &json!({ "limit": 2 }),
    );
    // Captures as fast as a client can send them: one is refused for the
    // rate limit (a capture and its commit take a few ms).
    assert!(capture_once(&h, &a, 1, None).await.get("result").is_some());
    let mut frames = 1;
    let refused = loop {
        let r = capture_once(&h, &a, frames + 1, None).await;
        if r.get("error").is_some() {
            break r;
        }
        frames += 1;
        assert!(frames < 100, "no capture was refused for the rate limit");
    };
    let after = refused["error"]["data"]["details"]["retryAfterMs"]
        .as_u64()
        .expect("retryAfterMs");
    assert!((1..=50).contains(&after), "{refused}");
    assert_media_error(
        &refused,
        "media_capture_rate_limited",
        true,
        &json!({ "streamId": a, "retryAfterMs": after }),
    );
    tokio::time::sleep(std::time::Duration::from_millis(after)).await;
    assert!(
        capture_once(&h, &a, frames + 1, None)
            .await
            .get("result")
            .is_some(),
        "admitted once retryAfterMs has passed"
    );
    // Ended streams count toward the Session's eight; an identical start of
    // one of them is still answered.
    for s in [&a, &b] {
        h.ok("media.stream.end", Some(json!({ "streamId": s })))
            .await;
    }
    for _ in 0..6 {
        let s = id();
        assert!(start(&s).await.get("result").is_some());
        h.ok("media.stream.end", Some(json!({ "streamId": s })))
            .await;
    }
    assert_media_error(
        &start(&id()).await,
        "media_stream_session_limit",
        false,
        &json!({ "limit": 8 }),
    );
    assert!(
        start(&a).await.get("result").is_some(),
        "an identical start"
    );
    // A new Session starts with none.
    h.ok("session.end", None).await;
    h.ok("session.start", None).await;
    assert!(start(&id()).await.get("result").is_some());
}

/// A stream holds 1000 frames; the next is refused with
/// `media_stream_frame_limit`, while a retry of the last still answers.
/// (Paced by the rate limit: about 50 s.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_holds_at_most_a_thousand_frames() {
    let h = ClientHost::start(Options::default(), hello())
        .await
        .expect("spawn");
    ready(&h).await;
    let s = id();
    h.ok(
        "media.stream.start",
        Some(json!({ "streamId": s, "kind": "screenshot" })),
    )
    .await;
    let mut last = Value::Null;
    for index in 1..=1000 {
        last = capture(&h, &s, index, None).await;
        assert!(last.get("result").is_some(), "frame {index}: {last}");
    }
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    assert_media_error(
        &capture_once(&h, &s, 1001, None).await,
        "media_stream_frame_limit",
        false,
        &json!({ "limit": 1000 }),
    );
    assert_eq!(capture_once(&h, &s, 1000, None).await, last);
    assert_eq!(
        h.ok("media.stream.end", Some(json!({ "streamId": s })))
            .await["frameCount"],
        1000
    );
}

/// What one host answered to the media script, in a form two hosts can be
/// compared by: each step's error (code, JSON-RPC code, retryable, details
/// with stream ids and times named, not valued) or `ok`, and the event
/// types the Session recorded.
async fn media_transcript(h: &ClientHost) -> Vec<Value> {
    let mut out = Vec::new();
    let shape = |r: &Value| -> Value {
        match r.get("error") {
            None => json!("ok"),
            Some(e) => {
                let mut details = e["data"]["details"].clone();
                if let Some(d) = details.as_object_mut() {
                    for key in ["streamId", "retryAfterMs"] {
                        if d.contains_key(key) {
                            d.insert(key.into(), json!(key));
                        }
                    }
                }
                json!([
                    e["data"]["code"],
                    e["code"],
                    e["data"]["retryable"],
                    details
                ])
            }
        }
    };
    h.ok("device.connect", None).await;
    h.ok("session.start", None).await;
    let start = |s: String| {
        h.call_json(
            "media.stream.start",
            Some(json!({ "streamId": s, "kind": "screenshot" })),
            CallOptions::default(),
        )
    };
    let (a, b) = (id(), id());
    out.push(shape(&start(a.clone()).await));
    out.push(shape(&capture_once(h, &a, 1, None).await));
    out.push(shape(&capture_once(h, &a, 1, None).await));
    // Frames until one is refused for the rate limit.
    let mut frames = 1;
    let refused = loop {
        let r = capture_once(h, &a, frames + 1, None).await;
        if r.get("error").is_some() || frames > 100 {
            break r;
        }
        frames += 1;
    };
    out.push(shape(&refused));
    // Frame indexes relative to the frames captured (which vary).
    let mut skipped = shape(&capture_once(h, &a, frames + 5, None).await);
    for key in ["frameIndex", "expectedFrameIndex"] {
        if let Some(n) = skipped[3][key].as_u64() {
            skipped[3][key] = json!(n - frames);
        }
    }
    out.push(skipped);
    out.push(shape(&capture_once(h, &a, 2, Some(5)).await));
    out.push(shape(&start(b.clone()).await));
    out.push(shape(&start(id()).await));
    for s in [&a, &b] {
        out.push(shape(
            &h.call_json(
                "media.stream.end",
                Some(json!({ "streamId": s })),
                CallOptions::default(),
            )
            .await,
        ));
    }
    out.push(shape(&capture_once(h, &a, frames + 1, None).await));
    let mut types = event_types(h).await;
    // The frames before the refusal, as one pair.
    types.dedup_by(|x, y| (x == "observationCaptured" || x == "mediaFrameCaptured") && x == y);
    let mut pairs = Vec::new();
    for t in types {
        if pairs.len() >= 2
            && t == "mediaFrameCaptured"
            && pairs[pairs.len() - 1] == "observationCaptured"
            && pairs[pairs.len() - 2] == "mediaFrameCaptured"
        {
            pairs.pop();
            continue;
        }
        pairs.push(t);
    }
    out.push(json!(pairs));
    for _ in 0..6 {
        let s = id();
        out.push(shape(&start(s.clone()).await));
        h.ok("media.stream.end", Some(json!({ "streamId": s })))
            .await;
    }
    out.push(shape(&start(id()).await));
    out.push(shape(&start(a.clone()).await));
    out
}

/// Side by side with the protocol's published reference daemon (its path
/// in `DEVICERAIL_REFERENCE_DAEMON`, which `.ci/run` sets when the peer is
/// there): the same media calls through the same official client answer
/// the same errors and record the same event types.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn media_answers_match_the_reference_daemon() {
    let Some(reference) = std::env::var_os("DEVICERAIL_REFERENCE_DAEMON") else {
        println!("reference daemon: skipped (DEVICERAIL_REFERENCE_DAEMON is not set)");
        return;
    };
    let home = tempfile::tempdir().expect("tempdir");
    // It keeps its data under the working directory and HOME: both a
    // scratch directory.
    let config = devicerail_client::SpawnConfig::new(reference, hello())
        .cwd(home.path())
        .env("HOME", home.path())
        .env("DEVICERAIL_ANDROID", "off");
    let theirs = {
        let h = ClientHost::start_config(config)
            .await
            .expect("the reference daemon answers hello");
        media_transcript(&h).await
    };
    let h = ClientHost::start(Options::default(), hello())
        .await
        .expect("spawn");
    let ours = media_transcript(&h).await;
    assert_eq!(
        ours, theirs,
        "this host (left) and the reference daemon (right)"
    );
    println!("reference daemon: {} media answers match", ours.len());
}
