//! Negative (and matching positive) cases for every bound the wire types
//! enforce. Each case is decided by the Rust type and, where the bound is
//! part of the published schema, by the schema file in `schema/v1/` too:
//! both must agree with the expected verdict.

use std::collections::HashMap;
use std::path::PathBuf;

use devicerail_host_protocol::methods::*;
use devicerail_host_protocol::*;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// Collects case verdicts so one test reports every mismatch at once.
struct Cases {
    name: &'static str,
    checked: usize,
    failed: usize,
    failures: Vec<String>,
    validators: HashMap<&'static str, jsonschema::Validator>,
}

impl Cases {
    fn new(name: &'static str) -> Self {
        Self {
            name,
            checked: 0,
            failed: 0,
            failures: Vec::new(),
            validators: HashMap::new(),
        }
    }

    fn schema_path(stem: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../schema/v1")
            .join(format!("{stem}.schema.json"))
    }

    fn schema_verdict(&mut self, stem: &'static str, value: &Value) -> bool {
        let validator = self.validators.entry(stem).or_insert_with(|| {
            let path = Self::schema_path(stem);
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let schema: Value =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            jsonschema::options()
                .should_validate_formats(true)
                .build(&schema)
                .unwrap_or_else(|e| panic!("{stem}: {e}"))
        });
        validator.is_valid(value)
    }

    fn case<T: DeserializeOwned>(
        &mut self,
        what: &str,
        stem: &'static str,
        value: Value,
        expect_ok: bool,
    ) {
        self.checked += 1;
        let before = self.failures.len();
        let expected = if expect_ok { "accept" } else { "refuse" };
        if let Err(e) = serde_json::from_value::<T>(value.clone()).map(drop) {
            if expect_ok {
                self.failures
                    .push(format!("{what}: the type should {expected} {value}: {e}"));
            }
        } else if !expect_ok {
            self.failures.push(format!(
                "{what}: the type should {expected} {value} ({})",
                std::any::type_name::<T>()
            ));
        }
        if self.schema_verdict(stem, &value) != expect_ok {
            self.failures.push(format!(
                "{what}: {stem}.schema.json should {expected} {value}"
            ));
        }
        if self.failures.len() > before {
            self.failed += 1;
        }
    }

    /// The type (and schema) refuse `value`.
    fn refuse<T: DeserializeOwned>(&mut self, what: &str, stem: &'static str, value: Value) {
        self.case::<T>(what, stem, value, false);
    }

    /// The type refuses `value`, which the schema cannot tell apart from
    /// a valid one (JSON Schema treats `1.0` as the integer 1).
    fn refuse_type_only<T: DeserializeOwned>(&mut self, what: &str, value: Value) {
        self.checked += 1;
        if serde_json::from_value::<T>(value.clone()).is_ok() {
            self.failed += 1;
            self.failures
                .push(format!("{what}: the type should refuse {value}"));
        }
    }

    /// The type (and schema) accept `value`.
    fn accept<T: DeserializeOwned>(&mut self, what: &str, stem: &'static str, value: Value) {
        self.case::<T>(what, stem, value, true);
    }

    fn finish(self) {
        println!(
            "bounds {}: {}/{} cases agree (type and schema)",
            self.name,
            self.checked - self.failed,
            self.checked
        );
        assert!(self.failures.is_empty(), "{}", self.failures.join("\n"));
    }
}

/// `base` with `value` set at the `/`-separated `path`.
fn with(base: &Value, path: &str, value: Value) -> Value {
    let mut out = base.clone();
    let pointer = format!("/{path}");
    let (parent, key) = pointer.rsplit_once('/').unwrap_or_default();
    match out.pointer_mut(parent) {
        Some(Value::Object(map)) => {
            map.insert(key.to_owned(), value);
        }
        Some(Value::Array(items)) => {
            let i: usize = key.parse().unwrap_or_default();
            items[i] = value;
        }
        _ => panic!("no object at {parent}"),
    }
    out
}

