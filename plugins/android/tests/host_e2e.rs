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

/// `devicerail bench` on a device at a phone's pace (the fake's model at a
/// fifth of its times): every method timed through the real binary, the
/// faster marked, `--save` writing the device's own entry, which a host
/// then uses over the plugin-wide setting; a second save refused.
#[test]
fn bench_measures_every_method_and_saves_the_faster_for_the_driver() {
    let Some(server) = support::server() else {
        return;
    };
    let (fake, serial) = support::attach(
        &server,
        FakeConfig {
            profile: DeviceProfile {
                latency: Latency::phone_like().scaled(0.2),
                touchscreen: Some(Touchscreen::standard()),
                ..DeviceProfile::default()
            },
            ..FakeConfig::default()
        },
    );
    let lib = build_workspace_plugin("devicerail-host-plugin-android", "android");
    let (dir, plugins) = devicerail_host_testing::root_with_plugins(std::slice::from_ref(&lib));
    // The plugin-wide method is `input`; the bench finds touch events
    // faster on this device and saves that for it alone.
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "[plugins.android]\ninputMethod = \"input\"\n").expect("config");
    let spec = server.socket_spec();
    let bench = |extra: &[&str]| {
        let out = std::process::Command::new(devicerail_host_testing::host_process::host_binary())
            .arg("--config")
            .arg(&config)
            .args(["bench", &serial, "--samples", "3", "--tap", "10,20"])
            .arg("--plugins-dir")
            .arg(&plugins)
            .arg("--data-dir")
            .arg(dir.path().join("data"))
            .args(extra)
            .env("ADB_SERVER_SOCKET", &spec)
            .env("DEVICERAIL_ANDROID_START_SERVER", "false")
            .env("XDG_RUNTIME_DIR", dir.path())
            .output()
            .expect("devicerail bench runs");
        (
            out.status,
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (status, stdout, stderr) = bench(&["--save"]);
    assert!(status.success(), "{stdout}\n{stderr}");
    println!("{stdout}");
    for row in [
        "screenshot (screencap (raw, encoded here))",
        "screenshot (screencap -p)",
        "UI tree (uiautomator dump)",
        "observe (screenshot + UI tree) (both at once)",
        "observe, unchanged screen (the last tree, checked)",
        "tap (input tap)",
        "tap (touch events)",
    ] {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(row))
            .unwrap_or_else(|| panic!("no row {row:?}:\n{stdout}"));
        assert!(!line.contains("failed"), "{line}\n{stderr}");
    }
    assert_eq!(stdout.matches("* faster").count(), 2, "{stdout}");
    let touch = stdout
        .lines()
        .find(|l| l.starts_with("tap (touch events)"))
        .unwrap_or_default();
    assert!(touch.ends_with("* faster"), "{stdout}");
    let text = std::fs::read_to_string(&config).expect("config");
    assert!(text.starts_with("[plugins.android]\ninputMethod = \"input\"\n"));
    let doc: toml::Table = toml::from_str(&text).expect("still valid TOML");
    let entry = &doc["plugins"]["android"]["devices"][0];
    assert_eq!(entry["serial"].as_str(), Some(serial.as_str()), "{text}");
    assert_eq!(entry["inputMethod"].as_str(), Some("touch"), "{text}");
    assert!(
        matches!(entry["screenshotMode"].as_str(), Some("raw" | "png")),
        "{text}"
    );
    // Nothing the bench did is in the data directory a host would use.
    assert!(!dir.path().join("data").join("events.sqlite3").exists());

    // A host on that configuration taps this device with touch events,
    // though the plugin-wide method says `input`.
    let before = fake.inputs().len();
    let config_text = config.display().to_string();
    let host = HostClient::start(
        &[lib],
        &[
            ("ADB_SERVER_SOCKET", &spec),
            ("DEVICERAIL_ANDROID_START_SERVER", "false"),
            ("DEVICERAIL_CONFIG", &config_text),
        ],
    );
    host.ok::<DeviceSelect>(json!({ "deviceId": serial }));
    host.ok0::<DeviceConnect>();
    host.ok0::<SessionStart>();
    wire(host.execute("tap", json!({ "x": 10, "y": 20 })));
    let tapped = &fake.inputs()[before..];
    assert_eq!(tapped.len(), 1, "{tapped:?}");
    assert_eq!(
        tapped[0].source,
        devicerail_host_android_fake_adb::InputSource::TouchEvents
    );
    drop(host);

    // A second save for the same device is refused; the file is unchanged.
    let (status, stdout, stderr) = bench(&["--save"]);
    assert!(!status.success(), "{stdout}");
    assert!(stderr.contains("already has"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&config).expect("config"), text);
}
