//! The driver at a real phone's pace, against the fake device (a real adb
//! server in between): gestures as touch events on one persistent shell
//! where the touchscreen is writable (and `input` where it is not, or
//! when asked), an unchanged screen answered from the last UI tree (same
//! frame, same focused window, no Action since, young enough), and, under
//! the fake's phone-like latency model, a dump that meets an animation
//! tried again only once the screen is still. Timings are the bench's
//! (`cargo bench -p devicerail-host-plugin-android --bench phone`), never
//! asserted here.

mod support;

use devicerail_host_android_fake_adb::{
    DeviceProfile, FakeAdbDevice, FakeConfig, InputSource, Latency, Screen, Touchscreen,
};
use devicerail_host_plugin_api::loader::LoadedPlugin;
use devicerail_host_plugin_api::protocol::{DeviceId, UiNode};
use devicerail_host_plugin_api::{Driver, DriverObservation, ObserveRequest};
use devicerail_host_testing::call;
use serde_json::{Value, json};

use support::ctx;

const BOTH: ObserveRequest = ObserveRequest {
    screenshot: true,
    ui_tree: true,
    live: None,
};

fn node<'t>(obs: &'t DriverObservation, suffix: &str) -> &'t UiNode {
    obs.ui_tree
        .as_ref()
        .expect("a tree")
        .nodes
        .iter()
        .find(|n| {
            n.identifier
                .as_deref()
                .is_some_and(|i| i.ends_with(&format!(":id/{suffix}")))
        })
        .unwrap_or_else(|| panic!("no node {suffix}"))
}

fn center(n: &UiNode) -> (u32, u32) {
    let (x, y) = n.bounds.expect("bounds").center();
    (x as u32, y as u32)
}

/// A fake with `profile`, the plugin with `settings`, connected.
fn rig(
    server: &devicerail_host_android_fake_adb::AdbServer,
    profile: DeviceProfile,
    settings: Value,
) -> (FakeAdbDevice, LoadedPlugin, DeviceId) {
    let (fake, serial) = support::attach(
        server,
        FakeConfig {
            profile,
            ..FakeConfig::default()
        },
    );
    let plugin = support::plugin_with(server, settings);
    let device = DeviceId::new(serial);
    plugin.connect(&ctx(), &device).expect("connects");
    (fake, plugin, device)
}

fn touchscreen(writable: bool) -> DeviceProfile {
    DeviceProfile {
        touchscreen: Some(Touchscreen {
            writable,
            ..Touchscreen::standard()
        }),
        latency: Latency::Instant,
        ..DeviceProfile::default()
    }
}

fn sessions(fake: &FakeAdbDevice) -> usize {
    fake.calls()
        .iter()
        .filter(|c| c.kind == "exec" && c.command.trim() == "sh")
        .count()
}