/// `base` without the member at `path`.
fn without(base: &Value, path: &str) -> Value {
    let mut out = base.clone();
    let pointer = format!("/{path}");
    let (parent, key) = pointer.rsplit_once('/').unwrap_or_default();
    if let Some(Value::Object(map)) = out.pointer_mut(parent) {
        map.remove(key);
    }
    out
}

fn chars(c: char, n: usize) -> String {
    std::iter::repeat_n(c, n).collect()
}

const SESSION: &str = "0195945c-7a10-7c3e-9d2b-3f6f0b8f4a21";
const OBSERVATION: &str = "0195945c-7ec0-7a51-8f0e-1b2c3d4e5f60";
const CALL: &str = "6f1d2c3b-4a59-4e68-9b7a-0c1d2e3f4a5b";
const HEX64: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

fn asset() -> Value {
    json!({
        "id": format!("sha256:{HEX64}"),
        "mediaType": "image/png",
        "uri": format!("devicerail://assets/sha256/{HEX64}"),
        "sha256": HEX64
    })
}

fn context() -> Value {
    json!({ "contextKind": "native", "contextId": "mock-app", "documentEpoch": "mock-epoch-1" })
}

fn ui_node() -> Value {
    json!({
        "stableNodeId": "sign-in", "parentStableNodeId": null, "role": "button",
        "name": "Sign in", "value": null, "identifier": "sign-in", "text": "Sign in",
        "bounds": { "x": 60.0, "y": 580.0, "width": 600.0, "height": 100.0 },
        "enabled": true, "hittable": true
    })
}

#[test]
fn rpc_id() {
    let mut c = Cases::new("rpc id");
    c.accept::<RpcId>("id 0", "rpc-id", json!(0));
    c.accept::<RpcId>("id 2^53-1", "rpc-id", json!(MAX_SAFE_INTEGER));
    c.accept::<RpcId>("string id", "rpc-id", json!("req-7"));
    c.accept::<RpcId>("empty string id", "rpc-id", json!(""));
    c.refuse::<RpcId>("negative id", "rpc-id", json!(-1));
    c.refuse::<RpcId>("float id", "rpc-id", json!(2.5));
    c.refuse::<RpcId>("id 2^53", "rpc-id", json!(MAX_SAFE_INTEGER + 1));
    c.refuse::<RpcId>("id u64::MAX", "rpc-id", json!(u64::MAX));
    c.refuse::<RpcId>("null id", "rpc-id", Value::Null);
    c.refuse::<RpcId>("bool id", "rpc-id", json!(true));
    c.refuse::<RpcId>("object id", "rpc-id", json!({}));
    c.refuse::<RpcId>("array id", "rpc-id", json!([1]));

    let request = json!({ "jsonrpc": "2.0", "id": 1, "method": "session.start" });
    c.accept::<RpcRequest>("request", "rpc-request", request.clone());
    c.accept::<SessionStartRequest>("typed request", "session-start-request", request.clone());
    for (what, id) in [
        ("negative", json!(-3)),
        ("float", json!(1.5)),
        ("too big", json!(MAX_SAFE_INTEGER + 1)),
        ("null", Value::Null),
        ("bool", json!(false)),
    ] {
        let bad = with(&request, "id", id);
        c.refuse::<RpcRequest>(
            &format!("request with {what} id"),
            "rpc-request",
            bad.clone(),
        );
        c.refuse::<SessionStartRequest>(
            &format!("typed request with {what} id"),
            "session-start-request",
            bad,
        );
    }
    c.refuse_type_only::<RpcId>("id 1.0", json!(1.0));
    c.refuse_type_only::<RpcRequest>("request with id 1.0", with(&request, "id", json!(1.0)));
    c.refuse_type_only::<RequestTimeoutMs>("timeout 1000.0", json!(1000.0));
    c.refuse::<RpcRequest>("request without id", "rpc-request", without(&request, "id"));
    c.refuse::<RpcRequest>(
        "request with jsonrpc 1.0",
        "rpc-request",
        with(&request, "jsonrpc", json!("1.0")),
    );

    let cancel = json!({ "requestId": 12 });
    c.accept::<RequestCancelParams>("cancel target", "request-cancel-params", cancel.clone());
    c.refuse::<RequestCancelParams>(
        "cancel target -1",
        "request-cancel-params",
        with(&cancel, "requestId", json!(-1)),
    );
    c.refuse::<RequestCancelParams>(
        "cancel target 1.5",
        "request-cancel-params",
        with(&cancel, "requestId", json!(1.5)),
    );
    c.finish();
}

