//! The loopback WebSocket event stream, end to end: a real
//! tokio-tungstenite client subscribes, reads, disconnects, resumes from
//! its cursor; every refusal path; the slow-consumer terminal. The control
//! connection goes through the official Rust client; the stream socket is
//! spoken raw on purpose, to send what no client would (wrong Origin,
//! missing subprotocol, calls before hello, foreign cursors).

mod support;

use support::client::Launch as _;

use std::time::Duration;

use devicerail_client::CallOptions;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use support::client::{ClientHost, action, hello, ready};
use support::{Options, error_code};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

const WAIT: Duration = Duration::from_secs(20);

async fn open(h: &ClientHost, session: &Value, origin: Value) -> String {
    open_full(h, session, origin).await.0
}

/// Opens an endpoint; returns it with the stream epoch.
async fn open_full(h: &ClientHost, session: &Value, origin: Value) -> (String, String) {
    let r = h
        .ok(
            "events.stream.open",
            Some(json!({ "sessionId": session, "originPolicy": origin })),
        )
        .await;
    let endpoint = r["endpoint"].as_str().expect("endpoint").to_owned();
    assert!(endpoint.starts_with("ws://127.0.0.1:"), "{endpoint}");
    let token = endpoint.rsplit('/').next().expect("token");
    assert_eq!(token.len(), 64);
    assert!(r["expiresAtMs"].as_u64().is_some());
    (
        endpoint,
        r["streamEpoch"].as_str().expect("epoch").to_owned(),
    )
}

#[derive(Default, Clone)]
struct Dial {
    origin: Option<&'static str>,
    no_subprotocol: bool,
    host: Option<&'static str>,
}

async fn dial(endpoint: &str, d: Dial) -> Result<Ws, String> {
    let mut req = endpoint.into_client_request().map_err(|e| e.to_string())?;
    if !d.no_subprotocol {
        req.headers_mut().insert(
            "sec-websocket-protocol",
            HeaderValue::from_static("devicerail.events.v1"),
        );
    }
    if let Some(o) = d.origin {
        req.headers_mut()
            .insert("origin", HeaderValue::from_static(o));
    }
    if let Some(h) = d.host {
        req.headers_mut()
            .insert("host", HeaderValue::from_static(h));
    }
    match tokio_tungstenite::connect_async(req).await {
        Ok((ws, resp)) => {
            assert_eq!(
                resp.headers()
                    .get("sec-websocket-protocol")
                    .and_then(|v| v.to_str().ok()),
                Some("devicerail.events.v1")
            );
            Ok(ws)
        }
        Err(tokio_tungstenite::tungstenite::Error::Http(resp)) => {
            Err(format!("http {}", resp.status().as_u16()))
        }
        Err(e) => Err(e.to_string()),
    }
}

async fn send(ws: &mut Ws, v: Value) {
    ws.send(Message::text(v.to_string())).await.expect("send");
}

/// The next message, or the close code (`None` without a close frame).
async fn next_or_close(ws: &mut Ws) -> Result<Value, Option<u16>> {
    loop {
        match tokio::time::timeout(WAIT, ws.next())
            .await
            .expect("a message within the wait")
        {
            Some(Ok(Message::Text(t))) => return Ok(serde_json::from_str(&t).expect("json")),
            Some(Ok(Message::Close(frame))) => return Err(frame.map(|f| u16::from(f.code))),
            Some(Ok(_)) => continue,
            Some(Err(e)) => panic!("socket error: {e}"),
            None => return Err(None),
        }
    }
}

/// The next message; `None` after a normal close.
async fn next(ws: &mut Ws) -> Option<Value> {
    match next_or_close(ws).await {
        Ok(v) => Some(v),
        Err(code) => {
            if let Some(code) = code {
                assert_eq!(code, 1000, "a normal close");
            }
            None
        }
    }
}

/// The reply to a refused message, then the close code that follows it.
async fn refused(ws: &mut Ws) -> (Value, Option<u16>) {
    let reply = next_or_close(ws).await.expect("a reply before the close");
    let close = next_or_close(ws).await.expect_err("the socket closes");
    (reply, close)
}

async fn ws_hello(ws: &mut Ws) -> Value {
    send(
        ws,
        json!({ "jsonrpc": "2.0", "id": "ws-hello", "method": "system.hello", "params": {
        "client": { "name": "stream-test", "version": "1" },
        "protocol": { "ranges": [{ "major": 1, "minMinor": 3, "maxMinor": 5 }] },
        "features": { "required": ["events.stream.v1"], "optional": ["events.snapshot.v1"] } } }),
    )
    .await;
    next(ws).await.expect("hello response")
}

