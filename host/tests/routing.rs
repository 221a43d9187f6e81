//! Device routing: the device list, selection, lazy routing to a sole
//! device, and the routing errors.

mod support;

use serde_json::json;
use support::{Options, TestHost, error_code, rpc_code};

#[test]
fn sole_device_routes_lazily() {
    let mut h = TestHost::start();
    h.hello();
    let list = h.ok("devices.list", None);
    assert_eq!(list["devices"].as_array().map(Vec::len), Some(1));
    assert_eq!(list["selectedDeviceId"], serde_json::Value::Null);
    let info = h.ok("device.connect", None);
    assert_eq!(info["id"], "mock-1");
    assert_eq!(info["connected"], true);
    assert_eq!(h.ok("devices.list", None)["devices"][0]["connected"], true);
    assert_eq!(
        h.ok("device.disconnect", None),
        json!({ "disconnected": true })
    );
    assert_eq!(h.ok("devices.list", None)["devices"][0]["connected"], false);
}

#[test]
fn legacy_listing_has_no_selection_member() {
    let mut h = TestHost::start();
    h.hello_with(
        json!([{ "major": 1, "minMinor": 0, "maxMinor": 1 }]),
        &[],
        &[],
    );
    let list = h.ok("devices.list", None);
    assert!(list.get("selectedDeviceId").is_none(), "{list}");
}

#[test]
fn several_devices_need_a_selection() {
    let mut h = TestHost::with(Options {
        devices: Some(3),
        ..Options::default()
    });
    h.hello();
    let list = h.ok("devices.list", None);
    let ids: Vec<&str> = list["devices"]
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|d| d["id"].as_str())
        .collect();
    assert_eq!(ids, ["mock-1", "mock-2", "mock-3"]);
    let r = h.call("device.connect", None);
    assert_eq!(error_code(&r).as_deref(), Some("device_selection_required"));
    assert_eq!(rpc_code(&r), -32011);
    let sel = h.ok("device.select", Some(json!({ "deviceId": "mock-2" })));
    assert_eq!(sel["device"]["id"], "mock-2");
    assert_eq!(h.ok("devices.list", None)["selectedDeviceId"], "mock-2");
    assert_eq!(h.ok("device.connect", None)["id"], "mock-2");
    // An unknown id fails and keeps the previous selection.
    let r = h.call("device.select", Some(json!({ "deviceId": "mock-99" })));
    assert_eq!(error_code(&r).as_deref(), Some("device_not_found"));
    assert_eq!(rpc_code(&r), -32011);
    assert_eq!(h.ok("devices.list", None)["selectedDeviceId"], "mock-2");
    assert_eq!(h.ok("system.describe", None)["deviceId"], "mock-2");
    // Routing is per device: mock-2 is connected, mock-1 is not.
    let list = h.ok("devices.list", None);
    assert_eq!(list["devices"][0]["connected"], false);
    assert_eq!(list["devices"][1]["connected"], true);
}

#[test]
fn a_request_keeps_the_route_it_was_accepted_with() {
    let mut h = TestHost::with(Options {
        devices: Some(2),
        faults: true,
        ..Options::default()
    });
    h.hello();
    h.ok("device.select", Some(json!({ "deviceId": "mock-1" })));
    h.ok("device.connect", None);
    h.ok("session.start", None);
    let slow = h.request(
        "device.execute",
        Some(TestHost::action("sleep", json!({ "ms": 300 }))),
    );
    // The session holds its device: re-selecting while the Action runs is
    // refused and the selection is kept.
    let r = h.call("device.select", Some(json!({ "deviceId": "mock-2" })));
    assert_eq!(
        error_code(&r).as_deref(),
        Some("device_lease_active"),
        "{r}"
    );
    assert_eq!(r["error"]["data"]["retryable"], false);
    assert_eq!(h.ok("devices.list", None)["selectedDeviceId"], "mock-1");
    let r = h.response(&slow);
    assert!(r.get("error").is_none(), "{r}");
    let events = h.ok("events.list", None);
    let started = events
        .as_array()
        .expect("events")
        .iter()
        .find(|e| e["payload"]["type"] == "actionStarted")
        .cloned();
    assert_eq!(started.expect("actionStarted")["deviceId"], "mock-1");
    h.ok("session.end", None);
    h.ok("device.select", Some(json!({ "deviceId": "mock-2" })));
}

#[test]
fn no_devices_means_device_not_found() {
    let mut h = TestHost::with(Options {
        no_plugins: true,
        ..Options::default()
    });
    h.hello();
    assert_eq!(h.ok("devices.list", None)["devices"], json!([]));
    let r = h.call("device.connect", None);
    assert_eq!(error_code(&r).as_deref(), Some("device_not_found"));
    assert_eq!(r["error"]["data"]["retryable"], true);
    assert_eq!(
        r["error"]["data"]["details"],
        json!({ "reason": "noRegisteredDevices" })
    );
    assert_eq!(h.err("session.start", None), "device_not_found");
    assert_eq!(
        h.ok("system.describe", None)["deviceId"],
        serde_json::Value::Null
    );
}