#[test]
fn timeouts() {
    let mut c = Cases::new("timeouts");
    c.accept::<RequestTimeoutMs>("1 ms", "request-timeout-ms", json!(1));
    c.accept::<RequestTimeoutMs>("2^53-1 ms", "request-timeout-ms", json!(MAX_SAFE_INTEGER));
    for (what, v) in [
        ("0", json!(0)),
        ("negative", json!(-1000)),
        ("2^53", json!(MAX_SAFE_INTEGER + 1)),
        ("string", json!("1000")),
        ("float", json!(1000.5)),
        ("null", Value::Null),
    ] {
        c.refuse::<RequestTimeoutMs>(&format!("timeout {what}"), "request-timeout-ms", v);
    }

    let execute = json!({
        "jsonrpc": "2.0", "id": 9, "method": "device.execute", "timeoutMs": 20000,
        "params": { "id": CALL, "name": "tap", "arguments": { "x": 1, "y": 2 }, "actionTimeoutMs": 8000 }
    });
    c.accept::<DeviceExecuteRequest>("execute", "device-execute-request", execute.clone());
    c.accept::<RpcRequest>("execute envelope", "rpc-request", execute.clone());
    for (what, v) in [
        ("0", json!(0)),
        ("negative", json!(-1)),
        ("too big", json!(MAX_SAFE_INTEGER + 1)),
        ("string", json!("20000")),
    ] {
        c.refuse::<DeviceExecuteRequest>(
            &format!("timeoutMs {what}"),
            "device-execute-request",
            with(&execute, "timeoutMs", v.clone()),
        );
        c.refuse::<RpcRequest>(
            &format!("envelope timeoutMs {what}"),
            "rpc-request",
            with(&execute, "timeoutMs", v.clone()),
        );
        c.refuse::<DeviceExecuteRequest>(
            &format!("actionTimeoutMs {what}"),
            "device-execute-request",
            with(&execute, "params/actionTimeoutMs", v.clone()),
        );
        c.refuse::<DeviceExecuteParams>(
            &format!("params actionTimeoutMs {what}"),
            "device-execute-params",
            with(&execute["params"], "actionTimeoutMs", v),
        );
    }
    // Methods without request deadlines have no `timeoutMs` member.
    let start = json!({ "jsonrpc": "2.0", "id": 7, "method": "session.start", "timeoutMs": 1000 });
    c.refuse::<SessionStartRequest>("timeoutMs on session.start", "session-start-request", start);
    c.finish();
}

