//! The Android plugin end to end through the real host binary, with the
//! real adb server and a fake device.

mod support;

use devicerail_testing::build_workspace_plugin;
use devicerail_testing::host_process::HostProcess;
use serde_json::{Value, json};

fn by_id(id: &str) -> Value {
    json!({ "kind": "selector", "selector": { "identifier": format!("com.example.login:id/{id}") } })
}

#[test]
fn a_login_through_the_host_and_a_vanishing_device() {
    let Some(server) = support::server() else {
        return;
    };
    let (fake, serial) = support::online(&server);
    let lib = build_workspace_plugin("devicerail-plugin-android", "android");
    let spec = server.socket_spec();
    let mut host = HostProcess::start(
        &[lib],
        &[
            ("ADB_SERVER_SOCKET", &spec),
            ("DEVICERAIL_ANDROID_START_SERVER", "false"),
        ],
    );
    host.hello();
    let devices = host.ok("devices.list", None);
    let device = devices["devices"]
        .as_array()
        .and_then(|d| d.iter().find(|d| d["id"] == serial.as_str()))
        .cloned();
    let device = device.unwrap_or_else(|| panic!("{serial} not listed: {devices}"));
    assert_eq!(device["platform"], json!({ "kind": "android" }));
    assert!(device["osVersion"].is_string());
    host.ok("device.select", Some(json!({ "deviceId": serial })));
    assert_eq!(host.ok("device.connect", None)["connected"], true);
    host.ok("session.start", None);

    let obs = host.ok("device.observe", None);
    assert!(obs["screenshot"]["sha256"].is_string(), "{obs}");
    assert_eq!(
        obs["uiSnapshot"]["context"]["contextId"],
        "com.example.login"
    );

    let set = host.execute(
        "setElementValue",
        json!({ "target": by_id("username"), "value": "ann lee" }),
    );
    assert_eq!(
        set["result"]["execution"]["mode"], "coordinateFallback",
        "{set}"
    );
    let tap = host.execute("tapElement", json!({ "target": by_id("password") }));
    assert!(tap.get("result").is_some(), "{tap}");
    let secret = "pw-271828-never-on-a-command-line";
    let typed = host.execute("inputSecret", json!({ "text": secret }));
    assert!(typed.get("result").is_some(), "{typed}");
    let signed = host.execute("tapElement", json!({ "target": { "kind": "selector", "selector": { "role": "button", "name": "Sign in" } } }));
    assert!(signed.get("result").is_some(), "{signed}");
    let greeting = host.execute(
        "waitForElement",
        json!({ "selector": { "text": { "value": "Hello, ann lee" } }, "condition": "visible" }),
    );
    assert_eq!(greeting["result"]["output"]["matched"], true, "{greeting}");
    assert!(
        fake.command_lines().iter().all(|c| !c.contains(secret)),
        "the secret reached a command line"
    );
    assert!(!host.ok("session.export", None).to_string().contains(secret));

    // The device disappears mid-session: a typed error, and the host serves on.
    fake.vanish();
    let r = host.execute("tap", json!({ "x": 10, "y": 10 }));
    assert_eq!(r["error"]["data"]["code"], "device_unavailable", "{r}");
    assert!(host.ok("devices.list", None)["devices"].is_array());
    host.ok("session.end", None);
    assert!(
        !host.stderr().contains(secret),
        "the secret reached the host's logs"
    );
    assert!(host.finish().success());
}