#[test]
fn gestures_are_touch_events_on_one_persistent_shell() {
    let Some(server) = support::server() else {
        return;
    };
    let (fake, plugin, device) = rig(&server, touchscreen(true), json!({}));
    let obs = plugin.observe(&ctx(), &device, &BOTH).expect("observes");
    let (x, y) = center(node(&obs, "username"));
    fake.clear_logs();
    plugin
        .execute(&ctx(), &device, &call("tap", json!({ "x": x, "y": y })))
        .expect("tap");
    plugin
        .execute(
            &ctx(),
            &device,
            &call(
                "swipe",
                json!({ "fromX": 100, "fromY": 900, "toX": 100, "toY": 300, "durationMs": 80 }),
            ),
        )
        .expect("swipe");
    plugin
        .execute(
            &ctx(),
            &device,
            &call("longPress", json!({ "x": 20, "y": 30, "durationMs": 50 })),
        )
        .expect("long press");
    let inputs = fake.inputs();
    assert!(
        inputs.iter().all(|i| i.source == InputSource::TouchEvents),
        "{inputs:?}"
    );
    let tap: Vec<u32> = inputs[0].args[1..]
        .iter()
        .map(|a| a.parse().expect("a number"))
        .collect();
    assert_eq!(inputs[0].args[0], "tap");
    assert!(
        tap[0].abs_diff(x) <= 1 && tap[1].abs_diff(y) <= 1,
        "{tap:?} vs ({x}, {y})"
    );
    assert_eq!(
        fake.state().focus,
        Some(devicerail_host_android_fake_adb::Field::Username),
        "the tap reached the field"
    );
    assert_eq!(inputs[1].args[0], "swipe");
    assert_eq!(inputs[2].args[0], "tap");
    assert!(
        !fake.command_lines().iter().any(|c| c.starts_with("input ")),
        "{:?}",
        fake.command_lines()
    );
    assert_eq!(sessions(&fake), 1, "one shell for every gesture");
    // A shell the device closed is opened again.
    fake.vanish();
    fake.reappear();
    let _ = server.connect(fake.port());
    server
        .wait_for_state(
            &device.to_string(),
            "device",
            std::time::Duration::from_secs(15),
        )
        .expect("back online");
    plugin
        .execute(&ctx(), &device, &call("tap", json!({ "x": x, "y": y })))
        .expect("tap after the shell broke");
    assert_eq!(fake.inputs().len(), 4);
}

#[test]
fn without_a_writable_touchscreen_gestures_use_input() {
    let Some(server) = support::server() else {
        return;
    };
    // The shell may not write the touchscreen: one refused write, then
    // `input` from now on.
    let (fake, plugin, device) = rig(&server, touchscreen(false), json!({}));
    for _ in 0..2 {
        plugin
            .execute(&ctx(), &device, &call("tap", json!({ "x": 10, "y": 20 })))
            .expect("tap");
    }
    let lines = fake.command_lines();
    let writes = lines.iter().filter(|l| l.contains("printf")).count();
    let inputs = lines
        .iter()
        .filter(|l| l.starts_with("input tap 10 20"))
        .count();
    assert_eq!((writes, inputs), (0, 2), "{lines:?}");
    assert!(
        fake.inputs()
            .iter()
            .all(|i| i.source == InputSource::CommandLine)
    );
    // `inputMethod = "input"` never looks for a touchscreen.
    let (fake, plugin, device) = rig(
        &server,
        touchscreen(true),
        json!({ "inputMethod": "input" }),
    );
    plugin
        .execute(&ctx(), &device, &call("tap", json!({ "x": 10, "y": 20 })))
        .expect("tap");
    assert!(!fake.command_lines().iter().any(|l| l.contains("getevent")));
    assert_eq!(fake.inputs()[0].source, InputSource::CommandLine);
    // A choice for one serial (what `devicerail bench --save` writes) wins
    // over the plugin-wide method, for that device only.
    let (fake, serial) = support::attach(
        &server,
        FakeConfig {
            profile: touchscreen(true),
            ..FakeConfig::default()
        },
    );
    let plugin = support::plugin_with(
        &server,
        json!({ "inputMethod": "touch", "devices": [{ "serial": serial, "inputMethod": "input" }] }),
    );
    let device = DeviceId::new(serial);
    plugin.connect(&ctx(), &device).expect("connects");
    plugin
        .execute(&ctx(), &device, &call("tap", json!({ "x": 10, "y": 20 })))
        .expect("tap");
    assert_eq!(fake.inputs()[0].source, InputSource::CommandLine);
    // `inputMethod = "touch"` without a touchscreen fails the Action.
    let (_fake, plugin, device) = rig(
        &server,
        DeviceProfile::default(),
        json!({ "inputMethod": "touch" }),
    );
    let e = plugin
        .execute(&ctx(), &device, &call("tap", json!({ "x": 10, "y": 20 })))
        .expect_err("no touchscreen");
    assert!(e.message.contains("no touchscreen"), "{e:?}");
}

fn dumps(fake: &FakeAdbDevice) -> usize {
    fake.command_lines()
        .iter()
        .filter(|l| l.contains("uiautomator dump"))
        .count()
}