#[test]
fn page_limits_and_sequences() {
    let mut c = Cases::new("limits and sequences");
    let list = json!({ "sessionId": SESSION, "afterSequence": 3, "limit": 1000 });
    c.accept::<EventsListParams>("limit 1000", "events-list-params", list.clone());
    c.accept::<EventsListParams>(
        "limit 1",
        "events-list-params",
        with(&list, "limit", json!(1)),
    );
    c.accept::<SessionExportParams>("export limit 1000", "session-export-params", list.clone());
    for (what, v) in [
        ("0", json!(0)),
        ("1001", json!(1001)),
        ("-1", json!(-1)),
        ("string", json!("10")),
    ] {
        c.refuse::<EventsListParams>(
            &format!("limit {what}"),
            "events-list-params",
            with(&list, "limit", v.clone()),
        );
        c.refuse::<SessionExportParams>(
            &format!("export limit {what}"),
            "session-export-params",
            with(&list, "limit", v),
        );
    }
    c.refuse::<EventsListParams>(
        "afterSequence 0",
        "events-list-params",
        with(&list, "afterSequence", json!(0)),
    );
    c.refuse::<SessionExportParams>(
        "export afterSequence 0",
        "session-export-params",
        with(&list, "afterSequence", json!(0)),
    );

    c.accept::<EventSequence>("sequence 1", "event-sequence", json!(1));
    c.refuse::<EventSequence>("sequence 0", "event-sequence", json!(0));
    c.refuse::<EventSequence>(
        "sequence 2^53",
        "event-sequence",
        json!(MAX_SAFE_INTEGER + 1),
    );

    let event = json!({
        "eventId": "0195945c-7a10-7f00-8a00-000000000001", "sessionId": SESSION, "sequence": 1,
        "atMs": 1741950000000_u64, "payload": { "type": "sessionStarted" }
    });
    c.accept::<TestEvent>("event", "test-event", event.clone());
    c.refuse::<TestEvent>(
        "event sequence 0",
        "test-event",
        with(&event, "sequence", json!(0)),
    );
    c.refuse::<TestEvent>(
        "event atMs 2^53",
        "test-event",
        with(&event, "atMs", json!(MAX_SAFE_INTEGER + 1)),
    );

    let cursor = json!({ "streamEpoch": SESSION, "sessionId": SESSION, "sequence": 4 });
    c.accept::<EventStreamCursor>("cursor", "event-stream-cursor", cursor.clone());
    c.refuse::<EventStreamCursor>(
        "cursor sequence 0",
        "event-stream-cursor",
        with(&cursor, "sequence", json!(0)),
    );

    let info = json!({
        "id": SESSION, "state": "active", "startedAtMs": 1741950000000_u64, "endedAtMs": null,
        "eventCount": 1, "lastSequence": 1
    });
    c.accept::<SessionInfo>("session info", "session-info", info.clone());
    c.refuse::<SessionInfo>(
        "eventCount 0",
        "session-info",
        with(&info, "eventCount", json!(0)),
    );

    let capture = json!({ "streamId": CALL, "frameIndex": 1, "durationMs": 250 });
    c.accept::<MediaStreamCaptureParams>("capture", "media-stream-capture-params", capture.clone());
    c.refuse::<MediaStreamCaptureParams>(
        "frameIndex 0",
        "media-stream-capture-params",
        with(&capture, "frameIndex", json!(0)),
    );
    c.finish();
}

