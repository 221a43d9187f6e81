//! Behaviour of the loaded plugin against fake `xcrun` and fake
//! WebDriverAgent: discovery and boot, observation, Actions, semantic
//! Actions, protected input, and failures.

mod common;

use std::time::{Duration, Instant};

use common::{Rig, load, logs, within};
use devicerail_host_plugin_api::protocol::{
    ActionExecution, CoordinateFallbackReason, DeviceId, Platform, UiNode, UiRect,
};
use devicerail_host_plugin_api::{CallContext, Driver, DriverObservation, ObserveRequest, UiTree};
use devicerail_ios_simulator_fakes::FakeWdaOptions;
use devicerail_ios_simulator_fakes::sim_state::{
    FAKE_APP, IPAD_UDID, IPHONE15_UDID, SAFARI, SE_UDID, SETTINGS, SPRINGBOARD, WATCH_UDID,
};
use serde_json::{Value, json};

fn tree(obs: &DriverObservation) -> &UiTree {
    obs.ui_tree.as_ref().expect("a UI tree")
}

fn node<'t>(tree: &'t UiTree, identifier: &str) -> &'t UiNode {
    tree.nodes
        .iter()
        .find(|n| n.identifier.as_deref() == Some(identifier))
        .unwrap_or_else(|| panic!("no node {identifier}"))
}

fn by_name<'t>(tree: &'t UiTree, name: &str) -> Vec<&'t UiNode> {
    tree.nodes
        .iter()
        .filter(|n| n.name.as_deref() == Some(name))
        .collect()
}

fn sel(selector: Value) -> Value {
    json!({ "target": { "kind": "selector", "selector": selector } })
}

fn code(r: Result<impl std::fmt::Debug, devicerail_host_plugin_api::DriverError>) -> String {
    match r {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(e) => e.code.into(),
    }
}

// ---------------------------------------------------------------- discovery

#[test]
fn discovery_lists_booted_available_ios_simulators() {
    let rig = Rig::new();
    let devices = rig
        .plugin
        .list_devices(&CallContext::unbounded())
        .expect("devices");
    assert_eq!(devices.len(), 1, "{devices:?}");
    let se = &devices[0];
    assert_eq!(se.id.as_str(), SE_UDID);
    assert_eq!(se.name, "iPhone SE (3rd generation)");
    assert_eq!(se.platform, Platform::Ios);
    assert_eq!(se.os_version.as_deref(), Some("17.4"));
    assert!(!se.connected);
    rig.connect();
    let again = rig
        .plugin
        .list_devices(&CallContext::unbounded())
        .expect("devices");
    assert!(again[0].connected);
    assert!(
        rig.sims
            .calls()
            .iter()
            .any(|c| c == &["simctl", "list", "devices", "--json"])
    );
}

#[test]
fn boot_mode_lists_shut_down_simulators_and_boots_on_connect() {
    let sims = devicerail_ios_simulator_fakes::FakeSimulators::new().expect("fakes");
    let wda15 = sims
        .wda(
            IPHONE15_UDID,
            FakeWdaOptions {
                window: (393.0, 852.0),
                scale: 3.0,
                ..Default::default()
            },
        )
        .expect("fake WDA");
    let plugin = load(json!({
        "xcrun": sims.xcrun().display().to_string(),
        "boot": true,
        "wdaUrl": "http://127.0.0.1:1",
        "wdaUrls": { IPHONE15_UDID: wda15.url() },
    }));
    let ctx = CallContext::unbounded();
    let ids: Vec<String> = plugin
        .list_devices(&ctx)
        .expect("devices")
        .into_iter()
        .map(|d| d.id.0)
        .collect();
    assert_eq!(ids, vec![SE_UDID.to_owned(), IPHONE15_UDID.to_owned()]);
    let started = Instant::now();
    let info = plugin
        .connect(&ctx, &DeviceId::new(IPHONE15_UDID))
        .expect("boots and connects");
    assert!(info.connected);
    assert!(
        started.elapsed() >= Duration::from_millis(250),
        "the boot takes 300 ms"
    );
    let calls = sims.calls();
    let boot = calls
        .iter()
        .position(|c| c == &["simctl", "boot", IPHONE15_UDID]);
    let wait = calls
        .iter()
        .position(|c| c == &["simctl", "bootstatus", IPHONE15_UDID, "-b"]);
    assert!(boot.is_some() && wait > boot, "{calls:?}");
    assert!(
        sims.state()
            .device(IPHONE15_UDID)
            .is_some_and(|d| d.is_booted())
    );
    let obs = plugin
        .observe(
            &ctx,
            &DeviceId::new(IPHONE15_UDID),
            &ObserveRequest {
                screenshot: true,
                ui_tree: true,
                live: None,
            },
        )
        .expect("observes");
    assert_eq!((obs.viewport.width, obs.viewport.height), (1179, 2556));
    assert_eq!(obs.viewport.scale_factor, 3.0);
    // A freshly booted simulator shows the home screen.
    assert_eq!(tree(&obs).context.context_id.as_str(), SPRINGBOARD);
}