async fn subscribe(ws: &mut Ws, session: &Value, after: Option<Value>) -> Value {
    let mut params = json!({ "sessionId": session });
    if let Some(c) = after {
        params["afterCursor"] = c;
    }
    send(
        ws,
        json!({ "jsonrpc": "2.0", "id": "sub", "method": "events.subscribe", "params": params }),
    )
    .await;
    next(ws).await.expect("subscribe response")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribe_receive_disconnect_resume() {
    let h = ClientHost::started().await;
    let session = json!(ready(&h).await);
    for _ in 0..3 {
        h.ok("device.observe", None).await;
    }
    let endpoint = open(&h, &session, json!({ "kind": "absent" })).await;
    let mut seen: Vec<u64> = Vec::new();
    let mut last_cursor = Value::Null;
    {
        let mut ws = dial(&endpoint, Dial::default()).await.expect("connect");
        let hello = ws_hello(&mut ws).await;
        assert_eq!(
            hello["result"]["transport"],
            json!({ "kind": "webSocket", "framing": "jsonMessage" }),
            "{hello}"
        );
        assert_eq!(
            hello["result"]["features"]["enabled"],
            json!(["events.stream.v1"])
        );
        let sub = subscribe(&mut ws, &session, None).await;
        let result = &sub["result"];
        assert_eq!(result["sessionId"], session);
        assert_eq!(result["sessionState"], "active");
        assert_eq!(result["replayThrough"]["sequence"], 4, "{sub}");
        let subscription = result["subscriptionId"].clone();
        for expected in 1..=4u64 {
            let n = next(&mut ws).await.expect("event");
            assert_eq!(n["method"], "events.stream.event");
            assert_eq!(n["params"]["subscriptionId"], subscription);
            assert_eq!(n["params"]["cursor"]["sequence"], expected);
            assert_eq!(n["params"]["event"]["sequence"], expected);
            assert_eq!(
                n["params"]["cursor"]["streamEpoch"],
                result["replayThrough"]["streamEpoch"]
            );
            seen.push(expected);
            last_cursor = n["params"]["cursor"].clone();
        }
        // The conversation is hello, then one subscription: anything more
        // closes the socket (policy).
        send(
            &mut ws,
            json!({ "jsonrpc": "2.0", "id": "x", "method": "devices.list" }),
        )
        .await;
        assert_eq!(next_or_close(&mut ws).await.err(), Some(Some(1008)));
    };
    // Live events after the replay.
    h.ok("device.observe", None).await;
    // Events recorded while disconnected are not lost.
    for _ in 0..3 {
        h.ok(
            "device.execute",
            Some(action("scroll", json!({ "deltaX": 0, "deltaY": 10 }))),
        )
        .await;
    }
    let endpoint = open(&h, &session, json!({ "kind": "absent" })).await;
    {
        let mut ws = dial(&endpoint, Dial::default()).await.expect("connect");
        ws_hello(&mut ws).await;
        let sub = subscribe(&mut ws, &session, Some(last_cursor.clone())).await;
        let through = sub["result"]["replayThrough"]["sequence"]
            .as_u64()
            .expect("seq");
        assert_eq!(through, 11);
        for expected in 5..=through {
            let n = next(&mut ws).await.expect("event");
            assert_eq!(
                n["params"]["cursor"]["sequence"], expected,
                "no gap, no repeat"
            );
            seen.push(expected);
        }
        seen.dedup();
        assert_eq!(seen, (1..=11).collect::<Vec<_>>());
    };
    // Ending the session delivers sessionEnded, then the terminal, then a
    // normal close.
    let endpoint = open(&h, &session, json!({ "kind": "absent" })).await;
    {
        let mut ws = dial(&endpoint, Dial::default()).await.expect("connect");
        ws_hello(&mut ws).await;
        let sub = subscribe(&mut ws, &session, None).await;
        assert!(sub["result"].is_object());
        for _ in 1..=11 {
            next(&mut ws).await.expect("replayed event");
        }
        h.ok("session.end", Some(json!({}))).await;
        let ended = next(&mut ws).await.expect("sessionEnded event");
        assert_eq!(ended["params"]["event"]["payload"]["type"], "sessionEnded");
        let terminal = next(&mut ws).await.expect("terminal");
        assert_eq!(terminal["method"], "events.stream.terminal");
        assert_eq!(
            terminal["params"]["termination"],
            json!({ "reason": "sessionEnded" })
        );
        assert_eq!(terminal["params"]["lastEmittedCursor"]["sequence"], 12);
        assert_eq!(terminal["params"]["sessionId"], session);
        assert!(next(&mut ws).await.is_none(), "closed after the terminal");
    };
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals() {
    let h = ClientHost::start(
        Options {
            env: vec![("DEVICERAIL_EVENT_STREAM_TTL_MS".into(), "400".into())],
            ..Options::default()
        },
        hello(),
    )
    .await
    .expect("the host starts");
    let session = json!(ready(&h).await);
    {
        let ep = open(&h, &session, json!({ "kind": "absent" })).await;
        assert_eq!(
            dial(
                &ep,
                Dial {
                    host: Some("localhost:1"),
                    ..Dial::default()
                }
            )
            .await
            .err()
            .as_deref(),
            Some("http 403")
        );
        assert_eq!(
            dial(
                &ep,
                Dial {
                    origin: Some("https://evil.example"),
                    ..Dial::default()
                }
            )
            .await
            .err()
            .as_deref(),
            Some("http 403")
        );
        assert_eq!(
            dial(
                &ep,
                Dial {
                    no_subprotocol: true,
                    ..Dial::default()
                }
            )
            .await
            .err()
            .as_deref(),
            Some("http 403")
        );
        // Refused attempts do not spend it; a good one does, once.
        let ws = dial(&ep, Dial::default()).await.expect("first use");
        drop(ws);
        assert_eq!(
            dial(&ep, Dial::default()).await.err().as_deref(),
            Some("http 403"),
            "single use"
        );
        let bogus = format!(
            "{}/v/{}",
            ep.rsplit_once("/v/").expect("path").0,
            "0".repeat(64)
        );
        assert_eq!(
            dial(&bogus, Dial::default()).await.err().as_deref(),
            Some("http 403")
        );
        // Expired.
        let ep = open(&h, &session, json!({ "kind": "absent" })).await;
        tokio::time::sleep(Duration::from_millis(600)).await;
        assert_eq!(
            dial(&ep, Dial::default()).await.err().as_deref(),
            Some("http 403"),
            "expired"
        );
        // An exact Origin policy needs exactly that Origin.
        let ep = open(
            &h,
            &session,
            json!({ "kind": "exact", "origin": "http://127.0.0.1:3000" }),
        )
        .await;
        assert_eq!(
            dial(&ep, Dial::default()).await.err().as_deref(),
            Some("http 403"),
            "Origin missing"
        );
        let ep2 = open(
            &h,
            &session,
            json!({ "kind": "exact", "origin": "http://127.0.0.1:3000" }),
        )
        .await;
        assert!(
            dial(
                &ep2,
                Dial {
                    origin: Some("http://127.0.0.1:3000"),
                    ..Dial::default()
                }
            )
            .await
            .is_ok()
        );
        let _ = ep;
    };
    assert_eq!(h.err("events.stream.open", Some(json!({ "sessionId": "00000000-0000-4000-8000-000000000000", "originPolicy": { "kind": "absent" } }))).await, "session_not_found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_cursors_and_protocol_errors_on_the_socket() {
    let h = ClientHost::started().await;
    let a = json!(ready(&h).await);
    h.ok("session.end", Some(json!({}))).await;
    let b = h.ok("session.start", None).await["id"].clone();
    // Before hello: handshake_required (-32601 on the stream), then a
    // protocol-error close.
    let (ep, epoch) = open_full(&h, &a, json!({ "kind": "absent" })).await;
    {
        let mut ws = dial(&ep, Dial::default()).await.expect("connect");
        send(&mut ws, json!({ "jsonrpc": "2.0", "id": 1, "method": "events.subscribe", "params": { "sessionId": a } })).await;
        let (r, close) = refused(&mut ws).await;
        assert_eq!(error_code(&r).as_deref(), Some("handshake_required"), "{r}");
        assert_eq!(r["error"]["code"], -32601);
        assert_eq!(r["error"]["data"]["retryable"], false);
        assert_eq!(
            r["error"]["data"]["details"],
            json!({ "requiredMethod": "system.hello" })
        );
        assert_eq!(close, Some(1002));
    };
    // A hello below 1.3: protocol_version_incompatible without a reason.
    let ep = open(&h, &a, json!({ "kind": "absent" })).await;
    {
        let mut ws = dial(&ep, Dial::default()).await.expect("connect");
        send(&mut ws, json!({ "jsonrpc": "2.0", "id": 2, "method": "system.hello", "params": {
            "client": { "name": "x", "version": "1" }, "protocol": { "ranges": [{ "major": 1, "minMinor": 0, "maxMinor": 2 }] },
            "features": { "required": ["events.stream.v1"] } } })).await;
        let (r, close) = refused(&mut ws).await;
        assert_eq!(
            error_code(&r).as_deref(),
            Some("protocol_version_incompatible"),
            "{r}"
        );
        assert!(r["error"]["data"]["details"].get("reason").is_none(), "{r}");
        assert_eq!(close, Some(1002));
    };
    // A hello that does not offer events.stream.v1.
    let ep = open(&h, &a, json!({ "kind": "absent" })).await;
    {
        let mut ws = dial(&ep, Dial::default()).await.expect("connect");
        send(&mut ws, json!({ "jsonrpc": "2.0", "id": 3, "method": "system.hello", "params": {
            "client": { "name": "x", "version": "1" }, "protocol": { "ranges": [{ "major": 1, "minMinor": 3, "maxMinor": 5 }] } } })).await;
        let (r, close) = refused(&mut ws).await;
        assert_eq!(
            error_code(&r).as_deref(),
            Some("required_feature_unsupported"),
            "{r}"
        );
        assert_eq!(r["error"]["data"]["retryable"], false);
        assert_eq!(
            r["error"]["data"]["details"],
            json!({ "requiredFeature": "events.stream.v1" })
        );
        assert_eq!(close, Some(1002));
    };
    // Subscription failures answer and close with 1008.
    let bad = |session: &Value, epoch: &str, seq: u64| json!({ "streamEpoch": epoch, "sessionId": session, "sequence": seq });
    let cases: Vec<(Value, Option<Value>, &str)> = vec![
        (b.clone(), None, "stream_cursor_session_mismatch"),
        (
            a.clone(),
            Some(bad(&b, &epoch, 1)),
            "stream_cursor_session_mismatch",
        ),
        (
            a.clone(),
            Some(bad(&a, "11111111-1111-4111-8111-111111111111", 1)),
            "stream_cursor_epoch_mismatch",
        ),
        (a.clone(), Some(bad(&a, &epoch, 99)), "stream_cursor_ahead"),
    ];
    for (session, cursor, code) in cases {
        let ep = open(&h, &a, json!({ "kind": "absent" })).await;
        {
            let mut ws = dial(&ep, Dial::default()).await.expect("connect");
            ws_hello(&mut ws).await;
            let mut params = json!({ "sessionId": session });
            if let Some(c) = cursor {
                params["afterCursor"] = c;
            }
            send(&mut ws, json!({ "jsonrpc": "2.0", "id": "sub", "method": "events.subscribe", "params": params })).await;
            let (r, close) = refused(&mut ws).await;
            assert_eq!(error_code(&r).as_deref(), Some(code), "{r}");
            assert_eq!(r["error"]["code"], -32013);
            if code == "stream_cursor_epoch_mismatch" {
                assert_eq!(r["error"]["data"]["retryable"], true);
            }
            if code == "stream_cursor_ahead" {
                assert_eq!(
                    r["error"]["data"]["details"],
                    json!({ "afterSequence": 99, "lastSequence": 2 })
                );
            }
            assert_eq!(close, Some(1008));
        };
    }
    // A valid cursor: the ended session replays the rest and ends; the
    // terminal names only what this socket sent.
    let ep = open(&h, &a, json!({ "kind": "absent" })).await;
    {
        let mut ws = dial(&ep, Dial::default()).await.expect("connect");
        ws_hello(&mut ws).await;
        let r = subscribe(&mut ws, &a, Some(bad(&a, &epoch, 1))).await;
        assert_eq!(r["result"]["sessionState"], "ended");
        let e = next(&mut ws).await.expect("event 2");
        assert_eq!(e["params"]["cursor"]["sequence"], 2);
        let t = next(&mut ws).await.expect("terminal");
        assert_eq!(t["params"]["termination"]["reason"], "sessionEnded");
        assert_eq!(t["params"]["lastEmittedCursor"]["sequence"], 2);
    };
    // Resuming at the end sends nothing, so the terminal has no cursor.
    let ep = open(&h, &a, json!({ "kind": "absent" })).await;
    {
        let mut ws = dial(&ep, Dial::default()).await.expect("connect");
        ws_hello(&mut ws).await;
        let r = subscribe(&mut ws, &a, Some(bad(&a, &epoch, 2))).await;
        assert_eq!(r["result"]["sessionState"], "ended");
        let t = next(&mut ws).await.expect("terminal");
        assert_eq!(t["method"], "events.stream.terminal", "{t}");
        assert!(t["params"]["lastEmittedCursor"].is_null(), "{t}");
    };
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_consumer_gets_a_typed_terminal() {
    let h = ClientHost::started().await;
    let session = json!(ready(&h).await);
    let ep = open(&h, &session, json!({ "kind": "absent" })).await;
    let mut ws = {
        let mut ws = dial(&ep, Dial::default()).await.expect("connect");
        ws_hello(&mut ws).await;
        assert!(subscribe(&mut ws, &session, None).await["result"].is_object());
        ws
    };
    // Stop reading while thousands of events are recorded.
    // (In batches the client allows: 240 pending requests at most.)
    for _ in 0..20 {
        let calls: Vec<_> = (0..200)
            .map(|_| h.request("device.observe", None, CallOptions::default()))
            .collect();
        for call in calls {
            assert!(h.response(call).await.get("result").is_some());
        }
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    {
        let mut last = 0u64;
        loop {
            let Some(m) = next(&mut ws).await else {
                panic!("closed without a terminal")
            };
            if m["method"] == "events.stream.event" {
                let seq = m["params"]["cursor"]["sequence"].as_u64().expect("seq");
                assert_eq!(seq, last + 1, "contiguous");
                last = seq;
                continue;
            }
            assert_eq!(m["method"], "events.stream.terminal");
            let t = &m["params"]["termination"];
            assert_eq!(t["reason"], "slowConsumer", "{m}");
            assert_eq!(t["error"]["code"], "stream_slow_consumer");
            assert_eq!(m["params"]["lastEmittedCursor"]["sequence"], last);
            assert!(last < 4001, "the stream stopped before the end of the log");
            break;
        }
    };
}

/// Hundreds of connections that never send their upgrade (a local process
/// trying to deny others the stream) cannot keep the token holder out: it
/// gets `101` within a second and its events, while the idle peers keep
/// reconnecting as they are dropped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_never_block_the_token_holder() {
    let h = ClientHost::started().await;
    let session = json!(ready(&h).await);
    h.ok("device.observe", None).await;
    let endpoint = open(&h, &session, json!({ "kind": "absent" })).await;
    let addr = endpoint
        .trim_start_matches("ws://")
        .split('/')
        .next()
        .expect("addr")
        .to_owned();
    // 256 idle peers, and a process that reopens each one the host drops.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut holders = Vec::new();
    for _ in 0..256 {
        let addr = addr.clone();
        let stop = stop.clone();
        holders.push(tokio::spawn(async move {
            while !stop.load(std::sync::atomic::Ordering::Acquire) {
                let Ok(mut s) = tokio::net::TcpStream::connect(&addr).await else {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                };
                // Hold it, sending nothing, until the host closes it.
                let mut buf = [0u8; 16];
                let _ = tokio::time::timeout(
                    Duration::from_secs(30),
                    tokio::io::AsyncReadExt::read(&mut s, &mut buf),
                )
                .await;
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut upgrades = Vec::new();
    for _ in 0..5 {
        let endpoint = open(&h, &session, json!({ "kind": "absent" })).await;
        let started = std::time::Instant::now();
        let mut ws = tokio::time::timeout(Duration::from_secs(1), dial(&endpoint, Dial::default()))
            .await
            .expect("the upgrade answers within 1 s")
            .expect("101 Switching Protocols");
        upgrades.push(started.elapsed());
        ws_hello(&mut ws).await;
        let sub = subscribe(&mut ws, &session, None).await;
        assert_eq!(sub["result"]["sessionId"], session, "{sub}");
        let first = next(&mut ws).await.expect("an event");
        assert_eq!(first["method"], "events.stream.event");
        assert_eq!(first["params"]["event"]["sequence"], 1);
    }
    stop.store(true, std::sync::atomic::Ordering::Release);
    for t in holders {
        t.abort();
    }
    println!(
        "hostile: with 256 idle stream connections (reopened when dropped), 5/5 token upgrades answered 101 in {upgrades:?}"
    );
}