#[test]
fn unknown_members() {
    let mut c = Cases::new("unknown members");
    // Refused where the type denies unknown fields.
    let extra = |v: &Value| with(v, "unexpected", json!(true));
    let hello = json!({
        "client": { "name": "devicerail-cli", "version": "0.1.0" },
        "protocol": { "ranges": [{ "major": 1, "minMinor": 0, "maxMinor": 5 }] },
        "features": { "required": [], "optional": [] }
    });
    c.accept::<HelloParams>("hello params", "hello-params", hello.clone());
    c.refuse::<HelloParams>("hello params + member", "hello-params", extra(&hello));
    c.refuse::<HelloParams>(
        "peer info + member",
        "hello-params",
        with(&hello, "client/unexpected", json!(1)),
    );
    c.refuse::<HelloParams>(
        "protocol range + member",
        "hello-params",
        with(
            &hello,
            "protocol/ranges/0",
            json!({ "major": 1, "minMinor": 0, "maxMinor": 5, "patch": 0 }),
        ),
    );
    c.refuse::<HelloParams>(
        "feature offer + member",
        "hello-params",
        with(&hello, "features/deprecated", json!([])),
    );
    let request = json!({ "jsonrpc": "2.0", "id": 1, "method": "devices.list" });
    c.refuse::<RpcRequest>("request + member", "rpc-request", extra(&request));
    c.refuse::<DevicesListRequest>(
        "typed request + member",
        "devices-list-request",
        extra(&request),
    );
    let error = json!({ "code": "device_unavailable", "message": "offline", "retryable": true, "details": null });
    c.accept::<ErrorInfo>("error info", "error-info", error.clone());
    c.refuse::<ErrorInfo>("error info + member", "error-info", extra(&error));
    let session = json!({
        "id": SESSION, "state": "ended", "startedAtMs": 1, "endedAtMs": 2, "eventCount": 2, "lastSequence": 2
    });
    c.refuse::<SessionInfo>("session info + member", "session-info", extra(&session));
    c.refuse::<UiNode>("ui node + member", "ui-node", extra(&ui_node()));
    let verdict = json!({ "status": "pass", "summary": "ok", "evidence": [] });
    c.refuse::<Verdict>("verdict + member", "verdict", extra(&verdict));
    c.refuse::<SessionEndParams>(
        "session.end params + member",
        "session-end-params",
        json!({ "outcome": "completed", "why": "done" }),
    );
    c.refuse::<TestEventPayload>(
        "payload + member",
        "test-event-payload",
        json!({ "type": "sessionEnded", "outcome": "completed", "reason": null, "extra": 1 }),
    );
    c.refuse::<ActionOutcome>(
        "outcome + member",
        "action-outcome",
        json!({ "outcome": "failed", "error": error, "timeoutMs": 5 }),
    );

    // Accepted where the type is open for forward compatibility.
    let device = json!({
        "id": "mock-1", "name": "Mock Device", "platform": { "kind": "mock" }, "osVersion": "1.0", "connected": true
    });
    c.accept::<DeviceInfo>("device info + member", "device-info", extra(&device));
    let observation = json!({
        "id": OBSERVATION, "deviceId": "mock-1", "capturedAtMs": 1,
        "viewport": { "width": 720, "height": 1280, "scaleFactor": 2.0 },
        "screenshot": asset(), "metadata": {}
    });
    c.accept::<Observation>("observation", "observation", observation.clone());
    c.accept::<Observation>("observation + member", "observation", extra(&observation));
    c.accept::<Observation>(
        "viewport + member",
        "observation",
        with(&observation, "viewport/rotation", json!(0)),
    );
    c.accept::<Observation>(
        "asset ref + member",
        "observation",
        with(&observation, "screenshot/size", json!(1024)),
    );
    let call = json!({ "id": CALL, "name": "tap", "arguments": { "x": 1, "y": 2 } });
    c.accept::<ActionCall>("action call + member", "action-call", extra(&call));
    c.accept::<RecordedActionCall>(
        "recorded call + member",
        "recorded-action-call",
        extra(&call),
    );
    let definition =
        json!({ "name": "tap", "description": "Tap.", "inputSchema": { "type": "object" } });
    c.accept::<ActionDefinition>(
        "definition + member",
        "action-definition",
        extra(&definition),
    );
    c.finish();
}