#[test]
fn a_shut_down_simulator_is_unavailable_without_boot_mode() {
    let rig = Rig::new();
    let ctx = CallContext::unbounded();
    let e = rig
        .plugin
        .connect(&ctx, &DeviceId::new(IPHONE15_UDID))
        .expect_err("not booted");
    assert_eq!(e.code, "device_unavailable");
    assert!(e.message.contains("simctl boot"), "{}", e.message);
    // The state is the reason, for clients to branch on.
    assert_eq!(
        e.details,
        json!({ "deviceId": IPHONE15_UDID, "reason": "shutdown" })
    );
    assert!(e.retryable);
    let ipad = rig.plugin.connect(&ctx, &DeviceId::new(IPAD_UDID));
    let ipad = ipad.expect_err("unavailable");
    assert_eq!(ipad.code, "device_unavailable");
    assert!(
        ipad.message.contains("runtime profile not found"),
        "{}",
        ipad.message
    );
    assert_eq!(ipad.details["reason"], "unavailable");
    assert_eq!(
        code(rig.plugin.connect(&ctx, &DeviceId::new(WATCH_UDID))),
        "device_not_found"
    );
    assert_eq!(
        code(rig.plugin.connect(&ctx, &DeviceId::new("no-such-udid"))),
        "device_not_found"
    );
}

#[test]
fn booting_is_bounded_by_the_call_deadline_and_cancellation() {
    let sims = devicerail_ios_simulator_fakes::FakeSimulators::new().expect("fakes");
    sims.update(|s| {
        if let Some(d) = s.device_mut(IPHONE15_UDID) {
            d.boot_ms = 20_000;
        }
    });
    let plugin = load(json!({ "xcrun": sims.xcrun().display().to_string(), "boot": true }));
    let device = DeviceId::new(IPHONE15_UDID);
    let started = Instant::now();
    let e = plugin
        .connect(&within(400), &device)
        .expect_err("the boot outlasts the deadline");
    assert_eq!(e.code, "request_timed_out", "{e}");
    assert!(started.elapsed() < Duration::from_secs(5));
    let ctx = CallContext::unbounded();
    let cancel = ctx.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        cancel.cancel();
    });
    let started = Instant::now();
    let e = plugin.connect(&ctx, &device).expect_err("cancelled");
    assert_eq!(e.code, "request_cancelled", "{e}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn without_xcrun_there_are_no_simulators_unless_it_was_configured() {
    use devicerail_plugin_ios_simulator::{Config, IosSimulatorDriver};
    let implicit = IosSimulatorDriver::with_config(Config {
        xcrun: "devicerail-test-no-such-xcrun".into(),
        ..Config::default()
    });
    let ctx = CallContext::unbounded();
    assert_eq!(implicit.list_devices(&ctx).expect("no error"), vec![]);
    let explicit = load(json!({ "xcrun": "/nonexistent/devicerail/xcrun" }));
    let e = explicit
        .list_devices(&ctx)
        .expect_err("configured but missing");
    assert_eq!(e.code, "internal_error");
    assert!(e.message.contains("xcrun"), "{}", e.message);
}

// -------------------------------------------------------------- observation

#[test]
fn observe_returns_a_matching_png_viewport_and_normalized_tree() {
    let rig = Rig::connected();
    let obs = rig.observe(true, true);
    assert_eq!((obs.viewport.width, obs.viewport.height), (750, 1334));
    assert_eq!(obs.viewport.scale_factor, 2.0);
    let png = obs.png.as_ref().expect("a PNG");
    let img = image::load_from_memory(png).expect("decodes");
    assert_eq!((img.width(), img.height()), (750, 1334));
    assert_eq!(obs.metadata["screenshotSource"], "wda");
    assert_eq!(obs.metadata["bundleId"], FAKE_APP);
    let t = tree(&obs);
    assert_eq!(t.context.context_id.as_str(), FAKE_APP);
    assert_eq!(t.root_stable_node_ids.len(), 1);
    assert_eq!(t.nodes[0].role.as_str(), "application");
    let user = node(t, "username");
    assert_eq!(user.role.as_str(), "textField");
    assert_eq!(user.name.as_deref(), Some("Username"));
    assert_eq!(user.bounds, Some(UiRect::new(40.0, 200.0, 670.0, 88.0)));
    assert_eq!((user.enabled, user.hittable), (Some(true), Some(true)));
    assert_eq!(node(t, "password").role.as_str(), "secureTextField");
    let sign_in = node(t, "signIn");
    assert_eq!(sign_in.role.as_str(), "button");
    assert_eq!(sign_in.name.as_deref(), Some("Sign In"));
    let help = by_name(t, "Help");
    assert_eq!(help[0].enabled, Some(false));
    assert_eq!(help[0].identifier, None);
    assert_eq!(node(t, "version").hittable, Some(false));
    let title = &by_name(t, "Sign In")
        .into_iter()
        .find(|n| n.role.as_str() == "staticText")
        .expect("the title");
    assert_eq!(title.text.as_deref(), Some("Sign In"));
    // Only what was asked for.
    let plain = rig.observe(false, false);
    assert!(plain.png.is_none() && plain.ui_tree.is_none());
    assert_eq!(plain.viewport, obs.viewport);
}

