//! Device routing: the device list, selection, lazy routing to a sole
//! device, and the routing errors, through the official Rust client.
//!
//! One case stays raw: `devices.list` on a connection without
//! `device.routing.v1`. The protocol serves it there (the legacy listing,
//! without `selectedDeviceId`), but both official clients gate the method
//! on the feature and refuse to send it.

mod support;

use support::client::Launch as _;

use devicerail_client::methods::{
    DeviceConnect, DeviceDisconnect, DeviceExecute, DeviceSelect, DevicesList, EventsList,
    SessionEnd, SessionStart, SystemDescribe,
};
use devicerail_client::protocol::TestEventPayload;
use devicerail_client::{CallOptions, ClientError};
use serde_json::{Value, json};
use support::client::{ClientHost, action, expect_error, hello};
use support::{Options, TestHost};

fn devices(n: usize) -> Options {
    Options {
        devices: Some(n),
        ..Options::default()
    }
}

async fn selected(host: &ClientHost) -> Option<String> {
    host.call0::<DevicesList>()
        .await
        .expect("devices.list")
        .selected_device_id
        .map(|d| d.0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sole_device_routes_lazily() {
    let h = ClientHost::start(Options::default(), hello())
        .await
        .expect("spawn");
    let list = h.call0::<DevicesList>().await.expect("list");
    assert_eq!(list.devices.len(), 1);
    assert_eq!(list.selected_device_id, None);
    let info = h.call0::<DeviceConnect>().await.expect("connect");
    assert_eq!(info.id.0, "mock-1");
    assert!(info.connected);
    assert!(h.call0::<DevicesList>().await.expect("list").devices[0].connected);
    let d = h.call0::<DeviceDisconnect>().await.expect("disconnect");
    assert!(d.disconnected);
    assert!(!h.call0::<DevicesList>().await.expect("list").devices[0].connected);
    h.close().await;
}

#[test]
fn legacy_listing_has_no_selection_member() {
    // Raw: the clients refuse devices.list without device.routing.v1.
    let mut h = TestHost::start();
    h.hello_with(
        json!([{ "major": 1, "minMinor": 0, "maxMinor": 1 }]),
        &[],
        &[],
    );
    let list = h.ok("devices.list", None);
    assert!(list.get("selectedDeviceId").is_none(), "{list}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_devices_need_a_selection() {
    let h = ClientHost::start(devices(3), hello()).await.expect("spawn");
    let ids: Vec<String> = h
        .call0::<DevicesList>()
        .await
        .expect("list")
        .devices
        .into_iter()
        .map(|d| d.id.0)
        .collect();
    assert_eq!(ids, ["mock-1", "mock-2", "mock-3"]);
    expect_error(
        h.call0::<DeviceConnect>().await,
        "device_selection_required",
        -32011,
        true,
    );
    let sel = h
        .call::<DeviceSelect>(json!({ "deviceId": "mock-2" }))
        .await
        .expect("select");
    assert_eq!(sel.device.id.0, "mock-2");
    assert_eq!(selected(&h).await.as_deref(), Some("mock-2"));
    assert_eq!(
        h.call0::<DeviceConnect>().await.expect("connect").id.0,
        "mock-2"
    );
    // An unknown id fails and keeps the previous selection.
    expect_error(
        h.call::<DeviceSelect>(json!({ "deviceId": "mock-99" }))
            .await,
        "device_not_found",
        -32011,
        false,
    );
    assert_eq!(selected(&h).await.as_deref(), Some("mock-2"));
    let described = h.call0::<SystemDescribe>().await.expect("describe");
    assert_eq!(described.device_id.map(|d| d.0).as_deref(), Some("mock-2"));
    // Routing is per device: mock-2 is connected, mock-1 is not.
    let list = h.call0::<DevicesList>().await.expect("list");
    assert!(!list.devices[0].connected);
    assert!(list.devices[1].connected);
    h.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_keeps_the_route_it_was_accepted_with() {
    let h = ClientHost::start(
        Options {
            devices: Some(2),
            faults: true,
            ..Options::default()
        },
        hello(),
    )
    .await
    .expect("spawn");
    h.call::<DeviceSelect>(json!({ "deviceId": "mock-1" }))
        .await
        .expect("select");
    h.call0::<DeviceConnect>().await.expect("connect");
    h.call0::<SessionStart>().await.expect("start");
    let params = serde_json::from_value(action("sleep", json!({ "ms": 300 }))).expect("params");
    let slow = h
        .client
        .begin_call::<DeviceExecute>(params, CallOptions::default())
        .expect("begin");
    // The session holds its device: re-selecting while the Action runs is
    // refused and the selection is kept.
    expect_error(
        h.call::<DeviceSelect>(json!({ "deviceId": "mock-2" }))
            .await,
        "device_lease_active",
        -32014,
        false,
    );
    assert_eq!(selected(&h).await.as_deref(), Some("mock-1"));
    slow.result().await.expect("the sleep succeeds");
    let events = h.call::<EventsList>(Value::Null).await.expect("events");
    let started = events
        .iter()
        .find(|e| matches!(e.payload, TestEventPayload::ActionStarted { .. }))
        .expect("actionStarted");
    assert_eq!(
        started.device_id.as_ref().map(|d| d.0.as_str()),
        Some("mock-1")
    );
    h.call::<SessionEnd>(Value::Null).await.expect("end");
    h.call::<DeviceSelect>(json!({ "deviceId": "mock-2" }))
        .await
        .expect("select after the session");
    h.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_devices_means_device_not_found() {
    let h = ClientHost::start(
        Options {
            no_plugins: true,
            ..Options::default()
        },
        hello(),
    )
    .await
    .expect("spawn");
    assert!(
        h.call0::<DevicesList>()
            .await
            .expect("list")
            .devices
            .is_empty()
    );
    let d = expect_error(
        h.call0::<DeviceConnect>().await,
        "device_not_found",
        -32011,
        true,
    );
    assert_eq!(d, json!({ "reason": "noRegisteredDevices" }));
    let r: Result<_, ClientError> = h.call0::<SessionStart>().await;
    expect_error(r, "device_not_found", -32011, true);
    let described = h.call0::<SystemDescribe>().await.expect("describe");
    assert_eq!(described.device_id, None);
    h.close().await;
}