#[test]
fn string_lengths() {
    let mut c = Cases::new("string lengths");
    let node = ui_node();
    c.accept::<UiNode>(
        "role of 256 scalars",
        "ui-node",
        with(&node, "role", json!(chars('\u{767e}', 256))),
    );
    c.refuse::<UiNode>("empty role", "ui-node", with(&node, "role", json!("")));
    c.refuse::<UiNode>(
        "role of 257",
        "ui-node",
        with(&node, "role", json!(chars('r', 257))),
    );
    c.refuse::<UiNode>(
        "empty stableNodeId",
        "ui-node",
        with(&node, "stableNodeId", json!("")),
    );
    c.refuse::<UiNode>(
        "stableNodeId of 4097",
        "ui-node",
        with(&node, "stableNodeId", json!(chars('n', 4097))),
    );
    c.accept::<UiNode>("empty name", "ui-node", with(&node, "name", json!("")));
    c.refuse::<UiNode>(
        "name of 65537",
        "ui-node",
        with(&node, "name", json!(chars('n', 65537))),
    );

    let selector = json!({
        "context": null, "role": "button", "name": "Sign in", "value": null,
        "identifier": "sign-in", "text": { "value": "sign", "mode": "contains" }, "css": "#sign-in"
    });
    c.accept::<ElementSelector>("selector", "element-selector", selector.clone());
    c.accept::<ElementSelector>(
        "empty value",
        "element-selector",
        with(&selector, "value", json!("")),
    );
    for (field, max) in [
        ("role", 256),
        ("name", 65536),
        ("identifier", 4096),
        ("css", 65536),
    ] {
        c.refuse::<ElementSelector>(
            &format!("empty selector {field}"),
            "element-selector",
            with(&selector, field, json!("")),
        );
        c.accept::<ElementSelector>(
            &format!("selector {field} of {max}"),
            "element-selector",
            with(&selector, field, json!(chars('s', max))),
        );
        c.refuse::<ElementSelector>(
            &format!("selector {field} of {}", max + 1),
            "element-selector",
            with(&selector, field, json!(chars('s', max + 1))),
        );
    }
    c.refuse::<ElementSelector>(
        "empty text match",
        "element-selector",
        with(&selector, "text/value", json!("")),
    );
    c.refuse::<ElementSelector>(
        "empty context id",
        "element-selector",
        with(
            &selector,
            "context",
            json!({ "contextKind": "web", "contextId": "" }),
        ),
    );

    let verdict = json!({ "status": "fail", "summary": "s", "evidence": [] });
    c.accept::<Verdict>("summary of 1", "verdict", verdict.clone());
    c.accept::<Verdict>(
        "summary of 16384",
        "verdict",
        with(&verdict, "summary", json!(chars('v', 16384))),
    );
    c.refuse::<Verdict>(
        "empty summary",
        "verdict",
        with(&verdict, "summary", json!("")),
    );
    c.refuse::<Verdict>(
        "summary of 16385",
        "verdict",
        with(&verdict, "summary", json!(chars('v', 16385))),
    );

    let stream = json!({ "id": CALL, "kind": "video", "mediaType": "image/png" });
    c.accept::<MediaStreamInfo>("media type", "media-stream-info", stream.clone());
    c.accept::<MediaStreamInfo>(
        "media type of 255",
        "media-stream-info",
        with(&stream, "mediaType", json!(chars('m', 255))),
    );
    c.refuse::<MediaStreamInfo>(
        "empty media type",
        "media-stream-info",
        with(&stream, "mediaType", json!("")),
    );
    c.refuse::<MediaStreamInfo>(
        "media type of 256",
        "media-stream-info",
        with(&stream, "mediaType", json!(chars('m', 256))),
    );

    let protected = json!({ "kind": "protected", "secretRef": "vault:alice" });
    c.accept::<ManualActionArguments>("secretRef", "manual-action-arguments", protected.clone());
    c.refuse::<ManualActionArguments>(
        "empty secretRef",
        "manual-action-arguments",
        with(&protected, "secretRef", json!("")),
    );
    c.refuse::<ManualActionArguments>(
        "secretRef of 129",
        "manual-action-arguments",
        with(&protected, "secretRef", json!(chars('k', 129))),
    );
    let recording = json!({
        "formatVersion": 1, "recordingId": SESSION, "sourceDeviceId": "chromium-1",
        "actionSpaceSha256": HEX64, "startedAtMs": 1, "endedAtMs": 2, "steps": []
    });
    c.accept::<ManualRecording>("recording", "manual-recording", recording.clone());
    c.refuse::<ManualRecording>(
        "digest of 63",
        "manual-recording",
        with(&recording, "actionSpaceSha256", json!(&HEX64[1..])),
    );
    c.refuse::<ManualRecording>(
        "digest of 65",
        "manual-recording",
        with(&recording, "actionSpaceSha256", json!(format!("{HEX64}0"))),
    );

    let open = json!({
        "endpoint": "ws://127.0.0.1:48211/events/token", "streamEpoch": SESSION, "expiresAtMs": 1
    });
    c.accept::<EventsStreamOpenResult>("endpoint", "events-stream-open-result", open.clone());
    c.refuse::<EventsStreamOpenResult>(
        "empty endpoint",
        "events-stream-open-result",
        with(&open, "endpoint", json!("")),
    );
    c.refuse::<EventsStreamOpenResult>(
        "endpoint of 2049",
        "events-stream-open-result",
        with(&open, "endpoint", json!(chars('e', 2049))),
    );
    c.finish();
}