/// Whether `b` lies within a `w`×`h` viewport (half a pixel of rounding).
fn within_viewport(b: &UiRect, w: u32, h: u32) -> bool {
    b.x >= -0.5
        && b.y >= -0.5
        && b.x + b.width.get() <= f64::from(w) + 0.5
        && b.y + b.height.get() <= f64::from(h) + 0.5
}

#[test]
fn a_screenshot_of_another_size_defines_the_pixels_of_bounds_and_taps() {
    // WDA says scale 2 (a 750x1334 window), but its captures are 1.5x.
    let rig = Rig::with(
        FakeWdaOptions {
            screenshot_scale: Some(1.5),
            ..Default::default()
        },
        json!({}),
    );
    rig.connect();
    let obs = rig.observe(true, true);
    let img = image::load_from_memory(obs.png.as_ref().expect("a PNG"))
        .expect("decodes")
        .to_rgb8();
    let (w, h) = (img.width(), img.height());
    assert_eq!((w, h), (563, 1001));
    assert_eq!((obs.viewport.width, obs.viewport.height), (w, h));
    assert!((obs.viewport.scale_factor - 563.0 / 375.0).abs() < 1e-9);
    // Every bound is in the screenshot's pixels: what is on screen lies
    // inside it, over the pixels of what it names.
    let t = tree(&obs);
    let sx = 563.0 / 375.0;
    let user = node(t, "username").bounds.expect("bounds");
    assert!((user.x - 20.0 * sx).abs() < 1e-9 && (user.width.get() - 335.0 * sx).abs() < 1e-9);
    for n in t.nodes.iter().filter(|n| n.hittable == Some(true)) {
        let b = n.bounds.expect("bounds");
        assert!(
            within_viewport(&b, w, h),
            "{} {b:?} outside {w}x{h}",
            n.stable_node_id
        );
    }
    let sign_in = node(t, "signIn").bounds.expect("bounds");
    let (cx, cy) = sign_in.center();
    assert_eq!(
        img.get_pixel(cx as u32, cy as u32).0,
        [0x00, 0x7a, 0xff],
        "the button's blue"
    );
    // Later observations without a screenshot keep that pixel space.
    let again = rig.observe(false, true);
    assert_eq!((again.viewport.width, again.viewport.height), (w, h));
    assert_eq!(node(tree(&again), "signIn").bounds, Some(sign_in));

    // Inside window x scale, outside the screenshot: refused.
    let e = rig
        .exec("tap", json!({ "x": 700, "y": 500 }))
        .expect_err("outside the viewport");
    assert_eq!(e.code, "invalid_arguments", "{e:?}");
    let e = rig
        .exec(
            "swipe",
            json!({ "fromX": 10, "fromY": 10, "toX": 10, "toY": 1200 }),
        )
        .expect_err("outside the viewport");
    assert_eq!(e.code, "invalid_arguments", "{e:?}");
    assert!(rig.wda.swipes().is_empty());
    // A tap in screenshot pixels lands where the screenshot shows it.
    let (ux, uy) = user.center();
    let tapped = rig.ok("tap", json!({ "x": ux as u32, "y": uy as u32 }));
    let (px, py) = (
        tapped.output["pointX"].as_f64().expect("x"),
        tapped.output["pointY"].as_f64().expect("y"),
    );
    assert!(
        (px - 187.5).abs() < 1.0 && (py - 122.0).abs() < 1.0,
        "({px}, {py})"
    );
    assert_eq!(
        rig.wda.app().focus,
        Some(devicerail_ios_simulator_fakes::wda::app::Field::Username)
    );
    // Semantic Actions find WDA's element by the node's bounds in points.
    let set = rig.ok(
        "setElementValue",
        json!({ "target": { "kind": "selector", "selector": { "identifier": "password" } }, "value": "pw" }),
    );
    assert!(matches!(
        set.execution,
        Some(ActionExecution::NativeSemantic { .. })
    ));
    assert_eq!(rig.wda.app().password, "pw");
}

