//! The connection state machine and every handshake error, through the
//! real binary.

mod support;

use serde_json::json;
use support::{ALL_FEATURES, TestHost, error_code, rpc_code};

fn hello_params(
    ranges: serde_json::Value,
    required: &[&str],
    optional: &[&str],
) -> serde_json::Value {
    json!({
        "client": { "name": "t", "version": "1" },
        "protocol": { "ranges": ranges },
        "features": { "required": required, "optional": optional },
    })
}

#[test]
fn methods_before_hello_need_the_handshake() {
    let mut h = TestHost::start();
    for method in ["devices.list", "session.start", "no.such.method"] {
        let r = h.call(method, None);
        assert_eq!(
            error_code(&r).as_deref(),
            Some("handshake_required"),
            "{method}: {r}"
        );
        assert_eq!(rpc_code(&r), -32001);
    }
    h.hello();
    assert!(h.ok("devices.list", None)["devices"].is_array());
}

#[test]
fn successful_hello_negotiates_the_highest_version_and_sorted_features() {
    let mut h = TestHost::start();
    let r = h.hello_with(json!([{ "major": 1, "minMinor": 0, "maxMinor": 2 }, { "major": 3, "minMinor": 0, "maxMinor": 0 }]), &[], ALL_FEATURES);
    assert_eq!(r["protocol"]["selected"], json!({ "major": 1, "minor": 2 }));
    assert_eq!(
        r["transport"],
        json!({ "kind": "stdio", "framing": "ndjson" })
    );
    assert_eq!(r["server"]["name"], "devicerail-host");
    assert_eq!(
        r["features"]["enabled"],
        json!([
            "action.protected.v1",
            "device.routing.v1",
            "events.snapshot.v1",
            "request.control.v1"
        ])
    );
    let r = h.call(
        "system.hello",
        Some(hello_params(
            json!([{ "major": 1, "minMinor": 0, "maxMinor": 5 }]),
            &[],
            &[],
        )),
    );
    assert_eq!(
        error_code(&r).as_deref(),
        Some("handshake_already_completed")
    );
    assert_eq!(rpc_code(&r), -32002);
}

#[test]
fn version_one_zero_has_no_request_control() {
    let mut h = TestHost::start();
    let r = h.hello_with(
        json!([{ "major": 1, "minMinor": 0, "maxMinor": 0 }]),
        &[],
        ALL_FEATURES,
    );
    assert_eq!(r["features"]["enabled"], json!(["events.snapshot.v1"]));
    let r = h.call("request.cancel", Some(json!({ "requestId": 1 })));
    assert_eq!(error_code(&r).as_deref(), Some("method_not_found"));
    assert_eq!(
        r["error"]["data"]["details"]["requiredFeature"],
        "request.control.v1"
    );
}

#[test]
fn incompatible_versions_report_a_reason_and_allow_a_retry() {
    let mut h = TestHost::start();
    for (ranges, reason) in [
        (
            json!([{ "major": 0, "minMinor": 1, "maxMinor": 9 }]),
            "clientTooOld",
        ),
        (
            json!([{ "major": 1, "minMinor": 6, "maxMinor": 9 }]),
            "serverTooOld",
        ),
        (
            json!([{ "major": 2, "minMinor": 0, "maxMinor": 0 }]),
            "serverTooOld",
        ),
        (
            json!([{ "major": 0, "minMinor": 0, "maxMinor": 0 }, { "major": 2, "minMinor": 0, "maxMinor": 0 }]),
            "noCommonVersion",
        ),
    ] {
        let r = h.call("system.hello", Some(hello_params(ranges.clone(), &[], &[])));
        assert_eq!(
            error_code(&r).as_deref(),
            Some("protocol_version_incompatible"),
            "{r}"
        );
        assert_eq!(rpc_code(&r), -32003);
        let details = &r["error"]["data"]["details"];
        assert_eq!(details["reason"], reason, "{ranges}");
        assert_eq!(details["clientProtocol"]["ranges"], ranges);
        assert_eq!(
            details["serverProtocol"]["ranges"],
            json!([{ "major": 1, "minMinor": 0, "maxMinor": 5 }])
        );
    }
    // Still awaiting hello: other methods need the handshake, a retry works.
    assert_eq!(h.err("devices.list", None), "handshake_required");
    h.hello();
}

#[test]
fn invalid_offers_are_invalid_params() {
    let mut h = TestHost::start();
    let r = h.call("system.hello", Some(hello_params(json!([]), &[], &[])));
    assert_eq!(error_code(&r).as_deref(), Some("invalid_params"));
    let r = h.call(
        "system.hello",
        Some(hello_params(
            json!([{ "major": 1, "minMinor": 3, "maxMinor": 2 }]),
            &[],
            &[],
        )),
    );
    assert_eq!(error_code(&r).as_deref(), Some("invalid_params"));
    let r = h.call(
        "system.hello",
        Some(json!({ "client": { "name": "x", "version": "1" } })),
    );
    assert_eq!(error_code(&r).as_deref(), Some("invalid_params"));
    let r = h.call(
        "system.hello",
        Some(json!({ "client": { "name": "x", "version": "1" }, "protocol": { "ranges": [{ "major": 1, "minMinor": 0, "maxMinor": 5 }] }, "features": { "optional": ["a", "a"] } })),
    );
    assert_eq!(
        error_code(&r).as_deref(),
        Some("invalid_params"),
        "duplicate feature names"
    );
    let r = h.call("system.hello", None);
    assert_eq!(error_code(&r).as_deref(), Some("invalid_params"));
    h.hello();
}

