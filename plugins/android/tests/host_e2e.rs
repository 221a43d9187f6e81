//! The Android plugin end to end through the real host binary, with the
//! real adb server and a fake device: once with the fake answering at once,
//! once at a phone's pace (the fake's phone-like latency model at a
//! quarter of its times, a touchscreen the driver writes touch events to,
//! screens that animate after a tap).

mod support;

use devicerail_client::methods::{
    DeviceConnect, DeviceObserve, DeviceSelect, DevicesList, SessionEnd, SessionExport,
    SessionStart,
};
use devicerail_host_android_fake_adb::{DeviceProfile, FakeConfig, Latency, Touchscreen};
use devicerail_host_testing::build_workspace_plugin;
use devicerail_host_testing::client::{HostClient, error_code, wire};
use serde_json::{Value, json};

fn by_id(id: &str) -> Value {
    json!({ "kind": "selector", "selector": { "identifier": format!("com.example.login:id/{id}") } })
}

#[test]
fn a_login_through_the_host_and_a_vanishing_device() {
    login(DeviceProfile {
        latency: Latency::Instant,
        ..DeviceProfile::default()
    });
}

#[test]
fn the_same_login_at_a_phones_pace() {
    login(DeviceProfile {
        latency: Latency::phone_like().scaled(0.25),
        touchscreen: Some(Touchscreen::standard()),
        ..DeviceProfile::default()
    });
}

fn login(profile: DeviceProfile) {
    let Some(server) = support::server() else {
        return;
    };
    let (fake, serial) = support::attach(
        &server,
        FakeConfig {
            profile,
            ..FakeConfig::default()
        },
    );
    let lib = build_workspace_plugin("devicerail-host-plugin-android", "android");
    let spec = server.socket_spec();
    let host = HostClient::start(
        &[lib],
        &[
            ("ADB_SERVER_SOCKET", &spec),
            ("DEVICERAIL_ANDROID_START_SERVER", "false"),
        ],
    );
    let devices = wire(Ok(host.ok0::<DevicesList>()));
    let device = devices["devices"]
        .as_array()
        .and_then(|d| d.iter().find(|d| d["id"] == serial.as_str()))
        .cloned();
    let device = device.unwrap_or_else(|| panic!("{serial} not listed: {devices}"));
    assert_eq!(device["platform"], json!({ "kind": "android" }));
    assert!(device["osVersion"].is_string());
    host.ok::<DeviceSelect>(json!({ "deviceId": serial }));
    assert!(host.ok0::<DeviceConnect>().connected);
    host.ok0::<SessionStart>();

    let obs = wire(Ok(host.ok0::<DeviceObserve>()));
    assert!(obs["screenshot"]["sha256"].is_string(), "{obs}");
    assert_eq!(
        obs["uiSnapshot"]["context"]["contextId"],
        "com.example.login"
    );

    let set = wire(host.execute(
        "setElementValue",
        json!({ "target": by_id("username"), "value": "ann lee" }),
    ));
    assert_eq!(set["execution"]["mode"], "coordinateFallback", "{set}");
    wire(host.execute("tapElement", json!({ "target": by_id("password") })));
    let secret = "pw-271828-never-on-a-command-line";
    wire(host.execute("inputSecret", json!({ "text": secret })));
    wire(host.execute("tapElement", json!({ "target": { "kind": "selector", "selector": { "role": "button", "name": "Sign in" } } })));
    let greeting = wire(host.execute(
        "waitForElement",
        json!({ "selector": { "text": { "value": "Hello, ann lee" } }, "condition": "visible" }),
    ));
    assert_eq!(greeting["output"]["matched"], true, "{greeting}");
    assert!(
        fake.command_lines().iter().all(|c| !c.contains(secret)),
        "the secret reached a command line"
    );
    assert!(
        !wire(host.call::<SessionExport>(Value::Null))
            .to_string()
            .contains(secret)
    );

    fake.vanish();
    let r = host.execute("tap", json!({ "x": 10, "y": 10 }));
    assert_eq!(error_code(&r), Some("device_unavailable"), "{r:?}");
    host.ok0::<DevicesList>();
    host.ok::<SessionEnd>(Value::Null);
    let stderr = host.finish().expect("the host exits 0 on EOF");
    assert!(
        !stderr.contains(secret),
        "the secret reached the host's logs"
    );
}
