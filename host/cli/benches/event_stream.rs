//! Events per second delivered over the WebSocket event stream to 1 and
//! to 16 subscribers while Actions run, with the real release host and the
//! mock plugin.
//!
//! Run: `cargo bench -p devicerail-host --bench event_stream` (add
//! `-- quick` for a shorter run).

mod support;

use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use support::Host;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;

/// Subscribes to `session` and returns when `last` has been delivered, with
/// the number of events received.
async fn subscriber(endpoint: String, session: Value, last: u64) -> u64 {
    let mut req = endpoint.into_client_request().expect("request");
    req.headers_mut().insert(
        "sec-websocket-protocol",
        HeaderValue::from_static("devicerail.events.v1"),
    );
    let (mut ws, _) = tokio_tungstenite::connect_async(req)
        .await
        .expect("connect");
    let send = |v: Value| Message::text(v.to_string());
    ws.send(send(json!({"jsonrpc":"2.0","id":1,"method":"system.hello","params":{
        "client":{"name":"bench","version":"0"},"protocol":{"ranges":[{"major":1,"minMinor":3,"maxMinor":5}]},
        "features":{"required":["events.stream.v1"]}}})))
    .await
    .expect("hello");
    ws.send(send(
        json!({"jsonrpc":"2.0","id":2,"method":"events.subscribe","params":{"sessionId":session}}),
    ))
    .await
    .expect("subscribe");
    let mut received = 0;
    while let Some(Ok(msg)) = ws.next().await {
        let Message::Text(text) = msg else { continue };
        let v: Value = serde_json::from_str(&text).expect("json");
        if v["method"] == "events.stream.event" {
            received += 1;
            if v["params"]["cursor"]["sequence"].as_u64() >= Some(last) {
                break;
            }
        } else if v["method"] == "events.stream.terminal" {
            panic!("terminal before the end: {v}");
        }
    }
    received
}

fn run(h: &mut Host, rt: &tokio::runtime::Runtime, subscribers: usize, actions: usize) {
    h.call(json!({"jsonrpc":"2.0","id":"s","method":"session.start"}));
    let session =
        h.call(json!({"jsonrpc":"2.0","id":"c","method":"session.current"}))["result"]["sessionId"]
            .clone();
    // sessionStarted + two events per Action.
    let last = 1 + 2 * actions as u64;
    let mut tasks = Vec::new();
    for i in 0..subscribers {
        let open = h.call(
            json!({"jsonrpc":"2.0","id":format!("o{i}"),"method":"events.stream.open",
            "params":{"sessionId":session,"originPolicy":{"kind":"absent"}}}),
        );
        let endpoint = open["result"]["endpoint"]
            .as_str()
            .expect("endpoint")
            .to_owned();
        tasks.push(rt.spawn(subscriber(endpoint, session.clone(), last)));
    }
    std::thread::sleep(Duration::from_millis(300));
    let start = Instant::now();
    h.pipeline(actions, 256, |i| {
        json!({"jsonrpc":"2.0","id":i,"method":"device.execute","params":{
            "id": uuid::Uuid::new_v4().to_string(), "name":"scroll","arguments":{"deltaX":0,"deltaY":1}}})
    });
    let actions_done = start.elapsed();
    let mut total = 0;
    for t in tasks {
        total += rt.block_on(t).expect("subscriber");
    }
    let elapsed = start.elapsed();
    println!(
        "{subscribers:>2} subscriber(s): {actions} actions in {:.2}s; {} events each, {:.0} events/s per subscriber, {:.0} events/s delivered in total",
        actions_done.as_secs_f64(),
        total / subscribers as u64,
        (total / subscribers as u64) as f64 / elapsed.as_secs_f64(),
        total as f64 / elapsed.as_secs_f64()
    );
    h.call(json!({"jsonrpc":"2.0","id":"e","method":"session.end"}));
}

fn main() {
    let quick = std::env::args().any(|a| a == "quick");
    let actions = if quick { 1_000 } else { 10_000 };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let mut h = Host::start(&[
        "events.snapshot.v1",
        "events.stream.v1",
        "request.control.v1",
    ]);
    h.call(json!({"jsonrpc":"2.0","id":"c","method":"device.connect"}));
    run(&mut h, &rt, 1, actions);
    run(&mut h, &rt, 16, actions);
}
