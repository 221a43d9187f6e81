//! Bad input gets a typed error and the host keeps serving: every case is
//! followed by a successful request.

mod support;

use serde_json::{Value, json};
use support::{TestHost, error_code, rpc_code};

/// Sends `raw`, expects one error with `code` (and `id`), then checks the
/// host still answers.
fn expect(h: &mut TestHost, raw: &[u8], code: &str, rpc: i64, id: Value) {
    h.send_raw(raw);
    let r = h.recv();
    assert_eq!(
        error_code(&r).as_deref(),
        Some(code),
        "for {:?}: {r}",
        String::from_utf8_lossy(&raw[..raw.len().min(120)])
    );
    assert_eq!(rpc_code(&r), rpc, "{r}");
    assert_eq!(r["id"], id, "{r}");
    assert_eq!(r["jsonrpc"], "2.0");
    assert!(r.get("result").is_none());
    assert!(
        h.ok("devices.list", None)["devices"].is_array(),
        "the host must keep serving"
    );
}

#[test]
fn envelope_and_framing_errors() {
    let mut h = TestHost::start();
    h.hello();
    expect(&mut h, b"{not json\n", "parse_error", -32700, Value::Null);
    expect(
        &mut h,
        b"\xff\xfe{\"jsonrpc\":\"2.0\"}\n",
        "parse_error",
        -32700,
        Value::Null,
    );
    expect(
        &mut h,
        b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"devices.list\"}]\n",
        "invalid_request",
        -32600,
        Value::Null,
    );
    expect(
        &mut h,
        b"\"just a string\"\n",
        "invalid_request",
        -32600,
        Value::Null,
    );
    expect(
        &mut h,
        b"{\"jsonrpc\":\"2.0\",\"method\":\"devices.list\"}\n",
        "invalid_request",
        -32600,
        Value::Null,
    );
    expect(
        &mut h,
        b"{\"jsonrpc\":\"2.0\",\"id\":-5,\"method\":\"devices.list\"}\n",
        "invalid_request",
        -32600,
        Value::Null,
    );
    expect(
        &mut h,
        b"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"devices.list\"}\n",
        "invalid_request",
        -32600,
        Value::Null,
    );
    expect(
        &mut h,
        b"{\"jsonrpc\":\"2.0\",\"id\":9007199254740992,\"method\":\"devices.list\"}\n",
        "invalid_request",
        -32600,
        Value::Null,
    );
    expect(
        &mut h,
        b"{\"jsonrpc\":\"1.0\",\"id\":\"v\",\"method\":\"devices.list\"}\n",
        "invalid_request",
        -32600,
        Value::Null,
    );
    expect(
        &mut h,
        b"{\"jsonrpc\":\"2.0\",\"id\":\"m\",\"method\":7}\n",
        "invalid_request",
        -32600,
        Value::Null,
    );
    expect(
        &mut h,
        b"{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"devices.list\",\"params\":\"x\"}\n",
        "invalid_request",
        -32600,
        Value::Null,
    );
    expect(
        &mut h,
        b"{\"jsonrpc\":\"2.0\",\"id\":\"p2\",\"method\":\"devices.list\",\"params\":42}\n",
        "invalid_request",
        -32600,
        Value::Null,
    );
    expect(
        &mut h,
        b"{\"jsonrpc\":\"2.0\",\"id\":\"u\",\"method\":\"devices.list\",\"extra\":true}\n",
        "invalid_request",
        -32600,
        Value::Null,
    );
    expect(
        &mut h,
        b"{\"jsonrpc\":\"2.0\",\"id\":\"n\",\"method\":\"no.such.method\"}\n",
        "method_not_found",
        -32601,
        json!("n"),
    );
    expect(
        &mut h,
        b"{\"jsonrpc\":\"2.0\",\"id\":\"t0\",\"method\":\"device.observe\",\"timeoutMs\":0}\n",
        "invalid_request",
        -32600,
        Value::Null,
    );
    expect(&mut h, b"{\"jsonrpc\":\"2.0\",\"id\":\"t1\",\"method\":\"device.observe\",\"timeoutMs\":9007199254740992}\n", "invalid_request", -32600, Value::Null);
    // params, when present, is an object or an array: null is refused.
    expect(
        &mut h,
        b"{\"jsonrpc\":\"2.0\",\"id\":\"pn\",\"method\":\"devices.list\",\"params\":null}\n",
        "invalid_request",
        -32600,
        Value::Null,
    );
    for t in ["null", "-1", "1.5"] {
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":\"tn\",\"method\":\"device.observe\",\"timeoutMs\":{t}}}\n"
        );
        expect(
            &mut h,
            line.as_bytes(),
            "invalid_request",
            -32600,
            Value::Null,
        );
    }
    expect(
        &mut h,
        b"{\"jsonrpc\":\"2.0\",\"id\":\"t2\",\"method\":\"device.observe\",\"timeoutMs\":\"5\"}\n",
        "invalid_request",
        -32600,
        Value::Null,
    );
}