#[test]
fn required_features_and_dependencies() {
    let mut h = TestHost::start();
    let v15 = json!([{ "major": 1, "minMinor": 0, "maxMinor": 5 }]);
    let v12 = json!([{ "major": 1, "minMinor": 0, "maxMinor": 2 }]);
    let r = h.call(
        "system.hello",
        Some(hello_params(v15.clone(), &["no.such.feature.v1"], &[])),
    );
    assert_eq!(
        error_code(&r).as_deref(),
        Some("required_feature_unsupported")
    );
    assert_eq!(rpc_code(&r), -32004);
    assert_eq!(
        r["error"]["data"]["details"]["unsupportedRequired"],
        json!(["no.such.feature.v1"])
    );
    assert_eq!(r["error"]["data"]["retryable"], true);
    assert_eq!(
        r["error"]["data"]["details"]["available"]
            .as_array()
            .map(Vec::len),
        Some(10),
        "every feature is available at 1.5: {r}"
    );
    // Gated by version: uiSnapshot needs 1.5.
    let r = h.call(
        "system.hello",
        Some(hello_params(v12, &["observation.uiSnapshot.v1"], &[])),
    );
    assert_eq!(
        error_code(&r).as_deref(),
        Some("required_feature_unsupported")
    );
    let r = h.call(
        "system.hello",
        Some(hello_params(
            v15.clone(),
            &[],
            &["device.semanticActions.v1"],
        )),
    );
    assert_eq!(
        error_code(&r).as_deref(),
        Some("feature_dependency_unsatisfied")
    );
    assert_eq!(rpc_code(&r), -32004);
    let r = h.call(
        "system.hello",
        Some(hello_params(v15.clone(), &["session.export.page.v1"], &[])),
    );
    assert_eq!(
        error_code(&r).as_deref(),
        Some("feature_dependency_unsatisfied")
    );
    let r = h.hello_with(
        v15,
        &["device.semanticActions.v1", "observation.uiSnapshot.v1"],
        &[],
    );
    assert_eq!(
        r["features"]["enabled"],
        json!(["device.semanticActions.v1", "observation.uiSnapshot.v1"])
    );
}

#[test]
fn extension_methods_need_their_feature() {
    let mut h = TestHost::start();
    h.hello_with(
        json!([{ "major": 1, "minMinor": 0, "maxMinor": 5 }]),
        &[],
        &[],
    );
    for (method, feature) in [
        ("events.list", "events.snapshot.v1"),
        ("sessions.list", "events.snapshot.v1"),
        ("session.export", "events.snapshot.v1"),
        ("events.clear", "events.snapshot.v1"),
        ("device.select", "device.routing.v1"),
        ("request.cancel", "request.control.v1"),
        ("ui.snapshot.get", "observation.uiSnapshot.v1"),
        ("verdict.record", "verdict.record.v1"),
    ] {
        let r = h.call(method, Some(json!({})));
        assert_eq!(
            error_code(&r).as_deref(),
            Some("method_not_found"),
            "{method}: {r}"
        );
        assert_eq!(rpc_code(&r), -32601);
        assert_eq!(
            r["error"]["data"]["details"]["requiredFeature"], feature,
            "{method}"
        );
    }
    let r = h.call("events.subscribe", Some(json!({})));
    assert_eq!(
        error_code(&r).as_deref(),
        Some("method_not_found"),
        "the WebSocket-only method"
    );
}

#[test]
fn describe_reports_the_connection() {
    let mut h = TestHost::start();
    let hello = h.hello();
    let d = h.ok("system.describe", None);
    assert_eq!(d["connection"], hello);
    assert_eq!(
        d["client"],
        json!({ "name": "e2e-tests", "version": "0.0.0" })
    );
    assert_eq!(d["deviceId"], "mock-1");
    assert_eq!(d["activeSessionId"], serde_json::Value::Null);
    let s = h.ok("session.start", None);
    assert_eq!(h.ok("system.describe", None)["activeSessionId"], s["id"]);
}

#[test]
fn timeout_rules() {
    let mut h = TestHost::start();
    let r = h.call_with_timeout(
        "system.hello",
        Some(hello_params(
            json!([{ "major": 1, "minMinor": 0, "maxMinor": 5 }]),
            &[],
            &[],
        )),
        100,
    );
    assert_eq!(
        error_code(&r).as_deref(),
        Some("feature_not_negotiated"),
        "timeoutMs on hello: nothing is negotiated yet"
    );
    assert_eq!(
        r["error"]["data"]["details"],
        json!({ "field": "timeoutMs", "requiredFeature": "request.control.v1" })
    );
    h.hello_with(
        json!([{ "major": 1, "minMinor": 0, "maxMinor": 5 }]),
        &[],
        &["events.snapshot.v1"],
    );
    let r = h.call_with_timeout("device.capabilities", None, 100);
    assert_eq!(
        error_code(&r).as_deref(),
        Some("feature_not_negotiated"),
        "{r}"
    );
    assert_eq!(rpc_code(&r), -32602);
    // Without request.control.v1 the feature check comes first.
    let r = h.call_with_timeout("sessions.list", None, 100);
    assert_eq!(error_code(&r).as_deref(), Some("feature_not_negotiated"));
    let mut h = TestHost::start();
    h.hello();
    let r = h.call_with_timeout("sessions.list", None, 100);
    assert_eq!(
        error_code(&r).as_deref(),
        Some("request_timeout_not_supported")
    );
    assert_eq!(
        r["error"]["data"]["details"],
        json!({
            "field": "timeoutMs",
            "method": "sessions.list",
            "supportedMethods": [
                "device.connect", "device.disconnect", "device.capabilities",
                "device.observe", "device.execute", "media.stream.capture"
            ]
        })
    );
}