#[test]
fn list_lengths_and_uniqueness() {
    let mut c = Cases::new("lists");
    let verdict =
        |n: usize| json!({ "status": "pass", "summary": "ok", "evidence": vec![asset(); n] });
    c.accept::<Verdict>("no evidence", "verdict", verdict(0));
    c.accept::<Verdict>("64 evidence", "verdict", verdict(64));
    c.refuse::<Verdict>("65 evidence", "verdict", verdict(65));
    c.refuse::<VerdictRecordParams>(
        "65 evidence in params",
        "verdict-record-params",
        json!({ "verdict": verdict(65) }),
    );

    let snapshot = json!({
        "formatVersion": 1, "observationId": OBSERVATION, "context": context(),
        "rootStableNodeIds": ["sign-in"], "nodes": [ui_node()]
    });
    c.accept::<UiSnapshot>("snapshot", "ui-snapshot", snapshot.clone());
    c.refuse::<UiSnapshot>(
        "no nodes",
        "ui-snapshot",
        with(&snapshot, "nodes", json!([])),
    );
    c.refuse::<UiSnapshot>(
        "no roots",
        "ui-snapshot",
        with(&snapshot, "rootStableNodeIds", json!([])),
    );
    c.refuse::<UiSnapshot>(
        "formatVersion 2",
        "ui-snapshot",
        with(&snapshot, "formatVersion", json!(2)),
    );
    c.refuse::<UiSnapshot>(
        "formatVersion 0",
        "ui-snapshot",
        with(&snapshot, "formatVersion", json!(0)),
    );
    c.refuse::<UiSnapshot>(
        "10001 nodes",
        "ui-snapshot",
        with(&snapshot, "nodes", Value::Array(vec![ui_node(); 10_001])),
    );
    c.refuse::<UiSnapshot>(
        "negative width",
        "ui-snapshot",
        with(&snapshot, "nodes/0/bounds/width", json!(-1.0)),
    );
    c.accept::<UiSnapshot>(
        "negative x",
        "ui-snapshot",
        with(&snapshot, "nodes/0/bounds/x", json!(-20.0)),
    );

    let reference = json!({
        "formatVersion": 1, "context": context(), "nodeCount": 1, "byteLength": 400, "evidence": asset()
    });
    c.accept::<UiSnapshotRef>("snapshot ref", "ui-snapshot-ref", reference.clone());
    c.refuse::<UiSnapshotRef>(
        "nodeCount 0",
        "ui-snapshot-ref",
        with(&reference, "nodeCount", json!(0)),
    );
    c.refuse::<UiSnapshotRef>(
        "nodeCount 10001",
        "ui-snapshot-ref",
        with(&reference, "nodeCount", json!(10_001)),
    );
    c.refuse::<UiSnapshotRef>(
        "byteLength over 768 KiB",
        "ui-snapshot-ref",
        with(&reference, "byteLength", json!(786_433)),
    );

    let offer = json!({ "ranges": [{ "major": 1, "minMinor": 0, "maxMinor": 5 }] });
    c.accept::<ProtocolOffer>("one range", "protocol-offer", offer.clone());
    c.refuse::<ProtocolOffer>("no ranges", "protocol-offer", json!({ "ranges": [] }));
    c.refuse::<ProtocolOffer>(
        "minor 65536",
        "protocol-offer",
        with(&offer, "ranges/0/maxMinor", json!(65_536)),
    );

    let features = json!({ "required": ["events.snapshot.v1"], "optional": ["media.stream.v1"] });
    c.accept::<FeatureOffer>("features", "feature-offer", features.clone());
    c.refuse::<FeatureOffer>(
        "duplicate required",
        "feature-offer",
        with(
            &features,
            "required",
            json!(["events.snapshot.v1", "events.snapshot.v1"]),
        ),
    );
    c.refuse::<FeatureOffer>(
        "duplicate optional",
        "feature-offer",
        with(&features, "optional", json!(["a.v1", "b.v1", "a.v1"])),
    );
    c.refuse::<FeatureSelection>(
        "duplicate enabled",
        "feature-selection",
        json!({ "enabled": ["events.stream.v1", "events.stream.v1"] }),
    );
    c.accept::<FeatureSelection>(
        "nothing enabled",
        "feature-selection",
        json!({ "enabled": [] }),
    );
    c.finish();
}