#[test]
fn a_wda_without_active_app_info_still_observes() {
    let rig = Rig::with(
        FakeWdaOptions {
            no_active_app_info: true,
            ..Default::default()
        },
        json!({}),
    );
    rig.connect();
    let obs = rig.observe(true, true);
    let t = tree(&obs);
    // The app is named by its tree's root.
    assert_eq!(t.context.context_id.as_str(), "FakeLogin");
    assert_eq!(obs.metadata["appName"], "FakeLogin");
    assert!(obs.metadata.get("bundleId").is_none());
    node(t, "signIn");
    // Asked once per connection, not before every observation.
    rig.observe(false, true);
    rig.ok(
        "findElement",
        json!({ "selector": { "identifier": "signIn" } }),
    );
    let asked = rig
        .wda
        .requests()
        .iter()
        .filter(|r| r.path == "/wda/activeAppInfo")
        .count();
    assert_eq!(asked, 1);
}

#[test]
fn older_wda_builds_with_long_type_names_normalize_the_same() {
    let rig = Rig::with(
        FakeWdaOptions {
            long_types: true,
            ..Default::default()
        },
        json!({}),
    );
    rig.connect();
    let obs = rig.observe(false, true);
    assert_eq!(
        node(tree(&obs), "password").role.as_str(),
        "secureTextField"
    );
    // Taps go to the old route.
    rig.ok("tap", json!({ "x": 375, "y": 244 }));
    assert!(
        rig.wda
            .requests()
            .iter()
            .any(|r| r.path.ends_with("/wda/tap/0"))
    );
    assert_eq!(
        rig.wda.app().focus,
        Some(devicerail_ios_simulator_fakes::wda::app::Field::Username)
    );
}

#[test]
fn screenshots_fall_back_to_the_other_source() {
    let rig = Rig::connected();
    rig.wda.break_screenshots(true);
    let obs = rig.observe(true, false);
    assert_eq!(obs.metadata["screenshotSource"], "simctl");
    let png = obs.png.expect("a PNG");
    let img = image::load_from_memory(&png).expect("decodes");
    assert_eq!((img.width(), img.height()), (750, 1334));
    assert!(
        rig.sims.calls().iter().any(
            |c| c.len() == 6 && c[..5] == ["simctl", "io", SE_UDID, "screenshot", "--type=png"]
        )
    );
    let simctl_first = Rig::with(Default::default(), json!({ "screenshot": "simctl" }));
    simctl_first.connect();
    assert_eq!(
        simctl_first.observe(true, false).metadata["screenshotSource"],
        "simctl"
    );
    simctl_first.sims.update(|s| s.fail.push("io".into()));
    assert_eq!(
        simctl_first.observe(true, false).metadata["screenshotSource"],
        "wda"
    );
}

#[test]
fn document_epochs_follow_the_app_and_the_hierarchy() {
    let rig = Rig::connected();
    let epoch = |rig: &Rig| tree(&rig.observe(false, true)).context.clone();
    let first = epoch(&rig);
    assert_eq!(epoch(&rig), first, "nothing changed");
    rig.ok("tap", json!({ "x": 380, "y": 244 }));
    rig.ok("inputText", json!({ "text": "ada" }));
    let typed = rig.observe(false, true);
    assert_eq!(
        tree(&typed).context,
        first,
        "a value change keeps node refs"
    );
    assert_eq!(node(tree(&typed), "username").value.as_deref(), Some("ada"));
    // Sign in without a password: an error label appears.
    rig.ok("tap", json!({ "x": 380, "y": 600 }));
    let errored = epoch(&rig);
    assert_ne!(errored.document_epoch, first.document_epoch);
    assert_eq!(errored.context_id, first.context_id);
    rig.ok("home", json!({}));
    let home = epoch(&rig);
    assert_eq!(home.context_id.as_str(), SPRINGBOARD);
    assert_ne!(home.document_epoch, errored.document_epoch);
    // A new WDA session (WDA restarted) invalidates references too.
    rig.wda.forget_sessions();
    rig.ok("tap", json!({ "x": 10, "y": 10 }));
    assert_ne!(epoch(&rig).document_epoch, home.document_epoch);
}