#[test]
fn an_unchanged_screen_is_answered_from_the_last_tree() {
    let Some(server) = support::server() else {
        return;
    };
    // One screenshot method throughout (auto would try both, and frames
    // of different methods are never compared).
    let raw = json!({ "screenshotMode": "raw" });
    // Instant, whatever the environment's model: dumps are counted, and an
    // animating screen would add retries.
    let instant = DeviceProfile {
        latency: Latency::Instant,
        ..DeviceProfile::default()
    };
    let (fake, plugin, device) = rig(&server, instant.clone(), raw.clone());
    let first = plugin.observe(&ctx(), &device, &BOTH).expect("observes");
    assert!(first.metadata.get("uiTreeReused").is_none());
    assert_eq!(dumps(&fake), 1);
    // Nothing changed: the same tree, said so, without a dump.
    let again = plugin.observe(&ctx(), &device, &BOTH).expect("observes");
    assert_eq!(again.metadata["uiTreeReused"], json!(true));
    assert!(again.metadata["uiTreeAgeMs"].is_u64());
    assert_eq!(again.ui_tree, first.ui_tree);
    assert_eq!(again.png, first.png);
    assert_eq!(dumps(&fake), 1);
    // An Action since: dumped again.
    plugin
        .execute(&ctx(), &device, &call("pressKey", json!({ "key": "home" })))
        .expect("key");
    let after = plugin.observe(&ctx(), &device, &BOTH).expect("observes");
    assert!(after.metadata.get("uiTreeReused").is_none());
    assert_eq!(dumps(&fake), 2);
    // The screen changed by itself (no Action): the frame tells.
    fake.with_device(|d| {
        d.state.screen = Screen::Browser {
            url: "https://example.com/".into(),
        };
        d.state.touch();
    });
    let changed = plugin.observe(&ctx(), &device, &BOTH).expect("observes");
    assert!(changed.metadata.get("uiTreeReused").is_none());
    assert_eq!(dumps(&fake), 3);
    assert_ne!(changed.ui_tree, after.ui_tree);
    // `uiTreeReuseMs = 0`: always dumped.
    let (fake, plugin, device) = rig(
        &server,
        instant,
        json!({ "screenshotMode": "raw", "uiTreeReuseMs": 0 }),
    );
    for _ in 0..2 {
        plugin.observe(&ctx(), &device, &BOTH).expect("observes");
    }
    assert_eq!(dumps(&fake), 2);
}

#[test]
fn at_a_phones_pace_a_dump_waits_for_the_animation_to_end() {
    let Some(server) = support::server() else {
        return;
    };
    // The phone model at a tenth of its pace: the sign-in screen slides in
    // for 30 ms after the tap, and a dump meanwhile finds no idle state.
    let profile = DeviceProfile {
        latency: Latency::phone_like().scaled(0.1),
        touchscreen: Some(Touchscreen::standard()),
        ..DeviceProfile::default()
    };
    let (fake, plugin, device) = rig(&server, profile, json!({}));
    let obs = plugin.observe(&ctx(), &device, &BOTH).expect("observes");
    let (x, y) = center(node(&obs, "username"));
    plugin
        .execute(&ctx(), &device, &call("tap", json!({ "x": x, "y": y })))
        .expect("tap");
    fake.with_device(|d| {
        d.state.animating_until =
            Some(std::time::Instant::now() + std::time::Duration::from_millis(400));
    });
    fake.clear_logs();
    let settled = plugin.observe(&ctx(), &device, &BOTH).expect("settles");
    assert!(settled.ui_tree.is_some());
    let lines = fake.command_lines();
    assert!(
        lines
            .iter()
            .filter(|l| l.contains("uiautomator dump"))
            .count()
            >= 2,
        "the first dump met the animation: {lines:?}"
    );
    assert!(
        lines.iter().filter(|l| l.starts_with("screencap")).count() >= 3,
        "frames were compared before trying again: {lines:?}"
    );
}