#[test]
fn params_and_responses() {
    let mut c = Cases::new("params and responses");
    let start = json!({ "jsonrpc": "2.0", "id": 7, "method": "session.start" });
    c.accept::<SessionStartRequest>("no params", "session-start-request", start.clone());
    c.accept::<SessionStartRequest>(
        "{} params",
        "session-start-request",
        with(&start, "params", json!({})),
    );
    c.accept::<SessionStartRequest>(
        "[] params",
        "session-start-request",
        with(&start, "params", json!([])),
    );
    c.refuse::<SessionStartRequest>(
        "object params with content",
        "session-start-request",
        with(&start, "params", json!({ "sessionId": SESSION })),
    );
    c.refuse::<SessionStartRequest>(
        "array params with content",
        "session-start-request",
        with(&start, "params", json!([1])),
    );
    c.refuse::<SessionStartRequest>(
        "string params",
        "session-start-request",
        with(&start, "params", json!("none")),
    );
    c.refuse::<SessionStartRequest>(
        "another method",
        "session-start-request",
        with(&start, "method", json!("session.end")),
    );
    let select = json!({ "jsonrpc": "2.0", "id": 4, "method": "device.select", "params": { "deviceId": "mock-1" } });
    c.accept::<DeviceSelectRequest>("required params", "device-select-request", select.clone());
    c.refuse::<DeviceSelectRequest>(
        "missing params",
        "device-select-request",
        without(&select, "params"),
    );

    let error = json!({
        "code": -32000, "message": "device emulator-5556 is offline",
        "data": { "code": "device_unavailable", "message": "device emulator-5556 is offline", "retryable": true, "details": null }
    });
    let success = json!({ "jsonrpc": "2.0", "id": 3, "result": { "disconnected": true } });
    let failure = json!({ "jsonrpc": "2.0", "id": 3, "error": error });
    let both = with(&success, "error", error.clone());
    let neither = without(&success, "result");
    c.accept::<RpcResponse>("success", "rpc-response", success.clone());
    c.accept::<RpcResponse>("failure", "rpc-response", failure.clone());
    c.accept::<RpcResponse>(
        "failure with null id",
        "rpc-response",
        with(&failure, "id", Value::Null),
    );
    c.refuse::<RpcResponse>(
        "failure without id",
        "rpc-response",
        without(&failure, "id"),
    );
    c.refuse::<RpcResponse>(
        "success with null id",
        "rpc-response",
        with(&success, "id", Value::Null),
    );
    c.refuse::<RpcResponse>("both result and error", "rpc-response", both.clone());
    c.refuse::<RpcResponse>("neither result nor error", "rpc-response", neither.clone());
    c.accept::<DeviceDisconnectResponse>("typed success", "device-disconnect-response", success);
    c.accept::<DeviceDisconnectResponse>(
        "typed failure",
        "device-disconnect-response",
        failure.clone(),
    );
    c.refuse::<DeviceDisconnectResponse>("typed both", "device-disconnect-response", both);
    c.refuse::<DeviceDisconnectResponse>("typed neither", "device-disconnect-response", neither);
    c.refuse::<RpcResponse>(
        "error code beyond i32",
        "rpc-response",
        with(&failure, "error/code", json!(i64::from(i32::MAX) + 1)),
    );
    c.finish();
}