#[test]
fn concurrent_observations_all_succeed() {
    let rig = Rig::connected();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..6)
            .map(|i| {
                let rig = &rig;
                s.spawn(move || {
                    for _ in 0..3 {
                        let obs = rig.observe(i % 2 == 0, true);
                        assert_eq!(obs.viewport.width, 750);
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().expect("no panic");
        }
    });
}

// ------------------------------------------------------------------ actions

#[test]
fn taps_and_typing_drive_the_app() {
    let rig = Rig::connected();
    // Username field center: (20 + 335/2, 100 + 44/2) pt = (375, 244) px.
    let out = rig.ok("tap", json!({ "x": 375, "y": 244 }));
    assert_eq!(out.output["pointX"], 187.5);
    assert!(out.execution.is_none() && out.resolved.is_none());
    let typed = rig.ok("inputText", json!({ "text": "adx" }));
    assert_eq!(typed.output["typedChars"], 3);
    rig.ok("pressKey", json!({ "key": "delete" }));
    rig.ok("inputText", json!({ "text": "a" }));
    assert_eq!(rig.wda.app().username, "ada");
    rig.ok("tap", json!({ "x": 375, "y": 364 }));
    rig.ok("inputSecret", json!({ "text": "pw" }));
    rig.ok("pressKey", json!({ "key": "return" }));
    assert_eq!(rig.wda.app().focus, None);
    rig.ok("tap", json!({ "x": 375, "y": 604 }));
    assert_eq!(rig.wda.app().signed_in.as_deref(), Some("ada"));
    let obs = rig.observe(false, true);
    assert_eq!(
        node(tree(&obs), "welcome").name.as_deref(),
        Some("Welcome, ada")
    );
}

#[test]
fn swipes_are_w3c_pointer_actions_in_points() {
    let rig = Rig::connected();
    rig.ok(
        "swipe",
        json!({ "fromX": 375, "fromY": 1200, "toX": 375, "toY": 200, "durationMs": 250 }),
    );
    let swipes = rig.wda.swipes();
    assert_eq!(swipes.len(), 1);
    let steps = &swipes[0]["actions"][0]["actions"];
    assert_eq!(steps[0]["type"], "pointerMove");
    assert_eq!(steps[0]["y"], 600.0);
    assert_eq!(steps[2]["y"], 100.0);
    assert_eq!(steps[2]["duration"], 250);
    assert_eq!(steps[3]["type"], "pointerUp");
    assert_eq!(
        rig.ok(
            "swipe",
            json!({ "fromX": 1, "fromY": 1, "toX": 2, "toY": 2 })
        )
        .output["durationMs"],
        300
    );
    assert_eq!(
        code(rig.exec(
            "swipe",
            json!({ "fromX": 1, "fromY": 1, "toX": 2, "toY": 2, "durationMs": 10_001 })
        )),
        "invalid_arguments"
    );
}

#[test]
fn home_launch_and_open_url_change_the_app_in_front() {
    let rig = Rig::connected();
    let foreground = |rig: &Rig| {
        rig.sims
            .state()
            .device(SE_UDID)
            .and_then(|d| d.foreground_app.clone())
    };
    rig.ok("home", json!({}));
    assert_eq!(foreground(&rig).as_deref(), Some(SPRINGBOARD));
    let launched = rig.ok("launchApp", json!({ "bundleId": SETTINGS }));
    assert_eq!(launched.output["launched"], true);
    assert!(launched.output["pid"].is_u64());
    assert_eq!(foreground(&rig).as_deref(), Some(SETTINGS));
    assert!(
        rig.sims
            .calls()
            .iter()
            .any(|c| c == &["simctl", "launch", SE_UDID, SETTINGS])
    );
    assert_eq!(
        tree(&rig.observe(false, true)).context.context_id.as_str(),
        SETTINGS
    );
    rig.ok("openUrl", json!({ "url": "https://example.com/login" }));
    assert!(
        rig.sims
            .calls()
            .iter()
            .any(|c| c == &["simctl", "openurl", SE_UDID, "https://example.com/login"])
    );
    let safari = rig.observe(false, true);
    assert_eq!(tree(&safari).context.context_id.as_str(), SAFARI);
    assert_eq!(
        node(tree(&safari), "URL").value.as_deref(),
        Some("https://example.com/login")
    );
    rig.ok("pressKey", json!({ "key": "home" }));
    assert_eq!(foreground(&rig).as_deref(), Some(SPRINGBOARD));
    // Tapping the FakeLogin icon (20, 80, 64, 64 pt) opens it again.
    rig.ok("tap", json!({ "x": 100, "y": 220 }));
    assert_eq!(foreground(&rig).as_deref(), Some(FAKE_APP));
}

#[test]
fn action_arguments_are_validated() {
    let rig = Rig::connected();
    for (name, args) in [
        ("tap", json!({ "x": 750, "y": 10 })),
        ("tap", json!({ "x": 1, "y": 1334 })),
        ("tap", json!({ "x": -1, "y": 1 })),
        ("tap", json!({ "x": 1 })),
        ("tap", json!({ "x": 1, "y": 1, "z": 1 })),
        ("inputText", json!({ "text": "x".repeat(4097) })),
        ("pressKey", json!({ "key": "escape" })),
        ("home", json!({ "now": true })),
        ("launchApp", json!({ "bundleId": "-help" })),
        ("launchApp", json!({ "bundleId": "com.example app" })),
        ("openUrl", json!({ "url": "not a url" })),
        ("openUrl", json!({ "url": "--help" })),
    ] {
        assert_eq!(
            code(rig.exec(name, args.clone())),
            "invalid_arguments",
            "{name} {args}"
        );
    }
    let e = rig
        .exec(
            "launchApp",
            json!({ "bundleId": "com.example.notinstalled" }),
        )
        .expect_err("not installed");
    assert_eq!(e.code, "platform_error");
    assert!(
        e.message.contains("FBSOpenApplicationServiceErrorDomain"),
        "{}",
        e.message
    );
    assert_eq!(
        code(rig.exec("openUrl", json!({ "url": "unknownscheme://x" }))),
        "platform_error"
    );
    // Typing with no focused field is refused by WDA.
    assert_eq!(
        code(rig.exec("inputText", json!({ "text": "x" }))),
        "platform_error"
    );
    let cancelled = CallContext::unbounded();
    cancelled.cancel();
    assert_eq!(
        code(rig.exec_ctx(&cancelled, "tap", json!({ "x": 1, "y": 1 }))),
        "request_cancelled"
    );
}

// --------------------------------------------------------- semantic actions

#[test]
fn semantic_actions_use_wda_elements() {
    let rig = Rig::connected();
    let ctx = CallContext::unbounded();
    let device = Rig::se();
    let found = rig
        .plugin
        .execute(
            &ctx,
            &device,
            &devicerail_host_testing::call(
                "findElement",
                json!({ "selector": { "identifier": "username" } }),
            ),
        )
        .expect("found");
    assert_eq!(
        found.output["element"]["observationId"],
        json!(ctx.observation_id())
    );
    let resolved = found.resolved.as_ref().expect("resolved state");
    let username_ref = found.output["element"].clone();
    assert_eq!(
        json!(resolved.ui_tree.as_ref().expect("tree").context),
        username_ref["context"]
    );
    assert!(
        matches!(
            found.execution,
            Some(ActionExecution::NativeSemantic { .. })
        ),
        "findElement reports it read the accessibility tree"
    );

    let set = rig.ok(
        "setElementValue",
        json!({ "target": { "kind": "node", "node": username_ref }, "value": "ada" }),
    );
    assert!(matches!(
        set.execution,
        Some(ActionExecution::NativeSemantic { .. })
    ));
    assert_eq!(rig.wda.app().username, "ada");
    rig.ok(
        "setElementValue",
        json!({ "target": { "kind": "selector", "selector": { "role": "secureTextField" } }, "value": "pw" }),
    );
    assert_eq!(rig.wda.app().password, "pw");
    // Replacing a value clears it first.
    rig.ok(
        "setElementValue",
        json!({ "target": { "kind": "selector", "selector": { "identifier": "username" } }, "value": "grace" }),
    );
    assert_eq!(rig.wda.app().username, "grace");
    let cleared = rig.ok("clearElement", sel(json!({ "identifier": "username" })));
    assert!(matches!(
        cleared.execution,
        Some(ActionExecution::NativeSemantic { .. })
    ));
    assert_eq!(rig.wda.app().username, "");
    rig.ok(
        "setElementValue",
        json!({ "target": { "kind": "selector", "selector": { "identifier": "username" } }, "value": "ada" }),
    );
    let tapped = rig.ok(
        "tapElement",
        sel(json!({ "role": "button", "name": "Sign In" })),
    );
    assert!(matches!(
        tapped.execution,
        Some(ActionExecution::NativeSemantic { .. })
    ));
    assert_eq!(rig.wda.app().signed_in.as_deref(), Some("ada"));
    let waited = rig.ok(
        "waitForElement",
        json!({ "selector": { "text": { "value": "welcome, ADA" } }, "condition": "visible" }),
    );
    assert_eq!(waited.output["matched"], true);
    // The node reference from the login screen is stale now.
    assert_eq!(
        code(rig.exec(
            "setElementValue",
            json!({ "target": { "kind": "node", "node": found.output["element"] }, "value": "x" })
        )),
        "element_stale"
    );
    let gone = rig.ok(
        "waitForElement",
        json!({ "selector": { "identifier": "username" }, "condition": "absent" }),
    );
    assert_eq!(gone.output["matched"], true);
    // Elements without identifiers are found by type and label.
    rig.ok(
        "tapElement",
        sel(json!({ "role": "button", "name": "Sign Out" })),
    );
    assert_eq!(rig.wda.app().signed_in, None);
    let els = rig
        .wda
        .requests()
        .into_iter()
        .filter(|r| r.path.ends_with("/elements"))
        .map(|r| r.body)
        .collect::<Vec<_>>();
    assert!(
        els.iter().all(|b| b.contains("accessibility id")),
        "{els:?}"
    );
}

#[test]
fn semantic_errors_are_typed() {
    let rig = Rig::connected();
    assert_eq!(
        code(rig.exec(
            "findElement",
            json!({ "selector": { "role": "button", "name": "Details" } })
        )),
        "element_ambiguous"
    );
    assert_eq!(
        code(rig.exec("tapElement", sel(json!({ "name": "Nope" })))),
        "element_not_found"
    );
    assert_eq!(
        code(rig.exec(
            "tapElement",
            sel(json!({ "role": "button", "name": "Help" }))
        )),
        "element_not_interactable"
    );
    assert_eq!(
        code(rig.exec("tapElement", sel(json!({ "identifier": "version" })))),
        "element_not_interactable"
    );
    assert_eq!(
        code(rig.exec("setElementValue", json!({ "target": { "kind": "selector", "selector": { "identifier": "signIn" } }, "value": "x" }))),
        "platform_error"
    );
    assert_eq!(
        code(rig.exec("findElement", json!({ "selector": { "css": "#x" } }))),
        "invalid_arguments"
    );
    // Web content cannot be edited semantically (no element matches it).
    assert_eq!(
        code(rig.exec(
            "setElementValue",
            json!({ "target": { "kind": "selector", "selector": { "role": "link" } }, "value": "x" })
        )),
        "platform_error"
    );
    let timed = rig.exec_ctx(
        &within(300),
        "waitForElement",
        json!({ "selector": { "identifier": "neverThere" } }),
    );
    assert_eq!(code(timed), "request_timed_out");
}

#[test]
fn unmatched_elements_fall_back_to_a_coordinate_tap() {
    let rig = Rig::connected();
    // Web content: the tree shows the link, element queries do not find it.
    let out = rig.ok(
        "tapElement",
        sel(json!({ "role": "link", "name": "Terms of Service" })),
    );
    match out.execution {
        Some(ActionExecution::CoordinateFallback {
            fallback_reason, ..
        }) => assert_eq!(
            fallback_reason,
            CoordinateFallbackReason::SemanticInteractionUnavailable
        ),
        other => panic!("expected a coordinate fallback, got {other:?}"),
    }
    assert!(rig.wda.app().terms);
    // An element with neither identifier nor label is found by its type.
    let logo = rig.ok("tapElement", sel(json!({ "role": "image" })));
    assert!(matches!(
        logo.execution,
        Some(ActionExecution::NativeSemantic { .. })
    ));
    assert!(
        rig.wda
            .requests()
            .iter()
            .any(|r| r.path.ends_with("/elements") && r.body.contains("class chain"))
    );
    // Two "Details" buttons: the node's rectangle picks the right element.
    let obs = rig.observe(false, true);
    let details = by_name(tree(&obs), "Details");
    assert_eq!(details.len(), 2);
    let second = json!({
        "observationId": devicerail_host_plugin_api::protocol::ObservationId::new_v7(),
        "context": tree(&obs).context,
        "stableNodeId": details[1].stable_node_id,
    });
    let out = rig.ok(
        "tapElement",
        json!({ "target": { "kind": "node", "node": second } }),
    );
    assert!(matches!(
        out.execution,
        Some(ActionExecution::NativeSemantic { .. })
    ));
    let clicked = rig
        .wda
        .requests()
        .into_iter()
        .filter(|r| r.path.ends_with("/click"))
        .map(|r| r.path)
        .collect::<Vec<_>>();
    assert!(
        clicked.last().is_some_and(|p| p.contains("details2")),
        "{clicked:?}"
    );
    let finds: Vec<_> = rig
        .wda
        .requests()
        .into_iter()
        .filter(|r| r.path.ends_with("/elements"))
        .map(|r| r.body)
        .collect();
    assert!(
        finds
            .iter()
            .any(|b| b.contains("predicate string") && b.contains("Details")),
        "{finds:?}"
    );
}

// --------------------------------------------------------- protected input

#[test]
fn protected_input_reaches_wda_only_and_is_never_logged() {
    let rig = Rig::connected();
    let secret = format!(
        "pw-{}-secret",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default()
    );
    // No field has focus: WDA refuses, and the error does not echo the text.
    let refused = rig
        .exec("inputSecret", json!({ "text": secret }))
        .expect_err("no focus");
    assert!(!format!("{refused:?}").contains(&secret));
    rig.ok("tap", json!({ "x": 375, "y": 364 }));
    let out = rig.ok("inputSecret", json!({ "text": secret }));
    assert_eq!(out.output, json!({ "accepted": true }));
    assert_eq!(rig.wda.app().password, secret);
    let carrying: Vec<_> = rig
        .wda
        .requests()
        .into_iter()
        .filter(|r| r.body.contains(&secret))
        .map(|r| r.path)
        .collect();
    assert_eq!(carrying.len(), 2, "{carrying:?}");
    assert!(
        carrying.iter().all(|p| p.ends_with("/wda/keys")),
        "{carrying:?}"
    );
    let obs = rig.observe(true, true);
    assert!(
        !serde_json::to_string(tree(&obs))
            .expect("json")
            .contains(&secret)
    );
    let all_logs = logs();
    assert!(
        all_logs.contains("WebDriverAgent request"),
        "TRACE logs are captured"
    );
    assert!(!all_logs.contains(&secret), "the secret was logged");
    // Nothing dumps raw HTTP bytes (where the secret would hide as hex).
    assert!(
        !all_logs.contains("ureq_proto::util"),
        "raw request bytes were logged"
    );
    let hex: String = secret.bytes().take(6).map(|b| format!("{b:02x}")).collect();
    assert!(
        !all_logs.replace(' ', "").contains(&hex),
        "the secret was logged as hex"
    );
    assert!(
        !rig.sims
            .calls()
            .iter()
            .flatten()
            .any(|a| a.contains(&secret)),
        "the secret reached a command line"
    );
}

// ----------------------------------------------------------------- failures

#[test]
fn a_vanished_wda_is_device_unavailable() {
    let mut rig = Rig::connected();
    rig.wda.stop();
    let e = rig
        .plugin
        .observe(
            &CallContext::unbounded(),
            &Rig::se(),
            &ObserveRequest::default(),
        )
        .expect_err("WDA is gone");
    assert_eq!(e.code, "device_unavailable");
    assert!(e.retryable);
    assert!(e.message.contains("not reachable"), "{}", e.message);
    assert_eq!(
        code(rig.exec("tap", json!({ "x": 1, "y": 1 }))),
        "device_unavailable"
    );
    assert_eq!(
        code(rig.exec("tapElement", sel(json!({ "identifier": "signIn" })))),
        "device_unavailable"
    );
    let health = rig
        .plugin
        .health(&CallContext::unbounded(), &Rig::se())
        .expect("health");
    assert!(!health.healthy, "{health:?}");
}

#[test]
fn connecting_without_wda_is_device_unavailable() {
    let mut rig = Rig::new();
    rig.wda.stop();
    let started = Instant::now();
    let e = rig
        .plugin
        .connect(&CallContext::unbounded(), &Rig::se())
        .expect_err("no WDA");
    assert_eq!(e.code, "device_unavailable");
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(e.details["wdaUrl"].is_string(), "{:?}", e.details);
    // With a wait, a WDA that becomes ready in time is accepted.
    let rig = Rig::with(Default::default(), json!({ "wdaWaitMs": 5000 }));
    rig.wda.set_ready(false);
    let started = Instant::now();
    std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(300));
            rig.wda.set_ready(true);
        });
        rig.connect();
    });
    assert!(started.elapsed() >= Duration::from_millis(250));
}