#[test]
fn params_errors() {
    let mut h = TestHost::start();
    h.hello();
    let line = |id: &str, method: &str, params: Value| {
        let mut v = serde_json::to_vec(
            &json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }),
        )
        .expect("encode");
        v.push(b'\n');
        v
    };
    let cases: Vec<(&str, &str, Value)> = vec![
        ("a", "devices.list", json!({ "unexpected": 1 })),
        ("b", "devices.list", json!([1])),
        ("c", "device.select", json!({})),
        ("d", "device.select", json!({ "deviceId": 7 })),
        (
            "e",
            "device.select",
            json!({ "deviceId": "mock-1", "extra": 1 }),
        ),
        ("f", "events.list", json!({ "limit": 0 })),
        ("g", "events.list", json!({ "limit": 1001 })),
        ("h", "events.list", json!({ "afterSequence": 0 })),
        ("i", "events.list", json!({ "sessionId": "not-a-uuid" })),
        ("j", "session.end", json!({ "outcome": "exploded" })),
        ("k", "request.cancel", json!({ "requestId": -1 })),
        ("l", "device.execute", json!({ "id": "x", "name": "tap" })),
        ("m", "device.execute", json!({ "name": "tap" })),
        (
            "n",
            "device.execute",
            json!({ "id": "8b1c4f2e-0d8a-4c55-9e43-5f9d2b7a6c10", "name": "tap", "actionTimeoutMs": 0 }),
        ),
        ("o", "device.execute", json!(["positional"])),
        (
            "p",
            "verdict.record",
            json!({ "verdict": { "status": "pass", "summary": "" } }),
        ),
        ("q", "session.export", json!({ "afterSequence": 3 })),
        ("r", "ui.snapshot.get", json!({ "observationId": 12 })),
    ];
    for (id, method, params) in cases {
        expect(
            &mut h,
            &line(id, method, params),
            "invalid_params",
            -32602,
            json!(id),
        );
    }
}

#[test]
fn oversized_frames_are_refused_and_the_next_line_is_served() {
    let mut h = TestHost::start();
    h.hello();
    let mut big =
        br#"{"jsonrpc":"2.0","id":"big","method":"devices.list","params":{"pad":""#.to_vec();
    big.extend(std::iter::repeat_n(b'x', 1024 * 1024 + 10));
    big.extend_from_slice(b"\"}}\n");
    h.send_raw(&big);
    let r = h.recv();
    assert_eq!(error_code(&r).as_deref(), Some("invalid_request"), "{r}");
    assert_eq!(r["id"], Value::Null);
    assert_eq!(r["error"]["data"]["details"], Value::Null);
    assert!(h.ok("devices.list", None)["devices"].is_array());
    // A frame of exactly 1 MiB is still accepted (and answered).
    let prefix = br#"{"jsonrpc":"2.0","id":"edge","method":"no.such","params":{"pad":""#;
    let suffix = br#""}}"#;
    let mut edge = prefix.to_vec();
    edge.extend(std::iter::repeat_n(
        b'y',
        1024 * 1024 - prefix.len() - suffix.len(),
    ));
    edge.extend_from_slice(suffix);
    assert_eq!(edge.len(), 1024 * 1024);
    edge.push(b'\n');
    h.send_raw(&edge);
    let r = h.recv();
    assert_eq!(r["id"], "edge");
    assert_eq!(error_code(&r).as_deref(), Some("method_not_found"));
}

#[test]
fn blank_lines_are_ignored_and_crlf_is_accepted() {
    let mut h = TestHost::start();
    h.send_raw(b"\n\n   \n");
    h.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":\"crlf\",\"method\":\"system.hello\",\"params\":{\"client\":{\"name\":\"c\",\"version\":\"1\"},\"protocol\":{\"ranges\":[{\"major\":1,\"minMinor\":0,\"maxMinor\":5}]}}}\r\n");
    let r = h.recv();
    assert_eq!(r["id"], "crlf");
    assert!(r["result"]["connectionId"].is_string(), "{r}");
    h.send_raw(b"\r\n");
    assert!(h.ok("devices.list", None)["devices"].is_array());
}

#[test]
fn string_and_numeric_ids_are_echoed() {
    let mut h = TestHost::start();
    h.hello();
    for id in [
        json!("abc"),
        json!(0),
        json!(9007199254740991_u64),
        json!(""),
    ] {
        h.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "devices.list" }));
        let r = h.recv();
        assert_eq!(r["id"], id);
        assert!(r["result"].is_object());
    }
}