#[test]
fn a_shut_down_simulator_is_reported_as_such() {
    let rig = Rig::connected();
    rig.sims.update(|s| {
        if let Some(d) = s.device_mut(SE_UDID) {
            d.state = "Shutdown".into();
        }
    });
    let e = rig
        .plugin
        .observe(
            &CallContext::unbounded(),
            &Rig::se(),
            &ObserveRequest::default(),
        )
        .expect_err("shut down");
    assert_eq!(e.code, "device_unavailable");
    assert_eq!(e.details["reason"], "shutdown", "{e:?}");
    let health = rig
        .plugin
        .health(&CallContext::unbounded(), &Rig::se())
        .expect("health");
    assert!(!health.healthy);
    assert!(health.detail.contains("Shutdown"));
    // The device stays listed while connected.
    let listed = rig
        .plugin
        .list_devices(&CallContext::unbounded())
        .expect("devices");
    assert!(
        listed
            .iter()
            .any(|d| d.id.as_str() == SE_UDID && d.connected)
    );
}

#[test]
fn a_restarted_wda_gets_a_new_session_transparently() {
    let rig = Rig::connected();
    assert_eq!(rig.wda.session_count(), 1);
    rig.wda.forget_sessions();
    rig.ok("tap", json!({ "x": 375, "y": 244 }));
    assert_eq!(rig.wda.session_count(), 1);
    assert_eq!(
        rig.wda.app().focus,
        Some(devicerail_ios_simulator_fakes::wda::app::Field::Username)
    );
    rig.plugin
        .disconnect(&CallContext::unbounded(), &Rig::se())
        .expect("disconnects");
    assert_eq!(rig.wda.session_count(), 0, "disconnect ends the session");
    assert_eq!(
        code(rig.exec("tap", json!({ "x": 1, "y": 1 }))),
        "device_not_connected"
    );
}
